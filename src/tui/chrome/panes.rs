//! The left column: the six panes, each a bordered list drawn row by row for the visible
//! window only. A pane squeezed to one content row shows a one-line summary instead. The
//! Sessions pane lists sessions or background jobs; the Approvals pane lists calls and
//! questions in the order they arrived.

use ratatui::buffer::Buffer;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::engine::SessionState;
use crate::tui::app::{AppState, Pane};
use crate::tui::approvals::Waiting;
use crate::tui::chrome::layout::{inner, Regions};
use crate::tui::chrome::{block, put_line};
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
            Pane::Files => crate::tui::files::view::draw_files(app, inside, buf, focused),
            Pane::Story => crate::tui::story::view::draw_list(app, inside, buf, focused),
            Pane::World => crate::tui::world::view::draw_pane(app, inside, buf, focused),
            Pane::Sessions => {
                crate::tui::sessions::view::list::draw_sessions(app, inside, buf, focused)
            }
            Pane::Approvals => {
                crate::tui::approvals::view::draw_approvals(app, inside, buf, focused)
            }
            Pane::Board => crate::tui::board::view::draw_list(app, inside, buf, focused),
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
        Pane::Story => crate::tui::story::view::pane_title(app),
        Pane::Board => crate::tui::board::view::pane_title(app),
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
        Pane::Story => crate::tui::story::view::summary(app),
        Pane::World => crate::tui::world::view::summary(app),
        Pane::Board => crate::tui::board::view::summary(app),
        Pane::Sessions => {
            let running = app
                .sessions
                .list
                .iter()
                .filter(|s| s.state == SessionState::Running)
                .count();
            let jobs = match app.sessions.jobs.running() {
                0 => String::new(),
                j => format!(" · {} running", crate::text::count(j, "job", "jobs")),
            };
            match app.sessions.list.len() {
                0 => format!("No sessions yet{jobs}"),
                n => format!(
                    "{} · {running} running{jobs}",
                    crate::text::count(n, "session", "sessions")
                ),
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
