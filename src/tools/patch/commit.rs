//! All-or-nothing commit of a plan to disk.
//!
//! 1. Fold the plan into one final state per destination (content, or "absent").
//! 2. Refuse destinations that are directories.
//! 3. Stage every new content in a temp file beside its destination (creating missing parent
//!    folders and remembering them), fsync it.
//! 4. Swap: move each existing destination aside to a backup name, rename the temp into place;
//!    deletions (and move sources) are moved aside last.
//! 5. Remove the backups.
//!
//! A failure in steps 2–4 undoes everything done so far (placed files removed, backups renamed
//! back, temps and created folders removed), so the tree is byte-identical to before.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::error::PatchError;
use super::plan::{PlannedFile, PlannedKind};

/// The final state of one destination.
struct Target {
    /// The path as written in the patch, for messages.
    display: String,
    abs: PathBuf,
    content: Option<String>,
}

/// What has been done so far, so it can be undone.
#[derive(Default)]
struct Txn {
    created_dirs: Vec<PathBuf>,
    /// Staged temp files not yet renamed into place, by target index.
    temps: HashMap<usize, PathBuf>,
    /// Swaps done, in order: (destination, backup of what was there, new file placed?).
    swaps: Vec<(PathBuf, Option<PathBuf>, bool)>,
}

/// Write a plan to disk all-or-nothing; returns the summary lines (`A path`, `M path`, `D path`).
pub fn commit_plan(
    plan: &[PlannedFile],
    resolve: &dyn Fn(&str) -> Result<PathBuf, String>,
) -> Result<Vec<String>, PatchError> {
    if plan.is_empty() {
        return Err(PatchError::NoFilesModified);
    }
    let mut targets: Vec<Target> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    let mut set = |path: &str, content: Option<&String>| -> Result<(), PatchError> {
        let abs = resolve(path).map_err(|reason| PatchError::InvalidPath {
            path: path.to_string(),
            reason,
        })?;
        let content = content.cloned();
        match index.get(&abs) {
            Some(&i) => targets[i].content = content,
            None => {
                index.insert(abs.clone(), targets.len());
                targets.push(Target {
                    display: path.to_string(),
                    abs,
                    content,
                });
            }
        }
        Ok(())
    };
    let mut summary = Vec::with_capacity(plan.len());
    for file in plan {
        match &file.kind {
            PlannedKind::Add { content, .. } => {
                set(&file.path, Some(content))?;
                summary.push(format!("A {}", file.path));
            }
            PlannedKind::Delete { .. } => {
                set(&file.path, None)?;
                summary.push(format!("D {}", file.path));
            }
            PlannedKind::Update { new, move_to, .. } => match move_to {
                Some(dest) => {
                    set(&file.path, None)?;
                    set(dest, Some(new))?;
                    summary.push(format!("M {dest}"));
                }
                None => {
                    set(&file.path, Some(new))?;
                    summary.push(format!("M {}", file.path));
                }
            },
        }
    }
    let mut txn = Txn::default();
    match txn.run(&targets) {
        Ok(()) => {
            txn.finish();
            Ok(summary)
        }
        Err(err) => {
            txn.rollback();
            Err(err)
        }
    }
}

fn write_context(t: &Target) -> String {
    match t.content {
        Some(_) => format!("Failed to write file {}", t.display),
        None => format!("Failed to delete file {}", t.display),
    }
}

impl Txn {
    fn run(&mut self, targets: &[Target]) -> Result<(), PatchError> {
        for t in targets {
            if fs::symlink_metadata(&t.abs).is_ok_and(|m| m.is_dir()) {
                return Err(PatchError::io(write_context(t), "Is a directory"));
            }
        }
        for (i, t) in targets.iter().enumerate() {
            if let Some(content) = &t.content {
                let temp = self
                    .stage(&t.abs, content)
                    .map_err(|e| PatchError::io(write_context(t), e))?;
                self.temps.insert(i, temp);
            }
        }
        // Writes first, then deletions and move sources.
        let order = (0..targets.len())
            .filter(|&i| targets[i].content.is_some())
            .chain((0..targets.len()).filter(|&i| targets[i].content.is_none()));
        for i in order {
            let t = &targets[i];
            self.swap(i, &t.abs)
                .map_err(|e| PatchError::io(write_context(t), e))?;
        }
        Ok(())
    }

    /// Write `content` to a new temp file beside `dest`, creating missing folders.
    fn stage(&mut self, dest: &Path, content: &str) -> io::Result<PathBuf> {
        if let Some(parent) = dest.parent() {
            self.create_dirs(parent)?;
        }
        let (temp, mut file) = create_unique(dest, "tmp")?;
        let written = file
            .write_all(content.as_bytes())
            .and_then(|()| file.sync_all())
            .and_then(|()| match fs::metadata(dest) {
                // Keep the permissions of the file we replace.
                Ok(meta) => fs::set_permissions(&temp, meta.permissions()),
                Err(_) => Ok(()),
            });
        if let Err(err) = written {
            drop(file);
            let _ = fs::remove_file(&temp);
            return Err(err);
        }
        Ok(temp)
    }

    /// Create `dir` and its missing ancestors one by one, remembering each one created.
    fn create_dirs(&mut self, dir: &Path) -> io::Result<()> {
        let mut missing = Vec::new();
        let mut cur = Some(dir);
        while let Some(d) = cur {
            if d.as_os_str().is_empty() || fs::symlink_metadata(d).is_ok() {
                break;
            }
            missing.push(d.to_path_buf());
            cur = d.parent();
        }
        for d in missing.into_iter().rev() {
            match fs::create_dir(&d) {
                Ok(()) => self.created_dirs.push(d),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && d.is_dir() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Move what is at `dest` aside, then put target `i`'s staged temp (if any) in its place.
    fn swap(&mut self, i: usize, dest: &Path) -> io::Result<()> {
        let backup = match fs::symlink_metadata(dest) {
            Ok(_) => {
                let backup = unique_name(dest, "bak")?;
                fs::rename(dest, &backup)?;
                Some(backup)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        self.swaps.push((dest.to_path_buf(), backup, false));
        if let Some(temp) = self.temps.get(&i) {
            fs::rename(temp, dest)?;
            self.temps.remove(&i);
            if let Some(last) = self.swaps.last_mut() {
                last.2 = true;
            }
        }
        Ok(())
    }

    /// Success: drop the backups and make the renames durable.
    fn finish(&mut self) {
        for (dest, backup, _) in self.swaps.drain(..) {
            if let Some(backup) = backup {
                let _ = fs::remove_file(backup);
            }
            if let Some(parent) = dest.parent() {
                if let Ok(dir) = File::open(parent) {
                    let _ = dir.sync_all();
                }
            }
        }
    }

    /// Failure: undo swaps newest first, remove temps and the folders we created.
    fn rollback(&mut self) {
        for (dest, backup, placed) in self.swaps.drain(..).rev() {
            if placed {
                let _ = fs::remove_file(&dest);
            }
            if let Some(backup) = backup {
                let _ = fs::rename(&backup, &dest);
            }
        }
        for (_, temp) in self.temps.drain() {
            let _ = fs::remove_file(temp);
        }
        for dir in self.created_dirs.drain(..).rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

/// A sibling path of `dest` that does not exist yet: `.<name>.nbook-<tag>-<pid>-<n>`.
fn sibling(dest: &Path, tag: &str, n: u32) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    dest.with_file_name(format!(".{name}.nbook-{tag}-{}-{n}", std::process::id()))
}

fn unique_name(dest: &Path, tag: &str) -> io::Result<PathBuf> {
    (0..1000)
        .map(|n| sibling(dest, tag, n))
        .find(|p| fs::symlink_metadata(p).is_err())
        .ok_or_else(|| io::Error::new(io::ErrorKind::AlreadyExists, "no free backup name"))
}

fn create_unique(dest: &Path, tag: &str) -> io::Result<(PathBuf, File)> {
    for n in 0..1000 {
        let path = sibling(dest, tag, n);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free temp name",
    ))
}
