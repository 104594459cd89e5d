//! A write destination: the real path a checked address resolved to, together with the folder
//! handle the check ended on. Reading the current content, creating missing folders and the
//! atomic replace all go through that handle, so the file written is the file that was checked
//! (and approved), whatever is renamed or swapped for a symlink meanwhile.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::unix::io::OwnedFd;
use std::sync::Arc;

use rustix::fs::{fstat, mkdirat, openat, statat, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::atomic::{replace_at, sibling_name, stage_at, TEMP_TAG};
use super::journal::{self, Entry, Journal, Op, Record, State};
use super::paths::Resolved;
use super::walk::{dir_flags, Walk};
use super::RootDir;

#[derive(Clone, Debug)]
pub struct Target {
    /// The checked address (real path, display, project-relative path).
    pub resolved: Resolved,
    pub(crate) root: Arc<RootDir>,
    /// The deepest existing folder on the real path, held open.
    pub(crate) dir: Arc<OwnedFd>,
    /// That folder's components below the root.
    pub(crate) dir_rel: Vec<OsString>,
    /// Folders to create below `dir`, outermost first.
    pub(crate) missing: Vec<OsString>,
    /// The final name; `None` when the address is an existing folder itself.
    pub(crate) name: Option<OsString>,
    pub(crate) exists: bool,
}

impl Target {
    pub(crate) fn new(resolved: Resolved, walked: Walk, root: Arc<RootDir>) -> Target {
        let root_len = super::walk::components(&root.path).len();
        let dir_rel = walked.dir_abs.get(root_len..).unwrap_or_default().to_vec();
        let mut missing = walked.tail;
        let name = missing.pop();
        Target {
            resolved,
            root,
            dir: Arc::new(walked.dir),
            dir_rel,
            missing,
            name,
            exists: walked.exists,
        }
    }

    pub fn display(&self) -> &str {
        &self.resolved.display
    }

    /// The real path's components below its project root.
    pub fn rel_components(&self) -> Vec<OsString> {
        let mut out = self.dir_rel.clone();
        out.extend(self.missing.iter().cloned());
        out.extend(self.name.iter().cloned());
        out
    }

    /// The folders this write would create, as components below the root, outermost first.
    pub(crate) fn missing_dirs(&self) -> Vec<Vec<OsString>> {
        (1..=self.missing.len())
            .map(|n| {
                let mut p = self.dir_rel.clone();
                p.extend(self.missing[..n].iter().cloned());
                p
            })
            .collect()
    }

    /// Whether the destination is (now) a folder.
    pub fn is_dir(&self) -> bool {
        match &self.name {
            None => true,
            Some(name) if self.exists => {
                statat(&*self.dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
            }
            Some(_) => false,
        }
    }

    fn name(&self) -> io::Result<&OsStr> {
        self.name
            .as_deref()
            .ok_or_else(|| io::Error::new(io::ErrorKind::IsADirectory, "it is a folder"))
    }

    /// The current content, read through the held folder: `None` if the file does not exist.
    /// Folders, FIFOs, devices and sockets are refused (opening is non-blocking, so a FIFO
    /// cannot hang the call).
    pub fn read_bytes(&self) -> io::Result<Option<Vec<u8>>> {
        if !self.missing.is_empty() {
            return Ok(None);
        }
        let name = self.name()?;
        let fd = match openat(
            &*self.dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let st = fstat(&fd)?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "it is a folder",
                ))
            }
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "it is not a regular file (a FIFO, device or socket)",
                ))
            }
        }
        let mut bytes = Vec::new();
        std::fs::File::from(fd).read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }

    /// Create the missing folders below the held one (each one opened without following a
    /// link, so a link planted meanwhile fails the write instead of redirecting it) and return
    /// the folder the file goes in. Folders created are pushed on `created`.
    pub(crate) fn ensure_dir(
        &self,
        created: &mut Vec<(Arc<OwnedFd>, OsString)>,
    ) -> io::Result<Arc<OwnedFd>> {
        let mut dir = self.dir.clone();
        for name in &self.missing {
            match mkdirat(&*dir, name.as_os_str(), Mode::from_raw_mode(0o777)) {
                Ok(()) => created.push((dir.clone(), name.clone())),
                Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            let next =
                openat(&*dir, name.as_os_str(), dir_flags(), Mode::empty()).map_err(|e| {
                    if matches!(e, Errno::LOOP | Errno::NOTDIR) {
                        io::Error::other(format!(
                        "the folder {} changed into a link or a file while it was being written",
                        name.to_string_lossy()
                    ))
                    } else {
                        e.into()
                    }
                })?;
            dir = Arc::new(next);
        }
        Ok(dir)
    }

    /// Replace the destination's content atomically. In a project, the temp file is recorded
    /// in the commit journal first, so a kill before the rename leaves nothing behind after
    /// the next open.
    pub fn write(&self, bytes: &[u8]) -> io::Result<()> {
        let name = self.name()?.to_os_string();
        if self.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a folder",
            ));
        }
        let temp = sibling_name(&name, TEMP_TAG);
        let journal = if self.root.is_project {
            let record = Record {
                tool: "write".into(),
                state: State::Staging,
                dirs: self
                    .missing_dirs()
                    .iter()
                    .map(|d| journal::JPath::from_components(d))
                    .collect(),
                entries: vec![Entry {
                    target: journal::JPath::from_components(&self.rel_components()),
                    op: if self.exists { Op::Update } else { Op::Add },
                    temp: Some(journal::JPath::from_os(&temp)),
                    backup: None,
                    len: bytes.len() as u64,
                    hash: journal::content_hash(bytes),
                }],
                ..Record::default()
            };
            Some(Journal::begin(&self.root, &record)?)
        } else {
            None
        };
        let mut created = Vec::new();
        let result = self.ensure_dir(&mut created).and_then(|dir| {
            stage_at(&dir, &name, &temp, bytes)?;
            // Test-only failpoint (inert without the variable): a kill between the temp file
            // and the rename, which the next open must clean up.
            if std::env::var_os("NBOOK_FAILPOINT").is_some_and(|v| v == "write_after_stage") {
                std::process::abort();
            }
            replace_at(&dir, &temp, &name).inspect_err(|_| {
                let _ = rustix::fs::unlinkat(&*dir, temp.as_os_str(), AtFlags::empty());
            })
        });
        if result.is_err() {
            for (parent, dir) in created.iter().rev() {
                let _ = rustix::fs::unlinkat(&**parent, dir.as_os_str(), AtFlags::REMOVEDIR);
            }
        }
        if let Some(j) = journal {
            j.end();
        }
        result
    }
}
