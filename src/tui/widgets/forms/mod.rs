//! The two forms of the Sessions work: answering a question (`request_user_input`, a
//! workflow's `wf.ask`) and starting a new session. Plain models with pure operations; the
//! update glue is in `update` and the drawing in `view`.
//!
//! The answer form keeps one cursor over every row of every question: a question's option
//! rows, then its free-text row. 1–9 pick an option, Space picks the one under the cursor
//! (both toggle in a multi-choice question), typing on the text row writes an answer of one's
//! own, and a skipped question is sent as `ignored`.

mod update;
pub mod view;

use tui_textarea::TextArea;

use crate::engine::inputs::{Answer, InputRequest};
use crate::tui::input::{single_line, text_of};

/// One answer being written.
#[derive(Clone, Debug, Default)]
pub struct DraftAnswer {
    /// Chosen option indexes, in the order they were picked.
    pub chosen: Vec<usize>,
    pub text: TextArea<'static>,
    pub skipped: bool,
}

#[derive(Clone, Debug)]
pub struct AnswerForm {
    pub request: InputRequest,
    /// The question the cursor is in.
    pub question: usize,
    /// The row in that question: an option index, or `options.len()` for the text row.
    pub row: usize,
    pub answers: Vec<DraftAnswer>,
    /// Why the last submit was refused (here or by the engine).
    pub error: Option<String>,
    /// Sent to the engine; waiting for its answer.
    pub sending: bool,
}

/// Why answers cannot be sent yet: the question (0-based) and what is missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unanswered {
    pub question: usize,
    pub free_text_only: bool,
}

impl AnswerForm {
    pub fn new(request: InputRequest) -> AnswerForm {
        let answers = request
            .questions
            .iter()
            .map(|q| DraftAnswer {
                text: single_line(if q.options.is_empty() {
                    "type your answer"
                } else {
                    "or type an answer of your own"
                }),
                ..DraftAnswer::default()
            })
            .collect();
        AnswerForm {
            request,
            question: 0,
            row: 0,
            answers,
            error: None,
            sending: false,
        }
    }

    fn rows(&self, q: usize) -> usize {
        self.request
            .questions
            .get(q)
            .map_or(1, |q| q.options.len() + 1)
    }

    /// The cursor is on a question's free-text row (typing goes there).
    pub fn on_text_row(&self) -> bool {
        self.request
            .questions
            .get(self.question)
            .is_some_and(|q| self.row == q.options.len())
    }

    pub fn text_mut(&mut self) -> Option<&mut TextArea<'static>> {
        if !self.on_text_row() {
            return None;
        }
        self.answers.get_mut(self.question).map(|a| &mut a.text)
    }

    /// Down: the next row, into the next question after a question's last row.
    pub fn next_row(&mut self) {
        if self.row + 1 < self.rows(self.question) {
            self.row += 1;
        } else if self.question + 1 < self.request.questions.len() {
            self.question += 1;
            self.row = 0;
        }
    }

    pub fn prev_row(&mut self) {
        if self.row > 0 {
            self.row -= 1;
        } else if self.question > 0 {
            self.question -= 1;
            self.row = self.rows(self.question) - 1;
        }
    }

    pub fn next_question(&mut self) {
        if self.question + 1 < self.request.questions.len() {
            self.question += 1;
            self.row = 0;
        }
    }

    pub fn prev_question(&mut self) {
        if self.question > 0 {
            self.question -= 1;
        }
        self.row = 0;
    }

    /// Pick option `i` of the current question (toggle in a multi-choice one; picking the
    /// chosen option of a single-choice question clears it). False if there is no such option.
    pub fn choose(&mut self, i: usize) -> bool {
        let Some(q) = self.request.questions.get(self.question) else {
            return false;
        };
        if i >= q.options.len() {
            return false;
        }
        let multi = q.multi;
        let a = &mut self.answers[self.question];
        a.skipped = false;
        match a.chosen.iter().position(|&c| c == i) {
            Some(pos) => {
                a.chosen.remove(pos);
            }
            None if multi => a.chosen.push(i),
            None => a.chosen = vec![i],
        }
        self.row = i;
        self.error = None;
        true
    }

    /// Space: the option under the cursor. False on the text row.
    pub fn choose_at_cursor(&mut self) -> bool {
        if self.on_text_row() {
            return false;
        }
        self.choose(self.row)
    }

    /// Skip the current question (again: answer it after all). Returns the new state.
    pub fn toggle_skip(&mut self) -> bool {
        let Some(a) = self.answers.get_mut(self.question) else {
            return false;
        };
        a.skipped = !a.skipped;
        self.error = None;
        a.skipped
    }

    /// The answers in the engine's shape, or the first question still without one.
    pub fn build(&self) -> Result<Vec<Answer>, Unanswered> {
        let mut out = Vec::new();
        for (i, (q, d)) in self.request.questions.iter().zip(&self.answers).enumerate() {
            let typed = text_of(&d.text).trim().to_string();
            let base = Answer {
                question_index: i,
                ..Answer::default()
            };
            if d.skipped {
                out.push(Answer {
                    ignored: true,
                    ..base
                });
                continue;
            }
            let note = (!typed.is_empty()).then(|| typed.clone());
            let answer = if !d.chosen.is_empty() {
                let labels: Vec<&str> = d
                    .chosen
                    .iter()
                    .filter_map(|&c| q.options.get(c).map(|o| o.label.as_str()))
                    .collect();
                if q.multi {
                    Answer {
                        text: labels.join(", "),
                        selected_option_indexes: d.chosen.clone(),
                        note,
                        ..base
                    }
                } else {
                    Answer {
                        text: labels.join(", "),
                        selected_option_index: d.chosen.first().copied(),
                        note,
                        ..base
                    }
                }
            } else if !typed.is_empty() {
                Answer {
                    text: typed,
                    ..base
                }
            } else {
                return Err(Unanswered {
                    question: i,
                    free_text_only: q.options.is_empty(),
                });
            };
            out.push(answer);
        }
        Ok(out)
    }

    /// Put the cursor on a question (after a refusal that names it).
    pub fn go_to(&mut self, question: usize) {
        if question < self.request.questions.len() {
            self.question = question;
            self.row = 0;
        }
    }
}

/// A profile the author may start a session with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileChoice {
    pub key: String,
    pub name: String,
    pub description: String,
}

/// A durable agent the author may start a session as (its role decides the profile).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentChoice {
    pub id: String,
    pub name: String,
    pub role: String,
    /// The profile its sessions run with.
    pub profile: String,
}

/// The durable agents as the new-session form lists them (read off the UI task).
pub fn agent_choices(engine: &crate::engine::Engine) -> Result<Vec<AgentChoice>, String> {
    let list = engine.durable_agents().map_err(|e| e.to_string())?;
    Ok(list
        .into_iter()
        .map(|a| AgentChoice {
            profile: a.role.profile().to_string(),
            role: a.role.as_str().to_string(),
            id: a.id,
            name: a.name,
        })
        .collect())
}

/// What the first list of the new-session form picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chosen<'a> {
    Profile(&'a ProfileChoice),
    Agent(&'a AgentChoice),
}

/// The durable agents of the form: still being read, read, or why they could not be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentsList {
    Loading,
    Loaded(Vec<AgentChoice>),
    Failed(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewField {
    Profile,
    Model,
    Title,
}

#[derive(Clone, Debug)]
pub struct NewSessionForm {
    pub profiles: Vec<ProfileChoice>,
    /// The durable agents, listed after the profiles: a session started as one runs with its
    /// role's profile and its identity.
    pub agents: AgentsList,
    /// Model keys from config.toml; the form offers "profile default" before them.
    pub models: Vec<String>,
    pub field: NewField,
    pub profile: usize,
    /// 0: the profile's default; `i`: `models[i - 1]`.
    pub model: usize,
    pub title: TextArea<'static>,
    /// Letters typed on a list field jump to the first entry starting with them.
    pub typed: String,
    pub creating: bool,
    pub error: Option<String>,
}

impl NewSessionForm {
    pub fn new(profiles: Vec<ProfileChoice>, models: Vec<String>) -> NewSessionForm {
        let profile = profiles
            .iter()
            .position(|p| p.key == "leader.default")
            .unwrap_or(0);
        NewSessionForm {
            profiles,
            agents: AgentsList::Loading,
            models,
            field: NewField::Profile,
            profile,
            model: 0,
            title: single_line("what the session is for (optional)"),
            typed: String::new(),
            creating: false,
            error: None,
        }
    }

    pub fn next_field(&mut self) {
        self.field = match self.field {
            NewField::Profile => NewField::Model,
            NewField::Model => NewField::Title,
            NewField::Title => NewField::Profile,
        };
        self.typed.clear();
    }

    pub fn prev_field(&mut self) {
        self.field = match self.field {
            NewField::Profile => NewField::Title,
            NewField::Model => NewField::Profile,
            NewField::Title => NewField::Model,
        };
        self.typed.clear();
    }

    /// The durable agents read so far (none while loading or after a failure).
    pub fn agent_rows(&self) -> &[AgentChoice] {
        match &self.agents {
            AgentsList::Loaded(a) => a,
            _ => &[],
        }
    }

    /// Up/Down in a list field.
    pub fn move_by(&mut self, delta: isize) {
        let agents_len = self.agent_rows().len();
        let (slot, len) = match self.field {
            NewField::Profile => (&mut self.profile, self.profiles.len() + agents_len),
            NewField::Model => (&mut self.model, self.models.len() + 1),
            NewField::Title => return,
        };
        *slot = slot.saturating_add_signed(delta).min(len.saturating_sub(1));
        self.typed.clear();
    }

    /// A letter typed on a list field: jump to the first entry starting with what was typed.
    pub fn type_ahead(&mut self, c: char) -> bool {
        let names: Vec<String> = match self.field {
            NewField::Profile => self
                .profiles
                .iter()
                .map(|p| p.key.clone())
                .chain(self.agent_rows().iter().map(|a| a.id.clone()))
                .collect(),
            NewField::Model => std::iter::once("profile default".to_string())
                .chain(self.models.iter().cloned())
                .collect(),
            NewField::Title => return false,
        };
        let find = |prefix: &str| {
            names
                .iter()
                .position(|n| n.to_lowercase().starts_with(&prefix.to_lowercase()))
        };
        let mut prefix = format!("{}{c}", self.typed);
        let mut hit = find(&prefix);
        if hit.is_none() {
            prefix = c.to_string();
            hit = find(&prefix);
        }
        let Some(i) = hit else {
            return false;
        };
        self.typed = prefix;
        match self.field {
            NewField::Profile => self.profile = i,
            NewField::Model => self.model = i,
            NewField::Title => {}
        }
        true
    }

    pub fn chosen_profile(&self) -> Option<&ProfileChoice> {
        self.profiles.get(self.profile)
    }

    /// The profile or the durable agent under the cursor of the first list.
    pub fn chosen(&self) -> Option<Chosen<'_>> {
        match self.profiles.get(self.profile) {
            Some(p) => Some(Chosen::Profile(p)),
            None => self
                .agent_rows()
                .get(self.profile - self.profiles.len())
                .map(Chosen::Agent),
        }
    }

    /// The durable agents arrived: kept after the profiles (the cursor stays where it is).
    pub fn agents_loaded(&mut self, r: Result<Vec<AgentChoice>, String>) {
        self.agents = match r {
            Ok(a) => AgentsList::Loaded(a),
            Err(e) => AgentsList::Failed(e),
        };
        let n = self.profiles.len() + self.agent_rows().len();
        self.profile = self.profile.min(n.saturating_sub(1));
    }

    pub fn chosen_model(&self) -> Option<String> {
        self.model
            .checked_sub(1)
            .and_then(|i| self.models.get(i))
            .cloned()
    }

    /// The title typed, or one made from the profile's name.
    pub fn title_or_default(&self) -> String {
        let t = text_of(&self.title).trim().to_string();
        if !t.is_empty() {
            return t;
        }
        match self.chosen() {
            Some(Chosen::Profile(p)) => format!("{} session", p.name),
            Some(Chosen::Agent(a)) => format!("{} ({})", a.name, a.id),
            None => "New session".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::inputs::{InputSource, Question, QuestionOption};

    fn request() -> InputRequest {
        let opt = |l: &str| QuestionOption {
            label: l.into(),
            description: None,
        };
        InputRequest {
            id: "q1".into(),
            session_id: "1".into(),
            source: InputSource::Agent,
            title: "Choices".into(),
            questions: vec![
                Question {
                    header: None,
                    question: "Tone?".into(),
                    options: vec![opt("bleak"), opt("warm")],
                    multi: false,
                },
                Question {
                    header: None,
                    question: "Which threads?".into(),
                    options: vec![opt("a"), opt("b"), opt("c")],
                    multi: true,
                },
                Question {
                    header: None,
                    question: "Name?".into(),
                    options: vec![],
                    multi: false,
                },
            ],
            requested_at: String::new(),
        }
    }

    #[test]
    fn rows_cross_questions_and_answers_build() {
        let mut f = AnswerForm::new(request());
        assert_eq!(
            f.build(),
            Err(Unanswered {
                question: 0,
                free_text_only: false
            })
        );
        assert!(f.choose(1));
        assert!(!f.choose(7));
        // Down from the last option to the text row, then into the next question.
        f.next_row();
        assert!(f.on_text_row());
        f.next_row();
        assert_eq!((f.question, f.row), (1, 0));
        assert!(f.choose(2));
        assert!(f.choose(0));
        assert!(f.choose(2)); // toggles c off again
        f.next_question();
        assert!(f.on_text_row());
        assert_eq!(
            f.build(),
            Err(Unanswered {
                question: 2,
                free_text_only: true
            })
        );
        assert!(f.toggle_skip());
        let a = f.build().unwrap();
        assert_eq!(a[0].selected_option_index, Some(1));
        assert_eq!(a[0].text, "warm");
        assert_eq!(a[1].selected_option_indexes, vec![0]);
        assert!(a[2].ignored);
        f.prev_row();
        assert_eq!((f.question, f.row), (1, 3));
    }

    #[test]
    fn new_session_type_ahead_and_defaults() {
        let p = |k: &str| ProfileChoice {
            key: k.into(),
            name: k.into(),
            description: String::new(),
        };
        let mut f = NewSessionForm::new(
            vec![p("leader.default"), p("world.engine"), p("writer")],
            vec!["local".into()],
        );
        assert_eq!(f.profile, 0);
        assert!(f.type_ahead('w'));
        assert_eq!(f.profile, 1);
        assert!(f.type_ahead('r'));
        assert_eq!(f.chosen_profile().unwrap().key, "writer");
        f.next_field();
        assert_eq!(f.chosen_model(), None);
        f.move_by(5);
        assert_eq!(f.chosen_model().as_deref(), Some("local"));
        assert_eq!(f.title_or_default(), "writer session");
    }
}
