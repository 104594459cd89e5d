//! The gateway: runs an outside client's tool calls in the engine of the process that holds
//! it (the author's TUI, or `nbook mcp`'s own engine when no TUI is open) without ever
//! holding a call past the client's bound.
//!
//! A call runs in its own task and the gateway watches the engine's events for it. When it
//! finishes within the wait bound, its result is returned. When it is still in the approval
//! queue at the bound, the gateway returns `pending_approval` with the approval id and keeps
//! the task: the call stays in the queue, and [`Gateway::await_approval`] hands its eventual
//! result to the same client exactly once. Withdrawing (the client cancelled, or went away)
//! aborts the task, which takes the entry out of the queue; nothing was changed.
//!
//! In the local gate (no TUI), mutating calls are refused before anything is previewed unless
//! `--approve-from-tui-only=false`, and then only what the policy runs without asking runs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio::task::AbortHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::outcome::{preview_hash, Outcome, PendingApproval, Resolved};
use crate::engine::jobs::JobSnapshot;
use crate::engine::{
    Approval, CallResult, CallStatus, Engine, EngineEvent, LogRecord, SessionId, SessionState,
    ToolCall,
};

/// What a client is told to do when no author can approve its call.
pub const REMEDY: &str = "open the project in nbook to approve";

/// Where approvals come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// The author's TUI owns this engine's queue: mutating calls wait in it.
    Queue,
    /// No author: `approve_from_tui_only` refuses every mutating call; otherwise the policy
    /// decides and a call it would ask about is refused.
    Local { approve_from_tui_only: bool },
}

/// How a call goes, for the client's progress notifications: how long it has run, and —
/// when the call runs a job that reports its own progress (a workflow run with `wait`, a
/// waited-for agent) — that job's steps done out of its total.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    pub elapsed: Duration,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

impl Progress {
    /// Only time to report.
    pub fn elapsed(elapsed: Duration, message: impl Into<String>) -> Progress {
        Progress {
            elapsed,
            message: message.into(),
            done: None,
            total: None,
        }
    }

    /// The progress of the job a call runs (`None` while the job has reported none).
    fn of_job(elapsed: Duration, job: &JobSnapshot) -> Option<Progress> {
        let p = job.progress.as_ref()?;
        let phase = p
            .phase
            .as_deref()
            .map(|s| format!(": {s}"))
            .unwrap_or_default();
        Some(Progress {
            elapsed,
            message: format!("{}{phase} ({}/{})", job.title, p.done, p.total),
            done: Some(p.done),
            total: Some(p.total),
        })
    }
}

/// The agent sessions a call started (children of the client's session) and how many tool
/// calls they made: the progress of an `invoke_agent` that waits for its agent.
#[derive(Debug, Default)]
struct Children {
    ids: std::collections::HashSet<SessionId>,
    calls: u64,
    last: Option<(SessionId, String)>,
}

impl Children {
    /// Take in one engine event; a new tool call of a child is reported at once.
    fn observe(&mut self, parent: &str, ev: EngineEvent, elapsed: Duration) -> Option<Progress> {
        match ev {
            EngineEvent::Session { session } if session.parent.as_deref() == Some(parent) => {
                self.ids.insert(session.id);
                None
            }
            EngineEvent::Log { session_id, line } if self.ids.contains(&session_id) => {
                let LogRecord::ToolCall { tool, .. } = line.record else {
                    return None;
                };
                self.calls += 1;
                self.last = Some((session_id, tool));
                self.progress(elapsed)
            }
            _ => None,
        }
    }

    fn progress(&self, elapsed: Duration) -> Option<Progress> {
        let (session, tool) = self.last.as_ref()?;
        Some(Progress {
            elapsed,
            message: format!(
                "agent session {session} is working: {}, the last {tool}",
                crate::text::count(self.calls as usize, "tool call", "tool calls")
            ),
            done: Some(self.calls),
            total: None,
        })
    }
}

/// One call as a client sends it.
pub struct CallRequest {
    pub session_id: SessionId,
    pub tool: String,
    pub args: serde_json::Value,
    /// Written as the `by` of the call's record: `mcp:<client name>`.
    pub by: String,
    pub wait: Duration,
    /// The connection (client) the call belongs to; only it may collect or withdraw it.
    pub owner: u64,
}

#[derive(Clone, Debug, Default)]
struct Track {
    pending: Option<PendingApproval>,
    resolved: Option<Resolved>,
    result: Option<CallResult>,
}

struct Slot {
    rx: watch::Receiver<Track>,
    abort: AbortHandle,
    owner: u64,
    session_id: SessionId,
    call: ToolCall,
}

pub struct Gateway {
    engine: Arc<Engine>,
    gate: Gate,
    slots: Mutex<HashMap<String, Slot>>,
    next: AtomicU64,
}

impl Gateway {
    pub fn new(engine: Arc<Engine>, gate: Gate) -> Arc<Gateway> {
        Arc::new(Gateway {
            engine,
            gate,
            slots: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
        })
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Run one call; return its result, or `pending_approval` once `req.wait` has passed with
    /// the call still in the queue. `progress` is told every second while the call goes on.
    pub async fn call(
        &self,
        req: CallRequest,
        cancel: CancellationToken,
        progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Outcome {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let call = ToolCall {
            id: format!("mcp-{}-{n}", std::process::id()),
            name: req.tool,
            arguments: req.args,
        };
        let session = req.session_id;
        // The session's transcript shows the call as the client made it.
        let record = LogRecord::ToolCall {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            args: call.arguments.clone(),
            by: req.by,
        };
        if let Err(e) = self.engine.append(&session, record) {
            return done(result_of(
                &call,
                CallStatus::LogFailed,
                format!("not run: the call could not be written to the session log, and nothing runs without its record; nothing was changed. {e}"),
            ));
        }
        if let Some(refusal) = self.local_refusal(&session, &call) {
            return done(self.engine.record_result(&session, refusal));
        }
        let approval = match self.gate {
            Gate::Queue => Approval::Queue,
            Gate::Local { .. } => Approval::FailWithRemedy(REMEDY),
        };
        if self.never_waits(&call) {
            return self
                .call_inline(&session, call, approval, cancel, progress)
                .await;
        }
        let (tx, mut rx) = watch::channel(Track::default());
        // Subscribed before the call starts, so its approval request cannot be missed.
        let events = self.engine.subscribe();
        // …and so is the first report of a job the call starts.
        let mut jobs = self.engine.jobs().subscribe();
        let mut jobs_open = true;
        let mut job: Option<JobSnapshot> = None;
        // …and the agent sessions it starts (`invoke_agent` waiting for its child).
        let mut family = self.engine.subscribe();
        let mut family_open = true;
        let mut children = Children::default();
        let task = tokio::spawn(run_tracked(
            self.engine.clone(),
            session.clone(),
            call.clone(),
            approval,
            events,
            tx,
        ));
        let abort = task.abort_handle();
        let started = Instant::now();
        let deadline = started + req.wait;
        let mut bound_passed = false;
        let mut ticker = every_second();
        loop {
            {
                let t = rx.borrow_and_update();
                if let Some(r) = &t.result {
                    let out = Outcome::Done {
                        result: Box::new(r.clone()),
                        resolved: t.resolved.clone(),
                    };
                    drop(t);
                    // What the job reported before it ended reaches the client before the
                    // result does.
                    while let Ok(snap) = jobs.try_recv() {
                        if let Some(p) = job_moved(&mut job, snap, &call.id, started.elapsed()) {
                            progress(p);
                        }
                    }
                    return out;
                }
                if let (Some(p), true) = (&t.pending, bound_passed) {
                    let p = p.clone();
                    drop(t);
                    self.slots().insert(
                        p.approval_id.clone(),
                        Slot {
                            rx: rx.clone(),
                            abort,
                            owner: req.owner,
                            session_id: session,
                            call,
                        },
                    );
                    return Outcome::PendingApproval(p);
                }
            }
            tokio::select! {
                changed = rx.changed() => {
                    if changed.is_err() {
                        // The task ended without a result: the runtime is stopping.
                        return Outcome::interrupted();
                    }
                }
                _ = tokio::time::sleep_until(deadline), if !bound_passed => bound_passed = true,
                _ = cancel.cancelled() => {
                    tracing::info!("mcp: call cancelled by its client while it ran");
                    abort.abort();
                    return self.cancelled(&session, &call);
                }
                snap = jobs.recv(), if jobs_open => match snap {
                    Ok(snap) => {
                        if let Some(p) = job_moved(&mut job, snap, &call.id, started.elapsed()) {
                            progress(p);
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => jobs_open = false,
                },
                ev = family.recv(), if family_open => match ev {
                    Ok(ev) => {
                        if let Some(p) = children.observe(&session, ev, started.elapsed()) {
                            progress(p);
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => family_open = false,
                },
                _ = ticker.tick() => {
                    let waiting = rx.borrow().pending.is_some();
                    let of_job = job
                        .as_ref()
                        .and_then(|j| Progress::of_job(started.elapsed(), j))
                        .or_else(|| children.progress(started.elapsed()));
                    progress(match of_job {
                        Some(p) if !waiting => p,
                        _ if waiting => Progress::elapsed(
                            started.elapsed(),
                            "waiting for the author's decision in nbook",
                        ),
                        _ => Progress::elapsed(started.elapsed(), format!("{} is running", call.name)),
                    });
                }
            }
        }
    }

    /// Wait up to `wait` for the decision on a call that returned `pending_approval`; its
    /// result is handed out once, then the id is forgotten.
    pub async fn await_approval(
        &self,
        approval_id: &str,
        wait: Duration,
        owner: u64,
        cancel: CancellationToken,
    ) -> Outcome {
        let Some(mut rx) = self
            .slots()
            .get(approval_id)
            .filter(|s| s.owner == owner)
            .map(|s| s.rx.clone())
        else {
            return unknown(approval_id);
        };
        let deadline = Instant::now() + wait;
        loop {
            {
                let t = rx.borrow_and_update();
                if let Some(r) = &t.result {
                    let out = Outcome::Done {
                        result: Box::new(r.clone()),
                        resolved: t.resolved.clone(),
                    };
                    drop(t);
                    // Exactly once: whoever removes the slot returns the result.
                    return match self.slots().remove(approval_id) {
                        Some(_) => out,
                        None => unknown(approval_id),
                    };
                }
            }
            tokio::select! {
                changed = rx.changed() => {
                    if changed.is_err() {
                        self.slots().remove(approval_id);
                        return Outcome::interrupted();
                    }
                }
                _ = tokio::time::sleep_until(deadline) => {
                    let pending = rx.borrow().pending.clone();
                    return match pending {
                        Some(p) => Outcome::PendingApproval(p),
                        None => unknown(approval_id),
                    };
                }
                _ = cancel.cancelled() => return self.withdraw(approval_id, owner),
            }
        }
    }

    /// Take a waiting call out of the queue (its client cancelled it); nothing was changed.
    pub fn withdraw(&self, approval_id: &str, owner: u64) -> Outcome {
        let slot = {
            let mut slots = self.slots();
            match slots.get(approval_id) {
                Some(s) if s.owner == owner => slots.remove(approval_id),
                _ => None,
            }
        };
        match slot {
            Some(s) => {
                s.abort.abort();
                self.cancelled(&s.session_id, &s.call)
            }
            None => unknown(approval_id),
        }
    }

    /// The client `owner` went away: withdraw every call it left waiting.
    pub fn withdraw_owner(&self, owner: u64) {
        let ids: Vec<String> = self
            .slots()
            .iter()
            .filter(|(_, s)| s.owner == owner)
            .map(|(k, _)| k.clone())
            .collect();
        for id in ids {
            self.withdraw(&id, owner);
        }
    }

    /// The process is stopping: every waiting call is interrupted, none executed.
    pub fn shutdown(&self) {
        for (_, s) in self.slots().drain() {
            s.abort.abort();
        }
    }

    /// Approval ids waiting for a decision (tests and the TUI's notices).
    pub fn waiting(&self) -> usize {
        self.slots().len()
    }

    fn cancelled(&self, session: &str, call: &ToolCall) -> Outcome {
        tracing::info!("mcp: call {} of session {session} withdrawn", call.id);
        // The aborted call never got to restore its session's state.
        self.engine.set_state(session, SessionState::Idle);
        let message = format!(
            "cancelled: the client withdrew this {} call before it ran; nothing was changed",
            call.name
        );
        let _ = self.engine.record_result(
            session,
            result_of(call, CallStatus::Cancelled, message.clone()),
        );
        Outcome::Cancelled { message }
    }

    /// A call that changes nothing whatever the policy says (its tool declares no mutation for
    /// these arguments) can never wait for the author.
    fn never_waits(&self, call: &ToolCall) -> bool {
        self.engine
            .registry()
            .get(&call.name)
            .is_some_and(|r| !r.tool.mutates().for_call(&call.arguments))
    }

    /// Run a call that cannot wait for the author right here: no queue to watch, so no task
    /// of its own (the warm MCP read path), but still cancellable and still telling the
    /// client that it goes on.
    async fn call_inline(
        &self,
        session: &SessionId,
        call: ToolCall,
        approval: Approval,
        cancel: CancellationToken,
        progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Outcome {
        let fut = self.engine.call(session, call.clone(), approval);
        tokio::pin!(fut);
        let started = Instant::now();
        let mut ticker = every_second();
        loop {
            tokio::select! {
                r = &mut fut => return done(r),
                _ = cancel.cancelled() => return self.cancelled(session, &call),
                _ = ticker.tick() => progress(Progress::elapsed(
                    started.elapsed(),
                    format!("{} is running", call.name),
                )),
            }
        }
    }

    /// With no author to ask, a mutating call is refused before anything is previewed (after
    /// the checks that give a better answer: unknown tool, not allowed, bad arguments).
    fn local_refusal(&self, session: &str, call: &ToolCall) -> Option<CallResult> {
        let Gate::Local {
            approve_from_tui_only: true,
        } = self.gate
        else {
            return None;
        };
        let registered = self.engine.registry().get(&call.name)?;
        let profile = self.engine.session_profile(session)?;
        if !profile.allows(&call.name)
            || registered
                .validate(&crate::engine::tool::CallArgs::new(call.arguments.clone()))
                .is_err()
            || !registered.tool.mutates().for_call(&call.arguments)
        {
            return None;
        }
        Some(result_of(
            call,
            CallStatus::Refused,
            format!(
                "{} changes the project, which needs the author's approval: {REMEDY} (no nbook has this project open, so nobody can see the call). Nothing was changed.",
                call.name
            ),
        ))
    }
}

/// Take in a job update: when it is the job of call `call_id` and its progress moved, the
/// progress to report.
fn job_moved(
    job: &mut Option<JobSnapshot>,
    snap: JobSnapshot,
    call_id: &str,
    elapsed: Duration,
) -> Option<Progress> {
    if snap.origin_tool_call_id.as_deref() != Some(call_id) {
        return None;
    }
    let moved = job.as_ref().map(|j| &j.progress) != Some(&snap.progress);
    let out = if moved {
        Progress::of_job(elapsed, &snap)
    } else {
        None
    };
    *job = Some(snap);
    out
}

/// A ticker whose first tick is one second from now. (`interval`'s immediate first tick is
/// not free: the timer rounds it up to its next millisecond, which cost every MCP call ~1 ms.)
pub(super) fn every_second() -> tokio::time::Interval {
    let period = Duration::from_secs(1);
    tokio::time::interval_at(Instant::now() + period, period)
}

fn done(result: CallResult) -> Outcome {
    Outcome::Done {
        result: Box::new(result),
        resolved: None,
    }
}

fn unknown(approval_id: &str) -> Outcome {
    Outcome::Unknown {
        message: format!(
            "no call of this client waits under approval id '{approval_id}': it was never issued to this client, its result was already returned, or it was withdrawn"
        ),
    }
}

fn result_of(call: &ToolCall, status: CallStatus, content: String) -> CallResult {
    CallResult {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        status,
        ok: false,
        content,
        details: None,
        preview: None,
        waited: false,
    }
}

/// Run the call and note, from the engine's events, when it enters the queue and how the
/// author answered.
async fn run_tracked(
    engine: Arc<Engine>,
    session: SessionId,
    call: ToolCall,
    approval: Approval,
    mut events: broadcast::Receiver<EngineEvent>,
    tx: watch::Sender<Track>,
) {
    let call_id = call.id.clone();
    let fut = engine.call(&session, call, approval);
    tokio::pin!(fut);
    let mut events_open = true;
    loop {
        tokio::select! {
            biased;
            r = &mut fut => {
                while let Ok(ev) = events.try_recv() {
                    observe(&tx, &call_id, &session, ev);
                }
                tx.send_modify(|t| t.result = Some(r));
                return;
            }
            ev = events.recv(), if events_open => match ev {
                Ok(ev) => observe(&tx, &call_id, &session, ev),
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    // Missed events: the queue itself says whether the call waits.
                    if let Some(p) = engine.pending().into_iter().find(|p| p.call_id == call_id) {
                        observe(&tx, &call_id, &session, EngineEvent::ApprovalRequested { call: p });
                    }
                }
                Err(broadcast::error::RecvError::Closed) => events_open = false,
            },
        }
    }
}

fn observe(tx: &watch::Sender<Track>, call_id: &str, session: &str, ev: EngineEvent) {
    match ev {
        EngineEvent::ApprovalRequested { call: p }
            if p.call_id == call_id && p.session_id == session =>
        {
            let pending = PendingApproval {
                approval_id: p.approval_id.clone(),
                session_id: p.session_id.clone(),
                tool: p.tool.clone(),
                preview: p.preview.summary.clone(),
                preview_hash: preview_hash(&p.preview),
            };
            tx.send_modify(|t| t.pending = Some(pending));
        }
        EngineEvent::Log { session_id, line } if session_id == session => {
            if let LogRecord::ApprovalResolved {
                approval_id,
                call_id: c,
                decision,
                reason,
                edited_args,
                ..
            } = line.record
            {
                if c == call_id {
                    tx.send_modify(|t| {
                        t.resolved = Some(Resolved {
                            approval_id,
                            decision,
                            reason,
                            edited_args,
                        })
                    });
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{LogLine, SessionInfo};

    fn session(id: &str, parent: Option<&str>) -> EngineEvent {
        let info: SessionInfo = serde_json::from_value(serde_json::json!({
            "id": id, "profile": "writer", "title": "t", "mode": "normal", "state": "running",
            "created_at": "2026-12-02T00:00:00Z", "parent": parent,
            "input_tokens": 0, "output_tokens": 0, "cost": 0.0
        }))
        .unwrap_or_else(|e| panic!("session info: {e}"));
        EngineEvent::Session { session: info }
    }

    fn tool_call(session: &str, tool: &str) -> EngineEvent {
        EngineEvent::Log {
            session_id: session.into(),
            line: LogLine {
                ts: "2026-12-02T00:00:00Z".into(),
                record: LogRecord::ToolCall {
                    call_id: "c".into(),
                    tool: tool.into(),
                    args: serde_json::json!({}),
                    by: "agent".into(),
                },
            },
        }
    }

    /// `invoke_agent` waiting for its agent: the client hears each tool call of the child
    /// session (and of no other session).
    #[test]
    fn a_childs_tool_calls_are_the_progress_of_the_call_that_started_it() {
        let mut c = Children::default();
        let t = Duration::from_secs(3);
        assert_eq!(c.observe("1", session("7", Some("1")), t), None);
        assert_eq!(c.observe("1", session("8", Some("2")), t), None, "not ours");
        assert_eq!(c.observe("1", tool_call("8", "write"), t), None);
        let p = c.observe("1", tool_call("7", "read"), t).unwrap();
        assert_eq!(p.done, Some(1));
        assert_eq!(
            p.message,
            "agent session 7 is working: 1 tool call, the last read"
        );
        let p = c.observe("1", tool_call("7", "edit"), t).unwrap();
        assert_eq!((p.done, p.total), (Some(2), None));
        assert!(
            p.message.ends_with("2 tool calls, the last edit"),
            "{}",
            p.message
        );
    }
}
