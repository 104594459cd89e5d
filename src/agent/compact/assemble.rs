//! Fitting `[summary?] [marker?] remainder kept` into the budget: what is dropped, in which
//! order, and how a summary is clipped.

use super::*;

/// Put together `[summary?] [marker?] remainder kept`, dropping what has to go to fit
/// `budget`: remainder tool outputs (oldest first), remainder turns (oldest first), then the
/// oldest part of the summary, then the summary itself.
pub(super) fn assemble(
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
pub(super) fn clip_tail(s: &str, max_bytes: usize) -> Option<String> {
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
