//! Subject memory: NeuroBook's legacy per-subject folders (`simulation/subjects/<name>/`) with
//! an append-only `events.jsonl` and a curated `memory.jsonl`, plus the retrieval index over
//! both (notes §9).
//!
//! This module owns what a subject folder is and how its address is authorized
//! ([`Subject::resolve`], through the workspace's path authorization), the two source files
//! ([`events`], [`memory`]), applying the memory curator's RFC 6902 patch ([`patch`]), the
//! curator round trip with its retry ([`update`]), the dirty marks in
//! `.nbook/subject-rag-dirty.json` ([`dirty`]), the project-local SQLite vector index
//! `.nbook/subject-rag.sqlite` ([`rag`]) and the embedding vectors it stores ([`vectors`]).
//! The tools in `crate::tools::subject_memory` are thin wrappers over it. Errors are plain
//! strings that say what to do next; the tools pass them to the agent unchanged.

pub mod dirty;
pub mod events;
pub mod memory;
pub mod patch;
pub mod rag;
pub mod update;
pub mod vectors;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::workspace::{Access, Resolved, Workspace};

pub const EVENTS_FILE: &str = "events.jsonl";
pub const MEMORY_FILE: &str = "memory.jsonl";
/// Files in the `.nbook/` of the project holding the subject: dirty marks and the index.
pub const DIRTY_FILE: &str = "subject-rag-dirty.json";
pub const INDEX_FILE: &str = "subject-rag.sqlite";

/// The two indexed sources of a subject.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    Events,
    Memory,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Events => "events",
            Source::Memory => "memory",
        }
    }

    pub fn parse(s: &str) -> Option<Source> {
        match s {
            "events" => Some(Source::Events),
            "memory" => Some(Source::Memory),
            _ => None,
        }
    }

    pub fn file_name(self) -> &'static str {
        match self {
            Source::Events => EVENTS_FILE,
            Source::Memory => MEMORY_FILE,
        }
    }
}

/// Why a subject operation failed. Each names the file, folder or index involved and says what
/// to do about it.
#[derive(Debug, thiserror::Error)]
pub enum SubjectError {
    #[error(transparent)]
    Path(#[from] crate::workspace::WorkspaceError),
    #[error("subject folder {display} {what}; subjectPath names a subject's folder, e.g. simulation/subjects/erina")]
    NotAFolder { display: String, what: &'static str },
    #[error("subjectPath must name a subject's folder inside the project, not the project root")]
    ProjectRoot,
    #[error("{0} is a folder; it must be a JSON Lines file")]
    SourceIsFolder(String),
    #[error("{0} is not UTF-8 text; fix or remove it")]
    NotUtf8(String),
    #[error("cannot read {display}: {source}")]
    Read {
        display: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {display}: {source}")]
    Write {
        display: String,
        #[source]
        source: std::io::Error,
    },
    /// A malformed line of memory.jsonl (the message names the file and line).
    #[error(transparent)]
    Memory(#[from] memory::MemoryError),
    /// A malformed line of events.jsonl (the message names the file and line).
    #[error(transparent)]
    Events(#[from] events::EventError),
    #[error("{display} changed while the memory curator was working, so its patch was not applied and nothing was written. Call subject_memory_update again to merge the facts into the current file")]
    Changed { display: String },
    #[error("cannot write {file} (the subject index's dirty marks): {source}")]
    Marks {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create {dir}: {source}")]
    CreateDir {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the subject index {shown} cannot be used ({source}); delete it and search again (it is rebuilt from events.jsonl and memory.jsonl)")]
    Index {
        shown: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("the subject index {shown} was written by another program or version (format {format:?}); delete it and search again (it is rebuilt from events.jsonl and memory.jsonl)")]
    IndexFormat { shown: String, format: String },
    #[error("the subject index {shown} was built with embedding {what} {stored:?}, but the configured one is {now:?}; vectors of different models cannot be compared. Delete {shown} and search again (it is rebuilt from events.jsonl and memory.jsonl)")]
    ModelMismatch {
        shown: String,
        what: String,
        stored: String,
        now: String,
    },
    #[error("the embedding service returned vectors of different lengths in one answer")]
    MixedLengths,
    #[error("the embedding service returned {got} vectors for {sent} texts")]
    VectorCount { got: usize, sent: usize },
    #[error("the embedding service returned no vector for the query")]
    NoQueryVector,
    /// The embedding service is not configured, failed, or answered wrongly (names its URL).
    #[error(transparent)]
    Service(#[from] crate::net::embed::EmbedError),
}

/// A subject folder that passed path authorization.
#[derive(Clone, Debug)]
pub struct Subject {
    /// The folder as resolved (real path).
    pub dir: Resolved,
    /// Real root of the project that holds the subject (the current project or an open
    /// sibling); its `.nbook/` holds the dirty marks and the index.
    pub project_root: PathBuf,
}

impl Subject {
    /// Authorize `subject_path` for `access` and require it to be an existing folder.
    pub fn resolve(
        ws: &Workspace,
        subject_path: &str,
        access: Access,
    ) -> Result<Subject, SubjectError> {
        let dir = ws.resolve(subject_path.trim_end_matches('/'), access)?;
        if !dir.abs.is_dir() {
            let what = if dir.abs.exists() {
                "is a file, not a folder"
            } else {
                "does not exist"
            };
            return Err(SubjectError::NotAFolder {
                display: dir.display,
                what,
            });
        }
        if dir.rel.is_empty() {
            return Err(SubjectError::ProjectRoot);
        }
        // `abs` is `<real project root>/<rel>`: drop one component per segment of `rel`.
        let mut project_root = dir.abs.clone();
        for _ in dir.rel.split('/') {
            project_root.pop();
        }
        Ok(Subject { dir, project_root })
    }

    /// Project-relative key of the subject (`simulation/subjects/erina`), used in the dirty
    /// marks and the index.
    pub fn key(&self) -> &str {
        &self.dir.rel
    }

    /// The address shown to agents (project-relative, or `workspace/<p>/…`).
    pub fn display(&self) -> &str {
        &self.dir.display
    }

    /// Resolve one of the subject's source files (again through authorization, so a symlink
    /// that leaves the project is refused).
    pub fn source_file(
        &self,
        ws: &Workspace,
        source: Source,
        access: Access,
    ) -> Result<Resolved, SubjectError> {
        let addr = format!("{}/{}", self.dir.display, source.file_name());
        let r = ws.resolve(&addr, access)?;
        if r.abs.is_dir() {
            return Err(SubjectError::SourceIsFolder(r.display));
        }
        Ok(r)
    }

    pub fn nbook_dir(&self) -> PathBuf {
        self.project_root.join(".nbook")
    }

    pub fn dirty_path(&self) -> PathBuf {
        self.nbook_dir().join(DIRTY_FILE)
    }

    pub fn index_path(&self) -> PathBuf {
        self.nbook_dir().join(INDEX_FILE)
    }

    /// The index file as named in messages: `.nbook/subject-rag.sqlite`, or
    /// `workspace/<project>/.nbook/subject-rag.sqlite` for a subject in a sibling project.
    pub fn index_display(&self) -> String {
        let prefix = if self.dir.in_current {
            String::new()
        } else {
            let rest = self
                .dir
                .display
                .strip_suffix(self.dir.rel.as_str())
                .unwrap_or_default();
            rest.to_string()
        };
        format!("{prefix}.nbook/{INDEX_FILE}")
    }
}

/// Read a source file as text: `Ok(None)` when it does not exist.
pub fn read_source(path: &Path, display: &str) -> Result<Option<String>, SubjectError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| SubjectError::NotUtf8(display.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(SubjectError::Read {
            display: display.to_string(),
            source,
        }),
    }
}

/// A fingerprint of a file's content ("absent" when missing): length and a 64-bit hash taken
/// eight bytes at a time (a 2 MB file hashes in well under a millisecond). Defined here, not
/// `DefaultHasher`, because the index stores it and it must not change between builds.
pub fn content_fingerprint(text: Option<&str>) -> String {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    match text {
        None => "absent".into(),
        Some(t) => {
            let bytes = t.as_bytes();
            let mut h: u64 = K ^ bytes.len() as u64;
            let mut words = bytes.chunks_exact(8);
            for w in &mut words {
                let mut a = [0u8; 8];
                a.copy_from_slice(w);
                h = (h ^ u64::from_le_bytes(a)).wrapping_mul(K).rotate_left(29);
            }
            let mut tail = [0u8; 8];
            tail[..words.remainder().len()].copy_from_slice(words.remainder());
            h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
            h ^= h >> 32;
            format!("{}:{h:016x}", bytes.len())
        }
    }
}

/// Serializes, within this process, every read-check-write of subject files, dirty marks and
/// the index, so two sessions updating the same subject cannot interleave.
pub fn io_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Split `text` into pieces of at most `max` characters, cutting at whitespace when possible.
pub fn split_chars(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut out = Vec::new();
    let mut rest = text.trim();
    while rest.chars().count() > max {
        // Byte offset just after `max` characters.
        let limit = rest
            .char_indices()
            .nth(max)
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        let window = &rest[..limit];
        let cut = window
            .char_indices()
            .rev()
            .find(|(i, c)| c.is_whitespace() && *i > limit / 2)
            .map(|(i, _)| i)
            .unwrap_or(limit);
        out.push(rest[..cut].trim_end().to_string());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_respects_the_limit_and_prefers_spaces() {
        let text = "alpha beta gamma delta epsilon";
        let parts = split_chars(text, 12);
        assert!(parts.iter().all(|p| p.chars().count() <= 12), "{parts:?}");
        assert_eq!(parts.join(" "), text);
        let cjk = "灯塔".repeat(700);
        let parts = split_chars(&cjk, 1200);
        assert_eq!(parts.len(), 2);
        assert!(parts.iter().all(|p| p.chars().count() <= 1200));
        assert_eq!(split_chars("short", 1200), vec!["short".to_string()]);
    }

    #[test]
    fn fingerprint_is_stable_and_content_based() {
        assert_eq!(content_fingerprint(None), "absent");
        assert_eq!(
            content_fingerprint(Some("a")),
            content_fingerprint(Some("a"))
        );
        assert_ne!(
            content_fingerprint(Some("a")),
            content_fingerprint(Some("b"))
        );
    }
}
