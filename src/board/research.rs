//! Research runs' durable records (Fusion's `research_runs`, notes §5): one row of
//! `nbook_research_run` (migration `007_research.sql`) per `fn_research_run` call, with its
//! query, status (`pending | running | completed | failed | cancelled`), trigger, sources,
//! events, results (summary, findings with citations, the cited sources), error, token usage,
//! tags and timestamps, and the run it retries (`retry_of`, migration `012_research_retry.sql`:
//! `fn_research_retry` starts a failed or cancelled run again as a new run).
//!
//! **Transitions are guarded in SQL.** Every status change is one `UPDATE … WHERE status IN
//! (…)` in a write transaction, so a run that was cancelled can never be completed later by
//! a runner that had not noticed yet, and a finished run never changes again. The results of
//! a run are written in the same statement as its final status: a run is never seen
//! `completed` without its results, nor with half of them.
//!
//! This module imports nothing from the engine; `crate::tools::fusion::research` runs the jobs
//! and puts these records behind the tools.

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::error::{BoardError, BoardResult};
use super::{now, Board, Outcome};

/// A run's status, Fusion's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Pending,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Pending => "pending",
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }
    pub fn parse(s: &str) -> Option<RunStatus> {
        [
            RunStatus::Pending,
            RunStatus::Running,
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::Cancelled,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
    pub fn is_final(self) -> bool {
        !matches!(self, RunStatus::Pending | RunStatus::Running)
    }
}

/// One source a run found, and whether it was fetched.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    pub url: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub snippet: String,
    /// `found` (a search result not fetched: over the source limit or refused), `fetched`,
    /// `failed`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Characters of readable text fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chars: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub text: String,
    /// URLs of fetched sources.
    pub citations: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Citation {
    pub url: String,
    pub title: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub summary: String,
    pub findings: Vec<Finding>,
    pub citations: Vec<Citation>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TokenUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub id: String,
    pub query: String,
    pub status: RunStatus,
    pub trigger: String,
    pub session_id: Option<String>,
    pub job_id: Option<String>,
    pub sources: Vec<Source>,
    pub events: Vec<Value>,
    pub results: Option<Results>,
    pub error: Option<String>,
    pub token_usage: TokenUsage,
    pub tags: Vec<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// The run this one retries (fn_research_retry).
    pub retry_of: Option<String>,
}

impl Run {
    /// Whether fn_research_retry may start this run again: it failed or was cancelled.
    pub fn retryable(&self) -> bool {
        matches!(self.status, RunStatus::Failed | RunStatus::Cancelled)
    }

    /// Fusion's `details` of fn_research_run / fn_research_get: `{runId, status, summary,
    /// findings, citations, sourceCount, error}` plus the rest of the record.
    pub fn details(&self) -> Value {
        let (summary, findings, citations) = match &self.results {
            Some(r) => (json!(r.summary), json!(r.findings), json!(r.citations)),
            None => (Value::Null, json!([]), json!([])),
        };
        json!({
            "runId": self.id,
            "status": self.status,
            "query": self.query,
            "summary": summary,
            "findings": findings,
            "citations": citations,
            "sourceCount": self.sources.iter().filter(|s| s.status == "fetched").count(),
            "error": self.error,
            "sources": self.sources,
            "events": self.events,
            "tokenUsage": self.token_usage,
            "trigger": self.trigger,
            "tags": self.tags,
            "jobId": self.job_id,
            "createdAt": self.created_at,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "retryOf": self.retry_of,
        })
    }
}

/// What a new run is created with.
#[derive(Clone, Debug)]
pub struct NewRun {
    pub query: String,
    pub trigger: String,
    pub session_id: Option<String>,
    pub job_id: Option<String>,
    pub tags: Vec<String>,
    /// The run this one retries.
    pub retry_of: Option<String>,
}

const COLUMNS: &str = "id, query, status, trigger, session_id, job_id, sources, events, results, error, token_usage, tags, created_at, started_at, finished_at, retry_of";

fn corrupt(id: &str, what: &str, e: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        0,
        rusqlite::types::Type::Text,
        format!("research run {id}: {what} is not valid JSON ({e})").into(),
    )
}

fn row(r: &rusqlite::Row) -> rusqlite::Result<Run> {
    let id: String = r.get(0)?;
    let status: String = r.get(2)?;
    let json_col = |i: usize, what: &str| -> rusqlite::Result<Value> {
        let text: Option<String> = r.get(i)?;
        match text {
            None => Ok(Value::Null),
            Some(t) => serde_json::from_str(&t).map_err(|e| corrupt(&id, what, e)),
        }
    };
    fn typed<T: serde::de::DeserializeOwned>(
        id: &str,
        v: Value,
        what: &str,
    ) -> rusqlite::Result<T> {
        serde_json::from_value(v).map_err(|e| corrupt(id, what, e))
    }
    let results = match json_col(8, "results")? {
        Value::Null => None,
        v => Some(typed(&id, v, "results")?),
    };
    Ok(Run {
        status: RunStatus::parse(&status)
            .ok_or_else(|| corrupt(&id, "status", format!("unknown status {status:?}")))?,
        query: r.get(1)?,
        trigger: r.get(3)?,
        session_id: r.get(4)?,
        job_id: r.get(5)?,
        sources: typed(&id, json_col(6, "sources")?, "sources")?,
        events: typed(&id, json_col(7, "events")?, "events")?,
        results,
        error: r.get(9)?,
        token_usage: typed(&id, json_col(10, "token_usage")?, "token_usage")?,
        tags: typed(&id, json_col(11, "tags")?, "tags")?,
        created_at: r.get(12)?,
        started_at: r.get(13)?,
        finished_at: r.get(14)?,
        retry_of: r.get(15)?,
        id,
    })
}

pub fn load(c: &Connection, id: &str) -> BoardResult<Option<Run>> {
    Ok(c.query_row(
        &format!("SELECT {COLUMNS} FROM nbook_research_run WHERE id = ?1"),
        [id],
        row,
    )
    .optional()?)
}

/// Runs newest first, optionally of one status, at most `limit`.
pub fn list(c: &Connection, status: Option<RunStatus>, limit: usize) -> BoardResult<Vec<Run>> {
    let mut stmt = c.prepare(&format!(
        "SELECT {COLUMNS} FROM nbook_research_run WHERE (?1 IS NULL OR status = ?1) ORDER BY seq DESC LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![status.map(RunStatus::as_str), limit as i64], row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

fn to_text(v: &impl Serialize) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

fn event(kind: &str, message: &str) -> Value {
    json!({"at": now(), "type": kind, "message": message})
}

/// Run `f` in a write transaction and hand back the value it put in the outcome.
fn write(board: &Board, f: impl Fn(&Connection) -> BoardResult<Value>) -> BoardResult<Value> {
    board
        .commit(|c| {
            Ok(Outcome {
                value: f(c)?,
                ..Outcome::default()
            })
        })
        .map(|done| done.outcome.value)
}

/// Record a new `pending` run (`RR-001`, …) and return it.
pub fn create(board: &Board, new: &NewRun) -> BoardResult<Run> {
    let query = new.query.trim();
    if query.is_empty() {
        return Err(BoardError::invalid("query", "must not be empty"));
    }
    let id = write(board, |c| {
        let seq: i64 = c.query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM nbook_research_run",
            [],
            |r| r.get(0),
        )?;
        let id = format!("RR-{seq:03}");
        let created = match &new.retry_of {
            Some(of) => format!("query: {query} (a retry of {of})"),
            None => format!("query: {query}"),
        };
        c.execute(
            "INSERT INTO nbook_research_run (seq, id, query, status, trigger, session_id, job_id, events, tags, created_at, retry_of) VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                seq,
                id,
                query,
                new.trigger,
                new.session_id,
                new.job_id,
                to_text(&vec![event("created", &created)]),
                to_text(&new.tags),
                now(),
                new.retry_of
            ],
        )?;
        Ok(json!(id))
    })?;
    let id = id.as_str().unwrap_or_default().to_string();
    board.read(|c| load(c, &id))?.ok_or_else(|| {
        BoardError::invalid(
            "id",
            format!("research run {id} vanished after it was created"),
        )
    })
}

/// Name the job that runs a run (set once the job exists).
pub fn set_job(board: &Board, id: &str, job_id: &str) -> BoardResult<()> {
    write(board, |c| {
        c.execute(
            "UPDATE nbook_research_run SET job_id = ?2 WHERE id = ?1",
            params![id, job_id],
        )?;
        Ok(Value::Null)
    })
    .map(|_| ())
}

/// Append an event to a run that has not ended; false when it has (nothing written).
pub fn push_event(board: &Board, id: &str, kind: &str, message: &str) -> BoardResult<bool> {
    let e = event(kind, message);
    let changed = write(board, |c| {
        let n = c.execute(
            "UPDATE nbook_research_run SET events = json_insert(events, '$[#]', json(?2)) WHERE id = ?1 AND status IN ('pending', 'running')",
            params![id, to_text(&e)],
        )?;
        Ok(json!(n > 0))
    })?;
    Ok(changed == json!(true))
}

/// `pending` → `running`; false when the run is not pending any more (a cancel came first).
pub fn mark_running(board: &Board, id: &str) -> BoardResult<bool> {
    let e = event("running", "searching");
    let changed = write(board, |c| {
        let n = c.execute(
            "UPDATE nbook_research_run SET status = 'running', started_at = ?2, events = json_insert(events, '$[#]', json(?3)) WHERE id = ?1 AND status = 'pending'",
            params![id, now(), to_text(&e)],
        )?;
        Ok(json!(n > 0))
    })?;
    Ok(changed == json!(true))
}

/// Replace the sources of a run that has not ended.
pub fn set_sources(board: &Board, id: &str, sources: &[Source]) -> BoardResult<bool> {
    let changed = write(board, |c| {
        let n = c.execute(
            "UPDATE nbook_research_run SET sources = ?2 WHERE id = ?1 AND status IN ('pending', 'running')",
            params![id, to_text(&sources)],
        )?;
        Ok(json!(n > 0))
    })?;
    Ok(changed == json!(true))
}

/// How a run ended.
#[derive(Clone, Debug)]
pub enum End {
    Completed(Results),
    Failed(String),
    Cancelled,
}

/// End a run that has not ended: its final status, results or error, token usage and
/// `finishedAt`, in one statement. False when it had already ended (nothing written).
pub fn finish(board: &Board, id: &str, end: &End, usage: &TokenUsage) -> BoardResult<bool> {
    let (status, results, error, e) = match end {
        End::Completed(r) => (
            "completed",
            Some(to_text(r)),
            None,
            event(
                "completed",
                &format!(
                    "{} finding(s), {} source(s) cited",
                    r.findings.len(),
                    r.citations.len()
                ),
            ),
        ),
        End::Failed(why) => ("failed", None, Some(why.clone()), event("failed", why)),
        End::Cancelled => (
            "cancelled",
            None,
            Some("cancelled".to_string()),
            event("cancelled", "the run was cancelled"),
        ),
    };
    let changed = write(board, |c| {
        let n = c.execute(
            "UPDATE nbook_research_run SET status = ?2, results = ?3, error = ?4, token_usage = ?5, finished_at = ?6, events = json_insert(events, '$[#]', json(?7)) WHERE id = ?1 AND status IN ('pending', 'running')",
            params![id, status, results, error, to_text(usage), now(), to_text(&e)],
        )?;
        Ok(json!(n > 0))
    })?;
    Ok(changed == json!(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board() -> (tempfile::TempDir, Board) {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(dir.path().join(".nbook")).expect("dir");
        let b = Board::new(dir.path(), "Book");
        (dir, b)
    }

    fn new(q: &str) -> NewRun {
        NewRun {
            query: q.into(),
            trigger: "executor (session 1)".into(),
            session_id: Some("1".into()),
            job_id: Some("job-1".into()),
            tags: vec!["executor".into()],
            retry_of: None,
        }
    }

    #[test]
    fn a_run_moves_forward_only_and_keeps_its_results_with_its_status() {
        let (_d, b) = board();
        let r = create(&b, &new("salt tax 1820")).expect("create");
        assert_eq!((r.id.as_str(), r.status), ("RR-001", RunStatus::Pending));
        assert!(mark_running(&b, &r.id).expect("running"));
        assert!(
            !mark_running(&b, &r.id).expect("again"),
            "only from pending"
        );
        assert!(push_event(&b, &r.id, "search", "3 results").expect("event"));
        assert!(finish(&b, &r.id, &End::Cancelled, &TokenUsage::default()).expect("cancel"));
        let results = Results {
            summary: "s".into(),
            findings: vec![],
            citations: vec![],
        };
        assert!(
            !finish(&b, &r.id, &End::Completed(results), &TokenUsage::default()).expect("late"),
            "a cancelled run is never completed later"
        );
        assert!(!push_event(&b, &r.id, "late", "x").expect("late event"));
        let got = b.read(|c| load(c, &r.id)).expect("load").expect("run");
        assert_eq!(got.status, RunStatus::Cancelled);
        assert!(got.results.is_none());
        assert!(got.finished_at.is_some());
        let kinds: Vec<&str> = got
            .events
            .iter()
            .filter_map(|e| e["type"].as_str())
            .collect();
        assert_eq!(kinds, ["created", "running", "search", "cancelled"]);
        let second = create(&b, &new("caravans")).expect("second");
        assert_eq!(second.id, "RR-002");
        let all = b.read(|c| list(c, None, 10)).expect("list");
        assert_eq!(all[0].id, "RR-002", "newest first");
        let pending = b
            .read(|c| list(c, Some(RunStatus::Pending), 10))
            .expect("list");
        assert_eq!(pending.len(), 1);
        assert!(create(&b, &new("  ")).is_err());
    }
}
