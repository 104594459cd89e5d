//! Series workspace mode: a book that belongs to a series of books, its sibling projects.
//!
//! **Declaration.** A book declares its series in its own `project.yaml`, with a `series` key
//! listing the other books by folder name, each a sibling folder of the book (the folder that
//! holds the books is the series folder):
//!
//! ```yaml
//! kind: novel
//! title: The Salt Road
//! series:
//!   - the-salt-road
//!   - the-iron-coast
//! ```
//!
//! The flow form `series: [the-salt-road, the-iron-coast]` reads the same. Listing the book
//! itself is allowed (every book of a series can carry the same list). NeuroBook keeps unknown
//! keys of `project.yaml`, so the key survives its edits, and a project without it opens as
//! before. Only this key is read here; `title`/`summary` stay with their readers.
//!
//! **Checks.** An entry must be one folder name (no `/`, `..`, absolute path or `\`), must not
//! repeat, and must name a folder that exists, whose real path (symlinks resolved) is still in
//! the series folder, and that is an nbook/NeuroBook project. A declaration that fails any of
//! them is a [`SeriesError`]; the book then opens in single-book mode and the front ends show
//! the error (the TUI's status line, `nbook call`'s stderr).

use std::path::{Path, PathBuf};

/// One book of a series: its folder name (how tools address it) and its real root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Book {
    pub name: String,
    pub root: PathBuf,
}

/// The series the current book belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Series {
    /// The folder that holds the books.
    pub folder: PathBuf,
    /// The current book's folder name.
    pub current: String,
    /// The other books, in declaration order (the current book is not among them).
    pub others: Vec<Book>,
}

impl Series {
    /// The other book called `name`.
    pub fn book(&self, name: &str) -> Option<&Book> {
        self.others.iter().find(|b| b.name == name)
    }

    /// Every book's name, the current one first.
    pub fn names(&self) -> Vec<String> {
        std::iter::once(self.current.clone())
            .chain(self.others.iter().map(|b| b.name.clone()))
            .collect()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SeriesError {
    #[error("project.yaml's series declaration is malformed (line {line}): {why}; the book opens on its own")]
    Malformed { line: usize, why: String },
    #[error("project.yaml's series lists '{entry}', which is not a folder name in the series folder {folder} ({why}); the book opens on its own")]
    Escapes {
        entry: String,
        folder: String,
        why: &'static str,
    },
    #[error("project.yaml's series lists '{book}' twice; list each book once (the book opens on its own)")]
    Duplicate { book: String },
    #[error("project.yaml's series lists '{book}', but {path} does not exist; the book opens on its own")]
    Missing { book: String, path: String },
    #[error("project.yaml's series lists '{book}', but {path} is not a project (no project.yaml or .nbook/); the book opens on its own")]
    NotAProject { book: String, path: String },
    #[error("cannot read {path}: {message}")]
    Unreadable { path: String, message: String },
}

impl SeriesError {
    /// The stable code a tool returns with it.
    pub fn code(&self) -> &'static str {
        match self {
            SeriesError::Malformed { .. } => "SERIES_MALFORMED",
            SeriesError::Escapes { .. } => "SERIES_PATH_ESCAPES",
            SeriesError::Duplicate { .. } => "SERIES_BOOK_DUPLICATE",
            SeriesError::Missing { .. } => "SERIES_BOOK_MISSING",
            SeriesError::NotAProject { .. } => "SERIES_BOOK_NOT_A_PROJECT",
            SeriesError::Unreadable { .. } => "SERIES_UNREADABLE",
        }
    }
}

/// The series declared by the book at `root`; `Ok(None)`: it declares none (single-book
/// mode).
pub fn load(root: &Path) -> Result<Option<Series>, SeriesError> {
    let path = root.join("project.yaml");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(SeriesError::Unreadable {
                path: path.display().to_string(),
                message: e.to_string(),
            })
        }
    };
    let Some(entries) = declared(&text)? else {
        return Ok(None);
    };
    let root = std::fs::canonicalize(root).map_err(|e| SeriesError::Unreadable {
        path: root.display().to_string(),
        message: e.to_string(),
    })?;
    let folder = root.parent().unwrap_or(&root).to_path_buf();
    let current = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut seen: Vec<String> = Vec::new();
    let mut others = Vec::new();
    for entry in entries {
        let escapes = |why| SeriesError::Escapes {
            entry: entry.clone(),
            folder: folder.display().to_string(),
            why,
        };
        if entry.starts_with('/') || entry.starts_with('~') {
            return Err(escapes("an absolute path"));
        }
        if entry.contains('\\') {
            return Err(escapes("it contains \\"));
        }
        if entry == "." || entry == ".." || entry.split('/').any(|s| s == "..") {
            return Err(escapes("it climbs out of the series folder"));
        }
        if entry.contains('/') {
            return Err(escapes("a book is one sibling folder, not a path"));
        }
        if entry.chars().any(char::is_control) {
            return Err(escapes("it contains control characters"));
        }
        if seen.contains(&entry) {
            return Err(SeriesError::Duplicate { book: entry });
        }
        seen.push(entry.clone());
        if entry == current {
            continue;
        }
        let path = folder.join(&entry);
        if !path.exists() {
            return Err(SeriesError::Missing {
                book: entry,
                path: path.display().to_string(),
            });
        }
        let real = std::fs::canonicalize(&path).map_err(|e| SeriesError::Unreadable {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        if real.parent() != Some(folder.as_path()) {
            return Err(escapes(
                "its real path (a symlink) is outside the series folder",
            ));
        }
        if real == root {
            // A symlink back to the book itself: the same book listed twice.
            return Err(SeriesError::Duplicate { book: current });
        }
        if !super::is_project(&real) {
            return Err(SeriesError::NotAProject {
                book: entry,
                path: path.display().to_string(),
            });
        }
        others.push(Book {
            name: entry,
            root: real,
        });
    }
    if others.is_empty() {
        return Ok(None);
    }
    Ok(Some(Series {
        folder,
        current,
        others,
    }))
}

/// The entries of the top-level `series` key, if there is one.
fn declared(text: &str) -> Result<Option<Vec<String>>, SeriesError> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| {
        l.strip_prefix("series")
            .is_some_and(|r| r.trim_start().starts_with(':'))
    }) else {
        return Ok(None);
    };
    let malformed = |line: usize, why: &str| SeriesError::Malformed {
        line: line + 1,
        why: why.to_string(),
    };
    let rest = lines[start]
        .split_once(':')
        .map(|(_, r)| strip_comment(r).trim())
        .unwrap_or_default();
    if !rest.is_empty() {
        // The flow form: `series: [a, b]`.
        let inner = rest
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .ok_or_else(|| {
                malformed(
                    start,
                    "series must be a list of book folders (`series: [a, b]` or one `- a` line each)",
                )
            })?;
        let mut out = Vec::new();
        for item in inner.split(',') {
            let v = scalar(item);
            if v.is_empty() {
                if inner.trim().is_empty() {
                    break;
                }
                return Err(malformed(start, "an empty entry in the list"));
            }
            out.push(v);
        }
        return Ok(Some(out));
    }
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate().skip(start + 1) {
        let body = strip_comment(l);
        if body.trim().is_empty() {
            continue;
        }
        if !body.starts_with([' ', '\t', '-']) {
            break; // the next top-level key
        }
        let Some(item) = body.trim_start().strip_prefix('-') else {
            return Err(malformed(i, "each book is one `- <folder>` line"));
        };
        let v = scalar(item);
        if v.is_empty() {
            return Err(malformed(i, "an empty entry in the list"));
        }
        out.push(v);
    }
    Ok(Some(out))
}

fn strip_comment(s: &str) -> &str {
    match s.find(" #") {
        Some(i) => &s[..i],
        None if s.trim_start().starts_with('#') => "",
        None => s,
    }
}

/// A one-line YAML scalar, quotes removed.
fn scalar(s: &str) -> String {
    let v = s.trim();
    let v = v
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')))
        .unwrap_or(v);
    v.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_flow_lists_read_the_same() {
        let block = "kind: novel\nseries:\n  - a  # first\n  - 'b'\ntitle: T\n";
        let flow = "series: [a, \"b\"]\n";
        assert_eq!(declared(block).unwrap(), Some(vec!["a".into(), "b".into()]));
        assert_eq!(declared(flow).unwrap(), Some(vec!["a".into(), "b".into()]));
        assert_eq!(declared("kind: novel\ntitle: T\n").unwrap(), None);
        assert_eq!(declared("series_note: x\n").unwrap(), None);
    }

    #[test]
    fn a_scalar_series_is_malformed() {
        let e = declared("series: book-two\n").unwrap_err();
        assert_eq!(e.code(), "SERIES_MALFORMED");
        let e = declared("series:\n  book-two: x\n").unwrap_err();
        assert_eq!(e.code(), "SERIES_MALFORMED");
    }
}
