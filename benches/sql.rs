//! `execute_sql`: a 200-row read of a real project table through `Engine::call` (look-up,
//! allowlist, schema validation, authorizer compile, 200 rows to JSON, session log line), and
//! the tool alone for comparison.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use nbook::config::{Config, Dirs};
use nbook::engine::tool::CallArgs;
use nbook::engine::{Approval, CallStatus, Engine, Mode, ToolCall};
use serde_json::json;

const SQL: &str = "SELECT id, title, summary, note, createdAt FROM Story ORDER BY id LIMIT 200";

fn bench_sql_read(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Bench")).expect("init");
    {
        let conn = nbook::store::open(&root.join(".nbook/project.sqlite")).expect("db");
        let tx = conn.unchecked_transaction().expect("tx");
        for i in 0..1000 {
            tx.execute(
                "INSERT INTO Story (title, summary) VALUES (?1, ?2)",
                [
                    format!("Story {i}"),
                    format!("A summary of story number {i}, long enough to matter."),
                ],
            )
            .expect("insert");
        }
        tx.commit().expect("commit");
    }
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
    let tool = engine
        .registry()
        .get("execute_sql")
        .expect("execute_sql")
        .tool
        .clone();
    let args = json!({ "sql": SQL });
    let call = || ToolCall {
        id: String::new(),
        name: "execute_sql".into(),
        arguments: args.clone(),
    };
    let first = rt.block_on(engine.call(&sid, call(), Approval::Fail));
    assert_eq!(first.status, CallStatus::Ok, "{}", first.content);
    assert_eq!(first.details.as_ref().expect("details")["rowCount"], 200);

    let mut g = c.benchmark_group("sql");
    g.bench_function("read_200_rows_tool_alone", |b| {
        b.iter(|| tool.run(&ctx, &CallArgs::from(args.clone())).expect("sql"))
    });
    g.bench_function("read_200_rows_through_engine", |b| {
        b.iter(|| rt.block_on(engine.call(&sid, call(), Approval::Fail)))
    });
    g.finish();
}

criterion_group!(benches, bench_sql_read);
criterion_main!(benches);
