//! The agent host: runs model invocations for every session of a project and owns their
//! lifecycle — who is running, the steer inbox and the follow-up queue of each running
//! session (NeuroBook's invocation-mode rules, notes §8), cancellation (cascading to the
//! agents a run is waiting on), background `invoke_agent` jobs, and the delivery of finished
//! jobs to their owner session as a message that starts its next turn.
//!
//! The engine reaches it through the `AgentHost` trait (tools run on worker threads and may
//! block on an invocation); the TUI and the CLI hold the concrete `Host`.
//!
//! State rules (idle / running; waiting for the author counts as running):
//! - prompt: idle → start a run (needs a message or input); running → queued as a follow-up.
//! - continue: idle → resume from the transcript's tail (no message); running → rejected.
//! - steer: running → drained into the run at its next turn boundary; idle → rejected.
//! - followup: running → runs after the current run; idle → rejected.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;

use serde_json::{json, Value};
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::provider::Provider;
use super::run_loop::{history, run_invocation, Inbox, RunOptions, RunOutcome, Start};
use crate::config::{no_model_message, LiveConfig};
use crate::engine::agents::{
    schema_errors, AgentHost, InvokeMode, InvokeOutcome, InvokeRequest, InvokeStats,
};
use crate::engine::jobs::{DeliveryStatus, JobKind, JobSnapshot, JobStart};
use crate::engine::profiles::Profile;
use crate::engine::{Approval, Engine, EngineEvent, SessionId, SessionState};

/// Picks the provider for a profile, with an optional per-invocation model key.
pub type ProviderSource =
    Arc<dyn Fn(&Profile, Option<&str>) -> Result<Arc<dyn Provider>, String> + Send + Sync>;

/// Providers from `config.toml` as it is at each run (a reloaded config applies to the next
/// run): the model named in the call, else the profile's default.
pub fn config_providers(live: LiveConfig) -> ProviderSource {
    Arc::new(move |profile, model| {
        let config = live.get();
        let key = match model {
            Some(m) => m.to_string(),
            None => super::default_model_key(&config, &profile.key)
                .map(str::to_string)
                .ok_or_else(|| no_model_message(live.file(), &profile.key))?,
        };
        super::build_provider_for(&config, &key, &profile.key).map_err(|e| e.to_string())
    })
}

type Waiter = oneshot::Sender<InvokeOutcome>;

struct Queued {
    req: InvokeRequest,
    text: String,
    waiter: Waiter,
}

/// A running session.
struct Slot {
    cancel: CancellationToken,
    inbox: Arc<Inbox>,
    /// Who waits for the current run's end (the invoker, steerers).
    waiters: Vec<Waiter>,
    followups: VecDeque<Queued>,
    /// Sessions this run is waiting on through a synchronous invoke (cancel cascades).
    children: HashSet<SessionId>,
}

pub struct Host {
    engine: Arc<Engine>,
    providers: ProviderSource,
    approval: Approval,
    rt: Handle,
    slots: Mutex<HashMap<SessionId, Slot>>,
    me: Weak<Host>,
}

pub use crate::engine::agents::InvokeError as AdmitError;

impl Host {
    /// Create the host and register it with the engine. Call inside a tokio runtime.
    pub fn attach(engine: Arc<Engine>, providers: ProviderSource, approval: Approval) -> Arc<Host> {
        let host = Arc::new_cyclic(|me| Host {
            engine: engine.clone(),
            providers,
            approval,
            rt: Handle::current(),
            slots: Mutex::new(HashMap::new()),
            me: me.clone(),
        });
        let weak: Weak<dyn AgentHost> = Arc::downgrade(&host) as Weak<dyn AgentHost>;
        engine.set_host(weak);
        // Calls that waited across a restart: once decided, their session carries on here.
        let me = Arc::downgrade(&host);
        engine.serve_restored(Arc::new(move |sid: &str| {
            if let Some(host) = me.upgrade() {
                host.resume_after_restart(sid);
            }
        }));
        let mut jobs = engine.jobs().subscribe();
        let me = Arc::downgrade(&host);
        host.rt.spawn(async move {
            loop {
                let snap = match jobs.recv().await {
                    Ok(s) => s,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(_) => break,
                };
                let Some(host) = me.upgrade() else { break };
                host.deliver(snap);
            }
        });
        host
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    fn slots(&self) -> MutexGuard<'_, HashMap<SessionId, Slot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn is_running(&self, session_id: &str) -> bool {
        self.slots().contains_key(session_id)
    }

    /// Whether a session of `profile_key` would get a model now (config.toml as it is): the
    /// board's scheduler asks before it starts a role session, so a book without a model
    /// for a role leaves its tasks as they are instead of starting sessions that fail.
    pub fn model_for(&self, profile_key: &str) -> Result<(), String> {
        let profile = self
            .engine
            .profiles()
            .get(profile_key)
            .ok_or_else(|| format!("no profile '{profile_key}'"))?;
        (self.providers)(&profile, None).map(drop)
    }

    /// Follow-ups waiting behind a session's current run.
    pub fn queued(&self, session_id: &str) -> usize {
        self.slots()
            .get(session_id)
            .map_or(0, |s| s.followups.len())
    }

    /// Check an invocation and turn its message and input into the user message text.
    fn admit_text(&self, req: &InvokeRequest) -> Result<Option<String>, AdmitError> {
        if req.caller.as_deref() == Some(req.session_id.as_str()) {
            return Err(AdmitError::SelfInvoke(req.session_id.clone()));
        }
        let profile = self
            .engine
            .session_profile(&req.session_id)
            .ok_or_else(|| AdmitError::UnknownSession(req.session_id.clone()))?;
        if let Some(m) = &req.model {
            let models = &self.engine.config().models;
            if !models.contains_key(m) {
                let known: Vec<&str> = models.keys().map(String::as_str).collect();
                return Err(AdmitError::Invalid(format!(
                    "unknown model '{m}'; config.toml [models] has: {}",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        }
        if let Some(input) = &req.input {
            let Some(schema) = &profile.payload_schema else {
                return Err(AdmitError::Invalid(format!(
                    "profile {} takes no input object; put what it needs in the message",
                    profile.key
                )));
            };
            schema_errors(schema, input, "/input").map_err(|e| {
                AdmitError::Invalid(format!(
                    "input does not match the payload schema of profile {}:\n  {e}",
                    profile.key
                ))
            })?;
        }
        let message = req.message.as_deref().filter(|m| !m.trim().is_empty());
        Ok(match (message, &req.input) {
            (None, None) => None,
            (Some(m), None) => Some(m.to_string()),
            (m, Some(input)) => Some(format!(
                "{}<input>\n{}\n</input>",
                m.map(|m| format!("{m}\n\n")).unwrap_or_default(),
                serde_json::to_string_pretty(input).unwrap_or_default()
            )),
        })
    }

    /// Admit an invocation. The receiver yields the outcome of the run it starts or joins.
    pub fn submit(
        &self,
        req: InvokeRequest,
    ) -> Result<oneshot::Receiver<InvokeOutcome>, AdmitError> {
        self.admit(req, false)
    }

    /// Admit an invocation; with `idle_only`, a running session refuses it instead of queueing
    /// it. Whether the session runs is checked and its run claimed under one lock of the slots,
    /// so two submits at once (the composer and a job delivery) can never start two runs.
    fn admit(
        &self,
        req: InvokeRequest,
        idle_only: bool,
    ) -> Result<oneshot::Receiver<InvokeOutcome>, AdmitError> {
        let text = self.admit_text(&req)?;
        let sid = req.session_id.clone();
        let caller = req.caller.clone();
        // Read before taking the lock (it reads the log). A transcript only grows, so one
        // that has a tail now still has it when the run is claimed below.
        let nothing_to_continue = match req.mode {
            InvokeMode::Continue if text.is_none() => history(&self.engine, &sid)
                .map_err(|e| AdmitError::Invalid(e.to_string()))?
                .is_empty(),
            _ => false,
        };
        let (tx, rx) = oneshot::channel();
        let mut slots = self.slots();
        let start = match (slots.get_mut(&sid), req.mode) {
            (Some(_), _) if idle_only => return Err(AdmitError::Running(sid)),
            (None, InvokeMode::Prompt) => Start::Prompt(text.ok_or_else(|| {
                AdmitError::Invalid("prompt needs a message or an input object".into())
            })?),
            (None, InvokeMode::Continue) => {
                if text.is_some() {
                    return Err(AdmitError::Invalid(
                        "continue resumes from the transcript and takes no message or input; use prompt".into(),
                    ));
                }
                if nothing_to_continue {
                    return Err(AdmitError::Invalid(format!(
                        "session {sid} has nothing to continue yet; use prompt"
                    )));
                }
                Start::Continue
            }
            (None, InvokeMode::Steer | InvokeMode::Followup) => {
                return Err(AdmitError::NotRunning(sid));
            }
            (Some(_), InvokeMode::Continue) => return Err(AdmitError::Running(sid)),
            (Some(slot), InvokeMode::Steer) => {
                let text =
                    text.ok_or_else(|| AdmitError::Invalid("steer needs a message".into()))?;
                slot.inbox.push(text);
                slot.waiters.push(tx);
                adopt(&mut slots, caller.as_deref(), &sid);
                return Ok(rx);
            }
            (Some(slot), InvokeMode::Prompt | InvokeMode::Followup) => {
                let text = text.ok_or_else(|| {
                    AdmitError::Invalid("a follow-up needs a message or an input object".into())
                })?;
                slot.followups.push_back(Queued {
                    req,
                    text,
                    waiter: tx,
                });
                adopt(&mut slots, caller.as_deref(), &sid);
                return Ok(rx);
            }
        };
        // Claimed here, before the lock is released: a second submit now sees a running session.
        let cancel = CancellationToken::new();
        let inbox = Arc::new(Inbox::default());
        slots.insert(
            sid.clone(),
            Slot {
                cancel: cancel.clone(),
                inbox: inbox.clone(),
                waiters: vec![tx],
                followups: VecDeque::new(),
                children: HashSet::new(),
            },
        );
        adopt(&mut slots, caller.as_deref(), &sid);
        drop(slots);
        self.spawn_run(req, start, cancel, inbox);
        Ok(rx)
    }

    /// Admit and wait for the outcome.
    pub async fn invoke(&self, req: InvokeRequest) -> Result<InvokeOutcome, AdmitError> {
        let sid = req.session_id.clone();
        let rx = self.submit(req)?;
        rx.await.map_err(|_| AdmitError::Dropped(sid))
    }

    fn spawn_run(
        &self,
        req: InvokeRequest,
        start: Start,
        cancel: CancellationToken,
        inbox: Arc<Inbox>,
    ) {
        let Some(me) = self.me.upgrade() else { return };
        self.rt.spawn(async move {
            let sid = req.session_id.clone();
            let began = Instant::now();
            let outcome = match me.provider_for(&sid, req.model.as_deref()) {
                Err(e) => {
                    // Keep the author's message: it is part of the transcript even though no
                    // model could answer it.
                    let user = match &start {
                        Start::Prompt(text) => me
                            .engine
                            .append(&sid, crate::engine::LogRecord::User { text: text.clone() })
                            .map(drop),
                        Start::Continue => Ok(()),
                    };
                    let logged = user.and_then(|()| {
                        me.engine.append(
                            &sid,
                            crate::engine::LogRecord::Lifecycle {
                                status: "error".into(),
                                message: Some(e.clone()),
                            },
                        )
                    });
                    me.engine
                        .set_state(&sid, crate::engine::SessionState::Failed);
                    match logged {
                        Ok(_) => failed(&sid, e),
                        Err(log) => {
                            failed(&sid, format!("{e}; and it could not be recorded: {log}"))
                        }
                    }
                }
                Ok(provider) => {
                    let summarizer = me
                        .engine
                        .profiles()
                        .get("summarizer")
                        .and_then(|p| (me.providers)(&p, None).ok());
                    let opts = RunOptions {
                        approval: me.approval.clone(),
                        cancel,
                        inbox: Some(inbox),
                        context_window: provider.context_window(),
                        summarizer,
                        stop_after_refusal: false,
                    };
                    let run =
                        run_invocation(me.engine.clone(), sid.clone(), provider, start, opts).await;
                    to_outcome(&sid, run, began)
                }
            };
            me.finished(&sid, outcome);
        });
    }

    fn provider_for(&self, sid: &str, model: Option<&str>) -> Result<Arc<dyn Provider>, String> {
        let profile = self
            .engine
            .session_profile(sid)
            .ok_or_else(|| format!("no session with id '{sid}'"))?;
        (self.providers)(&profile, model)
    }

    /// A run ended: tell its waiters, then start the next follow-up or free the slot.
    fn finished(&self, sid: &str, outcome: InvokeOutcome) {
        let (waiters, next) = {
            let mut slots = self.slots();
            let Some(slot) = slots.get_mut(sid) else {
                return;
            };
            let waiters = std::mem::take(&mut slot.waiters);
            slot.children.clear();
            let next = slot.followups.pop_front();
            match &next {
                Some(_) => {
                    // The slot stays: the session is still busy with its follow-up.
                    slot.cancel = CancellationToken::new();
                    slot.inbox = Arc::new(Inbox::default());
                }
                None => {
                    slots.remove(sid);
                }
            }
            (waiters, next)
        };
        for w in waiters {
            let _ = w.send(outcome.clone());
        }
        if let Some(q) = next {
            let (cancel, inbox) = {
                let mut slots = self.slots();
                match slots.get_mut(sid) {
                    Some(slot) => {
                        slot.waiters.push(q.waiter);
                        (slot.cancel.clone(), slot.inbox.clone())
                    }
                    None => return,
                }
            };
            self.spawn_run(q.req, Start::Prompt(q.text), cancel, inbox);
        }
    }

    /// A session's calls that waited across a restart are decided and their results are in
    /// its log: continue its run from there with the configured model. Without a model the
    /// results stay recorded and the session says it waits for one (the author's next prompt,
    /// or `continue` once a model is set up, goes on from the same transcript).
    fn resume_after_restart(&self, sid: &str) {
        let model = self
            .engine
            .session_state(sid)
            .get("ui.model")
            .and_then(Value::as_str)
            .map(str::to_string);
        let note = match self.provider_for(sid, model.as_deref()) {
            Err(e) => Some(format!(
                "the decided call's result is recorded; this session waits for a model to continue: {e}"
            )),
            Ok(_) => self
                .submit(InvokeRequest {
                    caller: None,
                    session_id: sid.to_string(),
                    message: None,
                    input: None,
                    mode: InvokeMode::Continue,
                    model,
                    origin_call_id: None,
                })
                .err()
                .map(|e| {
                    format!("the decided call's result is recorded; the run did not continue: {e}")
                }),
        };
        if let Some(message) = note {
            let logged = self.engine.append(
                sid,
                crate::engine::LogRecord::Lifecycle {
                    status: "waiting".into(),
                    message: Some(message),
                },
            );
            if let Err(e) = logged {
                tracing::warn!("session {sid}: {e}");
            }
            self.engine.set_state(sid, SessionState::Idle);
        }
    }

    /// Cancel a session's run, its queued follow-ups and the agents it is waiting on.
    pub fn cancel(&self, sid: &str) -> bool {
        let (children, dropped) = {
            let mut slots = self.slots();
            let Some(slot) = slots.get_mut(sid) else {
                return false;
            };
            slot.cancel.cancel();
            (
                std::mem::take(&mut slot.children),
                std::mem::take(&mut slot.followups),
            )
        };
        self.engine.withdraw_inputs_of(sid);
        for q in dropped {
            let _ = q.waiter.send(failed(
                sid,
                "cancelled before it started: the run it was queued behind was cancelled".into(),
            ));
        }
        for c in children {
            self.cancel(&c);
        }
        true
    }

    /// Tell the owner of a finished job, as a message that starts its next turn.
    fn deliver(&self, event: JobSnapshot) {
        // Judge the job as it is now, not as the (possibly older) event saw it: a job must be
        // delivered once, however many events it sent after it ended.
        let Some(record) = self.engine.jobs().get(&event.job_id) else {
            return;
        };
        let snap = record.snapshot.clone();
        if !snap.status.is_final() || snap.delivery_status != DeliveryStatus::Pending {
            return;
        }
        let Some(owner) = snap.owner_session_id.clone() else {
            return;
        };
        let mut text = format!(
            "<system-reminder>\nBackground job {} ({}) ended: {}.",
            snap.job_id,
            snap.title,
            snap.status.as_str()
        );
        if let Some(e) = &snap.error {
            text.push_str(&format!("\nError: {e}"));
        }
        if let Some(result) = record.result {
            text.push_str(&format!(
                "\nResult:\n{}",
                serde_json::to_string_pretty(&result).unwrap_or_default()
            ));
        }
        text.push_str("\n</system-reminder>");
        let req = InvokeRequest {
            caller: None,
            session_id: owner,
            message: Some(text),
            input: None,
            mode: InvokeMode::Prompt,
            model: None,
            origin_call_id: None,
        };
        let (status, error) = match self.submit(req) {
            Ok(_) => (DeliveryStatus::Accepted, None),
            Err(e) => (DeliveryStatus::Failed, Some(e.to_string())),
        };
        if let Err(e) = self.engine.jobs().set_delivery(&snap.job_id, status, error) {
            tracing::warn!("job {}: {e}", snap.job_id);
        }
    }

    /// Start an invocation as a background job owned by the caller.
    pub fn start_background(&self, req: InvokeRequest) -> Result<String, AdmitError> {
        let sid = req.session_id.clone();
        if self.is_running(&sid) {
            return Err(AdmitError::Running(sid));
        }
        self.admit_text(&req)?;
        let profile = self
            .engine
            .session(&sid)
            .map(|s| s.profile)
            .unwrap_or_default();
        let (job_id, token) = self.engine.jobs().start(JobStart {
            kind: JobKind::InvokeAgent,
            title: format!("{profile} #{sid}"),
            owner_session_id: req.caller.clone(),
            origin_tool_call_id: req.origin_call_id.clone(),
            reference: json!({"sessionId": sid}),
            preview: req.message.as_ref().map(|m| m.chars().take(120).collect()),
        })?;
        // Subscribed before the run starts, so no state change of the agent is missed.
        let mut events = self.engine.subscribe();
        // Idle only: a run that started since the check above makes this fail, not queue.
        let rx = match self.admit(
            InvokeRequest {
                // The job, not the caller's run, waits for this one: no cancel cascade.
                caller: None,
                ..req
            },
            true,
        ) {
            Ok(rx) => rx,
            Err(e) => {
                let _ = self.engine.jobs().finish(&job_id, Err(e.to_string()));
                return Err(e);
            }
        };
        let Some(me) = self.me.upgrade() else {
            return Err(AdmitError::ShuttingDown);
        };
        let id = job_id.clone();
        self.rt.spawn(async move {
            // The job is `waiting` while its agent waits for the author, `running` otherwise.
            let (jobs, sid3, id3) = (me.engine.jobs().clone(), sid.clone(), id.clone());
            let follower = tokio::spawn(async move {
                loop {
                    match events.recv().await {
                        Ok(EngineEvent::Session { session }) if session.id == sid3 => {
                            let waiting = matches!(
                                session.state,
                                SessionState::WaitingApproval | SessionState::WaitingInput
                            );
                            let _ = jobs.set_waiting(&id3, waiting);
                        }
                        Ok(_) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(_) => break,
                    }
                }
            });
            let watch = token.clone();
            let sid2 = sid.clone();
            let me2 = me.clone();
            let canceller = tokio::spawn(async move {
                watch.cancelled().await;
                me2.cancel(&sid2);
            });
            let result = match rx.await {
                Ok(o) if o.status == "completed" => {
                    Ok(serde_json::to_value(&o).unwrap_or(Value::Null))
                }
                Ok(o) => Err(o
                    .error
                    .unwrap_or_else(|| format!("the agent ended {}", o.status))),
                Err(_) => Err("the invocation was dropped".into()),
            };
            canceller.abort();
            follower.abort();
            if let Err(e) = me.engine.jobs().finish(&id, result) {
                tracing::warn!("job {id}: {e}");
            }
        });
        Ok(job_id)
    }
}

/// An admitted invocation made by a running caller: cancelling the caller reaches it.
fn adopt(slots: &mut HashMap<SessionId, Slot>, caller: Option<&str>, sid: &str) {
    if let Some(parent) = caller.and_then(|c| slots.get_mut(c)) {
        parent.children.insert(sid.to_string());
    }
}

fn failed(sid: &str, error: String) -> InvokeOutcome {
    InvokeOutcome {
        status: "error".into(),
        session_id: sid.to_string(),
        final_message: String::new(),
        data: Value::Null,
        error: Some(error),
        stats: None,
    }
}

fn to_outcome(
    sid: &str,
    run: Result<RunOutcome, crate::engine::EngineError>,
    began: Instant,
) -> InvokeOutcome {
    let run = match run {
        Ok(r) => r,
        Err(e) => return failed(sid, e.to_string()),
    };
    let stats = Some(InvokeStats {
        input_tokens: run.input_tokens,
        output_tokens: run.output_tokens,
        total_tokens: run.input_tokens + run.output_tokens,
        elapsed_ms: began.elapsed().as_millis() as u64,
    });
    let (status, error) = if let Some(e) = run.error {
        ("error", Some(e))
    } else if run.cancelled {
        ("error", Some("the run was cancelled".to_string()))
    } else if run.needed_approval > 0 && run.data.is_none() {
        (
            "waiting",
            Some(format!(
                "{} call(s) need the author's approval and were not run",
                run.needed_approval
            )),
        )
    } else {
        ("completed", None)
    };
    InvokeOutcome {
        status: status.into(),
        session_id: sid.to_string(),
        final_message: run.final_text,
        data: run.data.unwrap_or(Value::Null),
        error,
        stats,
    }
}

impl AgentHost for Host {
    fn invoke_blocking(&self, req: InvokeRequest) -> Result<InvokeOutcome, AdmitError> {
        let sid = req.session_id.clone();
        let rx = self.submit(req)?;
        rx.blocking_recv().map_err(|_| AdmitError::Dropped(sid))
    }

    fn invoke_background(&self, req: InvokeRequest) -> Result<String, AdmitError> {
        self.start_background(req)
    }

    fn cancel_session(&self, session_id: &str) -> bool {
        self.cancel(session_id)
    }
}
