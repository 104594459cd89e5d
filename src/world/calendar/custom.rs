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

use super::CalendarError;
use crate::js;

/// Time for loading the module and for each format/parse call.
pub const CALL_TIME: Duration = Duration::from_millis(250);
/// How much longer than [`CALL_TIME`] a caller waits for an answer before giving up.
const GRACE: Duration = Duration::from_secs(1);
const LOADING: &str = "loading the module";

/// A failed call, as the worker reports it: the script's own error, or running out of time
/// doing `what` (the calendar is then turned off).
enum Failure {
    Script(String),
    Slow(String),
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
    /// Set when a call ran out of time: the call that did (the calendar is off since).
    off: Mutex<Option<String>>,
}

/// `Req` wrapped so `Custom` can derive Debug.
struct ReqBox(Req);

impl std::fmt::Debug for ReqBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("calendar request")
    }
}

impl Custom {
    /// Compile the module and check its exports; errors name the script and carry its line
    /// numbers.
    pub fn new(script: &str, source: &str) -> Result<Custom, CalendarError> {
        let (tx, rx) = mpsc::channel::<ReqBox>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), Failure>>();
        let (name, source) = (script.to_string(), source.to_string());
        let err = |f: Failure| match f {
            Failure::Script(message) => CalendarError::Script {
                script: script.to_string(),
                message,
            },
            Failure::Slow(what) => CalendarError::TooSlow {
                script: script.to_string(),
                what,
            },
        };
        std::thread::Builder::new()
            .name("nbook-calendar".into())
            .stack_size(4 << 20)
            .spawn(move || worker(&name, &source, rx, ready_tx))
            .map_err(|e| {
                err(Failure::Script(format!(
                    "cannot start the calendar thread: {e}"
                )))
            })?;
        match ready_rx.recv_timeout(CALL_TIME + GRACE) {
            Ok(r) => r.map_err(err)?,
            Err(RecvTimeoutError::Timeout) => return Err(err(Failure::Slow(LOADING.into()))),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(err(Failure::Script(
                    "the calendar script crashed while loading".into(),
                )))
            }
        }
        Ok(Custom {
            script: script.into(),
            tx: Mutex::new(tx),
            off: Mutex::new(None),
        })
    }

    fn script_err(&self, message: &str) -> CalendarError {
        CalendarError::Script {
            script: self.script.clone(),
            message: message.to_string(),
        }
    }

    /// Turn the calendar off (the first call that ran out of time is kept) and say why.
    fn turn_off(&self, what: String) -> CalendarError {
        let what = match self.off.lock() {
            Ok(mut o) => o.get_or_insert(what).clone(),
            Err(_) => what,
        };
        CalendarError::TooSlow {
            script: self.script.clone(),
            what,
        }
    }

    fn call<T>(&self, what: &str, req: impl FnOnce(Reply<T>) -> Req) -> Result<T, CalendarError> {
        if let Some(what) = self.off.lock().ok().and_then(|o| o.clone()) {
            return Err(self.turn_off(what));
        }
        let (tx, rx) = mpsc::channel();
        {
            let chan = self
                .tx
                .lock()
                .map_err(|_| self.script_err("the calendar is unavailable"))?;
            chan.send(ReqBox(req(tx)))
                .map_err(|_| self.script_err("the calendar thread stopped"))?;
        }
        match rx.recv_timeout(CALL_TIME + GRACE) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(Failure::Script(message))) => Err(self.script_err(&message)),
            Ok(Err(Failure::Slow(what))) => Err(self.turn_off(what)),
            Err(RecvTimeoutError::Timeout) => Err(self.turn_off(what.to_string())),
            Err(RecvTimeoutError::Disconnected) => {
                Err(self.script_err("the calendar thread stopped"))
            }
        }
    }

    pub fn format(&self, t: i64) -> Result<String, CalendarError> {
        self.call(&format!("format({t})"), |tx| Req::Format(t, tx))
    }

    pub fn parse(&self, text: &str) -> Result<i64, CalendarError> {
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
    let slow = || Failure::Slow(what.to_string());
    let v = match called {
        Ok(v) => v,
        Err(_) if late() => return Err(slow()),
        Err(e) => return Err(Failure::Script(js::describe(ctx, e, name))),
    };
    let mut check = js::until(deadline, slow);
    let v = match v.clone().into_promise() {
        Some(p) => {
            let never = || Failure::Script(format!("{what} returned a promise that never settles"));
            match js::settle(ctx, &p, &mut check, &mut || Ok(false), never)? {
                Ok(v) => v,
                Err(reason) if !late() => {
                    return Err(Failure::Script(js::describe_value(reason, name)))
                }
                Err(_) => return Err(slow()),
            }
        }
        None => v,
    };
    // Jobs the call queued and left behind run now, within the same time.
    js::drain(ctx, &mut check)?;
    Ok(v)
}

fn worker(
    name: &str,
    source: &str,
    rx: mpsc::Receiver<ReqBox>,
    ready: Sender<Result<(), Failure>>,
) {
    let limits = js::Limits {
        memory: 32 << 20,
        stack: 512 << 10,
        time: CALL_TIME,
    };
    let (rt, deadline) = match js::runtime(limits) {
        Ok(x) => x,
        Err(e) => {
            let _ = ready.send(Err(Failure::Script(e.to_string())));
            return;
        }
    };
    let ctx = match Context::full(&rt) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(Failure::Script(js::StartError(e).to_string())));
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
            let script_err = |e| Failure::Script(js::describe(&ctx, e, name));
            let module = Module::declare(ctx.clone(), name, source).map_err(script_err)?;
            let evaluated = module.eval();
            if evaluated.is_err() && Instant::now() >= until {
                return Err(Failure::Slow(LOADING.into()));
            }
            let (module, promise) = evaluated.map_err(script_err)?;
            let never = || {
                Failure::Script("the module's top level awaits something that never settles".into())
            };
            let mut check = js::until(until, || Failure::Slow(LOADING.into()));
            match js::settle(&ctx, &promise, &mut check, &mut || Ok(false), never)? {
                Ok(_) => {}
                Err(_) if Instant::now() >= until => return Err(Failure::Slow(LOADING.into())),
                Err(reason) => return Err(Failure::Script(js::describe_value(reason, name))),
            }
            let ns = module.namespace().map_err(script_err)?;
            let pick = |key: &str| -> Option<Function> {
                ns.get::<_, Function>(key).ok().or_else(|| {
                    ns.get::<_, rquickjs::Object>("default")
                        .ok()
                        .and_then(|d| d.get::<_, Function>(key).ok())
                })
            };
            match (pick("format"), pick("parse")) {
                (Some(f), Some(p)) => Ok((f, p)),
                _ => Err(Failure::Script(
                    "the script must export format(instant) and parse(text)".into(),
                )),
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
                        let big = BigInt::from_i64(ctx.clone(), t)
                            .map_err(|e| Failure::Script(e.to_string()))?;
                        let v = finish(&ctx, name, &what, until, format.call((big,)))?;
                        v.as_string()
                            .and_then(|s| s.to_string().ok())
                            .ok_or_else(|| {
                                Failure::Script(format!("format({t}) did not return a string"))
                            })
                    })();
                    let _ = reply.send(out);
                }
                Req::Parse(text, reply) => {
                    let what = format!("parse({text:?})");
                    let out = (|| {
                        let v = finish(&ctx, name, &what, until, parse.call((text.as_str(),)))
                            .map_err(|f| match f {
                                Failure::Script(msg) => Failure::Script(format!(
                                    "cannot read {text:?} as a date: {msg}"
                                )),
                                slow => slow,
                            })?;
                        instant_of(&v).ok_or_else(|| {
                            Failure::Script(format!(
                                "parse({text:?}) must return a BigInt or an integer instant"
                            ))
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
        let e = c.parse("Tuesday").unwrap_err().to_string();
        assert!(
            e.contains("expected 'Day N'") && e.contains("line 9"),
            "{e}"
        );
        assert!(c
            .format(5)
            .unwrap_err()
            .to_string()
            .contains("not a whole day"));
    }

    #[test]
    fn bad_modules_are_reported() {
        assert!(
            Custom::new("x.js", "export function format(t) { return ''; }")
                .unwrap_err()
                .to_string()
                .contains("world-engine/x.js: the script must export")
        );
        let e = Custom::new("y.js", "export function format(t) {\n  return (;\n}")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("custom calendar world-engine/y.js: "), "{e}");
        assert!(e.contains("SyntaxError") && e.contains("line 2"), "{e}");
        let looping = Custom::new(
            "z.js",
            "export function format(t) { for(;;){} }\nexport function parse(s) { return 0 }",
        )
        .unwrap();
        let t0 = Instant::now();
        let e = looping.format(0).unwrap_err();
        assert!(
            matches!(&e, CalendarError::TooSlow { script, what } if script == "z.js" && what == "format(0)")
        );
        let e = e.to_string();
        assert!(
            e.contains("world-engine/z.js") && e.contains("format(0)") && e.contains("250 ms"),
            "{e}"
        );
        assert!(t0.elapsed() < Duration::from_secs(2));
        // Off from then on: later calls fail at once with the same message.
        let t1 = Instant::now();
        assert_eq!(looping.parse("x").unwrap_err().to_string(), e);
        assert_eq!(looping.format(5).unwrap_err().to_string(), e);
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
        let e = flood.format(0).unwrap_err().to_string();
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
        let e = chains.parse("x").unwrap_err().to_string();
        assert!(e.contains("chain.js") && e.contains("parse"), "{e}");
        let never = Custom::new(
            "never.js",
            "export function format(t) { return 'x'; }\nexport async function parse(s) { await new Promise(() => {}); }",
        )
        .unwrap();
        let e = never.parse("x").unwrap_err().to_string();
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
        .unwrap_err()
        .to_string();
        assert!(e.contains("top.js") && e.contains("loading"), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
    }
}
