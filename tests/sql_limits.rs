//! Limits of `execute_sql` through the real engine on a real project database: a runaway
//! statement stops at the time limit; huge values, cells and results are capped with a notice
//! and the session log stays small; SQLite's own tables are never written; a database from a
//! newer nbook is opened read-only — reads work, every write fails saying why, and the file is
//! left byte-identical.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nbook::config::{Config, Dirs, Preset};
use nbook::engine::{Approval, CallResult, CallStatus, Decision, Engine, Mode, ToolCall};
use serde_json::{json, Value};

struct Fx {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    engine: Arc<Engine>,
    sid: String,
}

fn dirs(tmp: &tempfile::TempDir) -> Dirs {
    Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    }
}

fn engine(root: &std::path::Path, tmp: &tempfile::TempDir, config: Config) -> Arc<Engine> {
    let ws = nbook::workspace::Workspace::open(root).unwrap();
    Arc::new(Engine::open(ws, config, &dirs(tmp), nbook::tools::registry().unwrap()).unwrap())
}

fn fixture(time_limit_ms: Option<u64>) -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let mut config = Config::default();
    config.approval.preset = Preset::Neurobook;
    config.sql.time_limit_ms = time_limit_ms;
    let engine = engine(&root, &tmp, config);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    Fx {
        _tmp: tmp,
        root,
        engine,
        sid,
    }
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: name.into(),
        arguments: args,
    }
}

impl Fx {
    fn db(&self) -> PathBuf {
        self.root.join(".nbook/project.sqlite")
    }

    async fn sql(&self, sql: &str) -> CallResult {
        self.engine
            .call(
                &self.sid,
                call("execute_sql", json!({ "sql": sql })),
                Approval::Fail,
            )
            .await
    }

    fn log_size(&self) -> u64 {
        let log = self
            .root
            .join(".nbook/agent/sessions")
            .join(format!("{}.jsonl", self.sid));
        std::fs::metadata(log).map(|m| m.len()).unwrap_or(0)
    }
}

fn details(r: &CallResult) -> Value {
    r.details.clone().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runaway_recursive_cte_stops_at_the_time_limit() {
    let f = fixture(Some(300));
    let started = Instant::now();
    let r = f
        .sql("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n")
        .await;
    let took = started.elapsed();
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(
        r.content
            .contains("longer than the 300 ms limit and was stopped"),
        "{}",
        r.content
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");
    // A runaway write is stopped the same way, and writes nothing.
    let r = f
        .sql("INSERT INTO Story (title) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT 'x' FROM n WHERE i < 0 OR i > 0")
        .await;
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(r.content.contains("was stopped"), "{}", r.content);
    let r = f.sql("SELECT count(*) AS n FROM Story").await;
    assert_eq!(details(&r)["rows"][0]["n"], 0);
    // The pooled connection is not left with the limit: ordinary work goes on.
    let r = f.sql("SELECT 1 AS one").await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_values_cells_and_results_are_capped_and_the_log_stays_small() {
    let f = fixture(None);
    // A 50 MB value is never built: SQLite's length limit stops it at the source (printf
    // gives up and yields NULL; other functions fail as too big).
    let r = f.sql("SELECT printf('%.*c', 50e6, 'x') AS big").await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(details(&r)["rows"][0]["big"], Value::Null);
    let r = f.sql("SELECT length(randomblob(50e6)) AS n").await;
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(
        r.content
            .contains("larger than the 4 MiB execute_sql allows"),
        "{}",
        r.content
    );
    // One 3 MB cell is cut, with a notice.
    let r = f.sql("SELECT printf('%.*c', 3000000, 'x') AS big").await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let d = details(&r);
    let cell = d["rows"][0]["big"].as_str().unwrap();
    assert!(cell.len() < 3_000, "{}", cell.len());
    assert!(
        cell.ends_with("…[2998000 more characters]"),
        "{}",
        &cell[cell.len() - 40..]
    );
    assert_eq!(d["truncated"], true);
    assert!(
        d["notice"].as_str().unwrap().contains("1 cell(s) cut"),
        "{d}"
    );
    // 200 rows of 1 MB cells: the result stops at its byte cap and says so.
    let r = f
        .sql("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) SELECT i, printf('%.*c', 1000000, 'x') AS big FROM n")
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let d = details(&r);
    let n = d["rowCount"].as_u64().unwrap();
    assert!((1..200).contains(&n), "{n}");
    assert_eq!(d["rows"].as_array().unwrap().len() as u64, n);
    let notice = d["notice"].as_str().unwrap();
    assert!(
        notice.contains(&format!("{n} rows returned; more rows were not read"))
            && notice.contains("48 KiB"),
        "{notice}"
    );
    assert!(r.content.len() < 56 * 1024, "{}", r.content.len());
    // The session log grew by the capped results only, each logged whole.
    assert!(f.log_size() < 300 * 1024, "log is {} bytes", f.log_size());
    assert!(!f
        .root
        .join(".nbook/agent/sessions")
        .join(format!("{}.blobs", f.sid))
        .exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_own_tables_are_never_written() {
    let f = fixture(None);
    let r = f
        .sql("INSERT INTO Story (title) VALUES ('a') RETURNING id")
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let bytes = std::fs::read(f.db()).unwrap();
    let wal = std::fs::read(f.db().with_extension("sqlite-wal")).unwrap_or_default();
    for sql in [
        "DELETE FROM sqlite_sequence",
        "UPDATE sqlite_sequence SET seq = 0",
        "INSERT INTO sqlite_sequence (name, seq) VALUES ('Story', 99)",
        "DELETE FROM SQLITE_SEQUENCE WHERE name = 'Story'",
    ] {
        let r = f.sql(sql).await;
        assert_eq!(r.status, CallStatus::ToolError, "{sql}: {}", r.content);
        assert!(
            r.content.contains("execute_sql refused")
                && r.content
                    .contains("SQLite's internal table sqlite_sequence"),
            "{sql}: {}",
            r.content
        );
    }
    assert_eq!(std::fs::read(f.db()).unwrap(), bytes);
    assert_eq!(
        std::fs::read(f.db().with_extension("sqlite-wal")).unwrap_or_default(),
        wal
    );
    // Reading it is fine, and AUTOINCREMENT still keeps it.
    let r = f
        .sql("SELECT seq FROM sqlite_sequence WHERE name = 'Story'")
        .await;
    assert_eq!(details(&r)["rows"][0]["seq"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_from_a_newer_nbook_is_read_only_and_left_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let db = root.join(".nbook/project.sqlite");
    // A newer nbook wrote it: a higher user_version, back in rollback-journal mode. (Made
    // without the engine, so no pooled connection of this process has it open.)
    {
        let c = nbook::store::open(&db).unwrap();
        c.execute("INSERT INTO Story (title) VALUES ('Kept')", [])
            .unwrap();
        c.pragma_update(None, "user_version", 99).unwrap();
        c.pragma_update(None, "journal_mode", "DELETE").unwrap();
    }
    let bytes = std::fs::read(&db).unwrap();
    let reason = nbook::store::read_only_reason(&db).expect("a newer database is read-only");
    let known = nbook::store::KNOWN_VERSION;
    let msg = reason.to_string();
    assert!(
        msg.contains(&format!(
            "written by a newer nbook (version 99 > {known}); opened read-only"
        )) && msg.contains("Update nbook"),
        "{msg}"
    );
    let mut config = Config::default();
    config.approval.preset = Preset::Neurobook;
    let engine = engine(&root, &tmp, config);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let keeper = engine
        .create_session("world.engine", Mode::Normal, "w", None)
        .unwrap()
        .id;
    let run = |name: &'static str, args: Value| {
        let e = engine.clone();
        let s = if name == "execute_world" {
            keeper.clone()
        } else {
            sid.clone()
        };
        async move {
            e.call(
                &s,
                call(name, args),
                Approval::Auto {
                    decision: Decision::Approve,
                    by: "test",
                },
            )
            .await
        }
    };
    let r = run("execute_sql", json!({"sql": "SELECT title FROM Story"})).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(details(&r)["rows"][0]["title"], "Kept");
    let newer = format!("written by a newer nbook (version 99 > {known}); opened read-only");
    let r = run(
        "execute_sql",
        json!({"sql": "UPDATE Story SET title = 'x'"}),
    )
    .await;
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(r.content.contains(&newer), "{}", r.content);
    let r = run(
        "save_story_thread",
        json!({"action": "create", "name": "t", "title": "T"}),
    )
    .await;
    assert_ne!(r.status, CallStatus::Ok, "{}", r.content);
    assert!(r.content.contains(&newer), "{}", r.content);
    let r = run(
        "execute_world",
        json!({"code": "await world.slice.write({time: 5, patches: [{subjectId: 'c-a', type: 'character', name: 'A', path: '/x', op: 'replace', value: 1}]}); return 1;"}),
    )
    .await;
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(r.content.contains("newer nbook"), "{}", r.content);
    drop(engine);
    assert_eq!(
        std::fs::read(&db).unwrap(),
        bytes,
        "the newer database was written"
    );
    let v: u32 = rusqlite::Connection::open(&db)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, 99);
}
