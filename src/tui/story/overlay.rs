//! The Story pane's overlays: the fuzzy search over titles, the JSON edit form, the
//! confirmation of an archive or a delete (listing its changes or its cascade), and the note a
//! dropped decision needs. Keys reach them through the `[input]` section (text fields) or
//! `[overlay]` (the confirmation: `y`/Enter confirms, `n`/Esc keeps everything).

use tui_textarea::{CursorMove, TextArea};

use crate::engine::types::Preview;
use crate::plot::ledger::NodeRef;
use crate::tui::action::{Action, Command, Effect, Ticket};
use crate::tui::app::AppState;
use crate::tui::input::{editor, single_line, text_of, Overlay};
use crate::tui::story::edit::{self, EditForm, StoryWrite};
use crate::tui::story::jobs::{SearchHit, StoryJob};
use crate::tui::widgets::select::step;

pub enum StoryOverlay {
    Search {
        input: TextArea<'static>,
        selected: usize,
        hits: Vec<SearchHit>,
        /// The match job in flight (older results are dropped).
        ticket: Option<Ticket>,
    },
    Edit {
        form: EditForm,
        input: TextArea<'static>,
        error: Option<String>,
        /// The write in flight.
        saving: Option<Ticket>,
    },
    Confirm {
        title: String,
        /// The engine's preview of the write, as lines.
        lines: Vec<String>,
        write: StoryWrite,
        /// What the author confirms: the write fails as stale if its records changed since.
        preview: Box<Preview>,
        scroll: usize,
    },
    Note {
        node: NodeRef,
        label: String,
        input: TextArea<'static>,
    },
}

impl StoryOverlay {
    pub fn name(&self) -> &'static str {
        match self {
            StoryOverlay::Search { .. } => "story_search",
            StoryOverlay::Edit { .. } => "story_edit",
            StoryOverlay::Confirm { .. } => "story_confirm",
            StoryOverlay::Note { .. } => "story_note",
        }
    }

    pub fn text(&self) -> Option<&TextArea<'static>> {
        match self {
            StoryOverlay::Search { input, .. }
            | StoryOverlay::Edit { input, .. }
            | StoryOverlay::Note { input, .. } => Some(input),
            StoryOverlay::Confirm { .. } => None,
        }
    }

    pub fn text_mut(&mut self) -> Option<&mut TextArea<'static>> {
        match self {
            StoryOverlay::Search { input, .. }
            | StoryOverlay::Edit { input, .. }
            | StoryOverlay::Note { input, .. } => Some(input),
            StoryOverlay::Confirm { .. } => None,
        }
    }

    pub fn is_multiline(&self) -> bool {
        matches!(self, StoryOverlay::Edit { .. })
    }

    pub fn search() -> StoryOverlay {
        StoryOverlay::Search {
            input: single_line(
                "type part of a title (acts, chapters, threads, scenes, promises, decisions)",
            ),
            selected: 0,
            hits: Vec::new(),
            ticket: None,
        }
    }

    pub fn edit(form: EditForm) -> StoryOverlay {
        let input = editor(&form.text());
        StoryOverlay::Edit {
            form,
            input,
            error: None,
            saving: None,
        }
    }

    pub fn note(node: NodeRef) -> StoryOverlay {
        StoryOverlay::Note {
            node,
            label: edit::node_label(node),
            input: single_line("why it was dropped (required unless it has a note)"),
        }
    }
}

impl AppState {
    fn story_overlay(&mut self) -> Option<&mut StoryOverlay> {
        match &mut self.overlay {
            Some(Overlay::Story(o)) => Some(o),
            _ => None,
        }
    }

    /// A command while one of the Story overlays is open.
    pub(crate) fn story_overlay_command(&mut self, cmd: Command) -> Vec<Effect> {
        let page = (self.size.1 as usize).saturating_sub(8).max(1);
        let Some(o) = self.story_overlay() else {
            return Vec::new();
        };
        match o {
            StoryOverlay::Search { selected, hits, .. } => match cmd {
                Command::Accept | Command::Submit => {
                    let hit = hits.get(*selected).map(|h| h.item);
                    self.overlay = None;
                    match hit {
                        Some(i) => self.story_reveal_item(i),
                        None => Vec::new(),
                    }
                }
                Command::PrevItem | Command::NextItem => {
                    step(selected, hits.len(), cmd == Command::NextItem);
                    Vec::new()
                }
                Command::Cancel => {
                    self.overlay = None;
                    Vec::new()
                }
                _ => Vec::new(),
            },
            StoryOverlay::Edit { input, saving, .. } => match cmd {
                Command::Submit if saving.is_none() => self.story_submit_edit(),
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
                    self.info("Edit cancelled: nothing was changed.");
                    Vec::new()
                }
                _ => Vec::new(),
            },
            StoryOverlay::Confirm { scroll, lines, .. } => match cmd {
                Command::Confirm => {
                    let Some(Overlay::Story(o)) = self.overlay.take() else {
                        return Vec::new();
                    };
                    match *o {
                        StoryOverlay::Confirm { write, preview, .. } => {
                            self.story_write(write, Some(preview))
                        }
                        _ => Vec::new(),
                    }
                }
                Command::Cancel => {
                    self.overlay = None;
                    self.info("Cancelled: nothing was changed.");
                    Vec::new()
                }
                Command::Down => {
                    *scroll = (*scroll + 1).min(lines.len().saturating_sub(1));
                    Vec::new()
                }
                Command::Up => {
                    *scroll = scroll.saturating_sub(1);
                    Vec::new()
                }
                Command::PageDown => {
                    *scroll = (*scroll + page).min(lines.len().saturating_sub(1));
                    Vec::new()
                }
                Command::PageUp => {
                    *scroll = scroll.saturating_sub(page);
                    Vec::new()
                }
                Command::Quit => {
                    self.overlay = None;
                    self.update(Action::Cmd(Command::Quit))
                }
                _ => Vec::new(),
            },
            StoryOverlay::Note { node, input, .. } => match cmd {
                Command::Accept | Command::Submit => {
                    let (node, note) = (*node, text_of(input));
                    self.overlay = None;
                    self.story_prepare(StoryWrite::Archive {
                        node,
                        note: Some(note),
                    })
                }
                Command::Cancel => {
                    self.overlay = None;
                    self.info("Not dropped: nothing was changed.");
                    Vec::new()
                }
                _ => Vec::new(),
            },
        }
    }

    /// After a keystroke in a Story overlay's text field.
    pub(crate) fn story_text_changed(&mut self) -> Vec<Effect> {
        match self.story_overlay() {
            Some(StoryOverlay::Search { .. }) => self.story_rematch(),
            Some(StoryOverlay::Edit { error, .. }) => {
                *error = None;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// Match the search query against the index (off the UI task).
    pub(crate) fn story_rematch(&mut self) -> Vec<Effect> {
        let Some(items) = self.story.search_index.clone() else {
            return Vec::new();
        };
        let t = self.ticket();
        let Some(StoryOverlay::Search { input, ticket, .. }) = self.story_overlay() else {
            return Vec::new();
        };
        *ticket = Some(t);
        let query = text_of(input);
        vec![Effect::StoryJob {
            ticket: t,
            job: StoryJob::Match { query, items },
        }]
    }

    pub(crate) fn story_matched(&mut self, t: Ticket, found: Vec<SearchHit>) {
        if let Some(StoryOverlay::Search {
            hits,
            ticket,
            selected,
            ..
        }) = self.story_overlay()
        {
            if *ticket == Some(t) {
                *hits = found;
                *selected = 0;
                *ticket = None;
            }
        }
    }

    fn story_submit_edit(&mut self) -> Vec<Effect> {
        let t = self.ticket();
        let Some(StoryOverlay::Edit {
            form,
            input,
            error,
            saving,
        }) = self.story_overlay()
        else {
            return Vec::new();
        };
        match edit::changed_args(form, &text_of(input)) {
            Err(e) => {
                *error = Some(format!("{e} — nothing was changed"));
                Vec::new()
            }
            Ok(None) => {
                self.overlay = None;
                self.info("No field changed: nothing to save.");
                Vec::new()
            }
            Ok(Some(args)) => {
                *saving = Some(t);
                let write = StoryWrite::Update {
                    node: form.node,
                    args,
                };
                self.story.writing = Some(t);
                vec![Effect::StoryJob {
                    ticket: t,
                    job: StoryJob::Write(write),
                }]
            }
        }
    }

    /// A write failed while its edit form is open: show the error there. True if shown.
    pub(crate) fn story_edit_failed(&mut self, t: Ticket, e: &str) -> bool {
        if let Some(StoryOverlay::Edit { error, saving, .. }) = self.story_overlay() {
            if *saving == Some(t) {
                *saving = None;
                *error = Some(e.to_string());
                return true;
            }
        }
        false
    }

    /// Close the edit form a write came from.
    pub(crate) fn story_edit_saved(&mut self, t: Ticket) {
        if let Some(StoryOverlay::Edit { saving, .. }) = self.story_overlay() {
            if *saving == Some(t) {
                self.overlay = None;
            }
        }
    }
}
