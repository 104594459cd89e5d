//! `.nbook/project.sqlite`: opening a connection (foreign keys on, busy timeout, WAL) and the
//! versioned migrations that create NeuroBook's tables. Our own migration counter lives in
//! `PRAGMA user_version`, which NeuroBook ignores, so both programs can share one database.
//!
//! **WAL.** The database runs in write-ahead-log mode, so readers never wait for a writer and
//! a writer never waits for readers; only two writers at the same moment wait (busy timeout).
//! WAL is a property of the file that every SQLite client honours, so NeuroBook (which opens
//! the same file with SQLite) keeps working on it unchanged; the `-wal` and `-shm` files beside
//! it belong to the database and must be copied with it while it is open.
//!
//! **A newer database.** A `user_version` above the migrations this build knows means a newer
//! nbook wrote the file: it is opened read-only (reads work, every write fails with
//! [`StoreError::NewerVersion`]), and nothing is migrated or switched to WAL.

pub mod applied;
pub mod changeset;
pub mod history;
pub mod overview;

use std::path::Path;

use rusqlite::Connection;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the project database {path}: {source}")]
    Open {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("migration {version} of {path} failed: {source}")]
    Migrate {
        version: u32,
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("database query failed: {0}")]
    Query(#[from] rusqlite::Error),
    #[error("the project database was written by a newer nbook (version {found} > {known}); opened read-only: reads work, changes are refused. Update nbook to change this project ({path}).")]
    NewerVersion {
        path: String,
        found: u32,
        known: u32,
    },
}

/// Ordered migrations; index + 1 is the version stored in `user_version`.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_neurobook.sql"),
    include_str!("migrations/002_world_index.sql"),
    include_str!("migrations/003_board.sql"),
    include_str!("migrations/004_board_steering.sql"),
    include_str!("migrations/005_mailbox.sql"),
    include_str!("migrations/006_workflows.sql"),
    include_str!("migrations/007_research.sql"),
    include_str!("migrations/008_agent_ratings.sql"),
    include_str!("migrations/009_agents.sql"),
    include_str!("migrations/010_agent_runs.sql"),
    include_str!("migrations/011_task_repository_scope.sql"),
    include_str!("migrations/012_research_retry.sql"),
    include_str!("migrations/013_task_declared_repository_scope.sql"),
];

/// The schema version this build migrates to.
pub const KNOWN_VERSION: u32 = MIGRATIONS.len() as u32;

/// Open (creating if needed) the database at `path` and bring it up to date. A database from a
/// newer nbook comes back read-only and unchanged (see [`read_only_reason`]).
pub fn open(path: &Path) -> Result<Connection, StoreError> {
    let err = |source| StoreError::Open {
        path: path.display().to_string(),
        source,
    };
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let mut conn = Connection::open(path).map_err(err)?;
    if user_version(&conn).map_err(err)? > KNOWN_VERSION {
        drop(conn);
        let conn = open_read_only(path)?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        return Ok(conn);
    }
    configure(&conn).map_err(err)?;
    migrate(&mut conn, path)?;
    Ok(conn)
}

/// Open the database for a write: like [`open`], but a database from a newer nbook is an
/// error that says so.
pub fn open_writable(path: &Path) -> Result<Connection, StoreError> {
    let conn = open(path)?;
    check_writable(&conn)?;
    Ok(conn)
}

/// Fail with [`StoreError::NewerVersion`] if `conn` is a newer nbook's database.
pub fn check_writable(conn: &Connection) -> Result<(), StoreError> {
    let found = user_version(conn)?;
    if found > KNOWN_VERSION {
        return Err(StoreError::NewerVersion {
            path: conn.path().unwrap_or_default().to_string(),
            found,
            known: KNOWN_VERSION,
        });
    }
    Ok(())
}

/// Why the database at `path` is opened read-only, if it is (for a warning at open). A
/// missing or unreadable file is not reported here: opening it reports that.
pub fn read_only_reason(path: &Path) -> Option<StoreError> {
    let conn = open_read_only(path).ok()?;
    check_writable(&conn).err()
}

fn user_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

/// Open an existing database read-only (for panes and benchmarks); no migration.
pub fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|source| StoreError::Open {
        path: path.display().to_string(),
        source,
    })?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    // NeuroBook relies on cascades; stock SQLite leaves foreign keys off per connection.
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // Readers and writers stop blocking each other. Switching needs a moment with no other
    // connection inside a transaction; if that is not now, the next open switches.
    if let Err(e) =
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
    {
        tracing::warn!("project database stays in its journal mode for now: {e}");
    }
    Ok(())
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let current: u32 = user_version(conn).map_err(|source| StoreError::Open {
        path: path.display().to_string(),
        source,
    })?;
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let version = i as u32 + 1;
        if version <= current {
            continue;
        }
        let fail = |source| StoreError::Migrate {
            version,
            path: path.display().to_string(),
            source,
        };
        let tx = conn.transaction().map_err(fail)?;
        tx.execute_batch(sql).map_err(fail)?;
        tx.pragma_update(None, "user_version", version)
            .map_err(fail)?;
        tx.commit().map_err(fail)?;
    }
    Ok(())
}

/// The NeuroBook tables every project database must hold.
pub const TABLES: [&str; 15] = [
    "ProjectMetadata",
    "DatabaseLock",
    "Story",
    "StoryAct",
    "StoryChapter",
    "StoryPhase",
    "StoryThread",
    "StoryScene",
    "StorySceneRef",
    "StoryPromise",
    "StoryPromiseBeat",
    "StoryDecision",
    "WorldSubject",
    "WorldSlice",
    "WorldPatch",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_every_table_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".nbook/project.sqlite");
        drop(open(&p).unwrap());
        let conn = open(&p).unwrap();
        for t in TABLES {
            let n: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1",
                    [t],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, 1, "table {t}");
        }
        let v: String = conn
            .query_row(
                "SELECT value FROM ProjectMetadata WHERE key='schemaVersion'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(v, "1");
        let fk: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(fk, 1);
    }

    #[test]
    fn opens_a_neurobook_database_unchanged() {
        // A database created by NeuroBook's own DDL (no user_version) opens and keeps its rows.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("project.sqlite");
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch(MIGRATIONS[0]).unwrap();
            c.execute("INSERT INTO Story (title) VALUES ('Kept')", [])
                .unwrap();
        }
        let conn = open(&p).unwrap();
        let t: String = conn
            .query_row("SELECT title FROM Story", [], |r| r.get(0))
            .unwrap();
        assert_eq!(t, "Kept");
    }
}
