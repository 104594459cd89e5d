//! The Files pane's blocking work, which the UI never does on its own task: listing a folder,
//! walking every project file for the finder, reading a file for the preview.
//! Plain functions so the runtime can run them with `spawn_blocking` and benches can call them.

use std::io::Read;
use std::path::Path;

use crate::tui::files::tree::DirEntry;
use crate::tui::files::RelPath;
use crate::tui::widgets::markdown::{PreviewDoc, PREVIEW_MAX_BYTES};

/// List one folder (real names, and whether each is a folder, following symlinks for the
/// kind).
pub fn list_dir(root: &Path, dir: &RelPath) -> Result<Vec<DirEntry>, String> {
    let path = dir.under(root);
    let rd = std::fs::read_dir(&path).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for entry in rd.flatten() {
        let name = entry.file_name();
        let is_dir = match entry.file_type() {
            Ok(ft) if ft.is_symlink() => entry.path().is_dir(),
            Ok(ft) => ft.is_dir(),
            Err(_) => false,
        };
        out.push(DirEntry { name, is_dir });
    }
    Ok(out)
}

/// Every file under the project, as sorted relative paths; skips `.git` and `.nbook`
/// and does not follow symlinked folders.
pub fn walk_files(root: &Path) -> Vec<RelPath> {
    let mut out = Vec::new();
    let mut stack = vec![RelPath::root()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(dir.under(root)) else {
            continue;
        };
        for entry in rd.flatten() {
            let name = entry.file_name();
            if name == ".git" || (dir.is_root() && name == ".nbook") {
                continue;
            }
            let rel = dir.join(&name);
            match entry.file_type() {
                Ok(ft) if ft.is_dir() => stack.push(rel),
                Ok(_) => out.push(rel),
                Err(_) => {}
            }
        }
    }
    out.sort_unstable();
    out
}

/// Read up to [`PREVIEW_MAX_BYTES`] of a regular file and classify its lines (a FIFO or
/// device is refused, never waited on).
pub fn read_preview(root: &Path, rel: &RelPath) -> Result<PreviewDoc, String> {
    let path = rel.under(root);
    let (file, total) = crate::workspace::regular::open_regular(&path)
        .map_err(|e| format!("it {e}"))?
        .ok_or_else(|| "it does not exist".to_string())?;
    let mut bytes = Vec::with_capacity((total as usize).min(PREVIEW_MAX_BYTES));
    file.take(PREVIEW_MAX_BYTES as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    let lower = rel.shown().to_ascii_lowercase();
    let markdown = lower.ends_with(".md") || lower.ends_with(".markdown") || !lower.contains('.');
    Ok(PreviewDoc::from_bytes(&bytes, total, markdown))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_skips_git_and_nbook() {
        let d = tempfile::tempdir().unwrap();
        for p in [
            "a/b.md",
            ".git/x",
            ".nbook/project.sqlite",
            "c.md",
            "a/.git/y",
        ] {
            let f = d.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, "x").unwrap();
        }
        assert_eq!(walk_files(d.path()), ["a/b.md", "c.md"]);
        let listed = list_dir(d.path(), &"a".into()).unwrap();
        assert_eq!(listed.len(), 2);
        assert!(read_preview(d.path(), &"c.md".into()).unwrap().lines.len() == 1);
        assert!(read_preview(d.path(), &"missing.md".into()).is_err());
    }
}
