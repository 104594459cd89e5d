//! End to end with the real binary in tmux: the demo's `apply_patch` (four files) approved in
//! part — the author moves to the second file with `]`, drops it with `X`, presses `y`, gives
//! a reason and confirms; the three kept files are on disk, the dropped one is untouched, and
//! the session log holds the `approve_parts` decision and the result listing both sides.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set).

use std::path::{Path, PathBuf};
use std::time::Duration;

mod tmux_support;
use tmux_support::{skip_without_tmux, Tmux};

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel)).ok()
}

#[test]
fn demo_patch_approved_without_one_file() {
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
    let t = Tmux::start(&format!("nbook-parts-{}", std::process::id()), &cmd);
    let long = Duration::from_secs(60);
    let ada = "lorebook/character/ada-marwick/index.md";

    // The write and the edit come first: approve both.
    t.wait_for("the write request", long, |s| s.contains("flett-watch"));
    t.keys(&["5"]);
    for what in ["write", "edit"] {
        t.wait_for(&format!("the {what} request"), long, |s| {
            s.contains("› y approve")
        });
        std::thread::sleep(Duration::from_millis(400));
        t.keys(&["y"]);
        std::thread::sleep(Duration::from_millis(600));
    }
    let before = read(&dir, ada).unwrap();

    // The patch: its preview says it can be decided in parts.
    t.wait_for("the patch request with its parts line", long, |s| {
        s.contains("Parts: 4 of 4 files")
    });
    std::thread::sleep(Duration::from_millis(1200));
    // ] twice: the first change (the new note), then the second file's change.
    t.keys(&["]"]);
    std::thread::sleep(Duration::from_millis(200));
    t.keys(&["]"]);
    std::thread::sleep(Duration::from_millis(200));
    t.keys(&["X"]);
    // The status bar cuts the message; the file's mark in the preview says it too.
    t.wait_for("the file dropped", long, |s| {
        s.contains("Dropped lorebook/character/ada-m")
    });
    t.keys(&["y"]);
    t.wait_for("the reason prompt", long, |s| {
        s.contains("Apply only the kept parts") && s.contains("Keeping 3 of 4 files")
    });
    std::thread::sleep(Duration::from_millis(300));
    t.type_text("Ada learns of the letter later");
    t.keys(&["Enter"]);
    t.wait_for("the moved note on disk", long, |_| {
        dir.join("lorebook/note/ideas/index.md").exists()
    });
    t.wait_for("the receipt", long, |s| s.contains("approved in part"));

    std::thread::sleep(Duration::from_millis(500));
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));
    if t.screen().contains("Quit") {
        t.keys(&["y"]);
    }
    t.wait_for("the program to exit", long, |s| {
        s.contains("The demo project is at") || !t.alive()
    });

    // The kept files changed, the dropped one did not.
    assert!(read(&dir, "lorebook/note/weather-book-entries/index.md").is_some());
    assert!(read(&dir, "lorebook/note/scratch-ideas.md").is_none());
    let index = read(&dir, "lorebook/note/index.md").unwrap();
    assert!(index.contains("[Ideas](ideas/)"), "{index}");
    assert_eq!(
        read(&dir, ada).unwrap(),
        before,
        "the dropped file is untouched"
    );
    // The log: the decision with the reason, and the result listing both sides.
    let sessions = dir.join(".nbook/agent/sessions");
    let log: String = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(log.contains("\"decision\":\"approve_parts\""), "{log}");
    assert!(log.contains("Ada learns of the letter later"));
    assert!(log.contains(&format!(
        "Rejected (not applied):\\n  - {ada} (the whole change)"
    )));
}
