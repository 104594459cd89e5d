//! The Sessions pane's list: one row per session (state, profile — and the durable agent it
//! runs as —, mode, tokens and cost, parent, title) or, in the jobs view, one row per background job; the composer at the
//! pane's bottom when the terminal is too narrow for the right-hand view.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::engine::SessionState;
use crate::tui::app::AppState;
use crate::tui::chrome::{put_line, sel_style, select_line, thousands};
use crate::tui::files::tree::window_offset;
use crate::tui::sessions::SessionsView;

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
        crate::tui::sessions::view::draw_job_row(app, job, row, buf, style);
    }
}

pub fn draw_sessions(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
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
            let h = crate::tui::sessions::view::composer_height(app).min(area.height - 2);
            let comp = Rect::new(area.x, area.y + area.height - h, area.width, h);
            crate::tui::sessions::view::draw_composer(app, info, comp, buf);
            area.height -= h;
        }
    }
    if s.list.is_empty() {
        let new = pane_key(app, crate::tui::action::Command::NewSession);
        crate::tui::widgets::wrap::draw_top_down(
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
        let mut spans = vec![Span::raw(format!(
            "{} {} ",
            state_icon(info.state),
            info.id
        ))];
        if info.client.is_some() {
            // An outside agent over MCP: its name is the session's title, at the end.
            spans.push(Span::styled("MCP ", t.tool_wait));
        }
        spans.push(Span::styled(info.profile.clone(), t.text));
        if let Some(a) = &info.agent {
            // Running as a durable agent: its identity, mail and ratings are that agent's.
            spans.push(Span::styled(format!(" as {a}"), t.heading2));
        }
        spans.extend([
            Span::raw(" "),
            Span::styled(info.mode.as_str(), mode_style),
            Span::styled(format!(" {} ", info.state.label()), t.dim),
            Span::styled(
                format!("{}tok ${:.4}", thousands(tokens as i64), info.cost),
                t.dim,
            ),
        ]);
        if let Some(p) = &info.parent {
            spans.push(Span::styled(format!(" ↑{p}"), t.dim));
        }
        spans.push(Span::raw(format!(
            " {}",
            crate::text::escape_for_terminal(&info.title)
        )));
        let mut line = Line::from(spans);
        if off + i == s.selected {
            line = select_line(line, sel_style(app, focused));
            buf.set_style(
                Rect::new(area.x, area.y + i as u16, area.width, 1),
                sel_style(app, focused),
            );
        }
        put_line(buf, area, i as u16, &line);
    }
}
