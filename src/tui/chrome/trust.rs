//! The trust prompt: which lines of the project's `.nbook/config.toml` nbook ignores, what
//! each would loosen against the author's own config, and the keys to trust or keep ignoring.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::chrome::{centered, overlay_frame};
use crate::tui::keymap::Context;
use crate::tui::trust::{heading, TrustPrompt};
use crate::tui::widgets::wrap::draw_top_down;
use crate::tui::widgets::wrap::Row;

pub fn draw(app: &AppState, p: &TrustPrompt, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    // Two rows a line (more when they wrap), the heading, the file and the hints.
    let wanted = (p.gate.lines.len() as u16)
        .saturating_mul(2)
        .saturating_add(12);
    let r = centered(
        area,
        area.width.saturating_sub(4).min(100),
        wanted.min(area.height.saturating_sub(2)),
    );
    let inside = overlay_frame("Project config — trust?", r, buf, t);
    let key = |cmd| {
        app.keymap
            .key_for(cmd, &[Context::Overlay])
            .map(|k| k.notation())
            .unwrap_or_else(|| "—".into())
    };
    let mut rows: Vec<Row> = vec![
        (Line::from(heading(p.gate.trust)), 0),
        (Line::from(Span::styled(p.gate.file.clone(), t.dim)), 2),
        (Line::from(""), 0),
    ];
    for l in p.gate.lines.iter().skip(p.scroll) {
        rows.push((
            Line::from(vec![
                Span::styled(format!("line {:>3}  ", l.line), t.dim),
                Span::styled(l.text.clone(), t.code),
            ]),
            11,
        ));
        rows.push((Line::from(Span::raw(format!("it {}", l.why))), 11));
    }
    rows.push((Line::from(""), 0));
    rows.push((
        Line::from(Span::styled(
            "Tightening lines already apply. A trust is kept in your config dir and dropped when the file changes.",
            t.dim,
        )),
        0,
    ));
    rows.push((
        Line::from(vec![
            Span::styled(key(Command::TrustConfig), t.key_hint),
            Span::raw(" trust (applies from the next open)   "),
            Span::styled(key(Command::Cancel), t.key_hint),
            Span::raw(" keep ignoring"),
        ]),
        0,
    ));
    // Keep the keys visible: draw the hint rows at the bottom when the list is long.
    let hint_rows = 3u16;
    if inside.height > hint_rows {
        let body = Rect::new(inside.x, inside.y, inside.width, inside.height - hint_rows);
        let foot = Rect::new(
            inside.x,
            inside.y + inside.height - hint_rows,
            inside.width,
            hint_rows,
        );
        let tail = rows.split_off(rows.len() - 2);
        draw_top_down(body, buf, rows);
        draw_top_down(foot, buf, tail);
    } else {
        draw_top_down(inside, buf, rows);
    }
}
