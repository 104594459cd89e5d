//! How much one `execute_sql` call may cost, and turning rows into bounded JSON.
//!
//! - **Time**: a progress handler stops the statement at the time limit (default 5 s,
//!   `[sql] time_limit_ms`), so a runaway recursive CTE ends with a clear error instead of
//!   running until killed.
//! - **A value**: `SQLITE_LIMIT_LENGTH` is lowered to [`MAX_VALUE_BYTES`] while the call runs,
//!   so `printf('%.*c', 50e6, 'x')` fails inside SQLite before 50 MB are allocated.
//! - **A cell** in the result: text longer than [`MAX_CELL_CHARS`] is cut, with a marker that
//!   says how much was left out.
//! - **The result**: at most [`MAX_ROWS`] rows (NeuroBook's figure) and [`MAX_RESULT_BYTES`] (48 KiB) of
//!   row JSON; past either the rest is not read and the result carries a notice.

use std::time::{Duration, Instant};

use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Statement};
use serde_json::{json, Map, Value};

use crate::config::Config;

/// Rows a read returns (and changed rows a preview lists), as in NeuroBook.
pub const MAX_ROWS: usize = 200;
/// Bytes of row JSON in one result (reads, RETURNING rows, preview rows): below the session
/// log's 64 KiB cap, so an `execute_sql` result is always logged whole.
pub const MAX_RESULT_BYTES: usize = 48 * 1024;
/// Characters of one text cell shown in a result.
pub const MAX_CELL_CHARS: usize = 2_000;
/// The largest string or blob SQLite may build during a call.
pub const MAX_VALUE_BYTES: i32 = 4 * 1024 * 1024;
/// Default time limit of one statement.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(5);

/// The time limit from `[sql] time_limit_ms`, or the default.
pub fn time_limit(config: &Config) -> Duration {
    config
        .sql
        .time_limit_ms
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_TIME_LIMIT)
}

/// The limits installed on a connection for one call; [`CallLimits::remove`] restores it.
pub struct CallLimits {
    pub limit: Duration,
    deadline: Instant,
    old_length: i32,
}

impl CallLimits {
    pub fn install(conn: &Connection, limit: Duration) -> CallLimits {
        let deadline = Instant::now() + limit;
        conn.progress_handler(1_000, Some(move || Instant::now() >= deadline));
        let old_length = conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES);
        CallLimits {
            limit,
            deadline,
            old_length,
        }
    }

    pub fn timed_out(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// The connection is pooled: take the call's limits off it.
    pub fn remove(self, conn: &Connection) {
        conn.progress_handler(0, None::<fn() -> bool>);
        conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, self.old_length);
    }

    /// An error SQLite raised, in words that say what to do.
    pub fn explain(&self, e: &rusqlite::Error) -> Option<String> {
        let msg = e.to_string();
        if self.timed_out() || msg.contains("interrupted") {
            return Some(format!(
                "the statement ran longer than the {} limit and was stopped. Nothing was written. Add a LIMIT or a narrower WHERE, or bound the recursion of a recursive CTE",
                human(self.limit)
            ));
        }
        if msg.contains("too big") {
            return Some(format!(
                "a value would be larger than the {} MiB execute_sql allows (string or blob too big). Nothing was written. Select a part of it with substr() or length()",
                MAX_VALUE_BYTES >> 20
            ));
        }
        None
    }
}

fn human(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// What was left out of a result.
#[derive(Default)]
pub struct Omitted {
    /// More rows existed than were returned.
    pub more_rows: bool,
    /// Rows were cut by the byte cap (not only the row cap).
    pub by_bytes: bool,
    /// Cells shortened, and the characters cut from them.
    pub cells_cut: usize,
    pub chars_cut: usize,
}

impl Omitted {
    pub fn truncated(&self) -> bool {
        self.more_rows || self.cells_cut > 0
    }

    /// The notice added to a truncated result (None when nothing was left out).
    pub fn notice(&self, returned: usize) -> Option<String> {
        if !self.truncated() {
            return None;
        }
        let mut parts = Vec::new();
        if self.more_rows {
            let cap = if self.by_bytes {
                format!("{} KiB of rows", MAX_RESULT_BYTES / 1024)
            } else {
                format!("{MAX_ROWS} rows")
            };
            parts.push(format!(
                "{returned} rows returned; more rows were not read (results are capped at {cap})"
            ));
        }
        if self.cells_cut > 0 {
            parts.push(format!(
                "{} cell(s) cut to {MAX_CELL_CHARS} characters ({} characters omitted)",
                self.cells_cut, self.chars_cut
            ));
        }
        parts.push("narrow the query (WHERE, LIMIT, fewer columns, substr())".into());
        Some(parts.join("; "))
    }
}

/// A cell as JSON: BLOBs as a short description, long text cut with a marker.
pub fn cell(v: ValueRef<'_>, omitted: &mut Omitted) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => json!(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        ValueRef::Text(t) => Value::String(cut_text(t, omitted)),
        ValueRef::Blob(b) => Value::String(format!("<blob {} bytes>", b.len())),
    }
}

/// The first [`MAX_CELL_CHARS`] characters of `t` (decoding only those), plus a marker.
fn cut_text(t: &[u8], omitted: &mut Omitted) -> String {
    if t.len() <= MAX_CELL_CHARS {
        return String::from_utf8_lossy(t).into_owned();
    }
    // A char is at most 4 bytes: this prefix holds the cut. A char split at its end is not
    // an error; invalid UTF-8 inside it is decoded the slow way.
    let head = &t[..t.len().min(MAX_CELL_CHARS * 4)];
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return cut_text_slow(t, omitted),
    };
    let Some((cut, _)) = valid.char_indices().nth(MAX_CELL_CHARS) else {
        if valid.len() == t.len() {
            return valid.to_string();
        }
        return cut_text_slow(t, omitted);
    };
    // Characters left: every byte that does not continue a UTF-8 sequence starts one.
    let rest = t[cut..].iter().filter(|b| (**b & 0xC0) != 0x80).count();
    omitted.cells_cut += 1;
    omitted.chars_cut += rest;
    format!("{}…[{rest} more characters]", &valid[..cut])
}

fn cut_text_slow(t: &[u8], omitted: &mut Omitted) -> String {
    let text = String::from_utf8_lossy(t);
    let total = text.chars().count();
    if total <= MAX_CELL_CHARS {
        return text.into_owned();
    }
    let keep: String = text.chars().take(MAX_CELL_CHARS).collect();
    omitted.cells_cut += 1;
    omitted.chars_cut += total - MAX_CELL_CHARS;
    format!("{keep}…[{} more characters]", total - MAX_CELL_CHARS)
}

pub fn column_keys(stmt: &Statement<'_>) -> Vec<String> {
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

/// Rows within the caps, and what was left out. `to_end` steps the statement to the end
/// (a write with RETURNING must complete) without keeping the rows past the caps.
pub fn collect_rows(
    stmt: &mut Statement<'_>,
    to_end: bool,
) -> rusqlite::Result<(Vec<Value>, Omitted)> {
    let keys = column_keys(stmt);
    let mut rows = Vec::new();
    let mut omitted = Omitted::default();
    let mut bytes = 0usize;
    let mut q = stmt.raw_query();
    while let Some(r) = q.next()? {
        if omitted.more_rows {
            // A read stops here; a write must run to completion.
            if to_end {
                continue;
            }
            break;
        }
        if rows.len() == MAX_ROWS {
            omitted.more_rows = true;
            if to_end {
                continue;
            }
            break;
        }
        let mut obj = Map::new();
        for (i, k) in keys.iter().enumerate() {
            obj.insert(k.clone(), cell(r.get_ref(i)?, &mut omitted));
        }
        let row = Value::Object(obj);
        let size = row.to_string().len();
        if bytes + size > MAX_RESULT_BYTES && !rows.is_empty() {
            omitted.more_rows = true;
            omitted.by_bytes = true;
            if to_end {
                continue;
            }
            break;
        }
        bytes += size;
        rows.push(row);
    }
    Ok((rows, omitted))
}

/// Keep leading `rows` within [`MAX_ROWS`] and [`MAX_RESULT_BYTES`]; returns how many were
/// dropped.
pub fn cap_rows(rows: &mut Vec<Value>) -> usize {
    let total = rows.len();
    let mut bytes = 0usize;
    let mut keep = 0usize;
    for r in rows.iter().take(MAX_ROWS) {
        let size = r.to_string().len();
        if bytes + size > MAX_RESULT_BYTES && keep > 0 {
            break;
        }
        bytes += size;
        keep += 1;
    }
    rows.truncate(keep);
    total - keep
}
