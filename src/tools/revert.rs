//! `revert_change`: undo one recorded change of the change history (`store::history`) — the
//! author's tool (declared author-only: the engine refuses it for every agent), called from the
//! History view as a change of its own, so the revert is logged, recorded and undoable in turn.
//!
//! Exact or not at all. Files are written back to their recorded bytes (a deleted file is
//! re-created, a created one removed, a move undone — all files or none, through the commit
//! journal), and only when each is still byte-identical to what the change left. Database rows
//! are restored by the inverse of the changesets the change committed, applied with the
//! changeset conflict check, so a row that differs from what the change left stops the revert.
//! A later recorded change that touched the same target refuses the revert with the list of
//! those changes (`details.code = "LATER_CHANGES"`, `details.plan`: every entry to revert,
//! newest first), so the author can revert them all in order.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::engine::tool::{Domain, Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{
    ChangeKind, FieldChange, FileChange, Preview, PreviewBody, RecordChange, TargetState,
};
use crate::store::changeset::{self, Changeset, Op};
use crate::store::history::{self, Entry, History, HistoryError};
use crate::tools::patch::{self, PlannedFile, PlannedKind};
use crate::tools::preview_diff::bounded_diff;

pub struct RevertChange;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevertArgs {
    /// The history entry to revert (its `#` number in the History view).
    #[schemars(range(min = 1))]
    pub entry: i64,
}

fn store(ctx: &ToolCtx) -> History {
    History::for_database(&ctx.workspace.db_path())
}

fn hist_err(e: HistoryError) -> ToolError {
    ToolError::failed(format!("{e}; nothing was reverted"))
}

/// One file to put back: its path, the bytes it must have now, and the bytes to restore.
struct FileBack {
    path: String,
    now: Option<String>,
    back: Option<String>,
}

/// A revert worked out against the project as it is now.
struct Plan {
    entry: Entry,
    files: Vec<FileBack>,
    /// The inverse changesets, in the order to apply them (newest change first).
    inverse: Vec<Changeset>,
}

fn text_blob(h: &History, hash: &Option<String>, path: &str) -> Result<Option<String>, ToolError> {
    match hash {
        None => Ok(None),
        Some(k) => {
            let bytes = h.blob(k).map_err(hist_err)?;
            String::from_utf8(bytes).map(Some).map_err(|_| {
                ToolError::failed(format!(
                    "{path} was not UTF-8 text; the file tools restore text only. Nothing was reverted."
                ))
            })
        }
    }
}

fn describe(e: &Entry) -> String {
    let at = e.at.chars().take(16).collect::<String>().replace('T', " ");
    format!(
        "#{} {} by {} in session {} at {at}",
        e.id, e.new.summary, e.new.profile, e.new.session_id
    )
}

/// Check that entry `id` can be reverted exactly now, and work out how.
fn plan(ctx: &ToolCtx, id: i64) -> Result<Plan, ToolError> {
    let h = store(ctx);
    let entry = h.get(id).map_err(hist_err)?;
    if let Some(why) = &entry.new.not_revertible {
        return Err(ToolError::failed(format!(
            "change #{id} ({}) cannot be reverted: {why}. Nothing was reverted.",
            entry.new.summary
        )));
    }
    if h.is_reverted(id).map_err(hist_err)? {
        let by = entry.reverted_by.unwrap_or_default();
        return Err(ToolError::failed(format!(
            "change #{id} was already reverted by #{by}; revert #{by} to bring it back. Nothing was reverted."
        )));
    }
    let blocking = h.blocking(id).map_err(hist_err)?;
    if !blocking.is_empty() {
        let plan = h.revert_plan(id).map_err(hist_err)?;
        let list: Vec<String> = blocking.iter().map(describe).collect();
        return Err(ToolError::Coded {
            message: format!(
                "change #{id} cannot be reverted on its own: {} later change(s) touched the same target: {}. Revert them first, newest first ({}), or revert all {} together from the History view. Nothing was reverted.",
                blocking.len(),
                list.join("; "),
                plan.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(", "),
                plan.len()
            ),
            details: json!({
                "code": "LATER_CHANGES",
                "entry": id,
                "blocking": blocking.iter().map(|e| e.id).collect::<Vec<_>>(),
                "plan": plan,
            }),
        });
    }
    let mut files = Vec::new();
    for f in &entry.new.files {
        let now = ctx
            .workspace
            .target(&f.path)
            .map_err(|e| ToolError::failed(format!("{e}; nothing was reverted")))?
            .read_bytes()
            .map_err(|e| {
                ToolError::failed(format!("cannot read {}: {e}; nothing was reverted", f.path))
            })?;
        if now.as_deref().map(history::hash) != f.after {
            let what = match (&f.after, &now) {
                (None, Some(_)) => "exists again",
                (Some(_), None) => "was deleted",
                _ => "was changed",
            };
            return Err(ToolError::Stale(format!(
                "{} {what} since change #{id}, by something the history did not record (another program or an edit outside nbook); reverting would not restore it exactly. Nothing was reverted.",
                f.path
            )));
        }
        files.push(FileBack {
            path: f.path.clone(),
            now: text_blob(&h, &f.after, &f.path)?,
            back: text_blob(&h, &f.before, &f.path)?,
        });
    }
    let mut inverse = Vec::new();
    for k in entry.new.changesets.iter().rev() {
        let cs = Changeset::from_bytes(h.blob(k).map_err(hist_err)?);
        inverse.push(
            cs.invert()
                .map_err(|e| ToolError::failed(format!("{e}; nothing was reverted")))?,
        );
    }
    Ok(Plan {
        entry,
        files,
        inverse,
    })
}

fn sql_json(v: &Option<rusqlite::types::Value>) -> Value {
    use rusqlite::types::Value as V;
    match v {
        None | Some(V::Null) => Value::Null,
        Some(V::Integer(i)) => json!(i),
        Some(V::Real(f)) => json!(f),
        Some(V::Text(t)) => json!(t),
        Some(V::Blob(b)) => json!(format!("<blob {} bytes>", b.len())),
    }
}

/// The rows the inverse changesets restore, as record changes (before = now, after = restored).
fn row_changes(ctx: &ToolCtx, inverse: &[Changeset]) -> Result<Vec<RecordChange>, ToolError> {
    let conn = crate::store::open_read_only(&ctx.workspace.db_path())
        .map_err(|e| ToolError::failed(format!("{e}; nothing was reverted")))?;
    let mut cols_of: Vec<(String, Vec<String>)> = Vec::new();
    let mut out = Vec::new();
    for cs in inverse {
        let rows = cs
            .rows()
            .map_err(|e| ToolError::failed(format!("{e}; nothing was reverted")))?;
        for r in rows {
            let cols = match cols_of.iter().find(|(t, _)| *t == r.table) {
                Some((_, c)) => c.clone(),
                None => {
                    let c: Vec<String> = conn
                        .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
                        .and_then(|mut s| {
                            s.query_map([&r.table], |row| row.get::<_, String>(0))?
                                .collect::<rusqlite::Result<Vec<_>>>()
                        })
                        .map_err(|e| {
                            ToolError::failed(format!("cannot read the table {}: {e}", r.table))
                        })?;
                    cols_of.push((r.table.clone(), c.clone()));
                    c
                }
            };
            let action = match r.op {
                Op::Insert => "re-create",
                Op::Delete => "remove",
                Op::Update => "restore",
            };
            let fields = cols
                .iter()
                .enumerate()
                .filter_map(|(i, name)| {
                    let old = r.old.get(i).cloned().flatten();
                    let new = r.new.get(i).cloned().flatten();
                    let shown = match r.op {
                        Op::Update => new.is_some(),
                        Op::Insert => new.is_some(),
                        Op::Delete => old.is_some(),
                    };
                    shown.then(|| FieldChange {
                        field: name.clone(),
                        before: sql_json(&old),
                        after: sql_json(&new),
                    })
                })
                .collect();
            out.push(RecordChange {
                record: format!("{} ({})", r.table, changeset::describe_key(&r.key())),
                action: action.into(),
                fields,
            });
        }
    }
    Ok(out)
}

fn file_changes(p: &Plan) -> Vec<FileChange> {
    p.files
        .iter()
        .map(|f| {
            let now = f.now.as_deref().unwrap_or("");
            let back = f.back.as_deref().unwrap_or("");
            let d = bounded_diff(&f.path, now, back);
            FileChange {
                path: f.path.clone(),
                kind: match (&f.now, &f.back) {
                    (None, _) => ChangeKind::Add,
                    (_, None) => ChangeKind::Delete,
                    _ => ChangeKind::Update,
                },
                move_to: None,
                diff: d.text,
                added: d.added,
                removed: d.removed,
            }
        })
        .collect()
}

fn revert_preview(ctx: &ToolCtx, p: &Plan) -> Result<Preview, ToolError> {
    let e = &p.entry;
    let targets = p
        .files
        .iter()
        .map(|f| TargetState {
            key: f.path.clone(),
            fingerprint: f
                .now
                .as_deref()
                .map(|t| history::hash(t.as_bytes()))
                .unwrap_or_else(|| "absent".into()),
        })
        .collect();
    let (body, what) = if p.files.is_empty() {
        let changes = row_changes(ctx, &p.inverse)?;
        let n = changes.len();
        (
            PreviewBody::Records { changes },
            format!("{n} row{}", if n == 1 { "" } else { "s" }),
        )
    } else {
        let n = p.files.len();
        (
            PreviewBody::Files {
                changes: file_changes(p),
            },
            format!("{n} file{}", if n == 1 { "" } else { "s" }),
        )
    };
    Ok(Preview {
        summary: format!("Revert #{} {} — restores {what}", e.id, e.new.summary),
        body,
        targets,
    })
}

impl TypedTool for RevertChange {
    type Args = RevertArgs;
    const NAME: &'static str = "revert_change";
    const GROUP: &'static str = "history";
    const DESCRIPTION: &'static str = "Revert one recorded change of the project's change history exactly: files back to their bytes before it (re-created, removed, moves undone), database rows back to their values before it. Refused when a later recorded change touched the same target (revert those first, newest first) or when the target changed outside the history. The author only, from the History view.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects =
        Effects::touches(&[Domain::Files, Domain::Plot, Domain::World, Domain::Sql]).author_only(
            "the author reverts a change from the History view (Approvals pane, H); to undo your own change, propose the edit that undoes it",
        );

    fn write_targets(&self, ctx: &ToolCtx, args: &RevertArgs) -> Vec<String> {
        match store(ctx).get(args.entry) {
            Ok(e) if !e.new.files.is_empty() => {
                e.new.files.iter().map(|f| f.path.clone()).collect()
            }
            Ok(e) => vec![format!("history #{}", e.id)],
            Err(_) => Vec::new(),
        }
    }

    fn preview(
        &self,
        ctx: &ToolCtx,
        args: &RevertArgs,
        _raw: &Value,
    ) -> Result<Preview, ToolError> {
        revert_preview(ctx, &plan(ctx, args.entry)?)
    }

    fn run(&self, ctx: &ToolCtx, args: &RevertArgs) -> Result<ToolOutput, ToolError> {
        self.run_approved(ctx, args, None)
    }

    fn run_approved(
        &self,
        ctx: &ToolCtx,
        args: &RevertArgs,
        approved: Option<&[String]>,
    ) -> Result<ToolOutput, ToolError> {
        let p = plan(ctx, args.entry)?;
        let id = p.entry.id;
        let conn = if p.inverse.is_empty() {
            None
        } else {
            Some(apply_rows(ctx, id, &p.inverse)?)
        };
        // The rows' transaction stays open until the files are back: both or neither.
        if !p.files.is_empty() {
            if let Err(e) = restore_files(ctx, &p, approved) {
                if let Some(c) = &conn {
                    let _ = c.execute_batch("ROLLBACK");
                }
                return Err(e);
            }
        }
        if let Some(c) = &conn {
            c.execute_batch("COMMIT").map_err(|e| {
                let _ = c.execute_batch("ROLLBACK");
                ToolError::failed(format!(
                    "the reverted rows could not be committed ({e}); nothing was reverted"
                ))
            })?;
            for cs in &p.inverse {
                crate::store::applied::committed(cs.clone());
            }
        }
        crate::store::applied::reverted(id);
        let changed: Vec<String> = p.files.iter().map(|f| f.path.clone()).collect();
        Ok(ToolOutput {
            content: format!(
                "Reverted change #{id} ({}): {} file(s) and {} changeset(s) restored to their state before it.",
                p.entry.new.summary,
                p.files.len(),
                p.inverse.len()
            ),
            details: Some(json!({"reverted": id, "files": changed})),
            changed_paths: changed,
            state_updates: Vec::new(),
        })
    }
}

/// Apply the inverse changesets in an open IMMEDIATE transaction (committed by the caller).
fn apply_rows(
    ctx: &ToolCtx,
    id: i64,
    inverse: &[Changeset],
) -> Result<rusqlite::Connection, ToolError> {
    let conn = crate::store::open_writable(&ctx.workspace.db_path())
        .map_err(|e| ToolError::failed(format!("{e}; nothing was reverted")))?;
    conn.execute_batch("BEGIN IMMEDIATE").map_err(|e| {
        ToolError::failed(format!(
            "cannot start the revert ({e}); nothing was reverted"
        ))
    })?;
    for cs in inverse {
        let done = cs.apply(&conn).and_then(|()| {
            crate::tools::world::forget_checkpoints(&conn, cs)
                .map_err(|e| changeset::ChangesetError::Apply(e.to_string()))
        });
        if let Err(e) = done {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(match e {
                changeset::ChangesetError::Stale(why) => ToolError::Stale(format!(
                    "the rows change #{id} wrote were changed since, by something the history did not record: {why}. Reverting would not restore them exactly; nothing was reverted."
                )),
                other => ToolError::failed(format!("{other}; nothing was reverted")),
            });
        }
    }
    Ok(conn)
}

/// Put every file back to its recorded bytes, all or none (the patch commit and its journal).
fn restore_files(ctx: &ToolCtx, p: &Plan, approved: Option<&[String]>) -> Result<(), ToolError> {
    let mut targets = std::collections::HashMap::new();
    let mut planned = Vec::new();
    for f in &p.files {
        let t = crate::tools::files::approved_target(ctx, &f.path, approved)?;
        targets.insert(f.path.clone(), t);
        let kind = match (&f.now, &f.back) {
            (_, Some(back)) => PlannedKind::Add {
                content: back.clone(),
                previous: f.now.clone(),
            },
            (Some(now), None) => PlannedKind::Delete { old: now.clone() },
            (None, None) => continue,
        };
        planned.push(PlannedFile {
            path: f.path.clone(),
            kind,
        });
    }
    if planned.is_empty() {
        return Ok(());
    }
    let resolve = |path: &str| -> Result<crate::workspace::Target, patch::ResolveError> {
        targets
            .get(path)
            .cloned()
            .ok_or_else(|| patch::ResolveError::NotResolved(path.to_string()))
    };
    patch::commit_plan(&planned, &resolve)
        .map(drop)
        .map_err(|e| ToolError::failed(format!("{e}; nothing was reverted")))
}

/// The author's call that reverts history entry `id` (the History view's `u`).
pub fn revert_call(id: i64) -> (&'static str, Value) {
    (RevertChange::NAME, json!({ "entry": id }))
}
