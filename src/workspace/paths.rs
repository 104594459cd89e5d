//! File addresses and path authorization for the file tools.
//!
//! An address is either relative to the current project root, or `workspace/<project>/<path>`
//! for a sibling project that is open in this process. Every address is normalised lexically,
//! then its nearest existing ancestor is resolved through symlinks and the result must stay
//! inside the (real) root of the project it names. Anything else is refused.

use std::path::{Component, Path, PathBuf};

use super::{Workspace, WorkspaceError};

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
        let (root, rel_input, sibling): (&Path, PathBuf, Option<&str>) = if as_path.is_absolute() {
            let normal = normalize(as_path).ok_or_else(|| refuse("it climbs above /"))?;
            match normal.strip_prefix(self.root()) {
                Ok(rest) => (self.root(), rest.to_path_buf(), None),
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
                (self.root(), PathBuf::from(inner), None)
            } else {
                match self.sibling_root(project) {
                    Some(r) => (r, PathBuf::from(inner), Some(project)),
                    None => {
                        return Err(refuse(&format!(
                            "project '{project}' is not open in this workspace"
                        )))
                    }
                }
            }
        } else {
            (self.root(), PathBuf::from(trimmed), None)
        };

        let rel = normalize(&rel_input).ok_or_else(|| refuse("it leaves the project root"))?;
        // Everything below works on the real path: a symlink inside the project that points
        // elsewhere in it is followed, so checks (.nbook, plan-folder exemption) and I/O
        // see the file that will really change.
        let abs = real_path_inside(root, &root.join(&rel)).map_err(|why| refuse(&why))?;
        let rel = abs
            .strip_prefix(root)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let rel_str = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
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
        Ok(Resolved {
            abs,
            display,
            rel: rel_str,
            in_current: sibling.is_none(),
        })
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

/// Walk up from `target` to its nearest existing ancestor, resolve that through symlinks,
/// re-append the missing segments and require the result to stay inside `root` (already
/// real). Returns that real path.
fn real_path_inside(root: &Path, target: &Path) -> Result<PathBuf, String> {
    let mut existing = target.to_path_buf();
    let mut missing: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if std::fs::symlink_metadata(&existing).is_ok() {
            break;
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return Err("no part of the path exists".into()),
        }
    }
    let real = std::fs::canonicalize(&existing).map_err(|_| {
        // A dangling symlink: its target does not exist, so we cannot prove containment.
        "it goes through a symlink whose target does not exist".to_string()
    })?;
    let mut full = real;
    for seg in missing.iter().rev() {
        full.push(seg);
    }
    if full.starts_with(root) {
        Ok(full)
    } else {
        Err("its real path (after following symlinks) leaves the project root".into())
    }
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
