//! execute_world through the real engine and approval queue: a script that wrote waits with a
//! preview of its slices and state changes; approve commits, reject leaves the database
//! byte-identical; a read-only script never waits.

mod world_support;

use std::sync::Arc;
use std::time::Duration;

use nbook::config::{Config, Preset};
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, Mode, PreviewBody, ToolCall,
};
use serde_json::{json, Value};
use world_support::{fixture, fixture_with, SEED};

fn call(code: &str) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: "execute_world".into(),
        arguments: json!({"code": code}),
    }
}

async fn queued(
    engine: &Arc<Engine>,
    sid: &str,
    c: ToolCall,
) -> (tokio::task::JoinHandle<CallResult>, String) {
    let before = engine.pending().len();
    let (e, s) = (engine.clone(), sid.to_string());
    let handle = tokio::spawn(async move { e.call(&s, c, Approval::Queue).await });
    for _ in 0..2000 {
        let p = engine.pending();
        if p.len() > before {
            return (handle, p.last().unwrap().approval_id.clone());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("the call never reached the approval queue");
}

const WRITE: &str = r#"
const r = await world.slice.write({time: world.time.parse("2020-04-20 09:30"), title: "Windfall", patches: [
  {subjectId: "c-ada", path: "/gold", op: "increment", value: 100},
  {subjectId: "c-ben", type: "character", name: "Ben", path: "/age", op: "replace", value: 40},
]});
return r.sliceId;
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_commits_with_a_preview_of_slices_and_states() {
    let f = fixture();
    f.run(SEED);
    let sid = f
        .engine
        .create_session("world.engine", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let (h, id) = queued(&f.engine, &sid, call(WRITE)).await;
    let pending = f.engine.pending();
    let p = &pending[0];
    assert_eq!(p.tool, "execute_world");
    assert!(
        p.preview.summary.contains("write 1 slice")
            && p.preview.summary.contains("2 subject states change"),
        "{}",
        p.preview.summary
    );
    let PreviewBody::Records { changes } = &p.preview.body else {
        panic!("{:?}", p.preview.body)
    };
    assert!(
        changes[0].record.contains("2020-04-20 09:30") && changes[0].record.contains("Windfall"),
        "{}",
        changes[0].record
    );
    assert_eq!(changes[0].action, "write");
    let patches = changes[0]
        .fields
        .iter()
        .find(|c| c.field == "patches")
        .unwrap();
    assert!(
        patches
            .after
            .to_string()
            .contains("c-ada increment /gold 100"),
        "{}",
        patches.after
    );
    let ada = changes
        .iter()
        .find(|c| c.record.starts_with("subject c-ada"))
        .unwrap();
    assert_eq!(ada.action, "state");
    let gold = ada.fields.iter().find(|c| c.field == "/gold").unwrap();
    assert_eq!(
        (gold.before.clone(), gold.after.clone()),
        (json!(15), json!(115))
    );
    let ben = changes
        .iter()
        .find(|c| c.record.starts_with("subject c-ben"))
        .unwrap();
    assert_eq!(ben.action, "create");
    assert!(ben
        .fields
        .iter()
        .any(|c| c.field == "/age" && c.before == Value::Null && c.after == json!(40)));
    // Nothing is visible before approval.
    assert_eq!(f.counts().1, 3);
    f.engine.decide(&id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(f.counts().1, 4);
    assert_eq!(
        f.run("return (await world.subject.get('c-ada')).gold"),
        json!(115)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_leaves_the_database_byte_identical() {
    let f = fixture();
    f.run(SEED);
    // Reads may store checkpoints; do one so the file is settled before the snapshot.
    f.run("return (await world.subject.get('c-ada')).gold");
    let bytes = std::fs::read(f.db()).unwrap();
    let sid = f
        .engine
        .create_session("world.engine", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let edit = r#"
      const s = (await world.slice.list())[1];
      await world.slice.editPatches(s.id, [], {title: "renamed", time: world.time.parse("2020-04-06")});
      await world.slice.delete((await world.slice.list({limit: 1}))[0].id);
    "#;
    for code in [WRITE, edit] {
        let (h, id) = queued(&f.engine, &sid, call(code)).await;
        f.engine
            .decide(
                &id,
                Decision::Reject {
                    reason: Some("not yet".into()),
                },
            )
            .unwrap();
        let r = h.await.unwrap();
        assert_eq!(r.status, CallStatus::Rejected);
        assert_eq!(
            std::fs::read(f.db()).unwrap(),
            bytes,
            "rejecting changed the database file"
        );
        assert!(!f.db().with_extension("sqlite-journal").exists());
    }
    // A cancelled wait rolls back too.
    let (h, _) = queued(&f.engine, &sid, call(WRITE)).await;
    h.abort();
    let _ = h.await;
    for _ in 0..100 {
        if f.engine.pending().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(std::fs::read(f.db()).unwrap(), bytes);
    assert_eq!(f.run("return (await world.slice.list()).length"), json!(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_scripts_never_wait_and_writer_cannot_write() {
    let f = fixture();
    f.run(SEED);
    let sid = f
        .engine
        .create_session("writer", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let r = f
        .engine
        .call(
            &sid,
            call("return (await world.subject.get('c-ada')).hp"),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(r.content, "70");
    let r = f
        .engine
        .call(
            &sid,
            call("return typeof world.slice.write"),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.content, "undefined");
    // Same for the world keeper when it only reads, in plan mode too.
    let sid = f
        .engine
        .create_session("world.engine", Mode::Plan, "t", None)
        .unwrap()
        .id;
    let r = f
        .engine
        .call(
            &sid,
            call("return world.time.format(world.time.now())"),
            Approval::Fail,
        )
        .await;
    assert_eq!(
        (r.status, r.content.as_str()),
        (CallStatus::Ok, "2020-04-09 00:00")
    );
    // A write without an answer reports needs_approval and changes nothing.
    let r = f.engine.call(&sid, call(WRITE), Approval::Fail).await;
    assert_eq!(r.status, CallStatus::NeedsApproval);
    assert!(r.preview.is_some());
    assert_eq!(f.counts().1, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neurobook_preset_trusts_world_writes_and_locked_refuses() {
    let mut c = Config::default();
    c.approval.preset = Preset::Neurobook;
    let f = fixture_with(c);
    // fixture_with forces supervised; build a second engine with the preset.
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let mut config = Config::default();
    config.approval.preset = Preset::Neurobook;
    let engine =
        Arc::new(Engine::open(ws, config, &f.dirs, nbook::tools::registry().unwrap()).unwrap());
    let sid = engine
        .create_session("world.engine", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let r = engine.call(&sid, call(SEED), Approval::Fail).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let mut config = Config::default();
    config.approval.preset = Preset::Locked;
    let engine =
        Arc::new(Engine::open(ws, config, &f.dirs, nbook::tools::registry().unwrap()).unwrap());
    let sid = engine
        .create_session("world.engine", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let r = engine.call(&sid, call(WRITE), Approval::Fail).await;
    assert_eq!(r.status, CallStatus::Refused);
    assert_eq!(f.counts().1, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_other_writes_go_on_while_a_write_waits() {
    let f = fixture();
    f.run(SEED);
    let sid = f
        .engine
        .create_session("world.engine", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let (h, id) = queued(&f.engine, &sid, call(WRITE)).await;
    // Readers see the committed world, not the held change, and do not wait.
    let reader = f
        .engine
        .create_session("writer", Mode::Normal, "r", None)
        .unwrap()
        .id;
    let r = f
        .engine
        .call(
            &reader,
            call("return (await world.subject.get('c-ada')).gold"),
            Approval::Fail,
        )
        .await;
    assert_eq!((r.status, r.content.as_str()), (CallStatus::Ok, "15"));
    let view = nbook::world::query::WorldView::open(&f.root).unwrap();
    assert_eq!(view.timeline(i64::MIN, i64::MAX, 10).unwrap().len(), 3);
    // No lock is held while the first change waits: a second write stages at once (and,
    // with nobody to answer here, reports that it needs approval, writing nothing).
    let r = f
        .engine
        .call(
            &sid,
            call(WRITE.replace("09:30", "10:30").as_str()),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::NeedsApproval, "{}", r.content);
    assert!(r.preview.is_some());
    f.engine.decide(&id, Decision::Approve).unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Ok);
    assert_eq!(view.timeline(i64::MIN, i64::MAX, 10).unwrap().len(), 4);
}
