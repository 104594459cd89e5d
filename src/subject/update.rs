//! `subject_memory_update` without the engine: load the memory list, run the curator round
//! trip (at most [`MAX_ATTEMPTS`]; the retry prompt quotes the apply error), and commit the
//! result only if `memory.jsonl` is byte-for-byte what the curator was shown.
//!
//! The curator itself is behind a closure (the tool wires it to a `memory.curator` session
//! through the engine's agent host), so the retry and commit rules are testable on their own.
//! Nothing is written unless the outcome is `updated`.

use serde_json::{json, Value};

use super::{
    content_fingerprint, dirty, io_lock, memory, patch, read_source, Source, Subject, SubjectError,
};
use crate::workspace::{atomic_write, Access, Resolved, Workspace};

pub const MAX_ATTEMPTS: usize = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Updated,
    Unchanged,
    NeedsReview,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Updated => "updated",
            Outcome::Unchanged => "unchanged",
            Outcome::NeedsReview => "needs_review",
        }
    }
}

/// What one curator attempt produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// The run ended with `report_result`; this is its `data`.
    Data(Value),
    /// The run ended without usable data (model error, no report_result…): why.
    Failed(String),
}

/// The memory list as read, with the fingerprint of the bytes it came from.
pub struct Loaded {
    pub file: Resolved,
    pub items: Vec<Value>,
    pub fingerprint: String,
}

/// Read and check `<subject>/memory.jsonl` (missing = empty list).
pub fn load(ws: &Workspace, subject: &Subject) -> Result<Loaded, SubjectError> {
    let file = subject.source_file(ws, Source::Memory, Access::Write)?;
    let text = read_source(&file.abs, &file.display)?;
    let items = match &text {
        Some(t) => memory::parse(t, &file.display)?,
        None => Vec::new(),
    };
    Ok(Loaded {
        fingerprint: content_fingerprint(text.as_deref()),
        file,
        items,
    })
}

/// The curator's initial object (checked against the memory.curator initial schema).
pub fn initial(subject: &Subject, facts: &[String], items: &[Value]) -> Value {
    json!({"subjectPath": subject.display(), "facts": facts, "currentMemories": items})
}

pub fn first_message(initial: &Value) -> String {
    format!(
        "Merge the new facts into this subject's memory list. Input:\n```json\n{}\n```\nFinish with report_result: `data` is {{\"patch\": [...]}}, an RFC 6902 JSON Patch against `currentMemories` (an empty patch if nothing needs to change).",
        serde_json::to_string_pretty(initial).unwrap_or_default()
    )
}

pub fn retry_message(error: &str) -> String {
    format!(
        "Your patch could not be applied, so nothing was changed:\n\n> {}\n\n`currentMemories` is still exactly as in the first message. Send a corrected patch with report_result; do not send the same patch again.",
        error.replace('\n', "\n> ")
    )
}

/// Result of the round trip.
#[derive(Clone, Debug, PartialEq)]
pub struct Curated {
    pub outcome: Outcome,
    pub attempts: usize,
    /// The error of each failed attempt, in order.
    pub errors: Vec<String>,
    /// The patch that applied (when one did).
    pub patch: Option<Value>,
    /// The new list (equal to the old one unless `Updated`).
    pub items: Vec<Value>,
}

/// Ask the curator (first message, then a retry quoting the error) until a patch applies.
/// `ask` returns `Err` only for failures that must stop the tool (e.g. the host refused
/// the invocation); a bad reply is `Ok(Reply::Failed)` or a patch that does not apply.
pub fn curate<E>(
    items: &[Value],
    first: &str,
    mut ask: impl FnMut(&str) -> Result<Reply, E>,
) -> Result<Curated, E> {
    let mut errors = Vec::new();
    let mut message = first.to_string();
    for attempt in 1..=MAX_ATTEMPTS {
        let result = match ask(&message)? {
            Reply::Failed(why) => Err(why),
            Reply::Data(data) => match data.get("patch") {
                None => Err(format!(
                    "report_result.data has no `patch` (got {}); send {{\"patch\": [...]}}",
                    serde_json::to_string(&data).unwrap_or_default()
                )),
                Some(p) => patch::apply(items, p).map(|new| (p.clone(), new)),
            },
        };
        match result {
            Ok((p, new)) => {
                let outcome = if new.as_slice() == items {
                    Outcome::Unchanged
                } else {
                    Outcome::Updated
                };
                return Ok(Curated {
                    outcome,
                    attempts: attempt,
                    errors,
                    patch: Some(p),
                    items: new,
                });
            }
            Err(e) => {
                message = retry_message(&e);
                errors.push(e);
            }
        }
    }
    Ok(Curated {
        outcome: Outcome::NeedsReview,
        attempts: MAX_ATTEMPTS,
        errors,
        patch: None,
        items: items.to_vec(),
    })
}

/// Write `items` to the memory file if it still has the fingerprint it was read with, and
/// mark the `memory` source dirty. Holds [`io_lock`] across the check and the write.
pub fn commit(subject: &Subject, loaded: &Loaded, items: &[Value]) -> Result<(), SubjectError> {
    let _guard = io_lock();
    let now = read_source(&loaded.file.abs, &loaded.file.display)?;
    if content_fingerprint(now.as_deref()) != loaded.fingerprint {
        return Err(SubjectError::Changed {
            display: loaded.file.display.clone(),
        });
    }
    atomic_write(&loaded.file.abs, memory::serialize(items).as_bytes()).map_err(|source| {
        SubjectError::Write {
            display: loaded.file.display.clone(),
            source,
        }
    })?;
    dirty::mark(&subject.dirty_path(), subject.key(), Source::Memory)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a test's curator stand-in answers.
    type Asked = Result<Reply, &'static str>;

    fn items() -> Vec<Value> {
        vec![json!({"topic": "lamp", "view": "Lit at dusk."})]
    }

    #[test]
    fn retry_quotes_the_error_then_succeeds() {
        let mut seen = Vec::new();
        let r = curate(&items(), "first", |m| -> Asked {
            seen.push(m.to_string());
            Ok(if seen.len() == 1 {
                Reply::Data(json!({"patch": [{"op": "remove", "path": "/5"}]}))
            } else {
                Reply::Data(json!({"patch": [{"op": "replace", "path": "/0/view", "value": "Lit at dusk, always."}]}))
            })
        })
        .unwrap();
        assert_eq!(r.outcome, Outcome::Updated);
        assert_eq!(r.attempts, 2);
        assert!(seen[1].contains("/5"), "{}", seen[1]);
        assert_eq!(r.items[0]["view"], "Lit at dusk, always.");
    }

    #[test]
    fn two_failures_need_review_and_keep_the_list() {
        let r = curate(&items(), "first", |_| -> Asked {
            Ok(Reply::Failed("model error".into()))
        })
        .unwrap();
        assert_eq!(r.outcome, Outcome::NeedsReview);
        assert_eq!(r.errors.len(), 2);
        assert_eq!(r.items, items());
        let r = curate(&items(), "f", |_| -> Asked {
            Ok(Reply::Data(json!({"patch": []})))
        })
        .unwrap();
        assert_eq!(r.outcome, Outcome::Unchanged);
        let r = curate(&items(), "f", |_| -> Asked {
            Ok(Reply::Data(json!({"nope": 1})))
        })
        .unwrap();
        assert!(r.errors[0].contains("no `patch`"));
        assert!(curate(&items(), "f", |_| -> Asked { Err("no host") }).is_err());
    }
}
