//! A `custom` calendar: an ES module in `world-engine/` exporting `format(instant)` and
//! `parse(text)` (or a default export holding both), run in QuickJS with no host API at all.
//! `format` receives the instant as a BigInt; `parse` may return a BigInt or an integer (or a
//! promise of one).
//!
//! QuickJS runtimes cannot move between threads, so the calendar runs on its own worker
//! thread and this handle (Send + Sync) talks to it over channels; the thread ends when the
//! handle is dropped. The module has 32 MiB, and loading it and each call have [`CALL_TIME`],
//! which bounds the call's bytecode and every promise job it queues. A calendar that runs out
//! of time once is turned off: every later call fails at once with the same message, naming
//! the file, so a looping calendar costs the UI one short wait instead of one per date shown.
//! The caller also stops waiting after [`CALL_TIME`] plus a grace period, whatever the worker
//! is doing.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rquickjs::{BigInt, Context, Ctx, Function, Module, Value};

use crate::world::js;

/// Time for loading the module and for each format/parse call.
pub const CALL_TIME: Duration = Duration::from_millis(250);
/// How much longer than [`CALL_TIME`] a caller waits for an answer before giving up.
const GRACE: Duration = Duration::from_secs(1);

/// A failed call: `off` when it ran out of time (the calendar is then turned off).
struct Failure {
    msg: String,
    off: bool,
}

type Reply<T> = Sender<Result<T, Failure>>;

enum Req {
    Format(i64, Reply<String>),
    Parse(String, Reply<i64>),
}

#[derive(Debug)]
pub struct Custom {
    pub script: String,
    tx: Mutex<Sender<ReqBox>>,
    /// Set when a call ran out of time: why the calendar is off.
    off: Mutex<Option<String>>,
}

/// `Req` wrapped so `Custom` can derive Debug.
struct ReqBox(Req);

impl std::fmt::Debug for ReqBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("calendar request")
    }
}

/// The message for a calendar that ran out of time doing `what`.
fn too_slow(name: &str, what: &str) -> String {
    format!(
        "custom calendar world-engine/{name}: {what} ran longer than {} ms and was stopped, so the calendar is off until the file changes (look for an endless loop or a promise chain that never ends)",
        CALL_TIME.as_millis()
    )
}

impl Custom {
    /// Compile the module and check its exports; errors carry the script's line numbers.
    pub fn new(script: &str, source: &str) -> Result<Custom, String> {
        let (tx, rx) = mpsc::channel::<ReqBox>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let (name, source) = (script.to_string(), source.to_string());
        std::thread::Builder::new()
            .name("nbook-calendar".into())
            .stack_size(4 << 20)
            .spawn(move || worker(&name, &source, rx, ready_tx))
            .map_err(|e| format!("cannot start the calendar thread: {e}"))?;
        match ready_rx.recv_timeout(CALL_TIME + GRACE) {
            Ok(r) => r?,
            Err(RecvTimeoutError::Timeout) => return Err(too_slow(script, "loading the module")),
            Err(RecvTimeoutError::Disconnected) => {
                return Err("the calendar script crashed while loading".to_string())
            }
        }
        Ok(Custom {
            script: script.into(),
            tx: Mutex::new(tx),
            off: Mutex::new(None),
        })
    }

    fn turned_off(&self) -> Option<String> {
        self.off.lock().ok().and_then(|o| o.clone())
    }

    fn turn_off(&self, why: &str) {
        if let Ok(mut o) = self.off.lock() {
            o.get_or_insert_with(|| why.to_string());
        }
    }

    fn call<T>(&self, what: &str, req: impl FnOnce(Reply<T>) -> Req) -> Result<T, String> {
        if let Some(why) = self.turned_off() {
            return Err(why);
        }
        let (tx, rx) = mpsc::channel();
        {
            let chan = self
                .tx
                .lock()
                .map_err(|_| "the calendar is unavailable".to_string())?;
            chan.send(ReqBox(req(tx)))
                .map_err(|_| "the calendar thread stopped".to_string())?;
        }
        match rx.recv_timeout(CALL_TIME + GRACE) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(f)) => {
                if f.off {
                    self.turn_off(&f.msg);
                }
                Err(f.msg)
            }
            Err(RecvTimeoutError::Timeout) => {
                let msg = too_slow(&self.script, what);
                self.turn_off(&msg);
                Err(msg)
            }
            Err(RecvTimeoutError::Disconnected) => Err("the calendar thread stopped".to_string()),
        }
    }

    pub fn format(&self, t: i64) -> Result<String, String> {
        self.call(&format!("format({t})"), |tx| Req::Format(t, tx))
    }

    pub fn parse(&self, text: &str) -> Result<i64, String> {
        self.call(&format!("parse({text:?})"), |tx| {
            Req::Parse(text.to_string(), tx)
        })
    }
}

/// Settle what a call returned (a promise is awaited) and run the jobs it queued, all before
/// `deadline`. `what` names the call in the time-limit message.
fn finish<'js>(
    ctx: &Ctx<'js>,
    name: &str,
    what: &str,
    deadline: Instant,
    called: rquickjs::Result<Value<'js>>,
) -> Result<Value<'js>, Failure> {
    let late = || Instant::now() >= deadline;
    let slow = || Failure {
        msg: too_slow(name, what),
        off: true,
    };
    let script_err = |msg: String| Failure { msg, off: false };
    let v = match called {
        Ok(v) => v,
        Err(_) if late() => return Err(slow()),
        Err(e) => return Err(script_err(js::describe(ctx, e, name))),
    };
    let mut check = js::until(deadline, || too_slow(name, what));
    let v = match v.clone().into_promise() {
        Some(p) => {
            let never = format!("{name}: {what} returned a promise that never settles");
            match js::settle(ctx, &p, &mut check, &mut || Ok(false), &never) {
                Ok(Ok(v)) => v,
                Ok(Err(reason)) if !late() => {
                    return Err(script_err(js::describe_value(reason, name)))
                }
                Ok(Err(_)) => return Err(slow()),
                Err(msg) => return Err(Failure { off: late(), msg }),
            }
        }
        None => v,
    };
    // Jobs the call queued and left behind run now, within the same time.
    loop {
        check().map_err(|msg| Failure { msg, off: true })?;
        if !ctx.execute_pending_job() {
            break;
        }
    }
    Ok(v)
}

fn worker(name: &str, source: &str, rx: mpsc::Receiver<ReqBox>, ready: Sender<Result<(), String>>) {
    let limits = js::Limits {
        memory: 32 << 20,
        stack: 512 << 10,
        time: CALL_TIME,
    };
    let (rt, deadline) = match js::runtime(limits) {
        Ok(x) => x,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let ctx = match Context::full(&rt) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            return;
        }
    };
    ctx.with(|ctx| {
        let arm = || {
            let t = Instant::now() + CALL_TIME;
            deadline.set(Some(t));
            t
        };
        let until = arm();
        let loaded = (|| {
            let module = Module::declare(ctx.clone(), name, source).map_err(|e| js::describe(&ctx, e, name))?;
            let evaluated = module.eval();
            if evaluated.is_err() && Instant::now() >= until {
                return Err(too_slow(name, "loading the module"));
            }
            let (module, promise) = evaluated.map_err(|e| js::describe(&ctx, e, name))?;
            let never = format!("{name}: the module's top level awaits something that never settles");
            let mut check = js::until(until, || too_slow(name, "loading the module"));
            match js::settle(&ctx, &promise, &mut check, &mut || Ok(false), &never)? {
                Ok(_) => {}
                Err(_) if Instant::now() >= until => return Err(too_slow(name, "loading the module")),
                Err(reason) => return Err(js::describe_value(reason, name)),
            }
            let ns = module.namespace().map_err(|e| js::describe(&ctx, e, name))?;
            let pick = |key: &str| -> Option<Function> {
                ns.get::<_, Function>(key).ok().or_else(|| {
                    ns.get::<_, rquickjs::Object>("default")
                        .ok()
                        .and_then(|d| d.get::<_, Function>(key).ok())
                })
            };
            match (pick("format"), pick("parse")) {
                (Some(f), Some(p)) => Ok((f, p)),
                _ => Err(format!("{name} must export format(instant) and parse(text)")),
            }
        })();
        let (format, parse) = match loaded {
            Ok(x) => {
                let _ = ready.send(Ok(()));
                x
            }
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        };
        while let Ok(ReqBox(req)) = rx.recv() {
            let until = arm();
            match req {
                Req::Format(t, reply) => {
                    let what = format!("format({t})");
                    let out = (|| {
                        let big = BigInt::from_i64(ctx.clone(), t).map_err(|e| Failure { msg: e.to_string(), off: false })?;
                        let v = finish(&ctx, name, &what, until, format.call((big,)))?;
                        v.as_string()
                            .and_then(|s| s.to_string().ok())
                            .ok_or_else(|| Failure { msg: format!("{name}: format({t}) did not return a string"), off: false })
                    })();
                    let _ = reply.send(out);
                }
                Req::Parse(text, reply) => {
                    let what = format!("parse({text:?})");
                    let out = (|| {
                        let v = finish(&ctx, name, &what, until, parse.call((text.as_str(),))).map_err(|f| {
                            if f.off {
                                f
                            } else {
                                Failure { msg: format!("cannot read {text:?} as a date: {}", f.msg), off: false }
                            }
                        })?;
                        instant_of(&v).ok_or_else(|| Failure {
                            msg: format!("{name}: parse({text:?}) must return a BigInt or an integer instant"),
                            off: false,
                        })
                    })();
                    let _ = reply.send(out);
                }
            }
            deadline.set(None);
        }
    });
}

/// A JS value as an instant: BigInt, integral number, or a string of digits.
pub fn instant_of(v: &Value<'_>) -> Option<i64> {
    if let Some(b) = v.as_big_int() {
        return b.clone().to_i64().ok();
    }
    if let Some(n) = v.as_number() {
        if n.is_finite() && n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0 {
            return Some(n as i64);
        }
        return None;
    }
    v.as_string()
        .and_then(|s| s.to_string().ok())
        .and_then(|s| s.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAYS: &str = r#"
export function format(t) {
  const d = t / 86400n;
  if (t % 86400n !== 0n) throw new Error("not a whole day: " + t);
  return "Day " + d;
}
export function parse(text) {
  const m = /^Day (-?\d+)$/.exec(text.trim());
  if (!m) throw new Error("expected 'Day N'");
  return BigInt(m[1]) * 86400n;
}
"#;

    #[test]
    fn runs_format_and_parse() {
        let c = Custom::new("days.js", DAYS).unwrap();
        assert_eq!(c.format(86_400 * 3).unwrap(), "Day 3");
        assert_eq!(c.parse("Day -2").unwrap(), -172_800);
        let e = c.parse("Tuesday").unwrap_err();
        assert!(
            e.contains("expected 'Day N'") && e.contains("line 9"),
            "{e}"
        );
        assert!(c.format(5).unwrap_err().contains("not a whole day"));
    }

    #[test]
    fn bad_modules_are_reported() {
        assert!(
            Custom::new("x.js", "export function format(t) { return ''; }")
                .unwrap_err()
                .contains("must export")
        );
        let e = Custom::new("y.js", "export function format(t) {\n  return (;\n}").unwrap_err();
        assert!(e.contains("SyntaxError") && e.contains("line 2"), "{e}");
        let looping = Custom::new(
            "z.js",
            "export function format(t) { for(;;){} }\nexport function parse(s) { return 0 }",
        )
        .unwrap();
        let t0 = Instant::now();
        let e = looping.format(0).unwrap_err();
        assert!(
            e.contains("world-engine/z.js") && e.contains("format(0)") && e.contains("250 ms"),
            "{e}"
        );
        assert!(t0.elapsed() < Duration::from_secs(2));
        // Off from then on: later calls fail at once with the same message.
        let t1 = Instant::now();
        assert_eq!(looping.parse("x").unwrap_err(), e);
        assert_eq!(looping.format(5).unwrap_err(), e);
        assert!(t1.elapsed() < Duration::from_millis(50));
    }

    #[test]
    fn promise_floods_and_never_settling_calls_are_bounded() {
        let flood = Custom::new(
            "flood.js",
            "function l() { queueMicrotask(l); queueMicrotask(l); }\nexport function format(t) { l(); return 'x'; }\nexport async function parse(s) { await new Promise(() => {}); }",
        )
        .unwrap();
        let t0 = Instant::now();
        let e = flood.format(0).unwrap_err();
        assert!(
            e.contains("world-engine/flood.js") && e.contains("off"),
            "{e}"
        );
        assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
        let chains = Custom::new(
            "chain.js",
            "export function format(t) { return 'x'; }\nexport async function parse(s) { for (;;) await null; }",
        )
        .unwrap();
        let e = chains.parse("x").unwrap_err();
        assert!(e.contains("chain.js") && e.contains("parse"), "{e}");
        let never = Custom::new(
            "never.js",
            "export function format(t) { return 'x'; }\nexport async function parse(s) { await new Promise(() => {}); }",
        )
        .unwrap();
        let e = never.parse("x").unwrap_err();
        assert!(e.contains("never settles"), "{e}");
        assert_eq!(
            never.format(1).unwrap(),
            "x",
            "a script error does not turn it off"
        );
        let t0 = Instant::now();
        let e = Custom::new(
            "top.js",
            "function l() { queueMicrotask(l); queueMicrotask(l); }\nl();\nawait new Promise(() => {});\nexport function format(t) { return ''; }\nexport function parse(s) { return 0; }",
        )
        .unwrap_err();
        assert!(e.contains("top.js") && e.contains("loading"), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
    }
}
