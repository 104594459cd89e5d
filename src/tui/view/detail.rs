//! The right-hand view of the focused pane: the file preview, the Story pane's detail (drawn
//! by `story_detail`), the World pane's timeline and tabs (drawn by `world`), a session's
//! transcript with its composer or a background job (drawn by `sessions`), or the selected
//! approval request with its options pinned below (a question: drawn by `forms`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::approval::{option_rows, request_rows};
use super::layout::inner;
use super::wrap::{draw_top_down, wrap_line};
use super::{block, put_line, thousands};
use crate::tui::app::{AppState, Pane};
use crate::tui::files::markdown::styled_line;

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
        Pane::Files => file_preview(app, inside, buf),
        Pane::Story => super::story_detail::draw_detail(app, inside, buf),
        Pane::World => super::world::draw_detail(app, inside, buf),
        Pane::Sessions => super::sessions::draw_detail(app, inside, buf),
        Pane::Approvals => approval(app, inside, buf),
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
        Pane::Story => super::story_detail::detail_title(app),
        Pane::World => super::world::detail_title(app),
        Pane::Sessions => super::sessions::detail_title(app),
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

fn file_preview(app: &AppState, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let note = |buf: &mut Buffer, text: String| {
        draw_top_down(area, buf, [(Line::from(Span::styled(text, t.dim)), 0)]);
    };
    let Some(p) = &app.files.preview else {
        match app.files.tree.selected_node() {
            Some(n) if n.is_dir => {
                let count = n.children.as_ref().map(|c| c.len());
                let text = match count {
                    Some(c) => format!(
                        "Folder {} — {c} entries. l or Enter opens it; / finds a file.",
                        n.path.shown()
                    ),
                    None => format!(
                        "Folder {} — l or Enter opens it; / finds a file.",
                        n.path.shown()
                    ),
                };
                note(buf, text);
            }
            _ => note(
                buf,
                "Select a file to preview it. / finds a file by name.".into(),
            ),
        }
        return;
    };
    if let Some(e) = &p.error {
        draw_top_down(
            area,
            buf,
            [(
                Line::from(Span::styled(
                    format!("Cannot read {}: {e}", p.path.shown()),
                    t.status_error,
                )),
                0,
            )],
        );
        return;
    }
    let Some(doc) = &p.doc else {
        note(buf, "loading…".into());
        return;
    };
    if doc.binary {
        note(
            buf,
            format!(
                "Binary file ({} bytes): no preview.",
                thousands(doc.bytes as i64)
            ),
        );
        return;
    }
    if doc.lines.is_empty() {
        note(buf, "(empty file)".into());
        return;
    }
    let start = p.scroll.min(doc.lines.len().saturating_sub(1));
    let lines = doc
        .lines
        .iter()
        .skip(start)
        .map(|(k, text)| (styled_line(*k, text, t), 0));
    let tail = doc.truncated.then(|| {
        (
            Line::from(Span::styled(
                "… (preview stops here; the file is longer)",
                t.dim,
            )),
            0,
        )
    });
    draw_top_down(area, buf, lines.chain(tail));
}

fn approval(app: &AppState, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    if let Some(q) = app.approvals.selected_question() {
        let rows = super::forms::question_rows(app, q);
        let skip = app
            .approvals
            .preview_scroll
            .min(rows.len().saturating_sub(1));
        draw_top_down(area, buf, rows.into_iter().skip(skip));
        return;
    }
    let Some(call) = app.approvals.selected_call() else {
        draw_top_down(
            area,
            buf,
            [
                (Line::from(Span::styled("Nothing is waiting for your approval.", t.dim)), 0),
                (Line::from(""), 0),
                (
                    Line::from(Span::styled(
                        "When an agent asks to change the project, the request and its preview show here: y approves, n rejects. Questions from agents and workflows wait here too: Enter answers them.",
                        t.dim,
                    )),
                    0,
                ),
            ],
        );
        return;
    };
    let options = option_rows(app, call);
    let opt_rows: Vec<Line<'static>> = options
        .iter()
        .flat_map(|(l, i)| wrap_line(l, area.width as usize, *i))
        .collect();
    let opt_h = (opt_rows.len() as u16 + 1).min(area.height / 2);
    let body = Rect::new(area.x, area.y, area.width, area.height - opt_h);
    let rows = request_rows(app, call);
    let skip = app
        .approvals
        .preview_scroll
        .min(rows.len().saturating_sub(1));
    draw_top_down(body, buf, rows.into_iter().skip(skip));
    let opt_area = Rect::new(area.x, area.y + area.height - opt_h, area.width, opt_h);
    for (i, row) in opt_rows
        .iter()
        .enumerate()
        .take(opt_h.saturating_sub(1) as usize)
    {
        put_line(buf, opt_area, i as u16 + 1, row);
    }
}
