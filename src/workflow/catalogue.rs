//! The workflow catalogue: built-ins embedded from `assets/workflows/<key>/workflow.js`,
//! overridden key by key by the project's `.nbook/workflows/<key>/workflow.js`. The folder
//! name is the key. Every file is evaluated (in a fresh, time-limited runtime) to read its
//! title and hints; a file that fails is still listed, with its error, and never stops the
//! others from loading. A broken project file still overrides the built-in of the same key:
//! running it fails with its error instead of silently running something else.

use std::path::Path;

use include_dir::{include_dir, Dir};
use serde::Serialize;

use super::sandbox::{self, DefinitionError, Meta};

static BUILTIN: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/assets/workflows");

/// Where project workflows live, relative to the project root.
pub const PROJECT_DIR: &str = ".nbook/workflows";
pub const FILE_NAME: &str = "workflow.js";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Builtin,
    Project,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Builtin => "builtin",
            Source::Project => "project",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Workflow {
    pub key: String,
    pub source: Source,
    /// Where the file is, for people: `assets/workflows/<key>/workflow.js` (built in) or the
    /// project-relative path.
    pub path: String,
    pub code: String,
    /// The metadata, or why the file cannot be used.
    pub meta: Result<Meta, DefinitionError>,
}

impl Workflow {
    pub fn title(&self) -> &str {
        self.meta
            .as_ref()
            .map(|m| m.title.as_str())
            .unwrap_or(&self.key)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    /// Sorted by key.
    pub workflows: Vec<Workflow>,
}

/// A key is a folder name: lowercase letters, digits, `.`, `_` and `-`, starting with a letter
/// or digit.
pub fn valid_key(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
        && key.len() <= 100
}

impl Catalogue {
    /// Built-ins, then the project's workflows on top.
    pub fn load(project_root: &Path) -> Catalogue {
        let mut by_key = std::collections::BTreeMap::new();
        for w in builtins() {
            by_key.insert(w.key.clone(), w);
        }
        for w in project(project_root) {
            by_key.insert(w.key.clone(), w);
        }
        Catalogue {
            workflows: by_key.into_values().collect(),
        }
    }

    /// One workflow by key (the project's first, then the built-in), evaluating only that
    /// file.
    pub fn find(project_root: &Path, key: &str) -> Option<Workflow> {
        if !valid_key(key) {
            return None;
        }
        let dir = project_root.join(PROJECT_DIR).join(key);
        if dir.is_dir() {
            return Some(project_entry(&dir, key.to_string()));
        }
        let d = BUILTIN.get_dir(key)?;
        Some(builtin_entry(d, key))
    }

    /// Every key, without evaluating anything (for "no workflow X; the workflows are …").
    pub fn list_keys(project_root: &Path) -> Vec<String> {
        let mut keys: std::collections::BTreeSet<String> = BUILTIN
            .dirs()
            .filter_map(|d| d.path().file_name().and_then(|n| n.to_str()))
            .map(str::to_string)
            .collect();
        if let Ok(entries) = std::fs::read_dir(project_root.join(PROJECT_DIR)) {
            for e in entries.flatten() {
                if e.path().is_dir() {
                    if let Some(k) = e.file_name().to_str().filter(|k| !k.starts_with('.')) {
                        keys.insert(k.to_string());
                    }
                }
            }
        }
        keys.into_iter().collect()
    }

    pub fn get(&self, key: &str) -> Option<&Workflow> {
        self.workflows.iter().find(|w| w.key == key)
    }

    pub fn keys(&self) -> Vec<&str> {
        self.workflows.iter().map(|w| w.key.as_str()).collect()
    }
}

fn entry(
    key: String,
    source: Source,
    path: String,
    code: Result<String, DefinitionError>,
) -> Workflow {
    let meta = if !valid_key(&key) {
        Err(DefinitionError::BadKey(key.clone()))
    } else {
        code.as_ref()
            .map_err(Clone::clone)
            .and_then(|c| sandbox::inspect(c, &key, &path))
    };
    Workflow {
        key,
        source,
        path,
        code: code.unwrap_or_default(),
        meta,
    }
}

/// The workflows shipped in the binary.
pub fn builtins() -> Vec<Workflow> {
    let mut out = Vec::new();
    for d in BUILTIN.dirs() {
        let Some(key) = d.path().file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        out.push(builtin_entry(d, key));
    }
    out
}

fn builtin_entry(d: &Dir<'_>, key: &str) -> Workflow {
    let code = d
        .get_file(d.path().join(FILE_NAME))
        .and_then(|f| f.contents_utf8())
        .map(str::to_string)
        .ok_or_else(|| {
            DefinitionError::Unreadable(format!("the built-in folder has no UTF-8 {FILE_NAME}"))
        });
    entry(
        key.to_string(),
        Source::Builtin,
        format!("assets/workflows/{key}/{FILE_NAME}"),
        code,
    )
}

fn project_entry(path: &Path, key: String) -> Workflow {
    let rel = format!("{PROJECT_DIR}/{key}/{FILE_NAME}");
    let code = match std::fs::read(path.join(FILE_NAME)) {
        Ok(bytes) => String::from_utf8(bytes)
            .map_err(|_| DefinitionError::Unreadable(format!("{rel} is not UTF-8 text"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(DefinitionError::Unreadable(
            format!("the folder has no {FILE_NAME}; put the workflow object in {rel}"),
        )),
        Err(e) => Err(DefinitionError::Unreadable(format!(
            "cannot read {rel}: {e}"
        ))),
    };
    entry(key, Source::Project, rel, code)
}

/// The project's workflows (`.nbook/workflows/<key>/workflow.js`).
pub fn project(project_root: &Path) -> Vec<Workflow> {
    let dir = project_root.join(PROJECT_DIR);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if !path.is_dir() {
            continue;
        }
        let Some(key) = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if key.starts_with('.') {
            continue;
        }
        out.push(project_entry(&path, key));
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_loads() {
        let b = builtins();
        assert!(b.len() >= 2);
        for w in &b {
            assert!(w.meta.is_ok(), "{}: {:?}", w.key, w.meta);
        }
    }

    #[test]
    fn keys_are_folder_names() {
        assert!(valid_key("consistency-audit"));
        assert!(valid_key("a.b_c-1"));
        assert!(!valid_key("Bad Key"));
        assert!(!valid_key("-x"));
        assert!(!valid_key(""));
    }
}
