//! The git side of a draft area: when the project folder is itself a git repository (its
//! root is the repository's top level, with at least one commit), a task's draft area is a
//! real `git worktree` at `.nbook/tasks/<ID>/draft/` on the branch `nbook/<ID>`, made from
//! the commit `HEAD` names at that moment (the *base commit*).
//!
//! This module only runs git: add a worktree, read a blob of the base commit, list the paths
//! the worktree changed against it (`git diff` plus untracked files), and retire a worktree
//! (commit what is left on its branch, then `git worktree remove`). What a change *is* (the
//! base a file is compared with, copy-up, rebase) stays in the parent module, shared with the
//! overlay.
//!
//! **Why only a repository's own root.** A book inside a larger repository (or a home folder
//! kept in git) would check the whole repository out once per task; such projects keep the
//! overlay.
//!
//! **The author's git is left alone.** nbook's commands run with hooks off
//! (`core.hooksPath=/dev/null`: the author's post-checkout or pre-commit hooks are for their
//! own checkout), no signing, no prompts, and without inherited `GIT_DIR`-style variables
//! that would point them at another repository. A commit on a task branch uses the author's
//! identity when git has one, else `nbook <nbook@localhost>`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use super::super::error::{BoardError, BoardResult};

/// Files of a worktree that are nbook's, never the book's (the workspace marker and journal
/// the routed file tools keep there).
const NBOOK_DIR: &str = ".nbook";

/// The record of a task's worktree, kept outside it (`.nbook/tasks/<ID>/worktree/worktree.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Worktree {
    pub version: u32,
    /// `nbook/<ID>`.
    pub branch: String,
    /// The commit the worktree was made from: the base of every file the draft has not
    /// copied up or been rebased on since.
    pub base_commit: String,
    /// `git worktree remove` ran (the task was archived): what was left is committed on the
    /// branch, and the folder is gone until the task is drafted again.
    #[serde(default)]
    pub retired: bool,
}

fn failed(command: &str, message: impl Into<String>) -> BoardError {
    BoardError::Git {
        command: command.to_string(),
        message: message.into(),
    }
}

/// `git -C dir <args>`, its standard output; a failure carries git's own words.
fn run(dir: &Path, args: &[&str]) -> BoardResult<Vec<u8>> {
    let out = command(dir, args)
        .output()
        .map_err(|e| failed(&args.join(" "), format!("cannot run git: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(failed(&args.join(" "), err));
    }
    Ok(out.stdout)
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(dir)
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "commit.gpgSign=false",
            "-c",
            "core.quotePath=false",
        ])
        .args(args)
        .stdin(Stdio::null())
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C");
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_CEILING_DIRECTORIES",
    ] {
        c.env_remove(var);
    }
    c
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// The commit `HEAD` names when `root` is the top level of a git repository with a commit;
/// `None` otherwise (no git, not a repository, a subfolder of one, no commit yet).
pub fn head_of_repository(root: &Path) -> Option<String> {
    let top = run(root, &["rev-parse", "--show-toplevel"]).ok()?;
    let top = PathBuf::from(text(top));
    let same = match (std::fs::canonicalize(&top), std::fs::canonicalize(root)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same {
        return None;
    }
    let head = run(root, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).ok()?;
    Some(text(head)).filter(|h| !h.is_empty())
}

fn branch_exists(root: &Path, branch: &str) -> bool {
    run(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )
    .is_ok()
}

/// `git worktree add` for task `task` at `dir`. A branch `nbook/<ID>` that already exists is
/// checked out as it is (the task was archived and is drafted again, or the record was lost:
/// then its base is where it forked from `HEAD`); otherwise it is made at `head`.
pub fn add(
    root: &Path,
    dir: &Path,
    task: &str,
    head: &str,
    known: Option<&Worktree>,
) -> BoardResult<Worktree> {
    let branch = format!("nbook/{task}");
    let dir_s = dir.to_string_lossy();
    // A worktree folder deleted by hand is still registered until pruned.
    run(root, &["worktree", "prune"])?;
    let base_commit = if branch_exists(root, &branch) {
        run(root, &["worktree", "add", "--quiet", &dir_s, &branch])?;
        match known {
            Some(k) => k.base_commit.clone(),
            None => text(run(root, &["merge-base", head, &branch])?),
        }
    } else {
        run(
            root,
            &["worktree", "add", "--quiet", "-b", &branch, &dir_s, head],
        )?;
        head.to_string()
    };
    Ok(Worktree {
        version: 1,
        branch,
        base_commit,
        retired: false,
    })
}

/// The bytes of `rel` in commit `commit`; `None` when the commit has no such file.
pub fn blob(dir: &Path, commit: &str, rel: &str) -> BoardResult<Option<Vec<u8>>> {
    let spec = format!("{commit}:{rel}");
    // `cat-file -e` answers "absent" without an error message to parse.
    let exists = command(dir, &["cat-file", "-e", &spec])
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| failed("cat-file", format!("cannot run git: {e}")))?;
    if !exists.success() {
        return Ok(None);
    }
    run(dir, &["cat-file", "blob", &spec]).map(Some)
}

/// The book's paths the worktree at `dir` changed against `commit` (tracked changes, staged
/// or not, and deletions) plus its untracked files, nbook's own folder left out.
pub fn changed_paths(dir: &Path, commit: &str) -> BoardResult<Vec<String>> {
    let exclude = format!(":(exclude){NBOOK_DIR}");
    let mut out = Vec::new();
    for args in [
        vec![
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            commit,
            "--",
            ".",
            &exclude,
        ],
        vec![
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
            "--",
            ".",
            &exclude,
        ],
    ] {
        for p in run(dir, &args)?.split(|b| *b == 0) {
            if p.is_empty() {
                continue;
            }
            let p = String::from_utf8_lossy(p).into_owned();
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Whether git has an identity to commit with (else nbook gives its own).
fn has_identity(dir: &Path) -> bool {
    ["user.name", "user.email"]
        .iter()
        .all(|k| run(dir, &["config", k]).is_ok_and(|v| !text(v).is_empty()))
}

/// Retire the worktree at `dir`: commit what it holds on its branch (nothing is lost: the
/// branch keeps it), then remove the worktree. Returns the commit made, if any.
pub fn retire(root: &Path, dir: &Path, task: &str) -> BoardResult<Option<String>> {
    let exclude = format!(":(exclude){NBOOK_DIR}");
    let mut made = None;
    if dir.exists() {
        run(dir, &["add", "--all", "--", ".", &exclude])?;
        let staged = command(dir, &["diff", "--cached", "--quiet"])
            .status()
            .map_err(|e| failed("diff --cached", format!("cannot run git: {e}")))?;
        if !staged.success() {
            let message = format!("nbook: {task}'s draft area when the task was archived");
            let mut args = Vec::new();
            if !has_identity(dir) {
                args.extend(["-c", "user.name=nbook", "-c", "user.email=nbook@localhost"]);
            }
            args.extend(["commit", "--quiet", "--no-verify", "-m", &message]);
            run(dir, &args)?;
            made = Some(text(run(dir, &["rev-parse", "HEAD"])?));
        }
        let dir_s = dir.to_string_lossy();
        run(root, &["worktree", "remove", "--force", &dir_s])?;
    }
    Ok(made)
}
