// Builds the `wf` object a workflow's run(wf, args) receives. Evaluated once per run, after
// the determinism guards and before the workflow's own code. `host(op, json)` is the only way
// out of the sandbox and answers with JSON text.
//
// Agent invocations are asynchronous: `host("agents.invoke", …)` returns a ticket at once and
// the Rust side runs the invocation on a thread of its own; when it ends, Rust calls
// `settle(ticket, ok, json)` and the promise created for that ticket resolves or rejects.
// Every other call is synchronous on the Rust side (`ask` blocks until the author answers).
(function (host, argsJson, info) {
  "use strict";
  const call = (op, args) => {
    const out = host(op, JSON.stringify(args === undefined ? null : args));
    return out === "" ? undefined : JSON.parse(out);
  };
  const opt = (o) => (o === undefined || o === null ? {} : o);

  const waiting = new Map();
  const start = (op, args) =>
    new Promise((resolve, reject) => {
      const ticket = call(op, args);
      waiting.set(ticket, { resolve, reject });
    });
  const settle = (ticket, ok, text) => {
    const w = waiting.get(ticket);
    if (!w) return;
    waiting.delete(ticket);
    if (ok) w.resolve(JSON.parse(text));
    else w.reject(new Error(text));
  };

  const show = (v) => {
    if (typeof v === "string") return v;
    if (v instanceof Error) return String(v);
    try {
      const s = JSON.stringify(v);
      return s === undefined ? String(v) : s;
    } catch (e) {
      return String(v);
    }
  };

  const map = async (items, fn, options) => {
    if (!Array.isArray(items)) throw new TypeError("wf.map(items, fn, {concurrency}): items must be an array");
    if (typeof fn !== "function") throw new TypeError("wf.map(items, fn, {concurrency}): fn must be a function (item, index) => value");
    const o = opt(options);
    const limit = o.concurrency === undefined ? 4 : o.concurrency;
    if (!Number.isInteger(limit) || limit < 1) throw new TypeError("wf.map: concurrency must be a whole number of at least 1");
    const results = new Array(items.length);
    let next = 0;
    // `limit` workers pull the next item as soon as their previous one settles, so at most
    // `limit` calls of fn (and the agent invocations they await) are in flight at once.
    const worker = async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i], i);
      }
    };
    const workers = [];
    for (let k = 0; k < Math.min(limit, items.length); k++) workers.push(worker());
    await Promise.all(workers);
    return results;
  };

  const args = JSON.parse(argsJson);
  const wf = {
    args,
    agents: {
      create: async (profileKey, options) => call("agents.create", [profileKey, opt(options)]),
      invoke: (sessionId, options) => start("agents.invoke", [sessionId, opt(options)]),
    },
    map,
    all: (thunks) => {
      if (!Array.isArray(thunks)) throw new TypeError("wf.all(thunks): thunks must be an array of functions");
      return Promise.all(thunks.map((t) => t()));
    },
    workspace: {
      read: async (path) => call("workspace.read", [path]),
    },
    ask: async (question) => call("ask", [opt(question)]),
    log: (...parts) => {
      call("log", [parts.map(show).join(" ")]);
    },
    progress: (p) => {
      call("progress", [opt(p)]);
    },
    caller: () => JSON.parse(info),
  };
  const freeze = (o) => {
    Object.values(o).forEach((v) => v && typeof v === "object" && !Object.isFrozen(v) && freeze(v));
    return Object.freeze(o);
  };
  freeze(wf.agents);
  freeze(wf.workspace);
  Object.freeze(wf);

  const toJson = (v) => (v === undefined ? undefined : JSON.stringify(v));
  const console = Object.freeze({ log: wf.log, info: wf.log, warn: wf.log, error: wf.log, debug: wf.log });
  return [wf, settle, toJson, console];
})
