//! Draft areas: a task's copy-on-write overlay of the project under
//! `.nbook/tasks/<ID>/draft/`, where an executor's file tools read and write instead of the
//! manuscript (the engine routes them here: its `draft_route` module).
//!
//! **Layout.** The draft folder is the upper layer: it holds only the files the task's
//! sessions touched, at their project-relative paths, and is opened as a workspace of its own
//! (a `.nbook/` marker inside makes it one, so the file tools' path checks and atomic writes
//! work unchanged). `draft/.nbook/draft.json` records, for every path copied up, the
//! manuscript's state at that moment (its sha256, or absent) and `draft/.nbook/base/<path>`
//! keeps that content: the base a stale merge is rebased from.
//!
//! **Copy-up.** Before a routed call runs, each path it names is synced: a path never seen is
//! copied from the manuscript (or recorded absent); a path the draft has not changed since
//! (its state still equals its base) is refreshed from the manuscript, so the draft reads the
//! author's later edits of files it did not touch; a path the draft changed is left alone.
//! A deletion is the upper file missing while its base existed.
//!
//! **Changes.** [`Draft::changes`] lists every path whose draft state differs from its base,
//! with the base, the draft and the manuscript's current content — the Board's "draft diff so
//! far" and the merge gate's input (`super::merge`).
//!
//! **Git worktrees.** When the project folder is a git repository, a task's draft area is a
//! real worktree of it instead (`git`): the folder holds the whole book at the base commit,
//! on the branch `nbook/<ID>`. The rules above stay the same, with one difference: a path the
//! manifest does not list has the base commit's version as its base, and the candidates for
//! [`Draft::changes`] are the listed paths plus what `git diff` and the untracked files name.
//! The manifest, the base copies and the lock then live beside the worktree, in
//! `.nbook/tasks/<ID>/worktree/`, so nothing of nbook's is ever committed on the branch.
//! Archiving the task retires the worktree ([`Draft::retire`]): what it holds is committed
//! on its branch, and the folder is removed.

pub mod git;
pub mod merge3;

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{BoardError, BoardResult};
use crate::workspace::{Access, Workspace};

/// How a draft changed a file, against its base.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DraftChangeKind {
    Add,
    Update,
    Delete,
}

/// One file the draft changed: its content at copy-up (`base`), in the draft, and in the
/// manuscript now (`None`: absent). The manuscript differing from the base means the change
/// is stale (the author or another merge changed the file meanwhile).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DraftChange {
    pub path: String,
    pub kind: DraftChangeKind,
    pub base: Option<Vec<u8>>,
    pub draft: Option<Vec<u8>>,
    pub manuscript: Option<Vec<u8>>,
}

impl DraftChange {
    /// Whether the manuscript changed since the draft copied the file.
    pub fn stale(&self) -> bool {
        self.manuscript != self.base
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    /// `sha256:<hex>` of the manuscript's bytes at copy-up; `None`: the file was absent.
    base: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    files: BTreeMap<String, Entry>,
}

/// The draft area of one task.
#[derive(Clone, Debug)]
pub struct Draft {
    task: String,
    /// The manuscript's root.
    root: PathBuf,
    dir: PathBuf,
}

/// What a task's draft area is, once it exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Area {
    /// The copy-on-write overlay under `.nbook/tasks/<ID>/draft/`.
    Overlay,
    /// A git worktree at the same place on `branch`.
    Worktree { branch: String, base_commit: String },
    /// The worktree was removed when the task was archived; its last state is on `branch`.
    Retired { branch: String },
}

/// Serializes manifest updates of this process (another process is kept out by `flock`).
static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn io(action: &'static str, path: &Path, source: std::io::Error) -> BoardError {
    BoardError::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

fn hash(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    let mut s = String::from("sha256:");
    for b in d.as_ref() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// A regular file's bytes; `None` when it is missing or not a regular file (a folder).
fn read_opt(path: &Path) -> BoardResult<Option<Vec<u8>>> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => std::fs::read(path)
            .map(Some)
            .map_err(|e| io("read", path, e)),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == ErrorKind::NotFound || e.kind() == ErrorKind::NotADirectory => {
            Ok(None)
        }
        Err(e) => Err(io("read", path, e)),
    }
}

fn write(path: &Path, bytes: &[u8]) -> BoardResult<()> {
    crate::workspace::atomic_write(path, bytes).map_err(|e| io("write", path, e))
}

fn remove(path: &Path) -> BoardResult<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io("remove", path, e)),
    }
}

impl Draft {
    /// The draft area of task `task` in the project at `root` (nothing is created yet).
    pub fn new(root: &Path, task: &str) -> Draft {
        Draft {
            task: task.to_string(),
            root: root.to_path_buf(),
            dir: root.join(".nbook").join("tasks").join(task).join("draft"),
        }
    }

    fn task_dir(&self) -> PathBuf {
        self.root.join(".nbook").join("tasks").join(&self.task)
    }

    /// `.nbook/tasks/<ID>/worktree/`: a worktree's manifest, base copies and record.
    fn git_meta(&self) -> PathBuf {
        self.task_dir().join("worktree")
    }

    fn worktree_record(&self) -> BoardResult<Option<git::Worktree>> {
        let path = self.git_meta().join("worktree.json");
        match std::fs::read_to_string(&path) {
            Ok(t) => serde_json::from_str(&t)
                .map(Some)
                .map_err(|e| BoardError::Corrupt {
                    what: format!("worktree record {}", path.display()),
                    message: e.to_string(),
                }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io("read", &path, e)),
        }
    }

    fn save_worktree_record(&self, w: &git::Worktree) -> BoardResult<()> {
        let path = self.git_meta().join("worktree.json");
        let text = serde_json::to_string_pretty(w).map_err(|e| BoardError::Corrupt {
            what: "worktree record".into(),
            message: e.to_string(),
        })?;
        write(&path, text.as_bytes())
    }

    /// What the draft area is; `None` before anything was drafted.
    pub fn area(&self) -> BoardResult<Option<Area>> {
        if let Some(w) = self.worktree_record()? {
            return Ok(Some(if w.retired || !self.dir.exists() {
                Area::Retired { branch: w.branch }
            } else {
                Area::Worktree {
                    branch: w.branch,
                    base_commit: w.base_commit,
                }
            }));
        }
        Ok(self
            .meta()
            .join("draft.json")
            .exists()
            .then_some(Area::Overlay))
    }

    /// The base commit when the draft area is a live worktree.
    fn base_commit(&self) -> BoardResult<Option<String>> {
        Ok(self
            .worktree_record()?
            .filter(|w| !w.retired)
            .map(|w| w.base_commit))
    }

    pub fn task(&self) -> &str {
        &self.task
    }

    /// `.nbook/tasks/<ID>/draft/`: the upper layer, a workspace root of its own.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the manifest and the base copies live: inside the overlay, beside a worktree.
    fn meta(&self) -> PathBuf {
        if self.git_meta().join("worktree.json").exists() {
            self.git_meta()
        } else {
            self.dir.join(".nbook")
        }
    }

    fn upper(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn base_copy(&self, rel: &str) -> PathBuf {
        self.meta().join("base").join(rel)
    }

    /// Create the draft area and its workspace marker, so it opens as a workspace: a git
    /// worktree when the project is a repository and this task has no overlay yet (or had a
    /// worktree that its archiving retired), else the overlay folder.
    pub fn ensure(&self) -> BoardResult<()> {
        let record = self.worktree_record()?;
        let needs_worktree = match &record {
            Some(w) => w.retired || !self.dir.exists(),
            None => !self.dir.exists(),
        };
        if needs_worktree {
            if let Some(head) = git::head_of_repository(&self.root) {
                let parent = self.task_dir();
                std::fs::create_dir_all(&parent).map_err(|e| io("create", &parent, e))?;
                let w = git::add(&self.root, &self.dir, &self.task, &head, record.as_ref())?;
                self.save_worktree_record(&w)?;
            } else if record.is_some() {
                return Err(BoardError::Git {
                    command: "worktree add".into(),
                    message: format!(
                        "task {}'s draft area is a git worktree, but {} is no longer a git repository with a commit",
                        self.task,
                        self.root.display()
                    ),
                });
            }
        }
        let marker = self.dir.join(".nbook");
        std::fs::create_dir_all(&marker).map_err(|e| io("create", &marker, e))?;
        let meta = self.meta();
        std::fs::create_dir_all(&meta).map_err(|e| io("create", &meta, e))
    }

    /// Archiving the task: a worktree's content is committed on its branch and the folder
    /// removed (the overlay is left as it is; it is plain files under `.nbook/`). Returns the
    /// commit made, if any.
    pub fn retire(&self) -> BoardResult<Option<String>> {
        self.locked_raw(|| {
            let Some(mut w) = self.worktree_record()? else {
                return Ok(None);
            };
            if w.retired {
                return Ok(None);
            }
            let made = git::retire(&self.root, &self.dir, &self.task)?;
            w.retired = true;
            self.save_worktree_record(&w)?;
            Ok(made)
        })
    }

    /// Open the upper layer as a workspace (for the routed file tools).
    pub fn workspace(&self) -> BoardResult<Workspace> {
        self.ensure()?;
        Workspace::open(&self.dir).map_err(|e| BoardError::Io {
            action: "open",
            path: self.dir.display().to_string(),
            source: std::io::Error::other(e.to_string()),
        })
    }

    fn load(&self) -> BoardResult<Manifest> {
        let path = self.meta().join("draft.json");
        match std::fs::read_to_string(&path) {
            Ok(t) => serde_json::from_str(&t).map_err(|e| BoardError::Corrupt {
                what: format!("draft manifest {}", path.display()),
                message: e.to_string(),
            }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Manifest {
                version: 1,
                ..Manifest::default()
            }),
            Err(e) => Err(io("read", &path, e)),
        }
    }

    fn save(&self, m: &Manifest) -> BoardResult<()> {
        let path = self.meta().join("draft.json");
        let text = serde_json::to_string_pretty(m).map_err(|e| BoardError::Corrupt {
            what: "draft manifest".into(),
            message: e.to_string(),
        })?;
        write(&path, text.as_bytes())
    }

    /// Run `f` holding the draft's lock (the area made first): see [`Draft::locked_raw`].
    fn locked<T>(&self, f: impl FnOnce() -> BoardResult<T>) -> BoardResult<T> {
        self.locked_raw(|| {
            self.ensure()?;
            f()
        })
    }

    /// Run `f` holding the draft's lock: this process's mutex and an exclusive `flock` on
    /// `.nbook/tasks/<ID>/draft.lock` (the TUI and `nbook board run` may share a task; the
    /// lock is outside the area because making the area is what it guards first).
    fn locked_raw<T>(&self, f: impl FnOnce() -> BoardResult<T>) -> BoardResult<T> {
        let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let parent = self.task_dir();
        std::fs::create_dir_all(&parent).map_err(|e| io("create", &parent, e))?;
        let path = parent.join("draft.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io("open", &path, e))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| io("lock", &path, e.into()))?;
        f()
    }

    /// Copy up the project-relative paths `rels` before a routed call reads or writes them;
    /// `ws` is the manuscript (every path is resolved through it, so nothing outside the
    /// project is ever read). Paths that resolve to a folder are left to the tool.
    pub fn sync(&self, ws: &Workspace, rels: &[String]) -> BoardResult<()> {
        self.locked(|| {
            let mut m = self.load()?;
            let base_commit = self.base_commit()?;
            let mut dirty = false;
            for rel in rels {
                let r = ws
                    .resolve(rel, Access::Read)
                    .map_err(|e| BoardError::invalid("path", e.to_string()))?;
                let (abs, rel) = (r.abs, &r.rel);
                if rel.is_empty() || abs.is_dir() {
                    continue;
                }
                let upper = self.upper(rel);
                let current = read_opt(&upper)?;
                let entry = m.files.get(rel);
                let unchanged = match (entry, &base_commit) {
                    (Some(e), _) => current.as_deref().map(hash) == e.base,
                    (None, None) => true,
                    // A worktree's unlisted path: unchanged while it is the base commit's.
                    (None, Some(c)) => current == git::blob(&self.dir, c, rel)?,
                };
                if !unchanged {
                    continue;
                }
                let manuscript = read_opt(&abs)?;
                let base = manuscript.as_deref().map(hash);
                let recorded = match entry {
                    Some(e) => e.base == base,
                    None => base_commit.is_some(),
                };
                if recorded && current == manuscript {
                    continue;
                }
                match &manuscript {
                    Some(bytes) => {
                        write(&upper, bytes)?;
                        write(&self.base_copy(rel), bytes)?;
                    }
                    None => {
                        remove(&upper)?;
                        remove(&self.base_copy(rel))?;
                    }
                }
                m.files.insert(rel.clone(), Entry { base });
                dirty = true;
            }
            if dirty {
                self.save(&m)?;
            }
            Ok(())
        })
    }

    /// Every file the draft changed against its base, by path.
    pub fn changes(&self, ws: &Workspace) -> BoardResult<Vec<DraftChange>> {
        self.changes_with(&|rel| match ws.resolve(rel, Access::Read) {
            Ok(r) => read_opt(&r.abs),
            Err(_) => Ok(None),
        })
    }

    fn changes_with(
        &self,
        manuscript_of: &dyn Fn(&str) -> BoardResult<Option<Vec<u8>>>,
    ) -> BoardResult<Vec<DraftChange>> {
        let m = self.load()?;
        let mut candidates: Vec<String> = m.files.keys().cloned().collect();
        let base_commit = self.base_commit()?;
        if let Some(c) = &base_commit {
            if self.dir.exists() {
                candidates.extend(git::changed_paths(&self.dir, c)?);
                candidates.sort();
                candidates.dedup();
            }
        }
        let mut out = Vec::new();
        for rel in &candidates {
            let draft = read_opt(&self.upper(rel))?;
            let base = match (m.files.get(rel), &base_commit) {
                (Some(e), _) => {
                    if draft.as_deref().map(hash) == e.base {
                        continue;
                    }
                    match e.base {
                        Some(_) => read_opt(&self.base_copy(rel))?,
                        None => None,
                    }
                }
                (None, Some(c)) => {
                    let base = git::blob(&self.dir, c, rel)?;
                    if base == draft {
                        continue;
                    }
                    base
                }
                (None, None) => continue,
            };
            let manuscript = manuscript_of(rel)?;
            let kind = match (&base, &draft) {
                (None, _) => DraftChangeKind::Add,
                (Some(_), None) => DraftChangeKind::Delete,
                (Some(_), Some(_)) => DraftChangeKind::Update,
            };
            out.push(DraftChange {
                path: rel.clone(),
                kind,
                base,
                draft,
                manuscript,
            });
        }
        Ok(out)
    }

    /// A merged file: the draft forgets it (the manuscript now holds the draft's version, and
    /// the next read copies it up afresh).
    pub fn settle(&self, rel: &str) -> BoardResult<()> {
        if self.base_commit()?.is_some() {
            // A worktree keeps the whole book: the merged file stays, with the manuscript's
            // new content (the draft's) as its base.
            let now = read_opt(&self.upper(rel))?;
            return self.rebase(rel, now.as_deref(), now.as_deref());
        }
        self.locked(|| {
            let mut m = self.load()?;
            if m.files.remove(rel).is_some() {
                remove(&self.upper(rel))?;
                remove(&self.base_copy(rel))?;
                self.save(&m)?;
            }
            Ok(())
        })
    }

    /// Move a file's base to the manuscript's current content and set the draft's content
    /// (`None`: deleted): a rebase, or a conflict written out for the executor to resolve.
    pub fn rebase(
        &self,
        rel: &str,
        manuscript: Option<&[u8]>,
        draft: Option<&[u8]>,
    ) -> BoardResult<()> {
        self.locked(|| {
            let mut m = self.load()?;
            match manuscript {
                Some(b) => write(&self.base_copy(rel), b)?,
                None => remove(&self.base_copy(rel))?,
            }
            match draft {
                Some(b) => write(&self.upper(rel), b)?,
                None => remove(&self.upper(rel))?,
            }
            m.files.insert(
                rel.to_string(),
                Entry {
                    base: manuscript.map(hash),
                },
            );
            self.save(&m)
        })
    }
}

/// The draft's changes of task `task` in the project `ws`, for the Board's detail ("the
/// draft's diff so far"); a task that never wrote has none.
pub fn changes(ws: &Workspace, task: &str) -> BoardResult<Vec<DraftChange>> {
    let d = Draft::new(ws.root(), task);
    if !d.dir().exists() {
        return Ok(Vec::new());
    }
    d.changes(ws)
}

/// One changed file of a draft as the Board's detail shows it: a unified diff against its
/// base (cut at [`DIFF_LINES`] lines), whether it is inside the task's `## File Scope` (the
/// merge holds the others back) and whether the manuscript changed under it since.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DraftDiff {
    pub path: String,
    pub kind: DraftChangeKind,
    pub added: usize,
    pub removed: usize,
    pub diff: Vec<String>,
    pub in_scope: bool,
    pub stale: bool,
}

/// Diff lines kept per file in [`DraftDiff::diff`].
pub const DIFF_LINES: usize = 200;

/// The draft's diff so far of `task` in the project at `root`, for display; `None` when the
/// task has no draft area yet. Manuscript files are read by path (the paths were authorized
/// when they were copied up; nothing is written).
pub fn diffs(root: &Path, task: &super::Task) -> BoardResult<Option<Vec<DraftDiff>>> {
    let d = Draft::new(root, &task.id);
    match d.area()? {
        None | Some(Area::Retired { .. }) => return Ok(None),
        Some(Area::Overlay | Area::Worktree { .. }) => {}
    }
    let changes = d.changes_with(&|rel| read_opt(&root.join(rel)))?;
    Ok(Some(
        changes
            .into_iter()
            .map(|c| {
                let text = |b: &Option<Vec<u8>>| {
                    b.as_deref()
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                        .unwrap_or_default()
                };
                let (old, new) = (text(&c.base), text(&c.draft));
                let td = similar::TextDiff::from_lines(&old, &new);
                let (mut added, mut removed) = (0, 0);
                for ch in td.iter_all_changes() {
                    match ch.tag() {
                        similar::ChangeTag::Insert => added += 1,
                        similar::ChangeTag::Delete => removed += 1,
                        similar::ChangeTag::Equal => {}
                    }
                }
                let mut diff: Vec<String> = td
                    .unified_diff()
                    .context_radius(2)
                    .to_string()
                    .lines()
                    .map(str::to_string)
                    .collect();
                if diff.len() > DIFF_LINES {
                    let more = diff.len() - DIFF_LINES;
                    diff.truncate(DIFF_LINES);
                    diff.push(format!("… {more} more diff lines"));
                }
                DraftDiff {
                    in_scope: super::scope::in_scope(&task.file_scope, &c.path),
                    stale: c.stale(),
                    path: c.path,
                    kind: c.kind,
                    added,
                    removed,
                    diff,
                }
            })
            .collect(),
    ))
}
