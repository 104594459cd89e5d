//! Token estimates of a transcript, the compaction policy and its threshold, and where the
//! verbatim recent part starts.

use serde::Serialize;

use super::*;

/// Tokens of a piece of text: UTF-8 bytes / 4, rounded up. This is the usual "4 characters a
/// token" rule for English; counting bytes rather than characters makes it err on the high
/// side for other scripts (Cyrillic 2 bytes a character, CJK 3), where tokens are shorter.
pub fn estimate_text_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// Tokens of one message: its text (user text, assistant text, tool output and call id) plus
/// every tool call's name, id and JSON arguments, plus [`MESSAGE_OVERHEAD_TOKENS`] for the
/// message and for each call.
pub fn estimate_tokens(message: &Message) -> usize {
    MESSAGE_OVERHEAD_TOKENS
        + match message {
            Message::User { text } => estimate_text_tokens(text),
            Message::Assistant { text, tool_calls } => {
                estimate_text_tokens(text)
                    + tool_calls
                        .iter()
                        .map(|c| {
                            MESSAGE_OVERHEAD_TOKENS
                                + (c.name.len() + c.id.len() + c.arguments.to_string().len())
                                    .div_ceil(4)
                        })
                        .sum::<usize>()
            }
            Message::ToolResult {
                call_id, content, ..
            } => (call_id.len() + content.len()).div_ceil(4),
        }
}

/// Sum of [`estimate_tokens`] over a transcript.
pub fn estimate_total(messages: &[Message]) -> usize {
    messages.iter().map(estimate_tokens).sum()
}

/// When to compact and how much to keep. All values are in estimated tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CompactionPolicy {
    /// The model's context window.
    pub window: usize,
    /// Kept free for the next reply and its tool results.
    pub reserve: usize,
    /// The newest messages kept verbatim (about this many tokens).
    pub keep_recent: usize,
    /// Upper bound of the text of one summarise request.
    pub chunk_tokens: usize,
}

impl CompactionPolicy {
    /// NeuroBook's defaults scaled down for small windows: reserve = min(25 600, window/4),
    /// keep_recent = min(24 000, window/3), chunk_tokens = window/4 clamped to
    /// [`MIN_CHUNK_TOKENS`]..=[`MAX_CHUNK_TOKENS`], so that a chunk, the summarizer prompt and
    /// the reply use well under half of the window.
    pub fn for_window(window: usize) -> CompactionPolicy {
        CompactionPolicy {
            window,
            reserve: DEFAULT_RESERVE_TOKENS.min(window / 4),
            keep_recent: DEFAULT_KEEP_RECENT_TOKENS.min(window / 3),
            chunk_tokens: (window / 4).clamp(MIN_CHUNK_TOKENS, MAX_CHUNK_TOKENS),
        }
    }

    /// Tokens the transcript may use: window − reserve − system prompt.
    pub fn budget(&self, system_tokens: usize) -> usize {
        self.window
            .saturating_sub(self.reserve)
            .saturating_sub(system_tokens)
    }

    /// Byte bound of one summarise request's text.
    pub(super) fn chunk_bytes(&self) -> usize {
        self.chunk_tokens.max(MIN_CHUNK_TOKENS) * 4
    }
}

/// True when the transcript plus the system prompt no longer leaves `reserve` tokens free.
pub fn needs_compaction(
    messages: &[Message],
    system_tokens: usize,
    policy: &CompactionPolicy,
) -> bool {
    estimate_total(messages) > policy.budget(system_tokens)
}

/// Index of the first message kept verbatim: the longest suffix within `keep_recent` tokens,
/// shortened if it would start with a tool result (so a result is never kept without the
/// assistant message that made its call). `0` keeps everything; `messages.len()` keeps nothing.
pub fn split_point(messages: &[Message], policy: &CompactionPolicy) -> usize {
    let mut kept = 0;
    let mut i = messages.len();
    while i > 0 {
        let t = estimate_tokens(&messages[i - 1]);
        if kept + t > policy.keep_recent {
            break;
        }
        kept += t;
        i -= 1;
    }
    while i < messages.len() && is_tool_result(&messages[i]) {
        i += 1;
    }
    i
}

pub(super) fn is_tool_result(m: &Message) -> bool {
    matches!(m, Message::ToolResult { .. })
}
