//! The Board pane (`6`): the book's production board. Goals on top, then the columns of the
//! tasks' workflow (builtin:chapter: Planning → Drafting → Review → Done → Archived), each a
//! header followed by its cards — id, title, status, step progress (`3/7`), assignee and the
//! calls waiting for approval on that task. The right-hand view shows the selected card, and
//! `Enter` opens the whole task (PROMPT.md, steps, documents with revisions, log).
//!
//! Reads go through the engine's read model in blocking jobs (`jobs`); writes (`n` new task,
//! `m`/`M` move, `p` pause/resume, `x` archive, `o` new goal, `O` archive or unarchive a goal)
//! are the author's own tool calls through the engine (`fn_task_create`, `fn_task_move`,
//! `fn_task_pause`, `fn_goal_create`, `fn_goal_archive`), logged in the author session. `A`
//! opens the Artifacts view and `I` the Inbox view (`artifacts`, `inbox`) in the pane's place. On a
//! wide screen the right-hand view draws the columns side by side (`columns`).
//! This module holds the state and the rows; `update`, `view`, `overlay` and `commands` the
//! rest.

pub mod artifacts;
pub mod columns;
pub mod commands;
pub mod compose;
pub mod goals;
pub mod heartbeats;
pub mod inbox;
pub mod jobs;
pub mod overlay;
pub mod rating;
pub mod rooms;
pub mod update;
pub mod view;
pub mod workflows;

use std::sync::Arc;

use crate::engine::read::{BoardOverview, BoardTaskDetail, Task};
use crate::tui::action::Ticket;

/// The workflow whose columns the board draws when a task names no known workflow.
pub const DEFAULT_COLUMNS: &[(&str, &str)] = &[
    ("planning", "Planning"),
    ("drafting", "Drafting"),
    ("review", "Review"),
    ("done", "Done"),
    ("archived", "Archived"),
];

/// One row of the pane's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoardRow {
    /// A column header: its index in [`BoardState::columns`] and how many cards it has.
    Column(usize, usize),
    /// A card: its index into the overview's tasks.
    Card(usize),
}

#[derive(Debug, Default)]
pub struct BoardState {
    pub data: Option<Arc<BoardOverview>>,
    /// Column ids and names in board order (from the workflow).
    pub columns: Vec<(String, String)>,
    pub rows: Vec<BoardRow>,
    /// Index into `rows` (always a card when there is one).
    pub selected: usize,
    pub offset: usize,
    pub loading: Option<Ticket>,
    pub error: Option<String>,
    /// A board tool changed something since the last load.
    pub stale: bool,
    /// The opened task (`Enter`): its id and what loading it gave.
    pub detail: Option<(String, Result<BoardTaskDetail, String>)>,
    pub detail_ticket: Option<Ticket>,
    pub detail_scroll: usize,
    /// A write in flight (a second key waits for it).
    pub writing: Option<Ticket>,
    /// The task to select when the next overview lands (the one a write named).
    pub select_after: Option<String>,
    /// The board's scheduler as it last reported (`None` where none runs: tests, benches).
    pub scheduler: Option<crate::runner::RunnerStatus>,
    /// The Artifacts view (`A`), when open: it replaces the board in the pane.
    pub artifacts: Option<artifacts::ArtifactsView>,
    /// The Workflows view (`W`), when open: it replaces the board in the pane.
    pub workflows: Option<workflows::WorkflowsView>,
    /// The Inbox view (`I`), when open: it replaces the board in the pane.
    pub inbox: Option<inbox::InboxView>,
}

impl BoardState {
    /// Take a fresh overview: rebuild the rows, keep the selected task selected if it is
    /// still there.
    pub fn set_data(&mut self, data: BoardOverview) {
        let keep = self
            .select_after
            .take()
            .or_else(|| self.selected_task().map(|t| t.id.clone()));
        // The workflows' columns (the default's first); DEFAULT_COLUMNS when none came.
        self.columns = if data.columns.is_empty() {
            DEFAULT_COLUMNS
                .iter()
                .map(|(id, name)| (id.to_string(), name.to_string()))
                .collect()
        } else {
            data.columns.clone()
        };
        // A column no workflow declares (its workflow was edited meanwhile) goes last.
        for t in &data.tasks {
            if !self.columns.iter().any(|(id, _)| id == &t.column) {
                self.columns.push((t.column.clone(), t.column.clone()));
            }
        }
        let mut by_col: Vec<Vec<usize>> = vec![Vec::new(); self.columns.len()];
        for (i, t) in data.tasks.iter().enumerate() {
            if let Some(c) = self.columns.iter().position(|(id, _)| id == &t.column) {
                by_col[c].push(i);
            }
        }
        self.rows.clear();
        for (c, cards) in by_col.iter().enumerate() {
            self.rows.push(BoardRow::Column(c, cards.len()));
            self.rows.extend(cards.iter().map(|&i| BoardRow::Card(i)));
        }
        self.data = Some(Arc::new(data));
        self.error = None;
        let found = keep.and_then(|id| {
            self.rows.iter().position(
                |r| matches!(r, BoardRow::Card(i) if self.task(*i).is_some_and(|t| t.id == id)),
            )
        });
        self.selected = found.unwrap_or(0);
        self.settle(true);
    }

    fn task(&self, i: usize) -> Option<&Task> {
        self.data.as_ref().and_then(|d| d.tasks.get(i))
    }

    /// No task on the board at all.
    pub fn is_empty(&self) -> bool {
        self.data.as_ref().is_none_or(|d| d.tasks.is_empty())
    }

    pub fn selected_task(&self) -> Option<&Task> {
        match self.rows.get(self.selected) {
            Some(BoardRow::Card(i)) => self.task(*i),
            _ => None,
        }
    }

    /// The column id and name of row `c`.
    pub fn column(&self, c: usize) -> Option<(&str, &str)> {
        self.columns
            .get(c)
            .map(|(id, name)| (id.as_str(), name.as_str()))
    }

    /// Move the selection off a header onto the nearest card (downwards first when `down`).
    fn settle(&mut self, down: bool) {
        let is_card = |r: &BoardRow| matches!(r, BoardRow::Card(_));
        if self.rows.get(self.selected).is_some_and(is_card) {
            return;
        }
        let after = (self.selected..self.rows.len()).find(|&i| is_card(&self.rows[i]));
        let before = (0..self.selected.min(self.rows.len()))
            .rev()
            .find(|&i| is_card(&self.rows[i]));
        self.selected = if down {
            after.or(before)
        } else {
            before.or(after)
        }
        .unwrap_or(0);
    }

    /// Move the selection `n` cards down (or up), skipping headers; stops at the ends.
    pub fn step(&mut self, n: usize, down: bool) {
        let cards: Vec<usize> = (0..self.rows.len())
            .filter(|&i| matches!(self.rows[i], BoardRow::Card(_)))
            .collect();
        let Some(pos) = cards.iter().position(|&i| i == self.selected) else {
            return;
        };
        let next = if down {
            (pos + n).min(cards.len() - 1)
        } else {
            pos.saturating_sub(n)
        };
        self.selected = cards[next];
    }

    /// The first (or last) card.
    pub fn to_end(&mut self, last: bool) {
        self.selected = if last {
            self.rows.len().saturating_sub(1)
        } else {
            0
        };
        self.settle(!last);
    }

    /// Calls waiting for approval that act on task `id`: their preview's stale-check targets
    /// name the task's record or one of its documents (what the board's dry run touched, not
    /// a guess from the tool's name or arguments).
    pub fn pending_for<'a>(
        id: &str,
        calls: impl Iterator<Item = &'a crate::engine::PendingCall>,
    ) -> usize {
        let task = format!("board/task/{id}");
        let docs = format!("board/document/{id}/");
        calls
            .filter(|c| {
                c.preview
                    .targets
                    .iter()
                    .any(|t| t.key == task || t.key.starts_with(&docs))
            })
            .count()
    }
}
