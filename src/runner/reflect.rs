//! Post-task reflections (a workflow's `reflectionEnabled`, fusion-notes §2.5:
//! `fn_reflect_on_performance` "X (reflectionEnabled + assigned agent)"): when a task of a
//! workflow with the setting true reaches its done lane, the scheduler asks the task's
//! assigned agent for a reflection on its record — once per task. The assigned agent is the
//! durable agent in the task's `assignee` field (its session runs with its role's profile, as
//! that agent: `board.agent`), else the `executor` profile (the permanent agent that drafted
//! it). The session's first message asks for `fn_reflect_on_performance` with the task as its
//! focus; the call waits for the author's approval like any reflection (its preview is the
//! reflections file's diff), and its record's `trigger` is `post-task`.
//!
//! The request is the task-log entry with outcome [`OUTCOME`] (written before the session
//! starts, so a restart never asks twice); with the setting false nothing happens. A
//! reflection session holds a slot like any task session while it runs or waits.

use crate::board::{agents, assign, Task};

/// The workflow setting.
pub const SETTING: &str = "reflectionEnabled";
/// The task-log outcome of a reflection request.
pub const OUTCOME: &str = "reflection";
/// Session-state key marking a post-task reflection session (the reflection's trigger).
pub const SESSION_MARK: &str = "board.reflection";
/// The trigger recorded on a reflection such a session writes.
pub const TRIGGER: &str = "post-task";
/// The profile asked when the task has no durable agent.
pub const DEFAULT_PROFILE: &str = "executor";

/// Who reflects on `t`: (profile, durable agent id).
pub fn agent_of(c: &rusqlite::Connection, t: &Task) -> (String, Option<String>) {
    if let Some(id) = assign::assignee(t) {
        if let Ok(Some(a)) = agents::load(c, id) {
            return (a.role.profile().to_string(), Some(a.id));
        }
    }
    (DEFAULT_PROFILE.to_string(), None)
}

/// The reflection session's first message.
pub fn message(t: &Task) -> String {
    format!(
        "Task {id} — {title} is done. Reflect on your performance: call fn_reflect_on_performance with focus_area \"{id}\" (your record: ratings, review verdicts, failures), then say in one or two sentences what you will do differently. Do not change the book.",
        id = t.id,
        title = t.title
    )
}
