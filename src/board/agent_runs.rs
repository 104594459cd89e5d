//! The record of durable agents' heartbeat runs (`nbook_agent_run`, migration
//! `010_agent_runs.sql`): one row per wake — why the agent woke, the session it ran in, when it
//! started and ended, how it ended and its summary. The heartbeat scheduler
//! (`crate::runner::heartbeat`) writes it; `nbook agent runs` and the Board's agent list read
//! it. Times are given by the caller (the scheduler's clock), so a test can drive them.

use std::collections::BTreeSet;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use super::error::BoardResult;

/// Why a heartbeat agent woke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WakeReason {
    Timer,
    Assignment,
    Message,
    Manual,
}

impl WakeReason {
    pub fn as_str(self) -> &'static str {
        match self {
            WakeReason::Timer => "timer",
            WakeReason::Assignment => "assignment",
            WakeReason::Message => "message",
            WakeReason::Manual => "manual",
        }
    }
}

/// How a run ended (or that it still runs).
pub const RUNNING: &str = "running";
pub const DONE: &str = "done";
pub const TIMED_OUT: &str = "timed-out";
pub const FAILED: &str = "failed";
pub const CANCELLED: &str = "cancelled";

/// A durable agent with its newest run (the Board's agent list).
#[derive(Clone, Debug, PartialEq)]
pub struct AgentLine {
    pub agent: super::agents::DurableAgent,
    pub last: Option<AgentRun>,
}

/// Every durable agent, oldest first, with its newest run.
pub fn lines(c: &Connection) -> BoardResult<Vec<AgentLine>> {
    super::agents::all(c)?
        .into_iter()
        .map(|agent| {
            let last = last(c, &agent.id)?;
            Ok(AgentLine { agent, last })
        })
        .collect()
}

/// One run, as `nbook agent runs` prints it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRun {
    pub id: i64,
    pub agent_id: String,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    pub session_id: Option<String>,
    pub started_at: String,
    #[serde(skip)]
    pub started_ms: i64,
    pub ended_at: Option<String>,
    pub status: String,
    pub summary: Option<String>,
}

const COLS: &str =
    "id, agent_id, reason, trigger, session_id, started_at, started_ms, ended_at, status, summary";

fn row(r: &rusqlite::Row) -> rusqlite::Result<AgentRun> {
    Ok(AgentRun {
        id: r.get(0)?,
        agent_id: r.get(1)?,
        reason: r.get(2)?,
        trigger: r.get(3)?,
        session_id: r.get(4)?,
        started_at: r.get(5)?,
        started_ms: r.get(6)?,
        ended_at: r.get(7)?,
        status: r.get(8)?,
        summary: r.get(9)?,
    })
}

/// RFC 3339 of `ms` since the epoch.
pub fn rfc3339(ms: u64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

/// Record a run that starts now (`at_ms`); its id.
pub fn start(
    c: &Connection,
    agent_id: &str,
    reason: WakeReason,
    trigger: Option<&str>,
    session_id: &str,
    at_ms: u64,
) -> BoardResult<i64> {
    crate::store::check_writable(c)?;
    c.execute(
        "INSERT INTO nbook_agent_run (agent_id, reason, trigger, session_id, started_at, started_ms, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![agent_id, reason.as_str(), trigger, session_id, rfc3339(at_ms), at_ms as i64, RUNNING],
    )?;
    Ok(c.last_insert_rowid())
}

/// Record how run `id` ended. A run already ended keeps its first end.
pub fn end(
    c: &Connection,
    id: i64,
    status: &str,
    summary: Option<&str>,
    at_ms: u64,
) -> BoardResult<()> {
    crate::store::check_writable(c)?;
    c.execute(
        "UPDATE nbook_agent_run SET status = ?2, summary = ?3, ended_at = ?4 WHERE id = ?1 AND status = 'running'",
        params![id, status, summary, rfc3339(at_ms)],
    )?;
    Ok(())
}

/// Runs still marked running that no live process runs (nbook stopped during them): recorded
/// as cancelled. Called by the one scheduler of the project when it starts.
pub fn close_orphans(c: &Connection, at_ms: u64) -> BoardResult<usize> {
    crate::store::check_writable(c)?;
    Ok(c.execute(
        "UPDATE nbook_agent_run SET status = 'cancelled', ended_at = ?1, summary = COALESCE(summary, 'nbook stopped during the run') WHERE status = 'running'",
        params![rfc3339(at_ms)],
    )?)
}

/// The runs of `agent_id`, newest first.
pub fn of_agent(c: &Connection, agent_id: &str, limit: usize) -> BoardResult<Vec<AgentRun>> {
    let mut st = c.prepare_cached(&format!(
        "SELECT {COLS} FROM nbook_agent_run WHERE agent_id = ?1 ORDER BY id DESC LIMIT ?2"
    ))?;
    let rows = st
        .query_map(params![agent_id, limit.min(i64::MAX as usize) as i64], row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// The newest run of `agent_id`.
pub fn last(c: &Connection, agent_id: &str) -> BoardResult<Option<AgentRun>> {
    Ok(of_agent(c, agent_id, 1)?.into_iter().next())
}

/// The sessions of `agent_id`'s heartbeat runs that are over (any status but running): such
/// a session is not the agent's live session any more (the engine's `mail::live_session_of`).
pub fn ended_sessions(c: &Connection, agent_id: &str) -> BoardResult<BTreeSet<String>> {
    let mut st = c.prepare_cached(
        "SELECT session_id FROM nbook_agent_run WHERE agent_id = ?1 AND status <> 'running' AND session_id IS NOT NULL",
    )?;
    let rows = st
        .query_map([agent_id], |r| r.get::<_, String>(0))?
        .collect::<Result<BTreeSet<_>, _>>()?;
    Ok(rows)
}

/// How many runs of `agent_id` are marked running (in any process).
pub fn running_count(c: &Connection, agent_id: &str) -> BoardResult<usize> {
    let n: i64 = c.query_row(
        "SELECT COUNT(*) FROM nbook_agent_run WHERE agent_id = ?1 AND status = 'running'",
        [agent_id],
        |r| r.get(0),
    )?;
    Ok(n as usize)
}

/// Whether `agent_id` was already woken for its assignment to `task` (`trigger` holds the
/// comma-separated tasks of an assignment wake).
pub fn woken_for_assignment(c: &Connection, agent_id: &str, task: &str) -> BoardResult<bool> {
    Ok(c
        .query_row(
            "SELECT 1 FROM nbook_agent_run WHERE agent_id = ?1 AND reason = 'assignment' AND (',' || trigger || ',') LIKE ('%,' || ?2 || ',%') LIMIT 1",
            [agent_id, task],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}
