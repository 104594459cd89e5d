//! Screen defects of issue #14 item 8, each reproduced through AppState / update / render:
//! the transcript's "↓ N more" banner, the transcript scrolled to its top, `G` in the
//! full-screen request.

mod tui_support;

use nbook::engine::{LogLine, LogRecord, Mode};
use nbook::tui::action::{Action, Command, Effect};
use nbook::tui::app::{AppState, Pane};
use tui_support::*;

fn line(record: LogRecord) -> LogLine {
    LogLine {
        ts: T0.into(),
        record,
    }
}

/// A session log of `n` exchanges, each a one-line question and a one-line answer, numbered
/// so a test can tell which one is on screen.
fn long_log(n: usize) -> Vec<LogLine> {
    let mut lines = vec![line(LogRecord::Header {
        session_id: "1".into(),
        profile: "leader.default".into(),
        mode: Mode::Normal,
        title: "Chapter one".into(),
        parent: None,
    })];
    for i in 1..=n {
        lines.push(line(LogRecord::User {
            text: format!("question {i:02}"),
        }));
        lines.push(line(LogRecord::Assistant {
            text: format!("answer {i:02}"),
            tool_calls: vec![],
        }));
    }
    lines
}

/// The fixture app on the Sessions pane with session 1's transcript replaced by `log`.
fn transcript_app(w: u16, h: u16, log: Vec<LogLine>) -> AppState {
    let (mut app, _) = full_app(w, h);
    app.focus = Pane::Sessions;
    let fx = app.update(Action::Cmd(Command::Refresh));
    let ticket = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadSessionLog { ticket, .. } => Some(*ticket),
            _ => None,
        })
        .unwrap();
    app.update(Action::SessionLogLoaded {
        ticket,
        session_id: "1".into(),
        result: Ok(log),
    });
    app.status = None;
    app
}

fn rows(screen: &str) -> Vec<&str> {
    screen.lines().collect()
}

#[test]
fn the_more_banner_sits_below_the_selected_row() {
    let mut app = transcript_app(100, 30, long_log(30));
    // Into the transcript, five entries up: "question 28" is selected and anchors the bottom.
    press(&mut app, "l k k k k k");
    let screen = render(&mut app, 100, 30);
    let rows = rows(&screen);
    let selected = rows
        .iter()
        .position(|r| r.contains("question 28"))
        .unwrap_or_else(|| panic!("the selected row is hidden:\n{screen}"));
    let banner = rows
        .iter()
        .position(|r| r.contains("↓ 5 more"))
        .unwrap_or_else(|| panic!("no banner:\n{screen}"));
    assert_eq!(banner, selected + 1, "{screen}");
    insta::assert_snapshot!("transcript_more_banner_100x30", screen);
}

#[test]
fn scrolled_to_the_top_the_transcript_fills_the_screen_from_its_first_entry() {
    let mut app = transcript_app(100, 30, long_log(30));
    press(&mut app, "l g");
    assert_eq!(app.sessions.cursor, 0);
    let screen = render(&mut app, 100, 30);
    let rows = rows(&screen);
    let first = rows
        .iter()
        .position(|r| r.contains("question 01"))
        .unwrap_or_else(|| panic!("the first entry is not shown:\n{screen}"));
    // The entries after it follow on the next rows instead of a blank screen above it.
    assert!(rows[first + 1].contains("answer 01"), "{screen}");
    assert!(screen.contains("question 05"), "{screen}");
    // The first entry is at the top of the transcript body, not at its bottom.
    assert!(first <= 4, "{screen}");
    insta::assert_snapshot!("transcript_top_100x30", screen);
    // Paging up from the top changes nothing, and the banner counts what is below the screen.
    press(&mut app, "<C-u>");
    let again = render(&mut app, 100, 30);
    assert_eq!(again, screen);
}

#[test]
fn a_short_transcript_scrolled_up_shows_every_entry_and_no_banner() {
    let mut app = transcript_app(100, 30, long_log(3));
    press(&mut app, "l k k");
    let screen = render(&mut app, 100, 30);
    for i in 1..=3 {
        assert!(screen.contains(&format!("answer {i:02}")), "{screen}");
    }
    assert!(!screen.contains("more —"), "{screen}");
}

/// The full-screen request of the patch call, its option rows at the end.
fn request_app(w: u16, h: u16) -> AppState {
    let (mut app, _) = full_app(w, h);
    app.focus = Pane::Approvals;
    press(&mut app, "<Enter>");
    assert!(matches!(
        app.overlay,
        Some(nbook::tui::input::Overlay::Detail { .. })
    ));
    app
}

#[test]
fn g_in_the_request_view_stops_at_the_last_screenful() {
    let mut app = request_app(80, 24);
    press(&mut app, "G");
    let screen = render(&mut app, 80, 24);
    let rows = rows(&screen);
    // The bottom border is the last row but one (the status bar is below it); the row above
    // it holds the last option, and the first row inside the frame is not blank.
    let bottom = rows.iter().rposition(|r| r.contains('╰')).unwrap();
    let inside = |r: &str| r.chars().skip(2).take(76).collect::<String>();
    assert!(
        !inside(rows[bottom - 1]).trim().is_empty(),
        "the last row is blank:\n{screen}"
    );
    let top = rows.iter().position(|r| r.contains('╭')).unwrap();
    assert!(
        !inside(rows[top + 2]).trim().is_empty(),
        "scrolled past the end:\n{screen}"
    );
    insta::assert_snapshot!("request_bottom_80x24", screen);
    // j at the bottom stays there.
    press(&mut app, "j");
    assert_eq!(render(&mut app, 80, 24), screen);
}

// Status bar and the message log.

#[test]
fn a_long_status_message_keeps_the_totals_and_help_visible() {
    let (mut app, _) = full_app(100, 30);
    app.error(
        "Cannot save manuscript/001-volume/001-chapter/index.md: the disk is full, and the journal could not be written either; nothing was changed",
    );
    let screen = render(&mut app, 100, 30);
    let bar = screen.lines().last().unwrap();
    assert!(bar.contains("project 31.0k tok · $0.0842"), "{bar}");
    assert!(bar.contains("? help"), "{bar}");
    assert!(bar.contains("Cannot save"), "{bar}");
    assert!(bar.contains('…'), "the message is cut with …: {bar}");
    insta::assert_snapshot!("status_long_message_100x30", screen);
}

#[test]
fn m_lists_every_status_message_newest_first_and_esc_closes() {
    let (mut app, clock) = full_app(100, 30);
    app.info("first message");
    clock.advance(std::time::Duration::from_secs(65));
    app.error("second message, an error");
    clock.advance(std::time::Duration::from_secs(2));
    app.message("third message", nbook::tui::app::MsgKind::Ok);
    press(&mut app, "M");
    assert!(
        matches!(
            app.overlay,
            Some(nbook::tui::input::Overlay::Messages { .. })
        ),
        "{:?}",
        app.overlay
    );
    let screen = render(&mut app, 100, 30);
    let third = screen.find("third message").expect("third shown");
    let second = screen.find("second message").expect("second shown");
    let first = screen.find("first message").expect("first shown");
    assert!(third < second && second < first, "newest first:\n{screen}");
    assert!(screen.contains("10:01:49"), "with its time:\n{screen}");
    assert!(screen.contains("error"), "with its kind:\n{screen}");
    insta::assert_snapshot!("messages_overlay_100x30", screen);
    press(&mut app, "<Esc>");
    assert!(app.overlay.is_none());
}

#[test]
fn the_message_log_scrolls_and_stops_at_its_end() {
    let (mut app, _) = full_app(80, 24);
    for i in 1..=60 {
        app.info(format!("message {i:02}"));
    }
    press(&mut app, "M");
    let top = render(&mut app, 80, 24);
    assert!(top.contains("message 60"), "{top}");
    press(&mut app, "G");
    let bottom = render(&mut app, 80, 24);
    assert!(bottom.contains("message 01"), "{bottom}");
    let above_bar = bottom.lines().rev().skip(1).collect::<Vec<_>>().join("\n");
    assert!(!above_bar.contains("message 60"), "{bottom}");
    // The oldest message is on the last row inside the frame, not followed by blank rows.
    let rows: Vec<&str> = bottom.lines().collect();
    let frame_bottom = rows.iter().rposition(|r| r.contains('╰')).unwrap();
    assert!(rows[frame_bottom - 1].contains("message 01"), "{bottom}");
    press(&mut app, "j");
    assert_eq!(render(&mut app, 80, 24), bottom);
    press(&mut app, "g");
    assert_eq!(render(&mut app, 80, 24), top);
}

#[test]
fn the_message_log_with_nothing_in_it_says_so() {
    let (mut app, _) = full_app(80, 24);
    app.messages.clear();
    press(&mut app, "M");
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("No status message yet"), "{screen}");
}

#[test]
fn the_message_log_is_in_help_and_the_palette() {
    let (mut app, _) = full_app(120, 40);
    press(&mut app, "?");
    let help = render(&mut app, 120, 40);
    assert!(help.contains("Every status message of this run"), "{help}");
    press(&mut app, "<Esc> :");
    press(&mut app, "m e s s a g e s");
    let palette = render(&mut app, 120, 40);
    assert!(
        palette.contains("Every status message of this run"),
        "{palette}"
    );
    press(&mut app, "<Enter>");
    assert!(matches!(
        app.overlay,
        Some(nbook::tui::input::Overlay::Messages { .. })
    ));
}
