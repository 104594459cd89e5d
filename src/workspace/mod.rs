//! The project folder: what makes a folder a project, creating one, file addresses with their
//! authorization (`paths`, resolved through held folder handles by `walk`), write destinations
//! (`target`), atomic writes (`atomic`) and the commit journal that repairs an interrupted
//! multi-file write on the next open (`journal`), and opening only regular files (`regular`).

pub mod atomic;
pub mod init;
pub mod journal;
pub mod paths;
pub mod regular;
pub mod series;
pub mod target;
pub mod walk;

use std::collections::BTreeMap;
use std::os::unix::io::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use atomic::atomic_write;
pub use paths::{Access, Resolved};
pub use target::Target;

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("{path} is not an nbook project (no project.yaml or .nbook/ folder). Create one with `nbook init {path}`, or try the sample with `nbook demo`.")]
    NotAProject { path: String },
    #[error("{path} does not exist. Create a project there with `nbook init {path}`.")]
    Missing { path: String },
    #[error("{path} is already a project (it has a project.yaml); open it with `nbook {path}`.")]
    AlreadyAProject { path: String },
    #[error("path '{path}' is refused: {why}")]
    PathRefused { path: String, why: String },
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl WorkspaceError {
    pub fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        WorkspaceError::Io {
            action,
            path: path.display().to_string(),
            source,
        }
    }
}

/// A folder held open by handle: a project root, or a plain folder (`apply_to_dir`). Every
/// path below it is resolved from this handle, never by name from `/`.
#[derive(Debug)]
pub struct RootDir {
    /// The real (canonical) path the handle was opened on.
    pub path: PathBuf,
    pub fd: OwnedFd,
    /// A project keeps its commit journal in `.nbook/journal/`; a plain folder has none.
    pub is_project: bool,
}

impl RootDir {
    /// Hold the folder at `path` (canonicalised first).
    pub fn open(path: &Path, is_project: bool) -> Result<RootDir, WorkspaceError> {
        let real = std::fs::canonicalize(path).map_err(|e| WorkspaceError::io("open", path, e))?;
        let fd = rustix::fs::openat(
            rustix::fs::CWD,
            &real,
            walk::dir_flags(),
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| WorkspaceError::io("open", path, e.into()))?;
        Ok(RootDir {
            path: real,
            fd,
            is_project,
        })
    }
}

/// An open project. The root is stored as its real (canonical) path and held open.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: Arc<RootDir>,
    name: String,
    siblings: BTreeMap<String, Arc<RootDir>>,
    /// What opening the project repaired (interrupted commits finished or rolled back).
    recovery: Vec<String>,
}

impl Workspace {
    /// Open the project at `path`. The folder must hold `project.yaml` or `.nbook/`.
    pub fn open(path: &Path) -> Result<Workspace, WorkspaceError> {
        if !path.exists() {
            return Err(WorkspaceError::Missing {
                path: path.display().to_string(),
            });
        }
        let root = std::fs::canonicalize(path).map_err(|e| WorkspaceError::io("open", path, e))?;
        if !is_project(&root) {
            return Err(WorkspaceError::NotAProject {
                path: path.display().to_string(),
            });
        }
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "project".into());
        let root = Arc::new(RootDir::open(&root, true)?);
        // Any open (TUI, CLI, a tool's sibling address) first repairs what a killed commit
        // left behind, so nothing ever reads a half-swapped tree.
        let recovery = journal::recover(&root);
        Ok(Workspace {
            root,
            name,
            siblings: BTreeMap::new(),
            recovery,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root.path
    }

    /// The held root folder.
    pub fn root_dir(&self) -> &Arc<RootDir> {
        &self.root
    }

    /// One line per interrupted commit that opening this project (or an opened sibling)
    /// finished or rolled back; callers show them to the author (CLI: stderr, TUI: status).
    pub fn recovery(&self) -> &[String] {
        &self.recovery
    }

    /// The project's folder name, used in `workspace/<project>/<path>` addresses.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn nbook_dir(&self) -> PathBuf {
        self.root().join(".nbook")
    }

    pub fn db_path(&self) -> PathBuf {
        self.root().join(".nbook").join("project.sqlite")
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.root().join(".nbook").join("agent").join("sessions")
    }

    /// The title from `project.yaml`, falling back to the folder name.
    pub fn title(&self) -> String {
        std::fs::read_to_string(self.root().join("project.yaml"))
            .ok()
            .and_then(|text| {
                text.lines().find_map(|l| {
                    l.strip_prefix("title:")
                        .map(|v| v.trim().trim_matches('"').trim_matches('\'').to_string())
                })
            })
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| self.name.clone())
    }

    /// Open a sibling project (a folder next to this one) so that `workspace/<name>/…`
    /// addresses can reach it.
    pub fn open_sibling(&mut self, name: &str) -> Result<(), WorkspaceError> {
        let parent = self.root().parent().unwrap_or(self.root()).to_path_buf();
        let other = Workspace::open(&parent.join(name))?;
        self.recovery.extend(
            other
                .recovery
                .iter()
                .map(|note| format!("{}: {note}", other.name)),
        );
        self.siblings.insert(other.name.clone(), other.root);
        Ok(())
    }

    /// Reach the folder `dir` as `workspace/<name>/…` (a task's draft area in another book of
    /// its series; the engine's draft routing attaches it).
    pub(crate) fn attach_sibling(&mut self, name: &str, dir: Arc<RootDir>) {
        self.siblings.insert(name.to_string(), dir);
    }

    pub fn sibling_root(&self, name: &str) -> Option<&Path> {
        self.siblings.get(name).map(|r| r.path.as_path())
    }

    pub(crate) fn sibling_dir(&self, name: &str) -> Option<&Arc<RootDir>> {
        self.siblings.get(name)
    }
}

/// The project that contains `start`: `start` itself or its nearest ancestor that is a
/// project (as git finds `.git/`), so a command run in `manuscript/` acts on the book.
/// `None` when no folder on the way up is one.
pub fn find_project_root(start: &Path) -> Option<PathBuf> {
    let abs = std::fs::canonicalize(start).ok()?;
    abs.ancestors()
        .find(|a| is_project(a))
        .map(Path::to_path_buf)
}

pub fn is_project(path: &Path) -> bool {
    path.join("project.yaml").is_file() || path.join(".nbook").is_dir()
}
