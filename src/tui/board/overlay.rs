//! The Board pane's prompts: `n` asks for the new task's description (its first line becomes
//! the title); `s` asks for a steering comment for the selected task; `d` asks why a plan
//! waiting for approval goes back to planning. Empty text keeps the
//! prompt open and says what to type. Keys reach them through the `[input]` section (Enter
//! sends, Esc cancels). The goal form and the goal
//! list (`o`, `O`) are `super::goals`'.

use tui_textarea::TextArea;

use crate::tui::action::{Command, Effect};
use crate::tui::app::AppState;
use crate::tui::board::goals::GoalForm;
use crate::tui::board::jobs::BoardWrite;
use crate::tui::input::{single_line, text_of, Overlay};

// The overlay is held boxed (`Overlay::Board(Box<_>)`), so the small goal-list variant costs
// no extra room where it is kept.
#[allow(clippy::large_enum_variant)]
pub enum BoardOverlay {
    New {
        input: TextArea<'static>,
        error: Option<String>,
    },
    /// `o`: a new goal's title and description.
    Goal(Box<GoalForm>),
    /// `O`: the goals, to archive or unarchive one (and why the last try was refused).
    Goals {
        selected: usize,
        error: Option<String>,
        /// The goal just archived or unarchived: the selection follows it to its new place.
        follow: Option<String>,
    },
    Steer {
        task: String,
        input: TextArea<'static>,
        error: Option<String>,
    },
    /// `d`: why the task's plan goes back to planning.
    RejectPlan {
        task: String,
        input: TextArea<'static>,
        error: Option<String>,
    },
    /// `e` in the Workflows view: `id = value` for the workflow's settings.
    Setting {
        workflow: String,
        input: TextArea<'static>,
        error: Option<String>,
    },
    /// `H`: the durable agents and their last runs, to wake one.
    Agents { selected: usize },
    /// `R` in the Sessions pane or the Board: the author's rating of a run.
    Rate(Box<crate::tui::board::rating::RateForm>),
    /// `c` / `p` in the Inbox: a new message, or a post in a room (`super::compose`).
    Mail(Box<crate::tui::board::compose::MailForm>),
    /// `N` / `A` in the Inbox: a new chat room, or members for one (`super::rooms`).
    Room(Box<crate::tui::board::rooms::RoomForm>),
    /// `r` in the Inbox: the author's reply to `mail`, which goes to `to`.
    Reply {
        mail: String,
        to: String,
        input: TextArea<'static>,
        error: Option<String>,
    },
}

impl BoardOverlay {
    pub fn name(&self) -> &'static str {
        match self {
            BoardOverlay::New { .. } => "board_new",
            BoardOverlay::Goal(_) => "board_goal_new",
            BoardOverlay::Goals { .. } => "board_goals",
            BoardOverlay::Agents { .. } => "board_agents",
            BoardOverlay::Steer { .. } => "board_steer",
            BoardOverlay::RejectPlan { .. } => "board_plan_reject",
            BoardOverlay::Setting { .. } => "board_workflow_setting",
            BoardOverlay::Reply { .. } => "inbox_reply",
            BoardOverlay::Mail(f) => match f.kind {
                crate::tui::board::compose::MailFormKind::Message => "inbox_compose",
                crate::tui::board::compose::MailFormKind::RoomPost => "inbox_room_post",
            },
            BoardOverlay::Rate(_) => "rate_run",
            BoardOverlay::Room(f) if f.adding => "inbox_room_add",
            BoardOverlay::Room(_) => "inbox_room_new",
        }
    }

    /// The room form takes keys from `[form]` (Tab, Space toggles a member; `super::rooms`).
    pub fn is_form(&self) -> bool {
        matches!(self, BoardOverlay::Room(_))
    }

    pub fn text(&self) -> Option<&TextArea<'static>> {
        match self {
            BoardOverlay::New { input, .. }
            | BoardOverlay::Steer { input, .. }
            | BoardOverlay::RejectPlan { input, .. }
            | BoardOverlay::Setting { input, .. } => Some(input),
            BoardOverlay::Reply { input, .. } => Some(input),
            BoardOverlay::Mail(f) => Some(&f.content),
            BoardOverlay::Goal(f) => Some(f.field()),
            BoardOverlay::Rate(f) => Some(f.field()),
            BoardOverlay::Room(f) => Some(&f.name),
            BoardOverlay::Goals { .. } | BoardOverlay::Agents { .. } => None,
        }
    }

    pub fn text_mut(&mut self) -> Option<&mut TextArea<'static>> {
        match self {
            BoardOverlay::New { input, .. }
            | BoardOverlay::Steer { input, .. }
            | BoardOverlay::RejectPlan { input, .. }
            | BoardOverlay::Setting { input, .. } => Some(input),
            BoardOverlay::Reply { input, .. } => Some(input),
            BoardOverlay::Mail(f) => Some(&mut f.content),
            BoardOverlay::Goal(f) => Some(f.field_mut()),
            BoardOverlay::Rate(f) => Some(f.field_mut()),
            BoardOverlay::Room(f) => Some(&mut f.name),
            BoardOverlay::Goals { .. } | BoardOverlay::Agents { .. } => None,
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

    /// `s`: the steering prompt for the selected task (not Done or Archived).
    pub(crate) fn board_open_steer(&mut self) {
        let Some(t) = self.board.selected_task() else {
            self.info("No task selected to steer: n creates one.");
            return;
        };
        if matches!(t.column.as_str(), "done" | "archived") {
            let msg = format!("{} is finished; nobody works on it to steer.", t.id);
            self.info(msg);
            return;
        }
        let task = t.id.clone();
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::Steer {
            task,
            input: single_line("e.g. Keep the storm for the last scene"),
            error: None,
        })));
    }

    /// `d`: the reason prompt for sending the selected task's plan back (it waits at `plan?`).
    pub(crate) fn board_open_plan_reject(&mut self) {
        let Some(t) = self.board.selected_task() else {
            self.info("No task selected: d sends back a plan that waits for you (plan?).");
            return;
        };
        if t.status != crate::board::plan_approval::AWAITING {
            let msg = format!(
                "{}'s plan does not wait for your approval (only a card at plan? does).",
                t.id
            );
            self.info(msg);
            return;
        }
        let task = t.id.clone();
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::RejectPlan {
            task,
            input: single_line("e.g. Split step 2 into two scenes"),
            error: None,
        })));
    }

    pub(crate) fn board_overlay_command(&mut self, cmd: Command) -> Vec<Effect> {
        let Some(Overlay::Board(o)) = &mut self.overlay else {
            return Vec::new();
        };
        if let BoardOverlay::Setting { .. } = o.as_ref() {
            return match cmd {
                Command::Accept | Command::Submit => self.workflow_form_submit(),
                Command::Cancel => {
                    self.overlay = None;
                    self.info("Setting not changed.");
                    Vec::new()
                }
                _ => Vec::new(),
            };
        }
        if let BoardOverlay::Mail(_) = o.as_ref() {
            return self.mail_form_command(cmd);
        }
        if let BoardOverlay::Room(_) = o.as_ref() {
            return self.room_form_command(cmd);
        }
        if let BoardOverlay::Reply {
            mail, input, error, ..
        } = o.as_mut()
        {
            return match cmd {
                Command::Accept | Command::Submit => {
                    let text = text_of(input).trim().to_string();
                    if text.is_empty() {
                        *error =
                            Some("Type your answer, e.g. \"Yes, trim the storm by half.\"".into());
                        return Vec::new();
                    }
                    let mail = mail.clone();
                    self.overlay = None;
                    self.board_write(BoardWrite::Reply { mail, text })
                }
                Command::Cancel => {
                    self.overlay = None;
                    self.info("Reply cancelled: nothing was sent.");
                    Vec::new()
                }
                _ => Vec::new(),
            };
        }
        if let BoardOverlay::RejectPlan { task, input, error } = o.as_mut() {
            return match cmd {
                Command::Accept | Command::Submit => {
                    let reason = text_of(input).trim().to_string();
                    if reason.is_empty() {
                        *error = Some(
                            "Say what the plan must change, e.g. \"Split step 2 into two scenes\"."
                                .into(),
                        );
                        return Vec::new();
                    }
                    let task = task.clone();
                    self.overlay = None;
                    self.board_write(BoardWrite::RejectPlan { task, reason })
                }
                Command::Cancel => {
                    self.overlay = None;
                    self.info("The plan still waits for you: nothing was sent back.");
                    Vec::new()
                }
                _ => Vec::new(),
            };
        }
        if let BoardOverlay::Steer { task, input, error } = o.as_mut() {
            return match cmd {
                Command::Accept | Command::Submit => {
                    let text = text_of(input).trim().to_string();
                    if text.is_empty() {
                        *error = Some(
                            "Type the comment for the task's agent, e.g. \"Keep the storm for the last scene\"."
                                .into(),
                        );
                        return Vec::new();
                    }
                    let task = task.clone();
                    self.overlay = None;
                    self.board_write(BoardWrite::Steer { task, text })
                }
                Command::Cancel => {
                    self.overlay = None;
                    self.info("Steering cancelled: nothing was sent.");
                    Vec::new()
                }
                _ => Vec::new(),
            };
        }
        let (input, error) = match o.as_mut() {
            BoardOverlay::New { input, error } => (input, error),
            BoardOverlay::Goal(_) => return self.goal_form_command(cmd),
            BoardOverlay::Rate(_) => return self.rate_form_command(cmd),
            BoardOverlay::Goals { .. } => return self.goal_list_command(cmd),
            BoardOverlay::Agents { .. } => return self.agent_list_command(cmd),
            BoardOverlay::Steer { .. }
            | BoardOverlay::RejectPlan { .. }
            | BoardOverlay::Setting { .. }
            | BoardOverlay::Mail(_)
            | BoardOverlay::Room(_)
            | BoardOverlay::Reply { .. } => return Vec::new(),
        };
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
            match o.as_mut() {
                BoardOverlay::New { error, .. } => *error = None,
                BoardOverlay::Goal(f) => f.error = None,
                BoardOverlay::Rate(f) => f.error = None,
                BoardOverlay::Mail(f) => f.error = None,
                BoardOverlay::Room(f) => f.error = None,
                BoardOverlay::Goals { .. } | BoardOverlay::Agents { .. } => {}
                BoardOverlay::Steer { error, .. }
                | BoardOverlay::RejectPlan { error, .. }
                | BoardOverlay::Setting { error, .. }
                | BoardOverlay::Reply { error, .. } => *error = None,
            }
        }
        Vec::new()
    }
}
