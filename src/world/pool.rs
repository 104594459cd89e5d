//! Keeping `execute_world` cheap to start: open project connections are reused (with their
//! prepared-statement caches), and a project's schema and calendar are re-read only when one of
//! the `world-engine/` files changed (size or modification time).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use rusqlite::Connection;

use super::{World, WorldError};

const KEEP: usize = 4;

fn idle() -> &'static Mutex<Vec<(PathBuf, Connection)>> {
    static POOL: OnceLock<Mutex<Vec<(PathBuf, Connection)>>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(Vec::new()))
}

/// A connection to `db` (opened and migrated if none is idle), outside any transaction.
pub fn take(db: &Path) -> Result<Connection, WorldError> {
    if let Ok(mut pool) = idle().lock() {
        if let Some(i) = pool.iter().position(|(p, _)| p == db) {
            return Ok(pool.swap_remove(i).1);
        }
    }
    crate::store::open(db).map_err(|e| WorldError::Config(e.to_string()))
}

/// Return a connection for reuse. One still inside a transaction is rolled back first.
pub fn give(db: &Path, conn: Connection) {
    if !conn.is_autocommit() && conn.execute_batch("ROLLBACK").is_err() {
        return;
    }
    if let Ok(mut pool) = idle().lock() {
        if pool.len() < KEEP {
            pool.push((db.to_path_buf(), conn));
        }
    }
}

type Stamp = Vec<(String, u64, Option<SystemTime>)>;

fn stamp(root: &Path) -> Stamp {
    let dir = root.join("world-engine");
    let mut out: Stamp = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let relevant = name.ends_with(".toml") || name.ends_with(".js");
                    let meta = e.metadata().ok()?;
                    relevant.then(|| (name, meta.len(), meta.modified().ok()))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The project's world configuration, re-read only when its files changed.
pub fn world(root: &Path) -> Result<World, WorldError> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, (Stamp, World)>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let now = stamp(root);
    if let Ok(c) = cache.lock() {
        if let Some((s, w)) = c.get(root) {
            if *s == now {
                return Ok(w.clone());
            }
        }
    }
    let w = World::load(root)?;
    if let Ok(mut c) = cache.lock() {
        c.insert(root.to_path_buf(), (now, w.clone()));
    }
    Ok(w)
}
