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
//! - `sqlite_*` tables (the schema, `sqlite_sequence`, `sqlite_stat1`…) are never written.
//!
//! Reads run at once and never wait: ≤200 rows and ≤48 KiB of rows, as objects keyed by column
//! name (BLOBs as `"<blob N bytes>"`, long text cut with a marker), with a `notice` saying what
//! was left out; every call runs under a time limit and a value-size limit (see `sql/rows.rs`).
//! Writes are staged as a **record of their effect** (see `sql/write.rs`): the statement runs in
//! a transaction that records every changed row and is rolled back at once; the preview lists
//! those rows; approval applies the record in a new transaction after checking the rows did not
//! change meanwhile (else the call is stale and writes nothing). No transaction is open while
//! the author decides, so other reads and writes of the project go on. A write that changed no
//! row is returned at once.

mod authorize;
mod rows;
mod write;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::hooks::{AuthContext, Authorization};
use rusqlite::{Batch, Connection};
use serde_json::{json, Value};

use crate::engine::tool::{HeldChange, Mutates, Staged, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::world::pool;
use authorize::{authorize, refused, AuthLog};
use rows::CallLimits;
pub use rows::{MAX_RESULT_BYTES, MAX_ROWS};

pub struct ExecuteSql;

const DESCRIPTION: &str = "Run exactly one SQL statement against this project's database (.nbook/project.sqlite; NeuroBook's Story*/World* tables). \
Reads (SELECT, WITH … SELECT) return at most 200 rows and 48 KiB as {mode:\"read\", command, rowCount, rows[], truncated, notice?}; text cells over 2000 characters are cut; a statement is stopped after 5 s. \
Writes (INSERT, UPDATE, DELETE) are recorded and wait for the author's approval, with a preview of the rows they change; if those rows change before approval the call fails as stale. Result {mode:\"write\", command, rowCount, rows (RETURNING), changes[], effects}. updatedAt columns are not maintained for you. \
Refused: several statements, DDL (CREATE/DROP/ALTER, indexes, triggers, views), every PRAGMA (read the schema with SELECT sql FROM sqlite_schema or SELECT * FROM pragma_table_info('Table')), ATTACH/DETACH, BEGIN/COMMIT/SAVEPOINT, VACUUM, load_extension.";

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SqlArgs {
    /// One SELECT/WITH/INSERT/UPDATE/DELETE statement.
    #[schemars(length(min = 1, max = 100000))]
    pub sql: String,
}

impl TypedTool for ExecuteSql {
    type Args = SqlArgs;
    const NAME: &'static str = "execute_sql";
    const GROUP: &'static str = "sql";
    const DESCRIPTION: &'static str = DESCRIPTION;
    /// Whether a call writes is known only once SQLite has compiled it (see `stage`), so the
    /// declaration is "depends" and conservatively true.
    const MUTATES: Mutates = Mutates::Depends(|_| true);
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        // Raw SQL reaches the plot and world tables too.
        Effects::touches(&[Sql, Plot, World]).prompt_gated_in_neurobook()
    };
    const STAGING: bool = true;

    /// One target for every SQL write, so "approve for this session" covers SQL writes.
    fn write_targets(&self, _ctx: &ToolCtx, _args: &SqlArgs) -> Vec<String> {
        vec![".nbook/project.sqlite".into()]
    }

    fn stage(&self, ctx: &ToolCtx, args: &SqlArgs) -> Option<Result<Staged, ToolError>> {
        Some(stage(ctx, args))
    }

    /// Only for callers outside the engine's approval path: runs and commits.
    fn run(&self, ctx: &ToolCtx, args: &SqlArgs) -> Result<ToolOutput, ToolError> {
        match stage(ctx, args)? {
            Staged::Done(out) => Ok(out),
            Staged::Held(h) => h.commit(),
        }
    }
}

/// The kind of statement, as SQLite compiled it.
enum Kind {
    Read,
    Write {
        command: &'static str,
        tables: Vec<String>,
    },
}

fn stage(ctx: &ToolCtx, args: &SqlArgs) -> Result<Staged, ToolError> {
    let sql = args.sql.as_str();
    let db = ctx.workspace.root().join(".nbook").join("project.sqlite");
    let conn = pool::take(&db).map_err(|e| ToolError::failed(format!("execute_sql: {e}")))?;
    let log = Arc::new(Mutex::new(AuthLog::default()));
    let hook_log = log.clone();
    let limits = CallLimits::install(&conn, rows::time_limit(&ctx.config));
    conn.authorizer(Some(move |c: AuthContext<'_>| authorize(&hook_log, c)));
    let result = run_statement(&conn, sql, &log, &limits);
    // The authorizer and the limits belong to this call only; pooled connections are shared.
    release(&db, conn, limits);
    match result? {
        write::Staged::Nothing(out) => Ok(Staged::Done(out)),
        write::Staged::Recorded(rec) => Ok(Staged::Held(held(db, rec))),
    }
}

fn release(db: &Path, conn: Connection, limits: CallLimits) {
    conn.authorizer(None::<fn(AuthContext<'_>) -> Authorization>);
    limits.remove(&conn);
    pool::give(db, conn);
}

/// The recorded write, applied when the author approves. Nothing is open meanwhile, so
/// discarding it (rejection, cancellation) has nothing to undo.
fn held(db: std::path::PathBuf, rec: write::Recorded) -> HeldChange {
    let (changeset, guards, output) = (rec.changeset, rec.guards, rec.output);
    HeldChange::new(
        rec.preview,
        move || write::apply(&db, &changeset, &guards, output),
        || {},
    )
}

fn sql_error(e: rusqlite::Error) -> ToolError {
    let msg = e.to_string();
    let hint = if msg.contains("database is locked") || msg.contains("database is busy") {
        " Another change to this project's database is being written right now; try again in a moment."
    } else if msg.contains("readonly") {
        " The project database is read-only (see the warning nbook printed when it opened)."
    } else {
        ""
    };
    ToolError::failed(format!(
        "execute_sql failed: {msg}. Nothing was written.{hint}"
    ))
}

fn output(v: Value) -> ToolOutput {
    ToolOutput {
        content: v.to_string(),
        details: Some(v),
        ..Default::default()
    }
}

fn run_statement(
    conn: &Connection,
    sql: &str,
    log: &Mutex<AuthLog>,
    limits: &CallLimits,
) -> Result<write::Staged, ToolError> {
    let denied = |log: &Mutex<AuthLog>| {
        log.lock()
            .ok()
            .and_then(|l| l.denied.first().cloned().or_else(|| l.schema_write.clone()))
    };
    let failed = |e: rusqlite::Error| match denied(log) {
        Some(what) => refused(&what),
        None => match limits.explain(&e) {
            Some(why) => ToolError::failed(format!("execute_sql stopped: {why}.")),
            None => sql_error(e),
        },
    };
    let mut batch = Batch::new(conn, sql);
    let mut stmt = match batch.next() {
        Ok(Some(s)) => s,
        Ok(None) => {
            return Err(ToolError::failed(
                "/sql: no SQL statement found (only whitespace or comments)",
            ))
        }
        Err(e) => return Err(failed(e)),
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
            let (rows, omitted) = rows::collect_rows(&mut stmt, false).map_err(failed)?;
            let mut v = json!({
                "mode": "read",
                "command": "SELECT",
                "rowCount": rows.len(),
                "truncated": omitted.truncated(),
            });
            if let Some(n) = omitted.notice(rows.len()) {
                v["notice"] = json!(n);
            }
            v["rows"] = Value::Array(rows);
            Ok(write::Staged::Nothing(output(v)))
        }
        Kind::Write { command, tables } => {
            crate::store::check_writable(conn)
                .map_err(|e| ToolError::failed(format!("execute_sql: {e}")))?;
            // Transactions are ours: the authorizer only judges the author's statement.
            conn.authorizer(None::<fn(AuthContext<'_>) -> Authorization>);
            write::record(conn, sql, &mut stmt, command, tables, limits)
        }
    }
}
