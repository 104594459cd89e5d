//! Issue 11 items 7, 8 and 11 on real files and the real binary: FIFOs are refused instead
//! of hanging, huge files are read and previewed in bounded memory and output, and control
//! or bidi characters are refused in new paths and never printed raw.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, CallResult, CallStatus, Decision, Engine, Mode, ToolCall};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

struct Fx {
    tmp: tempfile::TempDir,
    root: PathBuf,
    engine: Arc<Engine>,
    sid: String,
}

fn fx() -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = Arc::new(
        Engine::open(
            ws,
            Config::default(),
            &dirs(tmp.path()),
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    let sid = engine
        .create_session("leader.default", Mode::Normal, "h", None)
        .unwrap()
        .id;
    Fx {
        tmp,
        root,
        engine,
        sid,
    }
}

fn dirs(base: &Path) -> Dirs {
    let home = base.join("home");
    Dirs {
        config: home.clone(),
        data: home.join("data"),
        logs: home.join("logs"),
    }
}

impl Fx {
    async fn call(&self, tool: &str, args: Value, approve: bool) -> CallResult {
        let approval = if approve {
            Approval::Auto {
                decision: Decision::Approve,
                by: "test",
            }
        } else {
            Approval::Fail
        };
        self.engine
            .call(
                &self.sid,
                ToolCall {
                    id: String::new(),
                    name: tool.into(),
                    arguments: args,
                },
                approval,
            )
            .await
    }

    /// Run the real binary with this fixture's home, returning its output.
    fn nbook(&self, args: &[&str]) -> Output {
        self.nbook_measured(args).0
    }

    /// Run the real binary and also return its own peak resident memory in KB (from
    /// `wait4`, so children of concurrent tests do not count).
    // The child is reaped by `wait4` below, which clippy cannot see.
    #[allow(clippy::zombie_processes)]
    fn nbook_measured(&self, args: &[&str]) -> (Output, i64) {
        use std::io::Read as _;
        use std::os::unix::process::ExitStatusExt;
        let mut child = Command::new(BIN)
            .args(args)
            .env("NBOOK_HOME", self.tmp.path().join("home"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        let out_t = std::thread::spawn(move || {
            let mut b = Vec::new();
            out.read_to_end(&mut b).unwrap();
            b
        });
        let err_t = std::thread::spawn(move || {
            let mut b = Vec::new();
            err.read_to_end(&mut b).unwrap();
            b
        });
        let mut status = 0;
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: the pid is our own unwaited child; status and usage are ours to fill.
        let pid = unsafe {
            libc::wait4(
                child.id() as libc::pid_t,
                &mut status,
                0,
                usage.as_mut_ptr(),
            )
        };
        assert_eq!(pid, child.id() as libc::pid_t);
        // SAFETY: wait4 succeeded, so the struct is initialised.
        let rss = unsafe { usage.assume_init() }.ru_maxrss;
        let output = Output {
            status: std::process::ExitStatus::from_raw(status),
            stdout: out_t.join().unwrap(),
            stderr: err_t.join().unwrap(),
        };
        (output, rss)
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo failed");
}

/// Write a file of `total` bytes made of `line` repeated (no allocation of the whole file).
fn big_file(path: &Path, line: &[u8], total: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut n = 0;
    while n < total {
        f.write_all(line).unwrap();
        n += line.len();
    }
    f.flush().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_is_refused_by_read_and_by_write_previews_without_hanging() {
    let f = fx();
    mkfifo(&f.root.join("pipe.md"));
    let started = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(20),
        f.call("read", json!({"path": "pipe.md"}), false),
    )
    .await
    .expect("read of a FIFO must not hang");
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(
        r.content
            .contains("pipe.md is a FIFO (named pipe), not a regular file"),
        "{}",
        r.content
    );
    // Write and edit previews (and the patch plan) read the old file: refused, not hung.
    for (tool, args) in [
        ("write", json!({"path": "pipe.md", "content": "x\n"})),
        (
            "edit",
            json!({"path": "pipe.md", "edits": [{"oldText": "a", "newText": "b"}]}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: pipe.md\n@@\n-a\n+b\n*** End Patch"}),
        ),
    ] {
        let r = tokio::time::timeout(Duration::from_secs(20), f.call(tool, args, true))
            .await
            .unwrap_or_else(|_| panic!("{tool} over a FIFO hung"));
        assert!(!r.ok, "{tool}: {}", r.content);
        assert!(r.content.contains("FIFO"), "{tool}: {}", r.content);
    }
    // The FIFO is still a FIFO: nothing replaced it.
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(f.root.join("pipe.md"))
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_single_line_file_is_read_capped_quickly_and_in_bounded_memory() {
    let f = fx();
    let size = 64 * 1024 * 1024;
    big_file(&f.root.join("one-line.txt"), &[b'z'; 4096], size);
    let small = f.nbook_measured(&[
        "call",
        "read",
        "--project",
        f.root.to_str().unwrap(),
        "--args",
        r#"{"path": "AGENTS.md", "limit": 1}"#,
    ]);
    let baseline = small.1;
    let started = Instant::now();
    let (out, rss) = f.nbook_measured(&[
        "call",
        "read",
        "--project",
        f.root.to_str().unwrap(),
        "--args",
        r#"{"path": "one-line.txt", "limit": 1}"#,
    ]);
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = v["content"].as_str().unwrap();
    assert_eq!(
        content,
        format!(
            "{}… (line truncated, {} more chars)\n",
            "z".repeat(2000),
            size - 2000
        )
    );
    assert_eq!(v["details"]["totalLines"], 1);
    assert!(out.stdout.len() < 8 * 1024, "{} bytes", out.stdout.len());
    assert!(took < Duration::from_secs(60), "took {took:?}");
    // The old code held the whole line (64 MB) at least twice; now it costs a buffer.
    assert!(
        rss < baseline + 16 * 1024,
        "peak RSS of nbook call read: {rss} KB (a small read: {baseline} KB)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_preview_over_a_huge_file_is_capped_and_states_the_extent() {
    let f = fx();
    let line = b"an old line of a very long manuscript, repeated many times over\n";
    let size = 24 * 1024 * 1024;
    big_file(&f.root.join("huge.md"), line, size);
    let real_size = std::fs::metadata(f.root.join("huge.md")).unwrap().len();
    let old_lines = real_size as usize / line.len();
    let baseline = f
        .nbook_measured(&[
            "call",
            "write",
            "--project",
            f.root.to_str().unwrap(),
            "--args",
            r#"{"path": "small.md", "content": "short\n"}"#,
        ])
        .1;
    let (out, rss) = f.nbook_measured(&[
        "call",
        "write",
        "--project",
        f.root.to_str().unwrap(),
        "--args",
        r#"{"path": "huge.md", "content": "short\n"}"#,
    ]);
    assert_eq!(out.status.code(), Some(3), "needs approval");
    assert!(
        out.stdout.len() < 600 * 1024,
        "preview JSON is {} bytes",
        out.stdout.len()
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "lines elided (the whole change: +1 -{old_lines} lines, {real_size} → 6 bytes)"
        )),
        "{}",
        &text[..text.len().min(2000)]
    );
    assert!(
        text.contains(&format!(
            "Overwrite huge.md (+1 -{old_lines}, {real_size} → 6 bytes, diff elided)"
        )),
        "{}",
        &text[..text.len().min(2000)]
    );
    assert!(
        rss < baseline + 16 * 1024,
        "peak RSS of nbook call write: {rss} KB (a small write: {baseline} KB)"
    );
    // The file is untouched.
    assert_eq!(
        std::fs::metadata(f.root.join("huge.md")).unwrap().len(),
        real_size
    );

    // An edit of a big single-line file previews a bounded diff too.
    std::fs::write(
        f.root.join("wide.md"),
        format!("{}\n", "w".repeat(3_000_000)),
    )
    .unwrap();
    let r = f
        .call(
            "edit",
            json!({"path": "wide.md", "edits": [{"oldText": "www", "newText": "xwww"}]}),
            false,
        )
        .await;
    assert!(r.content.len() < 64 * 1024, "{}", r.content.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_and_bidi_characters_are_refused_in_new_paths() {
    let f = fx();
    for (path, named) in [
        (
            "notes/evil\u{202e}dm.txt",
            "U+202E (RIGHT-TO-LEFT OVERRIDE)",
        ),
        ("bell\u{7}.md", "U+0007 (BELL)"),
        ("esc\u{1b}[31m/x.md", "U+001B (ESCAPE)"),
        ("iso\u{2066}late.md", "U+2066 (LEFT-TO-RIGHT ISOLATE)"),
        ("c1\u{9b}.md", "U+009B (CONTROL SEQUENCE INTRODUCER)"),
    ] {
        let r = f
            .call("write", json!({"path": path, "content": "x\n"}), true)
            .await;
        assert_eq!(r.status, CallStatus::ToolError, "{path}: {}", r.content);
        assert!(r.content.contains(named), "{path}: {}", r.content);
        assert!(!r.content.contains('\u{1b}') && !r.content.contains('\u{202e}'));
        let patch = format!("*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch");
        let r = f.call("apply_patch", json!({"patch": patch}), true).await;
        assert_eq!(r.status, CallStatus::ToolError, "{path}: {}", r.content);
        assert!(r.content.contains(named), "{path}: {}", r.content);
    }
    std::fs::write(f.root.join("plain.md"), "a\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: plain.md\n*** Move to: mo\u{202d}ved.md\n@@\n-a\n+b\n*** End Patch";
    let r = f.call("apply_patch", json!({"patch": patch}), true).await;
    assert!(r.content.contains("U+202D"), "{}", r.content);
    assert_eq!(
        std::fs::read_to_string(f.root.join("plain.md")).unwrap(),
        "a\n"
    );
    // Nothing was created anywhere.
    let names: Vec<_> = std::fs::read_dir(&f.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.chars().any(nbook::text::is_unsafe_char)),
        "{names:?}"
    );
    // A name the author made is theirs: agents may still write to it.
    std::fs::write(f.root.join("old\u{202e}.md"), "a\n").unwrap();
    let r = f
        .call(
            "write",
            json!({"path": "old\u{202e}.md", "content": "b\n"}),
            true,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    // Plain new names still work.
    let r = f
        .call(
            "write",
            json!({"path": "notes/fine.md", "content": "x\n"}),
            true,
        )
        .await;
    assert!(r.ok, "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_and_bidi_characters_are_escaped_in_cli_output() {
    let f = fx();
    let title = "ev\u{1b}[2Jil \u{202e}gnp.exe\u{7}";
    f.engine
        .create_session("leader.default", Mode::Normal, title, None)
        .unwrap();
    let raw = |b: &[u8]| {
        let s = String::from_utf8_lossy(b).into_owned();
        s.chars()
            .filter(|&c| nbook::text::is_unsafe_char(c) && c != '\n')
            .collect::<Vec<_>>()
    };
    let project = f.root.to_str().unwrap();
    let out = f.nbook(&["sessions", "--project", project]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(raw(&out.stdout).is_empty(), "{text:?}");
    assert!(
        text.contains("ev\\x1b[2Jil \\u{202e}gnp.exe\\x07"),
        "{text}"
    );
    // JSON output keeps the value but escapes the characters.
    let out = f.nbook(&["sessions", "--project", project, "--json"]);
    assert!(raw(&out.stdout).is_empty());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.as_array().unwrap().iter().any(|s| s["title"] == title));
    // An error naming such a path goes to stderr escaped.
    let out = f.nbook(&[
        "call",
        "read",
        "--project",
        project,
        "--args",
        r#"{"path": "x\u001b[31m\u202e.md"}"#,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(raw(&out.stderr).is_empty(), "{:?}", out.stderr);
    assert!(raw(&out.stdout).is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("x\\x1b[31m\\u{202e}.md"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
