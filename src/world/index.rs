//! Per-subject checkpoints (`nbook_world_checkpoint`), so a state query at T costs one index
//! seek for the nearest checkpoint ≤ T, its validation, and the patches since it — never a
//! replay of the whole history.
//!
//! **Validation.** NeuroBook may write the same database, and knows nothing of this table.
//! A checkpoint stores the count of the subject's patches with instant ≤ its instant, the
//! highest rowid among them and that patch's id. Any insert of such a patch raises the highest
//! rowid (SQLite gives a new row max(rowid)+1, so a reused rowid can only follow the deletion
//! of the highest row, whose successor then carries a new id), and any delete lowers the count;
//! either makes the checkpoint invalid, and it is deleted and an earlier one tried. Validation
//! reads only the (subjectId, instant) index. Not detected: an in-place UPDATE of a patch's
//! op/path/value, which neither program does (NeuroBook edits by delete + insert);
//! [`clear`] drops everything if a tool ever must.
//!
//! **When checkpoints are made.** A query that replays at least [`EVERY`] patches (and at
//! least as many bytes of patches as half the state it produces, so big states are not copied
//! too often) queues one at each such instant; writes delete the checkpoints at or after the
//! instant they change. Queued work is flushed best-effort ([`Pending::flush`]): it never waits
//! for a lock, so a read never blocks on (or blocks) a write that is held for approval.

use std::cell::RefCell;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{Map, Value};

use super::issues::Issue;
use super::reducer::{PatchRow, Reduced, Writer};
use super::WorldError;

/// Minimum patches replayed between two checkpoints of a subject.
pub const EVERY: usize = 16;

#[derive(Clone, Debug)]
pub struct Checkpoint {
    pub subject_id: String,
    pub instant: i64,
    pub subject_type: String,
    pub patch_count: i64,
    pub max_rowid: i64,
    pub max_patch_id: String,
    pub reduced: Reduced,
}

/// The counters a checkpoint is validated with, tracked while replaying.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub count: i64,
    pub max_rowid: i64,
    pub max_id: String,
    pub since_count: usize,
    pub since_bytes: usize,
    /// Size of the state when first measured since the last checkpoint (measured once).
    size_hint: Option<usize>,
}

impl Tally {
    pub fn from_checkpoint(cp: &Checkpoint) -> Tally {
        Tally {
            count: cp.patch_count,
            max_rowid: cp.max_rowid,
            max_id: cp.max_patch_id.clone(),
            since_count: 0,
            since_bytes: 0,
            size_hint: None,
        }
    }

    pub fn add(&mut self, p: &PatchRow) {
        self.count += 1;
        if p.rowid > self.max_rowid || self.max_id.is_empty() {
            self.max_rowid = p.rowid;
            self.max_id = p.id.clone();
        }
        self.since_count += 1;
        self.since_bytes += 48 + p.path.len() + p.value.as_ref().map_or(0, String::len);
    }

    /// Whether a checkpoint is worth storing now (see the module docs).
    pub fn due(&mut self, state: &Map<String, Value>) -> bool {
        if self.since_count < EVERY {
            return false;
        }
        let size = *self
            .size_hint
            .get_or_insert_with(|| serde_json::to_string(state).map(|s| s.len()).unwrap_or(0));
        self.since_bytes * 2 >= size
    }

    /// A checkpoint was taken: count from here.
    pub fn reset(&mut self) {
        self.since_count = 0;
        self.since_bytes = 0;
        self.size_hint = None;
    }
}

enum Op {
    Insert(Checkpoint),
    DeleteFrom { subject_id: String, instant: i64 },
}

/// Checkpoint writes waiting for a moment when they cannot block anyone.
#[derive(Default)]
pub struct Pending(RefCell<Vec<Op>>);

impl Pending {
    pub fn insert(&self, cp: Checkpoint) {
        self.0.borrow_mut().push(Op::Insert(cp));
    }

    pub fn delete_from(&self, subject_id: &str, instant: i64) {
        self.0.borrow_mut().push(Op::DeleteFrom {
            subject_id: subject_id.into(),
            instant,
        });
    }

    /// Drop queued checkpoints of `subject_id` at or after `instant` (a write changed them).
    pub fn discard_from(&self, subject_id: &str, instant: i64) {
        self.0
            .borrow_mut()
            .retain(|op| !matches!(op, Op::Insert(cp) if cp.subject_id == subject_id && cp.instant >= instant));
    }

    pub fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }

    pub fn clear(&self) {
        self.0.borrow_mut().clear();
    }

    /// Write the queued work without waiting for locks; returns how many operations were
    /// written (0 when the database is busy or read-only — the work is simply dropped, since
    /// checkpoints are only an optimisation).
    pub fn flush(&self, conn: &Connection) -> usize {
        let ops: Vec<Op> = std::mem::take(&mut *self.0.borrow_mut());
        if ops.is_empty()
            || conn
                .is_readonly(rusqlite::DatabaseName::Main)
                .unwrap_or(true)
        {
            return 0;
        }
        let _ = conn.busy_timeout(Duration::ZERO);
        let outer = conn.is_autocommit();
        let result = (|| -> rusqlite::Result<usize> {
            if outer {
                conn.execute_batch("BEGIN IMMEDIATE")?;
            } else {
                conn.execute_batch("SAVEPOINT nbook_checkpoints")?;
            }
            let mut n = 0;
            for op in &ops {
                match op {
                    Op::Insert(cp) => store(conn, cp)?,
                    Op::DeleteFrom {
                        subject_id,
                        instant,
                    } => delete_from(conn, subject_id, *instant)?,
                }
                n += 1;
            }
            Ok(n)
        })();
        let finish = match (&result, outer) {
            (Ok(_), true) => "COMMIT",
            (Ok(_), false) => "RELEASE nbook_checkpoints",
            (Err(_), true) => "ROLLBACK",
            (Err(_), false) => "ROLLBACK TO nbook_checkpoints; RELEASE nbook_checkpoints",
        };
        let closed = conn.execute_batch(finish);
        if closed.is_err() && outer && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        let _ = conn.busy_timeout(Duration::from_secs(5));
        match (result, closed) {
            (Ok(n), Ok(())) => n,
            _ => 0,
        }
    }
}

pub fn store(conn: &Connection, cp: &Checkpoint) -> rusqlite::Result<()> {
    let state = serde_json::to_string(&cp.reduced.state).unwrap_or_else(|_| "{}".into());
    let issues = serde_json::to_string(&cp.reduced.issues).unwrap_or_else(|_| "[]".into());
    let origins = serde_json::to_string(&cp.reduced.origins).unwrap_or_else(|_| "{}".into());
    conn.prepare_cached(
        r#"INSERT OR REPLACE INTO "nbook_world_checkpoint"
           ("subjectId","instant","subjectType","patchCount","maxRowid","maxPatchId","state","issues","origins")
           VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)"#,
    )?
    .execute(params![
        cp.subject_id,
        cp.instant,
        cp.subject_type,
        cp.patch_count,
        cp.max_rowid,
        cp.max_patch_id,
        state,
        issues,
        origins
    ])?;
    Ok(())
}

/// Forget a subject's checkpoints at or after `instant` (a write there changed them).
pub fn delete_from(conn: &Connection, subject_id: &str, instant: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        r#"DELETE FROM "nbook_world_checkpoint" WHERE "subjectId" = ?1 AND "instant" >= ?2"#,
    )?
    .execute(params![subject_id, instant])?;
    Ok(())
}

/// Drop every checkpoint (e.g. the schema changed).
pub fn clear(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(r#"DELETE FROM "nbook_world_checkpoint""#)
}

/// The latest checkpoint of `subject_id` at or before `at` (and strictly before `below`, if
/// given) that is still valid. Invalid ones met on the way are queued for deletion.
pub fn latest_valid(
    conn: &Connection,
    pending: &Pending,
    subject_id: &str,
    subject_type: &str,
    at: i64,
    below: Option<i64>,
) -> Result<Option<Checkpoint>, WorldError> {
    let mut upper = match below {
        Some(b) if b <= at => match b.checked_sub(1) {
            Some(x) => x,
            None => return Ok(None),
        },
        _ => at,
    };
    // A few steps back at most; past that a replay from the start is as cheap.
    for _ in 0..6 {
        let Some(cp) = read_at_or_before(conn, subject_id, upper)? else {
            return Ok(None);
        };
        if cp.subject_type == subject_type && is_valid(conn, &cp)? {
            return Ok(Some(cp));
        }
        pending.delete_from(subject_id, cp.instant);
        upper = match cp.instant.checked_sub(1) {
            Some(x) => x,
            None => return Ok(None),
        };
    }
    Ok(None)
}

fn read_at_or_before(
    conn: &Connection,
    subject_id: &str,
    at: i64,
) -> Result<Option<Checkpoint>, WorldError> {
    let row = conn
        .prepare_cached(
            r#"SELECT "instant","subjectType","patchCount","maxRowid","maxPatchId","state","issues","origins"
               FROM "nbook_world_checkpoint" WHERE "subjectId" = ?1 AND "instant" <= ?2
               ORDER BY "instant" DESC LIMIT 1"#,
        )?
        .query_row(params![subject_id, at], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
            ))
        })
        .optional()?;
    let Some((instant, subject_type, patch_count, max_rowid, max_patch_id, state, issues, origins)) =
        row
    else {
        return Ok(None);
    };
    // An unreadable checkpoint counts as invalid (count -1 never matches).
    let state: Option<Map<String, Value>> = serde_json::from_str(&state).ok();
    let issues: Option<Vec<Issue>> = serde_json::from_str(&issues).ok();
    let origins: Option<std::collections::BTreeMap<String, Writer>> =
        serde_json::from_str(&origins).ok();
    let ok = state.is_some() && issues.is_some() && origins.is_some();
    Ok(Some(Checkpoint {
        subject_id: subject_id.into(),
        instant,
        subject_type,
        patch_count: if ok { patch_count } else { -1 },
        max_rowid,
        max_patch_id,
        reduced: Reduced {
            state: state.unwrap_or_default(),
            issues: issues.unwrap_or_default(),
            origins: origins.unwrap_or_default(),
        },
    }))
}

fn is_valid(conn: &Connection, cp: &Checkpoint) -> Result<bool, WorldError> {
    let (count, max): (i64, Option<i64>) = conn
        .prepare_cached(
            r#"SELECT count(*), max(rowid) FROM "WorldPatch" WHERE "subjectId" = ?1 AND "instant" <= ?2"#,
        )?
        .query_row(params![cp.subject_id, cp.instant], |r| Ok((r.get(0)?, r.get(1)?)))?;
    if count != cp.patch_count || max != Some(cp.max_rowid) {
        return Ok(false);
    }
    let id: Option<String> = conn
        .prepare_cached(r#"SELECT "id" FROM "WorldPatch" WHERE rowid = ?1"#)?
        .query_row([cp.max_rowid], |r| r.get(0))
        .optional()?;
    Ok(id.as_deref() == Some(cp.max_patch_id.as_str()))
}

/// Make sure stored checkpoints were computed under this schema, dropping them all otherwise.
/// Returns whether checkpoints may be used: false when they belong to another schema and
/// cannot be dropped now (read-only or busy database) — queries then replay instead.
pub fn check_schema(conn: &Connection, fingerprint: &str) -> bool {
    let stored: Option<String> = conn
        .query_row(
            r#"SELECT "value" FROM "nbook_world_meta" WHERE "key" = 'schema'"#,
            [],
            |r| r.get(0),
        )
        .optional()
        .ok()
        .flatten();
    if stored.as_deref() == Some(fingerprint) {
        return true;
    }
    let _ = conn.busy_timeout(Duration::ZERO);
    let done = (|| -> rusqlite::Result<()> {
        let sp = !conn.is_autocommit();
        conn.execute_batch(if sp {
            "SAVEPOINT nbook_schema"
        } else {
            "BEGIN IMMEDIATE"
        })?;
        let r = clear(conn).and_then(|_| {
            conn.execute(
                r#"INSERT OR REPLACE INTO "nbook_world_meta" ("key","value") VALUES ('schema', ?1)"#,
                [fingerprint],
            )
            .map(|_| ())
        });
        let end = match (&r, sp) {
            (Ok(_), true) => "RELEASE nbook_schema",
            (Ok(_), false) => "COMMIT",
            (Err(_), true) => "ROLLBACK TO nbook_schema; RELEASE nbook_schema",
            (Err(_), false) => "ROLLBACK",
        };
        conn.execute_batch(end)?;
        r
    })();
    let _ = conn.busy_timeout(Duration::from_secs(5));
    done.is_ok()
}

/// Drop and recompute every checkpoint in one pass over the patches (ordered by subject and
/// time through the existing index). Run once on a database that never saw nbook — a fresh
/// NeuroBook project or a generated benchmark timeline; afterwards writes keep checkpoints
/// current and queries add missing ones. Returns (subjects, checkpoints).
pub fn rebuild(conn: &Connection, schema: &super::Schema) -> Result<(usize, usize), WorldError> {
    let types: std::collections::HashMap<String, String> = conn
        .prepare(r#"SELECT "id","type" FROM "WorldSubject""#)?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let outer = conn.is_autocommit();
    conn.execute_batch(if outer {
        "BEGIN IMMEDIATE"
    } else {
        "SAVEPOINT nbook_rebuild"
    })?;
    let run = || -> Result<(usize, usize), WorldError> {
        clear(conn)?;
        conn.execute(
            r#"INSERT OR REPLACE INTO "nbook_world_meta" ("key","value") VALUES ('schema', ?1)"#,
            [&schema.fingerprint],
        )?;
        let mut stmt = conn.prepare(
            r#"SELECT rowid, "id","sliceId","subjectId","instant","seq","path","op","value","summary" FROM "WorldPatch"
               ORDER BY "subjectId", "instant", "seq", rowid"#,
        )?;
        let mut rows = stmt.query([])?;
        let (mut subjects, mut made) = (0usize, 0usize);
        let mut cur: Option<(String, String, Reduced, Tally)> = None;
        let mut prev: Option<PatchRow> = None;
        let mut flush_prev = |cur: &mut Option<(String, String, Reduced, Tally)>,
                              prev: &PatchRow,
                              next: Option<&PatchRow>|
         -> Result<(), WorldError> {
            let Some((sid, kind, red, tally)) = cur.as_mut() else {
                return Ok(());
            };
            let boundary =
                next.is_none_or(|n| n.subject_id != prev.subject_id || n.instant != prev.instant);
            if boundary && tally.due(&red.state) {
                store(
                    conn,
                    &Checkpoint {
                        subject_id: sid.clone(),
                        instant: prev.instant,
                        subject_type: kind.clone(),
                        patch_count: tally.count,
                        max_rowid: tally.max_rowid,
                        max_patch_id: tally.max_id.clone(),
                        reduced: red.clone(),
                    },
                )?;
                tally.reset();
                made += 1;
            }
            Ok(())
        };
        while let Some(r) = rows.next()? {
            let p = super::store::patch_row(r)?;
            if let Some(pv) = prev.take() {
                flush_prev(&mut cur, &pv, Some(&p))?;
            }
            if cur.as_ref().is_none_or(|c| c.0 != p.subject_id) {
                subjects += 1;
                let kind = types.get(&p.subject_id).cloned().unwrap_or_default();
                cur = Some((
                    p.subject_id.clone(),
                    kind,
                    Reduced::default(),
                    Tally::default(),
                ));
            }
            if let Some((_, kind, red, tally)) = cur.as_mut() {
                red.apply(schema, kind, &p);
                tally.add(&p);
            }
            prev = Some(p);
        }
        if let Some(pv) = prev.take() {
            flush_prev(&mut cur, &pv, None)?;
        }
        Ok((subjects, made))
    };
    let result = run();
    let end = match (&result, outer) {
        (Ok(_), true) => "COMMIT",
        (Ok(_), false) => "RELEASE nbook_rebuild",
        (Err(_), true) => "ROLLBACK",
        (Err(_), false) => "ROLLBACK TO nbook_rebuild; RELEASE nbook_rebuild",
    };
    conn.execute_batch(end)?;
    result
}
