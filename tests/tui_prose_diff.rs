//! Prose diffs in the approval preview: word-level changes inside changed lines (Latin) and
//! character-level ones (CJK), side by side and why a narrow view stays unified, the summary
//! line, and the keys that move through a preview (`]` `[` `/` `n` `N` `s`). Text snapshots
//! carry no colours, so the styles of changed words are also checked cell by cell on the
//! rendered buffer in every built-in theme.

mod tui_support;

use nbook::engine::{ChangeKind, FieldChange, FileChange, Mode, PreviewBody, RecordChange};
use nbook::tui::action::Action;
use nbook::tui::app::{AppState, Pane};
use nbook::tui::input::Overlay;
use nbook::tui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Terminal;
use serde_json::json;
use tui_support::*;

fn file_call(id: &str, path: &str, diff: &str) -> nbook::engine::PendingCall {
    let changes = vec![FileChange {
        path: path.into(),
        kind: ChangeKind::Update,
        move_to: None,
        diff: diff.into(),
        added: 1,
        removed: 1,
    }];
    pending(
        id,
        "write",
        PreviewBody::Files { changes },
        "Edit 1 file",
        true,
        Mode::Normal,
    )
}

const LATIN: &str = "--- a/ch.md\n+++ b/ch.md\n@@ -1,3 +1,3 @@\n # Chapter One\n-The harbour was quiet. Mira counted the boats twice, because the first count came out wrong.\n+The harbour was still. Mira counted the boats twice, because the first count came out wrong.\n \n";

const CJK: &str = "--- a/ch.md\n+++ b/ch.md\n@@ -1,2 +1,2 @@\n # 第一章\n-港口很安静。米拉数了两遍船。\n+港口非常安静。米拉数了三遍船。\n";

/// Three changed paragraphs far apart, for `]` / `[` and search.
fn long_diff() -> String {
    let mut d = String::from("--- a/ch.md\n+++ b/ch.md\n@@ -1,40 +1,40 @@\n");
    for i in 1..=40 {
        if i % 15 == 0 {
            d.push_str(&format!("-Paragraph {i} had a gull in it.\n"));
            d.push_str(&format!("+Paragraph {i} had a heron in it.\n"));
        } else {
            d.push_str(&format!(" Paragraph {i} is unchanged.\n"));
        }
    }
    d
}

fn app_with(call: nbook::engine::PendingCall, w: u16, h: u16) -> AppState {
    let (mut app, _) = empty_app_with(w, h, Vec::new(), vec![call]);
    app.focus = Pane::Approvals;
    app
}

fn draw(app: &mut AppState, w: u16, h: u16) -> Buffer {
    app.update(Action::Resize(w, h));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| nbook::tui::chrome::view(app, f)).unwrap();
    t.backend().buffer().clone()
}

/// The cells of the first occurrence of `text` (narrow characters) on screen.
fn cells_of<'a>(buf: &'a Buffer, text: &str) -> Vec<&'a ratatui::buffer::Cell> {
    let area = buf.area;
    for y in 0..area.height {
        let row: String = (0..area.width).map(|x| buf[(x, y)].symbol()).collect();
        if let Some(col) = row.find(text) {
            let start = row[..col].chars().count() as u16;
            return (start..start + text.chars().count() as u16)
                .map(|x| &buf[(x, y)])
                .collect();
        }
    }
    panic!("{text:?} is not on screen");
}

/// Where the wide character `c` is first drawn.
fn wide_at(buf: &Buffer, c: &str) -> (u16, u16) {
    let area = buf.area;
    for y in 0..area.height {
        for x in 0..area.width {
            if buf[(x, y)].symbol() == c {
                return (x, y);
            }
        }
    }
    panic!("{c:?} is not on screen");
}

fn scroll_of(app: &AppState) -> usize {
    match &app.overlay {
        Some(Overlay::Detail { scroll, .. }) => *scroll,
        _ => app.approvals.preview_scroll,
    }
}

#[test]
fn latin_word_diff_snapshot() {
    let mut app = app_with(file_call("c1", "manuscript/ch.md", LATIN), 120, 30);
    insta::assert_snapshot!("prose_latin_120x30", render(&mut app, 120, 30));
}

#[test]
fn cjk_character_diff_snapshot() {
    let mut app = app_with(file_call("c1", "manuscript/ch.md", CJK), 120, 30);
    insta::assert_snapshot!("prose_cjk_120x30", render(&mut app, 120, 30));
}

#[test]
fn side_by_side_snapshot_and_narrow_note() {
    let mut app = app_with(file_call("c1", "manuscript/ch.md", LATIN), 160, 30);
    press(&mut app, "<Enter>");
    render(&mut app, 160, 30);
    press(&mut app, "s");
    insta::assert_snapshot!("prose_side_by_side_160x30", render(&mut app, 160, 30));
    // At 80 columns the detail stays unified and says why.
    let screen = render(&mut app, 80, 24);
    insta::assert_snapshot!("prose_side_by_side_narrow_80x24", screen);
    assert!(
        screen.contains("side by side needs 100 columns"),
        "{screen}"
    );
}

#[test]
fn summary_counts_paragraphs_and_words() {
    let mut app = app_with(file_call("c1", "manuscript/ch.md", &long_diff()), 100, 30);
    let screen = render(&mut app, 100, 30);
    assert!(screen.contains("2 paragraphs, 2 words changed"), "{screen}");
}

#[test]
fn brackets_jump_between_changes() {
    let mut app = app_with(file_call("c1", "manuscript/ch.md", &long_diff()), 100, 30);
    press(&mut app, "<Enter>");
    render(&mut app, 100, 30);
    press(&mut app, "]");
    let first = scroll_of(&app);
    insta::assert_snapshot!("prose_next_change_100x30", render(&mut app, 100, 30));
    press(&mut app, "]");
    let second = scroll_of(&app);
    assert!(second > first, "{first} → {second}");
    press(&mut app, "]");
    assert_eq!(scroll_of(&app), second, "no change after the last");
    assert!(app
        .status
        .as_ref()
        .unwrap()
        .text
        .contains("No further change"));
    press(&mut app, "[");
    assert_eq!(scroll_of(&app), first);
    // In the pane too.
    app.overlay = None;
    press(&mut app, "]");
    assert!(app.approvals.preview_scroll > 0);
}

#[test]
fn search_finds_matches_and_n_goes_on_then_rejects_again() {
    let mut app = app_with(file_call("c1", "manuscript/ch.md", &long_diff()), 100, 30);
    press(&mut app, "<Enter>");
    render(&mut app, 100, 30);
    press(&mut app, "/");
    assert!(matches!(app.overlay, Some(Overlay::DiffSearch { .. })));
    insta::assert_snapshot!("prose_search_prompt_100x30", render(&mut app, 100, 30));
    app.last_typed = None;
    for c in "HERON".chars() {
        press(&mut app, &c.to_string());
    }
    press(&mut app, "<Enter>");
    assert_eq!(app.approvals.search.as_deref(), Some("HERON"));
    let first = scroll_of(&app);
    assert!(first > 0);
    let screen = render(&mut app, 100, 30);
    insta::assert_snapshot!("prose_search_match_100x30", screen);
    assert!(app.status.as_ref().unwrap().text.contains("match 1 of 2"));
    // n: the next match (not reject), N: back.
    press(&mut app, "n");
    assert!(scroll_of(&app) > first);
    assert!(matches!(app.overlay, Some(Overlay::Detail { .. })));
    press(&mut app, "N");
    assert_eq!(scroll_of(&app), first);
    // Esc ends the search; then n rejects (the reason prompt).
    press(&mut app, "<Esc>");
    assert!(app.approvals.search.is_none());
    assert!(matches!(app.overlay, Some(Overlay::Detail { .. })));
    app.last_typed = None;
    press(&mut app, "n");
    assert!(matches!(app.overlay, Some(Overlay::RejectReason { .. })));
}

#[test]
fn a_search_without_match_says_so_and_changes_nothing() {
    let mut app = app_with(file_call("c1", "manuscript/ch.md", &long_diff()), 100, 30);
    press(&mut app, "/");
    for c in "albatross".chars() {
        press(&mut app, &c.to_string());
    }
    press(&mut app, "<Enter>");
    assert!(app.approvals.search.is_none());
    assert_eq!(app.approvals.preview_scroll, 0);
    assert!(app.status.as_ref().unwrap().text.contains("No match"));
    assert_eq!(app.approvals.len(), 1, "the call still waits");
}

#[test]
fn s_toggles_and_narrow_says_why() {
    let mut app = app_with(file_call("c1", "manuscript/ch.md", LATIN), 80, 24);
    render(&mut app, 80, 24);
    press(&mut app, "s");
    assert!(app.approvals.side_by_side);
    let msg = app.status.as_ref().unwrap().text.clone();
    assert!(msg.contains("needs 100 columns"), "{msg}");
    press(&mut app, "s");
    assert!(!app.approvals.side_by_side);
}

#[test]
fn changed_words_are_emphasised_in_every_theme() {
    for name in ["dark", "light", "high-contrast"] {
        let mut app = app_with(file_call("c1", "manuscript/ch.md", LATIN), 140, 30);
        app.theme = Theme::builtin(name).unwrap();
        let t = app.theme.clone();
        let buf = draw(&mut app, 140, 30);
        for c in cells_of(&buf, "quiet") {
            assert_eq!(c.style().fg, t.diff_del_word.fg, "{name}: quiet");
            assert_eq!(c.style().bg, t.diff_del_word.bg, "{name}: quiet");
            assert_ne!(c.fg, c.bg, "{name}: readable");
        }
        for c in cells_of(&buf, "still") {
            assert_eq!(c.style().bg, t.diff_add_word.bg, "{name}: still");
            assert_ne!(c.fg, c.bg, "{name}: readable");
        }
        // An unchanged word of the same line keeps the line's plain colour.
        for c in cells_of(&buf, "harbour was still") {
            if c.symbol() == "h" {
                assert_eq!(c.style().fg, t.diff_add.fg, "{name}: harbour");
                assert_eq!(c.bg, ratatui::style::Color::Reset, "{name}: harbour bg");
            }
        }
    }
}

#[test]
fn cjk_changed_characters_are_emphasised() {
    let mut app = app_with(file_call("c1", "manuscript/ch.md", CJK), 140, 30);
    let t = app.theme.clone();
    let buf = draw(&mut app, 140, 30);
    // 非 and 常 are new (two columns each), 安 was there; on the old line 很 is gone.
    let (x, y) = wide_at(&buf, "非");
    assert_eq!(buf[(x + 2, y)].symbol(), "常");
    assert_eq!(buf[(x, y)].bg, t.diff_add_word.bg.unwrap());
    assert_eq!(buf[(x + 2, y)].bg, t.diff_add_word.bg.unwrap());
    assert_eq!(buf[(x + 4, y)].symbol(), "安");
    assert_eq!(buf[(x + 4, y)].bg, ratatui::style::Color::Reset);
    assert_eq!(buf[(x + 4, y)].fg, t.diff_add.fg.unwrap());
    let (x, y) = wide_at(&buf, "很");
    assert_eq!(buf[(x, y)].bg, t.diff_del_word.bg.unwrap());
}

#[test]
fn record_field_diffs_emphasise_changed_words() {
    let body = PreviewBody::Records {
        changes: vec![RecordChange {
            record: "StoryScene #4 (harbour)".into(),
            action: "update".into(),
            fields: vec![FieldChange {
                field: "summary".into(),
                before: json!("Mira waits at the quiet harbour."),
                after: json!("Mira waits at the empty harbour."),
            }],
        }],
    };
    let call = pending(
        "c1",
        "update_story_node",
        body,
        "Update a scene",
        true,
        Mode::Normal,
    );
    let mut app = app_with(call, 140, 30);
    let t = app.theme.clone();
    let screen = render(&mut app, 140, 30);
    insta::assert_snapshot!("prose_record_field_140x30", screen);
    let buf = draw(&mut app, 140, 30);
    for c in cells_of(&buf, "empty") {
        assert_eq!(c.bg, t.diff_add_word.bg.unwrap());
    }
    for c in cells_of(&buf, "quiet") {
        assert_eq!(c.bg, t.diff_del_word.bg.unwrap());
    }
}
