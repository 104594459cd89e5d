//! Promise derivation through the tools: derivedStage and beatStats, one beat per promise ×
//! scene, auto-fulfil on payoff, and the revert rules (beat removal, payoff → other kind, scene
//! archive, scene and thread hard delete).

#[path = "plot_support.rs"]
mod support;

use nbook::plot::ledger::NodeRef;
use nbook::plot::{PlotDb, ProjectMeta};
use serde_json::json;
use support::book;

async fn promise_status(b: &support::Book, id: &str) -> String {
    b.ok("get_story_promise", json!({"promiseId": id})).await["status"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stage_and_stats_follow_the_beats_and_their_scenes() {
    let b = book();
    b.outline(4).await;
    let p = b.ok("save_story_promise", json!({"action": "create", "name": "the-hand", "title": "Whose hand", "importance": "high", "tags": ["setup_payoff"]})).await;
    assert_eq!(p["status"], "open");
    assert_eq!(p["derivedStage"], "unplanted");
    assert_eq!(p["beatStats"]["total"], 0);
    b.fails(
        "save_story_promise",
        json!({"action": "create", "name": "x", "title": "X", "status": "fulfilled"}),
        &["/status", "always open"],
    )
    .await;

    let p = b.ok("save_promise_beat", json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "plant", "note": "only the date"})).await;
    assert_eq!(p["derivedStage"], "planted");
    b.ok(
        "save_story_scene",
        json!({"action": "update", "sceneId": "1", "status": "written"}),
    )
    .await;
    let p = b
        .ok(
            "save_promise_beat",
            json!({"action": "set", "promiseId": "1", "sceneId": "2", "kind": "setback"}),
        )
        .await;
    assert_eq!(p["derivedStage"], "echoed");
    assert_eq!(
        p["beatStats"],
        json!({"total": 2, "byKind": {"plant": 1, "advance": 0, "setback": 1, "payoff": 0}, "byState": {"planned": 1, "factual": 1, "archived": 0}})
    );
    assert_eq!(p["beats"][0]["state"], "factual");
    assert_eq!(p["beats"][0]["scene"]["chapter"]["name"], "ch-1");
    // One beat per promise × scene: setting again replaces the kind and keeps the note.
    let p = b
        .ok(
            "save_promise_beat",
            json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "advance"}),
        )
        .await;
    assert_eq!(p["beats"].as_array().unwrap().len(), 2);
    assert_eq!(
        (
            p["beats"][0]["kind"].as_str(),
            p["beats"][0]["note"].as_str()
        ),
        (Some("advance"), Some("only the date"))
    );
    assert_eq!(p["derivedStage"], "echoed");
    // An archived scene's beats take part in no derivation.
    b.ok(
        "save_story_scene",
        json!({"action": "archive", "sceneId": "2"}),
    )
    .await;
    b.ok(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "plant"}),
    )
    .await;
    let p = b.ok("get_story_promise", json!({"promiseId": "1"})).await;
    assert_eq!(p["derivedStage"], "planted");
    assert_eq!(p["beatStats"]["byKind"]["setback"], 0);
    assert_eq!(p["beatStats"]["byState"]["archived"], 1);
    // The list carries the same derived values.
    let list = b.ok("get_story_promise", json!({})).await;
    assert_eq!(list[0]["derivedStage"], "planted");
    assert_eq!(list[0]["beatStats"]["total"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payoff_fulfils_unless_told_not_to_or_the_scene_is_archived() {
    let b = book();
    b.outline(3).await;
    for n in ["a", "b", "c", "d"] {
        b.ok(
            "save_story_promise",
            json!({"action": "create", "name": n, "title": n}),
        )
        .await;
    }
    let p = b
        .ok(
            "save_promise_beat",
            json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "payoff"}),
        )
        .await;
    assert_eq!(
        (p["status"].as_str(), p["derivedStage"].as_str()),
        (Some("fulfilled"), Some("paid_off"))
    );
    let p = b.ok("save_promise_beat", json!({"action": "set", "promiseId": "2", "sceneId": "1", "kind": "payoff", "autoFulfill": false})).await;
    assert_eq!(
        (p["status"].as_str(), p["derivedStage"].as_str()),
        (Some("open"), Some("paid_off"))
    );
    b.ok(
        "save_story_scene",
        json!({"action": "archive", "sceneId": "3"}),
    )
    .await;
    let p = b
        .ok(
            "save_promise_beat",
            json!({"action": "set", "promiseId": "3", "sceneId": "3", "kind": "payoff"}),
        )
        .await;
    assert_eq!(p["status"], "open");
    // An abandoned promise stays abandoned.
    b.ok(
        "save_story_promise",
        json!({"action": "abandon", "promiseId": "4"}),
    )
    .await;
    let p = b
        .ok(
            "save_promise_beat",
            json!({"action": "set", "promiseId": "4", "sceneId": "2", "kind": "payoff"}),
        )
        .await;
    assert_eq!(p["status"], "abandoned");
    // Reopen by update + status open; fulfil by hand.
    let p = b
        .ok(
            "save_story_promise",
            json!({"action": "update", "promiseId": "4", "status": "open"}),
        )
        .await;
    assert_eq!(p["status"], "open");
    b.fails(
        "save_story_promise",
        json!({"action": "fulfill", "promiseId": "4", "status": "abandoned"}),
        &["/status"],
    )
    .await;
    assert_eq!(
        b.ok(
            "save_story_promise",
            json!({"action": "fulfill", "promiseId": "4"})
        )
        .await["status"],
        "fulfilled"
    );
    // remove takes only promiseId and sceneId; a missing beat is not found.
    b.fails(
        "save_promise_beat",
        json!({"action": "remove", "promiseId": "1", "sceneId": "1", "kind": "payoff"}),
        &["/kind"],
    )
    .await;
    b.fails(
        "save_promise_beat",
        json!({"action": "remove", "promiseId": "1", "sceneId": "2"}),
        &["/sceneId", "no beat"],
    )
    .await;
    b.fails(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "1", "sceneId": "2"}),
        &["/kind"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fulfilled_reverts_when_no_valid_payoff_is_left() {
    let b = book();
    b.outline(3).await;
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "p", "title": "P"}),
    )
    .await;
    // Two payoffs: removing one keeps it fulfilled; removing the last reopens it.
    b.ok(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "payoff"}),
    )
    .await;
    b.ok("save_promise_beat", json!({"action": "set", "promiseId": "1", "sceneId": "2", "kind": "payoff", "autoFulfill": false})).await;
    b.ok(
        "save_promise_beat",
        json!({"action": "remove", "promiseId": "1", "sceneId": "1"}),
    )
    .await;
    assert_eq!(promise_status(&b, "1").await, "fulfilled");
    let p = b
        .ok(
            "save_promise_beat",
            json!({"action": "remove", "promiseId": "1", "sceneId": "2"}),
        )
        .await;
    assert_eq!(p["status"], "open");
    // Payoff → another kind reopens.
    b.ok(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "payoff"}),
    )
    .await;
    assert_eq!(promise_status(&b, "1").await, "fulfilled");
    let p = b
        .ok(
            "save_promise_beat",
            json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "advance"}),
        )
        .await;
    assert_eq!(p["status"], "open");
    // Archiving the payoff scene reopens; un-archiving does not fulfil again.
    b.ok(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "payoff"}),
    )
    .await;
    b.ok(
        "save_story_scene",
        json!({"action": "archive", "sceneId": "1"}),
    )
    .await;
    assert_eq!(promise_status(&b, "1").await, "open");
    b.ok(
        "save_story_scene",
        json!({"action": "update", "sceneId": "1", "status": "draft"}),
    )
    .await;
    assert_eq!(promise_status(&b, "1").await, "open");
    // ...but its payoff beat on the restored scene counts again for the next check.
    b.ok(
        "save_story_promise",
        json!({"action": "fulfill", "promiseId": "1"}),
    )
    .await;
    b.ok(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "1", "sceneId": "3", "kind": "plant"}),
    )
    .await;
    b.ok(
        "save_promise_beat",
        json!({"action": "remove", "promiseId": "1", "sceneId": "3"}),
    )
    .await;
    assert_eq!(promise_status(&b, "1").await, "fulfilled");
    // A hand-fulfilled promise without any payoff is reverted by the next check (NeuroBook).
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "q", "title": "Q"}),
    )
    .await;
    b.ok(
        "save_story_promise",
        json!({"action": "fulfill", "promiseId": "2"}),
    )
    .await;
    b.ok(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "2", "sceneId": "3", "kind": "plant"}),
    )
    .await;
    assert_eq!(promise_status(&b, "2").await, "fulfilled");
    b.ok(
        "save_promise_beat",
        json!({"action": "remove", "promiseId": "2", "sceneId": "3"}),
    )
    .await;
    assert_eq!(promise_status(&b, "2").await, "open");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_deletes_cascade_and_reopen_promises() {
    let b = book();
    b.outline(2).await;
    b.ok(
        "save_story_thread",
        json!({"action": "create", "name": "t2", "title": "T2"}),
    )
    .await;
    b.ok(
        "save_story_scene",
        json!({"action": "create", "threadId": "2", "title": "Other"}),
    )
    .await;
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "p", "title": "P"}),
    )
    .await;
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "q", "title": "Q"}),
    )
    .await;
    b.ok(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "payoff"}),
    )
    .await;
    b.ok(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "2", "sceneId": "3", "kind": "payoff"}),
    )
    .await;
    b.ok("save_story_scene", json!({"action": "update", "sceneId": "2", "refs": [{"relation": "depends_on", "target": "scene://3", "visibility": "author"}]})).await;
    let db = PlotDb::new(b.db_path(), ProjectMeta::load(&b.root));
    // The summary lists what goes; nothing changes.
    let before = b.db_bytes();
    let s = db.read(|p| p.cascade_summary(NodeRef::Thread(2))).unwrap();
    assert_eq!(before, b.db_bytes());
    assert!(s.target.starts_with("StoryThread #2"), "{}", s.target);
    assert!(
        s.deleted.contains(&("scenes".to_string(), 1))
            && s.deleted.contains(&("promise beats".to_string(), 1)),
        "{s:?}"
    );
    assert!(
        s.detached
            .contains(&("refs from other scenes left dangling".to_string(), 1)),
        "{s:?}"
    );
    assert_eq!(s.reopened_promises, vec!["#2 (q)".to_string()]);
    assert!(s.lines().iter().any(|l| l.contains("reopens promise #2")));
    // Deleting the thread deletes its scene and beat and reopens q.
    let out = db.commit(|p| p.hard_delete(NodeRef::Thread(2))).unwrap();
    assert!(out
        .changes
        .iter()
        .any(|c| c.record.starts_with("StoryScene #3") && c.action == "delete"));
    assert!(out
        .changes
        .iter()
        .any(|c| c.record.starts_with("StoryPromise #2")
            && c.fields
                .iter()
                .any(|f| f.field == "status" && f.after == "open")));
    assert_eq!(promise_status(&b, "2").await, "open");
    let ctx = b
        .ok("get_story_scene_context", json!({"sceneId": "2"}))
        .await;
    assert_eq!(ctx["scene"]["refs"][0]["valid"], false);
    // Scene delete: its beats go, p reopens.
    db.commit(|p| p.hard_delete(NodeRef::Scene(1))).unwrap();
    assert_eq!(promise_status(&b, "1").await, "open");
    assert_eq!(
        b.ok("get_story_promise", json!({"promiseId": "1"})).await["beats"],
        json!([])
    );
    // Chapter delete unplaces scenes; act delete ungroups chapters.
    db.commit(|p| p.hard_delete(NodeRef::Chapter(1))).unwrap();
    let s = b
        .ok("get_story_scene_context", json!({"sceneId": "2"}))
        .await;
    assert_eq!(
        (
            s["scene"]["chapterId"].clone(),
            s["scene"]["chapterSortOrder"].clone()
        ),
        (json!(null), json!(null))
    );
    db.commit(|p| p.hard_delete(NodeRef::Act(1))).unwrap();
    let tree = b.ok("get_story_tree", json!({})).await;
    assert_eq!(tree["ungroupedChapters"][0]["name"], "ch-2");
    // Agents have no way to delete: no such action.
    let r = b
        .call(
            "save_story_thread",
            json!({"action": "delete", "threadId": "1"}),
        )
        .await;
    assert_eq!(r.status, nbook::engine::CallStatus::InvalidArgs);
}
