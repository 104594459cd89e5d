//! Moving through a call's preview, in the Approvals pane or the full-screen detail: `]`/`[`
//! to the next / previous change, `s` side by side ⇄ unified (and why a narrow view stays
//! unified), `/` a search prompt, `n`/`N` its matches, Esc ends it; `x` / `X` keep ⇄ drop the
//! hunk / the file at the top of the view, for approving a call in parts. Positions are item
//! indices of `preview::Item`s laid out at the width the view was last drawn at.

use crate::tui::action::{Command, Effect};
use crate::tui::app::AppState;
use crate::tui::approvals::preview::{
    drawn_width, match_count, next_change, next_match, part_at, side_by_side, Item, Where,
};
use crate::tui::approvals::view::request_items;
use crate::tui::chrome::overlays::detail_items;
use crate::tui::input::{single_line, text_of, Overlay};
use crate::tui::widgets::diff::SIDE_BY_SIDE_MIN;

impl AppState {
    /// The call whose preview the diff keys act on, where it is shown and its scroll.
    fn diff_target(&self) -> Option<(String, Where, usize)> {
        match &self.overlay {
            Some(Overlay::Detail { call_id, scroll }) => {
                Some((call_id.clone(), Where::Detail, *scroll))
            }
            None => self.approvals.selected_call().map(|c| {
                (
                    c.approval_id.clone(),
                    Where::Pane,
                    self.approvals.preview_scroll,
                )
            }),
            _ => None,
        }
    }

    /// The items of `call_id`'s preview as the view `at` lays them out.
    fn with_items<R>(&self, call_id: &str, at: Where, f: impl FnOnce(&[Item]) -> R) -> Option<R> {
        let call = self.approvals.get(call_id)?;
        let width = drawn_width(self, at);
        let items = match at {
            Where::Pane => request_items(self, call, width),
            Where::Detail => detail_items(self, call, width),
        };
        Some(f(&items))
    }

    fn set_scroll(&mut self, at: Where, to: usize) {
        match (&mut self.overlay, at) {
            (Some(Overlay::Detail { scroll, .. }), Where::Detail) => *scroll = to,
            (_, Where::Pane) => self.approvals.preview_scroll = to,
            _ => {}
        }
    }

    /// `]` `[` `s` `/` `n` `N` and ending the search.
    pub(crate) fn diff_command(&mut self, cmd: Command) -> Vec<Effect> {
        let Some((call_id, at, scroll)) = self.diff_target() else {
            if self.overlay.is_none() {
                self.info("No call is waiting for approval: there is no preview to move in.");
            }
            return Vec::new();
        };
        match cmd {
            Command::DiffSideBySide => {
                self.approvals.side_by_side = !self.approvals.side_by_side;
                let width = drawn_width(self, at);
                let text = match side_by_side(self, width) {
                    (true, _) => "File diffs side by side: old left, new right.".to_string(),
                    (false, Some(_)) => format!(
                        "Side by side needs {SIDE_BY_SIDE_MIN} columns and this view has {width}: diffs stay unified until it is wider."
                    ),
                    (false, None) => "File diffs unified.".to_string(),
                };
                self.info(text);
                // Item indices differ between the layouts: start at the top again.
                self.set_scroll(at, 0);
            }
            Command::DiffSearch => {
                let back = (at == Where::Detail).then_some((call_id, scroll));
                self.overlay = Some(Overlay::DiffSearch {
                    input: single_line("text to find in the preview"),
                    back,
                });
            }
            Command::DiffToggleHunk | Command::DiffToggleFile => {
                self.toggle_part(&call_id, at, scroll, cmd == Command::DiffToggleFile);
            }
            Command::DiffEndSearch => {
                self.approvals.search = None;
                self.info("Search ended: n rejects again.");
            }
            Command::DiffNextChange | Command::DiffPrevChange => {
                let forward = cmd == Command::DiffNextChange;
                let found = self
                    .with_items(&call_id, at, |items| next_change(items, scroll, forward))
                    .flatten();
                match found {
                    Some(i) => self.set_scroll(at, i),
                    None if forward => self.info("No further change below."),
                    None => self.info("No earlier change above."),
                }
            }
            Command::DiffNextMatch | Command::DiffPrevMatch => {
                let Some(q) = self.approvals.search.clone() else {
                    return Vec::new();
                };
                self.go_to_match(&call_id, at, scroll, &q, cmd == Command::DiffNextMatch);
            }
            _ => {}
        }
        Vec::new()
    }

    /// `x` / `X`: keep ⇄ drop the hunk (the file) at the top of the view, and say what is kept.
    fn toggle_part(&mut self, call_id: &str, at: Where, scroll: usize, whole_file: bool) {
        let Some(call) = self.approvals.get(call_id).cloned() else {
            return;
        };
        let Some(kept) = self.approvals.kept(&call) else {
            let why = if call.parts {
                "This call has a single part: approve (y) or reject (n) it whole."
            } else {
                "This call cannot be approved in parts: approve (y) or reject (n) it whole."
            };
            self.info(why);
            return;
        };
        let Some((file, hunk)) = self
            .with_items(call_id, at, |items| part_at(items, scroll))
            .flatten()
        else {
            self.info(
                "No file diff at the top of the preview: scroll to the hunk to keep or drop.",
            );
            return;
        };
        let hunks = kept.files.get(file).map_or(1, Vec::len);
        let name = match &call.preview.body {
            crate::engine::PreviewBody::Files { changes } => changes
                .get(file)
                .map(|c| crate::text::escape_for_terminal(&c.path).into_owned())
                .unwrap_or_default(),
            _ => String::new(),
        };
        let (what, now_kept) = if whole_file || hunks == 1 {
            (name, self.approvals.toggle_part(&call, file, None))
        } else {
            let h = hunk.min(hunks - 1);
            (
                format!("hunk {} of {} of {name}", h + 1, hunks),
                self.approvals.toggle_part(&call, file, Some(h)),
            )
        };
        let summary = self
            .approvals
            .kept(&call)
            .map(|k| k.summary())
            .unwrap_or_default();
        self.info(format!(
            "{} {what}: keeping {summary}.",
            if now_kept { "Kept" } else { "Dropped" }
        ));
    }

    /// Scroll to the match of `q` after (before) `from`, and say which one it is.
    fn go_to_match(&mut self, call_id: &str, at: Where, from: usize, q: &str, forward: bool) {
        let found = self.with_items(call_id, at, |items| {
            let total = match_count(items, q);
            let next = next_match(items, from, q, forward)?;
            let nth = (0..=next).filter(|&i| items_match(items, i, q)).count();
            Some((next, nth, total))
        });
        match found.flatten() {
            Some((i, nth, total)) => {
                self.set_scroll(at, i);
                self.info(format!(
                    "\"{q}\": match {nth} of {total} (n next, N previous, Esc ends the search)"
                ));
            }
            None => {
                self.approvals.search = None;
                self.info(format!("No match for \"{q}\" in this preview."));
            }
        }
    }

    /// Enter in the search prompt: search from the top of what is shown; Esc goes back.
    pub(crate) fn diff_search_command(&mut self, cmd: Command) -> Vec<Effect> {
        let accept = matches!(cmd, Command::Accept | Command::Submit);
        if !accept && cmd != Command::Cancel {
            return Vec::new();
        }
        let Some(Overlay::DiffSearch { input, back }) = self.overlay.take() else {
            return Vec::new();
        };
        let query = text_of(&input).trim().to_string();
        let (at, call_id, scroll) = match back {
            Some((call_id, scroll)) => {
                self.overlay = Some(Overlay::Detail {
                    call_id: call_id.clone(),
                    scroll,
                });
                (Where::Detail, Some(call_id), scroll)
            }
            None => (
                Where::Pane,
                self.approvals
                    .selected_call()
                    .map(|c| c.approval_id.clone()),
                self.approvals.preview_scroll,
            ),
        };
        if !accept {
            return Vec::new();
        }
        let Some(call_id) = call_id else {
            self.info("The call is no longer waiting: nothing to search.");
            return Vec::new();
        };
        if query.is_empty() {
            self.info("Nothing typed: nothing to find.");
            return Vec::new();
        }
        self.approvals.search = Some(query.clone());
        // The first match at or after the top row: start the search one item before it.
        let len = self
            .with_items(&call_id, at, |items| items.len())
            .unwrap_or(0);
        let from = (scroll + len.max(1) - 1) % len.max(1);
        self.go_to_match(&call_id, at, from, &query, true);
        Vec::new()
    }
}

fn items_match(items: &[Item], i: usize, q: &str) -> bool {
    match_count(&items[i..=i], q) == 1
}
