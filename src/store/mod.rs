//! `.nbook/project.sqlite`: opening a connection (foreign keys on, busy timeout) and the
//! versioned migrations that create NeuroBook's tables. Our own migration counter lives in
//! `PRAGMA user_version`, which NeuroBook ignores, so both programs can share one database.

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
}

/// Ordered migrations; index + 1 is the version stored in `user_version`.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_neurobook.sql"),
    include_str!("migrations/002_world_index.sql"),
];

/// Open (creating if needed) the database at `path` and bring it up to date.
pub fn open(path: &Path) -> Result<Connection, StoreError> {
    let err = |source| StoreError::Open {
        path: path.display().to_string(),
        source,
    };
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let mut conn = Connection::open(path).map_err(err)?;
    configure(&conn).map_err(err)?;
    migrate(&mut conn, path)?;
    Ok(conn)
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
    Ok(())
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let current: u32 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|source| StoreError::Open {
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
