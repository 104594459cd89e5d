// Builds the `world` and `console` objects an execute_world script receives. Evaluated once
// per script, before it; `host(op, json)` is the only way out of the sandbox, and it answers
// with JSON text. Instants cross the bridge as decimal strings and are BigInts in JavaScript.
(function (host, access, sink) {
  "use strict";
  const bigintSafe = (key, v) => (typeof v === "bigint" ? { $bigint: v.toString() } : v);
  const call = (op, args) => {
    const out = host(op, JSON.stringify(args, bigintSafe));
    return out === "" ? undefined : JSON.parse(out);
  };
  const instants = (s) => {
    if (s && typeof s === "object") {
      if (typeof s.instant === "string") s.instant = BigInt(s.instant);
      if (typeof s.previousInstant === "string") s.previousInstant = BigInt(s.previousInstant);
    }
    return s;
  };
  const opt = (o) => (o === undefined || o === null ? {} : o);

  const world = {
    time: {
      parse: (text) => BigInt(call("time.parse", [text])),
      format: (instant) => call("time.format", [instant]),
      now: () => BigInt(call("time.now", [])),
    },
    subject: {
      get: async (id, options) => call("subject.get", [id, opt(options)]),
      gets: async (ids, options) => call("subject.gets", [ids, opt(options)]),
      list: async (type) => call("subject.list", [type === undefined ? null : type]),
      findRefs: async (targetId, sourceType, options) =>
        call("subject.findRefs", [targetId, sourceType === undefined ? null : sourceType, opt(options)]),
    },
    search: {
      text: async (query, options) => call("search.text", [query, opt(options)]),
    },
    slice: {
      list: async (options) => call("slice.list", [opt(options)]).map(instants),
      get: async (sliceId) => instants(call("slice.get", [sliceId])),
    },
  };
  if (access === "write") {
    world.slice.write = async (slice) => call("slice.write", [slice]);
    world.slice.editPatches = async (sliceId, edits, meta) => call("slice.editPatches", [sliceId, edits, opt(meta)]);
    world.slice.delete = async (sliceId) => call("slice.delete", [sliceId]);
  }
  const freeze = (o) => {
    Object.values(o).forEach((v) => v && typeof v === "object" && freeze(v));
    return Object.freeze(o);
  };
  freeze(world);

  const show = (v) => {
    if (typeof v === "string") return v;
    if (typeof v === "bigint") return v.toString() + "n";
    if (v instanceof Error) return String(v);
    try {
      const s = JSON.stringify(v, bigintSafe);
      return s === undefined ? String(v) : s;
    } catch (e) {
      return String(v);
    }
  };
  const log = (level) => (...args) => sink(level, args.map(show).join(" "));
  const console = Object.freeze({ log: log("log"), info: log("info"), warn: log("warn"), error: log("error"), debug: log("debug") });

  // Deterministic where cheap: the same script sees the same Math.random sequence.
  let seed = 0x2545f491;
  Math.random = () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  const result = (v) => (v === undefined ? undefined : JSON.stringify(v, (k, x) => (typeof x === "bigint" ? x.toString() : x)));
  return [world, console, result];
})
