//! The Rust side of the `wf` API. Lives on the script's thread (QuickJS is single-threaded);
//! every `host(op, json)` call from the prelude lands in [`Host::call`].
//!
//! Agent invocations are the one asynchronous operation: `agents.invoke` returns a ticket at
//! once and runs the invocation on a thread of its own (at most [`MAX_PARALLEL`] per run, the
//! rest queue), and the runner settles the ticket's promise when the thread reports back. So
//! `wf.map(items, fn, {concurrency: 3})` really has three agents working at once while the
//! script waits. Everything else is synchronous: `ask` blocks this thread until the author
//! answers (the invocations already running keep running).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::ask::AskSpec;
use super::call_error::{CallError, InvocationError};
use super::limits::Wall;
use crate::engine::agents::{InvokeMode, InvokeOutcome, InvokeRequest};
use crate::engine::inputs::{InputError, InputSource};
use crate::engine::jobs::JobProgress;
use crate::engine::services::ToolServices;
use crate::engine::session_log::now_rfc3339;
use crate::workspace::Access;

/// Agent invocations one run may have in flight; more wait their turn.
pub const MAX_PARALLEL: usize = 8;
/// Largest file `wf.workspace.read` returns.
pub const READ_LIMIT: usize = 1 << 20;
/// Log lines kept in the job file (the oldest are dropped first).
pub const LOG_LIMIT: usize = 500;

/// An ended invocation: its ticket and the JSON the promise resolves with, or the error it
/// rejects with.
pub type Completion = (u64, Result<Value, InvocationError>);

/// What the script's thread shares with the invocation threads and the cancel watcher.
pub struct Shared {
    /// Ticket → session of each invocation in flight.
    pub inflight: Mutex<BTreeMap<u64, String>>,
    /// The id of the question the script is waiting on, if any.
    pub current_ask: Mutex<Option<String>>,
    /// The run's wall clock (the watcher stops the run when it passes).
    pub wall: Wall,
}

impl Shared {
    pub fn new(wall: Wall) -> Shared {
        Shared {
            inflight: Mutex::default(),
            current_ask: Mutex::default(),
            wall,
        }
    }

    pub fn inflight_sessions(&self) -> Vec<(u64, String)> {
        self.inflight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(t, s)| (*t, s.clone()))
            .collect()
    }
    pub fn current_ask(&self) -> Option<String> {
        self.current_ask
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
    fn set_ask(&self, id: Option<String>) {
        *self.current_ask.lock().unwrap_or_else(|e| e.into_inner()) = id;
    }
    fn set_inflight(&self, ticket: u64, session: Option<String>) {
        let mut m = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
        match session {
            Some(s) => m.insert(ticket, s),
            None => m.remove(&ticket),
        };
    }
}

/// Who runs the workflow and for whom (fixed for the run).
#[derive(Clone)]
pub struct RunCtx {
    /// What the engine offers the run (sessions, the agent host, questions, jobs).
    pub services: Arc<dyn ToolServices>,
    pub job_id: String,
    pub run_id: String,
    pub workflow_key: String,
    pub workflow_title: String,
    /// The session that called run_workflow.
    pub caller_session: String,
    pub origin_call_id: String,
    /// The run-wide model (`run_workflow.model`).
    pub model: Option<String>,
    /// `wait: true`: nobody can answer a question, so `wf.ask` cancels the run.
    pub wait: bool,
    /// The job's token: cancelled by cancel_job (or by a question in wait mode).
    pub job_token: CancellationToken,
    /// Cancelled when the run must stop (the job's token) or has ended (strays).
    pub stop: CancellationToken,
}

/// A session the run created.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSession {
    pub session_id: String,
    pub profile_key: String,
    pub title: String,
}

pub struct Host {
    pub rc: RunCtx,
    pub shared: Arc<Shared>,
    tx: mpsc::Sender<Completion>,
    next_ticket: u64,
    running: usize,
    queued: VecDeque<(u64, InvokeRequest)>,
    pub sessions: Vec<RunSession>,
    session_models: HashMap<String, String>,
    log: VecDeque<Value>,
    log_dropped: usize,
    asks: Vec<Value>,
    /// Questions a wait-mode run hit (reported as `pendingAsks`).
    pub pending_asks: Vec<Value>,
    /// Set when a question cancelled a wait-mode run: the error to report.
    pub wait_ask_error: Option<String>,
    invocations: u64,
}

impl Host {
    pub fn new(rc: RunCtx, shared: Arc<Shared>, tx: mpsc::Sender<Completion>) -> Host {
        Host {
            rc,
            shared,
            tx,
            next_ticket: 0,
            running: 0,
            queued: VecDeque::new(),
            sessions: Vec::new(),
            session_models: HashMap::new(),
            log: VecDeque::new(),
            log_dropped: 0,
            asks: Vec::new(),
            pending_asks: Vec::new(),
            wait_ask_error: None,
            invocations: 0,
        }
    }

    /// Invocations started or queued and not yet reported back.
    pub fn outstanding(&self) -> usize {
        self.running + self.queued.len()
    }

    /// One call from the script. `Err` becomes a JavaScript `Error` with that message.
    pub fn call(&mut self, op: &str, args: &str) -> Result<String, CallError> {
        let args: Value = serde_json::from_str(args).map_err(|source| CallError::BadArguments {
            op: op.to_string(),
            source,
        })?;
        let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
        let out = match op {
            "agents.create" => self.create(&arg(0), &arg(1))?,
            "agents.invoke" => self.invoke(&arg(0), &arg(1))?,
            "workspace.read" => self.read(&arg(0))?,
            "ask" => self.ask(&arg(0))?,
            "log" => {
                self.log(arg(0).as_str().unwrap_or_default());
                Value::Null
            }
            "progress" => self.progress(&arg(0))?,
            other => return Err(CallError::UnknownOperation(other.to_string())),
        };
        Ok(if out.is_null() {
            String::new()
        } else {
            out.to_string()
        })
    }

    fn check_stopped(&self) -> Result<(), CallError> {
        if self.rc.stop.is_cancelled() {
            Err(CallError::Cancelled)
        } else {
            Ok(())
        }
    }

    fn create(&mut self, profile: &Value, opts: &Value) -> Result<Value, CallError> {
        self.check_stopped()?;
        let Some(profile_key) = profile.as_str().filter(|s| !s.is_empty()) else {
            return Err(CallError::Usage("wf.agents.create(profileKey, {initial, title, model}): profileKey must be a profile key such as \"writer\""));
        };
        let opts = object_opts(opts, "wf.agents.create", &["initial", "title", "model"])?;
        let initial = match opts.get("initial") {
            None | Some(Value::Null) => json!({}),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => {
                return Err(CallError::Usage(
                    "wf.agents.create: initial must be an object",
                ))
            }
        };
        let title = match opts.get("title") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(CallError::Usage("wf.agents.create: title must be a string")),
        };
        let model = optional_string(opts.get("model"), "wf.agents.create: model")?;
        if let Some(m) = &model {
            super::check_model(&self.rc.services.config(), m)?;
        }
        let title = title.unwrap_or_else(|| {
            let name = self
                .rc
                .services
                .profiles()
                .get(profile_key)
                .map(|p| p.name.clone())
                .unwrap_or_else(|| profile_key.to_string());
            format!("{} · {name}", self.rc.workflow_title)
        });
        // A workflow is a system caller: its sessions are not linked to the caller's ledger.
        let info = self
            .rc
            .services
            .create_agent(None, profile_key, initial, Some(&title))
            .map_err(CallError::Create)?;
        if let Some(m) = model {
            self.session_models.insert(info.id.clone(), m);
        }
        self.sessions.push(RunSession {
            session_id: info.id.clone(),
            profile_key: profile_key.to_string(),
            title: info.title.clone(),
        });
        self.log(&format!(
            "created session {} ({profile_key}): {}",
            info.id, info.title
        ));
        Ok(Value::String(info.id))
    }

    fn invoke(&mut self, session: &Value, opts: &Value) -> Result<Value, CallError> {
        self.check_stopped()?;
        let Some(session_id) = session.as_str() else {
            return Err(CallError::Usage("wf.agents.invoke(sessionId, {message, input, model}): sessionId must be the id wf.agents.create returned"));
        };
        if !self.sessions.iter().any(|s| s.session_id == session_id) {
            return Err(CallError::ForeignSession(session_id.to_string()));
        }
        let opts = object_opts(
            opts,
            "wf.agents.invoke",
            &["message", "input", "model", "mode"],
        )?;
        let message = optional_string(opts.get("message"), "wf.agents.invoke: message")?;
        let input = opts.get("input").cloned().filter(|v| !v.is_null());
        if message.is_none() && input.is_none() {
            return Err(CallError::Usage(
                "wf.agents.invoke: give a message, an input, or both",
            ));
        }
        let model = optional_string(opts.get("model"), "wf.agents.invoke: model")?;
        if let Some(m) = &model {
            super::check_model(&self.rc.services.config(), m)?;
        }
        let mode = match optional_string(opts.get("mode"), "wf.agents.invoke: mode")? {
            None => InvokeMode::Prompt,
            Some(m) => InvokeMode::parse(&m).ok_or(CallError::UnknownMode(m))?,
        };
        if self.rc.services.host().is_none() {
            return Err(CallError::NoAgentHost);
        }
        let req = InvokeRequest {
            caller: None,
            session_id: session_id.to_string(),
            message,
            input,
            mode,
            model: model
                .or_else(|| self.session_models.get(session_id).cloned())
                .or_else(|| self.rc.model.clone()),
            origin_call_id: Some(self.rc.origin_call_id.clone()),
        };
        self.next_ticket += 1;
        let ticket = self.next_ticket;
        self.invocations += 1;
        self.queued.push_back((ticket, req));
        self.pump();
        Ok(json!(ticket))
    }

    /// Start queued invocations while there is room (or fail them all once stopped).
    pub fn pump(&mut self) {
        while let Some((ticket, req)) = self.queued.pop_front() {
            if self.rc.stop.is_cancelled() {
                let _ = self
                    .tx
                    .send((ticket, Err(InvocationError::CancelledBeforeStart)));
                self.running += 1; // accounted for when its completion is received
                continue;
            }
            if self.running >= MAX_PARALLEL {
                self.queued.push_front((ticket, req));
                return;
            }
            self.spawn_invocation(ticket, req);
        }
    }

    /// An invocation reported back.
    pub fn completed(&mut self) {
        self.running = self.running.saturating_sub(1);
        self.pump();
    }

    fn spawn_invocation(&mut self, ticket: u64, req: InvokeRequest) {
        self.running += 1;
        let Some(host) = self.rc.services.host() else {
            let _ = self.tx.send((ticket, Err(InvocationError::HostStopped)));
            return;
        };
        self.shared
            .set_inflight(ticket, Some(req.session_id.clone()));
        let (tx, stop, shared) = (self.tx.clone(), self.rc.stop.clone(), self.shared.clone());
        let name = format!("{}-invoke-{ticket}", self.rc.job_id);
        let tx2 = tx.clone();
        let spawned = std::thread::Builder::new().name(name).spawn(move || {
            let out = if stop.is_cancelled() {
                Err(InvocationError::CancelledBeforeStart)
            } else {
                host.invoke_blocking(req)
                    .map(outcome_json)
                    .map_err(InvocationError::from)
            };
            shared.set_inflight(ticket, None);
            let _ = tx.send((ticket, out));
        });
        if let Err(e) = spawned {
            self.shared.set_inflight(ticket, None);
            let _ = tx2.send((ticket, Err(InvocationError::Thread(e))));
        }
    }

    fn read(&mut self, path: &Value) -> Result<Value, CallError> {
        let Some(path) = path.as_str() else {
            return Err(CallError::Usage(
                "wf.workspace.read(path): path must be a project-relative path string",
            ));
        };
        let ws = self.rc.services.workspace();
        let r = ws
            .resolve(path, Access::Read)
            .map_err(CallError::ReadPath)?;
        if r.abs.is_dir() {
            return Err(CallError::ReadFolder(r.display));
        }
        let io = |source: std::io::Error| CallError::ReadIo {
            path: r.display.clone(),
            source,
        };
        let meta = std::fs::metadata(&r.abs).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                CallError::ReadMissing(r.display.clone())
            } else {
                io(e)
            }
        })?;
        if meta.len() as usize > READ_LIMIT {
            return Err(CallError::ReadTooLarge {
                path: r.display.clone(),
                len: meta.len(),
                limit: READ_LIMIT,
            });
        }
        let bytes = std::fs::read(&r.abs).map_err(io)?;
        String::from_utf8(bytes)
            .map(Value::String)
            .map_err(|_| CallError::ReadNotText(r.display.clone()))
    }

    fn ask(&mut self, q: &Value) -> Result<Value, CallError> {
        self.check_stopped()?;
        let spec = AskSpec::parse(q)?;
        if self.rc.wait {
            let err = CallError::AskInWaitMode {
                title: spec.title.clone(),
            };
            self.pending_asks.push(spec.describe(None));
            self.wait_ask_error = Some(err.to_string());
            self.rc.job_token.cancel();
            return Err(err);
        }
        let id = format!("{}:{}", self.rc.job_id, self.asks.len() + 1);
        self.asks.push(spec.describe(Some(&id)));
        let jobs = self.rc.services.jobs().clone();
        let _ = jobs.set_waiting(&self.rc.job_id, true);
        self.write_detail();
        self.shared.set_ask(Some(id.clone()));
        let title = format!("{}: {}", self.rc.workflow_title, spec.title);
        // Waiting for the author does not count against the run's wall clock.
        self.shared.wall.pause();
        let answer = if self.rc.stop.is_cancelled() {
            Err(InputError::Withdrawn)
        } else {
            self.rc.services.ask_blocking(
                &self.rc.caller_session,
                InputSource::Workflow,
                &id,
                &title,
                vec![spec.question()],
            )
        };
        self.shared.wall.resume();
        self.shared.set_ask(None);
        let _ = jobs.set_waiting(&self.rc.job_id, false);
        let result = match answer {
            Ok(answers) => Ok(spec.interpret(answers.first())),
            Err(_) if self.rc.stop.is_cancelled() => Err(CallError::AskCancelled),
            Err(e) => Err(CallError::Ask(e)),
        };
        if let Some(last) = self.asks.last_mut() {
            match &result {
                Ok(v) => last["answer"] = v.clone(),
                Err(e) => last["error"] = Value::String(e.to_string()),
            }
        }
        self.write_detail();
        result
    }

    pub fn log(&mut self, text: &str) {
        tracing::info!(job = %self.rc.job_id, "workflow: {text}");
        self.log
            .push_back(json!({"at": now_rfc3339(), "text": text}));
        while self.log.len() > LOG_LIMIT {
            self.log.pop_front();
            self.log_dropped += 1;
        }
        self.write_detail();
    }

    fn progress(&mut self, p: &Value) -> Result<Value, CallError> {
        let o = object_opts(p, "wf.progress", &["phase", "done", "total"])?;
        let phase = optional_string(o.get("phase"), "wf.progress: phase")?;
        let count = |k: &'static str| -> Result<u64, CallError> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(0),
                Some(v) => v
                    .as_f64()
                    .filter(|n| *n >= 0.0 && n.fract() == 0.0)
                    .map(|n| n as u64)
                    .ok_or(CallError::NotCount { key: k }),
            }
        };
        let (done, total) = (count("done")?, count("total")?);
        let _ = self
            .rc
            .services
            .jobs()
            .progress(&self.rc.job_id, JobProgress { phase, done, total });
        Ok(Value::Null)
    }

    /// The job file's `detail`: what the run did so far.
    pub fn detail(&self) -> Value {
        json!({
            "runId": self.rc.run_id,
            "workflowKey": self.rc.workflow_key,
            "wait": self.rc.wait,
            "model": self.rc.model,
            "sessions": self.sessions,
            "invocations": self.invocations,
            "asks": self.asks,
            "log": self.log,
            "logDropped": self.log_dropped,
        })
    }

    pub fn write_detail(&self) {
        if let Err(e) = self
            .rc
            .services
            .jobs()
            .set_detail(&self.rc.job_id, self.detail())
        {
            tracing::warn!("workflow {}: {e}", self.rc.job_id);
        }
    }
}

/// `{status, sessionId, result: {message, data}, error?, stats?}` as the script sees it.
fn outcome_json(o: InvokeOutcome) -> Value {
    let mut v = json!({
        "status": o.status,
        "sessionId": o.session_id,
        "result": {"message": o.final_message, "data": o.data},
    });
    if let Some(e) = o.error {
        v["error"] = Value::String(e);
    }
    if let Some(s) = o.stats {
        v["stats"] = serde_json::to_value(s).unwrap_or(Value::Null);
    }
    v
}

pub(super) fn object_opts<'a>(
    v: &'a Value,
    what: &'static str,
    allowed: &[&str],
) -> Result<&'a serde_json::Map<String, Value>, CallError> {
    static EMPTY: std::sync::OnceLock<serde_json::Map<String, Value>> = std::sync::OnceLock::new();
    let map = match v {
        Value::Null => EMPTY.get_or_init(Default::default),
        Value::Object(m) => m,
        _ => return Err(CallError::OptionsNotObject { what }),
    };
    if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(CallError::UnknownOption {
            what,
            key: k.clone(),
            allowed: allowed.join(", "),
        });
    }
    Ok(map)
}

pub(super) fn optional_string(
    v: Option<&Value>,
    what: &'static str,
) -> Result<Option<String>, CallError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(CallError::NotString { what }),
    }
}
