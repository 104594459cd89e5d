//! End to end with the real binary in tmux: the demo's first proposal (a `write` of a new
//! lorebook entry) waits; the author quits; reopening the project shows the call still
//! waiting (marked as having waited across the restart), `y` applies it, and the session
//! records the result and says it waits for a model (none is configured here).
//!
//! Needs tmux (skipped with a message without it, a failure under CI).

use std::path::PathBuf;
use std::time::Duration;

#[allow(dead_code)] // the shared driver has keys this test does not use
mod tmux_support;
use tmux_support::{skip_without_tmux, Tmux};

fn quit(t: &Tmux, long: Duration) {
    std::thread::sleep(Duration::from_millis(500));
    t.keys(&["q"]);
    t.wait_for("the quit dialog", long, |s| s.contains("Quit nbook?"));
    let s = t.screen();
    assert!(
        s.contains("they stay queued and wait again"),
        "the dialog must say the call keeps waiting:\n{s}"
    );
    t.keys(&["y"]);
}

#[test]
fn a_call_pending_at_quit_still_waits_after_reopening_and_y_applies_it() {
    if skip_without_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir: PathBuf = tmp.path().join("hesta");
    let bin = env!("CARGO_BIN_EXE_nbook");
    let long = Duration::from_secs(60);
    let entry = dir.join("lorebook/item/flett-watch/index.md");
    let pending = dir.join(".nbook/agent/pending");

    let cmd = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' demo --dir '{}'; echo nbook-exited; sleep 30",
        home.display(),
        bin,
        dir.display()
    );
    let name = format!("nbook-restart-{}", std::process::id());
    let t = Tmux::start(&name, &cmd);
    t.wait_for("the write request", long, |s| s.contains("flett-watch"));
    quit(&t, long);
    t.wait_for("the demo to exit", long, |s| s.contains("nbook-exited"));
    drop(t);
    assert!(!entry.exists(), "nothing may run while the call waits");
    let kept: Vec<_> = std::fs::read_dir(&pending).unwrap().flatten().collect();
    assert_eq!(kept.len(), 1, "the waiting call is kept on disk");

    let cmd = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' '{}'; echo nbook-exited; sleep 30",
        home.display(),
        bin,
        dir.display()
    );
    let t = Tmux::start(&format!("{name}-2"), &cmd);
    t.wait_for("the TUI", long, |s| s.contains("Approvals (1)"));
    t.keys(&["5"]);
    let s = t.wait_for("the restored call", long, |s| {
        s.contains("waited across a restart") && s.contains("flett-watch")
    });
    assert!(s.contains("its target is unchanged"), "{s}");
    // The typing guard (1 s after a key) must pass before `y` counts.
    std::thread::sleep(Duration::from_millis(1300));
    t.keys(&["y"]);
    t.wait_for("the entry on disk", long, |_| entry.exists());
    let log_path = dir.join(".nbook/agent/sessions/1.jsonl");
    t.wait_for(
        "the session to record that it waits for a model",
        long,
        |_| std::fs::read_to_string(&log_path).is_ok_and(|l| l.contains("waits for a model")),
    );
    t.keys(&["4"]);
    t.wait_for("the transcript to say so", long, |s| {
        s.contains("· waiting:")
    });
    assert!(std::fs::read_dir(&pending).unwrap().next().is_none());
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("\"decision\":\"approve\""), "{log}");
    assert!(!log.contains("\"decision\":\"interrupted\""), "{log}");
    let text = std::fs::read_to_string(&entry).unwrap();
    assert!(text.contains("Magnus Flett's watch"), "{text}");
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));
    if t.screen().contains("Quit nbook?") {
        t.keys(&["y"]);
    }
    t.wait_for("nbook to exit", long, |s| s.contains("nbook-exited"));
}
