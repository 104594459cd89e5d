//! End to end with the real binary in a real terminal (tmux): in the demo, approve the write
//! and the edit of chapter 3, open the History (`H` in Approvals), `u` on the edit shows its
//! reverse preview, `y` reverts it — chapter 3 is byte for byte what it was before the edit,
//! the revert is logged in the author's session, and the History lists it first.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set).

use std::path::PathBuf;
use std::time::Duration;

// Shared with the other tmux tests; this one types no text.
#[allow(dead_code)]
mod tmux_support;
use tmux_support::{skip_without_tmux, Tmux};

#[test]
fn approve_in_the_demo_then_undo_from_the_history_restores_the_file() {
    if skip_without_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir: PathBuf = tmp.path().join("hesta");
    let bin = env!("CARGO_BIN_EXE_nbook");
    let cmd = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' demo --dir '{}'; sleep 30",
        home.display(),
        bin,
        dir.display()
    );
    let t = Tmux::start(&format!("nbook-undo-{}", std::process::id()), &cmd);
    let long = Duration::from_secs(60);
    let ch3 = dir.join("manuscript/001-volume/003-chapter/index.md");

    t.wait_for("the write request", long, |s| s.contains("flett-watch"));
    let before = std::fs::read(&ch3).expect("the demo's chapter 3");
    t.keys(&["5"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["y"]);
    t.wait_for("the edit request", long, |s| s.contains("003-chapter"));
    std::thread::sleep(Duration::from_millis(1500));
    t.keys(&["y"]);
    t.wait_for("the edit on disk", long, |_| {
        std::fs::read(&ch3).is_ok_and(|now| now != before)
    });

    // The history: the edit is the newest change; its applied diff is beside the list.
    std::thread::sleep(Duration::from_millis(1500));
    t.keys(&["H"]);
    let s = t.wait_for("the history", long, |s| {
        s.contains("History — every applied change") && s.contains("#2")
    });
    assert!(s.contains("003-chapter"), "{s}");
    t.keys(&["u"]);
    t.wait_for("the reverse preview", long, |s| {
        s.contains("Revert #2?") && s.contains("revert exactly this")
    });
    t.keys(&["y"]);
    t.wait_for("the restored chapter", long, |_| {
        std::fs::read(&ch3).is_ok_and(|now| now == before)
    });
    let s = t.wait_for("the revert in the list", long, |s| {
        s.contains("revert_change")
    });
    assert!(
        s.contains("↩#3 edit"),
        "the edit is marked reverted by #3: {s}"
    );

    t.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(500));
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));
    if t.screen().contains("Quit") {
        t.keys(&["y"]);
    }
    t.wait_for("the program to exit", long, |s| {
        s.contains("The demo project is at") || !t.alive()
    });
    assert_eq!(std::fs::read(&ch3).unwrap(), before);
    let author = std::fs::read_to_string(dir.join(".nbook/agent/sessions/author.jsonl")).unwrap();
    assert!(author.contains("\"revert_change\""), "{author}");
}
