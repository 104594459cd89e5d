//! Board workflows (issue #17): the IR v2 (`ir`), its validator (`validate`), the column
//! trait catalogue (`traits`), setting values (`settings`) and the built-in `builtin:chapter`
//! (`builtin`); this file owns the stored side — custom workflows in
//! `nbook_board_workflow`, setting values in `nbook_board_workflow_settings`, the record of
//! every change in `nbook_board_config_revision` — and the operations the `fn_workflow_*`
//! tools run as board [`Op`](super::Op)s (so their approval preview is the dry run).
//!
//! A task's workflow is its `workflowId`; [`for_task`] resolves it, and every column check of
//! the board reads that workflow's columns. Built-in *declarations* are immutable
//! (`WORKFLOW_BUILTIN_READONLY` on update or delete); built-in *values* are writable.

pub mod builtin;
mod graph;
pub mod ir;
pub mod lanes;
pub mod settings;
pub mod traits;
pub mod validate;

use std::collections::BTreeMap;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::error::{BoardError, BoardResult};
use super::{json_col, now, Outcome, Touched};
pub use builtin::CHAPTER_ID;
pub use ir::{FieldDefinition, IrColumn, WorkflowIr};
pub use lanes::Lanes;
pub use settings::Resolved;

/// A workflow as tools and panes see it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Workflow {
    pub id: String,
    pub name: String,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    pub builtin: bool,
    pub ir: WorkflowIr,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<Value>,
    pub revision: i64,
}

impl Workflow {
    pub fn column(&self, id: &str) -> Option<&IrColumn> {
        self.ir.columns.iter().find(|c| c.id == id)
    }
    /// Where a new (or re-homed) task lands: the first `intake` column, else the first.
    pub fn entry(&self) -> &str {
        self.ir
            .columns
            .iter()
            .find(|c| c.has_trait("intake"))
            .or(self.ir.columns.first())
            .map_or(super::PLANNING, |c| c.id.as_str())
    }
    pub fn fields(&self) -> &[FieldDefinition] {
        &self.ir.fields
    }
    /// Column ids and names in board order.
    pub fn columns(&self) -> Vec<(String, String)> {
        self.ir
            .columns
            .iter()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect()
    }
}

/// `builtin:chapter` as a [`Workflow`].
pub fn builtin_chapter() -> Workflow {
    Workflow {
        id: CHAPTER_ID.into(),
        name: "Chapter".into(),
        description: "Plan, draft, review and merge one piece of the book (the default).".into(),
        icon: None,
        builtin: true,
        ir: builtin::CHAPTER.clone(),
        layout: None,
        revision: 0,
    }
}

/// Who made a configuration change: `{kind: agent|user|system, id}` (Fusion's actor kinds
/// plus `user` for the author).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Actor {
    pub kind: &'static str,
    pub id: String,
}

impl Actor {
    pub fn system(id: &str) -> Actor {
        Actor {
            kind: "system",
            id: id.into(),
        }
    }
}

const COLS: &str = "id, name, description, icon, ir, layout, revision";

type Row = (
    String,
    String,
    String,
    Option<String>,
    String,
    Option<String>,
    i64,
);

fn from_row(r: &rusqlite::Row) -> rusqlite::Result<Row> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
    ))
}

fn finish(row: Row) -> BoardResult<Workflow> {
    let (id, name, description, icon, ir, layout, revision) = row;
    let what = format!("workflow {id}");
    Ok(Workflow {
        ir: json_col(&what, &ir)?,
        layout: layout.map(|l| json_col(&what, &l)).transpose()?,
        id,
        name,
        description,
        icon,
        builtin: false,
        revision,
    })
}

/// The workflow `id` (built-in or custom), if there is one.
pub fn load(c: &Connection, id: &str) -> BoardResult<Option<Workflow>> {
    if id == CHAPTER_ID {
        return Ok(Some(builtin_chapter()));
    }
    let row = c
        .query_row(
            &format!("SELECT {COLS} FROM nbook_board_workflow WHERE id = ?1"),
            [id],
            from_row,
        )
        .optional()?;
    row.map(finish).transpose()
}

pub fn require(c: &Connection, id: &str) -> BoardResult<Workflow> {
    load(c, id)?.ok_or_else(|| BoardError::WorkflowNotFound { id: id.to_string() })
}

/// The workflow a task runs.
pub fn for_task(c: &Connection, t: &super::Task) -> BoardResult<Workflow> {
    require(c, &t.workflow_id)
}

/// The lanes (which column is which lifecycle stage) of the workflow task `t` runs. Never
/// fails: a workflow that is gone or corrupt reads as `builtin:chapter`'s lanes.
pub fn lanes_for_task(c: &Connection, t: &super::Task) -> Lanes {
    match load(c, &t.workflow_id) {
        Ok(Some(wf)) => Lanes::of(&wf),
        _ => Lanes::builtin(),
    }
}

/// Built-ins first, then the custom workflows in creation order.
pub fn list(c: &Connection) -> BoardResult<Vec<Workflow>> {
    let mut out = vec![builtin_chapter()];
    let mut st = c.prepare_cached(&format!(
        "SELECT {COLS} FROM nbook_board_workflow ORDER BY seq"
    ))?;
    let rows: Vec<Row> = st.query_map([], from_row)?.collect::<Result<_, _>>()?;
    for r in rows {
        out.push(finish(r)?);
    }
    Ok(out)
}

fn stored_values(c: &Connection, id: &str) -> BoardResult<Map<String, Value>> {
    let text: Option<String> = c
        .query_row(
            "SELECT \"values\" FROM nbook_board_workflow_settings WHERE workflow_id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()?;
    Ok(match text {
        // A corrupt value map resolves as empty: resolution never fails.
        Some(t) => serde_json::from_str(&t).unwrap_or_default(),
        None => Map::new(),
    })
}

/// `{workflowId, stored, effective, orphaned}` of workflow `id`.
pub fn settings_of(c: &Connection, id: &str) -> BoardResult<Resolved> {
    let wf = require(c, id)?;
    Ok(settings::resolve(
        &wf.id,
        &wf.ir.settings,
        &stored_values(c, id)?,
    ))
}

/// The effective settings of the workflow task `t` runs. Never fails: a workflow that is gone
/// or corrupt resolves with the built-in's declarations (Fusion: "corrupt workflow → built-in
/// declarations").
pub fn effective_for_task(c: &Connection, t: &super::Task) -> Resolved {
    let decls = match load(c, &t.workflow_id) {
        Ok(Some(wf)) => wf.ir.settings,
        _ => builtin::CHAPTER.settings.clone(),
    };
    let stored = stored_values(c, &t.workflow_id).unwrap_or_default();
    settings::resolve(&t.workflow_id, &decls, &stored)
}

fn record(
    c: &Connection,
    workflow_id: &str,
    subject: &str,
    actor: &Actor,
    before: Option<&Value>,
    after: Option<&Value>,
) -> BoardResult<()> {
    c.execute(
        "INSERT INTO nbook_board_config_revision (workflow_id, subject, actor_kind, actor_id, before, after, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            workflow_id,
            subject,
            actor.kind,
            actor.id,
            before.map(Value::to_string),
            after.map(Value::to_string),
            now()
        ],
    )?;
    Ok(())
}

/// The configuration revisions of a workflow, oldest first: `[{subject, actor{kind,id},
/// before, after, at}]`.
pub fn revisions(c: &Connection, workflow_id: &str) -> BoardResult<Vec<Value>> {
    let mut st = c.prepare_cached(
        "SELECT subject, actor_kind, actor_id, before, after, created_at FROM nbook_board_config_revision WHERE workflow_id = ?1 ORDER BY id",
    )?;
    let rows = st.query_map([workflow_id], |r| {
        let parse = |s: Option<String>| s.and_then(|s| serde_json::from_str::<Value>(&s).ok());
        Ok(json!({
            "subject": r.get::<_, String>(0)?,
            "actor": {"kind": r.get::<_, String>(1)?, "id": r.get::<_, String>(2)?},
            "before": parse(r.get(3)?),
            "after": parse(r.get(4)?),
            "at": r.get::<_, String>(5)?,
        }))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn check_ir(raw: &Value) -> BoardResult<WorkflowIr> {
    validate::validate_value(raw).map_err(|errors| BoardError::WorkflowInvalid { errors })
}

/// A new custom workflow.
#[derive(Clone, Debug, Default)]
pub struct NewWorkflow {
    pub name: String,
    pub description: Option<String>,
    pub icon: Option<String>,
    pub ir: Value,
    pub layout: Option<Value>,
}

pub fn create(c: &Connection, n: &NewWorkflow, actor: &Actor) -> BoardResult<Outcome> {
    let name = n.name.trim();
    if name.is_empty() {
        return Err(BoardError::invalid("name", "must not be empty"));
    }
    let ir = check_ir(&n.ir)?;
    let seq: i64 = c.query_row(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM nbook_board_workflow",
        [],
        |r| r.get(0),
    )?;
    let id = format!("WF-{seq:03}");
    let at = now();
    let ir_json = serde_json::to_value(&ir).unwrap_or(Value::Null);
    c.execute(
        "INSERT INTO nbook_board_workflow (id, seq, name, description, icon, ir, layout, revision, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8, ?8)",
        params![
            id,
            seq,
            name,
            n.description.as_deref().unwrap_or("").trim(),
            n.icon,
            ir_json.to_string(),
            n.layout.as_ref().map(Value::to_string),
            at
        ],
    )?;
    record(c, &id, "workflow", actor, None, Some(&ir_json))?;
    Ok(Outcome {
        text: format!(
            "Created workflow {id} ({name}): {} columns, {} nodes, {} settings.",
            ir.columns.len(),
            ir.nodes.len(),
            ir.settings.len()
        ),
        value: json!({"workflowId": id, "name": name}),
        touched: vec![Touched::Workflow(id)],
        ..Outcome::default()
    })
}

/// Changes to a custom workflow (`None`: keep).
#[derive(Clone, Debug, Default)]
pub struct WorkflowUpdate {
    pub name: Option<String>,
    pub description: Option<String>,
    pub icon: Option<String>,
    pub ir: Option<Value>,
    pub layout: Option<Value>,
    /// Where the tasks of removed columns go (a column of the new IR).
    pub rehome_to: Option<String>,
}

fn tasks_of(c: &Connection, workflow_id: &str) -> BoardResult<Vec<super::Task>> {
    Ok(super::tasks::all(c, None)?
        .into_iter()
        .filter(|t| t.workflow_id == workflow_id)
        .collect())
}

fn custom(c: &Connection, id: &str, action: &'static str) -> BoardResult<Workflow> {
    let wf = require(c, id)?;
    if wf.builtin {
        return Err(BoardError::WorkflowBuiltin {
            id: id.into(),
            action,
        });
    }
    Ok(wf)
}

pub fn update(c: &Connection, id: &str, u: &WorkflowUpdate, actor: &Actor) -> BoardResult<Outcome> {
    let mut wf = custom(c, id, "edited")?;
    if u.name.is_none()
        && u.description.is_none()
        && u.icon.is_none()
        && u.ir.is_none()
        && u.layout.is_none()
    {
        return Err(BoardError::invalid(
            "workflow_id",
            "nothing to update: give name, description, icon, ir or layout",
        ));
    }
    let before = serde_json::to_value(&wf.ir).unwrap_or(Value::Null);
    let mut out = Outcome::default();
    let mut moved = Vec::new();
    if let Some(raw) = &u.ir {
        let ir = check_ir(raw)?;
        let keeps = |col: &str| ir.columns.iter().any(|c| c.id == col);
        let occupants = tasks_of(c, id)?;
        let mut occupied: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for t in occupants.iter().filter(|t| !keeps(&t.column)) {
            occupied
                .entry(t.column.clone())
                .or_default()
                .push(t.id.clone());
        }
        if !occupied.is_empty() {
            let Some(to) = u.rehome_to.as_deref() else {
                return Err(BoardError::OccupiedColumns {
                    workflow_id: id.into(),
                    occupied,
                });
            };
            if !keeps(to) {
                return Err(BoardError::invalid(
                    "rehome_to",
                    format!("the new IR has no column {to}"),
                ));
            }
            for t in occupants.into_iter().filter(|t| !keeps(&t.column)) {
                let mut t = t;
                let from = std::mem::replace(&mut t.column, to.to_string());
                super::tasks::save(c, &t)?;
                super::tasks::log_entry(
                    c,
                    &mut out,
                    &t.id,
                    &format!("Re-homed from removed column {from} to {to} (workflow {id} edited)"),
                    &actor.id,
                )?;
                moved.push(t.id.clone());
                out.touched.push(Touched::Task(t.id));
            }
        }
        // Editing `fields` orphans task values: they stay on the tasks, untouched.
        wf.ir = ir;
    }
    if let Some(n) = &u.name {
        let n = n.trim();
        if n.is_empty() {
            return Err(BoardError::invalid("name", "must not be empty"));
        }
        wf.name = n.into();
    }
    if let Some(d) = &u.description {
        wf.description = d.trim().into();
    }
    if let Some(i) = &u.icon {
        wf.icon = Some(i.clone());
    }
    if let Some(l) = &u.layout {
        wf.layout = Some(l.clone());
    }
    let after = serde_json::to_value(&wf.ir).unwrap_or(Value::Null);
    c.execute(
        "UPDATE nbook_board_workflow SET name=?2, description=?3, icon=?4, ir=?5, layout=?6, revision=revision+1, updated_at=?7 WHERE id=?1",
        params![
            id,
            wf.name,
            wf.description,
            wf.icon,
            after.to_string(),
            wf.layout.as_ref().map(Value::to_string),
            now()
        ],
    )?;
    record(c, id, "workflow", actor, Some(&before), Some(&after))?;
    out.text = if moved.is_empty() {
        format!("Updated workflow {id} ({}).", wf.name)
    } else {
        format!(
            "Updated workflow {id} ({}); re-homed {}.",
            wf.name,
            moved.join(", ")
        )
    };
    out.value = json!({"workflowId": id, "rehomed": moved});
    out.touched.push(Touched::Workflow(id.into()));
    Ok(out)
}

/// Delete a custom workflow; its tasks go to the default workflow's entry column, its stored
/// setting values go with it.
pub fn delete(c: &Connection, id: &str, actor: &Actor) -> BoardResult<Outcome> {
    let wf = custom(c, id, "deleted")?;
    let default = builtin_chapter();
    let mut out = Outcome::default();
    let mut moved = Vec::new();
    for mut t in tasks_of(c, id)? {
        t.workflow_id = default.id.clone();
        // Archived stays archived: the column exists in the default workflow too.
        if t.column != super::ARCHIVED {
            t.column = default.entry().to_string();
        }
        super::tasks::save(c, &t)?;
        super::tasks::log_entry(
            c,
            &mut out,
            &t.id,
            &format!(
                "Workflow {id} was deleted: re-homed to {} ({})",
                default.id, t.column
            ),
            &actor.id,
        )?;
        moved.push(t.id.clone());
        out.touched.push(Touched::Task(t.id));
    }
    let before = serde_json::to_value(&wf.ir).unwrap_or(Value::Null);
    c.execute("DELETE FROM nbook_board_workflow WHERE id = ?1", [id])?;
    c.execute(
        "DELETE FROM nbook_board_workflow_settings WHERE workflow_id = ?1",
        [id],
    )?;
    record(c, id, "workflow", actor, Some(&before), None)?;
    out.text = format!(
        "Deleted workflow {id} ({}){}.",
        wf.name,
        if moved.is_empty() {
            String::new()
        } else {
            format!("; re-homed {} to {}", moved.join(", "), default.id)
        }
    );
    out.value = json!({"workflowId": id, "rehomed": moved});
    out.touched.push(Touched::Workflow(id.into()));
    out.touched.push(Touched::WorkflowSettings(id.into()));
    Ok(out)
}

/// Assign workflow `wf_id` to task `task_id`. The task keeps its column when the new
/// workflow has one of that id, else it goes to the new workflow's entry column (choice: the
/// notes do not say).
pub fn select(c: &Connection, wf_id: &str, task_id: &str, actor: &Actor) -> BoardResult<Outcome> {
    let wf = require(c, wf_id)?;
    let mut t = super::tasks::require(c, task_id)?;
    if t.column == super::ARCHIVED {
        return Err(BoardError::Archived { id: t.id });
    }
    if t.workflow_id == wf.id {
        return Err(BoardError::invalid(
            "workflow_id",
            format!("{} already runs {}", t.id, wf.id),
        ));
    }
    let before = json!({"workflowId": t.workflow_id, "column": t.column});
    t.workflow_id = wf.id.clone();
    if wf.column(&t.column).is_none() {
        t.column = wf.entry().to_string();
    }
    super::tasks::save(c, &t)?;
    let after = json!({"workflowId": t.workflow_id, "column": t.column, "taskId": t.id});
    record(c, &wf.id, "selection", actor, Some(&before), Some(&after))?;
    let mut out = Outcome::default();
    super::tasks::log_entry(
        c,
        &mut out,
        &t.id,
        &format!("Workflow {} selected (column {})", wf.id, t.column),
        &actor.id,
    )?;
    out.text = format!(
        "{} now runs workflow {} ({}), in {}.",
        t.id, wf.id, wf.name, t.column
    );
    out.value = json!({"taskId": t.id, "workflowId": wf.id, "column": t.column});
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

/// Write setting values (`null` clears). Every rejection is reported and nothing is stored.
pub fn set_settings(
    c: &Connection,
    id: &str,
    patch: &Map<String, Value>,
    actor: &Actor,
) -> BoardResult<Outcome> {
    let wf = require(c, id)?;
    let rejections = settings::check_patch(&wf.ir.settings, patch);
    if !rejections.is_empty() {
        return Err(BoardError::SettingsRejected {
            workflow_id: wf.id,
            rejections,
        });
    }
    if patch.is_empty() {
        return Err(BoardError::invalid(
            "values",
            "give at least one setting id",
        ));
    }
    let stored = stored_values(c, id)?;
    let next = settings::apply_patch(&stored, patch);
    c.execute(
        "INSERT INTO nbook_board_workflow_settings (workflow_id, \"values\", revision, updated_at) VALUES (?1, ?2, 1, ?3)
         ON CONFLICT (workflow_id) DO UPDATE SET \"values\" = excluded.\"values\", revision = revision + 1, updated_at = excluded.updated_at",
        params![id, Value::Object(next.clone()).to_string(), now()],
    )?;
    record(
        c,
        id,
        "settings",
        actor,
        Some(&Value::Object(stored)),
        Some(&Value::Object(next.clone())),
    )?;
    let r = settings::resolve(&wf.id, &wf.ir.settings, &next);
    Ok(Outcome {
        text: format!("Settings of {id}: {}", Value::Object(r.effective.clone())),
        value: serde_json::to_value(&r).unwrap_or(Value::Null),
        touched: vec![Touched::WorkflowSettings(id.into())],
        ..Outcome::default()
    })
}

/// The snapshot of a stored workflow for the dry-run diff.
pub(crate) fn snapshot(c: &Connection, id: &str) -> BoardResult<Option<Value>> {
    let row: Option<(String, String, Option<String>, String, i64, String)> = c
        .query_row(
            "SELECT name, description, icon, ir, revision, updated_at FROM nbook_board_workflow WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
        )
        .optional()?;
    Ok(row.map(|(name, description, icon, ir, revision, updated)| {
        let ir: Value = serde_json::from_str(&ir).unwrap_or(Value::Null);
        json!({
            "name": name, "description": description, "icon": icon,
            "columns": ir.get("columns").map(|cs| cs.as_array().map(|a| a.iter().filter_map(|c| c.get("id").cloned()).collect::<Vec<_>>()).unwrap_or_default()),
            "nodes": ir.get("nodes").and_then(Value::as_array).map_or(0, Vec::len),
            "settings": ir.get("settings").and_then(Value::as_array).map(|a| a.iter().filter_map(|s| s.get("id").cloned()).collect::<Vec<_>>()),
            "fields": ir.get("fields").and_then(Value::as_array).map(|a| a.iter().filter_map(|s| s.get("id").cloned()).collect::<Vec<_>>()),
            "ir": ir,
            "revision": revision, "updatedAt": updated,
        })
    }))
}

pub(crate) fn settings_snapshot(c: &Connection, id: &str) -> BoardResult<Option<Value>> {
    let row: Option<(String, i64, String)> = c
        .query_row(
            "SELECT \"values\", revision, updated_at FROM nbook_board_workflow_settings WHERE workflow_id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    Ok(row.map(|(values, revision, updated)| {
        let mut m = serde_json::from_str::<Map<String, Value>>(&values).unwrap_or_default();
        m.insert("revision".into(), revision.into());
        m.insert("updatedAt".into(), updated.into());
        Value::Object(m)
    }))
}

/// The Board's columns: the default workflow's, then each custom workflow's columns whose ids
/// it does not have yet, in workflow order (a task shows under its own column id).
pub fn board_columns(c: &Connection) -> BoardResult<Vec<IrColumn>> {
    let mut out: Vec<IrColumn> = Vec::new();
    for wf in list(c)? {
        for col in wf.ir.columns {
            if !out.iter().any(|c| c.id == col.id) {
                out.push(col);
            }
        }
    }
    Ok(out)
}

/// A column whose tasks are finished (Done or Archived, or a custom column with the
/// `complete` or `archived` trait).
pub fn is_finished(col: &IrColumn) -> bool {
    col.has_trait("complete") || col.has_trait("archived")
}
