//! Book goals ("first draft of act 2 by March"): created and archived by the author, read by
//! agents (`fn_goal_list`, `fn_goal_show`). At most [`ACTIVE_GOAL_LIMIT`] are active
//! (`ACTIVE_GOAL_LIMIT_EXCEEDED` on create or unarchive); from [`SOFT_WARNING_AT`] active
//! goals `fn_goal_list` carries a warning.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::json;

use super::error::{BoardError, BoardResult};
use super::model::Goal;
use super::{now, snippet, Outcome, Touched};

pub const ACTIVE_GOAL_LIMIT: usize = 5;
pub const SOFT_WARNING_AT: usize = 3;
/// Characters of a goal's description in a list snippet.
pub const SNIPPET_CHARS: usize = 80;

pub fn load(c: &Connection, id: &str) -> BoardResult<Option<Goal>> {
    Ok(c.query_row(
        "SELECT id, title, description, status, created_at, updated_at FROM nbook_board_goal WHERE id = ?1",
        [id],
        row,
    )
    .optional()?)
}

fn row(r: &rusqlite::Row) -> rusqlite::Result<Goal> {
    Ok(Goal {
        id: r.get(0)?,
        title: r.get(1)?,
        description: r.get(2)?,
        status: r.get(3)?,
        created_at: r.get(4)?,
        updated_at: r.get(5)?,
    })
}

pub fn require(c: &Connection, id: &str) -> BoardResult<Goal> {
    load(c, id)?.ok_or_else(|| BoardError::GoalNotFound { id: id.to_string() })
}

pub fn active_count(c: &Connection) -> BoardResult<usize> {
    let n: i64 = c.query_row(
        "SELECT count(*) FROM nbook_board_goal WHERE status = 'active'",
        [],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as usize)
}

fn check_room(c: &Connection) -> BoardResult<()> {
    let active = active_count(c)?;
    if active >= ACTIVE_GOAL_LIMIT {
        return Err(BoardError::ActiveGoalLimit {
            active,
            limit: ACTIVE_GOAL_LIMIT,
        });
    }
    Ok(())
}

/// Create an active goal (`G-001`, …).
pub fn create(c: &Connection, title: &str, description: &str) -> BoardResult<Outcome> {
    let title = title.trim();
    if title.is_empty() {
        return Err(BoardError::invalid("title", "must not be empty"));
    }
    check_room(c)?;
    let seq: i64 = c.query_row(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM nbook_board_goal",
        [],
        |r| r.get(0),
    )?;
    let id = format!("G-{seq:03}");
    let at = now();
    c.execute(
        "INSERT INTO nbook_board_goal (id, seq, title, description, status, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, 'active', ?5, ?5)",
        params![id, seq, title, description.trim(), at],
    )?;
    Ok(Outcome {
        text: format!("Goal {id} created: {title}"),
        value: json!({"goalId": id}),
        touched: vec![Touched::Goal(id)],
        ..Outcome::default()
    })
}

/// Archive (`archived = true`) or unarchive a goal; unarchiving respects the limit.
pub fn set_archived(c: &Connection, id: &str, archived: bool) -> BoardResult<Outcome> {
    let g = require(c, id)?;
    let status = if archived { "archived" } else { "active" };
    if !archived && g.status != "active" {
        check_room(c)?;
    }
    c.execute(
        "UPDATE nbook_board_goal SET status = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, status, now()],
    )?;
    Ok(Outcome {
        text: format!("Goal {id} is {status}."),
        value: json!({"goalId": id, "status": status}),
        touched: vec![Touched::Goal(id.to_string())],
        ..Outcome::default()
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GoalFilter {
    Active,
    Archived,
    All,
}

/// `fn_goal_list`'s `details`: `{goals: [{id, title, status, snippet}], activeCount,
/// softWarning, hardLimit}`. `softWarning` is a sentence from 3 active goals on, else null.
pub fn list(c: &Connection, filter: GoalFilter) -> BoardResult<serde_json::Value> {
    let mut st = c.prepare_cached(
        "SELECT id, title, description, status, created_at, updated_at FROM nbook_board_goal ORDER BY seq",
    )?;
    let goals: Vec<Goal> = st.query_map([], row)?.collect::<Result<_, _>>()?;
    let active = goals.iter().filter(|g| g.status == "active").count();
    let shown: Vec<serde_json::Value> = goals
        .iter()
        .filter(|g| match filter {
            GoalFilter::Active => g.status == "active",
            GoalFilter::Archived => g.status == "archived",
            GoalFilter::All => true,
        })
        .map(|g| json!({"id": g.id, "title": g.title, "status": g.status, "snippet": snippet(&g.description, SNIPPET_CHARS)}))
        .collect();
    let warning = (active >= SOFT_WARNING_AT).then(|| {
        format!("{active} goals are active (limit {ACTIVE_GOAL_LIMIT}); focus on them before proposing more")
    });
    Ok(
        json!({"goals": shown, "activeCount": active, "softWarning": warning, "hardLimit": ACTIVE_GOAL_LIMIT}),
    )
}

/// The active goals in creation order (the Board's goal line).
pub fn active(c: &Connection) -> BoardResult<Vec<Goal>> {
    let mut st = c.prepare_cached(
        "SELECT id, title, description, status, created_at, updated_at FROM nbook_board_goal WHERE status = 'active' ORDER BY seq",
    )?;
    let goals: Vec<Goal> = st.query_map([], row)?.collect::<Result<_, _>>()?;
    Ok(goals)
}

/// The archived goals in creation order (the Board's goal list, to unarchive one).
pub fn archived(c: &Connection) -> BoardResult<Vec<Goal>> {
    let mut st = c.prepare_cached(
        "SELECT id, title, description, status, created_at, updated_at FROM nbook_board_goal WHERE status = 'archived' ORDER BY seq",
    )?;
    let goals: Vec<Goal> = st.query_map([], row)?.collect::<Result<_, _>>()?;
    Ok(goals)
}
