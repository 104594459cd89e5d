//! The attach protocol between `nbook mcp` and the author's TUI: JSON lines over the
//! project's Unix socket (`.nbook/mcp.sock`). Each request carries an id; replies name it
//! and may come in any order (calls run concurrently). The first request on a connection
//! must be `hello`, which opens the client's session in the TUI's engine.

use serde::{Deserialize, Serialize};

use super::gateway::Progress;
use super::outcome::Outcome;
use crate::engine::SessionId;

/// The largest line either side accepts (tool arguments and results are JSON of a few MB at
/// most; a longer line is a broken or hostile peer).
pub const MAX_LINE: usize = 32 * 1024 * 1024;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub id: u64,
    #[serde(flatten)]
    pub request: Request,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Open a session for outside client `client` with profile `profile`.
    Hello {
        client: String,
        profile: String,
    },
    Call {
        tool: String,
        args: serde_json::Value,
        wait_ms: u64,
    },
    Await {
        approval_id: String,
        wait_ms: u64,
    },
    /// Withdraw a call that returned `pending_approval`.
    Withdraw {
        approval_id: String,
    },
    /// Cancel the in-flight request with this id (the MCP client cancelled it).
    CancelRequest {
        request: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub id: u64,
    #[serde(flatten)]
    pub body: ReplyBody,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum ReplyBody {
    Session {
        session_id: SessionId,
    },
    Outcome {
        outcome: Outcome,
    },
    /// How a request goes (not its answer; more replies follow for the same id).
    Progress {
        progress: Progress,
    },
    /// The request could not be served (malformed line, unknown profile, no hello yet…).
    Error {
        message: String,
    },
    Ack,
}
