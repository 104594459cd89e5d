//! Commands and typing while an overlay is open: help scrolling, the palette (nucleo over
//! every runnable command), the file finder (nucleo over all project paths, off the UI task),
//! the quit dialog, the reject prompt and the argument editor.

use crossterm::event::{KeyCode, KeyEvent};
use tui_textarea::CursorMove;

use crate::tui::action::{Command, Effect};
use crate::tui::app::AppState;
use crate::tui::chrome::overlays;
use crate::tui::files::finder::{fuzzy_match, FinderMatch, FINDER_LIMIT};
use crate::tui::input::{single_line, text_of, Overlay};
use crate::tui::widgets::select::step;

/// Commands that only mean something inside an overlay; the palette leaves them out.
pub fn palette_commands() -> impl Iterator<Item = Command> {
    Command::ALL.iter().copied().filter(|c| !c.is_contextual())
}

/// What the palette offers now, in [`Command::ALL`] order: every command outside an overlay,
/// minus what the focused pane reports unavailable, plus what it reports available even if
/// it is otherwise contextual (the transcript's expand, say).
pub fn palette_for(app: &AppState) -> Vec<Command> {
    let report = app.pane_commands();
    Command::ALL
        .iter()
        .copied()
        .filter(|c| match report.iter().find(|pc| pc.cmd == *c) {
            Some(pc) => pc.available,
            None => !c.is_contextual(),
        })
        .collect()
}

fn palette_matches(cmds: &[Command], query: &str) -> Vec<(Command, FinderMatch)> {
    let hay: Vec<String> = cmds
        .iter()
        .map(|c| format!("{} {}", c.description(), c.name()))
        .collect();
    let matches = fuzzy_match(query, hay.iter().map(String::as_str), false, cmds.len());
    matches
        .into_iter()
        .filter_map(|m| {
            let i = hay.iter().position(|h| *h == m.text)?;
            Some((cmds[i], m))
        })
        .collect()
}

impl AppState {
    pub(crate) fn open_palette(&mut self) {
        self.overlay = Some(Overlay::Palette {
            input: single_line("type to filter actions"),
            selected: 0,
            matches: palette_matches(&palette_for(self), ""),
        });
    }

    pub(crate) fn open_finder(&mut self) -> Vec<Effect> {
        let matches = match &self.files.all_paths {
            Some(paths) => {
                let shown: Vec<_> = paths.iter().map(|p| p.shown()).collect();
                fuzzy_match("", shown.iter().map(|s| s.as_ref()), true, FINDER_LIMIT)
            }
            None => Vec::new(),
        };
        self.overlay = Some(Overlay::Finder {
            input: single_line("type part of a file name"),
            selected: 0,
            matches,
            ticket: None,
        });
        Vec::new()
    }

    /// Re-run the finder's match for the current query (off the UI task).
    pub(crate) fn refilter_finder(&mut self) -> Vec<Effect> {
        let Some(paths) = self.files.all_paths.clone() else {
            return Vec::new();
        };
        let ticket = self.ticket();
        let Some(Overlay::Finder {
            input,
            ticket: slot,
            ..
        }) = &mut self.overlay
        else {
            return Vec::new();
        };
        *slot = Some(ticket);
        vec![Effect::FilterFiles {
            ticket,
            query: text_of(input),
            paths,
        }]
    }

    pub(crate) fn finder_matched(&mut self, ticket: u64, found: Vec<FinderMatch>) -> Vec<Effect> {
        if let Some(Overlay::Finder {
            matches,
            ticket: slot,
            selected,
            ..
        }) = &mut self.overlay
        {
            if *slot == Some(ticket) {
                *matches = found;
                *selected = 0;
                *slot = None;
            }
        }
        Vec::new()
    }

    /// The most an overlay can scroll (its rows, as the view lays them out).
    fn overlay_scroll_max(&self) -> usize {
        match &self.overlay {
            Some(Overlay::Help { .. }) => overlays::help_rows(self).len().saturating_sub(1),
            Some(Overlay::Messages { .. }) => {
                crate::tui::chrome::messages::scroll_max(self, self.size)
            }
            Some(Overlay::Detail { call_id, .. }) => self
                .approvals
                .get(call_id)
                .map(|c| {
                    let width = crate::tui::approvals::preview::drawn_width(
                        self,
                        crate::tui::approvals::preview::Where::Detail,
                    );
                    let inside = overlays::request_inside(ratatui::layout::Rect::new(
                        0,
                        0,
                        self.size.0,
                        self.size.1,
                    ));
                    let items = overlays::detail_items(self, c, width);
                    overlays::last_page_start(self, &items, width, inside.height as usize)
                })
                .unwrap_or(0),
            _ => 0,
        }
    }

    /// A page key in the full-screen request: where the page starts, counted in source lines
    /// (items) that fit the view, not in rows, so a wrapped paragraph never hides a line.
    fn detail_page(&self, cmd: Command) -> Option<usize> {
        let Some(Overlay::Detail { call_id, scroll }) = &self.overlay else {
            return None;
        };
        let down = match cmd {
            Command::PageDown | Command::DetailDown => true,
            Command::PageUp | Command::DetailUp => false,
            _ => return None,
        };
        let call = self.approvals.get(call_id)?;
        let width = crate::tui::approvals::preview::drawn_width(
            self,
            crate::tui::approvals::preview::Where::Detail,
        );
        let inside =
            overlays::request_inside(ratatui::layout::Rect::new(0, 0, self.size.0, self.size.1));
        let items = overlays::detail_items(self, call, width);
        let h = inside.height as usize;
        Some(if down {
            overlays::page_down_from(self, &items, width, h, *scroll)
        } else {
            overlays::page_up_from(self, &items, width, h, *scroll)
        })
    }

    pub(crate) fn overlay_command(&mut self, cmd: Command) -> Vec<Effect> {
        if let Some(Overlay::World(_)) = &self.overlay {
            return self.world_overlay_command(cmd);
        }
        if let Some(Overlay::Board(_)) = &self.overlay {
            return self.board_overlay_command(cmd);
        }
        if let Some(Overlay::History(_)) = &self.overlay {
            return self.history_overlay_command(cmd);
        }
        if let Some(Overlay::Story(_)) = &self.overlay {
            return self.story_overlay_command(cmd);
        }
        if let Some(Overlay::Trust(_)) = &self.overlay {
            return self.trust_command(cmd);
        }
        if let Some(Overlay::ModelSetup(_)) = &self.overlay {
            return self.setup_command(cmd);
        }
        if let Some(Overlay::DiffSearch { .. }) = &self.overlay {
            return self.diff_search_command(cmd);
        }
        if matches!(self.overlay, Some(Overlay::Detail { .. })) && cmd.is_diff() {
            return self.diff_command(cmd);
        }
        if let Some(to) = self.detail_page(cmd) {
            let max = self.overlay_scroll_max();
            if let Some(Overlay::Detail { scroll, .. }) = &mut self.overlay {
                *scroll = to.min(max);
            }
            return Vec::new();
        }
        let max = self.overlay_scroll_max();
        let Some(overlay) = &mut self.overlay else {
            return Vec::new();
        };
        match overlay {
            Overlay::Help { scroll }
            | Overlay::Detail { scroll, .. }
            | Overlay::Messages { scroll } => {
                let page = (self.size.1 as usize).saturating_sub(6).max(1);
                match cmd {
                    Command::Down => *scroll += 1,
                    Command::Up => *scroll = scroll.saturating_sub(1),
                    Command::PageDown | Command::DetailDown => *scroll += page,
                    Command::PageUp | Command::DetailUp => *scroll = scroll.saturating_sub(page),
                    Command::Top => *scroll = 0,
                    Command::Bottom => *scroll = max,
                    Command::Cancel
                    | Command::Confirm
                    | Command::Detail
                    | Command::Help
                    | Command::Messages => self.overlay = None,
                    Command::Quit => {
                        self.overlay = None;
                        return self.update(crate::tui::action::Action::Cmd(Command::Quit));
                    }
                    c if c.is_approval_key() => return self.approval_command(c),
                    _ => {}
                }
                if let Some(
                    Overlay::Help { scroll }
                    | Overlay::Detail { scroll, .. }
                    | Overlay::Messages { scroll },
                ) = &mut self.overlay
                {
                    *scroll = (*scroll).min(max);
                }
                Vec::new()
            }
            Overlay::ConfirmQuit { .. } => match cmd {
                Command::Confirm | Command::Quit => vec![Effect::Quit],
                Command::Cancel => {
                    self.overlay = None;
                    Vec::new()
                }
                _ => Vec::new(),
            },
            Overlay::Palette {
                selected, matches, ..
            } => match cmd {
                Command::Accept | Command::Submit => {
                    let chosen = matches.get(*selected).map(|(c, _)| *c);
                    self.overlay = None;
                    match chosen {
                        Some(c) => {
                            // Choosing from the palette is deliberate: no typing guard.
                            self.last_typed = None;
                            self.update(crate::tui::action::Action::Cmd(c))
                        }
                        None => Vec::new(),
                    }
                }
                Command::Cancel => {
                    self.overlay = None;
                    Vec::new()
                }
                Command::PrevItem | Command::NextItem => {
                    step(selected, matches.len(), cmd == Command::NextItem);
                    Vec::new()
                }
                _ => Vec::new(),
            },
            Overlay::Finder {
                selected, matches, ..
            } => match cmd {
                Command::Accept | Command::Submit => {
                    let chosen = matches.get(*selected).map(|m| m.text.clone());
                    self.overlay = None;
                    // The finder matched the shown (escaped) text; reveal the real path.
                    let real = chosen.and_then(|text| {
                        self.files
                            .all_paths
                            .as_ref()
                            .and_then(|all| all.iter().find(|p| p.shown() == text.as_str()))
                            .cloned()
                    });
                    match real {
                        Some(path) => self.reveal(&path),
                        None => Vec::new(),
                    }
                }
                Command::Cancel => {
                    self.overlay = None;
                    Vec::new()
                }
                Command::PrevItem | Command::NextItem => {
                    step(selected, matches.len(), cmd == Command::NextItem);
                    Vec::new()
                }
                _ => Vec::new(),
            },
            Overlay::RejectReason { parts, .. } => match cmd {
                Command::Accept | Command::Submit => self.submit_reject(),
                Command::Cancel => {
                    let text = match parts {
                        Some(_) => "Nothing applied: the call is still waiting, with the parts you dropped marked.",
                        None => "Not rejected: the call is still waiting.",
                    };
                    self.overlay = None;
                    self.info(text);
                    Vec::new()
                }
                _ => Vec::new(),
            },
            Overlay::EditArgs { input, .. } => match cmd {
                Command::Submit => self.submit_edit(),
                Command::Accept => {
                    input.insert_newline();
                    self.last_typed = Some(self.clock.now());
                    Vec::new()
                }
                Command::PrevItem => {
                    input.move_cursor(CursorMove::Up);
                    Vec::new()
                }
                Command::NextItem => {
                    input.move_cursor(CursorMove::Down);
                    Vec::new()
                }
                Command::Cancel => {
                    self.overlay = None;
                    self.info("Edit cancelled: the call is still waiting.");
                    Vec::new()
                }
                _ => Vec::new(),
            },
            Overlay::Story(_)
            | Overlay::DiffSearch { .. }
            | Overlay::World(_)
            | Overlay::Board(_)
            | Overlay::Answer(_)
            | Overlay::NewSession(_)
            | Overlay::Trust(_)
            | Overlay::ModelSetup(_)
            | Overlay::History(_) => Vec::new(),
        }
    }

    /// A key typed into the open text field.
    pub(crate) fn text_input(&mut self, key: KeyEvent) -> Vec<Effect> {
        let now = self.clock.now();
        if self.overlay.as_ref().is_some_and(Overlay::is_form) {
            return self.form_text(key);
        }
        if self.overlay.is_none() && self.sessions.composing {
            return self.composer_text(key);
        }
        let Some(overlay) = &mut self.overlay else {
            return Vec::new();
        };
        let multiline = overlay.is_multiline();
        if !multiline && key.code == KeyCode::Enter {
            return Vec::new();
        }
        let Some(input) = overlay.text_mut() else {
            return Vec::new();
        };
        input.input(key);
        self.last_typed = Some(now);
        self.after_text_change()
    }

    pub(crate) fn paste(&mut self, text: String) -> Vec<Effect> {
        let now = self.clock.now();
        if self.overlay.as_ref().is_some_and(Overlay::is_form) {
            return self.form_paste(text);
        }
        if self.overlay.is_none() && self.sessions.composing {
            let text = text.replace("\r\n", "\n").replace('\r', "\n");
            if let Some(t) = self.composer_mut() {
                t.insert_str(text);
                self.last_typed = Some(now);
            }
            return Vec::new();
        }
        let Some(overlay) = &mut self.overlay else {
            return Vec::new();
        };
        let multiline = overlay.is_multiline();
        let Some(input) = overlay.text_mut() else {
            return Vec::new();
        };
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let text = if multiline {
            text
        } else {
            text.replace('\n', " ")
        };
        input.insert_str(text);
        self.last_typed = Some(now);
        self.after_text_change()
    }

    /// The selected session's draft while the composer has the keys.
    fn composer_mut(&mut self) -> Option<&mut tui_textarea::TextArea<'static>> {
        let id = self.sessions.selected()?.id.clone();
        self.sessions.drafts.get_mut(&id)
    }

    /// A key typed into the composer (Enter and the other bound keys never get here).
    fn composer_text(&mut self, key: KeyEvent) -> Vec<Effect> {
        let now = self.clock.now();
        if let Some(t) = self.composer_mut() {
            t.input(key);
            self.last_typed = Some(now);
        }
        Vec::new()
    }

    fn after_text_change(&mut self) -> Vec<Effect> {
        let offered = match self.overlay {
            Some(Overlay::Palette { .. }) => palette_for(self),
            _ => Vec::new(),
        };
        match &mut self.overlay {
            Some(Overlay::Palette {
                input,
                selected,
                matches,
            }) => {
                *matches = palette_matches(&offered, &text_of(input));
                *selected = 0;
                Vec::new()
            }
            Some(Overlay::Finder { .. }) => self.refilter_finder(),
            Some(Overlay::EditArgs { error, .. }) => {
                *error = None;
                Vec::new()
            }
            Some(Overlay::Story(_)) => self.story_text_changed(),
            Some(Overlay::World(_)) => self.world_text_changed(),
            Some(Overlay::Board(_)) => self.board_text_changed(),
            _ => Vec::new(),
        }
    }
}
