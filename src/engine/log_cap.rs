//! Keeping session logs small: a tool result whose content, or whose details JSON, exceeds
//! [`MAX_LOGGED_BYTES`] is logged cut — content over the cap keeps its first [`KEPT_CHARS`]
//! characters and a marker, details over the cap become a pointer — while the full value is
//! written beside the log as `.nbook/agent/sessions/<session>.blobs/<call>.json`
//! (`{content, details}`). The caller still gets the whole result; only what is logged (and so
//! what a resumed session replays) is cut. Applied before the record reaches the log writer.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// Content, and details JSON, up to this many bytes each are logged whole.
pub const MAX_LOGGED_BYTES: usize = 64 * 1024;
/// Characters of content kept in the log when a result is cut.
pub const KEPT_CHARS: usize = 16 * 1024;

/// A file-name-safe form of an id (provider call ids may hold any character).
fn safe(id: &str) -> String {
    let s: String = id
        .chars()
        .take(120)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "call".into()
    } else {
        s
    }
}

/// Where the full value of a cut result is kept.
pub fn blob_path(sessions_dir: &Path, session_id: &str, call_id: &str) -> PathBuf {
    sessions_dir
        .join(format!("{}.blobs", safe(session_id)))
        .join(format!("{}.json", safe(call_id)))
}

/// The content and details to log for a result (unchanged when small enough).
pub fn cap(
    sessions_dir: &Path,
    session_id: &str,
    call_id: &str,
    content: &str,
    details: Option<&Value>,
) -> (String, Option<Value>) {
    let details_json = details.map(|d| d.to_string());
    let details_len = details_json.as_ref().map_or(0, String::len);
    let cut_content = content.len() > MAX_LOGGED_BYTES;
    let cut_details = details_len > MAX_LOGGED_BYTES;
    if !cut_content && !cut_details {
        return (content.to_string(), details.cloned());
    }
    let total = content.len() + details_len;
    let path = blob_path(sessions_dir, session_id, call_id);
    let kept = std::fs::create_dir_all(path.parent().unwrap_or(sessions_dir)).and_then(|()| {
        let full = json!({"content": content, "details": details});
        std::fs::write(&path, full.to_string())
    });
    let rel = path
        .strip_prefix(sessions_dir)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string());
    let (where_, pointer) = match &kept {
        Ok(()) => (format!("full value in {rel}"), json!(rel)),
        Err(e) => (
            format!("the full value could not be kept: {e}"),
            Value::Null,
        ),
    };
    let logged = if cut_content {
        let head: String = content.chars().take(KEPT_CHARS).collect();
        format!("{head}\n…[result cut in the session log: {total} bytes in all; {where_}]")
    } else {
        content.to_string()
    };
    let details = if cut_details || details.is_none() {
        Some(json!({"truncatedInLog": true, "bytes": total, "blob": pointer}))
    } else {
        details.cloned()
    };
    (logged, details)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_results_pass_and_large_ones_are_cut_with_a_pointer() {
        let dir = tempfile::tempdir().unwrap();
        let (c, d) = cap(dir.path(), "s1", "c1", "short", Some(&json!({"a": 1})));
        assert_eq!((c.as_str(), d), ("short", Some(json!({"a": 1}))));
        let big = "x".repeat(200_000);
        let (c, d) = cap(dir.path(), "s1", "call/../1", &big, None);
        assert!(c.len() < KEPT_CHARS + 200, "{}", c.len());
        assert!(c.contains("s1.blobs/call____1.json"), "{c}");
        let d = d.unwrap();
        assert_eq!(d["bytes"], 200_000);
        let full: Value = serde_json::from_slice(
            &std::fs::read(dir.path().join("s1.blobs/call____1.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(full["content"].as_str().unwrap().len(), 200_000);
    }
}
