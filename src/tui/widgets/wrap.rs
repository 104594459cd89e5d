//! Wrapping styled lines to a width (word breaks where possible, display width aware) and
//! drawing only as many wrapped rows as fit, top-down or bottom-up. Long documents are drawn
//! from a logical start line so the cost is the visible rows, not the document.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// A logical line with the indent its wrapped rows continue at.
pub type Row = (Line<'static>, usize);

/// An indent meaning "never wrap: cut to one row".
pub const NO_WRAP: usize = usize::MAX;

/// Wrap one styled line into rows of at most `width` cells; continuation rows start with
/// `indent` spaces ([`NO_WRAP`] keeps only the first row).
pub fn wrap_line(line: &Line<'_>, width: usize, indent: usize) -> Vec<Line<'static>> {
    if width == 0 {
        return Vec::new();
    }
    if indent == NO_WRAP {
        let mut rows = wrap_line_inner(line, width, 0, true);
        rows.truncate(1);
        return rows;
    }
    wrap_line_inner(line, width, indent, false)
}

fn wrap_line_inner(line: &Line<'_>, width: usize, indent: usize, hard: bool) -> Vec<Line<'static>> {
    let indent = indent.min(width.saturating_sub(1));
    let mut cells: Vec<(char, Style, usize)> = Vec::new();
    for span in &line.spans {
        let style = line.style.patch(span.style);
        for c in span.content.chars() {
            let c = if c.is_control() { ' ' } else { c };
            cells.push((c, style, c.width().unwrap_or(0)));
        }
    }
    if cells.is_empty() {
        return vec![Line::default()];
    }
    let mut rows = Vec::new();
    let mut start = 0;
    while start < cells.len() {
        let avail = if rows.is_empty() {
            width
        } else {
            width - indent
        };
        let mut used = 0;
        let mut end = start;
        let mut last_space = None;
        while end < cells.len() && used + cells[end].2 <= avail {
            if cells[end].0 == ' ' {
                last_space = Some(end);
            }
            used += cells[end].2;
            end += 1;
        }
        // Break at a word boundary unless that would leave the row mostly empty (long paths).
        if end < cells.len() && !hard && cells[end].0 != ' ' {
            if let Some(sp) = last_space.filter(|sp| (*sp + 1 - start) * 3 >= avail) {
                end = sp + 1;
            }
        }
        if end == start {
            end = start + 1;
        }
        let mut spans: Vec<Span<'static>> = Vec::new();
        if !rows.is_empty() && indent > 0 {
            spans.push(Span::raw(" ".repeat(indent)));
        }
        let mut run = String::new();
        let mut run_style = cells[start].1;
        for &(c, style, _) in &cells[start..end] {
            if style != run_style && !run.is_empty() {
                spans.push(Span::styled(std::mem::take(&mut run), run_style));
            }
            run_style = style;
            run.push(c);
        }
        if !run.is_empty() {
            spans.push(Span::styled(run, run_style));
        }
        rows.push(Line::from(spans));
        start = end;
        // A row that ended at a break space does not carry it to the next row.
        if start < cells.len() && cells[start].0 == ' ' && end > 0 && cells[end - 1].0 != ' ' {
            start += 1;
        }
    }
    rows
}

/// Draw logical lines top-down into `area`, wrapping each; stops when the area is full.
pub fn draw_top_down<'a>(
    area: Rect,
    buf: &mut Buffer,
    lines: impl IntoIterator<Item = (Line<'a>, usize)>,
) {
    let width = area.width as usize;
    if width == 0 || area.height == 0 {
        return;
    }
    let mut y = area.y;
    let bottom = area.y + area.height;
    for (line, indent) in lines {
        for row in wrap_line(&line, width, indent) {
            if y >= bottom {
                return;
            }
            buf.set_line(area.x, y, &row, area.width);
            y += 1;
        }
    }
}

/// Draw logical lines so the last one ends at the bottom of `area`; `lines` is given newest
/// first (it is read only until the area is full).
pub fn draw_bottom_up<'a>(
    area: Rect,
    buf: &mut Buffer,
    newest_first: impl IntoIterator<Item = (Line<'a>, usize)>,
) {
    let width = area.width as usize;
    let height = area.height as usize;
    if width == 0 || height == 0 {
        return;
    }
    let mut rows: Vec<Line<'static>> = Vec::new();
    for (line, indent) in newest_first {
        let wrapped = wrap_line(&line, width, indent);
        rows.extend(wrapped.into_iter().rev());
        if rows.len() >= height {
            break;
        }
    }
    rows.truncate(height);
    let top = area.y + (height - rows.len()) as u16;
    for (i, row) in rows.iter().rev().enumerate() {
        buf.set_line(area.x, top + i as u16, row, area.width);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_words_with_indent() {
        let rows = wrap_line(&Line::from("alpha beta gamma"), 11, 2);
        let text: Vec<String> = rows.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["alpha beta ", "  gamma"]);
        let rows = wrap_line(&Line::from("漢字漢字"), 5, 0);
        assert_eq!(rows.len(), 2);
        assert_eq!(wrap_line(&Line::from("x"), 0, 0).len(), 0);
    }
}
