//! novel_rankings and novel_book_detail through the engine: snapshot locations and their
//! priority, the shipped sample, fetchedAt citations, staleness warnings and every error.
//!
//! The config folder comes from `NBOOK_HOME`, so the tests take a lock and point it at their
//! own temporary home.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, CallResult, CallStatus, Engine, Mode, ToolCall};
use serde_json::{json, Value};

static ENV_LOCK: Mutex<()> = Mutex::new(());

struct Fixture {
    _guard: MutexGuard<'static, ()>,
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    engine: Arc<Engine>,
    sid: String,
}

fn fixture() -> Fixture {
    let guard = ENV_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::env::set_var("NBOOK_HOME", &home);
    let dirs = Dirs {
        config: home.clone(),
        data: home.join("data"),
        logs: home.join("logs"),
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
        .create_session("researcher", Mode::Normal, "t", None)
        .unwrap()
        .id;
    Fixture {
        _guard: guard,
        _tmp: tmp,
        root,
        home,
        engine,
        sid,
    }
}

async fn call(f: &Fixture, name: &str, args: Value) -> CallResult {
    let c = ToolCall {
        id: String::new(),
        name: name.into(),
        arguments: args,
    };
    f.engine.call(&f.sid, c, Approval::Queue).await
}

fn ok(r: &CallResult) -> Value {
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    r.details.clone().expect("details")
}

fn failed(r: &CallResult, needle: &str) {
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(
        r.content.contains(needle),
        "expected {needle:?} in: {}",
        r.content
    );
}

fn write(dir: &Path, name: &str, v: &Value) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), serde_json::to_string_pretty(v).unwrap()).unwrap();
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

fn days_ago(n: i64) -> String {
    (time::OffsetDateTime::now_utc() - time::Duration::days(n))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

fn snapshot(platform: &str, board: &str, fetched: &str, items: Value) -> Value {
    json!({"platform": platform, "board": board, "fetchedAt": fetched, "items": items})
}

fn warnings(d: &Value) -> Vec<String> {
    d["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_sample_is_used_when_no_snapshot_exists() {
    let f = fixture();
    let d = ok(&call(
        &f,
        "novel_rankings",
        json!({"platform": "qidian", "board": "yuepiao"}),
    )
    .await);
    assert_eq!(d["fetchedAt"], json!("2026-07-20T08:00:00Z"));
    assert!(d["snapshot"].as_str().unwrap().contains("built-in sample"));
    assert!(d["citation"]
        .as_str()
        .unwrap()
        .contains("2026-07-20T08:00:00Z"));
    assert_eq!(d["items"][0]["bookId"], json!("1001"));
    let w = warnings(&d).join("\n");
    assert!(w.contains("built-in sample"), "{w}");
    // The sample was fetched long before today, so it is stale.
    assert_eq!(d["stale"], json!(true));
    assert!(w.contains("days ago"), "{w}");
    // The marked-stale sample board says so.
    let d = ok(&call(
        &f,
        "novel_rankings",
        json!({"platform": "fanqie", "board": "0_1_1139"}),
    )
    .await);
    assert!(warnings(&d).join("\n").contains("marked stale"));
    // And book detail works against it.
    let d = ok(&call(
        &f,
        "novel_book_detail",
        json!({"platform": "qidian", "bookId": "1001"}),
    )
    .await);
    assert_eq!(d["book"]["title"], json!("Lantern of the Northern Pass"));
    assert_eq!(d["detail"]["chapters"], json!(812));
    let boards: Vec<&str> = d["rankings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["board"].as_str().unwrap())
        .collect();
    assert_eq!(boards, vec!["yuepiao", "hotsales"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_project_snapshot_cites_its_fetch_time_without_warnings() {
    let f = fixture();
    let fetched = now();
    write(
        &f.root.join(".nbook/research"),
        "qidian.json",
        &json!({"platform": "qidian", "board": "recom", "boardName": "推荐榜", "fetchedAt": fetched, "source": "NovelScope",
                "items": [{"rank": 1, "bookId": 42, "title": "Fresh Book", "author": "A"}]}),
    );
    let d = ok(&call(
        &f,
        "novel_rankings",
        json!({"platform": "qidian", "board": "recom"}),
    )
    .await);
    assert_eq!(d["fetchedAt"], json!(fetched));
    assert_eq!(d["stale"], json!(false));
    assert_eq!(d["ageDays"], json!(0));
    assert_eq!(d["boardName"], json!("推荐榜"));
    assert_eq!(d["snapshot"], json!(".nbook/research/qidian.json"));
    assert!(warnings(&d).is_empty(), "{:?}", warnings(&d));
    // The sample is not mixed in once real snapshots exist.
    let r = call(
        &f,
        "novel_rankings",
        json!({"platform": "qidian", "board": "yuepiao"}),
    )
    .await;
    failed(&r, "available boards: recom");
    // Numeric book ids match their string form.
    let d = ok(&call(
        &f,
        "novel_book_detail",
        json!({"platform": "qidian", "bookId": "42"}),
    )
    .await);
    assert_eq!(d["book"]["title"], json!("Fresh Book"));
    assert_eq!(d["rankings"][0]["rank"], json!(1));
    assert_eq!(d["fetchedAt"], json!(fetched));
    assert_eq!(d["stale"], json!(false));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_or_flagged_snapshots_warn() {
    let f = fixture();
    let old = days_ago(30);
    write(
        &f.root.join("reference/rankings"),
        "boards.json",
        &json!([
            snapshot("qidian", "old", &old, json!([{"rank": 1, "bookId": "b1", "title": "Old"}])),
            {"platform": "qidian", "board": "flagged", "fetchedAt": now(), "stale": true,
             "items": [{"rank": 1, "bookId": "b2", "title": "Flagged"}]},
            snapshot("qidian", "nodate", "last tuesday", json!([{"rank": 1, "bookId": "b3", "title": "No date"}]))
        ]),
    );
    let d = ok(&call(
        &f,
        "novel_rankings",
        json!({"platform": "qidian", "board": "old"}),
    )
    .await);
    assert_eq!(d["stale"], json!(true));
    assert_eq!(d["ageDays"], json!(30));
    let w = warnings(&d).join("\n");
    assert!(w.contains(&old) && w.contains("30 days ago"), "{w}");
    let d = ok(&call(
        &f,
        "novel_rankings",
        json!({"platform": "qidian", "board": "flagged"}),
    )
    .await);
    assert_eq!(d["stale"], json!(true));
    assert!(warnings(&d).join("\n").contains("marked stale"));
    let d = ok(&call(
        &f,
        "novel_rankings",
        json!({"platform": "qidian", "board": "nodate"}),
    )
    .await);
    assert_eq!(d["stale"], json!(true));
    assert!(warnings(&d).join("\n").contains("no valid fetchedAt"));
    let d = ok(&call(
        &f,
        "novel_book_detail",
        json!({"platform": "qidian", "bookId": "b1"}),
    )
    .await);
    assert_eq!(d["stale"], json!(true));
    assert!(warnings(&d).join("\n").contains("30 days ago"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locations_and_their_priority() {
    let f = fixture();
    // Same board in the project (.nbook/research) and the config folder: the project wins.
    write(
        &f.root.join(".nbook/research"),
        "a.json",
        &json!({"snapshots": [snapshot("qidian", "yuepiao", &now(), json!([{"rank": 1, "bookId": "p", "title": "Project"}]))]}),
    );
    write(
        &f.home.join("research"),
        "a.json",
        &json!([
            snapshot(
                "qidian",
                "yuepiao",
                &now(),
                json!([{"rank": 1, "bookId": "c", "title": "Config"}])
            ),
            snapshot(
                "fanqie",
                "0_1_1139",
                &now(),
                json!([{"rank": 1, "bookId": "f", "title": "Fanqie"}])
            )
        ]),
    );
    let d = ok(&call(
        &f,
        "novel_rankings",
        json!({"platform": "qidian", "board": "yuepiao"}),
    )
    .await);
    assert_eq!(d["items"][0]["title"], json!("Project"));
    // The config folder's other boards are still available.
    let d = ok(&call(
        &f,
        "novel_rankings",
        json!({"platform": "fanqie", "board": "0_1_1139"}),
    )
    .await);
    assert_eq!(d["items"][0]["title"], json!("Fanqie"));
    assert!(d["snapshot"].as_str().unwrap().ends_with("research/a.json"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_files_are_skipped_with_a_warning() {
    let f = fixture();
    let dir = f.root.join(".nbook/research");
    write(
        &dir,
        "good.json",
        &snapshot(
            "qidian",
            "yuepiao",
            &now(),
            json!([{"rank": 1, "bookId": "g", "title": "Good"}]),
        ),
    );
    std::fs::write(dir.join("broken.json"), "{not json").unwrap();
    write(&dir, "shapeless.json", &json!({"platform": "qidian"}));
    let d = ok(&call(
        &f,
        "novel_rankings",
        json!({"platform": "qidian", "board": "yuepiao"}),
    )
    .await);
    let w = warnings(&d).join("\n");
    assert!(w.contains("skipped .nbook/research/broken.json"), "{w}");
    assert!(
        w.contains("skipped a snapshot in .nbook/research/shapeless.json"),
        "{w}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_platform_board_and_book_list_what_exists() {
    let f = fixture();
    let r = call(
        &f,
        "novel_rankings",
        json!({"platform": "jjwxc", "board": "x"}),
    )
    .await;
    failed(
        &r,
        "no ranking snapshot for platform \"jjwxc\"; available platforms: fanqie, qidian",
    );
    let r = call(
        &f,
        "novel_rankings",
        json!({"platform": "qidian", "board": "nope"}),
    )
    .await;
    failed(&r, "available boards: yuepiao, hotsales");
    let r = call(
        &f,
        "novel_book_detail",
        json!({"platform": "qidian", "bookId": "9999"}),
    )
    .await;
    failed(&r, "known book ids: 1001, 1002, 1003");
    let r = call(
        &f,
        "novel_book_detail",
        json!({"platform": "jjwxc", "bookId": "1"}),
    )
    .await;
    failed(&r, "available platforms");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_are_validated_with_pointers() {
    let f = fixture();
    let cases = [
        ("novel_rankings", json!({"platform": "qidian"}), ""),
        (
            "novel_rankings",
            json!({"platform": "", "board": "x"}),
            "/platform",
        ),
        (
            "novel_rankings",
            json!({"platform": "qidian", "board": 3}),
            "/board",
        ),
        (
            "novel_rankings",
            json!({"platform": "qidian", "board": "x", "extra": 1}),
            "",
        ),
        ("novel_book_detail", json!({"platform": "qidian"}), ""),
        (
            "novel_book_detail",
            json!({"platform": "qidian", "bookId": ""}),
            "/bookId",
        ),
    ];
    for (tool, args, pointer) in cases {
        let r = call(&f, tool, args.clone()).await;
        assert_eq!(
            r.status,
            CallStatus::InvalidArgs,
            "{tool} {args}: {}",
            r.content
        );
        assert!(r.content.contains(pointer), "{tool} {args}: {}", r.content);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn research_tools_are_read_only_and_in_the_researcher_profile() {
    let f = fixture();
    for name in ["novel_rankings", "novel_book_detail"] {
        let t = &f.engine.registry().get(name).expect(name).tool;
        assert_eq!(t.mutates().label(), "no");
        assert!(t.parallel_safe());
    }
    // A researcher session may call them (the profile's allowlist), and nothing is written.
    let before: Vec<_> = walk(&f.root);
    ok(&call(
        &f,
        "novel_rankings",
        json!({"platform": "qidian", "board": "yuepiao"}),
    )
    .await);
    let after: Vec<_> = walk(&f.root);
    assert_eq!(
        before
            .iter()
            .filter(|p| !p.contains("sessions"))
            .collect::<Vec<_>>(),
        after
            .iter()
            .filter(|p| !p.contains("sessions"))
            .collect::<Vec<_>>()
    );
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out.sort();
    out
}
