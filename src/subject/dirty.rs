//! Dirty marks in `.nbook/subject-rag-dirty.json`: which subject sources changed since the
//! index last embedded them. Writers mark, `subject_rag_search` rebuilds and clears.
//!
//! The file is `{"version": 1, "subjects": {"<subject key>": {"events": "<markedAt>",
//! "memory": "<markedAt>"}}}`, rewritten atomically. A missing file means nothing is marked;
//! an unreadable one is treated as "everything dirty" by the index (it also compares content
//! fingerprints, so a lost mark can never serve a stale answer).

use std::path::Path;

use serde_json::{json, Map, Value};

use super::{Source, SubjectError};
use crate::protocol::now_rfc3339;
use crate::workspace::atomic_write;

/// The marks as stored: `None` when the file exists but cannot be parsed.
pub fn read(path: &Path) -> Option<Map<String, Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("subjects").and_then(Value::as_object).cloned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(Map::new()),
        Err(_) => None,
    }
}

/// When `source` of `subject` was marked, if it is marked. An unreadable file marks
/// everything.
pub fn marked(path: &Path, subject: &str, source: Source) -> Option<String> {
    match read(path) {
        None => Some("unreadable".into()),
        Some(map) => map
            .get(subject)
            .and_then(|s| s.get(source.as_str()))
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

fn write(path: &Path, subjects: Map<String, Value>) -> Result<(), SubjectError> {
    let body = json!({"version": 1, "subjects": subjects});
    let text = serde_json::to_string_pretty(&body).unwrap_or_default() + "\n";
    atomic_write(path, text.as_bytes()).map_err(|source| SubjectError::Marks {
        file: path.display().to_string(),
        source,
    })
}

/// Mark `source` of `subject` dirty. Call under [`super::io_lock`].
pub fn mark(path: &Path, subject: &str, source: Source) -> Result<(), SubjectError> {
    let mut map = read(path).unwrap_or_default();
    let entry = map
        .entry(subject.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    if let Some(o) = entry.as_object_mut() {
        o.insert(source.as_str().into(), Value::String(now_rfc3339()));
    }
    write(path, map)
}

/// Clear the mark of `source` of `subject` if it is still the one seen as `seen` (a newer
/// mark made during a rebuild stays). Call under [`super::io_lock`].
pub fn clear(path: &Path, subject: &str, source: Source, seen: &str) -> Result<(), SubjectError> {
    let Some(mut map) = read(path) else {
        // Unreadable: replace it with an empty, valid file.
        return write(path, Map::new());
    };
    let Some(entry) = map.get_mut(subject).and_then(Value::as_object_mut) else {
        return Ok(());
    };
    if entry.get(source.as_str()).and_then(Value::as_str) != Some(seen) {
        return Ok(());
    }
    entry.remove(source.as_str());
    if entry.is_empty() {
        map.remove(subject);
    }
    write(path, map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mark_and_clear_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.json");
        assert_eq!(marked(&p, "s/a", Source::Events), None);
        mark(&p, "s/a", Source::Events).unwrap();
        mark(&p, "s/a", Source::Memory).unwrap();
        let seen = marked(&p, "s/a", Source::Events).unwrap();
        clear(&p, "s/a", Source::Events, "older").unwrap();
        assert!(
            marked(&p, "s/a", Source::Events).is_some(),
            "a newer mark stays"
        );
        clear(&p, "s/a", Source::Events, &seen).unwrap();
        assert_eq!(marked(&p, "s/a", Source::Events), None);
        assert!(marked(&p, "s/a", Source::Memory).is_some());
        std::fs::write(&p, "{torn").unwrap();
        assert!(marked(&p, "s/b", Source::Events).is_some());
    }
}
