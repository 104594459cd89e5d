//! The engine's own mail (fusion-notes §3.5, §5): when a call starts waiting in the approval
//! queue, the author also gets an `approval` mail in the Inbox naming the session, the tool
//! and its target — Fusion's idempotent `sendMessageOnce(msg, "approval-mail:<id>")`, here
//! keyed by the waiting call (session and call id), so a call restored after a restart, or
//! asked about again, never mails twice. It is made from the queue when the Inbox is read,
//! never stored (see [`Engine::approval_mail`]).
//!
//! Also the author's read marks from the Inbox: bookkeeping of the author's own mail, not a
//! change to the book, so they are written directly rather than as logged tool calls; whom
//! the author can write to (the Inbox's new-message form); and which live session mail to a
//! durable agent reaches ([`live_session_of`], for the mail tools and the scheduler).

use serde_json::json;

use super::author::AUTHOR_PROFILE;
use super::profiles::Creation;
use super::types::PendingCall;
use super::{Engine, SessionInfo};
use crate::board::mailbox::{self as mb, SYSTEM_ID, USER_ID};

/// The id prefix of the approval mails made from the queue (`approval:<approval id>`).
pub const APPROVAL_MAIL_PREFIX: &str = "approval:";
use crate::board::{Board, BoardError, Outcome};

/// The session-state key of a role session's board task (the tools' `SESSION_TASK`).
const SESSION_TASK_KEY: &str = "board.task";

impl Engine {
    fn board(&self) -> Board {
        Board::new(self.ws.root(), self.ws.name())
    }

    /// The approval mail of a waiting call, as the Inbox shows it. It is made from the queue
    /// each time the Inbox is read, never stored: a waiting call must leave the project
    /// byte-identical until the author decides (tests/reject_changes_nothing.rs), and the
    /// queue already survives a restart. So there is exactly one per waiting call, and it
    /// leaves the Inbox when the call is decided (the History keeps the decision).
    pub(super) fn approval_mail(&self, call: &PendingCall) -> mb::Message {
        let title = self
            .session(&call.session_id)
            .map(|s| s.title)
            .unwrap_or_default();
        let target = match call.preview.targets.first() {
            Some(t) => format!(" on {}", t.key),
            None => String::new(),
        };
        let content = format!(
            "{} (session {}, profile {}) waits for your approval to run {}{}: {}",
            if title.is_empty() {
                "A session"
            } else {
                &title
            },
            call.session_id,
            call.profile,
            call.tool,
            target,
            call.preview.summary
        );
        let mut meta = json!({
            "mailKind": "approval",
            "approvalRequestId": call.approval_id,
            "sessionId": call.session_id,
            "callId": call.call_id,
            "tool": call.tool,
            "wakeRecipient": false,
        });
        if let Some(t) = self
            .session_state(&call.session_id)
            .get(SESSION_TASK_KEY)
            .and_then(|v| v.as_str())
        {
            meta["taskId"] = json!(t);
        }
        mb::Message {
            id: format!("{APPROVAL_MAIL_PREFIX}{}", call.approval_id),
            from_id: SYSTEM_ID.into(),
            from_type: "system".into(),
            to_id: USER_ID.into(),
            to_type: "user".into(),
            content: crate::board::snippet(&content, mb::CONTENT_LIMIT),
            kind: "system".into(),
            read: false,
            archived: false,
            metadata: meta,
            created_at: call.requested_at.clone(),
        }
    }

    /// The author opened mail `id` in the Inbox: mark it read. Only mail *to* the author:
    /// the Inbox also lists what the author sent, whose read mark is its recipient's (an
    /// on-heartbeat agent finds it unread at its next run).
    pub fn mark_mail_read(&self, id: &str) -> Result<(), BoardError> {
        if id.starts_with(APPROVAL_MAIL_PREFIX) {
            // Made from the queue, not stored: it is "read" when the call is decided.
            return Ok(());
        }
        let b = self.board();
        let to_author = b
            .read(|c| mb::load(c, id))?
            .is_some_and(|m| m.to_id == USER_ID);
        if !to_author {
            return Ok(());
        }
        let ids = [id.to_string()];
        b.commit(|c| {
            mb::mark_read(c, &ids)?;
            Ok(Outcome::default())
        })
        .map(drop)
    }

    /// Whom the author can write to from the Inbox: the durable agents (with their response
    /// mode and the live session mail reaches at once), the profile agents, then the
    /// sessions, newest first — the ids `fn_send_message` takes.
    pub fn mail_recipients(&self) -> Result<Vec<Recipient>, BoardError> {
        let sessions = self.sessions();
        let board = self.board();
        let mut out = Vec::new();
        for a in self.durable_agents()? {
            out.push(Recipient {
                live_session: live_session_of(&board, &sessions, &a.id),
                label: format!("{} · {} agent", a.name, a.role.as_str()),
                mode: a.runtime_config.message_response_mode,
                kind: RecipientKind::Durable,
                id: a.id,
            });
        }
        for p in self.profiles().iter() {
            if p.key == AUTHOR_PROFILE || p.creation != Creation::Public {
                continue;
            }
            out.push(Recipient {
                id: p.key.clone(),
                label: format!("{} · profile agent", p.name),
                kind: RecipientKind::Profile,
                mode: mb::ResponseMode::Immediate,
                live_session: None,
            });
        }
        for s in sessions.iter().rev() {
            if s.profile == AUTHOR_PROFILE {
                continue;
            }
            let mut label = format!("{} · {}", s.title, s.profile);
            if let Some(a) = &s.agent {
                label.push_str(&format!(" as {a}"));
            }
            out.push(Recipient {
                id: format!("{}{}", mb::SESSION_AGENT, s.id),
                label,
                kind: RecipientKind::Session,
                mode: mb::ResponseMode::Immediate,
                live_session: Some(s.id.clone()),
            });
        }
        Ok(out)
    }
}

/// Someone the author can mail (see [`Engine::mail_recipients`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recipient {
    /// The `to_id` of `fn_send_message`.
    pub id: String,
    pub label: String,
    pub kind: RecipientKind,
    pub mode: mb::ResponseMode,
    /// The session that gets the mail at once (immediate mode only matters).
    pub live_session: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecipientKind {
    Durable,
    Profile,
    Session,
}

impl Recipient {
    /// How a message reaches this recipient, as the forms say it.
    pub fn reach(&self) -> String {
        match (self.mode, &self.live_session) {
            (mb::ResponseMode::OnHeartbeat, _) => {
                "on-heartbeat: it waits unread until the agent's next run".into()
            }
            (mb::ResponseMode::Immediate, Some(s)) => {
                format!("immediate: session {s} gets it at once (after its turn when busy)")
            }
            (mb::ResponseMode::Immediate, None) => {
                "immediate, but no session runs as it: it waits in its inbox for its next session"
                    .into()
            }
        }
    }
}

/// The live session mail to durable agent `agent_id` reaches: the newest session running as
/// it (one whose last run failed still takes a message, as it takes the author's prompt) —
/// but not the session of one of its heartbeat runs that is over: a heartbeat agent has no
/// long-lived session, so mail after its run wakes a new run (`crate::runner::heartbeat`)
/// instead of reopening the old one. Shared by the mail tools, the Inbox and the heartbeat
/// scheduler, so mail is delivered by one of them only.
pub fn live_session_of(board: &Board, sessions: &[SessionInfo], agent_id: &str) -> Option<String> {
    let newest = sessions
        .iter()
        .filter(|s| s.agent.as_deref() == Some(agent_id))
        .max_by_key(|s| s.id.parse::<u64>().unwrap_or(0))?;
    // Unreadable run records count as none ended: the session then takes the mail.
    let ended = board
        .read(|c| crate::board::agent_runs::ended_sessions(c, agent_id))
        .unwrap_or_default();
    (!ended.contains(&newest.id)).then(|| newest.id.clone())
}
