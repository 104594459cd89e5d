//! `builtin:chapter`, the default workflow, as an IR v2 value — the first instance of a
//! workflow the board runs, not a special case. Its columns are the Board's: Planning
//! (intake) → Drafting → Review → Done (complete) → Archived (archived). Its graph: the
//! triage session plans (seam `planning`), parse-steps reads PROMPT.md's `### Step`
//! headings, a sequential foreach drafts the steps (seam `step-execute`; nbook's executor
//! session drafts a task's steps in one session), the reviewer reviews (seam `review`) and
//! the merger merges (seam `merge`).
//!
//! **Settings catalogue** (our choice for a book; Fusion's `builtin:coding` catalogue is for
//! code): the ones the runner consumes are marked ●.
//! - ● `workflowStepTimeoutMs` (900000): the longest a role session's run may take; past it
//!   the run is cancelled and the task waits for the author.
//! - ● `maxReviewRevisions` (no default: `[board] max_rework` applies): REVISE/RETHINK
//!   verdicts before the task waits for the author.
//! - ● `reviewHandoffPolicy` (`disabled`): `always` hands every approved review to the author
//!   instead of the merger; `comment-triggered` only when the reviewer's notes say `@author`.
//! - ● `maxParallelSteps` (2): the drafting column's `wip` limit (its `limitSetting`): tasks
//!   role sessions work on there at once.
//! - ● `requirePlanApproval` (false): a planned task waits in planning for the author's
//!   approval (`crate::board::plan_approval`).
//! - ● `notificationLevel` (`important`): which board events mail the author
//!   (`crate::runner::notices`).
//! - ● `reflectionEnabled` (false): a done task's agent is asked for a post-task reflection
//!   (`crate::runner::reflect`).

use std::sync::LazyLock;

use serde_json::json;

use super::ir::WorkflowIr;

pub const CHAPTER_ID: &str = "builtin:chapter";

pub static CHAPTER: LazyLock<WorkflowIr> = LazyLock::new(|| {
    let v = json!({
        "version": "v2",
        "name": "Chapter",
        "columns": [
            {"id": "planning", "name": "Planning", "description": "A task gets its plan (PROMPT.md) here.",
             "traits": [{"trait": "intake"}, {"trait": "hold", "config": {"release": "capacity"}}, {"trait": "reset-on-entry"}]},
            {"id": "drafting", "name": "Drafting", "description": "The executor drafts the steps in the task's draft area.",
             "traits": [{"trait": "wip", "config": {"limitSetting": "maxParallelSteps"}}, {"trait": "abort-on-exit"}, {"trait": "timing"}]},
            {"id": "review", "name": "Review", "description": "The reviewer's verdict, then the merge into the manuscript.",
             "traits": [{"trait": "merge-blocker"}, {"trait": "human-review"}, {"trait": "stall-detection"}, {"trait": "merge"}]},
            {"id": "done", "name": "Done", "traits": [{"trait": "complete"}]},
            {"id": "archived", "name": "Archived", "traits": [{"trait": "archived"}]}
        ],
        "nodes": [
            {"id": "start", "kind": "start", "column": "planning"},
            {"id": "plan", "kind": "prompt", "column": "planning", "config": {"seam": "planning", "executor": "agent"}},
            {"id": "parse", "kind": "parse-steps", "column": "planning", "config": {"artifact": "PROMPT.md", "parser": "step-headings"}},
            {"id": "steps", "kind": "foreach", "column": "drafting", "config": {
                "source": "task-steps", "mode": "sequential", "isolation": "shared", "maxReworkCycles": 3,
                "template": {"nodes": [{"id": "draft-step", "kind": "prompt", "config": {"seam": "step-execute", "executor": "agent"}}], "edges": []}
            }},
            {"id": "review", "kind": "prompt", "column": "review", "config": {"seam": "review", "executor": "agent"}},
            {"id": "merge", "kind": "prompt", "column": "review", "config": {"seam": "merge", "executor": "agent"}},
            {"id": "end", "kind": "end", "column": "done"}
        ],
        "edges": [
            {"from": "start", "to": "plan"},
            {"from": "plan", "to": "parse", "condition": "success"},
            {"from": "parse", "to": "steps", "condition": "success"},
            {"from": "steps", "to": "review", "condition": "success"},
            {"from": "review", "to": "merge", "condition": "outcome:approve"},
            {"from": "merge", "to": "end", "condition": "success"}
        ],
        "artifacts": [{"key": "PROMPT.md", "title": "The task's plan", "producedBy": "planning", "role": "step-source"}],
        "fields": [
            {"id": "pov", "name": "Point of view", "type": "string"},
            {"id": "wordTarget", "name": "Word target", "type": "number"},
            {"id": "draftStage", "name": "Draft stage", "type": "enum", "options": [
                {"value": "outline", "label": "Outline"}, {"value": "first-draft", "label": "First draft"},
                {"value": "revision", "label": "Revision"}, {"value": "polish", "label": "Polish"}]}
        ],
        "settings": [
            {"id": "workflowStepTimeoutMs", "name": "Role session time limit (ms)", "type": "number", "integer": true, "minimum": 1000, "default": 900000,
             "description": "The longest one role session's run may take; past it the run is cancelled and the task waits for you."},
            {"id": "maxReviewRevisions", "name": "Review revisions before you decide", "type": "number", "integer": true, "minimum": 1,
             "description": "REVISE or RETHINK verdicts before the task waits for you (unset: [board] max_rework)."},
            {"id": "reviewHandoffPolicy", "name": "Review hand-off", "type": "enum", "default": "disabled",
             "options": [{"value": "disabled", "label": "Disabled"}, {"value": "comment-triggered", "label": "When the reviewer asks (@author)"}, {"value": "always", "label": "Always"}],
             "description": "Whether an approved review goes to you before the merger."},
            {"id": "maxParallelSteps", "name": "Parallel drafting tasks", "type": "number", "integer": true, "minimum": 1, "default": 2},
            {"id": "requirePlanApproval", "name": "Approve plans yourself", "type": "boolean", "default": false},
            {"id": "reflectionEnabled", "name": "Post-task reflections", "type": "boolean", "default": false,
             "description": "After a task is done its agent reflects on its record (fn_reflect_on_performance, which you approve)."},
            {"id": "notificationLevel", "name": "Notifications", "type": "enum", "default": "important",
             "options": [{"value": "silent", "label": "Silent"}, {"value": "errors", "label": "Errors"}, {"value": "important", "label": "Important"}, {"value": "all", "label": "All"}]}
        ]
    });
    // The built-in is a constant of this build; a test checks it validates.
    serde_json::from_value(v).unwrap_or_else(|_| WorkflowIr {
        version: "v2".into(),
        name: "Chapter".into(),
        columns: Vec::new(),
        nodes: Vec::new(),
        edges: Vec::new(),
        artifacts: Vec::new(),
        fields: Vec::new(),
        settings: Vec::new(),
    })
});

#[cfg(test)]
mod tests {
    #[test]
    fn the_builtin_validates() {
        let ir = super::CHAPTER.clone();
        assert_eq!(ir.columns.len(), 5);
        super::super::validate::validate(ir).expect("builtin:chapter is valid");
    }
}
