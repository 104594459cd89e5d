//! `nbook [PATH]`: open the TUI on a project.

use std::path::PathBuf;
use std::sync::Arc;

use super::{exit, open_engine_report, Failure};
use crate::agent::host::{config_providers, Host};
use crate::config::Dirs;
use crate::engine::Approval;
use crate::tui::{self, TuiOptions};

pub async fn open(path: PathBuf, dirs: Dirs) -> Result<u8, Failure> {
    // The TUI shows config warnings and held project lines itself (stderr is hidden by it).
    let (engine, report) = open_engine_report(&path, &dirs)?;
    let engine = Arc::new(engine);
    let host = Host::attach(
        engine.clone(),
        config_providers(engine.live_config().clone()),
        Approval::Queue,
    );
    launch(engine, host, dirs, None, Some(report)).await
}

pub async fn launch(
    engine: Arc<crate::engine::Engine>,
    host: Arc<Host>,
    dirs: Dirs,
    focus_session: Option<String>,
    config_report: Option<crate::config::LoadReport>,
) -> Result<u8, Failure> {
    // Outside agents (`nbook mcp`) attach here, so their changes wait in this queue. Held
    // until the TUI ends; dropping it interrupts their waiting calls (none is executed).
    let mut attach_error = None;
    let attach = match crate::mcp::listen::serve(engine.clone()).await {
        Ok(a) => a,
        Err(e) => {
            tracing::warn!("mcp attach socket: {e}");
            attach_error = Some(e.to_string());
            None
        }
    };
    let engine_for_exit = engine.clone();
    let outcome = tui::run(
        engine,
        TuiOptions {
            dirs,
            host,
            focus_session,
            config_report,
            attach_error,
        },
    )
    .await;
    // From here on the runs are stopped by the exit, not by the author: their waiting calls
    // stay on disk and wait again at the next open.
    engine_for_exit.close_queue();
    drop(attach);
    outcome.map_err(Failure::tool)?;
    Ok(exit::OK)
}
