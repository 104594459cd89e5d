//! After an approval, the transcript's tool-call expansion shows the change the author was
//! asked about — the prose diff of each file, word changes and all — instead of the raw JSON
//! arguments with their `\n` escapes; a call with no preview still shows its arguments.

mod tui_support;

use nbook::engine::{LogLine, LogRecord, ToolCall};
use nbook::tui::action::{Action, Command, Effect};
use nbook::tui::app::{AppState, Pane};
use serde_json::json;
use tui_support::*;

fn line(record: LogRecord) -> LogLine {
    LogLine {
        ts: "2026-03-01T10:00:00Z".into(),
        record,
    }
}

/// Session 1's log: the approved patch of `patch_call()`, and a read (no preview).
fn log() -> Vec<LogLine> {
    let call = patch_call();
    vec![
        line(LogRecord::Header {
            session_id: "1".into(),
            profile: "leader.default".into(),
            mode: nbook::engine::Mode::Normal,
            title: "Chapter one".into(),
            parent: None,
        }),
        line(LogRecord::Assistant {
            text: String::new(),
            tool_calls: vec![
                ToolCall {
                    id: "c1".into(),
                    name: "apply_patch".into(),
                    arguments: call.args.clone(),
                },
                ToolCall {
                    id: "c2".into(),
                    name: "read".into(),
                    arguments: json!({"path": "notes/a.md"}),
                },
            ],
        }),
        line(LogRecord::ApprovalRequested {
            approval_id: "ap-1".into(),
            call_id: "c1".into(),
            tool: "apply_patch".into(),
            args: call.args.clone(),
            preview: call.preview.clone(),
            mode: nbook::engine::Mode::Normal,
        }),
        line(LogRecord::ApprovalResolved {
            approval_id: "ap-1".into(),
            call_id: "c1".into(),
            decision: "approve".into(),
            by: "author".into(),
            reason: None,
            edited_args: None,
        }),
        line(LogRecord::ToolResult {
            call_id: "c1".into(),
            tool: "apply_patch".into(),
            ok: true,
            content: "Success. Updated the following files:\nM manuscript/001-volume/001-chapter/index.md".into(),
            details: None,
        }),
        line(LogRecord::ToolResult {
            call_id: "c2".into(),
            tool: "read".into(),
            ok: true,
            content: "a note".into(),
            details: None,
        }),
    ]
}

fn app(w: u16, h: u16) -> AppState {
    let (mut app, _) = full_app(w, h);
    app.focus = Pane::Sessions;
    let fx = app.update(Action::Cmd(Command::Refresh));
    let ticket = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadSessionLog { ticket, .. } => Some(*ticket),
            _ => None,
        })
        .expect("the transcript load");
    app.update(Action::SessionLogLoaded {
        ticket,
        session_id: "1".into(),
        result: Ok(log()),
    });
    app
}

#[test]
fn an_approved_call_expands_to_its_prose_diff_not_json() {
    let (w, h) = (120, 40);
    let mut a = app(w, h);
    // Into the transcript: the patch is the last entry (moved there by its approval); expand it.
    press(&mut a, "l <Enter>");
    a.status = None;
    let s = render(&mut a, w, h);
    assert!(s.contains("change: Edit 3 files"), "{s}");
    assert!(s.contains("and the gulls had gone."), "{s}");
    assert!(!s.contains("\\n"), "raw JSON escapes in the expansion: {s}");
    insta::assert_snapshot!("transcript_expanded_change", s);
}
