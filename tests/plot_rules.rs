//! Plot rules through the real engine on a real project database: the lazy Story, NeuroBook's
//! storage conventions, thread/scene archive, name uniqueness, list ordering, and the
//! plot.selection defaults and their errors.

#[path = "plot_support.rs"]
mod support;

use serde_json::json;
use support::{book, id};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_story_is_created_by_the_first_write_and_rows_keep_neurobook_formats() {
    let b = book();
    // A read on an empty project writes nothing: the story is shown as it will be created.
    let before = b.db_bytes();
    let tree = b.ok("get_story_tree", json!({})).await;
    assert_eq!(tree["story"]["id"], json!(null));
    assert_eq!(tree["story"]["title"], "The Hesta Light");
    assert_eq!(before, b.db_bytes());

    let act = b
        .ok(
            "save_story_act",
            json!({"action": "create", "name": "act-1", "title": "Act One"}),
        )
        .await;
    assert_eq!(act["id"], "1");
    assert_eq!(act["storyId"], "1");
    assert_eq!(act["sortOrder"], 0);
    let conn = b.conn();
    let (title, summary, created, updated): (String, String, String, String) = conn
        .query_row(
            "SELECT title, summary, createdAt, updatedAt FROM Story",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((title.as_str(), summary.as_str()), ("The Hesta Light", ""));
    for ts in [&created, &updated] {
        assert_eq!(ts.len(), 29, "{ts}");
        assert!(
            ts.ends_with("+00:00") && ts.contains('T') && ts.as_bytes()[19] == b'.',
            "{ts}"
        );
    }
    // JSON text columns hold NeuroBook's shapes; booleans are 1/0.
    b.ok("save_story_thread", json!({"action": "create", "name": "t", "title": "T", "isMainThread": true, "tags": [" motif ", "", "motif", "x"]})).await;
    let (tags, main): (String, i64) = conn
        .query_row("SELECT tags, isMainThread FROM StoryThread", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(tags, r#"["motif","x"]"#);
    assert_eq!(main, 1);
    b.ok("save_story_scene", json!({"action": "create", "title": "S", "worldAnchor": {"startTime": "1911-03-02 06:30", "endTime": "1911-03-02 08:00", "startInstant": null, "endInstant": null, "subjectIds": ["ada", "magnus"], "locationSubjectId": "hesta"}})).await;
    let (subjects, start, end): (String, i64, i64) = conn
        .query_row(
            "SELECT subjectIdsJson, startInstant, endInstant FROM StoryScene",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(subjects, r#"["ada","magnus"]"#);
    assert_eq!(end - start, 90 * 60);
    // 1911-03-02 06:30 in seconds from 0001-01-01 00:00 (unix time + 62135596800).
    assert_eq!(start, -1_856_712_600 + 62_135_596_800);
    b.ok("save_story_decision", json!({"action": "create", "name": "d", "title": "D", "question": "Q?", "options": [{"option": "a"}, {"option": "b", "note": "n"}]})).await;
    let options: String = conn
        .query_row("SELECT options FROM StoryDecision", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        options,
        r#"[{"option":"a","note":null},{"option":"b","note":"n"}]"#
    );
    // updatedAt moves on every write.
    std::thread::sleep(std::time::Duration::from_millis(5));
    b.ok(
        "save_story_act",
        json!({"action": "update", "actId": "1", "summary": "s"}),
    )
    .await;
    let (c2, u2): (String, String) = conn
        .query_row("SELECT createdAt, updatedAt FROM StoryAct", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert!(u2 > c2, "{c2} {u2}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archive_forces_the_status_and_refuses_another() {
    let b = book();
    b.outline(1).await;
    let t = b
        .ok(
            "save_story_thread",
            json!({"action": "archive", "threadId": "1", "note": "cut"}),
        )
        .await;
    assert_eq!(t["status"], "archived");
    assert_eq!(t["note"], "cut");
    // The scenes of an archived thread stay as they are.
    assert_eq!(t["scenes"][0]["status"], "draft");
    b.fails(
        "save_story_thread",
        json!({"action": "archive", "threadId": "1", "status": "active"}),
        &["/status", "archive"],
    )
    .await;
    let s = b
        .ok(
            "save_story_scene",
            json!({"action": "archive", "sceneId": "1"}),
        )
        .await;
    assert_eq!(s["status"], "archived");
    b.fails(
        "save_story_scene",
        json!({"action": "archive", "sceneId": "1", "status": "draft"}),
        &["/status"],
    )
    .await;
    // Free status changes otherwise, including un-archiving.
    let s = b
        .ok(
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "status": "written"}),
        )
        .await;
    assert_eq!(s["status"], "written");
    let t = b
        .ok(
            "save_story_thread",
            json!({"action": "update", "threadId": "1", "status": "paused"}),
        )
        .await;
    assert_eq!(t["status"], "paused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_are_unique_per_story() {
    let b = book();
    b.outline(0).await;
    b.fails(
        "save_story_act",
        json!({"action": "create", "name": "act-1", "title": "Again"}),
        &["/name", "act-1", "already exists"],
    )
    .await;
    b.fails(
        "save_story_chapter",
        json!({"action": "create", "name": "ch-2", "title": "Again"}),
        &["/name"],
    )
    .await;
    b.fails(
        "save_story_chapter",
        json!({"action": "update", "chapterId": "1", "name": "ch-2"}),
        &["/name"],
    )
    .await;
    b.fails(
        "save_story_thread",
        json!({"action": "create", "name": "the-book", "title": "Again"}),
        &["/name"],
    )
    .await;
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "p", "title": "P"}),
    )
    .await;
    b.fails(
        "save_story_promise",
        json!({"action": "create", "name": "p", "title": "P2"}),
        &["/name"],
    )
    .await;
    b.ok(
        "save_story_decision",
        json!({"action": "create", "name": "d", "title": "D", "question": "?"}),
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "create", "name": "d", "title": "D2", "question": "?"}),
        &["/name"],
    )
    .await;
    // Renaming to its own name is fine.
    b.ok(
        "save_story_thread",
        json!({"action": "update", "threadId": "1", "name": "the-book"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_come_in_notes_order() {
    let b = book();
    b.outline(3).await;
    for (name, importance) in [
        ("low-open", "low"),
        ("high-open", "high"),
        ("med-open", "medium"),
        ("high-done", "high"),
    ] {
        b.ok(
            "save_story_promise",
            json!({"action": "create", "name": name, "title": name, "importance": importance}),
        )
        .await;
    }
    b.ok(
        "save_story_promise",
        json!({"action": "abandon", "promiseId": "2"}),
    )
    .await; // high-open → abandoned
    b.ok(
        "save_story_promise",
        json!({"action": "fulfill", "promiseId": "4"}),
    )
    .await; // high-done → fulfilled
    let list = b.ok("get_story_promise", json!({})).await;
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["med-open", "low-open", "high-done", "high-open"]);

    for n in ["d1", "d2", "d3", "d4", "d5"] {
        b.ok(
            "save_story_decision",
            json!({"action": "create", "name": n, "title": n, "question": "?"}),
        )
        .await;
    }
    b.ok(
        "save_story_decision",
        json!({"action": "drop", "decisionId": "1", "note": "moot"}),
    )
    .await;
    b.ok("save_story_decision", json!({"action": "decide", "decisionId": "2", "decision": "x", "motivation": "y", "risk": "z"})).await;
    b.ok("save_story_decision", json!({"action": "update", "decisionId": "3", "status": "superseded", "supersededById": "2"})).await;
    let list = b.ok("get_story_decision", json!({})).await;
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["d4", "d5", "d2", "d3", "d1"]);

    // Tree: acts/chapters by sortOrder then id; scenes in thread order.
    b.ok("save_story_chapter", json!({"action": "create", "name": "prologue", "title": "Prologue", "actId": "1", "sortOrder": 0})).await;
    let tree = b.ok("get_story_tree", json!({})).await;
    let chapters: Vec<&str> = tree["acts"][0]["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        chapters,
        ["ch-1", "prologue", "ch-2"],
        "ties on sortOrder fall back to id"
    );
    let scenes: Vec<&str> = tree["ungroupedThreads"][0]["scenes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap())
        .collect();
    assert_eq!(scenes, ["Scene 1", "Scene 2", "Scene 3"]);
    assert_eq!(
        tree["totals"],
        json!({"phases": 0, "threads": 1, "scenes": 3, "acts": 1, "chapters": 3})
    );
    assert_eq!(tree["openPromiseCount"], 2);
    assert_eq!(tree["openDecisionCount"], 2);
    // A chapter lists its scenes in chapter order.
    let ch = b.ok("get_story_chapter", json!({"chapterId": "1"})).await;
    assert_eq!(ch["totalScenes"], 3);
    assert_eq!(ch["scenes"][2]["chapterSortOrder"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selection_defaults_ids_and_explains_what_is_missing() {
    let b = book();
    b.ok(
        "save_story_act",
        json!({"action": "create", "name": "a", "title": "A"}),
    )
    .await;
    // Nothing selected yet.
    b.fails(
        "save_story_scene",
        json!({"action": "create", "title": "S"}),
        &["/threadId", "no threadId given"],
    )
    .await;
    let r = b.call("get_story_thread", json!({})).await;
    assert!(!r.ok && r.content.contains("/threadId"), "{}", r.content);
    let r = b.call("get_story_scene_context", json!({})).await;
    assert!(!r.ok && r.content.contains("/sceneId"), "{}", r.content);
    b.fails(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "1", "kind": "plant"}),
        &["/sceneId"],
    )
    .await;

    // Creating a thread selects it; a scene created without threadId lands there and is selected.
    let t = b
        .ok(
            "save_story_thread",
            json!({"action": "create", "name": "t1", "title": "T1"}),
        )
        .await;
    assert_eq!(b.selection()["threadId"], id(&t));
    assert_eq!(b.selection()["projectRoot"], "book");
    let s = b
        .ok(
            "save_story_scene",
            json!({"action": "create", "title": "S1"}),
        )
        .await;
    assert_eq!(s["threadId"], "1");
    assert_eq!(b.selection()["sceneId"], "1");
    // Update without sceneId targets the selected scene.
    let s = b
        .ok(
            "save_story_scene",
            json!({"action": "update", "summary": "now"}),
        )
        .await;
    assert_eq!(
        (s["id"].as_str(), s["summary"].as_str()),
        (Some("1"), Some("now"))
    );
    // Reading another thread selects it and clears the scene.
    b.ok(
        "save_story_thread",
        json!({"action": "create", "name": "t2", "title": "T2"}),
    )
    .await;
    b.ok("get_story_thread", json!({"threadId": "1"})).await;
    assert_eq!(b.selection()["threadId"], "1");
    assert!(b.selection().get("sceneId").is_none());
    b.fails(
        "save_story_scene",
        json!({"action": "update", "summary": "x"}),
        &["/sceneId"],
    )
    .await;
    // Reading a scene selects it and its thread.
    let ctx = b
        .ok("get_story_scene_context", json!({"sceneId": "1"}))
        .await;
    assert_eq!(ctx["thread"]["id"], "1");
    assert_eq!(ctx["chapterPlot"], json!(null));
    assert_eq!(
        (
            b.selection()["threadId"].as_str(),
            b.selection()["sceneId"].as_str()
        ),
        (Some("1"), Some("1"))
    );
    // Beats default the scene from the selection.
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "p", "title": "P"}),
    )
    .await;
    let p = b
        .ok(
            "save_promise_beat",
            json!({"action": "set", "promiseId": "1", "kind": "plant"}),
        )
        .await;
    assert_eq!(p["beats"][0]["sceneId"], "1");
    // A selection from another project is refused, and an unknown project too.
    b.engine
        .set_session_state(
            &b.sid,
            vec![(
                "plot.selection".into(),
                json!({"projectRoot": "other-book", "threadId": "1", "sceneId": "1"}),
            )],
        )
        .unwrap();
    b.fails(
        "save_story_scene",
        json!({"action": "update", "summary": "y"}),
        &["/sceneId", "belongs to project other-book"],
    )
    .await;
    b.fails(
        "save_story_scene",
        json!({"action": "update", "sceneId": "1", "projectRoot": "other-book", "summary": "y"}),
        &["/projectRoot", "not open"],
    )
    .await;
    b.fails(
        "save_story_scene",
        json!({"action": "update", "sceneId": "1", "projectRoot": "../x", "summary": "y"}),
        &["/projectRoot"],
    )
    .await;
}
