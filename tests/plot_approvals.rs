//! Plot writes under the approval gate: the preview is the field diff of every record the
//! call will change (derived changes included) computed without writing; a row changed by
//! someone else between preview and approval makes the call stale; a rejected call changes
//! nothing.

#[path = "plot_support.rs"]
mod support;

use std::time::Duration;

use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, PendingCall, PreviewBody, RecordChange, ToolCall,
};
use serde_json::{json, Value};
use support::{book, Book};

async fn queued(
    b: &Book,
    tool: &str,
    args: Value,
) -> (tokio::task::JoinHandle<CallResult>, PendingCall) {
    let (e, s) = (b.engine.clone(), b.sid.clone());
    let call = ToolCall {
        id: String::new(),
        name: tool.into(),
        arguments: args,
    };
    let h = tokio::spawn(async move { e.call(&s, call, Approval::Queue).await });
    for _ in 0..1000 {
        if let Some(p) = b.engine.pending().into_iter().next() {
            return (h, p);
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("the call never reached the approval queue");
}

fn records(p: &PendingCall) -> Vec<RecordChange> {
    match &p.preview.body {
        PreviewBody::Records { changes } => changes.clone(),
        other => panic!("expected a records preview, got {other:?}"),
    }
}

fn field<'a>(c: &'a RecordChange, name: &str) -> Option<(&'a Value, &'a Value)> {
    c.fields
        .iter()
        .find(|f| f.field == name)
        .map(|f| (&f.before, &f.after))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payoff_preview_lists_the_promise_status_change_and_writes_nothing() {
    let b = book();
    b.outline(1).await;
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "the-hand", "title": "Whose hand"}),
    )
    .await;
    let before = b.db_bytes();
    let (h, p) = queued(&b, "save_promise_beat", json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "payoff", "note": "hers"})).await;
    let changes = records(&p);
    assert_eq!(changes.len(), 2, "{changes:#?}");
    assert_eq!(changes[0].action, "create");
    assert!(
        changes[0].record.starts_with("StoryPromiseBeat #1"),
        "{}",
        changes[0].record
    );
    assert_eq!(
        field(&changes[0], "kind"),
        Some((&json!(null), &json!("payoff")))
    );
    assert_eq!(
        field(&changes[0], "note"),
        Some((&json!(null), &json!("hers")))
    );
    assert_eq!(changes[1].record, "StoryPromise #1 (the-hand)");
    assert_eq!(changes[1].action, "fulfil (payoff beat)");
    assert_eq!(
        changes[1].fields.len(),
        1,
        "only the status changes: {:?}",
        changes[1].fields
    );
    assert_eq!(
        field(&changes[1], "status"),
        Some((&json!("open"), &json!("fulfilled")))
    );
    assert!(
        p.preview.summary.contains("+1 more record"),
        "{}",
        p.preview.summary
    );
    // Targets: the promise and the scene the outcome depends on.
    let keys: Vec<&str> = p.preview.targets.iter().map(|t| t.key.as_str()).collect();
    assert!(
        keys.contains(&"StoryPromise#1") && keys.contains(&"StoryScene#1"),
        "{keys:?}"
    );
    assert_eq!(before, b.db_bytes(), "the preview wrote nothing");
    b.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(
        b.ok("get_story_promise", json!({"promiseId": "1"})).await["status"],
        "fulfilled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn derived_changes_show_in_archive_and_decide_previews() {
    let b = book();
    b.outline(1).await;
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "p", "title": "P"}),
    )
    .await;
    b.ok(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "payoff"}),
    )
    .await;
    let (h, p) = queued(
        &b,
        "save_story_scene",
        json!({"action": "archive", "sceneId": "1"}),
    )
    .await;
    let changes = records(&p);
    assert_eq!(changes[0].action, "archive");
    assert_eq!(
        field(&changes[0], "status"),
        Some((&json!("draft"), &json!("archived")))
    );
    assert_eq!(changes[1].action, "reopen (no valid payoff beat left)");
    assert_eq!(
        field(&changes[1], "status"),
        Some((&json!("fulfilled"), &json!("open")))
    );
    b.engine
        .decide(
            &p.approval_id,
            Decision::Reject {
                reason: Some("keep it".into()),
            },
        )
        .unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Rejected);
    assert_eq!(
        b.ok("get_story_promise", json!({"promiseId": "1"})).await["status"],
        "fulfilled"
    );

    b.ok("save_story_decision", json!({"action": "create", "name": "d", "title": "D", "question": "?", "options": [{"option": "a"}, {"option": "b"}]})).await;
    let (h, p) = queued(&b, "save_story_decision", json!({"action": "decide", "decisionId": "1", "decision": "a", "motivation": "m", "risk": "r", "chosenOption": "a"})).await;
    let changes = records(&p);
    assert_eq!(changes.len(), 1);
    assert_eq!(
        field(&changes[0], "rejectedAlternatives"),
        Some((&json!([]), &json!([{"option": "b", "whyRejected": null}])))
    );
    assert_eq!(
        field(&changes[0], "status"),
        Some((&json!("open"), &json!("decided")))
    );
    b.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    assert!(h.await.unwrap().ok);
    // Scene refs show as one field of the scene, not as separate rows.
    let (h, p) = queued(&b, "save_story_scene", json!({"action": "update", "sceneId": "1", "refs": [{"relation": "defines", "target": "lorebook/x/", "visibility": "reader"}]})).await;
    let changes = records(&p);
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(
        field(&changes[0], "refs"),
        Some((
            &json!([]),
            &json!([{"relation": "defines", "target": "lorebook/x/", "visibility": "reader", "note": null}])
        ))
    );
    b.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    assert!(h.await.unwrap().ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_changed_after_the_preview_makes_the_call_stale() {
    let b = book();
    b.outline(1).await;
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "p", "title": "P"}),
    )
    .await;
    let (h, p) = queued(
        &b,
        "save_promise_beat",
        json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "payoff"}),
    )
    .await;
    // Someone else (NeuroBook, the author in another pane) changes the promise meanwhile.
    b.conn().execute("UPDATE StoryPromise SET summary = 'changed elsewhere', updatedAt = '2030-01-01T00:00:00.000+00:00' WHERE id = 1", []).unwrap();
    let before = b.db_bytes();
    b.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Stale, "{}", r.content);
    assert_eq!(before, b.db_bytes(), "a stale call writes nothing");
    let beats: i64 = b
        .conn()
        .query_row("SELECT COUNT(*) FROM StoryPromiseBeat", [], |r| r.get(0))
        .unwrap();
    assert_eq!(beats, 0);

    // A row the outcome depends on counts too: archiving the scene before approval.
    let (h, p) = queued(
        &b,
        "save_promise_beat",
        json!({"action": "set", "promiseId": "1", "sceneId": "1", "kind": "payoff"}),
    )
    .await;
    b.conn()
        .execute("UPDATE StoryScene SET status = 'archived' WHERE id = 1", [])
        .unwrap();
    b.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Stale);
    // A row that is unrelated does not.
    b.conn()
        .execute("UPDATE StoryScene SET status = 'draft' WHERE id = 1", [])
        .unwrap();
    let (h, p) = queued(
        &b,
        "save_story_thread",
        json!({"action": "update", "threadId": "1", "summary": "s"}),
    )
    .await;
    b.conn()
        .execute("UPDATE StoryAct SET summary = 'x' WHERE id = 1", [])
        .unwrap();
    b.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_never_wait_and_writes_wait_in_every_mode_under_supervision() {
    let b = book();
    b.outline(0).await;
    let r = b
        .engine
        .call(
            &b.sid,
            ToolCall {
                id: String::new(),
                name: "get_story_tree".into(),
                arguments: json!({}),
            },
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok);
    let r = b
        .engine
        .call(
            &b.sid,
            ToolCall {
                id: String::new(),
                name: "save_story_act".into(),
                arguments: json!({"action": "create", "name": "x", "title": "X"}),
            },
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::NeedsApproval);
    assert!(r.preview.is_some());
    let tools = b.engine.registry();
    for name in [
        "save_story_act",
        "save_story_chapter",
        "save_story_thread",
        "save_story_scene",
        "save_story_promise",
        "save_promise_beat",
        "save_story_decision",
    ] {
        let t = tools.get(name).unwrap();
        assert_eq!(t.tool.group(), "plot");
        assert_eq!(t.tool.mutates().label(), "yes", "{name}");
    }
    for name in [
        "get_story_tree",
        "get_story_thread",
        "get_story_scene_context",
        "get_story_chapter",
        "get_chapter_writer_brief",
        "get_story_promise",
        "get_story_decision",
    ] {
        let t = tools.get(name).unwrap();
        assert_eq!(t.tool.mutates().label(), "no", "{name}");
        assert!(
            !t.tool.parallel_safe(),
            "{name} is sequential as in NeuroBook"
        );
    }
    // The writer profile may read the plot but not write it.
    let w = b
        .engine
        .create_session("writer", nbook::engine::Mode::Normal, "w", None)
        .unwrap()
        .id;
    let r = b
        .engine
        .call(
            &w,
            ToolCall {
                id: String::new(),
                name: "save_story_act".into(),
                arguments: json!({"action": "create", "name": "y", "title": "Y"}),
            },
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::NotAllowed);
    let r = b
        .engine
        .call(
            &w,
            ToolCall {
                id: String::new(),
                name: "get_chapter_writer_brief".into(),
                arguments: json!({"chapterId": "1"}),
            },
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
}
