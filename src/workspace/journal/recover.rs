//! Repairing what an interrupted commit left behind (the rules are in the parent module).

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::OwnedFd;

use rustix::fs::{
    fstat, fsync, openat, renameat, statat, unlinkat, AtFlags, Dir, FileType, Mode, OFlags,
};
use rustix::io::Errno;

use super::{
    content_hash, open_journal_dir, read_record, Entry, JPath, Op, Record, RecordError, State,
};
use crate::workspace::atomic::{is_sibling_of, BACKUP_TAG, TEMP_TAG};
use crate::workspace::walk::open_dir_nofollow;
use crate::workspace::RootDir;

/// Why one interrupted commit could not be repaired; shown to the author after the journal's
/// name, with the advice to check the files it names.
#[derive(Debug, thiserror::Error)]
enum RepairError {
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("its folder is gone")]
    FolderGone,
    #[error("cannot rename {from} to {to}: {source}")]
    Rename {
        from: String,
        to: String,
        #[source]
        source: Errno,
    },
    #[error("it names a path nbook would never write: {0}")]
    NeverWritten(String),
    #[error("empty path")]
    EmptyPath,
    #[error("the folder of {path} cannot be opened without following a link ({source})")]
    FolderLink {
        path: String,
        #[source]
        source: Errno,
    },
    #[error("{path} is not a {tag} file of {target}")]
    NotSibling {
        path: String,
        tag: &'static str,
        target: String,
    },
}

/// Finish or roll back every interrupted commit recorded under `root`, remove the temporary
/// files, and say what was done (one line per commit, for the author).
pub fn recover(root: &RootDir) -> Vec<String> {
    if !root.is_project {
        return Vec::new();
    }
    let dir = match open_journal_dir(root, false) {
        Ok(d) => d,
        Err(_) => return Vec::new(),
    };
    let mut names: Vec<OsString> = Vec::new();
    if let Ok(d) = dir
        .try_clone()
        .map_err(|_| Errno::MFILE)
        .and_then(Dir::read_from)
    {
        for entry in d.flatten() {
            let name = OsStr::from_bytes(entry.file_name().to_bytes()).to_os_string();
            if name != "." && name != ".." {
                names.push(name);
            }
        }
    }
    names.sort();
    let mut notes = Vec::new();
    for name in names {
        let bytes = name.as_bytes();
        if bytes.starts_with(b".") {
            // A journal's own temp file from a kill while it was written.
            if bytes
                .windows(TEMP_TAG.len())
                .any(|w| w == TEMP_TAG.as_bytes())
            {
                let _ = unlinkat(&dir, name.as_os_str(), AtFlags::empty());
            }
            continue;
        }
        if !bytes.ends_with(b".json") {
            continue;
        }
        let shown = format!(".nbook/journal/{}", name.to_string_lossy());
        let repaired = read_record(&dir, &name)
            .map_err(RepairError::from)
            .and_then(|rec| repair(root, &rec));
        match repaired {
            Ok(note) => {
                let _ = unlinkat(&dir, name.as_os_str(), AtFlags::empty());
                notes.extend(note);
            }
            Err(e) => notes.push(format!(
                "could not repair an interrupted commit ({shown}): {e}. The journal was kept; check the files it names, then delete it."
            )),
        }
    }
    let _ = fsync(&dir);
    notes
}

/// One destination, located in the project: its folder (if it still exists) and names.
struct Loc<'a> {
    entry: &'a Entry,
    dir: Option<OwnedFd>,
    name: OsString,
    temp: Option<OsString>,
    backup: Option<OsString>,
}

impl Loc<'_> {
    fn exists(&self, name: &OsStr) -> bool {
        self.dir
            .as_ref()
            .is_some_and(|d| statat(d, name, AtFlags::SYMLINK_NOFOLLOW).is_ok())
    }

    /// `name` is a regular file holding exactly the entry's new content.
    fn holds_new(&self, name: &OsStr) -> bool {
        let Some(dir) = &self.dir else { return false };
        let Ok(fd) = openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            return false;
        };
        let Ok(st) = fstat(&fd) else { return false };
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
            || st.st_size as u64 != self.entry.len
        {
            return false;
        }
        let mut bytes = Vec::new();
        std::fs::File::from(fd).read_to_end(&mut bytes).is_ok()
            && content_hash(&bytes) == self.entry.hash
    }

    fn remove(&self, name: &OsStr) -> bool {
        self.dir
            .as_ref()
            .is_some_and(|d| unlinkat(d, name, AtFlags::empty()).is_ok())
    }

    fn rename(&self, from: &OsStr, to: &OsStr) -> Result<(), RepairError> {
        let dir = self.dir.as_ref().ok_or(RepairError::FolderGone)?;
        renameat(dir, from, dir, to).map_err(|source| RepairError::Rename {
            from: from.to_string_lossy().into_owned(),
            to: to.to_string_lossy().into_owned(),
            source,
        })
    }
}

/// Plain components inside the project, never in `.nbook` or `.git`.
fn checked_components(p: &JPath) -> Result<Vec<OsString>, RepairError> {
    let comps = p.components();
    let bad = comps.is_empty()
        || comps
            .iter()
            .any(|c| c.is_empty() || c == "." || c == ".." || c.as_bytes().contains(&0))
        || comps[0] == ".nbook"
        || comps[0] == ".git";
    if bad {
        return Err(RepairError::NeverWritten(p.show()));
    }
    Ok(comps)
}

fn locate<'a>(root: &RootDir, entry: &'a Entry) -> Result<Loc<'a>, RepairError> {
    let mut comps = checked_components(&entry.target)?;
    let name = comps.pop().ok_or(RepairError::EmptyPath)?;
    let dir = match open_dir_nofollow(&root.fd, &comps) {
        Ok(d) => Some(d),
        Err(Errno::NOENT) => None,
        Err(source) => {
            return Err(RepairError::FolderLink {
                path: entry.target.show(),
                source,
            })
        }
    };
    let sibling = |p: &Option<JPath>, tag: &'static str| -> Result<Option<OsString>, RepairError> {
        match p {
            None => Ok(None),
            Some(p) => {
                let n = OsStr::from_bytes(p.bytes()).to_os_string();
                if is_sibling_of(&n, &name, tag) {
                    Ok(Some(n))
                } else {
                    Err(RepairError::NotSibling {
                        path: p.show(),
                        tag,
                        target: entry.target.show(),
                    })
                }
            }
        }
    };
    Ok(Loc {
        entry,
        temp: sibling(&entry.temp, TEMP_TAG)?,
        backup: sibling(&entry.backup, BACKUP_TAG)?,
        dir,
        name,
    })
}

/// Repair one journal's commit; the note for the author (`None` when there was nothing to
/// tell, e.g. a `write` killed after its rename).
fn repair(root: &RootDir, rec: &Record) -> Result<Option<String>, RepairError> {
    let locs = rec
        .entries
        .iter()
        .map(|e| locate(root, e))
        .collect::<Result<Vec<_>, _>>()?;
    let files = locs.len();
    // A one-file commit names its file; the tool name is only shown, never decides.
    let single = rec.entries.len() == 1 && rec.entries.iter().all(|e| e.op != Op::Delete);
    let what = if single {
        format!(
            "an interrupted write to {}",
            rec.entries
                .first()
                .map(|e| e.target.show())
                .unwrap_or_default()
        )
    } else {
        format!(
            "an interrupted {} of {files} file{}",
            if rec.tool.is_empty() {
                "commit"
            } else {
                &rec.tool
            },
            if files == 1 { "" } else { "s" }
        )
    };
    let forward = rec.state == State::Committing
        && locs.iter().all(|l| match l.entry.op {
            Op::Delete => true,
            Op::Add | Op::Update => {
                l.temp.as_deref().is_some_and(|t| l.holds_new(t)) || l.holds_new(&l.name)
            }
        });
    let mut removed = 0usize;
    if forward {
        for l in &locs {
            match l.entry.op {
                Op::Add | Op::Update => {
                    if let Some(t) = l.temp.as_deref().filter(|t| l.holds_new(t)) {
                        l.rename(t, &l.name)?;
                    }
                }
                Op::Delete => {
                    let moved = l.backup.as_deref().is_some_and(|b| l.exists(b));
                    if !moved && l.exists(&l.name) {
                        l.remove(&l.name);
                    }
                }
            }
        }
        for l in &locs {
            if l.backup.as_deref().is_some_and(|b| l.remove(b)) {
                removed += 1;
            }
        }
        return Ok(Some(format!(
            "{what} was finished: every file has its new content ({} removed).",
            crate::text::count(removed, "backup file", "backup files")
        )));
    }
    // Roll back, newest change first.
    let mut restored = 0usize;
    for l in locs.iter().rev() {
        if let Some(b) = l.backup.as_deref().filter(|b| l.exists(b)) {
            l.rename(b, &l.name)?;
            restored += 1;
        } else if l.entry.op == Op::Add && rec.state == State::Committing && l.holds_new(&l.name) {
            l.remove(&l.name);
        }
        if l.temp.as_deref().is_some_and(|t| l.remove(t)) {
            removed += 1;
        }
    }
    for d in rec.dirs.iter().rev() {
        if let Ok(mut comps) = checked_components(d) {
            if let Some(last) = comps.pop() {
                if let Ok(parent) = open_dir_nofollow(&root.fd, &comps) {
                    let _ = unlinkat(&parent, last.as_os_str(), AtFlags::REMOVEDIR);
                }
            }
        }
    }
    if single && removed == 0 {
        return Ok(None);
    }
    let when = if rec.state == State::Staging {
        "before it changed anything"
    } else {
        "while files were being swapped, and some new content was incomplete"
    };
    Ok(Some(format!(
        "{what} stopped {when}; it was rolled back: every file has its previous content ({restored} restored, {} removed).",
        crate::text::count(removed, "temporary file", "temporary files")
    )))
}
