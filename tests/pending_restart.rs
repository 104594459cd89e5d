//! Pending approvals survive a restart: a call waiting for the author is kept on disk
//! (`.nbook/agent/pending/`), a new engine over the same project puts it back in the queue
//! after a stale check, and deciding it runs it, records it, and resumes its session's run —
//! through the real agent host and a scripted OpenAI-compatible HTTP server. Corrupt queue
//! files and calls of outside clients that are gone are reported, never approved.

mod provider_support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nbook::agent::host::{config_providers, Host};
use nbook::config::{Config, Dirs, Preset};
use nbook::engine::agents::{InvokeMode, InvokeRequest};
use nbook::engine::{
    Approval, CallResult, Decision, Engine, LogRecord, Mode, SessionState, ToolCall,
};
use provider_support::{Reply, Server};
use serde_json::{json, Value};

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
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

fn open_with(f: &Fixture, config: Config) -> Arc<Engine> {
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    Arc::new(Engine::open(ws, config, &f.dirs, nbook::tools::registry().unwrap()).unwrap())
}

fn open(f: &Fixture) -> Arc<Engine> {
    let mut config = Config::default();
    config.approval.preset = Preset::Supervised;
    open_with(f, config)
}

/// A new leader session: the one whose calls the tests queue.
fn session(engine: &Engine) -> String {
    engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id
}

fn pending_dir(root: &Path) -> PathBuf {
    root.join(".nbook/agent/pending")
}

fn pending_files(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(pending_dir(root))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn write_call(id: &str, path: &str, content: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "write".into(),
        arguments: json!({"path": path, "content": content}),
    }
}

/// Spawn a queued call and wait until it is in the queue; returns its task and approval id.
async fn queued(
    engine: &Arc<Engine>,
    sid: &str,
    c: ToolCall,
) -> (tokio::task::JoinHandle<CallResult>, String) {
    let (e, s) = (engine.clone(), sid.to_string());
    let handle = tokio::spawn(async move { e.call(&s, c, Approval::Queue).await });
    for _ in 0..1000 {
        if let Some(p) = engine.pending().last() {
            return (handle, p.approval_id.clone());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("the call never reached the approval queue");
}

/// nbook quits while the call waits: the queue is closed, the run's task dropped.
async fn quit(engine: Arc<Engine>, task: tokio::task::JoinHandle<CallResult>) {
    engine.close_queue();
    task.abort();
    let _ = task.await;
    drop(engine);
}

fn records(engine: &Engine, sid: &str) -> Vec<LogRecord> {
    engine
        .session_log(sid)
        .unwrap()
        .lines
        .into_iter()
        .map(|l| l.record)
        .collect()
}

fn decisions(engine: &Engine, sid: &str) -> Vec<(String, String)> {
    records(engine, sid)
        .into_iter()
        .filter_map(|r| match r {
            LogRecord::ApprovalResolved { decision, by, .. } => Some((decision, by)),
            _ => None,
        })
        .collect()
}

fn result_of(engine: &Engine, sid: &str, call_id: &str) -> Option<(bool, String)> {
    records(engine, sid).into_iter().find_map(|r| match r {
        LogRecord::ToolResult {
            call_id: c,
            ok,
            content,
            ..
        } if c == call_id => Some((ok, content)),
        _ => None,
    })
}

/// Serve the restored calls; the receiver yields each session whose calls are all decided.
fn serve(engine: &Arc<Engine>) -> tokio::sync::mpsc::UnboundedReceiver<String> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    engine.serve_restored(Arc::new(move |sid: &str| {
        let _ = tx.send(sid.to_string());
    }));
    rx
}

async fn resolved(rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("the restored call was never resolved")
        .expect("the engine went away")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_call_is_kept_on_disk_and_approving_it_after_a_restart_runs_it() {
    let f = fixture();
    let engine = open(&f);
    let sid = session(&engine);
    let (task, ap) = queued(&engine, &sid, write_call("c1", "later.md", "kept\n")).await;
    assert_eq!(pending_files(&f.root), vec![format!("{ap}.json")]);
    let before = engine.pending()[0].clone();
    quit(engine, task).await;

    let engine = open(&f);
    // Still waiting, as it was: same id, tool, arguments and preview; not interrupted.
    let pending = engine.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0], before);
    assert!(decisions(&engine, &sid).is_empty(), "recorded as decided");
    assert_eq!(
        engine.session(&sid).unwrap().state,
        SessionState::WaitingApproval
    );
    let mut done = serve(&engine);
    assert_eq!(engine.restored_calls()[&ap].stale, None);

    engine.decide(&ap, Decision::Approve).unwrap();
    assert_eq!(resolved(&mut done).await, sid);
    assert_eq!(
        std::fs::read_to_string(f.root.join("later.md")).unwrap(),
        "kept\n"
    );
    assert_eq!(
        decisions(&engine, &sid),
        vec![("approve".to_string(), "author".to_string())]
    );
    let (ok, content) = result_of(&engine, &sid, "c1").expect("no result recorded");
    assert!(ok, "{content}");
    assert!(engine.pending().is_empty());
    assert!(pending_files(&f.root).is_empty());
    assert_eq!(engine.session(&sid).unwrap().state, SessionState::Idle);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejecting_a_restored_call_records_the_reason_and_changes_nothing() {
    let f = fixture();
    let engine = open(&f);
    let sid = session(&engine);
    let (task, ap) = queued(&engine, &sid, write_call("c1", "no.md", "x\n")).await;
    quit(engine, task).await;

    let engine = open(&f);
    let mut done = serve(&engine);
    engine
        .decide(
            &ap,
            Decision::Reject {
                reason: Some("not this chapter".into()),
            },
        )
        .unwrap();
    resolved(&mut done).await;
    assert!(!f.root.join("no.md").exists());
    let (ok, content) = result_of(&engine, &sid, "c1").unwrap();
    assert!(!ok);
    assert!(content.contains("not this chapter"), "{content}");
    assert_eq!(decisions(&engine, &sid)[0].0, "reject");
    assert!(pending_files(&f.root).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_target_changed_while_nbook_was_closed_is_stale_and_never_approved_blindly() {
    let f = fixture();
    std::fs::write(f.root.join("ch.md"), "The first line.\n").unwrap();
    let engine = open(&f);
    let sid = session(&engine);
    let (task, ap) = queued(
        &engine,
        &sid,
        write_call("c1", "ch.md", "The agent's line.\n"),
    )
    .await;
    quit(engine, task).await;
    // The author edits the file while nbook is closed.
    std::fs::write(f.root.join("ch.md"), "The author's line.\n").unwrap();

    let engine = open(&f);
    let mut done = serve(&engine);
    let stale = engine.restored_calls()[&ap].stale.clone();
    assert!(
        stale.as_deref().is_some_and(|s| s.contains("ch.md")),
        "{stale:?}"
    );
    // Approving what the old preview showed is refused as stale; the author's text stays.
    engine.decide(&ap, Decision::Approve).unwrap();
    resolved(&mut done).await;
    assert_eq!(
        std::fs::read_to_string(f.root.join("ch.md")).unwrap(),
        "The author's line.\n"
    );
    let (ok, content) = result_of(&engine, &sid, "c1").unwrap();
    assert!(!ok);
    assert!(content.starts_with("stale:"), "{content}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_restored_call_previewed_anew_applies_what_the_new_preview_shows() {
    let f = fixture();
    std::fs::write(f.root.join("ch.md"), "One.\n").unwrap();
    let engine = open(&f);
    let sid = session(&engine);
    let (task, ap) = queued(&engine, &sid, write_call("c1", "ch.md", "Three.\n")).await;
    quit(engine, task).await;
    std::fs::write(f.root.join("ch.md"), "Two.\n").unwrap();

    let engine = open(&f);
    let mut done = serve(&engine);
    assert!(engine.restored_calls()[&ap].stale.is_some());
    let fresh = engine.repreview(&ap).unwrap();
    assert_eq!(engine.restored_calls()[&ap].stale, None);
    let shown = serde_json::to_string(&fresh.preview.body).unwrap();
    assert!(
        shown.contains("-Two."),
        "the new preview diffs the file as it is: {shown}"
    );
    assert_eq!(engine.pending()[0].preview, fresh.preview);
    // The new preview is what is kept on disk too.
    let stored: Value = serde_json::from_slice(
        &std::fs::read(pending_dir(&f.root).join(format!("{ap}.json"))).unwrap(),
    )
    .unwrap();
    assert!(stored["call"]["preview"].to_string().contains("-Two."));
    engine.decide(&ap, Decision::Approve).unwrap();
    resolved(&mut done).await;
    assert_eq!(
        std::fs::read_to_string(f.root.join("ch.md")).unwrap(),
        "Three.\n"
    );
    assert!(result_of(&engine, &sid, "c1").unwrap().0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_or_torn_queue_files_are_reported_and_skipped_never_approved() {
    let f = fixture();
    let engine = open(&f);
    let sid = session(&engine);
    let (task, ap) = queued(&engine, &sid, write_call("c1", "torn.md", "x\n")).await;
    quit(engine, task).await;
    let dir = pending_dir(&f.root);
    let good = std::fs::read_to_string(dir.join(format!("{ap}.json"))).unwrap();
    // The real entry torn half way, plus garbage and an entry named for another id.
    std::fs::write(dir.join(format!("{ap}.json")), &good[..good.len() / 2]).unwrap();
    std::fs::write(dir.join("ap-77.json"), b"\x00\xffnot json").unwrap();
    std::fs::write(dir.join("ap-78.json"), good.as_bytes()).unwrap();
    // A write that never finished leaves a temp file: removed, never read.
    std::fs::write(dir.join(".ap-79.json.0123.tmp"), good.as_bytes()).unwrap();
    // A whole entry whose session id would name a file outside the sessions folder.
    let mut escaping: Value = serde_json::from_str(&good).unwrap();
    escaping["call"]["approval_id"] = json!("ap-80");
    escaping["call"]["session_id"] = json!("../../config");
    std::fs::write(dir.join("ap-80.json"), escaping.to_string()).unwrap();

    let engine = open(&f);
    assert!(engine.pending().is_empty(), "{:?}", engine.pending());
    let notes = engine.restore_notes();
    assert_eq!(notes.len(), 4, "{notes:?}");
    assert!(notes
        .iter()
        .any(|n| n.contains("ap-80") && n.contains("has no log")));
    assert!(!dir.join("ap-80.json").exists());
    assert!(notes
        .iter()
        .any(|n| n.contains(&format!("{ap}.json")) && n.contains("not a whole pending call")));
    assert!(notes
        .iter()
        .any(|n| n.contains("does not match the file name")));
    assert!(notes
        .iter()
        .filter(|n| !n.contains("ap-80"))
        .all(|n| n.contains("not approved")));
    // Kept aside for the author, and reported once.
    let files = pending_files(&f.root);
    assert!(files.iter().all(|n| n.ends_with(".corrupt")), "{files:?}");
    // The log says the call did not run; nothing was written.
    assert_eq!(decisions(&engine, &sid)[0].0, "interrupted");
    assert!(!f.root.join("torn.md").exists());
    drop(engine);
    assert!(open(&f).restore_notes().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_of_an_outside_client_that_is_gone_are_dropped_with_a_note() {
    let f = fixture();
    let engine = open(&f);
    let sid = engine
        .create_client_session("leader.default", "claude-code")
        .unwrap()
        .id;
    let (task, _) = queued(&engine, &sid, write_call("c1", "mcp.md", "x\n")).await;
    quit(engine, task).await;

    let engine = open(&f);
    assert!(engine.pending().is_empty());
    let notes = engine.restore_notes();
    assert!(
        notes.len() == 1 && notes[0].contains("outside client claude-code"),
        "{notes:?}"
    );
    assert_eq!(decisions(&engine, &sid)[0].0, "interrupted");
    assert!(pending_files(&f.root).is_empty());
    assert!(!f.root.join("mcp.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_takes_its_call_off_disk_and_a_guest_leaves_the_queue_alone() {
    let f = fixture();
    let engine = open(&f);
    let sid = session(&engine);
    // Cancelled by the author (not by nbook quitting): gone for good.
    let (task, _) = queued(&engine, &sid, write_call("c1", "a.md", "x\n")).await;
    task.abort();
    let _ = task.await;
    assert!(pending_files(&f.root).is_empty());
    let (task, ap) = queued(&engine, &sid, write_call("c2", "b.md", "x\n")).await;
    quit(engine, task).await;

    // A guest (`nbook mcp`) neither restores nor interrupts the stored call.
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let guest = Engine::open_guest(
        ws,
        Config::default(),
        &f.dirs,
        nbook::tools::registry().unwrap(),
    )
    .unwrap();
    assert!(guest.pending().is_empty());
    drop(guest);
    assert_eq!(pending_files(&f.root), vec![format!("{ap}.json")]);
    // An engine that does not serve restored calls refuses to take a decision it cannot
    // carry out, and the call keeps waiting.
    let engine = open(&f);
    assert!(engine.decide(&ap, Decision::Approve).is_err());
    assert_eq!(engine.pending().len(), 1);
    assert_eq!(pending_files(&f.root), vec![format!("{ap}.json")]);
}

// ---- the agent session through the real host and a scripted OpenAI-compatible server ----

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

fn model_config(base_url: Option<&str>) -> Config {
    let mut text = String::from("[approval]\npreset = \"supervised\"\n");
    if let Some(url) = base_url {
        text.push_str(&format!(
            "[providers.p]\nkind = \"openai\"\nbase_url = \"{url}\"\n\
             [models.m]\nprovider = \"p\"\nname = \"test-model\"\n\
             [defaults]\nmodel = \"m\"\n"
        ));
    }
    Config::parse(&text, "test").unwrap()
}

async fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    for _ in 0..2500 {
        if ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(4)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_run_waits_across_a_restart_and_continues_with_the_result() {
    let write_args = json!({"path": "notes/keeper.md", "content": "Ilse keeps the light.\n"});
    let server = Server::start(vec![
        Reply::data(&[
            chunk(
                json!({"role": "assistant", "content": "Writing the note."}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_w1", "type": "function",
                "function": {"name": "write", "arguments": write_args.to_string()}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 1, "id": "call_r2", "type": "function",
                "function": {"name": "read", "arguments": "{\"path\":\"notes/keeper.md\"}"}}]}),
                None,
            ),
            chunk(json!({}), Some("tool_calls")),
            "[DONE]".into(),
        ]),
        Reply::data(&[
            chunk(json!({"content": "The note is written."}), None),
            chunk(json!({}), Some("stop")),
            "[DONE]".into(),
        ]),
    ])
    .await;
    let f = fixture();
    let config = model_config(Some(&server.base_url()));
    let engine = open_with(&f, config.clone());
    let host = Host::attach(
        engine.clone(),
        config_providers(engine.live_config().clone()),
        Approval::Queue,
    );
    let sid = engine
        .create_session("leader.default", Mode::Normal, "keeper", None)
        .unwrap()
        .id;
    let run = host
        .submit(InvokeRequest {
            caller: None,
            session_id: sid.clone(),
            message: Some("Write a note on the keeper.".into()),
            input: None,
            mode: InvokeMode::Prompt,
            model: None,
            origin_call_id: None,
        })
        .unwrap();
    wait_for("the write to wait", || engine.pending().len() == 1).await;
    let ap = engine.pending()[0].approval_id.clone();
    assert_eq!(server.requests().len(), 1);

    // nbook quits: the queue is closed, the host cancels the run, everything is dropped.
    engine.close_queue();
    host.cancel(&sid);
    let _ = tokio::time::timeout(Duration::from_secs(5), run).await;
    drop(host);
    drop(engine);
    wait_for("the old engine to let go of the queue", || {
        let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
        Engine::open(
            ws,
            config.clone(),
            &f.dirs,
            nbook::tools::registry().unwrap(),
        )
        .map(|e| e.owns_queue())
        .unwrap_or(false)
    })
    .await;

    let engine = open_with(&f, config);
    let host = Host::attach(
        engine.clone(),
        config_providers(engine.live_config().clone()),
        Approval::Queue,
    );
    assert_eq!(engine.pending().len(), 1);
    assert_eq!(engine.pending()[0].approval_id, ap);
    engine.decide(&ap, Decision::Approve).unwrap();
    wait_for("the resumed run to finish", || {
        records(&engine, &sid)
            .iter()
            .any(|r| matches!(r, LogRecord::Lifecycle { status, .. } if status == "end"))
            && !host.is_running(&sid)
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(f.root.join("notes/keeper.md")).unwrap(),
        "Ilse keeps the light.\n"
    );
    // The model's next request carries the write's result and the skipped read, in order.
    let reqs = server.requests();
    assert_eq!(
        reqs.len(),
        2,
        "{:?}",
        reqs.iter().map(|r| &r.body).collect::<Vec<_>>()
    );
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let tool_msgs: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_msgs.len(), 2, "{msgs:?}");
    assert_eq!(tool_msgs[0]["tool_call_id"], "call_w1");
    let written = tool_msgs[0]["content"].as_str().unwrap();
    assert!(
        !written.contains("interrupted") && !written.contains("skipped"),
        "{written}"
    );
    assert!(written.contains("notes/keeper.md"), "{written}");
    assert_eq!(tool_msgs[1]["tool_call_id"], "call_r2");
    let skipped = tool_msgs[1]["content"].as_str().unwrap();
    assert!(
        skipped.contains("skipped: write was waiting for the author"),
        "{skipped}"
    );
    let last = records(&engine, &sid);
    assert!(last
        .iter()
        .any(|r| matches!(r, LogRecord::Assistant { text, .. } if text == "The note is written.")));
    assert_eq!(engine.session(&sid).unwrap().state, SessionState::Idle);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_the_result_is_recorded_and_the_session_says_it_waits_for_one() {
    let f = fixture();
    let engine = open_with(&f, model_config(None));
    let sid = session(&engine);
    let (task, ap) = queued(&engine, &sid, write_call("c1", "m.md", "x\n")).await;
    quit(engine, task).await;

    let engine = open_with(&f, model_config(None));
    let host = Host::attach(
        engine.clone(),
        config_providers(engine.live_config().clone()),
        Approval::Queue,
    );
    engine.decide(&ap, Decision::Approve).unwrap();
    let said = Arc::new(Mutex::new(None));
    wait_for("the session to say it waits for a model", || {
        let found = records(&engine, &sid).into_iter().find_map(|r| match r {
            LogRecord::Lifecycle {
                status,
                message: Some(m),
            } if status == "waiting" => Some(m),
            _ => None,
        });
        *said.lock().unwrap() = found.clone();
        found.is_some()
    })
    .await;
    let said = said.lock().unwrap().clone().unwrap();
    assert!(said.contains("waits for a model"), "{said}");
    assert!(result_of(&engine, &sid, "c1").unwrap().0);
    assert!(f.root.join("m.md").exists());
    assert!(!host.is_running(&sid));
    assert_ne!(engine.session(&sid).unwrap().state, SessionState::Failed);
}

// ---- a staging tool (execute_sql): staged anew after the restart, committed or refused ----

fn sql_call(id: &str, sql: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "execute_sql".into(),
        arguments: json!({ "sql": sql }),
    }
}

fn titles(root: &Path) -> Vec<String> {
    let c = nbook::store::open(&root.join(".nbook/project.sqlite")).unwrap();
    let mut s = c.prepare("SELECT title FROM Story ORDER BY id").unwrap();
    let v = s
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    v
}

fn set_title(root: &Path, from: &str, to: &str) {
    let c = nbook::store::open(&root.join(".nbook/project.sqlite")).unwrap();
    c.execute("UPDATE Story SET title = ?2 WHERE title = ?1", [from, to])
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_sql_write_commits_when_its_rows_are_unchanged_and_is_refused_when_not() {
    let f = fixture();
    {
        let c = nbook::store::open(&f.root.join(".nbook/project.sqlite")).unwrap();
        for t in ["Tale 1", "Tale 2"] {
            c.execute(
                "INSERT INTO Story (title, summary) VALUES (?1, 'seed')",
                [t],
            )
            .unwrap();
        }
    }
    let engine = open(&f);
    let sid = session(&engine);
    let (task, ap1) = queued(
        &engine,
        &sid,
        sql_call(
            "s1",
            "UPDATE Story SET title = title || '!' WHERE title = 'Tale 1'",
        ),
    )
    .await;
    quit(engine, task).await;
    let engine = open(&f);
    let mut done = serve(&engine);
    assert_eq!(engine.restored_calls()[&ap1].stale, None);
    engine.decide(&ap1, Decision::Approve).unwrap();
    resolved(&mut done).await;
    assert_eq!(titles(&f.root), ["Tale 1!", "Tale 2"]);
    assert!(result_of(&engine, &sid, "s1").unwrap().0);

    let (task, ap2) = queued(
        &engine,
        &sid,
        sql_call(
            "s2",
            "UPDATE Story SET title = title || '?' WHERE title LIKE 'Tale 2%'",
        ),
    )
    .await;
    quit(engine, task).await;
    // Another program (NeuroBook) changes the row while nbook is closed.
    set_title(&f.root, "Tale 2", "Tale 2 (revised)");
    let engine = open(&f);
    let mut done = serve(&engine);
    assert!(engine.restored_calls()[&ap2].stale.is_some());
    engine.decide(&ap2, Decision::Approve).unwrap();
    resolved(&mut done).await;
    assert_eq!(titles(&f.root), ["Tale 1!", "Tale 2 (revised)"]);
    let (ok, content) = result_of(&engine, &sid, "s2").unwrap();
    assert!(!ok && content.starts_with("stale:"), "{content}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_commands_that_open_the_project_leave_the_stored_call_waiting() {
    let f = fixture();
    std::fs::write(f.root.join("a.md"), "text\n").unwrap();
    let engine = open(&f);
    let sid = session(&engine);
    let (task, ap) = queued(&engine, &sid, write_call("c1", "kept.md", "x\n")).await;
    quit(engine, task).await;

    let bin = env!("CARGO_BIN_EXE_nbook");
    let home = f.dirs.config.clone();
    let run = |code: i32, args: &[&str]| {
        let out = std::process::Command::new(bin)
            .args(args)
            .env("NBOOK_HOME", &home)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let root = f.root.to_str().unwrap();
    // Each of these owns the queue while it runs (no TUI is open).
    run(
        0,
        &[
            "call",
            "read",
            "--project",
            root,
            "--args",
            r#"{"path": "a.md"}"#,
        ],
    );
    run(0, &["sessions", "--project", root, "--json"]);
    // A rejected headless call exits 1 (a tool error), as the CLI contract says.
    run(
        1,
        &[
            "call",
            "write",
            "--project",
            root,
            "--reject",
            "--args",
            r#"{"path": "b.md", "content": "y"}"#,
        ],
    );

    let engine = open(&f);
    assert_eq!(engine.pending().len(), 1);
    assert_eq!(engine.pending()[0].approval_id, ap);
    assert!(decisions(&engine, &sid).is_empty());
    assert!(!f.root.join("kept.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_serving_restored_calls_can_still_be_closed_and_reopened() {
    let f = fixture();
    let engine = open(&f);
    let sid = session(&engine);
    let (task, ap) = queued(&engine, &sid, write_call("c1", "twice.md", "x\n")).await;
    quit(engine, task).await;
    // Served but never decided, then closed: the next engine owns the queue and the call
    // still waits there.
    let engine = open(&f);
    let _done = serve(&engine);
    let weak = Arc::downgrade(&engine);
    drop(engine);
    assert!(
        weak.upgrade().is_none(),
        "a restored call kept the engine alive"
    );
    let engine = open(&f);
    assert!(engine.owns_queue());
    assert_eq!(engine.pending()[0].approval_id, ap);
}

/// A one-page HTTP server on 127.0.0.1 that counts the requests it answered.
fn page_server() -> (u16, Arc<Mutex<usize>>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(Mutex::new(0));
    let seen = hits.clone();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            *seen.lock().unwrap() += 1;
            let body = "salt roads";
            let _ = s.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    (port, hits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_fetch_sends_nothing_until_approved_after_the_restart() {
    let (port, hits) = page_server();
    let f = fixture();
    let config = || {
        let mut c = Config {
            web: nbook::config::WebConfig {
                allow_hosts: vec!["127.0.0.1".into()],
                ..Default::default()
            },
            ..Config::default()
        };
        c.approval.preset = Preset::Supervised;
        c
    };
    let engine = open_with(&f, config());
    let sid = engine
        .create_session("researcher", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let fetch = ToolCall {
        id: "f1".into(),
        name: "web_fetch".into(),
        arguments: json!({"url": format!("http://127.0.0.1:{port}/page")}),
    };
    let (task, ap) = queued(&engine, &sid, fetch).await;
    quit(engine, task).await;

    let engine = open_with(&f, config());
    let mut done = serve(&engine);
    assert_eq!(engine.restored_calls()[&ap].stale, None);
    assert_eq!(*hits.lock().unwrap(), 0, "sent before the author approved");
    engine.decide(&ap, Decision::Approve).unwrap();
    resolved(&mut done).await;
    assert_eq!(*hits.lock().unwrap(), 1);
    let (ok, content) = result_of(&engine, &sid, "f1").unwrap();
    assert!(ok && content.contains("salt roads"), "{content}");
}
