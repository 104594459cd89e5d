//! The workflow settings and node contracts the board consumes (issue: "the engine consumes
//! the effective values"), end to end: the real engine, the real agent host with a real HTTP
//! model server speaking the OpenAI wire format (tests/provider_support), the real scheduler
//! and real QuickJS:
//! - `requirePlanApproval`: a planned task parks at `awaiting-plan-approval` until the author
//!   approves (`fn_task_approve_plan`) or sends it back with a reason (`fn_task_reject_plan`),
//!   which the next triage session reads; `fn_task_promote` cannot go around it;
//! - a `wip` column's `countPending`: waiting tasks there hold places, promotions wait;
//! - `reviewHandoffPolicy: comment-triggered` with real reviewer sessions;
//! - code nodes' `contextPatch` (seen by the next code node as `ctx.context`) and
//!   `customFields` (written with the workflow's field checks; invalid → the task parks,
//!   nothing written).

mod runner_workflow_support;

use std::time::Duration;

use nbook::board::tasks;
use nbook::engine::{Approval, Decision, Mode, ToolCall};
use nbook::runner::PARKED;
use runner_workflow_support::*;
use serde_json::{json, Value};

impl Fx {
    async fn create_named(&self, name: &str, ir: Value) -> String {
        self.agent("fn_workflow_create", json!({"name": name, "ir": ir}))
            .await["workflowId"]
            .as_str()
            .expect("id")
            .to_string()
    }

    /// The author's call fails: its code; nothing the call names changed.
    async fn author_err(&self, tool: &str, args: Value) -> String {
        let r = self.engine.author_call(tool, args, None).await;
        assert!(!r.ok, "{tool} should fail: {}", r.content);
        r.details.unwrap_or(Value::Null)["code"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    async fn new_task(&self, description: &str) -> String {
        self.author("fn_task_create", json!({"description": description}))
            .await["taskId"]
            .as_str()
            .expect("id")
            .to_string()
    }

    /// Plan `id` and move it to its workflow's drafting lane without a session.
    fn plan_and_promote(&self, id: &str) {
        let b = self.board();
        let p = plan(id, "Write it.");
        b.commit(|c: &rusqlite::Connection| tasks::write_prompt(c, id, &p, Some("test")))
            .expect("plan");
        b.commit(|c: &rusqlite::Connection| tasks::promote(c, id, false, Some("test")))
            .expect("promote");
    }

    fn plan_only(&self, id: &str) {
        let b = self.board();
        let p = plan(id, "Write it.");
        b.commit(|c: &rusqlite::Connection| tasks::write_prompt(c, id, &p, Some("test")))
            .expect("plan");
    }
}

const AWAITING: &str = "awaiting-plan-approval";

/// `requirePlanApproval` on builtin:chapter: triage plans, the task parks at `plan?` instead
/// of being promoted; nothing promotes it around the author; the author sends it back with a
/// reason (the next triage session gets it), then approves it and the scheduler promotes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_plan_approval_parks_the_plan_until_the_author_approves_it() {
    let replies = vec![
        tool_call(
            "p1",
            "fn_task_prompt_write",
            &json!({"content": plan("NB-001", "Write the pier scene.")}),
        ),
        text("Planned."),
        tool_call(
            "p2",
            "fn_task_prompt_write",
            &json!({"content": plan("NB-001", "Write the pier scene in two parts.")}),
        ),
        text("Planned again."),
    ];
    let f = fx(replies, 2).await;
    let effective = f
        .set("builtin:chapter", json!({"requirePlanApproval": true}))
        .await;
    assert_eq!(effective["requirePlanApproval"], true);
    let id = f.new_task("The pier scene").await;
    f.run_until_quiet().await;
    let t = f.task(&id);
    assert_eq!(
        (t.column.as_str(), t.status.as_str()),
        ("planning", AWAITING)
    );
    assert!(t.prompt.is_some(), "the plan is written");
    assert!(
        f.log(&id)
            .contains("The plan waits for the author's approval (requirePlanApproval)"),
        "{}",
        f.log(&id)
    );
    assert_eq!(f.sessions_of("executor", &id), 0);
    // Ticks leave it; an agent's fn_task_promote is refused with a typed error.
    assert_eq!(f.runner.tick().promoted, 0);
    let exec = f
        .engine
        .create_session("executor", Mode::Normal, "x", None)
        .expect("session")
        .id;
    let r = f
        .engine
        .call(
            &exec,
            ToolCall {
                id: String::new(),
                name: "fn_task_promote".into(),
                arguments: json!({"task_id": id}),
            },
            Approval::Auto {
                decision: Decision::Approve,
                by: "test",
            },
        )
        .await;
    assert!(!r.ok, "{}", r.content);
    assert_eq!(
        r.details.unwrap_or(Value::Null)["code"],
        "PLAN_APPROVAL_REQUIRED"
    );
    assert_eq!(f.task(&id).status, AWAITING);

    // Bad input: typed errors, nothing changes.
    let before = f.task(&id);
    assert_eq!(
        f.author_err(
            "fn_task_reject_plan",
            json!({"task_id": id, "reason": "   "})
        )
        .await,
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        f.author_err("fn_task_approve_plan", json!({"task_id": "NB-404"}))
            .await,
        "TASK_NOT_FOUND"
    );
    let other = f.new_task("The lighthouse scene").await;
    f.author("fn_task_pause", json!({"task_id": other, "paused": true}))
        .await;
    assert_eq!(
        f.author_err("fn_task_approve_plan", json!({"task_id": other}))
            .await,
        "PLAN_NOT_AWAITING_APPROVAL"
    );
    assert_eq!(f.task(&id), before);

    // Sent back with a reason: the next triage session reads it, and plans again.
    let requests = f._server.requests().len();
    f.author(
        "fn_task_reject_plan",
        json!({"task_id": id, "reason": "Split the scene into two parts"}),
    )
    .await;
    assert_eq!(f.task(&id).status, "needs-replan");
    assert!(f
        .log(&id)
        .contains("Plan sent back by the author: Split the scene into two parts"));
    f.run_until_quiet().await;
    let asked = f._server.requests()[requests].body.to_string();
    assert!(
        asked.contains("<replan-notes>") && asked.contains("Split the scene into two parts"),
        "{asked}"
    );
    let t = f.task(&id);
    assert_eq!(t.status, AWAITING, "the new plan waits for the author too");
    assert!(t
        .prompt
        .as_deref()
        .unwrap_or_default()
        .contains("in two parts"));

    // Approved: the next tick promotes it.
    let d = f
        .author("fn_task_approve_plan", json!({"task_id": id}))
        .await;
    assert_eq!(d["status"], "plan-approved");
    assert!(f.log(&id).contains("Plan approved by the author"));
    f.runner.set_enabled(true);
    assert_eq!(f.runner.tick().promoted, 1);
    let t = f.task(&id);
    assert_eq!((t.column.as_str(), t.status.as_str()), ("drafting", ""));

    // With the setting off (the default), a planned task is promoted without the author.
    f.set("builtin:chapter", json!({"requirePlanApproval": false}))
        .await;
    let third = f.new_task("The harbour scene").await;
    f.plan_only(&third);
    f.runner.set_enabled(false);
    f.runner.set_enabled(true);
    let _ = f.runner.tick();
    assert_eq!(f.task(&third).column, "drafting");
}

/// "Scenes" with a `wip` draft column whose `countPending` is `count_pending`.
fn counted_ir(count_pending: bool) -> Value {
    let mut ir = scenes_ir(SKIP_QUICK, 5000);
    ir["columns"][1]["traits"][0]["config"]["countPending"] = json!(count_pending);
    ir
}

/// `countPending: true`: a paused task in the draft column holds its place, so the other
/// drafting task waits and the planned one is not promoted; with `false` both go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_pending_makes_waiting_tasks_count_against_the_wip_limit() {
    let f = fx((0..4).map(|_| slow_text("Working.", 5000)).collect(), 4).await;
    for (name, count_pending, started, promoted) in
        [("Counted", true, 0, 0), ("Uncounted", false, 1, 1)]
    {
        let wf = f.create_named(name, counted_ir(count_pending)).await;
        f.set(&wf, json!({"maxParallelSteps": 2})).await;
        let paused = f.scene(&format!("{name}: the pier"), &wf).await;
        f.plan_and_promote(&paused);
        f.author("fn_task_pause", json!({"task_id": paused, "paused": true}))
            .await;
        let parked = f.scene(&format!("{name}: the storm"), &wf).await;
        f.plan_and_promote(&parked);
        let ready = f.scene(&format!("{name}: the lighthouse"), &wf).await;
        f.plan_and_promote(&ready);
        let planned = f.scene(&format!("{name}: the harbour"), &wf).await;
        f.plan_only(&planned);
        // One place: the paused task holds it only when waiting tasks count.
        f.set(&wf, json!({"maxParallelSteps": 1})).await;
        // The storm task waits for the author (another reason to wait).
        f.board()
            .commit(|c: &rusqlite::Connection| {
                tasks::set_stage(
                    c,
                    &parked,
                    &tasks::Stage {
                        from: "draft",
                        column: "draft",
                        status: PARKED,
                        why: "test",
                        outcome: Some("parked"),
                        actor: "test",
                    },
                )
            })
            .expect("park");
        let tick = f.runner.tick();
        assert_eq!(
            (tick.started, tick.promoted),
            (started, promoted),
            "{name}: countPending {count_pending}"
        );
        assert_eq!(f.sessions_of("executor", &ready), started, "{name}");
        // A walk through code nodes runs off the tick: wait for it to end.
        let want = if promoted == 1 { "draft" } else { "outline" };
        for _ in 0..300 {
            if f.task(&planned).column == want {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(f.task(&planned).column, want, "{name}");
        // Done with this workflow's tasks: archive them so the next round starts clean.
        for t in [&paused, &parked, &ready, &planned] {
            f.author("fn_task_move", json!({"task_id": t, "column": "archived"}))
                .await;
        }
        let _ = f.runner.tick();
    }
}

/// `reviewHandoffPolicy: comment-triggered`: a real reviewer's APPROVE whose notes say
/// `@author` goes to the author; one whose notes do not goes to the merger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comment_triggered_handoff_follows_the_reviewers_at_author() {
    let mut replies = plan_and_draft("NB-001", "Write the pier scene.");
    replies.push(text(
        "APPROVE\nThe pier scene works. @author: is the ending too abrupt for you?",
    ));
    replies.extend(plan_and_draft("NB-002", "Write the lighthouse scene."));
    replies.push(text("APPROVE\nFine as it is."));
    replies.push(text("merge_task_draft is not here."));
    let f = fx(replies, 1).await;
    let wf = f.create_workflow(scenes_ir(SKIP_QUICK, 5000)).await;
    let effective = f
        .set(&wf, json!({"reviewHandoffPolicy": "comment-triggered"}))
        .await;
    assert_eq!(effective["reviewHandoffPolicy"], "comment-triggered");
    let first = f.scene("The pier scene", &wf).await;
    f.run_until_quiet().await;
    let t = f.task(&first);
    assert_eq!((t.column.as_str(), t.status.as_str()), ("edit", PARKED));
    let log = f.log(&first);
    assert!(
        log.contains("is handed to the author (reviewHandoffPolicy comment-triggered)"),
        "{log}"
    );
    assert!(log.contains("@author: is the ending too abrupt"), "{log}");
    assert_eq!(f.sessions_of("reviewer", &first), 1);
    assert_eq!(f.sessions_of("merger", &first), 0);
    // Archive it so its hand-off is not released by anything below.
    f.author(
        "fn_task_move",
        json!({"task_id": first, "column": "archived"}),
    )
    .await;
    let second = f.scene("The lighthouse scene", &wf).await;
    f.run_until_quiet().await;
    let log = f.log(&second);
    assert!(!log.contains("handed to the author"), "{log}");
    assert!(log.contains("Review APPROVE (reviewer session"), "{log}");
    assert_eq!(f.sessions_of("merger", &second), 1, "the merger got it");
}

/// "Scenes" whose draft is followed by two code nodes: `measure` (its source given) patches
/// the context and returns custom fields, `route` reads `ctx.context` and skips the review
/// when the scene is long.
fn measured_ir(measure: &str) -> Value {
    let mut ir = scenes_ir(SKIP_QUICK, 5000);
    let nodes = ir["nodes"].as_array_mut().expect("nodes");
    nodes.retain(|n| n["id"] != "check");
    nodes.push(json!({"id": "measure", "kind": "code", "column": "edit", "config": {"source": measure, "timeoutMs": 5000}}));
    nodes.push(json!({"id": "route", "kind": "code", "column": "edit", "config": {"source":
        "return {outcome: ctx.context.words > 1000 ? 'long' : 'success', value: ctx.context};", "timeoutMs": 5000}}));
    ir["edges"] = json!([
        {"from": "start", "to": "plan"},
        {"from": "plan", "to": "parse", "condition": "success"},
        {"from": "parse", "to": "steps", "condition": "success"},
        {"from": "steps", "to": "measure", "condition": "success"},
        {"from": "measure", "to": "route", "condition": "success"},
        {"from": "route", "to": "review", "condition": "success"},
        {"from": "route", "to": "merge", "condition": "outcome:long"},
        {"from": "review", "to": "merge", "condition": "outcome:approve"},
        {"from": "merge", "to": "end", "condition": "success"}
    ]);
    ir["fields"] = json!([
        {"id": "wordTarget", "name": "Word target", "type": "number"},
        {"id": "pov", "name": "Point of view", "type": "string"}
    ]);
    ir
}

/// A code node's `contextPatch` is what the next code node sees as `ctx.context`, and its
/// `customFields` are written to the task; invalid fields fail the node (the task parks with
/// the reason) and write nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_nodes_share_their_context_and_write_validated_custom_fields() {
    let mut replies = plan_and_draft("NB-001", "Write the pier scene.");
    replies.push(text("merge_task_draft is not here."));
    replies.extend(plan_and_draft("NB-002", "Write the storm scene."));
    let f = fx(replies, 1).await;
    let good = f
        .create_named(
            "Measured",
            measured_ir("return {contextPatch: {words: 1200, draft: ctx.task.steps.length}, customFields: {wordTarget: 1200, pov: 'Mara'}};"),
        )
        .await;
    let id = f.scene("The pier scene", &good).await;
    f.run_until_quiet().await;
    let log = f.log(&id);
    assert!(
        log.contains("code node 'route': outcome long (value {\"words\":1200,\"draft\":2})"),
        "the second node saw the first one's patch: {log}"
    );
    assert_eq!(
        f.sessions_of("reviewer", &id),
        0,
        "the long scene skipped the review"
    );
    assert_eq!(f.sessions_of("merger", &id), 1);
    let t = f.task(&id);
    assert_eq!(t.custom_fields.get("wordTarget"), Some(&json!(1200)));
    assert_eq!(t.custom_fields.get("pov"), Some(&json!("Mara")));
    f.author("fn_task_move", json!({"task_id": id, "column": "archived"}))
        .await;

    // A field the workflow does not declare, next to a valid one: the node fails, the task
    // parks with the reason, and neither field is written.
    let bad = f
        .create_named(
            "Mismeasured",
            measured_ir("return {contextPatch: {words: 10}, customFields: {wordTarget: 900, mood: 'grim'}};"),
        )
        .await;
    let id = f.scene("The storm scene", &bad).await;
    f.run_until_quiet().await;
    let t = f.task(&id);
    assert_eq!(t.status, PARKED, "{}", f.log(&id));
    let log = f.log(&id);
    assert!(
        log.contains("code node 'measure' returned customFields the task's workflow refuses")
            && log.contains("unknown-field")
            && log.contains("no field was written"),
        "{log}"
    );
    assert!(
        !t.custom_fields.contains_key("wordTarget"),
        "{:?}",
        t.custom_fields
    );
    assert_eq!(f.sessions_of("reviewer", &id), 0);
    assert_eq!(f.sessions_of("merger", &id), 0);
}

/// `notificationLevel` decides which board events mail the author: at each level, task A's
/// plan waits for approval (important) and is promoted once approved (all), task B's triage
/// ends without a plan and parks (errors). The mails are read from the project's SQLite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notification_level_filters_the_board_events_mailed_to_the_author() {
    let levels = [
        ("silent", vec![]),
        ("errors", vec!["B:parked"]),
        ("important", vec!["A:plan-approval", "B:parked"]),
        ("all", vec!["A:plan-approval", "B:parked", "A:promoted"]),
    ];
    let mut replies = Vec::new();
    for n in 0..levels.len() {
        let a = format!("NB-{:03}", 2 * n + 1);
        replies.push(tool_call(
            "p",
            "fn_task_prompt_write",
            &json!({"content": plan(&a, "Write it.")}),
        ));
        replies.push(text("Planned."));
        replies.push(text("I cannot plan this."));
    }
    let f = fx(replies, 1).await;
    f.set("builtin:chapter", json!({"requirePlanApproval": true}))
        .await;
    let root = f.engine.workspace().root().to_path_buf();
    let mails = |ids: &[&str]| -> Vec<String> {
        let c = rusqlite::Connection::open(root.join(".nbook/project.sqlite")).expect("db");
        let mut st = c
            .prepare("SELECT json_extract(metadata, '$.taskId'), json_extract(metadata, '$.boardEvent'), to_id FROM nbook_board_message WHERE json_extract(metadata, '$.boardEvent') IS NOT NULL ORDER BY seq")
            .expect("sql");
        st.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .expect("rows")
        .map(|r| r.expect("row"))
        .filter(|(t, _, to)| ids.contains(&t.as_str()) && to == "dashboard")
        .map(|(t, e, _)| format!("{}:{e}", if t == ids[0] { "A" } else { "B" }))
        .collect()
    };
    for (level, want) in levels {
        let effective = f
            .set("builtin:chapter", json!({"notificationLevel": level}))
            .await;
        assert_eq!(effective["notificationLevel"], level);
        let a = f.new_task(&format!("{level}: the pier scene")).await;
        let b = f.new_task(&format!("{level}: the storm scene")).await;
        f.run_until_quiet().await;
        assert_eq!(f.task(&a).status, AWAITING, "{level}: {}", f.log(&a));
        assert_eq!(f.task(&b).status, PARKED, "{level}: {}", f.log(&b));
        f.author("fn_task_approve_plan", json!({"task_id": a}))
            .await;
        assert_eq!(f.runner.tick().promoted, 1);
        assert_eq!(f.task(&a).column, "drafting");
        assert_eq!(mails(&[&a, &b]), want, "{level}");
        for t in [&a, &b] {
            f.author("fn_task_move", json!({"task_id": t, "column": "archived"}))
                .await;
        }
    }
}

/// `reflectionEnabled`: a done task's agent (no durable agent assigned: the executor profile)
/// is asked for a post-task reflection; its `fn_reflect_on_performance` waits for the author,
/// and once approved the reflection is in the executor's reflections file with trigger
/// `post-task`. Once per task; with the setting false nothing happens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_enabled_asks_the_done_tasks_agent_for_a_reflection() {
    let replies = vec![
        tool_call(
            "r1",
            "fn_reflect_on_performance",
            &json!({"focus_area": "NB-001"}),
        ),
        text("I will plan the pier scenes in smaller steps."),
    ];
    let f = fx(replies, 2).await;
    let off = f.new_task("The lighthouse scene").await;
    f.author("fn_task_move", json!({"task_id": off, "column": "done"}))
        .await;
    assert_eq!(
        f.runner.tick().started,
        0,
        "reflectionEnabled is false by default"
    );
    assert_eq!(f.sessions_of("executor", &off), 0);
    // Archived, that task is no longer done; with the setting on, the next done task is asked.
    f.author(
        "fn_task_move",
        json!({"task_id": off, "column": "archived"}),
    )
    .await;
    let effective = f
        .set("builtin:chapter", json!({"reflectionEnabled": true}))
        .await;
    assert_eq!(effective["reflectionEnabled"], true);
    let id = f.new_task("The pier scene").await;
    f.author("fn_task_move", json!({"task_id": id, "column": "done"}))
        .await;
    assert_eq!(f.runner.tick().started, 1);
    assert_eq!(f.sessions_of("executor", &id), 1);
    assert!(
        f.log(&id)
            .contains("Post-task reflection asked of executor"),
        "{}",
        f.log(&id)
    );
    // The reflection waits for the author.
    let mut pending = Vec::new();
    for _ in 0..300 {
        pending = f.engine.pending();
        if !pending.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(pending.len(), 1, "the reflection waits for approval");
    assert_eq!(pending[0].tool, "fn_reflect_on_performance");
    let file = f
        .engine
        .workspace()
        .root()
        .join(".nbook/agents/executor-reflections.jsonl");
    assert!(!file.exists(), "nothing written before the approval");
    // Asked once: more ticks start nothing for it.
    assert_eq!(f.runner.tick().started, 0);
    f.engine
        .decide(&pending[0].approval_id, Decision::Approve)
        .expect("decide");
    for _ in 0..300 {
        if file.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let text = std::fs::read_to_string(&file).expect("reflections");
    let line: Value = serde_json::from_str(text.lines().next().expect("a line")).expect("json");
    assert_eq!(line["trigger"], "post-task");
    assert_eq!(line["taskId"], id.as_str());
    assert_eq!(line["agentId"], "executor");
    for _ in 0..50 {
        let _ = f.runner.tick();
    }
    assert_eq!(f.sessions_of("executor", &id), 1, "asked once");
}
