//! The Codex `apply_patch` format: parsing, fuzzy location of chunks, in-memory planning, and an
//! all-or-nothing commit to disk.
//!
//! This module owns the patch text grammar ([`parse_patch`]), the four fuzz levels used to find
//! a chunk in a file (`seek`), computing every file's final content without touching the disk
//! ([`plan_patch`]), the unified diff shown for approval ([`unified_diff`]) and the transactional
//! write ([`commit_plan`]). It does not decide which paths are allowed: callers pass `read` and
//! `resolve` callbacks that enforce that. [`apply_to_dir`] chains everything for a plain folder.
//!
//! Behaviour follows Codex (messages, lenient heredoc envelope, pure insertions at end of file,
//! Add overwriting, Move overwriting its destination, a trailing newline always written), with
//! these deliberate differences:
//! - a failing patch changes nothing on disk (Codex applies hunks one by one);
//! - stacked `@@ ctx` lines are accepted, each narrowing the search (see `parser`);
//! - a file's trailing blank line survives an update (Codex drops it);
//! - an `*** End of File` chunk's tail match must not lie before the previous chunk's match;
//! - `@@ ` followed only by blanks counts as a bare `@@`.

mod commit;
mod error;
mod parser;
mod plan;
mod seek;

#[cfg(test)]
mod parser_tests;
#[cfg(test)]
mod plan_tests;
#[cfg(test)]
mod proptests;

use std::path::{Component, Path};
use std::sync::Arc;

use crate::workspace::RootDir;

pub use commit::{commit_plan, ResolveFn};
pub use error::{PatchError, ResolveError};
pub use parser::{envelope, hunk_sections, parse_patch, Hunk, UpdateChunk};
pub use plan::{plan_patch, PlannedFile, PlannedKind, ReadFn};

/// Unified diff (3 lines of context, headers `--- a/<path>` / `+++ b/<path>`) of `old` → `new`,
/// with the number of added and removed lines.
pub fn unified_diff(path: &str, old: &str, new: &str) -> (String, usize, usize) {
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    (text, added, removed)
}

/// Parse `patch`, plan it against the files under `root` and commit it. Paths are relative to
/// `root`; absolute paths and `..` segments are rejected before anything is read.
pub fn apply_to_dir(root: &Path, patch: &str) -> Result<Vec<String>, PatchError> {
    let hunks = parse_patch(patch)?;
    for hunk in &hunks {
        check_relative(hunk.path())?;
        if let Hunk::UpdateFile {
            move_path: Some(dest),
            ..
        } = hunk
        {
            check_relative(dest)?;
        }
    }
    let mut read = |path: &str| read_text(&root.join(path));
    let plan = plan_patch(&hunks, &mut read)?;
    let held = Arc::new(
        RootDir::open(root, false)
            .map_err(|e| PatchError::io(format!("Failed to open {}", root.display()), e))?,
    );
    commit_plan(&plan, &|path| {
        check_relative(path)?;
        Ok(held.target(path)?)
    })
}

/// Reject paths that could leave the root: empty, absolute, or with a `..` segment.
fn check_relative(path: &str) -> Result<(), PatchError> {
    let invalid = |reason: &str| PatchError::InvalidPath {
        path: path.to_string(),
        reason: reason.to_string(),
    };
    if path.trim().is_empty() {
        return Err(invalid("the path is empty"));
    }
    let p = Path::new(path);
    if p.is_absolute() || path.starts_with(['/', '\\']) || p.has_root() {
        return Err(invalid("absolute paths are not allowed"));
    }
    for component in p.components() {
        match component {
            Component::ParentDir => return Err(invalid("'..' segments are not allowed")),
            Component::Prefix(_) | Component::RootDir => {
                return Err(invalid("absolute paths are not allowed"))
            }
            Component::CurDir | Component::Normal(_) => {}
        }
    }
    if path.split(['/', '\\']).any(|seg| seg == "..") {
        return Err(invalid("'..' segments are not allowed"));
    }
    Ok(())
}

/// Read a UTF-8 text file: `Ok(None)` if it does not exist. A folder, FIFO or device is
/// refused without being opened for a blocking read.
fn read_text(path: &Path) -> Result<Option<String>, String> {
    use crate::workspace::regular::{open_regular, OpenRegularError};
    use std::io::Read as _;
    let (mut file, _) = match open_regular(path) {
        Ok(Some(f)) => f,
        Ok(None) => return Ok(None),
        Err(OpenRegularError::Folder) => return Err("Is a directory".to_string()),
        Err(e) => return Err(e.to_string()),
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "not a UTF-8 text file".to_string())
}
