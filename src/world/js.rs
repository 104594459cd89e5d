//! QuickJS plumbing shared by the `execute_world` sandbox, workflows and custom calendars: a
//! runtime with a memory cap, a stack cap and a deadline enforced by the interrupt handler
//! (which QuickJS polls while running bytecode, so a `while (true) {}` really stops), the one
//! loop that drives a promise through the job queue ([`settle`]), and readable errors with
//! line numbers.
//!
//! Why the job loop is ours: QuickJS runs promise reactions and `queueMicrotask` callbacks as
//! jobs, one per `JS_ExecutePendingJob`, and an interrupt inside a job only ends that job (rquickjs
//! swallows its exception and reports "a job ran"). A script that keeps queuing jobs therefore
//! never returns to the host on its own; the deadline holds only if the host checks it between
//! jobs, which [`settle`] does before every one.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::promise::PromiseState;
use rquickjs::{Ctx, Error, Object, Promise, Runtime, Value};

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub memory: usize,
    pub stack: usize,
    pub time: Duration,
}

/// When the running code must stop (`None`: no limit).
pub type Deadline = Rc<Cell<Option<Instant>>>;

/// A runtime with `limits` applied; the returned cell holds the deadline (`None` = no limit).
/// The caller arms it (`Some(Instant::now() + limits.time)`) just before running code.
pub fn runtime(limits: Limits) -> Result<(Runtime, Deadline), String> {
    let rt = Runtime::new().map_err(|e| format!("cannot start the JavaScript engine: {e}"))?;
    rt.set_memory_limit(limits.memory);
    rt.set_max_stack_size(limits.stack);
    let deadline: Deadline = Rc::new(Cell::new(None));
    let d = deadline.clone();
    rt.set_interrupt_handler(Some(Box::new(move || {
        d.get().is_some_and(|t| Instant::now() >= t)
    })));
    Ok((rt, deadline))
}

/// Why the stop check ended a run (its message), or nothing to stop for.
pub type Check<'a> = dyn FnMut() -> Result<(), String> + 'a;

/// How a promise ended: `Ok(value)` resolved, `Err(reason)` rejected.
pub type Settled<'js> = Result<Value<'js>, Value<'js>>;

/// Run the job queue until `promise` settles. Before every job `check` may stop the run (its
/// `Err` is returned as is): this is what bounds a script that keeps queuing microtasks or
/// promise reactions, since no single job runs long enough for the interrupt to end the run.
/// When the promise is pending and no job is left, `idle` is asked to wait for something from
/// outside (`Ok(true)`: something happened, look again; `Ok(false)`: nothing can settle it,
/// which is reported with `never` as the message).
pub fn settle<'js>(
    ctx: &Ctx<'js>,
    promise: &Promise<'js>,
    check: &mut Check<'_>,
    idle: &mut dyn FnMut() -> Result<bool, String>,
    never: &str,
) -> Result<Settled<'js>, String> {
    loop {
        match promise.state() {
            PromiseState::Resolved => {
                return match promise.result::<Value>() {
                    Some(Ok(v)) => Ok(Ok(v)),
                    Some(Err(_)) => Ok(Err(ctx.catch())),
                    None => Ok(Ok(Value::new_undefined(ctx.clone()))),
                }
            }
            PromiseState::Rejected => {
                return match promise.result::<Value>() {
                    Some(Ok(v)) => Ok(Err(v)),
                    Some(Err(_)) => Ok(Err(ctx.catch())),
                    None => Ok(Err(Value::new_undefined(ctx.clone()))),
                }
            }
            PromiseState::Pending => {
                check()?;
                if ctx.execute_pending_job() {
                    continue;
                }
                if !idle()? {
                    return Err(never.to_string());
                }
            }
        }
    }
}

/// A stop check for a plain deadline: `Err(msg())` once `deadline` has passed.
pub fn until(deadline: Instant, msg: impl Fn() -> String) -> impl FnMut() -> Result<(), String> {
    move || {
        if Instant::now() >= deadline {
            Err(msg())
        } else {
            Ok(())
        }
    }
}

/// What went wrong in JavaScript, as one line for the agent: `TypeError: x is not a function
/// (line 3)`. `file` is the name the code was compiled under; its line numbers are reported.
pub fn describe(ctx: &Ctx<'_>, err: Error, file: &str) -> String {
    match err {
        Error::Exception => describe_value(ctx.catch(), file),
        other => other.to_string(),
    }
}

/// Like [`describe`] for a value that was thrown or a promise rejected with.
pub fn describe_value(v: Value<'_>, file: &str) -> String {
    if let Some(obj) = v.as_object() {
        let name: Option<String> = obj.get("name").ok();
        let message: Option<String> = obj.get("message").ok();
        if name.is_some() || message.is_some() {
            let stack: Option<String> = obj.get("stack").ok();
            let line = stack.as_deref().and_then(|s| line_in(s, file));
            let mut out = format!(
                "{}: {}",
                name.unwrap_or_else(|| "Error".into()),
                message.unwrap_or_default()
            );
            if let Some(l) = line {
                out.push_str(&format!(" (line {l})"));
            }
            return out;
        }
        return format!("uncaught {}", to_json_text(obj));
    }
    if v.is_null() || v.is_undefined() {
        // QuickJS throws null when it cannot even allocate the error object.
        return "uncaught null (the script probably ran out of memory)".into();
    }
    match v.as_string().and_then(|s| s.to_string().ok()) {
        Some(s) => format!("uncaught {s:?}"),
        None => format!("uncaught {}", value_text(&v)),
    }
}

fn to_json_text(obj: &Object<'_>) -> String {
    obj.ctx()
        .json_stringify(obj.clone())
        .ok()
        .flatten()
        .and_then(|s| s.to_string().ok())
        .map(|s| s.chars().take(200).collect())
        .unwrap_or_else(|| "object".into())
}

fn value_text(v: &Value<'_>) -> String {
    if let Some(n) = v.as_number() {
        return n.to_string();
    }
    if let Some(b) = v.as_bool() {
        return b.to_string();
    }
    format!("{:?}", v.type_of())
}

/// First `file:LINE` in a QuickJS stack trace.
pub fn line_in(stack: &str, file: &str) -> Option<u32> {
    let pat = format!("{file}:");
    let mut rest = stack;
    while let Some(i) = rest.find(&pat) {
        let after = &rest[i + pat.len()..];
        let digits: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
        if let Ok(n) = digits.parse() {
            return Some(n);
        }
        rest = after;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rquickjs::Context;

    fn limits(ms: u64) -> Limits {
        Limits {
            memory: 16 << 20,
            stack: 256 << 10,
            time: Duration::from_millis(ms),
        }
    }

    #[test]
    fn interrupt_stops_a_loop_and_errors_have_lines() {
        let (rt, deadline) = runtime(limits(100)).unwrap();
        let ctx = Context::full(&rt).unwrap();
        ctx.with(|ctx| {
            let opts = |f: &str| {
                let mut o = rquickjs::context::EvalOptions::default();
                o.filename = Some(f.into());
                o
            };
            deadline.set(Some(Instant::now() + Duration::from_millis(100)));
            let t0 = Instant::now();
            let err = ctx
                .eval_with_options::<(), _>("let i = 0;\nwhile (true) { i++ }", opts("a.js"))
                .unwrap_err();
            assert!(t0.elapsed() < Duration::from_secs(2));
            assert!(describe(&ctx, err, "a.js").contains("interrupted"));
            deadline.set(None);
            let err = ctx
                .eval_with_options::<(), _>("1;\n\nnull.x", opts("b.js"))
                .unwrap_err();
            let d = describe(&ctx, err, "b.js");
            assert!(d.starts_with("TypeError") && d.contains("(line 3)"), "{d}");
            let err = ctx
                .eval_with_options::<(), _>("let a = ;", opts("c.js"))
                .unwrap_err();
            let d = describe(&ctx, err, "c.js");
            assert!(
                d.starts_with("SyntaxError") && d.contains("(line 1)"),
                "{d}"
            );
        });
    }

    #[test]
    fn the_job_loop_stops_a_microtask_flood_at_the_deadline() {
        let (rt, deadline) = runtime(limits(200)).unwrap();
        let ctx = Context::full(&rt).unwrap();
        ctx.with(|ctx| {
            let until = Instant::now() + Duration::from_millis(200);
            deadline.set(Some(until));
            let p: Promise = ctx
                .eval("function l() { queueMicrotask(l); queueMicrotask(l); }\nl();\nnew Promise(() => {})")
                .unwrap();
            let t0 = Instant::now();
            let mut check = until_then(until);
            let e = settle(&ctx, &p, &mut check, &mut || Ok(false), "never").unwrap_err();
            assert_eq!(e, "late");
            assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
        });
        // A fresh runtime (the flood's jobs are still queued in that one): with nothing
        // queued, a pending promise is reported at once.
        let (rt, _) = runtime(limits(200)).unwrap();
        let ctx = Context::full(&rt).unwrap();
        ctx.with(|ctx| {
            let p: Promise = ctx.eval("new Promise(() => {})").unwrap();
            let mut ok = || Ok(());
            let e = settle(&ctx, &p, &mut ok, &mut || Ok(false), "never").unwrap_err();
            assert_eq!(e, "never");
            let p: Promise = ctx.eval("Promise.resolve(1).then((x) => x + 1)").unwrap();
            let v = settle(&ctx, &p, &mut ok, &mut || Ok(false), "never").unwrap();
            assert_eq!(v.unwrap().as_int(), Some(2));
        });
    }

    fn until_then(t: Instant) -> impl FnMut() -> Result<(), String> {
        until(t, || "late".to_string())
    }

    #[test]
    fn memory_cap_fails_cleanly() {
        let (rt, _) = runtime(limits(5000)).unwrap();
        let ctx = Context::full(&rt).unwrap();
        ctx.with(|ctx| {
            let err = ctx
                .eval::<(), _>("const a = []; while (true) a.push('x'.repeat(1000));")
                .unwrap_err();
            let d = describe(&ctx, err, "m.js");
            assert!(d.contains("memory"), "{d}");
        });
    }
}
