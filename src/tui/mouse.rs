//! The mouse: the wheel scrolls the list or the view under it, a click on an unfocused pane
//! focuses it, a click on a row of the focused list (Files, Story, Sessions and its jobs view,
//! Approvals) selects that row, and a second click on the same row within [`DOUBLE_CLICK`]
//! opens it exactly as Enter would (the key is looked up in the keymap, so a rebound Enter
//! follows). Rows are found with the geometry the view draws with (`chrome::layout` and
//! `window_offset`), so a click lands on the row drawn under it.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

use crate::tui::action::{Command, Effect};
use crate::tui::app::{AppState, Pane};
use crate::tui::chrome::layout::inner;
use crate::tui::files::tree::window_offset;
use crate::tui::sessions::SessionsView;

/// Two clicks on one row closer than this are a double-click.
pub const DOUBLE_CLICK: Duration = Duration::from_millis(400);

/// The last click on a list row, for double-clicks: when, where, which row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastClick {
    pub at: Instant,
    pub pane: Pane,
    pub row: usize,
}

impl AppState {
    pub(crate) fn mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        if self.overlay.is_some() {
            return match m.kind {
                MouseEventKind::ScrollDown => self.overlay_command(Command::Down),
                MouseEventKind::ScrollUp => self.overlay_command(Command::Up),
                _ => Vec::new(),
            };
        }
        let r = self.regions();
        let hit = |rect: ratatui::layout::Rect| {
            m.column >= rect.x
                && m.column < rect.x + rect.width
                && m.row >= rect.y
                && m.row < rect.y + rect.height
        };
        let pane = Pane::ALL.into_iter().find(|p| hit(r.panes[p.index()]));
        let in_detail = hit(r.detail);
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => match pane {
                Some(p) if p == self.focus => self.click_row(p, m.row),
                Some(p) => {
                    self.last_click = None;
                    self.focus_pane(p)
                }
                None => Vec::new(),
            },
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let down = m.kind == MouseEventKind::ScrollDown;
                if in_detail {
                    let cmd = if down {
                        Command::DetailDown
                    } else {
                        Command::DetailUp
                    };
                    return self.pane_command(cmd);
                }
                match pane {
                    Some(p) => {
                        let saved = self.focus;
                        self.focus = p;
                        let fx = self.pane_command(if down { Command::Down } else { Command::Up });
                        if p != saved {
                            self.focus = saved;
                        }
                        fx
                    }
                    None => Vec::new(),
                }
            }
            _ => Vec::new(),
        }
    }

    /// The focused list's selection, its length and the first row drawn (`None`: the pane
    /// has no list rows to click, the World pane's strip say).
    fn list_rows(&self, pane: Pane, height: usize) -> Option<(usize, usize, usize)> {
        let (selected, len, offset) = match pane {
            Pane::Files => {
                let t = &self.files.tree;
                (t.selected, t.rows().len(), t.offset)
            }
            Pane::Story => (
                self.story.selected,
                self.story.rows.len(),
                self.story.offset,
            ),
            Pane::Sessions if self.sessions.view == SessionsView::Jobs => {
                let j = &self.sessions.jobs;
                (j.selected, j.list.len(), j.offset)
            }
            Pane::Sessions => {
                let s = &self.sessions;
                (s.selected, s.list.len(), s.offset)
            }
            Pane::Approvals => {
                let a = &self.approvals;
                (a.selected, a.len(), a.offset)
            }
            // The World strip and the Board's column-grouped cards have no plain row list
            // to click yet.
            Pane::World | Pane::Board => return None,
        };
        Some((selected, len, window_offset(offset, selected, height, len)))
    }

    fn set_selected(&mut self, pane: Pane, i: usize) {
        match pane {
            Pane::Files => self.files.tree.selected = i,
            Pane::Story => self.story.selected = i,
            Pane::Sessions if self.sessions.view == SessionsView::Jobs => {
                self.sessions.jobs.selected = i
            }
            Pane::Sessions => self.sessions.selected = i,
            Pane::Approvals => self.approvals.selected = i,
            Pane::World | Pane::Board => {}
        }
    }

    fn click_row(&mut self, pane: Pane, y: u16) -> Vec<Effect> {
        let list = inner(self.regions().panes[pane.index()]);
        if y < list.y || y >= list.y + list.height {
            return Vec::new();
        }
        let Some((_, len, first)) = self.list_rows(pane, list.height as usize) else {
            return Vec::new();
        };
        let row = first + (y - list.y) as usize;
        if row >= len {
            self.last_click = None;
            return Vec::new();
        }
        let now = self.clock.now();
        let double = self.last_click.is_some_and(|c| {
            c.pane == pane && c.row == row && now.saturating_duration_since(c.at) <= DOUBLE_CLICK
        });
        if double {
            self.last_click = None;
            return self.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        }
        self.last_click = Some(LastClick { at: now, pane, row });
        if pane == Pane::Sessions {
            // A click on the list is about the list: leave the composer and the transcript
            // cursor (the draft is kept), so a double-click's Enter never sends a message.
            self.sessions.composing = false;
            self.sessions.in_transcript = false;
        }
        // Put the selection next to the row and take one step onto it, so the pane's own move
        // runs with all it does on a move (preview, transcript, detail reset).
        let (from, cmd) = if row > 0 {
            (row - 1, Command::Down)
        } else if len > 1 {
            (1, Command::Up)
        } else {
            (0, Command::Top)
        };
        self.set_selected(pane, from);
        self.pane_command(cmd)
    }
}
