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

mod provider_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use nbook::agent::host::{config_providers, Host};
use nbook::board::{tasks, Board, Task};
use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, Decision, Engine, Mode, ToolCall};
use nbook::runner::{Runner, APPROVED, PARKED};
use provider_support::*;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

/// A model reply that is one tool call.
fn tool_call(id: &str, name: &str, args: &Value) -> Reply {
    Reply::data(&[
        chunk(
            json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        "[DONE]".into(),
    ])
}

/// A model reply that is text only (the run ends).
fn text(t: &str) -> Reply {
    Reply::data(&[chunk(json!({"content": t}), Some("stop")), "[DONE]".into()])
}

/// A text reply that takes `ms` to come.
fn slow_text(t: &str, ms: u64) -> Reply {
    Reply::sse(vec![
        Step::Sleep(Duration::from_millis(ms)),
        Step::Chunk(format!(
            "data: {}\n\ndata: [DONE]\n\n",
            chunk(json!({"content": t}), Some("stop"))
        )),
    ])
}

fn plan(id: &str, mission: &str) -> String {
    format!(
        "# Task: {id} — A scene\n\n## Mission\n{mission}\n\n## Steps\n### Step 0: Preflight\n### Step 1: Draft the scene\n\n## File Scope\n- manuscript/020-scene.md\n\n## Acceptance Criteria\n- The scene ends at the pier.\n"
    )
}

/// Triage plans `id`, the executor finishes (fn_task_done ends its run): three requests.
fn plan_and_draft(id: &str, mission: &str) -> Vec<Reply> {
    vec![
        tool_call(
            "p1",
            "fn_task_prompt_write",
            &json!({"content": plan(id, mission)}),
        ),
        text("Planned."),
        tool_call("d1", "fn_task_done", &json!({"summary": "Drafted."})),
    ]
}

/// "Scenes": columns outline → draft (wip: maxParallelSteps) → edit (review and merge) →
/// done, archived; the graph plans, parses the steps, drafts them, runs code node `check`
/// (`check_source`), reviews and merges. `check` routes `success` to the review and
/// `outcome:skip-review` straight to the merge.
fn scenes_ir(check_source: &str, timeout_ms: u64) -> Value {
    json!({
        "version": "v2", "name": "Scenes",
        "columns": [
            {"id": "outline", "name": "Outline", "traits": [{"trait": "intake"}]},
            {"id": "draft", "name": "Draft", "traits": [{"trait": "wip", "config": {"limitSetting": "maxParallelSteps"}}]},
            {"id": "edit", "name": "Edit", "traits": [{"trait": "human-review"}, {"trait": "merge"}]},
            {"id": "done", "name": "Done", "traits": [{"trait": "complete"}]},
            {"id": "archived", "name": "Archived", "traits": [{"trait": "archived"}]}
        ],
        "nodes": [
            {"id": "start", "kind": "start", "column": "outline"},
            {"id": "plan", "kind": "prompt", "column": "outline", "config": {"seam": "planning", "executor": "agent"}},
            {"id": "parse", "kind": "parse-steps", "column": "outline", "config": {"artifact": "PROMPT.md", "parser": "step-headings"}},
            {"id": "steps", "kind": "foreach", "column": "draft", "config": {
                "source": "task-steps", "mode": "sequential", "isolation": "shared",
                "template": {"nodes": [{"id": "draft-step", "kind": "prompt", "config": {"seam": "step-execute", "executor": "agent"}}], "edges": []}
            }},
            {"id": "check", "kind": "code", "column": "edit", "config": {"source": check_source, "timeoutMs": timeout_ms}},
            {"id": "review", "kind": "prompt", "column": "edit", "config": {"seam": "review", "executor": "agent"}},
            {"id": "merge", "kind": "prompt", "column": "edit", "config": {"seam": "merge", "executor": "agent"}},
            {"id": "end", "kind": "end", "column": "done"}
        ],
        "edges": [
            {"from": "start", "to": "plan"},
            {"from": "plan", "to": "parse", "condition": "success"},
            {"from": "parse", "to": "steps", "condition": "success"},
            {"from": "steps", "to": "check", "condition": "success"},
            {"from": "check", "to": "review", "condition": "success"},
            {"from": "check", "to": "merge", "condition": "outcome:skip-review"},
            {"from": "review", "to": "merge", "condition": "outcome:approve"},
            {"from": "merge", "to": "end", "condition": "success"}
        ],
        "settings": [
            {"id": "reviewHandoffPolicy", "name": "Review hand-off", "type": "enum", "default": "disabled",
             "options": [{"value": "disabled", "label": "Disabled"}, {"value": "comment-triggered", "label": "When asked"}, {"value": "always", "label": "Always"}]},
            {"id": "maxParallelSteps", "name": "Parallel drafting tasks", "type": "number", "integer": true, "minimum": 1, "default": 2}
        ]
    })
}

/// Reads the plan: a plan that says "quick" skips the review.
const SKIP_QUICK: &str = "const plan = ctx.artifacts.read('PROMPT.md') || '';\nreturn {outcome: plan.includes('quick') ? 'skip-review' : 'success', value: {steps: ctx.task.steps.length, column: ctx.task.column}};";

struct Fx {
    _tmp: tempfile::TempDir,
    engine: Arc<Engine>,
    runner: Arc<Runner>,
    _server: Server,
}

/// A project whose models are served by a model server replying `replies` in order, with
/// `[board] concurrency` `concurrency`; the coordination calls are allowed.
async fn fx(replies: Vec<Reply>, concurrency: usize) -> Fx {
    let server = Server::start(replies).await;
    let tmp = tempfile::tempdir().expect("tmp");
    let root: PathBuf = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).expect("init");
    let dirs = Dirs {
        config: tmp.path().join("h"),
        data: tmp.path().join("h/d"),
        logs: tmp.path().join("h/l"),
    };
    let text = format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}\"\n\
         [models.small]\nprovider = \"local\"\nname = \"smollm2\"\n\
         [defaults]\nmodel = \"small\"\n\
         [board]\nconcurrency = {concurrency}\n\
         [approval.tools]\nfn_task_prompt_write = \"allow\"\nfn_task_done = \"allow\"\nfn_task_update = \"allow\"\n",
        server.base_url()
    );
    let config = Config::parse(&text, "test").expect("config");
    let engine = Arc::new(
        Engine::open(
            nbook::workspace::Workspace::open(&root).expect("ws"),
            config,
            &dirs,
            nbook::tools::registry().expect("registry"),
        )
        .expect("engine"),
    );
    let host = Host::attach(
        engine.clone(),
        config_providers(engine.live_config().clone()),
        Approval::Queue,
    );
    let runner = Runner::new(engine.clone(), host);
    Fx {
        _tmp: tmp,
        engine,
        runner,
        _server: server,
    }
}

impl Fx {
    fn board(&self) -> Board {
        Board::new(
            self.engine.workspace().root(),
            self.engine.workspace().name(),
        )
    }

    fn task(&self, id: &str) -> Task {
        self.board().read(|c| tasks::require(c, id)).expect("task")
    }

    fn log(&self, id: &str) -> String {
        self.board()
            .read(|c| tasks::logs(c, id, 500))
            .expect("log")
            .into_iter()
            .map(|e| e.action)
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn sessions_of(&self, profile: &str, task: &str) -> usize {
        self.engine
            .sessions()
            .into_iter()
            .filter(|s| {
                s.profile == profile && self.engine.session_task(&s.id).as_deref() == Some(task)
            })
            .count()
    }

    async fn author(&self, tool: &str, args: Value) -> Value {
        let r = self.engine.author_call(tool, args, None).await;
        assert!(r.ok, "{tool}: {}", r.content);
        r.details.unwrap_or(Value::Null)
    }

    /// A planning agent's call, approved by the author.
    async fn agent(&self, tool: &str, args: Value) -> Value {
        let planner = self
            .engine
            .create_session("planning", Mode::Normal, "p", None)
            .expect("session")
            .id;
        let r = self
            .engine
            .call(
                &planner,
                ToolCall {
                    id: String::new(),
                    name: tool.into(),
                    arguments: args,
                },
                Approval::Auto {
                    decision: Decision::Approve,
                    by: "test",
                },
            )
            .await;
        assert!(r.ok, "{tool}: {}", r.content);
        r.details.unwrap_or(Value::Null)
    }

    /// An agent creates the workflow; the author approves it.
    async fn create_workflow(&self, ir: Value) -> String {
        self.agent("fn_workflow_create", json!({"name": "Scenes", "ir": ir}))
            .await["workflowId"]
            .as_str()
            .expect("id")
            .to_string()
    }

    /// A task of the default workflow, then `wf` selected for it.
    async fn scene(&self, description: &str, wf: &str) -> String {
        let id = self
            .author("fn_task_create", json!({"description": description}))
            .await["taskId"]
            .as_str()
            .expect("id")
            .to_string();
        let sel = self
            .agent(
                "fn_workflow_select",
                json!({"workflow_id": wf, "task_id": id}),
            )
            .await;
        assert_eq!(sel["column"], "outline", "re-homed to the entry column");
        id
    }

    async fn set(&self, wf: &str, values: Value) -> Value {
        self.author(
            "fn_workflow_settings",
            json!({"action": "set", "workflow_id": wf, "values": values}),
        )
        .await["effective"]
            .clone()
    }

    async fn run_until_quiet(&self) {
        let stop = CancellationToken::new();
        tokio::time::timeout(Duration::from_secs(30), self.runner.run_until_quiet(&stop))
            .await
            .expect("the board goes quiet");
    }
}

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
