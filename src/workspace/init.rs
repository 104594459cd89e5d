//! Creating a project: the NeuroBook folder layout from the embedded template, `project.yaml`,
//! and the database (created by `store::open` on first open).

use std::path::Path;

use include_dir::{include_dir, Dir};

use super::{atomic_write, Workspace, WorkspaceError};

static TEMPLATE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/assets/template");

/// Create a project at `path` (the folder may exist; existing files are never overwritten).
pub fn init(path: &Path, title: Option<&str>) -> Result<Workspace, WorkspaceError> {
    if path.join("project.yaml").exists() {
        return Err(WorkspaceError::AlreadyAProject {
            path: path.display().to_string(),
        });
    }
    std::fs::create_dir_all(path).map_err(|e| WorkspaceError::io("create", path, e))?;
    copy_embedded(&TEMPLATE, path)?;
    let folder = std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "Untitled".into());
    let title = title
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or(&folder);
    let yaml = format!(
        "kind: novel\ntitle: {}\nsummary: \"\"\n",
        yaml_string(title)
    );
    let target = path.join("project.yaml");
    atomic_write(&target, yaml.as_bytes()).map_err(|e| WorkspaceError::io("write", &target, e))?;
    let nbook = path.join(".nbook");
    std::fs::create_dir_all(&nbook).map_err(|e| WorkspaceError::io("create", &nbook, e))?;
    Workspace::open(path)
}

/// Copy an embedded folder tree into `dest`, skipping files that already exist.
pub fn copy_embedded(dir: &Dir<'_>, dest: &Path) -> Result<(), WorkspaceError> {
    for entry in dir.entries() {
        match entry {
            include_dir::DirEntry::Dir(d) => copy_embedded(d, dest)?,
            include_dir::DirEntry::File(f) => {
                let target = dest.join(f.path());
                if target.exists() {
                    continue;
                }
                atomic_write(&target, f.contents())
                    .map_err(|e| WorkspaceError::io("write", &target, e))?;
            }
        }
    }
    Ok(())
}

/// Quote a YAML scalar when needed (titles may contain `:` or start with special characters).
fn yaml_string(s: &str) -> String {
    let plain = s
        .chars()
        .all(|c| c.is_alphanumeric() || " -_.,'!?".contains(c))
        && !s.starts_with(['-', '?', '\'', ' '])
        && !s.ends_with(' ');
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_creates_layout_and_refuses_twice() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("book");
        let ws = init(&p, Some("The Keeper: A Novel")).unwrap();
        assert!(p.join("lorebook/character/index.md").is_file());
        assert!(p.join(".agent/plan").is_dir());
        assert!(p.join("world-engine/calendar.toml").is_file());
        assert_eq!(ws.title(), "The Keeper: A Novel");
        assert!(matches!(
            init(&p, None),
            Err(WorkspaceError::AlreadyAProject { .. })
        ));
    }
}
