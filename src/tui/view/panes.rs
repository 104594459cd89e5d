//! The left column: the five panes, each a bordered list drawn row by row for the visible
//! window only. A pane squeezed to one content row shows a one-line summary instead. The
//! Sessions pane lists sessions or background jobs; the Approvals pane lists calls and
//! questions in the order they arrived.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::layout::{inner, Regions};
use super::{block, put_line, thousands};
use crate::engine::SessionState;
use crate::tui::app::{AppState, Pane};
use crate::tui::approvals::{age, cut, Waiting};
use crate::tui::files::tree::window_offset;
use crate::tui::sessions::SessionsView;

pub fn draw_panes(app: &AppState, r: &Regions, buf: &mut Buffer) {
    for pane in Pane::ALL {
        let area = r.panes[pane.index()];
        if area.height == 0 || area.width == 0 {
            continue;
        }
        let focused = app.focus == pane;
        let title = pane_title(app, pane);
        if area.height == 1 {
            let style = if focused {
                app.theme.title_focused
            } else {
                app.theme.title
            };
            put_line(
                buf,
                area,
                0,
                &Line::from(Span::styled(format!("─{title}─"), style)),
            );
            continue;
        }
        block(title, focused, &app.theme).render(area, buf);
        let inside = inner(area);
        if inside.height == 0 {
            continue;
        }
        if inside.height == 1 && !focused {
            put_line(
                buf,
                inside,
                0,
                &Line::from(Span::styled(summary(app, pane), app.theme.dim)),
            );
            continue;
        }
        match pane {
            Pane::Files => draw_files(app, inside, buf, focused),
            Pane::Story => super::story::draw_list(app, inside, buf, focused),
            Pane::World => super::world::draw_pane(app, inside, buf, focused),
            Pane::Sessions => draw_sessions(app, inside, buf, focused),
            Pane::Approvals => draw_approvals(app, inside, buf, focused),
        }
    }
}

fn pane_title(app: &AppState, pane: Pane) -> String {
    let n = pane.index() + 1;
    match pane {
        Pane::Approvals if !app.approvals.is_empty() => {
            format!(" {n} Approvals ({}) ", app.approvals.len())
        }
        Pane::Sessions if app.sessions.view == SessionsView::Jobs => {
            let j = &app.sessions.jobs;
            match j.running() {
                0 => format!(" {n} Jobs ({}) ", j.list.len()),
                r => format!(" {n} Jobs ({}, {r} running) ", j.list.len()),
            }
        }
        Pane::Sessions if !app.sessions.list.is_empty() => {
            let (_, cost) = app.sessions.totals();
            format!(" {n} Sessions ({}) · ${cost:.4} ", app.sessions.list.len())
        }
        Pane::Files if !app.files.changed.is_empty() => {
            format!(" {n} Files ●{} ", app.files.changed.len())
        }
        Pane::Story => super::story::pane_title(app),
        _ => format!(" {n} {} ", pane.title()),
    }
}

/// The one-line summary of a squeezed pane.
pub fn summary(app: &AppState, pane: Pane) -> String {
    match pane {
        Pane::Files => match app.files.tree.selected_node() {
            Some(n) => n.path.shown().into_owned(),
            None => "project files".into(),
        },
        Pane::Story => super::story::summary(app),
        Pane::World => super::world::summary(app),
        Pane::Sessions => {
            let running = app
                .sessions
                .list
                .iter()
                .filter(|s| s.state == SessionState::Running)
                .count();
            let jobs = match app.sessions.jobs.running() {
                0 => String::new(),
                j => format!(" · {j} job(s) running"),
            };
            match app.sessions.list.len() {
                0 => format!("No sessions yet{jobs}"),
                n => format!("{n} sessions · {running} running{jobs}"),
            }
        }
        Pane::Approvals => match app.approvals.items.first() {
            Some(Waiting::Call(c)) => format!(
                "{} pending · {} {}",
                app.approvals.len(),
                c.tool,
                c.preview.summary
            ),
            Some(Waiting::Question(q)) => {
                format!("{} pending · question: {}", app.approvals.len(), q.title)
            }
            None => "Nothing waiting".into(),
        },
    }
}

fn sel_style(app: &AppState, focused: bool) -> Style {
    if focused {
        app.theme.selection
    } else {
        app.theme.selection_unfocused
    }
}

fn draw_files(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    let tree = &app.files.tree;
    let t = &app.theme;
    if tree.rows().is_empty() {
        let msg = if tree.root_loaded() {
            "(empty project folder)"
        } else {
            "loading…"
        };
        put_line(buf, area, 0, &Line::from(Span::styled(msg, t.dim)));
        return;
    }
    let h = area.height as usize;
    let off = window_offset(tree.offset, tree.selected, h, tree.rows().len());
    for (i, &id) in tree.rows().iter().skip(off).take(h).enumerate() {
        let Some(n) = tree.node(id) else { continue };
        let indent = "  ".repeat(n.depth.saturating_sub(1) as usize);
        let icon = match (n.is_dir, n.expanded) {
            (true, true) => "▾ ",
            (true, false) => "▸ ",
            _ => "  ",
        };
        let style = if n.hidden {
            t.hidden
        } else if n.is_dir {
            t.folder
        } else {
            t.text
        };
        let mut spans = vec![
            Span::raw(indent),
            Span::styled(icon, t.dim),
            Span::styled(crate::text::escape_os(&n.name).into_owned(), style),
        ];
        if n.loading.is_some() && n.expanded {
            spans.push(Span::styled(" …", t.dim));
        }
        let marked = if n.is_dir {
            app.files.dir_has_changes(&n.path)
        } else {
            app.files.is_changed(&n.path)
        };
        if marked {
            spans.push(Span::styled(if n.is_dir { " •" } else { " ●" }, t.changed));
        }
        let mut line = Line::from(spans);
        if off + i == tree.selected {
            line = line.style(sel_style(app, focused));
            buf.set_style(
                Rect::new(area.x, area.y + i as u16, area.width, 1),
                sel_style(app, focused),
            );
        }
        put_line(buf, area, i as u16, &line);
    }
}

fn state_icon(s: SessionState) -> &'static str {
    match s {
        SessionState::Running => "▶",
        SessionState::WaitingApproval => "⏸",
        SessionState::WaitingInput => "?",
        SessionState::Idle => "·",
        SessionState::Failed => "✗",
    }
}

fn pane_key(app: &AppState, cmd: crate::tui::action::Command) -> String {
    app.keymap
        .key_for(
            cmd,
            &[
                crate::tui::keymap::Context::Sessions,
                crate::tui::keymap::Context::Global,
            ],
        )
        .map(|k| k.notation())
        .unwrap_or_else(|| cmd.name().to_string())
}

fn draw_jobs(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    let t = &app.theme;
    let j = &app.sessions.jobs;
    if j.list.is_empty() {
        put_line(
            buf,
            area,
            0,
            &Line::from(Span::styled("No background jobs yet.", t.dim)),
        );
        put_line(
            buf,
            area,
            1,
            &Line::from(Span::styled(
                format!(
                    "{} goes back to the sessions.",
                    pane_key(app, crate::tui::action::Command::ToggleJobs)
                ),
                t.dim,
            )),
        );
        return;
    }
    let h = area.height as usize;
    let off = window_offset(j.offset, j.selected, h, j.list.len());
    for (i, job) in j.list.iter().skip(off).take(h).enumerate() {
        let row = Rect::new(area.x, area.y + i as u16, area.width, 1);
        let style = if off + i == j.selected {
            sel_style(app, focused)
        } else {
            Style::default()
        };
        super::sessions::draw_job_row(app, job, row, buf, style);
    }
}

fn draw_sessions(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    let t = &app.theme;
    let s = &app.sessions;
    if s.view == SessionsView::Jobs {
        return draw_jobs(app, area, buf, focused);
    }
    // Without a right-hand view (narrow terminals) the composer sits at the pane's bottom.
    let mut area = area;
    let narrow = app.regions().detail.width == 0;
    if narrow && focused && s.composing && area.height >= 5 {
        if let Some(info) = s.selected() {
            let h = super::sessions::composer_height(app).min(area.height - 2);
            let comp = Rect::new(area.x, area.y + area.height - h, area.width, h);
            super::sessions::draw_composer(app, info, comp, buf);
            area.height -= h;
        }
    }
    if s.list.is_empty() {
        let new = pane_key(app, crate::tui::action::Command::NewSession);
        super::wrap::draw_top_down(
            area,
            buf,
            [
                (Line::from(Span::styled("No sessions yet.", t.dim)), 0),
                (
                    Line::from(Span::styled(
                        format!("{new} starts one: a profile, a model, a title."),
                        t.dim,
                    )),
                    2,
                ),
            ],
        );
        return;
    }
    let h = area.height as usize;
    let off = window_offset(s.offset, s.selected, h, s.list.len());
    for (i, info) in s.list.iter().skip(off).take(h).enumerate() {
        let mode_style = match info.mode {
            crate::engine::Mode::Normal => t.mode_normal,
            crate::engine::Mode::Discuss => t.mode_discuss,
            crate::engine::Mode::Plan => t.mode_plan,
        };
        let tokens = info.input_tokens + info.output_tokens;
        let mut spans = vec![
            Span::raw(format!("{} {} ", state_icon(info.state), info.id)),
            Span::styled(info.profile.clone(), t.text),
            Span::raw(" "),
            Span::styled(info.mode.as_str(), mode_style),
            Span::styled(format!(" {} ", info.state.label()), t.dim),
            Span::styled(
                format!("{}tok ${:.4}", thousands(tokens as i64), info.cost),
                t.dim,
            ),
        ];
        if let Some(p) = &info.parent {
            spans.push(Span::styled(format!(" ↑{p}"), t.dim));
        }
        spans.push(Span::raw(format!(
            " {}",
            crate::text::escape_for_terminal(&info.title)
        )));
        let mut line = Line::from(spans);
        if off + i == s.selected {
            line = line.style(sel_style(app, focused));
            buf.set_style(
                Rect::new(area.x, area.y + i as u16, area.width, 1),
                sel_style(app, focused),
            );
        }
        put_line(buf, area, i as u16, &line);
    }
}

fn draw_approvals(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    let t = &app.theme;
    let a = &app.approvals;
    if a.is_empty() {
        put_line(
            buf,
            area,
            0,
            &Line::from(Span::styled("Nothing waiting for approval.", t.dim)),
        );
        return;
    }
    let h = area.height as usize;
    let off = window_offset(a.offset, a.selected, h, a.len());
    for (i, w) in a.items.iter().skip(off).take(h).enumerate() {
        let mut line = match w {
            Waiting::Call(c) => Line::from(vec![
                Span::styled(format!("{:>3} ", age(&c.requested_at, app.wall_now)), t.dim),
                Span::styled(c.tool.clone(), t.tool),
                Span::styled(format!(" s{} ", c.session_id), t.dim),
                Span::raw(cut(&c.preview.summary, 200)),
            ]),
            Waiting::Question(q) => Line::from(vec![
                Span::styled(format!("{:>3} ", age(&q.requested_at, app.wall_now)), t.dim),
                Span::styled("? question", t.tool_wait),
                Span::styled(format!(" s{} ", q.session_id), t.dim),
                Span::raw(cut(&q.title, 200)),
            ]),
        };
        if off + i == a.selected {
            line = line.style(sel_style(app, focused));
            buf.set_style(
                Rect::new(area.x, area.y + i as u16, area.width, 1),
                sel_style(app, focused),
            );
        }
        put_line(buf, area, i as u16, &line);
    }
}
