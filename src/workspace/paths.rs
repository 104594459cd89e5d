//! File addresses and path authorization for the file tools.
//!
//! An address is either relative to the current project root, or `workspace/<project>/<path>`
//! for a sibling project that is open in this process. Every address is normalised lexically,
//! then walked from the project's held root handle through its symlinks (`walk`), and the real
//! path that comes out must stay inside the root of the project it names. Anything else is
//! refused. Writes go through the [`Target`] the same walk returns, so what was checked is what
//! is written.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::target::Target;
use super::walk::{components, walk, Refusal, Walk};
use super::{RootDir, Workspace, WorkspaceError};

/// A file address that passed authorization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Absolute path to use for I/O.
    pub abs: PathBuf,
    /// The address as shown to agents and the author: project-relative with `/`, or
    /// `workspace/<project>/<path>` for a sibling project.
    pub display: String,
    /// Project-relative path with `/` separators (empty for the root itself).
    pub rel: String,
    /// Whether the path lies in the current project (not a sibling).
    pub in_current: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

impl Workspace {
    /// Resolve and authorize `addr` for `access`.
    pub fn resolve(&self, addr: &str, access: Access) -> Result<Resolved, WorkspaceError> {
        self.locate(addr, access).map(|(resolved, _, _)| resolved)
    }

    /// Resolve and authorize `addr` as a write destination, keeping the folder handles the
    /// check went through: writing through the returned target cannot land anywhere else.
    pub fn target(&self, addr: &str) -> Result<Target, WorkspaceError> {
        let (resolved, walked, root) = self.locate(addr, Access::Write)?;
        Ok(Target::new(resolved, walked, root))
    }

    fn locate(
        &self,
        addr: &str,
        access: Access,
    ) -> Result<(Resolved, Walk, Arc<RootDir>), WorkspaceError> {
        let refuse = |why: &str| WorkspaceError::PathRefused {
            path: addr.to_string(),
            why: why.to_string(),
        };
        let trimmed = addr.trim();
        if trimmed.is_empty() {
            return Err(refuse("the path is empty"));
        }
        if trimmed.contains('\0') {
            return Err(refuse("the path contains a NUL byte"));
        }
        let as_path = Path::new(trimmed);
        let (root, rel_input, sibling): (&Arc<RootDir>, PathBuf, Option<&str>) = if as_path
            .is_absolute()
        {
            let normal = normalize(as_path).ok_or_else(|| refuse("it climbs above /"))?;
            match normal.strip_prefix(self.root()) {
                    Ok(rest) => (self.root_dir(), rest.to_path_buf(), None),
                    Err(_) => {
                        return Err(refuse(
                            "absolute paths outside the project are not allowed; use a project-relative path",
                        ))
                    }
                }
        } else if let Some(rest) = trimmed.strip_prefix("workspace/") {
            let mut parts = rest.splitn(2, '/');
            let project = parts.next().unwrap_or_default();
            let inner = parts.next().unwrap_or_default();
            if project.is_empty() || inner.trim_matches('/').is_empty() {
                return Err(refuse(
                    "a cross-project address needs the form workspace/<project>/<path>",
                ));
            }
            if project == self.name() {
                (self.root_dir(), PathBuf::from(inner), None)
            } else {
                match self.sibling_dir(project) {
                    Some(r) => (r, PathBuf::from(inner), Some(project)),
                    None => {
                        return Err(refuse(&format!(
                            "project '{project}' is not open in this workspace"
                        )))
                    }
                }
            }
        } else {
            (self.root_dir(), PathBuf::from(trimmed), None)
        };

        let rel = normalize(&rel_input).ok_or_else(|| refuse("it leaves the project root"))?;
        // Everything below works on the real path: a symlink inside the project that points
        // elsewhere in it is followed, so checks (.nbook, plan-folder exemption) and I/O
        // see the file that will really change.
        let (walked, rel) = root.locate(&rel).map_err(|why| refuse(&why.to_string()))?;
        let rel_str = rel
            .iter()
            .map(|c| c.to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if access == Access::Write {
            let first = rel_str.split('/').next().unwrap_or_default();
            if first == ".nbook" || first == ".git" {
                return Err(refuse(
                    "the .nbook and .git folders are managed by nbook and git; agents may not write there",
                ));
            }
            if rel_str.is_empty() {
                return Err(refuse("cannot write to the project root itself"));
            }
        }
        let display = match sibling {
            Some(p) => format!("workspace/{p}/{rel_str}"),
            None => rel_str.clone(),
        };
        let resolved = Resolved {
            abs: walked.abs(),
            display,
            rel: rel_str,
            in_current: sibling.is_none(),
        };
        Ok((resolved, walked, root.clone()))
    }
}

impl RootDir {
    /// Walk `rel` (lexically normalised) from this folder's handle; the real path must stay
    /// inside it. Returns the walk and the real path's components below this folder.
    pub fn locate(&self, rel: &Path) -> Result<(Walk, Vec<OsString>), Refusal> {
        let walked = walk(&self.fd, &self.path, &components(rel))?;
        let root = components(&self.path);
        if !walked.dir_abs.starts_with(&root) {
            return Err(Refusal::LeavesRoot);
        }
        let rel = walked.dir_abs[root.len()..]
            .iter()
            .chain(&walked.tail)
            .cloned()
            .collect();
        Ok((walked, rel))
    }

    /// A write destination below a plain folder (no project rules beyond staying inside):
    /// what [`crate::tools::patch::apply_to_dir`] and the patch tests commit to.
    pub fn target(self: &Arc<Self>, rel: &str) -> Result<Target, Refusal> {
        let rel_path = normalize(Path::new(rel))
            .filter(|p| !p.is_absolute())
            .ok_or(Refusal::LeavesFolder)?;
        let (walked, comps) = self.locate(&rel_path)?;
        if comps.is_empty() {
            return Err(Refusal::FolderItself);
        }
        let rel_str = comps
            .iter()
            .map(|c| c.to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let resolved = Resolved {
            abs: walked.abs(),
            display: rel_str.clone(),
            rel: rel_str,
            in_current: true,
        };
        Ok(Target::new(resolved, walked, self.clone()))
    }
}

/// Lexical normalisation: drops `.`, applies `..`; `None` if it climbs above the start.
fn normalize(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if depth == 0 {
                    return None;
                }
                out.pop();
                depth -= 1;
            }
            Component::Normal(s) => {
                out.push(s);
                depth += 1;
            }
            Component::RootDir | Component::Prefix(_) => {
                out.push(c.as_os_str());
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::normalize;
    use std::path::{Path, PathBuf};

    #[test]
    fn normalize_handles_dots() {
        assert_eq!(
            normalize(Path::new("a/./b/../c")),
            Some(PathBuf::from("a/c"))
        );
        assert_eq!(normalize(Path::new("../x")), None);
        assert_eq!(normalize(Path::new("a/../../x")), None);
    }
}
