//! `fn_acquire_repo_worktree` (executor) in series workspace mode: the session's task acquires
//! a draft area in another book of the series (`crate::workspace::series`), recorded in its
//! repository scope (`crate::board::repository_scope`). Fusion's tool acquires a git worktree
//! of a sub-repo; here the "repo" is a sibling book, and its area follows the draft rules of
//! `crate::board::draft` (a git worktree when that book is a repository, else the overlay).
//!
//! It runs a command-like acquisition outside the book, so it is mutating and waits for the
//! author with a preview naming the book, the task and the area's path. After it, the
//! executor's file tools address that book's files as `workspace/<book>/<path>`: they land in
//! the area (`crate::engine::draft_route`), and `merge_task_draft` merges every book at once.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{actor, board, err, run_op, task_of};
use crate::board::repository_scope as scope;
use crate::board::{BoardError, Outcome};
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{Preview, PreviewBody};
use crate::workspace::series::{self, Book};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcquireArgs {
    /// The book of the series to work in: its folder name (the error of an unknown one lists
    /// the series' books).
    #[schemars(length(min = 1, max = 255))]
    pub repo: String,
    /// Why the task needs that book; kept in the task's repository scope.
    #[schemars(length(max = 2000))]
    pub reason: Option<String>,
}

/// What one call acquires.
struct Plan {
    task: String,
    title: String,
    current: String,
    book: Book,
    area: PathBuf,
    already: bool,
}

/// The series this book declares, or `WORKSPACE_MODE_REQUIRED` saying why there is none.
pub(crate) fn series_of(root: &Path) -> Result<series::Series, BoardError> {
    match series::load(root) {
        Ok(Some(s)) => Ok(s),
        Ok(None) => Err(BoardError::WorkspaceModeRequired {
            why: "its project.yaml lists no other books under `series:` (the sibling book folders of the series)".into(),
        }),
        Err(e) => Err(BoardError::WorkspaceModeRequired { why: e.to_string() }),
    }
}

fn plan(ctx: &ToolCtx, a: &AcquireArgs) -> Result<Plan, ToolError> {
    let task = task_of(ctx, None)?;
    let s = series_of(ctx.workspace.root()).map_err(err)?;
    let repo = a.repo.trim();
    if repo == s.current {
        return Err(err(BoardError::invalid(
            "repo",
            format!("{repo} is this task's own book: its draft area is the task's already (give project-relative paths); acquire another book of the series: {}", s.others.iter().map(|b| b.name.as_str()).collect::<Vec<_>>().join(", ")),
        )));
    }
    let book = s.book(repo).cloned().ok_or_else(|| {
        err(BoardError::UnknownRepo {
            repo: repo.to_string(),
            available: s.names(),
        })
    })?;
    let (title, already) = board(ctx)
        .read(|c| {
            scope::check_acquirable(c, &task, repo)?;
            let t = crate::board::tasks::require(c, &task)?;
            let already = scope::list(c, &task)?.iter().any(|x| x.book == repo);
            Ok((t.title, already))
        })
        .map_err(err)?;
    let area = scope::area_path(&book.root, &s.current, &task);
    Ok(Plan {
        task,
        title,
        current: s.current,
        book,
        area,
        already,
    })
}

fn record_op<'a>(
    p: &'a Plan,
    reason: Option<&'a str>,
    who: &'a str,
) -> impl Fn(&rusqlite::Connection) -> crate::board::BoardResult<Outcome> + 'a {
    move |c| {
        scope::record(
            c,
            &p.task,
            &p.book.name,
            &p.area.display().to_string(),
            reason,
            Some(who),
        )
    }
}

fn reason(a: &AcquireArgs) -> Option<&str> {
    a.reason.as_deref().map(str::trim).filter(|r| !r.is_empty())
}

pub struct AcquireRepoWorktree;

impl TypedTool for AcquireRepoWorktree {
    type Args = AcquireArgs;
    const NAME: &'static str = "fn_acquire_repo_worktree";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Series workspace mode only (the book's project.yaml lists the other books of its series under `series:`): acquire a draft area for this session's task in another book of the series, before writing there. The author approves it (the preview names the book, the task and the area's path); the result gives the area's path (worktreePath) and the task records the book in its repository scope. Calling it again for the same book returns the same area (alreadyAcquired: true). Then address that book's files as workspace/<book>/<path> with read, write, edit and apply_patch: they land in the area, never in that book's manuscript, and merge_task_draft merges every book of the task together (its ## File Scope names them as workspace/<book>/<path> too). Errors are error results with details.code: WORKSPACE_MODE_REQUIRED (no series, or its declaration is invalid: the message says why), UNKNOWN_REPO (details.available lists the books), LATE_REPO_ACQUISITION (the task is already in Review or later: create a follow-up task), TASK_NOT_FOUND, INVALID_ARGUMENT.";
    const MUTATES: Mutates = Mutates::Yes;
    // Board only: the area it creates is nbook's folder in the other book, not the book's
    // files (declaring Files would route the call into the task's own draft area).
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Board])
    };
    fn write_targets(&self, ctx: &ToolCtx, a: &AcquireArgs) -> Vec<String> {
        match task_of(ctx, None) {
            Ok(t) => vec![format!("board/{t}/book/{}", a.repo.trim())],
            Err(_) => Vec::new(),
        }
    }
    fn preview(&self, ctx: &ToolCtx, a: &AcquireArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let p = plan(ctx, a)?;
        let who = actor(ctx);
        let dry = board(ctx)
            .dry_run(record_op(&p, reason(a), &who))
            .map_err(err)?;
        let kind = if p.already {
            "already acquired: the call returns the same area".to_string()
        } else if crate::board::draft::git::head_of_repository(&p.book.root).is_some() {
            format!(
                "a new git worktree of {} on branch nbook/{}",
                p.book.name,
                scope::area_id(&p.current, &p.task)
            )
        } else {
            "a new copy-on-write draft folder (the book is not a git repository)".to_string()
        };
        let text = format!(
            "Book:       {} ({})\nTask:       {} — {} (book {})\nDraft area: {}\n            {kind}\nReason:     {}\n\nThe task's file tools then write workspace/{}/<path> in this area only; {}'s manuscript changes only when merge_task_draft merges the task.",
            p.book.name,
            p.book.root.display(),
            p.task,
            p.title,
            p.current,
            p.area.display(),
            reason(a).unwrap_or("(none given)"),
            p.book.name,
            p.book.name,
        );
        Ok(Preview {
            summary: format!(
                "{}: task {} acquires a draft area in book {} at {}",
                Self::NAME,
                p.task,
                p.book.name,
                p.area.display()
            ),
            body: PreviewBody::Text { text },
            targets: dry.targets,
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &AcquireArgs) -> Result<ToolOutput, ToolError> {
        let p = plan(ctx, a)?;
        scope::area(&p.book.root, &p.current, &p.task)
            .ensure()
            .map_err(err)?;
        let who = actor(ctx);
        run_op(&board(ctx), record_op(&p, reason(a), &who))
    }
}
