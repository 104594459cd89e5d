//! Which project a plot call is about: the current one, or an open sibling named by the
//! optional `projectRoot` argument (a single path segment, as in NeuroBook). Also reads the
//! title and summary from `project.yaml`, which seed the lazily created Story row.

use std::path::{Path, PathBuf};

use super::error::{ErrorKind, PlotError, PlotResult};
use crate::workspace::Workspace;

/// What the Story row is created from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectMeta {
    pub title: String,
    pub summary: String,
}

impl ProjectMeta {
    /// Read `title` and `summary` from `<root>/project.yaml`; the title falls back to the
    /// folder name, the summary to "" (NeuroBook's reset rules for invalid core fields).
    pub fn load(root: &Path) -> ProjectMeta {
        let text = std::fs::read_to_string(root.join("project.yaml")).unwrap_or_default();
        let field = |key: &str| {
            text.lines().find_map(|l| {
                l.strip_prefix(key)
                    .and_then(|r| r.strip_prefix(':'))
                    .map(|v| yaml_scalar(v.trim()))
            })
        };
        let folder = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "Untitled".into());
        ProjectMeta {
            title: field("title")
                .filter(|t| !t.trim().is_empty())
                .unwrap_or(folder),
            summary: field("summary").unwrap_or_default(),
        }
    }
}

/// A one-line YAML scalar: double-quoted (JSON escapes), single-quoted, or plain.
fn yaml_scalar(v: &str) -> String {
    if v.starts_with('"') {
        if let Ok(s) = serde_json::from_str::<String>(v) {
            return s;
        }
    }
    if let Some(inner) = v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        return inner.replace("''", "'");
    }
    let plain = v.split(" #").next().unwrap_or(v);
    plain.trim().to_string()
}

/// The project a call reads or writes.
#[derive(Clone, Debug)]
pub struct PlotTarget {
    /// The project's folder name (the `projectRoot` of `plot.selection`).
    pub name: String,
    pub root: PathBuf,
    pub db_path: PathBuf,
    pub meta: ProjectMeta,
}

impl PlotTarget {
    pub fn of_root(name: &str, root: &Path) -> PlotTarget {
        PlotTarget {
            name: name.to_string(),
            root: root.to_path_buf(),
            db_path: root.join(".nbook").join("project.sqlite"),
            meta: ProjectMeta::load(root),
        }
    }
}

/// Resolve the optional `projectRoot` argument against the open workspace.
pub fn resolve_target(ws: &Workspace, project_root: Option<&str>) -> PlotResult<PlotTarget> {
    let Some(name) = project_root else {
        return Ok(PlotTarget::of_root(ws.name(), ws.root()));
    };
    let single = !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\']);
    if !single {
        return Err(PlotError::invalid(
            "/projectRoot",
            format!("'{name}' is not a single project folder name"),
        ));
    }
    if name == ws.name() {
        return Ok(PlotTarget::of_root(ws.name(), ws.root()));
    }
    match ws.sibling_root(name) {
        Some(root) => Ok(PlotTarget::of_root(name, root)),
        None => Err(PlotError {
            kind: ErrorKind::NotFound,
            pointer: Some("/projectRoot".into()),
            message: format!("project '{name}' is not open; only the current project ({}) and open sibling projects can be reached", ws.name()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_title_and_summary() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("project.yaml"),
            "kind: novel\ntitle: \"The Keeper: A Novel\"\nsummary: 'It''s about a light'\n",
        )
        .unwrap();
        let m = ProjectMeta::load(dir.path());
        assert_eq!(m.title, "The Keeper: A Novel");
        assert_eq!(m.summary, "It's about a light");
        std::fs::write(dir.path().join("project.yaml"), "kind: novel\ntitle:\n").unwrap();
        let m = ProjectMeta::load(dir.path());
        assert!(!m.title.is_empty());
        assert_eq!(m.summary, "");
    }
}
