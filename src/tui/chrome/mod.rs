//! The screen around the panes, and the entry point of rendering: a pure function of
//! `AppState` into a ratatui `Frame`. Panes on the left (each pane draws its own list inside
//! the frame drawn here), the focused pane's detail on the right, the status bar, then the
//! open overlay on top. Lists and documents draw only their visible rows.

pub mod detail;
pub mod layout;
pub mod messages;
pub mod overlay_update;
pub mod overlays;
pub mod panes;
pub mod status;
pub mod trust;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Widget, Wrap};
use ratatui::Frame;

use crate::tui::app::AppState;
use crate::tui::theme::Theme;

/// Draw the whole UI.
pub fn view(app: &AppState, f: &mut Frame) {
    let area = f.area();
    let r = layout::regions(area.width, area.height, app.focus);
    let buf = f.buffer_mut();
    if r.too_small {
        Paragraph::new(format!(
            "nbook: the terminal is too small ({}×{}); make it at least 20×6.",
            area.width, area.height
        ))
        .wrap(Wrap { trim: true })
        .render(area, buf);
        return;
    }
    panes::draw_panes(app, &r, buf);
    detail::draw_detail(app, r.detail, buf);
    status::draw_status(app, r.status, buf);
    overlays::draw_overlay(app, area, f);
}

/// A bordered block with a title, styled for focus.
pub fn block<'a>(title: impl Into<Line<'a>>, focused: bool, theme: &Theme) -> Block<'a> {
    Block::bordered()
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(if focused {
            theme.border_focused
        } else {
            theme.border
        })
        .title(title.into().style(if focused {
            theme.title_focused
        } else {
            theme.title
        }))
}

/// Clear `area` and draw an overlay frame; returns the inside.
pub fn overlay_frame(title: &str, area: Rect, buf: &mut Buffer, theme: &Theme) -> Rect {
    Clear.render(area, buf);
    let b = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.overlay_border)
        .title(Line::from(format!(" {title} ")).style(theme.title_focused));
    let inner = b.inner(area);
    b.render(area, buf);
    inner
}

/// A centred rectangle of at most `w`×`h` inside `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Write one line into row `y` of `area` (clipped), if the row exists.
pub fn put_line(buf: &mut Buffer, area: Rect, y: u16, line: &Line<'_>) {
    if y < area.height && area.width > 0 {
        buf.set_line(area.x, area.y + y, line, area.width);
    }
}

/// Spans for `text` with the characters at `indices` highlighted.
pub fn highlighted(text: &str, indices: &[u32], base: Style, hl: Style) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut run = String::new();
    let mut run_hl = false;
    for (i, c) in text.chars().enumerate() {
        let is_hl = indices.binary_search(&(i as u32)).is_ok();
        if is_hl != run_hl && !run.is_empty() {
            spans.push(Span::styled(
                std::mem::take(&mut run),
                if run_hl { base.patch(hl) } else { base },
            ));
        }
        run_hl = is_hl;
        run.push(c);
    }
    if !run.is_empty() {
        spans.push(Span::styled(
            run,
            if run_hl { base.patch(hl) } else { base },
        ));
    }
    spans
}

/// Thousands separators for counts: 1234567 → "1,234,567".
pub fn thousands(n: i64) -> String {
    let s = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// The style of the selected row of a pane list, dimmer when the pane is not focused.
/// A list row drawn selected: the selection's colours win over the row's own, its modifiers
/// (bold, italic) stay. A row's own colour could equal the selection's background (a folder's
/// blue on the dark theme's blue selection was invisible).
pub fn select_line(mut line: Line<'_>, sel: Style) -> Line<'_> {
    for span in &mut line.spans {
        span.style = span.style.patch(sel);
    }
    line.style = line.style.patch(sel);
    line
}

pub fn sel_style(app: &AppState, focused: bool) -> Style {
    if focused {
        app.theme.selection
    } else {
        app.theme.selection_unfocused
    }
}
