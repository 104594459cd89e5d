//! Steering comments: the author's mid-run notes to a task's agent (`s` on the Board,
//! `fn_task_steer`). Stored in `nbook_board_steering`; each is handed out once — [`take`]
//! marks what it returns as delivered inside the caller's write transaction, so two takers
//! (the live session's delivery and the next session's first message) never both get one.
//! A delivery that could not happen after all is put back with [`release`].

use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::error::{BoardError, BoardResult};
use super::{now, tasks, Outcome, Touched};

/// Longest comment accepted (Fusion's message limit).
pub const MAX_CHARS: usize = 2000;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Steering {
    pub id: i64,
    pub task_id: String,
    pub text: String,
    pub author: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered_to: Option<String>,
}

fn row(r: &rusqlite::Row) -> rusqlite::Result<Steering> {
    Ok(Steering {
        id: r.get(0)?,
        task_id: r.get(1)?,
        text: r.get(2)?,
        author: r.get(3)?,
        created_at: r.get(4)?,
        delivered_at: r.get(5)?,
        delivered_to: r.get(6)?,
    })
}

const COLS: &str = "id, task_id, text, author, created_at, delivered_at, delivered_to";

/// Add a comment to task `id` (not Done or Archived: nobody works on those any more).
pub fn add(c: &Connection, id: &str, text: &str, author: &str) -> BoardResult<Outcome> {
    let t = tasks::require(c, id)?;
    if crate::board::workflow::lanes_for_task(c, &t).finished(&t.column) {
        return Err(BoardError::WrongColumn {
            id: t.id.clone(),
            column: t.column.clone(),
            action: "steer",
            allowed: vec!["planning".into(), "drafting".into(), "review".into()],
        });
    }
    let text = text.trim();
    if text.is_empty() {
        return Err(BoardError::invalid(
            "text",
            "a steering comment needs some text",
        ));
    }
    let n = text.chars().count();
    if n > MAX_CHARS {
        return Err(BoardError::invalid(
            "text",
            format!("{n} characters; a steering comment has at most {MAX_CHARS}"),
        ));
    }
    c.execute(
        "INSERT INTO nbook_board_steering (task_id, text, author, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![t.id, text, author, now()],
    )?;
    let sid = c.last_insert_rowid();
    let mut out = Outcome::default();
    tasks::log(
        c,
        &mut out,
        &t.id,
        &format!("Steering comment added: {}", super::snippet(text, 80)),
        None,
        Some(author),
    )?;
    out.text = format!(
        "Steering comment {sid} added to {}: it goes into the live session at its next turn, or into the next session's first message.",
        t.id
    );
    out.value = json!({"taskId": t.id, "steeringId": sid, "text": text});
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

/// Hand out task `id`'s undelivered comments, oldest first, marking them delivered to
/// `session`. Run it in a write transaction ([`super::Board::commit`]).
pub fn take(c: &Connection, id: &str, session: &str) -> BoardResult<Outcome> {
    let at = now();
    let mut st = c.prepare_cached(&format!(
        "UPDATE nbook_board_steering SET delivered_at = ?2, delivered_to = ?3
           WHERE task_id = ?1 AND delivered_at IS NULL RETURNING {COLS}"
    ))?;
    let mut taken: Vec<Steering> = st
        .query_map(params![id, at, session], row)?
        .collect::<Result<_, _>>()?;
    taken.sort_by_key(|s| s.id);
    let mut out = Outcome {
        text: format!("{} steering comment(s) for {id}", taken.len()),
        value: serde_json::to_value(&taken).unwrap_or_default(),
        ..Outcome::default()
    };
    // The task log says where each went, so the author sees it was delivered once.
    for t in &taken {
        tasks::log(
            c,
            &mut out,
            id,
            &format!("Steering comment {} delivered to session {session}", t.id),
            None,
            Some("runner"),
        )?;
    }
    Ok(out)
}

/// Put comments back as undelivered (their delivery did not happen).
pub fn release(c: &Connection, ids: &[i64]) -> BoardResult<Outcome> {
    for i in ids {
        c.execute(
            "UPDATE nbook_board_steering SET delivered_at = NULL, delivered_to = NULL WHERE id = ?1",
            [i],
        )?;
    }
    Ok(Outcome::default())
}

/// Every comment of task `id`, oldest first.
pub fn list(c: &Connection, id: &str) -> BoardResult<Vec<Steering>> {
    let mut st = c.prepare_cached(&format!(
        "SELECT {COLS} FROM nbook_board_steering WHERE task_id = ?1 ORDER BY id"
    ))?;
    let v = st.query_map([id], row)?.collect::<Result<_, _>>()?;
    Ok(v)
}

/// How many comments of task `id` wait for delivery.
pub fn undelivered(c: &Connection, id: &str) -> BoardResult<usize> {
    let n: i64 = c.query_row(
        "SELECT COUNT(*) FROM nbook_board_steering WHERE task_id = ?1 AND delivered_at IS NULL",
        [id],
        |r| r.get(0),
    )?;
    Ok(n as usize)
}
