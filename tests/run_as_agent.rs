//! `nbook run --agent agent-<n>` with the real binary on a real project (the durable agent
//! made by the author through the engine): the run's session runs as the agent (its role's
//! profile, `board.agent`, the agent shown by `nbook sessions`), an unknown or malformed id is
//! a usage error that says how to list the agents and starts nothing, and `--agent` with
//! `--profile` is refused.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        nbook::workspace::init::init(&tmp.path().join("book"), Some("Book")).unwrap();
        Env { tmp }
    }

    fn project(&self) -> PathBuf {
        self.tmp.path().join("book")
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .env("NBOOK_HOME", self.tmp.path().join("home"))
            .env_remove("NBOOK_LOG")
            .current_dir(self.tmp.path())
            .stdin(Stdio::null())
            .output()
            .expect("run nbook")
    }

    /// The author creates a durable agent through the engine (as the TUI does).
    fn agent(&self, name: &str, role: &str) -> String {
        let dirs = nbook::config::Dirs {
            config: self.tmp.path().join("engine-home"),
            data: self.tmp.path().join("engine-home/data"),
            logs: self.tmp.path().join("engine-home/logs"),
        };
        let engine = std::sync::Arc::new(
            nbook::engine::Engine::open(
                nbook::workspace::Workspace::open(&self.project()).unwrap(),
                nbook::config::Config::default(),
                &dirs,
                nbook::tools::registry().unwrap(),
            )
            .unwrap(),
        );
        let rt = tokio::runtime::Runtime::new().unwrap();
        let r = rt.block_on(engine.author_call(
            "fn_agent_create",
            json!({"name": name, "role": role, "soul": "You guard the continuity."}),
            None,
        ));
        assert!(r.ok, "{}", r.content);
        r.details.unwrap()["agentId"].as_str().unwrap().to_string()
    }

    fn script(&self) -> String {
        let path = self.tmp.path().join("script.jsonl");
        std::fs::write(
            &path,
            format!("{}\n", json!({"text": "Checked: nothing contradicts."})),
        )
        .unwrap();
        path.display().to_string()
    }

    fn sessions(&self) -> Value {
        let p = self.project().display().to_string();
        let out = self.run(&["sessions", "--project", &p, "--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_run_as_a_durable_agent_uses_its_profile_and_is_marked() {
    let env = Env::new();
    let a = env.agent("Continuity", "reviewer");
    let p = env.project().display().to_string();
    let s = env.script();
    let out = env.run(&[
        "run",
        "--project",
        &p,
        "--agent",
        &a,
        "--message",
        "Check chapter 2",
        "--provider",
        "replay",
        "--script",
        &s,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let last: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .unwrap();
    assert_eq!(last["event"], "run_finished");
    let sid = last["session_id"].as_str().unwrap().to_string();
    let list = env.sessions();
    let me = list
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == json!(sid))
        .unwrap_or_else(|| panic!("{sid} in {list}"));
    assert_eq!(me["profile"], "reviewer", "its role's profile: {me}");
    assert_eq!(me["agent"], json!(a), "{me}");
}

#[test]
fn an_unknown_agent_is_a_usage_error_that_says_how_to_list_them() {
    let env = Env::new();
    let p = env.project().display().to_string();
    let s = env.script();
    for id in ["agent-042", "writer"] {
        let out = env.run(&[
            "run",
            "--project",
            &p,
            "--agent",
            id,
            "--message",
            "m",
            "--provider",
            "replay",
            "--script",
            &s,
        ]);
        assert_eq!(out.status.code(), Some(2), "{id}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("fn_list_agents"), "{id}: {err}");
        assert!(err.contains(id), "{id}: {err}");
    }
    assert_eq!(env.sessions(), json!([]), "nothing was started");
}

#[test]
fn agent_and_profile_together_are_refused() {
    let env = Env::new();
    let a = env.agent("Continuity", "reviewer");
    let p = env.project().display().to_string();
    let s = env.script();
    let before = env.sessions();
    let out = env.run(&[
        "run",
        "--project",
        &p,
        "--agent",
        &a,
        "--profile",
        "writer",
        "--message",
        "m",
        "--provider",
        "replay",
        "--script",
        &s,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--agent") && err.contains("--profile"),
        "the error names both: {err}"
    );
    assert_eq!(env.sessions(), before, "nothing was started");
}
