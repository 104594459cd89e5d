//! The right-hand view of the focused pane: the file preview, the Story pane's detail (drawn
//! by `story_detail`), the World pane's timeline and tabs (drawn by `world`), a session's
//! transcript (bottom-anchored, following the end unless scrolled up), or the selected approval
//! request with its options pinned below.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::approval::{option_rows, request_rows, Row};
use super::layout::inner;
use super::wrap::{draw_bottom_up, draw_top_down, wrap_line, NO_WRAP};
use super::{block, put_line, thousands};
use crate::tui::app::{AppState, Pane};
use crate::tui::files::markdown::styled_line;
use crate::tui::sessions::{Entry, NoteKind, Outcome};

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
        Pane::Sessions => transcript(app, inside, buf),
        Pane::Approvals => approval(app, inside, buf),
    }
}

fn detail_title(app: &AppState) -> String {
    match app.focus {
        Pane::Files => match &app.files.preview {
            Some(p) => {
                let mark = if app.files.changed.contains(&p.path) {
                    " ● changed by an agent"
                } else {
                    ""
                };
                format!(" {}{mark} ", p.path)
            }
            None => " Preview ".into(),
        },
        Pane::Story => super::story_detail::detail_title(app),
        Pane::World => super::world::detail_title(app),
        Pane::Sessions => match app.sessions.selected() {
            Some(s) => format!(" Session {} · {} ", s.id, s.profile),
            None => " Transcript ".into(),
        },
        Pane::Approvals => match app.approvals.selected_call() {
            Some(_) => format!(
                " Approval {}/{} ",
                app.approvals.selected + 1,
                app.approvals.len()
            ),
            None if app.approvals.is_empty() => " Approvals ".into(),
            None => " Approval ".into(),
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
                        n.path
                    ),
                    None => format!("Folder {} — l or Enter opens it; / finds a file.", n.path),
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
                    format!("Cannot read {}: {e}", p.path),
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

fn entry_rows(app: &AppState, e: &Entry, width: usize) -> Vec<Row> {
    let t = &app.theme;
    match e {
        Entry::User(text) => text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                let p = if i == 0 { "› " } else { "  " };
                (Line::from(Span::styled(format!("{p}{l}"), t.user)), 2)
            })
            .collect(),
        Entry::Assistant(text) => text
            .lines()
            .map(|l| (Line::from(Span::styled(l.to_string(), t.assistant)), 0))
            .collect(),
        Entry::Tool {
            tool,
            summary,
            outcome,
            ..
        } => {
            let (mark, text, style) = match outcome {
                Outcome::Running => ("…", "running".to_string(), t.dim),
                Outcome::Waiting => ("⏸", "waiting for approval".to_string(), t.tool_wait),
                Outcome::Ok(s) => ("✔", s.clone(), t.tool_ok),
                Outcome::Failed(s) => ("✗", s.clone(), t.tool_err),
                Outcome::Rejected(Some(r)) => ("✗", format!("rejected: {r}"), t.tool_err),
                Outcome::Rejected(None) => ("✗", "rejected".to_string(), t.tool_err),
            };
            // One row per call: the summary gives way so the outcome stays visible.
            let head = format!("▸ {tool} ");
            let tail = format!("  {mark} {text}");
            let room = width
                .saturating_sub(head.chars().count() + tail.chars().count())
                .max(12);
            vec![(
                Line::from(vec![
                    Span::styled(head, t.tool),
                    Span::raw(cut_middle(summary, room)),
                    Span::styled(tail, style),
                ]),
                NO_WRAP,
            )]
        }
        Entry::Note(kind, text) => {
            let style = match kind {
                NoteKind::Approval => t.tool_wait,
                NoteKind::Mode | NoteKind::Lifecycle => t.meta,
            };
            vec![(Line::from(Span::styled(format!("  · {text}"), style)), 4)]
        }
    }
}

fn transcript(app: &AppState, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let Some(info) = app.sessions.selected() else {
        draw_top_down(
            area,
            buf,
            [(Line::from(Span::styled("No session selected.", t.dim)), 0)],
        );
        return;
    };
    let header = Line::from(vec![
        Span::styled(
            format!("{} ", info.mode),
            match info.mode {
                crate::engine::Mode::Normal => t.mode_normal,
                crate::engine::Mode::Discuss => t.mode_discuss,
                crate::engine::Mode::Plan => t.mode_plan,
            },
        ),
        Span::styled(
            format!(
                "· {} · {} in / {} out tokens · ${:.4}{} · {}",
                info.state.label(),
                thousands(info.input_tokens as i64),
                thousands(info.output_tokens as i64),
                info.cost,
                info.parent
                    .as_ref()
                    .map(|p| format!(" · parent {p}"))
                    .unwrap_or_default(),
                info.title
            ),
            t.dim,
        ),
    ]);
    put_line(buf, area, 0, &header);
    let hint = Line::from(Span::styled(
        "Sending messages to agents arrives with model providers; for now sessions run from `nbook run`.",
        t.meta,
    ));
    let hint_rows = wrap_line(&hint, area.width as usize, 0).len().min(2) as u16;
    if area.height < 3 + hint_rows {
        return;
    }
    let body = Rect::new(area.x, area.y + 1, area.width, area.height - 1 - hint_rows);
    for (i, row) in wrap_line(&hint, area.width as usize, 0)
        .iter()
        .take(hint_rows as usize)
        .enumerate()
    {
        put_line(buf, area, area.height - hint_rows + i as u16, row);
    }
    let Some(tr) = app
        .sessions
        .transcript
        .as_ref()
        .filter(|tr| tr.session_id == info.id)
    else {
        draw_top_down(
            body,
            buf,
            [(Line::from(Span::styled("loading…", t.dim)), 0)],
        );
        return;
    };
    if let Some(e) = &tr.error {
        draw_top_down(
            body,
            buf,
            [(
                Line::from(Span::styled(
                    format!("Cannot read the log: {e}"),
                    t.status_error,
                )),
                0,
            )],
        );
        return;
    }
    if tr.entries.is_empty() {
        let text = if tr.loading.is_some() {
            "loading…"
        } else {
            "(nothing in this session yet)"
        };
        draw_top_down(body, buf, [(Line::from(Span::styled(text, t.dim)), 0)]);
        return;
    }
    let last = tr.entries.len() - 1;
    let anchor = app.sessions.scroll.unwrap_or(last).min(last);
    let rows = tr.entries[..=anchor]
        .iter()
        .rev()
        .flat_map(|e| entry_rows(app, e, body.width as usize).into_iter().rev());
    draw_bottom_up(body, buf, rows);
    if anchor < last {
        let more = Line::from(Span::styled(
            format!(" ↓ {} more — f follows the end ", last - anchor),
            t.badge,
        ));
        put_line(buf, body, body.height.saturating_sub(1), &more);
    }
}

fn approval(app: &AppState, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let Some(call) = app.approvals.selected_call() else {
        draw_top_down(
            area,
            buf,
            [
                (Line::from(Span::styled("Nothing is waiting for your approval.", t.dim)), 0),
                (Line::from(""), 0),
                (
                    Line::from(Span::styled(
                        "When an agent asks to change the project, the request and its preview show here: y approves, n rejects.",
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

/// Shorten to `max` characters keeping both ends ("manuscript/…/index.md").
fn cut_middle(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let keep = max.saturating_sub(1);
    let head = keep / 2;
    let tail = keep - head;
    let mut out: String = s.chars().take(head).collect();
    out.push('…');
    out.extend(s.chars().skip(n - tail));
    out
}
