//! Errors of the apply_patch engine. The `Display` texts follow the Codex messages so a model
//! trained on that tool recognises them.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PatchError {
    /// The envelope is wrong (missing `*** Begin Patch` / `*** End Patch`).
    #[error("invalid patch: {0}")]
    InvalidPatch(String),
    /// A hunk could not be parsed; `line_number` is 1-based in the trimmed patch text.
    #[error("invalid hunk at line {line_number}, {message}")]
    InvalidHunk { message: String, line_number: usize },
    /// The patch parsed but holds no hunk.
    #[error("No files were modified.")]
    NoFilesModified,
    /// A chunk could not be located in its file (context or expected lines not found).
    #[error("{0}")]
    ComputeReplacements(String),
    /// A path given in the patch is not acceptable (absolute, `..`, not authorized...).
    #[error("Invalid path '{path}': {reason}")]
    InvalidPath { path: String, reason: String },
    /// Reading or writing the file system failed; `context` says what was attempted.
    #[error("{context}: {message}")]
    Io { context: String, message: String },
}

/// Why a path of the patch has no destination to commit to; becomes the `reason` of
/// [`PatchError::InvalidPath`].
#[derive(Debug, Error)]
pub enum ResolveError {
    /// The tool resolved (and authorized) every path before planning, but not this one.
    #[error("{0} was not resolved")]
    NotResolved(String),
    /// The path is not acceptable as written (absolute, `..`, empty).
    #[error(transparent)]
    Invalid(#[from] PatchError),
    /// The path cannot be reached inside the project without leaving it.
    #[error(transparent)]
    Refused(#[from] crate::workspace::walk::Refusal),
}

impl PatchError {
    pub(crate) fn io(context: impl Into<String>, message: impl ToString) -> Self {
        PatchError::Io {
            context: context.into(),
            message: message.to_string(),
        }
    }
}
