//! The agent loop: send the transcript to the provider, record the reply, run its tool calls
//! through the engine (consecutive parallel-safe reads concurrently, everything else in
//! order), feed the results back, and stop on a reply without tool calls, when the script or
//! turn budget runs out, or on cancellation. Each step is logged before the next begins.

use std::sync::Arc;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::provider::{Message, ModelEvent, ModelRequest, Provider, ToolSpec};
use crate::engine::{
    Approval, CallResult, CallStatus, Engine, EngineError, LogRecord, SessionState, ToolCall,
};

/// Turns one run may take before it stops on its own.
pub const MAX_TURNS: usize = 64;

pub struct RunOptions {
    pub approval: Approval,
    pub cancel: CancellationToken,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RunOutcome {
    pub turns: usize,
    pub tool_calls: usize,
    /// Calls that needed approval and got none (headless runs without --approve-all).
    pub needed_approval: usize,
    pub final_text: String,
    /// `report_result.data`, when the run ended with `report_result`.
    pub data: Option<serde_json::Value>,
    pub cancelled: bool,
    pub error: Option<String>,
}

/// System prompt: the profile's prompt, then the project's `AGENTS.md`, then the mode rule.
fn system_prompt(engine: &Engine, session_id: &str) -> String {
    let mut s = engine
        .session_profile(session_id)
        .map(|p| p.prompt.clone())
        .unwrap_or_default();
    if let Ok(agents) = std::fs::read_to_string(engine.workspace().root().join("AGENTS.md")) {
        s.push_str("\n\n# Project instructions (AGENTS.md)\n\n");
        s.push_str(&agents);
    }
    if let Some(info) = engine.session(session_id) {
        s.push_str(&format!(
            "\n\n<system-reminder>Mode: {}. {}</system-reminder>",
            info.mode,
            if info.mode.is_read_only() {
                "Read-only mode: discuss and plan; any change waits for the author's approval."
            } else {
                "Changes you propose may wait for the author's approval."
            }
        ));
    }
    s
}

fn tool_specs(engine: &Engine, session_id: &str) -> Vec<ToolSpec> {
    let Some(profile) = engine.session_profile(session_id) else {
        return Vec::new();
    };
    engine
        .registry()
        .iter()
        .filter(|t| profile.allows(t.tool.name()))
        .map(|t| ToolSpec {
            name: t.tool.name().to_string(),
            description: t.tool.description().to_string(),
            parameters: t.tool.schema(),
        })
        .collect()
}

/// Run the agent of `session_id` on `message` until it stops.
pub async fn run_agent(
    engine: Arc<Engine>,
    session_id: String,
    provider: Arc<dyn Provider>,
    message: String,
    opts: RunOptions,
) -> Result<RunOutcome, EngineError> {
    let mut out = RunOutcome::default();
    engine.set_state(&session_id, SessionState::Running);
    engine.append(
        &session_id,
        LogRecord::Lifecycle {
            status: "start".into(),
            message: None,
        },
    )?;
    engine.append(
        &session_id,
        LogRecord::User {
            text: message.clone(),
        },
    )?;
    let mut messages = vec![Message::User { text: message }];
    let (in_price, out_price) = provider.prices();

    while out.turns < MAX_TURNS {
        if opts.cancel.is_cancelled() {
            out.cancelled = true;
            break;
        }
        let req = ModelRequest {
            system: system_prompt(&engine, &session_id),
            messages: messages.clone(),
            tools: tool_specs(&engine, &session_id),
        };
        let mut stream = provider.stream(req);
        let mut text = String::new();
        let mut calls: Vec<ToolCall> = Vec::new();
        let mut usage = (0u64, 0u64);
        let mut got_anything = false;
        loop {
            let next = tokio::select! {
                n = stream.next() => n,
                _ = opts.cancel.cancelled() => { out.cancelled = true; None }
            };
            let Some(event) = next else { break };
            got_anything = true;
            match event {
                Ok(ModelEvent::TextDelta(t)) => text.push_str(&t),
                Ok(ModelEvent::ToolCall(c)) => calls.push(c),
                Ok(ModelEvent::Usage {
                    input_tokens,
                    output_tokens,
                }) => usage = (input_tokens, output_tokens),
                Ok(ModelEvent::UsageDetails { .. }) => {}
                Err(e) => {
                    out.error = Some(e.to_string());
                    break;
                }
            }
        }
        if out.cancelled || out.error.is_some() || !got_anything {
            if !text.is_empty() || !calls.is_empty() {
                // Keep what streamed so the transcript shows where it stopped; calls not run.
                engine.append(
                    &session_id,
                    LogRecord::Assistant {
                        text: text.clone(),
                        tool_calls: Vec::new(),
                    },
                )?;
            }
            break;
        }
        out.turns += 1;
        engine.append(
            &session_id,
            LogRecord::Assistant {
                text: text.clone(),
                tool_calls: calls.clone(),
            },
        )?;
        let cost = (usage.0 as f64 * in_price + usage.1 as f64 * out_price) / 1_000_000.0;
        engine.add_usage(&session_id, usage.0, usage.1, cost)?;
        messages.push(Message::Assistant {
            text: text.clone(),
            tool_calls: calls.clone(),
        });
        if !text.trim().is_empty() {
            out.final_text = text;
        }
        if calls.is_empty() {
            break;
        }
        out.tool_calls += calls.len();
        let mut reported = false;
        for result in run_calls(&engine, &session_id, calls, &opts).await {
            if result.status == CallStatus::NeedsApproval {
                out.needed_approval += 1;
            }
            if result.ok && result.tool == REPORT_RESULT {
                reported = true;
                out.final_text = result.content.clone();
                out.data = result.details.as_ref().and_then(|d| d.get("data")).cloned();
            }
            messages.push(Message::ToolResult {
                call_id: result.call_id.clone(),
                content: result.content.clone(),
                is_error: !result.ok,
            });
        }
        if reported {
            break;
        }
    }
    let (status, state) = if out.error.is_some() {
        ("error", SessionState::Failed)
    } else if out.cancelled {
        ("cancelled", SessionState::Idle)
    } else {
        ("end", SessionState::Idle)
    };
    engine.append(
        &session_id,
        LogRecord::Lifecycle {
            status: status.into(),
            message: out.error.clone(),
        },
    )?;
    engine.set_state(&session_id, state);
    Ok(out)
}

/// Run one turn's calls: a run of consecutive parallel-safe calls goes concurrently; any other
/// call is a barrier and runs alone, in order.
async fn run_calls(
    engine: &Arc<Engine>,
    session_id: &str,
    calls: Vec<ToolCall>,
    opts: &RunOptions,
) -> Vec<CallResult> {
    let mut results = Vec::with_capacity(calls.len());
    let mut batch: Vec<ToolCall> = Vec::new();
    let parallel = |c: &ToolCall| {
        engine
            .registry()
            .get(&c.name)
            .is_some_and(|t| t.tool.parallel_safe())
    };
    let mut ended = false;
    for call in calls {
        if ended {
            results.push(skipped(
                engine,
                session_id,
                &call,
                "skipped: the run ended with report_result before this call",
            ));
            continue;
        }
        if parallel(&call) {
            batch.push(call);
            continue;
        }
        results.extend(run_batch(engine, session_id, std::mem::take(&mut batch), opts).await);
        if opts.cancel.is_cancelled() {
            results.push(skipped(engine, session_id, &call, CANCELLED));
            continue;
        }
        let fut = engine.call(session_id, call.clone(), opts.approval.clone());
        let done = tokio::select! {
            r = fut => Some(r),
            _ = opts.cancel.cancelled() => None,
        };
        match done {
            Some(r) => {
                ended = r.ok && r.tool == REPORT_RESULT;
                results.push(r);
            }
            // The dropped call removed itself from the approval queue; record why it stopped.
            None => results.push(skipped(engine, session_id, &call, CANCELLED)),
        }
    }
    results.extend(run_batch(engine, session_id, batch, opts).await);
    results
}

async fn run_batch(
    engine: &Arc<Engine>,
    session_id: &str,
    batch: Vec<ToolCall>,
    opts: &RunOptions,
) -> Vec<CallResult> {
    let futs = batch
        .into_iter()
        .map(|c| engine.call(session_id, c, opts.approval.clone()));
    futures::future::join_all(futs).await
}

const REPORT_RESULT: &str = "report_result";
const CANCELLED: &str = "skipped: the run was cancelled before this call ran";

fn skipped(engine: &Engine, session_id: &str, call: &ToolCall, why: &str) -> CallResult {
    let r = CallResult {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        status: CallStatus::Cancelled,
        ok: false,
        content: why.into(),
        details: None,
        preview: None,
    };
    let _ = engine.append(
        session_id,
        LogRecord::ToolResult {
            call_id: r.call_id.clone(),
            tool: r.tool.clone(),
            ok: false,
            content: r.content.clone(),
            details: None,
        },
    );
    r
}
