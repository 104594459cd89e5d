//! A task's repository scope in series workspace mode (`crate::workspace::series`): the other
//! books of the series in which the task acquired a draft area (`fn_acquire_repo_worktree`).
//! The task's own book is always in scope and has no row. Storage: migration
//! `011_task_repository_scope.sql`.
//!
//! **Declared scope.** A task may also declare up front the books it means to work in
//! (`fn_task_create`'s `repository_scope`, or the plan's `## Repository Scope`), before it
//! acquired anything there: [`declared`], stored by migration `013_…` apart from the
//! acquisitions because a declared book has no area yet. The names are checked against the
//! series by [`check_declared`] (`WORKSPACE_MODE_REQUIRED`, `UNKNOWN_REPO`). As in Fusion, the
//! plan's list replaces what was declared before, and acquiring a book outside the declared
//! scope extends it (recorded as declared by `acquisition`, with the acquisition's reason).
//!
//! **Where the area lives.** In the other book, under that book's `.nbook/tasks/`, named
//! [`area_id`] — `<this book>--<task id>` — because task ids are per book: the other book's
//! own board may have a task with the same id, and its draft area must never be this one.
//! The draft rules are those of `super::draft` (an overlay, or a git worktree when that book
//! is a repository).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::json;

use super::draft::Draft;
use super::error::{BoardError, BoardResult};
use super::model::{DRAFTING, PLANNING};
use super::tasks::{log, need_column, require};
use super::{Outcome, Touched};

/// One book a task acquired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acquired {
    pub book: String,
    /// The task's draft area in that book.
    pub area_path: String,
    pub reason: Option<String>,
    pub acquired_at: String,
}

/// One book a task declared it works in (acquired there or not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    pub book: String,
    /// `create` (fn_task_create), `prompt` (PROMPT.md) or `acquisition` (an acquisition
    /// outside the declared scope extended it).
    pub declared_by: String,
    pub reason: Option<String>,
}

/// The series' books as a declaration is checked against: this book's name and the others'.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeriesBooks {
    pub current: String,
    pub others: Vec<String>,
}

impl SeriesBooks {
    pub fn of(s: &crate::workspace::series::Series) -> Self {
        SeriesBooks {
            current: s.current.clone(),
            others: s.others.iter().map(|b| b.name.clone()).collect(),
        }
    }
}

/// Check a declared scope against the series: `None` (not in workspace mode) refuses any
/// non-empty list (`WORKSPACE_MODE_REQUIRED`, `why` saying so); an unknown book is
/// `UNKNOWN_REPO` with the series' books. Names are trimmed, duplicates folded (first order
/// kept), and the task's own book is dropped: it is always in scope and needs no row.
pub fn check_declared(
    series: Option<&SeriesBooks>,
    names: &[String],
    why_not_series: &str,
) -> BoardResult<Vec<String>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let Some(s) = series else {
        return Err(BoardError::WorkspaceModeRequired {
            why: why_not_series.to_string(),
        });
    };
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let n = n.trim();
        if n.is_empty() {
            return Err(BoardError::invalid(
                "repository_scope",
                "a book name is empty; give the folder names of books of the series",
            ));
        }
        if n == s.current {
            continue;
        }
        if !s.others.iter().any(|o| o == n) {
            let mut available = vec![s.current.clone()];
            available.extend(s.others.iter().cloned());
            return Err(BoardError::UnknownRepo {
                repo: n.to_string(),
                available,
            });
        }
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    Ok(out)
}

/// The books task `task` declared, in the order they were declared.
pub fn declared(c: &Connection, task: &str) -> BoardResult<Vec<Declared>> {
    let mut st = c.prepare(
        "SELECT book, declared_by, reason FROM nbook_board_task_declared_repository
         WHERE task_id = ?1 ORDER BY declared_at, rowid",
    )?;
    let rows = st.query_map([task], |r| {
        Ok(Declared {
            book: r.get(0)?,
            declared_by: r.get(1)?,
            reason: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Set task `task`'s declared scope to `books` (already checked by [`check_declared`]), as
/// declared `by` (`create` or `prompt`): the rows a former declaration left are replaced, the
/// extensions acquisitions made are kept (the task works there already). Logged when it
/// changes anything.
pub fn declare(
    c: &Connection,
    out: &mut Outcome,
    task: &str,
    books: &[String],
    by: &str,
    actor: Option<&str>,
) -> BoardResult<()> {
    let before: Vec<String> = declared(c, task)?.into_iter().map(|d| d.book).collect();
    c.execute(
        "DELETE FROM nbook_board_task_declared_repository WHERE task_id = ?1 AND declared_by != 'acquisition'",
        [task],
    )?;
    let at = super::now();
    for b in books {
        c.execute(
            "INSERT OR IGNORE INTO nbook_board_task_declared_repository (task_id, book, declared_by, reason, declared_at)
             VALUES (?1, ?2, ?3, NULL, ?4)",
            params![task, b, by, at],
        )?;
    }
    let after: Vec<String> = declared(c, task)?.into_iter().map(|d| d.book).collect();
    if before != after {
        let list = if after.is_empty() {
            "none besides this book".to_string()
        } else {
            after.join(", ")
        };
        log(
            c,
            out,
            task,
            &format!("Declared repository scope: {list}"),
            None,
            actor,
        )?;
    }
    Ok(())
}

/// The draft-area id of task `task` of book `book` inside another book of the series: only
/// letters, digits, `_` and `-` (it names a folder and a git branch `nbook/<id>`).
pub fn area_id(book: &str, task: &str) -> String {
    let clean: String = book
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{clean}--{task}")
}

/// The draft area of task `task` (of book `book`) in the other book at `other_root`.
pub fn area(other_root: &Path, book: &str, task: &str) -> Draft {
    Draft::new(other_root, &area_id(book, task))
}

/// Where that area is (whether it exists yet or not).
pub fn area_path(other_root: &Path, book: &str, task: &str) -> PathBuf {
    area(other_root, book, task).dir().to_path_buf()
}

/// The books task `task` acquired, in the order it acquired them.
pub fn list(c: &Connection, task: &str) -> BoardResult<Vec<Acquired>> {
    let mut st = c.prepare(
        "SELECT book, area_path, reason, acquired_at FROM nbook_board_task_repository
         WHERE task_id = ?1 ORDER BY acquired_at, book",
    )?;
    let rows = st.query_map([task], |r| {
        Ok(Acquired {
            book: r.get(0)?,
            area_path: r.get(1)?,
            reason: r.get(2)?,
            acquired_at: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Whether the task may still acquire a book: only while it is planned or drafted (Fusion
/// refuses a late acquisition once review or landing started).
pub fn check_acquirable(c: &Connection, task: &str, book: &str) -> BoardResult<()> {
    let t = require(c, task)?;
    match need_column(c, &t, "fn_acquire_repo_worktree", &[PLANNING, DRAFTING]) {
        Ok(()) => Ok(()),
        Err(BoardError::WrongColumn { .. }) => Err(BoardError::LateRepoAcquisition {
            id: t.id.clone(),
            repo: book.to_string(),
        }),
        Err(e) => Err(e),
    }
}

/// Record that `task` acquired `book` (its area at `area_path`), once; the task log says
/// whether the area was created or reused.
pub fn record(
    c: &Connection,
    task: &str,
    book: &str,
    area_path: &str,
    reason: Option<&str>,
    actor: Option<&str>,
) -> BoardResult<Outcome> {
    check_acquirable(c, task, book)?;
    let existing: Option<String> = c
        .query_row(
            "SELECT area_path FROM nbook_board_task_repository WHERE task_id = ?1 AND book = ?2",
            params![task, book],
            |r| r.get(0),
        )
        .optional()?;
    let mut out = Outcome::default();
    let reused = existing.is_some();
    if !reused {
        c.execute(
            "INSERT INTO nbook_board_task_repository (task_id, book, area_path, reason, acquired_by, acquired_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![task, book, area_path, reason, actor, super::now()],
        )?;
    }
    let action = if reused {
        format!("fn_acquire_repo_worktree: reusing the draft area in book {book} at {area_path}")
    } else {
        format!(
            "fn_acquire_repo_worktree: acquired a draft area in book {book} at {area_path}{}",
            reason.map(|r| format!(" ({r})")).unwrap_or_default()
        )
    };
    log(c, &mut out, task, &action, Some("acquired"), actor)?;
    let was_declared = declared(c, task)?.iter().any(|d| d.book == book);
    if !was_declared {
        // Fusion: a successful acquisition outside the declared intent extends it, with the
        // acquisition's reason, so review and merge include that book deliberately.
        c.execute(
            "INSERT INTO nbook_board_task_declared_repository (task_id, book, declared_by, reason, declared_at)
             VALUES (?1, ?2, 'acquisition', ?3, ?4)",
            params![task, book, reason, super::now()],
        )?;
        log(
            c,
            &mut out,
            task,
            &format!(
                "Repository scope extended to {book} by the acquisition (it was not declared)"
            ),
            None,
            actor,
        )?;
    }
    out.text = format!(
        "Draft area ready in book {book} at: {area_path} (alreadyAcquired: {reused}). Address its files as workspace/{book}/<path>; they reach the manuscript of {book} only through merge_task_draft."
    );
    out.value = json!({
        "taskId": task, "repo": book, "worktreePath": area_path, "alreadyAcquired": reused,
        "address": format!("workspace/{book}/"), "extendedScope": !was_declared,
    });
    out.touched.push(Touched::Task(task.to_string()));
    Ok(out)
}

/// The changed files of `task`'s area in the acquired book `a` (as `workspace/<book>/<path>`),
/// for the Board's detail; the book is found through this book's series declaration.
pub fn changed_files(
    root: &Path,
    a: &Acquired,
    task: &str,
) -> Result<Vec<(super::draft::DraftChangeKind, String)>, String> {
    let series = crate::workspace::series::load(root)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "project.yaml no longer declares the series".to_string())?;
    let book = series
        .book(&a.book)
        .ok_or_else(|| format!("the series no longer lists {}", a.book))?;
    let ws = manuscript(&book.root)?;
    let d = area(&book.root, &series.current, task);
    if !d.dir().exists() {
        return Ok(Vec::new());
    }
    let changes = d.changes(&ws).map_err(|e| e.to_string())?;
    Ok(changes
        .into_iter()
        .map(|c| (c.kind, format!("workspace/{}/{}", a.book, c.path)))
        .collect())
}

/// Archiving the task: retire its areas in the other books too (a git worktree's content is
/// committed on its branch and the folder removed; see [`Draft::retire`]). A book the series
/// no longer lists cannot be reached, and is named in the error (the archive stands).
pub fn retire(board: &super::Board, root: &Path, task: &str) -> BoardResult<()> {
    let acquired = board.read(|c| list(c, task))?;
    if acquired.is_empty() {
        return Ok(());
    }
    let series = crate::workspace::series::load(root).ok().flatten();
    let mut unreachable = Vec::new();
    for a in &acquired {
        match series
            .as_ref()
            .and_then(|s| s.book(&a.book).map(|b| (s, b)))
        {
            Some((s, b)) => {
                area(&b.root, &s.current, task).retire()?;
            }
            None => unreachable.push(a.book.clone()),
        }
    }
    if unreachable.is_empty() {
        Ok(())
    } else {
        Err(BoardError::Invalid {
            field: "repository_scope",
            message: format!(
                "task {task}'s draft areas in {} were not retired: the series no longer lists {}",
                unreachable.join(", "),
                if unreachable.len() == 1 { "it" } else { "them" }
            ),
        })
    }
}

/// Another book's manuscript, opened once per process (and again only when its folder was
/// replaced): opening a workspace finishes or rolls back the commits its journal holds, which
/// must not be repeated on every call while that book's own nbook may be committing.
pub fn manuscript(root: &Path) -> Result<Arc<crate::workspace::Workspace>, String> {
    use std::os::unix::fs::MetadataExt;
    static OPEN: std::sync::Mutex<Vec<(PathBuf, Arc<crate::workspace::Workspace>)>> =
        std::sync::Mutex::new(Vec::new());
    let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
    let same = |ws: &crate::workspace::Workspace| match (
        std::fs::metadata(root),
        rustix::fs::fstat(&ws.root_dir().fd),
    ) {
        (Ok(m), Ok(st)) => m.ino() == st.st_ino && m.dev() == st.st_dev,
        _ => false,
    };
    if let Some((_, ws)) = open.iter().find(|(p, ws)| p == root && same(ws)) {
        return Ok(ws.clone());
    }
    let ws = Arc::new(crate::workspace::Workspace::open(root).map_err(|e| e.to_string())?);
    open.retain(|(p, _)| p != root);
    open.push((root.to_path_buf(), ws.clone()));
    Ok(ws)
}
