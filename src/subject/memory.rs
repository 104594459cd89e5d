//! `memory.jsonl`: the subject's curated memories, one JSON object per line:
//! `{"topic": "<unique>", "aliases"?: ["…"], "view": "<what the subject knows or believes>"}`.
//!
//! This module owns that format: reading the file (a bad line is an error naming the line),
//! the invariants every list must keep (non-empty topic, unique topics, `view` a string,
//! `aliases` strings) and writing the list back, one compact line per memory. Extra keys on a
//! memory are kept as they are.

use std::collections::HashSet;

use serde_json::Value;

/// A memory list or `memory.jsonl` line that breaks the format. List errors name the item's
/// JSON Pointer (the curator's patch addresses it so); file errors name the file and line.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("the patched document is no longer an array of memories")]
    NotAList,
    #[error("memory /{index} {why}; every memory is {{\"topic\": non-empty string, \"aliases\"?: [strings], \"view\": string}}")]
    BadItem { index: usize, why: &'static str },
    #[error("memory /{index} repeats the topic {topic:?}; topics must be unique (update the existing memory instead of adding another)")]
    RepeatedTopic { index: usize, topic: String },
    #[error("line {line} of {file} {problem}; each line must be {{\"topic\", \"aliases\"?, \"view\"}} with a unique topic. Fix or remove that line, then try again")]
    BadLine {
        file: String,
        line: usize,
        #[source]
        problem: LineProblem,
    },
}

/// What is wrong with one line of a JSON Lines file (events.jsonl, memory.jsonl).
#[derive(Debug, thiserror::Error)]
pub enum LineProblem {
    #[error("is not JSON ({0})")]
    NotJson(#[source] serde_json::Error),
    /// Valid JSON that is not the line's shape (the text says what is missing).
    #[error("{0}")]
    Shape(&'static str),
    #[error("repeats the topic {0:?}")]
    RepeatedTopic(String),
}

/// The error for one memory that breaks the invariants, or `None`.
fn item_problem(v: &Value) -> Option<&'static str> {
    let Some(o) = v.as_object() else {
        return Some("is not a JSON object");
    };
    match o.get("topic").and_then(Value::as_str) {
        None => return Some("has no string `topic`"),
        Some(t) if t.trim().is_empty() => return Some("has an empty `topic`"),
        _ => {}
    }
    if !o.get("view").is_some_and(Value::is_string) {
        return Some("has no string `view`");
    }
    match o.get("aliases") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => {}
        Some(_) => return Some("has `aliases` that is not a list of strings"),
    }
    None
}

fn topic(v: &Value) -> &str {
    v.get("topic")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
}

/// Check a whole list (e.g. after a patch). Errors name the JSON Pointer of the bad item.
pub fn validate(items: &Value) -> Result<(), MemoryError> {
    let Some(list) = items.as_array() else {
        return Err(MemoryError::NotAList);
    };
    let mut seen = HashSet::new();
    for (index, item) in list.iter().enumerate() {
        if let Some(why) = item_problem(item) {
            return Err(MemoryError::BadItem { index, why });
        }
        if !seen.insert(topic(item).to_string()) {
            return Err(MemoryError::RepeatedTopic {
                index,
                topic: topic(item).to_string(),
            });
        }
    }
    Ok(())
}

/// Parse a whole `memory.jsonl` (blank lines skipped). `display` names the file in errors.
pub fn parse(text: &str, display: &str) -> Result<Vec<Value>, MemoryError> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let bad = |problem| MemoryError::BadLine {
            file: display.to_string(),
            line,
            problem,
        };
        let v: Value = serde_json::from_str(raw).map_err(|e| bad(LineProblem::NotJson(e)))?;
        if let Some(why) = item_problem(&v) {
            return Err(bad(LineProblem::Shape(why)));
        }
        if !seen.insert(topic(&v).to_string()) {
            return Err(bad(LineProblem::RepeatedTopic(topic(&v).to_string())));
        }
        out.push(v);
    }
    Ok(out)
}

/// The file content for `items`: one compact JSON line each.
pub fn serialize(items: &[Value]) -> String {
    let mut out = String::new();
    for item in items {
        out.push_str(&serde_json::to_string(item).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// The text embedded for one memory: topic, aliases, then the view.
pub fn header(item: &Value) -> String {
    let aliases: Vec<&str> = item
        .get("aliases")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if aliases.is_empty() {
        format!("{}:", topic(item))
    } else {
        format!("{} ({}):", topic(item), aliases.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parse_names_the_bad_line() {
        let ok = "{\"topic\":\"a\",\"view\":\"x\"}\n\n{\"topic\":\"b\",\"aliases\":[\"bee\"],\"view\":\"y\"}\n";
        assert_eq!(parse(ok, "m").unwrap().len(), 2);
        let dup = "{\"topic\":\"a\",\"view\":\"x\"}\n{\"topic\":\"a\",\"view\":\"y\"}\n";
        let e = parse(dup, "s/memory.jsonl").unwrap_err().to_string();
        assert!(e.starts_with("line 2 of s/memory.jsonl repeats"), "{e}");
        let e = parse("{\"topic\":\"a\"}\n", "m").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("view"), "{e}");
        let e = parse("[1]\n", "m").unwrap_err().to_string();
        assert!(e.contains("not a JSON object"), "{e}");
        // The file and line are fields, not only text, for callers that point at them.
        let e = parse(
            "{\"topic\":\"a\",\"view\":\"x\"}\n\nnot json\n",
            "s/memory.jsonl",
        );
        assert!(
            matches!(&e, Err(MemoryError::BadLine { file, line: 3, problem: LineProblem::NotJson(_) }) if file == "s/memory.jsonl"),
            "{e:?}"
        );
    }

    #[test]
    fn validate_names_the_pointer() {
        assert!(validate(&json!([{"topic": "a", "view": ""}])).is_ok());
        let e = validate(&json!([{"topic": "a", "view": "x"}, {"topic": " ", "view": "y"}]))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("memory /1 has an empty `topic`"), "{e}");
        assert!(validate(&json!({"topic": "a"})).is_err());
        assert_eq!(
            header(&json!({"topic": "mother", "aliases": ["Elspeth"], "view": "v"})),
            "mother (Elspeth):"
        );
    }
}
