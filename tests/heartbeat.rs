//! Heartbeat agents (`nbook::runner::heartbeat`) through the real engine, the real agent host,
//! a real SQLite file and scripted (replay) models for the `heartbeat` profile; the clock the
//! timer reads is driven by the test (the 5-minute floor stays as users have it). Then the
//! real binary: the scheduler lock between two `nbook board run` processes, and `nbook agent
//! wake` against a real HTTP model server speaking the OpenAI wire format.

mod provider_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nbook::agent::host::{Host, ProviderSource};
use nbook::agent::{Provider, ReplayProvider};
use nbook::board::agent_runs::{self, AgentRun};
use nbook::board::agents::{self, Caller, ConfigPatch, NewAgent};
use nbook::board::mailbox::ResponseMode;
use nbook::board::Board;
use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, CallStatus, Decision, Engine, LogRecord, Mode, ToolCall};
use nbook::runner::heartbeat::{Heartbeats, ManualClock, Woken};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const APPROVE: Approval = Approval::Auto {
    decision: Decision::Approve,
    by: "test",
};

struct Fx {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    engine: Arc<Engine>,
}

fn fx() -> Fx {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).expect("init");
    let dirs = Dirs {
        config: tmp.path().join("h"),
        data: tmp.path().join("h/d"),
        logs: tmp.path().join("h/l"),
    };
    let engine = Arc::new(
        Engine::open(
            nbook::workspace::Workspace::open(&root).expect("ws"),
            Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .expect("engine"),
    );
    Fx {
        _tmp: tmp,
        root,
        engine,
    }
}

fn turn(text: &str, calls: Value) -> Value {
    json!({"text": text, "tool_calls": calls})
}

fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

fn done(summary: &str) -> Value {
    turn(
        "",
        json!([call("fn_heartbeat_done", json!({"summary": summary}))]),
    )
}

/// The `heartbeat` profile's sessions play `turns` in order (shared by every session).
fn script(turns: Vec<Value>) -> ProviderSource {
    let text = turns
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    let p: Arc<dyn Provider> = Arc::new(ReplayProvider::parse(&text, "heartbeat").expect("script"));
    let providers: Mutex<HashMap<String, Arc<dyn Provider>>> =
        Mutex::new([("heartbeat".to_string(), p)].into_iter().collect());
    Arc::new(move |profile, _model| {
        providers
            .lock()
            .expect("lock")
            .get(&profile.key)
            .cloned()
            .ok_or_else(|| format!("no script for {}", profile.key))
    })
}

impl Fx {
    fn board(&self) -> Board {
        Board::new(
            self.engine.workspace().root(),
            self.engine.workspace().name(),
        )
    }

    /// A custom (heartbeat) agent created by the author; its id.
    fn agent(&self, name: &str, config: ConfigPatch) -> String {
        let new = NewAgent {
            name: name.into(),
            role: Some(agents::AgentRole::Custom),
            reports_to: None,
            config,
        };
        let out = self
            .board()
            .commit(|c: &rusqlite::Connection| {
                agents::create(c, &new, &Caller::author(), &|_| true, &[])
            })
            .expect("create agent");
        out.outcome.value["agentId"]
            .as_str()
            .or_else(|| out.outcome.value["id"].as_str())
            .expect("agent id")
            .to_string()
    }

    fn host(&self, turns: Vec<Value>) -> Arc<Host> {
        Host::attach(self.engine.clone(), script(turns), Approval::Queue)
    }

    fn runs(&self, agent: &str) -> Vec<AgentRun> {
        let mut v = self
            .board()
            .read(|c| agent_runs::of_agent(c, agent, 100))
            .unwrap();
        v.reverse();
        v
    }

    /// Poll until `agent` has `n` runs, none running.
    async fn ended(&self, agent: &str, n: usize) -> Vec<AgentRun> {
        for _ in 0..1500 {
            let r = self.runs(agent);
            if r.len() >= n && r.iter().all(|r| r.status != agent_runs::RUNNING) {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("{agent} never had {n} ended runs: {:?}", self.runs(agent));
    }

    /// The user messages of a session, in order.
    fn users(&self, sid: &str) -> Vec<String> {
        self.engine
            .session_log(sid)
            .expect("log")
            .lines
            .into_iter()
            .filter_map(|l| match l.record {
                LogRecord::User { text } => Some(text),
                _ => None,
            })
            .collect()
    }

    /// A session (of `profile`) sends `content` to `to` through the real tool.
    async fn send(&self, profile: &str, to: &str, content: &str) -> Value {
        self.tool(
            profile,
            "fn_send_message",
            json!({"to_id": to, "content": content}),
        )
        .await
    }

    /// A new session of `profile` calls `tool` (approved); its details.
    async fn tool(&self, profile: &str, tool: &str, args: Value) -> Value {
        let sid = self
            .engine
            .create_session(profile, Mode::Normal, "sender", None)
            .unwrap()
            .id;
        let r = self
            .engine
            .call(
                &sid,
                ToolCall {
                    id: String::new(),
                    name: tool.into(),
                    arguments: args,
                },
                APPROVE,
            )
            .await;
        assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
        r.details.unwrap_or(Value::Null)
    }

    fn unread(&self, agent: &str) -> usize {
        self.board()
            .read(|c| nbook::board::mailbox::unread_count(c, agent))
            .unwrap()
    }
}

fn every(ms: i64) -> ConfigPatch {
    ConfigPatch {
        heartbeat_interval_ms: Some(ms),
        ..ConfigPatch::default()
    }
}

/// Tick on a worker thread (the scheduler's ticks block on the database and the host).
async fn tick(h: &Arc<Heartbeats>) -> usize {
    let h = h.clone();
    tokio::task::spawn_blocking(move || h.tick()).await.unwrap()
}

async fn wake(h: &Arc<Heartbeats>, id: &str) -> Woken {
    let (h, id) = (h.clone(), id.to_string());
    tokio::task::spawn_blocking(move || h.wake(&id))
        .await
        .unwrap()
        .expect("wake")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timer_wakes_an_agent_after_its_interval_and_never_under_five_minutes() {
    let f = fx();
    let slow = f.agent("Continuity editor", every(30 * 60_000));
    // Asks for a wake every second: nbook holds it to the 5-minute floor.
    let eager = f.agent("Eager", every(1_000));
    let clock = Arc::new(ManualClock::at_now());
    let h = Heartbeats::with_clock(
        f.engine.clone(),
        f.host(vec![done("first"), done("second"), done("third")]),
        clock.clone(),
    );
    assert_eq!(tick(&h).await, 0, "nothing is due at the start");
    clock.advance(Duration::from_secs(4 * 60));
    assert_eq!(tick(&h).await, 0, "4 minutes is under the floor");
    clock.advance(Duration::from_secs(61));
    assert_eq!(tick(&h).await, 1, "the eager agent wakes at 5 minutes");
    let r = f.ended(&eager, 1).await;
    assert_eq!(r[0].reason, "timer");
    assert!(f.runs(&slow).is_empty());
    let sid = r[0].session_id.clone().unwrap();
    let first = &f.users(&sid)[0];
    assert!(first.contains("Wake reason: timer"), "{first}");
    assert!(first.contains(&eager), "{first}");
    // The session runs as the agent (its identity goes into the system prompt).
    assert_eq!(
        f.engine.session_state(&sid)["board.agent"],
        json!(eager),
        "the run's session is the agent's"
    );
    clock.advance(Duration::from_secs(25 * 60 + 1));
    assert_eq!(tick(&h).await, 2, "30 minutes: both are due");
    f.ended(&slow, 1).await;
    f.ended(&eager, 2).await;
    assert_eq!(tick(&h).await, 0, "a run resets the timer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assignment_wakes_the_agent_once_naming_the_task() {
    let f = fx();
    let id = f.agent("Continuity editor", ConfigPatch::default());
    let h = Heartbeats::with_clock(
        f.engine.clone(),
        f.host(vec![done("looked at it")]),
        Arc::new(ManualClock::at_now()),
    );
    assert_eq!(tick(&h).await, 0);
    // What a chat session's fn_delegate_task does (the built-in profiles that may delegate).
    let d = f
        .tool(
            "chat",
            "fn_delegate_task",
            json!({"agent_id": id, "description": "Check chapter 3 against the tide tables"}),
        )
        .await;
    let task = d["taskId"].as_str().unwrap().to_string();
    assert_eq!(tick(&h).await, 1);
    let runs = f.ended(&id, 1).await;
    assert_eq!(runs[0].reason, "assignment");
    assert_eq!(runs[0].trigger.as_deref(), Some(task.as_str()));
    let first = &f.users(runs[0].session_id.as_deref().unwrap())[0];
    assert!(first.contains(&task), "{first}");
    assert_eq!(
        tick(&h).await,
        0,
        "the same assignment does not wake it twice"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn immediate_mail_wakes_the_agent_and_on_heartbeat_mail_waits_for_its_next_run() {
    let f = fx();
    let quick = f.agent("Quick", ConfigPatch::default());
    let patient = f.agent(
        "Patient",
        ConfigPatch {
            message_response_mode: Some(ResponseMode::OnHeartbeat),
            ..ConfigPatch::default()
        },
    );
    let h = Heartbeats::with_clock(
        f.engine.clone(),
        f.host(vec![done("read it"), done("read the queued one")]),
        Arc::new(ManualClock::at_now()),
    );
    let d = f
        .send("chat", &quick, "The lighthouse has 154 steps now")
        .await;
    assert_eq!(d["wakeRecipient"], json!(false), "{d}");
    f.send(
        "chat",
        &patient,
        "Check the tide in chapter 2 when you next run",
    )
    .await;
    assert_eq!(tick(&h).await, 1, "only the immediate recipient wakes");
    let runs = f.ended(&quick, 1).await;
    assert_eq!(runs[0].reason, "message");
    let first = &f.users(runs[0].session_id.as_deref().unwrap())[0];
    assert!(
        first.contains("The lighthouse has 154 steps now"),
        "{first}"
    );
    assert_eq!(f.unread(&quick), 0, "delivered mail is marked read");
    assert_eq!(tick(&h).await, 0, "read mail wakes nobody again");
    // Its run is over: the next mail wakes a new run instead of reopening the old session
    // (a heartbeat agent has no long-lived session), and reaches the agent once.
    let old = runs[0].session_id.clone().unwrap();
    f.send("chat", &quick, "The keeper's cat is called Mab")
        .await;
    assert_eq!(
        tick(&h).await,
        1,
        "the finished run's session does not take the mail"
    );
    let runs = f.ended(&quick, 2).await;
    let second = runs[1].session_id.clone().unwrap();
    assert_ne!(second, old);
    assert!(
        f.users(&second)[0].contains("Mab"),
        "{:?}",
        f.users(&second)
    );
    assert_eq!(f.users(&old).len(), 1, "the old session got nothing more");
    assert!(f.runs(&patient).is_empty());
    assert_eq!(f.unread(&patient), 1);
    // Its next run (here the author's wake) carries the waiting mail, exactly once.
    assert!(matches!(wake(&h, &patient).await, Woken::Started { .. }));
    let runs = f.ended(&patient, 1).await;
    assert_eq!(runs[0].reason, "manual");
    let first = &f.users(runs[0].session_id.as_deref().unwrap())[0];
    assert!(first.contains("Check the tide in chapter 2"), "{first}");
    assert_eq!(f.unread(&patient), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wakes_past_max_concurrent_runs_coalesce_into_one_later_run() {
    let f = fx();
    let id = f.agent("Busy", ConfigPatch::default());
    let slow = json!({"text": "", "delay_ms": 1500, "tool_calls": [call("fn_heartbeat_done", json!({"summary": "slow"}))]});
    let h = Heartbeats::with_clock(
        f.engine.clone(),
        f.host(vec![slow, done("second"), done("never")]),
        Arc::new(ManualClock::at_now()),
    );
    assert!(matches!(wake(&h, &id).await, Woken::Started { .. }));
    assert_eq!(wake(&h, &id).await, Woken::Coalesced);
    assert_eq!(wake(&h, &id).await, Woken::Coalesced);
    // (Mail sent now would go to the working session as its next message — the mail tool's
    // delivery, `live_session_of` — not to the coalesced run; tests/inbox_compose.rs.)
    assert_eq!(tick(&h).await, 0, "the cap (1) is full");
    assert!(h.has_pending(&id));
    let runs = f.ended(&id, 2).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let runs_now = f.runs(&id);
    assert_eq!(
        runs_now.len(),
        2,
        "three wakes while busy are one run: {runs_now:?}"
    );
    assert_eq!(runs[1].summary.as_deref(), Some("second"));
    assert!(!h.has_pending(&id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_past_its_heartbeat_timeout_is_cancelled_and_recorded_timed_out() {
    let f = fx();
    let id = f.agent(
        "Slow",
        ConfigPatch {
            heartbeat_timeout_ms: Some(5_000),
            ..ConfigPatch::default()
        },
    );
    let stuck = json!({"text": "", "delay_ms": 60_000, "tool_calls": [call("fn_heartbeat_done", json!({}))]});
    let h = Heartbeats::with_clock(
        f.engine.clone(),
        f.host(vec![stuck]),
        Arc::new(ManualClock::at_now()),
    );
    let Woken::Started { session_id, .. } = wake(&h, &id).await else {
        panic!("not started")
    };
    let runs = f.ended(&id, 1).await;
    assert_eq!(runs[0].status, agent_runs::TIMED_OUT);
    assert!(
        runs[0].summary.as_deref().unwrap_or("").contains("5000 ms"),
        "{:?}",
        runs[0].summary
    );
    assert!(runs[0].ended_at.is_some());
    assert!(h.running().is_empty());
    let _ = session_id;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fn_heartbeat_done_ends_the_run_with_its_summary_recorded() {
    let f = fx();
    let id = f.agent("Continuity editor", ConfigPatch::default());
    let h = Heartbeats::with_clock(
        f.engine.clone(),
        f.host(vec![
            turn("", json!([call("read", json!({"path": "AGENTS.md"}))])),
            turn(
                "",
                json!([call(
                    "fn_heartbeat_done",
                    json!({"summary": "Chapter 3 contradicts the tide table"})
                )]),
            ),
        ]),
        Arc::new(ManualClock::at_now()),
    );
    wake(&h, &id).await;
    let runs = f.ended(&id, 1).await;
    assert_eq!(runs[0].status, agent_runs::DONE);
    assert_eq!(
        runs[0].summary.as_deref(),
        Some("Chapter 3 contradicts the tide table")
    );
    // The record is in the real database file.
    let c = rusqlite::Connection::open(f.root.join(".nbook/project.sqlite")).unwrap();
    let (status, summary): (String, String) = c
        .query_row(
            "SELECT status, summary FROM nbook_agent_run WHERE agent_id = ?1",
            [&id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(status, "done");
    assert_eq!(summary, "Chapter 3 contradicts the tide table");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_procedure_file_and_changed_manuscript_files_are_in_the_wake_message() {
    let f = fx();
    std::fs::write(
        f.root.join("HEARTBEAT.md"),
        "Read the changed chapters; mail the author what contradicts.",
    )
    .unwrap();
    std::fs::create_dir_all(f.root.join("manuscript")).unwrap();
    std::fs::write(f.root.join("manuscript/001.md"), "Chapter one.").unwrap();
    let id = f.agent(
        "Continuity editor",
        ConfigPatch {
            heartbeat_procedure_path: Some("HEARTBEAT.md".into()),
            ..ConfigPatch::default()
        },
    );
    let h = Heartbeats::with_clock(
        f.engine.clone(),
        f.host(vec![done("one"), done("two")]),
        Arc::new(nbook::runner::heartbeat::SystemClock),
    );
    wake(&h, &id).await;
    let runs = f.ended(&id, 1).await;
    let first = &f.users(runs[0].session_id.as_deref().unwrap())[0];
    assert!(
        first.contains("mail the author what contradicts"),
        "{first}"
    );
    assert!(first.contains("- manuscript/001.md"), "{first}");
    // Only what changed since the last run started is listed next time.
    tokio::time::sleep(Duration::from_millis(50)).await;
    std::fs::write(f.root.join("manuscript/002.md"), "Chapter two.").unwrap();
    wake(&h, &id).await;
    let runs = f.ended(&id, 2).await;
    let second = &f.users(runs[1].session_id.as_deref().unwrap())[0];
    assert!(second.contains("- manuscript/002.md"), "{second}");
    assert!(!second.contains("- manuscript/001.md"), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_agent_wakes_after_the_scheduler_stops() {
    let f = fx();
    let id = f.agent("Continuity editor", every(30 * 60_000));
    let clock = Arc::new(ManualClock::at_now());
    let h = Heartbeats::with_clock(f.engine.clone(), f.host(vec![done("x")]), clock.clone());
    let stop = CancellationToken::new();
    let handle = h.spawn(stop.clone());
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(30), handle)
        .await
        .expect("the scheduler ends when stopped")
        .unwrap();
    assert!(h.is_stopped());
    // Its timer is due, mail and an assignment arrive: nothing wakes it.
    clock.advance(Duration::from_secs(31 * 60));
    f.send("chat", &id, "wake up").await;
    h.poke();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(tick(&h).await, 0);
    assert!(f.runs(&id).is_empty(), "{:?}", f.runs(&id));
    let (h2, id2) = (h.clone(), id.clone());
    let e = tokio::task::spawn_blocking(move || h2.wake(&id2))
        .await
        .unwrap()
        .unwrap_err();
    assert!(e.to_string().contains("stopped"), "{e}");
    assert!(f.runs(&id).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waking_an_unknown_agent_names_how_to_list_them_and_creates_nothing() {
    let f = fx();
    let h = Heartbeats::with_clock(
        f.engine.clone(),
        f.host(vec![done("never")]),
        Arc::new(ManualClock::at_now()),
    );
    let before = f.engine.sessions().len();
    let h2 = h.clone();
    let e = tokio::task::spawn_blocking(move || h2.wake("agent-099"))
        .await
        .unwrap()
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("agent-099") && msg.contains("fn_list_agents"),
        "{msg}"
    );
    assert_eq!(f.engine.sessions().len(), before);
    assert!(f.runs("agent-099").is_empty());
}

// ---- the real binary ----

use provider_support::*;

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

fn tool_call(id: &str, name: &str, args: &Value) -> Reply {
    Reply::data(&[
        chunk(
            json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        "[DONE]".into(),
    ])
}

struct Bin {
    _tmp: tempfile::TempDir,
    home: std::path::PathBuf,
    root: std::path::PathBuf,
}

/// A project (with one custom agent, agent-001) and a config.toml whose default model is
/// served at `base_url`.
fn bin(base_url: &str) -> Bin {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n\
             [models.small]\nprovider = \"local\"\nname = \"smollm2\"\n\
             [defaults]\nmodel = \"small\"\n"
        ),
    )
    .unwrap();
    let board = Board::new(&root, "book");
    let new = NewAgent {
        name: "Continuity editor".into(),
        role: Some(agents::AgentRole::Custom),
        reports_to: None,
        config: ConfigPatch::default(),
    };
    board
        .commit(|c: &rusqlite::Connection| {
            agents::create(c, &new, &Caller::author(), &|_| true, &[])
        })
        .unwrap();
    Bin {
        _tmp: tmp,
        home,
        root,
    }
}

fn command(b: &Bin, args: &[&str]) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_nbook"));
    c.args(args)
        .arg("--project")
        .arg(&b.root)
        .env("NBOOK_HOME", &b.home)
        .env_remove("NBOOK_LOG")
        .stdin(std::process::Stdio::null());
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_nbook_on_the_project_says_who_runs_the_heartbeats() {
    let b = bin("http://127.0.0.1:9/v1");
    let mut first = command(&b, &["board", "run"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = first.id().unwrap().to_string();
    let lock = b.root.join(".nbook/scheduler.lock");
    let mut held = false;
    for _ in 0..1500 {
        if std::fs::read_to_string(&lock).is_ok_and(|s| s.trim() == pid) {
            held = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(held, "the first nbook never took the scheduler lock");
    let second = command(&b, &["board", "run", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let spid = second.id().unwrap() as i32;
    // It keeps running (the board scheduler works): stop it after a moment, as Ctrl+C does.
    tokio::time::sleep(Duration::from_secs(3)).await;
    unsafe { libc::kill(spid, libc::SIGINT) };
    let out = tokio::time::timeout(Duration::from_secs(30), second.wait_with_output())
        .await
        .expect("the second nbook ends on Ctrl+C")
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "another nbook (pid {pid}) runs this project's heartbeat agents"
        )),
        "{err}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("run_finished"),
        "the second still ran the board: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let _ = first.start_kill();
    let _ = first.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nbook_agent_wake_runs_the_agent_and_prints_its_events() {
    let server = Server::start(vec![tool_call(
        "c1",
        "fn_heartbeat_done",
        &json!({"summary": "Nothing contradicts."}),
    )])
    .await;
    let b = bin(&server.base_url());
    let out = command(&b, &["agent", "wake", "agent-001"])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(lines
        .iter()
        .any(|l| l["event"] == "run_started" && l["reason"] == "manual"));
    let last = lines.last().unwrap();
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["run"]["status"], "done");
    assert_eq!(last["run"]["summary"], "Nothing contradicts.");
    let runs = command(&b, &["agent", "runs", "agent-001", "--json"])
        .output()
        .await
        .unwrap();
    let v: Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(v["runs"][0]["reason"], "manual");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nbook_agent_wake_with_an_unknown_id_is_a_usage_error_that_changes_nothing() {
    let b = bin("http://127.0.0.1:9/v1");
    let out = command(&b, &["agent", "wake", "agent-042"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("agent-042") && err.contains("fn_list_agents"),
        "{err}"
    );
    let runs = command(&b, &["agent", "runs", "agent-042"])
        .output()
        .await
        .unwrap();
    assert_eq!(runs.status.code(), Some(2));
    let err = String::from_utf8_lossy(&runs.stderr);
    assert!(
        err.contains("agent-042") && err.contains("fn_list_agents"),
        "{err}"
    );
    let c = rusqlite::Connection::open(b.root.join(".nbook/project.sqlite")).unwrap();
    let n: i64 = c
        .query_row("SELECT COUNT(*) FROM nbook_agent_run", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
    assert!(
        std::fs::read_dir(b.root.join(".nbook/agent/sessions"))
            .map(|d| d.count())
            .unwrap_or(0)
            == 0,
        "no session was created"
    );
}
