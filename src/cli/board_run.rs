//! `nbook board run [--once] [--json]`: the board's scheduler (`crate::runner`) without the
//! TUI. Role sessions run on the agent host with the models of config.toml, under the
//! project's approval preset; a call that needs the author waits in this process's queue
//! (nobody can answer it here).
//!
//! - `--once`: schedule until nothing more can happen without the author — no task session
//!   runs except those waiting for the author, and a look at the board starts nothing — then
//!   print what waits and exit: 0 when nothing waits, 3 when calls wait for approval. The
//!   waiting calls stay in the queue on disk (`engine::pending_store`): the next `nbook` (or
//!   `board run`) shows them in Approvals, approving one resumes its session, and the
//!   scheduler starts no second session for that stage while the call waits.
//! - without `--once`: schedule until Ctrl+C; waiting calls stay waiting and hold their
//!   slots, other tasks go on in the free ones. Ctrl+C cancels the running sessions (exit 130).
//!
//! - Heartbeat agents (`crate::runner::heartbeat`) wake while it runs without `--once`, when
//!   this process holds the project's scheduler lock; else stderr says which nbook (pid) runs
//!   them. Their `run_started` / `run_ended` / `coalesced` events are printed too.
//!
//! Output: one line per scheduler event (`session_started`, `task_moved`, `session_ended`,
//! `steered`, `problem`) and per call that starts waiting (`approval_waiting`), then
//! `run_finished` with the waiting calls and the board; `--json` prints each as a JSON object.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::{exit, open_engine, out, Failure};
use crate::agent::host::{config_providers, Host};
use crate::board::{tasks, Board};
use crate::config::Dirs;
use crate::engine::{Approval, Engine, EngineEvent, PendingCall};
use crate::runner::heartbeat::{HeartbeatEvent, Heartbeats};
use crate::runner::{Runner, RunnerEvent};
use crate::text::escape_for_terminal as esc;

fn line(json_mode: bool, v: &Value, human: String) -> Result<(), Failure> {
    if json_mode {
        out(crate::text::escape_json(&v.to_string()))
    } else {
        out(esc(&human))
    }
}

fn human(e: &RunnerEvent) -> String {
    match e {
        RunnerEvent::SessionStarted {
            task,
            role,
            session_id,
        } => format!("{task}: {} session {session_id} started", role.profile()),
        RunnerEvent::SessionEnded {
            task,
            role,
            session_id,
            status,
            error,
        } => format!(
            "{task}: {} session {session_id} ended ({status}){}",
            role.profile(),
            error.as_ref().map(|e| format!(": {e}")).unwrap_or_default()
        ),
        RunnerEvent::TaskMoved {
            task,
            column,
            status,
            message,
        } => format!(
            "{task} → {column}{}: {}",
            if status.is_empty() {
                String::new()
            } else {
                format!(" [{status}]")
            },
            message.lines().next().unwrap_or_default()
        ),
        RunnerEvent::Steered {
            task,
            session_id,
            comments,
            live,
        } => format!(
            "{task}: {comments} steering comment(s) delivered to session {session_id}{}",
            if *live { " (live)" } else { " (first message)" }
        ),
        RunnerEvent::Problem { task, message } => format!("{task}: {message}"),
        RunnerEvent::Scheduler { enabled } => {
            format!("scheduler {}", if *enabled { "started" } else { "stopped" })
        }
    }
}

fn heartbeat_human(e: &HeartbeatEvent) -> String {
    match e {
        HeartbeatEvent::RunStarted {
            agent,
            run_id,
            reason,
            session_id,
        } => format!(
            "{agent}: heartbeat run {run_id} started ({}) in session {session_id}",
            reason.as_str()
        ),
        HeartbeatEvent::RunEnded {
            agent,
            run_id,
            status,
            summary,
            ..
        } => format!(
            "{agent}: heartbeat run {run_id} ended ({status}){}",
            summary
                .as_ref()
                .map(|s| format!(": {}", crate::board::snippet(s, 160)))
                .unwrap_or_default()
        ),
        HeartbeatEvent::Coalesced { agent, reason } => format!(
            "{agent}: a {} wake waits for its running heartbeat run to end (maxConcurrentRuns)",
            reason.as_str()
        ),
        HeartbeatEvent::Problem { agent, message } => format!("{agent}: {message}"),
    }
}

fn waiting_value(engine: &Engine, c: &PendingCall) -> Value {
    json!({
        "task": engine.session_task(&c.session_id),
        "sessionId": c.session_id,
        "role": c.profile,
        "tool": c.tool,
        "approvalId": c.approval_id,
        "summary": c.preview.summary,
    })
}

fn waiting_human(engine: &Engine, c: &PendingCall) -> String {
    format!(
        "{}: {} session {} waits for your approval of {} (approval {}): {}",
        engine.session_task(&c.session_id).unwrap_or_default(),
        c.profile,
        c.session_id,
        c.tool,
        c.approval_id,
        c.preview.summary
    )
}

/// The calls of task sessions waiting for the author.
fn waiting_calls(engine: &Engine) -> Vec<PendingCall> {
    engine
        .pending()
        .into_iter()
        .filter(|c| engine.session_task(&c.session_id).is_some())
        .collect()
}

pub async fn run(project: &Path, once: bool, json_mode: bool, dirs: &Dirs) -> Result<u8, Failure> {
    let engine = Arc::new(open_engine(project, dirs)?);
    engine.set_headless(true);
    let host = Host::attach(
        engine.clone(),
        config_providers(engine.live_config().clone()),
        Approval::Queue,
    );
    let runner = Runner::new(engine.clone(), host.clone());
    // Heartbeats: only in the process holding the scheduler lock (kept until the end).
    let (_scheduler_lock, heartbeats) = if once {
        (None, None)
    } else {
        match crate::runner::scheduler_lock::SchedulerLock::acquire(engine.workspace().root()) {
            Ok(l) => (Some(l), Some(Heartbeats::new(engine.clone(), host.clone()))),
            Err(e) => {
                super::note(format!("nbook: {e}"));
                (None, None)
            }
        }
    };
    let stop = CancellationToken::new();
    let interrupted = CancellationToken::new();
    {
        let (stop, interrupted) = (stop.clone(), interrupted.clone());
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                interrupted.cancel();
                stop.cancel();
            }
        });
    }
    // The printer: the scheduler's events and the calls that start waiting, in order.
    let mut events = runner.subscribe();
    let mut hb_events = heartbeats.as_ref().map(|h| h.subscribe());
    let mut engine_events = engine.subscribe();
    let printer_stop = CancellationToken::new();
    let printer = {
        let (engine, ps, stop) = (engine.clone(), printer_stop.clone(), stop.clone());
        tokio::spawn(async move {
            let print = |v: Value, h: String| -> bool {
                match line(json_mode, &v, h) {
                    Ok(()) => true,
                    Err(_) => {
                        // Nobody reads stdout any more: stop.
                        stop.cancel();
                        false
                    }
                }
            };
            loop {
                tokio::select! {
                    biased;
                    ev = events.recv() => match ev {
                        Ok(e) => {
                            let v = serde_json::to_value(&e).unwrap_or(Value::Null);
                            if !print(v, human(&e)) { break; }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(_) => break,
                    },
                    Some(ev) = async { match hb_events.as_mut() { Some(r) => Some(r.recv().await), None => None } } => match ev {
                        Ok(e) => {
                            let v = serde_json::to_value(&e).unwrap_or(Value::Null);
                            if !print(v, heartbeat_human(&e)) { break; }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(_) => { hb_events = None; }
                    },
                    ev = engine_events.recv() => match ev {
                        Ok(EngineEvent::ApprovalRequested { call }) if engine.session_task(&call.session_id).is_some() => {
                            let mut v = waiting_value(&engine, &call);
                            v["event"] = json!("approval_waiting");
                            if !print(v, waiting_human(&engine, &call)) { break; }
                        }
                        Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(_) => break,
                    },
                    _ = ps.cancelled() => break,
                }
            }
        })
    };
    if once {
        runner.run_until_quiet(&stop).await;
    } else {
        let handle = runner.spawn(stop.clone());
        let hb = heartbeats.as_ref().map(|h| h.spawn(stop.clone()));
        stop.cancelled().await;
        let _ = handle.await;
        if let Some(h) = hb {
            let _ = h.await;
        }
    }
    // Let the printer catch up with what happened before the end.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    printer_stop.cancel();
    let _ = printer.await;
    let waiting = waiting_calls(&engine);
    let was_interrupted = interrupted.is_cancelled();
    if was_interrupted {
        for s in runner.task_sessions() {
            host.cancel(&s.session_id);
        }
    }
    let board = Board::new(engine.workspace().root(), engine.workspace().name());
    let summaries: Vec<Value> = board
        .read(|c| tasks::all(c, None))
        .map(|all| {
            all.iter()
                .map(|t| serde_json::to_value(t.summary_line()).unwrap_or(Value::Null))
                .collect()
        })
        .map_err(Failure::tool)?;
    let reason = if was_interrupted {
        "interrupted"
    } else if !waiting.is_empty() {
        "waiting_for_author"
    } else {
        "idle"
    };
    let summary = json!({
        "event": "run_finished",
        "reason": reason,
        "limit": runner.limit(),
        "waiting": waiting.iter().map(|c| waiting_value(&engine, c)).collect::<Vec<_>>(),
        "tasks": summaries,
    });
    let text = match reason {
        "interrupted" => "Interrupted: the running sessions were cancelled.".to_string(),
        "waiting_for_author" => format!(
            "Nothing more can happen without you: {} call(s) wait for approval. Open the project in nbook: its scheduler starts those stages again and the calls wait in the Approvals queue there.",
            waiting.len()
        ),
        _ => "Nothing to do: no task can move on (see `nbook board list`).".to_string(),
    };
    line(json_mode, &summary, text)?;
    Ok(match reason {
        "interrupted" => super::run::INTERRUPTED,
        "waiting_for_author" => exit::NEEDS_APPROVAL,
        _ => exit::OK,
    })
}
