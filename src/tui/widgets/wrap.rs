//! Wrapping styled lines to a width (word breaks where possible — after spaces, and between
//! ideographs where UAX #14 allows — display width aware), cutting text to a number of
//! display columns ([`fit_width`]), and
//! drawing only as many wrapped rows as fit, top-down or bottom-up. Long documents are drawn
//! from a logical start line so the cost is the visible rows, not the document.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

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
    let breaks = if hard {
        Vec::new()
    } else {
        break_before(&cells)
    };
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
        let mut last_break = None;
        while end < cells.len() && used + cells[end].2 <= avail {
            used += cells[end].2;
            end += 1;
            if breaks.get(end).copied().unwrap_or(false) {
                last_break = Some(end);
            }
        }
        // Break at a word boundary unless that would leave the row mostly empty (long paths).
        let fits_here = breaks.get(end).copied().unwrap_or(false);
        if end < cells.len() && !hard && cells[end].0 != ' ' && !fits_here {
            if let Some(b) = last_break.filter(|b| (*b - start) * 3 >= avail) {
                end = b;
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

/// Where a row may start, per cell: `out[i]` is true when a line may break before cell `i`.
/// The opportunities are UAX #14's (the `unicode-linebreak` crate), so ideographic prose breaks
/// between characters but never before a closing mark such as `。` or `」` nor after an
/// opening one. Latin text keeps its rule (a row may start after a space, never at hyphens or
/// slashes, so paths and compounds stay whole); UAX #14's opportunities are taken where they
/// touch a wide (East Asian) character.
fn break_before(cells: &[(char, Style, usize)]) -> Vec<bool> {
    let text: String = cells.iter().map(|c| c.0).collect();
    let mut at_byte = vec![false; text.len() + 1];
    for (pos, _) in unicode_linebreak::linebreaks(&text) {
        at_byte[pos] = true;
    }
    let mut out = vec![false; cells.len() + 1];
    let mut byte = 0;
    for i in 0..=cells.len() {
        if i > 0 && i < cells.len() {
            let (before, after) = (&cells[i - 1], &cells[i]);
            let after_space = before.0 == ' ' && after.0 != ' ';
            out[i] = after_space || (at_byte[byte] && (before.2 > 1 || after.2 > 1));
        }
        if let Some(c) = cells.get(i) {
            byte += c.0.len_utf8();
        }
    }
    out
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

/// Where [`fit_width`] cuts a text that is too wide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Keep the start: "a long titl…".
    End,
    /// Keep both ends: "manuscript/…/index.md".
    Middle,
}

/// `s` in at most `max` display columns (wide characters count two), with `…` where it was
/// cut. The one truncation the UI uses, so a title in Chinese is cut at 24 columns, not at
/// 24 characters (48 columns).
pub fn fit_width(s: &str, max: usize, at: Cut) -> String {
    if s.width() <= max {
        return s.to_string();
    }
    let room = max.saturating_sub(1);
    let take = |chars: &mut dyn Iterator<Item = char>, cols: usize| {
        let mut out = String::new();
        let mut used = 0;
        for c in chars {
            let w = c.width().unwrap_or(0);
            if used + w > cols {
                break;
            }
            used += w;
            out.push(c);
        }
        out
    };
    match at {
        Cut::End => take(&mut s.chars(), room) + "…",
        Cut::Middle => {
            let head_cols = room / 2;
            let head = take(&mut s.chars(), head_cols);
            let tail_rev = take(&mut s.chars().rev(), room - head.width());
            head + "…" + &tail_rev.chars().rev().collect::<String>()
        }
    }
}

/// `s` padded with spaces to at least `cols` display columns (wide characters count two), so
/// columns after it line up whatever script a key or label is written in.
pub fn pad_width(s: &str, cols: usize) -> String {
    let mut out = s.to_string();
    out.extend(std::iter::repeat_n(' ', cols.saturating_sub(s.width())));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_by_display_columns() {
        assert_eq!(pad_width("ab", 4), "ab  ");
        assert_eq!(pad_width("漢", 4), "漢  ");
        assert_eq!(pad_width("toolong", 3), "toolong");
    }

    #[test]
    fn wraps_at_words_with_indent() {
        let rows = wrap_line(&Line::from("alpha beta gamma"), 11, 2);
        let text: Vec<String> = rows.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["alpha beta ", "  gamma"]);
        let rows = wrap_line(&Line::from("漢字漢字"), 5, 0);
        assert_eq!(rows.len(), 2);
        assert_eq!(wrap_line(&Line::from("x"), 0, 0).len(), 0);
    }

    fn rows(text: &str, width: usize) -> Vec<String> {
        wrap_line(&Line::from(text), width, 0)
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    #[test]
    fn cjk_prose_breaks_between_ideographs_but_not_before_closing_marks() {
        // 10 columns = 5 ideographs; "。" may not start a row, so "光。" moves down together.
        assert_eq!(
            rows("灯塔的光照着海面的光。", 10),
            ["灯塔的光照", "着海面的", "光。"]
        );
        // A closing quote stays with its text, an opening one with what follows.
        for r in rows("他说「走吧」然后我们就出发了", 10) {
            assert!(
                !r.starts_with('」') && !r.trim_end().ends_with('「'),
                "{r:?}"
            );
        }
        // Latin words in Chinese prose still break only at spaces or at the ideographs.
        assert_eq!(rows("用 cargo build 编译", 12), ["用 cargo ", "build 编译"]);
        // Japanese: no row starts with 、or 。
        for r in rows("吾輩は猫である。名前はまだ無い、どこで生れたか", 8) {
            assert!(!r.starts_with('、') && !r.starts_with('。'), "{r:?}");
            assert!(r.width() <= 8, "{r:?}");
        }
    }

    #[test]
    fn latin_text_still_breaks_only_after_spaces() {
        assert_eq!(
            rows("see /tmp/a-long-name here", 12),
            ["see ", "/tmp/a-long-", "name here"]
        );
    }

    #[test]
    fn fit_width_counts_display_columns() {
        assert_eq!(fit_width("abcdef", 4, Cut::End), "abc…");
        assert_eq!(fit_width("abc", 4, Cut::End), "abc");
        // Wide characters take two columns: 7 columns hold three and the ellipsis.
        assert_eq!(fit_width("灯塔守护者日记", 7, Cut::End), "灯塔守…");
        assert_eq!(fit_width("灯塔守护者日记", 7, Cut::End).width(), 7);
        // A wide character that would straddle the limit is left out, never split.
        assert_eq!(fit_width("灯塔守护者日记", 6, Cut::End), "灯塔…");
        assert_eq!(
            fit_width("manuscript/chapter/index.md", 15, Cut::Middle),
            "manuscr…ndex.md"
        );
        // Both ends kept; a wide character that does not fit leaves its column empty.
        assert_eq!(
            fit_width("章节/第一章/场景.md", 12, Cut::Middle),
            "章节/…景.md"
        );
        assert_eq!(fit_width("", 0, Cut::End), "");
    }
}
