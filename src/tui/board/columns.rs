//! The Board's columns side by side: when the right-hand view is wide enough for every
//! column of the workflow (at least [`MIN_COLUMN`] cells each) and no task is opened, it
//! draws the workflow as a kanban — one column per workflow column, each card two lines (id,
//! progress, status, assignee, waiting approvals; then the title) — with the selected card's
//! summary below. Narrower, the view stays stacked (the selected card, or the opened task).
//! Pure drawing: each column shows only the cards that fit, scrolled to keep the selected card
//! in view, so a 10,000-task board costs the cards on screen plus one pass over its rows.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::engine::read::{Task, PAUSED};
use crate::tui::app::AppState;
use crate::tui::board::{BoardRow, BoardState};
use crate::tui::chrome::put_line;
use crate::tui::widgets::wrap::{draw_top_down, fit_width, Cut};

/// The narrowest column worth drawing (an id, a progress and a few words of a title).
pub const MIN_COLUMN: u16 = 18;
/// Rows kept under the columns for the selected card's summary.
const SUMMARY_ROWS: u16 = 6;

/// Whether the view draws the columns side by side in `area`.
pub fn fits(app: &AppState, area: Rect) -> bool {
    let b = &app.board;
    let opened = match (&b.detail, b.selected_task()) {
        (Some((id, _)), Some(t)) => *id == t.id,
        _ => false,
    };
    let n = b.columns.len().max(1) as u16;
    !b.is_empty() && !opened && area.width >= n * MIN_COLUMN && area.height >= SUMMARY_ROWS + 6
}

/// Each column's cards as (row index, task index), in board order.
fn cards_by_column(b: &BoardState) -> Vec<Vec<(usize, usize)>> {
    let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); b.columns.len()];
    let mut current = None;
    for (r, row) in b.rows.iter().enumerate() {
        match *row {
            BoardRow::Column(c, _) => current = Some(c),
            BoardRow::Card(i) => {
                if let Some(col) = current.and_then(|c| out.get_mut(c)) {
                    col.push((r, i));
                }
            }
        }
    }
    out
}

/// A card's first line: id, progress, status, assignee, waiting approvals.
fn card_head(app: &AppState, t: &Task) -> String {
    let (done, total) = t.progress();
    let mut s = format!("{} {done}/{total}", t.id);
    if t.status == crate::board::plan_approval::AWAITING {
        s.push_str(&format!(" {}", crate::board::plan_approval::CARD_LABEL));
    } else if !t.status.is_empty() {
        s.push_str(&format!(" {}", t.status));
    }
    if let Some(a) = crate::board::assign::assignee(t) {
        s.push_str(&format!(" @{a}"));
    }
    let waiting = BoardState::pending_for(&t.id, app.approvals.calls());
    if waiting > 0 {
        s.push_str(&format!(" ⧗{waiting}"));
    }
    s
}

pub fn draw(app: &AppState, area: Rect, buf: &mut Buffer) {
    let b = &app.board;
    let th = &app.theme;
    let Some(d) = &b.data else { return };
    let summary_h = SUMMARY_ROWS.min(area.height / 3);
    let cols_h = area.height.saturating_sub(summary_h + 1);
    let n = b.columns.len().max(1) as u16;
    let cw = area.width / n;
    let by_col = cards_by_column(b);
    let sel = crate::tui::chrome::sel_style(app, true);
    // Two lines a card, under the header line.
    let fit = (cols_h.saturating_sub(1) / 2).max(1) as usize;
    for (c, cards) in by_col.iter().enumerate() {
        let x = area.x + c as u16 * cw;
        let w = if c as u16 == n - 1 {
            area.width - c as u16 * cw
        } else {
            cw.saturating_sub(1)
        };
        let col = Rect::new(x, area.y, w, cols_h);
        let name = b.column(c).map(|(_, name)| name).unwrap_or("?");
        let header = fit_width(&format!("{name} ({})", cards.len()), w as usize, Cut::End);
        put_line(buf, col, 0, &Line::from(Span::styled(header, th.heading)));
        let at = cards.iter().position(|(r, _)| *r == b.selected);
        let more = cards.len() > fit;
        // With more cards than fit, the last line says how many are not shown.
        let room = if more {
            fit.saturating_sub(1).max(1)
        } else {
            fit
        };
        let off = match at {
            Some(p) if p >= room => p + 1 - room,
            _ => 0,
        };
        for (k, (r, ti)) in cards.iter().skip(off).take(room).enumerate() {
            let Some(t) = d.tasks.get(*ti) else { continue };
            let y = 1 + 2 * k as u16;
            let status_style = match t.status.as_str() {
                "failed" => th.status_error,
                PAUSED | crate::board::plan_approval::AWAITING => th.tool_wait,
                _ => th.meta,
            };
            let mut head = Line::from(Span::styled(
                fit_width(&card_head(app, t), w as usize, Cut::End),
                status_style,
            ));
            let mut title = Line::from(Span::styled(
                fit_width(&t.title, w as usize, Cut::End),
                th.text,
            ));
            if *r == b.selected {
                head = crate::tui::chrome::select_line(head, sel);
                title = crate::tui::chrome::select_line(title, sel);
                buf.set_style(Rect::new(x, col.y + y, w, 2.min(cols_h - y)), sel);
            }
            put_line(buf, col, y, &head);
            put_line(buf, col, y + 1, &title);
        }
        let hidden = cards.len().saturating_sub(room);
        if more && hidden > 0 {
            let y = 1 + 2 * room as u16;
            put_line(
                buf,
                col,
                y.min(cols_h.saturating_sub(1)),
                &Line::from(Span::styled(format!("… {hidden} more"), th.dim)),
            );
        }
    }
    // The selected card's summary under a rule.
    let rule_y = area.y + cols_h;
    let rule = Rect::new(area.x, rule_y, area.width, 1);
    put_line(
        buf,
        rule,
        0,
        &Line::from(Span::styled("─".repeat(area.width as usize), th.dim)),
    );
    let below = Rect::new(area.x, rule_y + 1, area.width, summary_h);
    draw_top_down(below, buf, crate::tui::board::view::detail_lines(app));
}
