//! The board runs the selected workflow (issue #17), end to end: the real engine, the real
//! agent host with the models of config.toml served by a real HTTP model server speaking the
//! OpenAI wire format (tests/provider_support), the real scheduler (`nbook::runner`) and real
//! QuickJS for code nodes. A custom workflow with its own column ids (`outline`, `draft`,
//! `edit`, `done`) is created with `fn_workflow_create` by an agent (approved), selected for
//! a task with `fn_workflow_select`, tuned with `fn_workflow_settings`, and the board:
//! - hands the approved review to the author when `reviewHandoffPolicy` is `always`, and
//!   gives it to the merger when the author sets it back to `disabled`;
//! - keeps the draft column's `wip` limit (`maxParallelSteps`) as the setting says;
//! - follows the edge a code node's result names (skipping the review), and parks the task
//!   with the reason when the code node runs past its `timeoutMs`.

mod runner_workflow_support;

use std::time::Duration;

use nbook::board::tasks;
use nbook::runner::{APPROVED, PARKED};
use runner_workflow_support::*;
use serde_json::json;

/// The end-to-end test: the same custom workflow, two values of its
/// `reviewHandoffPolicy`, two different boards. With `always` the approved review waits for
/// the author in `edit` and no merger starts until the author releases it (pause, resume);
/// with `disabled` the next task's approval goes to the merger at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_handoff_setting_of_a_custom_workflow_decides_who_gets_the_approved_review() {
    let mut replies = plan_and_draft("NB-001", "Write the pier scene.");
    replies.push(text("APPROVE\nThe pier scene works."));
    replies.push(text("merge_task_draft is not here."));
    replies.extend(plan_and_draft("NB-002", "Write the lighthouse scene."));
    replies.push(text("APPROVE\nFine."));
    replies.push(text("merge_task_draft is not here."));
    let f = fx(replies, 2).await;
    let wf = f.create_workflow(scenes_ir(SKIP_QUICK, 5000)).await;
    let effective = f.set(&wf, json!({"reviewHandoffPolicy": "always"})).await;
    assert_eq!(effective["reviewHandoffPolicy"], "always");

    let first = f.scene("The pier scene", &wf).await;
    f.run_until_quiet().await;
    let t = f.task(&first);
    assert_eq!((t.column.as_str(), t.status.as_str()), ("edit", PARKED));
    let log = f.log(&first);
    assert!(log.contains("Promoted from planning to drafting"), "{log}");
    assert!(
        log.contains("code node 'check': outcome success"),
        "the code node ran on the way to the review: {log}"
    );
    assert!(
        log.contains("is handed to the author (reviewHandoffPolicy always) instead of the merger"),
        "{log}"
    );
    assert_eq!(f.sessions_of("reviewer", &first), 1);
    assert_eq!(
        f.sessions_of("merger", &first),
        0,
        "no merger: the author has it"
    );
    // The author releases it (pause, resume): the merger gets it without another review.
    for paused in [true, false] {
        f.author("fn_task_pause", json!({"task_id": first, "paused": paused}))
            .await;
    }
    f.run_until_quiet().await;
    assert_eq!(f.sessions_of("reviewer", &first), 1);
    assert_eq!(f.sessions_of("merger", &first), 1, "released to the merger");
    assert!(
        f.log(&first)
            .contains("The author released the handed-off review: the merger comes next"),
        "{}",
        f.log(&first)
    );

    let effective = f.set(&wf, json!({"reviewHandoffPolicy": "disabled"})).await;
    assert_eq!(effective["reviewHandoffPolicy"], "disabled");
    let second = f.scene("The lighthouse scene", &wf).await;
    f.run_until_quiet().await;
    assert_eq!(f.sessions_of("merger", &second), 1, "the merger got it");
    let log = f.log(&second);
    assert!(log.contains("Review APPROVE (reviewer session"), "{log}");
    assert!(!log.contains("handed to the author"), "{log}");
    // The merger ended without merging: the task waits in edit (the merge lane).
    let t = f.task(&second);
    assert_eq!((t.column.as_str(), t.status.as_str()), ("edit", PARKED));
    assert!(log.contains("ended without merging"), "{log}");
}

/// The draft column's `wip` limit reads `maxParallelSteps`: with 1, one of two drafting tasks
/// gets an executor although the board has two slots; at 2 the other one starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wip_limit_of_a_custom_column_follows_max_parallel_steps() {
    let f = fx(
        vec![slow_text("Working.", 3000), slow_text("Working.", 3000)],
        2,
    )
    .await;
    let wf = f.create_workflow(scenes_ir(SKIP_QUICK, 5000)).await;
    assert_eq!(
        f.set(&wf, json!({"maxParallelSteps": 1})).await["maxParallelSteps"],
        1
    );
    let mut ids = Vec::new();
    for d in ["The pier scene", "The lighthouse scene"] {
        let id = f.scene(d, &wf).await;
        let b = f.board();
        let p = plan(&id, "Write it.");
        b.commit(|c: &rusqlite::Connection| tasks::write_prompt(c, &id, &p, Some("test")))
            .expect("plan");
        b.commit(|c: &rusqlite::Connection| tasks::promote(c, &id, false, Some("test")))
            .expect("promote");
        assert_eq!(f.task(&id).column, "draft", "promoted to the draft lane");
        ids.push(id);
    }
    assert_eq!(f.runner.tick().started, 1, "the wip limit of 1 holds");
    assert_eq!(f.runner.tick().started, 0);
    assert_eq!(f.sessions_of("executor", &ids[0]), 1);
    assert_eq!(f.sessions_of("executor", &ids[1]), 0);
    f.set(&wf, json!({"maxParallelSteps": 2})).await;
    assert_eq!(f.runner.tick().started, 1, "the second place opened");
    assert_eq!(f.sessions_of("executor", &ids[1]), 1);
}

/// A code node between the draft and the review, run in QuickJS, reads the task's plan and
/// routes `outcome:skip-review`: the task goes from `draft` to the merger in `edit` without a
/// reviewer, and its log says what the code decided.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_node_picks_the_edge_the_task_takes() {
    let mut replies = plan_and_draft("NB-001", "A quick fix of the pier scene.");
    replies.push(text("merge_task_draft is not here."));
    let f = fx(replies, 2).await;
    let wf = f.create_workflow(scenes_ir(SKIP_QUICK, 5000)).await;
    let id = f.scene("Fix the pier scene", &wf).await;
    f.run_until_quiet().await;
    let log = f.log(&id);
    assert!(
        log.contains(
            "code node 'check': outcome skip-review (value {\"steps\":2,\"column\":\"edit\"})"
        ),
        "{log}"
    );
    assert!(
        log.contains("the workflow goes on at node 'merge' (edit)"),
        "{log}"
    );
    assert_eq!(f.sessions_of("reviewer", &id), 0, "the review was skipped");
    assert_eq!(f.sessions_of("merger", &id), 1);
    let t = f.task(&id);
    assert_eq!(t.column, "edit");
    assert!(
        t.status == APPROVED || t.status == PARKED,
        "the merger's stage: {}",
        t.status
    );
}

/// A code node that never returns is stopped at its `timeoutMs` and the task waits for the
/// author in `edit` with the reason; no reviewer starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_node_past_its_time_limit_parks_the_task() {
    let f = fx(plan_and_draft("NB-001", "Write the pier scene."), 2).await;
    let wf = f
        .create_workflow(scenes_ir("while (true) {}\nreturn {};", 1000))
        .await;
    let id = f.scene("The pier scene", &wf).await;
    let started = std::time::Instant::now();
    f.run_until_quiet().await;
    let t = f.task(&id);
    assert_eq!((t.column.as_str(), t.status.as_str()), ("edit", PARKED));
    let log = f.log(&id);
    assert!(
        log.contains(
            "after the draft, code node 'check' ran past its timeoutMs (1000 ms) and was stopped"
        ),
        "{log}"
    );
    assert_eq!(f.sessions_of("reviewer", &id), 0);
    assert!(started.elapsed() < Duration::from_secs(20));
}
