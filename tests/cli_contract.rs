//! The CLI contract of DESIGN.md ("CLI contract"): every exit code of `nbook call`, the
//! headless agent run, `nbook tools`, `nbook sessions` and `nbook init`, driven through the
//! real binary on real projects made with `nbook init`. Every run gets its own `NBOOK_HOME`
//! so no user configuration leaks in.
//!
//! Exit codes: 0 ok · 1 tool error · 2 usage/bad args · 3 needs approval · 4 not allowed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

/// A temp folder with an isolated `NBOOK_HOME` and a project `book/` made by `nbook init`.
struct Env {
    tmp: TempDir,
}

impl Env {
    /// An environment with a project at `book/`.
    fn new() -> Env {
        let env = Env::bare();
        let out = env.run(&[
            "init",
            env.project().to_str().unwrap(),
            "--title",
            "Contract",
        ]);
        assert_eq!(code(&out), 0, "nbook init failed: {}", text(&out.stderr));
        assert!(env.project().join("project.yaml").is_file());
        env
    }

    /// An environment without a project.
    fn bare() -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        Env { tmp }
    }

    fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    fn project(&self) -> PathBuf {
        self.tmp.path().join("book")
    }

    fn p(&self) -> String {
        self.project().display().to_string()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env("NBOOK_HOME", self.home())
            .env_remove("NBOOK_LOG")
            .current_dir(self.tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run nbook")
    }

    fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .spawn()
            .expect("spawn nbook");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().expect("wait nbook")
    }

    /// `nbook call TOOL --project <book> [extra…] --args ARGS`.
    fn call(&self, tool: &str, args: &str, extra: &[&str]) -> Output {
        let p = self.p();
        let mut v = vec!["call", tool, "--project", p.as_str()];
        v.extend_from_slice(extra);
        v.extend_from_slice(&["--args", args]);
        self.run(&v)
    }

    fn write_config(&self, toml: &str) {
        let dir = self.project().join(".nbook");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), toml).unwrap();
    }

    /// The author's own config (`NBOOK_HOME/config.toml`): a project config may only tighten
    /// it, so looser presets are set here.
    fn write_global_config(&self, toml: &str) {
        std::fs::write(self.home().join("config.toml"), toml).unwrap();
    }

    fn script(&self, lines: &[Value]) -> PathBuf {
        let path = self.tmp.path().join("script.jsonl");
        let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, body).unwrap();
        path
    }
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("nbook was killed by a signal")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The call result printed on stdout.
fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}\nstderr:\n{}",
            text(&out.stdout),
            text(&out.stderr)
        )
    })
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

fn assert_exit(out: &Output, expected: i32) {
    assert_eq!(code(out), expected, "{}", show(out));
}

fn pointers(result: &Value) -> Vec<(String, String)> {
    result["details"]
        .as_array()
        .unwrap_or_else(|| panic!("no details array in {result}"))
        .iter()
        .map(|d| {
            (
                d["pointer"].as_str().unwrap_or_default().to_string(),
                d["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn write_args(path: &str, content: &str) -> String {
    serde_json::json!({"path": path, "content": content}).to_string()
}

fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

// ----------------------------------------------------------------------------------- exit 0

#[test]
fn read_ok_exits_0_with_the_file_text() {
    let env = Env::new();
    std::fs::write(env.project().join("notes.md"), "first line\nsecond line\n").unwrap();
    let out = env.call("read", r#"{"path":"notes.md"}"#, &[]);
    assert_exit(&out, 0);
    let r = json(&out);
    assert_eq!(r["status"], "ok");
    assert_eq!(r["ok"], true);
    assert_eq!(r["tool"], "read");
    assert!(
        r["content"]
            .as_str()
            .unwrap()
            .contains("first line\nsecond line"),
        "{r}"
    );
    assert_eq!(r["details"]["totalLines"], 2);
}

#[test]
fn approved_write_exits_0_and_writes_the_file() {
    let env = Env::new();
    let out = env.call(
        "write",
        &write_args("chapters/one.md", "It was a dark night.\n"),
        &["--approve"],
    );
    assert_exit(&out, 0);
    let r = json(&out);
    assert_eq!(r["status"], "ok");
    assert_eq!(
        std::fs::read_to_string(env.project().join("chapters/one.md")).unwrap(),
        "It was a dark night.\n"
    );
}

#[test]
fn args_are_read_from_stdin_when_not_given() {
    let env = Env::new();
    std::fs::write(env.project().join("stdin.md"), "from the pipe\n").unwrap();
    let p = env.p();
    let out = env.run_with_stdin(
        &["call", "read", "--project", &p],
        r#"{"path": "stdin.md"}"#,
    );
    assert_exit(&out, 0);
    assert!(json(&out)["content"]
        .as_str()
        .unwrap()
        .contains("from the pipe"));

    // Bad JSON on stdin is a usage error like bad --args.
    let out = env.run_with_stdin(&["call", "read", "--project", &p], "{not json");
    assert_exit(&out, 2);
}

// ----------------------------------------------------------------------------------- exit 1

#[test]
fn rejected_write_exits_1_and_leaves_the_file_absent() {
    let env = Env::new();
    let out = env.call("write", &write_args("rejected.md", "nope\n"), &["--reject"]);
    assert_exit(&out, 1);
    let r = json(&out);
    assert_eq!(r["status"], "rejected");
    assert_eq!(r["ok"], false);
    assert!(
        r["content"].as_str().unwrap().contains("Do not retry"),
        "{r}"
    );
    assert!(!exists(&env.project().join("rejected.md")));
}

#[test]
fn edit_whose_old_text_is_missing_exits_1_and_changes_nothing() {
    let env = Env::new();
    let file = env.project().join("scene.md");
    std::fs::write(&file, "The door was open.\n").unwrap();
    let args = r#"{"path":"scene.md","edits":[{"oldText":"The window","newText":"The gate"}]}"#;
    for extra in [&[][..], &["--approve"][..]] {
        let out = env.call("edit", args, extra);
        assert_exit(&out, 1);
        let r = json(&out);
        assert_eq!(r["status"], "tool_error");
        assert!(r["content"].as_str().unwrap().contains("not found"), "{r}");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "The door was open.\n"
        );
    }
}

#[test]
fn read_of_a_path_escaping_the_project_exits_1() {
    let env = Env::new();
    // The target exists, so a refusal cannot be mistaken for "file not found".
    std::fs::write(env.tmp.path().join("secret.txt"), "outside\n").unwrap();
    let out = env.call("read", r#"{"path":"../secret.txt"}"#, &[]);
    assert_exit(&out, 1);
    let r = json(&out);
    assert_eq!(r["status"], "tool_error");
    let content = r["content"].as_str().unwrap();
    assert!(content.contains("refused"), "{content}");
    assert!(
        !content.contains("outside"),
        "the outside file leaked: {content}"
    );
}

#[test]
fn read_of_a_binary_file_exits_1() {
    let env = Env::new();
    std::fs::write(
        env.project().join("cover.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
    )
    .unwrap();
    let out = env.call("read", r#"{"path":"cover.png"}"#, &[]);
    assert_exit(&out, 1);
    let r = json(&out);
    assert_eq!(r["status"], "tool_error");
    assert!(r["content"].as_str().unwrap().contains("binary"), "{r}");
}

// ----------------------------------------------------------------------------------- exit 2

#[test]
fn unknown_subcommand_flag_exits_2() {
    let env = Env::new();
    let p = env.p();
    let out = env.run(&[
        "call",
        "read",
        "--project",
        &p,
        "--frobnicate",
        "--args",
        "{}",
    ]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("--frobnicate"), "{}", show(&out));
    let out = env.run(&["tools", "--colour"]);
    assert_exit(&out, 2);
}

#[test]
fn invalid_args_json_exits_2() {
    let env = Env::new();
    let out = env.call("read", r#"{"path": "AGENTS.md""#, &[]);
    assert_exit(&out, 2);
    assert!(
        text(&out.stderr).contains("not valid JSON"),
        "{}",
        show(&out)
    );
}

#[test]
fn args_that_are_not_an_object_exit_2() {
    let env = Env::new();
    for args in [r#"["AGENTS.md"]"#, r#""AGENTS.md""#, "42", "null"] {
        let out = env.call("read", args, &[]);
        assert_exit(&out, 2);
        assert!(
            text(&out.stderr).contains("object"),
            "{args}: {}",
            show(&out)
        );
    }
}

#[test]
fn schema_invalid_args_exit_2_and_name_the_json_pointer() {
    let env = Env::new();
    std::fs::write(env.project().join("a.md"), "alpha\n").unwrap();

    // A bad nested field: its pointer.
    let out = env.call(
        "edit",
        r#"{"path":"a.md","edits":[{"oldText":"","newText":"x"}]}"#,
        &[],
    );
    assert_exit(&out, 2);
    let r = json(&out);
    assert_eq!(r["status"], "invalid_args");
    let ptrs = pointers(&r);
    assert!(
        ptrs.iter().any(|(p, _)| p == "/edits/0/oldText"),
        "{ptrs:?}"
    );
    assert!(
        r["content"].as_str().unwrap().contains("/edits/0/oldText"),
        "{r}"
    );

    // A wrong type: its pointer.
    let out = env.call("read", r#"{"path":"a.md","offset":"three"}"#, &[]);
    assert_exit(&out, 2);
    let ptrs = pointers(&json(&out));
    assert!(ptrs.iter().any(|(p, _)| p == "/offset"), "{ptrs:?}");

    // A missing required field: the error names `path` (at /path, or at the root saying so).
    let out = env.call("read", "{}", &[]);
    assert_exit(&out, 2);
    let r = json(&out);
    assert_eq!(r["status"], "invalid_args");
    let ptrs = pointers(&r);
    assert!(
        ptrs.iter()
            .any(|(p, m)| p == "/path" || (p.is_empty() && m.contains("\"path\""))),
        "the missing field is not named: {ptrs:?}"
    );

    // Nothing was written by the invalid edit.
    assert_eq!(
        std::fs::read_to_string(env.project().join("a.md")).unwrap(),
        "alpha\n"
    );
}

#[test]
fn unknown_tool_exits_2() {
    let env = Env::new();
    let out = env.call("teleport", "{}", &[]);
    assert_exit(&out, 2);
    let r = json(&out);
    assert_eq!(r["status"], "unknown_tool");
    assert!(
        r["content"].as_str().unwrap().contains("unknown tool"),
        "{r}"
    );
}

#[test]
fn unknown_profile_exits_2() {
    let env = Env::new();
    let out = env.call(
        "read",
        r#"{"path":"AGENTS.md"}"#,
        &["--profile", "no.such.profile"],
    );
    assert_exit(&out, 2);
    assert!(
        text(&out.stderr).contains("unknown profile"),
        "{}",
        show(&out)
    );
    assert!(
        text(&out.stderr).contains("no.such.profile"),
        "{}",
        show(&out)
    );
}

#[test]
fn bad_mode_exits_2() {
    let env = Env::new();
    let out = env.call("read", r#"{"path":"AGENTS.md"}"#, &["--mode", "yolo"]);
    assert_exit(&out, 2);
    let err = text(&out.stderr);
    assert!(
        err.contains("yolo") && err.contains("normal"),
        "{}",
        show(&out)
    );
}

#[test]
fn a_folder_that_is_not_a_project_exits_2_and_suggests_init() {
    let env = Env::bare();
    let plain = env.tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let out = env.run(&[
        "call",
        "read",
        "--project",
        plain.to_str().unwrap(),
        "--args",
        r#"{"path":"x.md"}"#,
    ]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("nbook init"), "{}", show(&out));
    assert!(
        !plain.join(".nbook").exists(),
        "a plain folder was turned into a project"
    );

    let missing = env.tmp.path().join("missing");
    let out = env.run(&[
        "call",
        "read",
        "--project",
        missing.to_str().unwrap(),
        "--args",
        r#"{"path":"x.md"}"#,
    ]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("nbook init"), "{}", show(&out));
}

#[test]
fn init_twice_exits_2() {
    let env = Env::new();
    let yaml = std::fs::read(env.project().join("project.yaml")).unwrap();
    let p = env.p();
    let out = env.run(&["init", &p, "--title", "Other"]);
    assert_exit(&out, 2);
    assert!(
        text(&out.stderr).contains("already a project"),
        "{}",
        show(&out)
    );
    assert_eq!(
        std::fs::read(env.project().join("project.yaml")).unwrap(),
        yaml
    );
}

// ----------------------------------------------------------------------------------- exit 3

#[test]
fn write_without_a_flag_exits_3_changes_nothing_and_previews_the_diff() {
    let env = Env::new();
    let out = env.call(
        "write",
        &write_args("draft.md", "Chapter one\nbegins here\n"),
        &[],
    );
    assert_exit(&out, 3);
    let r = json(&out);
    assert_eq!(r["status"], "needs_approval");
    assert!(!exists(&env.project().join("draft.md")));
    let change = &r["preview"]["body"]["changes"][0];
    assert_eq!(r["preview"]["body"]["kind"], "files", "{r}");
    assert_eq!(change["path"], "draft.md");
    assert_eq!(change["kind"], "add");
    let diff = change["diff"].as_str().unwrap();
    assert!(diff.contains("+++ b/draft.md"), "{diff}");
    assert!(
        diff.contains("+Chapter one") && diff.contains("+begins here"),
        "{diff}"
    );

    // Overwriting an existing file shows both sides and still changes nothing.
    std::fs::write(env.project().join("draft.md"), "old text\n").unwrap();
    let out = env.call("write", &write_args("draft.md", "new text\n"), &[]);
    assert_exit(&out, 3);
    let diff = json(&out)["preview"]["body"]["changes"][0]["diff"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        diff.contains("-old text") && diff.contains("+new text"),
        "{diff}"
    );
    assert_eq!(
        std::fs::read_to_string(env.project().join("draft.md")).unwrap(),
        "old text\n"
    );
}

#[test]
fn plan_mode_exempts_plan_files_only() {
    let env = Env::new();
    let out = env.call(
        "write",
        &write_args(".agent/plan/x.md", "# Plan\n"),
        &["--mode", "plan"],
    );
    assert_exit(&out, 0);
    assert_eq!(
        std::fs::read_to_string(env.project().join(".agent/plan/x.md")).unwrap(),
        "# Plan\n"
    );

    let out = env.call(
        "write",
        &write_args("notes.md", "not a plan\n"),
        &["--mode", "plan"],
    );
    assert_exit(&out, 3);
    assert!(!exists(&env.project().join("notes.md")));

    // Only Markdown under .agent/plan/ is exempt, and only in plan mode.
    let out = env.call(
        "write",
        &write_args(".agent/plan/x.txt", "x\n"),
        &["--mode", "plan"],
    );
    assert_exit(&out, 3);
    let out = env.call(
        "write",
        &write_args(".agent/plan/y.md", "y\n"),
        &["--mode", "discuss"],
    );
    assert_exit(&out, 3);
    assert!(!exists(&env.project().join(".agent/plan/y.md")));
}

#[test]
fn plan_mode_exemption_does_not_follow_symlinks_out_of_the_plan_folder() {
    let env = Env::new();
    std::os::unix::fs::symlink(
        env.project().join("manuscript"),
        env.project().join(".agent/plan/ms"),
    )
    .unwrap();
    let out = env.call(
        "write",
        &write_args(".agent/plan/ms/chapter.md", "sneaky\n"),
        &["--mode", "plan"],
    );
    assert!(
        !exists(&env.project().join("manuscript/chapter.md")),
        "plan mode wrote into manuscript/ without approval: {}",
        show(&out)
    );
    assert_exit(&out, 3);
}

// ----------------------------------------------------------------------------------- exit 4

#[test]
fn tool_outside_the_profile_allowlist_exits_4() {
    let env = Env::new();
    let out = env.call(
        "write",
        &write_args("r.md", "x\n"),
        &["--profile", "retrieval", "--approve"],
    );
    assert_exit(&out, 4);
    let r = json(&out);
    assert_eq!(r["status"], "not_allowed");
    assert_eq!(
        r["content"],
        "tool write is not allowed for profile retrieval"
    );
    assert!(text(&out.stderr).contains("tool write is not allowed for profile retrieval"));
    assert!(!exists(&env.project().join("r.md")));

    // The same profile may read.
    let out = env.call(
        "read",
        r#"{"path":"AGENTS.md"}"#,
        &["--profile", "retrieval"],
    );
    assert_exit(&out, 0);
}

// ------------------------------------------------------------------------------ approval config

#[test]
fn locked_preset_refuses_writes() {
    let env = Env::new();
    env.write_config("[approval]\npreset = \"locked\"\n");
    for extra in [&[][..], &["--approve"][..]] {
        let out = env.call("write", &write_args("locked.md", "x\n"), extra);
        assert_exit(&out, 1);
        let r = json(&out);
        assert_eq!(r["status"], "refused", "{r}");
        assert!(r["content"].as_str().unwrap().contains("locked"), "{r}");
        assert!(!exists(&env.project().join("locked.md")));
    }
    // Reads still work.
    assert_exit(&env.call("read", r#"{"path":"AGENTS.md"}"#, &[]), 0);
}

#[test]
fn neurobook_preset_runs_writes_in_normal_mode_and_asks_in_discuss() {
    let env = Env::new();
    env.write_global_config("[approval]\npreset = \"neurobook\"\n");
    let out = env.call("write", &write_args("nb.md", "runs at once\n"), &[]);
    assert_exit(&out, 0);
    assert_eq!(
        std::fs::read_to_string(env.project().join("nb.md")).unwrap(),
        "runs at once\n"
    );

    let out = env.call(
        "write",
        &write_args("nb2.md", "held\n"),
        &["--mode", "discuss"],
    );
    assert_exit(&out, 3);
    assert!(!exists(&env.project().join("nb2.md")));
}

#[test]
fn tool_rule_deny_refuses_bash() {
    let env = Env::new();
    env.write_config("[approval.tools]\nbash = \"deny\"\n");
    let out = env.call("bash", r#"{"command":"touch denied.txt"}"#, &["--approve"]);
    assert_exit(&out, 1);
    let r = json(&out);
    assert_eq!(r["status"], "refused", "{r}");
    assert!(r["content"].as_str().unwrap().contains("deny"), "{r}");
    assert!(!exists(&env.project().join("denied.txt")));

    // Writes keep the preset's rule (supervised: ask).
    assert_exit(&env.call("write", &write_args("w.md", "x\n"), &[]), 3);
}

#[test]
fn a_bad_project_config_is_a_usage_error_naming_the_file() {
    let env = Env::new();
    env.write_config("[approval]\npreset = \"yolo\"\n");
    let out = env.call("read", r#"{"path":"AGENTS.md"}"#, &[]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("config.toml"), "{}", show(&out));
}

// ---------------------------------------------------------------------------------- nbook tools

fn tool_rows(out: &Output) -> Vec<Value> {
    json(out)
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {}", show(out)))
        .clone()
}

fn row<'a>(rows: &'a [Value], name: &str) -> Option<&'a Value> {
    rows.iter().find(|r| r["name"] == name)
}

#[test]
fn tools_json_lists_tools_with_their_mutation_flag() {
    let env = Env::bare();
    let out = env.run(&["tools", "--json"]);
    assert_exit(&out, 0);
    let rows = tool_rows(&out);
    let read = row(&rows, "read").expect("read is listed");
    assert_eq!(read["mutates"], "no");
    assert_eq!(read["group"], "files");
    let write = row(&rows, "write").expect("write is listed");
    assert_eq!(write["mutates"], "yes");
    for t in ["edit", "apply_patch", "bash"] {
        assert_eq!(
            row(&rows, t).unwrap_or_else(|| panic!("{t} listed"))["mutates"],
            "yes",
            "{t}"
        );
    }
    let users: Vec<&str> = write["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        users.contains(&"leader.default") && users.contains(&"writer"),
        "{users:?}"
    );
    assert!(!users.contains(&"retrieval"), "{users:?}");
}

#[test]
fn tools_for_the_writer_profile_exclude_apply_patch() {
    let env = Env::bare();
    let out = env.run(&["tools", "--profile", "writer", "--json"]);
    assert_exit(&out, 0);
    let rows = tool_rows(&out);
    assert!(
        row(&rows, "apply_patch").is_none(),
        "writer must not get apply_patch"
    );
    assert!(row(&rows, "write").is_some() && row(&rows, "read").is_some());

    let out = env.run(&["tools", "--profile", "nobody", "--json"]);
    assert_exit(&out, 2);
}

#[test]
fn a_malformed_project_profile_is_a_warning_not_a_failure() {
    let env = Env::new();
    let dir = env.project().join(".nbook/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.toml"), "key = \"bad\"\nname = 3\n").unwrap();
    let p = env.p();
    let out = env.run(&["tools", "--project", &p]);
    assert_exit(&out, 0);
    let err = text(&out.stderr);
    assert!(
        err.contains("warning") && err.contains("bad.toml"),
        "{}",
        show(&out)
    );
    assert!(text(&out.stdout).contains("read"), "{}", show(&out));

    // The engine-backed commands warn the same way and keep working.
    let out = env.call("read", r#"{"path":"AGENTS.md"}"#, &[]);
    assert_exit(&out, 0);
    assert!(text(&out.stderr).contains("bad.toml"), "{}", show(&out));
}

// ------------------------------------------------------------------------------ run + sessions

fn write_script(env: &Env, path: &str) -> PathBuf {
    env.script(&[
        serde_json::json!({
            "text": "Let me write that down.",
            "tool_calls": [{"name": "write", "arguments": {"path": path, "content": "Written by the run.\n"}}]
        }),
        serde_json::json!({"text": "Done: the note is written."}),
    ])
}

fn run_agent(env: &Env, script: &Path, flag: Option<&str>) -> Output {
    let p = env.p();
    let s = script.display().to_string();
    let mut args = vec![
        "run",
        "--project",
        &p,
        "--profile",
        "leader.default",
        "--message",
        "m",
        "--provider",
        "replay",
        "--script",
        &s,
    ];
    args.extend(flag);
    env.run(&args)
}

/// The JSON lines `nbook run` printed; every line must be JSON.
fn events(out: &Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

fn finished(out: &Output) -> Value {
    let evs = events(out);
    let last = evs
        .last()
        .unwrap_or_else(|| panic!("no events: {}", show(out)))
        .clone();
    assert_eq!(last["event"], "run_finished", "{}", show(out));
    last
}

#[test]
fn run_with_approve_all_writes_and_reports_run_finished() {
    let env = Env::new();
    let script = write_script(&env, "notes/run.md");
    let out = run_agent(&env, &script, Some("--approve-all"));
    assert_exit(&out, 0);
    assert_eq!(
        std::fs::read_to_string(env.project().join("notes/run.md")).unwrap(),
        "Written by the run.\n"
    );
    let evs = events(&out);
    assert!(
        evs.iter().any(|e| e["event"] == "files_changed"),
        "{}",
        show(&out)
    );
    let done = finished(&out);
    assert_eq!(done["outcome"]["tool_calls"], 1);
    assert_eq!(done["outcome"]["needed_approval"], 0);
    assert_eq!(done["outcome"]["final_text"], "Done: the note is written.");
    let sid = done["session_id"].as_str().expect("session id").to_string();

    let p = env.p();
    let out = env.run(&["sessions", "--project", &p, "--json"]);
    assert_exit(&out, 0);
    let list = json(&out);
    let s = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == sid.as_str())
        .unwrap_or_else(|| panic!("session {sid} not listed: {list}"));
    assert_eq!(s["profile"], "leader.default");
    assert_eq!(s["title"], "m");
    assert_eq!(s["state"], "idle");
}

#[test]
fn run_with_reject_all_leaves_the_file_absent() {
    let env = Env::new();
    let script = write_script(&env, "notes/rejected.md");
    let out = run_agent(&env, &script, Some("--reject-all"));
    assert_eq!(finished(&out)["outcome"]["tool_calls"], 1);
    assert!(matches!(code(&out), 0 | 1), "{}", show(&out));
    assert!(!exists(&env.project().join("notes/rejected.md")));
    assert!(!exists(&env.project().join("notes")));
    // The agent was told it was rejected.
    assert!(text(&out.stdout).contains("rejected"), "{}", show(&out));
}

#[test]
fn run_without_a_decision_flag_exits_3_and_leaves_the_file_absent() {
    let env = Env::new();
    let script = write_script(&env, "notes/held.md");
    let out = run_agent(&env, &script, None);
    assert_exit(&out, 3);
    assert_eq!(finished(&out)["outcome"]["needed_approval"], 1);
    assert!(!exists(&env.project().join("notes/held.md")));
}

#[test]
fn run_with_replay_but_no_script_exits_2() {
    let env = Env::new();
    let p = env.p();
    let out = env.run(&[
        "run",
        "--project",
        &p,
        "--profile",
        "leader.default",
        "--message",
        "m",
        "--provider",
        "replay",
    ]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("--script"), "{}", show(&out));
    // Nothing was started.
    let out = env.run(&["sessions", "--project", &p, "--json"]);
    assert_exit(&out, 0);
    assert_eq!(json(&out), serde_json::json!([]));
}

#[test]
fn run_with_an_unknown_profile_exits_2() {
    let env = Env::new();
    let script = write_script(&env, "x.md");
    let p = env.p();
    let s = script.display().to_string();
    let out = env.run(&[
        "run",
        "--project",
        &p,
        "--profile",
        "ghost",
        "--message",
        "m",
        "--provider",
        "replay",
        "--script",
        &s,
    ]);
    assert_exit(&out, 2);
    assert!(
        text(&out.stderr).contains("unknown profile"),
        "{}",
        show(&out)
    );
}

#[test]
fn sessions_of_a_fresh_project_is_an_empty_list() {
    let env = Env::new();
    let p = env.p();
    let out = env.run(&["sessions", "--project", &p, "--json"]);
    assert_exit(&out, 0);
    assert_eq!(json(&out), serde_json::json!([]));
}
