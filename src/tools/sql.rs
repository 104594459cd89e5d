//! `execute_sql`: one SQL statement against this project's `.nbook/project.sqlite`.
//!
//! What may run is decided by SQLite itself, not by matching text:
//! - The statement is compiled with an **authorizer** installed. It allows only reading
//!   (`SELECT`, column reads, recursive CTEs, ordinary functions) and row writes (`INSERT`,
//!   `UPDATE`, `DELETE`). Everything else is denied at compile time and named in the error:
//!   `ATTACH`, `DETACH`, **every** `PRAGMA` statement (read-only ones too; the schema is
//!   readable with `SELECT … FROM sqlite_schema` or the table-valued pragma functions such as
//!   `pragma_table_info('T')`, which SQLite only offers for pragmas without side effects and
//!   runs as reads), DDL (tables, indexes,
//!   triggers, views, virtual tables, `ALTER`), `ANALYZE`, `REINDEX`, transactions and
//!   savepoints, `load_extension()` (and the file functions `readfile`/`writefile`/`edit`),
//!   and direct writes to SQLite's own `sqlite_*` tables.
//! - A statement that compiles but is neither a read (`sqlite3_stmt_readonly` and a `SELECT`
//!   seen by the authorizer) nor a row write seen by the authorizer (e.g. `VACUUM`) is refused.
//! - Exactly one statement: after the first, the rest of the input is compiled too (with the
//!   authorizer still on, so nothing in it can run); anything but whitespace, `;` and comments
//!   makes the call fail.
//!
//! Reads run at once and never wait: ≤200 rows, as objects keyed by column name (BLOBs as
//! `"<blob N bytes>"`). Writes run inside `BEGIN IMMEDIATE`; the preview lists the rows that
//! changed, found by **snapshot and diff**: every table the authorizer saw written (including by
//! triggers) and every table whose foreign keys point at one of those (cascades) is read by
//! rowid before and after the statement, inside the transaction, and the difference is listed
//! as insert/update/delete rows with before and after images. Tables above 20 000 rows (or
//! without rowid) are not snapshotted; the preview then gives the change count only. The
//! transaction stays open until the author decides: approval commits, rejection (or a
//! cancelled wait) rolls back. A write that changed no row is rolled back and returned at once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::ValueRef;
use rusqlite::{Batch, Connection, Statement};
use serde_json::{json, Map, Value};

use crate::engine::tool::{HeldChange, Mutates, Staged, Tool, ToolCtx, ToolError, ToolOutput};
use crate::engine::types::{Preview, PreviewBody};
use crate::world::pool;

pub struct ExecuteSql;

/// Rows a read returns (and changed rows a preview lists).
pub const MAX_ROWS: usize = 200;
/// Tables larger than this are not snapshotted for the write preview.
const SNAPSHOT_MAX_ROWS: i64 = 20_000;

const DESCRIPTION: &str = "Run exactly one SQL statement against this project's database (.nbook/project.sqlite; NeuroBook's Story*/World* tables). \
Reads (SELECT, WITH … SELECT) return at most 200 rows as {mode:\"read\", command, rowCount, rows[], truncated}. \
Writes (INSERT, UPDATE, DELETE) run in a transaction and wait for the author's approval, with a preview of the rows they change; result {mode:\"write\", command, rowCount, rows (RETURNING), changes[], effects}. updatedAt columns are not maintained for you. \
Refused: several statements, DDL (CREATE/DROP/ALTER, indexes, triggers, views), every PRAGMA (read the schema with SELECT sql FROM sqlite_schema or SELECT * FROM pragma_table_info('Table')), ATTACH/DETACH, BEGIN/COMMIT/SAVEPOINT, VACUUM, load_extension.";

impl Tool for ExecuteSql {
    fn name(&self) -> &'static str {
        "execute_sql"
    }

    fn group(&self) -> &'static str {
        "sql"
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "sql": {"type": "string", "minLength": 1, "maxLength": 100000, "description": "One SELECT/WITH/INSERT/UPDATE/DELETE statement."}
            },
            "required": ["sql"],
            "additionalProperties": false
        })
    }

    /// Whether a call writes is known only once SQLite has compiled it (see `stage`), so the
    /// declaration is "depends" and conservatively true.
    fn mutates(&self) -> Mutates {
        Mutates::Depends(|_| true)
    }
    fn effects(&self) -> crate::engine::tool::Effects {
        use crate::engine::tool::{Domain::*, Effects};
        // Raw SQL reaches the plot and world tables too.
        Effects::touches(&[Sql, Plot, World]).prompt_gated_in_neurobook()
    }

    fn is_staging(&self) -> bool {
        true
    }

    /// One target for every SQL write, so "approve for this session" covers SQL writes.
    fn write_targets(&self, _ctx: &ToolCtx, _args: &Value) -> Vec<String> {
        vec![".nbook/project.sqlite".into()]
    }

    fn stage(&self, ctx: &ToolCtx, args: &Value) -> Option<Result<Staged, ToolError>> {
        Some(stage(ctx, args))
    }

    /// Only for callers outside the engine's approval path: runs and commits.
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        match stage(ctx, args)? {
            Staged::Done(out) => Ok(out),
            Staged::Held(h) => h.commit(),
        }
    }
}

/// What the authorizer saw while one statement was compiled.
#[derive(Default)]
struct AuthLog {
    denied: Vec<String>,
    /// (INSERT|UPDATE|DELETE, table), in the order seen; top-level first.
    writes: Vec<(&'static str, String)>,
    top_command: Option<&'static str>,
    saw_select: bool,
    /// A write to `sqlite_schema` & co. seen while compiling (refused afterwards).
    schema_write: Option<String>,
    /// Compilation is over: from here on the only PRAGMA the authorizer can see is the one
    /// SQLite prepares internally for a side-effect-free table-valued pragma function
    /// (`pragma_table_info('T')`), which is a read and allowed.
    compiled: bool,
}

const DENIED_FUNCTIONS: [&str; 5] = [
    "load_extension",
    "readfile",
    "writefile",
    "edit",
    "fts3_tokenizer",
];

fn authorize(log: &Mutex<AuthLog>, ctx: AuthContext<'_>) -> Authorization {
    let Ok(mut log) = log.lock() else {
        return Authorization::Deny;
    };
    let top = ctx.accessor.is_none();
    let write = |kind: &'static str, table: &str, log: &mut AuthLog| {
        if table.starts_with("sqlite_") && table != "sqlite_sequence" {
            // DDL writes the schema table before its own check runs; allow the write here so
            // the DDL is denied under its own name, and refuse a plain schema write afterwards.
            log.schema_write
                .get_or_insert_with(|| format!("{kind} on SQLite's internal table {table}"));
            return Authorization::Allow;
        }
        if top && log.top_command.is_none() {
            log.top_command = Some(kind);
        }
        if !log.writes.iter().any(|(_, t)| t == table) {
            log.writes.push((kind, table.to_string()));
        }
        Authorization::Allow
    };
    let refused = match ctx.action {
        AuthAction::Select => {
            log.saw_select = true;
            return Authorization::Allow;
        }
        AuthAction::Read { .. } | AuthAction::Recursive => return Authorization::Allow,
        AuthAction::Insert { table_name } => return write("INSERT", table_name, &mut log),
        AuthAction::Update { table_name, .. } => return write("UPDATE", table_name, &mut log),
        AuthAction::Delete { table_name } => return write("DELETE", table_name, &mut log),
        AuthAction::Function { function_name } => {
            if DENIED_FUNCTIONS
                .iter()
                .any(|f| f.eq_ignore_ascii_case(function_name))
            {
                format!("{function_name}() (extension and file functions)")
            } else {
                return Authorization::Allow;
            }
        }
        AuthAction::Attach { filename } => format!("ATTACH DATABASE {filename:?}"),
        AuthAction::Detach { database_name } => format!("DETACH DATABASE {database_name}"),
        AuthAction::Pragma { .. } if log.compiled => return Authorization::Allow,
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } => match pragma_value {
            Some(v) => format!("PRAGMA {pragma_name} = {v} (every PRAGMA is refused)"),
            None => format!("PRAGMA {pragma_name} (every PRAGMA is refused)"),
        },
        AuthAction::Transaction { operation } => {
            format!("transaction control ({operation:?}); execute_sql manages the transaction")
        }
        AuthAction::Savepoint {
            operation,
            savepoint_name,
        } => format!("SAVEPOINT {savepoint_name} ({operation:?})"),
        AuthAction::CreateIndex { index_name, .. }
        | AuthAction::CreateTempIndex { index_name, .. } => {
            format!("DDL: CREATE INDEX {index_name}")
        }
        AuthAction::CreateTable { table_name } | AuthAction::CreateTempTable { table_name } => {
            format!("DDL: CREATE TABLE {table_name}")
        }
        AuthAction::CreateTrigger { trigger_name, .. }
        | AuthAction::CreateTempTrigger { trigger_name, .. } => {
            format!("DDL: CREATE TRIGGER {trigger_name}")
        }
        AuthAction::CreateView { view_name } | AuthAction::CreateTempView { view_name } => {
            format!("DDL: CREATE VIEW {view_name}")
        }
        AuthAction::CreateVtable { table_name, .. } => {
            format!("DDL: CREATE VIRTUAL TABLE {table_name}")
        }
        AuthAction::DropIndex { index_name, .. } | AuthAction::DropTempIndex { index_name, .. } => {
            format!("DDL: DROP INDEX {index_name}")
        }
        AuthAction::DropTable { table_name } | AuthAction::DropTempTable { table_name } => {
            format!("DDL: DROP TABLE {table_name}")
        }
        AuthAction::DropTrigger { trigger_name, .. }
        | AuthAction::DropTempTrigger { trigger_name, .. } => {
            format!("DDL: DROP TRIGGER {trigger_name}")
        }
        AuthAction::DropView { view_name } | AuthAction::DropTempView { view_name } => {
            format!("DDL: DROP VIEW {view_name}")
        }
        AuthAction::DropVtable { table_name, .. } => {
            format!("DDL: DROP VIRTUAL TABLE {table_name}")
        }
        AuthAction::AlterTable { table_name, .. } => format!("DDL: ALTER TABLE {table_name}"),
        AuthAction::Reindex { .. } => "REINDEX".to_string(),
        AuthAction::Analyze { .. } => "ANALYZE".to_string(),
        AuthAction::Unknown { code, .. } => format!("SQLite operation {code}"),
        _ => "an operation this tool does not allow".to_string(),
    };
    log.denied.push(refused);
    Authorization::Deny
}

const ALLOWED: &str = "execute_sql runs exactly one SELECT, WITH … SELECT, INSERT, UPDATE or DELETE statement; DDL, PRAGMA, ATTACH/DETACH, transactions, VACUUM and extension loading are refused";

fn refused(what: &str) -> ToolError {
    ToolError::failed(format!(
        "execute_sql refused {what}: {ALLOWED}. Nothing was run or written."
    ))
}

/// The kind of statement, as SQLite compiled it.
enum Kind {
    Read,
    Write {
        command: &'static str,
        tables: Vec<String>,
    },
}

fn stage(ctx: &ToolCtx, args: &Value) -> Result<Staged, ToolError> {
    let sql = args
        .get("sql")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::failed("/sql: a SQL statement is required"))?;
    let db = ctx.workspace.root().join(".nbook").join("project.sqlite");
    let conn = pool::take(&db).map_err(|e| ToolError::failed(format!("execute_sql: {e}")))?;
    let log = Arc::new(Mutex::new(AuthLog::default()));
    let hook_log = log.clone();
    conn.authorizer(Some(move |c: AuthContext<'_>| authorize(&hook_log, c)));
    let result = run_statement(&conn, sql, &log);
    // The authorizer belongs to this call only; pooled connections are shared.
    conn.authorizer(None::<fn(AuthContext<'_>) -> Authorization>);
    match result {
        Ok(Step::Done(out)) => {
            release(&db, conn);
            Ok(Staged::Done(out))
        }
        Ok(Step::Held { preview, output }) => Ok(Staged::Held(held(db, conn, preview, output))),
        Err(e) => {
            release(&db, conn);
            Err(e)
        }
    }
}

fn release(db: &Path, conn: Connection) {
    conn.authorizer(None::<fn(AuthContext<'_>) -> Authorization>);
    pool::give(db, conn);
}

enum Step {
    Done(ToolOutput),
    Held {
        preview: Preview,
        output: ToolOutput,
    },
}

fn sql_error(e: rusqlite::Error) -> ToolError {
    let msg = e.to_string();
    let hint = if msg.contains("database is locked") || msg.contains("database is busy") {
        " Another change to this project's database is in progress or waiting for the author's approval; try again after it is decided."
    } else {
        ""
    };
    ToolError::failed(format!(
        "execute_sql failed: {msg}. Nothing was written.{hint}"
    ))
}

fn run_statement(conn: &Connection, sql: &str, log: &Mutex<AuthLog>) -> Result<Step, ToolError> {
    let denied = |log: &Mutex<AuthLog>| {
        log.lock()
            .ok()
            .and_then(|l| l.denied.first().cloned().or_else(|| l.schema_write.clone()))
    };
    let mut batch = Batch::new(conn, sql);
    let mut stmt = match batch.next() {
        Ok(Some(s)) => s,
        Ok(None) => {
            return Err(ToolError::failed(
                "/sql: no SQL statement found (only whitespace or comments)",
            ))
        }
        Err(e) => {
            return Err(match denied(log) {
                Some(what) => refused(&what),
                None => sql_error(e),
            })
        }
    };
    if let Some(what) = denied(log) {
        return Err(refused(&what));
    }
    let (kind_log_select, top, writes) = {
        let l = log
            .lock()
            .map_err(|_| ToolError::failed("execute_sql: internal lock poisoned"))?;
        (l.saw_select, l.top_command, l.writes.clone())
    };
    // Exactly one statement: compile the rest (authorizer still on, nothing runs).
    match batch.next() {
        Ok(None) => {}
        Ok(Some(_)) | Err(_) => {
            return Err(refused(
                "more than one statement (send each statement in its own call)",
            ))
        }
    }
    if let Ok(mut l) = log.lock() {
        l.compiled = true;
    }
    let kind = if stmt.readonly() && top.is_none() {
        if !kind_log_select {
            return Err(refused(
                "a statement that is neither a query nor a row write",
            ));
        }
        Kind::Read
    } else {
        match top {
            Some(command) => Kind::Write {
                command,
                tables: writes.into_iter().map(|(_, t)| t).collect(),
            },
            None => {
                return Err(refused(
                    "a statement that is neither a query nor a row write (e.g. VACUUM)",
                ))
            }
        }
    };
    match kind {
        Kind::Read => {
            let (rows, truncated) =
                collect_rows(&mut stmt, false).map_err(|e| match denied(log) {
                    Some(what) => refused(&what),
                    None => sql_error(e),
                })?;
            let v = json!({
                "mode": "read",
                "command": "SELECT",
                "rowCount": rows.len(),
                "rows": rows,
                "truncated": truncated,
            });
            Ok(Step::Done(output(v)))
        }
        Kind::Write { command, tables } => write(conn, sql, &mut stmt, command, tables),
    }
}

fn write(
    conn: &Connection,
    sql: &str,
    stmt: &mut Statement<'_>,
    command: &'static str,
    tables: Vec<String>,
) -> Result<Step, ToolError> {
    // Transactions are ours: the authorizer only judges the author's statement.
    conn.authorizer(None::<fn(AuthContext<'_>) -> Authorization>);
    conn.execute_batch("BEGIN IMMEDIATE").map_err(sql_error)?;
    let result = (|| {
        let watched = watched_tables(conn, &tables).map_err(sql_error)?;
        let mut before = Vec::new();
        for t in &watched {
            before.push(snapshot(conn, t));
        }
        let (returned, truncated) = collect_rows(stmt, true).map_err(sql_error)?;
        let count = conn.changes();
        let mut changes = Vec::new();
        let mut unlisted = Vec::new();
        for (t, b) in watched.iter().zip(before) {
            match (b, snapshot(conn, t)) {
                (Some(b), Some(a)) => diff(t, &b, &a, &mut changes),
                _ => unlisted.push(t.clone()),
            }
        }
        Ok::<_, ToolError>((returned, truncated, count, changes, unlisted))
    })();
    let (returned, truncated, count, changes, unlisted) = match result {
        Ok(r) => r,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e);
        }
    };
    let refresh = tables.iter().any(|t| t.starts_with("Story"));
    let v = json!({
        "mode": "write",
        "command": command,
        "rowCount": count,
        "rows": returned,
        "truncated": truncated,
        "changes": changes.iter().take(MAX_ROWS).cloned().collect::<Vec<_>>(),
        "effects": {"refreshChapterTree": refresh},
    });
    if count == 0 && changes.is_empty() {
        let _ = conn.execute_batch("ROLLBACK");
        return Ok(Step::Done(output(v)));
    }
    let mut rows: Vec<Value> = changes.iter().take(MAX_ROWS).cloned().collect();
    if changes.len() > MAX_ROWS {
        rows.push(json!({"more": changes.len() - MAX_ROWS}));
    }
    let mut summary = format!(
        "execute_sql: {command} changes {count} row{} in {}",
        if count == 1 { "" } else { "s" },
        tables.join(", ")
    );
    if changes.len() as u64 > count {
        summary.push_str(&format!(
            " ({} rows including cascades and triggers)",
            changes.len()
        ));
    }
    if !unlisted.is_empty() {
        summary.push_str(&format!(
            "; rows of {} not listed (too large or without rowid)",
            unlisted.join(", ")
        ));
    }
    let preview = Preview {
        summary,
        body: PreviewBody::Statement {
            sql: sql.trim().to_string(),
            rows,
        },
        targets: Vec::new(),
    };
    Ok(Step::Held {
        preview,
        output: output(v),
    })
}

fn output(v: Value) -> ToolOutput {
    ToolOutput {
        content: v.to_string(),
        details: Some(v),
        ..Default::default()
    }
}

fn held(db: PathBuf, conn: Connection, preview: Preview, output: ToolOutput) -> HeldChange {
    let slot = Arc::new(Mutex::new(Some(conn)));
    let (c_slot, r_slot) = (slot.clone(), slot);
    let (c_db, r_db) = (db.clone(), db);
    HeldChange::new(
        preview,
        move || {
            let conn = c_slot
                .lock()
                .ok()
                .and_then(|mut s| s.take())
                .ok_or_else(|| ToolError::failed("the held SQL change is gone"))?;
            match conn.execute_batch("COMMIT") {
                Ok(()) => {
                    release(&c_db, conn);
                    Ok(output)
                }
                Err(e) => {
                    release(&c_db, conn);
                    Err(ToolError::failed(format!(
                        "the SQL change could not be committed ({e}); nothing was written"
                    )))
                }
            }
        },
        move || {
            if let Some(conn) = r_slot.lock().ok().and_then(|mut s| s.take()) {
                let _ = conn.execute_batch("ROLLBACK");
                release(&r_db, conn);
            }
        },
    )
}

/// A cell as JSON; BLOBs as a short description.
fn cell(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => json!(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::String(format!("<blob {} bytes>", b.len())),
    }
}

fn column_keys(stmt: &Statement<'_>) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for name in stmt.column_names() {
        let mut key = name.to_string();
        let mut n = 2;
        while keys.contains(&key) {
            key = format!("{name}:{n}");
            n += 1;
        }
        keys.push(key);
    }
    keys
}

/// Up to `MAX_ROWS` rows, and whether there were more. Steps the statement to the end so a
/// write with RETURNING completes.
fn collect_rows(stmt: &mut Statement<'_>, to_end: bool) -> rusqlite::Result<(Vec<Value>, bool)> {
    let keys = column_keys(stmt);
    let mut rows = Vec::new();
    let mut truncated = false;
    let mut q = stmt.raw_query();
    while let Some(r) = q.next()? {
        if rows.len() == MAX_ROWS {
            truncated = true;
            // A read stops here; a write must run to completion.
            if to_end {
                continue;
            }
            break;
        }
        let mut obj = Map::new();
        for (i, k) in keys.iter().enumerate() {
            obj.insert(k.clone(), cell(r.get_ref(i)?));
        }
        rows.push(Value::Object(obj));
    }
    Ok((rows, truncated))
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
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

type Image = BTreeMap<i64, Map<String, Value>>;

/// Every row of `table` by rowid, or None if it is too large or has no rowid.
fn snapshot(conn: &Connection, table: &str) -> Option<Image> {
    let n: i64 = conn
        .query_row(&format!("SELECT count(*) FROM {}", quote(table)), [], |r| {
            r.get(0)
        })
        .ok()?;
    if n > SNAPSHOT_MAX_ROWS {
        return None;
    }
    let mut stmt = conn
        .prepare(&format!("SELECT rowid, * FROM {}", quote(table)))
        .ok()?;
    let keys: Vec<String> = column_keys(&stmt).into_iter().skip(1).collect();
    let mut out = BTreeMap::new();
    let mut rows = stmt.raw_query();
    while let Ok(Some(r)) = rows.next() {
        let id: i64 = r.get(0).ok()?;
        let mut obj = Map::new();
        for (i, k) in keys.iter().enumerate() {
            obj.insert(k.clone(), cell(r.get_ref(i + 1).ok()?));
        }
        out.insert(id, obj);
    }
    Some(out)
}

fn diff(table: &str, before: &Image, after: &Image, out: &mut Vec<Value>) {
    for (id, b) in before {
        match after.get(id) {
            None => out.push(json!({"table": table, "rowid": id, "action": "delete", "before": b})),
            Some(a) if a != b => {
                let changed: Vec<&String> = a.keys().filter(|k| a.get(*k) != b.get(*k)).collect();
                out.push(json!({"table": table, "rowid": id, "action": "update", "changed": changed, "before": b, "after": a}))
            }
            Some(_) => {}
        }
    }
    for (id, a) in after {
        if !before.contains_key(id) {
            out.push(json!({"table": table, "rowid": id, "action": "insert", "after": a}));
        }
    }
}
