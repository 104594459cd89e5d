//! Assignment of a task to an agent: the custom field `assignee` (what the Board's cards and
//! task view show), set by `fn_delegate_task`. It is the board's own field, not one the
//! workflow declares, so it is written here rather than through `fn_task_update`'s field
//! validation; the change is logged on the task.

use rusqlite::{params, Connection};
use serde_json::{json, Value};

use super::error::{BoardError, BoardResult};
use super::tasks::{log, require};
use super::{now, Outcome, Touched};

/// The custom field holding the agent a task is assigned to.
pub const ASSIGNEE_FIELD: &str = "assignee";

/// The task's assignee, if it has one.
pub fn assignee(t: &super::Task) -> Option<&str> {
    t.custom_fields.get(ASSIGNEE_FIELD).and_then(Value::as_str)
}

/// Assign task `id` to `agent`. A Done or Archived task is not reassigned (its work is over).
pub fn set_assignee(
    c: &Connection,
    id: &str,
    agent: &str,
    actor: Option<&str>,
) -> BoardResult<Outcome> {
    let t = require(c, id)?;
    if crate::board::workflow::lanes_for_task(c, &t).finished(&t.column) {
        return Err(BoardError::WrongColumn {
            id: id.to_string(),
            column: t.column.clone(),
            action: "assignment",
            allowed: vec!["planning".into(), "drafting".into(), "review".into()],
        });
    }
    let mut fields = t.custom_fields.clone();
    fields.insert(ASSIGNEE_FIELD.to_string(), json!(agent));
    c.execute(
        "UPDATE nbook_board_task SET custom_fields = ?2, revision = revision + 1, updated_at = ?3 WHERE id = ?1",
        params![
            id,
            serde_json::to_string(&fields).unwrap_or_else(|_| "{}".into()),
            now()
        ],
    )?;
    let mut out = Outcome {
        text: format!("{id} is assigned to {agent}."),
        value: json!({"taskId": id, "assignee": agent}),
        touched: vec![Touched::Task(id.to_string())],
        ..Outcome::default()
    };
    log(
        c,
        &mut out,
        id,
        &format!("Assigned to {agent}"),
        None,
        actor,
    )?;
    Ok(out)
}

/// Take task `id` off its assignee (its agent was deleted with `force`). A Done or Archived
/// task keeps the name of whoever did it.
pub fn clear_assignee(c: &Connection, id: &str, actor: Option<&str>) -> BoardResult<Outcome> {
    let t = require(c, id)?;
    let mut fields = t.custom_fields.clone();
    let Some(was) = fields.remove(ASSIGNEE_FIELD) else {
        return Ok(Outcome::default());
    };
    if crate::board::workflow::lanes_for_task(c, &t).finished(&t.column) {
        return Ok(Outcome::default());
    }
    c.execute(
        "UPDATE nbook_board_task SET custom_fields = ?2, revision = revision + 1, updated_at = ?3 WHERE id = ?1",
        params![
            id,
            serde_json::to_string(&fields).unwrap_or_else(|_| "{}".into()),
            now()
        ],
    )?;
    let was = was.as_str().unwrap_or("").to_string();
    let mut out = Outcome {
        text: format!("{id} is no longer assigned to {was}."),
        value: json!({"taskId": id, "assignee": Value::Null}),
        touched: vec![Touched::Task(id.to_string())],
        ..Outcome::default()
    };
    log(
        c,
        &mut out,
        id,
        &format!("Unassigned from {was} (the agent was deleted)"),
        None,
        actor,
    )?;
    Ok(out)
}
