//! The merge gate: `merge_task_draft` (merger) writes a reviewed task's draft into the
//! manuscript through the author's approval, and `fn_report_build_failure` (merger) sends the
//! task back to its executor when the book's checks fail.
//!
//! **The preview is a file diff**, the same `PreviewBody::Files` that `apply_patch` produces:
//! one entry per manuscript file the merge writes (only files inside `## File Scope`; a stale
//! file shows the rebased result against the manuscript as it is now), plus the merge report
//! `.nbook/tasks/<ID>/merge-report.md` it writes beside the task, which lists what is held
//! back (outside the scope, or left out) and the book's checks (`crate::board::checks`). The
//! `files` argument merges only some in-scope files — a per-file decision expressed as
//! arguments, so the approval queue's per-file decisions can map onto it.
//!
//! **Stale merges.** Each file's preview is fingerprinted (the manuscript file, the draft
//! file, the task's revision): a change between preview and approval makes the call stale.
//! A draft whose base the manuscript moved past is rebased when both changes apply cleanly;
//! otherwise the preview says the task goes back to Drafting, and approving does that: the
//! conflicting files in the draft then hold both versions between markers.

use rusqlite::Connection;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{actor, board, err, preview_op, run_op, task_of};
use crate::board::checks::{self, Check};
use crate::board::draft::Draft;
use crate::board::merge::{self, HeldBack, MergeFile, MergePlan, BUILD_FAILED, MERGE_CONFLICT};
use crate::board::tasks as bt;
use crate::board::{BoardError, BoardResult, Outcome, REVIEW};
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{ChangeKind, FileChange, Preview, PreviewBody, TargetState};
use crate::protocol::KeptParts;
use crate::tools::files::fingerprint;
use crate::tools::patch::{self, PlannedFile, PlannedKind};
use crate::tools::preview_diff::bounded_diff;
use crate::workspace::{Access, Target, Workspace};

const EFFECTS: Effects = {
    use crate::engine::tool::Domain::*;
    Effects::touches(&[Files, Board])
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeArgs {
    /// The task to merge; default this session's task.
    pub task_id: Option<String>,
    /// Merge only these project-relative in-scope files; the task's other changes stay in its
    /// draft (listed as left out).
    pub files: Option<Vec<String>>,
    /// true: only report what the merge would write, hold back and the book's checks —
    /// nothing changes and no approval is asked. Call this first; when a check fails, call
    /// fn_report_build_failure instead of merging.
    pub check_only: Option<bool>,
}

fn mutating(args: &Value) -> bool {
    args.get("check_only").and_then(Value::as_bool) != Some(true)
}

/// The plan and the checks of one merge call: the task's own book, then every other book of
/// its series it acquired (`fn_acquire_repo_worktree`), merged all or none.
struct Planned {
    plan: MergePlan,
    checks: Vec<Check>,
    others: Vec<OtherBook>,
}

/// The merge of the task's draft area in another book of its series.
struct OtherBook {
    name: String,
    ws: std::sync::Arc<Workspace>,
    area: Draft,
    plan: MergePlan,
}

impl OtherBook {
    fn prefix(&self) -> String {
        format!("workspace/{}/", self.name)
    }
}

impl Planned {
    /// Every book's plan with its display prefix, the task's own book first.
    fn books(&self) -> Vec<(String, &MergePlan)> {
        std::iter::once((String::new(), &self.plan))
            .chain(self.others.iter().map(|o| (o.prefix(), &o.plan)))
            .collect()
    }

    fn has_conflicts(&self) -> bool {
        self.books().iter().any(|(_, p)| !p.conflicts.is_empty())
    }

    /// Every file written, by its display path.
    fn written(&self) -> Vec<(String, &MergeFile)> {
        self.books()
            .into_iter()
            .flat_map(|(pre, p)| p.files.iter().map(move |f| (format!("{pre}{}", f.path), f)))
            .collect()
    }

    fn held_back(&self) -> Vec<HeldBack> {
        self.books()
            .into_iter()
            .flat_map(|(pre, p)| {
                p.held_back.iter().map(move |h| HeldBack {
                    path: format!("{pre}{}", h.path),
                    reason: h.reason,
                })
            })
            .collect()
    }

    fn left_out(&self) -> Vec<String> {
        self.books()
            .into_iter()
            .flat_map(|(pre, p)| p.left_out.iter().map(move |f| format!("{pre}{}", f.path)))
            .collect()
    }

    fn not_merged(&self) -> Vec<HeldBack> {
        self.books()
            .into_iter()
            .flat_map(|(pre, p)| {
                p.not_merged().into_iter().map(move |h| HeldBack {
                    path: format!("{pre}{}", h.path),
                    reason: h.reason,
                })
            })
            .collect()
    }

    fn conflicts(&self) -> Vec<(String, String)> {
        self.books()
            .into_iter()
            .flat_map(|(pre, p)| {
                p.conflicts
                    .iter()
                    .map(move |c| (format!("{pre}{}", c.path), c.why.clone()))
            })
            .collect()
    }
}

fn planned(ctx: &ToolCtx, a: &MergeArgs) -> Result<Planned, ToolError> {
    let id = task_of(ctx, a.task_id.as_deref())?;
    let task = board(ctx)
        .read(|c| {
            let t = bt::require(c, &id)?;
            bt::need_column(c, &t, "merge_task_draft", &[REVIEW])?;
            Ok(t)
        })
        .map_err(err)?;
    let acquired = board(ctx)
        .read(|c| crate::board::repository_scope::list(c, &id))
        .map_err(err)?;
    let plan = merge::plan(&ctx.workspace, task.clone(), a.files.as_deref()).map_err(err)?;
    let mut checks = checks::run(ctx.workspace.root(), &plan.in_scope());
    let mut others = Vec::new();
    if !acquired.is_empty() {
        // The books the task acquired must still be books of the series: the merge is all
        // or none, so one it cannot reach stops the whole merge.
        let series = super::series::series_of(ctx.workspace.root()).map_err(|e| {
            ToolError::failed(format!(
                "task {id} has draft areas in other books of the series ({}), but {e}; nothing was merged",
                acquired.iter().map(|x| x.book.as_str()).collect::<Vec<_>>().join(", ")
            ))
        })?;
        for x in &acquired {
            let book = series.book(&x.book).ok_or_else(|| {
                ToolError::failed(format!(
                    "task {id} has a draft area in book {}, which project.yaml's series no longer lists; nothing was merged",
                    x.book
                ))
            })?;
            let ws = crate::board::repository_scope::manuscript(&book.root).map_err(|e| {
                ToolError::failed(format!("book {}: {e}; nothing was merged", x.book))
            })?;
            let area = crate::board::repository_scope::area(&book.root, &series.current, &id);
            let prefix = format!("workspace/{}/", x.book);
            let plan = merge::plan_in(&ws, &area, task.clone(), a.files.as_deref(), &prefix)
                .map_err(err)?;
            checks.extend(
                checks::run(&book.root, &plan.in_scope())
                    .into_iter()
                    .map(|mut c| {
                        c.message = format!("{}: {}", x.book, c.message);
                        c
                    }),
            );
            others.push(OtherBook {
                name: x.book.clone(),
                ws,
                area,
                plan,
            });
        }
    }
    Ok(Planned {
        plan,
        checks,
        others,
    })
}

fn report_path(id: &str) -> String {
    format!(".nbook/tasks/{id}/merge-report.md")
}

/// Whether a previewed file is a task's merge report (see [`report_path`]).
fn is_report(path: &str) -> bool {
    path.starts_with(".nbook/tasks/") && path.ends_with("/merge-report.md")
}

fn kind_of(f: &MergeFile) -> ChangeKind {
    match (&f.before, &f.after) {
        (None, _) => ChangeKind::Add,
        (Some(_), None) => ChangeKind::Delete,
        _ => ChangeKind::Update,
    }
}

fn file_change(path: &str, kind: ChangeKind, before: &str, after: &str) -> FileChange {
    let d = bounded_diff(path, before, after);
    FileChange {
        path: path.to_string(),
        kind,
        move_to: None,
        diff: d.text,
        added: d.added,
        removed: d.removed,
    }
}

/// The merge report written beside the task: the in-scope changes, held-back files, checks.
/// It reads the same whichever in-scope files the author keeps (the task log records which
/// were written), so a merge approved in parts shows the report it writes.
fn report(p: &Planned) -> String {
    let t = &p.plan.task;
    let mut s = format!(
        "# Merge of {} — {}\n\n## Changes inside ## File Scope\n",
        t.id, t.title
    );
    let in_scope: Vec<(String, MergeFile)> = p
        .books()
        .into_iter()
        .flat_map(|(pre, b)| {
            b.in_scope()
                .into_iter()
                .map(move |f| (format!("{pre}{}", f.path), f))
        })
        .collect();
    if in_scope.is_empty() {
        s.push_str("- none\n");
    }
    for (path, f) in &in_scope {
        let k = match kind_of(f) {
            ChangeKind::Add => "add",
            ChangeKind::Update => "update",
            ChangeKind::Delete => "delete",
        };
        let rebased = if f.rebased {
            ", rebased onto the manuscript's later changes"
        } else {
            ""
        };
        s.push_str(&format!("- {path} ({k}{rebased})\n"));
    }
    s.push_str("\n## Held back (they stay in the draft)\n");
    let held = p.held_back();
    if held.is_empty() {
        s.push_str("- none\n");
    }
    for h in &held {
        s.push_str(&format!("- {} — {}\n", h.path, h.reason));
    }
    s.push_str("\n## Book checks\n");
    for c in &p.checks {
        s.push_str(&format!(
            "- {} {}: {}\n",
            if c.ok { "PASS" } else { "FAIL" },
            c.kind,
            c.message
        ));
    }
    s
}

fn failed(checks: &[Check]) -> Vec<&Check> {
    checks.iter().filter(|c| !c.ok).collect()
}

fn conflict_message(p: &Planned) -> String {
    format!(
        "its draft conflicts with the manuscript, which changed since: {}. Read each file (it holds both versions between <<<<<<< draft and >>>>>>> manuscript), keep the author's later changes, and finish again",
        p.conflicts()
            .iter()
            .map(|(path, why)| format!("{path} ({why})"))
            .collect::<Vec<_>>()
            .join("; ")
    )
}

/// Fingerprints the approval is checked against: each merged file in the manuscript and in
/// the draft, and the task record.
fn targets(ctx: &ToolCtx, all: &Planned) -> Vec<TargetState> {
    let p = &all.plan;
    let mut out = vec![TargetState {
        key: format!("board/task/{}", p.task.id),
        fingerprint: format!("revision {}", p.task.revision),
    }];
    let draft = Draft::new(ctx.workspace.root(), &p.task.id);
    let mut books = vec![(String::new(), &*ctx.workspace, &draft, p)];
    for o in &all.others {
        books.push((o.prefix(), &o.ws, &o.area, &o.plan));
    }
    for (pre, ws, draft, p) in books {
        let paths = p
            .files
            .iter()
            .map(|f| f.path.as_str())
            .chain(p.conflicts.iter().map(|c| c.path.as_str()));
        for path in paths {
            if let Ok(r) = ws.resolve(path, Access::Read) {
                out.push(TargetState {
                    key: format!("{pre}{}", r.display),
                    fingerprint: fingerprint(&r.abs),
                });
            }
            out.push(TargetState {
                key: format!("draft/{}/{pre}{path}", draft.task()),
                fingerprint: fingerprint(&draft.dir().join(path)),
            });
        }
    }
    out
}

fn summary(p: &Planned) -> String {
    let written = p.written();
    let (added, removed) = written.iter().fold((0, 0), |(a, r), (_, f)| {
        let d = bounded_diff(
            &f.path,
            f.before.as_deref().unwrap_or(""),
            f.after.as_deref().unwrap_or(""),
        );
        (a + d.added, r + d.removed)
    });
    let n = written.len();
    let mut s = format!(
        "Merge {} into the manuscript: {n} file{} (+{added} -{removed})",
        p.plan.task.id,
        if n == 1 { "" } else { "s" }
    );
    if !p.others.is_empty() {
        s.push_str(&format!(
            " in {} books ({}, {})",
            p.others.len() + 1,
            "this book",
            p.others
                .iter()
                .map(|o| o.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let rebased = written.iter().filter(|(_, f)| f.rebased).count();
    if rebased > 0 {
        s.push_str(&format!(", {rebased} rebased"));
    }
    let left_out = p.left_out();
    if !left_out.is_empty() {
        s.push_str(&format!(" · left out: {}", left_out.join(", ")));
    }
    let held = p.held_back();
    if !held.is_empty() {
        s.push_str(&format!(
            " · held back: {}",
            held.iter()
                .map(|h| h.path.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    match failed(&p.checks).as_slice() {
        [] => s.push_str(" · checks pass"),
        [one, rest @ ..] => s.push_str(&format!(
            " · checks FAILED ({}): {} {}",
            rest.len() + 1,
            one.kind,
            one.message
        )),
    }
    s
}

fn details(p: &Planned) -> Value {
    json!({
        "taskId": p.plan.task.id,
        "files": p.written().iter().map(|(path, f)| json!({"path": path, "kind": kind_of(f), "rebased": f.rebased})).collect::<Vec<_>>(),
        "heldBack": p.held_back().iter().map(|h| json!({"path": h.path, "reason": h.reason})).collect::<Vec<_>>(),
        "leftOut": p.left_out(),
        "conflicts": p.conflicts().iter().map(|(path, why)| json!({"path": path, "why": why})).collect::<Vec<_>>(),
        "books": p.others.iter().map(|o| o.name.clone()).collect::<Vec<_>>(),
        "checks": p.checks,
        "checksPassed": failed(&p.checks).is_empty(),
    })
}

fn send_back_op<'a>(
    id: &'a str,
    status: &'a str,
    message: &'a str,
    who: &'a str,
) -> impl Fn(&Connection) -> BoardResult<Outcome> + 'a {
    move |c: &Connection| merge::send_back(c, id, status, message, Some(who))
}

pub struct MergeTaskDraft;

impl TypedTool for MergeTaskDraft {
    type Args = MergeArgs;
    const NAME: &'static str = "merge_task_draft";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Merge a reviewed task's draft area into the manuscript (the task must be in Review; default this session's task). Only files inside the task's ## File Scope are written; the others are held back and stay in the draft. The author approves the whole change as one file-diff preview that also lists the held-back files and the book's checks (world issues, writer-brief status of touched chapters, plot references); approved, the files are written, a merge report is kept in .nbook/tasks/<ID>/merge-report.md and the task moves to Done. Call with check_only: true first (no approval, nothing changes): when a check fails, call fn_report_build_failure with the failures instead of merging. A draft the manuscript moved past is rebased when both changes apply cleanly; when they conflict, the call returns the task to Drafting for its executor (details.outcome \"returned\"). Errors are error results with details.code (TASK_NOT_FOUND, TASK_WRONG_COLUMN, TASK_ID_REQUIRED).";
    const MUTATES: Mutates = Mutates::Depends(mutating);
    const EFFECTS: Effects = EFFECTS;
    // The author may merge some files and leave the others in the draft: a merge is kept or
    // dropped per file (see `narrow`).
    const PARTS: bool = true;
    fn write_targets(&self, ctx: &ToolCtx, a: &MergeArgs) -> Vec<String> {
        match task_of(ctx, a.task_id.as_deref()) {
            Ok(t) => vec![format!("board/{t}")],
            Err(_) => Vec::new(),
        }
    }
    /// The same merge of only the files the author kept (`files`); the rest stay in the
    /// draft, listed as left out. A file is merged whole or not at all: half of a chapter's
    /// rewrite is not what anyone reviewed. The merge report is written with every merge (it
    /// reads the same whichever files are kept), so it cannot be dropped on its own.
    fn narrow(
        &self,
        _ctx: &ToolCtx,
        a: &MergeArgs,
        shown: &Preview,
        kept: &KeptParts,
    ) -> Result<Value, ToolError> {
        let PreviewBody::Files { changes } = &shown.body else {
            return Err(ToolError::failed(
                "this merge returns the task to Drafting; approve or reject it whole",
            ));
        };
        let mut files = Vec::new();
        for (i, c) in changes.iter().enumerate() {
            let whole = kept.file_whole(i);
            let any = kept.file_kept(i);
            if is_report(&c.path) {
                if !whole {
                    return Err(ToolError::failed(format!(
                        "{} is written with every merge; keep it, and drop the manuscript files you do not want merged",
                        c.path
                    )));
                }
            } else if whole {
                files.push(c.path.clone());
            } else if any {
                return Err(ToolError::failed(format!(
                    "a merge keeps or drops each file whole, and only some hunks of {} were kept; keep or drop the whole file (X)",
                    c.path
                )));
            }
        }
        if files.is_empty() {
            return Err(ToolError::failed(
                "no manuscript file was kept; reject the merge instead",
            ));
        }
        let mut args = json!({"files": files});
        if let Some(t) = &a.task_id {
            args["task_id"] = json!(t);
        }
        Ok(args)
    }
    fn preview(&self, ctx: &ToolCtx, a: &MergeArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let p = planned(ctx, a)?;
        let targets = targets(ctx, &p);
        if p.has_conflicts() {
            let who = actor(ctx);
            let msg = conflict_message(&p);
            let id = p.plan.task.id.clone();
            let mut pv = preview_op(
                Self::NAME,
                &board(ctx),
                send_back_op(&id, MERGE_CONFLICT, &msg, &who),
            )?;
            pv.summary = format!(
                "Return {id} to Drafting: its draft conflicts with the manuscript in {} (approve to send it back to the executor)",
                p.conflicts().iter().map(|(path, _)| path.as_str()).collect::<Vec<_>>().join(", ")
            );
            pv.targets.extend(targets);
            return Ok(pv);
        }
        let mut changes: Vec<FileChange> = p
            .written()
            .iter()
            .map(|(path, f)| {
                file_change(
                    path,
                    kind_of(f),
                    f.before.as_deref().unwrap_or(""),
                    f.after.as_deref().unwrap_or(""),
                )
            })
            .collect();
        let rp = report_path(&p.plan.task.id);
        let old = std::fs::read_to_string(ctx.workspace.root().join(&rp)).ok();
        changes.push(file_change(
            &rp,
            if old.is_some() {
                ChangeKind::Update
            } else {
                ChangeKind::Add
            },
            old.as_deref().unwrap_or(""),
            &report(&p),
        ));
        Ok(Preview {
            summary: summary(&p),
            body: PreviewBody::Files { changes },
            targets,
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &MergeArgs) -> Result<ToolOutput, ToolError> {
        let p = planned(ctx, a)?;
        if a.check_only == Some(true) {
            return Ok(ToolOutput {
                content: format!("{}\n\n{}", summary(&p), report(&p)),
                details: Some(details(&p)),
                ..ToolOutput::default()
            });
        }
        let id = p.plan.task.id.clone();
        let who = actor(ctx);
        if p.has_conflicts() {
            // All or none across the books: one conflict anywhere writes no book, and every
            // book's conflicting files go back to the executor.
            let msg = conflict_message(&p);
            let mut out = run_op(&board(ctx), send_back_op(&id, MERGE_CONFLICT, &msg, &who))?;
            p.plan
                .write_conflicts(&Draft::new(ctx.workspace.root(), &id))
                .map_err(err)?;
            for o in &p.others {
                o.plan.write_conflicts(&o.area).map_err(err)?;
            }
            let mut d = details(&p);
            d["outcome"] = json!("returned");
            out.details = Some(d);
            return Ok(out);
        }
        write_books(ctx, &p)?;
        let merged: Vec<String> = p.written().into_iter().map(|(path, _)| path).collect();
        let held = p.not_merged();
        let mut out = run_op(&board(ctx), move |c: &Connection| {
            merge::finish(c, &id, &merged, &held, Some(&who))
        })?;
        let draft = Draft::new(ctx.workspace.root(), &p.plan.task.id);
        let mut warnings = Vec::new();
        for f in &p.plan.files {
            if let Err(e) = draft.settle(&f.path) {
                warnings.push(format!("warning: {e} (the manuscript is merged)"));
            }
        }
        for o in &p.others {
            for f in &o.plan.files {
                if let Err(e) = o.area.settle(&f.path) {
                    warnings.push(format!(
                        "warning: {}: {e} (the manuscript is merged)",
                        o.name
                    ));
                }
            }
        }
        let rp = ctx.workspace.root().join(report_path(&p.plan.task.id));
        if let Err(e) = crate::workspace::atomic_write(&rp, report(&p).as_bytes()) {
            warnings.push(format!(
                "warning: the merge report could not be written: {e}"
            ));
        }
        out.content = format!("{}\n{}", out.content, summary(&p));
        for w in warnings {
            out.content.push('\n');
            out.content.push_str(&w);
        }
        let mut d = details(&p);
        d["outcome"] = json!("merged");
        out.details = Some(d);
        out.changed_paths = p.plan.files.iter().map(|f| f.path.clone()).collect();
        for o in &p.others {
            if !o.plan.files.is_empty() {
                out.content.push_str(&format!(
                    "\nMerged into book {}: {}",
                    o.name,
                    o.plan
                        .files
                        .iter()
                        .map(|f| f.path.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        Ok(out)
    }
}

/// Write every book's merged files, all or none: each book all-or-nothing (below), and when a
/// later book fails, the books already written are put back as they were (their files'
/// `before`), so no book of the series is left merged without the others.
fn write_books(ctx: &ToolCtx, p: &Planned) -> Result<(), ToolError> {
    let mut books: Vec<(&str, &Workspace, &[MergeFile])> =
        vec![("this book", &*ctx.workspace, &p.plan.files)];
    for o in &p.others {
        books.push((o.name.as_str(), &o.ws, &o.plan.files));
    }
    // Every destination is authorized before anything is written.
    for (name, ws, files) in &books {
        for f in files.iter() {
            ws.target(&f.path).map_err(|e| {
                ToolError::failed(format!("{name}: {e}; nothing was merged in any book"))
            })?;
        }
    }
    for (i, (name, ws, files)) in books.iter().enumerate() {
        if let Err(e) = write_manuscript(ws, files) {
            let mut undone = Vec::new();
            for (done, dws, dfiles) in books[..i].iter().rev() {
                let back: Vec<MergeFile> = dfiles
                    .iter()
                    .map(|f| MergeFile {
                        path: f.path.clone(),
                        before: f.after.clone(),
                        after: f.before.clone(),
                        rebased: false,
                    })
                    .collect();
                if let Err(u) = write_manuscript(dws, &back) {
                    undone.push(format!(
                        "{done} could not be put back ({u}); its merged files stay"
                    ));
                }
            }
            let mut msg = format!(
                "{name}: {e}; no book was merged (the books written before it were put back)"
            );
            for u in undone {
                msg.push_str("; ");
                msg.push_str(&u);
            }
            return Err(ToolError::failed(msg));
        }
    }
    Ok(())
}

/// Write the merged files into the manuscript all-or-nothing (the patch commit: staged temp
/// files, a journal, renames), through the manuscript's held folder handles.
fn write_manuscript(ws: &Workspace, files: &[MergeFile]) -> Result<(), ToolError> {
    let mut plan = Vec::new();
    let mut targets: std::collections::HashMap<String, Target> = Default::default();
    for f in files {
        let kind = match (&f.before, &f.after) {
            (None, Some(a)) => PlannedKind::Add {
                content: a.clone(),
                previous: None,
            },
            (Some(b), Some(a)) => PlannedKind::Update {
                old: b.clone(),
                new: a.clone(),
                move_to: None,
            },
            (Some(b), None) => PlannedKind::Delete { old: b.clone() },
            (None, None) => continue,
        };
        let t = ws
            .target(&f.path)
            .map_err(|e| ToolError::failed(format!("{e}; nothing was merged")))?;
        targets.insert(f.path.clone(), t);
        plan.push(PlannedFile {
            path: f.path.clone(),
            kind,
        });
    }
    if plan.is_empty() {
        return Ok(());
    }
    let resolve = |p: &str| -> Result<Target, patch::ResolveError> {
        targets
            .get(p)
            .cloned()
            .ok_or_else(|| patch::ResolveError::NotResolved(p.to_string()))
    };
    patch::commit_plan(&plan, &resolve).map(drop).map_err(|e| {
        ToolError::failed(format!(
            "the merge could not write the manuscript: {e}; nothing was merged"
        ))
    })
}

// ---- fn_report_build_failure ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildFailureArgs {
    /// What failed: the failing checks, for the executor to fix.
    #[schemars(length(min = 1, max = 20000))]
    pub message: String,
}

pub struct ReportBuildFailure;

impl ReportBuildFailure {
    fn op<'a>(
        t: &'a str,
        message: &'a str,
        who: &'a str,
    ) -> impl Fn(&Connection) -> BoardResult<Outcome> + 'a {
        move |c: &Connection| {
            let m = message.trim();
            if m.is_empty() {
                return Err(BoardError::invalid(
                    "message",
                    "say which of the book's checks failed, for the executor",
                ));
            }
            merge::send_back(
                c,
                t,
                BUILD_FAILED,
                &format!("the book's checks failed at merge: {m}"),
                Some(who),
            )
        }
    }
}

impl TypedTool for ReportBuildFailure {
    type Args = BuildFailureArgs;
    const NAME: &'static str = "fn_report_build_failure";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Report that the book's checks failed for this session's task at merge (merge_task_draft with check_only: true lists them): the failure is recorded in the task log and the task goes back from Review to Drafting (status build-failed) with your message for its executor. Nothing is merged. A task not in Review (TASK_WRONG_COLUMN) or a blank message (INVALID_ARGUMENT) is an error result; nothing changes.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Board])
    };
    fn write_targets(&self, ctx: &ToolCtx, _a: &BuildFailureArgs) -> Vec<String> {
        task_of(ctx, None)
            .map(|t| vec![format!("board/{t}")])
            .unwrap_or_default()
    }
    fn preview(
        &self,
        ctx: &ToolCtx,
        a: &BuildFailureArgs,
        _raw: &Value,
    ) -> Result<Preview, ToolError> {
        let t = task_of(ctx, None)?;
        let who = actor(ctx);
        preview_op(Self::NAME, &board(ctx), Self::op(&t, &a.message, &who))
    }
    fn run(&self, ctx: &ToolCtx, a: &BuildFailureArgs) -> Result<ToolOutput, ToolError> {
        let t = task_of(ctx, None)?;
        let who = actor(ctx);
        run_op(&board(ctx), Self::op(&t, &a.message, &who))
    }
}
