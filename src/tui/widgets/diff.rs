//! A parsed prose diff ([`ProseDiff`]) as the author reads it: a summary row, then coloured
//! rows with a line-number gutter (`⋮` between hunks), the changed words of each paired line
//! in a stronger style, search matches marked. Unified (one item per line) or side by side
//! (old left, new right, one item per row pair). Rows are made only for the items drawn, so a
//! 30,000-word rewrite costs a screen's worth of work per frame.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::tui::theme::Theme;
use crate::tui::widgets::prose_diff::{LineKind, ProseDiff};
use crate::tui::widgets::wrap::{pad_width, wrap_line, Row};

/// The narrowest area that shows diffs side by side; below it they stay unified.
pub const SIDE_BY_SIDE_MIN: u16 = 100;

/// One drawable piece of a file's diff.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffItem {
    /// "3 paragraphs, 41 words changed".
    Summary,
    /// A line, unified.
    Line(usize),
    /// Side by side: the old line (left) and the new one (right); `None` is blank.
    Pair(Option<usize>, Option<usize>),
}

/// The items of `pd` in display order.
pub fn items(pd: &ProseDiff, side_by_side: bool) -> Vec<DiffItem> {
    let mut out = vec![DiffItem::Summary];
    if !side_by_side {
        out.extend((0..pd.lines.len()).map(DiffItem::Line));
        return out;
    }
    let mut i = 0;
    while i < pd.lines.len() {
        match pd.lines[i].kind {
            LineKind::Context | LineKind::Gap => {
                out.push(DiffItem::Pair(Some(i), Some(i)));
                i += 1;
            }
            LineKind::Removed | LineKind::Added => {
                // A group of changed lines: removed ones left, added ones right, in order.
                let start = i;
                while i < pd.lines.len()
                    && matches!(pd.lines[i].kind, LineKind::Removed | LineKind::Added)
                {
                    i += 1;
                }
                let del: Vec<usize> = (start..i)
                    .filter(|&j| pd.lines[j].kind == LineKind::Removed)
                    .collect();
                let add: Vec<usize> = (start..i)
                    .filter(|&j| pd.lines[j].kind == LineKind::Added)
                    .collect();
                for k in 0..del.len().max(add.len()) {
                    out.push(DiffItem::Pair(del.get(k).copied(), add.get(k).copied()));
                }
            }
        }
    }
    out
}

/// True when the item shows a changed line.
pub fn is_change(pd: &ProseDiff, item: DiffItem) -> bool {
    let changed = |i: usize| {
        pd.lines
            .get(i)
            .is_some_and(|l| matches!(l.kind, LineKind::Removed | LineKind::Added))
    };
    match item {
        DiffItem::Summary => false,
        DiffItem::Line(i) => changed(i),
        DiffItem::Pair(l, r) => l.is_some_and(changed) || r.is_some_and(changed),
    }
}

/// Byte ranges of `query` in `hay`: ASCII queries ignore case, others match exactly (so
/// byte offsets stay those of `hay`).
pub fn find_all(hay: &str, query: &str) -> Vec<Range<usize>> {
    if query.is_empty() {
        return Vec::new();
    }
    let owned;
    let (h, q): (&str, String) = if query.is_ascii() {
        owned = hay.to_ascii_lowercase();
        (&owned, query.to_ascii_lowercase())
    } else {
        (hay, query.to_string())
    };
    h.match_indices(q.as_str())
        .map(|(i, m)| i..i + m.len())
        .collect()
}

/// True when the item's text contains `query`.
pub fn item_matches(pd: &ProseDiff, item: DiffItem, query: &str) -> bool {
    let hit = |i: usize| {
        pd.lines
            .get(i)
            .is_some_and(|l| !find_all(&l.text, query).is_empty())
    };
    match item {
        DiffItem::Summary => false,
        DiffItem::Line(i) => hit(i),
        DiffItem::Pair(l, r) => l.is_some_and(hit) || r.is_some_and(hit),
    }
}

/// How one item is drawn.
pub struct DiffLook<'a> {
    pub theme: &'a Theme,
    pub indent: &'a str,
    /// The area's width in columns (side-by-side rows are wrapped to it here).
    pub width: usize,
    pub search: Option<&'a str>,
    /// Why the diff is unified although side by side was asked for.
    pub narrow_note: Option<&'a str>,
}

/// Spans of `text` in `base`, with `changed` ranges in `strong` and search matches marked.
pub fn emphasised(
    text: &str,
    base: Style,
    changed: &[Range<usize>],
    strong: Style,
    search: Option<&str>,
    matched: Style,
) -> Vec<Span<'static>> {
    let found = search.map(|q| find_all(text, q)).unwrap_or_default();
    if changed.is_empty() && found.is_empty() {
        return vec![Span::styled(text.to_string(), base)];
    }
    let mut cuts: Vec<usize> = vec![0, text.len()];
    for r in changed.iter().chain(found.iter()) {
        cuts.push(r.start.min(text.len()));
        cuts.push(r.end.min(text.len()));
    }
    cuts.sort_unstable();
    cuts.dedup();
    let inside = |rs: &[Range<usize>], at: usize| rs.iter().any(|r| r.start <= at && at < r.end);
    let mut spans = Vec::new();
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let Some(piece) = text.get(a..b) else {
            continue;
        };
        if piece.is_empty() {
            continue;
        }
        let mut style = if inside(changed, a) { strong } else { base };
        if inside(&found, a) {
            style = style.patch(matched);
        }
        spans.push(Span::styled(piece.to_string(), style));
    }
    spans
}

/// The sign, base style and word style of a line kind.
fn look_of(kind: LineKind, t: &Theme) -> (&'static str, Style, Style) {
    match kind {
        LineKind::Added => ("+", t.diff_add, t.diff_add_word),
        LineKind::Removed => ("-", t.diff_del, t.diff_del_word),
        LineKind::Context | LineKind::Gap => (" ", t.dim, t.dim),
    }
}

/// One line as a row: gutter, sign, text (changed words emphasised).
fn line_row(pd: &ProseDiff, i: usize, look: &DiffLook) -> Row {
    let t = look.theme;
    let w = pd.num_width;
    let Some(l) = pd.lines.get(i) else {
        return (Line::from(""), 0);
    };
    if l.kind == LineKind::Gap {
        return (
            Line::from(Span::styled(
                format!("{}{:>w$}", look.indent, "⋮"),
                t.gutter,
            )),
            0,
        );
    }
    let (sign, base, strong) = look_of(l.kind, t);
    let mut spans = vec![
        Span::styled(format!("{}{:>w$} ", look.indent, l.num), t.gutter),
        Span::styled(sign, base),
    ];
    spans.extend(emphasised(
        &l.text,
        base,
        &l.changed,
        strong,
        look.search,
        t.matched,
    ));
    (Line::from(spans), look.indent.len() + w + 2)
}

/// The rows of one item (a side-by-side pair comes wrapped, one row per screen line).
pub fn item_rows(pd: &ProseDiff, item: DiffItem, look: &DiffLook) -> Vec<Row> {
    let t = look.theme;
    match item {
        DiffItem::Summary => {
            let mut spans = vec![Span::styled(
                format!("{}{}", look.indent, pd.summary()),
                t.diff_hunk,
            )];
            if let Some(note) = look.narrow_note {
                spans.push(Span::styled(format!(" · {note}"), t.dim));
            }
            vec![(Line::from(spans), look.indent.len())]
        }
        DiffItem::Line(i) => vec![line_row(pd, i, look)],
        DiffItem::Pair(l, r) => {
            let inner = look.width.saturating_sub(look.indent.len());
            // Two columns and a one-column rule between them.
            let half = inner.saturating_sub(1) / 2;
            let side = |i: Option<usize>| -> Vec<Line<'static>> {
                let Some(i) = i else { return Vec::new() };
                let (line, pad) = line_row(
                    pd,
                    i,
                    &DiffLook {
                        indent: "",
                        ..*look
                    },
                );
                wrap_line(&line, half.max(1), pad)
            };
            let (left, right) = (side(l), side(r));
            let n = left.len().max(right.len()).max(1);
            (0..n)
                .map(|k| {
                    let mut spans = vec![Span::raw(look.indent.to_string())];
                    let (lt, lw) = match left.get(k) {
                        Some(line) => (line.spans.clone(), line.width()),
                        None => (Vec::new(), 0),
                    };
                    spans.extend(lt);
                    spans.push(Span::raw(pad_width("", half.saturating_sub(lw))));
                    spans.push(Span::styled("│", t.gutter));
                    if let Some(line) = right.get(k) {
                        spans.extend(line.spans.clone());
                    }
                    (Line::from(spans), 0)
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(rows: &[Row]) -> Vec<String> {
        rows.iter().map(|(l, _)| l.to_string()).collect()
    }

    fn look(t: &Theme) -> DiffLook<'_> {
        DiffLook {
            theme: t,
            indent: "",
            width: 60,
            search: None,
            narrow_note: None,
        }
    }

    #[test]
    fn gutter_numbers_follow_hunks() {
        let t = Theme::default();
        let pd = ProseDiff::parse(
            "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new\n@@ -10 +10 @@\n-z\n",
        );
        let rows: Vec<Row> = items(&pd, false)
            .into_iter()
            .flat_map(|i| item_rows(&pd, i, &look(&t)))
            .collect();
        assert_eq!(
            text(&rows),
            [
                "2 paragraphs, 2 words changed",
                " 1  ctx",
                " 2 -old",
                " 2 +new",
                " ⋮",
                "10 -z"
            ]
        );
    }

    #[test]
    fn side_by_side_pairs_old_left_new_right() {
        let t = Theme::default();
        let pd = ProseDiff::parse("@@ -1,2 +1,3 @@\n ctx\n-old\n+new\n+more\n");
        let it = items(&pd, true);
        assert_eq!(
            it[1..],
            [
                DiffItem::Pair(Some(0), Some(0)),
                DiffItem::Pair(Some(1), Some(2)),
                DiffItem::Pair(None, Some(3)),
            ]
        );
        let rows = item_rows(&pd, it[2], &look(&t));
        assert_eq!(text(&rows), [format!("2 -old{}│2 +new", " ".repeat(23))]);
    }

    #[test]
    fn search_ignores_ascii_case() {
        assert_eq!(find_all("Gulls and gulls", "GULLS"), [0..5, 10..15]);
        assert_eq!(find_all("港口很安静", "安静").first(), Some(&(9..15)));
        assert!(find_all("x", "").is_empty());
    }
}
