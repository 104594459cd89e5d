//! The protocol: the serialisable types every layer shares — ids, modes, decisions, previews,
//! pending calls, sessions, tool calls, session-log records and engine events. Plain serde
//! data, so it can be logged, replayed, sent to the TUI and printed by the CLI without
//! conversion.
//!
//! A leaf: this module imports nothing else from the crate, so the engine, the tools, the
//! domain services (plot, world, subject) and the clients can all depend on it without
//! depending on each other. `tests/layering.rs` checks that.

mod approval;
mod call;
mod domain;
mod events;
mod ids;
mod input;
mod log;
mod mode;
pub mod parts;
mod preview;
mod session;
mod time;

pub use approval::{Decision, PendingCall};
pub use call::{Actor, ToolCall};
pub use domain::Domain;
pub use events::EngineEvent;
pub use ids::{ApprovalId, CallId, SessionId};
pub use input::{Answer, InputRequest, InputSource, Question, QuestionOption};
pub use log::{LogLine, LogRecord};
pub use mode::Mode;
pub use parts::{KeptParts, PartSelection, SelectionError};
pub use preview::{
    ChangeKind, EgressShown, FieldChange, FileChange, Preview, PreviewBody, RecordChange,
    TargetState,
};
pub use session::{SessionInfo, SessionState};
pub use time::now_rfc3339;

fn is_zero(n: &u64) -> bool {
    *n == 0
}
