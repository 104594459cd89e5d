//! Resolving a path to its real location through held directory handles.
//!
//! Every component is looked up relative to the directory handle reached so far, and nothing
//! is followed implicitly (`O_NOFOLLOW`, `AT_SYMLINK_NOFOLLOW`): a symlink is read with
//! `readlinkat` and its target spliced into the components still to walk. So the walk knows the
//! real path of everything it passed, and the handle it ends on *is* the folder at that real
//! path. I/O done through that handle afterwards cannot be redirected by a folder swapped for
//! a symlink after the check (the two-step "canonicalise, then open by name" race).

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::io::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{openat, readlinkat, statat, AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;

/// Symlinks followed (and lookups retried after a race) before the walk gives up, as the
/// kernel's own limit.
const MAX_HOPS: usize = 40;

/// Why a path cannot be resolved inside its folder. The message completes "path '…' is
/// refused: …"; names are quoted as the walk met them.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("it goes through a symlink whose target does not exist")]
    DanglingLink,
    #[error("it climbs out of a folder that does not exist")]
    ClimbsOutOfMissing,
    #[error("it goes through too many symlinks")]
    TooManyLinks,
    #[error("{0} is not a folder")]
    NotAFolder(String),
    #[error("{0} keeps changing while it is checked")]
    KeepsChanging(String),
    #[error("its real path (after following symlinks) leaves the project root")]
    LeavesRoot,
    #[error("it leaves the folder")]
    LeavesFolder,
    #[error("cannot write to the folder itself")]
    FolderItself,
    /// A system call failed on `what` (the folder, a name, a symlink).
    #[error("cannot {action} {what}: {source}")]
    Io {
        action: &'static str,
        what: String,
        #[source]
        source: Errno,
    },
    #[error("cannot hold the project folder: {0}")]
    Hold(#[source] std::io::Error),
    #[error("internal: folder handle missing")]
    HandleMissing,
}

fn io(action: &'static str, what: impl Into<String>) -> impl FnOnce(Errno) -> Refusal {
    let what = what.into();
    move |source| Refusal::Io {
        action,
        what,
        source,
    }
}

/// Where a walk ended.
#[derive(Debug)]
pub struct Walk {
    /// The deepest existing folder on the real path, held open.
    pub dir: OwnedFd,
    /// Its real path, as components below `/`.
    pub dir_abs: Vec<OsString>,
    /// Components below `dir`: missing folders, then the final name. Empty when the target is
    /// `dir` itself.
    pub tail: Vec<OsString>,
    /// The whole target exists (then `tail` holds at most the final name, not a symlink).
    pub exists: bool,
}

impl Walk {
    /// The real path of the target.
    pub fn abs(&self) -> PathBuf {
        let mut p = PathBuf::from("/");
        p.extend(self.dir_abs.iter().chain(&self.tail));
        p
    }
}

/// Components of an absolute, symlink-free path below `/`.
pub fn components(p: &Path) -> Vec<OsString> {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            _ => None,
        })
        .collect()
}

/// Open the folder at `comps` (below `/`) without following any symlink on the way.
pub fn open_dir_nofollow(start: &OwnedFd, comps: &[OsString]) -> rustix::io::Result<OwnedFd> {
    let mut fd = start.try_clone().map_err(|_| Errno::MFILE)?;
    for c in comps {
        fd = openat(&fd, c.as_os_str(), dir_flags(), Mode::empty())?;
    }
    Ok(fd)
}

pub fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The held folder stack of a walk: `fds[0]` is `/`, `fds[i]` the folder at `comps[..i]`.
/// Ancestors of the starting folder are opened only when a `..` or a link reaches them.
struct Stack {
    comps: Vec<OsString>,
    fds: Vec<Option<OwnedFd>>,
}

impl Stack {
    fn top(&mut self) -> Result<&OwnedFd, Refusal> {
        let depth = self.comps.len();
        if self.fds[depth].is_none() {
            let slash = openat(CWD, "/", dir_flags(), Mode::empty()).map_err(io("open", "/"))?;
            let shown = Path::new("/").join(join(&self.comps)).display().to_string();
            let fd = open_dir_nofollow(&slash, &self.comps).map_err(io("open", shown))?;
            self.fds[depth] = Some(fd);
        }
        self.fds[depth].as_ref().ok_or(Refusal::HandleMissing)
    }

    fn push(&mut self, name: OsString, fd: OwnedFd) {
        self.comps.push(name);
        self.fds.push(Some(fd));
    }

    fn pop(&mut self) {
        if self.comps.pop().is_some() {
            self.fds.pop();
        }
    }

    fn reset_to_slash(&mut self) {
        self.comps.clear();
        self.fds.truncate(1);
    }
}

fn join(comps: &[OsString]) -> PathBuf {
    comps.iter().collect()
}

/// Walk `rel` (already lexically normalised, no `..`) from the folder `start`, whose real
/// path is `start_path`. Symlinks are followed by reading them, wherever they lead; the caller
/// judges the real path that comes out. A link whose target does not exist is refused: what it
/// would create cannot be proven to stay where it points.
pub fn walk(start: &OwnedFd, start_path: &Path, rel: &[OsString]) -> Result<Walk, Refusal> {
    let comps = components(start_path);
    let mut fds: Vec<Option<OwnedFd>> = (0..=comps.len()).map(|_| None).collect();
    fds[comps.len()] = Some(start.try_clone().map_err(Refusal::Hold)?);
    let mut stack = Stack { comps, fds };
    let mut queue: VecDeque<(OsString, bool)> = rel.iter().map(|c| (c.clone(), false)).collect();
    let mut hops = 0usize;
    while let Some((name, from_link)) = queue.pop_front() {
        if name.is_empty() || name == "." {
            continue;
        }
        if name == ".." {
            stack.pop();
            continue;
        }
        let dir = stack.top()?;
        let st = match statat(dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => {
                if from_link || queue.iter().any(|(_, l)| *l) {
                    return Err(Refusal::DanglingLink);
                }
                let mut tail = vec![name];
                for (n, _) in queue {
                    if n == ".." {
                        return Err(Refusal::ClimbsOutOfMissing);
                    }
                    if !n.is_empty() && n != "." {
                        tail.push(n);
                    }
                }
                return finish(stack, tail, false);
            }
            Err(e) => return Err(io("look up", show(&name))(e)),
        };
        let kind = FileType::from_raw_mode(st.st_mode);
        if kind == FileType::Symlink {
            hops += 1;
            if hops > MAX_HOPS {
                return Err(Refusal::TooManyLinks);
            }
            let target = readlinkat(dir, name.as_os_str(), Vec::new())
                .map_err(io("read the symlink", show(&name)))?;
            let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
            if target.is_absolute() {
                stack.reset_to_slash();
            }
            for c in target.components().rev() {
                match c {
                    Component::Normal(s) => queue.push_front((s.to_os_string(), true)),
                    Component::ParentDir => queue.push_front(("..".into(), true)),
                    _ => {}
                }
            }
            continue;
        }
        if queue.is_empty() {
            return finish(stack, vec![name], true);
        }
        if kind != FileType::Directory {
            return Err(Refusal::NotAFolder(show(&name)));
        }
        match openat(dir, name.as_os_str(), dir_flags(), Mode::empty()) {
            Ok(fd) => stack.push(name, fd),
            // It changed between the look-up and the open (became a link, vanished): look
            // again, within the same hop budget.
            Err(Errno::LOOP | Errno::NOTDIR | Errno::NOENT) => {
                hops += 1;
                if hops > MAX_HOPS {
                    return Err(Refusal::KeepsChanging(show(&name)));
                }
                queue.push_front((name, from_link));
            }
            Err(e) => return Err(io("open", show(&name))(e)),
        }
    }
    finish(stack, Vec::new(), true)
}

fn finish(mut stack: Stack, tail: Vec<OsString>, exists: bool) -> Result<Walk, Refusal> {
    stack.top()?;
    let depth = stack.comps.len();
    let dir = stack.fds[depth].take().ok_or(Refusal::HandleMissing)?;
    Ok(Walk {
        dir,
        dir_abs: stack.comps,
        tail,
        exists,
    })
}

fn show(name: &OsStr) -> String {
    format!("'{}'", name.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn open(p: &Path) -> OwnedFd {
        openat(CWD, p, dir_flags(), Mode::empty()).unwrap()
    }

    fn rel(s: &str) -> Vec<OsString> {
        components(Path::new(s))
    }

    #[test]
    fn follows_links_by_reading_them_and_reports_the_real_path() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::fs::write(root.join("real/sub/f.md"), "x").unwrap();
        symlink("real", root.join("rel-link")).unwrap();
        symlink(root.join("real/sub"), root.join("abs-link")).unwrap();
        symlink("../real/sub/f.md", root.join("real/up")).unwrap();
        let fd = open(&root);
        let w = walk(&fd, &root, &rel("rel-link/sub/f.md")).unwrap();
        assert_eq!(w.abs(), root.join("real/sub/f.md"));
        assert!(w.exists);
        let w = walk(&fd, &root, &rel("abs-link/new/deep.md")).unwrap();
        assert_eq!(w.abs(), root.join("real/sub/new/deep.md"));
        assert_eq!(w.tail, rel("new/deep.md"));
        assert!(!w.exists);
        let w = walk(&fd, &root, &rel("real/up")).unwrap();
        assert_eq!(w.abs(), root.join("real/sub/f.md"));
    }

    #[test]
    fn dangling_links_and_loops_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        symlink("nothing", root.join("dangling")).unwrap();
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        let fd = open(&root);
        assert!(matches!(
            walk(&fd, &root, &rel("dangling")),
            Err(Refusal::DanglingLink)
        ));
        assert!(walk(&fd, &root, &rel("dangling/x")).is_err());
        let e = walk(&fd, &root, &rel("loop1")).unwrap_err();
        assert!(matches!(e, Refusal::TooManyLinks), "{e:?}");
        assert!(e.to_string().contains("too many"), "{e}");
    }
}
