//! execute_sql through the real engine and a real project database: reads never wait and are
//! capped at 200 rows; writes wait with a preview of the changed rows; approve commits, reject
//! leaves the file byte-identical; every refused kind is refused by the authorizer with nothing
//! written; the `neurobook` preset runs writes without asking.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use nbook::config::{Config, Dirs, Preset};
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, Mode, PreviewBody, ToolCall,
};
use serde_json::{json, Value};

struct Fx {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    dirs: Dirs,
    engine: Arc<Engine>,
    sid: String,
}

fn fixture(preset: Preset) -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let mut config = Config::default();
    config.approval.preset = preset;
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine =
        Arc::new(Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).unwrap());
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let f = Fx {
        _tmp: tmp,
        root,
        dirs,
        engine,
        sid,
    };
    let c = f.conn();
    for i in 1..=3 {
        c.execute(
            "INSERT INTO Story (title, summary) VALUES (?1, 'seed')",
            [format!("Tale {i}")],
        )
        .unwrap();
    }
    drop(c);
    f
}

impl Fx {
    fn db(&self) -> PathBuf {
        self.root.join(".nbook/project.sqlite")
    }

    fn conn(&self) -> rusqlite::Connection {
        nbook::store::open(&self.db()).unwrap()
    }

    fn titles(&self) -> Vec<String> {
        let c = self.conn();
        let mut s = c.prepare("SELECT title FROM Story ORDER BY id").unwrap();
        let v = s
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        v
    }

    async fn call(&self, sql: &str) -> CallResult {
        self.engine.call(&self.sid, call(sql), Approval::Fail).await
    }
}

fn call(sql: &str) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: "execute_sql".into(),
        arguments: json!({ "sql": sql }),
    }
}

async fn queued(f: &Fx, sql: &str) -> (tokio::task::JoinHandle<CallResult>, String) {
    let before = f.engine.pending().len();
    let (e, s, c) = (f.engine.clone(), f.sid.clone(), call(sql));
    let handle = tokio::spawn(async move { e.call(&s, c, Approval::Queue).await });
    for _ in 0..2000 {
        let p = f.engine.pending();
        if p.len() > before {
            return (handle, p.last().unwrap().approval_id.clone());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("the call never reached the approval queue");
}

fn details(r: &CallResult) -> Value {
    r.details
        .clone()
        .unwrap_or_else(|| serde_json::from_str(&r.content).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_returns_rows_and_never_waits() {
    let f = fixture(Preset::Supervised);
    let r = f
        .call("SELECT id, title, x'00ff10' AS pic FROM Story WHERE summary = 'seed' ORDER BY id")
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let d = details(&r);
    assert_eq!(d["mode"], "read");
    assert_eq!(d["command"], "SELECT");
    assert_eq!(d["rowCount"], 3);
    assert_eq!(d["truncated"], false);
    assert_eq!(d["rows"][0]["title"], "Tale 1");
    assert_eq!(d["rows"][2]["pic"], "<blob 3 bytes>");
    assert!(f.engine.pending().is_empty());
    // WITH … SELECT, in plan mode too, and the schema is readable without PRAGMA.
    let sid = f
        .engine
        .create_session("leader.default", Mode::Plan, "p", None)
        .unwrap()
        .id;
    let r = f
        .engine
        .call(
            &sid,
            call("WITH t AS (SELECT title FROM Story) SELECT count(*) AS n FROM t; -- done"),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert!(details(&r)["rows"][0]["n"].as_i64().unwrap() >= 3);
    let r = f
        .call("SELECT name FROM pragma_table_info('Story') ORDER BY cid")
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(details(&r)["rows"][1]["name"], "title");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_than_200_rows_are_truncated() {
    let f = fixture(Preset::Supervised);
    let r = f
        .call("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) SELECT i FROM n")
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let d = details(&r);
    assert_eq!(d["rowCount"], 200);
    assert_eq!(d["rows"].as_array().unwrap().len(), 200);
    assert_eq!(d["truncated"], true);
    assert_eq!(d["rows"][199]["i"], 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_waits_with_a_preview_and_approve_commits() {
    let f = fixture(Preset::Supervised);
    let (h, id) = queued(
        &f,
        "UPDATE Story SET title = title || '!' WHERE title IN ('Tale 1', 'Tale 3')",
    )
    .await;
    let pending = f.engine.pending();
    let p = &pending[0];
    assert_eq!(p.tool, "execute_sql");
    assert!(
        p.preview.summary.contains("UPDATE changes 2 rows in Story"),
        "{}",
        p.preview.summary
    );
    let PreviewBody::Statement { sql, rows } = &p.preview.body else {
        panic!("{:?}", p.preview.body)
    };
    assert!(sql.starts_with("UPDATE Story"));
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["action"], "update");
    assert_eq!(rows[0]["table"], "Story");
    assert_eq!(rows[0]["before"]["title"], "Tale 1");
    assert_eq!(rows[0]["after"]["title"], "Tale 1!");
    assert_eq!(rows[0]["changed"], json!(["title"]));
    assert_eq!(rows[1]["after"]["title"], "Tale 3!");
    // Nothing visible before approval.
    assert_eq!(f.titles(), ["Tale 1", "Tale 2", "Tale 3"]);
    f.engine.decide(&id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let d = details(&r);
    assert_eq!(
        (d["mode"].clone(), d["command"].clone()),
        (json!("write"), json!("UPDATE"))
    );
    assert_eq!(d["rowCount"], 2);
    assert_eq!(d["effects"]["refreshChapterTree"], true);
    assert_eq!(f.titles(), ["Tale 1!", "Tale 2", "Tale 3!"]);

    // INSERT … RETURNING and DELETE list inserted / deleted rows.
    let (h, id) = queued(
        &f,
        "INSERT INTO Story (title) VALUES ('New') RETURNING id, title",
    )
    .await;
    let PreviewBody::Statement { rows, .. } = &f.engine.pending()[0].preview.body else {
        panic!()
    };
    assert_eq!(
        (rows[0]["action"].clone(), rows[0]["after"]["title"].clone()),
        (json!("insert"), json!("New"))
    );
    f.engine.decide(&id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(details(&r)["rows"][0]["title"], "New");
    let (h, id) = queued(&f, "DELETE FROM Story WHERE title = 'Tale 2'").await;
    let PreviewBody::Statement { rows, .. } = &f.engine.pending()[0].preview.body else {
        panic!()
    };
    assert_eq!(
        (
            rows[0]["action"].clone(),
            rows[0]["before"]["title"].clone()
        ),
        (json!("delete"), json!("Tale 2"))
    );
    f.engine.decide(&id, Decision::Approve).unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Ok);
    assert_eq!(f.titles(), ["Tale 1!", "Tale 3!", "New"]);
    // A write that matches no row changes nothing and does not wait.
    let r = f.call("DELETE FROM Story WHERE title = 'nobody'").await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(details(&r)["rowCount"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_leaves_the_database_byte_identical() {
    let f = fixture(Preset::Supervised);
    let bytes = std::fs::read(f.db()).unwrap();
    for sql in [
        "UPDATE Story SET summary = 'changed'",
        "DELETE FROM Story",
        "INSERT INTO Story (title) SELECT title || ' copy' FROM Story",
    ] {
        let (h, id) = queued(&f, sql).await;
        f.engine
            .decide(
                &id,
                Decision::Reject {
                    reason: Some("no".into()),
                },
            )
            .unwrap();
        assert_eq!(h.await.unwrap().status, CallStatus::Rejected);
        assert_eq!(std::fs::read(f.db()).unwrap(), bytes, "{sql}");
        assert!(!f.db().with_extension("sqlite-journal").exists());
    }
    // Without an answer: needs_approval, nothing written.
    let r = f.call("DELETE FROM Story").await;
    assert_eq!(r.status, CallStatus::NeedsApproval);
    assert!(r.preview.is_some());
    assert_eq!(std::fs::read(f.db()).unwrap(), bytes);
    assert_eq!(f.titles().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refused_kind_is_refused_by_the_authorizer_and_nothing_is_written() {
    let f = fixture(Preset::Neurobook);
    let bytes = std::fs::read(f.db()).unwrap();
    let other = f.root.join("other.sqlite");
    let cases: Vec<(String, &str)> = vec![
        (
            format!("ATTACH DATABASE '{}' AS o", other.display()),
            "ATTACH",
        ),
        ("DETACH DATABASE main".into(), "DETACH"),
        ("PRAGMA foreign_keys = OFF".into(), "PRAGMA foreign_keys"),
        ("PRAGMA user_version".into(), "PRAGMA user_version"),
        (
            "SELECT load_extension('/tmp/evil.so')".into(),
            "load_extension",
        ),
        ("CREATE TABLE t (x)".into(), "CREATE TABLE t"),
        ("CREATE INDEX i ON Story(title)".into(), "CREATE INDEX i"),
        (
            "CREATE TRIGGER tr AFTER INSERT ON Story BEGIN DELETE FROM Story; END".into(),
            "CREATE TRIGGER tr",
        ),
        ("CREATE VIEW v AS SELECT 1".into(), "CREATE VIEW v"),
        ("DROP TABLE Story".into(), "DROP TABLE Story"),
        (
            "ALTER TABLE Story ADD COLUMN x TEXT".into(),
            "ALTER TABLE Story",
        ),
        ("BEGIN".into(), "transaction"),
        ("COMMIT".into(), "transaction"),
        ("SAVEPOINT s".into(), "SAVEPOINT s"),
        ("VACUUM".into(), "refused"),
        ("ANALYZE".into(), "refused"),
        (
            "DELETE FROM Story; DROP TABLE Story".into(),
            "more than one statement",
        ),
        ("SELECT 1; SELECT 2".into(), "more than one statement"),
        (
            "UPDATE Story SET title = 'x'; -- then\n DELETE FROM Story".into(),
            "more than one statement",
        ),
        (
            "/* harmless */ -- really\n DROP TABLE Story".into(),
            "DROP TABLE Story",
        ),
        (
            "WITH t AS (SELECT load_extension('x') AS y) SELECT * FROM t".into(),
            "load_extension",
        ),
        (
            "WITH t AS (SELECT 1) SELECT * FROM t; DROP TABLE Story".into(),
            "more than one statement",
        ),
        (
            "INSERT INTO sqlite_master VALUES ('table','x','x',0,'')".into(),
            "sqlite_master",
        ),
    ];
    for (sql, named) in &cases {
        let r = f.call(sql).await;
        assert_eq!(r.status, CallStatus::ToolError, "{sql}: {}", r.content);
        assert!(
            r.content.contains("execute_sql refused") && r.content.contains(named),
            "{sql}: {}",
            r.content
        );
        assert!(
            r.content.contains("Nothing was run or written"),
            "{}",
            r.content
        );
        assert_eq!(std::fs::read(f.db()).unwrap(), bytes, "{sql} wrote");
    }
    assert!(!other.exists());
    // DDL tucked inside a WITH is not even valid SQL: a plain failure, nothing written.
    let r = f.call("WITH t AS (SELECT 1) CREATE TABLE x (y)").await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(r.content.contains("Nothing was written"), "{}", r.content);
    // Only whitespace and comments is not a statement.
    let r = f.call("  -- nothing\n").await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert_eq!(std::fs::read(f.db()).unwrap(), bytes);
    // The pooled connection is clean for other tools afterwards (foreign keys still on).
    let r = f.call("SELECT 1 AS one").await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neurobook_preset_runs_writes_without_asking_and_locked_refuses() {
    let f = fixture(Preset::Neurobook);
    let r = f
        .call("UPDATE Story SET title = 'Trusted' WHERE title = 'Tale 2'")
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert!(f.engine.pending().is_empty());
    assert_eq!(f.titles(), ["Tale 1", "Trusted", "Tale 3"]);
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let mut config = Config::default();
    config.approval.preset = Preset::Locked;
    let engine =
        Arc::new(Engine::open(ws, config, &f.dirs, nbook::tools::registry().unwrap()).unwrap());
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let r = engine
        .call(&sid, call("DELETE FROM Story"), Approval::Fail)
        .await;
    assert_eq!(r.status, CallStatus::Refused);
    assert_eq!(f.titles().len(), 3);
    // Reads still run under locked.
    let r = engine
        .call(
            &sid,
            call("SELECT count(*) AS n FROM Story"),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_and_sql_errors_are_clear() {
    let f = fixture(Preset::Supervised);
    let r = f
        .engine
        .call(
            &f.sid,
            ToolCall {
                id: String::new(),
                name: "execute_sql".into(),
                arguments: json!({"query": "SELECT 1"}),
            },
            Approval::Fail,
        )
        .await;
    assert_ne!(r.status, CallStatus::Ok);
    assert!(r.content.contains("sql"), "{}", r.content);
    let r = f.call("SELECT nope FROM Story").await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(r.content.contains("no such column: nope"), "{}", r.content);
    let r = f
        .call("INSERT INTO Story (summary) VALUES ('no title')")
        .await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(
        r.content.contains("NOT NULL") && r.content.contains("Nothing was written"),
        "{}",
        r.content
    );
    assert!(f.engine.pending().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_preview_lists_rows_changed_by_foreign_key_cascades() {
    let f = fixture(Preset::Supervised);
    f.conn()
        .execute(
            "INSERT INTO StoryAct (storyId, sortOrder, name, title) SELECT id, 1, 'act-1', 'Act One' FROM Story WHERE title = 'Tale 2'",
            [],
        )
        .unwrap();
    let bytes = std::fs::read(f.db()).unwrap();
    let (h, id) = queued(&f, "DELETE FROM Story WHERE title = 'Tale 2'").await;
    let p = f.engine.pending()[0].preview.clone();
    assert!(
        p.summary.contains("DELETE changes 1 row in Story"),
        "{}",
        p.summary
    );
    let PreviewBody::Statement { rows, .. } = &p.body else {
        panic!()
    };
    let act = rows
        .iter()
        .find(|r| r["table"] == "StoryAct")
        .unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(
        (act["action"].clone(), act["before"]["title"].clone()),
        (json!("delete"), json!("Act One"))
    );
    f.engine
        .decide(&id, Decision::Reject { reason: None })
        .unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Rejected);
    assert_eq!(std::fs::read(f.db()).unwrap(), bytes);
    // VACUUM compiles without any row write: refused as neither a query nor a row write.
    let r = f.call("VACUUM").await;
    assert!(r.content.contains("execute_sql refused"), "{}", r.content);
    assert!(r.content.contains("VACUUM"), "{}", r.content);
}
