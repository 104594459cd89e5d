//! What a compaction returns: the new transcript, how it was made ([`CompactionMethod`]) and
//! the details the session log records; the summary message and the dropped-turns marker.

use serde::{Serialize, Serializer};

use super::*;

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

    pub(super) fn unchanged(messages: &[Message], budget: usize) -> Compacted {
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

pub(super) fn dropped_marker(n: usize) -> Message {
    Message::User {
        text: format!("[{n} earlier messages were dropped to fit the context window]"),
    }
}
