//! The status bar: project title, the focused session's mode and state, the pending-approval
//! count, and the latest message (receipts, warnings, errors) with a help hint at the end.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::engine::{Mode, SessionState};
use crate::tui::app::{AppState, MsgKind};
use crate::tui::approvals::cut;

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
        spans.push(Span::styled(format!("│ s{} ", s.id), t.dim));
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
    if let Some(m) = &app.status {
        let style = match m.kind {
            MsgKind::Info => t.status_info,
            MsgKind::Ok => t.status_ok,
            MsgKind::Error => t.status_error,
        };
        spans.push(Span::styled(m.text.clone(), style));
    }
    let line = Line::from(spans);
    let (tokens, cost) = app.sessions.totals();
    let total = (!app.sessions.list.is_empty())
        .then(|| format!(" project {} tok · ${cost:.4} ", compact(tokens)));
    let hint = format!("{} ? help ", total.unwrap_or_default());
    let short = " ? help ".to_string();
    let used = line.width() as u16;
    for hint in [hint, short] {
        let hint_w = hint.width() as u16;
        if area.width > hint_w && used + hint_w < area.width {
            buf.set_line(
                area.x + area.width - hint_w,
                area.y,
                &Line::from(Span::styled(hint, t.key_hint)),
                hint_w,
            );
            break;
        }
    }
    buf.set_line(area.x, area.y, &line, area.width);
}
