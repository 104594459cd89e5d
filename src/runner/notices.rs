//! Which of the scheduler's board events become mail for the author (a workflow's
//! `notificationLevel`, fusion-notes §4: `silent | errors | important | all`, default
//! `important`). The event's level is fixed by what it asks of the author:
//!
//! | event (task-log outcome)                                   | level       |
//! |------------------------------------------------------------|-------------|
//! | parked because something failed (`parked`: a role session ended without its part, ran past `workflowStepTimeoutMs` or could not start; a code node failed) | `errors` |
//! | waits for the author's decision (`handoff`, `rework-bound`, `plan-approval`) | `important` |
//! | progress (`promoted`, review verdicts `approve` / `revise` / `rethink`, a code node's route `code`) | `all` |
//!
//! A workflow at level L mails the events of L and the levels before it (`silent` mails
//! nothing; `all` everything). The mail is a system message in the author's Inbox with
//! `metadata {taskId, boardEvent, level}`, written in the same transaction as the change it
//! tells of (once per change: its key names the task's revision). Approval mails are not
//! board events: every call waiting in the queue has one whatever the level (the author must
//! decide it for the session to go on).

use rusqlite::Connection;
use serde_json::json;

use crate::board::mailbox::{self as mb, SYSTEM_ID, USER_ID};
use crate::board::{BoardResult, Task};

/// The workflow setting.
pub const SETTING: &str = "notificationLevel";
pub const DEFAULT_LEVEL: Level = Level::Important;

/// How much the author is told, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Silent,
    Errors,
    Important,
    All,
}

impl Level {
    pub fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "silent" => Level::Silent,
            "errors" => Level::Errors,
            "important" => Level::Important,
            "all" => Level::All,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Silent => "silent",
            Level::Errors => "errors",
            Level::Important => "important",
            Level::All => "all",
        }
    }
}

/// The level of a scheduler event, by the outcome it logs.
pub fn level_of(outcome: &str) -> Level {
    match outcome {
        "parked" => Level::Errors,
        "handoff" | "rework-bound" | "plan-approval" => Level::Important,
        _ => Level::All,
    }
}

/// A workflow's level from its effective setting (unset or unknown: the default).
pub fn workflow_level(setting: Option<&str>) -> Level {
    setting.and_then(Level::parse).unwrap_or(DEFAULT_LEVEL)
}

/// Mail the author about event `outcome` of `t` (`text` says what happened), when the
/// workflow's level `level` takes it. Called inside the transaction of the change.
pub fn mail(c: &Connection, level: Level, t: &Task, outcome: &str, text: &str) -> BoardResult<()> {
    let event = level_of(outcome);
    if level == Level::Silent || event > level {
        return Ok(());
    }
    let content = crate::board::snippet(
        &format!("{} — {}: {text}", t.id, t.title),
        mb::CONTENT_LIMIT,
    );
    let m = mb::NewMessage {
        from_id: SYSTEM_ID.into(),
        from_type: "system".into(),
        to_id: USER_ID.into(),
        to_type: "user".into(),
        content,
        kind: "system".into(),
        metadata: json!({
            "taskId": t.id,
            "boardEvent": outcome,
            "level": event.as_str(),
            "wakeRecipient": false,
        }),
    };
    mb::send_once(
        c,
        &m,
        &format!("board-event:{}:{}:{outcome}", t.id, t.revision),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_takes_its_events_and_the_ones_before() {
        let takes = |level: Level| {
            [
                "parked",
                "plan-approval",
                "handoff",
                "rework-bound",
                "promoted",
                "approve",
                "code",
            ]
            .into_iter()
            .filter(|o| level != Level::Silent && level_of(o) <= level)
            .collect::<Vec<_>>()
        };
        assert!(takes(Level::Silent).is_empty());
        assert_eq!(takes(Level::Errors), ["parked"]);
        assert_eq!(
            takes(Level::Important),
            ["parked", "plan-approval", "handoff", "rework-bound"]
        );
        assert_eq!(takes(Level::All).len(), 7);
        assert_eq!(workflow_level(None), Level::Important);
        assert_eq!(workflow_level(Some("loud")), Level::Important);
        assert_eq!(workflow_level(Some("silent")), Level::Silent);
    }
}
