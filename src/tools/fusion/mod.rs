//! Fusion's engine tools (`fn_*`, seeds/fusion-engine-tools.txt) on nbook's engine contract:
//! each a typed declaration with its mutation class and effects (`board`), over the board
//! service in `crate::board`. Mutating tools go through the approval gate like every mutating
//! tool: their preview is the board's dry run (the field diff of the records they touch) and
//! its stale check the touched records' revisions.
//!
//! **Failures are error results.** Where Fusion answers a failure with plain text and no
//! `isError` (e.g. `fn_task_done blocked` without a reason, a rejected custom field), nbook
//! returns an error result with `details.code` (see `crate::board::error`), and the tool
//! descriptions say so.
//!
//! **The session's task.** Task-scoped tools act on the session's own task, the string under
//! the session-state key [`SESSION_TASK`] (set by whoever starts a role session for a task).
//! Chat and planning sessions have no task of their own, so the tools that take `task_id`
//! require it there (`TASK_ID_REQUIRED` otherwise); executor tools without a `task_id`
//! parameter (fn_task_update, fn_task_done, …) can only ever touch the session's task.

pub mod agents;
pub mod artifacts;
pub mod docs;
pub mod durable_agents;
pub mod evaluations;
pub mod goals;
pub mod mailbox;
pub mod memory;
pub mod merge;
pub mod research;
pub mod research_job;
pub mod review;
pub mod series;
pub mod tasks;
pub mod web;
pub mod workflows;

use serde_json::Value;

use crate::board::{Board, BoardError, Committed, DryRun, Op};
use crate::engine::tool::{ToolCtx, ToolError, ToolOutput};
use crate::engine::types::{Preview, PreviewBody};

/// Session-state key holding the id of the task a role session works on.
pub const SESSION_TASK: &str = "board.task";

pub(crate) fn board(ctx: &ToolCtx) -> Board {
    Board::new(ctx.workspace.root(), ctx.workspace.name())
}

/// The board's typed error as the agent gets it: message plus `details.code`; nothing changed.
pub(crate) fn err(e: BoardError) -> ToolError {
    ToolError::Coded {
        message: format!("{e} (nothing was changed)"),
        details: e.details(),
    }
}

/// `explicit`, else the session's task, else `TASK_ID_REQUIRED`.
pub(crate) fn task_of(ctx: &ToolCtx, explicit: Option<&str>) -> Result<String, ToolError> {
    if let Some(id) = explicit.map(str::trim).filter(|s| !s.is_empty()) {
        return Ok(id.to_string());
    }
    ctx.session_state
        .get(SESSION_TASK)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| err(BoardError::TaskIdRequired))
}

/// Who made a change, for the task log: the profile and the session.
pub(crate) fn actor(ctx: &ToolCtx) -> String {
    format!("{} (session {})", ctx.profile.key, ctx.session_id)
}

/// The approval preview of a board change: its dry run.
pub(crate) fn preview_op(tool: &str, board: &Board, op: impl Op) -> Result<Preview, ToolError> {
    let DryRun {
        outcome,
        changes,
        targets,
    } = board.dry_run(op).map_err(err)?;
    let summary = match changes.first() {
        Some(c) if changes.len() == 1 => format!("{tool}: {} {}", c.action, c.record),
        Some(c) => format!(
            "{tool}: {} {} (+{} more)",
            c.action,
            c.record,
            changes.len() - 1
        ),
        None => format!("{tool}: {}", outcome.text.lines().next().unwrap_or("")),
    };
    let body = if changes.is_empty() {
        PreviewBody::Text { text: outcome.text }
    } else {
        PreviewBody::Records { changes }
    };
    Ok(Preview {
        summary,
        body,
        targets,
    })
}

/// Commit a board change; files that could not be written are named after the result.
pub(crate) fn run_op(board: &Board, op: impl Op) -> Result<ToolOutput, ToolError> {
    let Committed { outcome, warnings } = board.commit(op).map_err(err)?;
    let mut content = outcome.text;
    for w in warnings {
        content.push_str(&format!("\nwarning: {w} (the board record is saved)"));
    }
    Ok(ToolOutput {
        content,
        details: Some(outcome.value),
        ..ToolOutput::default()
    })
}

/// A read's result: text for the model, the value as details.
pub(crate) fn read_output(text: String, value: Value) -> ToolOutput {
    ToolOutput {
        content: text,
        details: Some(value),
        ..ToolOutput::default()
    }
}
