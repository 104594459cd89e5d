//! All-or-nothing commit of a plan to disk, crash-safe through the project's commit journal.
//!
//! 1. Fold the plan into one final state per destination (content, or "absent"); every
//!    destination is a [`Target`]: the real path the check resolved, with its folder held
//!    open. Every file operation below is relative to those handles (`renameat` within one
//!    folder), so nothing can be redirected by a folder swapped for a link meanwhile.
//! 2. Refuse destinations that are folders.
//! 3. Journal (state `staging`, fsynced): every destination, its temp name, its backup name,
//!    the operation and the new content's length and hash (see `workspace::journal`).
//! 4. Stage every new content in its temp file beside its destination (creating missing
//!    folders), fsync it; then mark the journal `committing` — before the first rename.
//! 5. Swap: move each existing destination aside to its backup name, rename the temp into
//!    place; deletions (and move sources) are moved aside last.
//! 6. Remove the backups, then the journal.
//!
//! A failure in steps 2–5 undoes everything done so far (placed files removed, backups renamed
//! back, temps and created folders removed), so the tree is byte-identical to before. A kill
//! at any point is repaired on the next open of the project (rolled forward or back, whole).
//!
//! Test-only failpoint: `NBOOK_FAILPOINT=apply_patch_after_rename:N` aborts the process right
//! after the N-th rename of the swap (inert without the variable).

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::io::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;

use rustix::fs::{fsync, renameat, statat, unlinkat, AtFlags};
use rustix::io::Errno;

use super::error::{PatchError, ResolveError};
use super::plan::{PlannedFile, PlannedKind};
use crate::workspace::atomic::{sibling_name, stage_at, BACKUP_TAG, TEMP_TAG};
use crate::workspace::journal::{content_hash, Entry, JPath, Journal, Op, Record, State};
use crate::workspace::{RootDir, Target};

/// Resolves a path of the patch to its checked destination.
pub type ResolveFn<'a> = dyn Fn(&str) -> Result<Target, ResolveError> + 'a;

/// The final state of one destination.
struct Slot {
    /// The path as written in the patch, for messages.
    display: String,
    target: Target,
    content: Option<String>,
    temp: OsString,
    backup: OsString,
    /// The destination existed when the commit started.
    existed: bool,
}

impl Slot {
    fn name(&self) -> &OsStr {
        self.target.name.as_deref().unwrap_or_default()
    }
}

/// What has been done so far, so it can be undone.
#[derive(Default)]
struct Txn {
    /// The folder each slot's file is in, once known (created if it was missing).
    dirs: HashMap<usize, Arc<OwnedFd>>,
    created_dirs: Vec<(Arc<OwnedFd>, OsString)>,
    /// Slots whose temp file exists (staged, not yet renamed into place).
    temps: Vec<usize>,
    /// Swaps done, in order: (slot, old file moved to its backup?, new file placed?).
    swaps: Vec<(usize, bool, bool)>,
    journals: Vec<(Journal, Record)>,
    renames: usize,
    failpoint: Option<usize>,
    fail_after: Option<usize>,
}

/// Write a plan to disk all-or-nothing; returns the summary lines (`A path`, `M path`, `D path`).
pub fn commit_plan(
    plan: &[PlannedFile],
    resolve: &ResolveFn<'_>,
) -> Result<Vec<String>, PatchError> {
    commit_with(plan, resolve, None)
}

/// `commit_plan` whose swap fails (as an I/O error) right after the `n`-th rename, to test
/// the in-process rollback.
#[cfg(test)]
pub(crate) fn commit_failing_after(
    plan: &[PlannedFile],
    resolve: &ResolveFn<'_>,
    n: usize,
) -> Result<Vec<String>, PatchError> {
    commit_with(plan, resolve, Some(n))
}

fn commit_with(
    plan: &[PlannedFile],
    resolve: &ResolveFn<'_>,
    fail_after: Option<usize>,
) -> Result<Vec<String>, PatchError> {
    if plan.is_empty() {
        return Err(PatchError::NoFilesModified);
    }
    let mut slots: Vec<Slot> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    let mut set = |path: &str, content: Option<&String>| -> Result<(), PatchError> {
        let target = resolve(path).map_err(|reason| PatchError::InvalidPath {
            path: path.to_string(),
            reason: reason.to_string(),
        })?;
        let content = content.cloned();
        match index.get(&target.resolved.abs) {
            Some(&i) => slots[i].content = content,
            None => {
                let name = target.name.clone().unwrap_or_default();
                index.insert(target.resolved.abs.clone(), slots.len());
                slots.push(Slot {
                    display: path.to_string(),
                    existed: target.exists,
                    temp: sibling_name(&name, TEMP_TAG),
                    backup: sibling_name(&name, BACKUP_TAG),
                    target,
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
    let mut txn = Txn {
        failpoint: failpoint(),
        fail_after,
        ..Txn::default()
    };
    match txn.run(&slots) {
        Ok(()) => {
            txn.finish(&slots);
            Ok(summary)
        }
        Err(err) => {
            txn.rollback(&slots);
            Err(err)
        }
    }
}

/// `NBOOK_FAILPOINT=apply_patch_after_rename:N` → `Some(N)`.
fn failpoint() -> Option<usize> {
    std::env::var("NBOOK_FAILPOINT")
        .ok()?
        .strip_prefix("apply_patch_after_rename:")?
        .trim()
        .parse()
        .ok()
}

fn write_context(s: &Slot) -> String {
    match s.content {
        Some(_) => format!("Failed to write file {}", s.display),
        None => format!("Failed to delete file {}", s.display),
    }
}

/// One journal record per project the patch touches (a plain folder keeps none).
fn records(slots: &[Slot]) -> Vec<(Arc<RootDir>, Record)> {
    let mut out: Vec<(Arc<RootDir>, Record)> = Vec::new();
    for s in slots {
        let root = &s.target.root;
        if !root.is_project {
            continue;
        }
        let pos = match out.iter().position(|(r, _)| Arc::ptr_eq(r, root)) {
            Some(p) => p,
            None => {
                out.push((
                    root.clone(),
                    Record {
                        tool: "apply_patch".into(),
                        ..Record::default()
                    },
                ));
                out.len() - 1
            }
        };
        let rec = &mut out[pos].1;
        for d in s.target.missing_dirs() {
            let d = JPath::from_components(&d);
            if !rec.dirs.contains(&d) {
                rec.dirs.push(d);
            }
        }
        let bytes = s.content.as_deref().unwrap_or_default().as_bytes();
        rec.entries.push(Entry {
            target: JPath::from_components(&s.target.rel_components()),
            op: match (&s.content, s.existed) {
                (None, _) => Op::Delete,
                (Some(_), true) => Op::Update,
                (Some(_), false) => Op::Add,
            },
            temp: s.content.as_ref().map(|_| JPath::from_os(&s.temp)),
            backup: s.existed.then(|| JPath::from_os(&s.backup)),
            len: bytes.len() as u64,
            hash: content_hash(bytes),
        });
    }
    for (_, rec) in &mut out {
        rec.dirs.sort_by_key(|d| d.bytes().len());
    }
    out
}

impl Txn {
    fn run(&mut self, slots: &[Slot]) -> Result<(), PatchError> {
        for s in slots {
            if s.target.is_dir() {
                return Err(PatchError::io(write_context(s), "Is a directory"));
            }
        }
        for (root, rec) in records(slots) {
            let journal = Journal::begin(&root, &rec).map_err(|e| {
                PatchError::io("Failed to record the commit journal in .nbook/journal", e)
            })?;
            self.journals.push((journal, rec));
        }
        for (i, s) in slots.iter().enumerate() {
            if s.content.is_none() {
                // A deletion creates nothing; a destination whose folder vanished is gone.
                if s.target.missing.is_empty() {
                    self.dirs.insert(i, s.target.dir.clone());
                }
                continue;
            }
            let dir = s
                .target
                .ensure_dir(&mut self.created_dirs)
                .map_err(|e| PatchError::io(write_context(s), e))?;
            if let Some(content) = &s.content {
                stage_at(&dir, s.name(), &s.temp, content.as_bytes())
                    .map_err(|e| PatchError::io(write_context(s), e))?;
                self.temps.push(i);
            }
            self.dirs.insert(i, dir);
        }
        // Every new content is complete and durable: from here a kill rolls forward.
        for (journal, rec) in &mut self.journals {
            rec.state = State::Committing;
            journal.update(rec).map_err(|e| {
                PatchError::io("Failed to record the commit journal in .nbook/journal", e)
            })?;
        }
        // Writes first, then deletions and move sources.
        let order = (0..slots.len())
            .filter(|&i| slots[i].content.is_some())
            .chain((0..slots.len()).filter(|&i| slots[i].content.is_none()));
        for i in order {
            self.swap(i, &slots[i])
                .map_err(|e| PatchError::io(write_context(&slots[i]), e))?;
        }
        Ok(())
    }

    /// Count a rename that is done and recorded; the failpoint and the injected test failure
    /// strike here, so a rollback knows about everything that happened.
    fn tick(&mut self) -> std::io::Result<()> {
        self.renames += 1;
        if self.failpoint == Some(self.renames) {
            std::process::abort();
        }
        if self.fail_after == Some(self.renames) {
            return Err(std::io::Error::other("injected failure"));
        }
        Ok(())
    }

    /// Move what is at the destination aside, then put the slot's staged temp (if any) there.
    fn swap(&mut self, i: usize, s: &Slot) -> std::io::Result<()> {
        let Some(dir) = self.dirs.get(&i).cloned() else {
            // A deletion whose folder no longer exists: nothing to remove.
            return Ok(());
        };
        let moved = match statat(&*dir, s.name(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => {
                renameat(&*dir, s.name(), &*dir, &s.backup)?;
                true
            }
            Err(Errno::NOENT) => false,
            Err(e) => return Err(e.into()),
        };
        self.swaps.push((i, moved, false));
        if moved {
            self.tick()?;
        }
        if s.content.is_some() {
            renameat(&*dir, &s.temp, &*dir, s.name())?;
            self.temps.retain(|&t| t != i);
            if let Some(last) = self.swaps.last_mut() {
                last.2 = true;
            }
            self.tick()?;
        }
        Ok(())
    }

    /// Success: make the renames durable, drop the backups, then the journal.
    fn finish(&mut self, slots: &[Slot]) {
        let mut synced: Vec<*const OwnedFd> = Vec::new();
        for dir in self.dirs.values() {
            if !synced.contains(&Arc::as_ptr(dir)) {
                synced.push(Arc::as_ptr(dir));
                let _ = fsync(&**dir);
            }
        }
        for (i, moved, _) in self.swaps.drain(..) {
            if moved {
                if let Some(dir) = self.dirs.get(&i) {
                    let _ = unlinkat(&**dir, slots[i].backup.as_os_str(), AtFlags::empty());
                }
            }
        }
        for (journal, _) in self.journals.drain(..) {
            journal.end();
        }
    }

    /// Failure: undo swaps newest first, remove temps and the folders we created.
    fn rollback(&mut self, slots: &[Slot]) {
        for (i, moved, placed) in self.swaps.drain(..).rev() {
            let Some(dir) = self.dirs.get(&i) else {
                continue;
            };
            let s = &slots[i];
            if placed {
                let _ = unlinkat(&**dir, s.name(), AtFlags::empty());
            }
            if moved {
                let _ = renameat(&**dir, s.backup.as_os_str(), &**dir, s.name());
            }
        }
        for i in self.temps.drain(..) {
            if let Some(dir) = self.dirs.get(&i) {
                let _ = unlinkat(&**dir, slots[i].temp.as_os_str(), AtFlags::empty());
            }
        }
        for (parent, name) in self.created_dirs.drain(..).rev() {
            let _ = unlinkat(&*parent, name.as_os_str(), AtFlags::REMOVEDIR);
        }
        for (journal, _) in self.journals.drain(..) {
            journal.end();
        }
    }
}
