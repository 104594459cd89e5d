//! `events.jsonl`: the subject's append-only event log, one JSON object per line:
//! `{"tick"?: <int>, "time"?: "<story time>", "text": "<what happened>"}`.
//!
//! This module owns the line format: building the lines an append adds (key order tick, time,
//! text) and reading a file back for the index. Blank lines are skipped; any other line that
//! is not such an object is an error naming the line, so the author can fix it.

use serde_json::{Map, Value};

use super::memory::LineProblem;

/// An event argument or `events.jsonl` line that is not an event.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    #[error("an event needs a non-empty `text`")]
    NoText,
    #[error("cannot write the event as JSON: {0}")]
    Serialize(#[source] serde_json::Error),
    #[error("line {line} of {file} {problem}; each line must be {{\"tick\"?, \"time\"?, \"text\"}}. Fix or remove that line")]
    BadLine {
        file: String,
        line: usize,
        #[source]
        problem: LineProblem,
    },
}

/// One event as read back from the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// 1-based line number in the file.
    pub line: usize,
    /// The tick as written (a number, or a string in hand-made files), rendered as text.
    pub tick: Option<String>,
    pub time: Option<String>,
    pub text: String,
}

/// The JSON line for one validated event argument (`{tick?, time?, text}`).
pub fn line_for(event: &Value) -> Result<String, EventError> {
    let text = event
        .get("text")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or(EventError::NoText)?;
    let mut o = Map::new();
    if let Some(t) = event.get("tick").filter(|t| !t.is_null()) {
        o.insert("tick".into(), t.clone());
    }
    if let Some(t) = event.get("time").and_then(Value::as_str) {
        o.insert("time".into(), Value::String(t.to_string()));
    }
    o.insert("text".into(), Value::String(text.to_string()));
    serde_json::to_string(&Value::Object(o)).map_err(EventError::Serialize)
}

/// The file's new content after appending `lines` (a missing final newline is added first).
pub fn appended(old: Option<&str>, lines: &[String]) -> String {
    let mut out = old.unwrap_or_default().to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Parse a whole `events.jsonl`. `display` names the file in errors.
pub fn parse(text: &str, display: &str) -> Result<Vec<Event>, EventError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let bad = |problem| EventError::BadLine {
            file: display.to_string(),
            line,
            problem,
        };
        let shape = |why| bad(LineProblem::Shape(why));
        let v: Value = serde_json::from_str(raw).map_err(|e| bad(LineProblem::NotJson(e)))?;
        let Some(o) = v.as_object() else {
            return Err(shape("is not a JSON object"));
        };
        let text = o
            .get("text")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| shape("has no non-empty string `text`"))?;
        let time = match o.get("time") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(shape("has a `time` that is not a string")),
        };
        out.push(Event {
            line,
            tick: o.get("tick").and_then(scalar_text),
            time,
            text: text.to_string(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_keep_key_order_and_round_trip() {
        let l = line_for(&json!({"text": " Ada lit the lamp. ", "time": "1911-03-02", "tick": 3}))
            .unwrap();
        assert_eq!(
            l,
            r#"{"tick":3,"time":"1911-03-02","text":"Ada lit the lamp."}"#
        );
        let file = appended(Some("{\"text\":\"first\"}"), &[l]);
        let ev = parse(&file, "e").unwrap();
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[1].tick.as_deref(), Some("3"));
        assert_eq!(ev[1].line, 2);
    }

    #[test]
    fn bad_lines_are_named() {
        let e = parse("{\"text\":\"ok\"}\n\nnot json\n", "s/events.jsonl")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 3 of s/events.jsonl"), "{e}");
        assert!(matches!(
            parse("{\"text\":\"a\"}\n{\"text\":\"b\",\"time\":3}\n", "f"),
            Err(EventError::BadLine { line: 2, .. })
        ));
        let e = parse("{\"text\":\"\"}\n", "f").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("text"), "{e}");
    }
}
