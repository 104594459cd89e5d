//! The Sessions pane while a model writes: streamed text, reasoning and a tool call being
//! prepared appear in the transcript before the reply is logged, with elapsed time and
//! tokens/s; the logged reply replaces them. Tool calls read after their approval notes, and
//! the header shows the context budget. Snapshots at 80×24 and 120×40.

mod tui_support;

use std::time::Duration;

use nbook::engine::{
    EngineEvent, LogLine, LogRecord, Mode, Preview, PreviewBody, SessionState, ToolCall,
};
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::AppState;
use nbook::tui::sessions::Entry;
use serde_json::json;
use tui_support::*;

fn line(record: LogRecord) -> LogLine {
    LogLine {
        ts: "2026-03-01T10:00:00.000+00:00".into(),
        record,
    }
}

fn running_app(w: u16, h: u16) -> (AppState, nbook::tui::clock::ManualClock) {
    let mut info = session(
        "1",
        "leader.default",
        Mode::Normal,
        SessionState::Running,
        None,
    );
    info.context_tokens = 7_400;
    info.context_window = 8_192;
    let (mut app, clock) = empty_app_with(w, h, vec![info], vec![]);
    press(&mut app, "4");
    let fx = press(&mut app, "r");
    let Some(Effect::LoadSessionLog { ticket, .. }) = fx.first() else {
        panic!("{fx:?}")
    };
    app.update(Action::SessionLogLoaded {
        ticket: *ticket,
        session_id: "1".into(),
        result: Ok(transcript().into_iter().take(2).collect()),
    });
    (app, clock)
}

fn stream(app: &mut AppState, clock: &nbook::tui::clock::ManualClock) {
    app.update(Action::Engine(EngineEvent::ReasoningDelta {
        session_id: "1".into(),
        text: "The opening drags; cut the weather.".into(),
    }));
    app.update(Action::Engine(EngineEvent::TextDelta {
        session_id: "1".into(),
        text: "The lamp was out before Ada ".into(),
    }));
    clock.advance(Duration::from_millis(2_000));
    app.update(Action::Engine(EngineEvent::TextDelta {
        session_id: "1".into(),
        text: "reached the gallery.".into(),
    }));
    app.update(Action::Engine(EngineEvent::ToolCallProgress {
        session_id: "1".into(),
        index: 0,
        name: "write".into(),
        argument_chars: 1_240,
    }));
}

#[test]
fn streamed_text_shows_before_the_reply_is_logged_and_the_log_replaces_it() {
    let (mut app, clock) = running_app(100, 30);
    stream(&mut app, &clock);
    let screen = render(&mut app, 100, 30);
    assert!(
        screen.contains("The lamp was out before Ada reached the gallery."),
        "{screen}"
    );
    assert!(screen.contains("preparing write"), "{screen}");
    assert!(screen.contains("tok/s"), "{screen}");
    app.update(Action::Engine(EngineEvent::Log {
        session_id: "1".into(),
        line: line(LogRecord::Assistant {
            text: "The lamp was out before Ada reached the gallery.".into(),
            tool_calls: vec![],
        }),
    }));
    assert!(app.sessions.live.get("1").is_none());
    let screen = render(&mut app, 100, 30);
    assert_eq!(
        screen
            .matches("The lamp was out before Ada reached the gallery.")
            .count(),
        1,
        "shown once, from the log: {screen}"
    );
    assert!(!screen.contains("the model is writing"), "{screen}");
}

#[test]
fn a_tool_call_reads_after_its_approval_notes() {
    let (mut app, _) = running_app(100, 30);
    let preview = Preview {
        summary: "Write notes.md (+1 -0)".into(),
        body: PreviewBody::Text { text: "x".into() },
        targets: vec![],
    };
    for record in [
        LogRecord::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "w1".into(),
                name: "write".into(),
                arguments: json!({"path": "notes.md", "content": "x"}),
            }],
        },
        LogRecord::ApprovalRequested {
            approval_id: "ap-1".into(),
            call_id: "w1".into(),
            tool: "write".into(),
            args: json!({"path": "notes.md", "content": "x"}),
            preview,
            mode: Mode::Normal,
        },
        LogRecord::ApprovalResolved {
            approval_id: "ap-1".into(),
            call_id: "w1".into(),
            decision: "approve".into(),
            by: "author".into(),
            reason: None,
            edited_args: None,
        },
        LogRecord::ToolResult {
            call_id: "w1".into(),
            tool: "write".into(),
            ok: true,
            content: "wrote notes.md".into(),
            details: None,
        },
    ] {
        app.update(Action::Engine(EngineEvent::Log {
            session_id: "1".into(),
            line: line(record),
        }));
    }
    let tr = app.sessions.transcript.as_ref().unwrap();
    let tail: Vec<String> = tr.entries[tr.entries.len() - 3..]
        .iter()
        .map(|e| match e {
            Entry::Note(_, text) => text.clone(),
            Entry::Tool { tool, .. } => format!("tool {tool}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        tail,
        [
            "approval requested: Write notes.md (+1 -0)",
            "approved by author",
            "tool write"
        ]
    );
}

#[test]
fn snapshot_a_reply_streaming_in_with_the_context_budget() {
    for (w, h) in [(80, 24), (120, 40)] {
        let (mut app, clock) = running_app(w, h);
        stream(&mut app, &clock);
        app.status = None;
        let screen = render(&mut app, w, h);
        insta::assert_snapshot!(format!("sessions_streaming_{w}x{h}"), screen);
    }
}
