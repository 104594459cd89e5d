//! Durable agents' tools (`fn_agent_create`, `fn_agent_delete`, `fn_get_agent_config`,
//! `fn_update_agent_config`, `fn_update_identity`; seeds/fusion-engine-tools.txt, notes §2.5,
//! Addendum "Agent provisioning") over `crate::board::agents`.
//!
//! **What a durable agent is.** A permanent agent with its own identity, stored in the board
//! (`agent-001`, …), beside the profile agents (`writer`, `executor`, …; see
//! `super::agents`). It is listed by `fn_list_agents` with `durable: true`, its role, its
//! manager (`reportsTo`) and the profile its sessions run with (its role's profile: the role's
//! own, executor for an engineer, heartbeat for a custom agent). A session runs as durable
//! agent X when its state holds X under [`SESSION_AGENT`] (`board.agent`): it keeps its
//! profile's allowlist, its system prompt gets X's soul, instructions and memory
//! (`crate::agent::run_loop`), its private memory is X's, and mail to X is its mail. Tasks are
//! assigned to it with `fn_delegate_task` (custom field `assignee`).
//!
//! **Who is the caller.** The author (profile `author`) is `dashboard` and manages every agent;
//! a session running as a durable agent is that agent; any other session is its profile's
//! agent (`executor`, …). `reportsTo` defaults to the caller, and an agent may only read,
//! change or delete agents that report to it ("direct reports only": AGENT_NOT_DIRECT_REPORT).
//! Profiles are not durable agents: their config is their profile file and they cannot be
//! deleted (AGENT_BUILTIN); sessions are ephemeral and have no config (AGENT_EPHEMERAL).
//!
//! **Provisioning waits for the author.** Fusion returns `details.outcome: "pending_approval"`
//! with an approval request id while a create or delete waits. In nbook the engine's approval
//! queue is the approval store: `fn_agent_create` and `fn_agent_delete` are declared
//! `always_asks`, so every call waits in the queue with its exact preview (the record diff of
//! the agent, and of the tasks and reports a delete moves) whatever the preset or
//! `[approval.tools]` say, and is never covered by a session grant; the calling turn awaits the
//! decision, and the final result says `details.outcome` `created` / `deleted` (a rejection is
//! the engine's rejection result; nothing is created). Only the author decides: no tool an
//! agent can call resolves an approval. `fn_update_agent_config` and `fn_update_identity` are
//! ordinary mutating calls (like `fn_memory_append`).
//!
//! **Heartbeat interval.** Fusion accepts `heartbeat_interval_ms` ≥ 1000; nbook stores what is
//! given and its scheduler clamps to 5 minutes when it schedules (`get` shows both).
//!
//! **Paths** (`instructions_path`, `heartbeat_procedure_path`) must be project-relative and stay
//! inside the project after symlinks (the file tools' path authorization); an empty string
//! clears one.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::memory::SESSION_AGENT;
use super::{board, err, read_output};
use crate::board::agents::{
    self as ba, is_durable_id, AgentRole, Caller, ConfigPatch, NewAgent, Violation,
};
use crate::board::mailbox::{ResponseMode, SESSION_AGENT as SESSION_PREFIX};
use crate::engine::author::AUTHOR_PROFILE;
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::Preview;
use crate::workspace::paths::Access;

/// Why a durable-agent call was refused before it touched anything.
#[derive(Debug, thiserror::Error)]
pub enum DurableError {
    #[error("{id} is a built-in profile agent: its config is its profile file and it cannot be {action}; durable agents are agent-<n> (fn_agent_create)")]
    Builtin { id: String, action: &'static str },
    #[error(
        "{id} is a session (an ephemeral agent): it has no config; durable agents are agent-<n>"
    )]
    Ephemeral { id: String },
    #[error("this session is not a durable agent: fn_update_identity edits the identity of the durable agent a session runs as")]
    NotDurable,
}

impl From<DurableError> for ToolError {
    fn from(e: DurableError) -> ToolError {
        let (code, id) = match &e {
            DurableError::Builtin { id, .. } => ("AGENT_BUILTIN", Some(id.clone())),
            DurableError::Ephemeral { id } => ("AGENT_EPHEMERAL", Some(id.clone())),
            DurableError::NotDurable => ("IDENTITY_NOT_DURABLE", None),
        };
        ToolError::Coded {
            message: format!("{e} (nothing was changed)"),
            details: json!({"code": code, "agentId": id}),
        }
    }
}

const AGENTS: Effects = {
    use crate::engine::tool::Domain::*;
    Effects::touches(&[Agents])
};

/// The durable agent this session runs as, if any.
pub fn session_agent(ctx: &ToolCtx) -> Option<String> {
    ctx.session_state
        .get(SESSION_AGENT)
        .and_then(Value::as_str)
        .filter(|s| is_durable_id(s))
        .map(str::to_string)
}

/// Who calls (see the module comment).
pub fn caller(ctx: &ToolCtx) -> Caller {
    if ctx.profile.key == AUTHOR_PROFILE {
        return Caller::author();
    }
    Caller {
        id: session_agent(ctx).unwrap_or_else(|| ctx.profile.key.clone()),
        is_author: false,
    }
}

/// Whether `id` is a profile agent (not the author's profile).
fn is_profile(ctx: &ToolCtx, id: &str) -> bool {
    id != AUTHOR_PROFILE
        && ctx
            .services
            .as_ref()
            .is_some_and(|e| e.profiles().get(id).is_some())
}

/// The id of the durable agent a call names, or why it names none.
fn target(ctx: &ToolCtx, id: &str, action: &'static str) -> Result<String, ToolError> {
    let id = id.trim();
    if id.starts_with(SESSION_PREFIX) {
        return Err(DurableError::Ephemeral { id: id.into() }.into());
    }
    if !is_durable_id(id) && is_profile(ctx, id) {
        return Err(DurableError::Builtin {
            id: id.into(),
            action,
        }
        .into());
    }
    Ok(id.to_string())
}

/// A path argument checked: project-relative, inside the project; `""` clears.
fn check_path(
    ctx: &ToolCtx,
    field: &str,
    p: &Option<String>,
    v: &mut Vec<Violation>,
) -> Option<String> {
    let p = p.as_deref()?.trim();
    if p.is_empty() {
        return Some(String::new());
    }
    let bad = |why: &str| Violation::new(field, "path-invalid", format!("'{p}': {why}"));
    if std::path::Path::new(p).is_absolute() || p.starts_with('~') {
        v.push(bad("give a project-relative path"));
        return None;
    }
    if p.starts_with("workspace/") {
        v.push(bad("a path in another project is not allowed"));
        return None;
    }
    match ctx.workspace.resolve(p, Access::Read) {
        Ok(r) if r.in_current && !r.rel.is_empty() => Some(r.rel),
        Ok(_) => {
            v.push(bad("it must name a file inside the project"));
            None
        }
        Err(e) => {
            v.push(bad(&e.to_string()));
            None
        }
    }
}

// ---- fn_agent_create ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// The agent's name (1–80 characters; unique among durable agents).
    pub name: String,
    pub role: AgentRole,
    /// Who it is (at most 10 000 characters).
    pub soul: Option<String>,
    /// Standing instructions (at most 50 000 characters).
    pub instructions_text: Option<String>,
    /// A project-relative file whose content joins its instructions.
    pub instructions_path: Option<String>,
    /// Its manager: an agent id from fn_list_agents or dashboard (the author); default you.
    #[serde(rename = "reportsTo")]
    pub reports_to: Option<String>,
    /// At least 1000 (nbook wakes an agent at most every 5 minutes).
    pub heartbeat_interval_ms: Option<i64>,
    /// At least 5000.
    pub heartbeat_timeout_ms: Option<i64>,
    /// At least 1 (default 1).
    pub max_concurrent_runs: Option<i64>,
    pub message_response_mode: Option<ResponseMode>,
}

pub struct AgentCreate;

impl AgentCreate {
    fn parts(ctx: &ToolCtx, a: &CreateArgs) -> (NewAgent, Vec<Violation>) {
        let mut v = Vec::new();
        let instructions_path = check_path(ctx, "instructions_path", &a.instructions_path, &mut v);
        let new = NewAgent {
            name: a.name.clone(),
            role: Some(a.role),
            reports_to: a.reports_to.clone(),
            config: ConfigPatch {
                soul: a.soul.clone(),
                instructions_text: a.instructions_text.clone(),
                instructions_path,
                heartbeat_interval_ms: a.heartbeat_interval_ms,
                heartbeat_timeout_ms: a.heartbeat_timeout_ms,
                max_concurrent_runs: a.max_concurrent_runs,
                message_response_mode: a.message_response_mode,
                ..ConfigPatch::default()
            },
        };
        (new, v)
    }

    fn op<'a>(
        ctx: &'a ToolCtx,
        new: &'a NewAgent,
        extra: &'a [Violation],
    ) -> impl Fn(&rusqlite::Connection) -> crate::board::BoardResult<crate::board::Outcome> + 'a
    {
        let who = caller(ctx);
        move |c| ba::create(c, new, &who, &|id| is_profile(ctx, id), extra)
    }
}

impl TypedTool for AgentCreate {
    type Args = CreateArgs;
    const NAME: &'static str = "fn_agent_create";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Create a durable (non-ephemeral) agent that reports to you (or to reportsTo): id agent-<n>, role triage | executor | reviewer | merger | engineer | custom (its sessions run with that role's profile: engineer → executor, custom → heartbeat), with an optional soul (≤10 000 chars), instructions_text (≤50 000), instructions_path (project-relative), heartbeat_interval_ms (≥1000; nbook wakes it at most every 5 minutes), heartbeat_timeout_ms (≥5000), max_concurrent_runs (≥1) and message_response_mode (immediate | on-heartbeat). Always waits for the author's approval with the exact record as its preview; your turn waits for the decision, and nothing exists until the author approves (details.outcome created, agentId). Every violated bound is listed in one error result (AGENT_CONFIG_INVALID, details.violations); nothing is created.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = AGENTS.always_asks();
    fn write_targets(&self, _ctx: &ToolCtx, _a: &CreateArgs) -> Vec<String> {
        vec!["board/agents".into()]
    }
    fn preview(&self, ctx: &ToolCtx, a: &CreateArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let (new, extra) = Self::parts(ctx, a);
        super::preview_op(Self::NAME, &board(ctx), Self::op(ctx, &new, &extra))
    }
    fn run(&self, ctx: &ToolCtx, a: &CreateArgs) -> Result<ToolOutput, ToolError> {
        let (new, extra) = Self::parts(ctx, a);
        super::run_op(&board(ctx), Self::op(ctx, &new, &extra))
    }
}

// ---- fn_agent_delete ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// A durable agent that reports to you (agent-<n>).
    pub agent_id: String,
    /// Delete even though open tasks are assigned to it: they are unassigned.
    pub force: Option<bool>,
    /// Another permanent agent that takes its open tasks.
    pub reassign_to: Option<String>,
}

pub struct AgentDelete;

impl AgentDelete {
    fn op<'a>(
        ctx: &'a ToolCtx,
        id: &'a str,
        a: &'a DeleteArgs,
    ) -> impl Fn(&rusqlite::Connection) -> crate::board::BoardResult<crate::board::Outcome> + 'a
    {
        let who = caller(ctx);
        move |c| {
            ba::delete(
                c,
                id,
                a.force.unwrap_or(false),
                a.reassign_to.as_deref(),
                &who,
                &|x| is_profile(ctx, x),
            )
        }
    }
}

impl TypedTool for AgentDelete {
    type Args = DeleteArgs;
    const NAME: &'static str = "fn_agent_delete";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Delete a durable agent that reports to you. If open tasks are assigned to it the call fails (AGENT_HAS_ASSIGNED_TASKS, details.assignedTasks) unless reassign_to names another permanent agent (the tasks go to it) or force is true (they are unassigned); its own reports then report to its manager, and its last config is archived. Built-in profile agents cannot be deleted (AGENT_BUILTIN), nor sessions (AGENT_EPHEMERAL), nor another agent's reports (AGENT_NOT_DIRECT_REPORT). Always waits for the author's approval with the exact changes as its preview (details.outcome deleted).";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Agents, Board]).always_asks()
    };
    fn write_targets(&self, _ctx: &ToolCtx, a: &DeleteArgs) -> Vec<String> {
        vec![format!("board/agent/{}", a.agent_id.trim())]
    }
    fn preview(&self, ctx: &ToolCtx, a: &DeleteArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let id = target(ctx, &a.agent_id, "deleted")?;
        super::preview_op(Self::NAME, &board(ctx), Self::op(ctx, &id, a))
    }
    fn run(&self, ctx: &ToolCtx, a: &DeleteArgs) -> Result<ToolOutput, ToolError> {
        let id = target(ctx, &a.agent_id, "deleted")?;
        super::run_op(&board(ctx), Self::op(ctx, &id, a))
    }
}

// ---- fn_get_agent_config ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    /// A durable agent that reports to you (agent-<n>).
    pub agent_id: String,
}

pub struct GetAgentConfig;

impl TypedTool for GetAgentConfig {
    type Args = GetArgs;
    const NAME: &'static str = "fn_get_agent_config";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Read the full config of a durable agent that reports to you: name, role, reportsTo, soul, instructionsText, instructionsPath, heartbeatProcedurePath, memory, runtimeConfig {heartbeatIntervalMs, heartbeatTimeoutMs, maxConcurrentRuns, messageResponseMode}, revision. details {agent, profile (the profile its sessions run with), effectiveHeartbeatIntervalMs (the stored interval, at least 5 minutes), revisions (archived configs), assignedTasks}. Another agent's report is refused (AGENT_NOT_DIRECT_REPORT), a profile or session has no config (AGENT_BUILTIN, AGENT_EPHEMERAL), an unknown id is AGENT_NOT_FOUND.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = AGENTS;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &GetArgs) -> Result<ToolOutput, ToolError> {
        let id = target(ctx, &a.agent_id, "read as a durable agent")?;
        let who = caller(ctx);
        let (agent, revisions, tasks) = board(ctx)
            .read(|c| {
                let agent = ba::require(c, &id)?;
                ba::require_manager(&agent, &who)?;
                Ok((
                    agent,
                    ba::revisions(c, &id)?.len(),
                    ba::assigned_tasks(c, &id)?,
                ))
            })
            .map_err(err)?;
        let rc = &agent.runtime_config;
        let text = format!(
            "{} ({}) · role {} (profile {}) · reports to {} · revision {} ({revisions} archived)\nheartbeat: {} · timeout: {} · max runs {} · messages {}\nsoul: {} chars · instructions: {} chars{} · memory: {} chars · open tasks: {}",
            agent.id,
            agent.name,
            agent.role.as_str(),
            agent.role.profile(),
            agent.reports_to,
            agent.revision,
            rc.heartbeat_interval_ms
                .map(|n| format!("{n} ms"))
                .unwrap_or_else(|| "none".into()),
            rc.heartbeat_timeout_ms
                .map(|n| format!("{n} ms"))
                .unwrap_or_else(|| "none".into()),
            rc.max_concurrent_runs,
            rc.message_response_mode.as_str(),
            agent.soul.chars().count(),
            agent.instructions_text.chars().count(),
            agent
                .instructions_path
                .as_deref()
                .map(|p| format!(" + {p}"))
                .unwrap_or_default(),
            agent.memory.chars().count(),
            if tasks.is_empty() {
                "none".to_string()
            } else {
                tasks.join(", ")
            },
        );
        let value = json!({
            "agent": agent,
            "profile": agent.role.profile(),
            "effectiveHeartbeatIntervalMs": rc.effective_interval_ms(),
            "revisions": revisions,
            "assignedTasks": tasks,
        });
        Ok(read_output(text, value))
    }
}

// ---- fn_update_agent_config ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// A durable agent that reports to you (agent-<n>).
    pub agent_id: String,
    /// At most 10 000 characters.
    pub soul: Option<String>,
    /// At most 50 000 characters.
    pub instructions_text: Option<String>,
    /// Project-relative; "" clears it.
    pub instructions_path: Option<String>,
    /// Project-relative; "" clears it.
    pub heartbeat_procedure_path: Option<String>,
    /// At least 1000 (nbook wakes an agent at most every 5 minutes).
    pub heartbeat_interval_ms: Option<i64>,
    /// At least 5000.
    pub heartbeat_timeout_ms: Option<i64>,
    /// At least 1.
    pub max_concurrent_runs: Option<i64>,
    pub message_response_mode: Option<ResponseMode>,
}

pub struct UpdateAgentConfig;

impl UpdateAgentConfig {
    fn parts(ctx: &ToolCtx, a: &UpdateArgs) -> (ConfigPatch, Vec<Violation>) {
        let mut v = Vec::new();
        let instructions_path = check_path(ctx, "instructions_path", &a.instructions_path, &mut v);
        let heartbeat_procedure_path = check_path(
            ctx,
            "heartbeat_procedure_path",
            &a.heartbeat_procedure_path,
            &mut v,
        );
        let patch = ConfigPatch {
            soul: a.soul.clone(),
            instructions_text: a.instructions_text.clone(),
            instructions_path,
            heartbeat_procedure_path,
            memory: None,
            heartbeat_interval_ms: a.heartbeat_interval_ms,
            heartbeat_timeout_ms: a.heartbeat_timeout_ms,
            max_concurrent_runs: a.max_concurrent_runs,
            message_response_mode: a.message_response_mode,
        };
        (patch, v)
    }

    fn op<'a>(
        ctx: &'a ToolCtx,
        id: &'a str,
        patch: &'a ConfigPatch,
        extra: &'a [Violation],
    ) -> impl Fn(&rusqlite::Connection) -> crate::board::BoardResult<crate::board::Outcome> + 'a
    {
        let who = caller(ctx);
        move |c| ba::update_config(c, id, patch, &who, extra)
    }
}

impl TypedTool for UpdateAgentConfig {
    type Args = UpdateArgs;
    const NAME: &'static str = "fn_update_agent_config";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Change the config of a durable agent that reports to you: soul (≤10 000 chars), instructions_text (≤50 000), instructions_path and heartbeat_procedure_path (project-relative, inside the project; \"\" clears), heartbeat_interval_ms (≥1000; nbook wakes it at most every 5 minutes), heartbeat_timeout_ms (≥5000), max_concurrent_runs (≥1), message_response_mode (immediate | on-heartbeat). The prior config is archived as a revision. Every violated bound is listed in one error result (AGENT_CONFIG_INVALID, details.violations [{field, code, message}]); nothing is stored. Another agent's report is refused (AGENT_NOT_DIRECT_REPORT); profiles and sessions have no config (AGENT_BUILTIN, AGENT_EPHEMERAL).";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = AGENTS;
    fn write_targets(&self, _ctx: &ToolCtx, a: &UpdateArgs) -> Vec<String> {
        vec![format!("board/agent/{}", a.agent_id.trim())]
    }
    fn preview(&self, ctx: &ToolCtx, a: &UpdateArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let id = target(ctx, &a.agent_id, "changed")?;
        let (patch, extra) = Self::parts(ctx, a);
        super::preview_op(Self::NAME, &board(ctx), Self::op(ctx, &id, &patch, &extra))
    }
    fn run(&self, ctx: &ToolCtx, a: &UpdateArgs) -> Result<ToolOutput, ToolError> {
        let id = target(ctx, &a.agent_id, "changed")?;
        let (patch, extra) = Self::parts(ctx, a);
        super::run_op(&board(ctx), Self::op(ctx, &id, &patch, &extra))
    }
}

// ---- fn_update_identity ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdentityArgs {
    /// Who you are (at most 10 000 characters); replaces the stored one.
    pub soul: Option<String>,
    /// Your standing instructions (at most 50 000 characters).
    #[serde(rename = "instructionsText")]
    pub instructions_text: Option<String>,
    /// What you keep in mind between runs (at most 50 000 characters).
    pub memory: Option<String>,
}

pub struct UpdateIdentity;

impl UpdateIdentity {
    fn parts(ctx: &ToolCtx, a: &IdentityArgs) -> Result<(String, ConfigPatch), ToolError> {
        let id = session_agent(ctx).ok_or(DurableError::NotDurable)?;
        Ok((
            id,
            ConfigPatch {
                soul: a.soul.clone(),
                instructions_text: a.instructions_text.clone(),
                memory: a.memory.clone(),
                ..ConfigPatch::default()
            },
        ))
    }
}

impl TypedTool for UpdateIdentity {
    type Args = IdentityArgs;
    const NAME: &'static str = "fn_update_identity";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Update your own identity as a durable agent: soul (≤10 000 chars), instructionsText (≤50 000), memory (≤50 000); give at least one. Each given field replaces the stored one (the prior config is archived as a revision) and shapes your system prompt from your next run. This changes the project, so it waits for the author's approval like any mutating call. Bounds violated or no field → AGENT_CONFIG_INVALID listing every violation; a session that is not a durable agent → IDENTITY_NOT_DURABLE; nothing is stored.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = AGENTS;
    fn write_targets(&self, ctx: &ToolCtx, _a: &IdentityArgs) -> Vec<String> {
        vec![format!(
            "board/agent/{}",
            session_agent(ctx).unwrap_or_default()
        )]
    }
    fn preview(&self, ctx: &ToolCtx, a: &IdentityArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let (id, patch) = Self::parts(ctx, a)?;
        let who = super::actor(ctx);
        super::preview_op(Self::NAME, &board(ctx), move |c: &rusqlite::Connection| {
            ba::update_identity(c, &id, &patch, &who)
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &IdentityArgs) -> Result<ToolOutput, ToolError> {
        let (id, patch) = Self::parts(ctx, a)?;
        let who = super::actor(ctx);
        super::run_op(&board(ctx), move |c: &rusqlite::Connection| {
            ba::update_identity(c, &id, &patch, &who)
        })
    }
}
