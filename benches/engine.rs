//! Engine overhead of a read tool call (look-up, allowlist, schema validation, path
//! authorization, session log line, result), measured through `Engine::call` on a real
//! project. DESIGN.md target: ≤ 100 µs on top of the tool's own work.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, Engine, Mode, ToolCall};
use serde_json::json;

fn bench_read_call(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Bench")).expect("init");
    std::fs::write(root.join("small.md"), "one line\n").expect("write");
    let dirs = Dirs {
        config: tmp.path().join("h"),
        data: tmp.path().join("h/d"),
        logs: tmp.path().join("h/l"),
    };
    let ws = nbook::workspace::Workspace::open(&root).expect("open");
    let engine = Arc::new(
        Engine::open(
            ws,
            Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .expect("engine"),
    );
    let sid = engine
        .create_session("leader.default", Mode::Normal, "bench", None)
        .expect("session")
        .id;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("rt");
    let ctx = nbook::engine::tool::ToolCtx {
        workspace: engine.workspace().clone(),
        config: engine.config().clone(),
        profile: engine.session_profile(&sid).expect("profile"),
        session_id: sid.clone(),
        mode: Mode::Normal,
        session_state: engine.session_state(&sid),
        call_id: String::new(),
        services: None,
        cancel: Default::default(),
    };
    let read = engine
        .registry()
        .get("read")
        .expect("read tool")
        .tool
        .clone();
    let args = json!({"path": "small.md"});

    let mut g = c.benchmark_group("engine");
    g.bench_function("read_tool_alone", |b| {
        b.iter(|| read.run(&ctx, &args.clone().into()).expect("read"))
    });
    g.bench_function("read_call_through_engine", |b| {
        b.iter(|| {
            rt.block_on(engine.call(
                &sid,
                ToolCall {
                    id: String::new(),
                    name: "read".into(),
                    arguments: args.clone(),
                },
                Approval::Fail,
            ))
        })
    });
    g.finish();
}

criterion_group!(benches, bench_read_call);
criterion_main!(benches);
