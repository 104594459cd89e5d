//! The runtime limits, the job loop's stop checks and error descriptions, on real QuickJS.

use super::*;
use rquickjs::{Context, Promise};

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
        let e = settle(&ctx, &p, &mut check, &mut || Ok(false), || "never".to_string()).unwrap_err();
        assert_eq!(e, "late");
        assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
    });
    // A fresh runtime (the flood's jobs are still queued in that one): with nothing
    // queued, a pending promise is reported at once.
    let (rt, _) = runtime(limits(200)).unwrap();
    let ctx = Context::full(&rt).unwrap();
    ctx.with(|ctx| {
        let p: Promise = ctx.eval("new Promise(() => {})").unwrap();
        let mut ok = || Ok::<(), String>(());
        let e = settle(&ctx, &p, &mut ok, &mut || Ok(false), || "never".to_string()).unwrap_err();
        assert_eq!(e, "never");
        let p: Promise = ctx.eval("Promise.resolve(1).then((x) => x + 1)").unwrap();
        let v = settle(&ctx, &p, &mut ok, &mut || Ok(false), || "never".to_string()).unwrap();
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
