//! The selected row stays readable in every built-in theme: a row's own colours (a folder's
//! blue, a status colour) must not hide its text on the selection's background. Checked cell
//! by cell on the rendered buffer, since text snapshots carry no colours.

mod tui_support;

use nbook::tui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use ratatui::Terminal;
use tui_support::*;

fn draw(app: &mut nbook::tui::app::AppState, w: u16, h: u16) -> Buffer {
    app.update(nbook::tui::action::Action::Resize(w, h));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| nbook::tui::chrome::view(app, f)).unwrap();
    t.backend().buffer().clone()
}

/// The cells of the first occurrence of `text` on screen (one cell per character).
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

#[test]
fn a_selected_folder_name_is_readable_in_every_theme() {
    for name in ["dark", "light", "high-contrast"] {
        let (mut app, _) = full_app(100, 30);
        app.theme = Theme::builtin(name).unwrap();
        press(&mut app, "1");
        assert!(app.files.tree.select_path("manuscript"));
        let buf = draw(&mut app, 100, 30);
        // The tree row: its fold icon, then the name.
        let row = cells_of(&buf, "▾ manuscript");
        for cell in &row[2..] {
            let (fg, bg) = (cell.fg, cell.bg);
            assert!(
                fg != bg
                    || (fg == Color::Reset
                        && cell.modifier.contains(ratatui::style::Modifier::REVERSED)),
                "theme {name}: the selected folder's text is {fg:?} on {bg:?}"
            );
        }
    }
}
