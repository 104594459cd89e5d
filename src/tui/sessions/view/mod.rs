//! The Sessions pane's right-hand view: the selected session's header, its task list, the
//! transcript (bottom-anchored; tool calls on one line with their outcome, expandable to the
//! arguments and the full result; per-message usage dimmed after each assistant message;
//! messages still on their way), the composer and a hint line with the keys of whatever has
//! focus — or, in the jobs view, the selected background job with its progress bar. Here: the
//! frame, header and hint line; the parts are in `transcript`, `composer`, `jobs`, `list`
//! (the left-hand list) and `live` (replies streaming in).

mod composer;
mod jobs;
pub mod list;
pub mod live;
mod transcript;

pub use composer::{composer_height, draw_composer};
use jobs::job_detail;
pub use jobs::{draw_job_row, elapsed, job_icon, kind_label, progress};
use transcript::transcript;
pub use transcript::{cut_middle, entry_rows};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::engine::{Mode, SessionInfo};
use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::chrome::{put_line, thousands};
use crate::tui::commands::{key_of, PaneCommand};
use crate::tui::keymap::Context;
use crate::tui::sessions::commands::commands;
use crate::tui::sessions::{SessionsView, Transcript, Usage};
use crate::tui::theme::Theme;
use crate::tui::widgets::wrap::wrap_line;

/// The key bound to `cmd`, looked up in `ctx` first.
fn key(app: &AppState, cmd: Command, ctx: Context) -> String {
    app.keymap
        .key_for(cmd, &[ctx, Context::Sessions, Context::Global])
        .map(|k| k.notation())
        .unwrap_or_else(|| "—".into())
}

/// "key label · key label" in hint styles, from the pane's reported commands marked `hint`
/// (an unavailable one keeps its place with its key dimmed).
fn hint_line(app: &AppState, items: &[PaneCommand]) -> Line<'static> {
    let t = &app.theme;
    let mut spans = Vec::new();
    for (i, pc) in items.iter().filter(|pc| pc.hint).enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", t.dim));
        }
        let style = if pc.available { t.key_hint } else { t.dim };
        let k = key_of(app, pc).unwrap_or_else(|| "—".into());
        spans.push(Span::styled(k, style));
        spans.push(Span::styled(format!(" {}", pc.label), t.dim));
    }
    Line::from(spans)
}

pub fn mode_style(t: &Theme, mode: Mode) -> Style {
    match mode {
        Mode::Normal => t.mode_normal,
        Mode::Discuss => t.mode_discuss,
        Mode::Plan => t.mode_plan,
    }
}

/// "1,204 in · 310 out · $0.0031"
pub fn usage_label(u: &Usage) -> String {
    let est = if u.estimated { "~" } else { "" };
    format!(
        "{est}{} in · {est}{} out · ${:.4}{}",
        thousands(u.input_tokens as i64),
        thousands(u.output_tokens as i64),
        u.cost,
        if u.estimated { " (estimated)" } else { "" }
    )
}

/// The hint line for whatever has the keys in the Sessions pane.
pub fn sessions_hint(app: &AppState) -> Line<'static> {
    hint_line(app, &commands(app))
}

pub fn draw_detail(app: &AppState, area: Rect, buf: &mut Buffer) {
    if app.sessions.view == SessionsView::Jobs {
        job_detail(app, area, buf);
    } else {
        transcript(app, area, buf);
    }
}

pub fn detail_title(app: &AppState) -> String {
    if app.sessions.view == SessionsView::Jobs {
        return match app.sessions.jobs.selected() {
            Some(j) => format!(" Job {} · {} ", j.job_id, kind_label(j)),
            None => " Jobs ".into(),
        };
    }
    match app.sessions.selected() {
        Some(s) => format!(" Session {} · {} ", s.id, s.profile),
        None => " Transcript ".into(),
    }
}

fn header(app: &AppState, info: &SessionInfo, tr: Option<&Transcript>) -> Line<'static> {
    let t = &app.theme;
    let model = tr
        .and_then(|tr| tr.model.as_ref())
        .map(|m| format!(" · model {m}"))
        .unwrap_or_default();
    let mut spans = vec![
        Span::styled(format!("{} ", info.mode), mode_style(t, info.mode)),
        Span::styled(format!("· {}", info.state.label()), t.dim),
    ];
    // Shown first after the state: near a full window the next turn compacts or fails.
    if let Some(pct) = (info.context_tokens * 100).checked_div(info.context_window) {
        let style = if pct >= 90 { t.tool_wait } else { t.dim };
        spans.push(Span::styled(
            format!(
                " · context ~{}/{} ({pct}%)",
                thousands(info.context_tokens as i64),
                thousands(info.context_window as i64)
            ),
            style,
        ));
    }
    spans.push(Span::styled(
        format!(
            " · {} in / {} out tokens · ${:.4}{}{}",
            thousands(info.input_tokens as i64),
            thousands(info.output_tokens as i64),
            info.cost,
            info.parent
                .as_ref()
                .map(|p| format!(" · parent {p}"))
                .unwrap_or_default(),
            model,
        ),
        t.dim,
    ));
    spans.push(Span::styled(
        format!(" · {}", crate::text::escape_for_terminal(&info.title)),
        t.dim,
    ));
    Line::from(spans)
}

/// The key hint on the last (up to two) rows of `area`; returns the area above it.
fn draw_hint(app: &AppState, area: Rect, buf: &mut Buffer) -> Rect {
    let hint = sessions_hint(app);
    let hint_rows: Vec<Line<'static>> = wrap_line(&hint, area.width as usize, 2)
        .into_iter()
        .take(2)
        .collect();
    let hint_h = hint_rows.len() as u16;
    for (i, row) in hint_rows.iter().enumerate() {
        put_line(
            buf,
            area,
            area.height.saturating_sub(hint_h) + i as u16,
            row,
        );
    }
    Rect::new(
        area.x,
        area.y,
        area.width,
        area.height.saturating_sub(hint_h),
    )
}
