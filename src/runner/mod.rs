//! The board's scheduler and lifecycle (issue #16): it runs the book's production board while
//! nbook is open (the TUI) or headless (`nbook board run`), driving each task through role
//! sessions on the real agent host — Planning → triage (writes PROMPT.md; may ask
//! `fn_review_spec` for a spec review) → promoted to Drafting → executor (reports steps with
//! `fn_task_update`, ends with `fn_task_done`) → Review: a reviewer's verdict (REVISE sends the
//! task back to Drafting with the notes, at most `[board] max_rework` times, then it parks for
//! the author; RETHINK sends it back to Planning; APPROVE → `approved`) → merger (told to call
//! `merge_task_draft`, which waits in the approval queue; Done comes from that tool).
//!
//! **Task sessions.** A role session is created with `board.task` set to its task
//! ([`Engine::create_task_session`]); every running session with that key counts against the
//! concurrency limit (`[board] concurrency`, default 2) — children other tools spawn for a
//! task included. A session waiting for the author still runs (it holds its slot).
//!
//! **State.** The board is the record: which stage a task is in is its column and sub-status
//! (`crate::runner::pick` reads them), the verdicts and notes are task-log entries (outcome
//! `revise` / `rethink` / `approve`), steering comments are rows of `nbook_board_steering`.
//! The only state held here is which session works on which task now ([`Runner::status`]) and
//! whether the author stopped the scheduler: stopping is not persisted (a restarted nbook
//! schedules again), and it only stops new sessions — running ones finish their turn.
//! Transitions are the scheduler's own board changes (`tasks::set_stage`, logged with actor
//! `runner`); the agents' changes go through the engine and its approvals as always.
//!
//! **Workflow settings.** The runner reads the effective settings of each task's workflow
//! (`crate::board::workflow`): `workflowStepTimeoutMs` bounds every role session's run (past
//! it the run is cancelled and the task waits for the author), `maxReviewRevisions`, when
//! set, replaces `[board] max_rework` for that workflow's tasks.
//!
//! **Pausing.** A task the author pauses (or archives) while a role session works on it has
//! that session cancelled at the next tick; it keeps its stage, and resuming schedules it.
//!
//! **Steering.** Each tick hands the task's undelivered comments to its live role session as a
//! steer (drained at the next turn boundary); a task with no live session keeps them for its
//! next session's first message. `crate::board::steering::take` marks them delivered in the
//! same transaction, so each is delivered exactly once.

pub mod messages;
pub mod pick;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::{broadcast, Notify};
use tokio_util::sync::CancellationToken;

use crate::agent::host::Host;
use crate::board::review::{self, Verdict};
use crate::board::steering::{self, Steering};
use crate::board::{tasks, Board, Task, DRAFTING, PLANNING, REVIEW};
use crate::engine::agents::{InvokeMode, InvokeOutcome, InvokeRequest};
use crate::engine::{Engine, EngineEvent, SessionState};
use crate::protocol::Domain;

pub use pick::{Next, Role, APPROVED, PARKED, REVISE};

/// The actor the scheduler's own board changes are logged under.
pub const ACTOR: &str = "runner";

/// The workflow setting that bounds one role session's run (ms), and its default when the
/// workflow declares none.
pub const STEP_TIMEOUT: &str = "workflowStepTimeoutMs";
pub const DEFAULT_STEP_TIMEOUT_MS: u64 = 900_000;
/// The workflow setting that bounds review rework cycles.
pub const REVIEW_REVISIONS: &str = "maxReviewRevisions";

/// How often the scheduler looks at the board when nothing woke it.
const IDLE_TICK: Duration = Duration::from_secs(2);

/// A role session the scheduler started and is waiting on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Active {
    pub task: String,
    pub role: Role,
    pub session_id: String,
}

/// A running task session, as the Board's header and `nbook board run` show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionLine {
    pub task: String,
    /// The session's profile (its role).
    pub role: String,
    pub session_id: String,
    /// Waiting for the author (an approval or an answer).
    pub waiting: bool,
}

/// The scheduler as the author sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunnerStatus {
    pub enabled: bool,
    pub running: usize,
    pub limit: usize,
    pub sessions: Vec<SessionLine>,
    /// Runnable tasks that get no session, and why (no model for their role).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<TaskProblem>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskProblem {
    pub task: String,
    pub message: String,
}

/// What the scheduler did, as it happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunnerEvent {
    SessionStarted {
        task: String,
        role: Role,
        #[serde(rename = "sessionId")]
        session_id: String,
    },
    SessionEnded {
        task: String,
        role: Role,
        #[serde(rename = "sessionId")]
        session_id: String,
        status: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A stage change the scheduler made (or a park).
    TaskMoved {
        task: String,
        column: String,
        status: String,
        message: String,
    },
    Steered {
        task: String,
        #[serde(rename = "sessionId")]
        session_id: String,
        comments: usize,
        /// Into the live session (true) or the first message of a new one (false).
        live: bool,
    },
    /// Something the scheduler could not do; the task is unchanged unless a `task_moved`
    /// says otherwise.
    Problem {
        task: String,
        message: String,
    },
    Scheduler {
        enabled: bool,
    },
}

/// What one tick did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tick {
    pub started: usize,
    pub promoted: usize,
}

pub struct Runner {
    engine: Arc<Engine>,
    host: Arc<Host>,
    board: Board,
    limit: usize,
    rework_bound: u32,
    enabled: AtomicBool,
    active: Mutex<BTreeMap<String, Active>>,
    /// Why a task could not get its session, by task (reported once per reason).
    problems: Mutex<BTreeMap<String, String>>,
    /// One tick at a time: two would both see a free slot.
    ticking: Mutex<()>,
    wake: Notify,
    events: broadcast::Sender<RunnerEvent>,
    me: Weak<Runner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Runner {
    /// A scheduler for the engine's project, running sessions on `host`, with the limits of
    /// `[board]` in the engine's config. It starts enabled; [`Runner::spawn`] runs it.
    pub fn new(engine: Arc<Engine>, host: Arc<Host>) -> Arc<Runner> {
        let cfg = engine.config().board.clone();
        let ws = engine.workspace().clone();
        Arc::new_cyclic(|me| Runner {
            board: Board::new(ws.root(), ws.name()),
            engine,
            host,
            limit: cfg.limit(),
            rework_bound: cfg.rework_bound(),
            enabled: AtomicBool::new(true),
            active: Mutex::new(BTreeMap::new()),
            problems: Mutex::new(BTreeMap::new()),
            ticking: Mutex::new(()),
            wake: Notify::new(),
            events: broadcast::channel(256).0,
            me: me.clone(),
        })
    }

    pub fn subscribe(&self) -> broadcast::Receiver<RunnerEvent> {
        self.events.subscribe()
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Stop (false) or start (true) scheduling new sessions; running ones go on.
    pub fn set_enabled(&self, on: bool) {
        if self.enabled.swap(on, Ordering::Relaxed) != on {
            // A stopped scheduler starts nothing: what kept tasks from starting is moot
            // until it runs again (and then it is found again).
            lock(&self.problems).clear();
            self.emit(RunnerEvent::Scheduler { enabled: on });
            self.wake.notify_one();
        }
    }

    /// Look at the board again soon (something changed).
    pub fn poke(&self) {
        self.wake.notify_one();
    }

    fn emit(&self, e: RunnerEvent) {
        let _ = self.events.send(e);
    }

    /// The running task sessions (every session with `board.task` that runs on the host).
    pub fn task_sessions(&self) -> Vec<SessionLine> {
        // A session whose call waits in the queue holds its task even with no run in this
        // process (a call restored after a restart, or left by `nbook board run --once`):
        // approving it resumes that session, so starting another would do the stage twice.
        let waiting: HashSet<String> = self
            .engine
            .pending()
            .into_iter()
            .map(|p| p.session_id)
            .collect();
        self.engine
            .sessions()
            .into_iter()
            .filter(|s| self.host.is_running(&s.id) || waiting.contains(&s.id))
            .filter_map(|s| {
                let task = self.engine.session_task(&s.id)?;
                Some(SessionLine {
                    task,
                    role: s.profile.clone(),
                    session_id: s.id.clone(),
                    waiting: matches!(
                        s.state,
                        SessionState::WaitingApproval | SessionState::WaitingInput
                    ),
                })
            })
            .collect()
    }

    pub fn status(&self) -> RunnerStatus {
        let sessions = self.task_sessions();
        RunnerStatus {
            enabled: self.is_enabled(),
            running: sessions.len(),
            limit: self.limit,
            sessions,
            problems: lock(&self.problems)
                .iter()
                .map(|(task, message)| TaskProblem {
                    task: task.clone(),
                    message: message.clone(),
                })
                .collect(),
        }
    }

    /// The role sessions the scheduler started and has not seen end yet.
    pub fn active(&self) -> Vec<Active> {
        lock(&self.active).values().cloned().collect()
    }

    /// Run the scheduler until `stop` fires: a tick now, then whenever the board changes, a
    /// session ends or [`IDLE_TICK`] passes.
    pub fn spawn(self: &Arc<Self>, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        // Board changes (the author's steer, move or pause; an agent's board call) wake it.
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
                    Ok(EngineEvent::DomainsChanged {
                        domains,
                        session_id,
                        ..
                    }) if domains.contains(&Domain::Board) && session_id != ACTOR => {
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
                let m = me.clone();
                if tokio::task::spawn_blocking(move || m.tick()).await.is_err() {
                    tracing::warn!("the board scheduler's tick panicked; it goes on");
                }
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = me.wake.notified() => {}
                    _ = tokio::time::sleep(IDLE_TICK) => {}
                }
            }
        })
    }

    /// One look at the board: deliver waiting steering comments to live sessions, then (when
    /// enabled) promote planned tasks and start role sessions for the free slots.
    pub fn tick(&self) -> Tick {
        let _one = lock(&self.ticking);
        let mut done = Tick::default();
        let all = match self.board.read(|c| tasks::all(c, None)) {
            Ok(t) => t,
            Err(e) => {
                self.emit(RunnerEvent::Problem {
                    task: String::new(),
                    message: format!("cannot read the board: {e}"),
                });
                return done;
            }
        };
        self.stop_paused(&all);
        self.deliver_live_steering();
        if !self.is_enabled() {
            return done;
        }
        let running = self.task_sessions();
        let free = self.limit.saturating_sub(running.len());
        let active = self.active();
        let busy: HashSet<&str> = active
            .iter()
            .map(|a| a.task.as_str())
            .chain(running.iter().map(|s| s.task.as_str()))
            .collect();
        for (id, next) in pick::pick(&all, &busy, free) {
            let Some(t) = all.iter().find(|t| t.id == id) else {
                continue;
            };
            match next {
                Next::Promote => {
                    if self.promote(t) {
                        done.promoted += 1;
                    }
                }
                Next::Start(role) => {
                    if let Err(e) = self.host.model_for(role.profile()) {
                        self.cannot_start(t, role, &e);
                        continue;
                    }
                    lock(&self.problems).remove(&t.id);
                    if self.start(t, role) {
                        done.started += 1;
                    }
                }
                Next::Wait(_) => {}
            }
        }
        done
    }

    /// Tick until nothing more happens without the author: no role session runs except those
    /// waiting for the author, and a tick starts nothing (`nbook board run --once`). Returns
    /// the sessions left waiting.
    pub async fn run_until_quiet(self: &Arc<Self>, stop: &CancellationToken) -> Vec<SessionLine> {
        loop {
            let m = self.clone();
            let tick = tokio::task::spawn_blocking(move || m.tick())
                .await
                .unwrap_or_default();
            let busy = self.task_sessions();
            let working = busy.iter().any(|s| !s.waiting);
            // A session that ended but whose stage move is not made yet.
            let pending_ends = self
                .active()
                .iter()
                .any(|a| !self.host.is_running(&a.session_id));
            if tick.started == 0 && tick.promoted == 0 && !working && !pending_ends {
                return busy;
            }
            tokio::select! {
                _ = stop.cancelled() => return self.task_sessions(),
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
            }
        }
    }

    fn commit(&self, t: &Task, op: impl crate::board::Op) -> bool {
        match self.board.commit(op) {
            Ok(c) => {
                self.engine.board_changed(ACTOR);
                if let Value::Object(v) = &c.outcome.value {
                    self.emit(RunnerEvent::TaskMoved {
                        task: t.id.clone(),
                        column: v
                            .get("column")
                            .and_then(Value::as_str)
                            .unwrap_or(&t.column)
                            .to_string(),
                        status: v
                            .get("status")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        message: c.outcome.text.clone(),
                    });
                }
                true
            }
            Err(e) => {
                self.emit(RunnerEvent::Problem {
                    task: t.id.clone(),
                    message: e.to_string(),
                });
                false
            }
        }
    }

    /// Move `t` from the column it is in to `column` with `status`, logging `why`.
    fn stage(&self, t: &Task, column: &str, status: &str, why: &str, outcome: &str) -> bool {
        let (id, from) = (t.id.clone(), t.column.clone());
        let stage = tasks::Stage {
            from: &from,
            column,
            status,
            why,
            outcome: Some(outcome),
            actor: ACTOR,
        };
        self.commit(t, |c: &rusqlite::Connection| {
            tasks::set_stage(c, &id, &stage)
        })
    }

    /// Leave `t` for the author, saying why.
    fn park(&self, t: &Task, why: &str) -> bool {
        self.stage(
            t,
            &t.column.clone(),
            PARKED,
            &format!("{why} — the task waits for the author (pause and resume it to retry)"),
            "parked",
        )
    }

    fn promote(&self, t: &Task) -> bool {
        let id = t.id.clone();
        self.commit(t, |c: &rusqlite::Connection| {
            tasks::promote(c, &id, false, Some(ACTOR))
        })
    }

    fn take_steering(&self, task: &str, session: &str) -> Vec<Steering> {
        let (task, session) = (task.to_string(), session.to_string());
        self.board
            .commit(|c: &rusqlite::Connection| steering::take(c, &task, &session))
            .ok()
            .and_then(|c| serde_json::from_value(c.outcome.value).ok())
            .unwrap_or_default()
    }

    fn release_steering(&self, comments: &[Steering]) {
        let ids: Vec<i64> = comments.iter().map(|c| c.id).collect();
        if ids.is_empty() {
            return;
        }
        if let Err(e) = self
            .board
            .commit(|c: &rusqlite::Connection| steering::release(c, &ids))
        {
            tracing::warn!("steering comments {ids:?} could not be put back: {e}");
        }
    }

    /// The author paused (or archived) a task a role session works on: stop that session now
    /// (its task keeps its stage and steps; resuming schedules the stage again).
    fn stop_paused(&self, all: &[Task]) {
        for a in self.active() {
            let stop = all.iter().find(|t| t.id == a.task).is_none_or(|t| {
                t.status == crate::board::PAUSED || t.column == crate::board::ARCHIVED
            });
            if !stop {
                continue;
            }
            // Children it spawned (fn_spawn_agent) run as background jobs, which a cancelled
            // parent does not reach; they work on the same task, so they stop with it.
            let children = crate::tools::fusion::agents::stop_children_of(
                self.engine.as_ref(),
                &a.session_id,
                self.engine.session_state(&a.session_id),
            );
            if self.host.cancel(&a.session_id) || !children.is_empty() {
                let mut message = format!(
                    "the {} session {} was stopped: the task is paused or archived",
                    a.role.profile(),
                    a.session_id
                );
                if !children.is_empty() {
                    message.push_str(&format!(
                        " (and the agents it spawned: session {})",
                        children.join(", ")
                    ));
                }
                self.emit(RunnerEvent::Problem {
                    task: a.task.clone(),
                    message,
                });
            }
        }
    }

    /// Give each live role session the comments waiting for its task.
    fn deliver_live_steering(&self) {
        for a in self.active() {
            if !self.host.is_running(&a.session_id) {
                continue;
            }
            let waiting = self
                .board
                .read(|c| steering::undelivered(c, &a.task))
                .unwrap_or(0);
            if waiting == 0 {
                continue;
            }
            let comments = self.take_steering(&a.task, &a.session_id);
            if comments.is_empty() {
                continue;
            }
            let req = InvokeRequest {
                caller: None,
                session_id: a.session_id.clone(),
                message: Some(messages::live_steering(&comments)),
                input: None,
                mode: InvokeMode::Steer,
                model: None,
                origin_call_id: None,
            };
            match self.host.submit(req) {
                Ok(_) => self.emit(RunnerEvent::Steered {
                    task: a.task.clone(),
                    session_id: a.session_id.clone(),
                    comments: comments.len(),
                    live: true,
                }),
                // It ended meanwhile: the comments wait for the next session.
                Err(_) => self.release_steering(&comments),
            }
        }
    }

    /// A runnable task gets no session (no model for its role): said once per reason, the
    /// task left as it is; the next tick tries again (a reloaded config.toml applies).
    fn cannot_start(&self, t: &Task, role: Role, why: &str) {
        let why = format!("no {} session: {why}", role.profile());
        let mut p = lock(&self.problems);
        if p.get(&t.id) == Some(&why) {
            return;
        }
        p.insert(t.id.clone(), why.clone());
        drop(p);
        self.emit(RunnerEvent::Problem {
            task: t.id.clone(),
            message: why,
        });
    }

    /// The latest review's notes for `t`, when the last verdict sent it back.
    fn latest_notes(&self, t: &Task) -> Option<String> {
        self.board
            .read(|c| tasks::logs_with_outcome(c, &t.id, &["revise", "rethink"]))
            .ok()?
            .pop()
            .map(|e| e.action)
    }

    /// Start the role session `role` for `t`. False when it could not start (the task is
    /// parked with the reason).
    fn start(&self, t: &Task, role: Role) -> bool {
        let title = format!("{} · {}", t.id, role.profile());
        let info = match self
            .engine
            .create_task_session(None, role.profile(), &t.id, &title)
        {
            Ok(i) => i,
            Err(e) => {
                self.park(
                    t,
                    &format!("the {} session could not be created: {e}", role.profile()),
                );
                return false;
            }
        };
        let sid = info.id.clone();
        let comments = self.take_steering(&t.id, &sid);
        let notes = (role == Role::Executor && t.status == REVISE)
            .then(|| self.latest_notes(t))
            .flatten();
        let msg = messages::first_message(role, t, notes.as_deref(), &comments);
        lock(&self.active).insert(
            t.id.clone(),
            Active {
                task: t.id.clone(),
                role,
                session_id: sid.clone(),
            },
        );
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
                lock(&self.active).remove(&t.id);
                self.release_steering(&comments);
                self.park(
                    t,
                    &format!("the {} session {sid} could not start: {e}", role.profile()),
                );
                return false;
            }
        };
        self.emit(RunnerEvent::SessionStarted {
            task: t.id.clone(),
            role,
            session_id: sid.clone(),
        });
        if !comments.is_empty() {
            self.emit(RunnerEvent::Steered {
                task: t.id.clone(),
                session_id: sid.clone(),
                comments: comments.len(),
                live: false,
            });
        }
        let Some(me) = self.me.upgrade() else {
            return true;
        };
        let task = t.id.clone();
        let limit = self
            .settings(t)
            .u64(STEP_TIMEOUT)
            .unwrap_or(DEFAULT_STEP_TIMEOUT_MS);
        tokio::runtime::Handle::current().spawn(async move {
            let mut rx = rx;
            let (outcome, timed_out) =
                match tokio::time::timeout(Duration::from_millis(limit), &mut rx).await {
                    Ok(o) => (o.ok(), None),
                    Err(_) => {
                        // Past the workflow's limit: cancel the run and wait for it to end.
                        me.host.cancel(&sid);
                        (rx.await.ok(), Some(limit))
                    }
                };
            let m = me.clone();
            let _ = tokio::task::spawn_blocking(move || {
                m.finished(&task, role, &sid, outcome, timed_out)
            })
            .await;
            me.wake.notify_one();
        });
        true
    }

    /// The effective settings of the workflow `t` runs (never fails: see
    /// `crate::board::workflow::effective_for_task`).
    fn settings(&self, t: &Task) -> crate::board::workflow::Resolved {
        self.board
            .read(|c| Ok(crate::board::workflow::effective_for_task(c, t)))
            .unwrap_or_else(|_| {
                crate::board::workflow::settings::resolve(
                    &t.workflow_id,
                    &crate::board::workflow::builtin::CHAPTER.settings,
                    &serde_json::Map::new(),
                )
            })
    }

    /// REVISE/RETHINK verdicts before `t` waits for the author: its workflow's
    /// `maxReviewRevisions` when set (1–10), else `[board] max_rework`.
    fn rework_bound_of(&self, t: &Task) -> u32 {
        self.settings(t)
            .u64(REVIEW_REVISIONS)
            .map_or(self.rework_bound, |n| n.clamp(1, 10) as u32)
    }

    /// A role session ended: take the task to its next stage (or park it).
    fn finished(
        &self,
        task: &str,
        role: Role,
        sid: &str,
        outcome: Option<InvokeOutcome>,
        timed_out: Option<u64>,
    ) {
        let (status, error, answer) = match &outcome {
            Some(o) => (o.status.clone(), o.error.clone(), o.final_message.clone()),
            None => (
                "error".to_string(),
                Some("the run was dropped".to_string()),
                String::new(),
            ),
        };
        self.emit(RunnerEvent::SessionEnded {
            task: task.to_string(),
            role,
            session_id: sid.to_string(),
            status: status.clone(),
            error: error.clone(),
        });
        let why = || {
            error
                .clone()
                .unwrap_or_else(|| crate::board::snippet(&answer, 160))
        };
        if let Ok(t) = self.board.read(|c| tasks::require(c, task)) {
            match timed_out {
                // The run was cut: whatever it left is not a stage's end.
                Some(ms) if t.status != crate::board::PAUSED => {
                    self.park(
                        &t,
                        &format!(
                            "the {} session {sid} ran past the workflow's {STEP_TIMEOUT} ({ms} ms) and was stopped",
                            role.profile()
                        ),
                    );
                }
                Some(_) => {}
                None => self.advance(&t, role, sid, &status, &answer, &why),
            }
        }
        lock(&self.active).remove(task);
    }

    fn advance(
        &self,
        t: &Task,
        role: Role,
        sid: &str,
        status: &str,
        answer: &str,
        why: &dyn Fn() -> String,
    ) {
        let profile = role.profile();
        match role {
            Role::Triage => {
                // A planned task is promoted by the next tick (once its dependencies are
                // Done); one without a plan waits for the author.
                let planned =
                    t.prompt.is_some() && !t.steps.is_empty() && t.status != "needs-replan";
                if t.column == PLANNING
                    && !planned
                    && t.status != PARKED
                    && t.status != crate::board::PAUSED
                {
                    self.park(
                        t,
                        &format!(
                            "triage session {sid} ended without a plan (PROMPT.md): {}",
                            why()
                        ),
                    );
                }
            }
            Role::Executor => {
                // fn_task_done moved it on (Review), or it went back to planning / blocked.
                if t.column == DRAFTING
                    && t.status != "failed"
                    && t.status != PARKED
                    && t.status != crate::board::PAUSED
                {
                    self.park(
                        t,
                        &format!(
                            "{profile} session {sid} ended without fn_task_done: {}",
                            why()
                        ),
                    );
                }
            }
            Role::Reviewer => {
                if t.column != REVIEW || t.status == crate::board::PAUSED {
                    return;
                }
                let (verdict, notes) = if status == "completed" {
                    review::parse(answer)
                } else {
                    (Verdict::Unavailable, why())
                };
                self.verdict(t, sid, verdict, &notes);
            }
            Role::Merger => {
                // merge_task_draft moves it to Done; fn_report_build_failure or a stale merge
                // sends it back to Drafting.
                if t.column == REVIEW && t.status == APPROVED {
                    self.park(
                        t,
                        &format!("{profile} session {sid} ended without merging: {}", why()),
                    );
                }
            }
        }
    }

    /// Apply a code review's verdict to `t` (in Review).
    fn verdict(&self, t: &Task, sid: &str, verdict: Verdict, notes: &str) {
        let notes = if notes.trim().is_empty() {
            "(no notes)"
        } else {
            notes.trim()
        };
        match verdict {
            Verdict::Approve => {
                self.stage(
                    t,
                    REVIEW,
                    APPROVED,
                    &format!("Review APPROVE (reviewer session {sid}): {notes}"),
                    verdict.outcome(),
                );
            }
            Verdict::Revise | Verdict::Rethink => {
                let so_far = self
                    .board
                    .read(|c| tasks::logs_with_outcome(c, &t.id, &["revise", "rethink"]))
                    .map(|v| v.len() as u32)
                    .unwrap_or(0);
                let bound = self.rework_bound_of(t);
                if so_far >= bound {
                    self.stage(
                        t,
                        REVIEW,
                        PARKED,
                        &format!(
                            "Review {} (reviewer session {sid}) after {so_far} rework cycles: the bound of {} is reached; the task waits for the author (pause and resume it to review again). Notes: {notes}",
                            verdict.as_str(),
                            bound
                        ),
                        "rework-bound",
                    );
                    return;
                }
                let (column, status) = if verdict == Verdict::Revise {
                    (DRAFTING, REVISE)
                } else {
                    (PLANNING, "needs-replan")
                };
                self.stage(
                    t,
                    column,
                    status,
                    &format!(
                        "Review {} ({}/{}, reviewer session {sid}):\n{notes}",
                        verdict.as_str(),
                        so_far + 1,
                        bound
                    ),
                    verdict.outcome(),
                );
            }
            Verdict::Unavailable => {
                self.park(
                    t,
                    &format!("reviewer session {sid} gave no verdict (UNAVAILABLE): {notes}"),
                );
            }
        }
    }
}
