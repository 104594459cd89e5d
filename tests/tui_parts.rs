//! Deciding a call in parts from the Approvals pane: `x` keeps ⇄ drops the hunk at the top of
//! the preview, `X` the whole file; the preview marks each file and hunk (✓ kept, ✗ dropped,
//! ◐ partly kept) under a "2 of 3 files, 4 of 6 hunks" line; `y` asks for an optional reason
//! and sends `Decision::ApproveParts` with the kept part ids; dropping everything rejects.

mod tui_support;

use nbook::engine::parts::parts_digest;
use nbook::engine::{ChangeKind, Decision, FileChange, Mode, PendingCall, PreviewBody};
use nbook::tui::action::Effect;
use nbook::tui::app::{AppState, Pane};
use nbook::tui::approvals::preview::Item;
use nbook::tui::approvals::view::request_items;
use nbook::tui::input::Overlay;
use tui_support::*;

/// A chapter edited in three places far apart, a new note, and a second chapter.
fn parts_call() -> PendingCall {
    let chapter = "--- a/manuscript/ch1.md\n+++ b/manuscript/ch1.md\n@@ -1,4 +1,4 @@\n # Chapter One\n-The harbour was quiet.\n+The harbour was still.\n Mira counted the boats.\n The gulls had gone.\n@@ -20,3 +20,3 @@\n She waited.\n-The tide came in slowly.\n+The tide came in fast.\n Night fell.\n@@ -40,2 +40,3 @@\n Mira left at dawn.\n+She did not look back.\n".to_string();
    let changes = vec![
        FileChange {
            path: "manuscript/ch1.md".into(),
            kind: ChangeKind::Update,
            move_to: None,
            diff: chapter,
            added: 3,
            removed: 2,
        },
        FileChange {
            path: "notes/mira.md".into(),
            kind: ChangeKind::Add,
            move_to: None,
            diff: "--- /dev/null\n+++ b/notes/mira.md\n@@ -0,0 +1,1 @@\n+A harbour pilot.\n".into(),
            added: 1,
            removed: 0,
        },
        FileChange {
            path: "manuscript/ch2.md".into(),
            kind: ChangeKind::Update,
            move_to: None,
            diff: "--- a/manuscript/ch2.md\n+++ b/manuscript/ch2.md\n@@ -1,2 +1,2 @@\n # Chapter Two\n-Rain.\n+Rain, again.\n".into(),
            added: 1,
            removed: 1,
        },
    ];
    let mut c = pending(
        "call-parts",
        "apply_patch",
        PreviewBody::Files { changes },
        "Patch 3 files (+5 -3)",
        true,
        Mode::Normal,
    );
    c.parts = true;
    c
}

fn app_with(call: PendingCall, w: u16, h: u16) -> AppState {
    let (mut app, _) = empty_app_with(w, h, Vec::new(), vec![call]);
    app.focus = Pane::Approvals;
    app.last_typed = None;
    app
}

/// The preview's first item of file `file` (its diff summary): scrolling there puts the
/// file's first hunk at the top.
fn scroll_to_file(app: &mut AppState, file: usize, width: u16) {
    let call = app.approvals.selected_call().unwrap().clone();
    let items = request_items(app, &call, width);
    let i = items
        .iter()
        .position(|it| matches!(it, Item::Diff { file: f, .. } if *f == file))
        .unwrap();
    app.approvals.preview_scroll = i;
}

fn draw(app: &mut AppState, w: u16, h: u16) -> ratatui::buffer::Buffer {
    app.update(nbook::tui::action::Action::Resize(w, h));
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    t.draw(|f| nbook::tui::chrome::view(app, f)).unwrap();
    t.backend().buffer().clone()
}

/// Whether the first cell of `text` on screen is struck through.
fn crossed_out(buf: &ratatui::buffer::Buffer, text: &str) -> bool {
    let area = buf.area;
    for y in 0..area.height {
        let row: String = (0..area.width).map(|x| buf[(x, y)].symbol()).collect();
        if let Some(col) = row.find(text) {
            let x = row[..col].chars().count() as u16;
            return buf[(x, y)]
                .modifier
                .contains(ratatui::style::Modifier::CROSSED_OUT);
        }
    }
    panic!("{text:?} is not on screen");
}

fn status(app: &AppState) -> String {
    app.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

#[test]
fn marks_show_kept_and_dropped_files_and_hunks() {
    let mut app = app_with(parts_call(), 130, 44);
    let before = render(&mut app, 130, 44);
    assert!(
        before.contains("Parts: 3 of 3 files, 5 of 5 hunks all kept"),
        "{before}"
    );
    insta::assert_snapshot!("parts_all_kept_130x44", before);
    // x on the first hunk of the chapter.
    press(&mut app, "x");
    assert!(
        status(&app).contains("Dropped hunk 1 of 3 of manuscript/ch1.md"),
        "{}",
        status(&app)
    );
    // X on the second chapter drops the whole file.
    scroll_to_file(&mut app, 2, 80);
    press(&mut app, "X");
    assert!(
        status(&app).contains("Dropped manuscript/ch2.md"),
        "{}",
        status(&app)
    );
    app.approvals.preview_scroll = 0;
    let after = render(&mut app, 130, 44);
    assert!(
        after.contains("Parts: 2 of 3 files, 3 of 5 hunks kept"),
        "{after}"
    );
    assert!(
        after.contains("✗ hunk 1 of 3 · from line 1 — dropped"),
        "{after}"
    );
    assert!(after.contains("✓ hunk 2 of 3 · from line 20"), "{after}");
    assert!(after.contains("◐ manuscript/ch1.md"), "{after}");
    assert!(
        after.contains("✗ manuscript/ch2.md (+1 -1) — dropped"),
        "{after}"
    );
    insta::assert_snapshot!("parts_some_dropped_130x44", after);
    // The dropped lines are drawn dim and struck through; the kept ones are not.
    let buf = draw(&mut app, 130, 44);
    assert!(crossed_out(&buf, "The harbour was quiet."));
    assert!(crossed_out(&buf, "Rain, again."));
    assert!(!crossed_out(&buf, "The tide came in fast."));
    // x again keeps the hunk again.
    press(&mut app, "x");
    assert!(
        status(&app).contains("Kept hunk 1 of 3"),
        "{}",
        status(&app)
    );
}

#[test]
fn y_asks_why_then_sends_the_kept_parts() {
    let call = parts_call();
    let digest = parts_digest(&call.preview);
    let mut app = app_with(call, 130, 44);
    render(&mut app, 130, 44);
    scroll_to_file(&mut app, 1, 80);
    press(&mut app, "x");
    assert!(
        status(&app).contains("Dropped notes/mira.md"),
        "{}",
        status(&app)
    );
    press(&mut app, "y");
    assert!(matches!(
        app.overlay,
        Some(Overlay::RejectReason { parts: Some(_), .. })
    ));
    let prompt = render(&mut app, 130, 44);
    assert!(
        prompt.contains("Apply only the kept parts of apply_patch"),
        "{prompt}"
    );
    insta::assert_snapshot!("parts_reason_prompt_130x44", prompt);
    app.last_typed = None;
    for c in "no notes yet".chars() {
        let key = if c == ' ' {
            "<Space>".to_string()
        } else {
            c.to_string()
        };
        press(&mut app, &key);
    }
    let fx = press(&mut app, "<Enter>");
    let decision = fx.iter().find_map(|e| match e {
        Effect::Decide { decision, .. } => Some(decision.clone()),
        _ => None,
    });
    match decision {
        Some(Decision::ApproveParts { selection }) => {
            assert_eq!(selection.preview, digest);
            assert_eq!(selection.keep, ["f0h0", "f0h1", "f0h2", "f2h0"]);
            assert_eq!(selection.reason.as_deref(), Some("no notes yet"));
        }
        other => panic!("expected ApproveParts, got {other:?} from {fx:?}"),
    }
    assert!(app.approvals.is_empty(), "the call left the list");
    assert!(status(&app).contains("approved in part (2 of 3 files, 4 of 5 hunks)"));
}

#[test]
fn dropping_every_part_makes_y_a_reject_and_other_calls_refuse_marks() {
    let mut app = app_with(parts_call(), 130, 44);
    render(&mut app, 130, 44);
    for f in 0..3 {
        scroll_to_file(&mut app, f, 80);
        press(&mut app, "X");
    }
    press(&mut app, "y");
    assert!(matches!(
        app.overlay,
        Some(Overlay::RejectReason { parts: None, .. })
    ));
    assert!(
        status(&app).contains("rejects the call"),
        "{}",
        status(&app)
    );
    let fx = press(&mut app, "<Enter>");
    assert!(
        fx.iter().any(|e| matches!(
            e,
            Effect::Decide {
                decision: Decision::Reject { .. },
                ..
            }
        )),
        "{fx:?}"
    );
    // A call whose tool does not declare parts shows no marks and refuses x.
    let mut app = app_with(write_call(), 130, 44);
    let screen = render(&mut app, 130, 44);
    assert!(!screen.contains("Parts:"), "{screen}");
    press(&mut app, "x");
    assert!(
        status(&app).contains("cannot be approved in parts"),
        "{}",
        status(&app)
    );
}

#[test]
fn the_transcript_says_a_call_was_approved_in_part() {
    use nbook::engine::{LogLine, LogRecord, SessionState, ToolCall};
    use nbook::tui::action::Action;
    let call = parts_call();
    let (mut app, _) = empty_app_with(
        120,
        30,
        vec![session(
            "1",
            "leader.default",
            Mode::Normal,
            SessionState::Idle,
            None,
        )],
        Vec::new(),
    );
    app.focus = Pane::Sessions;
    let fx = press(&mut app, "r");
    let Some(Effect::LoadSessionLog { ticket, .. }) = fx.first() else {
        panic!("{fx:?}")
    };
    let line = |record| LogLine {
        ts: T0.into(),
        record,
    };
    let lines = vec![
        line(LogRecord::Header {
            session_id: "1".into(),
            profile: "leader.default".into(),
            mode: Mode::Normal,
            title: "Chapter one".into(),
            parent: None,
        }),
        line(LogRecord::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "c9".into(),
                name: "apply_patch".into(),
                arguments: call.args.clone(),
            }],
        }),
        line(LogRecord::ApprovalRequested {
            approval_id: "ap-9".into(),
            call_id: "c9".into(),
            tool: "apply_patch".into(),
            args: call.args.clone(),
            preview: call.preview.clone(),
            mode: Mode::Normal,
        }),
        line(LogRecord::ApprovalResolved {
            approval_id: "ap-9".into(),
            call_id: "c9".into(),
            decision: "approve_parts".into(),
            by: "author".into(),
            reason: Some("no notes yet".into()),
            edited_args: None,
        }),
    ];
    app.update(Action::SessionLogLoaded {
        ticket: *ticket,
        session_id: "1".into(),
        result: Ok(lines),
    });
    let screen = render(&mut app, 120, 30);
    assert!(
        screen.contains("approved in part by author; the rest rejected: no notes yet"),
        "{screen}"
    );
    insta::assert_snapshot!("parts_transcript_120x30", screen);
}

#[test]
fn side_by_side_keeps_the_marks() {
    let mut app = app_with(parts_call(), 160, 44);
    render(&mut app, 160, 44);
    press(&mut app, "x");
    press(&mut app, "s");
    let screen = render(&mut app, 160, 44);
    assert!(
        screen.contains("✗ hunk 1 of 3 · from line 1 — dropped"),
        "{screen}"
    );
    assert!(screen.contains("│"), "{screen}");
    insta::assert_snapshot!("parts_side_by_side_160x44", screen);
}
