//! The board's records as tools and panes see them (camelCase JSON, Fusion's field names) and
//! the column ids of the built-in workflow `builtin:chapter` (its whole IR, fields and
//! settings are `super::workflow::builtin`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const PLANNING: &str = "planning";
pub const DRAFTING: &str = "drafting";
pub const REVIEW: &str = "review";
pub const DONE: &str = "done";
pub const ARCHIVED: &str = "archived";

/// The sub-status of a task the author paused from the Board.
pub const PAUSED: &str = "paused";

pub const DEFAULT_WORKFLOW: &str = "builtin:chapter";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Low,
    Normal,
    High,
    Urgent,
}

impl Priority {
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Normal => "normal",
            Priority::High => "high",
            Priority::Urgent => "urgent",
        }
    }
    pub fn parse(s: &str) -> Option<Priority> {
        match s {
            "low" => Some(Priority::Low),
            "normal" => Some(Priority::Normal),
            "high" => Some(Priority::High),
            "urgent" => Some(Priority::Urgent),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StepStatus {
    Pending,
    InProgress,
    Done,
    Skipped,
}

impl StepStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::InProgress => "in-progress",
            StepStatus::Done => "done",
            StepStatus::Skipped => "skipped",
        }
    }
    pub fn finished(self) -> bool {
        matches!(self, StepStatus::Done | StepStatus::Skipped)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub name: String,
    pub status: StepStatus,
}

/// One task, as stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    pub title: String,
    pub description: String,
    pub column: String,
    /// Free sub-status: "" (none), `failed`, `needs-replan`, `awaiting-review`.
    pub status: String,
    pub priority: String,
    pub workflow_id: String,
    pub dependencies: Vec<String>,
    pub steps: Vec<Step>,
    pub custom_fields: BTreeMap<String, Value>,
    pub blocked_by: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_reason: Option<String>,
    pub file_scope: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    pub revision: i64,
    pub created_at: String,
    pub updated_at: String,
}

impl Task {
    /// Finished steps and all steps, as a card shows them (`3/7`).
    pub fn progress(&self) -> (usize, usize) {
        let done = self.steps.iter().filter(|s| s.status.finished()).count();
        (done, self.steps.len())
    }

    /// The short form lists and searches return.
    pub fn summary_line(&self) -> TaskSummary {
        let (done, total) = self.progress();
        TaskSummary {
            id: self.id.clone(),
            title: self.title.clone(),
            column: self.column.clone(),
            status: self.status.clone(),
            priority: self.priority.clone(),
            progress: format!("{done}/{total}"),
            dependencies: self.dependencies.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSummary {
    pub id: String,
    pub title: String,
    pub column: String,
    pub status: String,
    pub priority: String,
    pub progress: String,
    pub dependencies: Vec<String>,
}

/// One `fn_task_log` entry (Fusion's `TaskLogEntry`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskLogEntry {
    pub timestamp: String,
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Goal {
    pub id: String,
    pub title: String,
    pub description: String,
    pub status: String,
    pub created_at: String,
    pub updated_at: String,
}

/// A task document's current revision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    pub task_id: String,
    pub key: String,
    pub content: String,
    pub revision: u64,
    pub content_hash: String,
    pub author: String,
    pub created_at: String,
    pub updated_at: String,
}

/// A document as a listing shows it: no content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentInfo {
    pub key: String,
    pub revision: u64,
    pub content_hash: String,
    pub author: String,
    pub size: usize,
    pub updated_at: String,
}
