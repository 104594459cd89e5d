//! `nbook mcp`'s backend attached to a TUI-side engine in one process (the real socket, the
//! real engines, no terminal): pending approval then the decision collected once, edits,
//! rejection, stale targets, the TUI quitting, the client going away or cancelling, no TUI
//! at all, a second TUI, a stale socket file and malformed attach lines. Each bad case
//! changes nothing on disk.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use nbook::config::{Config, Dirs, Preset};
use nbook::engine::{CallStatus, Decision, Engine};
use nbook::mcp::backend::{Backend, BackendOptions};
use nbook::mcp::gateway::Progress;
use nbook::mcp::listen;
use nbook::mcp::outcome::Outcome;
use serde_json::json;
use tokio_util::sync::CancellationToken;

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

fn config(preset: Preset) -> Config {
    let mut c = Config::default();
    c.approval.preset = preset;
    c
}

/// The author's nbook: owns the queue.
fn tui_engine(f: &Fixture) -> Arc<Engine> {
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let e = Engine::open(
        ws,
        config(Preset::Supervised),
        &f.dirs,
        nbook::tools::registry().unwrap(),
    )
    .unwrap();
    assert!(e.owns_queue());
    Arc::new(e)
}

/// `nbook mcp`'s own engine and backend.
fn backend(f: &Fixture, preset: Preset, wait_ms: u64, tui_only: bool) -> Backend {
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let e = Engine::open_guest(
        ws,
        config(preset),
        &f.dirs,
        nbook::tools::registry().unwrap(),
    )
    .unwrap();
    assert!(!e.owns_queue(), "nbook mcp must never own the queue");
    let b = Backend::new(
        Arc::new(e),
        BackendOptions {
            profile: "mcp.default".into(),
            wait: Duration::from_millis(wait_ms),
            approve_from_tui_only: tui_only,
        },
    );
    b.set_client("test-client");
    b
}

fn quiet(_: Progress) {}

async fn call(b: &Backend, tool: &str, args: serde_json::Value) -> Outcome {
    let wait = b.options().wait;
    b.call(tool, args, wait, CancellationToken::new(), &quiet)
        .await
}

async fn await_ap(b: &Backend, id: &str, ms: u64) -> Outcome {
    b.await_approval(
        id,
        Duration::from_millis(ms),
        CancellationToken::new(),
        &quiet,
    )
    .await
}

fn pending_id(o: &Outcome) -> String {
    match o {
        Outcome::PendingApproval(p) => p.approval_id.clone(),
        other => panic!("expected pending_approval, got {other:?}"),
    }
}

fn write_args(content: &str) -> serde_json::Value {
    json!({"path": "notes/mcp.md", "content": content})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_then_approved_result_is_returned_exactly_once() {
    let f = fixture();
    let tui = tui_engine(&f);
    let _server = listen::serve(tui.clone()).await.unwrap().expect("listens");
    let b = backend(&f, Preset::Supervised, 200, true);
    // A read returns at once, in the TUI's engine.
    match call(&b, "read", json!({"path": "AGENTS.md"})).await {
        Outcome::Done { result, .. } => assert!(result.ok, "{}", result.content),
        other => panic!("{other:?}"),
    }
    let o = call(&b, "write", write_args("one\n")).await;
    let id = pending_id(&o);
    if let Outcome::PendingApproval(p) = &o {
        assert_eq!(p.preview_hash.len(), 64);
        assert!(p.preview.contains("notes/mcp.md"), "{}", p.preview);
    }
    // It waits in the author's queue, in the client's session, after the bound passed.
    let queue = tui.pending();
    assert_eq!(queue.len(), 1);
    assert_eq!(queue[0].approval_id, id);
    let session = tui.session(&queue[0].session_id).unwrap();
    assert_eq!(session.client.as_deref(), Some("test-client"));
    assert_eq!(session.title, "test-client");
    assert_eq!(session.profile, "mcp.default");
    assert!(!f.root.join("notes/mcp.md").exists());
    // Not decided yet: the await says pending again.
    assert!(matches!(
        await_ap(&b, &id, 100).await,
        Outcome::PendingApproval(_)
    ));
    tui.decide(&id, Decision::Approve).unwrap();
    match await_ap(&b, &id, 5000).await {
        Outcome::Done { result, resolved } => {
            assert!(result.ok, "{}", result.content);
            assert_eq!(resolved.unwrap().decision, "approve");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(f.root.join("notes/mcp.md")).unwrap(),
        "one\n"
    );
    // Exactly once.
    assert!(matches!(
        await_ap(&b, &id, 100).await,
        Outcome::Unknown { .. }
    ));
    // The session's transcript has the client's calls.
    let log = tui.session_log(&session.id).unwrap();
    let calls = log
        .lines
        .iter()
        .filter(|l| matches!(&l.record, nbook::engine::LogRecord::ToolCall { by, .. } if by == "mcp:test-client"))
        .count();
    assert_eq!(calls, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_approval_returns_what_was_applied() {
    let f = fixture();
    let tui = tui_engine(&f);
    let _server = listen::serve(tui.clone()).await.unwrap().unwrap();
    let b = backend(&f, Preset::Supervised, 100, true);
    let id = pending_id(&call(&b, "write", write_args("client text\n")).await);
    let edited = write_args("the author's text\n");
    tui.decide(
        &id,
        Decision::Edit {
            new_args: edited.clone(),
        },
    )
    .unwrap();
    let o = await_ap(&b, &id, 5000).await;
    let v = nbook::mcp::outcome_json(&o);
    assert_eq!(v["outcome"], "applied_with_edits", "{v}");
    assert_eq!(v["appliedArgs"], edited);
    assert_eq!(
        std::fs::read_to_string(f.root.join("notes/mcp.md")).unwrap(),
        "the author's text\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_is_an_error_result_with_the_reason_and_changes_nothing() {
    let f = fixture();
    let tui = tui_engine(&f);
    let _server = listen::serve(tui.clone()).await.unwrap().unwrap();
    let b = backend(&f, Preset::Supervised, 100, true);
    let id = pending_id(&call(&b, "write", write_args("x\n")).await);
    tui.decide(
        &id,
        Decision::Reject {
            reason: Some("wrong chapter".into()),
        },
    )
    .unwrap();
    let o = await_ap(&b, &id, 5000).await;
    let v = nbook::mcp::outcome_json(&o);
    assert_eq!(v["outcome"], "rejected", "{v}");
    assert_eq!(v["reason"], "wrong chapter");
    assert!(v["content"].as_str().unwrap().contains("wrong chapter"));
    assert!(!f.root.join("notes/mcp.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_changed_before_the_decision_fails_as_stale() {
    let f = fixture();
    let tui = tui_engine(&f);
    let _server = listen::serve(tui.clone()).await.unwrap().unwrap();
    let b = backend(&f, Preset::Supervised, 100, true);
    let id = pending_id(
        &call(
            &b,
            "write",
            json!({"path": "AGENTS.md", "content": "mcp\n"}),
        )
        .await,
    );
    std::fs::write(f.root.join("AGENTS.md"), "changed by hand\n").unwrap();
    tui.decide(&id, Decision::Approve).unwrap();
    match await_ap(&b, &id, 5000).await {
        Outcome::Done { result, .. } => {
            assert_eq!(result.status, CallStatus::Stale, "{}", result.content);
            assert!(result.content.contains("changed: "), "{}", result.content);
            let changed = result.details.unwrap()["changed"].clone();
            assert!(changed.to_string().contains("AGENTS.md"), "{changed}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(f.root.join("AGENTS.md")).unwrap(),
        "changed by hand\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_quitting_interrupts_a_waiting_call() {
    let f = fixture();
    let tui = tui_engine(&f);
    let server = listen::serve(tui.clone()).await.unwrap().unwrap();
    let sock = server.path().to_path_buf();
    let b = backend(&f, Preset::Supervised, 100, true);
    let id = pending_id(&call(&b, "write", write_args("x\n")).await);
    drop(server);
    assert!(!sock.exists(), "the socket file goes with the TUI");
    let o = await_ap(&b, &id, 5000).await;
    assert!(matches!(o, Outcome::Interrupted { .. }), "{o:?}");
    assert!(tui.pending().is_empty(), "the entry is gone from the queue");
    assert!(!f.root.join("notes/mcp.md").exists());
    // With the TUI gone, the next write is refused locally, reads still work.
    match call(&b, "write", write_args("y\n")).await {
        Outcome::Done { result, .. } => {
            assert_eq!(result.status, CallStatus::Refused);
            assert!(result
                .content
                .contains("open the project in nbook to approve"));
        }
        other => panic!("{other:?}"),
    }
    assert!(!f.root.join("notes/mcp.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_or_cancels_withdraws_its_calls() {
    let f = fixture();
    let tui = tui_engine(&f);
    let server = listen::serve(tui.clone()).await.unwrap().unwrap();
    // Cancelled while waiting inside the bound.
    let b = backend(&f, Preset::Supervised, 10_000, true);
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    let t = tui.clone();
    tokio::spawn(async move {
        while t.pending().is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        c2.cancel();
    });
    let wait = b.options().wait;
    let o = b
        .call("write", write_args("x\n"), wait, cancel, &quiet)
        .await;
    assert!(matches!(o, Outcome::Cancelled { .. }), "{o:?}");
    wait_until(|| tui.pending().is_empty()).await;
    // Gone while its call waits past the bound: the link closes, the TUI withdraws it.
    let link = nbook::mcp::attach::Attached::connect(server.path(), "leaver", "mcp.default")
        .await
        .unwrap()
        .unwrap();
    let o = link
        .outcome(
            link.next_id(),
            nbook::mcp::wire::Request::Call {
                tool: "write".into(),
                args: write_args("z\n"),
                wait_ms: 50,
            },
        )
        .await;
    pending_id(&o);
    assert_eq!(tui.pending().len(), 1);
    drop(link);
    wait_until(|| tui.pending().is_empty()).await;
    assert!(server.gateway().waiting() == 0);
    assert!(!f.root.join("notes/mcp.md").exists());
}

async fn wait_until(pred: impl Fn() -> bool) {
    for _ in 0..500 {
        if pred() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition not reached in 5 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_tui_reads_run_and_writes_are_refused_or_follow_the_policy() {
    let f = fixture();
    let b = backend(&f, Preset::Supervised, 100, true);
    assert!(!b.attached().await);
    match call(&b, "read", json!({"path": "AGENTS.md"})).await {
        Outcome::Done { result, .. } => assert!(result.ok),
        other => panic!("{other:?}"),
    }
    match call(&b, "write", write_args("x\n")).await {
        Outcome::Done { result, .. } => {
            assert_eq!(result.status, CallStatus::Refused);
            assert!(result
                .content
                .contains("open the project in nbook to approve"));
        }
        other => panic!("{other:?}"),
    }
    // Bad input keeps its own answer: unknown tool, schema errors with JSON Pointers.
    match call(&b, "no_such_tool", json!({})).await {
        Outcome::Done { result, .. } => assert_eq!(result.status, CallStatus::UnknownTool),
        other => panic!("{other:?}"),
    }
    match call(&b, "write", json!({"path": 3})).await {
        Outcome::Done { result, .. } => {
            assert_eq!(result.status, CallStatus::InvalidArgs);
            let pointers: Vec<String> = result
                .details
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["pointer"].as_str().unwrap().to_string())
                .collect();
            assert!(pointers.contains(&"/path".to_string()), "{pointers:?}");
        }
        other => panic!("{other:?}"),
    }
    // --approve-from-tui-only=false: the supervised policy would ask, so it is refused…
    let b = backend(&f, Preset::Supervised, 100, false);
    match call(&b, "write", write_args("x\n")).await {
        Outcome::Done { result, .. } => {
            assert_eq!(result.status, CallStatus::NeedsApproval);
            assert!(result
                .content
                .contains("open the project in nbook to approve"));
        }
        other => panic!("{other:?}"),
    }
    assert!(!f.root.join("notes/mcp.md").exists());
    // …while the neurobook preset runs normal-mode writes without asking.
    let b = backend(&f, Preset::Neurobook, 100, false);
    match call(&b, "write", write_args("ran\n")).await {
        Outcome::Done { result, .. } => assert!(result.ok, "{}", result.content),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(f.root.join("notes/mcp.md")).unwrap(),
        "ran\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_tui_does_not_listen_and_a_stale_socket_is_handled() {
    let f = fixture();
    // A socket file nothing listens on (an nbook that was killed).
    let sock = f.root.join(".nbook/mcp.sock");
    drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
    assert!(sock.exists());
    // A client treats it as "no TUI" and leaves it alone.
    let b = backend(&f, Preset::Supervised, 100, true);
    assert!(!b.attached().await);
    assert!(sock.exists());
    match call(&b, "write", write_args("x\n")).await {
        Outcome::Done { result, .. } => assert_eq!(result.status, CallStatus::Refused),
        other => panic!("{other:?}"),
    }
    // The queue owner replaces it.
    let tui = tui_engine(&f);
    let server = listen::serve(tui.clone()).await.unwrap().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&sock).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "owner-only socket");
    }
    assert!(b.attached().await);
    // A second nbook on the same project does not own the queue and does not listen.
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let second = Arc::new(
        Engine::open(
            ws,
            Config::default(),
            &f.dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    assert!(!second.owns_queue());
    assert!(listen::serve(second).await.unwrap().is_none());
    assert!(b.attached().await, "the first TUI still serves");
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_attach_lines_get_an_error_and_the_link_goes_on() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let f = fixture();
    let tui = tui_engine(&f);
    let server = listen::serve(tui.clone()).await.unwrap().unwrap();
    let s = tokio::net::UnixStream::connect(server.path())
        .await
        .unwrap();
    let (r, mut w) = s.into_split();
    let mut r = BufReader::new(r).lines();
    w.write_all(b"this is not json\n").await.unwrap();
    let line = r.next_line().await.unwrap().unwrap();
    assert!(line.contains("malformed attach request"), "{line}");
    // A call before hello is refused.
    w.write_all(b"{\"id\":7,\"op\":\"call\",\"tool\":\"write\",\"args\":{},\"wait_ms\":1}\n")
        .await
        .unwrap();
    let line = r.next_line().await.unwrap().unwrap();
    assert!(line.contains("hello"), "{line}");
    // An unknown profile is refused with the reason.
    w.write_all(b"{\"id\":8,\"op\":\"hello\",\"client\":\"x\",\"profile\":\"nope\"}\n")
        .await
        .unwrap();
    let line = r.next_line().await.unwrap().unwrap();
    assert!(line.contains("unknown profile"), "{line}");
    // Then a proper hello works.
    w.write_all(b"{\"id\":9,\"op\":\"hello\",\"client\":\"x\",\"profile\":\"mcp.default\"}\n")
        .await
        .unwrap();
    let line = r.next_line().await.unwrap().unwrap();
    assert!(line.contains("session_id"), "{line}");
    assert!(tui.pending().is_empty());
    drop(server);
}

/// Only the owner may attach: even with the socket's permissions opened up, a process of
/// another user is refused by the peer-credential check before a request is read. Needs root
/// (to run the other side as `nobody`); skipped otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_user_is_refused_even_through_an_open_socket() {
    if rustix::process::geteuid().as_raw() != 0 {
        eprintln!("skipping: needs root to act as another user");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let tui = tui_engine(&f);
    let server = listen::serve(tui.clone()).await.unwrap().unwrap();
    // Let `nobody` reach the socket at all (normally 0600 stops it at connect).
    let mut p = server.path().to_path_buf();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
    while p.pop() {
        if p == std::env::temp_dir() || p.as_os_str().is_empty() || p == Path::new("/") {
            break;
        }
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode | 0o011)).unwrap();
    }
    // The refusal comes before any request is read, so the server may have answered and
    // closed before the hello is sent: a broken pipe there is the refusal arriving first.
    let script = format!(
        "import os, socket\nos.setgid(65534)\nos.setuid(65534)\ns = socket.socket(socket.AF_UNIX)\ns.connect({:?})\ntry:\n    s.sendall(b'{{\"id\":1,\"op\":\"hello\",\"client\":\"intruder\",\"profile\":\"mcp.default\"}}\\n')\nexcept BrokenPipeError:\n    pass\nprint(s.makefile().readline().strip())\n",
        server.path().display().to_string()
    );
    let out = tokio::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("only the project's owner can attach"),
        "stdout {said:?}, stderr {:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !tui.sessions()
            .iter()
            .any(|s| s.client.as_deref() == Some("intruder")),
        "no session was opened for another user"
    );
    drop(server);
}

/// A workflow run with `wait` over the attach link: the client hears the job's own progress
/// (its phase and steps done out of the total), sent by the TUI while it runs, not only
/// "still running" — every step, even when the run ends at once (reports come before the
/// result).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waited_workflow_reports_its_own_progress_to_the_client() {
    let f = fixture();
    let dir = f.root.join(".nbook/workflows/slow-count");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("workflow.js"),
        r#"export default {
  title: "Slow count",
  description: "Counts to three, slowly",
  whenToUse: "tests",
  phases: [{ key: "count", title: "Count" }],
  async run(wf, args) {
    for (let done = 1; done <= 3; done++) {
      wf.progress({ phase: "count", done, total: 3 });
    }
    return "counted";
  },
};
"#,
    )
    .unwrap();
    let tui = tui_engine(&f);
    let _server = listen::serve(tui.clone()).await.unwrap().expect("listens");
    let b = backend(&f, Preset::Supervised, 20_000, true);
    // The author approves the run when it arrives.
    let approver = {
        let tui = tui.clone();
        tokio::spawn(async move {
            loop {
                if let Some(p) = tui.pending().first() {
                    tui.decide(&p.approval_id, Decision::Approve).unwrap();
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    let seen = std::sync::Mutex::new(Vec::<Progress>::new());
    let record = |p: Progress| seen.lock().unwrap().push(p);
    let o = b
        .call(
            "run_workflow",
            json!({"workflowKey": "slow-count", "args": {}, "wait": true}),
            Duration::from_secs(20),
            CancellationToken::new(),
            &record,
        )
        .await;
    approver.await.unwrap();
    match &o {
        Outcome::Done { result, .. } => {
            assert!(result.ok, "{}", result.content);
            let d = result.details.as_ref().unwrap();
            assert_eq!(d["status"], "completed", "{}", result.content);
        }
        other => panic!("{other:?}"),
    }
    let seen = seen.into_inner().unwrap();
    let steps: Vec<(Option<u64>, Option<u64>)> = seen
        .iter()
        .filter(|p| p.done.is_some())
        .map(|p| (p.done, p.total))
        .collect();
    assert!(
        steps == [(Some(1), Some(3)), (Some(2), Some(3)), (Some(3), Some(3))],
        "the job's steps reached the client: {seen:?}"
    );
    assert!(
        seen.iter()
            .any(|p| p.message.contains("Slow count: count (2/3)")),
        "{seen:?}"
    );
}
