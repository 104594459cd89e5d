//! A unified diff as the author reads it: coloured rows with a line-number gutter taken from
//! the hunk headers, `⋮` between hunks. Used by the approval request and its full detail.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::tui::theme::Theme;
use crate::tui::widgets::wrap::Row;

fn plain(text: impl Into<String>, style: Style) -> Row {
    (Line::from(Span::styled(text.into(), style)), 0)
}

/// Parse "@@ -a,b +c,d @@" into (old start, new start, new length).
fn hunk_starts(line: &str) -> Option<(usize, usize, usize)> {
    let mut parts = line.split_whitespace().skip(1);
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let num = |s: &str| s.split(',').next().and_then(|n| n.parse::<usize>().ok());
    let len = new
        .split(',')
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    Some((num(old)?, num(new)?, len))
}

/// A unified diff as coloured rows with a line-number gutter; `⋮` between hunks.
pub fn diff_rows(diff: &str, indent: &str, t: &Theme) -> Vec<Row> {
    let width = diff
        .lines()
        .filter(|l| l.starts_with("@@"))
        .filter_map(hunk_starts)
        .map(|(o, n, len)| (n + len).max(o + len))
        .max()
        .unwrap_or(1)
        .to_string()
        .len();
    let (mut old, mut new) = (0usize, 0usize);
    let mut hunks = 0;
    let mut rows = Vec::new();
    let pad = indent.len() + width + 2;
    for l in diff.lines() {
        if l.starts_with("---") || l.starts_with("+++") || l.starts_with('\\') {
            continue;
        }
        if l.starts_with("@@") {
            if let Some((o, n, _)) = hunk_starts(l) {
                old = o;
                new = n;
            }
            if hunks > 0 {
                rows.push(plain(format!("{indent}{:>width$}", "⋮"), t.gutter));
            }
            hunks += 1;
            continue;
        }
        let (num, sign, style) = match l.chars().next() {
            Some('+') => {
                new += 1;
                (new - 1, "+", t.diff_add)
            }
            Some('-') => {
                old += 1;
                (old - 1, "-", t.diff_del)
            }
            _ => {
                old += 1;
                new += 1;
                (new - 1, " ", t.dim)
            }
        };
        let text = l.get(1..).unwrap_or("").to_string();
        rows.push((
            Line::from(vec![
                Span::styled(format!("{indent}{num:>width$} "), t.gutter),
                Span::styled(format!("{sign}{text}"), style),
            ]),
            pad,
        ));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gutter_numbers_follow_hunks() {
        let t = Theme::default();
        let rows = diff_rows(
            "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new\n@@ -10 +10 @@\n-z\n",
            "",
            &t,
        );
        let text: Vec<String> = rows.iter().map(|(l, _)| l.to_string()).collect();
        assert_eq!(text, [" 1  ctx", " 2 -old", " 2 +new", " ⋮", "10 -z"]);
    }
}
