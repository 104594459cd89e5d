//! Overlays (help, the message log, palette, finder, confirm-quit, reject reason, argument editor, approval
//! detail, the answer and new-session forms, the project-config trust prompt) and the text fields inside them (tui-textarea).
//! Keys reach a text field only when no `[input]` (or `[form]`, `[composer]`) binding claims
//! them; every keystroke there arms the approval typing guard.

use tui_textarea::TextArea;

use crate::tui::action::Command;
use crate::tui::files::finder::FinderMatch;

pub enum Overlay {
    Help {
        scroll: usize,
    },
    Palette {
        input: TextArea<'static>,
        selected: usize,
        matches: Vec<(Command, FinderMatch)>,
    },
    Finder {
        input: TextArea<'static>,
        selected: usize,
        matches: Vec<FinderMatch>,
        /// The match job in flight (older results are dropped).
        ticket: Option<u64>,
    },
    ConfirmQuit {
        lines: Vec<String>,
    },
    RejectReason {
        call_id: String,
        /// "write manuscript/001.md", for the prompt's title.
        label: String,
        input: TextArea<'static>,
        /// Approving only these parts: the reason is for the dropped ones, Enter applies
        /// the kept ones (`None`: a plain reject).
        parts: Option<crate::engine::PartSelection>,
    },
    EditArgs {
        call_id: String,
        tool: String,
        input: TextArea<'static>,
        error: Option<String>,
        /// Sent to the engine for validation; waiting for the answer.
        checking: bool,
    },
    Detail {
        call_id: String,
        scroll: usize,
    },
    /// The message log (`M`), scrolled by screen rows.
    Messages {
        scroll: usize,
    },
    /// Searching an approval preview (`/`); `back` is the detail to return to (call, scroll),
    /// `None` when the search started in the pane.
    DiffSearch {
        input: TextArea<'static>,
        back: Option<(String, usize)>,
    },
    /// The Story pane's search, edit form, confirmation and note prompt.
    Story(Box<crate::tui::story::overlay::StoryOverlay>),
    /// The World pane's jump-to-time prompt.
    World(Box<crate::tui::world::overlay::WorldOverlay>),
    /// The Board pane's new-task prompt.
    Board(Box<crate::tui::board::overlay::BoardOverlay>),
    /// Answering a question from an agent or a workflow.
    Answer(Box<crate::tui::widgets::forms::AnswerForm>),
    /// Starting a session: profile, model, title.
    NewSession(Box<crate::tui::widgets::forms::NewSessionForm>),
    /// At open: the project config lines that would loosen the author's policy.
    Trust(Box<crate::tui::trust::TrustPrompt>),
    /// Finding a model server and writing it into config.toml.
    ModelSetup(Box<crate::tui::sessions::setup::SetupForm>),
    /// The change history and the session grants (`H`).
    History(Box<crate::tui::history::HistoryOverlay>),
}

impl std::fmt::Debug for Overlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Overlay {
    pub fn name(&self) -> &'static str {
        match self {
            Overlay::Help { .. } => "help",
            Overlay::Palette { .. } => "palette",
            Overlay::Finder { .. } => "finder",
            Overlay::ConfirmQuit { .. } => "confirm_quit",
            Overlay::RejectReason { .. } => "reject_reason",
            Overlay::EditArgs { .. } => "edit_args",
            Overlay::Detail { .. } => "detail",
            Overlay::Messages { .. } => "messages",
            Overlay::DiffSearch { .. } => "diff_search",
            Overlay::Story(o) => o.name(),
            Overlay::World(o) => o.name(),
            Overlay::Board(o) => o.name(),
            Overlay::Answer(_) => "answer",
            Overlay::NewSession(_) => "new_session",
            Overlay::Trust(_) => "trust",
            Overlay::ModelSetup(_) => "model_setup",
            Overlay::History(_) => "history",
        }
    }

    /// Forms take keys from `[form]`; other keys type into their focused text field.
    pub fn is_form(&self) -> bool {
        match self {
            Overlay::Answer(_) | Overlay::NewSession(_) => true,
            Overlay::Board(o) => o.is_form(),
            _ => false,
        }
    }

    pub fn has_text_input(&self) -> bool {
        self.text().is_some()
    }

    pub fn text(&self) -> Option<&TextArea<'static>> {
        match self {
            Overlay::Palette { input, .. }
            | Overlay::Finder { input, .. }
            | Overlay::RejectReason { input, .. }
            | Overlay::EditArgs { input, .. }
            | Overlay::DiffSearch { input, .. } => Some(input),
            Overlay::Story(o) => o.text(),
            Overlay::World(o) => o.text(),
            Overlay::ModelSetup(f) => f.text(),
            Overlay::Board(o) => o.text(),
            _ => None,
        }
    }

    pub fn text_mut(&mut self) -> Option<&mut TextArea<'static>> {
        match self {
            Overlay::Palette { input, .. }
            | Overlay::Finder { input, .. }
            | Overlay::RejectReason { input, .. }
            | Overlay::EditArgs { input, .. }
            | Overlay::DiffSearch { input, .. } => Some(input),
            Overlay::Story(o) => o.text_mut(),
            Overlay::World(o) => o.text_mut(),
            Overlay::ModelSetup(f) => f.text_mut(),
            Overlay::Board(o) => o.text_mut(),
            _ => None,
        }
    }

    /// One-line fields send on Enter; the editor inserts a new line instead.
    pub fn is_multiline(&self) -> bool {
        match self {
            Overlay::Story(o) => o.is_multiline(),
            o => matches!(o, Overlay::EditArgs { .. }),
        }
    }
}

/// A one-line text field with a placeholder.
pub fn single_line(placeholder: &str) -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text(placeholder.to_string());
    t.set_cursor_line_style(ratatui::style::Style::default());
    t
}

/// A multi-line editor holding `text`.
pub fn editor(text: &str) -> TextArea<'static> {
    let mut t = TextArea::new(text.lines().map(str::to_string).collect());
    t.set_cursor_line_style(ratatui::style::Style::default());
    t.set_line_number_style(
        ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::DIM),
    );
    t
}

/// The composer: a multi-line message editor with a placeholder.
pub fn composer(placeholder: &str) -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text(placeholder.to_string());
    t.set_cursor_line_style(ratatui::style::Style::default());
    t
}

/// The whole text of a field.
pub fn text_of(t: &TextArea<'_>) -> String {
    t.lines().join("\n")
}
