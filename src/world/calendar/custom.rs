//! A `custom` calendar: an ES module in `world-engine/` exporting `format(instant)` and
//! `parse(text)` (or a default export holding both), run in QuickJS with no host API at all.
//! `format` receives the instant as a BigInt; `parse` may return a BigInt or an integer.
//!
//! QuickJS runtimes cannot move between threads, so the calendar runs on its own worker
//! thread and this handle (Send + Sync) talks to it over channels; the thread ends when the
//! handle is dropped. Each call has 250 ms and the module 32 MiB.

use std::sync::mpsc::{self, Sender};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rquickjs::{BigInt, Context, Function, Module, Value};

use crate::world::js;

const CALL_TIME: Duration = Duration::from_millis(250);

enum Req {
    Format(i64, Sender<Result<String, String>>),
    Parse(String, Sender<Result<i64, String>>),
}

#[derive(Debug)]
pub struct Custom {
    pub script: String,
    tx: Mutex<Sender<ReqBox>>,
}

/// `Req` wrapped so `Custom` can derive Debug.
struct ReqBox(Req);

impl std::fmt::Debug for ReqBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("calendar request")
    }
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
        ready_rx
            .recv()
            .map_err(|_| "the calendar script crashed while loading".to_string())??;
        Ok(Custom {
            script: script.into(),
            tx: Mutex::new(tx),
        })
    }

    fn send(&self, req: Req) -> Result<(), String> {
        let tx = self
            .tx
            .lock()
            .map_err(|_| "the calendar is unavailable".to_string())?;
        tx.send(ReqBox(req))
            .map_err(|_| "the calendar thread stopped".to_string())
    }

    pub fn format(&self, t: i64) -> Result<String, String> {
        let (tx, rx) = mpsc::channel();
        self.send(Req::Format(t, tx))?;
        rx.recv()
            .map_err(|_| "the calendar thread stopped".to_string())?
    }

    pub fn parse(&self, text: &str) -> Result<i64, String> {
        let (tx, rx) = mpsc::channel();
        self.send(Req::Parse(text.to_string(), tx))?;
        rx.recv()
            .map_err(|_| "the calendar thread stopped".to_string())?
    }
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
        let arm = || deadline.set(Some(Instant::now() + CALL_TIME));
        arm();
        let loaded = (|| {
            let module = Module::declare(ctx.clone(), name, source).map_err(|e| js::describe(&ctx, e, name))?;
            let (module, promise) = module.eval().map_err(|e| js::describe(&ctx, e, name))?;
            promise.finish::<()>().map_err(|e| js::describe(&ctx, e, name))?;
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
            arm();
            match req {
                Req::Format(t, reply) => {
                    let out = (|| {
                        let big = BigInt::from_i64(ctx.clone(), t).map_err(|e| e.to_string())?;
                        let v: Value = format.call((big,)).map_err(|e| js::describe(&ctx, e, name))?;
                        v.as_string()
                            .and_then(|s| s.to_string().ok())
                            .ok_or_else(|| format!("{name}: format({t}) did not return a string"))
                    })();
                    let _ = reply.send(out);
                }
                Req::Parse(text, reply) => {
                    let out = (|| {
                        let v: Value = parse
                            .call((text.as_str(),))
                            .map_err(|e| format!("cannot read {text:?} as a date: {}", js::describe(&ctx, e, name)))?;
                        instant_of(&v).ok_or_else(|| {
                            format!("{name}: parse({text:?}) must return a BigInt or an integer instant")
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
        assert!(looping.format(0).unwrap_err().contains("interrupted"));
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert_eq!(looping.parse("x").unwrap(), 0);
    }
}
