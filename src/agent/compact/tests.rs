//! Estimates, policy defaults, chunk cutting, frames and the split point.

use super::assemble::clip_tail;
use super::chunks::cut_pieces;
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
