//! Task operations: create (with duplicate detection), list, search, show, step and field
//! updates, dependencies (cycles refused), the executor's exits (`completed`, `blocked`), the
//! task log, the plan (PROMPT.md), promotion out of Planning and the file scope.
//!
//! Column rules of `builtin:chapter` (our reading of Fusion's default flow): a task is
//! planned in Planning (the hold column: `fn_task_prompt_write` only there), released to
//! Drafting by `fn_task_promote` (needs a plan and every dependency Done), worked step by
//! step in Drafting (`fn_task_update` step status, `fn_task_done`), and `completed` moves it
//! to Review (`awaiting-review`); Done and Archived come from the review and merge (part 2).
//! `fn_task_add_dep` and a `blocked` exit without dependencies send a task back to Planning
//! with status `needs-replan`; a `blocked` exit with dependencies parks it `failed` in place.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde_json::{json, Value};

use super::error::{BoardError, BoardResult};
use super::model::*;
use super::workflow::ir::FieldKind;
use super::workflow::Workflow;
use super::{json_col, now, prompt, scope, FileEffect, Outcome, Touched};
use crate::protocol::TargetState;

const COLS: &str = "id, title, description, column_id, status, priority, workflow_id, dependencies, steps, custom_fields, blocked_by, blocked_reason, file_scope, prompt, summary, revision, created_at, updated_at";

fn from_row(r: &Row) -> rusqlite::Result<(Task, [String; 5])> {
    let raw: [String; 5] = [r.get(7)?, r.get(8)?, r.get(9)?, r.get(10)?, r.get(12)?];
    Ok((
        Task {
            id: r.get(0)?,
            title: r.get(1)?,
            description: r.get(2)?,
            column: r.get(3)?,
            status: r.get(4)?,
            priority: r.get(5)?,
            workflow_id: r.get(6)?,
            dependencies: Vec::new(),
            steps: Vec::new(),
            custom_fields: BTreeMap::new(),
            blocked_by: Vec::new(),
            blocked_reason: r.get(11)?,
            file_scope: Vec::new(),
            prompt: r.get(13)?,
            summary: r.get(14)?,
            revision: r.get(15)?,
            created_at: r.get(16)?,
            updated_at: r.get(17)?,
        },
        raw,
    ))
}

fn finish(pair: (Task, [String; 5])) -> BoardResult<Task> {
    let (mut t, [deps, steps, fields, blocked, scope]) = pair;
    let what = |c: &str| format!("task {} column {c}", t.id);
    t.dependencies = json_col(&what("dependencies"), &deps)?;
    t.steps = json_col(&what("steps"), &steps)?;
    t.custom_fields = json_col(&what("custom_fields"), &fields)?;
    t.blocked_by = json_col(&what("blocked_by"), &blocked)?;
    t.file_scope = json_col(&what("file_scope"), &scope)?;
    Ok(t)
}

/// The task `id`, if there is one.
pub fn load(c: &Connection, id: &str) -> BoardResult<Option<Task>> {
    let row = c
        .query_row(
            &format!("SELECT {COLS} FROM nbook_board_task WHERE id = ?1"),
            [id],
            from_row,
        )
        .optional()?;
    row.map(finish).transpose()
}

/// The task `id`, or [`BoardError::TaskNotFound`].
pub fn require(c: &Connection, id: &str) -> BoardResult<Task> {
    load(c, id)?.ok_or_else(|| BoardError::TaskNotFound { id: id.to_string() })
}

/// Every task in board order (by number), optionally only some columns.
pub fn all(c: &Connection, columns: Option<&[&str]>) -> BoardResult<Vec<Task>> {
    let mut st = c.prepare_cached(&format!("SELECT {COLS} FROM nbook_board_task ORDER BY seq"))?;
    let rows = st.query_map([], from_row)?;
    let mut out = Vec::new();
    for r in rows {
        let t = finish(r?)?;
        if columns.is_none_or(|cs| cs.contains(&t.column.as_str())) {
            out.push(t);
        }
    }
    Ok(out)
}

pub(crate) fn save(c: &Connection, t: &Task) -> BoardResult<()> {
    let enc = |v: &dyn erased::Ser| v.json();
    c.execute(
        "UPDATE nbook_board_task SET title=?2, description=?3, column_id=?4, status=?5, priority=?6,
           workflow_id=?7, dependencies=?8, steps=?9, custom_fields=?10, blocked_by=?11,
           blocked_reason=?12, file_scope=?13, prompt=?14, summary=?15,
           revision=revision+1, updated_at=?16
         WHERE id=?1",
        params![
            t.id,
            t.title,
            t.description,
            t.column,
            t.status,
            t.priority,
            t.workflow_id,
            enc(&t.dependencies),
            enc(&t.steps),
            enc(&t.custom_fields),
            enc(&t.blocked_by),
            t.blocked_reason,
            enc(&t.file_scope),
            t.prompt,
            t.summary,
            now(),
        ],
    )?;
    Ok(())
}

/// JSON text of a column value (these types always serialize).
mod erased {
    pub trait Ser {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Ser for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap_or_else(|_| "null".into())
        }
    }
}

/// Append to the task log (mirrored to agent-log.jsonl as a `status` entry after commit).
pub fn log(
    c: &Connection,
    out: &mut Outcome,
    task: &str,
    action: &str,
    outcome: Option<&str>,
    actor: Option<&str>,
) -> BoardResult<()> {
    let at = now();
    c.execute(
        "INSERT INTO nbook_board_task_log (task_id, at, action, outcome, actor) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![task, at, action, outcome, actor],
    )?;
    let mut entry = json!({"timestamp": at, "type": "status", "text": action});
    if let Some(o) = outcome {
        entry["outcome"] = json!(o);
    }
    if let Some(a) = actor {
        entry["actor"] = json!(a);
    }
    out.files.push(FileEffect::AgentLog {
        task: task.to_string(),
        entry,
    });
    Ok(())
}

/// The task's log, newest last; at most `limit` of the latest entries.
pub fn logs(c: &Connection, task: &str, limit: usize) -> BoardResult<Vec<TaskLogEntry>> {
    let mut st = c.prepare_cached(
        "SELECT at, action, outcome, actor FROM nbook_board_task_log WHERE task_id = ?1 ORDER BY id DESC LIMIT ?2",
    )?;
    let rows = st.query_map(params![task, limit as i64], |r| {
        Ok(TaskLogEntry {
            timestamp: r.get(0)?,
            action: r.get(1)?,
            outcome: r.get(2)?,
            actor: r.get(3)?,
        })
    })?;
    let mut out: Vec<TaskLogEntry> = rows.collect::<Result<_, _>>()?;
    out.reverse();
    Ok(out)
}

fn dependency_graph(c: &Connection) -> BoardResult<HashMap<String, Vec<String>>> {
    let mut st = c.prepare_cached("SELECT id, dependencies FROM nbook_board_task")?;
    let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    let mut g = HashMap::new();
    for r in rows {
        let (id, deps) = r?;
        let deps: Vec<String> = json_col(&format!("task {id} column dependencies"), &deps)?;
        g.insert(id, deps);
    }
    Ok(g)
}

/// `deps` cleaned (trimmed, no duplicates), each an existing task other than `id`, and none
/// leading back to `id` through the dependency graph.
fn check_dependencies(c: &Connection, id: &str, deps: &[String]) -> BoardResult<Vec<String>> {
    let mut clean: Vec<String> = Vec::new();
    for d in deps {
        let d = d.trim().to_string();
        if d.is_empty() {
            return Err(BoardError::invalid(
                "dependencies",
                "a dependency id is empty",
            ));
        }
        if !clean.contains(&d) {
            clean.push(d);
        }
    }
    let mut g = dependency_graph(c)?;
    for d in &clean {
        if d == id {
            return Err(BoardError::SelfDependency { id: id.to_string() });
        }
        if !g.contains_key(d) {
            return Err(BoardError::DependencyNotFound {
                dependency: d.clone(),
            });
        }
    }
    g.insert(id.to_string(), clean.clone());
    // A path from a dependency back to `id` closes a cycle.
    for d in &clean {
        if let Some(path) = path_to(&g, d, id) {
            let mut cycle = vec![id.to_string()];
            cycle.extend(path);
            return Err(BoardError::DependencyCycle { cycle });
        }
    }
    Ok(clean)
}

/// A dependency path from `from` to `to` (both included), depth first.
fn path_to(g: &HashMap<String, Vec<String>>, from: &str, to: &str) -> Option<Vec<String>> {
    let mut seen = HashSet::new();
    let mut stack: Vec<(String, Vec<String>)> = vec![(from.to_string(), vec![from.to_string()])];
    while let Some((node, path)) = stack.pop() {
        if node == to {
            return Some(path);
        }
        if !seen.insert(node.clone()) {
            continue;
        }
        for next in g.get(&node).into_iter().flatten() {
            let mut p = path.clone();
            p.push(next.clone());
            stack.push((next.clone(), p));
        }
    }
    None
}

pub(crate) fn need_column(
    c: &Connection,
    t: &Task,
    action: &'static str,
    allowed: &[&'static str],
) -> BoardResult<()> {
    // `allowed` names lifecycle stages; the task's workflow says which of its columns they
    // are (`super::workflow::lanes`), so the check holds for any workflow's column ids.
    let lanes = super::workflow::lanes_for_task(c, t);
    let stage = lanes.stage(&t.column);
    if stage == Some(ARCHIVED) && !allowed.contains(&ARCHIVED) {
        return Err(BoardError::Archived { id: t.id.clone() });
    }
    if !stage.is_some_and(|s| allowed.contains(&s)) {
        return Err(BoardError::WrongColumn {
            id: t.id.clone(),
            column: t.column.clone(),
            action,
            allowed: allowed
                .iter()
                .map(|s| lanes.column(s).to_string())
                .collect(),
        });
    }
    Ok(())
}

/// The column of lifecycle stage `stage` in the workflow `t` runs.
pub(crate) fn lane(c: &Connection, t: &Task, stage: &str) -> String {
    super::workflow::lanes_for_task(c, t)
        .column(stage)
        .to_string()
}

fn normalized(s: &str) -> String {
    s.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

fn workflow_of(c: &Connection, t: &Task) -> BoardResult<Workflow> {
    super::workflow::for_task(c, t)
}

/// A task-log entry by `actor` (the workflow operations re-home tasks with one).
pub(crate) fn log_entry(
    c: &Connection,
    out: &mut Outcome,
    task: &str,
    action: &str,
    actor: &str,
) -> BoardResult<()> {
    log(c, out, task, action, None, Some(actor))
}

/// A new task, as `fn_task_create` and `nbook board create` give it.
#[derive(Clone, Debug, Default)]
pub struct NewTask {
    pub description: String,
    /// Default: the description's first line, cut to 80 characters.
    pub title: Option<String>,
    pub dependencies: Vec<String>,
    pub priority: Option<Priority>,
    pub workflow_id: Option<String>,
    pub actor: Option<String>,
}

const MAX_DESCRIPTION: usize = 20_000;

/// Create a task in its workflow's entry column — unless a task that is not archived has the
/// same description (case and spacing aside): then that task is returned with
/// `wasDuplicate: true` and the request is logged on it, so a retried or repeated create
/// links instead of creating twice.
pub fn create(c: &Connection, new: &NewTask) -> BoardResult<Outcome> {
    let description = new.description.trim();
    if description.is_empty() {
        return Err(BoardError::invalid("description", "must not be empty"));
    }
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(BoardError::invalid(
            "description",
            format!("at most {MAX_DESCRIPTION} characters"),
        ));
    }
    let wf_id = new.workflow_id.as_deref().unwrap_or(DEFAULT_WORKFLOW);
    let wf = super::workflow::require(c, wf_id)?;
    let norm = normalized(description);
    let mut out = Outcome::default();
    let dup: Option<String> = {
        let mut st = c.prepare_cached(
            "SELECT id, description FROM nbook_board_task WHERE column_id != ?1 ORDER BY seq",
        )?;
        let mut rows = st.query([ARCHIVED])?;
        let mut found = None;
        while let Some(r) = rows.next()? {
            let d: String = r.get(1)?;
            if normalized(&d) == norm {
                found = Some(r.get(0)?);
                break;
            }
        }
        found
    };
    out.targets.push(TargetState {
        key: "board/duplicate-of".into(),
        fingerprint: dup.clone().unwrap_or_else(|| "none".into()),
    });
    if let Some(id) = dup {
        log(
            c,
            &mut out,
            &id,
            "Duplicate create request linked to this task",
            None,
            new.actor.as_deref(),
        )?;
        let t = require(c, &id)?;
        out.text = format!(
            "{id} already describes this work ({}); linked to it instead of creating a duplicate.",
            t.title
        );
        out.value = json!({"taskId": id, "wasDuplicate": true, "task": t.summary_line()});
        out.touched.push(Touched::Task(id));
        return Ok(out);
    }
    // A new task has no dependants yet, so no cycle can close: "" stands for it (an empty id is refused).
    let id_probe = "";
    let deps = check_dependencies(c, id_probe, &new.dependencies)?;
    let seq: i64 = c.query_row(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM nbook_board_task",
        [],
        |r| r.get(0),
    )?;
    let id = format!("NB-{seq:03}");
    let title = match new.title.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => super::snippet(t, 120),
        _ => super::snippet(description.lines().next().unwrap_or(description), 80),
    };
    let at = now();
    c.execute(
        "INSERT INTO nbook_board_task (id, seq, title, description, column_id, status, priority, workflow_id, dependencies, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, '', ?6, ?7, ?8, ?9, ?9)",
        params![
            id,
            seq,
            title,
            description,
            wf.entry(),
            new.priority.unwrap_or(Priority::Normal).as_str(),
            wf.id,
            serde_json::to_string(&deps).unwrap_or_else(|_| "[]".into()),
            at
        ],
    )?;
    log(c, &mut out, &id, "Task created", None, new.actor.as_deref())?;
    let t = require(c, &id)?;
    out.text = format!("Created {id}: {title} (in {}).", wf.entry());
    out.value = json!({"taskId": id, "wasDuplicate": false, "task": t.summary_line()});
    out.touched.push(Touched::Task(id));
    Ok(out)
}

/// Most cards a list shows per column (the rest are counted).
pub const LIST_CAP: usize = 200;

/// Active tasks (not Done, not Archived) grouped by column: `{columns: [{id, name, count,
/// tasks}]}`.
pub fn list(c: &Connection) -> BoardResult<(String, Value)> {
    let columns = super::workflow::board_columns(c)?;
    let active: Vec<&str> = columns
        .iter()
        .filter(|c| !super::workflow::is_finished(c))
        .map(|c| c.id.as_str())
        .collect();
    let tasks = all(c, Some(&active))?;
    let mut text = String::new();
    let mut cols = Vec::new();
    for col in columns.iter().filter(|c| !super::workflow::is_finished(c)) {
        let here: Vec<&Task> = tasks.iter().filter(|t| t.column == col.id).collect();
        text.push_str(&format!("## {} ({})\n", col.name, here.len()));
        for t in here.iter().take(LIST_CAP) {
            text.push_str(&card_line(t));
        }
        if here.len() > LIST_CAP {
            text.push_str(&format!(
                "… and {} more (fn_task_search narrows)\n",
                here.len() - LIST_CAP
            ));
        }
        let shown: Vec<TaskSummary> = here
            .iter()
            .take(LIST_CAP)
            .map(|t| t.summary_line())
            .collect();
        cols.push(json!({"id": col.id, "name": col.name, "count": here.len(), "tasks": shown}));
    }
    if tasks.is_empty() {
        text.push_str("No active tasks.\n");
    }
    Ok((text, json!({"columns": cols})))
}

fn card_line(t: &Task) -> String {
    let (d, n) = t.progress();
    let status = if t.status.is_empty() {
        String::new()
    } else {
        format!(" [{}]", t.status)
    };
    format!(
        "- {} {}{} ({} steps {d}/{n}, {})\n",
        t.id, t.title, status, t.column, t.priority
    )
}

/// Search options (`fn_task_search`).
#[derive(Clone, Debug)]
pub struct Search {
    pub query: String,
    pub limit: usize,
    pub include_done: bool,
    pub include_archived: bool,
}

/// Tasks whose id, title or description contain every word of the query (case-insensitive),
/// newest first.
pub fn search(c: &Connection, s: &Search) -> BoardResult<Vec<TaskSummary>> {
    let words: Vec<String> = s
        .query
        .split_whitespace()
        .map(|w| w.to_lowercase())
        .collect();
    if words.is_empty() {
        return Err(BoardError::invalid(
            "query",
            "must contain at least one character",
        ));
    }
    let mut sql = format!("SELECT {COLS} FROM nbook_board_task WHERE 1");
    let mut args: Vec<String> = Vec::new();
    if !s.include_done {
        sql.push_str(" AND column_id != 'done'");
    }
    if !s.include_archived {
        sql.push_str(" AND column_id != 'archived'");
    }
    for w in &words {
        args.push(format!(
            "%{}%",
            w.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        ));
        sql.push_str(&format!(
            " AND (id || ' ' || title || ' ' || description) LIKE ?{} ESCAPE '\\'",
            args.len()
        ));
    }
    sql.push_str(&format!(" ORDER BY seq DESC LIMIT {}", s.limit));
    let mut st = c.prepare_cached(&sql)?;
    let rows = st.query_map(rusqlite::params_from_iter(args.iter()), from_row)?;
    let mut out = Vec::new();
    for r in rows {
        let t = finish(r?)?;
        // LIKE folds ASCII only; check the other scripts' case here.
        let hay = format!("{} {} {}", t.id, t.title, t.description).to_lowercase();
        if words.iter().all(|w| hay.contains(w.as_str())) {
            out.push(t.summary_line());
        }
    }
    Ok(out)
}

/// `fn_task_update`'s changes.
#[derive(Clone, Debug, Default)]
pub struct Update {
    pub step: Option<u64>,
    pub status: Option<StepStatus>,
    pub dependencies: Option<Vec<String>>,
    pub custom_fields: Option<BTreeMap<String, Value>>,
    pub actor: Option<String>,
}

pub fn update(c: &Connection, id: &str, u: &Update) -> BoardResult<Outcome> {
    let mut t = require(c, id)?;
    if u.step.is_none()
        && u.status.is_none()
        && u.dependencies.is_none()
        && u.custom_fields.is_none()
    {
        return Err(BoardError::invalid(
            "",
            "nothing to update: give step + status, dependencies or custom_fields",
        ));
    }
    let mut said = Vec::new();
    let mut out = Outcome::default();
    match (u.step, u.status) {
        (None, None) => need_column(c, &t, "fn_task_update", &[PLANNING, DRAFTING, REVIEW])?,
        (Some(_), None) => {
            return Err(BoardError::invalid(
                "status",
                "a step update needs a status",
            ))
        }
        (None, Some(_)) => {
            return Err(BoardError::invalid(
                "step",
                "a status needs the step it is for (0 = Preflight)",
            ))
        }
        (Some(n), Some(st)) => {
            need_column(c, &t, "a step status update", &[DRAFTING])?;
            if t.steps.is_empty() {
                return Err(BoardError::NoSteps { id: t.id.clone() });
            }
            let count = t.steps.len();
            let step = usize::try_from(n)
                .ok()
                .and_then(|i| t.steps.get_mut(i))
                .ok_or(BoardError::StepOutOfRange { step: n, count })?;
            step.status = st;
            let name = step.name.clone();
            let (d, total) = t.progress();
            said.push(format!(
                "Step {n} ({name}) → {}. Progress {d}/{total}",
                st.as_str()
            ));
        }
    }
    if let Some(deps) = &u.dependencies {
        t.dependencies = check_dependencies(c, &t.id, deps)?;
        said.push(format!("Dependencies: {}", list_or_none(&t.dependencies)));
    }
    if let Some(fields) = &u.custom_fields {
        let wf = workflow_of(c, &t)?;
        for (k, v) in fields {
            check_field(&wf, k, v)?;
            if v.is_null() {
                t.custom_fields.remove(k);
            } else {
                t.custom_fields.insert(k.clone(), v.clone());
            }
        }
        said.push(format!(
            "Custom fields: {}",
            serde_json::to_string(&t.custom_fields).unwrap_or_default()
        ));
    }
    save(c, &t)?;
    let text = said.join("\n");
    log(c, &mut out, &t.id, &text, None, u.actor.as_deref())?;
    let t = require(c, &t.id)?;
    out.value = json!({"taskId": t.id, "steps": t.steps, "dependencies": t.dependencies, "customFields": t.custom_fields, "progress": t.summary_line().progress});
    out.text = text;
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// Fusion's custom-field validation (fail-fast): `no-fields-defined`, `unknown-field`,
/// `type-mismatch`, `enum-violation`; `null` clears and is always accepted for a declared
/// field. The declarations are the task's workflow's `fields`.
fn check_field(wf: &Workflow, id: &str, v: &Value) -> BoardResult<()> {
    let reject = |code, detail: String| {
        Err(BoardError::CustomField {
            field: id.to_string(),
            code,
            detail,
        })
    };
    let fields = wf.fields();
    if fields.is_empty() {
        return reject(
            "no-fields-defined",
            format!("workflow {} declares no custom fields", wf.id),
        );
    }
    let Some(def) = fields.iter().find(|f| f.id == id) else {
        let known: Vec<&str> = fields.iter().map(|f| f.id.as_str()).collect();
        return reject(
            "unknown-field",
            format!("workflow {} declares: {}", wf.id, known.join(", ")),
        );
    };
    if v.is_null() {
        return Ok(());
    }
    let options: Vec<&str> = def.options.iter().map(|o| o.value.as_str()).collect();
    let ok = match def.kind {
        FieldKind::String | FieldKind::Text | FieldKind::Date | FieldKind::Url => v.is_string(),
        FieldKind::Number => v.as_f64().is_some_and(f64::is_finite),
        FieldKind::Boolean => v.is_boolean(),
        FieldKind::Enum => {
            let Some(s) = v.as_str() else {
                return reject(
                    "type-mismatch",
                    "expected one of the options as a string".into(),
                );
            };
            if !options.contains(&s) {
                return reject(
                    "enum-violation",
                    format!("'{s}' is not one of: {}", options.join(", ")),
                );
            }
            true
        }
        FieldKind::MultiEnum => {
            let Some(items) = v.as_array() else {
                return reject("type-mismatch", "expected a list of options".into());
            };
            for s in items {
                let Some(s) = s.as_str().filter(|s| options.contains(s)) else {
                    return reject(
                        "enum-violation",
                        format!("{s} is not one of: {}", options.join(", ")),
                    );
                };
                let _ = s;
            }
            true
        }
    };
    if !ok {
        return reject(
            "type-mismatch",
            format!("expected a {} value", def.kind.as_str()),
        );
    }
    Ok(())
}

/// `fn_task_add_dep`: needs `confirm`; the task then stops and goes back to Planning to be
/// replanned.
pub fn add_dependency(
    c: &Connection,
    id: &str,
    dep: &str,
    confirm: bool,
    actor: Option<&str>,
) -> BoardResult<Outcome> {
    let mut t = require(c, id)?;
    need_column(c, &t, "fn_task_add_dep", &[PLANNING, DRAFTING])?;
    let dep = dep.trim();
    if !confirm {
        return Err(BoardError::ConfirmRequired);
    }
    if t.dependencies.iter().any(|d| d == dep) {
        return Err(BoardError::invalid(
            "task_id",
            format!("{} already depends on {dep}", t.id),
        ));
    }
    let mut deps = t.dependencies.clone();
    deps.push(dep.to_string());
    t.dependencies = check_dependencies(c, &t.id, &deps)?;
    t.column = lane(c, &t, PLANNING);
    t.status = "needs-replan".into();
    save(c, &t)?;
    let mut out = Outcome::default();
    let text = format!("{} now depends on {dep}. Execution stops here: the task is back in Planning to be replanned. End your turn.", t.id);
    log(
        c,
        &mut out,
        &t.id,
        &format!("Dependency {dep} added; task sent back to planning"),
        Some("needs-replan"),
        actor,
    )?;
    out.value = json!({"taskId": t.id, "dependencies": t.dependencies, "column": t.column, "status": "needs-replan"});
    out.text = text;
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DoneOutcome {
    Completed,
    Blocked,
}

/// `fn_task_done`'s arguments.
#[derive(Clone, Debug)]
pub struct Done {
    pub outcome: DoneOutcome,
    pub summary: Option<String>,
    pub blocked_by: Vec<String>,
    pub reason: Option<String>,
    pub actor: Option<String>,
}

/// End the executor's work on a task. `blocked` is checked first and never claims completion;
/// `completed` needs a plan and every dependency Done, marks the remaining steps done and
/// moves the task to Review.
pub fn done(c: &Connection, id: &str, d: &Done) -> BoardResult<Outcome> {
    let mut t = require(c, id)?;
    let mut out = Outcome::default();
    match d.outcome {
        DoneOutcome::Blocked => {
            let reason = d.reason.as_deref().map(str::trim).unwrap_or("");
            if reason.is_empty() {
                return Err(BoardError::BlockedWithoutReason);
            }
            need_column(c, &t, "fn_task_done", &[DRAFTING])?;
            let mut deps = t.dependencies.clone();
            deps.extend(d.blocked_by.iter().cloned());
            t.dependencies = check_dependencies(c, &t.id, &deps)?;
            t.blocked_by = t.dependencies.clone();
            let parked = format!("BLOCKED: {reason}");
            t.blocked_reason = Some(parked.clone());
            if t.dependencies.is_empty() {
                t.status = "needs-replan".into();
                t.column = lane(c, &t, PLANNING);
            } else {
                t.status = "failed".into();
            }
            if let Some(s) = &d.summary {
                t.summary = Some(s.clone());
            }
            save(c, &t)?;
            log(
                c,
                &mut out,
                &t.id,
                &parked,
                Some("blocked"),
                d.actor.as_deref(),
            )?;
            out.text = format!(
                "{} parked ({}): {parked}. Nothing was marked complete; steps are kept.{}",
                t.id,
                t.status,
                if t.blocked_by.is_empty() {
                    String::new()
                } else {
                    format!(" Blocked by {}.", t.blocked_by.join(", "))
                }
            );
            out.value = json!({"taskId": t.id, "outcome": "blocked", "status": t.status, "column": t.column, "blockedBy": t.blocked_by, "reason": parked});
        }
        DoneOutcome::Completed => {
            need_column(c, &t, "fn_task_done", &[DRAFTING])?;
            if t.prompt.is_none() {
                return Err(BoardError::Unplanned { id: t.id.clone() });
            }
            if t.steps.is_empty() {
                return Err(BoardError::NoSteps { id: t.id.clone() });
            }
            let pending = unmet(c, &t)?;
            if !pending.is_empty() {
                return Err(BoardError::DependenciesUnmet {
                    id: t.id.clone(),
                    pending,
                });
            }
            for s in &mut t.steps {
                if !s.status.finished() {
                    s.status = StepStatus::Done;
                }
            }
            t.column = lane(c, &t, REVIEW);
            t.status = "awaiting-review".into();
            t.blocked_by.clear();
            t.blocked_reason = None;
            t.summary = d.summary.clone().or(t.summary.take());
            save(c, &t)?;
            log(
                c,
                &mut out,
                &t.id,
                "Task completed; sent to review",
                Some("completed"),
                d.actor.as_deref(),
            )?;
            let (n, total) = t.progress();
            out.text = format!(
                "{} completed: {n}/{total} steps done; it goes to Review.",
                t.id
            );
            out.value = json!({"taskId": t.id, "outcome": "completed", "column": t.column, "status": t.status, "progress": format!("{n}/{total}")});
        }
    }
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

/// The task's dependencies that are not Done (a missing one counts as not done).
fn unmet(c: &Connection, t: &Task) -> BoardResult<Vec<String>> {
    let mut pending = Vec::new();
    for d in &t.dependencies {
        // Done is the dependency's own workflow's done (or archived) column.
        let finished = load(c, d)?
            .is_some_and(|dep| super::workflow::lanes_for_task(c, &dep).finished(&dep.column));
        if !finished {
            pending.push(d.clone());
        }
    }
    Ok(pending)
}

/// `fn_task_log`: one entry in the task's log.
pub fn add_log(
    c: &Connection,
    id: &str,
    message: &str,
    outcome: Option<&str>,
    actor: Option<&str>,
) -> BoardResult<Outcome> {
    let t = require(c, id)?;
    if super::workflow::lanes_for_task(c, &t).archived == t.column {
        return Err(BoardError::Archived { id: t.id });
    }
    let message = message.trim();
    if message.is_empty() {
        return Err(BoardError::invalid("message", "must not be empty"));
    }
    let mut out = Outcome::default();
    log(c, &mut out, &t.id, message, outcome, actor)?;
    out.text = format!("Logged: {message}");
    out.value = json!({"taskId": t.id, "message": message, "outcome": outcome});
    // The task row is unchanged; its log grew.
    Ok(out)
}

/// `fn_task_prompt_write`: replace the plan. Only in Planning; the title follows the header,
/// the steps follow `## Steps` (a step keeps its status when its number and title are
/// unchanged), the file scope follows `## File Scope`. A book outside a series workspace
/// (see [`write_prompt_in_series`]).
pub fn write_prompt(
    c: &Connection,
    id: &str,
    content: &str,
    actor: Option<&str>,
) -> BoardResult<Outcome> {
    write_prompt_in_series(c, id, content, None, actor)
}

/// [`write_prompt`] for a book of `series` (`None`: no series): an optional
/// `## Repository Scope` sets the task's declared repository scope
/// (`super::repository_scope`); a book the series does not have, or the section outside
/// workspace mode, is a `PROMPT_INVALID` of that section like any other plan problem.
pub fn write_prompt_in_series(
    c: &Connection,
    id: &str,
    content: &str,
    series: Option<&super::repository_scope::SeriesBooks>,
    actor: Option<&str>,
) -> BoardResult<Outcome> {
    let mut t = require(c, id)?;
    need_column(c, &t, "fn_task_prompt_write", &[PLANNING])?;
    let parsed = prompt::validate(&t.id, content)?;
    let declared = match &parsed.repository_scope {
        None => None,
        Some(names) => Some(
            super::repository_scope::check_declared(
                series,
                names,
                "this book's project.yaml lists no other books under `series:`",
            )
            .map_err(|e| BoardError::PromptInvalid {
                section: "## Repository Scope".into(),
                message: match e {
                    BoardError::WorkspaceModeRequired { .. } => "this book is not in series workspace mode (its project.yaml lists no other books under `series:`); leave the section out".into(),
                    other => other.to_string(),
                },
            })?,
        ),
    };
    let steps: Vec<Step> = parsed
        .steps
        .iter()
        .enumerate()
        .map(|(i, name)| Step {
            name: name.clone(),
            status: t
                .steps
                .get(i)
                .filter(|s| &s.name == name)
                .map(|s| s.status)
                .unwrap_or(StepStatus::Pending),
        })
        .collect();
    let mut text = content.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    t.title = parsed.title;
    t.steps = steps;
    t.file_scope = parsed.file_scope;
    t.prompt = Some(text.clone());
    if t.status == "needs-replan" {
        t.status.clear();
    }
    save(c, &t)?;
    let mut out = Outcome::default();
    log(
        c,
        &mut out,
        &t.id,
        &format!("PROMPT.md written ({} steps)", t.steps.len()),
        None,
        actor,
    )?;
    if let Some(books) = &declared {
        super::repository_scope::declare(c, &mut out, &t.id, books, "prompt", actor)?;
    }
    out.files.push(FileEffect::Prompt {
        task: t.id.clone(),
        content: text,
    });
    out.text = format!(
        "PROMPT.md of {} saved: {} steps, file scope {}.",
        t.id,
        t.steps.len(),
        t.file_scope.join(", ")
    );
    out.value = json!({"taskId": t.id, "steps": t.steps, "fileScope": t.file_scope});
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

/// `fn_task_promote`: release a task from Planning (the hold column) to Drafting. Needs a plan
/// (`force` waives that, and only that), every dependency Done and, when its workflow has
/// `requirePlanApproval`, the author's approval (`super::plan_approval`).
pub fn promote(c: &Connection, id: &str, force: bool, actor: Option<&str>) -> BoardResult<Outcome> {
    let mut t = require(c, id)?;
    need_column(c, &t, "fn_task_promote", &[PLANNING])?;
    if !force && (t.prompt.is_none() || t.steps.is_empty()) {
        return Err(BoardError::Unplanned { id: t.id.clone() });
    }
    // The author's approval is never waived (`force` waives only the plan check).
    if t.status != super::plan_approval::APPROVED && super::plan_approval::required(c, &t) {
        return Err(BoardError::PlanNotApproved { id: t.id.clone() });
    }
    let pending = unmet(c, &t)?;
    if !pending.is_empty() {
        return Err(BoardError::DependenciesUnmet {
            id: t.id.clone(),
            pending,
        });
    }
    t.column = lane(c, &t, DRAFTING);
    t.status.clear();
    t.blocked_reason = None;
    t.blocked_by.clear();
    save(c, &t)?;
    let mut out = Outcome::default();
    log(
        c,
        &mut out,
        &t.id,
        "Promoted from planning to drafting",
        None,
        actor,
    )?;
    out.text = format!("{} promoted to Drafting.", t.id);
    out.value = json!({"taskId": t.id, "column": t.column});
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

/// `fn_task_file_scope_add`: extend the declared file scope (and PROMPT.md's section).
pub fn add_file_scope(
    c: &Connection,
    id: &str,
    files: &[String],
    reason: Option<&str>,
    actor: Option<&str>,
) -> BoardResult<Outcome> {
    let mut t = require(c, id)?;
    need_column(
        c,
        &t,
        "fn_task_file_scope_add",
        &[PLANNING, DRAFTING, REVIEW],
    )?;
    if files.is_empty() {
        return Err(BoardError::invalid(
            "files",
            "give at least one path or glob",
        ));
    }
    let mut added = Vec::new();
    for f in files {
        let e = scope::check_entry(f)?;
        if !t.file_scope.contains(&e) && !added.contains(&e) {
            added.push(e);
        }
    }
    let mut out = Outcome::default();
    if added.is_empty() {
        out.text = format!(
            "{}'s file scope already holds these entries; nothing changed.",
            t.id
        );
        out.value = json!({"taskId": t.id, "added": [], "fileScope": t.file_scope});
        return Ok(out);
    }
    t.file_scope.extend(added.iter().cloned());
    if let Some(p) = &t.prompt {
        let text = prompt::add_file_scope(p, &added);
        out.files.push(FileEffect::Prompt {
            task: t.id.clone(),
            content: text.clone(),
        });
        t.prompt = Some(text);
    }
    save(c, &t)?;
    let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
    log(
        c,
        &mut out,
        &t.id,
        &format!("File scope extended: {}{why}", added.join(", ")),
        None,
        actor,
    )?;
    out.text = format!("Added to {}'s file scope: {}.", t.id, added.join(", "));
    out.value = json!({"taskId": t.id, "added": added, "fileScope": t.file_scope});
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

/// Move a task to another column of its workflow (the author's move from the Board).
pub fn move_to(
    c: &Connection,
    id: &str,
    column: &str,
    actor: Option<&str>,
) -> BoardResult<Outcome> {
    let mut t = require(c, id)?;
    let wf = workflow_of(c, &t)?;
    let col = wf.column(column).ok_or_else(|| {
        BoardError::invalid(
            "column",
            format!("workflow {} has no column {column}", wf.id),
        )
    })?;
    if t.column == col.id {
        return Err(BoardError::invalid(
            "column",
            format!("{} is already in {}", t.id, col.name),
        ));
    }
    let (col_id, col_name) = (col.id.clone(), col.name.clone());
    t.column = col_id.clone();
    save(c, &t)?;
    let mut out = Outcome::default();
    log(
        c,
        &mut out,
        &t.id,
        &format!("Moved to {col_name}"),
        None,
        actor,
    )?;
    if wf.column(&col_id).is_some_and(|c| c.has_trait("archived")) || col_id == ARCHIVED {
        out.files
            .push(FileEffect::RetireDraft { task: t.id.clone() });
    }
    out.text = format!("{} moved to {col_name}.", t.id);
    out.value = json!({"taskId": t.id, "column": col_id});
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

/// Pause or resume a task (the author's `p` on the Board): a paused task keeps its column and
/// steps; its sub-status is `paused` so the scheduler leaves it alone. Pausing a Done or
/// Archived task, pausing a paused one or resuming one that is not paused is a typed error.
pub fn set_paused(
    c: &Connection,
    id: &str,
    paused: bool,
    actor: Option<&str>,
) -> BoardResult<Outcome> {
    let mut t = require(c, id)?;
    need_column(
        c,
        &t,
        if paused { "pause" } else { "resume" },
        &[PLANNING, DRAFTING, REVIEW],
    )?;
    let is_paused = t.status == PAUSED;
    if is_paused == paused {
        return Err(BoardError::invalid(
            "paused",
            if paused {
                format!("{} is already paused", t.id)
            } else {
                format!("{} is not paused", t.id)
            },
        ));
    }
    t.status = if paused { PAUSED.into() } else { String::new() };
    save(c, &t)?;
    let mut out = Outcome::default();
    let action = if paused { "Paused" } else { "Resumed" };
    log(c, &mut out, &t.id, action, None, actor)?;
    out.text = format!("{} {}.", t.id, action.to_lowercase());
    out.value = json!({"taskId": t.id, "paused": paused, "column": t.column});
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

/// A stage move of the scheduler (`crate::runner`): from the column it saw to `column` with
/// sub-status `status`, with one task-log entry (`why`, `outcome`) by `actor`.
#[derive(Clone, Copy, Debug)]
pub struct Stage<'a> {
    pub from: &'a str,
    pub column: &'a str,
    pub status: &'a str,
    pub why: &'a str,
    pub outcome: Option<&'a str>,
    pub actor: &'a str,
}

/// Move a task to its next lifecycle stage. A task that is no longer in `from` (the author
/// moved it meanwhile) is left alone: a typed error, nothing changed.
pub fn set_stage(c: &Connection, id: &str, s: &Stage) -> BoardResult<Outcome> {
    let mut t = require(c, id)?;
    let wf = workflow_of(c, &t)?;
    let col = wf.column(s.column).ok_or_else(|| {
        BoardError::invalid(
            "column",
            format!("workflow {} has no column {}", wf.id, s.column),
        )
    })?;
    if t.column != s.from {
        return Err(BoardError::WrongColumn {
            id: t.id.clone(),
            column: t.column.clone(),
            action: "the scheduler's next stage",
            allowed: vec![s.from.to_string()],
        });
    }
    t.column = col.id.clone();
    t.status = s.status.to_string();
    save(c, &t)?;
    let mut out = Outcome::default();
    log(c, &mut out, &t.id, s.why, s.outcome, Some(s.actor))?;
    out.text = s.why.to_string();
    out.value = json!({"taskId": t.id, "column": t.column, "status": s.status});
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

/// Task-log entries whose outcome is one of `outcomes`, oldest first (the scheduler counts
/// review verdicts this way and reads the latest notes).
pub fn logs_with_outcome(
    c: &Connection,
    task: &str,
    outcomes: &[&str],
) -> BoardResult<Vec<TaskLogEntry>> {
    Ok(logs(c, task, usize::MAX >> 1)?
        .into_iter()
        .filter(|e| e.outcome.as_deref().is_some_and(|o| outcomes.contains(&o)))
        .collect())
}
