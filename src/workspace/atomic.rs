//! Atomic file writes: temp file in the same folder, fsync, rename. A crash or an error at any
//! point leaves either the old file or the new one, never a torn mix.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A unique sibling temp path for `target` (same folder, so the rename stays on one filesystem).
pub fn temp_path_for(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let nonce: u64 = rand::random();
    target.with_file_name(format!(".{name}.nbook-tmp-{nonce:016x}"))
}

/// Write `bytes` to `target` atomically, creating missing parent folders.
pub fn atomic_write(target: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(parent) = target.parent() {
        if !parent.as_os_str().is_empty() {
            fs::create_dir_all(parent)?;
        }
    }
    let tmp = temp_path_for(target);
    let result = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        // Keep the permissions of the file we replace.
        if let Ok(meta) = fs::metadata(target) {
            fs::set_permissions(&tmp, meta.permissions())?;
        }
        fs::rename(&tmp, target)?;
        if let Some(parent) = target.parent() {
            // Persist the rename itself; not every platform allows opening a folder.
            if let Ok(dir) = File::open(parent) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_without_leaving_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/c.md");
        atomic_write(&p, b"one").unwrap();
        atomic_write(&p, b"two").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temp file left behind");
    }

    #[test]
    fn failure_leaves_old_content() {
        let dir = tempfile::tempdir().unwrap();
        // Target is a directory: rename of a file over a non-empty dir fails.
        let p = dir.path().join("d");
        fs::create_dir_all(p.join("inner")).unwrap();
        assert!(atomic_write(&p, b"x").is_err());
        assert!(p.join("inner").is_dir());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
