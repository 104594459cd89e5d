//! Guards around runs and records, through the real engine, the real agent host, scripted
//! (replay) models and real log files: one run per session however submits race, no call runs
//! without its record, an append after a torn line keeps both records, and only one engine
//! owns a project's approval queue.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier, Mutex};

use nbook::agent::host::{Host, ProviderSource};
use nbook::agent::{Provider, ReplayProvider};
use nbook::config::{Config, Dirs, Preset};
use nbook::engine::agents::{InvokeMode, InvokeOutcome, InvokeRequest};
use nbook::engine::{
    Approval, CallStatus, Decision, Engine, LogRecord, Mode, Preview, PreviewBody, ToolCall,
};
use serde_json::json;
use tokio::sync::oneshot;

struct Fx {
    tmp: tempfile::TempDir,
    root: PathBuf,
}

fn fx() -> Fx {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).expect("init");
    Fx { tmp, root }
}

impl Fx {
    fn engine(&self) -> Arc<Engine> {
        let dirs = Dirs {
            config: self.tmp.path().join("h"),
            data: self.tmp.path().join("h/d"),
            logs: self.tmp.path().join("h/l"),
        };
        let mut config = Config::default();
        config.approval.preset = Preset::Supervised;
        let ws = nbook::workspace::Workspace::open(&self.root).expect("ws");
        Arc::new(
            Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).expect("engine"),
        )
    }

    fn log_file(&self, sid: &str) -> PathBuf {
        self.root.join(format!(".nbook/agent/sessions/{sid}.jsonl"))
    }
}

/// A writer model that answers every request with a plain text turn.
fn answers(n: usize) -> ProviderSource {
    let text = (0..n)
        .map(|i| json!({"text": format!("answer {i}"), "tool_calls": []}).to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let p: Arc<dyn Provider> = Arc::new(ReplayProvider::parse(&text, "writer").expect("script"));
    let map = Mutex::new(HashMap::from([("writer".to_string(), p)]));
    Arc::new(move |profile, _| {
        map.lock()
            .expect("lock")
            .get(&profile.key)
            .cloned()
            .ok_or_else(|| format!("no script for {}", profile.key))
    })
}

fn request(sid: &str, mode: InvokeMode, message: Option<&str>) -> InvokeRequest {
    InvokeRequest {
        caller: None,
        session_id: sid.into(),
        message: message.map(str::to_string),
        input: None,
        mode,
        model: None,
        origin_call_id: None,
    }
}

/// The lifecycle statuses of a session's runs, in log order.
fn lifecycle(engine: &Engine, sid: &str) -> Vec<String> {
    engine
        .session_log(sid)
        .expect("log")
        .lines
        .into_iter()
        .filter_map(|l| match l.record {
            LogRecord::Lifecycle { status, .. } => Some(status),
            _ => None,
        })
        .collect()
}

/// Submit `reqs` to the host from one thread each, released together by a barrier.
fn race(
    host: &Arc<Host>,
    reqs: Vec<InvokeRequest>,
) -> Vec<Result<oneshot::Receiver<InvokeOutcome>, String>> {
    let barrier = Arc::new(Barrier::new(reqs.len()));
    let threads: Vec<_> = reqs
        .into_iter()
        .map(|req| {
            let (host, barrier) = (host.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                host.submit(req).map_err(|e| e.to_string())
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().expect("submit thread"))
        .collect()
}

/// Every admitted submit gets its outcome (none was dropped by a second run taking its slot)
/// and the session's runs never overlap: each start is closed before the next one.
async fn assert_one_run_at_a_time(
    engine: &Engine,
    sid: &str,
    admitted: Vec<oneshot::Receiver<InvokeOutcome>>,
) {
    for rx in admitted {
        let out = tokio::time::timeout(std::time::Duration::from_secs(10), rx)
            .await
            .expect("an outcome in time")
            .expect("the submit's outcome was dropped: a second run replaced its run");
        assert_eq!(out.status, "completed", "{out:?}");
    }
    let statuses = lifecycle(engine, sid);
    let mut open = false;
    for s in &statuses {
        match s.as_str() {
            "start" => {
                assert!(!open, "two runs at once on session {sid}: {statuses:?}");
                open = true;
            }
            "end" | "error" | "cancelled" => open = false,
            _ => {}
        }
    }
    assert!(!open, "{statuses:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_prompts_at_once_on_an_idle_session_start_one_run_and_queue_the_other() {
    let f = fx();
    let engine = f.engine();
    const ROUNDS: usize = 40;
    let host = Host::attach(engine.clone(), answers(ROUNDS * 2), Approval::Queue);
    for round in 0..ROUNDS {
        let sid = engine
            .create_session("writer", Mode::Normal, "w", None)
            .expect("session")
            .id;
        // The composer and a job delivery both prompt the idle session.
        let got = race(
            &host,
            vec![
                request(&sid, InvokeMode::Prompt, Some("from the composer")),
                request(&sid, InvokeMode::Prompt, Some("job 7 ended")),
            ],
        );
        let admitted: Vec<_> = got
            .into_iter()
            .map(|r| r.expect("a prompt is admitted: it starts the run or follows it"))
            .collect();
        assert_one_run_at_a_time(&engine, &sid, admitted).await;
        assert_eq!(
            lifecycle(&engine, &sid)
                .iter()
                .filter(|s| *s == "start")
                .count(),
            2,
            "round {round}: the second prompt ran as a follow-up after the first"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_and_prompt_at_once_never_run_together() {
    let f = fx();
    let engine = f.engine();
    const ROUNDS: usize = 40;
    let host = Host::attach(engine.clone(), answers(ROUNDS * 2), Approval::Queue);
    for _ in 0..ROUNDS {
        let sid = engine
            .create_session("writer", Mode::Normal, "w", None)
            .expect("session")
            .id;
        // A transcript to continue from (reading it is the slow part of admitting `continue`).
        for record in [
            LogRecord::User {
                text: "draft".into(),
            },
            LogRecord::Assistant {
                text: "drafted".into(),
                tool_calls: vec![],
            },
        ] {
            engine.append(&sid, record).expect("append");
        }
        let got = race(
            &host,
            vec![
                request(&sid, InvokeMode::Continue, None),
                request(&sid, InvokeMode::Prompt, Some("and now?")),
            ],
        );
        let mut admitted = Vec::new();
        for r in got {
            match r {
                Ok(rx) => admitted.push(rx),
                // Continue lost the race: the session was already running.
                Err(e) => assert!(e.contains("active_invocation_exists"), "{e}"),
            }
        }
        assert!(!admitted.is_empty());
        assert_one_run_at_a_time(&engine, &sid, admitted).await;
    }
}

fn write_call(path: &str, content: &str) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: "write".into(),
        arguments: json!({"path": path, "content": content}),
    }
}

/// Point a session's log at `/dev/full`: every write to it fails with ENOSPC, even for root.
fn break_log(path: &Path) {
    std::fs::remove_file(path).expect("remove log");
    std::os::unix::fs::symlink("/dev/full", path).expect("symlink");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_approval_request_cannot_be_logged_does_not_run() {
    let f = fx();
    std::fs::write(f.root.join("notes.md"), "old\n").expect("seed");
    let sid = f
        .engine()
        .create_session("leader.default", Mode::Normal, "t", None)
        .expect("session")
        .id;
    // The next process opens the session's log when it first writes to it.
    let engine = f.engine();
    let log = f.log_file(&sid);
    break_log(&log);
    let r = engine
        .call(
            &sid,
            write_call("notes.md", "new\n"),
            Approval::Auto {
                decision: Decision::Approve,
                by: "test",
            },
        )
        .await;
    assert_eq!(r.status, CallStatus::LogFailed, "{}", r.content);
    assert!(!r.ok);
    assert!(r.content.starts_with("not run"), "{}", r.content);
    assert!(
        r.content.contains(&log.display().to_string()),
        "the error names the log: {}",
        r.content
    );
    assert_eq!(
        std::fs::read_to_string(f.root.join("notes.md")).expect("notes"),
        "old\n",
        "the write ran without its record"
    );
    assert!(engine.pending().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_that_cannot_be_logged_fails_the_call_and_says_what_ran() {
    let f = fx();
    let sid = f
        .engine()
        .create_session("leader.default", Mode::Normal, "t", None)
        .expect("session")
        .id;
    let engine = f.engine();
    break_log(&f.log_file(&sid));
    // `read` needs no approval: it runs, and then its result has nowhere to go.
    let r = engine
        .call(
            &sid,
            ToolCall {
                id: String::new(),
                name: "read".into(),
                arguments: json!({"path": "AGENTS.md"}),
            },
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::LogFailed, "{}", r.content);
    assert!(!r.ok);
    assert!(
        r.content.contains("could not be recorded") && r.content.contains("Stop here"),
        "{}",
        r.content
    );
}

#[test]
fn an_append_after_a_torn_last_line_keeps_both_records() {
    let f = fx();
    let sid = {
        let engine = f.engine();
        let sid = engine
            .create_session("writer", Mode::Normal, "t", None)
            .expect("session")
            .id;
        engine
            .append(&sid, LogRecord::User { text: "one".into() })
            .expect("append");
        sid
    };
    // nbook died mid-write: the file ends inside a line.
    let path = f.log_file(&sid);
    let mut torn = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    std::io::Write::write_all(&mut torn, b"{\"ts\":\"2026-01-01T00:00:00Z\",\"kind\":\"us")
        .unwrap();
    drop(torn);
    let engine = f.engine();
    for text in ["two", "three"] {
        engine
            .append(&sid, LogRecord::User { text: text.into() })
            .expect("append");
    }
    let read = engine.session_log(&sid).expect("log");
    let users: Vec<String> = read
        .lines
        .iter()
        .filter_map(|l| match &l.record {
            LogRecord::User { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(users, vec!["one", "two", "three"]);
    // The torn line now sits in the middle and is skipped, not fatal.
    assert_eq!(read.skipped, vec![3], "header, one, torn, two, three");
}

fn pending_request(call_id: &str) -> LogRecord {
    LogRecord::ApprovalRequested {
        approval_id: String::new(),
        call_id: call_id.into(),
        tool: "write".into(),
        args: json!({"path": "x.md", "content": "x"}),
        preview: Preview {
            summary: "write x.md".into(),
            body: PreviewBody::Text { text: "x".into() },
            targets: vec![],
        },
        mode: Mode::Normal,
    }
}

fn decisions(engine: &Engine, sid: &str) -> Vec<String> {
    engine
        .session_log(sid)
        .expect("log")
        .lines
        .into_iter()
        .filter_map(|l| match l.record {
            LogRecord::ApprovalResolved { decision, .. } => Some(decision),
            _ => None,
        })
        .collect()
}

#[test]
fn only_one_engine_owns_the_queue_and_a_stale_pid_blocks_nothing() {
    let f = fx();
    // A lock file left by an nbook that died, whose pid now belongs to a live process.
    let agent = f.root.join(".nbook/agent");
    std::fs::create_dir_all(&agent).expect("dir");
    std::fs::write(agent.join("engine.lock"), "1").expect("stale pid");
    let owner = f.engine();
    assert!(owner.owns_queue(), "a stale pid must not block the owner");
    let sid = owner
        .create_session("writer", Mode::Normal, "t", None)
        .expect("session")
        .id;
    // A call waits for the author in the owner's queue (as the TUI would hold it).
    owner.append(&sid, pending_request("c1")).expect("append");

    // A second engine (a headless `nbook call` next to the TUI) is a guest: it leaves the
    // owner's live call alone.
    let guest = f.engine();
    assert!(!guest.owns_queue());
    assert!(
        decisions(&guest, &sid).is_empty(),
        "a guest interrupted a live call"
    );
    drop(guest);
    drop(owner);

    // The owner stopped; the next engine owns the queue and closes what was left pending.
    let next = f.engine();
    assert!(next.owns_queue());
    assert_eq!(decisions(&next, &sid), vec!["interrupted"]);
}
