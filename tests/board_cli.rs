//! `nbook board list | show | create` with the real binary on a real project made by
//! `nbook init`, each run with its own `NBOOK_HOME`.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        let env = Env { tmp };
        let out = env.run(&["init", &env.p(), "--title", "Board"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        env
    }

    fn project(&self) -> PathBuf {
        self.tmp.path().join("book")
    }

    fn p(&self) -> String {
        self.project().display().to_string()
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .env("NBOOK_HOME", self.tmp.path().join("home"))
            .env_remove("NBOOK_LOG")
            .current_dir(self.tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap()
    }

    fn board(&self, args: &[&str]) -> Output {
        let p = self.p();
        let mut v = vec!["board"];
        v.extend_from_slice(args);
        v.extend_from_slice(&["--project", &p]);
        self.run(&v)
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn an_empty_board_says_how_to_start() {
    let env = Env::new();
    let out = env.board(&["list"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("nbook board create"),
        "{}",
        stdout(&out)
    );
    let v = json(&env.board(&["list", "--json"]));
    assert_eq!(v["workflow"], "builtin:chapter");
    let names: Vec<&str> = v["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["Planning", "Drafting", "Review", "Done", "Archived"]
    );
}

#[test]
fn create_list_and_show_a_task() {
    let env = Env::new();
    let out = env.board(&[
        "create",
        "Draft chapter 12 from its brief\nKeep Flett's voice.",
        "--priority",
        "high",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Created NB-001"), "{}", stdout(&out));
    let out = env.board(&["create", "Audit act 2", "--depends-on", "NB-001", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["details"]["taskId"], "NB-002");
    // The same description again links to the first task.
    let out = env.board(&[
        "create",
        "draft chapter 12 from its brief  keep flett's voice.",
        "--json",
    ]);
    let v = json(&out);
    assert_eq!(
        (
            v["details"]["taskId"].as_str(),
            v["details"]["wasDuplicate"].as_bool()
        ),
        (Some("NB-001"), Some(true))
    );

    let text = stdout(&env.board(&["list"]));
    assert!(text.contains("Planning (2)"), "{text}");
    assert!(
        text.contains("NB-001")
            && text.contains("0/0")
            && text.contains("Draft chapter 12 from its brief"),
        "{text}"
    );
    let v = json(&env.board(&["list", "--json"]));
    assert_eq!(v["columns"][0]["tasks"][1]["dependencies"][0], "NB-001");

    let out = env.board(&["show", "NB-001"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains("NB-001 — Draft chapter 12 from its brief") && text.contains("priority high"),
        "{text}"
    );
    assert!(text.contains("PROMPT.md: not written yet"), "{text}");
    let v = json(&env.board(&["show", "NB-001", "--json"]));
    assert_eq!(v["task"]["priority"], "high");
    assert_eq!(v["log"][0]["action"], "Task created");
    // The author's create is logged in the author session.
    let log =
        std::fs::read_to_string(env.project().join(".nbook/agent/sessions/author.jsonl")).unwrap();
    assert!(log.contains("fn_task_create"));
}

#[test]
fn bad_input_is_a_clear_error_and_changes_nothing() {
    let env = Env::new();
    let out = env.board(&["show", "NB-404"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no task NB-404"), "{}", stderr(&out));
    let out = env.board(&["create", "x", "--priority", "someday"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown priority"),
        "{}",
        stderr(&out)
    );
    let out = env.board(&["create", "x", "--depends-on", "NB-404"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("NB-404"), "{}", stderr(&out));
    let out = env.board(&["create", "x", "--depends-on", "NB-404", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["details"]["code"], "DEPENDENCY_NOT_FOUND");
    let out = env.board(&["create", "   "]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = json(&env.board(&["list", "--json"]));
    assert!(v["columns"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["tasks"].as_array().unwrap().is_empty()));
}
