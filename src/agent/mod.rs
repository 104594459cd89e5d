//! Agent sessions: the model provider trait (`provider`), the scripted `replay` provider that
//! drives the demo and most tests, and the agent loop (`run_loop`) that feeds model turns
//! through the engine exactly as the TUI does.

pub mod provider;
pub mod replay;
pub mod run_loop;

pub use provider::{Message, ModelEvent, ModelRequest, Provider, ProviderError, ToolSpec};
pub use replay::ReplayProvider;
pub use run_loop::{run_agent, RunOptions, RunOutcome};
