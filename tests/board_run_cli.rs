//! `nbook board run --once --json` with the real binary, a real project and a real HTTP model
//! server speaking the OpenAI wire format (tests/provider_support): the scheduler's events as
//! JSON lines, a task taken from Planning to the merger with the models of config.toml, and a
//! call that needs the author reported as waiting (exit 3) with nothing changed.

mod provider_support;

use std::path::{Path, PathBuf};

use provider_support::*;
use serde_json::{json, Value};

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

/// A model reply that is one tool call.
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

/// A model reply that is text only (the run ends).
fn text(t: &str) -> Reply {
    Reply::data(&[chunk(json!({"content": t}), Some("stop")), "[DONE]".into()])
}

fn plan(id: &str) -> String {
    format!(
        "# Task: {id} — Draft chapter 12\n\n## Mission\nDraft chapter 12.\n\n## Steps\n### Step 0: Preflight\n### Step 1: Draft it\n\n## File Scope\n- manuscript/012-chapter.md\n\n## Acceptance Criteria\n- Done.\n"
    )
}

struct Cli {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
}

/// A project and a config.toml whose default model is served by `base_url`; `rules` are
/// `[approval.tools]` lines.
fn cli(base_url: &str, rules: &str) -> Cli {
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
             [defaults]\nmodel = \"small\"\n\
             [approval.tools]\n{rules}\n"
        ),
    )
    .unwrap();
    Cli {
        _tmp: tmp,
        home,
        root,
    }
}

async fn nbook(c: &Cli, args: &[&str], project: &Path) -> std::process::Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_nbook"))
        .args(args)
        .arg("--project")
        .arg(project)
        .env("NBOOK_HOME", &c.home)
        .env_remove("NBOOK_LOG")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap()
}

fn lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The coordination calls allowed: triage plans, the scheduler promotes, the executor
/// finishes, the reviewer approves, and the merger (no merge gate on this branch) ends
/// without merging — the task parks for the author and the run ends idle (exit 0).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn board_run_once_takes_a_task_through_its_stages_and_prints_json_lines() {
    let server = Server::start(vec![
        tool_call(
            "c1",
            "fn_task_prompt_write",
            &json!({"content": plan("NB-001")}),
        ),
        text("Planned."),
        tool_call("c2", "fn_task_done", &json!({"summary": "Drafted."})),
        text("APPROVE\nReads well."),
        text("No merge tool here."),
    ])
    .await;
    let c = cli(
        &server.base_url(),
        "fn_task_prompt_write = \"allow\"\nfn_task_done = \"allow\"",
    );
    let root = c.root.clone();
    let out = nbook(&c, &["board", "create", "Draft chapter 12"], &root).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = nbook(&c, &["board", "run", "--once", "--json"], &root).await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let events = lines(&out);
    let kinds: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["event"] == "session_started")
        .map(|e| {
            (
                e["task"].as_str().unwrap().to_string(),
                e["role"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("NB-001".to_string(), "triage".to_string()),
            ("NB-001".to_string(), "executor".to_string()),
            ("NB-001".to_string(), "reviewer".to_string()),
            ("NB-001".to_string(), "merger".to_string()),
        ],
        "{events:#?}"
    );
    let moved: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["event"] == "task_moved")
        .map(|e| {
            (
                e["column"].as_str().unwrap().to_string(),
                e["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        moved,
        [
            ("drafting".to_string(), "".to_string()),
            ("review".to_string(), "approved".to_string()),
            ("review".to_string(), "needs-author".to_string()),
        ]
    );
    let last = events.last().unwrap();
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["reason"], "idle");
    assert_eq!(last["limit"], 2);
    assert_eq!(last["waiting"], json!([]));
    assert_eq!(last["tasks"][0]["id"], "NB-001");
    assert_eq!(last["tasks"][0]["column"], "review");
    assert_eq!(last["tasks"][0]["progress"], "2/2");
    assert_eq!(server.requests().len(), 5);
}

/// Under `supervised` with no rules, triage's plan write needs the author: the run stops
/// there, reports the waiting call (task, session, tool, approval id) and exits 3; the task
/// is unchanged (still unplanned in Planning).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn board_run_once_reports_a_call_waiting_for_the_author_and_exits_3() {
    let server = Server::start(vec![tool_call(
        "c1",
        "fn_task_prompt_write",
        &json!({"content": plan("NB-001")}),
    )])
    .await;
    let c = cli(&server.base_url(), "");
    let root = c.root.clone();
    let out = nbook(&c, &["board", "create", "Draft chapter 12"], &root).await;
    assert_eq!(out.status.code(), Some(0));

    let out = nbook(&c, &["board", "run", "--once", "--json"], &root).await;
    assert_eq!(
        out.status.code(),
        Some(3),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = lines(&out);
    let waiting = events
        .iter()
        .find(|e| e["event"] == "approval_waiting")
        .expect("the waiting call is reported as it starts waiting");
    assert_eq!(waiting["task"], "NB-001");
    assert_eq!(waiting["tool"], "fn_task_prompt_write");
    assert_eq!(waiting["role"], "triage");
    let last = events.last().unwrap();
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["reason"], "waiting_for_author");
    assert_eq!(last["waiting"][0]["tool"], "fn_task_prompt_write");
    assert_eq!(last["waiting"][0]["sessionId"], waiting["sessionId"]);
    assert_eq!(last["tasks"][0]["column"], "planning");
    assert_eq!(last["tasks"][0]["progress"], "0/0");

    // Human output says what to do next.
    let server2 = Server::start(vec![tool_call(
        "c1",
        "fn_task_prompt_write",
        &json!({"content": plan("NB-001")}),
    )])
    .await;
    let c2 = cli(&server2.base_url(), "");
    let root2 = c2.root.clone();
    nbook(&c2, &["board", "create", "Draft chapter 12"], &root2).await;
    let out = nbook(&c2, &["board", "run", "--once"], &root2).await;
    assert_eq!(out.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("NB-001: triage session")
            && stdout.contains("waits for your approval of fn_task_prompt_write")
            && stdout.contains("Open the project in nbook"),
        "{stdout}"
    );
}

/// A project without a model for the role: no session starts, the run says why once and
/// ends idle, and the task is unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn board_run_once_without_a_model_says_why_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let c = Cli {
        _tmp: tmp,
        home,
        root: root.clone(),
    };
    nbook(&c, &["board", "create", "Draft chapter 12"], &root).await;
    let out = nbook(&c, &["board", "run", "--once", "--json"], &root).await;
    assert_eq!(out.status.code(), Some(0));
    let events = lines(&out);
    let problems: Vec<&Value> = events.iter().filter(|e| e["event"] == "problem").collect();
    assert_eq!(problems.len(), 1, "{events:#?}");
    assert_eq!(problems[0]["task"], "NB-001");
    let msg = problems[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("no triage session") && msg.contains("model"),
        "{msg}"
    );
    assert!(events
        .iter()
        .all(|e| e["event"] != "session_started" && e["event"] != "task_moved"));
    let last = events.last().unwrap();
    assert_eq!(last["reason"], "idle");
    assert_eq!(last["tasks"][0]["column"], "planning");
    assert_eq!(last["tasks"][0]["status"], "");
}
