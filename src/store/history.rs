//! The change history: every applied change to the project (an agent's or the author's; files,
//! plot records, world slices, SQL writes), with what is needed to reverse it exactly.
//!
//! Kept in the project so it survives restarts: one row per change in nbook's own table
//! `nbook_history` of project.sqlite (created on first use; the `nbook_` prefix keeps it out of
//! every recorded changeset, so undoing a SQL write never undoes the history itself), and the
//! contents — file images before and after, SQLite changesets — as content-addressed blobs
//! under `.nbook/history/` (sha256 of the bytes, written atomically, shared between entries).
//!
//! Reversal data: a file entry lists each path with the hash of its bytes before and after
//! (`None`: the file did not exist), so a revert writes the old bytes back, re-creates a deleted
//! file or removes a created one — moves are two paths. A database entry keeps the changesets
//! the call committed; their inverse, applied with the changeset's own conflict check, restores
//! every row it touched. A change nbook cannot reverse exactly (a shell command) is listed with
//! the reason instead.
//!
//! Which later changes stand in the way of reverting an entry is answered here too
//! ([`History::blocking`]): a later live change that touched one of its targets (a path, or a
//! table row), not counting a later change and its own revert, which cancel out.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::protocol::Preview;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("the change history in {path} cannot be read or written: {source}")]
    Db {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("the change history cannot open the project database: {0}")]
    Open(#[from] super::StoreError),
    #[error("history blob {path}: {source} (check free disk space and the permissions of .nbook/history)")]
    Blob {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("history blob {hash} is damaged (its content no longer matches its hash); this change cannot be reverted exactly")]
    Damaged { hash: String },
    #[error("no change #{0} in the history; the History view (H in Approvals) lists them")]
    Unknown(i64),
}

/// One path a change touched: the hash of its bytes before and after (`None`: absent).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileImage {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// A change as the engine records it once it was applied.
#[derive(Clone, Debug, PartialEq)]
pub struct NewEntry {
    pub session_id: String,
    /// `author` or `agent`.
    pub actor: String,
    pub profile: String,
    pub call_id: String,
    pub tool: String,
    pub summary: String,
    /// What was decided: `approve`, `approve_for_session`, `edit`, or `run` (no one was asked).
    pub decision: String,
    /// Which rule decided: `author` (the author's own change or answer), `session grant`,
    /// `preset neurobook`, `[approval.tools] bash = "allow"`, …
    pub rule: String,
    pub targets: Vec<String>,
    /// The preview of what was applied (rendered again by the History view).
    pub preview: Option<Preview>,
    pub files: Vec<FileImage>,
    /// Hashes of the committed changesets' blobs, in commit order.
    pub changesets: Vec<String>,
    /// Why this change cannot be reverted, when it cannot.
    pub not_revertible: Option<String>,
    /// The entry this change reverted, for a revert.
    pub reverts: Option<i64>,
}

/// A recorded change.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub id: i64,
    /// RFC 3339, UTC.
    pub at: String,
    pub new: NewEntry,
    /// The entry that reverted this one, if any.
    pub reverted_by: Option<i64>,
}

impl Entry {
    /// Reverted, and that revert was not itself reverted.
    fn reverted_in(&self, all: &[Entry]) -> bool {
        let mut by = self.reverted_by;
        let mut undone = false;
        // A chain revert → revert of the revert → …: each step flips the state.
        let mut guard = 0;
        while let Some(r) = by {
            undone = !undone;
            by = all.iter().find(|e| e.id == r).and_then(|e| e.reverted_by);
            guard += 1;
            if guard > all.len() {
                break;
            }
        }
        undone
    }
}

/// The history of one project.
#[derive(Clone, Debug)]
pub struct History {
    db: PathBuf,
    blobs: PathBuf,
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS nbook_history (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    session_id TEXT NOT NULL,
    actor TEXT NOT NULL,
    profile TEXT NOT NULL,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    summary TEXT NOT NULL,
    decision TEXT NOT NULL,
    rule TEXT NOT NULL,
    targets TEXT NOT NULL,
    preview TEXT,
    files TEXT NOT NULL,
    changesets TEXT NOT NULL,
    not_revertible TEXT,
    reverts INTEGER,
    reverted_by INTEGER
)";

const COLUMNS: &str = "id, at, session_id, actor, profile, call_id, tool, summary, decision, rule, targets, preview, files, changesets, not_revertible, reverts, reverted_by";

/// sha256 of `bytes`, lower-case hex.
pub fn hash(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn entry_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Entry> {
    let json_col = |i: usize| -> rusqlite::Result<String> { r.get(i) };
    let targets: Vec<String> = serde_json::from_str(&json_col(10)?).unwrap_or_default();
    let preview: Option<Preview> = r
        .get::<_, Option<String>>(11)?
        .and_then(|p| serde_json::from_str(&p).ok());
    let files: Vec<FileImage> = serde_json::from_str(&json_col(12)?).unwrap_or_default();
    let changesets: Vec<String> = serde_json::from_str(&json_col(13)?).unwrap_or_default();
    Ok(Entry {
        id: r.get(0)?,
        at: r.get(1)?,
        new: NewEntry {
            session_id: r.get(2)?,
            actor: r.get(3)?,
            profile: r.get(4)?,
            call_id: r.get(5)?,
            tool: r.get(6)?,
            summary: r.get(7)?,
            decision: r.get(8)?,
            rule: r.get(9)?,
            targets,
            preview,
            files,
            changesets,
            not_revertible: r.get(14)?,
            reverts: r.get(15)?,
        },
        reverted_by: r.get(16)?,
    })
}

impl History {
    /// The history of the project whose database is `db` (blobs beside it, in `history/`).
    pub fn for_database(db: &Path) -> History {
        let dir = db.parent().unwrap_or(Path::new("."));
        History {
            db: db.to_path_buf(),
            blobs: dir.join("history"),
        }
    }

    fn conn(&self) -> Result<Connection, HistoryError> {
        let conn = super::open_writable(&self.db)?;
        conn.execute_batch(SCHEMA).map_err(|e| self.db_err(e))?;
        Ok(conn)
    }

    fn db_err(&self, source: rusqlite::Error) -> HistoryError {
        HistoryError::Db {
            path: self.db.display().to_string(),
            source,
        }
    }

    fn blob_path(&self, hash: &str) -> PathBuf {
        let (head, _) = hash.split_at(hash.len().min(2));
        self.blobs.join(head).join(hash)
    }

    /// Store `bytes` (once per distinct content) and return their hash.
    pub fn put_blob(&self, bytes: &[u8]) -> Result<String, HistoryError> {
        let h = hash(bytes);
        let path = self.blob_path(&h);
        if path.exists() {
            return Ok(h);
        }
        crate::workspace::atomic::atomic_write(&path, bytes).map_err(|source| {
            HistoryError::Blob {
                path: path.display().to_string(),
                source,
            }
        })?;
        Ok(h)
    }

    /// The bytes stored under `hash`, checked against it.
    pub fn blob(&self, hash_hex: &str) -> Result<Vec<u8>, HistoryError> {
        let path = self.blob_path(hash_hex);
        let bytes = std::fs::read(&path).map_err(|source| HistoryError::Blob {
            path: path.display().to_string(),
            source,
        })?;
        if hash(&bytes) != hash_hex {
            return Err(HistoryError::Damaged {
                hash: hash_hex.to_string(),
            });
        }
        Ok(bytes)
    }

    /// Record a change; a revert also marks the entry it reverted. Returns the new id.
    pub fn append(&self, e: &NewEntry) -> Result<i64, HistoryError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction().map_err(|e| self.db_err(e))?;
        tx.execute(
            "INSERT INTO nbook_history (at, session_id, actor, profile, call_id, tool, summary, decision, rule, targets, preview, files, changesets, not_revertible, reverts)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                now(),
                e.session_id,
                e.actor,
                e.profile,
                e.call_id,
                e.tool,
                e.summary,
                e.decision,
                e.rule,
                json(&e.targets),
                e.preview.as_ref().map(json),
                json(&e.files),
                json(&e.changesets),
                e.not_revertible,
                e.reverts,
            ],
        )
        .map_err(|err| self.db_err(err))?;
        let id = tx.last_insert_rowid();
        if let Some(r) = e.reverts {
            tx.execute(
                "UPDATE nbook_history SET reverted_by = ?1 WHERE id = ?2",
                params![id, r],
            )
            .map_err(|err| self.db_err(err))?;
        }
        tx.commit().map_err(|err| self.db_err(err))?;
        Ok(id)
    }

    /// The newest `limit` entries, newest first.
    pub fn list(&self, limit: usize) -> Result<Vec<Entry>, HistoryError> {
        let conn = self.conn()?;
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM nbook_history ORDER BY id DESC LIMIT ?1"
            ))
            .map_err(|e| self.db_err(e))?;
        let rows = stmt
            .query_map([limit as i64], entry_of)
            .map_err(|e| self.db_err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.db_err(e))?;
        Ok(rows)
    }

    pub fn get(&self, id: i64) -> Result<Entry, HistoryError> {
        let conn = self.conn()?;
        conn.query_row(
            &format!("SELECT {COLUMNS} FROM nbook_history WHERE id = ?1"),
            [id],
            entry_of,
        )
        .optional()
        .map_err(|e| self.db_err(e))?
        .ok_or(HistoryError::Unknown(id))
    }

    /// `id` and every entry after it, oldest first.
    fn from(&self, id: i64) -> Result<Vec<Entry>, HistoryError> {
        let conn = self.conn()?;
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM nbook_history WHERE id >= ?1 ORDER BY id"
            ))
            .map_err(|e| self.db_err(e))?;
        let rows = stmt
            .query_map([id], entry_of)
            .map_err(|e| self.db_err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.db_err(e))?;
        Ok(rows)
    }

    /// Whether the entry is reverted now (its revert was not itself reverted).
    pub fn is_reverted(&self, id: i64) -> Result<bool, HistoryError> {
        let all = self.from(id)?;
        Ok(all
            .iter()
            .find(|e| e.id == id)
            .ok_or(HistoryError::Unknown(id))?
            .reverted_in(&all))
    }

    /// The later live changes that touched one of entry `id`'s targets, newest first.
    pub fn blocking(&self, id: i64) -> Result<Vec<Entry>, HistoryError> {
        let all = self.from(id)?;
        let me = all
            .iter()
            .find(|e| e.id == id)
            .ok_or(HistoryError::Unknown(id))?;
        let mine: BTreeSet<&str> = me.new.targets.iter().map(String::as_str).collect();
        let mut out: Vec<Entry> = all
            .iter()
            .filter(|l| l.id > id)
            .filter(|l| l.new.targets.iter().any(|t| mine.contains(t.as_str())))
            .filter(|l| !l.reverted_in(&all))
            // A later change and its own revert cancel out.
            .filter(|l| {
                !l.new.reverts.is_some_and(|x| {
                    x > id && all.iter().any(|e| e.id == x && e.reverted_by == Some(l.id))
                })
            })
            .cloned()
            .collect();
        out.reverse();
        Ok(out)
    }

    /// The entries to revert, newest first, so that entry `id` can be reverted last: every
    /// later change in its way, and the changes in their way, transitively.
    pub fn revert_plan(&self, id: i64) -> Result<Vec<i64>, HistoryError> {
        let mut todo = vec![id];
        let mut plan: BTreeSet<i64> = BTreeSet::new();
        while let Some(x) = todo.pop() {
            if !plan.insert(x) {
                continue;
            }
            todo.extend(self.blocking(x)?.iter().map(|e| e.id));
        }
        Ok(plan.into_iter().rev().collect())
    }
}

/// JSON text of a stored column (these types always serialize).
fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(targets: &[&str], reverts: Option<i64>) -> NewEntry {
        NewEntry {
            session_id: "s1".into(),
            actor: "agent".into(),
            profile: "writer".into(),
            call_id: "c".into(),
            tool: "write".into(),
            summary: "w".into(),
            decision: "approve".into(),
            rule: "author".into(),
            targets: targets.iter().map(|t| t.to_string()).collect(),
            preview: None,
            files: Vec::new(),
            changesets: Vec::new(),
            not_revertible: None,
            reverts,
        }
    }

    #[test]
    fn later_changes_block_until_they_are_reverted_and_a_revert_pair_cancels_out() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::for_database(&dir.path().join("project.sqlite"));
        let a = h.append(&entry(&["a.md"], None)).unwrap();
        let b = h.append(&entry(&["b.md"], None)).unwrap();
        let a2 = h.append(&entry(&["a.md", "c.md"], None)).unwrap();
        assert_eq!(
            h.blocking(a)
                .unwrap()
                .iter()
                .map(|e| e.id)
                .collect::<Vec<_>>(),
            vec![a2]
        );
        assert!(h.blocking(b).unwrap().is_empty());
        assert_eq!(h.revert_plan(a).unwrap(), vec![a2, a]);
        // Reverting a2 clears the way for a.
        let r = h.append(&entry(&["a.md", "c.md"], Some(a2))).unwrap();
        assert!(h.is_reverted(a2).unwrap());
        assert!(h.blocking(a).unwrap().is_empty());
        // Reverting the revert brings a2 back, and with it the block.
        let rr = h.append(&entry(&["a.md", "c.md"], Some(r))).unwrap();
        assert!(!h.is_reverted(a2).unwrap());
        assert!(h.is_reverted(r).unwrap());
        // (rr and r cancel out: a2 itself is what stands in the way again.)
        let ids: Vec<i64> = h.blocking(a).unwrap().iter().map(|e| e.id).collect();
        assert_eq!(ids, vec![a2]);
        assert_eq!(h.list(10).unwrap()[0].id, rr);
        assert!(matches!(h.get(999), Err(HistoryError::Unknown(999))));
    }

    #[test]
    fn blobs_are_content_addressed_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::for_database(&dir.path().join("project.sqlite"));
        let k = h.put_blob(b"hello").unwrap();
        assert_eq!(h.put_blob(b"hello").unwrap(), k);
        assert_eq!(h.blob(&k).unwrap(), b"hello");
        std::fs::write(h.blob_path(&k), b"tampered").unwrap();
        assert!(matches!(h.blob(&k), Err(HistoryError::Damaged { .. })));
    }
}
