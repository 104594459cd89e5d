//! The authorizer `execute_sql` compiles every statement under: it allows only reads and row
//! writes to ordinary tables, and records what it saw so the caller can classify the statement
//! (see the list in `tools/sql.rs`).

use std::sync::Mutex;

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};

use crate::engine::tool::ToolError;

/// What the authorizer saw while one statement was compiled.
#[derive(Default)]
pub(super) struct AuthLog {
    pub(super) denied: Vec<String>,
    /// (INSERT|UPDATE|DELETE, table), in the order seen; top-level first.
    pub(super) writes: Vec<(&'static str, String)>,
    pub(super) top_command: Option<&'static str>,
    pub(super) saw_select: bool,
    /// A write to `sqlite_schema` & co. seen while compiling (refused afterwards).
    pub(super) schema_write: Option<String>,
    /// Compilation is over: from here on the only PRAGMA the authorizer can see is the one
    /// SQLite prepares internally for a side-effect-free table-valued pragma function
    /// (`pragma_table_info('T')`), which is a read and allowed.
    pub(super) compiled: bool,
}

const DENIED_FUNCTIONS: [&str; 5] = [
    "load_extension",
    "readfile",
    "writefile",
    "edit",
    "fts3_tokenizer",
];

pub(super) fn authorize(log: &Mutex<AuthLog>, ctx: AuthContext<'_>) -> Authorization {
    let Ok(mut log) = log.lock() else {
        return Authorization::Deny;
    };
    let top = ctx.accessor.is_none();
    let write = |kind: &'static str, table: &str, log: &mut AuthLog| {
        if table.len() >= 7 && table[..7].eq_ignore_ascii_case("sqlite_") {
            // SQLite's own tables (the schema, sqlite_sequence, sqlite_stat1…) are never
            // written by a statement: AUTOINCREMENT keeps sqlite_sequence without asking the
            // authorizer. DDL writes the schema table before its own check runs; allow the
            // write here so the DDL is denied under its own name, and refuse a plain write to
            // any of these tables afterwards.
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

pub(super) const ALLOWED: &str = "execute_sql runs exactly one SELECT, WITH … SELECT, INSERT, UPDATE or DELETE statement; DDL, PRAGMA, ATTACH/DETACH, transactions, VACUUM and extension loading are refused";

pub(super) fn refused(what: &str) -> ToolError {
    ToolError::failed(format!(
        "execute_sql refused {what}: {ALLOWED}. Nothing was run or written."
    ))
}
