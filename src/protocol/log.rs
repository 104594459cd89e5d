//! Session log records: one JSON object per line of `.nbook/agent/sessions/<id>.jsonl`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::call::ToolCall;
use super::ids::{ApprovalId, CallId, SessionId};
use super::is_zero;
use super::mode::Mode;
use super::preview::Preview;

/// One line of a session log (`.nbook/agent/sessions/<id>.jsonl`), minus its timestamp.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LogRecord {
    Header {
        session_id: SessionId,
        profile: String,
        mode: Mode,
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<SessionId>,
    },
    User {
        text: String,
    },
    Assistant {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// A call made by someone other than the session's model (the author from the TUI);
    /// a model's calls are in its `assistant` record.
    ToolCall {
        call_id: CallId,
        tool: String,
        args: Value,
        /// author
        by: String,
    },
    ApprovalRequested {
        /// The engine's approval id; empty in logs written before approvals had their own id
        /// (their records are matched by `call_id`).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        approval_id: ApprovalId,
        call_id: CallId,
        tool: String,
        args: Value,
        preview: Preview,
        mode: Mode,
    },
    ApprovalResolved {
        /// The engine's approval id; empty in logs written before approvals had their own id
        /// (their records are matched by `call_id`).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        approval_id: ApprovalId,
        call_id: CallId,
        /// approve | approve_for_session | reject | edit | interrupted
        decision: String,
        /// author | cli | policy | engine
        by: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edited_args: Option<Value>,
    },
    ToolResult {
        call_id: CallId,
        tool: String,
        ok: bool,
        content: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// A session custom-state key set by a tool (e.g. `plot.selection`).
    Custom {
        key: String,
        value: Value,
    },
    ModeChange {
        from: Mode,
        to: Mode,
        by: String,
    },
    /// Usage of the assistant message just before it (per-message totals).
    Usage {
        input_tokens: u64,
        output_tokens: u64,
        cost: f64,
        #[serde(default, skip_serializing_if = "is_zero")]
        cached_input_tokens: u64,
        #[serde(default, skip_serializing_if = "is_zero")]
        reasoning_tokens: u64,
        /// nbook's estimate: the server reported no counts (a cancelled or failed turn).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        estimated: bool,
    },
    /// The transcript sent to the model was compacted: from here on the model sees
    /// `messages` (a summary and the recent turns) instead of everything before.
    Compaction {
        method: String,
        tokens_before: usize,
        tokens_after: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        messages: Vec<Value>,
    },
    Lifecycle {
        /// start | waiting | resumed | end | error | cancelled | interrupted
        status: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    pub ts: String,
    #[serde(flatten)]
    pub record: LogRecord,
}
