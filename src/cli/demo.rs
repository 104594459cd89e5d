//! `nbook demo`: copy the bundled sample novel (with its story and world data), start the
//! replayed `leader.default` session on it, and open the TUI.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use include_dir::{include_dir, Dir};

use super::{open_engine, Failure};
use crate::agent::host::{config_providers, Host, ProviderSource};
use crate::agent::{Provider, ReplayProvider};
use crate::config::Dirs;
use crate::engine::agents::{InvokeMode, InvokeRequest};
use crate::engine::{Approval, Mode};

static DEMO: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/assets/demo");
const SEED_SQL: &str = include_str!("../../assets/demo-seed.sql");
pub const DEMO_SCRIPT: &str = include_str!("../../assets/replay/demo-leader.jsonl");
/// What the demo's continuity editor (agent-001, a heartbeat agent) does when it wakes.
pub const CONTINUITY_SCRIPT: &str = include_str!("../../assets/replay/demo-continuity.jsonl");
pub const DEMO_PROMPT: &str =
    "Review the opening chapters and the lorebook, then help me continue chapter 3.";

/// Write the demo project into `dest` (must not already be a project) and seed its database.
pub fn install(dest: &Path) -> Result<(), Failure> {
    if crate::workspace::is_project(dest) {
        return Err(Failure::usage(format!(
            "{} already holds a project; choose another --dir, or open it with `nbook {}`",
            dest.display(),
            dest.display()
        )));
    }
    crate::workspace::init::copy_embedded(&DEMO, dest).map_err(Failure::usage)?;
    let db = dest.join(".nbook").join("project.sqlite");
    let conn = crate::store::open(&db).map_err(Failure::tool)?;
    conn.execute_batch(&format!("BEGIN;\n{SEED_SQL}\nCOMMIT;"))
        .map_err(|e| Failure::tool(format!("cannot seed the demo database: {e}")))?;
    Ok(())
}

fn default_dir(dirs: &Dirs) -> PathBuf {
    let stamp = time::OffsetDateTime::now_utc().unix_timestamp();
    dirs.data
        .join("demo")
        .join(format!("the-hesta-light-{stamp}"))
}

pub async fn demo(dir: Option<PathBuf>, dirs: Dirs) -> Result<u8, Failure> {
    let dest = dir.unwrap_or_else(|| default_dir(&dirs));
    install(&dest)?;
    let engine = Arc::new(open_engine(&dest, &dirs)?);
    let session = engine
        .create_session(
            "leader.default",
            Mode::Normal,
            "Review the opening, continue chapter 3",
            None,
        )
        .map_err(Failure::usage)?;
    let replay: Arc<dyn Provider> = Arc::new(
        ReplayProvider::parse(DEMO_SCRIPT, "demo-leader.jsonl")
            .map_err(Failure::tool)?
            .with_word_delay(Duration::from_millis(25)),
    );
    let host = Host::attach(
        engine.clone(),
        demo_providers(replay, engine.live_config().clone()),
        Approval::Queue,
    );
    host.submit(InvokeRequest {
        caller: None,
        session_id: session.id.clone(),
        message: Some(DEMO_PROMPT.to_string()),
        input: None,
        mode: InvokeMode::Prompt,
        model: None,
        origin_call_id: None,
    })
    .map_err(Failure::tool)?;
    let code =
        super::open::launch(engine, host.clone(), dirs, Some(session.id.clone()), None).await;
    host.cancel(&session.id);
    super::note(format!(
        "The demo project is at {}",
        crate::text::escape_os(dest.as_os_str())
    ));
    code
}

/// The demo's lead author plays its recorded script once; the continuity editor's heartbeat
/// runs (the `heartbeat` profile) play theirs each time it wakes; every other run (a prompt
/// from the composer, another profile) uses the models in config.toml, or says none is
/// configured.
fn demo_providers(replay: Arc<dyn Provider>, config: crate::config::LiveConfig) -> ProviderSource {
    let first = std::sync::Mutex::new(Some(replay));
    let configured = config_providers(config);
    Arc::new(move |profile, model| {
        if profile.key == "leader.default" && model.is_none() {
            if let Some(p) = first.lock().unwrap_or_else(|e| e.into_inner()).take() {
                return Ok(p);
            }
        }
        if profile.key == "heartbeat" && model.is_none() {
            let p = ReplayProvider::parse(CONTINUITY_SCRIPT, "demo-continuity.jsonl")
                .map_err(|e| e.to_string())?
                .with_word_delay(Duration::from_millis(15));
            return Ok(Arc::new(p) as Arc<dyn Provider>);
        }
        configured(profile, model).map_err(|e| {
            format!("{e}. The demo's recorded script has already played; configure a model to keep going")
        })
    })
}
