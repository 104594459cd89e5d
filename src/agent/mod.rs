//! Agent sessions: the model provider trait (`provider`) and its implementations (`openai`,
//! `anthropic`, and the scripted `replay` that drives the demo and most tests), the agent loop
//! (`run_loop`) that feeds model turns through the engine, context compaction (`compact`), and
//! the host (`host`) that runs every session's invocations, queues and cancels them, and
//! delivers finished background jobs.

pub mod anthropic;
pub mod budget;
pub mod compact;
pub mod factory;
pub mod host;
pub mod http;
pub mod openai;
pub mod provider;
pub mod replay;
pub mod reply_stream;
pub mod run_loop;

pub use anthropic::AnthropicProvider;
pub use factory::{
    build_provider, build_provider_for, build_provider_with, default_model_key, generation_for,
};
pub use http::HttpSettings;
pub use openai::OpenAiProvider;
pub use provider::{Message, ModelEvent, ModelRequest, Provider, ProviderError, ToolSpec};
pub use replay::ReplayProvider;
pub use run_loop::{history, run_agent, run_invocation, Inbox, RunOptions, RunOutcome, Start};
