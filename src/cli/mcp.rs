//! `nbook mcp`: serve the project's tools to an outside agent over MCP (stdio), or print the
//! snippet that registers nbook with a client (`--print-config`). Stdout carries only the
//! protocol; warnings go to stderr.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::{exit, note, out, project_path, Failure};
use crate::config::{Config, Dirs};
use crate::engine::Engine;
use crate::mcp::backend::{Backend, BackendOptions};
use crate::mcp::catalogue;
use crate::mcp::client_config::{snippet, Client};
use crate::workspace::Workspace;

pub struct McpArgs {
    pub project: Option<PathBuf>,
    pub profile: String,
    pub wait_ms: u64,
    pub approve_from_tui_only: bool,
    pub print_config: Option<Client>,
}

pub async fn mcp(a: McpArgs, dirs: Dirs) -> Result<u8, Failure> {
    let project = project_path(a.project);
    if let Some(client) = a.print_config {
        let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("nbook"));
        let project = std::path::absolute(&project).unwrap_or(project);
        out(snippet(client, &exe, &project).trim_end())?;
        return Ok(exit::OK);
    }
    let ws = Workspace::open(&project).map_err(Failure::usage)?;
    let mut report = Config::load_report(&dirs, Some(ws.root())).map_err(Failure::usage)?;
    let registry = crate::tools::registry().map_err(Failure::tool)?;
    // A guest of the approval queue: a TUI started later must own it, not this helper.
    let engine =
        Engine::open_guest(ws, report.config.clone(), &dirs, registry).map_err(Failure::tool)?;
    report.check_tool_names(engine.registry().names());
    for n in report.notes() {
        note(format!("nbook mcp: warning: {n}"));
    }
    for e in engine.profile_errors().iter() {
        note(format!("nbook mcp: warning: {e}"));
    }
    let engine = Arc::new(engine);
    engine.set_headless(true);
    let tools = catalogue::for_profile(&engine, &a.profile).map_err(Failure::usage)?;
    let backend = Arc::new(Backend::new(
        engine.clone(),
        BackendOptions {
            profile: a.profile.clone(),
            wait: Duration::from_millis(a.wait_ms),
            approve_from_tui_only: a.approve_from_tui_only,
        },
    ));
    let profile = a.profile;
    // The engine reloads the profile files itself (so its allowlists follow them); the
    // client is then sent the new list.
    let refresh = Box::new(move || {
        if !engine.reload_profiles_if_changed() {
            return None;
        }
        catalogue::for_profile(&engine, &profile).ok()
    });
    crate::mcp::server::serve_stdio(backend, tools, Some(refresh))
        .await
        .map_err(Failure::tool)?;
    Ok(exit::OK)
}
