//! `.nbook/agent/engine.lock`: which nbook process owns the project's live approval queue.
//! Only the owner may mark pending calls of old sessions as interrupted; a second process (a
//! headless `nbook call` while the TUI runs) must not interrupt calls that are still live.

use std::path::{Path, PathBuf};

pub struct EngineLock {
    path: PathBuf,
    owned: bool,
}

fn alive(pid: u32) -> bool {
    // Linux: a live process has /proc/<pid>. Elsewhere assume alive (the safe answer).
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}

impl EngineLock {
    pub fn acquire(dir: &Path) -> EngineLock {
        let path = dir.join("engine.lock");
        let me = std::process::id();
        let held_by_other = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
            .is_some_and(|pid| pid != me && alive(pid));
        if held_by_other {
            return EngineLock { path, owned: false };
        }
        let owned = std::fs::create_dir_all(dir).is_ok()
            && crate::workspace::atomic_write(&path, me.to_string().as_bytes()).is_ok();
        EngineLock { path, owned }
    }

    pub fn owned(&self) -> bool {
        self.owned
    }
}

impl Drop for EngineLock {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
