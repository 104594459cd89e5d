//! The World pane's A→cursor diff emphasises the words that changed in each attribute, as
//! file previews do: the snapshot marks emphasised cells with «…» (removed) and ‹…› (added),
//! so a value whose one word changed shows just that word marked, and an attribute that
//! appeared or went is not marked word by word.

mod tui_world_support;

use nbook::tui::action::Action;
use nbook::tui::app::AppState;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use tui_world_support::*;

fn jump(b: &Book, app: &mut AppState, time: &str) {
    b.keys(app, "t");
    app.update(Action::Paste(time.into()));
    b.keys(app, "<Enter>");
    app.status = None;
}

/// Whether a cell is drawn in `s` (its colours and at least its modifiers).
fn is(cell: &ratatui::buffer::Cell, s: ratatui::style::Style) -> bool {
    s.fg.is_none_or(|c| cell.fg == c)
        && s.bg.is_none_or(|c| cell.bg == c)
        && cell.modifier.contains(s.add_modifier)
}

/// The World detail's rows with the changed-word cells of the diff bracketed.
fn marked(app: &mut AppState, w: u16, h: u16) -> String {
    app.update(Action::Resize(w, h));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| nbook::tui::chrome::view(app, f)).unwrap();
    let buf = t.backend().buffer().clone();
    let (del, add) = (app.theme.diff_del_word, app.theme.diff_add_word);
    let mut out = String::new();
    for y in 0..h {
        let mut row = String::new();
        let mut open: Option<&str> = None;
        for x in 0..w {
            let cell = &buf[(x, y)];
            let now = if is(cell, del) {
                Some("«")
            } else if is(cell, add) {
                Some("‹")
            } else {
                None
            };
            if now != open {
                match open {
                    Some("«") => row.push('»'),
                    Some(_) => row.push('›'),
                    None => {}
                }
                if let Some(o) = now {
                    row.push_str(o);
                }
                open = now;
            }
            row.push_str(cell.symbol());
        }
        if row.contains(" → ") {
            out.push_str(row.trim_end());
            out.push('\n');
        }
    }
    out
}

#[test]
fn the_diff_from_a_marks_changed_words() {
    let b = book();
    let mut app = b.app(120, 40);
    jump(&b, &mut app, "1911-01-01 00:00");
    b.keys(&mut app, "m");
    jump(&b, &mut app, "1912-06-01");
    let rows = marked(&mut app, 120, 40);
    assert!(rows.contains("subject://l-«light»"), "{rows}");
    assert!(rows.contains("subject://l-‹geo›"), "{rows}");
    insta::assert_snapshot!("world_diff_words_120x40", rows);
}
