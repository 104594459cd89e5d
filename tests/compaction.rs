//! Context-window compaction (`nbook::agent::compact`): the threshold, the split, bounded
//! chunked summaries (and summaries of summaries), the drop-tool-outputs fallback, and the
//! provider-backed summariser on a real `ReplayProvider`.

use std::sync::{Arc, Mutex};

use futures::future::{ready, BoxFuture, Ready};
use futures::stream::BoxStream;
use futures::FutureExt;
use nbook::agent::compact::{
    compact, compaction_system_prompt, estimate_text_tokens, estimate_tokens, estimate_total,
    force_compact, needs_compaction, split_point, summarize_with, summary_message, Compacted,
    CompactionMethod, CompactionPolicy, DROPPED_TOOL_OUTPUT, SUMMARY_OPEN,
};
use nbook::agent::{Message, ModelEvent, ModelRequest, Provider, ProviderError, ReplayProvider};
use nbook::engine::ToolCall;
use proptest::prelude::*;
use serde_json::json;

// ---------------------------------------------------------------------------------------------
// Transcript builders and checks
// ---------------------------------------------------------------------------------------------

fn user(text: &str) -> Message {
    Message::User { text: text.into() }
}

fn say(text: &str) -> Message {
    Message::Assistant {
        text: text.into(),
        tool_calls: vec![],
    }
}

fn calls(text: &str, ids: &[&str]) -> Message {
    Message::Assistant {
        text: text.into(),
        tool_calls: ids
            .iter()
            .map(|id| ToolCall {
                id: id.to_string(),
                name: "read".into(),
                arguments: json!({"path": format!("manuscript/{id}.md")}),
            })
            .collect(),
    }
}

fn result(id: &str, content: String) -> Message {
    Message::ToolResult {
        call_id: id.into(),
        content,
        is_error: false,
    }
}

/// `turns` rounds of: user asks, assistant calls two reads, two results, assistant answers.
/// Every tool output is `output_bytes` long.
fn session(turns: usize, output_bytes: usize) -> Vec<Message> {
    let mut out = Vec::new();
    for t in 0..turns {
        let a = format!("t{t}a");
        let b = format!("t{t}b");
        out.push(user(&format!(
            "Turn {t}: check chapter {t} against the lorebook."
        )));
        out.push(calls(&format!("Reading chapter {t}."), &[&a, &b]));
        out.push(result(
            &a,
            format!("chapter {t} text ").repeat(output_bytes / 16),
        ));
        out.push(result(
            &b,
            format!("lorebook {t} entry ").repeat(output_bytes / 18),
        ));
        out.push(say(&format!("Chapter {t} agrees with the lorebook.")));
    }
    out
}

/// Every tool result follows the assistant message that made its call.
fn assert_pairs_consistent(messages: &[Message]) {
    for (j, m) in messages.iter().enumerate() {
        if let Message::ToolResult { call_id, .. } = m {
            let called = messages[..j].iter().any(|p| {
                matches!(p, Message::Assistant { tool_calls, .. }
                    if tool_calls.iter().any(|c| &c.id == call_id))
            });
            assert!(called, "tool result {call_id} at {j} has no call before it");
        }
    }
}

/// The recent part of the input comes through verbatim, at the end.
fn assert_recent_verbatim(input: &[Message], out: &Compacted) {
    let kept = &input[out.first_kept..];
    assert!(out.messages.len() >= kept.len());
    assert_eq!(&out.messages[out.messages.len() - kept.len()..], kept);
}

type Seen = Arc<Mutex<Vec<String>>>;

/// A summariser that records every request and answers with `reply(index, request)`.
fn recording<R>(reply: R) -> (impl Fn(String) -> Ready<Result<String, String>>, Seen)
where
    R: Fn(usize, &str) -> Result<String, String>,
{
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let f = move |req: String| {
        let mut log = log.lock().unwrap();
        let answer = reply(log.len(), &req);
        log.push(req);
        ready(answer)
    };
    (f, seen)
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    futures::executor::block_on(f)
}

// ---------------------------------------------------------------------------------------------
// Threshold and split
// ---------------------------------------------------------------------------------------------

#[test]
fn below_threshold_nothing_changes() {
    let msgs = session(3, 2_000);
    let policy = CompactionPolicy::for_window(128_000);
    assert!(!needs_compaction(&msgs, 2_000, &policy));
    let (f, seen) = recording(|_, _| Ok("should not be asked".into()));
    let out = block_on(compact(&msgs, 2_000, &policy, f));
    assert_eq!(out.method, CompactionMethod::None);
    assert!(!out.changed());
    assert_eq!(out.messages, msgs);
    assert_eq!(out.summary, None);
    assert_eq!(out.tokens_before, out.tokens_after);
    assert!(seen.lock().unwrap().is_empty());

    // The system prompt counts: the same transcript with a huge system prompt is over.
    let total = estimate_total(&msgs);
    assert!(needs_compaction(
        &msgs,
        policy.window - policy.reserve - total + 1,
        &policy
    ));
    assert!(!needs_compaction(
        &msgs,
        policy.window - policy.reserve - total,
        &policy
    ));
}

#[test]
fn split_point_never_separates_calls_from_results() {
    let msgs = session(6, 1_500);
    let total = estimate_total(&msgs);
    for keep in (0..=total + 10).step_by(7) {
        let policy = CompactionPolicy {
            window: 100_000,
            reserve: 0,
            keep_recent: keep,
            chunk_tokens: 1_000,
        };
        let split = split_point(&msgs, &policy);
        assert!(split <= msgs.len());
        if let Some(first) = msgs.get(split) {
            assert!(
                !matches!(first, Message::ToolResult { .. }),
                "keep_recent {keep}: first kept message is a tool result"
            );
        }
        assert!(estimate_total(&msgs[split..]) <= keep, "keep_recent {keep}");
        // Greedy: one more message (or pair) would not have fitted.
        if split > 0 {
            assert!(
                estimate_total(&msgs[split - 1..]) > keep
                    || matches!(msgs[split - 1], Message::ToolResult { .. })
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Summary path
// ---------------------------------------------------------------------------------------------

#[test]
fn above_threshold_one_summary_then_recent_messages_verbatim() {
    let msgs = session(12, 3_000); // ~ 12 × 1.5k tokens
    let policy = CompactionPolicy::for_window(16_000);
    let system = 500;
    assert!(needs_compaction(&msgs, system, &policy));
    let (f, seen) = recording(|i, _| Ok(format!("Part {i}: chapters checked, all agree.")));
    let out = block_on(compact(&msgs, system, &policy, f));

    assert_eq!(out.method, CompactionMethod::Summary, "{:?}", out.details);
    assert_eq!(out.first_kept, split_point(&msgs, &policy));
    assert!(out.first_kept > 0 && out.first_kept < msgs.len());
    let summary = out.summary.clone().unwrap();
    assert_eq!(out.messages[0], summary_message(&summary));
    match &out.messages[0] {
        Message::User { text } => assert!(text.starts_with(SUMMARY_OPEN)),
        other => panic!("summary is not a user message: {other:?}"),
    }
    assert_eq!(&out.messages[1..], &msgs[out.first_kept..]);
    assert_eq!(
        out.messages
            .iter()
            .filter(|m| matches!(m, Message::User { text } if text.contains(SUMMARY_OPEN)))
            .count(),
        1
    );
    // Every chunk summary made it, in order.
    let requests = seen.lock().unwrap().len();
    assert_eq!(out.details.summary_requests, requests);
    assert!(requests >= 2, "the old part should need several chunks");
    let mut at = 0;
    for i in 0..requests {
        let pos = summary[at..]
            .find(&format!("Part {i}:"))
            .unwrap_or_else(|| panic!("part {i} missing or out of order in {summary}"));
        at += pos;
    }
    // Everything old was in some request; nothing recent was.
    let all: String = seen.lock().unwrap().concat();
    assert!(all.contains("Turn 0: check chapter 0"));
    assert!(!all.contains("Turn 11: check chapter 11"));
    assert!(out.tokens_after <= out.budget);
    assert_eq!(out.tokens_after, estimate_total(&out.messages));
    assert_eq!(out.tokens_before, estimate_total(&msgs));
    assert!(out.tokens_after < out.tokens_before);
}

#[test]
fn a_megabyte_tool_output_is_summarised_in_bounded_chunks() {
    let huge: String = (0..40_000)
        .map(|i| format!("line {i:06} of the export\n"))
        .collect();
    assert!(huge.len() >= 1_000_000);
    let mut msgs = vec![
        user("Export the whole world timeline."),
        calls("Exporting.", &["big"]),
        result("big", huge),
    ];
    msgs.extend(session(2, 2_000));
    let policy = CompactionPolicy::for_window(128_000);
    assert_eq!(policy.chunk_tokens, 16_000);
    let (f, seen) = recording(|i, _| Ok(format!("[{i}] part of the timeline export.")));
    let out = block_on(compact(&msgs, 3_000, &policy, f));

    let seen = seen.lock().unwrap();
    assert!(
        seen.len() >= 1_000_000 / (policy.chunk_tokens * 4),
        "only {} requests",
        seen.len()
    );
    for (i, r) in seen.iter().enumerate() {
        assert!(
            estimate_text_tokens(r) <= policy.chunk_tokens,
            "request {i} is {} tokens",
            estimate_text_tokens(r)
        );
    }
    // The whole output was read: first, middle and last lines each reached the summarizer.
    for line in ["line 000000 ", "line 020000 ", "line 039999 "] {
        assert!(seen.iter().any(|r| r.contains(line)), "{line} never sent");
    }
    assert_eq!(out.method, CompactionMethod::Summary);
    assert_eq!(out.first_kept, 3);
    assert_eq!(&out.messages[1..], &msgs[3..]);
    assert!(!out
        .messages
        .iter()
        .any(|m| matches!(m, Message::ToolResult { call_id, .. } if call_id == "big")));
    assert!(out.tokens_after <= out.budget);
    assert!(out.tokens_before > 250_000 && out.tokens_after < 30_000);
}

#[test]
fn summaries_of_summaries_when_the_first_pass_is_still_too_big() {
    let msgs = session(20, 4_000); // ~ 40 k tokens against an 8 k window
    let policy = CompactionPolicy::for_window(8_000);
    let wordy =
        "The agent read the chapter and the lorebook entry and found them consistent. ".repeat(20); // ~ 1.5 kB, ~ 390 tokens each
    let (f, seen) = recording(move |_, req| {
        if req.starts_with("<summaries of") {
            Ok("Merged: chapters checked against the lorebook; all agree.".into())
        } else {
            Ok(wordy.clone())
        }
    });
    let out = block_on(compact(&msgs, 200, &policy, f));

    let seen = seen.lock().unwrap();
    let reduce = seen
        .iter()
        .filter(|r| r.starts_with("<summaries of"))
        .count();
    assert!(reduce >= 1, "no summary of summaries was asked for");
    assert!(out.details.reduce_rounds >= 1);
    for r in seen.iter() {
        assert!(estimate_text_tokens(r) <= policy.chunk_tokens);
    }
    // The reduce requests carry the chunk summaries, not the transcript.
    assert!(seen
        .iter()
        .filter(|r| r.starts_with("<summaries of"))
        .all(|r| r.contains("found them consistent") && !r.contains("[tool result")));
    assert_eq!(out.method, CompactionMethod::Summary, "{:?}", out.details);
    let summary = out.summary.clone().unwrap();
    assert!(summary.starts_with("Merged:"));
    assert!(!summary.contains("found them consistent"));
    assert_eq!(
        summary.matches("Merged:").count(),
        reduce,
        "one merged summary per group of the last round"
    );
    assert!(out.tokens_after <= out.budget);
    assert_recent_verbatim(&msgs, &out);
}

#[test]
fn a_summarizer_that_does_not_compress_is_clipped_to_fit() {
    let msgs = session(30, 4_000);
    let policy = CompactionPolicy::for_window(8_000);
    // Echoes its input: summaries never shrink.
    let (f, seen) = recording(|_, req| Ok(req.to_string()));
    let out = block_on(compact(&msgs, 100, &policy, f));
    assert_eq!(out.method, CompactionMethod::SummaryAndDropped);
    assert!(out.details.summary_clipped);
    assert!(
        out.tokens_after <= out.budget,
        "{} > {}",
        out.tokens_after,
        out.budget
    );
    assert!(out.summary.as_deref().unwrap().contains("clipped"));
    for r in seen.lock().unwrap().iter() {
        assert!(estimate_text_tokens(r) <= policy.chunk_tokens);
    }
    assert_recent_verbatim(&msgs, &out);
}

// ---------------------------------------------------------------------------------------------
// Fallback
// ---------------------------------------------------------------------------------------------

#[test]
fn failing_summarizer_drops_oldest_tool_outputs_and_fits() {
    let msgs = session(10, 4_000); // tool outputs dominate
    let policy = CompactionPolicy::for_window(16_000);
    let (f, seen) = recording(|_, _| Err("model overloaded".into()));
    let out = block_on(compact(&msgs, 500, &policy, f));

    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "gives up after the first failure"
    );
    assert_eq!(out.method, CompactionMethod::DroppedToolOutputs);
    assert_eq!(out.summary, None);
    assert_eq!(
        out.details.summary_error.as_deref(),
        Some("model overloaded")
    );
    assert!(
        out.tokens_after <= out.budget,
        "{} > {}",
        out.tokens_after,
        out.budget
    );
    assert!(out.details.tool_outputs_dropped > 0);
    assert_eq!(
        out.details.messages_dropped, 0,
        "blanking outputs was enough"
    );
    assert_eq!(out.messages.len(), msgs.len(), "no message removed");
    assert_pairs_consistent(&out.messages);
    assert_recent_verbatim(&msgs, &out);

    // The oldest outputs went first: once one is kept, no later old one is dropped.
    let old = &out.messages[..out.first_kept];
    let dropped: Vec<bool> = old
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult { content, .. } => Some(content == DROPPED_TOOL_OUTPUT),
            _ => None,
        })
        .collect();
    assert_eq!(
        dropped.iter().filter(|d| **d).count(),
        out.details.tool_outputs_dropped
    );
    let first_kept_output = dropped.iter().position(|d| !d).unwrap_or(dropped.len());
    assert!(
        dropped[first_kept_output..].iter().all(|d| !d),
        "{dropped:?}"
    );
    // Everything else in the old part is untouched.
    for (a, b) in old.iter().zip(&msgs[..out.first_kept]) {
        if !matches!(a, Message::ToolResult { content, .. } if content == DROPPED_TOOL_OUTPUT) {
            assert_eq!(a, b);
        }
    }
}

#[test]
fn when_dropping_outputs_is_not_enough_oldest_whole_turns_go() {
    // Long assistant prose, short tool outputs: blanking outputs cannot make room.
    let mut msgs = Vec::new();
    for t in 0..20 {
        let id = format!("c{t}");
        msgs.push(user(&format!("Draft scene {t}.")));
        msgs.push(calls(&"Drafting the scene at length. ".repeat(60), &[&id]));
        msgs.push(result(&id, format!("saved scene {t} ").repeat(20)));
    }
    let policy = CompactionPolicy::for_window(12_000);
    let out = block_on(compact(&msgs, 0, &policy, |_: String| async {
        Err::<String, String>("no summarizer model".into())
    }));
    assert_eq!(out.method, CompactionMethod::DroppedToolOutputs);
    assert!(out.details.messages_dropped > 0);
    assert!(out.tokens_after <= out.budget);
    assert_pairs_consistent(&out.messages);
    assert_recent_verbatim(&msgs, &out);
    match &out.messages[0] {
        Message::User { text } => assert!(
            text.contains(&format!(
                "{} earlier messages were dropped",
                out.details.messages_dropped
            )),
            "{text}"
        ),
        other => panic!("expected the dropped-messages marker first, got {other:?}"),
    }
    // What is left of the old part is its newest turns, whole.
    let survivors = out.messages.len() - 1 - (msgs.len() - out.first_kept);
    assert_eq!(out.details.messages_dropped + survivors, out.first_kept);
    assert!(!out
        .messages
        .iter()
        .any(|m| matches!(m, Message::User { text } if text == "Draft scene 0.")));
}

#[test]
fn a_failure_part_way_keeps_the_summaries_written_so_far() {
    let msgs = session(12, 3_000);
    let policy = CompactionPolicy::for_window(16_000);
    let (f, seen) = recording(|i, _| {
        if i < 2 {
            Ok(format!("Summary {i}."))
        } else {
            Err("rate limited".into())
        }
    });
    let out = block_on(compact(&msgs, 500, &policy, f));
    assert_eq!(seen.lock().unwrap().len(), 3);
    let summary = out
        .summary
        .clone()
        .expect("the first two summaries are kept");
    assert_eq!(summary, "Summary 0.\n\nSummary 1.");
    assert!(out.details.remainder_from.is_some());
    assert!(matches!(
        out.method,
        CompactionMethod::Summary | CompactionMethod::SummaryAndDropped
    ));
    assert!(out.tokens_after <= out.budget);
    assert_pairs_consistent(&out.messages);
    assert_recent_verbatim(&msgs, &out);
    assert_eq!(out.messages[0], summary_message(&summary));
}

#[test]
fn force_compact_summarises_even_under_the_threshold() {
    let msgs = session(8, 2_000);
    let policy = CompactionPolicy {
        keep_recent: 1_000,
        ..CompactionPolicy::for_window(128_000)
    };
    assert!(!needs_compaction(&msgs, 0, &policy));
    let (f, _) = recording(|_, _| Ok("Earlier: chapters 0 to 6 checked.".into()));
    let out = block_on(force_compact(&msgs, 0, &policy, f));
    assert_eq!(out.method, CompactionMethod::Summary);
    assert_eq!(out.messages.len(), 1 + msgs.len() - out.first_kept);
}

// ---------------------------------------------------------------------------------------------
// summarize_with on a real provider
// ---------------------------------------------------------------------------------------------

/// Passes requests to a `ReplayProvider` and keeps a copy of each.
struct Recorder {
    inner: ReplayProvider,
    requests: Mutex<Vec<ModelRequest>>,
}

impl Provider for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }

    fn stream(&self, req: ModelRequest) -> BoxStream<'static, Result<ModelEvent, ProviderError>> {
        self.requests.lock().unwrap().push(req.clone());
        self.inner.stream(req)
    }
}

fn summarizer_prompt() -> String {
    let (profiles, _) = nbook::engine::profiles::Profiles::load(&[]);
    profiles
        .get("summarizer")
        .expect("built-in summarizer")
        .prompt
        .clone()
}

#[tokio::test]
async fn summarize_with_a_replay_provider() {
    let script = r#"{"text": "The author asked for a continuity pass; chapters 0-5 agree with the lorebook."}"#;
    let provider = Arc::new(Recorder {
        inner: ReplayProvider::parse(script, "summary.jsonl").unwrap(),
        requests: Mutex::default(),
    });
    let prompt = summarizer_prompt();
    let summarize = summarize_with(provider.clone(), prompt.clone());

    let msgs = session(12, 1_500);
    // One chunk holds the whole old part, so one scripted reply is enough.
    let policy = CompactionPolicy {
        keep_recent: 1_500,
        chunk_tokens: 16_000,
        ..CompactionPolicy::for_window(10_000)
    };
    assert!(needs_compaction(&msgs, 0, &policy));
    let out = compact(&msgs, 0, &policy, summarize).await;

    assert_eq!(out.method, CompactionMethod::Summary, "{:?}", out.details);
    assert_eq!(
        out.summary.as_deref(),
        Some("The author asked for a continuity pass; chapters 0-5 agree with the lorebook.")
    );
    assert_eq!(provider.inner.turns_left(), 0);
    let requests = provider.requests.lock().unwrap();
    assert_eq!(requests.len(), 1);
    let req = &requests[0];
    assert_eq!(req.system, compaction_system_prompt(&prompt));
    assert!(req.system.starts_with("# Summarizer"));
    assert!(req.system.contains("Do not call tools"));
    assert!(req.tools.is_empty());
    assert_eq!(req.messages.len(), 1);
    match &req.messages[0] {
        Message::User { text } => {
            assert!(text.starts_with("<earlier conversation, part 1 of 1"));
            assert!(text.contains("Turn 0: check chapter 0"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(&out.messages[1..], &msgs[out.first_kept..]);
}

#[tokio::test]
async fn summarize_with_reports_an_empty_reply_as_an_error() {
    // One scripted turn: the second request gets the empty "script over" reply.
    let provider: Arc<dyn Provider> =
        Arc::new(ReplayProvider::parse(r#"{"text": "First part: setup."}"#, "s").unwrap());
    let summarize = summarize_with(provider, summarizer_prompt());
    assert_eq!(summarize("a".into()).await.unwrap(), "First part: setup.");
    let err = summarize("b".into()).await.unwrap_err();
    assert!(
        matches!(&err, nbook::agent::compact::SummaryError::Empty { provider } if !provider.is_empty()),
        "{err:?}"
    );
    assert!(err.to_string().contains("no summary text"), "{err}");

    // Inside compact: the first chunk is summarised, the rest falls back to dropping.
    let provider: Arc<dyn Provider> =
        Arc::new(ReplayProvider::parse(r#"{"text": "First part: setup."}"#, "s").unwrap());
    let msgs = session(12, 3_000);
    let policy = CompactionPolicy::for_window(16_000);
    let out = compact(&msgs, 0, &policy, summarize_with(provider, String::new())).await;
    assert_eq!(out.summary.as_deref(), Some("First part: setup."));
    assert!(out.details.summary_error.is_some());
    assert!(out.tokens_after <= out.budget);
    assert_pairs_consistent(&out.messages);
    assert_recent_verbatim(&msgs, &out);
}

// ---------------------------------------------------------------------------------------------
// Invariants over random transcripts and summarizers
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Behaviour {
    Short,
    Fails,
    FailsAfter(usize),
    Echo,
    Empty,
}

fn transcript() -> impl Strategy<Value = Vec<Message>> {
    let turn = (
        0usize..2_000,
        0usize..4_000,
        prop::collection::vec(0usize..30_000, 0..4),
    );
    prop::collection::vec(turn, 1..25).prop_map(|turns| {
        let mut out = Vec::new();
        for (t, (u, a, results)) in turns.into_iter().enumerate() {
            out.push(user(&"u".repeat(u)));
            let ids: Vec<String> = (0..results.len()).map(|j| format!("c{t}-{j}")).collect();
            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            out.push(calls(&"a ".repeat(a / 2), &refs));
            for (id, len) in ids.iter().zip(results) {
                out.push(result(id, "r".repeat(len)));
            }
        }
        out
    })
}

fn behaviour() -> impl Strategy<Value = Behaviour> {
    prop_oneof![
        Just(Behaviour::Short),
        Just(Behaviour::Fails),
        (0usize..5).prop_map(Behaviour::FailsAfter),
        Just(Behaviour::Echo),
        Just(Behaviour::Empty),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn compaction_invariants(
        msgs in transcript(),
        window in 1_000usize..60_000,
        system in 0usize..3_000,
        how in behaviour(),
    ) {
        let policy = CompactionPolicy::for_window(window);
        let seen: Seen = Arc::default();
        let log = seen.clone();
        let summarize = move |req: String| -> BoxFuture<'static, Result<String, String>> {
            let mut log = log.lock().unwrap();
            let i = log.len();
            log.push(req.clone());
            let answer = match &how {
                Behaviour::Short => Ok(format!("summary {i}")),
                Behaviour::Fails => Err("down".to_string()),
                Behaviour::FailsAfter(n) if i >= *n => Err("down".to_string()),
                Behaviour::FailsAfter(_) => Ok(format!("summary {i}")),
                Behaviour::Echo => Ok(req),
                Behaviour::Empty => Ok("  ".to_string()),
            };
            async move { answer }.boxed()
        };
        let out = block_on(compact(&msgs, system, &policy, summarize));

        prop_assert_eq!(out.tokens_after, estimate_total(&out.messages));
        prop_assert_eq!(out.budget, policy.budget(system));
        let kept_tokens = estimate_total(&msgs[out.first_kept..]);
        prop_assert!(
            out.tokens_after <= out.budget || kept_tokens > out.budget,
            "{} > budget {} with kept {}", out.tokens_after, out.budget, kept_tokens
        );
        if out.changed() {
            prop_assert!(out.first_kept > 0);
            let first_is_result = matches!(msgs.get(out.first_kept), Some(Message::ToolResult { .. }));
            prop_assert!(!first_is_result);
        } else {
            prop_assert_eq!(&out.messages, &msgs);
        }
        assert_pairs_consistent(&out.messages);
        assert_recent_verbatim(&msgs, &out);
        for r in seen.lock().unwrap().iter() {
            prop_assert!(estimate_text_tokens(r) <= policy.chunk_tokens);
        }
        if let Some(s) = &out.summary {
            prop_assert_eq!(&out.messages[0], &summary_message(s));
        }
        prop_assert!(estimate_tokens(&summary_message("")) < 32);
    }
}
