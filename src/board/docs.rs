//! Task documents: named, versioned text per task (`key` 1–64 of `[A-Za-z0-9_-]`). Every write
//! bumps the revision and keeps the replaced revision in `nbook_board_document_revision`.
//!
//! Compare-and-swap, as Fusion's `task-document-concurrency.ts`: `expected_revision: 0` means
//! the document must not exist; a positive revision and/or `expected_content_hash`
//! (`sha256:<64 lowercase hex>` of the UTF-8 bytes) must match the current state — both given,
//! both must. The check runs inside the writing transaction (IMMEDIATE, see `Board::commit`),
//! so of two racing writers exactly one wins; the loser gets
//! `TASK_DOCUMENT_PRECONDITION_FAILED` with the current revision and hash, never the content.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::json;

use super::error::{BoardError, BoardResult, PreconditionFailed};
use super::model::{Document, DocumentInfo, ARCHIVED};
use super::{now, tasks, Outcome, Touched};

/// Largest document content we store inline (1 MiB).
pub const MAX_CONTENT: usize = 1 << 20;

/// `sha256:<64 lowercase hex>` of `content`'s UTF-8 bytes.
pub fn content_hash(content: &str) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, content.as_bytes());
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    for b in d.as_ref() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

pub fn check_key(key: &str) -> BoardResult<()> {
    let ok = (1..=64).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(BoardError::DocumentKey {
            key: key.to_string(),
        })
    }
}

pub fn check_hash(hash: &str) -> BoardResult<()> {
    let ok = hash.strip_prefix("sha256:").is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    if ok {
        Ok(())
    } else {
        Err(BoardError::DocumentHash {
            hash: hash.to_string(),
        })
    }
}

pub fn load(c: &Connection, task: &str, key: &str) -> BoardResult<Option<Document>> {
    Ok(c.query_row(
        "SELECT task_id, key, content, revision, content_hash, author, created_at, updated_at
           FROM nbook_board_document WHERE task_id = ?1 AND key = ?2",
        params![task, key],
        |r| {
            Ok(Document {
                task_id: r.get(0)?,
                key: r.get(1)?,
                content: r.get(2)?,
                revision: r.get::<_, i64>(3)?.max(0) as u64,
                content_hash: r.get(4)?,
                author: r.get(5)?,
                created_at: r.get(6)?,
                updated_at: r.get(7)?,
            })
        },
    )
    .optional()?)
}

/// A write, as `fn_task_document_write` gives it.
#[derive(Clone, Debug)]
pub struct Write {
    pub key: String,
    pub content: String,
    pub author: String,
    pub expected_revision: Option<u64>,
    pub expected_content_hash: Option<String>,
}

/// Check the write's preconditions against the current state (no change).
fn check_cas(project: &str, task: &str, w: &Write, cur: Option<&Document>) -> BoardResult<()> {
    let (rev, hash) = match cur {
        Some(d) => (d.revision, Some(d.content_hash.as_str())),
        None => (0, None),
    };
    let rev_ok = w.expected_revision.is_none_or(|e| e == rev);
    let hash_ok = w
        .expected_content_hash
        .as_deref()
        .is_none_or(|e| Some(e) == hash);
    if rev_ok && hash_ok {
        return Ok(());
    }
    Err(BoardError::Precondition(Box::new(PreconditionFailed {
        project_id: project.to_string(),
        task_id: task.to_string(),
        key: w.key.clone(),
        expected_revision: w.expected_revision,
        expected_content_hash: w.expected_content_hash.clone(),
        current_revision: rev,
        current_content_hash: hash.map(str::to_string),
    })))
}

/// Write a document revision. `project` names the project in a CAS failure.
pub fn write(c: &Connection, project: &str, task: &str, w: &Write) -> BoardResult<Outcome> {
    check_key(&w.key)?;
    if let Some(h) = &w.expected_content_hash {
        check_hash(h)?;
    }
    if w.content.len() > MAX_CONTENT {
        return Err(BoardError::DocumentTooLarge {
            size: w.content.len(),
            limit: MAX_CONTENT,
        });
    }
    let t = tasks::require(c, task)?;
    if t.column == ARCHIVED || super::workflow::lanes_for_task(c, &t).archived == t.column {
        return Err(BoardError::Archived { id: t.id });
    }
    let cur = load(c, task, &w.key)?;
    check_cas(project, task, w, cur.as_ref())?;
    let hash = content_hash(&w.content);
    let at = now();
    let revision = match &cur {
        Some(d) => {
            c.execute(
                "INSERT INTO nbook_board_document_revision (task_id, key, revision, content, content_hash, author, written_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![task, w.key, d.revision as i64, d.content, d.content_hash, d.author, d.updated_at],
            )?;
            let next = d.revision + 1;
            c.execute(
                "UPDATE nbook_board_document SET content = ?3, revision = ?4, content_hash = ?5, author = ?6, updated_at = ?7
                 WHERE task_id = ?1 AND key = ?2",
                params![task, w.key, w.content, next as i64, hash, w.author, at],
            )?;
            next
        }
        None => {
            c.execute(
                "INSERT INTO nbook_board_document (task_id, key, content, revision, content_hash, author, created_at, updated_at)
                 VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?6)",
                params![task, w.key, w.content, hash, w.author, at],
            )?;
            1
        }
    };
    Ok(Outcome {
        text: format!("Saved {task}/{} revision {revision} ({hash}).", w.key),
        value: json!({"key": w.key, "revision": revision, "contentHash": hash}),
        touched: vec![Touched::Document(task.to_string(), w.key.clone())],
        ..Outcome::default()
    })
}

/// The task's documents, by key.
pub fn list(c: &Connection, task: &str) -> BoardResult<Vec<DocumentInfo>> {
    let mut st = c.prepare_cached(
        "SELECT key, revision, content_hash, author, length(CAST(content AS BLOB)), updated_at
           FROM nbook_board_document WHERE task_id = ?1 ORDER BY key",
    )?;
    let rows = st.query_map([task], |r| {
        Ok(DocumentInfo {
            key: r.get(0)?,
            revision: r.get::<_, i64>(1)?.max(0) as u64,
            content_hash: r.get(2)?,
            author: r.get(3)?,
            size: r.get::<_, i64>(4)?.max(0) as usize,
            updated_at: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Revision numbers kept for a document (older ones), oldest first.
pub fn revisions(c: &Connection, task: &str, key: &str) -> BoardResult<Vec<u64>> {
    let mut st = c.prepare_cached(
        "SELECT revision FROM nbook_board_document_revision WHERE task_id = ?1 AND key = ?2 ORDER BY revision",
    )?;
    let rows = st.query_map(params![task, key], |r| r.get::<_, i64>(0))?;
    Ok(rows
        .map(|r| r.map(|v| v.max(0) as u64))
        .collect::<Result<_, _>>()?)
}

/// The content of an older revision.
pub fn revision_content(
    c: &Connection,
    task: &str,
    key: &str,
    revision: u64,
) -> BoardResult<Option<String>> {
    Ok(c.query_row(
        "SELECT content FROM nbook_board_document_revision WHERE task_id = ?1 AND key = ?2 AND revision = ?3",
        params![task, key, revision as i64],
        |r| r.get(0),
    )
    .optional()?)
}
