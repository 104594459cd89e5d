//! Fusion's production board for the book (issue #16, part 1): tasks (`NB-001`…) with their
//! workflow column, sub-status, priority, dependencies, PROMPT.md steps, custom fields and
//! `blockedBy`; task logs; versioned task documents with compare-and-swap; goals.
//!
//! **Storage.** nbook's own tables in `project.sqlite` (migration `003_board.sql`, prefix
//! `nbook_board_`; NeuroBook ignores tables it does not know), plus files under
//! `.nbook/tasks/<ID>/`: `PROMPT.md` (a mirror of the `prompt` column, written after each
//! successful plan write — the database row is the record, so a failed file write never
//! loses a plan) and `agent-log.jsonl` (NDJSON, one entry per line; every task-log entry is
//! mirrored there as type `status`, and the future runner appends its session events).
//!
//! **Changes.** Every change is an [`Op`]: a function of a transaction that returns an
//! [`Outcome`] naming the records it touched. [`Board::dry_run`] runs it in a transaction that
//! is rolled back and returns the field diff of the touched records and the fingerprints
//! (revisions) of those that existed — the approval preview and its stale check;
//! [`Board::commit`] runs it in an IMMEDIATE transaction (so two writers serialize and a
//! compare-and-swap is checked under the write lock), commits, then writes the files.
//!
//! This module imports nothing from the engine; the tools in `src/tools/fusion/` put it
//! behind the engine contract.

pub mod agent_runs;
pub mod agents;
pub mod artifacts;
pub mod assign;
pub mod checks;
pub mod docs;
pub mod draft;
pub mod error;
pub mod evaluations;
pub mod goals;
pub mod mailbox;
pub mod memory;
pub mod merge;
pub mod model;
pub mod plan_approval;
pub mod prompt;
pub mod repository_scope;
pub mod research;
pub mod review;
pub mod scope;
pub mod steering;
pub mod tasks;
pub mod workflow;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, TransactionBehavior};
use serde_json::Value;

pub use error::{BoardError, BoardResult};
pub use model::*;

use crate::protocol::{FieldChange, RecordChange, TargetState};

/// Connections kept open between calls, by database path. Opening one per call cost the
/// migration check and WAL set-up, and closing the last connection to a WAL database makes
/// SQLite checkpoint the log into the file: a document write took ~23 ms that way, ~1 ms with a
/// kept connection. At most [`POOL_SIZE`] are kept (the oldest goes first).
static POOL: std::sync::Mutex<Vec<(PathBuf, Connection)>> = std::sync::Mutex::new(Vec::new());
const POOL_SIZE: usize = 8;

/// A record a change touched, for the preview's diff and its stale check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Touched {
    Task(String),
    Document(String, String),
    Goal(String),
    /// A custom workflow's record.
    Workflow(String),
    /// A workflow's stored setting values.
    WorkflowSettings(String),
    /// A mailbox message (`msg-…`).
    Message(String),
    /// A chat room (`room-…`) with its members.
    Room(String),
    /// A post in a room (`rmsg-…`).
    RoomPost(String),
    /// An agent rating (`nbook_agent_rating.id`).
    Rating(i64),
    /// A durable agent (`agent-…`).
    Agent(String),
}

/// A file to write once the transaction committed.
#[derive(Clone, Debug, PartialEq)]
pub enum FileEffect {
    /// `.nbook/tasks/<ID>/PROMPT.md`.
    Prompt { task: String, content: String },
    /// One line of `.nbook/tasks/<ID>/agent-log.jsonl`.
    AgentLog { task: String, entry: Value },
    /// The task was archived: retire its draft area (a git worktree's content is committed
    /// on its branch and the folder removed; see [`draft::Draft::retire`]).
    RetireDraft { task: String },
}

/// What a change did: its result for the caller, the records it touched and the files to
/// write after commit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    pub text: String,
    pub value: Value,
    pub touched: Vec<Touched>,
    /// Extra fingerprints the change relied on (e.g. "no duplicate of this description").
    pub targets: Vec<TargetState>,
    pub files: Vec<FileEffect>,
}

/// A change, run by [`Board::dry_run`] or [`Board::commit`].
pub trait Op: Fn(&Connection) -> BoardResult<Outcome> {}
impl<F: Fn(&Connection) -> BoardResult<Outcome>> Op for F {}

/// What a dry run found: the field diff per record and the fingerprints to compare at commit.
#[derive(Clone, Debug, PartialEq)]
pub struct DryRun {
    pub outcome: Outcome,
    pub changes: Vec<RecordChange>,
    pub targets: Vec<TargetState>,
}

/// A committed change; `warnings` name files that could not be written (the database change
/// stands: the row is the record).
#[derive(Clone, Debug, PartialEq)]
pub struct Committed {
    pub outcome: Outcome,
    pub warnings: Vec<String>,
}

/// The board of one project.
#[derive(Clone, Debug)]
pub struct Board {
    root: PathBuf,
    db: PathBuf,
    project_id: String,
}

impl Board {
    /// The board of the project at `root` (its database is `.nbook/project.sqlite`);
    /// `project_id` names the project in CAS failures.
    pub fn new(root: &Path, project_id: &str) -> Board {
        Board {
            root: root.to_path_buf(),
            db: root.join(".nbook").join("project.sqlite"),
            project_id: project_id.to_string(),
        }
    }

    pub fn project_id(&self) -> &str {
        &self.project_id
    }

    /// `.nbook/tasks/<ID>/`.
    pub fn task_dir(&self, id: &str) -> PathBuf {
        self.root.join(".nbook").join("tasks").join(id)
    }

    /// Run `f` on a connection to the project database: a kept one when there is one (see
    /// [`POOL`]), else a fresh one; it is kept again afterwards.
    fn with_conn<T>(&self, f: impl FnOnce(&mut Connection) -> BoardResult<T>) -> BoardResult<T> {
        let kept = {
            let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
            pool.iter()
                .position(|(p, _)| p == &self.db)
                .map(|i| pool.swap_remove(i).1)
        };
        let mut conn = match kept {
            Some(c) => c,
            None => crate::store::open(&self.db)?,
        };
        let out = f(&mut conn);
        // A connection left inside a transaction (it never is: transactions end on drop) or
        // one that failed is not kept.
        if out.is_ok() && conn.is_autocommit() {
            let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
            if pool.len() >= POOL_SIZE {
                pool.remove(0);
            }
            pool.push((self.db.clone(), conn));
        }
        out
    }

    /// Run a read.
    pub fn read<T>(&self, f: impl FnOnce(&Connection) -> BoardResult<T>) -> BoardResult<T> {
        self.with_conn(|c| f(c))
    }

    /// Run `op` and roll it back: its outcome, the diff of what it touched, and the
    /// fingerprints of the touched records that existed before.
    pub fn dry_run(&self, op: impl Op) -> BoardResult<DryRun> {
        self.with_conn(|conn| Self::dry_run_on(conn, op))
    }

    fn dry_run_on(conn: &mut Connection, op: impl Op) -> BoardResult<DryRun> {
        crate::store::check_writable(conn)?;
        // IMMEDIATE like a commit: a dry run writes too, and a deferred transaction that reads
        // first fails with SQLITE_BUSY (no wait) when another writer committed meanwhile.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let outcome = op(&tx)?;
        let after: Vec<Option<BTreeMap<String, Value>>> = outcome
            .touched
            .iter()
            .map(|t| snapshot(&tx, t))
            .collect::<BoardResult<_>>()?;
        tx.rollback()?;
        let mut changes = Vec::new();
        let mut targets = outcome.targets.clone();
        for (t, after) in outcome.touched.iter().zip(after) {
            let before = snapshot(conn, t)?;
            if let Some(b) = &before {
                targets.push(TargetState {
                    key: target_key(t),
                    fingerprint: fingerprint(b),
                });
            }
            if let Some(c) = record_change(t, before.as_ref(), after.as_ref()) {
                changes.push(c);
            }
        }
        targets.sort_by(|a, b| a.key.cmp(&b.key));
        targets.dedup();
        Ok(DryRun {
            outcome,
            changes,
            targets,
        })
    }

    /// Run `op` in an IMMEDIATE transaction, commit, then write its files.
    pub fn commit(&self, op: impl Op) -> BoardResult<Committed> {
        let outcome = self.with_conn(|conn| {
            crate::store::check_writable(conn)?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let outcome = op(&tx)?;
            tx.commit()?;
            Ok(outcome)
        })?;
        let mut warnings = Vec::new();
        for f in &outcome.files {
            if let Err(e) = self.write_file(f) {
                warnings.push(e.to_string());
            }
        }
        Ok(Committed { outcome, warnings })
    }

    fn write_file(&self, f: &FileEffect) -> BoardResult<()> {
        match f {
            FileEffect::Prompt { task, content } => {
                let path = self.task_dir(task).join("PROMPT.md");
                crate::workspace::atomic_write(&path, content.as_bytes()).map_err(|source| {
                    BoardError::Io {
                        action: "write",
                        path: path.display().to_string(),
                        source,
                    }
                })
            }
            FileEffect::AgentLog { task, entry } => self.append_agent_log(task, entry),
            FileEffect::RetireDraft { task } => {
                draft::Draft::new(&self.root, task).retire()?;
                // Its areas in the other books of a series go the same way.
                repository_scope::retire(self, &self.root, task)
            }
        }
    }

    /// Append one entry to the task's `agent-log.jsonl` (the runner's session events go here
    /// too). One `write` per line, so concurrent appenders never interleave within a line.
    pub fn append_agent_log(&self, task: &str, entry: &Value) -> BoardResult<()> {
        use std::io::Write;
        let dir = self.task_dir(task);
        let path = dir.join("agent-log.jsonl");
        let io = |action, source| BoardError::Io {
            action,
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(|e| io("create the folder of", e))?;
        let mut line = serde_json::to_string(entry).map_err(|e| BoardError::Corrupt {
            what: "agent log entry".into(),
            message: e.to_string(),
        })?;
        line.push('\n');
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io("open", e))?;
        f.write_all(line.as_bytes()).map_err(|e| io("append to", e))
    }

    /// The entries of the task's agent log, oldest first; a torn or malformed line (a crash
    /// mid-append) is skipped.
    pub fn agent_log(&self, task: &str) -> BoardResult<Vec<Value>> {
        let path = self.task_dir(task).join("agent-log.jsonl");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(BoardError::Io {
                    action: "read",
                    path: path.display().to_string(),
                    source,
                })
            }
        };
        Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(Value::is_object)
            .collect())
    }
}

fn target_key(t: &Touched) -> String {
    match t {
        Touched::Task(id) => format!("board/task/{id}"),
        Touched::Document(id, key) => format!("board/document/{id}/{key}"),
        Touched::Goal(id) => format!("board/goal/{id}"),
        Touched::Workflow(id) => format!("board/workflow/{id}"),
        Touched::WorkflowSettings(id) => format!("board/workflow-settings/{id}"),
        Touched::Message(id) => format!("board/message/{id}"),
        Touched::Room(id) => format!("board/room/{id}"),
        Touched::RoomPost(id) => format!("board/room-message/{id}"),
        Touched::Rating(id) => format!("board/agent-rating/{id}"),
        Touched::Agent(id) => format!("board/agent/{id}"),
    }
}

fn fingerprint(snap: &BTreeMap<String, Value>) -> String {
    match (snap.get("revision"), snap.get("updatedAt")) {
        (Some(r), _) => format!("revision {r}"),
        (None, Some(u)) => format!("updated {u}"),
        _ => String::new(),
    }
}

/// The record as a flat map of its fields (revision included: it is the fingerprint).
fn snapshot(c: &Connection, t: &Touched) -> BoardResult<Option<BTreeMap<String, Value>>> {
    let v = match t {
        Touched::Task(id) => tasks::load(c, id)?.map(|t| serde_json::to_value(t).ok()),
        Touched::Document(id, key) => docs::load(c, id, key)?.map(|d| serde_json::to_value(d).ok()),
        Touched::Goal(id) => goals::load(c, id)?.map(|g| serde_json::to_value(g).ok()),
        Touched::Workflow(id) => workflow::snapshot(c, id)?.map(Some),
        Touched::WorkflowSettings(id) => workflow::settings_snapshot(c, id)?.map(Some),
        Touched::Message(id) => mailbox::load(c, id)?.map(|m| serde_json::to_value(m).ok()),
        Touched::Room(id) => mailbox::room_load(c, id)?.map(|r| serde_json::to_value(r).ok()),
        Touched::RoomPost(id) => {
            mailbox::room_post_load(c, id)?.map(|p| serde_json::to_value(p).ok())
        }
        Touched::Rating(id) => evaluations::load(c, *id)?.map(|r| serde_json::to_value(r).ok()),
        Touched::Agent(id) => agents::snapshot(c, id)?.map(Some),
    };
    Ok(v.flatten().and_then(|v| match v {
        Value::Object(m) => Some(m.into_iter().collect()),
        _ => None,
    }))
}

fn record_change(
    t: &Touched,
    before: Option<&BTreeMap<String, Value>>,
    after: Option<&BTreeMap<String, Value>>,
) -> Option<RecordChange> {
    let record = match t {
        Touched::Task(id) => {
            let title = after
                .or(before)
                .and_then(|m| m.get("title"))
                .and_then(Value::as_str)
                .unwrap_or("");
            format!("Task {id} ({title})")
        }
        Touched::Document(id, key) => format!("TaskDocument {id}/{key}"),
        Touched::Goal(id) => format!("Goal {id}"),
        Touched::Workflow(id) => {
            let name = after
                .or(before)
                .and_then(|m| m.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            format!("Workflow {id} ({name})")
        }
        Touched::WorkflowSettings(id) => format!("WorkflowSettings {id}"),
        Touched::Message(id) => format!("Message {id}"),
        Touched::Room(id) => format!("Room {id}"),
        Touched::RoomPost(id) => format!("RoomMessage {id}"),
        Touched::Rating(id) => format!("AgentRating {id}"),
        Touched::Agent(id) => {
            let name = after
                .or(before)
                .and_then(|m| m.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            format!("Agent {id} ({name})")
        }
    };
    let action = match (before, after) {
        (None, None) => return None,
        (None, Some(_)) => "create",
        (Some(_), None) => "delete",
        (Some(_), Some(_)) => "update",
    };
    let empty = BTreeMap::new();
    let (b, a) = (before.unwrap_or(&empty), after.unwrap_or(&empty));
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    // Bookkeeping that changes on every write says nothing to the author.
    const QUIET: [&str; 3] = ["revision", "updatedAt", "createdAt"];
    let fields: Vec<FieldChange> = keys
        .into_iter()
        .filter(|k| !QUIET.contains(&k.as_str()) || action == "create")
        .filter_map(|k| {
            let (x, y) = (
                b.get(k).cloned().unwrap_or(Value::Null),
                a.get(k).cloned().unwrap_or(Value::Null),
            );
            (x != y).then(|| FieldChange {
                field: k.clone(),
                before: x,
                after: y,
            })
        })
        .collect();
    if fields.is_empty() && action == "update" {
        return None;
    }
    Some(RecordChange {
        record,
        action: action.into(),
        fields,
    })
}

/// The time stored on records.
pub(crate) fn now() -> String {
    crate::protocol::now_rfc3339()
}

/// Parse a JSON column, naming the record when it is corrupt.
pub(crate) fn json_col<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> BoardResult<T> {
    serde_json::from_str(text).map_err(|e| BoardError::Corrupt {
        what: what.to_string(),
        message: e.to_string(),
    })
}

/// `s` cut to at most `n` characters (with `…` when cut), whitespace runs collapsed.
pub fn snippet(s: &str, n: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= n {
        return flat;
    }
    let mut out: String = flat.chars().take(n.saturating_sub(1)).collect();
    out.push('…');
    out
}
