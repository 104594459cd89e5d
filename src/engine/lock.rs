//! `.nbook/agent/engine.lock`: which nbook process owns the project's live approval queue.
//! Only the owner may mark pending calls of old sessions as interrupted; a second process (a
//! headless `nbook call` while the TUI runs) must not interrupt calls that are still live.
//!
//! Ownership is an advisory lock on the file (`flock` through `File::try_lock`), held as long
//! as the engine lives and released by the kernel when the process ends, however it ends. So a
//! crashed owner never blocks the next start, a reused pid means nothing, and two processes
//! (or two engines in one process) can never both own the queue. The pid written into the file
//! is only for people reading it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::Path;

pub struct EngineLock {
    /// The locked file while we own the queue; closing it releases the lock.
    file: Option<File>,
}

impl EngineLock {
    /// Try to own the queue of the project whose agent folder is `dir`. Never waits: when
    /// another engine holds the lock, this one runs as a guest (`owned()` is false).
    pub fn acquire(dir: &Path) -> EngineLock {
        let path = dir.join("engine.lock");
        let file = std::fs::create_dir_all(dir).and_then(|()| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
        });
        let mut file = match file {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!("cannot open {}: {e}; not owning the queue", path.display());
                return EngineLock { file: None };
            }
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return EngineLock { file: None },
            Err(TryLockError::Error(e)) => {
                tracing::warn!("cannot lock {}: {e}; not owning the queue", path.display());
                return EngineLock { file: None };
            }
        }
        // Informational only: the lock, not this number, decides who owns the queue.
        let pid = std::process::id().to_string();
        if let Err(e) = file
            .set_len(0)
            .and_then(|()| file.write_all(pid.as_bytes()))
        {
            tracing::warn!("cannot note the pid in {}: {e}", path.display());
        }
        EngineLock { file: Some(file) }
    }

    /// A lock that owns nothing and never tries to (an engine opened as a guest).
    pub fn guest() -> EngineLock {
        EngineLock { file: None }
    }

    pub fn owned(&self) -> bool {
        self.file.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_owner_at_a_time_and_a_stale_pid_blocks_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // A pid file left by an old nbook whose pid now belongs to a live process (pid 1).
        std::fs::write(dir.path().join("engine.lock"), "1").unwrap();
        let first = EngineLock::acquire(dir.path());
        assert!(first.owned(), "a pid in the file must not block");
        let second = EngineLock::acquire(dir.path());
        assert!(!second.owned(), "two engines must not both own the queue");
        drop(first);
        assert!(EngineLock::acquire(dir.path()).owned());
    }
}
