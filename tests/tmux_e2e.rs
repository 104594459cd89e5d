//! End to end with the real binary in a real terminal (tmux): run the demo, approve the
//! proposed `write`, reject the `edit` with a typed reason, approve the `apply_patch`, quit,
//! then check the files on disk and the session log.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where `.ci/run` installs tmux and a missing tmux is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    name: String,
}

impl Tmux {
    fn start(name: &str, cmd: &str) -> Tmux {
        let ok = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                "120",
                "-y",
                "40",
                cmd,
            ])
            .status()
            .expect("run tmux")
            .success();
        assert!(ok, "tmux new-session failed");
        Tmux {
            name: name.to_string(),
        }
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.name.as_str()];
        args.extend_from_slice(keys);
        assert!(Command::new("tmux")
            .args(&args)
            .status()
            .expect("send-keys")
            .success());
    }

    /// Type literal text (no key-name interpretation).
    fn type_text(&self, text: &str) {
        assert!(Command::new("tmux")
            .args(["send-keys", "-t", &self.name, "-l", text])
            .status()
            .expect("send-keys")
            .success());
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Poll the screen until `pred` holds, or fail with the last screen.
    fn wait_for(&self, what: &str, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            if start.elapsed() > timeout {
                panic!("timed out waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["has-session", "-t", &self.name])
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .status();
    }
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel)).ok()
}

#[test]
fn demo_approve_reject_approve_then_files_on_disk() {
    if !tmux_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "tmux is required under CI (.ci/run installs it)"
        );
        eprintln!("skipping: tmux is not installed");
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
    let t = Tmux::start(&format!("nbook-e2e-{}", std::process::id()), &cmd);
    let long = Duration::from_secs(60);

    // 1. The write of a new lorebook entry arrives in the queue: approve it.
    t.wait_for("the write request", long, |s| s.contains("flett-watch"));
    t.keys(&["5"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["y"]);
    t.wait_for("the entry on disk", long, |_| {
        dir.join("lorebook/item/flett-watch/index.md").exists()
    });

    // 2. The edit of chapter 3: reject it with a reason.
    t.wait_for("the edit request", long, |s| s.contains("003-chapter"));
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["n"]);
    std::thread::sleep(Duration::from_millis(300));
    t.type_text("keep the gold watch for now");
    t.keys(&["Enter"]);

    // 3. The patch: approve it once the typing guard (1 s) has passed.
    t.wait_for("the patch request", long, |s| {
        s.contains("Patch") || s.contains("apply_patch")
    });
    std::thread::sleep(Duration::from_millis(1500));
    t.keys(&["y"]);
    t.wait_for("the moved note on disk", long, |_| {
        dir.join("lorebook/note/ideas/index.md").exists()
    });

    // Quit (confirming if the TUI asks), and wait for the program to end.
    std::thread::sleep(Duration::from_millis(500));
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));
    let s = t.screen();
    if s.contains("Quit") || s.contains("quit?") {
        t.keys(&["y"]);
    }
    t.wait_for("the program to exit", long, |s| {
        s.contains("The demo project is at") || !t.alive()
    });

    // Files: approved changes applied, rejected one not.
    let ch3 = read(&dir, "manuscript/001-volume/003-chapter/index.md").unwrap();
    assert!(
        ch3.contains("gold watch"),
        "the rejected edit must not change chapter 3"
    );
    assert!(
        read(&dir, "lorebook/note/scratch-ideas.md").is_none(),
        "the patch moved the scratch note"
    );
    assert!(
        read(&dir, "lorebook/note/weather-book-entries/index.md").is_some(),
        "the patch added a file"
    );
    // The session log recorded the reason the agent received.
    let sessions = dir.join(".nbook/agent/sessions");
    let log: String = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        log.contains("keep the gold watch for now"),
        "reason missing from the log"
    );
    assert!(log.contains("\"decision\":\"reject\""));
}
