//! Agents at task level: `fn_list_agents`, `fn_delegate_task`, `fn_spawn_agent`,
//! `fn_ask_question`, `fn_heartbeat_done` (seeds/fusion-engine-tools.txt, notes §2.5).
//!
//! **What an agent is in nbook.** Fusion has permanent agents (identities with a role) and
//! ephemeral ones (task workers, spawned children). nbook's permanent agents are its
//! profiles — `writer`, `triage`, `executor`, … — each listed with the id of its key and the
//! role of its key (the eight board roles; any other profile is `custom`); the author's own
//! profile is a person, not an agent, and is not listed. nbook's ephemeral agents are its live
//! sessions, listed as `session:<id>` with their profile's role, their state and the task
//! they work on (`board.task`). An agent's state: a session is `running`, `paused` (waiting
//! for an approval or an answer), `error` (its last run failed) or `idle`; a profile is
//! `running` or `paused` when one of its sessions is, else `idle`. **Durable agents**
//! (`agent-001`, …; `super::durable_agents`, `crate::board::agents`) are permanent agents with
//! their own identity, created with the author's approval: listed after the profiles with
//! `durable: true`, their role (triage | executor | reviewer | merger | engineer | custom), their
//! manager (`reportsTo`) and the profile their sessions run with; `running` or `paused` when a
//! session running as them (session state `board.agent`) is. Tasks can be delegated to them.
//!
//! **Delegation** assigns a task to a permanent agent (the custom field `assignee`, shown on
//! the Board); Fusion withholds `fn_delegate_task` from ephemeral callers unless a policy says
//! `allow`. nbook's task workers are the triage, executor and step-session sessions, so the
//! built-in profiles (the default policy) give it to heartbeat and chat only; a project
//! profile that lists it is the `allow`.
//!
//! **Spawned children** are sessions of the parent's task: `board.task` is the parent's task
//! (so the scheduler counts them against the concurrency limit and their file writes land in
//! the same draft area), `board.parent_session` the parent. They run as background jobs whose
//! result comes back to the parent as a message, and `fn_task_done` stops them.
//!
//! **Questions** (`fn_ask_question`) go into the author's question queue (the Approvals pane
//! and its answer form) without waiting: the run ends, and the answers start the session's
//! next turn as its next message.

use std::sync::{Arc, Weak};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{board, err, task_of, SESSION_TASK};
use crate::board::assign;
use crate::board::tasks::{self as bt, NewTask};
use crate::board::{BoardResult, Outcome};
use crate::engine::agents::{AgentHost, InvokeMode, InvokeRequest, SYSTEM_PROMPT_KEY};
use crate::engine::author::AUTHOR_PROFILE;
use crate::engine::inputs::{render_answers, Question, QuestionOption};
use crate::engine::jobs::DeliveryStatus;
use crate::engine::services::ToolServices;
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{Preview, SessionInfo, SessionState};

/// Session-state key of a spawned child: the session that spawned it.
pub const SESSION_PARENT: &str = "board.parent_session";
/// Session-state key prefix on a parent: one entry per spawned child, `{sessionId, jobId,
/// name}`.
pub const CHILD_PREFIX: &str = "board.child.";
/// The prefix of an ephemeral agent's id.
const SESSION_AGENT: &str = "session:";
/// Session-state key naming the durable agent a session runs as.
use super::memory::SESSION_AGENT as SESSION_DURABLE;

/// The board roles nbook's profiles play (Fusion's AgentRole plus nbook's role sessions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Triage,
    Executor,
    StepSession,
    Reviewer,
    Merger,
    Engineer,
    Heartbeat,
    Chat,
    Planning,
    Custom,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Triage => "triage",
            Role::Executor => "executor",
            Role::StepSession => "step-session",
            Role::Reviewer => "reviewer",
            Role::Merger => "merger",
            Role::Engineer => "engineer",
            Role::Heartbeat => "heartbeat",
            Role::Chat => "chat",
            Role::Planning => "planning",
            Role::Custom => "custom",
        }
    }

    /// The role of a profile: the board role its key names, else `custom`.
    pub fn of_profile(key: &str) -> Role {
        match key {
            "triage" => Role::Triage,
            "executor" => Role::Executor,
            "step-session" => Role::StepSession,
            "reviewer" => Role::Reviewer,
            "merger" => Role::Merger,
            "heartbeat" => Role::Heartbeat,
            "chat" => Role::Chat,
            "planning" => Role::Planning,
            _ => Role::Custom,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentState {
    Idle,
    Running,
    Paused,
    Error,
}

impl AgentState {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Idle => "idle",
            AgentState::Running => "running",
            AgentState::Paused => "paused",
            AgentState::Error => "error",
        }
    }

    fn of_session(s: SessionState) -> AgentState {
        match s {
            SessionState::Running => AgentState::Running,
            SessionState::WaitingApproval | SessionState::WaitingInput => AgentState::Paused,
            SessionState::Failed => AgentState::Error,
            SessionState::Idle => AgentState::Idle,
        }
    }
}

/// The agent tools' typed failures (nothing was changed by any of them).
#[derive(Debug, thiserror::Error)]
pub enum AgentToolError {
    #[error("no agent '{id}'; fn_list_agents lists them (permanent agents are profile keys such as writer or executor)")]
    AgentNotFound { id: String },
    #[error("'{id}' is a session (an ephemeral task worker); delegate to a permanent agent, a profile key from fn_list_agents")]
    NotDelegable { id: String },
    #[error("role merger cannot be spawned: the merge is the task's gate, run after its review; spawn an executor, triage or reviewer")]
    RoleUnavailable { role: &'static str },
    #[error("{running} task sessions are running and the limit is {limit}; do this part yourself or spawn it after one ends")]
    ConcurrencyLimit { running: usize, limit: usize },
    #[error("task {id} is {column}: its work is over, so nothing can be spawned for it")]
    TaskEnded { id: String, column: String },
    #[error("question {index}: {why}")]
    BadQuestion { index: usize, why: String },
    #[error("no agent host in this process: agents run inside `nbook` (the TUI) or `nbook run`, not `nbook call`")]
    NoHost,
    #[error("{0}")]
    Refused(String),
}

impl AgentToolError {
    pub fn code(&self) -> &'static str {
        use AgentToolError::*;
        match self {
            AgentNotFound { .. } => "AGENT_NOT_FOUND",
            NotDelegable { .. } => "AGENT_NOT_DELEGABLE",
            RoleUnavailable { .. } => "ROLE_UNAVAILABLE",
            ConcurrencyLimit { .. } => "CONCURRENCY_LIMIT_REACHED",
            TaskEnded { .. } => "TASK_WRONG_COLUMN",
            BadQuestion { .. } => "QUESTION_INVALID",
            NoHost => "AGENT_HOST_UNAVAILABLE",
            Refused(_) => "AGENT_CALL_REFUSED",
        }
    }

    fn details(&self) -> Value {
        use AgentToolError::*;
        let mut d = match self {
            AgentNotFound { id } | NotDelegable { id } => json!({"agentId": id}),
            RoleUnavailable { role } => json!({"role": role}),
            ConcurrencyLimit { running, limit } => json!({"running": running, "limit": limit}),
            TaskEnded { id, column } => json!({"taskId": id, "column": column}),
            BadQuestion { index, why } => json!({"question": index, "message": why}),
            _ => json!({}),
        };
        d["code"] = json!(self.code());
        d
    }
}

impl From<AgentToolError> for ToolError {
    fn from(e: AgentToolError) -> ToolError {
        ToolError::Coded {
            message: format!("{e} (nothing was changed)"),
            details: e.details(),
        }
    }
}

fn services(ctx: &ToolCtx) -> Result<&Arc<dyn ToolServices>, ToolError> {
    ctx.services.as_ref().ok_or_else(|| {
        AgentToolError::Refused("agents are not available outside the engine".into()).into()
    })
}

fn host(e: &dyn ToolServices) -> Result<Arc<dyn AgentHost>, ToolError> {
    e.host().ok_or_else(|| AgentToolError::NoHost.into())
}

fn is_live(s: SessionState) -> bool {
    !matches!(s, SessionState::Idle | SessionState::Failed)
}

/// Task sessions running now (a session with a `board.task`, running or waiting for the
/// author): what counts against the board's concurrency limit.
pub fn running_task_sessions(e: &dyn ToolServices) -> usize {
    e.sessions()
        .iter()
        .filter(|s| is_live(s.state) && e.session_state(&s.id).contains_key(SESSION_TASK))
        .count()
}

// ---- fn_list_agents ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only agents of this role.
    pub role: Option<Role>,
    /// Only agents in this state.
    pub state: Option<AgentState>,
    /// Also the live sessions (ephemeral task workers and spawned children); default false.
    #[serde(rename = "includeEphemeral")]
    pub include_ephemeral: Option<bool>,
}

/// A permanent agent's state from its sessions': running if one runs, else paused if one
/// waits, else idle.
fn fold_state(acc: AgentState, s: AgentState) -> AgentState {
    match (acc, s) {
        (AgentState::Running, _) | (_, AgentState::Running) => AgentState::Running,
        (AgentState::Paused, _) | (_, AgentState::Paused) => AgentState::Paused,
        _ => AgentState::Idle,
    }
}

/// The agents of this project as `fn_list_agents` gives them: the profile agents, the durable
/// agents of `board` (`agent-<n>`, `durable: true`, with `reportsTo` and the profile their
/// sessions run with; a durable agent is running or paused when a session running as it is),
/// then, if asked, the live sessions.
pub fn agents(
    e: &dyn ToolServices,
    board: &crate::board::Board,
    include_ephemeral: bool,
) -> Vec<Value> {
    let sessions: Vec<SessionInfo> = e
        .sessions()
        .into_iter()
        .filter(|s| s.profile != AUTHOR_PROFILE)
        .collect();
    let mut out = Vec::new();
    for p in e.profiles().iter() {
        if p.key == AUTHOR_PROFILE {
            continue;
        }
        let mine = sessions.iter().filter(|s| s.profile == p.key);
        let state = mine
            .map(|s| AgentState::of_session(s.state))
            .fold(AgentState::Idle, fold_state);
        out.push(json!({
            "id": p.key,
            "name": p.name,
            "role": Role::of_profile(&p.key).as_str(),
            "state": state.as_str(),
            "ephemeral": false,
            "description": p.description,
        }));
    }
    if let Ok(durable) = board.read(crate::board::agents::all) {
        for d in durable {
            let state = sessions
                .iter()
                .filter(|s| {
                    e.session_state(&s.id)
                        .get(SESSION_DURABLE)
                        .and_then(Value::as_str)
                        == Some(d.id.as_str())
                })
                .map(|s| AgentState::of_session(s.state))
                .fold(AgentState::Idle, fold_state);
            out.push(json!({
                "id": d.id,
                "name": d.name,
                "role": d.role.as_str(),
                "state": state.as_str(),
                "ephemeral": false,
                "durable": true,
                "reportsTo": d.reports_to,
                "profile": d.role.profile(),
            }));
        }
    }
    if include_ephemeral {
        for s in &sessions {
            let st = e.session_state(&s.id);
            let mut a = json!({
                "id": format!("{SESSION_AGENT}{}", s.id),
                "name": s.title,
                "role": Role::of_profile(&s.profile).as_str(),
                "state": AgentState::of_session(s.state).as_str(),
                "ephemeral": true,
                "profile": s.profile,
            });
            if let Some(t) = st.get(SESSION_TASK).and_then(Value::as_str) {
                a["taskId"] = json!(t);
            }
            if let Some(p) = st.get(SESSION_PARENT).and_then(Value::as_str) {
                a["parentId"] = json!(format!("{SESSION_AGENT}{p}"));
            }
            out.push(a);
        }
    }
    out
}

pub struct ListAgents;

impl TypedTool for ListAgents {
    type Args = ListArgs;
    const NAME: &'static str = "fn_list_agents";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "List the project's agents (optionally filtered). Permanent agents are nbook's profiles: id = the profile key (writer, triage, executor, …), role = the board role of the key (triage | executor | step-session | reviewer | merger | heartbeat | chat | planning; other profiles custom), state running | paused (waiting for an approval or an answer) | idle; then the durable agents (id agent-<n>, durable: true, role triage | executor | reviewer | merger | engineer | custom, reportsTo, profile = the profile their sessions run with). includeEphemeral: true adds the live sessions as id session:<n> with their role, state (also error), taskId and parentId (a spawned child's parent). details {agents: [{id, name, role, state, ephemeral, …}]}. A role or state outside those lists is refused.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Agents])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &ListArgs) -> Result<ToolOutput, ToolError> {
        let e = services(ctx)?;
        let list: Vec<Value> = agents(
            e.as_ref(),
            &board(ctx),
            a.include_ephemeral.unwrap_or(false),
        )
        .into_iter()
        .filter(|x| a.role.is_none_or(|r| x["role"] == r.as_str()))
        .filter(|x| a.state.is_none_or(|s| x["state"] == s.as_str()))
        .collect();
        let text = if list.is_empty() {
            "No agent matches.".to_string()
        } else {
            list.iter()
                .map(|x| {
                    let s = |k: &str| x[k].as_str().unwrap_or("").to_string();
                    let mut line = format!(
                        "- {} ({}) role {} · {}",
                        s("id"),
                        s("name"),
                        s("role"),
                        s("state")
                    );
                    if let Some(t) = x["taskId"].as_str() {
                        line.push_str(&format!(" · task {t}"));
                    }
                    line
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        Ok(super::read_output(text, json!({"agents": list})))
    }
}

// ---- fn_delegate_task ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelegateArgs {
    /// A permanent agent's id (a profile key or a durable agent-<n> from fn_list_agents).
    #[schemars(length(min = 1, max = 64))]
    pub agent_id: String,
    /// What the task is for; its first line becomes the title.
    #[schemars(length(min = 1, max = 20000))]
    pub description: String,
    /// Ids of tasks this one waits for.
    pub dependencies: Option<Vec<String>>,
    /// Default builtin:chapter.
    pub workflow_id: Option<String>,
}

pub struct DelegateTask;

impl DelegateTask {
    /// The agent id, checked: a profile other than the author's, or a durable agent.
    fn agent(ctx: &ToolCtx, a: &DelegateArgs) -> Result<String, ToolError> {
        let id = a.agent_id.trim();
        if id.starts_with(SESSION_AGENT) {
            return Err(AgentToolError::NotDelegable { id: id.into() }.into());
        }
        let known = (services(ctx)?.profiles().get(id).is_some() && id != AUTHOR_PROFILE)
            || (crate::board::agents::is_durable_id(id)
                && board(ctx)
                    .read(|c| crate::board::agents::load(c, id))
                    .map_err(err)?
                    .is_some());
        if !known {
            return Err(AgentToolError::AgentNotFound { id: id.into() }.into());
        }
        Ok(id.to_string())
    }

    fn op<'a>(
        a: &'a DelegateArgs,
        agent: &'a str,
        who: &'a str,
    ) -> impl Fn(&rusqlite::Connection) -> BoardResult<Outcome> + 'a {
        move |c| {
            let mut out = bt::create(
                c,
                &NewTask {
                    description: a.description.clone(),
                    title: None,
                    dependencies: a.dependencies.clone().unwrap_or_default(),
                    priority: None,
                    workflow_id: a.workflow_id.clone(),
                    actor: Some(who.to_string()),
                },
            )?;
            let id = out.value["taskId"].as_str().unwrap_or_default().to_string();
            let t = bt::require(c, &id)?;
            let current = assign::assignee(&t).map(str::to_string);
            match current {
                Some(other) if other != agent => {
                    out.text.push_str(&format!(
                        " It stays assigned to {other}; fn_task_show {id} shows it."
                    ));
                    out.value["assignee"] = json!(other);
                }
                Some(_) => out.value["assignee"] = json!(agent),
                None if crate::board::workflow::lanes_for_task(c, &t).finished(&t.column) => {
                    out.value["assignee"] = Value::Null;
                }
                None => {
                    let a = assign::set_assignee(c, &id, agent, Some(who))?;
                    out.text = format!("{} Assigned to {agent}.", out.text);
                    out.value["assignee"] = json!(agent);
                    out.files.extend(a.files);
                }
            }
            Ok(out)
        }
    }
}

impl TypedTool for DelegateTask {
    type Args = DelegateArgs;
    const NAME: &'static str = "fn_delegate_task";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Create a task on the board assigned to a permanent agent (a profile key from fn_list_agents; the Board shows it as the card's assignee). Like fn_task_create it lands in Planning and links to an existing task with the same description instead of creating twice (details.wasDuplicate; an existing assignee is kept). details {taskId, wasDuplicate, assignee, task}. An unknown agent (AGENT_NOT_FOUND), a session id (AGENT_NOT_DELEGABLE), unknown dependencies or workflows are error results; nothing changes.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Board, Agents])
    };
    fn write_targets(&self, _ctx: &ToolCtx, a: &DelegateArgs) -> Vec<String> {
        vec![format!("board/delegate/{}", a.agent_id.trim())]
    }
    fn preview(&self, ctx: &ToolCtx, a: &DelegateArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let agent = Self::agent(ctx, a)?;
        let who = super::actor(ctx);
        super::preview_op(Self::NAME, &board(ctx), Self::op(a, &agent, &who))
    }
    fn run(&self, ctx: &ToolCtx, a: &DelegateArgs) -> Result<ToolOutput, ToolError> {
        let agent = Self::agent(ctx, a)?;
        let who = super::actor(ctx);
        super::run_op(&board(ctx), Self::op(a, &agent, &who))
    }
}

// ---- fn_spawn_agent ----

/// Fusion's spawnable roles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SpawnRole {
    Triage,
    Executor,
    Reviewer,
    Merger,
    Engineer,
    Custom,
}

impl SpawnRole {
    fn as_str(self) -> &'static str {
        match self {
            SpawnRole::Triage => "triage",
            SpawnRole::Executor => "executor",
            SpawnRole::Reviewer => "reviewer",
            SpawnRole::Merger => "merger",
            SpawnRole::Engineer => "engineer",
            SpawnRole::Custom => "custom",
        }
    }

    /// The profile a child of this role runs. A child works on a piece of its parent's task:
    /// executors, engineers and custom children are step sessions (they write in the task's
    /// draft and leave its lifecycle — fn_task_update, fn_task_done — to the parent).
    fn profile(self) -> Result<&'static str, AgentToolError> {
        match self {
            SpawnRole::Triage => Ok("triage"),
            SpawnRole::Reviewer => Ok("reviewer"),
            SpawnRole::Executor | SpawnRole::Engineer | SpawnRole::Custom => Ok("step-session"),
            SpawnRole::Merger => Err(AgentToolError::RoleUnavailable { role: "merger" }),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnArgs {
    /// The child's name (its session title).
    #[schemars(length(min = 1, max = 80))]
    pub name: String,
    pub role: SpawnRole,
    /// What the child is to do: its first message.
    #[schemars(length(min = 1, max = 20000))]
    pub task: String,
    /// A system prompt used instead of the role's.
    #[serde(rename = "systemPromptOverride")]
    #[schemars(length(max = 50000))]
    pub system_prompt_override: Option<String>,
}

pub struct SpawnAgent;

impl TypedTool for SpawnAgent {
    type Args = SpawnArgs;
    const NAME: &'static str = "fn_spawn_agent";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Spawn a child agent for part of this session's task. It works in the same draft area (its writes are the task's), counts against the board's concurrency limit, runs in the background and its result arrives as your next message when it ends; it is stopped when the task ends with fn_task_done. role executor | engineer | custom runs a step session (writes in the draft; the task's steps and fn_task_done stay yours), triage a triage session, reviewer a read-only reviewer; merger is refused (ROLE_UNAVAILABLE). systemPromptOverride replaces the role's system prompt. details {agentId, sessionId, profile, taskId, jobId}. At the limit the result is CONCURRENCY_LIMIT_REACHED; nothing is spawned.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Agents, Jobs])
    };
    fn run(&self, ctx: &ToolCtx, a: &SpawnArgs) -> Result<ToolOutput, ToolError> {
        let e = services(ctx)?;
        let task = task_of(ctx, None)?;
        let (t, finished) = board(ctx)
            .read(|c| {
                let t = bt::require(c, &task)?;
                let finished = crate::board::workflow::lanes_for_task(c, &t).finished(&t.column);
                Ok((t, finished))
            })
            .map_err(err)?;
        if finished {
            return Err(AgentToolError::TaskEnded {
                id: task,
                column: t.column,
            }
            .into());
        }
        let profile = a.role.profile()?;
        let h = host(e.as_ref())?;
        let running = running_task_sessions(e.as_ref());
        // The scheduler's limit (`[board] concurrency`): a running child counts like any task
        // session, so spawning cannot push the board past what the author set.
        let limit = e.config().board.limit();
        if running >= limit {
            return Err(AgentToolError::ConcurrencyLimit { running, limit }.into());
        }
        let name = a.name.trim();
        let mut state = vec![
            (SESSION_TASK.to_string(), json!(task)),
            (SESSION_PARENT.to_string(), json!(ctx.session_id)),
        ];
        if let Some(p) = a
            .system_prompt_override
            .as_deref()
            .filter(|p| !p.trim().is_empty())
        {
            state.push((SYSTEM_PROMPT_KEY.to_string(), json!(p)));
        }
        let initial = json!({"name": name, "role": a.role.as_str(), "taskId": task});
        let child = e
            .spawn_child(&ctx.session_id, profile, initial, name, state)
            .map_err(|x| AgentToolError::Refused(x.to_string()))?;
        let job = h
            .invoke_background(InvokeRequest {
                caller: Some(ctx.session_id.clone()),
                session_id: child.id.clone(),
                message: Some(a.task.clone()),
                input: None,
                mode: InvokeMode::Prompt,
                model: None,
                origin_call_id: Some(ctx.call_id.clone()),
            })
            .map_err(|x| {
                AgentToolError::Refused(format!(
                    "session {} was created but could not start: {x}",
                    child.id
                ))
            })?;
        let v = json!({
            "agentId": format!("{SESSION_AGENT}{}", child.id),
            "sessionId": child.id,
            "name": name,
            "role": a.role.as_str(),
            "profile": profile,
            "taskId": task,
            "jobId": job,
        });
        Ok(ToolOutput {
            content: format!(
                "Spawned {name} (session {}, {profile}) on {task}: it works in the task's draft, its result arrives as a message when it ends (job {job}), and it stops when the task ends with fn_task_done.",
                child.id
            ),
            details: Some(v.clone()),
            state_updates: vec![(format!("{CHILD_PREFIX}{}", child.id), v)],
            ..ToolOutput::default()
        })
    }
}

/// Stop the children a session spawned, and theirs: each child's job is cancelled without
/// delivering a result to the parent (its task has ended) and its run is stopped. Returns the
/// stopped sessions' ids.
pub fn stop_children(ctx: &ToolCtx) -> Vec<String> {
    match ctx.services.as_ref() {
        Some(e) => stop_children_of(e.as_ref(), &ctx.session_id, ctx.session_state.clone()),
        None => Vec::new(),
    }
}

/// [`stop_children`] for any session, given its state (`ToolServices::session_state`): what
/// whoever ends a task session otherwise (the scheduler stopping an executor) calls too.
pub fn stop_children_of(
    e: &dyn ToolServices,
    session_id: &str,
    state: Arc<std::collections::BTreeMap<String, Value>>,
) -> Vec<String> {
    let h = e.host();
    let mut stopped = Vec::new();
    let mut todo = vec![(session_id.to_string(), state)];
    while let Some((parent, state)) = todo.pop() {
        for (k, v) in state.range(CHILD_PREFIX.to_string()..) {
            let Some(child) = k.strip_prefix(CHILD_PREFIX) else {
                break;
            };
            if stopped.iter().any(|s| s == child) {
                continue;
            }
            if let Some(job) = v.get("jobId").and_then(Value::as_str) {
                // Marked first, so the job's end is not delivered to a parent whose task is over.
                let _ = e
                    .jobs()
                    .set_delivery(job, DeliveryStatus::NotRequired, None);
                let _ = e.jobs().cancel(job, Some(&parent));
            }
            if let Some(h) = &h {
                h.cancel_session(child);
            }
            stopped.push(child.to_string());
            todo.push((child.to_string(), e.session_state(child)));
        }
    }
    stopped
}

// ---- fn_ask_question ----

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuestionType {
    Text,
    SingleSelect,
    MultiSelect,
    Confirm,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CardOption {
    #[schemars(length(min = 1, max = 200))]
    pub label: String,
    pub description: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CardQuestion {
    #[schemars(length(min = 1, max = 2000))]
    pub question: String,
    #[schemars(length(max = 60))]
    pub header: Option<String>,
    pub description: Option<String>,
    /// text (default without options) | single_select (default with options) |
    /// multi_select | confirm (yes / no; takes no options).
    #[serde(rename = "type")]
    pub kind: Option<QuestionType>,
    #[schemars(length(max = 9))]
    pub options: Option<Vec<CardOption>>,
    /// Several options may be chosen (same as type multi_select).
    #[serde(rename = "multiSelect")]
    pub multi_select: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    #[schemars(length(min = 1, max = 10))]
    pub questions: Vec<CardQuestion>,
}

/// A card's questions as the author's question form asks them.
pub fn card_questions(a: &AskArgs) -> Result<Vec<Question>, AgentToolError> {
    if a.questions.is_empty() {
        return Err(AgentToolError::BadQuestion {
            index: 0,
            why: "give at least one question".into(),
        });
    }
    a.questions
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let bad = |why: &str| AgentToolError::BadQuestion {
                index: i + 1,
                why: why.to_string(),
            };
            if q.question.trim().is_empty() {
                return Err(bad("the question text is empty"));
            }
            let given: Vec<QuestionOption> = q
                .options
                .iter()
                .flatten()
                .map(|o| QuestionOption {
                    label: o.label.clone(),
                    description: o.description.clone(),
                })
                .collect();
            if given.iter().any(|o| o.label.trim().is_empty()) {
                return Err(bad("an option has an empty label"));
            }
            let multi_flag = q.multi_select == Some(true);
            let kind = q.kind.unwrap_or(match (given.is_empty(), multi_flag) {
                (true, _) => QuestionType::Text,
                (false, true) => QuestionType::MultiSelect,
                (false, false) => QuestionType::SingleSelect,
            });
            let (options, multi) = match kind {
                QuestionType::Text if !given.is_empty() => {
                    return Err(bad(
                        "type text takes no options; use single_select or multi_select",
                    ))
                }
                QuestionType::Text => (Vec::new(), false),
                QuestionType::Confirm if !given.is_empty() => {
                    return Err(bad(
                        "type confirm takes no options (the answers are Yes and No)",
                    ))
                }
                QuestionType::Confirm => (
                    ["Yes", "No"]
                        .iter()
                        .map(|l| QuestionOption {
                            label: l.to_string(),
                            description: None,
                        })
                        .collect(),
                    false,
                ),
                QuestionType::SingleSelect | QuestionType::MultiSelect if given.is_empty() => {
                    return Err(bad("a select question needs options"))
                }
                QuestionType::SingleSelect if multi_flag => {
                    return Err(bad("multiSelect true contradicts type single_select"))
                }
                QuestionType::SingleSelect => (given, false),
                QuestionType::MultiSelect => (given, true),
            };
            let question = match q
                .description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
            {
                Some(d) => format!("{}\n{d}", q.question.trim()),
                None => q.question.trim().to_string(),
            };
            Ok(Question {
                header: q.header.clone().filter(|h| !h.trim().is_empty()),
                question,
                options,
                multi,
            })
        })
        .collect()
}

pub struct AskQuestion;

impl TypedTool for AskQuestion {
    type Args = AskArgs;
    const NAME: &'static str = "fn_ask_question";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Ask the author a structured question card (1–10 questions: question, header?, description?, type? text | single_select | multi_select | confirm, options? [{label, description?}] up to 9, multiSelect?). The card waits in the author's question queue; your run ends after this call (calls after it in the same turn are skipped) and the answers arrive as your next message. A select without options, options on text or confirm, or an empty question are error results (QUESTION_INVALID); nothing is asked.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Control]).pauses().ends_run()
    };
    fn run(&self, ctx: &ToolCtx, a: &AskArgs) -> Result<ToolOutput, ToolError> {
        let e = services(ctx)?;
        let questions = card_questions(a)?;
        let h: Weak<dyn AgentHost> = Arc::downgrade(&host(e.as_ref())?);
        let title = questions
            .first()
            .map(|q| q.header.clone().unwrap_or_else(|| q.question.clone()))
            .unwrap_or_default();
        let n = questions.len();
        let (req, rx) = e
            .ask_deferred(&ctx.session_id, &ctx.call_id, &title, questions)
            .map_err(|x| AgentToolError::Refused(x.to_string()))?;
        let id = req.id.clone();
        let session = ctx.session_id.clone();
        // The answer starts the session's next turn; a withdrawn question (its run was
        // cancelled, nbook quit) drops the sender and this thread ends with nothing to say.
        let spawned = std::thread::Builder::new()
            .name(format!("ask-{id}"))
            .spawn(move || {
                let Ok(answers) = rx.blocking_recv() else {
                    return;
                };
                let Some(h) = h.upgrade() else { return };
                let text = format!(
                    "The author answered your question card ({}):\n\n{}",
                    req.title,
                    render_answers(&req, &answers)
                );
                if let Err(x) = h.invoke_blocking(InvokeRequest {
                    caller: None,
                    session_id: session.clone(),
                    message: Some(text),
                    input: None,
                    mode: InvokeMode::Prompt,
                    model: None,
                    origin_call_id: None,
                }) {
                    tracing::warn!(
                        "session {session}: the answers to {} were not delivered: {x}",
                        req.id
                    );
                }
            });
        if let Err(x) = spawned {
            e.withdraw_input(&id);
            return Err(
                AgentToolError::Refused(format!("the question could not be kept: {x}")).into(),
            );
        }
        Ok(ToolOutput {
            content: format!(
                "Question card {id} is with the author ({n} question{}). End your turn now: the answers arrive as your next message.",
                if n == 1 { "" } else { "s" }
            ),
            details: Some(json!({"questionId": id, "questions": n})),
            ..ToolOutput::default()
        })
    }
}

// ---- fn_heartbeat_done ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeartbeatDoneArgs {
    /// What this heartbeat run did.
    #[schemars(length(max = 4000))]
    pub summary: Option<String>,
}

pub struct HeartbeatDone;

impl TypedTool for HeartbeatDone {
    type Args = HeartbeatDoneArgs;
    const NAME: &'static str = "fn_heartbeat_done";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "End this heartbeat run, with an optional summary of what it did (kept as the run's result). Call it last: nothing after it in the turn runs.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Control]).ends_run().listed_last()
    };
    fn run(&self, _ctx: &ToolCtx, a: &HeartbeatDoneArgs) -> Result<ToolOutput, ToolError> {
        let summary = a
            .summary
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        Ok(ToolOutput {
            content: match summary {
                Some(s) => format!("Heartbeat run ended: {s}"),
                None => "Heartbeat run ended.".into(),
            },
            details: Some(json!({"summary": summary, "data": {"summary": summary}})),
            ..ToolOutput::default()
        })
    }
}
