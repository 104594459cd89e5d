//! `nbook run`: one agent run, headless; every engine event is printed as a JSON line, and a
//! final `{"event":"run_finished", …}` line closes the stream. Without `--approve-all` or
//! `--reject-all`, calls that need approval change nothing and the exit code is 3. With
//! `--agent agent-<n>` the session runs as that durable agent (`crate::engine::agent_session`).

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{exit, open_engine, out, Failure};
use crate::agent::{run_agent, Provider, ReplayProvider, RunOptions};
use crate::config::Dirs;
use crate::engine::{Approval, Decision, EngineEvent, Mode};

/// The profile of a run without `--profile` or `--agent`.
pub const DEFAULT_PROFILE: &str = "leader.default";

pub struct RunArgs {
    pub project: PathBuf,
    pub profile: String,
    /// `--agent`: run as this durable agent (its role's profile replaces `profile`).
    pub agent: Option<String>,
    pub message: String,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub script: Option<PathBuf>,
    pub mode: Mode,
    pub approve_all: bool,
    pub reject_all: bool,
    /// Do not print `text_delta`, `reasoning_delta` and `tool_call_progress` lines.
    pub quiet: bool,
    /// Keep calling the model after a refused or unapproved call.
    pub continue_after_refusal: bool,
}

/// Exit code after Ctrl+C, as shells report a SIGINT-terminated command.
pub const INTERRUPTED: u8 = 130;

fn provider_for(a: &RunArgs, dirs: &Dirs) -> Result<Arc<dyn Provider>, Failure> {
    let from_config = |model: Option<&str>| -> Result<Arc<dyn Provider>, Failure> {
        // The same config the engine loads: global, then the project's `.nbook/config.toml`.
        let config = crate::config::Config::load(dirs, Some(&a.project)).map_err(Failure::usage)?;
        let key = match model {
            Some(m) => m.to_string(),
            None => crate::agent::default_model_key(&config, &a.profile)
                .map(str::to_string)
                .ok_or_else(|| {
                    Failure::usage(format!(
                        "{}; or choose one for this run: --model NAME, or --provider replay --script FILE",
                        crate::config::no_model_message(&dirs.config_file(), &a.profile)
                    ))
                })?,
        };
        crate::agent::build_provider_for(&config, &key, &a.profile).map_err(Failure::usage)
    };
    match (a.provider.as_deref(), &a.script, &a.model) {
        (Some("replay"), Some(script), _) => Ok(Arc::new(ReplayProvider::from_file(script).map_err(Failure::usage)?)),
        (Some("replay"), None, _) => Err(Failure::usage("--provider replay needs --script FILE")),
        (Some(other), _, _) => Err(Failure::usage(format!(
            "--provider only takes 'replay' (got '{other}'); real providers are chosen through --model NAME and config.toml"
        ))),
        (None, Some(_), _) => Err(Failure::usage("--script needs --provider replay")),
        (None, None, Some(model)) => from_config(Some(model)),
        (None, None, None) => from_config(None),
    }
}

pub async fn run(mut a: RunArgs, dirs: Dirs) -> Result<u8, Failure> {
    // Open the engine first so config notes (project lines held until trusted, such as a
    // project-defined provider) are on stderr before a provider error that they explain.
    let engine = Arc::new(open_engine(&a.project, &dirs)?);
    // As a durable agent: its role's profile decides the model and the tools.
    if let Some(id) = &a.agent {
        let agent = engine.durable_agent(id).map_err(Failure::usage)?;
        a.profile = agent.role.profile().to_string();
    }
    let provider = provider_for(&a, &dirs)?;
    let mut events = engine.subscribe();
    let cancel = CancellationToken::new();
    // When the reader of stdout goes away (`| head`), nobody sees the run: stop it.
    let reader_gone = cancel.clone();
    let quiet = a.quiet;
    let printer = tokio::spawn(async move {
        while let Ok(ev) = events.recv().await {
            let progress = matches!(
                ev,
                EngineEvent::TextDelta { .. }
                    | EngineEvent::ReasoningDelta { .. }
                    | EngineEvent::ToolCallProgress { .. }
            );
            if quiet && progress {
                continue;
            }
            if let Ok(line) = serde_json::to_string(&ev) {
                if let Err(f) = out(crate::text::escape_json(&line)) {
                    reader_gone.cancel();
                    return Err(f);
                }
            }
        }
        Ok(())
    });
    let title: String = a.message.chars().take(60).collect();
    let session = match &a.agent {
        Some(id) => engine
            .create_agent_session(id, a.mode, &title)
            .map_err(Failure::usage)?,
        None => engine
            .create_session(&a.profile, a.mode, &title, None)
            .map_err(Failure::usage)?,
    };
    let approval = if a.approve_all {
        Approval::Auto {
            decision: Decision::Approve,
            by: "cli",
        }
    } else if a.reject_all {
        Approval::Auto {
            decision: Decision::Reject {
                reason: Some("rejected with --reject-all".into()),
            },
            by: "cli",
        }
    } else {
        Approval::FailWithRemedy(
            "Re-run nbook run with --approve-all or --reject-all, or open the project in nbook to approve it.",
        )
    };
    engine.set_headless(true);
    // Sub-agents the run invokes use the models in config.toml and the same approval rule.
    let host = crate::agent::host::Host::attach(
        engine.clone(),
        crate::agent::host::config_providers(engine.live_config().clone()),
        approval.clone(),
    );
    let ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            ctrl_c.cancel();
        }
    });
    let mut opts = RunOptions::new(approval, cancel);
    opts.stop_after_refusal = !a.continue_after_refusal;
    opts.context_window = provider.context_window();
    let outcome = run_agent(
        engine.clone(),
        session.id.clone(),
        provider,
        a.message.clone(),
        opts,
    )
    .await
    .map_err(Failure::tool)?;
    // Let the printer drain what the run emitted, then stop it.
    tokio::task::yield_now().await;
    drop(host);
    drop(engine);
    if let Ok(Ok(Err(f))) =
        tokio::time::timeout(std::time::Duration::from_millis(500), printer).await
    {
        return Err(f);
    }
    let summary =
        serde_json::json!({"event": "run_finished", "session_id": session.id, "outcome": outcome});
    out(crate::text::escape_json(&summary.to_string()))?;
    Ok(exit_code(&outcome))
}

/// `nbook call`'s contract applied to a run: an interrupted run is 130 whatever else
/// happened; a call that needed an approval nobody gave is 3 even when a later turn failed
/// (the author must know something was not done); a model or tool failure is 1.
pub fn exit_code(outcome: &crate::agent::RunOutcome) -> u8 {
    if outcome.cancelled {
        INTERRUPTED
    } else if outcome.needed_approval > 0 {
        exit::NEEDS_APPROVAL
    } else if outcome.error.is_some() {
        exit::TOOL_ERROR
    } else {
        exit::OK
    }
}
