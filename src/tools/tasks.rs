//! The in-session task list (`task_create`, `task_set_status`), kept in the session's custom
//! state under `agent.tasks`. It is the agent's own checklist, not project data, so neither
//! tool mutates the project.

use serde_json::{json, Value};

use crate::engine::session_log::now_rfc3339;
use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;

pub const TASKS_KEY: &str = "agent.tasks";

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    InProgress,
    Completed,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed => "completed",
        }
    }
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepArgs {
    #[schemars(length(min = 1))]
    pub id: String,
    #[schemars(length(min = 1))]
    pub text: String,
    pub status: TaskStatus,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCreateArgs {
    pub title: Option<String>,
    #[schemars(length(min = 1))]
    pub steps: Vec<StepArgs>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskSetStatusArgs {
    #[schemars(length(min = 1))]
    pub id: String,
    pub status: TaskStatus,
    pub note: Option<String>,
}

fn output(list: Value) -> ToolOutput {
    ToolOutput {
        content: serde_json::to_string_pretty(&list).unwrap_or_default(),
        details: Some(list.clone()),
        changed_paths: Vec::new(),
        state_updates: vec![(TASKS_KEY.to_string(), list)],
    }
}

pub struct TaskCreate;

impl TypedTool for TaskCreate {
    type Args = TaskCreateArgs;
    const NAME: &'static str = "task_create";
    const GROUP: &'static str = "tasks";
    const DESCRIPTION: &'static str = "Replace this session's task list with the given steps. At most one step may be in_progress (later ones are set back to pending); ids must be unique.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Board])
    };
    fn run(&self, _ctx: &ToolCtx, args: &TaskCreateArgs) -> Result<ToolOutput, ToolError> {
        let now = now_rfc3339();
        let mut seen = std::collections::HashSet::new();
        let mut in_progress = false;
        let mut steps = Vec::new();
        for (i, s) in args.steps.iter().enumerate() {
            let id = s.id.trim();
            if id.is_empty() {
                return Err(ToolError::failed(format!(
                    "/steps/{i}/id must not be empty"
                )));
            }
            if !seen.insert(id.to_string()) {
                return Err(ToolError::failed(format!(
                    "/steps/{i}/id '{id}' is used twice; ids must be unique"
                )));
            }
            let mut status = s.status.as_str();
            if status == "in_progress" {
                if in_progress {
                    status = "pending";
                }
                in_progress = true;
            }
            steps.push(json!({"id": id, "text": s.text, "status": status, "updatedAt": now}));
        }
        let mut list = json!({"steps": steps, "updatedAt": now});
        if let Some(t) = &args.title {
            list["title"] = json!(t);
        }
        Ok(output(list))
    }
}

pub struct TaskSetStatus;

impl TypedTool for TaskSetStatus {
    type Args = TaskSetStatusArgs;
    const NAME: &'static str = "task_set_status";
    const GROUP: &'static str = "tasks";
    const DESCRIPTION: &'static str = "Set the status of one step of this session's task list (setting one in_progress sets the current in_progress step back to pending).";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Board])
    };
    fn run(&self, ctx: &ToolCtx, args: &TaskSetStatusArgs) -> Result<ToolOutput, ToolError> {
        let Some(mut list) = ctx.session_state.get(TASKS_KEY).cloned() else {
            return Err(ToolError::failed(
                "this session has no task list yet; create one with task_create",
            ));
        };
        let id = args.id.as_str();
        let status = args.status.as_str();
        let now = now_rfc3339();
        let Some(steps) = list.get_mut("steps").and_then(Value::as_array_mut) else {
            return Err(ToolError::failed(
                "the stored task list is malformed; create a new one with task_create",
            ));
        };
        if !steps.iter().any(|s| s["id"] == id) {
            let known: Vec<&str> = steps.iter().filter_map(|s| s["id"].as_str()).collect();
            return Err(ToolError::failed(format!(
                "no step with id '{id}'; the steps are: {}",
                known.join(", ")
            )));
        }
        for s in steps.iter_mut() {
            if s["id"] == id {
                s["status"] = json!(status);
                s["updatedAt"] = json!(now);
                if let Some(note) = &args.note {
                    s["note"] = json!(note);
                }
            } else if status == "in_progress" && s["status"] == "in_progress" {
                s["status"] = json!("pending");
                s["updatedAt"] = json!(now);
            }
        }
        list["updatedAt"] = json!(now);
        Ok(output(list))
    }
}
