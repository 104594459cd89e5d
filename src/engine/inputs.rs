//! Questions for the author: `request_user_input` forms and workflow `wf.ask` prompts. They
//! wait in their own FIFO next to the approval queue; the session shows "waiting for input"
//! until the author answers (Approvals pane) or the run is cancelled.
//!
//! The asking side blocks a worker thread (tools and workflow scripts are synchronous), so the
//! answer travels over a oneshot channel; dropping the sender (cancel) wakes the asker with an
//! error instead of leaving it stuck.

use tokio::sync::oneshot;

use super::session_log::now_rfc3339;
use super::types::{EngineEvent, LogRecord, SessionState};
use super::Engine;
pub use crate::protocol::{Answer, InputRequest, InputSource, Question, QuestionOption};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InputError {
    #[error("no question with id '{0}' is waiting (it may have been answered or cancelled)")]
    Unknown(String),
    #[error("answer {index}: {why}")]
    BadAnswer { index: usize, why: String },
    #[error("the question was withdrawn: the run was cancelled before the author answered")]
    Withdrawn,
    /// The session log did not take the question's record, so it was not asked.
    #[error("the question was not asked or its answer not kept: {0}")]
    NotRecorded(String),
    #[error("no author can answer in a headless run (`nbook run`); decide yourself and say what you assumed, or ask in the TUI")]
    Headless,
}

/// Check answers against their questions: one per question, options in range.
pub fn check_answers(req: &InputRequest, answers: &[Answer]) -> Result<(), InputError> {
    for (i, q) in req.questions.iter().enumerate() {
        let Some(a) = answers.iter().find(|a| a.question_index == i) else {
            return Err(InputError::BadAnswer {
                index: i + 1,
                why: "missing; answer every question (or mark it ignored)".into(),
            });
        };
        let chosen = a
            .selected_option_index
            .into_iter()
            .chain(a.selected_option_indexes.iter().copied());
        for o in chosen {
            if o >= q.options.len() {
                return Err(InputError::BadAnswer {
                    index: i + 1,
                    why: format!("option {} does not exist", o + 1),
                });
            }
        }
        if !a.ignored && a.text.trim().is_empty() && a.selected_option_index.is_none() {
            return Err(InputError::BadAnswer {
                index: i + 1,
                why: "empty; type an answer, pick an option, or skip the question".into(),
            });
        }
    }
    if let Some(a) = answers
        .iter()
        .find(|a| a.question_index >= req.questions.len())
    {
        return Err(InputError::BadAnswer {
            index: a.question_index + 1,
            why: "there is no such question".into(),
        });
    }
    Ok(())
}

/// The answers as the agent reads them: "N. <question>\nAnswer: <answer>" lines.
pub fn render_answers(req: &InputRequest, answers: &[Answer]) -> String {
    let mut out = Vec::new();
    for (i, q) in req.questions.iter().enumerate() {
        let a = answers.iter().find(|a| a.question_index == i);
        let text = match a {
            None => "(no answer)".to_string(),
            Some(a) if a.ignored => "(the author skipped this question)".to_string(),
            Some(a) => {
                let mut t = a.text.clone();
                if let Some(n) = &a.note {
                    t.push_str(&format!(" (note: {n})"));
                }
                t
            }
        };
        out.push(format!("{}. {}\nAnswer: {}", i + 1, q.question, text));
    }
    out.join("\n\n")
}

/// Drops the waiting entry if the asker goes away (cancel), so nothing stays on screen.
struct AskGuard<'a> {
    engine: &'a Engine,
    id: String,
}

impl Drop for AskGuard<'_> {
    fn drop(&mut self) {
        self.engine.withdraw_input(&self.id);
    }
}

impl Engine {
    /// Ask the author and block this (worker) thread until the answer, or until the question
    /// is withdrawn. Never call from an async task: use `spawn_blocking`.
    pub fn ask_blocking(
        &self,
        session_id: &str,
        source: InputSource,
        id: &str,
        title: &str,
        questions: Vec<Question>,
    ) -> Result<Vec<Answer>, InputError> {
        if self.is_headless() {
            return Err(InputError::Headless);
        }
        // A provider's call id may be another session's too: an agent's question is filed
        // under its session (one run per session, and a question ends the turn).
        let id = match source {
            InputSource::Agent => format!("{session_id}/{id}"),
            InputSource::Workflow => id.to_string(),
        };
        let id = id.as_str();
        let req = InputRequest {
            id: id.to_string(),
            session_id: session_id.to_string(),
            source,
            title: title.to_string(),
            questions,
            requested_at: now_rfc3339(),
        };
        // The wait is on record before the author sees the question.
        self.append(
            session_id,
            LogRecord::Lifecycle {
                status: "waiting".into(),
                message: Some(format!("waiting for the author: {}", req.title)),
            },
        )
        .map_err(|e| InputError::NotRecorded(e.to_string()))?;
        let (tx, rx) = oneshot::channel();
        {
            let mut st = self.state();
            st.inputs.push_back((req.clone(), tx));
        }
        let _guard = AskGuard {
            engine: self,
            id: id.to_string(),
        };
        let before = self.session(session_id).map(|s| s.state);
        self.set_state(session_id, SessionState::WaitingInput);
        self.emit(EngineEvent::InputRequested {
            request: req.clone(),
        });
        let answer = rx.blocking_recv();
        // Put the state back only if nothing else changed it meanwhile (a workflow asks on
        // behalf of an owner session that may have run turns of its own).
        if let Some(before) = before {
            if self.session(session_id).map(|s| s.state) == Some(SessionState::WaitingInput) {
                self.set_state(session_id, before);
            }
        }
        match answer {
            Ok(a) => {
                self.append(
                    session_id,
                    LogRecord::Lifecycle {
                        status: "resumed".into(),
                        message: Some("the author answered".into()),
                    },
                )
                .map_err(|e| InputError::NotRecorded(e.to_string()))?;
                Ok(a)
            }
            Err(_) => Err(InputError::Withdrawn),
        }
    }

    /// Ask the author without waiting: the question is on record and in the queue when this
    /// returns, and the receiver yields the answers (or an error when it is withdrawn). The
    /// session's state is left alone: the asker ends its turn and the answer comes back as
    /// its next message (`fn_ask_question`). Cancelling the session's run withdraws it.
    pub fn ask_deferred(
        &self,
        session_id: &str,
        id: &str,
        title: &str,
        questions: Vec<Question>,
    ) -> Result<(InputRequest, oneshot::Receiver<Vec<Answer>>), InputError> {
        if self.is_headless() {
            return Err(InputError::Headless);
        }
        let req = InputRequest {
            id: format!("{session_id}/{id}"),
            session_id: session_id.to_string(),
            source: InputSource::Agent,
            title: title.to_string(),
            questions,
            requested_at: now_rfc3339(),
        };
        self.append(
            session_id,
            LogRecord::Lifecycle {
                status: "waiting".into(),
                message: Some(format!("question for the author: {}", req.title)),
            },
        )
        .map_err(|e| InputError::NotRecorded(e.to_string()))?;
        let (tx, rx) = oneshot::channel();
        self.state().inputs.push_back((req.clone(), tx));
        self.emit(EngineEvent::InputRequested {
            request: req.clone(),
        });
        Ok((req, rx))
    }

    /// Questions waiting for the author, oldest first.
    pub fn pending_inputs(&self) -> Vec<InputRequest> {
        self.state().inputs.iter().map(|(r, _)| r.clone()).collect()
    }

    /// Answer a waiting question. Bad answers are refused and the question stays.
    pub fn answer_input(&self, id: &str, answers: Vec<Answer>) -> Result<(), InputError> {
        let tx = {
            let mut st = self.state();
            let pos = st
                .inputs
                .iter()
                .position(|(r, _)| r.id == id)
                .ok_or_else(|| InputError::Unknown(id.to_string()))?;
            check_answers(&st.inputs[pos].0, &answers)?;
            match st.inputs.remove(pos) {
                Some((_, tx)) => tx,
                None => return Err(InputError::Unknown(id.to_string())),
            }
        };
        if tx.send(answers).is_err() {
            return Err(InputError::Withdrawn);
        }
        self.emit(EngineEvent::InputResolved {
            id: id.to_string(),
            outcome: "answered".into(),
        });
        Ok(())
    }

    /// Withdraw a question (its asker is woken with `InputError::Withdrawn`).
    pub fn withdraw_input(&self, id: &str) {
        let removed = {
            let mut st = self.state();
            let before = st.inputs.len();
            st.inputs.retain(|(r, _)| r.id != id);
            before != st.inputs.len()
        };
        if removed {
            self.emit(EngineEvent::InputResolved {
                id: id.to_string(),
                outcome: "withdrawn".into(),
            });
        }
    }

    /// Withdraw the questions a session's own run asked (its run was cancelled). A background
    /// workflow's questions filed under the same session stay: the job has its own cancel.
    pub fn withdraw_inputs_of(&self, session_id: &str) {
        let ids: Vec<String> = self
            .state()
            .inputs
            .iter()
            .filter(|(r, _)| r.session_id == session_id && r.source == InputSource::Agent)
            .map(|(r, _)| r.id.clone())
            .collect();
        for id in ids {
            self.withdraw_input(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> InputRequest {
        InputRequest {
            id: "c1".into(),
            session_id: "1".into(),
            source: InputSource::Agent,
            title: "t".into(),
            questions: vec![
                Question {
                    header: None,
                    question: "Tone?".into(),
                    options: vec![
                        QuestionOption {
                            label: "bleak".into(),
                            description: None,
                        },
                        QuestionOption {
                            label: "warm".into(),
                            description: None,
                        },
                    ],
                    multi: false,
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
    fn every_question_needs_an_answer_and_options_must_exist() {
        let r = req();
        let a0 = Answer {
            question_index: 0,
            text: "warm".into(),
            selected_option_index: Some(1),
            ..Default::default()
        };
        assert!(matches!(
            check_answers(&r, std::slice::from_ref(&a0)),
            Err(InputError::BadAnswer { index: 2, .. })
        ));
        let bad = Answer {
            selected_option_index: Some(5),
            ..a0.clone()
        };
        assert!(check_answers(&r, &[bad]).is_err());
        let a1 = Answer {
            question_index: 1,
            text: "Mara".into(),
            ..Default::default()
        };
        assert_eq!(check_answers(&r, &[a0.clone(), a1.clone()]), Ok(()));
        let text = render_answers(&r, &[a0, a1]);
        assert!(text.contains("1. Tone?\nAnswer: warm"));
        assert!(text.contains("2. Name?\nAnswer: Mara"));
    }
}
