//! Every kind of bad input to the plot writes is a clear error naming the field, and leaves
//! project.sqlite byte-identical: unknown ids, illegal lifecycle transitions, missing required
//! fields, fields an action does not take, dangling references, duplicate names, too many or
//! duplicate subject ids, bad world-anchor times. Also on a fresh database, where even the lazy
//! Story row must not appear.

#[path = "plot_support.rs"]
mod support;

use serde_json::{json, Value};
use support::book;

fn anchor_with(f: impl FnOnce(&mut Value)) -> Value {
    let mut a = json!({"startTime": "1911-03-02 06:00", "endTime": "1911-03-02 07:00", "startInstant": null, "endInstant": null, "subjectIds": ["ada"], "locationSubjectId": null});
    f(&mut a);
    a
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_write_on_a_fresh_database_creates_nothing() {
    let b = book();
    b.fails(
        "save_story_act",
        json!({"action": "create", "title": "No name"}),
        &["/name", "required"],
    )
    .await;
    b.fails(
        "save_story_chapter",
        json!({"action": "create", "name": "c", "title": "C", "actId": "4"}),
        &["/actId", "no act with id 4"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "create", "name": "d", "title": "D"}),
        &["/question"],
    )
    .await;
    let n: i64 = b
        .conn()
        .query_row("SELECT COUNT(*) FROM Story", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_input_names_its_field_and_changes_nothing() {
    let b = book();
    b.outline(2).await;
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "p", "title": "P"}),
    )
    .await;
    b.ok("save_story_decision", json!({"action": "create", "name": "d", "title": "D", "question": "?", "options": [{"option": "a"}]})).await;
    let too_many: Vec<String> = (0..101).map(|i| format!("s{i}")).collect();
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        // Unknown ids.
        (
            "save_story_act",
            json!({"action": "update", "actId": "9", "title": "x"}),
            vec!["/actId", "no act with id 9"],
        ),
        (
            "save_story_chapter",
            json!({"action": "update", "chapterId": "9", "title": "x"}),
            vec!["/chapterId", "no chapter with id 9"],
        ),
        (
            "save_story_thread",
            json!({"action": "update", "threadId": "9", "title": "x"}),
            vec!["/threadId", "no thread with id 9"],
        ),
        (
            "save_story_thread",
            json!({"action": "update", "threadId": "1", "storyPhaseId": "3"}),
            vec!["/storyPhaseId", "no phase"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "9", "title": "x"}),
            vec!["/sceneId", "no scene with id 9"],
        ),
        (
            "save_story_scene",
            json!({"action": "create", "threadId": "9", "title": "x"}),
            vec!["/threadId"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "threadId": "9"}),
            vec!["/threadId"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "chapterId": "9"}),
            vec!["/chapterId"],
        ),
        (
            "save_story_promise",
            json!({"action": "update", "promiseId": "9", "title": "x"}),
            vec!["/promiseId", "no promise with id 9"],
        ),
        (
            "save_promise_beat",
            json!({"action": "set", "promiseId": "9", "sceneId": "1", "kind": "plant"}),
            vec!["/promiseId"],
        ),
        (
            "save_promise_beat",
            json!({"action": "set", "promiseId": "1", "sceneId": "9", "kind": "plant"}),
            vec!["/sceneId"],
        ),
        (
            "save_story_decision",
            json!({"action": "update", "decisionId": "9", "title": "x"}),
            vec!["/decisionId", "no decision with id 9"],
        ),
        (
            "save_story_act",
            json!({"action": "update", "actId": "0", "title": "x"}),
            vec!["/actId"],
        ),
        (
            "save_story_act",
            json!({"action": "update", "actId": "abc", "title": "x"}),
            vec!["/actId"],
        ),
        // Illegal lifecycle transitions.
        (
            "save_story_thread",
            json!({"action": "archive", "threadId": "1", "status": "done"}),
            vec!["/status"],
        ),
        (
            "save_story_scene",
            json!({"action": "archive", "sceneId": "1", "status": "written"}),
            vec!["/status"],
        ),
        (
            "save_story_promise",
            json!({"action": "abandon", "promiseId": "1", "status": "open"}),
            vec!["/status"],
        ),
        (
            "save_story_decision",
            json!({"action": "decide", "decisionId": "1", "decision": "a"}),
            vec!["/motivation"],
        ),
        (
            "save_story_decision",
            json!({"action": "drop", "decisionId": "1"}),
            vec!["/note"],
        ),
        (
            "save_story_decision",
            json!({"action": "update", "decisionId": "1", "status": "superseded"}),
            vec!["/supersededById"],
        ),
        (
            "save_story_decision",
            json!({"action": "update", "decisionId": "1", "chosenOption": "a"}),
            vec!["/chosenOption"],
        ),
        // Missing required fields per action.
        (
            "save_story_act",
            json!({"action": "create", "name": "x"}),
            vec!["/title"],
        ),
        (
            "save_story_act",
            json!({"action": "update", "title": "x"}),
            vec!["/actId", "required"],
        ),
        (
            "save_story_chapter",
            json!({"action": "create", "title": "x"}),
            vec!["/name"],
        ),
        (
            "save_story_chapter",
            json!({"action": "update", "title": "x"}),
            vec!["/chapterId"],
        ),
        (
            "save_story_thread",
            json!({"action": "create", "name": "x"}),
            vec!["/title"],
        ),
        (
            "save_story_scene",
            json!({"action": "create", "threadId": "1"}),
            vec!["/title"],
        ),
        (
            "save_story_promise",
            json!({"action": "create", "title": "x"}),
            vec!["/name"],
        ),
        (
            "save_story_promise",
            json!({"action": "fulfill"}),
            vec!["/promiseId"],
        ),
        (
            "save_promise_beat",
            json!({"action": "set", "promiseId": "1", "sceneId": "1"}),
            vec!["/kind"],
        ),
        (
            "save_story_decision",
            json!({"action": "create", "name": "x", "question": "?"}),
            vec!["/title"],
        ),
        (
            "save_story_decision",
            json!({"action": "decide", "decision": "a"}),
            vec!["/decisionId"],
        ),
        (
            "save_story_act",
            json!({"action": "create", "name": "  ", "title": "x"}),
            vec!["/name", "empty"],
        ),
        // Fields an action does not take.
        (
            "save_story_act",
            json!({"action": "create", "actId": "1", "name": "x", "title": "x"}),
            vec!["/actId", "update"],
        ),
        (
            "save_story_chapter",
            json!({"action": "create", "chapterId": "1", "name": "x", "title": "x"}),
            vec!["/chapterId"],
        ),
        (
            "save_story_thread",
            json!({"action": "create", "threadId": "1", "name": "x", "title": "x"}),
            vec!["/threadId"],
        ),
        (
            "save_story_scene",
            json!({"action": "create", "sceneId": "1", "title": "x"}),
            vec!["/sceneId"],
        ),
        (
            "save_story_promise",
            json!({"action": "create", "promiseId": "1", "name": "x", "title": "x"}),
            vec!["/promiseId"],
        ),
        (
            "save_story_promise",
            json!({"action": "create", "name": "x", "title": "x", "status": "open"}),
            vec!["/status"],
        ),
        (
            "save_promise_beat",
            json!({"action": "remove", "promiseId": "1", "sceneId": "1", "note": "n"}),
            vec!["/note"],
        ),
        (
            "save_promise_beat",
            json!({"action": "remove", "promiseId": "1", "sceneId": "1", "autoFulfill": false}),
            vec!["/autoFulfill"],
        ),
        (
            "save_story_decision",
            json!({"action": "create", "name": "x", "title": "x", "question": "?", "risk": "r"}),
            vec!["/risk"],
        ),
        (
            "save_story_decision",
            json!({"action": "create", "decisionId": "1", "name": "x", "title": "x", "question": "?"}),
            vec!["/decisionId"],
        ),
        (
            "save_story_act",
            json!({"action": "create", "name": "x", "title": "x", "colour": "red"}),
            vec!["colour"],
        ),
        (
            "save_story_thread",
            json!({"action": "delete", "threadId": "1"}),
            vec!["/action"],
        ),
        // Bad values.
        (
            "save_story_thread",
            json!({"action": "update", "threadId": "1", "status": "finished"}),
            vec!["/status"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "outcomeType": "maybe"}),
            vec!["/outcomeType"],
        ),
        (
            "save_story_promise",
            json!({"action": "update", "promiseId": "1", "cadenceChapters": 0}),
            vec!["/cadenceChapters"],
        ),
        (
            "save_story_act",
            json!({"action": "update", "actId": "1", "sortOrder": -1}),
            vec!["/sortOrder"],
        ),
        // Dangling references.
        (
            "save_story_decision",
            json!({"action": "update", "decisionId": "1", "serves": ["thread://1", "decision://7"]}),
            vec!["/serves/1", "decision://7"],
        ),
        (
            "save_story_decision",
            json!({"action": "update", "decisionId": "1", "dependsOn": ["scene://44"]}),
            vec!["/dependsOn/0"],
        ),
        (
            "save_story_decision",
            json!({"action": "update", "decisionId": "1", "dependsOn": ["C:\\x"]}),
            vec!["/dependsOn/0"],
        ),
        (
            "save_story_decision",
            json!({"action": "update", "decisionId": "1", "deadlineChapterId": "12"}),
            vec!["/deadlineChapterId"],
        ),
        (
            "save_story_decision",
            json!({"action": "update", "decisionId": "1", "supersededById": "12"}),
            vec!["/supersededById"],
        ),
        (
            "save_story_decision",
            json!({"action": "update", "decisionId": "1", "anchor": {"kind": "act", "id": "12"}}),
            vec!["/anchor/id"],
        ),
        (
            "save_story_promise",
            json!({"action": "update", "promiseId": "1", "deadlineChapterId": "12"}),
            vec!["/deadlineChapterId"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "refs": [{"relation": "r", "target": "lorebook/x/", "visibility": "author"}, {"relation": "r", "target": "scene://12", "visibility": "author"}]}),
            vec!["/refs/1/target", "no scene with id 12"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "refs": [{"relation": "r", "target": "thread://nope", "visibility": "author"}]}),
            vec!["/refs/0/target", "no thread named 'nope'"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "refs": [{"relation": "r", "target": "../outside", "visibility": "author"}]}),
            vec!["/refs/0/target"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "refs": [{"relation": "r", "target": "x/", "visibility": "author"}, {"relation": "r", "target": "./x/", "visibility": "reader"}]}),
            vec!["/refs/1", "duplicate"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "refs": [{"relation": "r", "target": "plot://1", "visibility": "author"}]}),
            vec!["/refs/0/target"],
        ),
        // Duplicate names.
        (
            "save_story_act",
            json!({"action": "create", "name": "act-1", "title": "x"}),
            vec!["/name", "already exists"],
        ),
        (
            "save_story_thread",
            json!({"action": "create", "name": "the-book", "title": "x"}),
            vec!["/name"],
        ),
        (
            "save_story_promise",
            json!({"action": "create", "name": "p", "title": "x"}),
            vec!["/name"],
        ),
        (
            "save_story_decision",
            json!({"action": "create", "name": "d", "title": "x", "question": "?"}),
            vec!["/name"],
        ),
        // Subject ids.
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "worldAnchor": anchor_with(|a| a["subjectIds"] = json!(too_many))}),
            vec!["/worldAnchor/subjectIds"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "worldAnchor": anchor_with(|a| a["subjectIds"] = json!(["ada", "magnus", "thomas", "ada"]))}),
            vec!["/worldAnchor/subjectIds/3", "duplicate subject id 'ada'"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "worldAnchor": anchor_with(|a| a["subjectIds"] = json!(["ada", " magnus"]))}),
            vec!["/worldAnchor/subjectIds/1"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "worldAnchor": anchor_with(|a| a["locationSubjectId"] = json!(" "))}),
            vec!["/worldAnchor/locationSubjectId"],
        ),
        // World-anchor times.
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "worldAnchor": anchor_with(|a| a["startTime"] = json!("1911-02-30 06:00"))}),
            vec!["/worldAnchor/startTime", "day 30"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "worldAnchor": anchor_with(|a| a["endTime"] = json!("0-01-01"))}),
            vec!["/worldAnchor/endTime", "no year 0"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "worldAnchor": anchor_with(|a| a["startTime"] = json!("instant:5"))}),
            vec!["/worldAnchor/startTime"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "worldAnchor": anchor_with(|a| a["startTime"] = json!("1911-03-02 25:00"))}),
            vec!["/worldAnchor/startTime", "hour"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "worldAnchor": anchor_with(|a| a["endTime"] = json!("1911-03-01 23:00"))}),
            vec!["/worldAnchor/endTime", "ends before it starts"],
        ),
        (
            "save_story_scene",
            json!({"action": "update", "sceneId": "1", "worldAnchor": anchor_with(|a| { a.as_object_mut().unwrap().remove("endTime"); })}),
            vec!["endTime"],
        ),
    ];
    let n = cases.len();
    for (tool, args, needles) in cases {
        b.fails(tool, args, &needles).await;
    }
    assert!(n >= 70, "{n} cases");
    // And the same scene updates are fine with good input.
    b.ok("save_story_scene", json!({"action": "update", "sceneId": "1", "worldAnchor": anchor_with(|a| a["startTime"] = json!("BC 44-03-15 12:00"))})).await;
}
