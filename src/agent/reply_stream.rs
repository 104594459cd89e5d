//! One model reply as it streams in: collects the text, tool calls, usage and finish reason
//! the run loop needs, and publishes live progress to the engine's subscribers (the TUI's
//! transcript, `nbook run`'s `text_delta` lines). Deltas are coalesced — sent when ~50 ms
//! have passed or 256 characters have gathered — so twenty sessions streaming at once cost a
//! few events a second each, not one per token.

use std::time::{Duration, Instant};

use super::http::estimate_tokens;
use super::provider::{ModelEvent, ModelRequest};
use crate::engine::{Engine, EngineEvent, ToolCall};

pub const FLUSH_EVERY: Duration = Duration::from_millis(50);
const FLUSH_CHARS: usize = 256;

/// Token counts of one turn.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TurnUsage {
    pub input: u64,
    pub output: u64,
    pub cached: u64,
    pub reasoning: u64,
    /// nbook's estimate: the server reported no counts (a cancelled or failed stream).
    pub estimated: bool,
}

impl TurnUsage {
    /// An estimate from what was sent and what arrived, for a turn the server never
    /// reported usage for.
    pub fn estimated(request_chars: usize, text: &str, calls: &[ToolCall]) -> TurnUsage {
        let out_chars = text.len()
            + calls
                .iter()
                .map(|c| c.name.len() + c.arguments.to_string().len())
                .sum::<usize>();
        TurnUsage {
            input: estimate_tokens(request_chars),
            output: estimate_tokens(out_chars),
            cached: 0,
            reasoning: 0,
            estimated: true,
        }
    }
}

/// Characters of a request as sent (prompt, transcript and tool schemas), for estimates.
pub fn request_chars(req: &ModelRequest) -> usize {
    req.system.len()
        + req
            .messages
            .iter()
            .map(|m| serde_json::to_string(m).map_or(0, |s| s.len()))
            .sum::<usize>()
        + req
            .tools
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
            .sum::<usize>()
}

pub struct ReplyStream<'a> {
    engine: &'a Engine,
    session_id: &'a str,
    pub text: String,
    pub calls: Vec<ToolCall>,
    pub usage: Option<TurnUsage>,
    pub finish: Option<String>,
    pub got_anything: bool,
    pending_text: String,
    pending_reasoning: String,
    /// When deltas were last sent; `None` until the first, which is sent at once.
    last_flush: Option<Instant>,
}

impl<'a> ReplyStream<'a> {
    pub fn new(engine: &'a Engine, session_id: &'a str) -> ReplyStream<'a> {
        ReplyStream {
            engine,
            session_id,
            text: String::new(),
            calls: Vec::new(),
            usage: None,
            finish: None,
            got_anything: false,
            pending_text: String::new(),
            pending_reasoning: String::new(),
            last_flush: None,
        }
    }

    pub fn on_event(&mut self, ev: ModelEvent) {
        self.got_anything = true;
        match ev {
            ModelEvent::TextDelta(t) => {
                self.text.push_str(&t);
                self.pending_text.push_str(&t);
                self.maybe_flush();
            }
            ModelEvent::ReasoningDelta(t) => {
                self.pending_reasoning.push_str(&t);
                self.maybe_flush();
            }
            ModelEvent::ToolCallProgress {
                index,
                name,
                argument_chars,
            } => {
                // Text before the call is shown first, so the order on screen is the reply's.
                self.flush();
                self.engine.publish_progress(EngineEvent::ToolCallProgress {
                    session_id: self.session_id.to_string(),
                    index,
                    name,
                    argument_chars,
                });
            }
            ModelEvent::ToolCall(c) => self.calls.push(c),
            ModelEvent::Usage {
                input_tokens,
                output_tokens,
            } => {
                let u = self.usage.get_or_insert_with(TurnUsage::default);
                u.input = input_tokens;
                u.output = output_tokens;
            }
            ModelEvent::UsageDetails {
                cached_input_tokens,
                reasoning_tokens,
                estimated,
            } => {
                let u = self.usage.get_or_insert_with(TurnUsage::default);
                u.cached = cached_input_tokens;
                u.reasoning = reasoning_tokens;
                u.estimated = estimated;
            }
            ModelEvent::Finish { reason } => self.finish = Some(reason),
        }
    }

    fn maybe_flush(&mut self) {
        let gathered = self.pending_text.len() + self.pending_reasoning.len();
        let due = self.last_flush.is_none_or(|t| t.elapsed() >= FLUSH_EVERY);
        if gathered >= FLUSH_CHARS || due {
            self.flush();
        }
    }

    /// Send what has gathered; called at the end of the stream too.
    pub fn has_pending(&self) -> bool {
        !self.pending_text.is_empty() || !self.pending_reasoning.is_empty()
    }

    pub fn flush(&mut self) {
        self.last_flush = Some(Instant::now());
        if !self.pending_reasoning.is_empty() {
            self.engine.publish_progress(EngineEvent::ReasoningDelta {
                session_id: self.session_id.to_string(),
                text: std::mem::take(&mut self.pending_reasoning),
            });
        }
        if !self.pending_text.is_empty() {
            self.engine.publish_progress(EngineEvent::TextDelta {
                session_id: self.session_id.to_string(),
                text: std::mem::take(&mut self.pending_text),
            });
        }
    }
}
