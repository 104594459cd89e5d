//! The approval gate end to end on a real project: queue order, each decision, session
//! grants, stale targets, modes and presets, and restart recovery.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use nbook::config::{Config, Dirs, Preset};
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, EngineEvent, LogRecord, Mode, ToolCall,
};
use serde_json::{json, Value};

struct Fixture {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    dirs: Dirs,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    Fixture {
        _tmp: tmp,
        root,
        dirs,
    }
}

fn engine(f: &Fixture, preset: Preset) -> Arc<Engine> {
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let mut config = Config::default();
    config.approval.preset = preset;
    Arc::new(Engine::open(ws, config, &f.dirs, nbook::tools::registry().unwrap()).unwrap())
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: name.into(),
        arguments: args,
    }
}

fn write_call(path: &str, content: &str) -> ToolCall {
    call("write", json!({"path": path, "content": content}))
}

/// Spawn a queued call and wait until it is visible in the queue.
async fn queued(
    engine: &Arc<Engine>,
    sid: &str,
    c: ToolCall,
) -> (tokio::task::JoinHandle<CallResult>, String) {
    let before = engine.pending().len();
    let (e, s) = (engine.clone(), sid.to_string());
    let handle = tokio::spawn(async move { e.call(&s, c, Approval::Queue).await });
    for _ in 0..500 {
        let p = engine.pending();
        if p.len() > before {
            return (handle, p.last().unwrap().approval_id.clone());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("the call never reached the approval queue");
}

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel)).ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_writes_and_the_request_carries_a_diff() {
    let f = fixture();
    let engine = engine(&f, Preset::Supervised);
    let mut events = engine.subscribe();
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let (h, id) = queued(&engine, &sid, write_call("notes/a.md", "hello\n")).await;
    let pending = engine.pending();
    assert_eq!(pending[0].tool, "write");
    assert!(pending[0].session_grant_allowed);
    match &pending[0].preview.body {
        nbook::engine::PreviewBody::Files { changes } => {
            assert!(changes[0].diff.contains("+hello"))
        }
        other => panic!("unexpected preview {other:?}"),
    }
    assert_eq!(
        read(&f.root, "notes/a.md"),
        None,
        "nothing is written before approval"
    );
    engine.decide(&id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(read(&f.root, "notes/a.md").as_deref(), Some("hello\n"));
    // The UI saw the request and the resolution as events.
    let mut saw = (false, false, false);
    while let Ok(ev) = events.try_recv() {
        match ev {
            EngineEvent::ApprovalRequested { .. } => saw.0 = true,
            EngineEvent::ApprovalResolved { .. } => saw.1 = true,
            EngineEvent::FilesChanged { paths, .. } => {
                saw.2 = paths == vec!["notes/a.md".to_string()]
            }
            _ => {}
        }
    }
    assert_eq!(saw, (true, true, true));
    // The log records request, resolution and result.
    let log = engine.session_log(&sid).unwrap();
    let kinds: Vec<&str> = log
        .lines
        .iter()
        .map(|l| match &l.record {
            LogRecord::ApprovalRequested { .. } => "requested",
            LogRecord::ApprovalResolved { .. } => "resolved",
            LogRecord::ToolResult { .. } => "result",
            _ => "other",
        })
        .filter(|k| *k != "other")
        .collect();
    assert_eq!(kinds, vec!["requested", "resolved", "result"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_with_reason_reaches_the_agent_and_changes_nothing() {
    let f = fixture();
    let engine = engine(&f, Preset::Supervised);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let (h, id) = queued(&engine, &sid, write_call("AGENTS.md", "overwritten\n")).await;
    let before = read(&f.root, "AGENTS.md");
    engine
        .decide(
            &id,
            Decision::Reject {
                reason: Some("keep the original".into()),
            },
        )
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Rejected);
    assert!(
        r.content.contains("keep the original") && r.content.contains("Do not retry"),
        "{}",
        r.content
    );
    assert_eq!(read(&f.root, "AGENTS.md"), before);
    assert!(
        engine.decide(&id, Decision::Approve).is_err(),
        "a decided call cannot be decided again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_replaces_arguments_and_invalid_edits_run_nothing() {
    let f = fixture();
    let engine = engine(&f, Preset::Supervised);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let (h, id) = queued(&engine, &sid, write_call("a.md", "draft\n")).await;
    engine
        .decide(
            &id,
            Decision::Edit {
                new_args: json!({"path": "a.md", "content": "better\n"}),
            },
        )
        .unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Ok);
    assert_eq!(read(&f.root, "a.md").as_deref(), Some("better\n"));

    assert!(engine
        .validate_args("write", &json!({"path": "b.md"}))
        .unwrap_err()
        .to_string()
        .contains("content"));
    let (h, id) = queued(&engine, &sid, write_call("b.md", "x\n")).await;
    engine
        .decide(
            &id,
            Decision::Edit {
                new_args: json!({"path": 3}),
            },
        )
        .unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::InvalidArgs);
    assert_eq!(read(&f.root, "b.md"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_for_session_covers_the_same_tool_and_target_only() {
    let f = fixture();
    let engine = engine(&f, Preset::Supervised);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let (h, id) = queued(&engine, &sid, write_call("a.md", "1\n")).await;
    engine.decide(&id, Decision::ApproveForSession).unwrap();
    assert!(h.await.unwrap().ok);
    // Same tool, same path: runs without asking.
    let r = engine
        .call(&sid, write_call("a.md", "2\n"), Approval::Fail)
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(read(&f.root, "a.md").as_deref(), Some("2\n"));
    // Another path, or another session, still asks.
    assert_eq!(
        engine
            .call(&sid, write_call("b.md", "x"), Approval::Fail)
            .await
            .status,
        CallStatus::NeedsApproval
    );
    let other = engine
        .create_session("leader.default", Mode::Normal, "u", None)
        .unwrap()
        .id;
    assert_eq!(
        engine
            .call(&other, write_call("a.md", "x"), Approval::Fail)
            .await
            .status,
        CallStatus::NeedsApproval
    );
    // In discuss mode a grant never applies.
    engine.set_mode(&sid, Mode::Discuss, "author").unwrap();
    assert_eq!(
        engine
            .call(&sid, write_call("a.md", "3\n"), Approval::Fail)
            .await
            .status,
        CallStatus::NeedsApproval
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_changed_after_the_preview_makes_the_call_stale() {
    let f = fixture();
    let engine = engine(&f, Preset::Supervised);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    std::fs::write(f.root.join("c.md"), "one two three\n").unwrap();
    let edit = call(
        "edit",
        json!({"path": "c.md", "edits": [{"oldText": "two", "newText": "2"}]}),
    );
    let (h, id) = queued(&engine, &sid, edit).await;
    std::fs::write(f.root.join("c.md"), "one two three four\n").unwrap();
    engine.decide(&id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Stale, "{}", r.content);
    assert_eq!(
        read(&f.root, "c.md").as_deref(),
        Some("one two three four\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_is_fifo_across_sessions() {
    let f = fixture();
    let engine = engine(&f, Preset::Supervised);
    let s1 = engine
        .create_session("leader.default", Mode::Normal, "one", None)
        .unwrap()
        .id;
    let s2 = engine
        .create_session("writer", Mode::Normal, "two", None)
        .unwrap()
        .id;
    let (h1, _) = queued(&engine, &s1, write_call("1.md", "1")).await;
    let (h2, _) = queued(&engine, &s2, write_call("2.md", "2")).await;
    let (h3, _) = queued(&engine, &s1, write_call("3.md", "3")).await;
    let order: Vec<(String, String)> = engine
        .pending()
        .iter()
        .map(|p| {
            (
                p.session_id.clone(),
                p.args["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        order,
        vec![
            (s1.clone(), "1.md".into()),
            (s2.clone(), "2.md".into()),
            (s1.clone(), "3.md".into())
        ]
    );
    for p in engine.pending() {
        engine.decide(&p.approval_id, Decision::Approve).unwrap();
    }
    for h in [h1, h2, h3] {
        assert!(h.await.unwrap().ok);
    }
    assert!(engine.pending().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modes_and_presets_follow_design() {
    let f = fixture();
    // neurobook: normal runs, plan holds, bash trusted.
    let engine = engine(&f, Preset::Neurobook);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    assert_eq!(
        engine
            .call(&sid, write_call("n.md", "n"), Approval::Fail)
            .await
            .status,
        CallStatus::Ok
    );
    engine.set_mode(&sid, Mode::Plan, "author").unwrap();
    let r = engine
        .call(&sid, write_call("n2.md", "n"), Approval::Fail)
        .await;
    assert_eq!(r.status, CallStatus::NeedsApproval);
    // Plan files are exempt in plan mode.
    assert_eq!(
        engine
            .call(
                &sid,
                write_call(".agent/plan/outline.md", "p"),
                Approval::Fail
            )
            .await
            .status,
        CallStatus::Ok
    );
    assert_eq!(
        engine
            .call(
                &sid,
                call("bash", json!({"command": "true"})),
                Approval::Fail
            )
            .await
            .status,
        CallStatus::Ok
    );
    drop(engine);
    let engine = self::engine(&f, Preset::Locked);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let r = engine
        .call(
            &sid,
            write_call("l.md", "l"),
            Approval::Auto {
                decision: Decision::Approve,
                by: "test",
            },
        )
        .await;
    assert_eq!(r.status, CallStatus::Refused);
    assert!(read(&f.root, "l.md").is_none());
    // Reads are never gated, and a profile's allowlist is enforced before anything else.
    assert_eq!(
        engine
            .call(
                &sid,
                call("read", json!({"path": "AGENTS.md"})),
                Approval::Fail
            )
            .await
            .status,
        CallStatus::Ok
    );
    let r2 = engine
        .create_session("retrieval", Mode::Normal, "r", None)
        .unwrap()
        .id;
    let r = engine
        .call(&r2, write_call("x.md", "x"), Approval::Fail)
        .await;
    assert_eq!(r.status, CallStatus::NotAllowed);
    assert_eq!(r.content, "tool write is not allowed for profile retrieval");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_calls_are_interrupted_at_restart_and_never_run() {
    let f = fixture();
    let sid;
    {
        let engine = engine(&f, Preset::Supervised);
        sid = engine
            .create_session("leader.default", Mode::Normal, "t", None)
            .unwrap()
            .id;
        let (h, _) = queued(&engine, &sid, write_call("later.md", "x")).await;
        // nbook stops while the call waits: the task is dropped without a decision.
        h.abort();
        let _ = h.await;
        // Simulate a crash that left the request unresolved in the log (abort ran no cleanup
        // of the log, which only records requests and decisions).
    }
    let engine = engine(&f, Preset::Supervised);
    let log = engine.session_log(&sid).unwrap();
    let resolved: Vec<&str> = log
        .lines
        .iter()
        .filter_map(|l| match &l.record {
            LogRecord::ApprovalResolved { decision, .. } => Some(decision.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(resolved, vec!["interrupted"]);
    assert!(engine.pending().is_empty());
    assert!(read(&f.root, "later.md").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_patch_previews_every_file_and_applies_all_or_nothing() {
    let f = fixture();
    let engine = engine(&f, Preset::Supervised);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    std::fs::write(f.root.join("old.md"), "alpha\nbeta\n").unwrap();
    let patch = "*** Begin Patch\n*** Add File: new/added.md\n+fresh\n*** Update File: old.md\n*** Move to: moved/old.md\n@@\n alpha\n-beta\n+BETA\n*** End Patch\n";
    let (h, id) = queued(&engine, &sid, call("apply_patch", json!({"patch": patch}))).await;
    match &engine.pending()[0].preview.body {
        nbook::engine::PreviewBody::Files { changes } => {
            assert_eq!(changes.len(), 2);
            assert_eq!(changes[1].move_to.as_deref(), Some("moved/old.md"));
        }
        other => panic!("{other:?}"),
    }
    engine.decide(&id, Decision::Approve).unwrap();
    assert!(h.await.unwrap().ok);
    assert_eq!(read(&f.root, "new/added.md").as_deref(), Some("fresh\n"));
    assert_eq!(
        read(&f.root, "moved/old.md").as_deref(),
        Some("alpha\nBETA\n")
    );
    assert!(read(&f.root, "old.md").is_none());

    // A patch whose second file does not apply fails at preview time; nothing is queued or written.
    let bad = "*** Begin Patch\n*** Add File: z.md\n+z\n*** Update File: missing.md\n@@\n-x\n+y\n*** End Patch\n";
    let r = engine
        .call(
            &sid,
            call("apply_patch", json!({"patch": bad})),
            Approval::Queue,
        )
        .await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(read(&f.root, "z.md").is_none());
    assert!(engine.pending().is_empty());
}

fn call_0(path: &str, content: &str) -> ToolCall {
    ToolCall {
        id: "call_0".into(),
        ..write_call(path, content)
    }
}

/// The approval ids recorded in a session's log, in order.
fn logged_approval_ids(engine: &Engine, sid: &str) -> Vec<(String, String)> {
    engine
        .session_log(sid)
        .unwrap()
        .lines
        .iter()
        .filter_map(|l| match &l.record {
            LogRecord::ApprovalRequested { approval_id, .. } => {
                Some(("requested".into(), approval_id.clone()))
            }
            LogRecord::ApprovalResolved { approval_id, .. } => {
                Some(("resolved".into(), approval_id.clone()))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_providers_reusing_a_call_id_do_not_collide() {
    let f = fixture();
    let engine = engine(&f, Preset::Supervised);
    let a = engine
        .create_session("leader.default", Mode::Normal, "a", None)
        .unwrap()
        .id;
    let b = engine
        .create_session("leader.default", Mode::Normal, "b", None)
        .unwrap()
        .id;
    // Both providers call their first tool call `call_0`.
    let (ha, ap_a) = queued(&engine, &a, call_0("a.md", "from a\n")).await;
    let (hb, ap_b) = queued(&engine, &b, call_0("b.md", "from b\n")).await;
    assert_ne!(ap_a, ap_b, "each approval has its own id");
    let pending = engine.pending();
    assert_eq!(pending.len(), 2);
    assert!(pending.iter().all(|p| p.call_id == "call_0"));
    assert_eq!(pending[0].approval_id, ap_a);
    assert_eq!(pending[0].session_id, a);
    assert_eq!(pending[1].approval_id, ap_b);

    // Rejecting b's call leaves a's waiting, untouched.
    engine
        .decide(&ap_b, Decision::Reject { reason: None })
        .unwrap();
    let rb = hb.await.unwrap();
    assert_eq!(rb.status, CallStatus::Rejected, "{}", rb.content);
    assert!(rb.waited);
    let left = engine.pending();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].approval_id, ap_a);
    assert!(read(&f.root, "b.md").is_none());
    assert!(read(&f.root, "a.md").is_none());

    // The provider id names no approval: only the engine's id decides.
    assert!(engine.decide("call_0", Decision::Approve).is_err());
    engine.decide(&ap_a, Decision::Approve).unwrap();
    let ra = ha.await.unwrap();
    assert_eq!(ra.status, CallStatus::Ok, "{}", ra.content);
    assert!(ra.waited);
    assert_eq!(read(&f.root, "a.md").as_deref(), Some("from a\n"));
    assert!(read(&f.root, "b.md").is_none());

    // Each log keys its approval records by its own approval id.
    let req_res = |ap: &str| {
        vec![
            ("requested".to_string(), ap.to_string()),
            ("resolved".to_string(), ap.to_string()),
        ]
    };
    assert_eq!(logged_approval_ids(&engine, &a), req_res(&ap_a));
    assert_eq!(logged_approval_ids(&engine, &b), req_res(&ap_b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_ids_are_not_reused_after_a_restart() {
    let f = fixture();
    let (sid, first);
    {
        let engine = engine(&f, Preset::Supervised);
        sid = engine
            .create_session("leader.default", Mode::Normal, "t", None)
            .unwrap()
            .id;
        let (h, ap) = queued(&engine, &sid, call_0("one.md", "1\n")).await;
        engine.decide(&ap, Decision::Approve).unwrap();
        assert_eq!(h.await.unwrap().status, CallStatus::Ok);
        // A second request left pending when nbook stops.
        let (h, ap2) = queued(&engine, &sid, call_0("two.md", "2\n")).await;
        assert_ne!(ap, ap2);
        h.abort();
        let _ = h.await;
        first = vec![ap, ap2];
    }
    let engine = engine(&f, Preset::Supervised);
    // Recovery resolves the pending request by its approval id.
    let ids = logged_approval_ids(&engine, &sid);
    assert_eq!(
        ids.last(),
        Some(&("resolved".to_string(), first[1].clone())),
        "{ids:?}"
    );
    let (h, ap3) = queued(&engine, &sid, call_0("three.md", "3\n")).await;
    assert!(
        !first.contains(&ap3),
        "{ap3} was minted before the restart too: {first:?}"
    );
    engine.decide(&ap3, Decision::Approve).unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Ok);
    assert!(read(&f.root, "two.md").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_of_two_sessions_reusing_a_call_id_do_not_collide() {
    use nbook::engine::inputs::Answer;
    let f = fixture();
    let engine = engine(&f, Preset::Supervised);
    let ask = |sid: &str, q: &str| {
        let (e, s) = (engine.clone(), sid.to_string());
        let c = ToolCall {
            id: "call_0".into(),
            ..call(
                "request_user_input",
                json!({"questions": [{"question": q}]}),
            )
        };
        tokio::spawn(async move { e.call(&s, c, Approval::Queue).await })
    };
    let mut sessions = Vec::new();
    for title in ["a", "b"] {
        let id = engine
            .create_session("leader.default", Mode::Normal, title, None)
            .unwrap()
            .id;
        sessions.push(id);
    }
    let ha = ask(&sessions[0], "Tone for a?");
    let hb = ask(&sessions[1], "Tone for b?");
    let mut waiting = Vec::new();
    for _ in 0..2500 {
        waiting = engine.pending_inputs();
        if waiting.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(waiting.len(), 2, "both questions wait: {waiting:?}");
    assert_ne!(waiting[0].id, waiting[1].id, "each question has its own id");
    let of = |sid: &str| {
        waiting
            .iter()
            .find(|q| q.session_id == sid)
            .map(|q| q.id.clone())
            .unwrap()
    };
    let answer = |text: &str| {
        vec![Answer {
            question_index: 0,
            text: text.into(),
            ..Default::default()
        }]
    };
    // Answering b's question wakes b only; a's stays on screen.
    engine
        .answer_input(&of(&sessions[1]), answer("bleak"))
        .unwrap();
    let rb = hb.await.unwrap();
    assert!(rb.ok, "{}", rb.content);
    assert!(rb.content.contains("bleak"), "{}", rb.content);
    let left = engine.pending_inputs();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].session_id, sessions[0]);
    engine
        .answer_input(&of(&sessions[0]), answer("warm"))
        .unwrap();
    let ra = ha.await.unwrap();
    assert!(ra.content.contains("warm"), "{}", ra.content);
}

/// The profile files are the allowlists: after one is edited, the engine reloads it once and
/// every session enforces what the file now says (a tool taken out is refused, one added is
/// allowed); a removed profile file falls back to the built-in, and nothing changes without
/// a change on disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_profile_is_enforced_without_a_restart() {
    let f = fixture();
    let dir = f.root.join(".nbook/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    let profile = |tools: &str| {
        format!("key = \"narrow\"\nname = \"Narrow\"\ndescription = \"d\"\ncreation = \"system_only\"\nworld_access = \"none\"\ntools = [{tools}]\n")
    };
    std::fs::write(dir.join("narrow.toml"), profile("\"read\"")).unwrap();
    let engine = engine(&f, Preset::Supervised);
    assert!(!engine.reload_profiles_if_changed(), "nothing changed yet");
    let sid = engine
        .create_session("narrow", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let tree = || call("get_story_tree", json!({}));
    let read = || call("read", json!({"path": "AGENTS.md"}));
    let r = engine.call(&sid, tree(), Approval::Fail).await;
    assert_eq!(r.status, CallStatus::NotAllowed, "{}", r.content);
    // Widen it: the same session may now call the tool.
    std::fs::write(
        dir.join("narrow.toml"),
        profile("\"read\", \"get_story_tree\""),
    )
    .unwrap();
    assert!(engine.reload_profiles_if_changed());
    assert!(!engine.reload_profiles_if_changed(), "reloaded once");
    let r = engine.call(&sid, tree(), Approval::Fail).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    // Narrow it again: refused from the next call on.
    std::fs::write(dir.join("narrow.toml"), profile("\"get_story_tree\"")).unwrap();
    assert!(engine.reload_profiles_if_changed());
    let r = engine.call(&sid, read(), Approval::Fail).await;
    assert_eq!(r.status, CallStatus::NotAllowed, "{}", r.content);
    // The file is removed and no built-in has that key: the session may call nothing.
    std::fs::remove_file(dir.join("narrow.toml")).unwrap();
    assert!(engine.reload_profiles_if_changed());
    assert!(engine.profiles().get("narrow").is_none());
    let r = engine.call(&sid, tree(), Approval::Fail).await;
    assert_eq!(r.status, CallStatus::NotAllowed, "{}", r.content);
}
