//! Identifiers shared by every layer. Plain strings on the wire; the aliases say which id a
//! value is.

/// A tool call's id as the model's provider sent it (`call_0`, `toolu_…`). Providers reuse
/// them freely across sessions (and some across turns), so the engine never keys its own
/// state by this alone.
pub type CallId = String;
pub type SessionId = String;
/// The engine's id for one approval request (`ap-1`, `ap-2`, …): minted when a call goes to the
/// author, unique per engine and never reused across restarts (the count resumes after the
/// highest id in the session logs). The queue, `decide`, the events and the log's approval
/// records are keyed by it, so two sessions whose providers both say `call_0` never collide.
pub type ApprovalId = String;
