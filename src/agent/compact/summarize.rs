//! The compaction itself: the old part of the transcript summarised in bounded chunks, the
//! summaries summarised again while they are too big, and the fallback to dropping when the
//! summariser fails. The summariser's error type is the caller's (only its message is kept).

use std::fmt::Display;
use std::future::Future;

use super::*;

/// Compact `messages` if [`needs_compaction`] says so; otherwise return them unchanged
/// (`method == None`). See [`force_compact`].
pub async fn compact<F, Fut, E>(
    messages: &[Message],
    system_tokens: usize,
    policy: &CompactionPolicy,
    summarize: F,
) -> Compacted
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<String, E>>,
    E: Display,
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
pub async fn force_compact<F, Fut, E>(
    messages: &[Message],
    system_tokens: usize,
    policy: &CompactionPolicy,
    summarize: F,
) -> Compacted
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<String, E>>,
    E: Display,
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
async fn summarize_old<F, Fut, E>(
    old: &[Message],
    target: usize,
    policy: &CompactionPolicy,
    summarize: &F,
    details: &mut CompactionDetails,
) -> Summarized
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<String, E>>,
    E: Display,
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
                details.summary_error = Some(e.to_string());
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
                    details.summary_error = Some(e.to_string());
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

/// Why one summary request gave nothing to use (kept in the compaction's details).
#[derive(Debug, thiserror::Error)]
enum SummaryError<E> {
    #[error("the summarizer returned no text")]
    Empty,
    /// The summarizer's own error.
    #[error("{0}")]
    Failed(E),
}

async fn ask<F, Fut, E>(summarize: &F, request: String) -> Result<String, SummaryError<E>>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<String, E>>,
    E: Display,
{
    match summarize(request).await {
        Ok(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        Ok(_) => Err(SummaryError::Empty),
        Err(e) => Err(SummaryError::Failed(e)),
    }
}

/// Words to ask of each of `n` summaries so that together they fit `target` tokens.
fn words_for(target: usize, n: usize) -> usize {
    (target * 3 / 4 / n.max(1)).max(MIN_SUMMARY_WORDS)
}
