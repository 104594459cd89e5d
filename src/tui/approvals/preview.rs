//! A call's preview as a list of cheap items — plain rows, and references into the call's
//! parsed file diffs — so the pane and the full-screen detail skip to their scroll position
//! and make rows only for what fits on screen. Also where the preview's changes and search
//! matches are, for `]`/`[` and `n`/`N`, and the width each view was last drawn at (the
//! keys must count items the way the screen laid them out).

use std::sync::atomic::Ordering;

use crate::tui::app::AppState;
use crate::tui::widgets::diff::{
    find_all, is_change, item_matches, item_rows, DiffItem, DiffLook, SIDE_BY_SIDE_MIN,
};
use crate::tui::widgets::prose_diff::ProseDiff;
use crate::tui::widgets::wrap::Row;
use ratatui::style::Modifier;

/// One item of a preview.
pub enum Item<'a> {
    Row(Row),
    /// A row search passes over (the options, which repeat the query).
    Plain(Row),
    Diff {
        pd: &'a ProseDiff,
        item: DiffItem,
        indent: &'static str,
        /// The file of the preview it belongs to.
        file: usize,
        /// Its part is dropped: drawn dim and struck through.
        dropped: bool,
    },
}

impl Item<'_> {
    fn is_change(&self) -> bool {
        match self {
            Item::Row(_) | Item::Plain(_) => false,
            Item::Diff { pd, item, .. } => is_change(pd, *item),
        }
    }

    fn matches(&self, query: &str) -> bool {
        match self {
            Item::Row((line, _)) => !find_all(&line.to_string(), query).is_empty(),
            Item::Plain(_) => false,
            Item::Diff { pd, item, .. } => item_matches(pd, *item, query),
        }
    }
}

/// Which view is asking: the Approvals pane's right-hand preview or the full-screen detail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Where {
    Pane,
    Detail,
}

/// Whether diffs show side by side at `width`, and if the author asked but it is too narrow,
/// the note that says why they stay unified.
pub fn side_by_side(app: &AppState, width: u16) -> (bool, Option<String>) {
    if !app.approvals.side_by_side {
        return (false, None);
    }
    if width >= SIDE_BY_SIDE_MIN {
        return (true, None);
    }
    (
        false,
        Some(format!(
            "unified: side by side needs {SIDE_BY_SIDE_MIN} columns, this view has {width}"
        )),
    )
}

/// Rows for `items`, made lazily: a consumer that stops at the screen's bottom makes no more.
pub fn rows<'a>(
    app: &'a AppState,
    items: &'a [Item<'a>],
    width: u16,
) -> impl Iterator<Item = Row> + 'a {
    let note = side_by_side(app, width).1;
    let search = app.approvals.search.as_deref();
    items.iter().flat_map(move |it| match it {
        Item::Row(r) | Item::Plain(r) => vec![r.clone()],
        Item::Diff {
            pd,
            item,
            indent,
            dropped,
            ..
        } => {
            let mut rows = item_rows(
                pd,
                *item,
                &DiffLook {
                    theme: &app.theme,
                    indent,
                    width: width as usize,
                    search,
                    narrow_note: note.as_deref(),
                },
            );
            if *dropped && *item != DiffItem::Summary {
                let gone = app.theme.dim.add_modifier(Modifier::CROSSED_OUT);
                for (line, _) in &mut rows {
                    *line = std::mem::take(line).patch_style(gone);
                }
            }
            rows
        }
    })
}

/// The hunk a diff item shows (the summary counts as the file's first hunk).
pub fn hunk_of(pd: &ProseDiff, item: DiffItem) -> usize {
    let line = match item {
        DiffItem::Summary => None,
        DiffItem::Line(i) => Some(i),
        DiffItem::Pair(l, r) => l.or(r),
    };
    line.and_then(|i| pd.lines.get(i)).map_or(0, |l| l.hunk)
}

/// The part at the top of the view: the file and hunk of the first diff item at or after
/// `from` (a file's header row counts as its first hunk).
pub fn part_at(items: &[Item], from: usize) -> Option<(usize, usize)> {
    items.iter().skip(from).find_map(|it| match it {
        Item::Diff { pd, item, file, .. } => Some((*file, hunk_of(pd, *item))),
        _ => None,
    })
}

/// The next (or previous) item after (before) `from` where a change starts.
pub fn next_change(items: &[Item], from: usize, forward: bool) -> Option<usize> {
    let starts =
        (0..items.len()).filter(|&i| items[i].is_change() && (i == 0 || !items[i - 1].is_change()));
    if forward {
        starts.into_iter().find(|&i| i > from)
    } else {
        starts.into_iter().rfind(|&i| i < from)
    }
}

/// The next (previous) item holding `query`, wrapping around the preview's end.
pub fn next_match(items: &[Item], from: usize, query: &str, forward: bool) -> Option<usize> {
    let n = items.len();
    if n == 0 {
        return None;
    }
    (1..=n)
        .map(|k| {
            if forward {
                (from + k) % n
            } else {
                (from + n - k % n) % n
            }
        })
        .find(|&i| items[i].matches(query))
}

/// How many items match `query`.
pub fn match_count(items: &[Item], query: &str) -> usize {
    items.iter().filter(|it| it.matches(query)).count()
}

/// The width a view was last drawn at (the terminal's width before the first draw).
pub fn drawn_width(app: &AppState, at: Where) -> u16 {
    let w = match at {
        Where::Pane => app.approvals.pane_width.load(Ordering::Relaxed),
        Where::Detail => app.approvals.detail_width.load(Ordering::Relaxed),
    };
    if w == 0 {
        app.size.0
    } else {
        w
    }
}

/// Remember the width a view is drawn at.
pub fn note_width(app: &AppState, at: Where, width: u16) {
    let slot = match at {
        Where::Pane => &app.approvals.pane_width,
        Where::Detail => &app.approvals.detail_width,
    };
    slot.store(width, Ordering::Relaxed);
}
