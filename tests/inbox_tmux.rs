//! The Inbox's new-message form end to end with the real binary in a real terminal (tmux):
//! the demo opens, a durable agent is made headless with `nbook call fn_agent_create`, then
//! in the TUI `6` `I` `c` opens the form, the agent is chosen, the text typed, Enter sends it
//! as the author, and the Inbox shows the sent message (`→ agent-001`) with its detail; the
//! stored message is read back headless (on-heartbeat: it waits unread, `wakeRecipient`
//! false). Every wait polls the screen with a generous timeout (a loaded 2-core machine).
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where a missing tmux is a failure.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

mod tmux_support;
use tmux_support::{skip_without_tmux, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

fn nbook(home: &PathBuf, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env("NBOOK_HOME", home)
        .env_remove("NBOOK_LOG")
        .output()
        .expect("run nbook")
}

#[test]
fn compose_a_message_to_a_durable_agent_and_see_it_in_the_inbox() {
    if skip_without_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir: PathBuf = tmp.path().join("hesta");
    let p = dir.display().to_string();
    let cmd = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' demo --dir '{}'; sleep 30",
        home.display(),
        BIN,
        p
    );
    let t = Tmux::start(&format!("nbook-e2e-inbox-{}", std::process::id()), &cmd);
    let long = Duration::from_secs(60);
    t.wait_for("the demo", long, |s| {
        s.contains("1 Files") && s.contains("6 Board")
    });

    // A durable agent, made headless while the TUI runs (the form reads the agents on open).
    let out = nbook(
        &home,
        &[
            "call",
            "fn_agent_create",
            "--project",
            &p,
            "--profile",
            "heartbeat",
            "--approve",
            "--args",
            r#"{"name": "Continuity", "role": "reviewer", "message_response_mode": "on-heartbeat"}"#,
        ],
    );
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    t.keys(&["6"]);
    t.wait_for("the board", long, |s| s.contains("┏ 6 Board"));
    t.keys(&["I"]);
    t.wait_for("the Inbox", long, |s| s.contains("6 Board · Inbox"));
    t.keys(&["c"]);
    let s = t.wait_for("the form with the agent", long, |s| {
        s.contains("New message") && s.contains("agent-001 · Continuity")
    });
    assert!(
        s.contains("(•) agent-001"),
        "durable agents come first: {s}"
    );
    assert!(
        s.contains("on-heartbeat"),
        "the form says how it reaches it: {s}"
    );
    t.type_text("Please check Magnus's watch in chapter 3.");
    t.wait_for("the text", long, |s| {
        s.contains("Please check Magnus's watch")
    });
    t.keys(&["Enter"]);
    let s = t.wait_for("the sent message in the Inbox", long, |s| {
        s.contains("→ agent-001") && s.contains("from you to agent-001")
    });
    assert!(!s.contains("New message"), "the form closed: {s}");
    assert!(
        s.contains("Please check Magnus's watch in chapter 3."),
        "{s}"
    );

    // Headless: the agent's mail holds it, unread, not woken.
    let db = dir.join(".nbook/project.sqlite");
    let c = rusqlite::Connection::open(&db).unwrap();
    let (from, to, read, meta): (String, String, i64, String) = c
        .query_row(
            "SELECT from_id, to_id, read, metadata FROM nbook_board_message WHERE id = 'msg-000001'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        (from.as_str(), to.as_str(), read),
        ("dashboard", "agent-001", 0)
    );
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    assert_eq!(meta["wakeRecipient"], false, "{meta}");
    t.keys(&["q"]);
}
