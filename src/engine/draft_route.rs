//! Routing of a task session's file tools into the task's draft area (issue #16).
//!
//! A call is routed when its session's profile opts in (`draft = true`: executor,
//! step-session), the session works on a task (session state `board.task`), and the tool
//! declares that it touches files. Before the call, each path it names
//! ([`Tool::draft_paths`]) is checked against the manuscript's path authorization and copied
//! up into the draft (`crate::board::draft`); the call then runs unchanged with the draft as
//! its workspace: reads see the draft first, writes, edits, patches and deletes land there,
//! and the manuscript never changes. Such writes need no approval in `normal` mode (the
//! merge is the gate); a tool that names no paths cannot be routed and is refused. A read of
//! `.nbook/` (the task's PROMPT.md) reads the project itself: nbook's records are not drafted.

use std::sync::Arc;

use serde_json::json;

use super::tool::{CallArgs, Domain, Tool, ToolCtx, ToolError, ToolOutput};
use super::types::Mode;
use crate::board::draft::Draft;
use crate::workspace::{Access, Workspace};

/// Session-state key of the session's task (`crate::tools::fusion::SESSION_TASK`; the engine
/// does not import the tools).
const SESSION_TASK: &str = "board.task";

fn coded(code: &str, message: String, extra: serde_json::Value) -> ToolError {
    let mut details = extra;
    details["code"] = json!(code);
    ToolError::Coded { message, details }
}

/// The task whose draft this call goes to, if it is routed at all.
fn routed_task(ctx: &ToolCtx, tool: &dyn Tool) -> Option<String> {
    if !ctx.profile.draft || !tool.effects().touches_domain(Domain::Files) {
        return None;
    }
    ctx.session_state
        .get(SESSION_TASK)
        .and_then(|v| v.as_str())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// `ctx` with the draft as its workspace when the call is routed; `ctx` unchanged when it is
/// not. A path outside the project, inside `.nbook`/`.git`, or a tool that names no paths is
/// a typed error and nothing is copied.
pub(super) fn route(ctx: ToolCtx, tool: &dyn Tool, args: &CallArgs) -> Result<ToolCtx, ToolError> {
    let Some(task) = routed_task(&ctx, tool) else {
        return Ok(ctx);
    };
    // The id names a folder: only a board id (`NB-001`) whose task folder exists.
    let plain = task
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !plain || !ctx.workspace.nbook_dir().join("tasks").join(&task).is_dir() {
        return Err(coded(
            "TASK_NOT_FOUND",
            format!("this session's task {task:?} is not on the board, so it has no draft area; nothing was changed"),
            json!({"taskId": task}),
        ));
    }
    let Some(paths) = tool.draft_paths(&ctx, args) else {
        return Err(coded(
            "DRAFT_TOOL_UNSUPPORTED",
            format!(
                "{} cannot run in task {task}'s draft area (it does not say which files it touches); nothing was changed. Use read, write, edit or apply_patch.",
                tool.name()
            ),
            json!({"taskId": task, "tool": tool.name()}),
        ));
    };
    // Reading the task's own records (PROMPT.md under .nbook/tasks/<ID>/) reads the project
    // as it is: nothing there is drafted.
    let mutates = tool.mutates().for_call(args.raw());
    let managed = |p: &str| {
        ctx.workspace.resolve(p, Access::Read).is_ok_and(|r| {
            r.in_current && matches!(r.rel.split('/').next(), Some(".nbook" | ".git"))
        })
    };
    if !mutates && !paths.is_empty() && paths.iter().all(|p| managed(p)) {
        return Ok(ctx);
    }
    let mut rels = Vec::new();
    let mut books = BookPaths::default();
    for p in &paths {
        if let Some((book, inner)) = other_book(p, ctx.workspace.name()) {
            books.add(&ctx, &task, p, book, inner)?;
            continue;
        }
        let outside = |why: String| {
            coded(
                "DRAFT_PATH_OUTSIDE_PROJECT",
                format!("{p} is outside the project and task {task}'s draft area: {why}; nothing was changed. Give a project-relative path such as manuscript/012-chapter.md."),
                json!({"taskId": task, "path": p}),
            )
        };
        let r = ctx
            .workspace
            .resolve(p, Access::Read)
            .map_err(|e| outside(e.to_string()))?;
        if !r.in_current {
            return Err(outside("another project's files cannot be drafted".into()));
        }
        let first = r.rel.split('/').next().unwrap_or_default();
        if first == ".nbook" || first == ".git" {
            return Err(outside(
                "the .nbook and .git folders are nbook's and git's, not the book's: they can be read but not drafted (the fn_task_* tools change the task's records)".into(),
            ));
        }
        rels.push(r.rel);
    }
    let unavailable = |e: crate::board::BoardError| {
        coded(
            "DRAFT_UNAVAILABLE",
            format!("task {task}'s draft area could not be prepared: {e}; nothing was changed"),
            json!({"taskId": task}),
        )
    };
    let draft = Draft::new(ctx.workspace.root(), &task);
    draft.sync(&ctx.workspace, &rels).map_err(unavailable)?;
    let mut ws = opened(&draft).map_err(unavailable)?;
    if !books.0.is_empty() {
        // The book's draft workspace, with each named book's area reachable as
        // workspace/<book>/… — and nothing else of those books.
        let mut with = (*ws).clone();
        for b in &books.0 {
            b.area.sync(&b.manuscript, &b.rels).map_err(unavailable)?;
            let area = opened(&b.area).map_err(unavailable)?;
            with.attach_sibling(&b.name, area.root_dir().clone());
        }
        ws = Arc::new(with);
    }
    Ok(ToolCtx {
        workspace: ws,
        ..ctx
    })
}

/// `workspace/<book>/<path>` naming another project than this one: `(book, path)`.
fn other_book<'a>(addr: &'a str, current: &str) -> Option<(&'a str, &'a str)> {
    let rest = addr.trim().strip_prefix("workspace/")?;
    let (book, inner) = rest.split_once('/').unwrap_or((rest, ""));
    (book != current).then_some((book, inner))
}

/// The paths of one routed call in other books of the series, per book.
#[derive(Default)]
struct BookPaths(Vec<BookArea>);

struct BookArea {
    name: String,
    /// That book's manuscript (paths are authorized against it, as in this book).
    manuscript: Arc<Workspace>,
    /// This task's draft area there.
    area: Draft,
    rels: Vec<String>,
}

impl BookPaths {
    /// Check `addr` (`workspace/<book>/<inner>`): the book must be in the task's repository
    /// scope (acquired with fn_acquire_repo_worktree) and the path inside that book and not
    /// its `.nbook`/`.git`.
    fn add(
        &mut self,
        ctx: &ToolCtx,
        task: &str,
        addr: &str,
        book: &str,
        inner: &str,
    ) -> Result<(), ToolError> {
        let here = ctx.workspace.name().to_string();
        let outside = |code: &str, why: String| {
            coded(
                code,
                format!("{addr} cannot be drafted by task {task}: {why}; nothing was changed"),
                json!({"taskId": task, "path": addr, "repo": book}),
            )
        };
        if let Some(b) = self.0.iter_mut().find(|b| b.name == book) {
            let rel = book_rel(&b.manuscript, inner)
                .map_err(|w| outside("DRAFT_PATH_OUTSIDE_PROJECT", w))?;
            b.rels.push(rel);
            return Ok(());
        }
        let series = match crate::workspace::series::load(ctx.workspace.root()) {
            Ok(Some(s)) => s,
            Ok(None) => {
                return Err(outside(
                    "WORKSPACE_MODE_REQUIRED",
                    "this book declares no series in project.yaml, so other projects' files cannot be drafted".into(),
                ))
            }
            Err(e) => return Err(outside("WORKSPACE_MODE_REQUIRED", e.to_string())),
        };
        let Some(b) = series.book(book) else {
            return Err(outside(
                "UNKNOWN_REPO",
                format!(
                    "'{book}' is not a book of this series ({})",
                    series.names().join(", ")
                ),
            ));
        };
        let acquired = crate::board::Board::new(ctx.workspace.root(), &here)
            .read(|c| crate::board::repository_scope::list(c, task))
            .map_err(|e| outside("DRAFT_UNAVAILABLE", e.to_string()))?;
        if !acquired.iter().any(|a| a.book == book) {
            return Err(outside(
                "REPO_NOT_ACQUIRED",
                format!("book {book} is not in the task's repository scope; call fn_acquire_repo_worktree {{\"repo\": \"{book}\"}} first"),
            ));
        }
        let manuscript = crate::board::repository_scope::manuscript(&b.root)
            .map_err(|e| outside("DRAFT_UNAVAILABLE", e))?;
        let rel =
            book_rel(&manuscript, inner).map_err(|w| outside("DRAFT_PATH_OUTSIDE_PROJECT", w))?;
        self.0.push(BookArea {
            name: book.to_string(),
            area: crate::board::repository_scope::area(&b.root, &here, task),
            manuscript,
            rels: vec![rel],
        });
        Ok(())
    }
}

/// A path of another book, authorized against its manuscript: its book-relative form.
fn book_rel(manuscript: &Workspace, inner: &str) -> Result<String, String> {
    if inner.trim_matches('/').is_empty() {
        return Err("give a file of the book: workspace/<book>/<path>".into());
    }
    let r = manuscript
        .resolve(inner, Access::Read)
        .map_err(|e| e.to_string())?;
    let first = r.rel.split('/').next().unwrap_or_default();
    if first == ".nbook" || first == ".git" {
        return Err("the .nbook and .git folders are nbook's and git's, not the book's".into());
    }
    Ok(r.rel)
}

/// The draft's workspace, opened once per process: opening a workspace finishes or rolls back
/// the commits its journal holds, which must never happen under a commit another session of
/// the same task (a spawned child) is making in it right now.
fn opened(draft: &Draft) -> Result<Arc<Workspace>, crate::board::BoardError> {
    static OPEN: std::sync::Mutex<Vec<(std::path::PathBuf, Arc<Workspace>)>> =
        std::sync::Mutex::new(Vec::new());
    let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
    // Still the same folder (not removed and made again since it was opened).
    let same = |ws: &Workspace| {
        use std::os::unix::fs::MetadataExt;
        match (
            std::fs::metadata(draft.dir()),
            rustix::fs::fstat(&ws.root_dir().fd),
        ) {
            (Ok(m), Ok(st)) => m.ino() == st.st_ino && m.dev() == st.st_dev,
            _ => false,
        }
    };
    if let Some((_, ws)) = open.iter().find(|(p, ws)| p == draft.dir() && same(ws)) {
        return Ok(ws.clone());
    }
    let ws = Arc::new(draft.workspace()?);
    open.retain(|(p, _)| p != draft.dir());
    open.push((draft.dir().to_path_buf(), ws.clone()));
    Ok(ws)
}

/// Whether `ctx` was routed to a draft (its workspace is not the engine's manuscript).
pub(super) fn is_routed(ctx: &ToolCtx, manuscript: &Arc<Workspace>) -> bool {
    !Arc::ptr_eq(&ctx.workspace, manuscript)
}

/// A routed call that would wait for approval runs at once in `normal` mode: it writes only
/// the draft. A refusal (the `locked` preset, a `deny` override) and the read-only modes stand.
pub(super) fn relax(verdict: super::policy::Verdict, mode: Mode) -> super::policy::Verdict {
    use super::policy::Verdict;
    match verdict {
        Verdict::Ask { .. } if mode == Mode::Normal => Verdict::Run,
        v => v,
    }
}

/// A routed call's result says where it wrote, and marks no manuscript files as changed.
pub(super) fn annotate(
    outcome: Result<ToolOutput, ToolError>,
    draft_of: Option<&str>,
) -> Result<ToolOutput, ToolError> {
    let Some(task) = draft_of else {
        return outcome;
    };
    outcome.map(|mut o| {
        if !o.changed_paths.is_empty() {
            o.content = format!(
                "{} (in task {task}'s draft area; the manuscript changes only when the task is merged)",
                o.content
            );
            o.changed_paths.clear();
        }
        o
    })
}

/// The task of a routed context (for [`annotate`]).
pub(super) fn draft_task(ctx: &ToolCtx, manuscript: &Arc<Workspace>) -> Option<String> {
    if !is_routed(ctx, manuscript) {
        return None;
    }
    ctx.session_state
        .get(SESSION_TASK)
        .and_then(|v| v.as_str())
        .map(str::to_string)
}
