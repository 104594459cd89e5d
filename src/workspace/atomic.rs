//! Atomic file writes: temp file in the same folder, fsync, rename, fsync the folder. A crash
//! or an error at any point leaves either the old file or the new one, never a torn mix.
//!
//! Everything is done relative to a held folder handle (`*_at`), so the temp file, the rename
//! and the fsync all happen in the one folder that was checked. The new file keeps the mode
//! (and, where permitted, the owner) of the file it replaces.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::OwnedFd;
use std::path::Path;

use rustix::fs::{
    fchmod, fchown, fstat, fsync, openat, renameat, statat, unlinkat, AtFlags, FileType, Gid, Mode,
    OFlags, Uid, CWD,
};

/// The marker in every temp name nbook creates beside a file it writes.
pub const TEMP_TAG: &str = "nbook-tmp";
/// The marker in every backup name a multi-file commit creates.
pub const BACKUP_TAG: &str = "nbook-bak";

/// A fresh sibling name for `name`: `.<name>.<tag>-<pid>-<random>`. Random, so it can be
/// recorded in a journal before the file exists.
pub fn sibling_name(name: &OsStr, tag: &str) -> OsString {
    let nonce: u64 = rand::random();
    let mut out = OsString::from(".");
    out.push(name);
    out.push(format!(".{tag}-{}-{nonce:016x}", std::process::id()));
    out
}

/// Whether `candidate` is a temp or backup sibling nbook made for `name`.
pub fn is_sibling_of(candidate: &OsStr, name: &OsStr, tag: &str) -> bool {
    let mut prefix = b".".to_vec();
    prefix.extend_from_slice(name.as_bytes());
    prefix.extend_from_slice(format!(".{tag}-").as_bytes());
    let c = candidate.as_bytes();
    c.starts_with(&prefix) && c.len() > prefix.len() && !c.contains(&b'/')
}

/// Mode and owner of the regular file `name` in `dir`, if there is one.
fn existing_meta(dir: &OwnedFd, name: &OsStr) -> Option<(u32, u32, u32)> {
    let st = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    (FileType::from_raw_mode(st.st_mode) == FileType::RegularFile).then_some((
        st.st_mode & 0o7777,
        st.st_uid,
        st.st_gid,
    ))
}

/// Write `bytes` to a new file `temp` in `dir` and fsync it; it takes the mode and owner of
/// `name` if that exists. On failure the temp file is removed.
pub fn stage_at(dir: &OwnedFd, name: &OsStr, temp: &OsStr, bytes: &[u8]) -> io::Result<()> {
    let fd = openat(
        dir,
        temp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    )?;
    let result = (|| -> io::Result<()> {
        if let Some((mode, uid, gid)) = existing_meta(dir, name) {
            let mine = fstat(&fd)?;
            if mine.st_uid != uid || mine.st_gid != gid {
                // Only root (or a member of the group) may do this; otherwise the file is
                // ours, as any file we create would be.
                let _ = fchown(&fd, Some(Uid::from_raw(uid)), Some(Gid::from_raw(gid)));
            }
            // After chown, which may clear set-id bits.
            fchmod(&fd, Mode::from_raw_mode(mode))?;
        }
        let mut file = File::from(fd.try_clone()?);
        file.write_all(bytes)?;
        file.sync_all()?;
        Ok(())
    })();
    if result.is_err() {
        let _ = unlinkat(dir, temp, AtFlags::empty());
    }
    result
}

/// Rename `temp` over `name` in `dir` and make the rename durable.
pub fn replace_at(dir: &OwnedFd, temp: &OsStr, name: &OsStr) -> io::Result<()> {
    renameat(dir, temp, dir, name)?;
    // Persist the rename itself; not every filesystem supports fsync on a folder.
    let _ = fsync(dir);
    Ok(())
}

/// Write `bytes` to `name` in `dir` atomically.
pub fn write_at(dir: &OwnedFd, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
    let temp = sibling_name(name, TEMP_TAG);
    stage_at(dir, name, &temp, bytes)?;
    if let Err(e) = replace_at(dir, &temp, name) {
        let _ = unlinkat(dir, temp.as_os_str(), AtFlags::empty());
        return Err(e);
    }
    Ok(())
}

/// Write `bytes` to `target` atomically, creating missing parent folders. For nbook's own
/// files (config, sessions, jobs); agent writes go through [`super::Target`].
pub fn atomic_write(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let parent = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name"))?;
    let dir = openat(
        CWD,
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    write_at(&dir, name, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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

    #[test]
    fn a_replaced_file_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("secret.md");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        atomic_write(&p, b"new").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn sibling_names_are_recognised() {
        let t = sibling_name(OsStr::new("ch1.md"), TEMP_TAG);
        assert!(is_sibling_of(&t, OsStr::new("ch1.md"), TEMP_TAG));
        assert!(!is_sibling_of(&t, OsStr::new("ch2.md"), TEMP_TAG));
        assert!(!is_sibling_of(&t, OsStr::new("ch1.md"), BACKUP_TAG));
    }
}
