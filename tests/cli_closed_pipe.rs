//! A reader that closes stdout early (`nbook call read … | head -2`) ends every subcommand
//! quietly with exit code 141 (128 + SIGPIPE, as a shell reports for `cat`): no panic, no
//! message. Driven through the real binary with its stdout a pipe whose reading end is closed.

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");
const CLOSED_PIPE: i32 = 141;

fn project(tmp: &Path) -> String {
    let root = tmp.join("book");
    nbook::workspace::init::init(&root, Some("Pipe")).expect("init");
    std::fs::write(
        root.join("long.md"),
        // Quotes double in JSON: a 50 KB read window prints as more than a pipe holds.
        (0..5000)
            .map(|_| format!("{}\n", "\"".repeat(100)))
            .collect::<String>(),
    )
    .expect("seed");
    root.display().to_string()
}

/// Run nbook with stdout a pipe; `keep` bytes are read before the reading end is closed
/// (0: closed before nbook writes anything). Returns the exit code and stderr.
fn closed_after(tmp: &Path, args: &[&str], keep: usize) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .env("NBOOK_HOME", tmp.join("home"))
        .env_remove("NBOOK_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn nbook");
    let mut stdout = child.stdout.take().expect("stdout");
    if keep > 0 {
        let mut head = vec![0u8; keep];
        stdout.read_exact(&mut head).expect("the first bytes");
    }
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn assert_quiet(what: &str, (code, stderr): (Option<i32>, String)) {
    assert!(!stderr.contains("panicked"), "{what} panicked: {stderr}");
    assert!(!stderr.contains("Broken pipe"), "{what}: {stderr}");
    assert_eq!(code, Some(CLOSED_PIPE), "{what}: stderr: {stderr}");
}

#[test]
fn a_closed_stdout_ends_every_subcommand_quietly_with_141() {
    let tmp = tempfile::tempdir().expect("tmp");
    let p = project(tmp.path());
    let read = r#"{"path": "long.md"}"#;
    assert_quiet(
        "call read",
        closed_after(
            tmp.path(),
            &["call", "read", "--project", &p, "--args", read],
            0,
        ),
    );
    assert_quiet("tools", closed_after(tmp.path(), &["tools"], 0));
    assert_quiet(
        "tools --json",
        closed_after(tmp.path(), &["tools", "--json"], 0),
    );
    assert_quiet(
        "sessions",
        closed_after(tmp.path(), &["sessions", "--project", &p], 0),
    );
    let init = tmp.path().join("second");
    assert_quiet(
        "init",
        closed_after(tmp.path(), &["init", &init.display().to_string()], 0),
    );
}

#[test]
fn a_reader_that_stops_after_a_few_bytes_ends_call_quietly() {
    let tmp = tempfile::tempdir().expect("tmp");
    let p = project(tmp.path());
    // The read result is far larger than a pipe holds, so nbook is still writing when the
    // reader goes away.
    let read = r#"{"path": "long.md"}"#;
    assert_quiet(
        "call read | head -c 16",
        closed_after(
            tmp.path(),
            &["call", "read", "--project", &p, "--args", read],
            16,
        ),
    );
}

#[test]
fn a_closed_stdout_stops_a_streaming_run_quietly() {
    let tmp = tempfile::tempdir().expect("tmp");
    let p = project(tmp.path());
    let script = tmp.path().join("script.jsonl");
    std::fs::write(
        &script,
        r#"{"text": "Done.", "tool_calls": []}"#.to_string() + "\n",
    )
    .expect("script");
    let s = script.display().to_string();
    assert_quiet(
        "run",
        closed_after(
            tmp.path(),
            &[
                "run",
                "--project",
                &p,
                "--message",
                "hi",
                "--provider",
                "replay",
                "--script",
                &s,
            ],
            0,
        ),
    );
}
