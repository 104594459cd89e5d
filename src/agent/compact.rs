//! Context-window compaction for the agent loop (issue 5). This module owns:
//!
//! - the token estimate of a transcript (`estimate_tokens`, a bytes/4 heuristic);
//! - the compaction policy and its threshold (`CompactionPolicy`, `needs_compaction`), with
//!   NeuroBook's defaults (reserve 25 600 tokens, keep the most recent 24 000);
//! - where the verbatim recent part starts (`split_point`), never between an assistant's tool
//!   calls and their results;
//! - `compact`, which replaces the older messages by one summary written by the `summarizer`
//!   profile in bounded chunks (summaries of summaries when the first pass is still too big),
//!   and falls back to dropping old tool outputs, then whole old turns, when summarising fails;
//! - `summarize_with`, the summarising closure backed by a real `Provider`.
//!
//! It never errors, never touches the engine and writes no log: the run loop decides when to
//! call it (between turns) and records the `compaction{summary, firstKeptEntryId, tokensBefore,
//! details}` entry from the returned [`Compacted`].

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::StreamExt;
use serde::{Serialize, Serializer};

use super::provider::{Message, ModelEvent, ModelRequest, Provider};

/// NeuroBook's `reserveTokens`: room kept free for the next reply and the tool results.
pub const DEFAULT_RESERVE_TOKENS: usize = 25_600;
/// NeuroBook's `keepRecent`: tokens of the newest messages kept verbatim.
pub const DEFAULT_KEEP_RECENT_TOKENS: usize = 24_000;
/// Upper bound of one summarise request (the text handed to the summarizer).
pub const MAX_CHUNK_TOKENS: usize = 16_000;
/// Smallest usable chunk; a policy asking for less is treated as asking for this.
pub const MIN_CHUNK_TOKENS: usize = 128;
/// Per-message framing (role, separators) added to the text estimate.
pub const MESSAGE_OVERHEAD_TOKENS: usize = 4;
/// Most chunk requests one compaction sends; older text past that is handled by dropping.
pub const MAX_SUMMARY_REQUESTS: usize = 64;
/// Most rounds of summarising the summaries.
pub const MAX_REDUCE_ROUNDS: usize = 4;
/// What replaces an old tool output when it has to be dropped.
pub const DROPPED_TOOL_OUTPUT: &str = "[tool output dropped to fit the context window]";
/// The wrapper of the summary message.
pub const SUMMARY_OPEN: &str = "<summary of earlier conversation>";
pub const SUMMARY_CLOSE: &str = "</summary of earlier conversation>";

/// Bytes of each request reserved for the part/group frame around the chunk text.
const FRAME_BYTES: usize = 256;
/// Bytes reserved for the label of one piece of a message that had to be cut.
const PIECE_LABEL_BYTES: usize = 64;
/// A clipped summary shorter than this is not worth its wrapper.
const MIN_SUMMARY_BYTES: usize = 64;
/// Lower bound of the word count asked of each summary.
const MIN_SUMMARY_WORDS: usize = 60;
const CLIP_NOTE: &str =
    "[... the oldest part of this summary was clipped to fit the context window]\n";

/// Instructions appended to the summarizer profile's prompt for compaction requests.
pub const COMPACTION_INSTRUCTIONS: &str = "\n\n## Compacting a conversation\n\n\
Instead of a session id you are now given one part of an agent session's transcript (or the \
summaries of consecutive parts of it, oldest first). Do not call tools and do not use \
`report_result`: reply with the summary only, as plain text. Keep what the agent needs to carry \
on: what the author asked for and decided, what the agents did and which files, entries and ids \
they changed or proposed (with paths), changes that were rejected, open questions and promises \
to the author. Leave out raw tool output and file contents that can be read again. Stay within \
the word limit given with the part.";

// ---------------------------------------------------------------------------------------------
// Estimates and policy
// ---------------------------------------------------------------------------------------------

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
    fn chunk_bytes(&self) -> usize {
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

fn is_tool_result(m: &Message) -> bool {
    matches!(m, Message::ToolResult { .. })
}

// ---------------------------------------------------------------------------------------------
// Result types
// ---------------------------------------------------------------------------------------------

/// How the transcript was brought under budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactionMethod {
    /// Nothing changed.
    None,
    /// The old part was replaced by one summary.
    Summary,
    /// Summarising failed: old tool outputs (and maybe whole old turns) were dropped.
    DroppedToolOutputs,
    /// A summary, plus some dropping (summarising failed part-way, or the summary was clipped).
    SummaryAndDropped,
}

impl CompactionMethod {
    /// `none` | `summary` | `dropped_tool_outputs` | `summary+dropped`.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionMethod::None => "none",
            CompactionMethod::Summary => "summary",
            CompactionMethod::DroppedToolOutputs => "dropped_tool_outputs",
            CompactionMethod::SummaryAndDropped => "summary+dropped",
        }
    }
}

impl std::fmt::Display for CompactionMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for CompactionMethod {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What happened, for the `details` of the log's `compaction` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CompactionDetails {
    /// Messages before the split (the part summarised or dropped from).
    pub old_messages: usize,
    /// Messages from the split on, kept verbatim.
    pub kept_messages: usize,
    /// Chunks the old part was cut into.
    pub chunks: usize,
    /// Summarise requests sent (chunks and summaries of summaries).
    pub summary_requests: usize,
    /// Rounds of summarising the summaries.
    pub reduce_rounds: usize,
    /// Old tool outputs replaced by [`DROPPED_TOOL_OUTPUT`].
    pub tool_outputs_dropped: usize,
    /// Old messages removed entirely.
    pub messages_dropped: usize,
    /// The summary was cut (its oldest part) to fit.
    pub summary_clipped: bool,
    /// When summarising failed part-way: the index (in the input) of the first old message
    /// that follows the summary unsummarised (it and the next ones went through dropping).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remainder_from: Option<usize>,
    /// Why summarising stopped early, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_error: Option<String>,
}

/// The outcome of [`compact`]. Token counts are estimates of the transcript only (no system
/// prompt); `tokens_after <= budget` unless the kept recent part alone is over budget.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Compacted {
    /// The new transcript: `[summary message?] [marker?] [old messages left?] input[first_kept..]`.
    pub messages: Vec<Message>,
    /// The summary text as placed in the summary message (without the wrapper).
    pub summary: Option<String>,
    /// Index in the input of the first message of the verbatim recent part (`0` when nothing
    /// changed). The run loop maps it to `firstKeptEntryId`.
    pub first_kept: usize,
    pub tokens_before: usize,
    pub tokens_after: usize,
    /// window − reserve − system tokens.
    pub budget: usize,
    pub method: CompactionMethod,
    pub details: CompactionDetails,
}

impl Compacted {
    pub fn changed(&self) -> bool {
        self.method != CompactionMethod::None
    }

    fn unchanged(messages: &[Message], budget: usize) -> Compacted {
        let tokens = estimate_total(messages);
        Compacted {
            messages: messages.to_vec(),
            summary: None,
            first_kept: 0,
            tokens_before: tokens,
            tokens_after: tokens,
            budget,
            method: CompactionMethod::None,
            details: CompactionDetails {
                kept_messages: messages.len(),
                ..CompactionDetails::default()
            },
        }
    }
}

/// The message that stands for the compacted part: a user message wrapped in
/// [`SUMMARY_OPEN`] / [`SUMMARY_CLOSE`].
pub fn summary_message(summary: &str) -> Message {
    Message::User {
        text: format!("{SUMMARY_OPEN}\n{summary}\n{SUMMARY_CLOSE}"),
    }
}

fn dropped_marker(n: usize) -> Message {
    Message::User {
        text: format!("[{n} earlier messages were dropped to fit the context window]"),
    }
}

// ---------------------------------------------------------------------------------------------
// Compaction
// ---------------------------------------------------------------------------------------------

/// Compact `messages` if [`needs_compaction`] says so; otherwise return them unchanged
/// (`method == None`). See [`force_compact`].
pub async fn compact<F, Fut>(
    messages: &[Message],
    system_tokens: usize,
    policy: &CompactionPolicy,
    summarize: F,
) -> Compacted
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<String, String>>,
{
    if !needs_compaction(messages, system_tokens, policy) {
        return Compacted::unchanged(messages, policy.budget(system_tokens));
    }
    force_compact(messages, system_tokens, policy, summarize).await
}

/// Compact whatever the size (the session's manual `compact` command). The messages before
/// [`split_point`] are rendered as text, cut into chunks of at most `policy.chunk_tokens`
/// (a single huge message is cut too) and each chunk is summarised by one `summarize` call;
/// while the joined summaries are bigger than the room left, they are summarised again in
/// bounded groups. The result is one summary message followed by the recent messages verbatim.
///
/// If summarising fails (the closure returns an error or empty text), old tool outputs are
/// replaced by [`DROPPED_TOOL_OUTPUT`], oldest first, until the transcript fits; then oldest
/// whole turns are dropped (an assistant message with its tool results). Summaries written
/// before a failure are kept. Never errors; never over budget unless the recent part alone is.
pub async fn force_compact<F, Fut>(
    messages: &[Message],
    system_tokens: usize,
    policy: &CompactionPolicy,
    summarize: F,
) -> Compacted
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<String, String>>,
{
    let budget = policy.budget(system_tokens);
    let split = split_point(messages, policy);
    if split == 0 {
        return Compacted::unchanged(messages, budget);
    }
    let tokens_before = estimate_total(messages);
    let (old, kept) = messages.split_at(split);
    let kept_tokens = estimate_total(kept);
    let mut details = CompactionDetails {
        old_messages: old.len(),
        kept_messages: kept.len(),
        ..CompactionDetails::default()
    };

    let room = budget.saturating_sub(kept_tokens + estimate_tokens(&summary_message("")));
    let target = room.min(policy.chunk_tokens);
    let summarized = summarize_old(old, target, policy, &summarize, &mut details).await;

    let remainder = old[summarized.remainder_from..].to_vec();
    if summarized.summary.is_some() && summarized.remainder_from > 0 && !remainder.is_empty() {
        details.remainder_from = Some(summarized.remainder_from);
    }
    let (out, summary) = assemble(
        summarized.summary,
        summarized.remainder_from,
        remainder,
        kept,
        budget,
        &mut details,
    );

    let dropped_any =
        details.tool_outputs_dropped > 0 || details.messages_dropped > 0 || details.summary_clipped;
    let method = match (summary.is_some(), dropped_any) {
        (true, false) => CompactionMethod::Summary,
        (true, true) => CompactionMethod::SummaryAndDropped,
        (false, true) => CompactionMethod::DroppedToolOutputs,
        (false, false) => {
            let mut c = Compacted::unchanged(messages, budget);
            c.details.summary_error = details.summary_error;
            return c;
        }
    };
    Compacted {
        tokens_after: estimate_total(&out),
        messages: out,
        summary,
        first_kept: split,
        tokens_before,
        budget,
        method,
        details,
    }
}

struct Summarized {
    summary: Option<String>,
    /// Old messages from here on were not (fully) summarised.
    remainder_from: usize,
}

/// Summarise `old` in bounded chunks, then the summaries until they fit `target` tokens.
async fn summarize_old<F, Fut>(
    old: &[Message],
    target: usize,
    policy: &CompactionPolicy,
    summarize: &F,
    details: &mut CompactionDetails,
) -> Summarized
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<String, String>>,
{
    let room = policy.chunk_bytes() - FRAME_BYTES;
    let chunks = pack(old.iter().map(render).enumerate(), room);
    details.chunks = chunks.len();
    let words = words_for(target, chunks.len());
    let mut summaries: Vec<String> = Vec::new();
    let mut failed_at: Option<usize> = None;
    for (k, chunk) in chunks.iter().enumerate() {
        if k >= MAX_SUMMARY_REQUESTS {
            details.summary_error = Some(format!(
                "the old part needs more than {MAX_SUMMARY_REQUESTS} summarise requests"
            ));
            failed_at = Some(chunk.first);
            break;
        }
        let request = format!(
            "<earlier conversation, part {} of {}; summarise it in at most {words} words>\n{}\n</earlier conversation>",
            k + 1,
            chunks.len(),
            chunk.text
        );
        details.summary_requests += 1;
        match ask(summarize, request).await {
            Ok(s) => summaries.push(s),
            Err(e) => {
                details.summary_error = Some(e);
                failed_at = Some(chunk.first);
                break;
            }
        }
    }
    if summaries.is_empty() {
        return Summarized {
            summary: None,
            remainder_from: 0,
        };
    }
    let remainder_from = match failed_at {
        None => old.len(),
        Some(mut i) => {
            // Never leave a tool result at the head of the remainder without its call.
            while i > 0 && is_tool_result(&old[i]) {
                i -= 1;
            }
            i
        }
    };

    let mut summary = summaries.join("\n\n");
    while estimate_text_tokens(&summary) > target && details.reduce_rounds < MAX_REDUCE_ROUNDS {
        details.reduce_rounds += 1;
        let groups = pack(
            summaries.iter().map(|s| format!("{s}\n\n")).enumerate(),
            room,
        );
        let words = words_for(target, groups.len());
        let mut next = Vec::with_capacity(groups.len());
        for (k, group) in groups.iter().enumerate() {
            let request = format!(
                "<summaries of consecutive parts of an earlier conversation, oldest first, group {} of {}; merge them into one summary of at most {words} words>\n{}\n</summaries>",
                k + 1,
                groups.len(),
                group.text
            );
            details.summary_requests += 1;
            match ask(summarize, request).await {
                Ok(s) => next.push(s),
                Err(e) => {
                    details.summary_error = Some(e);
                    break;
                }
            }
        }
        if next.len() < groups.len() {
            break; // keep the previous round's summaries; clipping makes them fit
        }
        let joined = next.join("\n\n");
        if estimate_text_tokens(&joined) >= estimate_text_tokens(&summary) {
            break; // no progress: the summarizer does not compress
        }
        summaries = next;
        summary = joined;
    }
    Summarized {
        summary: Some(summary),
        remainder_from,
    }
}

async fn ask<F, Fut>(summarize: &F, request: String) -> Result<String, String>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<String, String>>,
{
    match summarize(request).await {
        Ok(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        Ok(_) => Err("the summarizer returned no text".into()),
        Err(e) => Err(e),
    }
}

/// Words to ask of each of `n` summaries so that together they fit `target` tokens.
fn words_for(target: usize, n: usize) -> usize {
    (target * 3 / 4 / n.max(1)).max(MIN_SUMMARY_WORDS)
}

/// Put together `[summary?] [marker?] remainder kept`, dropping what has to go to fit
/// `budget`: remainder tool outputs (oldest first), remainder turns (oldest first), then the
/// oldest part of the summary, then the summary itself.
fn assemble(
    summary: Option<String>,
    summarized_upto: usize,
    mut rem: Vec<Message>,
    kept: &[Message],
    budget: usize,
    details: &mut CompactionDetails,
) -> (Vec<Message>, Option<String>) {
    let kept_tokens = estimate_total(kept);
    let summary_tokens = summary
        .as_deref()
        .map(|s| estimate_tokens(&summary_message(s)))
        .unwrap_or(0);
    let rem_budget = budget.saturating_sub(kept_tokens + summary_tokens);

    // 1. Old tool outputs, oldest first.
    let mut rem_tokens = estimate_total(&rem);
    for m in rem.iter_mut() {
        if rem_tokens <= rem_budget {
            break;
        }
        if let Message::ToolResult { content, .. } = m {
            if content.len() > DROPPED_TOOL_OUTPUT.len() {
                rem_tokens -= content.len().div_ceil(4);
                *content = DROPPED_TOOL_OUTPUT.to_string();
                rem_tokens += DROPPED_TOOL_OUTPUT.len().div_ceil(4);
                details.tool_outputs_dropped += 1;
            }
        }
    }
    // Recount exactly (the per-message rounding above is approximate).
    rem_tokens = estimate_total(&rem);

    // 2. Whole old turns, oldest first (an assistant message goes with its tool results).
    let marker_tokens = if summary.is_none() {
        estimate_tokens(&dropped_marker(usize::MAX))
    } else {
        0
    };
    let mut dropped_turns = 0;
    if rem_tokens > rem_budget {
        let drop_budget = rem_budget.saturating_sub(marker_tokens);
        while !rem.is_empty() && rem_tokens > drop_budget {
            let mut g = 1;
            while g < rem.len() && is_tool_result(&rem[g]) {
                g += 1;
            }
            rem_tokens -= estimate_total(&rem[..g]);
            rem.drain(..g);
            dropped_turns += g;
        }
    }
    details.messages_dropped += dropped_turns;

    // 3. The summary: clip its oldest part, or leave it out, if it still does not fit.
    let mut summary = summary;
    if let Some(s) = summary.take() {
        let avail = budget.saturating_sub(kept_tokens + rem_tokens);
        if estimate_tokens(&summary_message(&s)) <= avail {
            summary = Some(s);
        } else {
            let wrapper = estimate_tokens(&summary_message(""));
            let max_bytes = avail.saturating_sub(wrapper) * 4;
            match clip_tail(&s, max_bytes) {
                Some(c) if estimate_tokens(&summary_message(&c)) <= avail => {
                    details.summary_clipped = true;
                    summary = Some(c);
                }
                _ => {
                    // Nothing useful fits: what the summary stood for is dropped.
                    details.summary_clipped = true;
                    details.messages_dropped += summarized_upto;
                }
            }
        }
    }

    let mut out = Vec::with_capacity(rem.len() + kept.len() + 1);
    if let Some(s) = &summary {
        out.push(summary_message(s));
    } else if details.messages_dropped > 0 {
        let marker = dropped_marker(details.messages_dropped);
        if estimate_tokens(&marker) + rem_tokens + kept_tokens <= budget {
            out.push(marker);
        }
    }
    out.extend(rem);
    out.extend_from_slice(kept);
    (out, summary)
}

/// Keep the newest `max_bytes` of a summary (a note included), cut at a line or word break.
fn clip_tail(s: &str, max_bytes: usize) -> Option<String> {
    let allowed = max_bytes.checked_sub(CLIP_NOTE.len())?;
    if allowed < MIN_SUMMARY_BYTES {
        return None;
    }
    let mut start = s.len().saturating_sub(allowed);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    let slack = (s.len() - start) / 4;
    if let Some(p) = s[start..].find(['\n', ' ']) {
        if p < slack {
            start += p + 1;
        }
    }
    Some(format!("{CLIP_NOTE}{}", &s[start..]))
}

// ---------------------------------------------------------------------------------------------
// Rendering and chunking
// ---------------------------------------------------------------------------------------------

/// The transcript as the summarizer reads it.
fn render(m: &Message) -> String {
    match m {
        Message::User { text } => format!("[user]\n{text}\n"),
        Message::Assistant { text, tool_calls } => {
            let mut s = format!("[assistant]\n{text}\n");
            for c in tool_calls {
                s.push_str(&format!(
                    "[tool call {} {}] {}\n",
                    c.name, c.id, c.arguments
                ));
            }
            s
        }
        Message::ToolResult {
            call_id,
            content,
            is_error,
        } => format!(
            "[tool result {call_id}{}]\n{content}\n",
            if *is_error { " (error)" } else { "" }
        ),
    }
}

struct Chunk {
    /// Index of the first item (message or summary) with text in this chunk.
    first: usize,
    text: String,
}

/// Pack items into chunks of at most `room` bytes, in order; an item longer than `room` is cut
/// into labelled pieces, one chunk each.
fn pack(items: impl Iterator<Item = (usize, String)>, room: usize) -> Vec<Chunk> {
    let mut out: Vec<Chunk> = Vec::new();
    let mut cur: Option<Chunk> = None;
    for (i, text) in items {
        if text.len() > room {
            out.extend(cur.take());
            let pieces = cut_pieces(&text, room - PIECE_LABEL_BYTES);
            let n = pieces.len();
            for (j, p) in pieces.into_iter().enumerate() {
                out.push(Chunk {
                    first: i,
                    text: format!("[piece {} of {n} of one long message]\n{p}", j + 1),
                });
            }
            continue;
        }
        match &mut cur {
            Some(c) if c.text.len() + text.len() <= room => c.text.push_str(&text),
            _ => {
                out.extend(cur.take());
                cur = Some(Chunk { first: i, text });
            }
        }
    }
    out.extend(cur);
    out
}

/// Cut `s` into pieces of at most `max` bytes (`max` >= 4), on char boundaries, preferring a
/// line break, then a space, in the last quarter of each piece.
fn cut_pieces(s: &str, max: usize) -> Vec<&str> {
    let max = max.max(4);
    let mut out = Vec::new();
    let mut rest = s;
    while rest.len() > max {
        let mut end = max;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let floor = end - end / 4;
        let head = &rest[..end];
        let cut = head
            .rfind('\n')
            .filter(|&p| p >= floor)
            .or_else(|| head.rfind(' ').filter(|&p| p >= floor))
            .map(|p| p + 1)
            .unwrap_or(end);
        let (a, b) = rest.split_at(cut);
        out.push(a);
        rest = b;
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Provider-backed summarising
// ---------------------------------------------------------------------------------------------

/// The summarizer profile's prompt followed by [`COMPACTION_INSTRUCTIONS`]: the system prompt
/// [`summarize_with`] sends.
pub fn compaction_system_prompt(summarizer_prompt: &str) -> String {
    format!("{}{COMPACTION_INSTRUCTIONS}", summarizer_prompt.trim_end())
}

/// A summarising closure for [`compact`]: each call sends one `ModelRequest` to `provider`
/// (system: `compaction_system_prompt(&summarizer_prompt)`, i.e. the summarizer profile's
/// prompt followed by [`COMPACTION_INSTRUCTIONS`]; the text as the only user message; no
/// tools) and returns the streamed text. A provider error, or a reply without text, is an
/// `Err`.
pub fn summarize_with(
    provider: Arc<dyn Provider>,
    summarizer_prompt: String,
) -> impl Fn(String) -> BoxFuture<'static, Result<String, String>> + Clone + Send + Sync + 'static {
    let system = compaction_system_prompt(&summarizer_prompt);
    move |text: String| {
        let provider = provider.clone();
        let req = ModelRequest {
            system: system.clone(),
            messages: vec![Message::User { text }],
            tools: Vec::new(),
        };
        Box::pin(async move {
            let mut stream = provider.stream(req);
            let mut out = String::new();
            while let Some(event) = stream.next().await {
                match event {
                    Ok(ModelEvent::TextDelta(t)) => out.push_str(&t),
                    Ok(_) => {}
                    Err(e) => return Err(e.to_string()),
                }
            }
            if out.trim().is_empty() {
                Err(format!("{} returned no summary text", provider.name()))
            } else {
                Ok(out)
            }
        }) as BoxFuture<'static, Result<String, String>>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ToolCall;
    use serde_json::json;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: json!({"path": "manuscript/chapter.md"}),
        }
    }

    #[test]
    fn estimate_counts_text_and_call_arguments() {
        let bare = Message::Assistant {
            text: "abcd".repeat(10),
            tool_calls: vec![],
        };
        assert_eq!(estimate_tokens(&bare), MESSAGE_OVERHEAD_TOKENS + 10);
        let mut big = call("c1");
        big.arguments = json!({"content": "x".repeat(4000)});
        let with_call = Message::Assistant {
            text: "abcd".repeat(10),
            tool_calls: vec![big],
        };
        assert!(estimate_tokens(&with_call) >= estimate_tokens(&bare) + 1000);
        let result = Message::ToolResult {
            call_id: "c1".into(),
            content: "é".repeat(100), // 200 bytes
            is_error: false,
        };
        assert_eq!(estimate_tokens(&result), MESSAGE_OVERHEAD_TOKENS + 51);
    }

    #[test]
    fn policy_defaults_and_small_windows() {
        let p = CompactionPolicy::for_window(200_000);
        assert_eq!(
            (p.reserve, p.keep_recent, p.chunk_tokens),
            (25_600, 24_000, 16_000)
        );
        let p = CompactionPolicy::for_window(8_000);
        assert_eq!(
            (p.reserve, p.keep_recent, p.chunk_tokens),
            (2_000, 2_666, 2_000)
        );
        assert_eq!(p.budget(1_000), 5_000);
        assert_eq!(CompactionPolicy::for_window(100).budget(10_000), 0);
    }

    #[test]
    fn cut_pieces_respects_bounds_and_char_boundaries() {
        let s = "жёлтый дом\n".repeat(500) + &"界".repeat(999);
        for max in [4usize, 5, 7, 64, 1000] {
            let pieces = cut_pieces(&s, max);
            assert!(pieces.iter().all(|p| p.len() <= max && !p.is_empty()));
            assert_eq!(pieces.concat(), s);
        }
    }

    #[test]
    fn frames_fit_in_their_reserve() {
        // Counts stay far below these: at most MAX_SUMMARY_REQUESTS parts, and the words
        // asked for are at most 3/4 of MAX_CHUNK_TOKENS.
        let w = 9_999_999;
        let n = 9_999_999;
        let part = format!(
            "<earlier conversation, part {n} of {n}; summarise it in at most {w} words>\n\n</earlier conversation>"
        );
        let group = format!(
            "<summaries of consecutive parts of an earlier conversation, oldest first, group {n} of {n}; merge them into one summary of at most {w} words>\n\n</summaries>"
        );
        assert!(part.len() <= FRAME_BYTES && group.len() <= FRAME_BYTES);
        assert!(format!("[piece {n} of {n} of one long message]\n").len() <= PIECE_LABEL_BYTES);
    }

    #[test]
    fn split_never_starts_with_a_tool_result() {
        let msgs = vec![
            Message::User { text: "go".into() },
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call("a"), call("b")],
            },
            Message::ToolResult {
                call_id: "a".into(),
                content: "x".repeat(400),
                is_error: false,
            },
            Message::ToolResult {
                call_id: "b".into(),
                content: "y".repeat(40),
                is_error: false,
            },
            Message::Assistant {
                text: "done".into(),
                tool_calls: vec![],
            },
        ];
        // Room for the last two messages only: the suffix would start at result "b".
        let keep = estimate_tokens(&msgs[3]) + estimate_tokens(&msgs[4]);
        let policy = CompactionPolicy {
            window: 10_000,
            reserve: 0,
            keep_recent: keep,
            chunk_tokens: 1_000,
        };
        assert_eq!(split_point(&msgs, &policy), 4);
        let policy = CompactionPolicy {
            keep_recent: 100_000,
            ..policy
        };
        assert_eq!(split_point(&msgs, &policy), 0);
        let policy = CompactionPolicy {
            keep_recent: 0,
            ..policy
        };
        assert_eq!(split_point(&msgs, &policy), msgs.len());
    }

    #[test]
    fn clip_keeps_the_newest_text() {
        let s = format!("{}THE END", "old words ".repeat(200));
        let c = clip_tail(&s, 300).unwrap();
        assert!(c.len() <= 300 && c.starts_with(CLIP_NOTE) && c.ends_with("THE END"));
        assert!(clip_tail(&s, 40).is_none());
    }
}
