//! The in-session task list (`task_create`, `task_set_status`), kept in the session's custom
//! state under `agent.tasks`. It is the agent's own checklist, not project data, so neither
//! tool mutates the project.

use serde_json::{json, Value};

use crate::engine::session_log::now_rfc3339;
use crate::engine::tool::{Mutates, Tool, ToolCtx, ToolError, ToolOutput};

pub const TASKS_KEY: &str = "agent.tasks";
const STATUSES: [&str; 3] = ["pending", "in_progress", "completed"];

fn output(list: Value) -> ToolOutput {
    ToolOutput {
        content: serde_json::to_string_pretty(&list).unwrap_or_default(),
        details: Some(list.clone()),
        changed_paths: Vec::new(),
        state_updates: vec![(TASKS_KEY.to_string(), list)],
    }
}

pub struct TaskCreate;

impl Tool for TaskCreate {
    fn name(&self) -> &'static str {
        "task_create"
    }
    fn group(&self) -> &'static str {
        "tasks"
    }
    fn description(&self) -> &'static str {
        "Replace this session's task list with the given steps. At most one step may be in_progress (later ones are set back to pending); ids must be unique."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "steps": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "minLength": 1},
                            "text": {"type": "string", "minLength": 1},
                            "status": {"enum": STATUSES}
                        },
                        "required": ["id", "text", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["steps"],
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::No
    }
    fn effects(&self) -> crate::engine::tool::Effects {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Board])
    }
    fn run(&self, _ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let now = now_rfc3339();
        let mut seen = std::collections::HashSet::new();
        let mut in_progress = false;
        let mut steps = Vec::new();
        for (i, s) in args
            .get("steps")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let id = s
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim();
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
            let mut status = s.get("status").and_then(Value::as_str).unwrap_or("pending");
            if status == "in_progress" {
                if in_progress {
                    status = "pending";
                }
                in_progress = true;
            }
            steps.push(json!({"id": id, "text": s.get("text").cloned().unwrap_or(Value::Null), "status": status, "updatedAt": now}));
        }
        let mut list = json!({"steps": steps, "updatedAt": now});
        if let Some(t) = args.get("title").and_then(Value::as_str) {
            list["title"] = json!(t);
        }
        Ok(output(list))
    }
}

pub struct TaskSetStatus;

impl Tool for TaskSetStatus {
    fn name(&self) -> &'static str {
        "task_set_status"
    }
    fn group(&self) -> &'static str {
        "tasks"
    }
    fn description(&self) -> &'static str {
        "Set the status of one step of this session's task list (setting one in_progress sets the current in_progress step back to pending)."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "minLength": 1},
                "status": {"enum": STATUSES},
                "note": {"type": "string"}
            },
            "required": ["id", "status"],
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::No
    }
    fn effects(&self) -> crate::engine::tool::Effects {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Board])
    }
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let Some(mut list) = ctx.session_state.get(TASKS_KEY).cloned() else {
            return Err(ToolError::failed(
                "this session has no task list yet; create one with task_create",
            ));
        };
        let id = args.get("id").and_then(Value::as_str).unwrap_or_default();
        let status = args
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("pending");
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
                if let Some(note) = args.get("note") {
                    s["note"] = note.clone();
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
