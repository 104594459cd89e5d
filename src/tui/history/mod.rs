//! The History view (`H` in the Approvals pane): every recorded change to the project, newest
//! first — who (author or agent, profile, session), tool, target, when, the decision and the
//! rule that made it — and the "approve for this session" grants in force.
//!
//! It opens over the Approvals pane as a full-screen view rather than a third list inside the
//! pane: the pending queue stays exactly as it was (a stray key in the history never decides a
//! waiting call), and prose diffs get the whole width. `Enter` shows an entry's applied change
//! full-screen with the same prose-diff renderer as an approval; `u` asks the engine for the
//! exact reverse preview and, on `y`, reverts it through the engine as the author (so the
//! revert is logged and recorded, and can be undone in turn). When later changes touched the
//! same target the refusal says which, and `y` reverts them all, newest first. `u` on a grant
//! asks, and `y` revokes it.

pub mod jobs;
pub mod view;

use crate::engine::history::Entry;
use crate::engine::history::Grant;
use crate::engine::{Preview, PreviewBody};
use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::{AppState, MsgKind};
use crate::tui::input::Overlay;
use crate::tui::widgets::prose_diff::ProseDiff;
use jobs::{HistoryJob, HistoryJobResult, Refusal};

/// What the view shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Shown {
    /// The list, with the selected row's details and applied change beside it.
    List,
    /// The selected entry's applied change, full width (`Enter`).
    Applied,
    /// `u` on an entry: its reverse preview, or why it cannot be reverted alone and the plan
    /// that would revert it; `y` reverts.
    Reverse {
        id: i64,
        result: Result<Preview, Refusal>,
    },
    /// `u` on a grant: `y` revokes it.
    Revoke(Grant),
}

/// One row of the list: grants first, then the changes, newest first.
pub enum Row<'a> {
    Grant(&'a Grant),
    Entry(&'a Entry),
}

#[derive(Debug)]
pub struct HistoryOverlay {
    pub entries: Vec<Entry>,
    pub grants: Vec<Grant>,
    pub selected: usize,
    pub offset: usize,
    /// Scroll of the change shown (beside the list, full width, or the reverse preview).
    pub scroll: usize,
    pub shown: Shown,
    /// The load or job in flight (older answers are dropped).
    pub ticket: Option<Ticket>,
    pub error: Option<String>,
    /// The file diffs of the preview shown, parsed once when it is chosen (not while drawing).
    pub diffs: Vec<ProseDiff>,
}

fn parse(p: Option<&Preview>) -> Vec<ProseDiff> {
    match p.map(|p| &p.body) {
        Some(PreviewBody::Files { changes }) => {
            changes.iter().map(|c| ProseDiff::parse(&c.diff)).collect()
        }
        _ => Vec::new(),
    }
}

impl HistoryOverlay {
    pub fn len(&self) -> usize {
        self.grants.len() + self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn row(&self, i: usize) -> Option<Row<'_>> {
        match self.grants.get(i) {
            Some(g) => Some(Row::Grant(g)),
            None => self.entries.get(i - self.grants.len()).map(Row::Entry),
        }
    }

    pub fn selected_entry(&self) -> Option<&Entry> {
        match self.row(self.selected) {
            Some(Row::Entry(e)) => Some(e),
            _ => None,
        }
    }

    /// The preview the view shows now.
    pub fn shown_preview(&self) -> Option<&Preview> {
        match &self.shown {
            Shown::Reverse { result: Ok(p), .. } => Some(p),
            Shown::Reverse { .. } | Shown::Revoke(_) => None,
            Shown::List | Shown::Applied => {
                self.selected_entry().and_then(|e| e.new.preview.as_ref())
            }
        }
    }

    fn reparse(&mut self) {
        self.diffs = parse(self.shown_preview());
    }

    fn select(&mut self, i: usize) {
        let i = i.min(self.len().saturating_sub(1));
        if i != self.selected {
            self.selected = i;
            self.scroll = 0;
            self.reparse();
        }
    }

    fn show(&mut self, shown: Shown) {
        self.shown = shown;
        self.scroll = 0;
        self.reparse();
    }
}

impl AppState {
    fn history(&mut self) -> Option<&mut HistoryOverlay> {
        match &mut self.overlay {
            Some(Overlay::History(h)) => Some(h),
            _ => None,
        }
    }

    /// `H`: open the History view and load it.
    pub(crate) fn open_history(&mut self) -> Vec<Effect> {
        let ticket = self.ticket();
        self.overlay = Some(Overlay::History(Box::new(HistoryOverlay {
            entries: Vec::new(),
            grants: Vec::new(),
            selected: 0,
            offset: 0,
            scroll: 0,
            shown: Shown::List,
            ticket: Some(ticket),
            error: None,
            diffs: Vec::new(),
        })));
        vec![Effect::HistoryJob {
            ticket,
            job: HistoryJob::Load,
        }]
    }

    fn history_job(&mut self, job: HistoryJob) -> Vec<Effect> {
        let ticket = self.ticket();
        if let Some(h) = self.history() {
            h.ticket = Some(ticket);
        }
        vec![Effect::HistoryJob { ticket, job }]
    }

    /// Keys while the History view is open.
    pub(crate) fn history_overlay_command(&mut self, cmd: Command) -> Vec<Effect> {
        let page = (self.size.1 as usize).saturating_sub(6).max(1);
        let Some(h) = self.history() else {
            return Vec::new();
        };
        let listing = h.shown == Shown::List;
        match cmd {
            Command::Down if listing => h.select(h.selected + 1),
            Command::Up if listing => h.select(h.selected.saturating_sub(1)),
            Command::Top if listing => h.select(0),
            Command::Bottom if listing => h.select(usize::MAX),
            Command::Down => h.scroll += 1,
            Command::Up => h.scroll = h.scroll.saturating_sub(1),
            Command::Top => h.scroll = 0,
            Command::Bottom => h.scroll = usize::MAX / 2,
            Command::PageDown | Command::DetailDown => h.scroll += page,
            Command::PageUp | Command::DetailUp => h.scroll = h.scroll.saturating_sub(page),
            Command::Cancel | Command::Help | Command::History => {
                if listing {
                    self.overlay = None;
                } else {
                    h.show(Shown::List);
                }
            }
            Command::Confirm | Command::Detail => return self.history_confirm(),
            Command::HistoryUndo => return self.history_undo(),
            Command::Quit => {
                self.overlay = None;
                return self.update(crate::tui::action::Action::Cmd(Command::Quit));
            }
            _ => {}
        }
        Vec::new()
    }

    /// `Enter` / `y`: show the change full-screen, or do what the question on screen asks.
    fn history_confirm(&mut self) -> Vec<Effect> {
        let Some(h) = self.history() else {
            return Vec::new();
        };
        match h.shown.clone() {
            Shown::List => {
                if h.selected_entry().is_some() {
                    h.show(Shown::Applied);
                }
                Vec::new()
            }
            Shown::Applied => {
                h.show(Shown::List);
                Vec::new()
            }
            Shown::Reverse { id, result: Ok(_) } => self.history_job(HistoryJob::Revert(vec![id])),
            Shown::Reverse { result: Err(r), .. } if !r.plan.is_empty() => {
                self.history_job(HistoryJob::Revert(r.plan))
            }
            Shown::Reverse { .. } => {
                h.show(Shown::List);
                Vec::new()
            }
            Shown::Revoke(g) => self.history_job(HistoryJob::Revoke(g)),
        }
    }

    /// `u`: the reverse preview of the selected change, or the revoke question of a grant.
    fn history_undo(&mut self) -> Vec<Effect> {
        let Some(h) = self.history() else {
            return Vec::new();
        };
        let id = match h.row(h.selected) {
            None => return Vec::new(),
            Some(Row::Grant(g)) => {
                let g = g.clone();
                h.show(Shown::Revoke(g));
                return Vec::new();
            }
            Some(Row::Entry(e)) => {
                if let Some(why) = &e.new.not_revertible {
                    let text = format!("Change #{} cannot be reverted: {why}.", e.id);
                    self.error(text);
                    return Vec::new();
                }
                e.id
            }
        };
        self.history_job(HistoryJob::Reverse(id))
    }

    /// A History job finished.
    pub(crate) fn history_job_done(
        &mut self,
        ticket: Ticket,
        result: HistoryJobResult,
    ) -> Vec<Effect> {
        let Some(h) = self.history() else {
            return Vec::new();
        };
        if h.ticket != Some(ticket) {
            return Vec::new();
        }
        h.ticket = None;
        match result {
            HistoryJobResult::Loaded(Ok((entries, grants))) => {
                h.entries = entries;
                h.grants = grants;
                h.error = None;
                h.selected = h.selected.min(h.len().saturating_sub(1));
                h.reparse();
            }
            HistoryJobResult::Loaded(Err(e)) => h.error = Some(e),
            HistoryJobResult::Reverse(id, result) => h.show(Shown::Reverse { id, result }),
            HistoryJobResult::Reverted(done, failed) => {
                h.show(Shown::List);
                let list = done
                    .iter()
                    .map(|i| format!("#{i}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                match failed {
                    None => self.message(format!("↩ reverted {list}"), MsgKind::Ok),
                    Some(why) if done.is_empty() => self.error(why),
                    Some(why) => self.error(format!("↩ reverted {list}, then stopped: {why}")),
                }
                return self.history_job(HistoryJob::Load);
            }
            HistoryJobResult::Revoked(g, removed) => {
                h.show(Shown::List);
                let text = format!(
                    "grant for {} on {} (session {})",
                    g.tool, g.target, g.session_id
                );
                if removed {
                    self.message(
                        format!("✗ revoked the {text}: such calls ask again"),
                        MsgKind::Ok,
                    );
                } else {
                    self.info(format!("The {text} was no longer in force."));
                }
                return self.history_job(HistoryJob::Load);
            }
        }
        Vec::new()
    }
}
