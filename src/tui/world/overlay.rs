//! The World pane's prompts: jump the cursor to a time typed in the project calendar (text it
//! cannot read keeps the prompt open with the calendar's message, which names the expected
//! form), and find a listed subject by name (`/`, fuzzy with nucleo, matched inline on each
//! keystroke: the list is the one subject list the pane already holds). Keys reach them
//! through the `[input]` section (Enter jumps / selects, ↑/↓ move between matches, Esc
//! cancels).

use tui_textarea::TextArea;

use crate::tui::action::{Command, Effect};
use crate::tui::app::AppState;
use crate::tui::files::finder::{fuzzy_match_indexed, FinderMatch};
use crate::tui::input::{single_line, text_of, Overlay};
use crate::tui::world::jobs::WorldJob;

pub enum WorldOverlay {
    Jump {
        input: TextArea<'static>,
        /// Why the last text was not a time.
        error: Option<String>,
    },
    /// Finding a subject by name: matches best first, each with its index in the list.
    Find {
        input: TextArea<'static>,
        hits: Vec<(usize, FinderMatch)>,
        selected: usize,
    },
}

/// Most subjects the finder lists.
const FIND_LIMIT: usize = 200;

impl WorldOverlay {
    pub fn name(&self) -> &'static str {
        match self {
            WorldOverlay::Jump { .. } => "world_jump",
            WorldOverlay::Find { .. } => "world_find",
        }
    }

    pub fn text(&self) -> Option<&TextArea<'static>> {
        match self {
            WorldOverlay::Jump { input, .. } | WorldOverlay::Find { input, .. } => Some(input),
        }
    }

    pub fn text_mut(&mut self) -> Option<&mut TextArea<'static>> {
        match self {
            WorldOverlay::Jump { input, .. } | WorldOverlay::Find { input, .. } => Some(input),
        }
    }
}

impl AppState {
    pub(crate) fn world_open_jump(&mut self) {
        let example = if self.world.cursor_label.is_empty() {
            "a time in the project calendar".to_string()
        } else {
            format!("e.g. {}", self.world.cursor_label)
        };
        self.overlay = Some(Overlay::World(Box::new(WorldOverlay::Jump {
            input: single_line(&example),
            error: None,
        })));
    }

    pub(crate) fn world_open_find(&mut self) -> Vec<Effect> {
        let Some(list) = self.world.subject_list().filter(|l| !l.is_empty()) else {
            self.info(if self.world.meta.is_none() {
                "The world is still loading: no subject to find yet."
            } else {
                "The world has no subject to find yet (none is listed)."
            });
            return Vec::new();
        };
        let hits = find_subjects(list, "");
        self.overlay = Some(Overlay::World(Box::new(WorldOverlay::Find {
            input: single_line("a subject's name"),
            hits,
            selected: 0,
        })));
        Vec::new()
    }

    fn world_find_command(&mut self, cmd: Command) -> Vec<Effect> {
        let Some(Overlay::World(o)) = &mut self.overlay else {
            return Vec::new();
        };
        let WorldOverlay::Find { hits, selected, .. } = o.as_mut() else {
            return Vec::new();
        };
        match cmd {
            Command::Accept | Command::Submit => match hits.get(*selected) {
                Some((i, _)) => {
                    let i = *i;
                    self.overlay = None;
                    self.world_select_subject(i)
                }
                // Nothing matches: the finder stays open for another try.
                None => Vec::new(),
            },
            Command::PrevItem | Command::Up => {
                *selected = selected.saturating_sub(1);
                Vec::new()
            }
            Command::NextItem | Command::Down => {
                if *selected + 1 < hits.len() {
                    *selected += 1;
                }
                Vec::new()
            }
            Command::Cancel => {
                self.overlay = None;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    pub(crate) fn world_overlay_command(&mut self, cmd: Command) -> Vec<Effect> {
        if let Some(Overlay::World(o)) = &self.overlay {
            if matches!(o.as_ref(), WorldOverlay::Find { .. }) {
                return self.world_find_command(cmd);
            }
        }
        let Some(Overlay::World(o)) = &mut self.overlay else {
            return Vec::new();
        };
        let WorldOverlay::Jump { input, error } = o.as_mut() else {
            return Vec::new();
        };
        match cmd {
            Command::Accept | Command::Submit => {
                let text = text_of(input).trim().to_string();
                if text.is_empty() {
                    *error = Some(format!(
                        "Type a time in the project calendar, e.g. {}",
                        self.world.cursor_label
                    ));
                    return Vec::new();
                }
                if self.world.jump_parse.is_some() {
                    // The last text is still being read; Enter again changes nothing.
                    return Vec::new();
                }
                let parsed = match &self.world.reader {
                    // A script calendar reads the text in a job; the prompt says so meanwhile.
                    Some(r) if r.0.calendar_runs_script() => {
                        let ticket = self.ticket();
                        self.world.jump_parse = Some(ticket);
                        return vec![Effect::WorldJob {
                            ticket,
                            job: WorldJob::Parse(text),
                        }];
                    }
                    Some(r) => r.0.parse_time(&text).map_err(|e| e.to_string()),
                    None => Err("The world is not loaded yet.".to_string()),
                };
                self.world_jump_read(parsed)
            }
            Command::Cancel => {
                self.overlay = None;
                self.world.jump_parse = None;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// The prompt's text read as a time: jump there and close, or keep the prompt open with
    /// the calendar's message.
    pub(crate) fn world_jump_read(&mut self, parsed: Result<i64, String>) -> Vec<Effect> {
        if !matches!(self.overlay, Some(Overlay::World(_))) {
            // Cancelled while a job read the text.
            return Vec::new();
        }
        match parsed {
            Ok(t) => {
                self.overlay = None;
                self.world_move_cursor(t);
                let label = self.world.cursor_label.clone();
                self.info(format!("Cursor at {label}"));
                self.world_sync()
            }
            Err(e) => {
                if let Some(Overlay::World(o)) = &mut self.overlay {
                    if let WorldOverlay::Jump { error, .. } = o.as_mut() {
                        *error = Some(e);
                    }
                }
                Vec::new()
            }
        }
    }

    /// Typing clears the jump prompt's last error, or matches the finder's text again.
    pub(crate) fn world_text_changed(&mut self) -> Vec<Effect> {
        let list = self.world.subject_list().cloned();
        if let Some(Overlay::World(o)) = &mut self.overlay {
            match o.as_mut() {
                WorldOverlay::Jump { error, .. } => *error = None,
                WorldOverlay::Find {
                    input,
                    hits,
                    selected,
                } => {
                    *hits = list
                        .map(|l| find_subjects(&l, &text_of(input)))
                        .unwrap_or_default();
                    *selected = 0;
                }
            }
        }
        Vec::new()
    }
}

/// The subjects whose names match `query`, best first (all of them, in list order, for an
/// empty query), at most [`FIND_LIMIT`].
fn find_subjects(list: &[crate::world::store::Subject], query: &str) -> Vec<(usize, FinderMatch)> {
    fuzzy_match_indexed(
        query,
        list.iter().map(|s| s.name.as_str()),
        false,
        FIND_LIMIT,
    )
}
