//! The World pane's prompt: jump the cursor to a time typed in the project calendar. Text it
//! cannot read keeps the prompt open with the calendar's message, which names the expected
//! form. Keys reach it through the `[input]` section (Enter jumps, Esc cancels).

use tui_textarea::TextArea;

use crate::tui::action::{Command, Effect};
use crate::tui::app::AppState;
use crate::tui::input::{single_line, text_of, Overlay};
use crate::tui::world::jobs::WorldJob;

pub enum WorldOverlay {
    Jump {
        input: TextArea<'static>,
        /// Why the last text was not a time.
        error: Option<String>,
    },
}

impl WorldOverlay {
    pub fn name(&self) -> &'static str {
        match self {
            WorldOverlay::Jump { .. } => "world_jump",
        }
    }

    pub fn text(&self) -> Option<&TextArea<'static>> {
        match self {
            WorldOverlay::Jump { input, .. } => Some(input),
        }
    }

    pub fn text_mut(&mut self) -> Option<&mut TextArea<'static>> {
        match self {
            WorldOverlay::Jump { input, .. } => Some(input),
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

    pub(crate) fn world_overlay_command(&mut self, cmd: Command) -> Vec<Effect> {
        let Some(Overlay::World(o)) = &mut self.overlay else {
            return Vec::new();
        };
        let WorldOverlay::Jump { input, error } = o.as_mut();
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
                    let WorldOverlay::Jump { error, .. } = o.as_mut();
                    *error = Some(e);
                }
                Vec::new()
            }
        }
    }

    /// Typing clears the last error.
    pub(crate) fn world_text_changed(&mut self) -> Vec<Effect> {
        if let Some(Overlay::World(o)) = &mut self.overlay {
            let WorldOverlay::Jump { error, .. } = o.as_mut();
            *error = None;
        }
        Vec::new()
    }
}
