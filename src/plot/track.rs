//! Change tracking for previews. Every service write goes through [`super::Plot`], which
//! records here the state of each row before it first touches it. After the service ran (inside
//! a transaction that a preview then rolls back), [`Tracker::finish`] reads the rows again and
//! returns a field-by-field diff per record plus a fingerprint of each pre-existing row it
//! touched or depended on — the engine compares those at approval time to detect stale calls.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};
use serde_json::{Map, Value};

use super::error::PlotResult;
use crate::protocol::{FieldChange, RecordChange, TargetState};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    Story,
    Act,
    Chapter,
    Phase,
    Thread,
    Scene,
    SceneRef,
    Promise,
    Beat,
    Decision,
}

impl Table {
    pub fn name(self) -> &'static str {
        match self {
            Table::Story => "Story",
            Table::Act => "StoryAct",
            Table::Chapter => "StoryChapter",
            Table::Phase => "StoryPhase",
            Table::Thread => "StoryThread",
            Table::Scene => "StoryScene",
            Table::SceneRef => "StorySceneRef",
            Table::Promise => "StoryPromise",
            Table::Beat => "StoryPromiseBeat",
            Table::Decision => "StoryDecision",
        }
    }
}

/// Columns holding JSON text; shown parsed in previews.
const JSON_COLUMNS: &[&str] = &[
    "tags",
    "options",
    "rejectedAlternatives",
    "serves",
    "dependsOn",
    "subjectIdsJson",
];
/// Columns every write changes; left out of the field diff.
const NOISE_COLUMNS: &[&str] = &["id", "createdAt", "updatedAt"];

pub type RowSnapshot = Map<String, Value>;

/// Every column of one row, by name.
pub fn snapshot(conn: &Connection, table: Table, id: i64) -> PlotResult<Option<RowSnapshot>> {
    let sql = format!("SELECT * FROM \"{}\" WHERE \"id\" = ?1", table.name());
    let mut stmt = conn.prepare_cached(&sql)?;
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let row = stmt
        .query_row([id], |r| {
            let mut m = Map::new();
            for (i, n) in names.iter().enumerate() {
                m.insert(n.clone(), json_of(r.get_ref(i)?));
            }
            Ok(m)
        })
        .optional()?;
    Ok(row)
}

fn json_of(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => Value::from(f),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::String(format!("<{} bytes>", b.len())),
    }
}

fn hash_json(v: &impl serde::Serialize) -> u64 {
    let mut h = DefaultHasher::new();
    serde_json::to_string(v).unwrap_or_default().hash(&mut h);
    h.finish()
}

/// `updatedAt` plus a hash of the row (and, for a scene, of its refs, which live in their own
/// table but belong to the scene).
fn fingerprint(conn: &Connection, table: Table, id: i64, row: &RowSnapshot) -> PlotResult<String> {
    let mut h = hash_json(row);
    if table == Table::Scene {
        let mut stmt = conn.prepare_cached(
            "SELECT \"relation\",\"rawTarget\",\"visibility\",\"note\",\"targetThreadId\",\"targetSceneId\" FROM \"StorySceneRef\" WHERE \"sceneId\" = ?1 ORDER BY \"sortOrder\",\"id\"",
        )?;
        let refs: Vec<Vec<Value>> = stmt
            .query_map([id], |r| {
                (0..6).map(|i| r.get_ref(i).map(json_of)).collect()
            })?
            .collect::<Result<_, _>>()?;
        h ^= hash_json(&refs).rotate_left(1);
    }
    let updated = row
        .get("updatedAt")
        .map(|v| v.to_string())
        .unwrap_or_default();
    Ok(format!("{}:{h:016x}", updated.trim_matches('"')))
}

fn key(table: Table, id: i64) -> String {
    format!("{}#{id}", table.name())
}

struct Entry {
    table: Table,
    id: i64,
    action: String,
    before: Option<RowSnapshot>,
    fingerprint: Option<String>,
    extras: Vec<FieldChange>,
}

#[derive(Default)]
pub struct Tracker {
    entries: Vec<Entry>,
    observed: Vec<(String, String)>,
}

impl Tracker {
    fn entry_mut(&mut self, table: Table, id: i64) -> Option<&mut Entry> {
        self.entries
            .iter_mut()
            .find(|e| e.table == table && e.id == id)
    }

    /// Record the row's current state before a write (first touch wins).
    pub fn touch(
        &mut self,
        conn: &Connection,
        table: Table,
        id: i64,
        action: &str,
    ) -> PlotResult<()> {
        if let Some(e) = self.entry_mut(table, id) {
            if e.before.is_some() && e.action == "update" && action != "update" {
                e.action = action.to_string();
            }
            return Ok(());
        }
        let before = snapshot(conn, table, id)?;
        let fingerprint = match &before {
            Some(row) => Some(fingerprint(conn, table, id, row)?),
            None => None,
        };
        self.entries.push(Entry {
            table,
            id,
            action: action.to_string(),
            before,
            fingerprint,
            extras: Vec::new(),
        });
        Ok(())
    }

    /// A row this call inserted.
    pub fn created(&mut self, table: Table, id: i64) {
        if self.entry_mut(table, id).is_none() {
            self.entries.push(Entry {
                table,
                id,
                action: "create".into(),
                before: None,
                fingerprint: None,
                extras: Vec::new(),
            });
        }
    }

    /// A change shown on a record that is not one of its columns (a scene's refs).
    pub fn extra(&mut self, table: Table, id: i64, field: &str, before: Value, after: Value) {
        if before == after {
            return;
        }
        if let Some(e) = self.entry_mut(table, id) {
            e.extras.retain(|f| f.field != field);
            e.extras.push(FieldChange {
                field: field.to_string(),
                before,
                after,
            });
        }
    }

    /// A row the outcome depends on without changing it (e.g. the scene a beat lands on).
    pub fn observe(&mut self, conn: &Connection, table: Table, id: i64) -> PlotResult<()> {
        let k = key(table, id);
        if self.observed.iter().any(|(o, _)| *o == k)
            || self.entries.iter().any(|e| e.table == table && e.id == id)
        {
            return Ok(());
        }
        if let Some(row) = snapshot(conn, table, id)? {
            let fp = fingerprint(conn, table, id, &row)?;
            self.observed.push((k, fp));
        }
        Ok(())
    }

    /// Diff every touched record against its current state, and list the targets.
    pub fn finish(&self, conn: &Connection) -> PlotResult<(Vec<RecordChange>, Vec<TargetState>)> {
        let mut changes = Vec::new();
        let mut targets = Vec::new();
        for e in &self.entries {
            if let Some(fp) = &e.fingerprint {
                targets.push(TargetState {
                    key: key(e.table, e.id),
                    fingerprint: fp.clone(),
                });
            }
            let after = snapshot(conn, e.table, e.id)?;
            let mut fields = diff(e.before.as_ref(), after.as_ref());
            fields.extend(e.extras.iter().cloned());
            let action = match (&e.before, &after) {
                (None, Some(_)) => "create".to_string(),
                (Some(_), None) => "delete".to_string(),
                (None, None) => continue,
                _ if fields.is_empty() => continue,
                _ => e.action.clone(),
            };
            let row = after.as_ref().or(e.before.as_ref());
            changes.push(RecordChange {
                record: label(e.table, e.id, row),
                action,
                fields,
            });
        }
        for (k, fp) in &self.observed {
            if !targets.iter().any(|t| t.key == *k) {
                targets.push(TargetState {
                    key: k.clone(),
                    fingerprint: fp.clone(),
                });
            }
        }
        Ok((changes, targets))
    }
}

/// "StoryPromise #3 (the-letter)".
pub fn label(table: Table, id: i64, row: Option<&RowSnapshot>) -> String {
    let text = |k: &str| {
        row.and_then(|r| r.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let name = match table {
        Table::Beat => row.map(|r| {
            format!(
                "promise {} × scene {}",
                r.get("promiseId").cloned().unwrap_or_default(),
                r.get("sceneId").cloned().unwrap_or_default()
            )
        }),
        Table::SceneRef => text("rawTarget"),
        _ => text("name").or_else(|| text("title")),
    };
    match name {
        Some(n) => format!("{} #{id} ({n})", table.name()),
        None => format!("{} #{id}", table.name()),
    }
}

fn display(col: &str, v: &Value) -> Value {
    match v {
        Value::String(s) if JSON_COLUMNS.contains(&col) => {
            serde_json::from_str(s).unwrap_or_else(|_| v.clone())
        }
        Value::Number(n) if col == "isMainThread" => Value::Bool(n.as_i64() != Some(0)),
        _ => v.clone(),
    }
}

fn diff(before: Option<&RowSnapshot>, after: Option<&RowSnapshot>) -> Vec<FieldChange> {
    let empty = Map::new();
    let (b, a) = (before.unwrap_or(&empty), after.unwrap_or(&empty));
    let mut cols: Vec<&String> = a.keys().collect();
    for k in b.keys() {
        if !a.contains_key(k) {
            cols.push(k);
        }
    }
    let mut out = Vec::new();
    for col in cols {
        if NOISE_COLUMNS.contains(&col.as_str()) {
            continue;
        }
        let bv = b.get(col).map(|v| display(col, v)).unwrap_or(Value::Null);
        let av = a.get(col).map(|v| display(col, v)).unwrap_or(Value::Null);
        if bv != av {
            out.push(FieldChange {
                field: col.clone(),
                before: bv,
                after: av,
            });
        }
    }
    out
}
