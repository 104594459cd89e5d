//! The message log: every status message of this run (receipts, warnings, errors) with the
//! wall time it was shown and its kind, listed newest first in an overlay (`M`), so a message
//! the status bar cut short, or that expired before the author read it, can still be read.
//! The log lives in `AppState::messages`; this module owns its entry type, its rows and the
//! overlay's drawing and scroll range.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;

use crate::tui::app::{AppState, MsgKind};
use crate::tui::chrome::{centered, overlay_frame, put_line};
use crate::tui::widgets::wrap::{wrap_line, Row};

/// The most messages kept: a long run cannot grow the log without bound; the oldest go first.
pub const LOG_CAP: usize = 1_000;

/// One status message as it was shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedMsg {
    pub text: String,
    pub kind: MsgKind,
    pub at: time::OffsetDateTime,
}

/// Append `msg`, dropping the oldest entries past [`LOG_CAP`].
pub fn push(log: &mut Vec<LoggedMsg>, msg: LoggedMsg) {
    log.push(msg);
    if log.len() > LOG_CAP {
        let extra = log.len() - LOG_CAP;
        log.drain(..extra);
    }
}

fn kind_label(kind: MsgKind) -> &'static str {
    match kind {
        MsgKind::Info => "info ",
        MsgKind::Ok => "ok   ",
        MsgKind::Error => "error",
    }
}

/// Columns before a message's text ("10:01:49  error  "): continuation rows indent to it.
const PREFIX: usize = 17;

/// The log's rows, newest first: time, kind, then the text (its own lines indented).
pub fn rows(app: &AppState) -> Vec<Row> {
    let t = &app.theme;
    let mut out: Vec<Row> = Vec::new();
    for m in app.messages.iter().rev() {
        let style = match m.kind {
            MsgKind::Info => t.status_info,
            MsgKind::Ok => t.status_ok,
            MsgKind::Error => t.status_error,
        };
        let time = format!(
            "{:02}:{:02}:{:02}  ",
            m.at.hour(),
            m.at.minute(),
            m.at.second()
        );
        for (i, text) in m.text.lines().enumerate() {
            let line = if i == 0 {
                Line::from(vec![
                    Span::styled(time.clone(), t.dim),
                    Span::styled(format!("{}  ", kind_label(m.kind)), style),
                    Span::styled(text.to_string(), t.text),
                ])
            } else {
                Line::from(Span::styled(
                    format!("{}{text}", " ".repeat(PREFIX)),
                    t.text,
                ))
            };
            out.push((line, PREFIX));
        }
    }
    out
}

/// The overlay's frame in a screen of `area`.
fn frame(area: Rect) -> Rect {
    centered(
        area,
        area.width.saturating_sub(4).max(20),
        area.height.saturating_sub(2),
    )
}

/// The rows inside the overlay's frame in a screen of `area`.
pub fn inside(area: Rect) -> Rect {
    Block::bordered().inner(frame(area))
}

/// Every screen row of the log at `width`, once wrapped.
fn screen_rows(app: &AppState, width: usize) -> Vec<Line<'static>> {
    rows(app)
        .iter()
        .flat_map(|(l, indent)| wrap_line(l, width, *indent))
        .collect()
}

/// The furthest the log scrolls (in screen rows) in a screen of `size`: its last row on the
/// frame's last row, never blank rows under it.
pub fn scroll_max(app: &AppState, size: (u16, u16)) -> usize {
    let inner = inside(Rect::new(0, 0, size.0, size.1));
    screen_rows(app, inner.width as usize)
        .len()
        .saturating_sub(inner.height as usize)
}

pub fn draw(app: &AppState, scroll: usize, area: Rect, buf: &mut Buffer) {
    let inner = overlay_frame(
        "Messages, newest first (times UTC) — Esc closes",
        frame(area),
        buf,
        &app.theme,
    );
    if app.messages.is_empty() {
        put_line(
            buf,
            inner,
            0,
            &Line::from(Span::styled(
                "No status message yet: receipts, warnings and errors of this run are kept here.",
                app.theme.dim,
            )),
        );
        return;
    }
    let all = screen_rows(app, inner.width as usize);
    let skip = scroll.min(all.len().saturating_sub(inner.height as usize));
    for (i, row) in all
        .iter()
        .skip(skip)
        .take(inner.height as usize)
        .enumerate()
    {
        put_line(buf, inner, i as u16, row);
    }
}
