//! The world engine (issue #4): an event-sourced record of every subject's state over story
//! time, as NeuroBook defines it (reference/neurobook-notes.md §5).
//!
//! - [`calendar`] turns instants (i64 seconds from the world's zero; gregorian zero is
//!   0001-01-01 00:00) into text and back;
//! - [`schema`] types subjects from `world-engine/schema.toml`;
//! - [`reducer`] applies patches and raises issues E1–E5 ([`issues`]);
//! - [`store`] reads subjects, slices and states from `WorldSubject`/`WorldSlice`/`WorldPatch`,
//!   using per-subject checkpoints ([`index`]) validated against writes by other programs;
//! - [`prepare`] checks and completes a slice's patches before a write; [`write`] writes,
//!   edits and deletes slices with advisories A1–A2;
//! - [`query`] is what the World pane calls (timeline, track, diff, issues, calendar);
//! - [`sandbox`] runs `execute_world` scripts in QuickJS ([`crate::js`]); [`embed`] serves
//!   `world.search.text`; [`pool`] keeps connections and configuration warm between calls.

pub mod calendar;
pub mod embed;
pub mod index;
pub mod issues;
pub mod pointer;
pub mod pool;
pub mod prepare;
pub mod query;
pub mod reducer;
pub mod sandbox;
pub mod schema;
pub mod store;
pub mod write;

use std::path::Path;
use std::sync::Arc;

pub use calendar::Calendar;
pub use schema::Schema;

/// Instants are i64 seconds from the world's zero.
pub type Instant = i64;

#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// Bad input: the message says what to change.
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    /// A second slice at an occupied instant, and the like.
    #[error("{0}")]
    Conflict(String),
    /// The world's database cannot be opened.
    #[error("{0}")]
    Config(String),
    /// `calendar.toml` or a custom calendar script is broken (the error names the file), or a
    /// time cannot be read or shown in the calendar.
    #[error(transparent)]
    Calendar(#[from] calendar::CalendarError),
    /// `schema.toml` is broken (the error names the file).
    #[error(transparent)]
    Schema(#[from] schema::SchemaError),
    #[error("world database error: {0}")]
    Db(#[from] rusqlite::Error),
    /// `world.search.text` without a usable embedding service (says what to configure).
    #[error(transparent)]
    Embedding(std::sync::Arc<crate::net::embed::EmbedError>),
}

impl WorldError {
    pub fn invalid(msg: impl Into<String>) -> Self {
        WorldError::Invalid(msg.into())
    }
}

/// A project's world configuration: its schema and calendar.
#[derive(Clone, Debug)]
pub struct World {
    pub schema: Arc<Schema>,
    pub calendar: Arc<Calendar>,
}

impl World {
    /// Read `world-engine/schema.toml` and `world-engine/calendar.toml` under `root`.
    pub fn load(root: &Path) -> Result<World, WorldError> {
        Ok(World {
            schema: Arc::new(Schema::load(root)?),
            calendar: Arc::new(Calendar::load(root)?),
        })
    }

    /// A world with the given schema and the default gregorian calendar (tests, benches).
    pub fn with_schema(schema: Schema) -> World {
        World {
            schema: Arc::new(schema),
            calendar: Arc::new(Calendar::default()),
        }
    }
}
