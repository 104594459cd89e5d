//! The right-hand view of the focused pane: the file preview, the Story pane's detail (drawn
//! by `story::view::detail`), the World pane's timeline and tabs (`world::view`), a session's
//! transcript with its composer or a background job (`sessions::view`), or the selected
//! approval request with its options pinned below (`approvals::view`). Each pane draws its own.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::tui::app::{AppState, Pane};
use crate::tui::chrome::block;
use crate::tui::chrome::layout::inner;

pub fn draw_detail(app: &AppState, area: Rect, buf: &mut Buffer) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let title = detail_title(app);
    block(title, false, &app.theme).render(area, buf);
    let inside = inner(area);
    if inside.height == 0 {
        return;
    }
    match app.focus {
        Pane::Files => crate::tui::files::view::file_preview(app, inside, buf),
        Pane::Story => crate::tui::story::view::detail::draw_detail(app, inside, buf),
        Pane::World => crate::tui::world::view::draw_detail(app, inside, buf),
        Pane::Sessions => crate::tui::sessions::view::draw_detail(app, inside, buf),
        Pane::Approvals => crate::tui::approvals::view::draw_detail(app, inside, buf),
        Pane::Board => crate::tui::board::view::draw_detail(app, inside, buf),
    }
}

fn detail_title(app: &AppState) -> String {
    match app.focus {
        Pane::Files => match &app.files.preview {
            Some(p) => {
                let mark = if app.files.is_changed(&p.path) {
                    " ● changed by an agent"
                } else if p.path.to_str().is_none() {
                    // Agents' tools take UTF-8 paths; say so instead of letting them guess.
                    " · not UTF-8: agents' tools cannot address it"
                } else {
                    ""
                };
                format!(" {}{mark} ", p.path.shown())
            }
            None => " Preview ".into(),
        },
        Pane::Story => crate::tui::story::view::detail::detail_title(app),
        Pane::World => crate::tui::world::view::detail_title(app),
        Pane::Sessions => crate::tui::sessions::view::detail_title(app),
        Pane::Board => crate::tui::board::view::detail_title(app),
        Pane::Approvals => match app.approvals.selected_item() {
            Some(crate::tui::approvals::Waiting::Call(_)) => format!(
                " Approval {}/{} ",
                app.approvals.selected + 1,
                app.approvals.len()
            ),
            Some(crate::tui::approvals::Waiting::Question(_)) => format!(
                " Question {}/{} ",
                app.approvals.selected + 1,
                app.approvals.len()
            ),
            None => " Approvals ".into(),
        },
    }
}
