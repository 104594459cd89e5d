//! A row write (`INSERT`, `UPDATE`, `DELETE`) staged as a record of its effect.
//!
//! The statement runs inside `BEGIN IMMEDIATE` with a changeset recorder attached (see
//! `store::changeset`): every row it changed — cascades and triggers included — is captured
//! with its old and new values, the preview is built from that record, and the transaction is
//! **rolled back at once**. Nothing is held while the author decides. At approval the
//! changeset is applied in a new `IMMEDIATE` transaction; a row that changed meanwhile (any
//! column of a row it updates or deletes differs from the preview's "before" image, a row it
//! inserts exists, a row it updates is gone, or a reference would dangle) fails the whole call
//! as stale and nothing is written. So what is applied is exactly what the preview showed.
//!
//! Tables without a PRIMARY KEY cannot be recorded by SQLite's session extension: a statement
//! that writes one (or whose cascades reach one) is refused before it runs. NeuroBook's tables
//! and nbook's all have one. DDL never gets here: the authorizer refuses it.

use std::collections::BTreeSet;
use std::path::Path;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, Statement};
use serde_json::{json, Map, Value};

use super::rows::{self, cap_rows, CallLimits, Omitted};
use crate::engine::tool::{ToolError, ToolOutput};
use crate::engine::types::{Preview, PreviewBody};
use crate::store::changeset::{self, Changeset, ChangesetError, Op, RowChange};
use crate::world::pool;

/// A recorded write waiting for the author.
pub struct Recorded {
    pub preview: Preview,
    pub output: ToolOutput,
    pub changeset: Changeset,
    /// The whole "before" row of every updated row: the changeset alone checks only the
    /// columns the update changes, but the preview showed the whole row.
    pub guards: Vec<RowGuard>,
}

/// One updated row as it was when the change was recorded.
pub struct RowGuard {
    table: String,
    cols: Vec<String>,
    pk: Vec<bool>,
    key: Vec<SqlValue>,
    before: Vec<Option<SqlValue>>,
}

/// The updated rows' full "before" images (read inside the recording transaction).
fn guards(conn: &Connection, changes: &[RowChange]) -> rusqlite::Result<Vec<RowGuard>> {
    let mut out = Vec::new();
    let mut cols_of: Vec<(String, Vec<String>)> = Vec::new();
    for c in changes.iter().filter(|c| c.op == Op::Update) {
        let cols = match cols_of.iter().find(|(t, _)| *t == c.table) {
            Some((_, cols)) => cols.clone(),
            None => {
                let cols = columns(conn, &c.table)?;
                cols_of.push((c.table.clone(), cols.clone()));
                cols
            }
        };
        let key = c.key();
        let after = row_at(conn, &c.table, &cols, &c.pk, &key)?;
        let before = after
            .iter()
            .zip(&c.old)
            .map(|(now, old)| old.clone().or_else(|| now.clone()))
            .collect();
        out.push(RowGuard {
            table: c.table.clone(),
            cols,
            pk: c.pk.clone(),
            key,
            before,
        });
    }
    Ok(out)
}

/// The first guarded row that is no longer as recorded, described.
fn changed_row(conn: &Connection, guards: &[RowGuard]) -> rusqlite::Result<Option<String>> {
    for g in guards {
        let now = row_at(conn, &g.table, &g.cols, &g.pk, &g.key)?;
        if now != g.before {
            let what = if now.iter().all(Option::is_none) {
                "was deleted"
            } else {
                "was changed"
            };
            return Ok(Some(format!(
                "{} row ({}) {what} since the preview",
                g.table,
                changeset::describe_key(&g.key)
            )));
        }
    }
    Ok(None)
}

pub enum Staged {
    /// The statement changed no row: complete, nothing to approve.
    Nothing(ToolOutput),
    Recorded(Recorded),
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn failed(limits: &CallLimits, e: rusqlite::Error) -> ToolError {
    match limits.explain(&e) {
        Some(why) => ToolError::failed(format!("execute_sql stopped: {why}.")),
        None => super::sql_error(e),
    }
}

/// Run the statement, record what it changed, roll it back.
pub fn record(
    conn: &Connection,
    sql: &str,
    stmt: &mut Statement<'_>,
    command: &'static str,
    tables: Vec<String>,
    limits: &CallLimits,
) -> Result<Staged, ToolError> {
    let watched = watched_tables(conn, &tables).map_err(super::sql_error)?;
    if let Some(t) = changeset::missing_primary_key(conn, &watched).map_err(super::sql_error)? {
        return Err(ToolError::failed(format!(
            "execute_sql cannot stage a write to table {t}: it has no PRIMARY KEY, so the rows it changes cannot be recorded and checked again when the author approves. Nothing was run or written."
        )));
    }
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(super::sql_error)?;
    let result = (|| {
        let recorder =
            changeset::Recorder::start(conn).map_err(|e| ToolError::failed(e.to_string()))?;
        let (returned, omitted) = rows::collect_rows(stmt, true).map_err(|e| failed(limits, e))?;
        let count = conn.changes();
        let cs = recorder
            .finish()
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let changes = cs.rows().map_err(|e| ToolError::failed(e.to_string()))?;
        let listed = describe_changes(conn, &changes).map_err(super::sql_error)?;
        let guards = guards(conn, &changes).map_err(super::sql_error)?;
        Ok::<_, ToolError>((returned, omitted, count, cs, listed, changes.len(), guards))
    })();
    // Rolled back whatever happened: the record is all that is kept.
    let rolled_back = conn.execute_batch("ROLLBACK");
    let (returned, omitted, count, cs, listed, changes_total, guards) = result?;
    rolled_back.map_err(super::sql_error)?;
    let refresh = tables.iter().any(|t| t.starts_with("Story"));
    let total = changes_total;
    let mut shown = listed;
    cap_rows(&mut shown);
    let not_shown = total - shown.len();
    let mut v = json!({
        "mode": "write",
        "command": command,
        "rowCount": count,
        "rows": returned,
        "truncated": omitted.truncated(),
        "changes": shown,
        "effects": {"refreshChapterTree": refresh},
    });
    if let Some(n) = omitted.notice(returned.len()) {
        v["notice"] = json!(n);
    }
    if cs.is_empty() {
        return Ok(Staged::Nothing(super::output(v)));
    }
    let mut preview_rows = shown;
    if not_shown > 0 {
        preview_rows.push(json!({"more": not_shown}));
    }
    let mut summary = format!(
        "execute_sql: {command} changes {count} row{} in {}",
        if count == 1 { "" } else { "s" },
        tables.join(", ")
    );
    if total as u64 > count {
        summary.push_str(&format!(" ({total} rows including cascades and triggers)"));
    }
    Ok(Staged::Recorded(Recorded {
        preview: Preview {
            summary,
            body: PreviewBody::Statement {
                sql: sql.trim().to_string(),
                rows: preview_rows,
            },
            targets: Vec::new(),
        },
        output: super::output(v),
        changeset: cs,
        guards,
    }))
}

/// Apply a recorded write at approval: a new transaction, the stale check, commit.
pub fn apply(
    db: &Path,
    cs: &Changeset,
    guards: &[RowGuard],
    output: ToolOutput,
) -> Result<ToolOutput, ToolError> {
    let conn = pool::take(db).map_err(|e| ToolError::failed(format!("execute_sql: {e}")))?;
    let result = apply_on(&conn, cs, guards);
    pool::give(db, conn);
    result.map(|()| output)
}

fn apply_on(conn: &Connection, cs: &Changeset, guards: &[RowGuard]) -> Result<(), ToolError> {
    crate::store::check_writable(conn)
        .map_err(|e| ToolError::failed(format!("execute_sql: {e}")))?;
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(super::sql_error)?;
    let applied = match changed_row(conn, guards) {
        Ok(None) => cs.apply(conn),
        Ok(Some(why)) => Err(ChangesetError::Stale(why)),
        Err(e) => Err(ChangesetError::Apply(e.to_string())),
    };
    let end = match &applied {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(_) => conn.execute_batch("ROLLBACK"),
    };
    if !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    match (applied, end) {
        (Ok(()), Ok(())) => {
            crate::store::applied::committed(cs.clone());
            Ok(())
        }
        (Err(ChangesetError::Stale(why)), _) => Err(ToolError::Stale(format!(
            "the rows this execute_sql write changes were changed after the preview was shown: {why}. Nothing was written; read them again and send the statement anew."
        ))),
        (Err(e), _) => Err(ToolError::failed(format!("execute_sql: {e}"))),
        (Ok(()), Err(e)) => Err(ToolError::failed(format!(
            "the SQL change could not be committed ({e}); nothing was written"
        ))),
    }
}

/// The written tables plus those whose foreign keys point at them (cascades), transitively.
fn watched_tables(conn: &Connection, tables: &[String]) -> rusqlite::Result<Vec<String>> {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut order = Vec::new();
    let mut todo: Vec<String> = tables.to_vec();
    let mut refs = conn.prepare(
        r#"SELECT m.name FROM sqlite_schema m, pragma_foreign_key_list(m.name) f
           WHERE m.type = 'table' AND f."table" = ?1 COLLATE NOCASE"#,
    )?;
    while let Some(t) = todo.pop() {
        if !seen.insert(t.to_lowercase()) {
            continue;
        }
        for child in refs.query_map([&t], |r| r.get::<_, String>(0))? {
            todo.push(child?);
        }
        order.push(t);
    }
    Ok(order)
}

fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?;
    let names = stmt
        .query_map([table], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(names)
}

fn json_value(v: &SqlValue, omitted: &mut Omitted) -> Value {
    use rusqlite::types::ValueRef;
    let r = match v {
        SqlValue::Null => ValueRef::Null,
        SqlValue::Integer(i) => ValueRef::Integer(*i),
        SqlValue::Real(f) => ValueRef::Real(*f),
        SqlValue::Text(t) => ValueRef::Text(t.as_bytes()),
        SqlValue::Blob(b) => ValueRef::Blob(b),
    };
    rows::cell(r, omitted)
}

fn image(cols: &[String], vals: &[Option<SqlValue>], omitted: &mut Omitted) -> Map<String, Value> {
    cols.iter()
        .zip(vals)
        .filter_map(|(c, v)| v.as_ref().map(|v| (c.clone(), json_value(v, omitted))))
        .collect()
}

/// The current row of `table` with this primary key (all `None` if there is none).
fn row_at(
    conn: &Connection,
    table: &str,
    cols: &[String],
    pk: &[bool],
    key: &[SqlValue],
) -> rusqlite::Result<Vec<Option<SqlValue>>> {
    let key_cols: Vec<&String> = cols
        .iter()
        .zip(pk)
        .filter(|(_, pk)| **pk)
        .map(|(c, _)| c)
        .collect();
    let select = cols.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", ");
    let wh = key_cols
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{} IS ?{}", quote(c), i + 1))
        .collect::<Vec<_>>()
        .join(" AND ");
    let sql = format!("SELECT {select} FROM {} WHERE {wh}", quote(table));
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut q = stmt.query(rusqlite::params_from_iter(key.iter()))?;
    match q.next()? {
        Some(r) => (0..cols.len())
            .map(|i| r.get::<_, SqlValue>(i).map(Some))
            .collect(),
        None => Ok(vec![None; cols.len()]),
    }
}

/// The recorded changes as preview rows (the first [`rows::MAX_ROWS`]): table, key, action,
/// and the images before / after (full rows; for an update, the columns that changed are
/// listed). Sorted by table in the order first written, then by key.
fn describe_changes(conn: &Connection, changes: &[RowChange]) -> rusqlite::Result<Vec<Value>> {
    let mut order: Vec<&str> = Vec::new();
    for c in changes {
        if !order.contains(&c.table.as_str()) {
            order.push(&c.table);
        }
    }
    let mut out = Vec::new();
    let mut omitted = Omitted::default();
    for table in order {
        let cols = columns(conn, table)?;
        let mut group: Vec<&RowChange> = changes.iter().filter(|c| c.table == table).collect();
        group.sort_by(|a, b| compare_keys(&a.key(), &b.key()));
        for c in group {
            if out.len() == rows::MAX_ROWS {
                // The preview lists at most MAX_ROWS; the rest are counted by the caller.
                return Ok(out);
            }
            let mut row = Map::new();
            row.insert("table".into(), json!(table));
            let key = c.key();
            if key.len() == 1 {
                if let SqlValue::Integer(i) = key[0] {
                    row.insert("rowid".into(), json!(i));
                }
            }
            let key_cols: Vec<Option<SqlValue>> =
                c.pk.iter()
                    .zip(if c.op == Op::Insert { &c.new } else { &c.old })
                    .map(|(pk, v)| if *pk { v.clone() } else { None })
                    .collect();
            row.insert(
                "key".into(),
                Value::Object(image(&cols, &key_cols, &mut omitted)),
            );
            row.insert("action".into(), json!(c.op.label()));
            match c.op {
                Op::Insert => {
                    row.insert(
                        "after".into(),
                        Value::Object(image(&cols, &c.new, &mut omitted)),
                    );
                }
                Op::Delete => {
                    row.insert(
                        "before".into(),
                        Value::Object(image(&cols, &c.old, &mut omitted)),
                    );
                }
                Op::Update => {
                    let after = row_at(conn, table, &cols, &c.pk, &c.key())?;
                    let before: Vec<Option<SqlValue>> = after
                        .iter()
                        .zip(&c.old)
                        .map(|(now, old)| old.clone().or_else(|| now.clone()))
                        .collect();
                    let changed: Vec<&String> = cols
                        .iter()
                        .zip(&c.new)
                        .filter(|(_, n)| n.is_some())
                        .map(|(c, _)| c)
                        .collect();
                    row.insert("changed".into(), json!(changed));
                    row.insert(
                        "before".into(),
                        Value::Object(image(&cols, &before, &mut omitted)),
                    );
                    row.insert(
                        "after".into(),
                        Value::Object(image(&cols, &after, &mut omitted)),
                    );
                }
            }
            out.push(Value::Object(row));
        }
    }
    Ok(out)
}

fn compare_keys(a: &[SqlValue], b: &[SqlValue]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    fn rank(v: &SqlValue) -> u8 {
        match v {
            SqlValue::Null => 0,
            SqlValue::Integer(_) | SqlValue::Real(_) => 1,
            SqlValue::Text(_) => 2,
            SqlValue::Blob(_) => 3,
        }
    }
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (SqlValue::Integer(x), SqlValue::Integer(y)) => x.cmp(y),
            (SqlValue::Text(x), SqlValue::Text(y)) => x.cmp(y),
            (SqlValue::Blob(x), SqlValue::Blob(y)) => x.cmp(y),
            (SqlValue::Real(x), SqlValue::Real(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
            _ => rank(x).cmp(&rank(y)),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}
