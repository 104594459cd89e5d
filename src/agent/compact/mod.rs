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
//! By file: [`policy`] estimates and the threshold, [`outcome`] the result types,
//! [`summarize`] the compaction itself (chunked summaries, summaries of summaries),
//! [`assemble`] fitting summary, remainder and recent part into the budget, [`chunks`]
//! rendering and cutting the transcript, [`provider`] the provider-backed summariser.
//! It never errors, never touches the engine and writes no log: the run loop decides when to
//! call it (between turns) and records the `compaction{summary, firstKeptEntryId, tokensBefore,
//! details}` entry from the returned [`Compacted`].
mod assemble;
mod chunks;
mod outcome;
mod policy;
mod provider;
mod summarize;
#[cfg(test)]
mod tests;

use super::provider::Message;
use assemble::assemble;
use chunks::{pack, render};
use outcome::dropped_marker;
pub use outcome::{summary_message, Compacted, CompactionDetails, CompactionMethod};
use policy::is_tool_result;
pub use policy::{
    estimate_text_tokens, estimate_tokens, estimate_total, needs_compaction, split_point,
    CompactionPolicy,
};
pub use provider::{compaction_system_prompt, summarize_with, SummaryError};
pub use summarize::{compact, force_compact};

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
