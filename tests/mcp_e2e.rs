//! End to end with a real MCP client nobody here wrote — the official Python SDK (PyPI `mcp`,
//! installed by `.ci/run`) driven by tests/mcp_client/driver.py — spawning the real
//! `nbook mcp` over stdio, while the real nbook TUI runs in tmux:
//! 1. no TUI open: the `writer` profile's tool list (no plot writes, hints from effects),
//!    `read` works, `write` is refused and changes nothing;
//! 2. the TUI open: `write` → `pending_approval`; `y` in the Approvals pane;
//!    `nbook_await_approval` returns the applied result and the file is on disk;
//! 3. the same with `n` and a reason: an error result carrying the reason, nothing written;
//! 4. a client that declares MCP Tasks (2026 protocol, the SDK's extension interface): the
//!    write becomes a task that says it waits for the author (with the approval id), `y`,
//!    and `tasks/get` completes with the applied result; a read answers without a task;
//! 5. `tasks/cancel` on a waiting task withdraws it from the Approvals pane, nothing written.
//!
//! Needs tmux and python3 with `mcp`. Without them the test is skipped with a message, except
//! under CI (`CI` set), where `.ci/run` installs both and a missing one is a failure.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "tmux_support/mod.rs"]
mod tmux_support;
use tmux_support::{tmux_available, Tmux};

fn python_mcp_available() -> bool {
    Command::new("python3")
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// The Python SDK client, one JSON command per line.
struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Client {
    fn start(home: &Path, project: &Path, extra: &[&str]) -> Client {
        Client::start_with(home, project, extra, false)
    }

    /// `tasks`: the client speaks the 2026 protocol and declares the MCP Tasks extension.
    fn start_with(home: &Path, project: &Path, extra: &[&str], tasks: bool) -> Client {
        let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client/driver.py");
        let mut child = Command::new("python3")
            .arg(driver)
            .arg(env!("CARGO_BIN_EXE_nbook"))
            .args(["mcp", "--project"])
            .arg(project)
            .args(extra)
            .env("NBOOK_HOME", home)
            .env("NBOOK_MCP_TASKS", if tasks { "1" } else { "0" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start python3");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = Client {
            child,
            stdin,
            stdout,
        };
        let ready = c.line();
        assert_eq!(ready["ready"], true, "{ready}");
        assert_eq!(ready["server"], "nbook");
        c
    }

    fn line(&mut self) -> Value {
        let mut s = String::new();
        self.stdout.read_line(&mut s).expect("read the client");
        assert!(!s.is_empty(), "the MCP client ended early");
        serde_json::from_str(&s).unwrap_or_else(|e| panic!("bad line {s:?}: {e}"))
    }

    /// Send a command without waiting for its answer (read it later with [`Client::line`]).
    fn send_only(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, v: Value) -> Value {
        self.send_only(v);
        let r = self.line();
        assert!(r.get("error").is_none(), "client error: {r}");
        r
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.send(json!({"op": "call", "tool": tool, "args": args}))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({"op": "quit"}));
        let _ = self.stdin.flush();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
    }
}

fn init_project(home: &Path, dir: &Path) {
    let ok = Command::new(env!("CARGO_BIN_EXE_nbook"))
        .arg("init")
        .arg(dir)
        .env("NBOOK_HOME", home)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "nbook init");
}

#[test]
fn python_sdk_client_reads_writes_and_waits_for_the_author_in_the_tui() {
    if !tmux_available() || !python_mcp_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "tmux and python3 with `mcp` are required under CI (.ci/run installs them)"
        );
        eprintln!("skipping: tmux or the Python `mcp` package is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = tmp.path().join("book");
    init_project(&home, &dir);

    // 1. No TUI: the writer profile's tools; a read; a refused write.
    {
        let mut c = Client::start(&home, &dir, &["--profile", "writer"]);
        let tools = c.send(json!({"op": "list"}));
        let tools = tools["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert!(
            names.contains(&"read") && names.contains(&"write"),
            "{names:?}"
        );
        assert!(names.contains(&"nbook_await_approval"));
        assert!(
            !names.iter().any(|n| n.starts_with("save_story_")),
            "the writer has no plot writes: {names:?}"
        );
        let tool = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();
        assert_eq!(tool("read")["annotations"]["readOnlyHint"], true);
        assert_eq!(tool("write")["annotations"]["readOnlyHint"], false);
        assert_eq!(tool("write")["annotations"]["destructiveHint"], true);
        assert_eq!(tool("write")["annotations"]["openWorldHint"], false);
        assert_eq!(tool("read")["title"], "Read");
        assert_eq!(tool("read")["inputSchema"]["required"], json!(["path"]));

        let r = c.call("read", json!({"path": "AGENTS.md"}));
        assert_eq!(r["isError"], false, "{r}");
        assert!(r["text"].as_str().unwrap().contains("Instructions"), "{r}");
        let r = c.call("write", json!({"path": "notes/a.md", "content": "no\n"}));
        assert_eq!(r["isError"], true, "{r}");
        assert!(
            r["text"]
                .as_str()
                .unwrap()
                .contains("open the project in nbook to approve"),
            "{r}"
        );
        let r = c.call("read", json!({"path": 7}));
        assert_eq!(r["isError"], true);
        assert_eq!(r["structured"]["details"][0]["pointer"], "/path", "{r}");
        assert!(
            !dir.join("notes/a.md").exists(),
            "a refused call writes nothing"
        );
    }

    // 2. The TUI is open: the write waits for the author, who presses y.
    let cmd = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' '{}'; sleep 30",
        home.display(),
        env!("CARGO_BIN_EXE_nbook"),
        dir.display()
    );
    let t = Tmux::start(&format!("nbook-mcp-e2e-{}", std::process::id()), &cmd);
    let long = Duration::from_secs(60);
    t.wait_for("the TUI", long, |s| s.contains("Approvals"));
    t.wait_for("the attach socket", long, |_| {
        dir.join(".nbook/mcp.sock").exists()
    });
    let mut c = Client::start(&home, &dir, &["--wait-ms", "1500"]);
    let r = c.call(
        "write",
        json!({"path": "notes/a.md", "content": "approved text\n"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structured"]["outcome"], "pending_approval", "{r}");
    // While it waited (1.5 s), the client was told so by progress notifications.
    assert!(
        r["progress"].to_string().contains("the author's decision"),
        "{r}"
    );
    let id = r["structured"]["approvalId"].as_str().unwrap().to_string();
    assert!(!dir.join("notes/a.md").exists());
    let s = t.wait_for("the request in the queue", long, |s| {
        s.contains("notes/a.md")
    });
    assert!(
        s.contains("MCP"),
        "the session is marked as an MCP client: {s}"
    );
    t.keys(&["5"]);
    std::thread::sleep(Duration::from_millis(1500));
    t.keys(&["y"]);
    let r = c.call(
        "nbook_await_approval",
        json!({"approvalId": id, "waitMs": 20000}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structured"]["outcome"], "applied", "{r}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes/a.md")).unwrap(),
        "approved text\n"
    );
    // The result was handed out once.
    let r = c.call(
        "nbook_await_approval",
        json!({"approvalId": id, "waitMs": 100}),
    );
    assert_eq!(r["isError"], true, "{r}");

    // 3. Rejected with a reason.
    let r = c.call("write", json!({"path": "notes/b.md", "content": "nope\n"}));
    assert_eq!(r["structured"]["outcome"], "pending_approval", "{r}");
    let id = r["structured"]["approvalId"].as_str().unwrap().to_string();
    t.wait_for("the second request", long, |s| s.contains("notes/b.md"));
    std::thread::sleep(Duration::from_millis(1500));
    t.keys(&["n"]);
    std::thread::sleep(Duration::from_millis(300));
    t.type_text("not in this chapter");
    t.keys(&["Enter"]);
    let r = c.call(
        "nbook_await_approval",
        json!({"approvalId": id, "waitMs": 20000}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["structured"]["outcome"], "rejected", "{r}");
    assert_eq!(r["structured"]["reason"], "not in this chapter", "{r}");
    assert!(
        !dir.join("notes/b.md").exists(),
        "a rejected call writes nothing"
    );
    drop(c);

    // 4. A client with MCP Tasks: no pending_approval round trip; the task waits.
    let mut c = Client::start_with(&home, &dir, &[], true);
    let r = c.call("read", json!({"path": "AGENTS.md"}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(r.get("taskId").is_none(), "a read answers at once: {r}");
    c.send_only(json!({"op": "call", "tool": "write", "args": {"path": "notes/c.md", "content": "from a task\n"}}));
    t.wait_for("the task's request", long, |s| s.contains("notes/c.md"));
    std::thread::sleep(Duration::from_millis(1500));
    t.keys(&["y"]);
    let r = c.line();
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structured"]["outcome"], "applied", "{r}");
    assert!(r["taskId"].is_string(), "{r}");
    let statuses = r["statuses"].to_string();
    assert!(
        statuses.contains("waiting for the author's approval in nbook (ap-"),
        "the task said it waited, with the approval id: {statuses}"
    );
    assert!(
        statuses.contains("[\"completed\",\"write: applied\"]"),
        "the last status says how it ended: {statuses}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes/c.md")).unwrap(),
        "from a task\n"
    );

    // 5. tasks/cancel withdraws the waiting call: gone from the queue, nothing written.
    let r = c.send(json!({"op": "call", "tool": "write", "args": {"path": "notes/d.md", "content": "never\n"}, "cancelWhenWaiting": true}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        r["text"].as_str().unwrap().contains("task cancelled"),
        "{r}"
    );
    t.wait_for("the withdrawn request to leave the queue", long, |s| {
        !s.contains("notes/d.md")
    });
    assert!(
        !dir.join("notes/d.md").exists(),
        "a cancelled task writes nothing"
    );
    drop(c);
    t.keys(&["q"]);
}
