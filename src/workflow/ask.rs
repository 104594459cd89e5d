//! `wf.ask`: a question for the author (select / text / approve) as the engine's input
//! queue shows it, and the author's answer as the script receives it.

use serde_json::{json, Value};

use super::call_error::CallError;
use super::host::{object_opts, optional_string};
use crate::engine::inputs::{Answer, Question, QuestionOption};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AskKind {
    Select,
    Text,
    Approve,
}

/// A `wf.ask({kind, title, description?, options?, multi?})` question.
pub(super) struct AskSpec {
    kind: AskKind,
    pub(super) title: String,
    description: Option<String>,
    options: Vec<QuestionOption>,
    multi: bool,
}

impl AskSpec {
    pub(super) fn parse(q: &Value) -> Result<AskSpec, CallError> {
        let o = object_opts(
            q,
            "wf.ask",
            &["kind", "title", "description", "options", "multi"],
        )?;
        let kind = match o.get("kind").and_then(Value::as_str) {
            Some("select") => AskKind::Select,
            Some("text") => AskKind::Text,
            Some("approve") => AskKind::Approve,
            _ => return Err(CallError::AskShape("kind must be select, text or approve")),
        };
        let title = o
            .get("title")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or(CallError::AskShape("title must be a non-empty string"))?
            .to_string();
        let description = optional_string(o.get("description"), "wf.ask: description")?;
        let mut options = Vec::new();
        match o.get("options") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    options.push(match item {
                        Value::String(s) => QuestionOption {
                            label: s.clone(),
                            description: None,
                        },
                        Value::Object(m) => QuestionOption {
                            label: m
                                .get("label")
                                .and_then(Value::as_str)
                                .ok_or(CallError::AskOptionLabel(i))?
                                .to_string(),
                            description: m
                                .get("description")
                                .and_then(Value::as_str)
                                .map(str::to_string),
                        },
                        _ => return Err(CallError::AskOption(i)),
                    });
                }
            }
            Some(_) => return Err(CallError::Usage("wf.ask: options must be an array")),
        }
        let multi = match o.get("multi") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(CallError::Usage("wf.ask: multi must be true or false")),
        };
        match kind {
            AskKind::Select if options.is_empty() => {
                return Err(CallError::Usage("wf.ask: a select question needs options"))
            }
            AskKind::Text | AskKind::Approve if !options.is_empty() => {
                return Err(CallError::Usage(
                    "wf.ask: only select questions take options",
                ))
            }
            _ => {}
        }
        Ok(AskSpec {
            kind,
            title,
            description,
            options,
            multi,
        })
    }

    fn kind_str(&self) -> &'static str {
        match self.kind {
            AskKind::Select => "select",
            AskKind::Text => "text",
            AskKind::Approve => "approve",
        }
    }

    pub(super) fn describe(&self, id: Option<&str>) -> Value {
        let mut v = json!({
            "kind": self.kind_str(),
            "title": self.title,
            "description": self.description,
        });
        if let Some(id) = id {
            v["id"] = Value::String(id.to_string());
        }
        if !self.options.is_empty() {
            v["options"] = json!(self.options.iter().map(|o| &o.label).collect::<Vec<_>>());
        }
        v
    }

    pub(super) fn question(&self) -> Question {
        let question = match &self.description {
            Some(d) if !d.trim().is_empty() => format!("{}\n\n{d}", self.title),
            _ => self.title.clone(),
        };
        let options = match self.kind {
            AskKind::Approve => vec![
                QuestionOption {
                    label: "Approve".into(),
                    description: None,
                },
                QuestionOption {
                    label: "Reject".into(),
                    description: Some("add a note to say what should change".into()),
                },
            ],
            _ => self.options.clone(),
        };
        Question {
            header: None,
            question,
            options,
            multi: self.kind == AskKind::Select && self.multi,
        }
    }

    /// The answer as the script receives it: select → the chosen label (an array of labels
    /// with `multi`), text → the text, approve → `{approved, note}`; a skipped question → null.
    pub(super) fn interpret(&self, a: Option<&Answer>) -> Value {
        let Some(a) = a.filter(|a| !a.ignored) else {
            return Value::Null;
        };
        let mut chosen: Vec<usize> = a
            .selected_option_index
            .into_iter()
            .chain(a.selected_option_indexes.iter().copied())
            .collect();
        chosen.sort_unstable();
        chosen.dedup();
        match self.kind {
            AskKind::Text => Value::String(a.text.clone()),
            AskKind::Select => {
                let labels: Vec<Value> = chosen
                    .iter()
                    .filter_map(|i| self.options.get(*i))
                    .map(|o| Value::String(o.label.clone()))
                    .collect();
                match (self.multi, labels.is_empty()) {
                    // Typed instead of picked: the text is the answer.
                    (_, true) => Value::String(a.text.clone()),
                    (true, false) => Value::Array(labels),
                    (false, false) => labels.into_iter().next().unwrap_or(Value::Null),
                }
            }
            AskKind::Approve => {
                let text = a.text.trim();
                let approved = match chosen.first() {
                    Some(i) => *i == 0,
                    None => {
                        let t = text.to_ascii_lowercase();
                        ["y", "yes", "ok", "approve", "approved"].contains(&t.as_str())
                    }
                };
                let note = a.note.clone().or_else(|| {
                    (chosen.is_empty() && !approved && !text.is_empty()).then(|| text.to_string())
                });
                json!({"approved": approved, "note": note})
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_become_plain_values() {
        let sel = AskSpec::parse(&json!({"kind": "select", "title": "Pick", "options": ["a", {"label": "b"}], "multi": true})).unwrap();
        let a = Answer {
            selected_option_indexes: vec![1, 0],
            text: "a, b".into(),
            ..Default::default()
        };
        assert_eq!(sel.interpret(Some(&a)), json!(["a", "b"]));
        let appr = AskSpec::parse(&json!({"kind": "approve", "title": "OK?"})).unwrap();
        assert_eq!(appr.question().options.len(), 2);
        let yes = Answer {
            selected_option_index: Some(0),
            text: "Approve".into(),
            ..Default::default()
        };
        assert_eq!(
            appr.interpret(Some(&yes)),
            json!({"approved": true, "note": null})
        );
        let no = Answer {
            text: "make it darker".into(),
            ..Default::default()
        };
        assert_eq!(
            appr.interpret(Some(&no)),
            json!({"approved": false, "note": "make it darker"})
        );
        let skipped = Answer {
            ignored: true,
            ..Default::default()
        };
        assert_eq!(appr.interpret(Some(&skipped)), Value::Null);
        assert!(AskSpec::parse(&json!({"kind": "select", "title": "x"})).is_err());
        assert!(AskSpec::parse(&json!({"kind": "maybe", "title": "x"})).is_err());
        assert!(AskSpec::parse(&json!({"kind": "text", "title": "x", "colour": 1})).is_err());
    }
}
