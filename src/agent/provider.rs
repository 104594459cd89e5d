//! The provider trait: one streamed model reply per request. Real providers (OpenAI-compatible,
//! Anthropic) implement the same trait in a later stage; `replay` implements it today.

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::ToolCall;

/// A tool as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User { text: String },
    Assistant { text: String, tool_calls: Vec<ToolCall> },
    ToolResult { call_id: String, content: String, is_error: bool },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ModelRequest {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

/// One piece of a streamed reply.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelEvent {
    TextDelta(String),
    ToolCall(ToolCall),
    Usage { input_tokens: u64, output_tokens: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("{0}")]
    Script(String),
    #[error("model request failed: {0}")]
    Request(String),
}

pub trait Provider: Send + Sync {
    fn name(&self) -> &str;
    /// Stream the reply to `req`. The stream ends when the reply is complete.
    fn stream(&self, req: ModelRequest) -> BoxStream<'static, Result<ModelEvent, ProviderError>>;
    /// USD per million input and output tokens.
    fn prices(&self) -> (f64, f64) {
        (0.0, 0.0)
    }
}
