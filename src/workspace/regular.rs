//! Opening project files for reading, refusing anything that is not a regular file. A FIFO
//! blocks `open` until a writer appears and a device can stream forever, so every reader of
//! project files (the `read` tool, write/edit/patch previews, fingerprints, the Files pane
//! preview) opens through [`open_regular`]: the kind is checked before opening, the open
//! itself never blocks (`O_NONBLOCK`), and the opened handle is checked again so a file
//! swapped for a FIFO in between is still refused.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::path::Path;

/// Why a path could not be opened as a regular file.
#[derive(Debug, thiserror::Error)]
pub enum OpenRegularError {
    #[error("is a folder, not a file")]
    Folder,
    #[error("is {kind}, not a regular file; nbook's file tools only read and write regular files (remove it or use another path)")]
    NotRegular { kind: &'static str },
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// What kind of non-regular file `meta` describes ("a FIFO (named pipe)", …).
pub fn special_kind(meta: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let ft = meta.file_type();
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
    }
    if meta.is_dir() {
        "a folder"
    } else {
        "a special file"
    }
}

fn check(meta: &Metadata) -> Result<(), OpenRegularError> {
    if meta.is_dir() {
        Err(OpenRegularError::Folder)
    } else if meta.is_file() {
        Ok(())
    } else {
        Err(OpenRegularError::NotRegular {
            kind: special_kind(meta),
        })
    }
}

/// Open `path` (symlinks followed) for reading if it is a regular file. `Ok(None)` when it
/// does not exist. Returns the handle and its size.
pub fn open_regular(path: &Path) -> Result<Option<(File, u64)>, OpenRegularError> {
    match std::fs::metadata(path) {
        Ok(meta) => check(&meta)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Never wait for a FIFO's writer, never make a terminal our controlling tty.
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = match opts.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    // The path may have been swapped between the check and the open: judge the handle.
    let meta = file.metadata()?;
    check(&meta)?;
    Ok(Some((file, meta.len())))
}

/// Is `path` something other than a regular file or folder (a FIFO, socket, device)?
/// Returns its kind. Missing or unreadable paths are `None` (the caller's own I/O reports those).
pub fn special_file_kind(path: &Path) -> Option<&'static str> {
    let meta = std::fs::metadata(path).ok()?;
    (!meta.is_file() && !meta.is_dir()).then(|| special_kind(&meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let e = open_regular(&fifo).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert_eq!(special_file_kind(&fifo), Some("a FIFO (named pipe)"));
        assert!(matches!(
            open_regular(dir.path()),
            Err(OpenRegularError::Folder)
        ));
        assert!(open_regular(&dir.path().join("missing")).unwrap().is_none());
        std::fs::write(dir.path().join("f"), "abc").unwrap();
        let (_, len) = open_regular(&dir.path().join("f")).unwrap().unwrap();
        assert_eq!(len, 3);
    }
}
