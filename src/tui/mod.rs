//! The terminal UI: six panes (Files, Story, World, Sessions, Approvals, Board), overlays, a status
//! bar. Keys become [`action::Command`]s through `assets/keymap.toml`; `AppState::update` is
//! the only place state changes; `chrome::view` draws a pure picture of it; the runtime turns
//! terminal input, engine events and finished jobs into actions and executes effects.
//!
//! Layout: one folder per pane (`files`, `story`, `world`, `sessions`, `approvals`, `board`), each
//! with its state (`mod.rs`), `update`, `view` and (where it has blocking work) `jobs`;
//! `widgets` holds what several panes draw with (wrap, diff, markdown, forms); `chrome` is
//! the screen around the panes (layout, pane frames, detail frame, status bar, overlays, the
//! trust prompt). The app-wide model and plumbing stay here at the top: `app`, `action`,
//! `events`, `runtime`, `input`, `keymap`, `keys`, `theme`, `terminal`, `clock`, `trust`.

pub mod action;
pub mod app;
pub mod approvals;
pub mod board;
pub mod chrome;
pub mod clipboard;
pub mod clock;
pub mod commands;
mod events;
pub mod external;
mod external_update;
pub mod files;
pub mod handover;
pub mod history;
pub mod input;
pub mod keymap;
pub mod keys;
pub mod mouse;
pub mod notify;
pub mod runtime;
pub mod sessions;
pub mod story;
pub mod terminal;
pub mod theme;
pub mod trust;
pub mod widgets;
pub mod world;

use std::sync::Arc;
use std::time::Instant;

use crate::config::Dirs;
use crate::engine::Engine;
use app::{AppInit, AppState};
use keymap::Keymap;
use theme::Theme;

pub use chrome::overlay_update::palette_commands;

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("terminal: {0}")]
    Io(#[from] std::io::Error),
}

pub struct TuiOptions {
    pub dirs: Dirs,
    /// Runs the agents the author starts, steers and cancels from the Sessions pane.
    pub host: Arc<crate::agent::host::Host>,
    /// A session to select (and focus the Sessions pane on) at start.
    pub focus_session: Option<String>,
    /// What loading the config found (warnings, project lines held until trusted).
    pub config_report: Option<crate::config::LoadReport>,
    /// Why outside agents (`nbook mcp`) cannot attach to this nbook, when they cannot.
    pub attach_error: Option<String>,
}

/// One status note per problem in the author's keymap file (the rest of it applies).
pub fn keymap_notes(errors: &[keymap::KeymapError]) -> Vec<String> {
    errors.iter().map(|e| format!("keymap: {e}")).collect()
}

/// Build the UI state for an engine (no terminal needed; used by `run` and the benches).
pub fn build_app(
    engine: &Engine,
    dirs: &Dirs,
    focus_session: Option<String>,
    size: (u16, u16),
) -> AppState {
    let mut notices = Vec::new();
    let (keymap, kerr) = Keymap::load(&dirs.config.join("keymap.toml"));
    notices.extend(keymap_notes(&kerr));
    let (theme, tnote) = Theme::load(
        engine.config().theme.as_deref(),
        Some(&dirs.config),
        Theme::no_colour_env(),
    );
    notices.extend(tnote);
    for e in engine.profile_errors().iter() {
        notices.push(format!("profile: {e}"));
    }
    notices.extend(engine.database_read_only());
    // A bad series declaration: the book opens on its own, and the author is told why.
    if let Err(e) = crate::workspace::series::load(engine.workspace().root()) {
        notices.push(format!("series: {e}"));
    }
    for note in engine.workspace().recovery() {
        notices.push(format!("repaired: {note}"));
    }
    let profiles = engine
        .profiles()
        .iter()
        .filter(|p| p.creation != crate::engine::profiles::Creation::SystemOnly)
        .map(|p| widgets::forms::ProfileChoice {
            key: p.key.clone(),
            name: p.name.clone(),
            description: p.description.clone(),
        })
        .collect();
    for note in engine.restore_notes() {
        notices.push(format!("approval queue: {note}"));
    }
    let mut app = AppState::new(AppInit {
        title: engine.workspace().title(),
        keymap,
        theme,
        clock: Arc::new(clock::SystemClock),
        size,
        sessions: engine.sessions(),
        pending: engine.pending(),
        inputs: engine.pending_inputs(),
        jobs: engine.jobs().list(None, None),
        profiles,
        models: engine.config().models.keys().cloned().collect(),
        focus_session,
        notices,
    });
    app.notify = engine.config().notify.clone();
    app.approvals.restored = engine.restored_calls();
    app.config_file = dirs.config_file();
    app
}

/// Run the full-screen UI on a project until the author quits. The terminal is restored on
/// every exit path, panics included.
pub async fn run(engine: Arc<Engine>, opts: TuiOptions) -> Result<(), TuiError> {
    let started = Instant::now();
    let (mut term, guard) = terminal::enter()?;
    let size = term.size()?;
    // Subscribe before reading the queue so no request is missed (duplicates are dropped).
    let sub = engine.subscribe();
    let jobs_sub = engine.jobs().subscribe();
    let mut app = build_app(
        &engine,
        &opts.dirs,
        opts.focus_session,
        (size.width, size.height),
    );
    if let Some(report) = &opts.config_report {
        app.config_report(report);
    }
    if let Some(e) = &opts.attach_error {
        app.attach_failed(e);
    }
    // The board's scheduler runs while the UI is open, starting on (not persisted: `S`
    // stops it for this run only).
    let runner = crate::runner::Runner::new(engine.clone(), opts.host.clone());
    // Heartbeat agents wake while the UI is open, in one nbook per project: the one holding
    // `.nbook/scheduler.lock` (kept until the UI closes).
    let (_scheduler_lock, heartbeats) =
        match crate::runner::scheduler_lock::SchedulerLock::acquire(engine.workspace().root()) {
            Ok(l) => (
                Some(l),
                Some(crate::runner::heartbeat::Heartbeats::new(
                    engine.clone(),
                    opts.host.clone(),
                )),
            ),
            Err(e) => {
                app.heartbeats_elsewhere(&e.to_string());
                (None, None)
            }
        };
    let sources = runtime::Sources {
        events: sub,
        jobs: jobs_sub,
        host: Some(opts.host),
        dirs: Some(opts.dirs.clone()),
        runner: Some(runner),
        heartbeats,
    };
    let mut handover = external::TerminalHandover;
    let result = runtime::run_loop(engine, sources, app, &mut term, &mut handover, started).await;
    drop(guard);
    result
}
