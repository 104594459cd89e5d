//! `nbook mcp`: serve the project's tools to an outside agent over MCP (stdio), or print the
//! snippet that registers nbook with a client (`--print-config`). Stdout carries only the
//! protocol; warnings go to stderr.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

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
    let profile_dirs = vec![
        dirs.config.join("profiles"),
        ws.nbook_dir().join("profiles"),
    ];
    // A guest of the approval queue: a TUI started later must own it, not this helper.
    let engine =
        Engine::open_guest(ws, report.config.clone(), &dirs, registry).map_err(Failure::tool)?;
    report.check_tool_names(engine.registry().names());
    for n in report.notes() {
        note(format!("nbook mcp: warning: {n}"));
    }
    for e in engine.profile_errors() {
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
    let mut seen = fingerprint(&profile_dirs);
    let refresh = Box::new(move || {
        let now = fingerprint(&profile_dirs);
        if now == seen {
            return None;
        }
        seen = now;
        let (profiles, _) = crate::engine::profiles::Profiles::load(&profile_dirs);
        catalogue::for_profile_in(engine.registry(), &profiles, &profile).ok()
    });
    crate::mcp::server::serve_stdio(backend, tools, Some(refresh))
        .await
        .map_err(Failure::tool)?;
    Ok(exit::OK)
}

/// The profile files as (path, modified, length): a change in any means "reload".
fn fingerprint(dirs: &[PathBuf]) -> Vec<(PathBuf, Option<SystemTime>, u64)> {
    let mut v = Vec::new();
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(d) else {
            continue;
        };
        for e in entries.flatten() {
            if let Ok(m) = e.metadata() {
                v.push((e.path(), m.modified().ok(), m.len()));
            }
        }
    }
    v.sort();
    v
}
