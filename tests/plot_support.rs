//! Shared fixture for the plot tests (included by each `tests/plot_*.rs` with `#[path]`):
//! a real project folder, a real engine under the supervised preset, and calls approved the
//! way the author would approve them.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use nbook::config::{Config, Dirs, Preset};
use nbook::engine::{Approval, CallResult, CallStatus, Decision, Engine, Mode, ToolCall};
use serde_json::{json, Value};

pub struct Book {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub engine: Arc<Engine>,
    pub sid: String,
}

pub fn book() -> Book {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("The Hesta Light")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let mut config = Config::default();
    config.approval.preset = Preset::Supervised;
    let engine =
        Arc::new(Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).unwrap());
    let sid = engine
        .create_session("leader.default", Mode::Normal, "plot test", None)
        .unwrap()
        .id;
    Book {
        _tmp: tmp,
        root,
        engine,
        sid,
    }
}

impl Book {
    pub fn db_path(&self) -> PathBuf {
        self.root.join(".nbook/project.sqlite")
    }

    pub fn db_bytes(&self) -> Vec<u8> {
        std::fs::read(self.db_path()).unwrap()
    }

    pub fn conn(&self) -> rusqlite::Connection {
        nbook::store::open(&self.db_path()).unwrap()
    }

    /// A call the author approves (writes) or that simply runs (reads).
    pub async fn call(&self, tool: &str, args: Value) -> CallResult {
        let call = ToolCall {
            id: String::new(),
            name: tool.into(),
            arguments: args,
        };
        self.engine
            .call(
                &self.sid,
                call,
                Approval::Auto {
                    decision: Decision::Approve,
                    by: "test",
                },
            )
            .await
    }

    /// A call that must succeed; returns its details.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone()).await;
        assert_eq!(
            r.status,
            CallStatus::Ok,
            "{tool} {args} failed: {}",
            r.content
        );
        r.details.unwrap_or(Value::Null)
    }

    /// A call that must fail with a tool error whose message contains every `needle`; the
    /// database must be byte-identical afterwards.
    pub async fn fails(&self, tool: &str, args: Value, needles: &[&str]) -> String {
        let before = self.db_bytes();
        let r = self.call(tool, args.clone()).await;
        assert!(
            matches!(r.status, CallStatus::ToolError | CallStatus::InvalidArgs),
            "{tool} {args} should fail, got {:?}: {}",
            r.status,
            r.content
        );
        for n in needles {
            assert!(
                r.content.contains(n),
                "{tool} {args}: error '{}' lacks '{n}'",
                r.content
            );
        }
        assert!(
            before == self.db_bytes(),
            "{tool} {args} changed the database although it failed"
        );
        r.content
    }

    /// Value of the session's `plot.selection`.
    pub fn selection(&self) -> Value {
        self.engine
            .session_state(&self.sid)
            .get("plot.selection")
            .cloned()
            .unwrap_or(Value::Null)
    }

    pub fn add_subject(&self, id: &str, kind: &str, name: &str) {
        self.conn()
            .execute(
                "INSERT INTO \"WorldSubject\" (\"id\",\"type\",\"name\") VALUES (?1,?2,?3)",
                [id, kind, name],
            )
            .unwrap();
    }

    /// An act, two chapters, a thread, and `scenes` scenes in chapter 1 (ids from 1).
    pub async fn outline(&self, scenes: usize) {
        self.ok(
            "save_story_act",
            json!({"action": "create", "name": "act-1", "title": "Act One"}),
        )
        .await;
        self.ok(
            "save_story_chapter",
            json!({"action": "create", "actId": "1", "name": "ch-1", "title": "The Oil Store"}),
        )
        .await;
        self.ok(
            "save_story_chapter",
            json!({"action": "create", "actId": "1", "name": "ch-2", "title": "The Landing"}),
        )
        .await;
        self.ok("save_story_thread", json!({"action": "create", "name": "the-book", "title": "The weather book", "isMainThread": true})).await;
        for i in 0..scenes {
            self.ok("save_story_scene", json!({"action": "create", "threadId": "1", "chapterId": "1", "title": format!("Scene {}", i + 1)})).await;
        }
    }
}

pub fn id(v: &Value) -> String {
    v["id"].as_str().unwrap().to_string()
}
