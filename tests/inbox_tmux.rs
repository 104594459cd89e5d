//! The Inbox's new-message form end to end with the real binary in a real terminal (tmux):
//! the demo opens, a durable agent is made headless with `nbook call fn_agent_create`, then
//! in the TUI `6` `I` `c` opens the form, the agent is chosen, the text typed, Enter sends it
//! as the author, and the Inbox shows the sent message (`→ agent-001`) with its detail; the
//! stored message is read back headless (on-heartbeat: it waits unread, `wakeRecipient`
//! false). Then `N` makes a chat room (a name with a space, the agent picked with Space),
//! the Inbox lists it, `p` posts in it and the post shows as the room's newest. Every wait polls the screen with a generous timeout (a loaded 2-core machine).
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

    // A chat room: `N`, its name (with a space), Tab to the members, Space picks the first.
    t.keys(&["N"]);
    t.wait_for("the new-room form with its members", long, |s| {
        s.contains("New chat room") && s.contains("[ ] agent-001")
    });
    t.type_text("Night desk");
    t.wait_for("the name", long, |s| s.contains("Night desk"));
    t.keys(&["Tab"]);
    t.keys(&["Space"]);
    t.wait_for("the member picked", long, |s| s.contains("[x] agent-001"));
    t.keys(&["Enter"]);
    t.wait_for("the room under the mail", long, |s| {
        !s.contains("New chat room") && s.contains("# Night desk (agent-001)")
    });
    // `p` offers it; the post shows as the room's newest.
    t.keys(&["p"]);
    t.wait_for("the room-post form", long, |s| {
        s.contains("Post in a room") && s.contains("Night desk")
    });
    t.type_text("Fog");
    t.wait_for("the post's text", long, |s| s.contains("Fog"));
    t.keys(&["Enter"]);
    t.wait_for("the post under the mail", long, |s| {
        s.contains("# Night desk (agent-001) · you: Fog")
    });
    let (room, member): (String, String) = c
        .query_row(
            "SELECT r.name, m.agent_id FROM nbook_board_room r JOIN nbook_board_room_member m ON m.room_id = r.id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (room.as_str(), member.as_str()),
        ("Night desk", "agent-001")
    );
    t.keys(&["q"]);
}
