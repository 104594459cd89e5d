//! A write recorded as its effect: SQLite's session extension captures every row a transaction
//! changed (a changeset), the transaction is rolled back at once, and the changeset is applied
//! later — when the author approves — in a new transaction, with a conflict handler that aborts
//! on any difference between the rows as recorded and the rows as they are now (the stale
//! check). So no transaction stays open while the author decides.
//!
//! What is recorded: every table of `main` except nbook's derived tables (`nbook_*`:
//! checkpoints and index metadata, which validate themselves and are rebuilt on demand) and
//! SQLite's own (`sqlite_sequence` follows the applied rows by itself). The session extension
//! ignores tables without a PRIMARY KEY; callers check [`missing_primary_key`] first and refuse.
//!
//! Applying: foreign-key actions are off during the apply (`FKNOACTION`) and so are triggers,
//! because the changeset already holds the rows that cascades and triggers changed when it was
//! recorded; running them again would change those rows twice. Foreign keys are still checked
//! at the end, so a row another writer added meanwhile that the recorded delete would have
//! cascaded to makes the apply fail as stale instead of leaving a dangling reference.
//!
//! The C library is built with the session extension by `.cargo/config.toml`
//! (`LIBSQLITE3_FLAGS`); the declarations come from rusqlite's bundled bindings.

use std::ffi::{c_char, c_int, c_uchar, c_void, CStr};
use std::marker::PhantomData;
use std::ptr;

use rusqlite::config::DbConfig;
use rusqlite::ffi;
use rusqlite::types::Value;
use rusqlite::Connection;

#[derive(Debug, thiserror::Error)]
pub enum ChangesetError {
    #[error("SQLite could not record the change ({what}: {message}); nothing was written")]
    Record { what: &'static str, message: String },
    /// The rows the change replaces are not what they were when it was recorded.
    #[error("{0}")]
    Stale(String),
    #[error("the recorded change could not be applied ({0}); nothing was written")]
    Apply(String),
}

/// The kind of a recorded row change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Insert,
    Update,
    Delete,
}

impl Op {
    pub fn label(self) -> &'static str {
        match self {
            Op::Insert => "insert",
            Op::Update => "update",
            Op::Delete => "delete",
        }
    }
}

/// One changed row, values in the table's column order. For an update, `old` holds the
/// primary key and the changed columns, `new` the changed columns (others are `None`).
#[derive(Clone, Debug, PartialEq)]
pub struct RowChange {
    pub table: String,
    pub op: Op,
    pub pk: Vec<bool>,
    pub old: Vec<Option<Value>>,
    pub new: Vec<Option<Value>>,
}

impl RowChange {
    /// The primary-key values (from the old image, or the new one for an insert).
    pub fn key(&self) -> Vec<Value> {
        let image = if self.op == Op::Insert {
            &self.new
        } else {
            &self.old
        };
        self.pk
            .iter()
            .zip(image)
            .filter(|(pk, _)| **pk)
            .map(|(_, v)| v.clone().unwrap_or(Value::Null))
            .collect()
    }
}

/// A recorded change, ready to be applied later.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changeset(Vec<u8>);

/// Recording on a connection until [`Recorder::finish`]; dropping it stops recording.
pub struct Recorder<'c> {
    session: *mut ffi::sqlite3_session,
    _conn: PhantomData<&'c Connection>,
}

fn errmsg(conn: &Connection) -> String {
    // SAFETY: the handle is valid while `conn` lives; sqlite3_errmsg returns a NUL-terminated
    // string owned by SQLite, copied before the next call on the connection.
    unsafe {
        let p = ffi::sqlite3_errmsg(conn.handle());
        if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

/// Keep every table except nbook's derived `nbook_*` tables and SQLite's own.
unsafe extern "C" fn keep_table(_ctx: *mut c_void, table: *const c_char) -> c_int {
    if table.is_null() {
        return 0;
    }
    // SAFETY: SQLite passes a NUL-terminated table name.
    let name = unsafe { CStr::from_ptr(table) }.to_bytes();
    let lower = name.to_ascii_lowercase();
    c_int::from(!(lower.starts_with(b"nbook_") || lower.starts_with(b"sqlite_")))
}

impl<'c> Recorder<'c> {
    /// Start recording every change made on `conn` to the tables of `main`.
    pub fn start(conn: &'c Connection) -> Result<Recorder<'c>, ChangesetError> {
        let mut session = ptr::null_mut();
        // SAFETY: a valid connection handle, a static NUL-terminated name and an out pointer.
        let rc =
            unsafe { ffi::sqlite3session_create(conn.handle(), c"main".as_ptr(), &mut session) };
        if rc != ffi::SQLITE_OK || session.is_null() {
            return Err(ChangesetError::Record {
                what: "starting a session",
                message: errmsg(conn),
            });
        }
        let rec = Recorder {
            session,
            _conn: PhantomData,
        };
        // SAFETY: `session` is live; the filter is a plain function that ignores its context.
        let rc = unsafe {
            ffi::sqlite3session_table_filter(session, Some(keep_table), ptr::null_mut());
            ffi::sqlite3session_attach(session, ptr::null())
        };
        if rc != ffi::SQLITE_OK {
            return Err(ChangesetError::Record {
                what: "attaching the tables",
                message: errmsg(conn),
            });
        }
        Ok(rec)
    }

    /// Like [`Recorder::start`], for a connection that must move while it records (the
    /// world sandbox takes its connection by value and hands it back).
    ///
    /// # Safety
    /// The connection must stay open (not dropped) until this recorder is finished or
    /// dropped. Moving the `Connection` value is fine: the SQLite handle does not move.
    pub unsafe fn start_unbound(conn: &Connection) -> Result<Recorder<'static>, ChangesetError> {
        let rec = Recorder::start(conn)?;
        let session = rec.session;
        std::mem::forget(rec);
        Ok(Recorder {
            session,
            _conn: PhantomData,
        })
    }

    /// Stop recording and return what was recorded.
    pub fn finish(self) -> Result<Changeset, ChangesetError> {
        let mut n: c_int = 0;
        let mut p: *mut c_void = ptr::null_mut();
        // SAFETY: `self.session` is live until `self` drops; SQLite allocates `p` (n bytes).
        let rc = unsafe { ffi::sqlite3session_changeset(self.session, &mut n, &mut p) };
        if rc != ffi::SQLITE_OK {
            return Err(ChangesetError::Record {
                what: "reading the changeset",
                message: format!("code {rc}"),
            });
        }
        let bytes = if p.is_null() || n <= 0 {
            Vec::new()
        } else {
            // SAFETY: SQLite returned `n` readable bytes at `p`.
            unsafe { std::slice::from_raw_parts(p as *const u8, n as usize) }.to_vec()
        };
        // SAFETY: `p` was allocated by SQLite (or is null, which sqlite3_free accepts).
        unsafe { ffi::sqlite3_free(p) };
        Ok(Changeset(bytes))
    }
}

impl Drop for Recorder<'_> {
    fn drop(&mut self) {
        // SAFETY: created by sqlite3session_create and deleted exactly once, before the
        // connection it borrows can close.
        unsafe { ffi::sqlite3session_delete(self.session) };
    }
}

/// A value SQLite handed us (null pointer: not recorded).
///
/// # Safety
/// `v` must be null or a valid `sqlite3_value` for the duration of the call.
unsafe fn value(v: *mut ffi::sqlite3_value) -> Option<Value> {
    if v.is_null() {
        return None;
    }
    // SAFETY: `v` is valid per the contract; text/blob pointers are read for `bytes` bytes
    // right after the call that produced them.
    unsafe {
        Some(match ffi::sqlite3_value_type(v) {
            ffi::SQLITE_INTEGER => Value::Integer(ffi::sqlite3_value_int64(v)),
            ffi::SQLITE_FLOAT => Value::Real(ffi::sqlite3_value_double(v)),
            ffi::SQLITE_TEXT => {
                let p = ffi::sqlite3_value_text(v);
                let n = ffi::sqlite3_value_bytes(v).max(0) as usize;
                if p.is_null() {
                    Value::Text(String::new())
                } else {
                    let b = std::slice::from_raw_parts(p, n);
                    Value::Text(String::from_utf8_lossy(b).into_owned())
                }
            }
            ffi::SQLITE_BLOB => {
                let p = ffi::sqlite3_value_blob(v) as *const u8;
                let n = ffi::sqlite3_value_bytes(v).max(0) as usize;
                if p.is_null() {
                    Value::Blob(Vec::new())
                } else {
                    Value::Blob(std::slice::from_raw_parts(p, n).to_vec())
                }
            }
            _ => Value::Null,
        })
    }
}

/// The change the iterator points at.
///
/// # Safety
/// `it` must be a valid iterator positioned on a change (not a foreign-key conflict).
unsafe fn current(it: *mut ffi::sqlite3_changeset_iter) -> Option<RowChange> {
    let mut table: *const c_char = ptr::null();
    let (mut ncol, mut op, mut indirect): (c_int, c_int, c_int) = (0, 0, 0);
    // SAFETY: valid iterator per the contract; out pointers are locals.
    unsafe {
        if ffi::sqlite3changeset_op(it, &mut table, &mut ncol, &mut op, &mut indirect)
            != ffi::SQLITE_OK
            || table.is_null()
        {
            return None;
        }
        let op = match op {
            ffi::SQLITE_INSERT => Op::Insert,
            ffi::SQLITE_UPDATE => Op::Update,
            ffi::SQLITE_DELETE => Op::Delete,
            _ => return None,
        };
        let mut pk_ptr: *mut c_uchar = ptr::null_mut();
        let mut pk_n: c_int = 0;
        ffi::sqlite3changeset_pk(it, &mut pk_ptr, &mut pk_n);
        let pk: Vec<bool> = if pk_ptr.is_null() {
            vec![false; ncol.max(0) as usize]
        } else {
            std::slice::from_raw_parts(pk_ptr, pk_n.max(0) as usize)
                .iter()
                .map(|b| *b != 0)
                .collect()
        };
        let mut old = Vec::new();
        let mut new = Vec::new();
        for i in 0..ncol {
            let mut v = ptr::null_mut();
            old.push(
                if op != Op::Insert && ffi::sqlite3changeset_old(it, i, &mut v) == ffi::SQLITE_OK {
                    value(v)
                } else {
                    None
                },
            );
            let mut v = ptr::null_mut();
            new.push(
                if op != Op::Delete && ffi::sqlite3changeset_new(it, i, &mut v) == ffi::SQLITE_OK {
                    value(v)
                } else {
                    None
                },
            );
        }
        Some(RowChange {
            table: CStr::from_ptr(table).to_string_lossy().into_owned(),
            op,
            pk,
            old,
            new,
        })
    }
}

/// How a key reads in a message: `id=5` style, or just the values.
pub fn describe_key(key: &[Value]) -> String {
    key.iter()
        .map(|v| match v {
            Value::Null => "NULL".to_string(),
            Value::Integer(i) => i.to_string(),
            Value::Real(f) => f.to_string(),
            Value::Text(t) => format!("{t:?}"),
            Value::Blob(b) => format!("<blob {} bytes>", b.len()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

struct Conflicts(Vec<String>);

unsafe extern "C" fn on_conflict(
    ctx: *mut c_void,
    kind: c_int,
    it: *mut ffi::sqlite3_changeset_iter,
) -> c_int {
    let describe = || -> String {
        if kind == ffi::SQLITE_CHANGESET_FOREIGN_KEY {
            let mut n: c_int = 0;
            // SAFETY: SQLite passes a valid iterator for a foreign-key conflict.
            unsafe { ffi::sqlite3changeset_fk_conflicts(it, &mut n) };
            return format!(
                "{n} foreign-key reference(s) would dangle: rows that point at the changed rows were added or changed since the preview"
            );
        }
        // SAFETY: for the other kinds the iterator is positioned on the conflicting change.
        let Some(c) = (unsafe { current(it) }) else {
            return "a changed row differs from the preview".to_string();
        };
        let row = format!("{} row ({})", c.table, describe_key(&c.key()));
        match kind {
            ffi::SQLITE_CHANGESET_DATA => {
                format!("{row} was changed since the preview (its {} no longer matches)", c.op.label())
            }
            ffi::SQLITE_CHANGESET_NOTFOUND => format!("{row} was deleted since the preview"),
            ffi::SQLITE_CHANGESET_CONFLICT => {
                format!("{row} was created by another change since the preview")
            }
            _ => format!("{row} would break a constraint (UNIQUE or NOT NULL) given the rows written since the preview"),
        }
    };
    let text = std::panic::catch_unwind(describe)
        .unwrap_or_else(|_| "a changed row differs from the preview".into());
    if !ctx.is_null() {
        // SAFETY: `ctx` is the `Conflicts` that `apply` passed and keeps alive for the call.
        unsafe { (*(ctx as *mut Conflicts)).0.push(text) };
    }
    ffi::SQLITE_CHANGESET_ABORT
}

impl Changeset {
    /// A changeset read back from its stored bytes (see [`Changeset::as_bytes`]).
    pub fn from_bytes(bytes: Vec<u8>) -> Changeset {
        Changeset(bytes)
    }

    /// The changeset in SQLite's own format, for storing it (the history keeps it to undo).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The change that undoes this one: inserts become deletes, deletes inserts, and updates
    /// swap their old and new values. Applied with [`Changeset::apply`], any row that differs
    /// from what this change left behind aborts it as stale.
    pub fn invert(&self) -> Result<Changeset, ChangesetError> {
        if self.0.is_empty() {
            return Ok(Changeset::default());
        }
        let mut n: c_int = 0;
        let mut p: *mut c_void = ptr::null_mut();
        // SAFETY: SQLite only reads the input buffer and allocates `p` (n bytes) for us.
        let rc = unsafe {
            ffi::sqlite3changeset_invert(
                self.0.len() as c_int,
                self.0.as_ptr() as *const c_void,
                &mut n,
                &mut p,
            )
        };
        if rc != ffi::SQLITE_OK {
            // SAFETY: null or allocated by SQLite.
            unsafe { ffi::sqlite3_free(p) };
            return Err(ChangesetError::Record {
                what: "inverting the changeset",
                message: format!("code {rc}"),
            });
        }
        let bytes = if p.is_null() || n <= 0 {
            Vec::new()
        } else {
            // SAFETY: SQLite returned `n` readable bytes at `p`.
            unsafe { std::slice::from_raw_parts(p as *const u8, n as usize) }.to_vec()
        };
        // SAFETY: allocated by SQLite.
        unsafe { ffi::sqlite3_free(p) };
        Ok(Changeset(bytes))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Every recorded row change, in the changeset's order (tables in the order first written).
    pub fn rows(&self) -> Result<Vec<RowChange>, ChangesetError> {
        if self.0.is_empty() {
            return Ok(Vec::new());
        }
        let mut it = ptr::null_mut();
        // SAFETY: the buffer outlives the iterator (finalized below); SQLite only reads it.
        let rc = unsafe {
            ffi::sqlite3changeset_start(
                &mut it,
                self.0.len() as c_int,
                self.0.as_ptr() as *mut c_void,
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(ChangesetError::Record {
                what: "reading the changeset",
                message: format!("code {rc}"),
            });
        }
        let mut out = Vec::new();
        // SAFETY: `it` is valid until finalized; `current` is called only on a row.
        unsafe {
            while ffi::sqlite3changeset_next(it) == ffi::SQLITE_ROW {
                if let Some(c) = current(it) {
                    out.push(c);
                }
            }
            ffi::sqlite3changeset_finalize(it);
        }
        Ok(out)
    }

    /// Apply the change on `conn`, inside the caller's transaction. Any conflict aborts the
    /// whole apply (nothing of it stays) and is reported as [`ChangesetError::Stale`].
    pub fn apply(&self, conn: &Connection) -> Result<(), ChangesetError> {
        if self.0.is_empty() {
            return Ok(());
        }
        let triggers = conn
            .db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER)
            .map_err(|e| ChangesetError::Apply(e.to_string()))?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)
            .map_err(|e| ChangesetError::Apply(e.to_string()))?;
        let mut conflicts = Conflicts(Vec::new());
        // SAFETY: valid handle and buffer; `conflicts` lives across the call and is only
        // touched by `on_conflict` through the context pointer.
        let rc = unsafe {
            ffi::sqlite3changeset_apply_v2(
                conn.handle(),
                self.0.len() as c_int,
                self.0.as_ptr() as *mut c_void,
                None,
                Some(on_conflict),
                &mut conflicts as *mut Conflicts as *mut c_void,
                ptr::null_mut(),
                ptr::null_mut(),
                ffi::SQLITE_CHANGESETAPPLY_FKNOACTION,
            )
        };
        let message = errmsg(conn);
        let _ = conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, triggers);
        if !conflicts.0.is_empty() {
            return Err(ChangesetError::Stale(conflicts.0.join("; ")));
        }
        if rc != ffi::SQLITE_OK {
            return Err(ChangesetError::Apply(message));
        }
        Ok(())
    }
}

/// The first of `tables` that has no PRIMARY KEY (the session extension cannot record its
/// rows), if any. Views and unknown names are skipped (SQLite refuses writes to them itself).
pub fn missing_primary_key(
    conn: &Connection,
    tables: &[String],
) -> rusqlite::Result<Option<String>> {
    let mut stmt = conn.prepare_cached(
        r#"SELECT (SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1 COLLATE NOCASE),
                  (SELECT count(*) FROM pragma_table_info(?1) WHERE pk > 0)"#,
    )?;
    for t in tables {
        let (exists, pk): (i64, i64) = stmt.query_row([t], |r| Ok((r.get(0)?, r.get(1)?)))?;
        if exists > 0 && pk == 0 && !t.to_ascii_lowercase().starts_with("sqlite_") {
            return Ok(Some(t.clone()));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "PRAGMA foreign_keys = ON;
             CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
             CREATE TABLE c (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL REFERENCES p(id) ON DELETE CASCADE);
             CREATE TABLE nopk (x);
             INSERT INTO p VALUES (1, 'a'), (2, 'b');
             INSERT INTO c VALUES (10, 1), (11, 1), (12, 2);",
        )
        .unwrap();
        c
    }

    fn record(c: &Connection, sql: &str) -> Changeset {
        c.execute_batch("BEGIN").unwrap();
        let rec = Recorder::start(c).unwrap();
        c.execute_batch(sql).unwrap();
        let cs = rec.finish().unwrap();
        c.execute_batch("ROLLBACK").unwrap();
        cs
    }

    #[test]
    fn records_cascades_and_applies_them_once() {
        let c = db();
        let cs = record(&c, "DELETE FROM p WHERE id = 1");
        let rows = cs.rows().unwrap();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!(rows[0].table, "p");
        assert_eq!(rows[0].op, Op::Delete);
        assert_eq!(rows[0].key(), vec![Value::Integer(1)]);
        // Rolled back: still there.
        let n: i64 = c
            .query_row("SELECT count(*) FROM c", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 3);
        c.execute_batch("BEGIN IMMEDIATE").unwrap();
        cs.apply(&c).unwrap();
        c.execute_batch("COMMIT").unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM c", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn a_changed_target_is_stale_and_nothing_applies() {
        let c = db();
        let cs = record(&c, "UPDATE p SET name = 'x'");
        c.execute("UPDATE p SET name = 'other' WHERE id = 2", [])
            .unwrap();
        c.execute_batch("BEGIN IMMEDIATE").unwrap();
        let err = cs.apply(&c).unwrap_err();
        c.execute_batch("ROLLBACK").unwrap();
        let ChangesetError::Stale(msg) = err else {
            panic!("{err}")
        };
        assert!(msg.contains("p row (2)"), "{msg}");
        let names: Vec<String> = c
            .prepare("SELECT name FROM p ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(names, ["a", "other"]);
    }

    #[test]
    fn a_new_child_the_delete_would_cascade_to_is_stale() {
        let c = db();
        let cs = record(&c, "DELETE FROM p WHERE id = 2");
        c.execute("INSERT INTO c VALUES (13, 2)", []).unwrap();
        c.execute_batch("BEGIN IMMEDIATE").unwrap();
        let err = cs.apply(&c).unwrap_err();
        c.execute_batch("ROLLBACK").unwrap();
        assert!(
            matches!(err, ChangesetError::Stale(ref m) if m.contains("foreign-key")),
            "{err}"
        );
    }

    #[test]
    fn tables_without_a_primary_key_are_named() {
        let c = db();
        let t = vec!["p".to_string(), "nopk".to_string()];
        assert_eq!(missing_primary_key(&c, &t).unwrap(), Some("nopk".into()));
        assert_eq!(missing_primary_key(&c, &t[..1]).unwrap(), None);
    }
}
