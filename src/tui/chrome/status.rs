//! The status bar: project title, the focused session's mode and state, the pending-approval
//! count, and the latest message (receipts, warnings, errors), cut with … so the project's
//! token and cost totals and the help hint at the end stay visible (`M` shows it whole).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::engine::{Mode, SessionState};
use crate::tui::app::{AppState, MsgKind};
use crate::tui::approvals::cut;
use crate::tui::widgets::wrap::{fit_width, Cut};

/// 950 → "950", 31 000 → "31.0k", 1 200 000 → "1.2M".
pub fn compact(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

pub fn draw_status(app: &AppState, area: Rect, buf: &mut Buffer) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let t = &app.theme;
    buf.set_style(area, t.status_bar);
    let mut spans = vec![Span::styled(
        format!(" {} ", cut(&app.title, 24)),
        t.diff_header,
    )];
    if let Some(s) = app.focused_session() {
        let style = match s.mode {
            Mode::Normal => t.mode_normal,
            Mode::Discuss => t.mode_discuss,
            Mode::Plan => t.mode_plan,
        };
        let state = match s.state {
            SessionState::Running => "running",
            SessionState::WaitingApproval => "waiting",
            SessionState::WaitingInput => "needs input",
            SessionState::Idle => "idle",
            SessionState::Failed => "failed",
        };
        spans.push(Span::styled(
            format!("│ {} ", crate::tui::sessions::short_id(&s.id)),
            t.dim,
        ));
        spans.push(Span::styled(s.mode.as_str(), style));
        spans.push(Span::styled(format!(" {state} "), t.dim));
    }
    let pending = app.approvals.call_count();
    if pending > 0 {
        spans.push(Span::styled(format!(" {pending} pending "), t.badge));
    }
    let questions = app.approvals.question_count();
    if questions > 0 {
        spans.push(Span::styled(format!(" {questions} question(s) "), t.badge));
    }
    spans.push(Span::raw(" "));
    let base = Line::from(spans.clone()).width();
    let (tokens, cost) = app.sessions.totals();
    let total = (!app.sessions.list.is_empty())
        .then(|| format!(" project {} tok · ${cost:.4} ", compact(tokens)));
    let long = format!("{} ? help ", total.unwrap_or_default());
    let short = " ? help ".to_string();
    let msg_w = app.status.as_ref().map_or(0, |m| m.text.width());
    // The totals and `? help` keep their place; the message gets what is left (cut with …),
    // but at least a few columns, or the totals give way to the short hint.
    let want = msg_w.min(MIN_MESSAGE);
    let hint = [long, short]
        .into_iter()
        .find(|h| base + want + h.width() < area.width as usize);
    let hint_w = hint.as_ref().map_or(0, |h| h.width());
    if let Some(m) = &app.status {
        let style = match m.kind {
            MsgKind::Info => t.status_info,
            MsgKind::Ok => t.status_ok,
            MsgKind::Error => t.status_error,
        };
        let room = (area.width as usize).saturating_sub(base + hint_w + 1);
        // One line on the bar: a message with several lines shows them joined.
        let text = m.text.lines().collect::<Vec<_>>().join(" ");
        spans.push(Span::styled(fit_width(&text, room, Cut::End), style));
    }
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
    if let Some(hint) = hint {
        let hint_w = hint_w as u16;
        buf.set_line(
            area.x + area.width - hint_w,
            area.y,
            &Line::from(Span::styled(hint, t.key_hint)),
            hint_w,
        );
    }
}

/// Columns a status message keeps before the totals give way to the short hint.
const MIN_MESSAGE: usize = 12;
