//! The one error type of the plot services. Every input error names the field it is about as a
//! JSON Pointer into the tool arguments (`/brief/pov`, `/worldAnchor/subjectIds/3`), so the agent
//! and the author's edit form can point at it.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input breaks a rule: missing or forbidden field, bad value, illegal transition.
    Invalid,
    /// An id (or the current selection) names nothing in this story.
    NotFound,
    /// A name is taken.
    Conflict,
    /// SQLite failed.
    Database,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlotError {
    pub kind: ErrorKind,
    /// JSON Pointer of the offending field, when the error is about one.
    pub pointer: Option<String>,
    pub message: String,
}

pub type PlotResult<T> = Result<T, PlotError>;

impl PlotError {
    fn new(kind: ErrorKind, pointer: Option<&str>, message: impl Into<String>) -> Self {
        PlotError {
            kind,
            pointer: pointer.map(str::to_string),
            message: message.into(),
        }
    }

    pub fn invalid(pointer: &str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, Some(pointer), message)
    }

    pub fn not_found(pointer: &str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, Some(pointer), message)
    }

    pub fn conflict(pointer: &str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, Some(pointer), message)
    }

    /// An error about the call as a whole (no single field).
    pub fn general(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self::new(kind, None, message)
    }

    pub fn db(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Database, None, message)
    }
}

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pointer {
            Some(p) => write!(f, "{p}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for PlotError {}

impl From<rusqlite::Error> for PlotError {
    fn from(e: rusqlite::Error) -> Self {
        PlotError::db(format!("database error: {e}"))
    }
}

impl From<crate::store::StoreError> for PlotError {
    fn from(e: crate::store::StoreError) -> Self {
        PlotError::db(e.to_string())
    }
}
