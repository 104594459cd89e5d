//! The board-runner fixture the workflow end-to-end tests share (tests/board_runner_workflows.rs,
//! tests/board_workflow_settings2.rs): a project whose models are served by a real HTTP model
//! server speaking the OpenAI wire format (tests/provider_support) with replies in order, the
//! real engine, the real agent host and the real scheduler; the reply builders (text, tool
//! calls, a plan and its draft), a custom workflow IR with a code node, and the calls an agent
//! or the author makes through the engine.
#![allow(dead_code)]

#[path = "../provider_support/mod.rs"]
pub mod provider_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use nbook::agent::host::{config_providers, Host};
use nbook::board::{tasks, Board, Task};
use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, Decision, Engine, Mode, ToolCall};
use nbook::runner::Runner;
pub use provider_support::*;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

pub fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

/// A model reply that is one tool call.
pub fn tool_call(id: &str, name: &str, args: &Value) -> Reply {
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
pub fn text(t: &str) -> Reply {
    Reply::data(&[chunk(json!({"content": t}), Some("stop")), "[DONE]".into()])
}

/// A text reply that takes `ms` to come.
pub fn slow_text(t: &str, ms: u64) -> Reply {
    Reply::sse(vec![
        Step::Sleep(Duration::from_millis(ms)),
        Step::Chunk(format!(
            "data: {}\n\ndata: [DONE]\n\n",
            chunk(json!({"content": t}), Some("stop"))
        )),
    ])
}

pub fn plan(id: &str, mission: &str) -> String {
    format!(
        "# Task: {id} — A scene\n\n## Mission\n{mission}\n\n## Steps\n### Step 0: Preflight\n### Step 1: Draft the scene\n\n## File Scope\n- manuscript/020-scene.md\n\n## Acceptance Criteria\n- The scene ends at the pier.\n"
    )
}

/// Triage plans `id`, the executor finishes (fn_task_done ends its run): three requests.
pub fn plan_and_draft(id: &str, mission: &str) -> Vec<Reply> {
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
pub fn scenes_ir(check_source: &str, timeout_ms: u64) -> Value {
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
pub const SKIP_QUICK: &str = "const plan = ctx.artifacts.read('PROMPT.md') || '';\nreturn {outcome: plan.includes('quick') ? 'skip-review' : 'success', value: {steps: ctx.task.steps.length, column: ctx.task.column}};";

pub struct Fx {
    pub _tmp: tempfile::TempDir,
    pub engine: Arc<Engine>,
    pub runner: Arc<Runner>,
    pub _server: Server,
}

/// A project whose models are served by a model server replying `replies` in order, with
/// `[board] concurrency` `concurrency`; the coordination calls are allowed.
pub async fn fx(replies: Vec<Reply>, concurrency: usize) -> Fx {
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
    pub fn board(&self) -> Board {
        Board::new(
            self.engine.workspace().root(),
            self.engine.workspace().name(),
        )
    }

    pub fn task(&self, id: &str) -> Task {
        self.board().read(|c| tasks::require(c, id)).expect("task")
    }

    pub fn log(&self, id: &str) -> String {
        self.board()
            .read(|c| tasks::logs(c, id, 500))
            .expect("log")
            .into_iter()
            .map(|e| e.action)
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn sessions_of(&self, profile: &str, task: &str) -> usize {
        self.engine
            .sessions()
            .into_iter()
            .filter(|s| {
                s.profile == profile && self.engine.session_task(&s.id).as_deref() == Some(task)
            })
            .count()
    }

    pub async fn author(&self, tool: &str, args: Value) -> Value {
        let r = self.engine.author_call(tool, args, None).await;
        assert!(r.ok, "{tool}: {}", r.content);
        r.details.unwrap_or(Value::Null)
    }

    /// A planning agent's call, approved by the author.
    pub async fn agent(&self, tool: &str, args: Value) -> Value {
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
    pub async fn create_workflow(&self, ir: Value) -> String {
        self.agent("fn_workflow_create", json!({"name": "Scenes", "ir": ir}))
            .await["workflowId"]
            .as_str()
            .expect("id")
            .to_string()
    }

    /// A task of the default workflow, then `wf` selected for it.
    pub async fn scene(&self, description: &str, wf: &str) -> String {
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

    pub async fn set(&self, wf: &str, values: Value) -> Value {
        self.author(
            "fn_workflow_settings",
            json!({"action": "set", "workflow_id": wf, "values": values}),
        )
        .await["effective"]
            .clone()
    }

    pub async fn run_until_quiet(&self) {
        let stop = CancellationToken::new();
        tokio::time::timeout(Duration::from_secs(30), self.runner.run_until_quiet(&stop))
            .await
            .expect("the board goes quiet");
    }
}
