//! Approvals: the author's decision on a pending call, and the pending call itself.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ids::{ApprovalId, CallId, SessionId};
use super::mode::Mode;
use super::parts::PartSelection;
use super::preview::Preview;

/// The author's answer to a pending call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    Approve,
    /// Approve, and let this tool run on the same target(s) without asking for the rest of
    /// the session. Only honoured in `normal` mode; elsewhere it counts as a one-call approval.
    ApproveForSession,
    Reject {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Replace the arguments, then approve. The new arguments are validated and previewed again.
    Edit {
        new_args: Value,
    },
    /// Approve only some of the files and hunks of a file preview (`super::parts`); the rest
    /// are rejected. Offered when the pending call says `parts`.
    ApproveParts {
        selection: PartSelection,
    },
}

impl Decision {
    pub fn label(&self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::ApproveForSession => "approve_for_session",
            Decision::Reject { .. } => "reject",
            Decision::Edit { .. } => "edit",
            Decision::ApproveParts { .. } => "approve_parts",
        }
    }
}

/// A call waiting for the author, as held in the engine's FIFO queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The engine's id for this approval: what `Engine::decide` takes.
    pub approval_id: ApprovalId,
    /// The provider's id of the tool call (may repeat across sessions).
    pub call_id: CallId,
    pub session_id: SessionId,
    pub profile: String,
    pub mode: Mode,
    pub tool: String,
    pub args: Value,
    pub preview: Preview,
    pub requested_at: String,
    /// Whether `approve_for_session` is on offer (normal mode, a policy that allows grants).
    pub session_grant_allowed: bool,
    /// Whether the author may approve only some of its files and hunks
    /// (`Decision::ApproveParts`): the tool declares it can, and the preview is file diffs.
    #[serde(default)]
    pub parts: bool,
}
