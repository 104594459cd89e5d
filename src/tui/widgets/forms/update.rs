//! Keys and results of the two forms: answering a question (opened from the Approvals pane)
//! and starting a new session (opened from the Sessions pane). The forms' own logic is in
//! `forms`; here are the effects they ask for and what happens when the engine answers.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::engine::{Mode, SessionInfo};
use crate::tui::action::{AnswerRefusal, Command, Effect};
use crate::tui::app::{AppState, MsgKind, Pane};
use crate::tui::input::Overlay;
use crate::tui::keymap::Context;
use crate::tui::sessions::SessionsView;
use crate::tui::widgets::forms::{AgentChoice, AnswerForm, Chosen, NewField, NewSessionForm};

impl AppState {
    fn key_name(&self, cmd: Command, ctx: Context) -> String {
        self.keymap
            .key_for(cmd, &[ctx])
            .map(|k| k.notation())
            .unwrap_or_else(|| cmd.name().to_string())
    }

    /// Open the answer form for a waiting question.
    pub(crate) fn open_answer_form(&mut self, id: &str) -> Vec<Effect> {
        match self.approvals.get_question(id) {
            Some(q) => self.overlay = Some(Overlay::Answer(Box::new(AnswerForm::new(q.clone())))),
            None => self.info("That question is no longer waiting."),
        }
        Vec::new()
    }

    pub(crate) fn open_new_session(&mut self) -> Vec<Effect> {
        if self.profiles.is_empty() {
            self.error("No profile can start a session: check the profile errors in help (?).");
            return Vec::new();
        }
        self.overlay = Some(Overlay::NewSession(Box::new(NewSessionForm::new(
            self.profiles.clone(),
            self.models.clone(),
        ))));
        vec![Effect::LoadDurableAgents]
    }

    /// The durable agents for an open new-session form.
    pub(crate) fn durable_agents_loaded(
        &mut self,
        r: Result<Vec<AgentChoice>, String>,
    ) -> Vec<Effect> {
        if let Some(Overlay::NewSession(f)) = &mut self.overlay {
            f.agents_loaded(r);
        }
        Vec::new()
    }

    pub(crate) fn form_command(&mut self, cmd: Command) -> Vec<Effect> {
        if let Some(Overlay::Board(_)) = &self.overlay {
            return self.board_overlay_command(cmd);
        }
        match self.overlay.take() {
            Some(Overlay::Answer(mut f)) => {
                let fx = self.answer_form_command(&mut f, cmd);
                if self.overlay.is_none() && !matches!(cmd, Command::Cancel) {
                    self.overlay = Some(Overlay::Answer(f));
                }
                fx
            }
            Some(Overlay::NewSession(mut f)) => {
                let fx = self.new_session_command(&mut f, cmd);
                if self.overlay.is_none() && !matches!(cmd, Command::Cancel) {
                    self.overlay = Some(Overlay::NewSession(f));
                }
                fx
            }
            other => {
                self.overlay = other;
                Vec::new()
            }
        }
    }

    fn answer_form_command(&mut self, f: &mut AnswerForm, cmd: Command) -> Vec<Effect> {
        match cmd {
            Command::Submit | Command::Accept => {
                if f.sending {
                    return Vec::new();
                }
                match f.build() {
                    Ok(answers) => {
                        f.sending = true;
                        f.error = None;
                        vec![Effect::AnswerInput {
                            id: f.request.id.clone(),
                            answers,
                        }]
                    }
                    Err(missing) => {
                        f.go_to(missing.question);
                        if !missing.free_text_only {
                            f.row = 0;
                        } else {
                            f.row = f.request.questions[missing.question].options.len();
                        }
                        let skip = self.key_name(Command::SkipQuestion, Context::Form);
                        f.error = Some(if missing.free_text_only {
                            format!(
                                "Question {} has no answer yet: type one, or skip it with {skip}. Nothing was sent.",
                                missing.question + 1
                            )
                        } else {
                            format!(
                                "Question {} has no answer yet: pick an option (1–9 or Space), type one of your own, or skip it with {skip}. Nothing was sent.",
                                missing.question + 1
                            )
                        });
                        Vec::new()
                    }
                }
            }
            Command::Cancel => {
                let key = self.key_name(Command::Detail, Context::Approvals);
                self.info(format!(
                    "The question is still waiting: select it in Approvals (5) and press {key} to answer."
                ));
                Vec::new()
            }
            Command::NextField => {
                f.next_question();
                Vec::new()
            }
            Command::PrevField => {
                f.prev_question();
                Vec::new()
            }
            Command::NextItem => {
                f.next_row();
                Vec::new()
            }
            Command::PrevItem => {
                f.prev_row();
                Vec::new()
            }
            Command::ToggleOption => {
                if !f.choose_at_cursor() {
                    if let Some(t) = f.text_mut() {
                        t.insert_char(' ');
                        self.last_typed = Some(self.clock.now());
                    }
                }
                Vec::new()
            }
            Command::SkipQuestion => {
                if f.toggle_skip() {
                    f.next_question();
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn new_session_command(&mut self, f: &mut NewSessionForm, cmd: Command) -> Vec<Effect> {
        match cmd {
            Command::Submit | Command::Accept => {
                if f.creating {
                    return Vec::new();
                }
                let (profile, agent) = match f.chosen() {
                    Some(Chosen::Profile(p)) => (p.key.clone(), None),
                    Some(Chosen::Agent(a)) => (a.profile.clone(), Some(a.id.clone())),
                    None => {
                        f.error = Some("Pick a profile or an agent first.".into());
                        return Vec::new();
                    }
                };
                f.creating = true;
                f.error = None;
                vec![Effect::CreateSession {
                    profile,
                    agent,
                    model: f.chosen_model(),
                    title: f.title_or_default(),
                    mode: Mode::Normal,
                }]
            }
            Command::Cancel => {
                self.info("No session was started.");
                Vec::new()
            }
            Command::NextField => {
                f.next_field();
                Vec::new()
            }
            Command::PrevField => {
                f.prev_field();
                Vec::new()
            }
            Command::NextItem => {
                f.move_by(1);
                Vec::new()
            }
            Command::PrevItem => {
                f.move_by(-1);
                Vec::new()
            }
            Command::ToggleOption => {
                if f.field == NewField::Title {
                    f.title.insert_char(' ');
                    self.last_typed = Some(self.clock.now());
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// A key no `[form]` binding claimed: typing, or a digit picking an option.
    pub(crate) fn form_text(&mut self, key: KeyEvent) -> Vec<Effect> {
        if let Some(Overlay::Board(_)) = &self.overlay {
            return self.room_form_text(key);
        }
        let now = self.clock.now();
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match &mut self.overlay {
            Some(Overlay::Answer(f)) => {
                if f.sending {
                    return Vec::new();
                }
                if !f.on_text_row() {
                    match key.code {
                        KeyCode::Char(c @ '1'..='9') if plain => {
                            let n = c as usize - '0' as usize;
                            if !f.choose(n - 1) {
                                f.error = Some(format!("This question has no option {n}."));
                            }
                            return Vec::new();
                        }
                        KeyCode::Char(_) if plain => {
                            // Typing on an option row starts an answer of one's own.
                            f.row = f.request.questions[f.question].options.len();
                        }
                        _ => {}
                    }
                }
                if key.code == KeyCode::Enter {
                    return Vec::new();
                }
                if let Some(t) = f.text_mut() {
                    t.input(key);
                    f.error = None;
                    self.last_typed = Some(now);
                }
            }
            Some(Overlay::NewSession(f)) => {
                if f.field == NewField::Title {
                    if key.code != KeyCode::Enter {
                        f.title.input(key);
                        self.last_typed = Some(now);
                    }
                } else if let KeyCode::Char(c) = key.code {
                    if plain && !f.type_ahead(c) {
                        f.error = Some(format!(
                            "Nothing in this list starts with \"{}{c}\".",
                            f.typed
                        ));
                    } else {
                        f.error = None;
                    }
                }
            }
            _ => {}
        }
        Vec::new()
    }

    pub(crate) fn form_paste(&mut self, text: String) -> Vec<Effect> {
        if let Some(Overlay::Board(_)) = &self.overlay {
            return self.room_form_paste(&text);
        }
        let text = text.replace("\r\n", " ").replace(['\r', '\n'], " ");
        let now = self.clock.now();
        let field = match &mut self.overlay {
            Some(Overlay::Answer(f)) => {
                if !f.on_text_row() {
                    f.row = f.request.questions[f.question].options.len();
                }
                f.text_mut()
            }
            Some(Overlay::NewSession(f)) if f.field == NewField::Title => Some(&mut f.title),
            _ => None,
        };
        if let Some(t) = field {
            t.insert_str(text);
            self.last_typed = Some(now);
        }
        Vec::new()
    }

    /// The engine took the answers, or refused them.
    pub(crate) fn answer_checked(
        &mut self,
        id: String,
        result: Result<(), AnswerRefusal>,
    ) -> Vec<Effect> {
        let open = matches!(&self.overlay, Some(Overlay::Answer(f)) if f.request.id == id);
        match result {
            Ok(()) => {
                if open {
                    self.overlay = None;
                }
                let q = self.approvals.remove_question(&id);
                let what = q
                    .map(|q| format!("{} (session {})", q.title, q.session_id))
                    .unwrap_or(id);
                self.message(format!("✔ answered {what}"), MsgKind::Ok);
            }
            Err(r) if r.stays => {
                if let Some(Overlay::Answer(f)) = &mut self.overlay {
                    if open {
                        f.sending = false;
                        f.error = Some(format!("{} Nothing was sent.", r.message));
                        return Vec::new();
                    }
                }
                self.error(r.message);
            }
            Err(r) => {
                if open {
                    self.overlay = None;
                }
                self.approvals.remove_question(&id);
                self.error(r.message);
            }
        }
        Vec::new()
    }

    /// The new session exists (or could not be created).
    pub(crate) fn session_created(&mut self, result: Result<SessionInfo, String>) -> Vec<Effect> {
        match result {
            Ok(info) => {
                if matches!(self.overlay, Some(Overlay::NewSession(_))) {
                    self.overlay = None;
                }
                let id = info.id.clone();
                let profile = match &info.agent {
                    Some(a) => format!("{}, as {a}", info.profile),
                    None => info.profile.clone(),
                };
                self.sessions.upsert(info);
                self.sessions.select_id(&id);
                self.focus = Pane::Sessions;
                self.sessions.view = SessionsView::Sessions;
                self.sessions.in_transcript = false;
                self.sessions.scroll = None;
                self.start_composing();
                let send = self.key_name(Command::Send, Context::Composer);
                self.message(
                    format!(
                        "Session {id} ({profile}) started: write its first message, {send} sends."
                    ),
                    MsgKind::Ok,
                );
                self.load_selected_session()
            }
            Err(e) => {
                if let Some(Overlay::NewSession(f)) = &mut self.overlay {
                    f.creating = false;
                    f.error = Some(format!("Not created: {e}"));
                } else {
                    self.error(format!("The session was not created: {e}"));
                }
                Vec::new()
            }
        }
    }
}
