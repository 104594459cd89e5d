//! The heartbeat scheduler (issue "Heartbeat agents"; Fusion's `HeartbeatTriggerScheduler` and
//! `HeartbeatMonitor`): it wakes durable agents (`crate::board::agents`) for bounded runs while
//! nbook runs — beside the board scheduler, with its lifetime (the TUI, `nbook board run`).
//! Nothing here survives the process: once it stops no timer fires.
//!
//! **Which agents.** An agent runs as a heartbeat when its role is `custom` (a standing agent;
//! its sessions run with the `heartbeat` profile) or when it has a `heartbeatIntervalMs` set
//! (any role). Those wake:
//! - on their **timer**: `effective_interval_ms` (never more often than every 5 minutes) after
//!   the later of the agent's last run start and the scheduler's start — so opening nbook does
//!   not wake everybody at once, and a run for another reason resets the timer;
//! - on an **assignment**: an open task assigned to it (`assignee`, what `fn_delegate_task`
//!   sets) it has not been woken for (the run's `trigger` records the tasks);
//! - on a **message**: unread mail to it sent in `immediate` mode (`wakeRecipient`);
//!   `on-heartbeat` mail wakes nobody and is delivered at the agent's next run.
//!
//! Any durable agent can be woken **manually** ([`Heartbeats::wake`], `nbook agent wake`).
//!
//! **A run.** A session of the agent's profile with `board.agent` set (its identity goes into
//! the system prompt, `agent::run_loop`), whose first message says why it woke, lists its
//! tasks, the manuscript files changed since its last run started, its unread mail (marked read
//! as it is delivered: exactly once) and its `heartbeatProcedurePath` file. It is bounded by
//! `heartbeatTimeoutMs` (default [`DEFAULT_TIMEOUT_MS`]): past it the run is cancelled and
//! recorded `timed-out`. It ends when the agent calls `fn_heartbeat_done` (its summary is the
//! run's) or its turn ends (the final text is). Runs are rows of `nbook_agent_run`
//! (`crate::board::agent_runs`).
//!
//! **Coalescing.** `maxConcurrentRuns` caps an agent's simultaneous runs. A wake that finds the
//! cap full is kept as the agent's one pending wake (later wakes merge into it: their tasks are
//! added, the reason with the highest priority — manual, assignment, message, timer — stays);
//! it starts when a run ends. So nothing is lost and nothing runs twice.
//!
//! **One per project.** Only the process holding `.nbook/scheduler.lock`
//! (`super::scheduler_lock`) runs this scheduler; the caller takes the lock and shows the
//! holder's pid when another nbook has it.
//!
//! **Time.** The timer reads a [`Clock`]; tests drive a [`ManualClock`] instead of shortening
//! the 5-minute floor, which stays fixed for users.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::{broadcast, Notify};
use tokio_util::sync::CancellationToken;

use crate::agent::host::Host;
use crate::board::agent_runs::{self as runs, WakeReason};
use crate::board::agents::{self, AgentRole, DurableAgent};
use crate::board::mailbox::{self, Message};
use crate::board::{Board, BoardError, Outcome};
use crate::engine::agents::{InvokeMode, InvokeOutcome, InvokeRequest};
use crate::engine::{Engine, Mode};

/// The actor the scheduler's board notices are sent under.
pub const ACTOR: &str = "heartbeat";
/// A run's bound when the agent sets no `heartbeatTimeoutMs` (the board's step default).
pub const DEFAULT_TIMEOUT_MS: u64 = super::DEFAULT_STEP_TIMEOUT_MS;
/// How often the scheduler looks at the agents when nothing woke it.
const IDLE_TICK: Duration = Duration::from_secs(5);
/// Most unread mails delivered in one wake message (the rest wait for the next run).
const MAIL_LIMIT: usize = 50;
/// Most changed manuscript files listed in one wake message.
const CHANGED_LIMIT: usize = 100;
/// Most characters of the procedure file put into the wake message.
const PROCEDURE_LIMIT: usize = 20_000;

/// Milliseconds since the epoch, as the scheduler sees them.
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> u64;
}

/// The wall clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
}

/// A clock that moves only when told (tests).
pub struct ManualClock(AtomicU64);

impl ManualClock {
    pub fn new(ms: u64) -> ManualClock {
        ManualClock(AtomicU64::new(ms))
    }
    /// Starting at the wall clock's now.
    pub fn at_now() -> ManualClock {
        ManualClock::new(SystemClock.now_ms())
    }
    pub fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_millis() as u64, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Whether `a` wakes on its own (timer, assignment, message).
pub fn runs_as_heartbeat(a: &DurableAgent) -> bool {
    a.role == AgentRole::Custom || a.runtime_config.heartbeat_interval_ms.is_some()
}

/// What the heartbeat scheduler did, as it happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum HeartbeatEvent {
    RunStarted {
        agent: String,
        #[serde(rename = "runId")]
        run_id: i64,
        reason: WakeReason,
        #[serde(rename = "sessionId")]
        session_id: String,
    },
    RunEnded {
        agent: String,
        #[serde(rename = "runId")]
        run_id: i64,
        #[serde(rename = "sessionId")]
        session_id: String,
        status: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        /// How the agent's turn ended (completed | waiting — calls needed the author and were
        /// not run | error); none when it was cut (timeout, stop) or dropped.
        #[serde(rename = "turnStatus", skip_serializing_if = "Option::is_none")]
        turn_status: Option<String>,
    },
    /// A wake found the agent's `maxConcurrentRuns` full: it waits as the agent's pending wake.
    Coalesced { agent: String, reason: WakeReason },
    /// A wake that could not start (the agent keeps no pending wake for it).
    Problem { agent: String, message: String },
}

/// What [`Heartbeats::wake`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Woken {
    Started {
        run_id: i64,
        session_id: String,
    },
    /// The agent's runs are at its cap; the wake starts when one ends.
    Coalesced,
}

/// Why a wake could not start.
#[derive(Debug, thiserror::Error)]
pub enum WakeError {
    #[error("no durable agent '{id}': durable agents have ids agent-<n>; list them with `nbook call fn_list_agents` (or the Board's agent list)")]
    UnknownAgent { id: String },
    #[error("the heartbeat scheduler has stopped; no agent wakes")]
    Stopped,
    #[error("{agent}: the {profile} session could not be created: {message}")]
    Session {
        agent: String,
        profile: String,
        message: String,
    },
    #[error("{agent}: its run could not start: {message}")]
    Start { agent: String, message: String },
    #[error(transparent)]
    Board(#[from] BoardError),
}

/// A wake waiting for a free run slot.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pending {
    reason: WakeReason,
    tasks: BTreeSet<String>,
}

fn rank(r: WakeReason) -> u8 {
    match r {
        WakeReason::Manual => 3,
        WakeReason::Assignment => 2,
        WakeReason::Message => 1,
        WakeReason::Timer => 0,
    }
}

impl Pending {
    fn merge(&mut self, other: Pending) {
        if rank(other.reason) > rank(self.reason) {
            self.reason = other.reason;
        }
        self.tasks.extend(other.tasks);
    }
}

#[derive(Clone, Debug)]
struct Live {
    run_id: i64,
    session_id: String,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct Heartbeats {
    engine: Arc<Engine>,
    host: Arc<Host>,
    board: Board,
    clock: Arc<dyn Clock>,
    /// When this scheduler started (the timer's base for an agent that never ran).
    started_ms: u64,
    live: Mutex<BTreeMap<String, Vec<Live>>>,
    pending: Mutex<BTreeMap<String, Pending>>,
    /// Runs this scheduler cancelled (stop): recorded `cancelled`, not `failed`.
    cancelled: Mutex<BTreeSet<i64>>,
    /// Agents whose pending wake was reported coalesced (once per pending wake).
    reported: Mutex<BTreeSet<String>>,
    /// One tick at a time: two would both see a free slot.
    ticking: Mutex<()>,
    stopped: AtomicBool,
    wake: Notify,
    events: broadcast::Sender<HeartbeatEvent>,
    me: Weak<Heartbeats>,
}

impl Heartbeats {
    pub fn new(engine: Arc<Engine>, host: Arc<Host>) -> Arc<Heartbeats> {
        Heartbeats::with_clock(engine, host, Arc::new(SystemClock))
    }

    pub fn with_clock(
        engine: Arc<Engine>,
        host: Arc<Host>,
        clock: Arc<dyn Clock>,
    ) -> Arc<Heartbeats> {
        let ws = engine.workspace().clone();
        let started_ms = clock.now_ms();
        Arc::new_cyclic(|me| Heartbeats {
            board: Board::new(ws.root(), ws.name()),
            engine,
            host,
            clock,
            started_ms,
            live: Mutex::new(BTreeMap::new()),
            pending: Mutex::new(BTreeMap::new()),
            cancelled: Mutex::new(BTreeSet::new()),
            reported: Mutex::new(BTreeSet::new()),
            ticking: Mutex::new(()),
            stopped: AtomicBool::new(false),
            wake: Notify::new(),
            events: broadcast::channel(256).0,
            me: me.clone(),
        })
    }

    pub fn subscribe(&self) -> broadcast::Receiver<HeartbeatEvent> {
        self.events.subscribe()
    }

    fn emit(&self, e: HeartbeatEvent) {
        let _ = self.events.send(e);
    }

    /// Look at the agents again soon (mail or an assignment may have arrived).
    pub fn poke(&self) {
        self.wake.notify_one();
    }

    /// The agents with a run now: agent id → session ids.
    pub fn running(&self) -> BTreeMap<String, Vec<String>> {
        lock(&self.live)
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (k.clone(), v.iter().map(|l| l.session_id.clone()).collect()))
            .collect()
    }

    /// Whether `agent` has a wake waiting for a free slot.
    pub fn has_pending(&self, agent: &str) -> bool {
        lock(&self.pending).contains_key(agent)
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Stop waking agents and cancel the running runs (recorded `cancelled`).
    pub fn stop(&self) {
        if self.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        lock(&self.pending).clear();
        lock(&self.reported).clear();
        let live: Vec<Live> = lock(&self.live).values().flatten().cloned().collect();
        for l in live {
            lock(&self.cancelled).insert(l.run_id);
            self.host.cancel(&l.session_id);
        }
        self.wake.notify_one();
    }

    /// Run the scheduler until `stop` fires: it closes the runs a stopped nbook left marked
    /// running, then ticks now, whenever the board changes, a run ends or [`IDLE_TICK`]
    /// passes. When `stop` fires it [`stop`](Heartbeats::stop)s.
    pub fn spawn(self: &Arc<Self>, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        let now = self.clock.now_ms();
        if let Err(e) = self.board.read(|c| runs::close_orphans(c, now)) {
            tracing::warn!("heartbeat runs left running could not be closed: {e}");
        }
        let mut engine_events = self.engine.subscribe();
        let weak = self.me.clone();
        let stop2 = stop.clone();
        tokio::spawn(async move {
            loop {
                let ev = tokio::select! {
                    _ = stop2.cancelled() => break,
                    ev = engine_events.recv() => ev,
                };
                let Some(me) = weak.upgrade() else { break };
                match ev {
                    Ok(crate::engine::EngineEvent::DomainsChanged { domains, .. })
                        if domains.contains(&crate::protocol::Domain::Board) =>
                    {
                        me.wake.notify_one()
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => me.wake.notify_one(),
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                if stop.is_cancelled() {
                    break;
                }
                let m = me.clone();
                if tokio::task::spawn_blocking(move || m.tick()).await.is_err() {
                    tracing::warn!("the heartbeat scheduler's tick panicked; it goes on");
                }
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = me.wake.notified() => {}
                    _ = tokio::time::sleep(IDLE_TICK) => {}
                }
            }
            me.stop();
        })
    }

    /// One look at the heartbeat agents: every due wake starts a run or waits as the agent's
    /// pending wake. The number of runs started.
    pub fn tick(&self) -> usize {
        if self.is_stopped() {
            return 0;
        }
        let _one = lock(&self.ticking);
        let all = match self.board.read(agents::all) {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!("heartbeat: the agents could not be read: {e}");
                return 0;
            }
        };
        let mut started = 0;
        for a in all.iter().filter(|a| runs_as_heartbeat(a)) {
            match self.due(a) {
                Ok(Some(w)) => self.queue(&a.id, w),
                Ok(None) => {}
                Err(e) => {
                    self.emit(HeartbeatEvent::Problem {
                        agent: a.id.clone(),
                        message: e.to_string(),
                    });
                    continue;
                }
            }
            if let Some(Woken::Started { .. }) = self.start_pending(a) {
                started += 1;
            }
        }
        started
    }

    /// Wake `agent_id` now (the author's manual wake). Any durable agent can be woken so.
    pub fn wake(&self, agent_id: &str) -> Result<Woken, WakeError> {
        if self.is_stopped() {
            return Err(WakeError::Stopped);
        }
        let _one = lock(&self.ticking);
        let a = self
            .board
            .read(|c| agents::load(c, agent_id))?
            .ok_or_else(|| WakeError::UnknownAgent {
                id: agent_id.to_string(),
            })?;
        self.queue(
            &a.id,
            Pending {
                reason: WakeReason::Manual,
                tasks: BTreeSet::new(),
            },
        );
        match self.try_start(&a) {
            Ok(Some(w)) => Ok(w),
            Ok(None) => Ok(Woken::Coalesced),
            Err(e) => Err(e),
        }
    }

    /// The wake `a` is due for now, if any.
    fn due(&self, a: &DurableAgent) -> Result<Option<Pending>, BoardError> {
        let (mail, tasks, last) = self.board.read(|c| {
            let mail = mailbox::inbox(c, std::slice::from_ref(&a.id), true, MAIL_LIMIT)?;
            let mut fresh = Vec::new();
            for t in agents::assigned_tasks(c, &a.id)? {
                if !runs::woken_for_assignment(c, &a.id, &t)? {
                    fresh.push(t);
                }
            }
            Ok((mail, fresh, runs::last(c, &a.id)?))
        })?;
        let mut due: Option<Pending> = None;
        let mut add = |reason: WakeReason, tasks: BTreeSet<String>| {
            let p = Pending { reason, tasks };
            match &mut due {
                Some(d) => d.merge(p),
                None => due = Some(p),
            }
        };
        if let Some(iv) = a.runtime_config.effective_interval_ms() {
            let base = last
                .as_ref()
                .map(|r| r.started_ms.max(0) as u64)
                .unwrap_or(0)
                .max(self.started_ms);
            if self.clock.now_ms() >= base.saturating_add(iv) {
                add(WakeReason::Timer, BTreeSet::new());
            }
        }
        // Mail to an agent whose session works now is the mail tool's to deliver there
        // (`live_session_of`, the same rule), so it never reaches the agent twice.
        if mail.iter().any(wakes)
            && crate::engine::mail::live_session_of(&self.board, &self.engine.sessions(), &a.id)
                .is_none()
        {
            add(WakeReason::Message, BTreeSet::new());
        }
        if !tasks.is_empty() {
            add(WakeReason::Assignment, tasks.into_iter().collect());
        }
        Ok(due)
    }

    /// Keep `w` as `agent`'s pending wake (merged into the one already waiting).
    fn queue(&self, agent: &str, w: Pending) {
        let mut pending = lock(&self.pending);
        match pending.get_mut(agent) {
            Some(p) => p.merge(w),
            None => {
                pending.insert(agent.to_string(), w);
            }
        }
    }

    fn start_pending(&self, a: &DurableAgent) -> Option<Woken> {
        match self.try_start(a) {
            Ok(w) => w,
            Err(e) => {
                self.emit(HeartbeatEvent::Problem {
                    agent: a.id.clone(),
                    message: e.to_string(),
                });
                None
            }
        }
    }

    /// Start `a`'s pending wake when it has a free slot; `Some(Coalesced)` when the wake must
    /// wait (reported once per pending wake), None when nothing was pending.
    fn try_start(&self, a: &DurableAgent) -> Result<Option<Woken>, WakeError> {
        let cap = a.runtime_config.max_concurrent_runs.max(1) as usize;
        let running = lock(&self.live).get(&a.id).map_or(0, Vec::len);
        let Some(p) = lock(&self.pending).get(&a.id).cloned() else {
            return Ok(None);
        };
        if running >= cap {
            if lock(&self.reported).insert(a.id.clone()) {
                self.emit(HeartbeatEvent::Coalesced {
                    agent: a.id.clone(),
                    reason: p.reason,
                });
            }
            return Ok(Some(Woken::Coalesced));
        }
        lock(&self.pending).remove(&a.id);
        lock(&self.reported).remove(&a.id);
        self.start(a, p).map(Some)
    }

    /// Start one run of `a` for wake `p`.
    fn start(&self, a: &DurableAgent, p: Pending) -> Result<Woken, WakeError> {
        let profile = a.role.profile();
        let session_err = |message: String| WakeError::Session {
            agent: a.id.clone(),
            profile: profile.to_string(),
            message,
        };
        let title = format!("{} — heartbeat ({})", a.name, p.reason.as_str());
        let info = self
            .engine
            .create_session(profile, Mode::Normal, &title, None)
            .map_err(|e| session_err(e.to_string()))?;
        let sid = info.id.clone();
        self.engine
            .set_session_state(
                &sid,
                vec![(
                    crate::tools::fusion::memory::SESSION_AGENT.to_string(),
                    json!(a.id),
                )],
            )
            .map_err(|e| session_err(e.to_string()))?;
        let (mut mail, last) = self.board.read(|c| {
            Ok((
                mailbox::inbox(c, std::slice::from_ref(&a.id), true, MAIL_LIMIT)?,
                runs::last(c, &a.id)?,
            ))
        })?;
        mail.reverse();
        let since = last.map(|r| r.started_ms.max(0) as u64);
        let changed = changed_files(self.engine.workspace().root(), since);
        let procedure = a.heartbeat_procedure_path.as_deref().map(|path| {
            self.engine
                .workspace()
                .resolve(path, crate::workspace::Access::Read)
                .map_err(|e| e.to_string())
                .and_then(|r| std::fs::read_to_string(r.abs).map_err(|e| e.to_string()))
                .map_err(|e| (path.to_string(), e))
        });
        let now = self.clock.now_ms();
        let tasks: Vec<String> = p.tasks.iter().cloned().collect();
        let trigger = (!tasks.is_empty()).then(|| tasks.join(","));
        let ids: Vec<String> = mail.iter().map(|m| m.id.clone()).collect();
        let committed = self.board.commit(|c: &rusqlite::Connection| {
            let id = runs::start(c, &a.id, p.reason, trigger.as_deref(), &sid, now)?;
            mailbox::mark_read(c, &ids)?;
            Ok(Outcome {
                value: json!(id),
                ..Outcome::default()
            })
        })?;
        let run_id = committed.outcome.value.as_i64().unwrap_or_default();
        let msg = wake_message(a, p.reason, &tasks, &mail, &changed, since, procedure);
        lock(&self.live)
            .entry(a.id.clone())
            .or_default()
            .push(Live {
                run_id,
                session_id: sid.clone(),
            });
        let req = InvokeRequest {
            caller: None,
            session_id: sid.clone(),
            message: Some(msg),
            input: None,
            mode: InvokeMode::Prompt,
            model: None,
            origin_call_id: None,
        };
        let rx = match self.host.submit(req) {
            Ok(rx) => rx,
            Err(e) => {
                self.forget(&a.id, run_id);
                let message = e.to_string();
                let _ = self.board.read(|c| {
                    runs::end(c, run_id, runs::FAILED, Some(&message), self.clock.now_ms())?;
                    // Nothing read them: they wait for the next run.
                    for id in &ids {
                        mailbox::mark_unread(c, id)?;
                    }
                    Ok(())
                });
                return Err(WakeError::Start {
                    agent: a.id.clone(),
                    message,
                });
            }
        };
        // The Board's agent list shows the run (and the mail now read).
        self.engine.board_changed(ACTOR);
        self.emit(HeartbeatEvent::RunStarted {
            agent: a.id.clone(),
            run_id,
            reason: p.reason,
            session_id: sid.clone(),
        });
        let limit = a
            .runtime_config
            .heartbeat_timeout_ms
            .map(|ms| ms.max(0) as u64)
            .unwrap_or(DEFAULT_TIMEOUT_MS);
        if let Some(me) = self.me.upgrade() {
            let agent = a.id.clone();
            let sid2 = sid.clone();
            tokio::runtime::Handle::current().spawn(async move {
                let (outcome, timed_out) = super::outcome_within(&me.host, &sid2, rx, limit).await;
                let m = me.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    m.finished(&agent, run_id, &sid2, outcome, timed_out)
                })
                .await;
                me.wake.notify_one();
            });
        }
        Ok(Woken::Started {
            run_id,
            session_id: sid,
        })
    }

    fn forget(&self, agent: &str, run_id: i64) {
        if let Some(v) = lock(&self.live).get_mut(agent) {
            v.retain(|l| l.run_id != run_id);
        }
    }

    /// A run ended: record how, then start the agent's pending wake if any.
    fn finished(
        &self,
        agent: &str,
        run_id: i64,
        sid: &str,
        outcome: Option<InvokeOutcome>,
        timed_out: Option<u64>,
    ) {
        let cancelled = lock(&self.cancelled).remove(&run_id);
        let (status, summary) = match (&outcome, timed_out) {
            (_, Some(ms)) => (
                runs::TIMED_OUT,
                Some(format!(
                    "the run went past its heartbeatTimeoutMs ({ms} ms) and was stopped"
                )),
            ),
            _ if cancelled => (runs::CANCELLED, Some("nbook stopped during the run".into())),
            (None, None) => (runs::FAILED, Some("the run was dropped".into())),
            (Some(o), None) if o.status == "completed" => (runs::DONE, summary_of(o)),
            (Some(o), None) => (
                runs::FAILED,
                Some(
                    o.error
                        .clone()
                        .unwrap_or_else(|| format!("the run ended {}", o.status)),
                ),
            ),
        };
        let now = self.clock.now_ms();
        if let Err(e) = self
            .board
            .read(|c| runs::end(c, run_id, status, summary.as_deref(), now))
        {
            tracing::warn!("heartbeat run {run_id} of {agent}: its end could not be recorded: {e}");
        }
        self.forget(agent, run_id);
        self.engine.board_changed(ACTOR);
        self.emit(HeartbeatEvent::RunEnded {
            agent: agent.to_string(),
            run_id,
            session_id: sid.to_string(),
            status: status.to_string(),
            summary,
            turn_status: outcome
                .as_ref()
                .filter(|_| timed_out.is_none() && !cancelled)
                .map(|o| o.status.clone()),
        });
        if self.is_stopped() {
            return;
        }
        let _one = lock(&self.ticking);
        if let Ok(Some(a)) = self.board.read(|c| agents::load(c, agent)) {
            self.start_pending(&a);
        }
    }
}

/// Whether mail `m` asks to wake its recipient now (sent in `immediate` mode).
fn wakes(m: &Message) -> bool {
    m.metadata.get("wakeRecipient").and_then(Value::as_bool) == Some(true)
}

/// The summary of a run that ended well: `fn_heartbeat_done`'s, else the final text.
fn summary_of(o: &InvokeOutcome) -> Option<String> {
    if let Some(s) = o.data.get("summary") {
        return s.as_str().map(str::to_string);
    }
    Some(crate::board::snippet(&o.final_message, 2000)).filter(|s| !s.is_empty())
}

/// The manuscript files (`manuscript/**`, project-relative) modified at or after `since_ms`
/// (all of them when the agent never ran), sorted.
pub fn changed_files(root: &Path, since_ms: Option<u64>) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.join("manuscript")];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            // Never follow a link out of the project.
            let Ok(ft) = e.file_type() else { continue };
            let path = e.path();
            if ft.is_dir() {
                stack.push(path);
            } else if ft.is_file() {
                let modified = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or(u64::MAX);
                if since_ms.is_none_or(|s| modified >= s) {
                    if let Ok(rel) = path.strip_prefix(root) {
                        out.push(rel.to_string_lossy().replace('\\', "/"));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

/// The first message of a heartbeat run.
pub fn wake_message(
    a: &DurableAgent,
    reason: WakeReason,
    tasks: &[String],
    mail: &[Message],
    changed: &[String],
    since_ms: Option<u64>,
    procedure: Option<Result<String, (String, String)>>,
) -> String {
    let why = match reason {
        WakeReason::Timer => "your heartbeat timer fired".to_string(),
        WakeReason::Assignment => format!("a task was assigned to you ({})", tasks.join(", ")),
        WakeReason::Message => "a message arrived for you".to_string(),
        WakeReason::Manual => "the author woke you".to_string(),
    };
    let mut s = format!(
        "Heartbeat run of {id} ({name}). Wake reason: {r} — {why}.\nDo your procedure for one bounded turn, then call fn_heartbeat_done with a short summary of what you did.",
        id = a.id,
        name = a.name,
        r = reason.as_str()
    );
    if !tasks.is_empty() && reason != WakeReason::Assignment {
        s.push_str(&format!(
            "\n\nTasks newly assigned to you: {}.",
            tasks.join(", ")
        ));
    }
    match since_ms {
        Some(ms) => s.push_str(&format!(
            "\n\n<changed-files since=\"{}\">\nManuscript files changed since your last run started:\n",
            runs::rfc3339(ms)
        )),
        None => s.push_str("\n\n<changed-files since=\"never\">\nThis is your first run; the manuscript files:\n"),
    }
    if changed.is_empty() {
        s.push_str("(none)\n");
    }
    for f in changed.iter().take(CHANGED_LIMIT) {
        s.push_str(&format!("- {f}\n"));
    }
    if changed.len() > CHANGED_LIMIT {
        s.push_str(&format!("… and {} more\n", changed.len() - CHANGED_LIMIT));
    }
    s.push_str("</changed-files>");
    if !mail.is_empty() {
        s.push_str("\n\n<mail>\nYour unread mail (now marked read):\n");
        for m in mail {
            s.push_str(&format!(
                "- {id} from {from} ({at}): {text}\n",
                id = m.id,
                from = m.from_id,
                at = m.created_at,
                text = m.content
            ));
        }
        s.push_str("</mail>");
    }
    match procedure {
        Some(Ok(text)) => {
            let text: String = text.chars().take(PROCEDURE_LIMIT).collect();
            s.push_str(&format!(
                "\n\n<heartbeat-procedure path=\"{}\">\n{}\n</heartbeat-procedure>",
                a.heartbeat_procedure_path.as_deref().unwrap_or_default(),
                text.trim_end()
            ));
        }
        Some(Err((path, e))) => s.push_str(&format!(
            "\n\n(Your heartbeat procedure {path} could not be read: {e}.)"
        )),
        None => {}
    }
    s
}
