//! A tool call as a model proposed it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ids::CallId;

/// A tool call as a model proposed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: CallId,
    pub name: String,
    pub arguments: Value,
}

/// Who makes a call. Agents call from their session's run; the author calls from the TUI
/// (auto-approved, logged in the author session); later MCP clients. Author-only tools
/// (`Effects::author_only`) are refused for every actor but [`Actor::Author`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    Agent,
    Author,
}

impl Actor {
    /// The name written in the log (`by` of a tool call and its approval).
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Agent => "agent",
            Actor::Author => "author",
        }
    }
}
