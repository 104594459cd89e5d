//! `.nbook/scheduler.lock`: which nbook process runs the project's heartbeats. Two nbook
//! processes on one project (the TUI and `nbook board run`, or two TUIs) would otherwise both
//! wake every heartbeat agent; the one holding this lock is the project's heartbeat scheduler,
//! the other says so (with the holder's pid) and works otherwise.
//!
//! An advisory `flock` through `File::try_lock` (the standard library's, as `engine::lock`
//! does — no extra crate), released by the kernel when the holder ends however it ends, so a
//! crashed nbook never blocks the next one and a reused pid means nothing. The pid written into
//! the file is only to name the holder in the message.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Why this process does not run the heartbeats.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another nbook (pid {}) runs this project's heartbeat agents ({}); this one does not wake them", .pid.as_deref().unwrap_or("unknown"), .path.display())]
    Held { pid: Option<String>, path: PathBuf },
    #[error("cannot lock {}: {source}; this nbook does not wake heartbeat agents", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The held lock; dropping it releases it.
#[derive(Debug)]
pub struct SchedulerLock {
    _file: File,
}

/// The lock file of the project at `root`.
pub fn path(root: &Path) -> PathBuf {
    root.join(".nbook").join("scheduler.lock")
}

impl SchedulerLock {
    /// Take the project's scheduler lock without waiting.
    pub fn acquire(root: &Path) -> Result<SchedulerLock, LockError> {
        let path = path(root);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = Some(pid.trim().to_string()).filter(|p| !p.is_empty());
                return Err(LockError::Held { pid, path });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        // Informational only: the lock, not this number, decides who schedules.
        let pid = std::process::id().to_string();
        if let Err(e) = file
            .set_len(0)
            .and_then(|()| file.write_all(pid.as_bytes()))
        {
            tracing::warn!("cannot note the pid in {}: {e}", path.display());
        }
        Ok(SchedulerLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_naming_the_holder_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let first = SchedulerLock::acquire(dir.path()).expect("first");
        match SchedulerLock::acquire(dir.path()) {
            Err(e @ LockError::Held { .. }) => {
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!("pid {}", std::process::id())),
                    "{msg}"
                );
                assert!(msg.contains("another nbook"), "{msg}");
            }
            other => panic!("the second holder must be refused, got {other:?}"),
        }
        drop(first);
        assert!(SchedulerLock::acquire(dir.path()).is_ok());
    }
}
