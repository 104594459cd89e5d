//! A real terminal for end-to-end tests of the real binary: a detached tmux session to type
//! into and read the screen of (shared by tests/tmux_e2e.rs and the MCP
//! end-to-end test), and a fresh book with its own NBOOK_HOME made by the real binary ([`Book`]).

use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    name: String,
}

impl Tmux {
    pub fn start(name: &str, cmd: &str) -> Tmux {
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

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.name.as_str()];
        args.extend_from_slice(keys);
        assert!(Command::new("tmux")
            .args(&args)
            .status()
            .expect("send-keys")
            .success());
    }

    /// Type literal text (no key-name interpretation).
    #[allow(dead_code)]
    pub fn type_text(&self, text: &str) {
        assert!(Command::new("tmux")
            .args(["send-keys", "-t", &self.name, "-l", text])
            .status()
            .expect("send-keys")
            .success());
    }

    pub fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Poll the screen until `pred` holds, or fail with the last screen.
    pub fn wait_for(&self, what: &str, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
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

    /// A tmux format (`#{window_bell_flag}`…) of the first window, the one nbook runs in.
    #[allow(dead_code)]
    pub fn first_window_format(&self, format: &str) -> String {
        let out = Command::new("tmux")
            .args([
                "display-message",
                "-p",
                "-t",
                &format!("{}:0", self.name),
                format,
            ])
            .output()
            .expect("display-message");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Open a second window and make it the current one (so tmux flags a bell in the first).
    #[allow(dead_code)]
    pub fn look_elsewhere(&self) {
        assert!(Command::new("tmux")
            .args(["new-window", "-t", &self.name, "sleep 60"])
            .status()
            .expect("new-window")
            .success());
    }

    #[allow(dead_code)]
    pub fn alive(&self) -> bool {
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

pub fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Without tmux a test is skipped with a message, except under CI (`CI` set), where `.ci/run`
/// installs it and a missing one is a failure.
#[allow(dead_code)]
pub fn skip_without_tmux() -> bool {
    if tmux_available() {
        return false;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tmux is required under CI (.ci/run installs it)"
    );
    eprintln!("skipping: tmux is not installed");
    true
}

/// A fresh project for an end-to-end test: its own `NBOOK_HOME` (with `config`, when given,
/// as its config.toml) and a book made by the real binary's `nbook init`.
#[allow(dead_code)]
pub struct Book {
    _tmp: tempfile::TempDir,
    pub home: std::path::PathBuf,
    pub dir: std::path::PathBuf,
    /// `dir` as the text the binary and the tmux command line take.
    pub path: String,
}

#[allow(dead_code)]
impl Book {
    pub fn init(config: Option<&str>) -> Book {
        let tmp = tempfile::tempdir().expect("a temporary folder");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).expect("NBOOK_HOME");
        if let Some(c) = config {
            std::fs::write(home.join("config.toml"), c).expect("config.toml");
        }
        let dir = tmp.path().join("book");
        let path = dir.display().to_string();
        let book = Book {
            _tmp: tmp,
            home,
            dir,
            path,
        };
        let out = book.nbook(&["init", &book.path, "--title", "Book"]);
        assert!(
            out.status.success(),
            "nbook init: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        book
    }

    /// Run the real binary against this book's home.
    pub fn nbook(&self, args: &[&str]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_nbook"))
            .args(args)
            .env("NBOOK_HOME", &self.home)
            .env_remove("NBOOK_LOG")
            .output()
            .expect("run nbook")
    }
}
