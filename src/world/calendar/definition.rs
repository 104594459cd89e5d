//! Why a gregorian or simple calendar definition (its format, eras and units in
//! `calendar.toml`) does not make sense. Each names the unit, token or format at fault and what
//! to change; loading wraps it with the file's name.

/// A calendar definition that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionError {
    #[error("era_before and era_after must differ")]
    SameEras,
    #[error("era_before and era_after must differ, or BC and AD years read the same")]
    SameGregorianEras,
    #[error("format {format:?}: a `{{` is not closed")]
    Unclosed { format: String },
    /// `{inner}` is the token as written, with its bad width.
    #[error("format {format:?}: `{{{inner}}}` — a width is written like `:02`")]
    BadWidth { format: String, inner: String },
    #[error("format {format:?}: unknown token `{{{token}}}`")]
    UnknownToken { format: String, token: String },
    #[error("format {format:?} must contain {{{token}}}")]
    MissingToken { format: String, token: String },
    #[error("format {format:?} must contain the largest unit {{{unit}}}")]
    MissingLargest { format: String, unit: String },
    #[error("unit {0:?}: ratio must be at least 2")]
    RatioTooSmall(String),
    #[error("two units are made of {0:?}; units must form one chain")]
    SharedParent(String),
    #[error("unit {0:?} is too large")]
    TooLarge(String),
    #[error("unit {unit:?} is not on the chain that starts at {base:?}")]
    OffChain { unit: String, base: String },
    #[error("unit {0:?} is the largest unit; it cannot have names")]
    NamedLargest(String),
    #[error("unit {unit:?} has {names} names but {per} of them make one {next}")]
    NameCount {
        unit: String,
        names: usize,
        per: i128,
        next: String,
    },
}
