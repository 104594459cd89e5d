//! The `read` tool on long, wide, huge and binary files, through the engine.

use std::io::Write;
use std::sync::Arc;

use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, CallResult, CallStatus, Engine, Mode, ToolCall};
use serde_json::{json, Value};

struct Fx {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    engine: Arc<Engine>,
    sid: String,
}

fn fx() -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("h"),
        data: tmp.path().join("h/d"),
        logs: tmp.path().join("h/l"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = Arc::new(
        Engine::open(
            ws,
            Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    let sid = engine
        .create_session("leader.default", Mode::Normal, "r", None)
        .unwrap()
        .id;
    Fx {
        _tmp: tmp,
        root,
        engine,
        sid,
    }
}

impl Fx {
    async fn read(&self, args: Value) -> CallResult {
        self.engine
            .call(
                &self.sid,
                ToolCall {
                    id: String::new(),
                    name: "read".into(),
                    arguments: args,
                },
                Approval::Fail,
            )
            .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_files_page_by_lines_with_a_next_offset() {
    let f = fx();
    let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(f.root.join("long.md"), text).unwrap();
    let r = f.read(json!({"path": "long.md"})).await;
    assert!(r.ok, "{}", r.content);
    let d = r.details.unwrap();
    assert_eq!(
        (
            d["startLine"].as_u64(),
            d["endLine"].as_u64(),
            d["totalLines"].as_u64()
        ),
        (Some(1), Some(2000), Some(5000))
    );
    assert_eq!(d["nextOffset"], 2001);
    assert_eq!(d["truncation"], "lines");
    assert!(r.content.contains("line 2000\n") && !r.content.contains("line 2001\n"));
    assert!(r.content.contains("Use offset=2001 to continue"));
    let r = f
        .read(json!({"path": "long.md", "offset": 4999, "limit": 10, "lineNumbers": true}))
        .await;
    let d = r.details.unwrap();
    assert_eq!(d["endLine"], 5000);
    assert!(d["nextOffset"].is_null() && d["truncation"].is_null());
    assert!(
        r.content.starts_with("  4999\tline 4999\n"),
        "{}",
        r.content
    );
    let r = f.read(json!({"path": "long.md", "offset": 6000})).await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(r.content.contains("past the end"), "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wide_files_stop_at_50_kb_and_a_long_line_is_cut_at_2000_chars() {
    let f = fx();
    let line = "x".repeat(199);
    let text: String = (0..1000).map(|_| format!("{line}\n")).collect();
    std::fs::write(f.root.join("wide.md"), text).unwrap();
    let r = f.read(json!({"path": "wide.md"})).await;
    let d = r.details.unwrap();
    assert_eq!(d["truncation"], "bytes");
    let end = d["endLine"].as_u64().unwrap();
    assert!((200..1000).contains(&end), "end {end}");
    assert_eq!(d["nextOffset"].as_u64(), Some(end + 1));
    assert!(r.content.len() <= 50 * 1024 + 200);

    std::fs::write(f.root.join("one-line.md"), "y".repeat(300_000)).unwrap();
    let r = f.read(json!({"path": "one-line.md"})).await;
    assert!(r.ok);
    assert!(r.content.len() < 2100, "{}", r.content.len());
    assert!(
        r.content.starts_with(&format!(
            "{}… (line truncated, 298000 more chars)\n",
            "y".repeat(2000)
        )),
        "{}",
        &r.content[r.content.len() - 200..]
    );
    // Characters, not bytes: a multi-byte line is cut on a character boundary.
    std::fs::write(f.root.join("wide-utf8.md"), "é".repeat(2500) + "\r\n").unwrap();
    let r = f.read(json!({"path": "wide-utf8.md"})).await;
    assert!(r.ok, "{}", r.content);
    assert_eq!(
        r.content,
        format!("{}… (line truncated, 500 more chars)\n", "é".repeat(2000))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_file_reads_its_tail_and_binaries_are_refused() {
    let f = fx();
    let mut file = std::fs::File::create(f.root.join("huge.md")).unwrap();
    let chunk: String = (0..1000)
        .map(|i| format!("paragraph {i} of a very long manuscript\n"))
        .collect();
    for _ in 0..600 {
        file.write_all(chunk.as_bytes()).unwrap();
    }
    drop(file);
    let r = f
        .read(json!({"path": "huge.md", "offset": 599_999, "limit": 5}))
        .await;
    assert!(r.ok, "{}", r.content);
    let d = r.details.unwrap();
    assert_eq!(d["totalLines"], 600_000);
    assert!(r.content.starts_with("paragraph 998 of"), "{}", r.content);

    std::fs::write(
        f.root.join("cover.png"),
        [0x89u8, b'P', b'N', b'G', 0, 0, 0, 13, 1, 2],
    )
    .unwrap();
    let r = f.read(json!({"path": "cover.png"})).await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(r.content.contains("binary file"), "{}", r.content);
    let r = f.read(json!({"path": "manuscript"})).await;
    assert!(r.content.contains("is a folder"), "{}", r.content);
}
