//! The engine's own mail (fusion-notes §3.5, §5): when a call starts waiting in the approval
//! queue, the author also gets an `approval` mail in the Inbox naming the session, the tool
//! and its target — Fusion's idempotent `sendMessageOnce(msg, "approval-mail:<id>")`, here
//! keyed by the waiting call (session and call id), so a call restored after a restart, or
//! asked about again, never mails twice. It is made from the queue when the Inbox is read,
//! never stored (see [`Engine::approval_mail`]).
//!
//! Also the author's read marks from the Inbox: bookkeeping of the author's own mail, not a
//! change to the book, so they are written directly rather than as logged tool calls.

use serde_json::json;

use super::types::PendingCall;
use super::Engine;
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

    /// The author opened mail `id` in the Inbox: mark it read.
    pub fn mark_mail_read(&self, id: &str) -> Result<(), BoardError> {
        if id.starts_with(APPROVAL_MAIL_PREFIX) {
            // Made from the queue, not stored: it is "read" when the call is decided.
            return Ok(());
        }
        let ids = [id.to_string()];
        self.board()
            .commit(|c| {
                mb::mark_read(c, &ids)?;
                Ok(Outcome::default())
            })
            .map(drop)
    }
}
