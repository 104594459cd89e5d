//! The agent loop: assemble the context (profile prompt, `AGENTS.md`, the session's initial
//! brief, mode and task reminders, and the transcript rebuilt from the session log), send it
//! to the provider, record the reply, run its tool calls through the engine (consecutive
//! parallel-safe reads concurrently, everything else in order), feed the results back, and
//! stop on a reply without tool calls, on `report_result`, when the turn budget runs out, or
//! on cancellation. Steering messages are drained at turn boundaries; a call that waited for
//! the author ends that turn's batch (later calls get "skipped" results, as in NeuroBook).
//! Each step is logged before the next begins, so a crash leaves a readable transcript.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::budget::ContextBudget;
use super::compact;
use super::provider::{cut_off_by_length, Message, ModelRequest, Provider, ToolSpec};
use super::reply_stream::{self, request_chars, ReplyStream, TurnUsage};
use crate::engine::{
    Approval, CallResult, CallStatus, Engine, EngineError, LogRecord, SessionState, ToolCall,
};

/// Turns one run may take before it stops on its own.
pub const MAX_TURNS: usize = 64;

/// Messages for a running session, drained at the next turn boundary (`steer`).
#[derive(Default)]
pub struct Inbox {
    steer: Mutex<VecDeque<String>>,
}

impl Inbox {
    pub fn push(&self, text: String) {
        self.steer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(text);
    }
    fn drain(&self) -> Vec<String> {
        self.steer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
            .collect()
    }
}

pub struct RunOptions {
    pub approval: Approval,
    pub cancel: CancellationToken,
    /// Steering messages from the author or a caller.
    pub inbox: Option<Arc<Inbox>>,
    /// The model's context window in tokens; `None` = never compact.
    pub context_window: Option<usize>,
    /// Who writes compaction summaries (the `summarizer` profile's model); `None` = fall back
    /// to dropping old tool outputs.
    pub summarizer: Option<Arc<dyn Provider>>,
    /// End the run after a turn in which a call was refused, rejected or needed an approval
    /// nobody could give (headless `nbook run`): the model would only try again or work
    /// around it, spending tokens on a change the author did not allow.
    pub stop_after_refusal: bool,
}

impl RunOptions {
    pub fn new(approval: Approval, cancel: CancellationToken) -> RunOptions {
        RunOptions {
            approval,
            cancel,
            inbox: None,
            context_window: None,
            summarizer: None,
            stop_after_refusal: false,
        }
    }
}

/// How a run starts.
#[derive(Clone, Debug, PartialEq)]
pub enum Start {
    /// A new user message.
    Prompt(String),
    /// Resume from the transcript's tail (after an interruption or with new tool results).
    Continue,
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
    /// A reply ended at the output-token limit (`finish_reason: length`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut_off: bool,
    /// The run stopped after a refused call (see `RunOptions::stop_after_refusal`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped_after_refusal: bool,
    pub error: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_input_tokens: u64,
    pub reasoning_tokens: u64,
    pub cost: f64,
}

/// The identity of the durable agent a session runs as (session-state `board.agent`): its
/// soul, instructions (text, then the `instructionsPath` file, read through the file tools'
/// path authorization) and memory. None for any other session, or when the agent is gone.
fn durable_identity(
    engine: &Engine,
    state: &std::collections::BTreeMap<String, Value>,
) -> Option<String> {
    let id = state
        .get(crate::tools::fusion::memory::SESSION_AGENT)
        .and_then(Value::as_str)
        .filter(|id| crate::board::agents::is_durable_id(id))?;
    let ws = engine.workspace();
    let board = crate::board::Board::new(ws.root(), ws.name());
    let agent = match board.read(|c| crate::board::agents::load(c, id)) {
        Ok(a) => a?,
        Err(e) => {
            tracing::warn!("durable agent {id}: its identity could not be read: {e}");
            return None;
        }
    };
    let file = agent.instructions_path.as_deref().and_then(|p| {
        let r = ws.resolve(p, crate::workspace::Access::Read).ok()?;
        std::fs::read_to_string(r.abs).ok()
    });
    Some(crate::board::agents::prompt_section(
        &agent,
        file.as_deref(),
    ))
}

/// System prompt: the profile's prompt (with a durable agent's identity), the project's
/// `AGENTS.md`, the session's initial brief, then reminders (mode, task list).
pub fn system_prompt(engine: &Engine, session_id: &str) -> String {
    let state = engine.session_state(session_id);
    // A session created with its own prompt (fn_spawn_agent's systemPromptOverride) uses it
    // in place of its profile's; the profile still decides its tools.
    let own = state
        .get(crate::engine::agents::SYSTEM_PROMPT_KEY)
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty());
    let mut s = match own {
        Some(p) => p.to_string(),
        None => engine
            .session_profile(session_id)
            .map(|p| p.prompt.clone())
            .unwrap_or_default(),
    };
    if let Some(identity) = durable_identity(engine, &state) {
        s.push_str(&identity);
    }
    if let Ok(agents) = std::fs::read_to_string(engine.workspace().root().join("AGENTS.md")) {
        s.push_str("\n\n# Project instructions (AGENTS.md)\n\n");
        s.push_str(&agents);
    }
    if let Some(initial) = state
        .get(crate::engine::agents::INITIAL_KEY)
        .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
    {
        s.push_str("\n\n# Your brief (initial)\n\n```json\n");
        s.push_str(&serde_json::to_string_pretty(initial).unwrap_or_default());
        s.push_str("\n```");
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
    if let Some(tasks) = state.get("agent.tasks") {
        let steps: Vec<String> = tasks
            .get("steps")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|st| {
                        format!(
                            "- [{}] {} {}",
                            st.get("status").and_then(Value::as_str).unwrap_or("?"),
                            st.get("id").and_then(Value::as_str).unwrap_or("?"),
                            st.get("text").and_then(Value::as_str).unwrap_or("")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if !steps.is_empty() {
            s.push_str(&format!(
                "\n\n<system-reminder>Your task list:\n{}</system-reminder>",
                steps.join("\n")
            ));
        }
    }
    s
}

/// The tools a session's model is offered: the registered tools its profile allows, in name
/// order with those declared `listed_last` after the rest. A role's tools are withheld here,
/// when the session is built, not refused when called.
pub fn tool_specs(engine: &Engine, session_id: &str) -> Vec<ToolSpec> {
    let Some(profile) = engine.session_profile(session_id) else {
        return Vec::new();
    };
    let mut tools: Vec<_> = engine
        .registry()
        .iter()
        .filter(|t| profile.allows(t.tool.name()))
        .collect();
    // Stable: the registry's name order holds within each group.
    tools.sort_by_key(|t| t.tool.effects().listed_last);
    tools
        .into_iter()
        .map(|t| ToolSpec {
            name: t.tool.name().to_string(),
            description: t.tool.description().to_string(),
            parameters: t.schema.clone(),
        })
        .collect()
}

/// The conversation so far as the model sees it, rebuilt from the session log. A compaction
/// record replaces everything before it; an assistant call that never got a result (a crash
/// or a cancel mid-turn) gets an "interrupted" result so the transcript stays well-formed.
pub fn history(engine: &Engine, session_id: &str) -> Result<Vec<Message>, EngineError> {
    let log = engine.session_log(session_id)?;
    let mut msgs: Vec<Message> = Vec::new();
    for line in &log.lines {
        match &line.record {
            LogRecord::User { text } => {
                close_open_calls(&mut msgs);
                msgs.push(Message::User { text: text.clone() });
            }
            LogRecord::Assistant { text, tool_calls } => {
                close_open_calls(&mut msgs);
                msgs.push(Message::Assistant {
                    text: text.clone(),
                    tool_calls: tool_calls.clone(),
                });
            }
            LogRecord::ToolResult {
                call_id,
                content,
                ok,
                ..
            } => {
                let known = msgs.iter().rev().any(|m| {
                    matches!(m, Message::Assistant { tool_calls, .. } if tool_calls.iter().any(|c| &c.id == call_id))
                });
                let seen = msgs
                    .iter()
                    .any(|m| matches!(m, Message::ToolResult { call_id: c, .. } if c == call_id));
                // Headless `nbook call` results have no assistant message: not model history.
                if known && !seen {
                    msgs.push(Message::ToolResult {
                        call_id: call_id.clone(),
                        content: content.clone(),
                        is_error: !ok,
                    });
                }
            }
            LogRecord::Compaction { messages, .. } => {
                msgs = messages
                    .iter()
                    .filter_map(|m| serde_json::from_value(m.clone()).ok())
                    .collect();
            }
            _ => {}
        }
    }
    close_open_calls(&mut msgs);
    Ok(msgs)
}

/// Give every tool call of the last assistant message a result.
fn close_open_calls(msgs: &mut Vec<Message>) {
    let Some(pos) = msgs
        .iter()
        .rposition(|m| matches!(m, Message::Assistant { .. }))
    else {
        return;
    };
    let Message::Assistant { tool_calls, .. } = &msgs[pos] else {
        return;
    };
    let missing: Vec<String> = tool_calls
        .iter()
        .filter(|c| {
            !msgs[pos..]
                .iter()
                .any(|m| matches!(m, Message::ToolResult { call_id, .. } if *call_id == c.id))
        })
        .map(|c| c.id.clone())
        .collect();
    for id in missing {
        msgs.push(Message::ToolResult {
            call_id: id,
            content: "interrupted: this call did not run (the run stopped before it)".into(),
            is_error: true,
        });
    }
}

/// Run the agent of `session_id` on `message` until it stops.
pub async fn run_agent(
    engine: Arc<Engine>,
    session_id: String,
    provider: Arc<dyn Provider>,
    message: String,
    opts: RunOptions,
) -> Result<RunOutcome, EngineError> {
    run_invocation(engine, session_id, provider, Start::Prompt(message), opts).await
}

/// Run one invocation of a session: a new prompt or a continuation of its transcript.
pub async fn run_invocation(
    engine: Arc<Engine>,
    session_id: String,
    provider: Arc<dyn Provider>,
    start: Start,
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
    let mut messages = history(&engine, &session_id)?;
    if let Start::Prompt(message) = start {
        engine.append(
            &session_id,
            LogRecord::User {
                text: message.clone(),
            },
        )?;
        messages.push(Message::User { text: message });
    }
    let (in_price, out_price) = provider.prices();
    let mut summarizer_failed = false;

    while out.turns < MAX_TURNS {
        if opts.cancel.is_cancelled() {
            out.cancelled = true;
            break;
        }
        if let Some(inbox) = &opts.inbox {
            for text in inbox.drain() {
                engine.append(&session_id, LogRecord::User { text: text.clone() })?;
                messages.push(Message::User { text });
            }
        }
        let system = system_prompt(&engine, &session_id);
        let tools = tool_specs(&engine, &session_id);
        if let Some(window) = opts.context_window {
            let budget = ContextBudget::measure(window, &system, &tools, &messages);
            if let Err(e) = budget.check_fixed() {
                engine.set_context_use(&session_id, budget.used() as u64, window as u64);
                out.error = Some(e.to_string());
                break;
            }
            // After the summarizer failed once in this run, compact by dropping only: asking a
            // failing model again every turn would cost a request per turn for nothing.
            let summarizer = opts.summarizer.clone().filter(|_| !summarizer_failed);
            let (kept, failed) = compact_if_needed(
                &engine,
                &session_id,
                messages,
                (&system, &tools),
                window,
                summarizer,
            )
            .await?;
            messages = kept;
            summarizer_failed |= failed;
            let used = budget.fixed() + compact::estimate_total(&messages);
            engine.set_context_use(&session_id, used as u64, window as u64);
        }
        let req = ModelRequest {
            system,
            messages: messages.clone(),
            tools,
        };
        let request_chars = request_chars(&req);
        let mut stream = provider.stream(req);
        let mut reply = ReplyStream::new(&engine, &session_id);
        loop {
            let next = tokio::select! {
                n = stream.next() => n,
                _ = opts.cancel.cancelled() => { out.cancelled = true; None }
                // Text gathered before a pause in the stream is shown, not held back.
                _ = tokio::time::sleep(reply_stream::FLUSH_EVERY), if reply.has_pending() => {
                    reply.flush();
                    continue;
                }
            };
            let Some(event) = next else { break };
            match event {
                Ok(ev) => reply.on_event(ev),
                Err(e) => {
                    out.error = Some(e.to_string());
                    break;
                }
            }
        }
        reply.flush();
        let ReplyStream {
            mut text,
            calls,
            usage,
            finish,
            got_anything,
            ..
        } = reply;
        // Usage is recorded for every turn the server worked on, also one that was cancelled,
        // failed or cut off: a paid API bills it. Without the server's counts, nbook's
        // estimate (~4 characters a token) is recorded and marked as such. It is logged
        // right after the reply it belongs to, as the transcript expects.
        let usage = usage.unwrap_or_else(|| TurnUsage::estimated(request_chars, &text, &calls));
        let record_usage = |out: &mut RunOutcome| -> Result<(), EngineError> {
            let cost =
                (usage.input as f64 * in_price + usage.output as f64 * out_price) / 1_000_000.0;
            engine.add_usage_detailed(
                &session_id,
                usage.input,
                usage.output,
                cost,
                usage.cached,
                usage.reasoning,
                usage.estimated,
            )?;
            out.input_tokens += usage.input;
            out.output_tokens += usage.output;
            out.cached_input_tokens += usage.cached;
            out.reasoning_tokens += usage.reasoning;
            out.cost += cost;
            Ok(())
        };
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
            if got_anything || out.cancelled || out.error.is_some() {
                record_usage(&mut out)?;
            }
            if !got_anything && out.error.is_none() && !out.cancelled {
                out.error = Some("the model sent an empty reply".into());
            }
            break;
        }
        out.turns += 1;
        let cut_off = finish.as_deref().is_some_and(cut_off_by_length);
        if cut_off {
            // Said in the reply itself, so the model sees on its next turn that it was cut
            // off (and the transcript shows it), rather than taking it for a finished answer.
            text.push_str(&format!(
                "\n\n[reply cut off at {} tokens: the output-token limit was reached]",
                usage.output
            ));
            out.cut_off = true;
        }
        engine.append(
            &session_id,
            LogRecord::Assistant {
                text: text.clone(),
                tool_calls: calls.clone(),
            },
        )?;
        record_usage(&mut out)?;
        messages.push(Message::Assistant {
            text: text.clone(),
            tool_calls: calls.clone(),
        });
        if !text.trim().is_empty() {
            out.final_text = text;
        }
        if calls.is_empty() {
            let pending_steer = opts
                .inbox
                .as_ref()
                .is_some_and(|i| !i.steer.lock().unwrap_or_else(|e| e.into_inner()).is_empty());
            if pending_steer {
                continue;
            }
            break;
        }
        out.tool_calls += calls.len();
        let mut reported = false;
        let mut refused = false;
        for result in run_calls(&engine, &session_id, calls, &opts).await {
            if result.status == CallStatus::NeedsApproval {
                out.needed_approval += 1;
            }
            if result.status == CallStatus::LogFailed && out.error.is_none() {
                // A run whose record is incomplete must not go on acting.
                out.error = Some(format!("{}: {}", result.tool, result.content));
            }
            refused |= matches!(
                result.status,
                CallStatus::NeedsApproval | CallStatus::Rejected | CallStatus::Refused
            );
            if result.ok && ends_run(&engine, &result.tool) {
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
        if reported || out.error.is_some() {
            break;
        }
        if refused && opts.stop_after_refusal {
            out.stopped_after_refusal = true;
            break;
        }
    }
    let closing = out.cancelled && engine.is_closing();
    let (status, state) = if out.error.is_some() {
        ("error", SessionState::Failed)
    } else if closing {
        // nbook quit mid-run: its waiting call is kept and resumes the session when decided.
        ("paused", SessionState::Idle)
    } else if out.cancelled {
        ("cancelled", SessionState::Idle)
    } else {
        ("end", SessionState::Idle)
    };
    let logged = engine.append(
        &session_id,
        LogRecord::Lifecycle {
            status: status.into(),
            message: match closing {
                true => Some("nbook quit; a call that waits for the author waits again when the project is reopened".into()),
                false => out.error.clone(),
            },
        },
    );
    // The run is over either way; a session must not stay "running" because its log failed.
    engine.set_state(
        &session_id,
        if logged.is_ok() {
            state
        } else {
            SessionState::Failed
        },
    );
    logged?;
    Ok(out)
}

/// Compact the transcript when it nears the window; the result is logged so the next run
/// (and a restart) rebuilds the same history. Also says whether a summarizer was asked and
/// failed.
async fn compact_if_needed(
    engine: &Engine,
    session_id: &str,
    messages: Vec<Message>,
    (system, tools): (&str, &[ToolSpec]),
    window: usize,
    summarizer: Option<Arc<dyn Provider>>,
) -> Result<(Vec<Message>, bool), EngineError> {
    let policy = compact::CompactionPolicy::for_window(window);
    let fixed = system.len() / 4
        + tools
            .iter()
            .map(|t| (t.description.len() + t.parameters.to_string().len()) / 4)
            .sum::<usize>();
    if !compact::needs_compaction(&messages, fixed, &policy) {
        return Ok((messages, false));
    }
    let summarizer_prompt = engine
        .profiles()
        .get("summarizer")
        .map(|p| p.prompt.clone())
        .unwrap_or_default();
    let asked = summarizer.is_some();
    let done = match summarizer {
        Some(p) => {
            let f = compact::summarize_with(p, summarizer_prompt);
            compact::compact(&messages, fixed, &policy, f).await
        }
        None => {
            let f = |_: String| async { Err::<String, String>("no summarizer model".into()) };
            compact::compact(&messages, fixed, &policy, f).await
        }
    };
    let failed = asked && done.details.summary_error.is_some();
    if done.tokens_after >= done.tokens_before {
        // Nothing could be dropped or summarised (e.g. one huge recent message): logging a
        // "compaction" that gains nothing would only repeat every turn.
        return Ok((messages, failed));
    }
    engine.append(
        session_id,
        LogRecord::Compaction {
            method: done.method.to_string(),
            tokens_before: done.tokens_before,
            tokens_after: done.tokens_after,
            summary: done.summary.clone(),
            messages: done
                .messages
                .iter()
                .filter_map(|m| serde_json::to_value(m).ok())
                .collect(),
        },
    )?;
    Ok((done.messages, failed))
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
    let mut paused: Option<String> = None;
    for call in calls {
        if let Some(tool) = &paused {
            let why = format!(
                "skipped: {tool} was waiting for the author; the turn ended there. Call this again if it is still needed."
            );
            results.push(skipped(engine, session_id, &call, &why));
            continue;
        }
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
                ended = r.ok && ends_run(engine, &r.tool);
                let pauses = engine.effects(&r.tool).is_some_and(|e| e.pauses);
                if r.waited || pauses {
                    paused = Some(r.tool.clone());
                }
                results.push(r);
            }
            // nbook is exiting: the call stays queued on disk and waits again at the next
            // open, so nothing of this turn is recorded as done.
            None if engine.is_closing() => return results,
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

/// A successful call of this tool ends the run (declared `ends_run`, e.g. report_result).
fn ends_run(engine: &Engine, tool: &str) -> bool {
    engine.effects(tool).is_some_and(|e| e.ends_run)
}
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
        waited: false,
    };
    engine.record_result(session_id, r)
}
