//! The provider trait: one streamed model reply per request. `openai` (any OpenAI-compatible
//! server), `anthropic` and the scripted `replay` implement it.

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
    User {
        text: String,
    },
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    ToolResult {
        call_id: String,
        content: String,
        is_error: bool,
    },
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
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    /// Sent right after `Usage` by the real providers: how many of the input tokens were read
    /// from the server's prompt cache, how many output tokens were spent on reasoning, and
    /// whether the counts are estimates because the server reported none.
    UsageDetails {
        cached_input_tokens: u64,
        reasoning_tokens: u64,
        estimated: bool,
    },
    /// Reasoning text, where the server streams it (`reasoning_content`, Anthropic's
    /// `thinking_delta`). Shown live; not sent back to the model.
    ReasoningDelta(String),
    /// A tool call's arguments are being generated: its name (once known) and how many
    /// characters of arguments have arrived so far. The finished call follows as `ToolCall`.
    ToolCallProgress {
        index: u64,
        name: String,
        argument_chars: usize,
    },
    /// Why the reply ended, as the server said it (`stop`, `tool_calls`, `length`,
    /// Anthropic's `end_turn`, `max_tokens`…).
    Finish {
        reason: String,
    },
}

/// True when a finish reason means the reply was cut off by the output-token limit.
pub fn cut_off_by_length(reason: &str) -> bool {
    matches!(reason, "length" | "max_tokens")
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("{0}")]
    Script(String),
    #[error("model request failed: {0}")]
    Request(String),
    /// The server answered with an HTTP error status (after any retries).
    #[error("model server returned HTTP {status}: {message}")]
    Http { status: u16, message: String },
    /// No bytes arrived for too long.
    #[error("model stream stalled: {0}")]
    Idle(String),
    /// The server reported an error inside the stream, or the stream broke off.
    #[error("model stream failed: {0}")]
    Stream(String),
    /// The provider could not be built from the configuration.
    #[error("{0}")]
    Config(String),
}

pub trait Provider: Send + Sync {
    fn name(&self) -> &str;
    /// Stream the reply to `req`. The stream ends when the reply is complete.
    fn stream(&self, req: ModelRequest) -> BoxStream<'static, Result<ModelEvent, ProviderError>>;
    /// USD per million input and output tokens.
    fn prices(&self) -> (f64, f64) {
        (0.0, 0.0)
    }
    /// The context window in tokens, when known; the loop compacts the transcript near it.
    fn context_window(&self) -> Option<usize> {
        None
    }
}
