//! Running the plot services against a project database: a read, a dry run (the real service
//! code inside a transaction that is rolled back, so the preview and the write cannot
//! disagree), or a commit in one transaction. The tools and the TUI both go through here.

use std::path::PathBuf;
use std::sync::Arc;

use rusqlite::TransactionBehavior;

use super::ctx::Plot;
use super::error::PlotResult;
use super::project::{PlotTarget, ProjectMeta};
use super::time::{default_calendar, CalendarCodec};
use crate::protocol::{RecordChange, TargetState};

/// What a dry run or a commit did.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome<T> {
    pub value: T,
    /// Field-by-field changes of every record written, derived changes included.
    pub changes: Vec<RecordChange>,
    /// Fingerprints of the pre-existing rows the write touched or depended on.
    pub targets: Vec<TargetState>,
}

/// A project database with what the services need around it.
#[derive(Clone)]
pub struct PlotDb {
    pub db_path: PathBuf,
    pub meta: ProjectMeta,
    pub calendar: Arc<dyn CalendarCodec>,
}

impl PlotDb {
    pub fn new(db_path: PathBuf, meta: ProjectMeta) -> PlotDb {
        PlotDb {
            db_path,
            meta,
            calendar: default_calendar(),
        }
    }

    pub fn for_target(t: &PlotTarget) -> PlotDb {
        PlotDb::new(t.db_path.clone(), t.meta.clone())
    }

    /// Use the project's calendar for world-anchor times.
    pub fn with_calendar(mut self, calendar: Arc<dyn CalendarCodec>) -> PlotDb {
        self.calendar = calendar;
        self
    }

    /// Run reads. The connection is read-only, so a read can never write.
    pub fn read<T>(&self, f: impl FnOnce(&mut Plot) -> PlotResult<T>) -> PlotResult<T> {
        let conn = if self.db_path.exists() {
            crate::store::open_read_only(&self.db_path)?
        } else {
            crate::store::open(&self.db_path)?
        };
        let mut plot = Plot::new(&conn, self.meta.clone()).with_calendar(self.calendar.clone());
        f(&mut plot)
    }

    /// Run a write and roll it back: the preview of exactly what `commit` would do.
    pub fn dry_run<T>(&self, f: impl FnOnce(&mut Plot) -> PlotResult<T>) -> PlotResult<Outcome<T>> {
        let mut conn = crate::store::open_writable(&self.db_path)?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let out = self.apply(&tx, f);
        tx.rollback()?;
        out
    }

    /// Run a write in one transaction; nothing is written unless all of it succeeds. The rows
    /// it changed are recorded as a changeset and, once committed, handed to the change
    /// history (`store::applied`), so the write can be undone exactly.
    pub fn commit<T>(&self, f: impl FnOnce(&mut Plot) -> PlotResult<T>) -> PlotResult<Outcome<T>> {
        let mut conn = crate::store::open_writable(&self.db_path)?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let recorder = crate::store::changeset::Recorder::start(&tx)
            .map_err(|e| super::error::PlotError::db(e.to_string()))?;
        let out = self.apply(&tx, f)?;
        let changes = recorder
            .finish()
            .map_err(|e| super::error::PlotError::db(e.to_string()))?;
        tx.commit()?;
        crate::store::applied::committed(changes);
        Ok(out)
    }

    fn apply<T>(
        &self,
        conn: &rusqlite::Connection,
        f: impl FnOnce(&mut Plot) -> PlotResult<T>,
    ) -> PlotResult<Outcome<T>> {
        let mut plot = Plot::new(conn, self.meta.clone()).with_calendar(self.calendar.clone());
        let value = f(&mut plot)?;
        let (changes, targets) = plot.changes()?;
        Ok(Outcome {
            value,
            changes,
            targets,
        })
    }
}
