//! The engine's own mail (fusion-notes §3.5, §5): when a call starts waiting in the approval
//! queue, the author also gets an `approval` mail in the Inbox naming the session, the tool
//! and its target — Fusion's idempotent `sendMessageOnce(msg, "approval-mail:<id>")`, here
//! keyed by the waiting call (session and call id), so a call restored after a restart, or
//! asked about again, never mails twice. Fail-soft: a mail that cannot be written (a
//! read-only database) is logged and the call still waits in the queue.
//!
//! Also the author's read marks from the Inbox: bookkeeping of the author's own mail, not a
//! change to the book, so they are written directly rather than as logged tool calls.

use serde_json::json;

use super::types::PendingCall;
use super::Engine;
use crate::board::mailbox::{self as mb, NewMessage, SYSTEM_ID, USER_ID};
use crate::board::{Board, BoardError, Outcome};

/// The session-state key of a role session's board task (the tools' `SESSION_TASK`).
const SESSION_TASK_KEY: &str = "board.task";

impl Engine {
    fn board(&self) -> Board {
        Board::new(self.ws.root(), self.ws.name())
    }

    /// Mail the author that `call` waits for approval (once per call).
    pub(super) fn approval_mail(&self, call: &PendingCall) {
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
        let msg = NewMessage {
            from_id: SYSTEM_ID.into(),
            from_type: "system".into(),
            to_id: USER_ID.into(),
            to_type: "user".into(),
            content: crate::board::snippet(&content, mb::CONTENT_LIMIT),
            kind: "system".into(),
            metadata: meta,
        };
        let key = format!("approval-mail:{}/{}", call.session_id, call.call_id);
        if let Err(e) = self.board().commit(|c| {
            mb::send_once(c, &msg, &key)?;
            Ok(Outcome::default())
        }) {
            tracing::warn!(
                "the approval mail for {} was not written: {e}",
                call.call_id
            );
        }
    }

    /// The author opened mail `id` in the Inbox: mark it read.
    pub fn mark_mail_read(&self, id: &str) -> Result<(), BoardError> {
        let ids = [id.to_string()];
        self.board()
            .commit(|c| {
                mb::mark_read(c, &ids)?;
                Ok(Outcome::default())
            })
            .map(drop)
    }
}
