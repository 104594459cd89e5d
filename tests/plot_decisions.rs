//! Decision lifecycle through the tools: create rules, the status invariants on the merged final
//! state, rejected-alternative skeletons only on the transition into `decided`, chosenOption,
//! references and anchors.

#[path = "plot_support.rs"]
mod support;

use serde_json::json;
use support::book;

fn create() -> serde_json::Value {
    json!({"action": "create", "name": "d-truth", "title": "Who writes the book", "question": "Is it Elspeth?",
           "options": [{"option": "Elspeth"}, {"option": "Thomas", "note": "too early"}, {"option": "Nobody"}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_makes_an_open_decision_and_refuses_settled_fields() {
    let b = book();
    for (field, value) in [
        ("status", json!("decided")),
        ("decision", json!("x")),
        ("motivation", json!("x")),
        ("risk", json!("x")),
        ("rejectedAlternatives", json!([])),
        ("supersededById", json!("1")),
        ("chosenOption", json!("Elspeth")),
    ] {
        let mut args = create();
        args[field] = value;
        b.fails(
            "save_story_decision",
            args,
            &[&format!("/{field}"), "open decision"],
        )
        .await;
    }
    for missing in ["name", "title", "question"] {
        let mut args = create();
        args.as_object_mut().unwrap().remove(missing);
        b.fails("save_story_decision", args, &[&format!("/{missing}")])
            .await;
    }
    let mut args = create();
    args["decisionId"] = json!("1");
    b.fails("save_story_decision", args, &["/decisionId"]).await;
    let d = b.ok("save_story_decision", create()).await;
    assert_eq!(d["status"], "open");
    assert_eq!(d["rejectedAlternatives"], json!([]));
    assert_eq!(
        d["anchor"],
        json!({"kind": "story", "id": null, "path": null})
    );
    b.fails(
        "save_story_decision",
        json!({"action": "update", "question": "?"}),
        &["/decisionId", "required"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decided_needs_decision_motivation_and_risk() {
    let b = book();
    b.ok("save_story_decision", create()).await;
    b.fails(
        "save_story_decision",
        json!({"action": "decide", "decisionId": "1", "motivation": "m", "risk": "r"}),
        &["/decision"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "decide", "decisionId": "1", "decision": "d", "risk": "r"}),
        &["/motivation"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "decide", "decisionId": "1", "decision": "d", "motivation": "m"}),
        &["/risk"],
    )
    .await;
    b.fails("save_story_decision", json!({"action": "decide", "decisionId": "1", "decision": "d", "motivation": "m", "risk": "  "}), &["/risk"]).await;
    // The same through update + status.
    b.fails("save_story_decision", json!({"action": "update", "decisionId": "1", "status": "decided", "decision": "d", "motivation": "m"}), &["/risk"]).await;
    // Fields written earlier count: the invariant looks at the merged final state.
    b.ok("save_story_decision", json!({"action": "update", "decisionId": "1", "decision": "d", "motivation": "m", "risk": "r"})).await;
    let d = b
        .ok(
            "save_story_decision",
            json!({"action": "decide", "decisionId": "1"}),
        )
        .await;
    assert_eq!(d["status"], "decided");
    // Clearing a required field of a decided decision is refused.
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "risk": null}),
        &["/risk"],
    )
    .await;
    // decide and drop force their status.
    b.fails(
        "save_story_decision",
        json!({"action": "drop", "decisionId": "1", "note": "n", "status": "open"}),
        &["/status"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_needs_a_note_and_superseded_a_valid_other_decision() {
    let b = book();
    b.ok("save_story_decision", create()).await;
    b.ok(
        "save_story_decision",
        json!({"action": "create", "name": "d2", "title": "D2", "question": "?"}),
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "drop", "decisionId": "1"}),
        &["/note"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "drop", "decisionId": "1", "note": " "}),
        &["/note"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "status": "superseded"}),
        &["/supersededById"],
    )
    .await;
    b.fails("save_story_decision", json!({"action": "update", "decisionId": "1", "status": "superseded", "supersededById": "1"}), &["/supersededById", "itself"]).await;
    b.fails("save_story_decision", json!({"action": "update", "decisionId": "1", "status": "superseded", "supersededById": "99"}), &["/supersededById", "no decision with id 99"]).await;
    let d = b.ok("save_story_decision", json!({"action": "update", "decisionId": "1", "status": "superseded", "supersededById": 2})).await;
    assert_eq!(
        (d["status"].as_str(), d["supersededById"].as_str()),
        (Some("superseded"), Some("2"))
    );
    // Reopen, then drop with a note.
    b.ok(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "status": "open"}),
    )
    .await;
    let d = b
        .ok(
            "save_story_decision",
            json!({"action": "drop", "decisionId": "1", "note": "the subplot was cut"}),
        )
        .await;
    assert_eq!(d["status"], "dropped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_alternatives_are_generated_only_on_the_transition_into_decided() {
    let b = book();
    b.ok("save_story_decision", create()).await;
    let settle = json!({"action": "decide", "decisionId": "1", "decision": "Elspeth, alive", "motivation": "m", "risk": "r", "chosenOption": "Elspeth"});
    // chosenOption must match an option.
    let mut bad = settle.clone();
    bad["chosenOption"] = json!("Magnus");
    b.fails(
        "save_story_decision",
        bad,
        &["/chosenOption", "Elspeth / Thomas / Nobody"],
    )
    .await;
    // chosenOption and rejectedAlternatives exclude each other.
    let mut both = settle.clone();
    both["rejectedAlternatives"] = json!([{"option": "Thomas"}]);
    b.fails("save_story_decision", both, &["/chosenOption", "not both"])
        .await;
    // chosenOption is only valid on the transition.
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "chosenOption": "Elspeth"}),
        &["/chosenOption"],
    )
    .await;
    let d = b.ok("save_story_decision", settle).await;
    assert_eq!(
        d["rejectedAlternatives"],
        json!([{"option": "Thomas", "whyRejected": null}, {"option": "Nobody", "whyRejected": null}])
    );
    // Filling in the reasons later is not overwritten by another update.
    b.ok("save_story_decision", json!({"action": "update", "decisionId": "1", "rejectedAlternatives": [{"option": "Thomas", "whyRejected": "too early"}]})).await;
    let d = b.ok("save_story_decision", json!({"action": "update", "decisionId": "1", "options": [{"option": "Elspeth"}, {"option": "Isbister"}]})).await;
    assert_eq!(
        d["rejectedAlternatives"],
        json!([{"option": "Thomas", "whyRejected": "too early"}])
    );
    // Decided again (already decided): no new skeletons, chosenOption refused.
    b.fails(
        "save_story_decision",
        json!({"action": "decide", "decisionId": "1", "chosenOption": "Elspeth"}),
        &["/chosenOption"],
    )
    .await;
    // Without chosenOption every option becomes a rejected alternative (a brand-new answer).
    b.ok("save_story_decision", json!({"action": "create", "name": "d2", "title": "D2", "question": "?", "options": [{"option": "a"}, {"option": "b"}]})).await;
    let d = b.ok("save_story_decision", json!({"action": "decide", "decisionId": "2", "decision": "c", "motivation": "m", "risk": "r"})).await;
    assert_eq!(
        d["rejectedAlternatives"],
        json!([{"option": "a", "whyRejected": null}, {"option": "b", "whyRejected": null}])
    );
    // Explicit alternatives on the transition are taken as given.
    b.ok("save_story_decision", json!({"action": "create", "name": "d3", "title": "D3", "question": "?", "options": [{"option": "a"}, {"option": "b"}]})).await;
    let d = b.ok("save_story_decision", json!({"action": "decide", "decisionId": "3", "decision": "a", "motivation": "m", "risk": "r", "rejectedAlternatives": [{"option": "b", "whyRejected": "dull"}]})).await;
    assert_eq!(
        d["rejectedAlternatives"],
        json!([{"option": "b", "whyRejected": "dull"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_and_anchors_are_checked_on_write_and_flagged_on_read() {
    let b = book();
    b.outline(1).await;
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "p", "title": "P"}),
    )
    .await;
    let mut args = create();
    args["serves"] = json!(["promise://1", "lorebook/character/ada/"]);
    args["dependsOn"] = json!(["thread://1", "scene://1"]);
    args["anchor"] = json!({"kind": "chapter", "id": "2"});
    args["deadlineChapterId"] = json!("2");
    let d = b.ok("save_story_decision", args).await;
    assert_eq!(
        d["serves"],
        json!([{"target": "promise://1", "valid": true}, {"target": "lorebook/character/ada/", "valid": true}])
    );
    assert_eq!(
        d["anchor"],
        json!({"kind": "chapter", "id": "2", "path": null})
    );
    assert_eq!(d["deadlineChapter"]["name"], "ch-2");
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "serves": ["promise://1", "promise://9"]}),
        &["/serves/1", "promise://9"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "dependsOn": ["/etc/passwd"]}),
        &["/dependsOn/0"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "dependsOn": ["act://1"]}),
        &["/dependsOn/0"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "deadlineChapterId": "9"}),
        &["/deadlineChapterId"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "anchor": {"kind": "scene", "id": "7"}}),
        &["/anchor/id", "no scene with id 7"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "anchor": {"kind": "scene"}}),
        &["/anchor/id"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "anchor": {"kind": "story", "id": "1"}}),
        &["/anchor/id"],
    )
    .await;
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "anchor": {"kind": "content"}}),
        &["/anchor/path"],
    )
    .await;
    b.fails("save_story_decision", json!({"action": "update", "decisionId": "1", "anchor": {"kind": "thread", "id": "1", "path": "x/"}}), &["/anchor/path"]).await;
    let d = b.ok("save_story_decision", json!({"action": "update", "decisionId": "1", "anchor": {"kind": "content", "path": "lorebook/item/weather-book/"}})).await;
    assert_eq!(d["anchor"]["path"], "lorebook/item/weather-book/");
    // When a referenced record goes (hard delete by the author), reads flag it; an anchor whose
    // target went reads as story.
    b.ok(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "anchor": {"kind": "promise", "id": "1"}}),
    )
    .await;
    b.conn()
        .execute("DELETE FROM StoryPromise WHERE id = 1", [])
        .unwrap();
    let d = b.ok("get_story_decision", json!({"decisionId": "1"})).await;
    assert_eq!(
        d["serves"][0],
        json!({"target": "promise://1", "valid": false})
    );
    assert_eq!(d["anchor"]["kind"], "story");
    let list = b.ok("get_story_decision", json!({})).await;
    assert_eq!(list[0]["serves"][0]["valid"], false);
}

/// Issue 12 rule 9: `decide` identifies the chosen option by its text, so two options whose
/// text is equal after trimming are refused on create and on update, and nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_option_texts_are_refused_on_create_and_update() {
    let b = book();
    let before = b.db_bytes();
    let mut args = create();
    args["options"] =
        json!([{"option": "Elspeth"}, {"option": "Thomas"}, {"option": "  Elspeth "}]);
    let e = b
        .fails(
            "save_story_decision",
            args,
            &["/options/2/option", "Elspeth", "/options/0/option"],
        )
        .await;
    assert!(e.contains("trimming"), "{e}");
    assert_eq!(b.db_bytes(), before, "a refused create writes nothing");
    let count = || {
        b.conn()
            .query_row("SELECT count(*) FROM StoryDecision", [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap()
    };
    assert_eq!(count(), 0);
    b.ok("save_story_decision", create()).await;
    let options = || {
        b.conn()
            .query_row(
                "SELECT options, updatedAt FROM StoryDecision WHERE id = 1",
                [],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
            )
            .unwrap()
    };
    let stored = options();
    b.fails(
        "save_story_decision",
        json!({"action": "update", "decisionId": "1", "title": "Renamed",
               "options": [{"option": "Nobody"}, {"option": "Nobody\t", "note": "again"}]}),
        &["/options/1/option", "Nobody"],
    )
    .await;
    assert_eq!(options(), stored, "a refused update changes nothing");
    let d = b.ok("get_story_decision", json!({"decisionId": "1"})).await;
    assert_eq!(
        d["title"], "Who writes the book",
        "nothing of the refused update was written"
    );
    // Distinct texts are fine, and are stored trimmed.
    let d = b
        .ok(
            "save_story_decision",
            json!({"action": "update", "decisionId": "1", "options": [{"option": " Nobody "}, {"option": "Somebody"}]}),
        )
        .await;
    assert_eq!(d["options"][0]["option"], "Nobody");
}
