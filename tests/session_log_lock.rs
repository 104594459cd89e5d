//! The session-log writer holds only its own session's lock while writing: while one append
//! is stuck (its log is a FIFO nobody reads), the engine's state and other sessions' logs
//! go on working, and the stuck session's records still land in order. Real files, a real
//! FIFO.

use std::ffi::CString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use nbook::config::{Config, Dirs};
use nbook::engine::{Engine, LogRecord, Mode};

fn open(root: &std::path::Path, dirs: &Dirs) -> Arc<Engine> {
    let ws = nbook::workspace::Workspace::open(root).unwrap();
    Arc::new(
        Engine::open(
            ws,
            Config::default(),
            dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    )
}

/// Run `f` on a thread and wait for it at most `within`.
fn within<T: Send + 'static>(
    within: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(within).ok()
}

#[test]
fn a_stuck_append_blocks_neither_the_state_nor_other_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    // Session A is made by one process; the next one opens its log lazily, on first append.
    let a = open(&root, &dirs)
        .create_session("leader.default", Mode::Normal, "A", None)
        .unwrap()
        .id;
    let engine = open(&root, &dirs);
    let b = engine
        .create_session("leader.default", Mode::Normal, "B", None)
        .unwrap()
        .id;
    let a_log = root.join(format!(".nbook/agent/sessions/{a}.jsonl"));
    std::fs::rename(&a_log, a_log.with_extension("old")).unwrap();
    let c = CString::new(a_log.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");

    // Far more than a pipe holds: this append blocks until someone reads.
    let big = "x".repeat(1 << 20);
    let (e1, a1, big1) = (engine.clone(), a.clone(), big.clone());
    let first = std::thread::spawn(move || e1.append(&a1, LogRecord::User { text: big1 }));
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !first.is_finished(),
        "the append to the FIFO should be stuck"
    );
    // A second record of A waits behind the first.
    let (e2, a2) = (engine.clone(), a.clone());
    let second = std::thread::spawn(move || {
        e2.append(
            &a2,
            LogRecord::User {
                text: "second".into(),
            },
        )
    });

    let e3 = engine.clone();
    let b2 = b.clone();
    let others = within(Duration::from_secs(5), move || {
        let listed = e3.sessions().len();
        let state = e3.session(&b2).map(|s| s.title);
        let appended = e3.append(
            &b2,
            LogRecord::User {
                text: "meanwhile".into(),
            },
        );
        (listed, state, appended.is_ok())
    })
    .expect("the engine state and session B must not wait for session A's write");
    assert_eq!(others, (2, Some("B".to_string()), true));
    let b_log = engine.session_log(&b).unwrap();
    assert!(b_log.lines.iter().any(|l| matches!(&l.record,
        LogRecord::User { text } if text == "meanwhile")));

    // Drain the FIFO: both records of A arrive, whole and in order.
    let mut fifo = std::fs::File::open(&a_log).unwrap();
    let mut got = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    while got.iter().filter(|&&c| c == b'\n').count() < 2 {
        let n = fifo.read(&mut buf).unwrap();
        assert!(n > 0, "the FIFO closed early");
        got.extend_from_slice(&buf[..n]);
    }
    first.join().unwrap().expect("first append");
    second.join().unwrap().expect("second append");
    let text = String::from_utf8(got).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].contains(&big), "first record first");
    assert!(lines[1].contains("\"second\""), "{}", lines[1]);
}
