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
