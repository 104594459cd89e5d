//! Sessions as every client sees them: their lifecycle state and summary.

use serde::{Deserialize, Serialize};

use super::ids::SessionId;
use super::is_zero;
use super::mode::Mode;

/// Lifecycle state of a session as shown in the Sessions pane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    Running,
    WaitingApproval,
    WaitingInput,
    Idle,
    Failed,
}

impl SessionState {
    pub fn label(self) -> &'static str {
        match self {
            SessionState::Running => "running",
            SessionState::WaitingApproval => "waiting for approval",
            SessionState::WaitingInput => "waiting for input",
            SessionState::Idle => "idle",
            SessionState::Failed => "failed",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub id: SessionId,
    pub profile: String,
    pub title: String,
    pub mode: Mode,
    pub state: SessionState,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<SessionId>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: f64,
    /// Estimated tokens of the last request (prompt, tool schemas, transcript) and the
    /// model's window, as the run loop measured them before its latest turn; 0 = unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub context_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub context_window: u64,
    /// The outside client (MCP `clientInfo.name`) whose calls this session carries; `None`
    /// for agent, author and headless sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The durable agent (`agent-<n>`) this session runs as (session state `board.agent`):
    /// its identity is in the system prompt, mail to it reaches the session, a rating of the
    /// run lands on it. `None` for any other session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}
