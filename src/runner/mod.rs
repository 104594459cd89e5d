//! The board's scheduler and lifecycle (issues #16, #17): it runs the book's production board
//! while nbook is open (the TUI) or headless (`nbook board run`), driving each task through
//! the role sessions its workflow's graph names, on the real agent host. `builtin:chapter` is
//! one instance of this, not a special case: planning lane → triage (writes PROMPT.md; may
//! ask `fn_review_spec` for a spec review) → promoted to the drafting lane → executor
//! (reports steps with `fn_task_update`, ends with `fn_task_done`) → review lane: a
//! reviewer's verdict (REVISE sends the task back to drafting with the notes, at most
//! `maxReviewRevisions` / `[board] max_rework` times, then it parks for the author; RETHINK
//! sends it back to planning; APPROVE → `approved` in the merge lane) → merger (told to call
//! `merge_task_draft`, which waits in the approval queue; the done lane comes from that tool).
//!
//! **Workflows.** Which column is which lane comes from the task's workflow (its nodes'
//! seams and its column traits: `crate::board::workflow::lanes`), so a custom workflow with
//! its own column ids is scheduled by the same rules (`pick`). Where the scheduler moves a
//! task on — promotion, the executor's end, an APPROVE — it walks the workflow's edges
//! (`route`): `code` nodes on the way run in the QuickJS sandbox (`code`: the contract, the
//! limits) and their outcome picks the edge; a code node that fails, runs out of time or
//! memory, returns another shape or an outcome no edge takes parks the task for the author,
//! the reason in its log; a node kind the runner does not run (`hold`, `ask-user`, …) parks
//! it too. A walk that runs code runs off the tick (the task counts as busy meanwhile).
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
//! it the run is cancelled and the task waits for the author); `maxReviewRevisions`, when
//! set, replaces `[board] max_rework` for that workflow's tasks; `reviewHandoffPolicy`
//! (`disabled` | `comment-triggered` | `always`) hands an approved review to the author
//! instead of the merger — always, or when the reviewer's notes say `@author` — the task
//! parks in review with outcome `handoff`; resuming it (pause, resume) releases it to the
//! merger without another review, moving it back sends it to more work; a column's `wip` `limitSetting` (the built-in's
//! drafting column: `maxParallelSteps`) caps the tasks role sessions work on there at once.
//!
//! `requirePlanApproval` parks a planned task in planning (sub-status
//! `awaiting-plan-approval`, the card's `plan?`) instead of promoting it, until the author
//! approves the plan or sends it back (`crate::board::plan_approval`).
//!
//! `notificationLevel` (`silent` | `errors` | `important` | `all`) decides which of these
//! changes also mail the author (`notices`: failures are `errors`, decisions waiting for the
//! author `important`, progress `all`).
//!
//! `reflectionEnabled` asks a done task's assigned agent for a post-task reflection
//! (`reflect`).
//!
//! **Pausing.** A task the author pauses (or archives) while a role session works on it has
//! that session cancelled at the next tick; it keeps its stage, and resuming schedules it.
//!
//! **Steering.** Each tick hands the task's undelivered comments to its live role session as a
//! steer (drained at the next turn boundary); a task with no live session keeps them for its
//! next session's first message. `crate::board::steering::take` marks them delivered in the
//! same transaction, so each is delivered exactly once.
//!
//! **Heartbeats.** Beside this scheduler, with the same lifetime, `heartbeat` wakes the
//! durable agents that run as heartbeats (timer, assignment, immediate mail, by hand) for
//! bounded runs recorded in `nbook_agent_run`; `scheduler_lock` makes that one process per
//! project.

pub mod code;
pub mod heartbeat;
pub mod messages;
pub mod notices;
pub mod pick;
pub mod reflect;
pub mod route;
pub mod scheduler_lock;

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
use crate::board::workflow::ir::IrNode;
use crate::board::workflow::{Lanes, Workflow};
use crate::board::{tasks, Board, Task};
use crate::engine::agents::{InvokeMode, InvokeOutcome, InvokeRequest};
use crate::engine::{Engine, EngineEvent, SessionState};
use crate::protocol::Domain;

pub use pick::{Next, Role, APPROVED, PARKED, REVISE};
use route::{Route, Target, WalkFrom};

/// The actor the scheduler's own board changes are logged under.
pub const ACTOR: &str = "runner";

/// The workflow setting that bounds one role session's run (ms), and its default when the
/// workflow declares none.
pub const STEP_TIMEOUT: &str = "workflowStepTimeoutMs";
pub const DEFAULT_STEP_TIMEOUT_MS: u64 = 900_000;
/// The workflow setting that bounds review rework cycles.
pub const REVIEW_REVISIONS: &str = "maxReviewRevisions";
/// The workflow setting that hands approved reviews to the author.
pub const REVIEW_HANDOFF: &str = "reviewHandoffPolicy";

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
    /// Tasks whose route (with code nodes) is being walked off the tick.
    routing: Mutex<HashSet<String>>,
    /// Done tasks whose post-task reflection was asked (their log says so).
    reflected: Mutex<HashSet<String>>,
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
            routing: Mutex::new(HashSet::new()),
            reflected: Mutex::new(HashSet::new()),
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
        // Who is busy is read before the board. A task whose session or code walk ends
        // between the two reads then counts as busy for this tick and is picked at the next;
        // read the other way round, a task parked by the walk that just ended would be taken
        // from the stale board for the stage it left (a reviewer for a parked task).
        let running = self.task_sessions();
        let active = self.active();
        let routing = lock(&self.routing).clone();
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
        let free = self.limit.saturating_sub(running.len());
        let busy: HashSet<&str> = active
            .iter()
            .map(|a| a.task.as_str())
            .chain(running.iter().map(|s| s.task.as_str()))
            .chain(routing.iter().map(String::as_str))
            .collect();
        let flows = self.flows(&all);
        for (id, next) in pick::pick(&all, &flows, &busy, free) {
            let Some(t) = all.iter().find(|t| t.id == id) else {
                continue;
            };
            match next {
                Next::Promote if self.plan_needs_author(t) => {
                    self.await_plan_approval(t);
                }
                Next::Promote => {
                    if self.promote(t) {
                        done.promoted += 1;
                    }
                }
                Next::Start(Role::Reviewer) if self.handed_off(t) => {
                    if self.release_handoff(t) {
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
        let free = free.saturating_sub(done.started);
        done.started += self.ask_reflections(&all, &flows, &busy, free);
        done
    }

    /// Start a post-task reflection session for each done task whose workflow has
    /// `reflectionEnabled` and that was not asked yet (`reflect`), at most `free` of them.
    fn ask_reflections(
        &self,
        all: &[Task],
        flows: &pick::Flows,
        busy: &HashSet<&str>,
        free: usize,
    ) -> usize {
        let mut started = 0;
        // Each workflow's setting is read once per tick; a task found asked is remembered.
        let mut enabled: BTreeMap<&str, bool> = BTreeMap::new();
        for t in all {
            if started == free {
                break;
            }
            let done_lane = flows
                .get(&t.workflow_id)
                .map_or(crate::board::DONE, |f| f.lanes.done.as_str());
            if t.column != done_lane
                || busy.contains(t.id.as_str())
                || lock(&self.reflected).contains(&t.id)
            {
                continue;
            }
            let on = *enabled
                .entry(t.workflow_id.as_str())
                .or_insert_with(|| self.settings(t).bool(reflect::SETTING).unwrap_or(false));
            if !on {
                continue;
            }
            let asked = self
                .board
                .read(|c| tasks::logs_with_outcome(c, &t.id, &[reflect::OUTCOME]))
                .map(|v| !v.is_empty())
                .unwrap_or(true);
            if asked {
                lock(&self.reflected).insert(t.id.clone());
                continue;
            }
            if self.start_reflection(t) {
                started += 1;
            }
        }
        started
    }

    fn start_reflection(&self, t: &Task) -> bool {
        let (profile, agent) = match self.board.read(|c| Ok(reflect::agent_of(c, t))) {
            Ok(x) => x,
            Err(_) => return false,
        };
        if let Err(e) = self.host.model_for(&profile) {
            let mut p = lock(&self.problems);
            let why = format!("no {profile} session for the post-task reflection: {e}");
            if p.get(&t.id) != Some(&why) {
                p.insert(t.id.clone(), why.clone());
                drop(p);
                self.emit(RunnerEvent::Problem {
                    task: t.id.clone(),
                    message: why,
                });
            }
            return false;
        }
        let title = format!("{} · reflection", t.id);
        let info = match self
            .engine
            .create_task_session(None, &profile, &t.id, &title)
        {
            Ok(i) => i,
            Err(e) => {
                self.emit(RunnerEvent::Problem {
                    task: t.id.clone(),
                    message: format!("the reflection session could not be created: {e}"),
                });
                return false;
            }
        };
        let mut state = vec![(reflect::SESSION_MARK.to_string(), Value::Bool(true))];
        if let Some(a) = &agent {
            state.push((
                crate::tools::fusion::memory::SESSION_AGENT.to_string(),
                Value::String(a.clone()),
            ));
        }
        let who = agent.clone().unwrap_or_else(|| profile.clone());
        let line = format!(
            "Post-task reflection asked of {who} (session {}, reflectionEnabled)",
            info.id
        );
        let id = t.id.clone();
        let logged = self.board.commit(|c: &rusqlite::Connection| {
            tasks::add_log(c, &id, &line, Some(reflect::OUTCOME), Some(ACTOR))
        });
        lock(&self.reflected).insert(t.id.clone());
        if self.engine.set_session_state(&info.id, state).is_err() || logged.is_err() {
            return false;
        }
        self.engine.board_changed(ACTOR);
        let req = InvokeRequest {
            caller: None,
            session_id: info.id.clone(),
            message: Some(reflect::message(t)),
            input: None,
            mode: InvokeMode::Prompt,
            model: None,
            origin_call_id: None,
        };
        match self.host.submit(req) {
            Ok(_) => {
                lock(&self.problems).remove(&t.id);
                true
            }
            Err(e) => {
                self.emit(RunnerEvent::Problem {
                    task: t.id.clone(),
                    message: format!("the reflection session {} could not start: {e}", info.id),
                });
                false
            }
        }
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
            let working = busy.iter().any(|s| !s.waiting) || !lock(&self.routing).is_empty();
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
        let level = self.notice_level(t);
        // The task moves on: why it got no session before is moot (found again if it holds).
        lock(&self.problems).remove(&t.id);
        self.commit(t, |c: &rusqlite::Connection| {
            let out = tasks::set_stage(c, &id, &stage)?;
            notices::mail(c, level, t, outcome, why)?;
            Ok(out)
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

    /// A planned task whose workflow has `requirePlanApproval` and whose plan the author has
    /// not approved yet (`crate::board::plan_approval`).
    fn plan_needs_author(&self, t: &Task) -> bool {
        t.status != crate::board::plan_approval::APPROVED
            && self
                .settings(t)
                .bool(crate::board::plan_approval::SETTING)
                .unwrap_or(false)
    }

    /// Park a planned task in planning until the author approves its plan.
    fn await_plan_approval(&self, t: &Task) -> bool {
        self.stage(
            t,
            &t.column.clone(),
            crate::board::plan_approval::AWAITING,
            "The plan waits for the author's approval (requirePlanApproval): approve it (a on the Board, fn_task_approve_plan) or send it back with a reason (d, fn_task_reject_plan)",
            "plan-approval",
        )
    }

    /// Release a planned task: the walk from its workflow's planning node decides where to
    /// (the drafting lane unless a code node on the way says otherwise). A walk that may run
    /// code runs off the tick; the task is busy until it ends.
    fn promote(&self, t: &Task) -> bool {
        let wf = self.workflow(t);
        if !route::has_code(&wf) {
            return self.promote_along(t, &wf);
        }
        let Some(me) = self.me.upgrade() else {
            return false;
        };
        lock(&self.routing).insert(t.id.clone());
        let t = t.clone();
        tokio::runtime::Handle::current().spawn_blocking(move || {
            me.promote_along(&t, &wf);
            lock(&me.routing).remove(&t.id);
            me.wake.notify_one();
        });
        true
    }

    fn promote_along(&self, t: &Task, wf: &Workflow) -> bool {
        let walked = self.walk(t, wf, WalkFrom::Planning, "success");
        match walked {
            Ok(Some(r)) if r.target != Target::Drafting => {
                self.go(t, &Lanes::of(wf), &r, "the plan")
            }
            Ok(r) => {
                if let Some(r) = r.filter(|r| !r.via.is_empty()) {
                    self.note(t, &r.via.join("; "));
                }
                let id = t.id.clone();
                let level = self.notice_level(t);
                self.commit(t, |c: &rusqlite::Connection| {
                    let out = tasks::promote(c, &id, false, Some(ACTOR))?;
                    notices::mail(c, level, t, "promoted", &out.text)?;
                    Ok(out)
                })
            }
            Err(why) => self.park(t, &format!("after the plan, {why}")),
        }
    }

    /// A task-log entry by the scheduler (what a code node decided on the way).
    fn note(&self, t: &Task, line: &str) {
        let (id, line) = (t.id.clone(), line.to_string());
        if let Err(e) = self.board.commit(|c: &rusqlite::Connection| {
            tasks::add_log(c, &id, &line, Some("code"), Some(ACTOR))
        }) {
            tracing::warn!("the task log of {} could not take a note: {e}", t.id);
        }
    }

    /// Move `t` to where walk `r` ended (`after`: what finished, for the log).
    fn go(&self, t: &Task, lanes: &Lanes, r: &Route, after: &str) -> bool {
        let via = if r.via.is_empty() {
            String::new()
        } else {
            format!(" {};", r.via.join("; "))
        };
        let (column, status) = match &r.target {
            Target::Planning => (&lanes.planning, "needs-replan"),
            Target::Drafting => (&lanes.drafting, ""),
            Target::Review => (&lanes.review, "awaiting-review"),
            Target::Merge => (&lanes.merge, APPROVED),
            Target::Done => (&lanes.done, ""),
            Target::Hold(what) => {
                return self.park(
                    t,
                    &format!(
                        "after {after},{via} the workflow holds the task at {what}, which nbook's runner does not run"
                    ),
                )
            }
        };
        self.stage(
            t,
            column,
            status,
            &format!(
                "After {after},{via} the workflow goes on at node '{}' ({column})",
                r.node
            ),
            "code",
        )
    }

    /// Walk `t`'s workflow from `from` with `condition`; its code nodes share one context
    /// (each `contextPatch` is merged for the next one's `ctx.context`).
    fn walk(
        &self,
        t: &Task,
        wf: &Workflow,
        from: WalkFrom,
        condition: &str,
    ) -> Result<Option<Route>, String> {
        let mut context = serde_json::Map::new();
        route::walk(wf, from, condition, &mut |n| {
            self.run_code(t, n, &mut context)
        })
    }

    /// Run code node `n` for `t` (its current row, so the code sees what the last session
    /// left, and the fields an earlier node wrote) with the walk's `context`; then write the
    /// fields it returned (validated: an invalid one fails the node, none is written) and
    /// merge its context patch.
    fn run_code(
        &self,
        t: &Task,
        n: &IrNode,
        context: &mut serde_json::Map<String, Value>,
    ) -> Result<code::CodeResult, code::CodeError> {
        let source = n
            .config
            .get("source")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ms = n
            .config
            .get("timeoutMs")
            .and_then(Value::as_u64)
            .unwrap_or(code::DEFAULT_TIMEOUT_MS);
        let now = self
            .board
            .read(|c| tasks::require(c, &t.id))
            .unwrap_or_else(|_| t.clone());
        let r = code::run(
            &n.id,
            source,
            ms,
            &code::task_input(&now),
            &Value::Object(context.clone()),
            now.prompt.as_deref(),
        )?;
        if !r.custom_fields.is_empty() {
            let (id, fields) = (t.id.clone(), r.custom_fields.clone());
            let update = tasks::Update {
                custom_fields: Some(fields),
                actor: Some(ACTOR.to_string()),
                ..tasks::Update::default()
            };
            match self
                .board
                .commit(|c: &rusqlite::Connection| tasks::update(c, &id, &update))
            {
                Ok(_) => self.engine.board_changed(ACTOR),
                Err(e) => {
                    return Err(code::CodeError::Fields {
                        node: n.id.clone(),
                        message: e.to_string(),
                    })
                }
            }
        }
        code::merge_context(context, &r.context_patch);
        Ok(r)
    }

    /// The workflow `t` runs (`builtin:chapter` when it is gone or unreadable).
    fn workflow(&self, t: &Task) -> Workflow {
        self.board
            .read(|c| {
                Ok(crate::board::workflow::load(c, &t.workflow_id)
                    .ok()
                    .flatten())
            })
            .ok()
            .flatten()
            .unwrap_or_else(crate::board::workflow::builtin_chapter)
    }

    /// The lanes and WIP limits of every workflow the tasks run.
    fn flows(&self, all: &[Task]) -> pick::Flows {
        let ids: std::collections::BTreeSet<&str> =
            all.iter().map(|t| t.workflow_id.as_str()).collect();
        self.board
            .read(|c| {
                let mut out = pick::Flows::new();
                for id in ids {
                    let Ok(Some(wf)) = crate::board::workflow::load(c, id) else {
                        continue;
                    };
                    let settings =
                        crate::board::workflow::settings_of(c, id).unwrap_or_else(|_| {
                            crate::board::workflow::settings::resolve(
                                id,
                                &wf.ir.settings,
                                &serde_json::Map::new(),
                            )
                        });
                    out.insert(id.to_string(), pick::Flow::of(&wf, &settings));
                }
                Ok(out)
            })
            .unwrap_or_default()
    }

    /// What the role is told of the task's repository scope (series workspace mode only).
    fn repository_scope_block(&self, role: Role, task: &str) -> String {
        let Ok(Some(series)) = crate::workspace::series::load(self.engine.workspace().root())
        else {
            return String::new();
        };
        let books: Vec<String> = series.others.iter().map(|b| b.name.clone()).collect();
        let (declared, acquired) = self
            .board
            .read(|c| {
                Ok((
                    crate::board::repository_scope::declared(c, task)?,
                    crate::board::repository_scope::list(c, task)?,
                ))
            })
            .unwrap_or_default();
        let declared: Vec<String> = declared.into_iter().map(|d| d.book).collect();
        let acquired: Vec<String> = acquired.into_iter().map(|a| a.book).collect();
        messages::repository_scope_block(role, &books, &declared, &acquired)
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
                t.status == crate::board::PAUSED
                    || t.column == crate::board::ARCHIVED
                    || Lanes::of(&self.workflow(t)).archived == t.column
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

    /// Why `t` is planned again: the author's reason for sending the plan back, or the
    /// RETHINK review's notes — whichever came last.
    fn replan_notes(&self, t: &Task) -> Option<String> {
        self.board
            .read(|c| tasks::logs_with_outcome(c, &t.id, &["rethink", "plan-rejected"]))
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
        let notes = match role {
            Role::Executor if t.status == REVISE => self.latest_notes(t),
            Role::Triage if t.status == "needs-replan" => self.replan_notes(t),
            _ => None,
        };
        let mut msg = messages::first_message(role, t, notes.as_deref(), &comments);
        msg.push_str(&self.repository_scope_block(role, &t.id));
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
            let (outcome, timed_out) = outcome_within(&me.host, &sid, rx, limit).await;
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

    /// How much of `t`'s board events its workflow mails the author (`notificationLevel`).
    fn notice_level(&self, t: &Task) -> notices::Level {
        notices::workflow_level(self.settings(t).str(notices::SETTING))
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
        let wf = self.workflow(t);
        let lanes = Lanes::of(&wf);
        match role {
            Role::Triage => {
                // A planned task is promoted by the next tick (once its dependencies are
                // Done); one without a plan waits for the author.
                let planned =
                    t.prompt.is_some() && !t.steps.is_empty() && t.status != "needs-replan";
                if t.column == lanes.planning
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
                if t.column == lanes.review && t.status == "awaiting-review" && route::has_code(&wf)
                {
                    // fn_task_done sent it to review; code nodes between the draft and the
                    // review may send it elsewhere.
                    self.after_draft(t, &wf, &lanes);
                } else if t.column == lanes.drafting
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
                if t.column != lanes.review || t.status == crate::board::PAUSED {
                    return;
                }
                let (verdict, notes) = if status == "completed" {
                    review::parse(answer)
                } else {
                    (Verdict::Unavailable, why())
                };
                self.verdict(t, sid, verdict, &notes, &wf);
            }
            Role::Merger => {
                // merge_task_draft moves it to Done; fn_report_build_failure or a stale merge
                // sends it back to Drafting.
                if t.column == lanes.merge && t.status == APPROVED {
                    self.park(
                        t,
                        &format!("{profile} session {sid} ended without merging: {}", why()),
                    );
                }
            }
        }
    }

    /// The walk from the drafting node once the executor's `fn_task_done` moved `t` to review.
    fn after_draft(&self, t: &Task, wf: &Workflow, lanes: &Lanes) {
        match self.walk(t, wf, WalkFrom::Drafting, "success") {
            Ok(None) => {}
            Ok(Some(r)) if r.target == Target::Review => {
                if !r.via.is_empty() {
                    self.note(t, &r.via.join("; "));
                }
            }
            Ok(Some(r)) => {
                self.go(t, lanes, &r, "the draft");
            }
            Err(why) => {
                self.park(t, &format!("after the draft, {why}"));
            }
        }
    }

    /// `t` waits in review with no status after its approved review was handed to the author:
    /// the author released it (resumed it), so it goes to the merger without another review.
    /// Any later verdict, completion or merge supersedes the hand-off.
    fn handed_off(&self, t: &Task) -> bool {
        if !t.status.is_empty() {
            return false;
        }
        let outcomes = [
            "handoff",
            "approve",
            "revise",
            "rethink",
            "completed",
            "merged",
        ];
        self.board
            .read(|c| tasks::logs_with_outcome(c, &t.id, &outcomes))
            .ok()
            .and_then(|v| v.last().and_then(|e| e.outcome.clone()))
            .is_some_and(|o| o == "handoff")
    }

    fn release_handoff(&self, t: &Task) -> bool {
        let lanes = Lanes::of(&self.workflow(t));
        self.stage(
            t,
            &lanes.merge,
            APPROVED,
            "The author released the handed-off review: the merger comes next",
            "approve",
        )
    }

    /// Whether an approved review of `t` goes to the author instead of the merger (its
    /// workflow's `reviewHandoffPolicy`), and the policy that says so.
    fn handoff(&self, t: &Task, notes: &str) -> Option<&'static str> {
        match self.settings(t).str(REVIEW_HANDOFF) {
            Some("always") => Some("always"),
            Some("comment-triggered") if notes.to_lowercase().contains("@author") => {
                Some("comment-triggered")
            }
            _ => None,
        }
    }

    /// Apply a code review's verdict to `t` (in its review lane).
    fn verdict(&self, t: &Task, sid: &str, verdict: Verdict, notes: &str, wf: &Workflow) {
        let lanes = Lanes::of(wf);
        let notes = if notes.trim().is_empty() {
            "(no notes)"
        } else {
            notes.trim()
        };
        match verdict {
            Verdict::Approve => {
                let walked = self.walk(t, wf, WalkFrom::Review, "outcome:approve");
                let via = match walked {
                    Err(why) => {
                        self.park(
                            t,
                            &format!("after Review APPROVE (reviewer session {sid}), {why}"),
                        );
                        return;
                    }
                    Ok(Some(r)) if r.target != Target::Merge => {
                        self.go(
                            t,
                            &lanes,
                            &r,
                            &format!("Review APPROVE (reviewer session {sid})"),
                        );
                        return;
                    }
                    Ok(r) => r
                        .filter(|r| !r.via.is_empty())
                        .map(|r| format!(" ({})", r.via.join("; ")))
                        .unwrap_or_default(),
                };
                if let Some(policy) = self.handoff(t, notes) {
                    self.stage(
                        t,
                        &t.column,
                        PARKED,
                        &format!(
                            "Review APPROVE (reviewer session {sid}){via} is handed to the author ({REVIEW_HANDOFF} {policy}) instead of the merger: pause and resume it (p twice on the Board) to release it to the merger, or move it back for more work. Notes: {notes}"
                        ),
                        "handoff",
                    );
                    return;
                }
                self.stage(
                    t,
                    &lanes.merge,
                    APPROVED,
                    &format!("Review APPROVE (reviewer session {sid}){via}: {notes}"),
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
                        &t.column,
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
                    (lanes.drafting.as_str(), REVISE)
                } else {
                    (lanes.planning.as_str(), "needs-replan")
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

/// Wait for a session's run to end, at most `limit_ms` (a role session's
/// `workflowStepTimeoutMs`, a heartbeat run's `heartbeatTimeoutMs`): past it the run is
/// cancelled and waited for. The outcome (none when the host dropped the run) and, when the
/// limit cut the run, the limit.
pub(crate) async fn outcome_within(
    host: &Host,
    sid: &str,
    mut rx: tokio::sync::oneshot::Receiver<InvokeOutcome>,
    limit_ms: u64,
) -> (Option<InvokeOutcome>, Option<u64>) {
    match tokio::time::timeout(Duration::from_millis(limit_ms), &mut rx).await {
        Ok(o) => (o.ok(), None),
        Err(_) => {
            host.cancel(sid);
            (rx.await.ok(), Some(limit_ms))
        }
    }
}
