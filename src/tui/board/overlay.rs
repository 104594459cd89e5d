//! The Board pane's prompt: `n` asks for the new task's description (its first line becomes
//! the title). An empty description keeps the prompt open and says what to type. Keys reach
//! it through the `[input]` section (Enter creates, Esc cancels).

use tui_textarea::TextArea;

use crate::tui::action::{Command, Effect};
use crate::tui::app::AppState;
use crate::tui::board::jobs::BoardWrite;
use crate::tui::input::{single_line, text_of, Overlay};

pub enum BoardOverlay {
    New {
        input: TextArea<'static>,
        error: Option<String>,
    },
}

impl BoardOverlay {
    pub fn name(&self) -> &'static str {
        match self {
            BoardOverlay::New { .. } => "board_new",
        }
    }

    pub fn text(&self) -> Option<&TextArea<'static>> {
        match self {
            BoardOverlay::New { input, .. } => Some(input),
        }
    }

    pub fn text_mut(&mut self) -> Option<&mut TextArea<'static>> {
        match self {
            BoardOverlay::New { input, .. } => Some(input),
        }
    }
}

impl AppState {
    pub(crate) fn board_open_new(&mut self) {
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::New {
            input: single_line("e.g. Draft chapter 12 from its brief"),
            error: None,
        })));
    }

    pub(crate) fn board_overlay_command(&mut self, cmd: Command) -> Vec<Effect> {
        let Some(Overlay::Board(o)) = &mut self.overlay else {
            return Vec::new();
        };
        let BoardOverlay::New { input, error } = o.as_mut();
        match cmd {
            Command::Accept | Command::Submit => {
                let text = text_of(input).trim().to_string();
                if text.is_empty() {
                    *error = Some(
                        "Type what the task is for, e.g. \"Draft chapter 12 from its brief\"."
                            .into(),
                    );
                    return Vec::new();
                }
                self.overlay = None;
                self.board_write(BoardWrite::Create { description: text })
            }
            Command::Cancel => {
                self.overlay = None;
                self.info("New task cancelled: nothing was created.");
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    pub(crate) fn board_text_changed(&mut self) -> Vec<Effect> {
        if let Some(Overlay::Board(o)) = &mut self.overlay {
            let BoardOverlay::New { error, .. } = o.as_mut();
            *error = None;
        }
        Vec::new()
    }
}
