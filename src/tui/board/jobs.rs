//! The Board pane's blocking work, run by the runtime on the blocking pool and returned as
//! ticketed actions (stale tickets are dropped): the overview, one task's detail, and the
//! author's writes. Reads go through the engine's read model; writes are tool calls by the
//! author through [`Engine::author_call`], previewed first with [`Engine::author_preview`] so
//! a change made in between makes the call stale instead of doing something else. Plain
//! functions over the engine so tests and benches call them directly.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::engine::read::{BoardOverview, BoardTaskDetail, ReadModel};
use crate::engine::{CallResult, Engine};

/// A change the author makes from the Board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardWrite {
    /// `n`: a new task in the workflow's first column.
    Create { description: String },
    /// `m` / `M` / `x`: to another column (`archived` archives).
    Move { task: String, column: String },
    /// `p`: pause (true) or resume (false).
    Pause { task: String, paused: bool },
    /// `o`: a new book goal.
    GoalCreate { title: String, description: String },
    /// `O` then Enter: archive (true) or unarchive (false) a goal.
    GoalArchive { goal: String, archived: bool },
    /// `s`: a steering comment for the task's agent.
    Steer { task: String, text: String },
    /// `a`: approve the task's plan (it waits at `plan?`).
    ApprovePlan { task: String },
    /// `d`: send the task's plan back to planning, saying why.
    RejectPlan { task: String, reason: String },
    /// `e` in the Workflows view: setting values (`null` clears).
    WorkflowSettings { workflow: String, values: Value },
    /// `r` in the Inbox: the author's reply to mail `mail`.
    Reply { mail: String, text: String },
    /// `c` in the Inbox: a new message to agent `to` (a `fn_send_message` `to_id`).
    Compose { to: String, text: String },
    /// `p` in the Inbox: a post in chat room `room`.
    RoomPost { room: String, text: String },
    /// `N` in the Inbox: a new chat room with its first members.
    RoomCreate { name: String, members: Vec<String> },
    /// `A` in the Inbox: members added to chat room `room`.
    RoomAddMembers { room: String, members: Vec<String> },
    /// `R` in the Sessions pane or the Board: a run's rating (an empty comment is none).
    Rate {
        target: super::rating::RateTarget,
        score: i64,
        comment: String,
    },
}

impl BoardWrite {
    /// The author tool and its arguments.
    pub fn call(&self) -> (&'static str, Value) {
        match self {
            BoardWrite::Create { description } => {
                ("fn_task_create", json!({"description": description}))
            }
            BoardWrite::Move { task, column } => {
                ("fn_task_move", json!({"task_id": task, "column": column}))
            }
            BoardWrite::Pause { task, paused } => {
                ("fn_task_pause", json!({"task_id": task, "paused": paused}))
            }
            BoardWrite::GoalCreate { title, description } => (
                "fn_goal_create",
                json!({"title": title, "description": description}),
            ),
            BoardWrite::GoalArchive { goal, archived } => (
                "fn_goal_archive",
                json!({"goal_id": goal, "archived": archived}),
            ),
            BoardWrite::Steer { task, text } => {
                ("fn_task_steer", json!({"task_id": task, "text": text}))
            }
            BoardWrite::ApprovePlan { task } => ("fn_task_approve_plan", json!({"task_id": task})),
            BoardWrite::RejectPlan { task, reason } => (
                "fn_task_reject_plan",
                json!({"task_id": task, "reason": reason}),
            ),
            BoardWrite::WorkflowSettings { workflow, values } => (
                "fn_workflow_settings",
                json!({"action": "set", "workflow_id": workflow, "values": values}),
            ),
            BoardWrite::Reply { mail, text } => (
                "fn_send_message",
                json!({"content": text, "reply_to_message_id": mail}),
            ),
            BoardWrite::Compose { to, text } => {
                ("fn_send_message", json!({"content": text, "to_id": to}))
            }
            BoardWrite::RoomPost { room, text } => (
                "fn_post_room_message",
                json!({"roomId": room, "content": text}),
            ),
            BoardWrite::RoomCreate { name, members } => {
                ("fn_room_create", json!({"name": name, "members": members}))
            }
            BoardWrite::RoomAddMembers { room, members } => (
                "fn_room_add_members",
                json!({"room_id": room, "members": members}),
            ),
            BoardWrite::Rate {
                target,
                score,
                comment,
            } => {
                let mut args = match target {
                    super::rating::RateTarget::Session { id, .. } => json!({"session_id": id}),
                    super::rating::RateTarget::Task { id, .. } => json!({"task_id": id}),
                };
                args["score"] = json!(score);
                if !comment.is_empty() {
                    args["comment"] = json!(comment);
                }
                ("fn_agent_rate", args)
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardJob {
    Load,
    Detail(String),
    Write(BoardWrite),
    /// The Artifacts view's list and payloads (`super::artifacts`).
    Artifacts(super::artifacts::ArtifactsJob),
    /// The Workflows view's list (`super::workflows`).
    Workflows,
    /// The Inbox view's mail and threads (`super::inbox`).
    Inbox(super::inbox::InboxJob),
}

#[derive(Clone, Debug, PartialEq)]
pub enum BoardJobResult {
    Loaded(Result<BoardOverview, String>),
    Detail(String, Result<Box<BoardTaskDetail>, String>),
    /// The tool's own sentence ("NB-002 moved to Review.") and the task it names, or why
    /// nothing changed.
    Written(BoardWrite, Result<(String, Option<String>), String>),
    Artifacts(super::artifacts::ArtifactsJobResult),
    Workflows(Result<Vec<super::workflows::WorkflowEntry>, String>),
    Inbox(super::inbox::InboxJobResult),
}

pub fn load(read: &ReadModel) -> Result<BoardOverview, String> {
    read.board_overview().map_err(|e| e.to_string())
}

pub fn run(engine: &Arc<Engine>, job: BoardJob) -> BoardJobResult {
    match job {
        BoardJob::Load => BoardJobResult::Loaded(load(&engine.read())),
        BoardJob::Detail(id) => {
            let r = engine
                .read()
                .board_task(&id)
                .map(Box::new)
                .map_err(|e| e.to_string());
            BoardJobResult::Detail(id, r)
        }
        BoardJob::Write(w) => {
            let r = write(engine, &w);
            BoardJobResult::Written(w, r)
        }
        BoardJob::Artifacts(j) => BoardJobResult::Artifacts(super::artifacts::run(engine, j)),
        BoardJob::Workflows => BoardJobResult::Workflows(super::workflows::run(engine)),
        BoardJob::Inbox(j) => BoardJobResult::Inbox(super::inbox::run(engine, j)),
    }
}

/// Run an engine call from this blocking job (the runtime runs jobs on its blocking pool).
fn block_on<T>(f: impl std::future::Future<Output = T>) -> Result<T, String> {
    tokio::runtime::Handle::try_current()
        .map(|h| h.block_on(f))
        .map_err(|_| "no engine runtime to run the call on; nothing was changed".to_string())
}

fn failure(r: &CallResult) -> String {
    if r.content.contains("nothing was changed") {
        r.content.clone()
    } else {
        format!("{} (nothing was changed)", r.content)
    }
}

/// Make the write as the author: previewed, then called on that preview.
pub fn write(engine: &Arc<Engine>, w: &BoardWrite) -> Result<(String, Option<String>), String> {
    let (tool, args) = w.call();
    let preview = block_on(engine.author_preview(tool, &args))?.map_err(|r| failure(&r))?;
    let r = block_on(engine.author_call(tool, args, Some(&preview)))?;
    if !r.ok {
        return Err(failure(&r));
    }
    let task = r
        .details
        .as_ref()
        .and_then(|d| d.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok((
        r.content.lines().next().unwrap_or_default().to_string(),
        task,
    ))
}
