//! What an MCP-facing call comes back as, in nbook's own types (no rmcp here): the engine's
//! result with the author's decision, a call still waiting for the author, or why no result
//! can come. The same values cross the attach socket between `nbook mcp` and the TUI.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{ApprovalId, CallResult, Preview, SessionId};

/// The author's answer to a call that waited, as the session log recorded it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resolved {
    pub approval_id: ApprovalId,
    /// approve · approve_for_session · reject · edit
    pub decision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The arguments the author wrote in place of the client's (`edit`): what actually ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_args: Option<Value>,
}

/// A call still in the author's approval queue when the wait bound passed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    pub approval_id: ApprovalId,
    pub session_id: SessionId,
    pub tool: String,
    /// The preview's one-line summary.
    pub preview: String,
    /// sha256 of the exact preview the author is shown; the approval is bound to it.
    pub preview_hash: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The engine finished the call (ran, refused, rejected, stale…), exactly once.
    Done {
        result: Box<CallResult>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resolved: Option<Resolved>,
    },
    PendingApproval(PendingApproval),
    /// The nbook that held the call stopped (or the link to it broke) before it finished;
    /// the call was not executed.
    Interrupted {
        message: String,
    },
    /// The call was withdrawn by its client; nothing was changed.
    Cancelled {
        message: String,
    },
    /// The approval id names no call this client is waiting for (never issued, already
    /// returned once, or withdrawn).
    Unknown {
        message: String,
    },
    /// The call could not be made at all (no session could be opened for the client…).
    Failed {
        message: String,
    },
}

impl Outcome {
    pub fn interrupted() -> Outcome {
        Outcome::Interrupted {
            message: "interrupted: the nbook that held this call was closed (or the link to it broke) before the author decided; the call was not executed and nothing was changed".into(),
        }
    }
}

/// The hash an approval is bound to: sha256 of the preview's canonical JSON, hex.
pub fn preview_hash(preview: &Preview) -> String {
    let bytes = serde_json::to_vec(preview).unwrap_or_default();
    let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}
