//! Identifiers shared by every layer. Plain strings on the wire; the aliases say which id a
//! value is.

/// A tool call's id as the model's provider sent it (`call_0`, `toolu_…`). Providers reuse
/// them freely across sessions (and some across turns), so the engine never keys its own
/// state by this alone.
pub type CallId = String;
pub type SessionId = String;
