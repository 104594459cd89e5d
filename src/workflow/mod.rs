//! Workflows: deterministic JavaScript that orchestrates agents (NeuroBook notes §2.8, §8).
//!
//! A workflow is `assets/workflows/<key>/workflow.js` (built in) or the project's
//! `.nbook/workflows/<key>/workflow.js` (which overrides the built-in of the same key). The file
//! evaluates to `{title, description, whenToUse, argsHint?, phases?, run(wf, args)}`, either as a
//! script whose last expression is that object (`({ … })`) or as `export default { … }`. An
//! inline script (`run_workflow.script`) is the body of `async (wf, args) => { … }`.
//!
//! **Sandbox.** The same QuickJS as `execute_world` ([`crate::js`]): a 64 MiB heap, no
//! file, network or process access except through `wf`, and an interrupt handler that stops
//! running bytecode as soon as the job is cancelled or a limit trips. The limits
//! ([`limits`], config `[workflows]`): a wall clock for the whole run (default 60 min, not
//! counting time waiting for the author), at most `script_slice_ms` (default 5 s) of
//! JavaScript — bytecode and promise jobs — without yielding to wait for an agent, and at most
//! `max_host_calls` (default 20 000) calls into `wf`. A run that hits one fails with a message
//! naming the key. `Date.now()`, `new Date()`, `Date()` and `Math.random()` throw: the same
//! arguments must give the same run.
//!
//! **Concurrency.** QuickJS is single-threaded, so the script runs on one thread (the run's own,
//! 16 MiB stack) and everything slow happens elsewhere. `wf.agents.invoke` is truly
//! asynchronous: it hands the request to a new thread (at most [`host::MAX_PARALLEL`] per run,
//! more queue) and returns a promise. The runner's event loop executes pending JavaScript jobs
//! and, when none are left, blocks on the channel the invocation threads report to, settling
//! each ticket's promise as its invocation ends. `wf.map(items, fn, {concurrency})` is a pool of
//! `concurrency` JavaScript workers over the items, so with `fn` awaiting an invocation,
//! `concurrency` agents work at once; `Promise.all` over invocations works the same way. This
//! keeps the workflow code ordinary `async`/`await` (as in NeuroBook) instead of a batch API.
//! Everything else is synchronous on the Rust side; `wf.ask` blocks the script (not the
//! invocations already running) until the author answers in the Approvals pane.
//!
//! **Jobs.** Every run is a job (`JobKind::Workflow`, one durable JSON file): `wait: false`
//! runs in the background, owned by the calling session (the agent host delivers the result to
//! it when the job ends); `wait: true` runs while the caller waits and has no owner (so nothing
//! is delivered twice), and a `wf.ask` then cancels the run with an error (nobody could answer
//! it). The job moves running ⇄ waiting (while asking) → completed | failed | cancelled; its
//! `detail` holds the run id, the sessions created, the questions asked and the log. Cancelling
//! the job stops the script at its next bytecode, withdraws its question, and cancels every
//! session it has in flight (`AgentHost::cancel_session`); the job stays `cancelled`. Runs are
//! not journaled: a run cut short by the program stopping is `interrupted`, never resumed.

mod ask;
pub mod call_error;
pub mod catalogue;
pub mod host;
pub mod limits;
pub mod runner;
pub mod sandbox;

use std::sync::Arc;

use serde_json::{json, Value};

use crate::config::Config;
use crate::engine::jobs::{JobError, JobKind, JobStart};
use crate::engine::services::ToolServices;
pub use catalogue::{Catalogue, Source, Workflow};
pub use runner::{Code, RunReport};
pub use sandbox::{ArgHint, DefinitionError, Meta, Phase};

/// Why a workflow could not be chosen or started. Each names the workflow (or model) and says
/// what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    #[error("model '{name}' is not configured; use one of: {} (list_workflows lists them), or leave model out to use each profile's default", known_list(.known))]
    UnknownModel { name: String, known: Vec<String> },
    #[error("give either workflowKey or script, not both")]
    KeyAndScript,
    #[error("give workflowKey (list_workflows shows the keys) or an inline script")]
    NothingToRun,
    #[error("the inline script is empty; write the body of async (wf, args) => {{ … }} and return the result")]
    EmptyScript,
    #[error("no workflow '{key}'; the workflows are: {} (list_workflows describes them)", .available.join(", "))]
    NotFound { key: String, available: Vec<String> },
    #[error(
        "workflow '{key}' ({path}) cannot run: {reason}. Fix the file, or run another workflow"
    )]
    Broken {
        key: String,
        path: String,
        #[source]
        reason: DefinitionError,
    },
    #[error("cannot record the workflow job: {0}")]
    Job(#[from] JobError),
    #[error("cannot start the workflow thread: {0}")]
    Thread(#[source] std::io::Error),
    #[error("the workflow runner crashed; the run was abandoned")]
    Crashed,
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "(none configured)".to_string()
    } else {
        known.join(", ")
    }
}

/// Check a model name against config.toml: it must be a key of `[models]` (what the agent
/// host accepts for an invocation).
pub fn check_model(config: &Config, name: &str) -> Result<(), WorkflowError> {
    if config.models.contains_key(name) {
        return Ok(());
    }
    Err(WorkflowError::UnknownModel {
        name: name.to_string(),
        known: config.models.keys().cloned().collect(),
    })
}

/// The workflow a `run_workflow` call names.
#[derive(Clone, Debug)]
pub struct Selected {
    /// The catalogue key, or `inline` for a script.
    pub key: String,
    /// builtin | project | inline
    pub source: &'static str,
    pub title: String,
    /// Where the file is (None for inline scripts).
    pub path: Option<String>,
    pub code: Code,
    pub meta: Option<Meta>,
}

impl Selected {
    /// The source text (the file, or the inline script).
    pub fn text(&self) -> &str {
        match &self.code {
            Code::Definition { code, .. } => code,
            Code::Inline(s) => s,
        }
    }

    /// `args` with the defaults of `argsHint` filled in where a key is missing.
    pub fn effective_args(&self, args: &Value) -> Value {
        let mut out = args.as_object().cloned().unwrap_or_default();
        if let Some(meta) = &self.meta {
            for h in &meta.args_hint {
                if let Some(d) = &h.default_value {
                    out.entry(h.name.clone()).or_insert_with(|| d.clone());
                }
            }
        }
        Value::Object(out)
    }
}

/// Find the workflow to run: exactly one of a catalogue key or an inline script.
pub fn select(
    project_root: &std::path::Path,
    key: Option<&str>,
    script: Option<&str>,
) -> Result<Selected, WorkflowError> {
    match (key, script) {
        (Some(_), Some(_)) => Err(WorkflowError::KeyAndScript),
        (None, None) => Err(WorkflowError::NothingToRun),
        (None, Some(s)) => {
            if s.trim().is_empty() {
                return Err(WorkflowError::EmptyScript);
            }
            Ok(Selected {
                key: "inline".into(),
                source: "inline",
                title: "Inline script".into(),
                path: None,
                code: Code::Inline(s.to_string()),
                meta: None,
            })
        }
        (Some(k), None) => {
            let Some(w) = Catalogue::find(project_root, k) else {
                return Err(WorkflowError::NotFound {
                    key: k.to_string(),
                    available: Catalogue::list_keys(project_root),
                });
            };
            let meta = w.meta.clone().map_err(|reason| WorkflowError::Broken {
                key: k.to_string(),
                path: w.path.clone(),
                reason,
            })?;
            Ok(Selected {
                key: w.key.clone(),
                source: w.source.as_str(),
                title: meta.title.clone(),
                path: Some(w.path.clone()),
                code: Code::Definition {
                    code: w.code.clone(),
                    file: w.path.clone(),
                },
                meta: Some(meta),
            })
        }
    }
}

/// A run to start.
#[derive(Clone, Debug)]
pub struct Launch {
    pub workflow: Selected,
    pub args: Value,
    pub model: Option<String>,
    pub wait: bool,
    /// The session that called run_workflow (owner of a background job).
    pub caller_session: String,
    pub origin_call_id: String,
    /// The calling tool call's token: with `wait`, cancelling the caller's turn cancels the run.
    pub caller_cancel: Option<tokio_util::sync::CancellationToken>,
}

#[derive(Clone, Debug)]
pub enum Launched {
    /// Running in the background as this job.
    Started { job_id: String, run_id: String },
    /// `wait: true`: the run is over.
    Finished(Box<RunReport>),
}

/// `run-<n>` for `job-<n>`: a run and its job share a number, so ids are never reused.
pub fn run_id_for(job_id: &str) -> String {
    match job_id.strip_prefix("job-") {
        Some(n) => format!("run-{n}"),
        None => format!("run-{job_id}"),
    }
}

/// Record the job and start the run on its own thread; with `wait`, block until it ends.
pub fn launch(engine: &Arc<dyn ToolServices>, l: Launch) -> Result<Launched, WorkflowError> {
    let args = l.workflow.effective_args(&l.args);
    let mut preview = format!("{} {}", l.workflow.key, args);
    if preview.chars().count() > 200 {
        preview = preview.chars().take(199).collect::<String>() + "…";
    }
    let (job_id, job_token) = engine.jobs().start(JobStart {
        kind: JobKind::Workflow,
        title: format!("Workflow {}: {}", l.workflow.key, l.workflow.title),
        owner_session_id: (!l.wait).then(|| l.caller_session.clone()),
        origin_tool_call_id: Some(l.origin_call_id.clone()),
        reference: json!({
            "workflowKey": l.workflow.key,
            "source": l.workflow.source,
            "callerSessionId": l.caller_session,
            "wait": l.wait,
        }),
        preview: Some(preview),
    })?;
    if let (true, Some(caller)) = (l.wait, l.caller_cancel.clone()) {
        // The caller blocks on this run: if its turn is cancelled, so is the run. (The token
        // also fires when the call returns normally; the job is finished by then.)
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let job = job_token.clone();
            rt.spawn(async move {
                caller.cancelled().await;
                job.cancel();
            });
        }
    }
    let run_id = run_id_for(&job_id);
    let rc = host::RunCtx {
        services: engine.clone(),
        job_id: job_id.clone(),
        run_id: run_id.clone(),
        workflow_key: l.workflow.key.clone(),
        workflow_title: l.workflow.title.clone(),
        caller_session: l.caller_session.clone(),
        origin_call_id: l.origin_call_id.clone(),
        model: l.model.clone(),
        wait: l.wait,
        stop: job_token.child_token(),
        job_token,
    };
    let code = l.workflow.code.clone();
    let jobs = engine.jobs().clone();
    let jid = job_id.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("workflow-{job_id}"))
        .stack_size(16 << 20)
        .spawn(move || {
            let report = runner::run(rc, &code, &args);
            let outcome = match report.status.as_str() {
                "completed" => Ok(serde_json::to_value(&report).unwrap_or(Value::Null)),
                _ => Err(report
                    .error
                    .clone()
                    .unwrap_or_else(|| report.status.clone())),
            };
            if let Err(e) = jobs.finish(&jid, outcome) {
                tracing::warn!("workflow {jid}: {e}");
            }
            report
        });
    let handle = match spawned {
        Ok(h) => h,
        Err(e) => {
            let err = WorkflowError::Thread(e);
            let _ = engine.jobs().finish(&job_id, Err::<Value, _>(&err));
            return Err(err);
        }
    };
    if !l.wait {
        return Ok(Launched::Started { job_id, run_id });
    }
    match handle.join() {
        Ok(report) => Ok(Launched::Finished(Box::new(report))),
        Err(_) => {
            let err = WorkflowError::Crashed;
            let _ = engine.jobs().finish(&job_id, Err::<Value, _>(&err));
            Err(err)
        }
    }
}
