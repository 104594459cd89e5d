//! The commit journal: how a write that touches the project survives `kill -9`.
//!
//! Before a commit creates its first temp file it writes `.nbook/journal/<id>.json` (atomic,
//! fsynced): every destination (project-relative real path), the operation, the temp file
//! holding its new content and the backup name its old content will be moved to, plus the
//! length and hash of the new content and the folders the commit will create. The record
//! starts in state `staging`; once every temp file is written and fsynced it is rewritten as
//! `committing` — still before the first rename. After the last backup is removed the journal
//! is deleted.
//!
//! Repair, on the next [`super::Workspace::open`] (see `recover`):
//! - `staging`: nothing was renamed yet, every destination is old — roll back: remove the
//!   temp files and the folders created.
//! - `committing`: roll **forward** when every new content is still there in full (its temp
//!   file, or the destination itself, matches the recorded length and hash): rename the
//!   remaining temps into place, remove what is deleted and every backup. Otherwise (a temp
//!   is missing or damaged) roll **back**: every backup is renamed over its destination, new
//!   files are removed, temps and created folders too.
//!
//! Either way the tree is all-old or all-new. Repair only acts on plain names inside this
//! project (no `..`, no links followed, nothing in `.nbook` or `.git`, temp and backup names of
//! nbook's own pattern beside their destination), so a journal shipped inside a project can
//! do nothing a project's own files could not.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::io::OwnedFd;

use rustix::fs::{fstat, fsync, mkdirat, openat, unlinkat, AtFlags, Mode, OFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use super::atomic::write_at;
use super::walk::dir_flags;
use super::RootDir;

mod recover;
pub use recover::recover;

/// Journals bigger than this are not read (a project can ship anything in `.nbook/`).
const MAX_JOURNAL_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Temp files are being written; nothing was renamed yet.
    #[default]
    Staging,
    /// Every temp file is complete; renames are (or were) under way.
    Committing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// The destination did not exist.
    Add,
    /// The destination existed and gets new content.
    Update,
    /// The destination existed and is removed (also the source of a move).
    Delete,
}

/// A path as bytes: text when it is UTF-8, else the raw bytes (file names need not be UTF-8).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JPath {
    Text(String),
    Raw(Vec<u8>),
}

impl JPath {
    pub fn from_bytes(b: &[u8]) -> JPath {
        match std::str::from_utf8(b) {
            Ok(s) => JPath::Text(s.to_string()),
            Err(_) => JPath::Raw(b.to_vec()),
        }
    }

    pub fn from_os(s: &OsStr) -> JPath {
        JPath::from_bytes(s.as_bytes())
    }

    /// Components joined with `/`.
    pub fn from_components(comps: &[OsString]) -> JPath {
        let mut b = Vec::new();
        for (i, c) in comps.iter().enumerate() {
            if i > 0 {
                b.push(b'/');
            }
            b.extend_from_slice(c.as_bytes());
        }
        JPath::from_bytes(&b)
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            JPath::Text(s) => s.as_bytes(),
            JPath::Raw(b) => b,
        }
    }

    pub fn components(&self) -> Vec<OsString> {
        self.bytes()
            .split(|b| *b == b'/')
            .map(|c| OsString::from_vec(c.to_vec()))
            .collect()
    }

    pub fn show(&self) -> String {
        String::from_utf8_lossy(self.bytes()).into_owned()
    }
}

/// One destination of a commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Project-relative real path.
    pub target: JPath,
    pub op: Op,
    /// File name (in the destination's folder) of the new content, for add and update.
    pub temp: Option<JPath>,
    /// File name (in the destination's folder) the old file is moved to before it is replaced.
    pub backup: Option<JPath>,
    /// Length and hash of the new content (0 and "" for a delete).
    pub len: u64,
    pub hash: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    /// The tool that committed (`apply_patch`, `write`), for the repair report.
    pub tool: String,
    pub state: State,
    /// Folders the commit creates (project-relative), outermost first.
    pub dirs: Vec<JPath>,
    pub entries: Vec<Entry>,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            version: 1,
            tool: String::new(),
            state: State::Staging,
            dirs: Vec::new(),
            entries: Vec::new(),
        }
    }
}

/// FNV-1a (64 bit) of `bytes`, hex: recognises complete content, not an adversary's.
pub fn content_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Open `.nbook/journal` below `root` without following links; create it when asked.
pub(crate) fn open_journal_dir(root: &RootDir, create: bool) -> io::Result<OwnedFd> {
    let mut dir = root.fd.try_clone()?;
    for name in [".nbook", "journal"] {
        if create {
            match mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
        }
        dir = openat(&dir, name, dir_flags(), Mode::empty())?;
    }
    Ok(dir)
}

/// Why a journal file could not be read back; recovery shows it after the journal's name.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecordError {
    #[error("{0}")]
    Open(#[source] Errno),
    #[error("it is too large to be a journal")]
    TooLarge,
    #[error("{0}")]
    Read(#[source] io::Error),
    #[error("it is not a journal nbook wrote ({0})")]
    NotJournal(#[source] serde_json::Error),
}

/// Read a journal file (not following links, size-capped).
pub(crate) fn read_record(dir: &OwnedFd, name: &OsStr) -> Result<Record, RecordError> {
    let fd = openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(RecordError::Open)?;
    let st = fstat(&fd).map_err(RecordError::Open)?;
    if st.st_size < 0 || st.st_size as u64 > MAX_JOURNAL_BYTES {
        return Err(RecordError::TooLarge);
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .read_to_end(&mut bytes)
        .map_err(RecordError::Read)?;
    serde_json::from_slice(&bytes).map_err(RecordError::NotJournal)
}

/// An open journal of one commit in progress.
pub struct Journal {
    dir: OwnedFd,
    name: OsString,
}

impl Journal {
    /// Write the first record (fsynced) and return the journal.
    pub fn begin(root: &RootDir, record: &Record) -> io::Result<Journal> {
        let dir = open_journal_dir(root, true)?;
        let name = OsString::from(format!(
            "{}-{:016x}.json",
            std::process::id(),
            rand::random::<u64>()
        ));
        let journal = Journal { dir, name };
        journal.update(record)?;
        Ok(journal)
    }

    /// Replace the record atomically (fsynced before this returns).
    pub fn update(&self, record: &Record) -> io::Result<()> {
        let bytes = serde_json::to_vec(record).map_err(io::Error::other)?;
        write_at(&self.dir, &self.name, &bytes)
    }

    /// The commit is complete (or fully undone): drop the journal.
    pub fn end(self) {
        let _ = unlinkat(&self.dir, self.name.as_os_str(), AtFlags::empty());
        let _ = fsync(&self.dir);
    }
}
