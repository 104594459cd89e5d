//! nbook — a terminal workbench for writing long novels with AI agents.
//!
//! Data flows `tui → engine → tools → (workspace | store | plot | world)`; the `agent` module
//! drives the engine exactly the way the TUI does. The engine never imports ratatui.

pub mod agent;
pub mod board;
pub mod cli;
pub mod config;
pub mod engine;
pub mod js;
pub mod json_args;
pub mod mcp;
pub mod net;
pub mod plot;
pub mod protocol;
pub mod runner;
pub mod store;
pub mod subject;
pub mod text;
pub mod tools;
pub mod tui;
pub mod workflow;
pub mod workspace;
pub mod world;
