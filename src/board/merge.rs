//! The merge gate's plan and its board moves: which of a task's draft changes go into the
//! manuscript (only files inside `## File Scope`; the rest are held back and stay in the
//! draft), which are stale (the manuscript changed under the draft) and rebase cleanly, and
//! which conflict. A merge moves the task Review → Done; a conflict or a failed book check
//! sends it back Review → Drafting with a log entry the executor reads.
//!
//! The tool that puts this behind the approval gate is `crate::tools::fusion::merge`.

use rusqlite::Connection;
use serde_json::json;

use super::draft::{merge3, Draft, DraftChange};
use super::error::BoardResult;
use super::model::{Task, DONE, DRAFTING, REVIEW};
use super::tasks::{log, need_column, require, save};
use super::{scope, Outcome, Touched};
use crate::workspace::Workspace;

/// The sub-status of a task returned because its draft conflicts with the manuscript.
pub const MERGE_CONFLICT: &str = "merge-conflict";
/// The sub-status of a task returned because the book's checks failed at merge.
pub const BUILD_FAILED: &str = "build-failed";

/// One file the merge writes: the manuscript's content now and after (`None`: absent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeFile {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
    /// The manuscript changed since the draft copied the file, and both changes were combined.
    pub rebased: bool,
}

/// A draft change the merge does not write, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldBack {
    pub path: String,
    pub reason: &'static str,
}

/// A stale change that does not rebase: both versions, for the executor to resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConflictFile {
    pub path: String,
    pub why: String,
    pub draft: Option<String>,
    pub manuscript: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MergePlan {
    pub task: Task,
    pub files: Vec<MergeFile>,
    pub held_back: Vec<HeldBack>,
    pub conflicts: Vec<ConflictFile>,
    /// In-scope files the call's `only` left out: planned like the others (the merge report
    /// and the checks cover them, so they read the same whichever files the author keeps),
    /// not written, and kept in the draft.
    pub left_out: Vec<MergeFile>,
}

pub const OUTSIDE_SCOPE: &str = "outside ## File Scope";
pub const NOT_TEXT: &str = "not UTF-8 text";
pub const LEFT_OUT: &str = "left out of this merge";

fn text(b: &Option<Vec<u8>>) -> Result<Option<String>, ()> {
    match b {
        None => Ok(None),
        Some(b) => String::from_utf8(b.clone()).map(Some).map_err(|_| ()),
    }
}

/// Plan the merge of `task`'s draft into the manuscript `ws`. `only`: merge just these
/// in-scope paths (the author's per-file decision); the other in-scope ones are left out and
/// stay in the draft.
pub fn plan(ws: &Workspace, task: Task, only: Option<&[String]>) -> BoardResult<MergePlan> {
    let draft = Draft::new(ws.root(), &task.id);
    plan_in(ws, &draft, task, only, "")
}

/// Plan the merge of the draft area `draft` into the manuscript `ws`: the task's own book
/// (`prefix` ""), or another book of its series (`prefix` `workspace/<book>/`), whose files
/// the task's `## File Scope` and `only` name with that prefix. The plan's paths stay
/// relative to `ws`.
pub fn plan_in(
    ws: &Workspace,
    draft: &Draft,
    task: Task,
    only: Option<&[String]>,
    prefix: &str,
) -> BoardResult<MergePlan> {
    let changes = if draft.dir().exists() {
        draft.changes(ws)?
    } else {
        Vec::new()
    };
    let mut p = MergePlan {
        task,
        files: Vec::new(),
        held_back: Vec::new(),
        conflicts: Vec::new(),
        left_out: Vec::new(),
    };
    for c in changes {
        let named = format!("{prefix}{}", c.path);
        if !scope::in_scope(&p.task.file_scope, &named) {
            p.held_back.push(HeldBack {
                path: c.path,
                reason: OUTSIDE_SCOPE,
            });
            continue;
        }
        let kept = only.is_none_or(|o| o.iter().any(|x| x.trim_start_matches("./") == named));
        let before = p.files.len();
        plan_file(&mut p, c);
        if !kept && p.files.len() > before {
            let f = p.files.remove(before);
            p.left_out.push(f);
        }
    }
    Ok(p)
}

fn plan_file(p: &mut MergePlan, c: DraftChange) {
    let stale = c.stale();
    let (Ok(base), Ok(draft), Ok(now)) = (text(&c.base), text(&c.draft), text(&c.manuscript))
    else {
        p.held_back.push(HeldBack {
            path: c.path,
            reason: NOT_TEXT,
        });
        return;
    };
    if draft == now {
        // The manuscript already reads as the draft does: nothing to write.
        return;
    }
    if !stale {
        p.files.push(MergeFile {
            path: c.path,
            before: now,
            after: draft,
            rebased: false,
        });
        return;
    }
    let conflict = |why: String| ConflictFile {
        path: c.path.clone(),
        why,
        draft: draft.clone(),
        manuscript: now.clone(),
    };
    match (&base, &draft, &now) {
        (Some(b), Some(d), Some(n)) => match merge3::merge3(b, d, n) {
            Ok(merged) => p.files.push(MergeFile {
                path: c.path.clone(),
                before: now.clone(),
                after: Some(merged),
                rebased: true,
            }),
            Err(x) => p.conflicts.push(conflict(format!(
                "the draft and the manuscript both changed line{} {}",
                if x.lines.len() == 1 { "" } else { "s" },
                x.lines
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        },
        (_, None, Some(_)) => p.conflicts.push(conflict(
            "the draft deletes it, but the manuscript changed it since".into(),
        )),
        (Some(_), Some(_), None) => p.conflicts.push(conflict(
            "the draft changes it, but it was deleted from the manuscript since".into(),
        )),
        (None, Some(_), Some(_)) => p.conflicts.push(conflict(
            "the draft creates it, but the manuscript created it too since".into(),
        )),
        // Deleted on both sides, or created and removed again: nothing to write.
        _ => {}
    }
}

impl MergePlan {
    /// Every in-scope file the draft changes, written or left out (for the report and the
    /// checks).
    pub fn in_scope(&self) -> Vec<MergeFile> {
        let mut all: Vec<MergeFile> = self.files.iter().chain(&self.left_out).cloned().collect();
        all.sort_by(|a, b| a.path.cmp(&b.path));
        all
    }

    /// What the merge does not write: held back, and left out by the author.
    pub fn not_merged(&self) -> Vec<HeldBack> {
        let mut out = self.held_back.clone();
        out.extend(self.left_out.iter().map(|f| HeldBack {
            path: f.path.clone(),
            reason: LEFT_OUT,
        }));
        out
    }

    /// Write the conflicts into the draft for the executor: each file with both versions
    /// between markers, its base moved to the manuscript's current content.
    pub fn write_conflicts(&self, draft: &Draft) -> BoardResult<()> {
        for c in &self.conflicts {
            let body = merge3::conflict_text(
                c.draft.as_deref().unwrap_or(""),
                c.manuscript.as_deref().unwrap_or(""),
            );
            draft.rebase(
                &c.path,
                c.manuscript.as_deref().map(str::as_bytes),
                Some(body.as_bytes()),
            )?;
        }
        Ok(())
    }
}

/// The task merged: Review → Done, with a log entry naming what was merged and held back.
pub fn finish(
    c: &Connection,
    id: &str,
    merged: &[String],
    held_back: &[HeldBack],
    actor: Option<&str>,
) -> BoardResult<Outcome> {
    let mut t = require(c, id)?;
    need_column(c, &t, "merge_task_draft", &[REVIEW])?;
    t.column = super::tasks::lane(c, &t, DONE);
    t.status = String::new();
    save(c, &t)?;
    let mut out = Outcome::default();
    let mut action = format!(
        "Merged into the manuscript: {}",
        if merged.is_empty() {
            "no files".to_string()
        } else {
            merged.join(", ")
        }
    );
    if !held_back.is_empty() {
        action.push_str(&format!(
            "; held back in the draft: {}",
            held_back
                .iter()
                .map(|h| format!("{} ({})", h.path, h.reason))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    log(c, &mut out, &t.id, &action, Some("merged"), actor)?;
    out.text = format!("{} merged and moved to Done.", t.id);
    out.value = json!({
        "taskId": t.id, "column": t.column, "merged": merged,
        "heldBack": held_back.iter().map(|h| json!({"path": h.path, "reason": h.reason})).collect::<Vec<_>>(),
    });
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

/// The task goes back to the executor: Review → Drafting with sub-status `status` and the
/// message in its log (the executor reads it with fn_task_logs_read).
pub fn send_back(
    c: &Connection,
    id: &str,
    status: &str,
    message: &str,
    actor: Option<&str>,
) -> BoardResult<Outcome> {
    let mut t = require(c, id)?;
    need_column(c, &t, "returning a task to its executor", &[REVIEW])?;
    t.column = super::tasks::lane(c, &t, DRAFTING);
    t.status = status.into();
    save(c, &t)?;
    let mut out = Outcome::default();
    log(
        c,
        &mut out,
        &t.id,
        &format!("Returned to Drafting: {message}"),
        Some(status),
        actor,
    )?;
    out.text = format!("{} returned to Drafting ({status}): {message}", t.id);
    out.value = json!({"taskId": t.id, "column": t.column, "status": status, "message": message});
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}
