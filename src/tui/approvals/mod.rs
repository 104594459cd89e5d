//! The Approvals pane's model: one FIFO of everything waiting for the author — pending calls
//! and questions (`request_user_input` forms, workflow `wf.ask` prompts) — in the order they
//! arrived, the selection, and small labels (what a call targets, how long it has waited)
//! shared by the list, the preview, the receipts and the status bar.

pub mod commands;
pub mod navigate;
pub mod preview;
mod update;
pub mod view;

use crate::engine::inputs::InputRequest;
use crate::engine::parts;
use crate::engine::{KeptParts, PartSelection, PendingCall, PreviewBody};
use crate::tui::widgets::wrap::{fit_width, Cut};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::AtomicU16;
use std::sync::Arc;

use crate::tui::widgets::prose_diff::ProseDiff;
use unicode_width::UnicodeWidthStr;

/// The parsed diffs of a call's file changes (empty for other previews).
pub fn parse_diffs(call: &PendingCall) -> Vec<ProseDiff> {
    match &call.preview.body {
        PreviewBody::Files { changes } => {
            changes.iter().map(|c| ProseDiff::parse(&c.diff)).collect()
        }
        _ => Vec::new(),
    }
}

/// One row of the Approvals pane.
// The pane holds a handful of rows; boxing the call would only add indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Waiting {
    Call(PendingCall),
    Question(InputRequest),
}

impl Waiting {
    pub fn id(&self) -> &str {
        match self {
            Waiting::Call(c) => &c.approval_id,
            Waiting::Question(q) => &q.id,
        }
    }

    pub fn session_id(&self) -> &str {
        match self {
            Waiting::Call(c) => &c.session_id,
            Waiting::Question(q) => &q.session_id,
        }
    }

    pub fn requested_at(&self) -> &str {
        match self {
            Waiting::Call(c) => &c.requested_at,
            Waiting::Question(q) => &q.requested_at,
        }
    }
}

/// A call's parts: every part kept (the template the author's drops apply to) and the first
/// old line of each hunk of each file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartsInfo {
    pub all: KeptParts,
    pub starts: Vec<Vec<usize>>,
}

impl PartsInfo {
    /// For a call that can be approved in parts and has more than one part.
    fn of(call: &PendingCall) -> Option<PartsInfo> {
        if !call.parts {
            return None;
        }
        let all = KeptParts::all_of(&call.preview);
        if all.files.iter().map(Vec::len).sum::<usize>() < 2 {
            return None;
        }
        let starts = match &call.preview.body {
            PreviewBody::Files { changes } => changes
                .iter()
                .map(|c| {
                    parts::diff_hunks(&c.diff)
                        .iter()
                        .map(|h| h.old_start())
                        .collect()
                })
                .collect(),
            _ => Vec::new(),
        };
        Some(PartsInfo { all, starts })
    }
}

#[derive(Debug, Default)]
pub struct ApprovalsState {
    /// Oldest first, as they arrived (calls and questions interleaved).
    pub items: Vec<Waiting>,
    pub selected: usize,
    pub offset: usize,
    pub preview_scroll: usize,
    /// Each waiting call's file diffs, parsed and word-diffed once when the call arrives
    /// (by approval id, in the order of its changes), so drawing and scrolling never diff.
    pub diffs: HashMap<String, Arc<Vec<ProseDiff>>>,
    /// The author asked for side-by-side diffs (`s`); shown where the area is wide enough.
    pub side_by_side: bool,
    /// The search in the preview (`/`), while active: `n`/`N` go to its matches.
    pub search: Option<String>,
    /// Calls put back in the queue at open (they waited across a restart), with whether
    /// their target changed meanwhile.
    pub restored: HashMap<String, crate::engine::pending_store::RestoredCall>,
    /// The parts (`f<i>h<j>`) the author dropped from a waiting call, by approval id; `y`
    /// then applies only the others (`Decision::ApproveParts`).
    pub dropped: HashMap<String, BTreeSet<String>>,
    /// The parts of each call that can be approved in parts, worked out once when it arrives
    /// (drawing and scrolling never parse the diffs for them again).
    pub parts: HashMap<String, Arc<PartsInfo>>,
    /// The widths the pane preview and the detail were last drawn at (`preview::drawn_width`).
    pub pane_width: AtomicU16,
    pub detail_width: AtomicU16,
}

impl ApprovalsState {
    /// Everything waiting: calls and questions.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn calls(&self) -> impl Iterator<Item = &PendingCall> {
        self.items.iter().filter_map(|w| match w {
            Waiting::Call(c) => Some(c),
            Waiting::Question(_) => None,
        })
    }

    pub fn questions(&self) -> impl Iterator<Item = &InputRequest> {
        self.items.iter().filter_map(|w| match w {
            Waiting::Question(q) => Some(q),
            Waiting::Call(_) => None,
        })
    }

    pub fn call_count(&self) -> usize {
        self.calls().count()
    }

    pub fn question_count(&self) -> usize {
        self.questions().count()
    }

    fn add(&mut self, item: Waiting) {
        if !self.items.iter().any(|w| w.id() == item.id()) {
            if let Waiting::Call(c) = &item {
                if !self.diffs.contains_key(&c.approval_id) {
                    self.diffs
                        .insert(c.approval_id.clone(), Arc::new(parse_diffs(c)));
                }
                if let Some(info) = PartsInfo::of(c) {
                    self.parts.insert(c.approval_id.clone(), Arc::new(info));
                }
            }
            self.items.push(item);
        }
    }

    /// The parsed diffs of a waiting call (empty when it has none or is unknown).
    pub fn diffs_of(&self, approval_id: &str) -> Arc<Vec<ProseDiff>> {
        self.diffs.get(approval_id).cloned().unwrap_or_default()
    }

    /// Add a call at the end unless it is already queued.
    pub fn push(&mut self, call: PendingCall) {
        self.add(Waiting::Call(call));
    }

    /// Add a question at the end unless it is already listed.
    pub fn push_question(&mut self, q: InputRequest) {
        self.add(Waiting::Question(q));
    }

    fn remove_at(&mut self, pos: usize) -> Waiting {
        let item = self.items.remove(pos);
        self.diffs.remove(item.id());
        self.dropped.remove(item.id());
        self.parts.remove(item.id());
        if pos < self.selected {
            self.selected -= 1;
        }
        if pos == self.selected {
            self.preview_scroll = 0;
            self.search = None;
        }
        self.selected = self.selected.min(self.items.len().saturating_sub(1));
        item
    }

    /// Why a call restored at open is stale (its target changed while nbook was closed).
    pub fn stale_reason(&self, approval_id: &str) -> Option<&str> {
        self.restored.get(approval_id)?.stale.as_deref()
    }

    /// Put a call previewed anew in place of the one with its id (same row, fresh diffs).
    pub fn replace(&mut self, call: PendingCall) -> bool {
        let Some(pos) = self
            .items
            .iter()
            .position(|w| matches!(w, Waiting::Call(c) if c.approval_id == call.approval_id))
        else {
            return false;
        };
        self.diffs
            .insert(call.approval_id.clone(), Arc::new(parse_diffs(&call)));
        if let Some(r) = self.restored.get_mut(&call.approval_id) {
            r.stale = None;
        }
        self.items[pos] = Waiting::Call(call);
        if pos == self.selected {
            self.preview_scroll = 0;
        }
        true
    }

    /// Remove a call; the selection stays on the same row (the next item moves up).
    pub fn remove(&mut self, call_id: &str) -> Option<PendingCall> {
        let pos = self
            .items
            .iter()
            .position(|w| matches!(w, Waiting::Call(c) if c.approval_id == call_id))?;
        match self.remove_at(pos) {
            Waiting::Call(c) => Some(c),
            Waiting::Question(_) => None,
        }
    }

    /// Remove a question (answered, withdrawn).
    pub fn remove_question(&mut self, id: &str) -> Option<InputRequest> {
        let pos = self
            .items
            .iter()
            .position(|w| matches!(w, Waiting::Question(q) if q.id == id))?;
        match self.remove_at(pos) {
            Waiting::Question(q) => Some(q),
            Waiting::Call(_) => None,
        }
    }

    /// Replace everything (after a resync): calls and questions merged by request time.
    pub fn replace_all(&mut self, calls: Vec<PendingCall>, questions: Vec<InputRequest>) {
        let keep = self.items.get(self.selected).map(|w| w.id().to_string());
        self.items.clear();
        // Calls still waiting keep their parsed diffs; the rest are dropped below.
        let mut all: Vec<Waiting> = calls
            .into_iter()
            .map(Waiting::Call)
            .chain(questions.into_iter().map(Waiting::Question))
            .collect();
        // Stable: calls keep their queue order among equal times.
        all.sort_by(|a, b| a.requested_at().cmp(b.requested_at()));
        self.diffs
            .retain(|id, _| all.iter().any(|w| w.id() == id.as_str()));
        self.dropped
            .retain(|id, _| all.iter().any(|w| w.id() == id.as_str()));
        self.parts
            .retain(|id, _| all.iter().any(|w| w.id() == id.as_str()));
        for w in all {
            self.add(w);
        }
        self.selected = keep
            .and_then(|id| self.items.iter().position(|w| w.id() == id))
            .unwrap_or(0);
    }

    pub fn selected_item(&self) -> Option<&Waiting> {
        self.items.get(self.selected)
    }

    pub fn selected_call(&self) -> Option<&PendingCall> {
        match self.items.get(self.selected) {
            Some(Waiting::Call(c)) => Some(c),
            _ => None,
        }
    }

    pub fn selected_question(&self) -> Option<&InputRequest> {
        match self.items.get(self.selected) {
            Some(Waiting::Question(q)) => Some(q),
            _ => None,
        }
    }

    pub fn get(&self, call_id: &str) -> Option<&PendingCall> {
        self.calls().find(|c| c.approval_id == call_id)
    }

    pub fn get_question(&self, id: &str) -> Option<&InputRequest> {
        self.questions().find(|q| q.id == id)
    }

    /// The parts of `call` the author keeps, when it can be approved in parts and has more
    /// than one.
    pub fn kept(&self, call: &PendingCall) -> Option<KeptParts> {
        let mut kept = self.parts.get(&call.approval_id)?.all.clone();
        if let Some(dropped) = self.dropped.get(&call.approval_id) {
            for (i, f) in kept.files.iter_mut().enumerate() {
                for (j, k) in f.iter_mut().enumerate() {
                    *k = !dropped.contains(&parts::part_id(i, j));
                }
            }
        }
        Some(kept)
    }

    /// What `y` sends for `call` when the author dropped some of its parts.
    pub fn selection(&self, call: &PendingCall) -> Option<PartSelection> {
        let kept = self.kept(call)?;
        if kept.is_all() {
            return None;
        }
        Some(PartSelection {
            preview: parts::parts_digest(&call.preview),
            keep: kept.ids(),
            reason: None,
        })
    }

    /// Keep ⇄ drop hunk `hunk` of file `file` of a waiting call (`None`: every hunk of the
    /// file, dropped unless all are dropped already). Returns whether it is now kept.
    pub fn toggle_part(&mut self, call: &PendingCall, file: usize, hunk: Option<usize>) -> bool {
        let count = self
            .kept(call)
            .and_then(|k| k.files.get(file).map(Vec::len))
            .unwrap_or(0);
        let set = self.dropped.entry(call.approval_id.clone()).or_default();
        let ids: Vec<String> = match hunk {
            Some(j) => vec![parts::part_id(file, j)],
            None => (0..count).map(|j| parts::part_id(file, j)).collect(),
        };
        let drop = !ids.iter().all(|id| set.contains(id));
        for id in ids {
            if drop {
                set.insert(id);
            } else {
                set.remove(&id);
            }
        }
        !drop
    }

    pub fn move_by(&mut self, delta: isize) {
        let last = self.items.len().saturating_sub(1);
        let next = self.selected.saturating_add_signed(delta).min(last);
        if next != self.selected {
            self.selected = next;
            self.preview_scroll = 0;
            self.search = None;
        }
    }
}

/// Cut `s` to `max` characters with an ellipsis, first line only.
pub fn cut(s: &str, max: usize) -> String {
    let first = s.lines().next().unwrap_or("");
    if s.lines().nth(1).is_none() {
        return fit_width(first, max, Cut::End);
    }
    // More lines follow: the first one, always marked as cut.
    if first.width() < max {
        return format!("{first}…");
    }
    fit_width(first, max, Cut::End)
}

/// What a call acts on, for receipts and prompts: "write manuscript/001.md".
pub fn target_label(call: &PendingCall) -> String {
    let target = match &call.preview.body {
        PreviewBody::Files { changes } => match changes.as_slice() {
            [] => call.preview.summary.clone(),
            [one] => match &one.move_to {
                Some(to) => format!(
                    "{} → {}",
                    crate::text::escape_for_terminal(&one.path),
                    crate::text::escape_for_terminal(to)
                ),
                None => crate::text::escape_for_terminal(&one.path).into_owned(),
            },
            [first, rest @ ..] => format!(
                "{} (+{} more)",
                crate::text::escape_for_terminal(&first.path),
                rest.len()
            ),
        },
        PreviewBody::Command { command, .. } => format!("$ {command}"),
        PreviewBody::Egress { requests, .. } => match requests.as_slice() {
            [] => call.preview.summary.clone(),
            [one] => format!("{} {}", one.method, one.url),
            [first, rest @ ..] => format!("{} (+{} more host(s))", first.host, rest.len()),
        },
        _ => call.preview.summary.clone(),
    };
    format!("{} {}", call.tool, cut(&target, 60))
}

/// "12s", "4m", "2h" since an RFC 3339 time; "?" when it cannot be read.
pub fn age(requested_at: &str, now: time::OffsetDateTime) -> String {
    let Ok(then) =
        time::OffsetDateTime::parse(requested_at, &time::format_description::well_known::Rfc3339)
    else {
        return "?".into();
    };
    let secs = (now - then).whole_seconds().max(0);
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m", secs / 60),
        3600..=86_399 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_and_age() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("ab\ncd", 10), "ab…");
        let now = time::macros::datetime!(2026-01-01 12:00:30 UTC);
        assert_eq!(age("2026-01-01T12:00:00Z", now), "30s");
        assert_eq!(age("2026-01-01T10:00:00Z", now), "2h");
        assert_eq!(age("garbage", now), "?");
    }
}
