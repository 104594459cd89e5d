//! What a tool call comes back as: how an approval is answered (`Approval`), the status of a
//! finished call (`CallStatus`) and its result (`CallResult`), with the constructors of the
//! refusals every path shares (rejected, stale since the preview the actor saw, not recorded).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::types::*;
/// How a call that needs approval gets its answer.
#[derive(Clone, Debug)]
pub enum Approval {
    /// Put it in the queue and wait for [`Engine::decide`] (TUI, agent runs).
    Queue,
    /// Answer at once, as the author would (headless `--approve` / `--reject`).
    Auto {
        decision: Decision,
        by: &'static str,
    },
    /// Do not ask: report `needs_approval` and change nothing (headless without a flag).
    Fail,
    /// As `Fail`, and the result names how this caller gives approval (`nbook call`:
    /// "--approve or --reject"; `nbook run`: "--approve-all or --reject-all").
    FailWithRemedy(&'static str),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Ok,
    ToolError,
    InvalidArgs,
    UnknownTool,
    NotAllowed,
    NeedsApproval,
    Rejected,
    Refused,
    Stale,
    Cancelled,
    /// A record of the call could not be written to the session log. Before the tool ran:
    /// nothing was run. After: its effect stays, but the run must stop (see `content`).
    LogFailed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallResult {
    pub call_id: CallId,
    pub tool: String,
    pub status: CallStatus,
    pub ok: bool,
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<Preview>,
    /// The call waited in the approval queue for the author (the agent loop skips the rest
    /// of that turn's calls, as NeuroBook's pause does).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub waited: bool,
}

impl CallResult {
    pub(super) fn fail(call: &ToolCall, status: CallStatus, content: impl Into<String>) -> Self {
        CallResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            status,
            ok: false,
            content: content.into(),
            details: None,
            preview: None,
            waited: false,
        }
    }

    /// A tool error as the result: its message, and the details of a coded failure.
    pub(super) fn tool_error(call: &ToolCall, e: &super::tool::ToolError) -> Self {
        let mut r = CallResult::fail(call, CallStatus::ToolError, e.to_string());
        r.details = e.details().cloned();
        r
    }
}

/// The actor confirmed `seen`; if the records or files it was computed against changed since,
/// the call is stale and nothing runs.
pub(super) fn stale_since_seen(
    call: &ToolCall,
    seen: Option<&Preview>,
    now: &Preview,
) -> Option<CallResult> {
    let seen = seen?;
    (seen.targets != now.targets).then(|| {
        CallResult::fail(
            call,
            CallStatus::Stale,
            format!(
                "stale: what this {} call changes was changed by someone else after its preview was shown; nothing was changed. Look at the new state and make the change again.",
                call.name
            ),
        )
    })
}

/// A call refused because its record could not be written first (`what` names the record).
pub(super) fn not_recorded(call: &ToolCall, what: &str, e: &super::EngineError) -> CallResult {
    CallResult::fail(
        call,
        CallStatus::LogFailed,
        format!(
            "not run: {what} could not be written to the session log, and nothing runs without its record; nothing was changed. {e}"
        ),
    )
}

pub(super) fn rejected(call: &ToolCall, reason: Option<String>) -> CallResult {
    let why = reason
        .filter(|r| !r.trim().is_empty())
        .map(|r| format!(" Reason: {r}"))
        .unwrap_or_default();
    CallResult::fail(
        call,
        CallStatus::Rejected,
        format!(
            "The author rejected this {} call.{why} Do not retry the same call; ask the author what should change, or continue without it.",
            call.name
        ),
    )
}

/// The keys of the targets whose state differs between a preview and now (changed, gone or
/// new), for a stale call to say what changed.
pub(super) fn changed_targets(before: &[TargetState], now: &[TargetState]) -> Vec<String> {
    let mut out: Vec<String> = before
        .iter()
        .filter(|b| !now.contains(b))
        .map(|b| b.key.clone())
        .collect();
    for n in now {
        if !before.iter().any(|b| b.key == n.key) {
            out.push(n.key.clone());
        }
    }
    out.dedup();
    out
}
