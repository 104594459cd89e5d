//! `nbook agent wake ID | runs ID`: durable agents' heartbeat runs, headless
//! (`crate::runner::heartbeat`). `wake` is the author's manual wake: one bounded run of the
//! agent with the models of config.toml, its events printed as JSON lines like `nbook run`
//! (the engine's events of the run's session, the heartbeat's `run_started` / `run_ended`),
//! then `{"event":"run_finished", "run": …}`. Without `--approve-all` / `--reject-all` a call
//! that needs the author is not run and the exit code is 3. A run that fails or times out
//! exits 1; an unknown agent id is a usage error (2) naming how to list the agents. `runs`
//! lists the agent's recorded runs, newest first.
//!
//! `wake` does not need the project's scheduler lock: it is one run the author asked for, not
//! a timer, so it works while an nbook with the project open runs the heartbeats.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use super::{exit, open_engine, out, Failure};
use crate::agent::host::{config_providers, Host};
use crate::board::agent_runs::{self, AgentRun};
use crate::board::{agents, Board};
use crate::config::Dirs;
use crate::engine::{Approval, Decision, EngineEvent};
use crate::runner::heartbeat::{HeartbeatEvent, Heartbeats, WakeError, Woken};
use crate::text::escape_for_terminal as esc;

#[derive(clap::Subcommand, Debug)]
pub enum AgentCommand {
    /// Wake a durable agent now: one bounded heartbeat run; its events as JSON lines
    Wake {
        /// The agent's id (agent-<n>; `nbook call fn_list_agents` lists them)
        id: String,
        /// The project (default: the one containing the current folder)
        #[arg(long)]
        project: Option<std::path::PathBuf>,
        #[arg(long, conflicts_with = "reject_all")]
        approve_all: bool,
        #[arg(long)]
        reject_all: bool,
    },
    /// The agent's heartbeat runs, newest first: reason, session, status, summary
    Runs {
        id: String,
        #[arg(long)]
        project: Option<std::path::PathBuf>,
        /// Most runs shown
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
}

pub async fn agent(cmd: AgentCommand, dirs: Dirs) -> Result<u8, Failure> {
    match cmd {
        AgentCommand::Wake {
            id,
            project,
            approve_all,
            reject_all,
        } => {
            wake(
                &super::project_path(project),
                &id,
                approval(approve_all, reject_all),
                &dirs,
            )
            .await
        }
        AgentCommand::Runs {
            id,
            project,
            limit,
            json,
        } => runs(&super::project_path(project), &id, limit, json, &dirs),
    }
}

fn approval(approve_all: bool, reject_all: bool) -> Approval {
    if approve_all {
        Approval::Auto {
            decision: Decision::Approve,
            by: "cli",
        }
    } else if reject_all {
        Approval::Auto {
            decision: Decision::Reject {
                reason: Some("rejected with --reject-all".into()),
            },
            by: "cli",
        }
    } else {
        Approval::FailWithRemedy(
            "Re-run nbook agent wake with --approve-all or --reject-all, or open the project in nbook to approve it.",
        )
    }
}

fn unknown(id: &str) -> Failure {
    Failure::usage(WakeError::UnknownAgent { id: id.to_string() })
}

fn print(v: &Value) -> Result<(), Failure> {
    out(crate::text::escape_json(&v.to_string()))
}

async fn wake(project: &Path, id: &str, approval: Approval, dirs: &Dirs) -> Result<u8, Failure> {
    let engine = Arc::new(open_engine(project, dirs)?);
    let board = Board::new(engine.workspace().root(), engine.workspace().name());
    if board
        .read(|c| agents::load(c, id))
        .map_err(Failure::tool)?
        .is_none()
    {
        return Err(unknown(id));
    }
    engine.set_headless(true);
    let host = Host::attach(
        engine.clone(),
        config_providers(engine.live_config().clone()),
        approval,
    );
    let hb = Heartbeats::new(engine.clone(), host.clone());
    let mut hb_events = hb.subscribe();
    let mut engine_events = engine.subscribe();
    let woken = {
        let (hb, id) = (hb.clone(), id.to_string());
        tokio::task::spawn_blocking(move || hb.wake(&id))
            .await
            .map_err(|e| Failure::tool(format!("the wake failed: {e}")))?
    };
    let (run_id, sid) = match woken {
        Ok(Woken::Started { run_id, session_id }) => (run_id, session_id),
        // A fresh scheduler has no run going: it cannot be full.
        Ok(Woken::Coalesced) => return Err(Failure::tool("the agent's runs are full")),
        Err(e @ WakeError::UnknownAgent { .. }) => return Err(Failure::usage(e)),
        Err(e) => return Err(Failure::tool(e)),
    };
    let interrupted = tokio_util::sync::CancellationToken::new();
    {
        let (i, hb) = (interrupted.clone(), hb.clone());
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                i.cancel();
                hb.stop();
            }
        });
    }
    let mut needed_approval = false;
    let status = loop {
        tokio::select! {
            biased;
            ev = engine_events.recv() => match ev {
                Ok(ev) => {
                    if event_session(&ev).is_some_and(|s| s == sid) {
                        if let Ok(v) = serde_json::to_value(&ev) {
                            print(&v)?;
                        }
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => {}
            },
            ev = hb_events.recv() => match ev {
                Ok(e) => {
                    let ended = match &e {
                        HeartbeatEvent::RunEnded { run_id: r, status, turn_status, .. } if *r == run_id => {
                            needed_approval = turn_status.as_deref() == Some("waiting");
                            Some(status.clone())
                        }
                        _ => None,
                    };
                    print(&serde_json::to_value(&e).unwrap_or(Value::Null))?;
                    if let Some(s) = ended {
                        break s;
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => break agent_runs::FAILED.to_string(),
            },
        }
    };
    let run = board
        .read(|c| agent_runs::of_agent(c, id, 50))
        .ok()
        .and_then(|v| v.into_iter().find(|r| r.id == run_id));
    print(&json!({"event": "run_finished", "sessionId": sid, "run": run}))?;
    Ok(if interrupted.is_cancelled() {
        super::run::INTERRUPTED
    } else if needed_approval {
        exit::NEEDS_APPROVAL
    } else if status == agent_runs::DONE {
        exit::OK
    } else {
        exit::TOOL_ERROR
    })
}

/// The session an engine event belongs to, if it names one.
fn event_session(ev: &EngineEvent) -> Option<String> {
    let v = serde_json::to_value(ev).ok()?;
    v.get("session_id")
        .or_else(|| v.get("sessionId"))
        .or_else(|| v.get("call").and_then(|c| c.get("session_id")))
        .or_else(|| v.get("session").and_then(|c| c.get("id")))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn runs(
    project: &Path,
    id: &str,
    limit: usize,
    json_mode: bool,
    dirs: &Dirs,
) -> Result<u8, Failure> {
    let engine = open_engine(project, dirs)?;
    let board = Board::new(engine.workspace().root(), engine.workspace().name());
    let (agent, list) = board
        .read(|c| Ok((agents::load(c, id)?, agent_runs::of_agent(c, id, limit)?)))
        .map_err(Failure::tool)?;
    let Some(agent) = agent else {
        return Err(unknown(id));
    };
    if json_mode {
        print(&json!({"agent": agent.id, "name": agent.name, "runs": list}))?;
        return Ok(exit::OK);
    }
    if list.is_empty() {
        out(esc(&format!(
            "{} ({}) has no heartbeat runs yet.",
            agent.id, agent.name
        )))?;
    }
    for r in &list {
        out(esc(&human(r)))?;
    }
    Ok(exit::OK)
}

fn human(r: &AgentRun) -> String {
    format!(
        "run {} · {} · {} · {} · session {}{}",
        r.id,
        r.started_at,
        r.reason,
        r.status,
        r.session_id.as_deref().unwrap_or("-"),
        r.summary
            .as_deref()
            .map(|s| format!(" · {}", crate::board::snippet(s, 160)))
            .unwrap_or_default()
    )
}
