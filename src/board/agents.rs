//! Durable agents (issue #17 "Durable agents"; fusion-notes §2.5, §5 "Agents", Addendum "Agent
//! provisioning"): permanent agents with an identity — `soul`, `instructionsText` /
//! `instructionsPath`, `heartbeatProcedurePath`, `memory` — a manager (`reportsTo`) and a
//! `runtimeConfig {heartbeatIntervalMs, heartbeatTimeoutMs, maxConcurrentRuns,
//! messageResponseMode}`. Storage: migration `009_agents.sql`; every edit archives the record
//! it replaces in `nbook_board_agent_revision` (Fusion's `agent_config_revisions`).
//!
//! **Ids.** `agent-001`, `agent-002`, … from an AUTOINCREMENT sequence, so the id of a deleted
//! agent is never given again (mail, task logs and assignments that name it stay unambiguous).
//! The `agent-` prefix keeps them apart from profile keys (`writer`, `executor`, …) and from
//! sessions (`session:<n>`).
//!
//! **Managers.** `reportsTo` is an agent id (a profile key or a durable agent) or
//! [`USER_ID`] (`dashboard`, the author). Only an agent's manager may read or change its
//! config or delete it ("direct reports only"); the author may manage every agent. When an
//! agent is deleted its own reports move up to its manager.
//!
//! **Bounds** (Fusion's): soul ≤ 10 000 characters, instructions and memory ≤ 50 000,
//! `heartbeatIntervalMs` ≥ 1000, `heartbeatTimeoutMs` ≥ 5000, `maxConcurrentRuns` ≥ 1. The
//! interval is stored as given; nbook's scheduler never wakes an agent more often than every
//! [`MIN_HEARTBEAT_MS`] (5 minutes), so [`RuntimeConfig::effective_interval_ms`] clamps it when
//! scheduling. Validation is not fail-fast: every violation is reported, and nothing is stored.
//!
//! This module imports nothing from the engine; checking that a `reportsTo` or `reassign_to`
//! names a profile is the caller's (passed in as a predicate), and paths arrive already
//! checked by the tool (it holds the workspace).

use rusqlite::{params, Connection, OptionalExtension};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::assign::{assignee, clear_assignee, set_assignee};
use super::error::{BoardError, BoardResult};
use super::mailbox::{ResponseMode, USER_ID};
use super::{json_col, now, Outcome, Touched};
use crate::protocol::TargetState;

/// The prefix of a durable agent's id.
pub const AGENT_PREFIX: &str = "agent-";
pub const SOUL_LIMIT: usize = 10_000;
pub const INSTRUCTIONS_LIMIT: usize = 50_000;
pub const MEMORY_LIMIT: usize = 50_000;
pub const NAME_LIMIT: usize = 80;
pub const MIN_INTERVAL_MS: i64 = 1_000;
pub const MIN_TIMEOUT_MS: i64 = 5_000;
/// nbook's scheduler wakes an agent at most this often (Fusion's heartbeat minimum).
pub const MIN_HEARTBEAT_MS: u64 = 5 * 60 * 1000;

/// A durable agent's role (Fusion's `AgentRole` plus the capabilities `engineer` and
/// `custom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentRole {
    Triage,
    Executor,
    Reviewer,
    Merger,
    Engineer,
    Custom,
}

impl AgentRole {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentRole::Triage => "triage",
            AgentRole::Executor => "executor",
            AgentRole::Reviewer => "reviewer",
            AgentRole::Merger => "merger",
            AgentRole::Engineer => "engineer",
            AgentRole::Custom => "custom",
        }
    }

    fn parse(s: &str) -> Option<AgentRole> {
        Some(match s {
            "triage" => AgentRole::Triage,
            "executor" => AgentRole::Executor,
            "reviewer" => AgentRole::Reviewer,
            "merger" => AgentRole::Merger,
            "engineer" => AgentRole::Engineer,
            "custom" => AgentRole::Custom,
            _ => return None,
        })
    }

    /// The profile whose allowlist a session of this agent runs with: the role's own profile;
    /// an engineer works like an executor, a custom agent is a standing (heartbeat) agent.
    pub fn profile(self) -> &'static str {
        match self {
            AgentRole::Triage => "triage",
            AgentRole::Executor | AgentRole::Engineer => "executor",
            AgentRole::Reviewer => "reviewer",
            AgentRole::Merger => "merger",
            AgentRole::Custom => "heartbeat",
        }
    }
}

fn default_runs() -> i64 {
    1
}

fn default_mode() -> ResponseMode {
    ResponseMode::Immediate
}

/// Fusion's `runtimeConfig` (the parts nbook acts on).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeConfig {
    /// None: no timer; the agent wakes on an assignment or a message only.
    #[serde(default)]
    pub heartbeat_interval_ms: Option<i64>,
    #[serde(default)]
    pub heartbeat_timeout_ms: Option<i64>,
    #[serde(default = "default_runs")]
    pub max_concurrent_runs: i64,
    #[serde(default = "default_mode")]
    pub message_response_mode: ResponseMode,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            heartbeat_interval_ms: None,
            heartbeat_timeout_ms: None,
            max_concurrent_runs: 1,
            message_response_mode: ResponseMode::Immediate,
        }
    }
}

impl RuntimeConfig {
    /// The interval the scheduler uses: the stored one, never below [`MIN_HEARTBEAT_MS`].
    pub fn effective_interval_ms(&self) -> Option<u64> {
        self.heartbeat_interval_ms
            .map(|ms| (ms.max(0) as u64).max(MIN_HEARTBEAT_MS))
    }
}

/// One durable agent, as `fn_get_agent_config` returns it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DurableAgent {
    pub id: String,
    pub name: String,
    pub role: AgentRole,
    pub reports_to: String,
    pub soul: String,
    pub instructions_text: String,
    pub instructions_path: Option<String>,
    pub heartbeat_procedure_path: Option<String>,
    pub memory: String,
    pub runtime_config: RuntimeConfig,
    pub revision: i64,
    pub created_by: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// One rejected field: which, why (a stable code) and what would be accepted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub field: String,
    pub code: &'static str,
    pub message: String,
}

impl Violation {
    pub fn new(field: &str, code: &'static str, message: impl Into<String>) -> Violation {
        Violation {
            field: field.to_string(),
            code,
            message: message.into(),
        }
    }
}

/// Who asks: an agent id (a profile key or a durable agent) or the author.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub id: String,
    pub is_author: bool,
}

impl Caller {
    pub fn author() -> Caller {
        Caller {
            id: USER_ID.to_string(),
            is_author: true,
        }
    }
}

/// The fields of a new agent (the tool's arguments, paths already checked).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NewAgent {
    pub name: String,
    pub role: Option<AgentRole>,
    pub reports_to: Option<String>,
    pub config: ConfigPatch,
}

/// A config change: each given field replaces the stored one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConfigPatch {
    pub soul: Option<String>,
    pub instructions_text: Option<String>,
    pub instructions_path: Option<String>,
    pub heartbeat_procedure_path: Option<String>,
    pub memory: Option<String>,
    pub heartbeat_interval_ms: Option<i64>,
    pub heartbeat_timeout_ms: Option<i64>,
    pub max_concurrent_runs: Option<i64>,
    pub message_response_mode: Option<ResponseMode>,
}

impl ConfigPatch {
    fn is_empty(&self) -> bool {
        *self == ConfigPatch::default()
    }

    /// Every bound the patch breaks (not fail-fast).
    pub fn violations(&self) -> Vec<Violation> {
        let mut v = Vec::new();
        let text = |v: &mut Vec<Violation>, field: &str, s: &Option<String>, limit: usize| {
            if let Some(s) = s {
                let n = s.chars().count();
                if n > limit {
                    v.push(Violation::new(
                        field,
                        "too-long",
                        format!("{n} characters; at most {limit}"),
                    ));
                }
            }
        };
        text(&mut v, "soul", &self.soul, SOUL_LIMIT);
        text(
            &mut v,
            "instructions_text",
            &self.instructions_text,
            INSTRUCTIONS_LIMIT,
        );
        text(&mut v, "memory", &self.memory, MEMORY_LIMIT);
        let min = |v: &mut Vec<Violation>, field: &str, n: Option<i64>, least: i64| {
            if let Some(n) = n.filter(|n| *n < least) {
                v.push(Violation::new(
                    field,
                    "below-minimum",
                    format!("{n} is below the minimum {least}"),
                ));
            }
        };
        min(
            &mut v,
            "heartbeat_interval_ms",
            self.heartbeat_interval_ms,
            MIN_INTERVAL_MS,
        );
        min(
            &mut v,
            "heartbeat_timeout_ms",
            self.heartbeat_timeout_ms,
            MIN_TIMEOUT_MS,
        );
        min(&mut v, "max_concurrent_runs", self.max_concurrent_runs, 1);
        v
    }

    fn apply(&self, a: &mut DurableAgent) {
        let set = |to: &mut String, from: &Option<String>| {
            if let Some(s) = from {
                *to = s.clone();
            }
        };
        set(&mut a.soul, &self.soul);
        set(&mut a.instructions_text, &self.instructions_text);
        set(&mut a.memory, &self.memory);
        // An empty path clears it.
        let path = |to: &mut Option<String>, from: &Option<String>| {
            if let Some(p) = from {
                *to = Some(p.clone()).filter(|p| !p.is_empty());
            }
        };
        path(&mut a.instructions_path, &self.instructions_path);
        path(
            &mut a.heartbeat_procedure_path,
            &self.heartbeat_procedure_path,
        );
        let rc = &mut a.runtime_config;
        if let Some(n) = self.heartbeat_interval_ms {
            rc.heartbeat_interval_ms = Some(n);
        }
        if let Some(n) = self.heartbeat_timeout_ms {
            rc.heartbeat_timeout_ms = Some(n);
        }
        if let Some(n) = self.max_concurrent_runs {
            rc.max_concurrent_runs = n;
        }
        if let Some(m) = self.message_response_mode {
            rc.message_response_mode = m;
        }
    }
}

/// Whether `id` has the form of a durable agent's id.
pub fn is_durable_id(id: &str) -> bool {
    id.strip_prefix(AGENT_PREFIX)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

const COLS: &str = "id, name, role, reports_to, soul, instructions_text, instructions_path, heartbeat_procedure_path, memory, runtime_config, revision, created_by, created_at, updated_at";

fn row(r: &rusqlite::Row) -> rusqlite::Result<(DurableAgent, String, String)> {
    Ok((
        DurableAgent {
            id: r.get(0)?,
            name: r.get(1)?,
            role: AgentRole::Custom,
            reports_to: r.get(3)?,
            soul: r.get(4)?,
            instructions_text: r.get(5)?,
            instructions_path: r.get(6)?,
            heartbeat_procedure_path: r.get(7)?,
            memory: r.get(8)?,
            runtime_config: RuntimeConfig::default(),
            revision: r.get(10)?,
            created_by: r.get(11)?,
            created_at: r.get(12)?,
            updated_at: r.get(13)?,
        },
        r.get(2)?,
        r.get(9)?,
    ))
}

fn finish((mut a, role, rc): (DurableAgent, String, String)) -> BoardResult<DurableAgent> {
    a.role = AgentRole::parse(&role).ok_or_else(|| BoardError::Corrupt {
        what: format!("agent {}", a.id),
        message: format!("unknown role '{role}'"),
    })?;
    a.runtime_config = json_col(&format!("agent {} runtime_config", a.id), &rc)?;
    Ok(a)
}

pub fn load(c: &Connection, id: &str) -> BoardResult<Option<DurableAgent>> {
    c.query_row(
        &format!("SELECT {COLS} FROM nbook_board_agent WHERE id = ?1"),
        [id],
        row,
    )
    .optional()?
    .map(finish)
    .transpose()
}

pub fn require(c: &Connection, id: &str) -> BoardResult<DurableAgent> {
    load(c, id)?.ok_or_else(|| BoardError::AgentNotFound { id: id.to_string() })
}

/// Every durable agent, oldest first.
pub fn all(c: &Connection) -> BoardResult<Vec<DurableAgent>> {
    let mut st = c.prepare(&format!(
        "SELECT {COLS} FROM nbook_board_agent ORDER BY seq"
    ))?;
    let rows = st.query_map([], row)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(finish).collect()
}

/// The response mode of agent `agent_id`: a durable agent's `messageResponseMode`, else
/// `immediate` (Fusion's default; profiles and sessions have no config).
pub fn response_mode(c: &Connection, agent_id: &str) -> BoardResult<ResponseMode> {
    if !is_durable_id(agent_id) {
        return Ok(ResponseMode::Immediate);
    }
    Ok(load(c, agent_id)?
        .map(|a| a.runtime_config.message_response_mode)
        .unwrap_or(ResponseMode::Immediate))
}

/// The open tasks (not in their workflow's done or archived column) assigned to `id`, in id
/// order.
pub fn assigned_tasks(c: &Connection, id: &str) -> BoardResult<Vec<String>> {
    Ok(super::tasks::all(c, None)?
        .into_iter()
        .filter(|t| {
            assignee(t) == Some(id) && !super::workflow::lanes_for_task(c, t).finished(&t.column)
        })
        .map(|t| t.id)
        .collect())
}

/// The durable agents reporting to `id`.
pub fn reports_of(c: &Connection, id: &str) -> BoardResult<Vec<String>> {
    let mut st =
        c.prepare("SELECT id FROM nbook_board_agent WHERE reports_to = ?1 ORDER BY seq")?;
    let ids = st
        .query_map([id], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(ids)
}

/// The archived configs of agent `id`, oldest first: `{revision, change, actor, createdAt,
/// config}`.
pub fn revisions(c: &Connection, id: &str) -> BoardResult<Vec<Value>> {
    let mut st = c.prepare(
        "SELECT revision, change, actor, created_at, config FROM nbook_board_agent_revision WHERE agent_id = ?1 ORDER BY seq",
    )?;
    let rows = st
        .query_map([id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(rev, change, actor, at, config)| {
            Ok(json!({
                "revision": rev,
                "change": change,
                "actor": actor,
                "createdAt": at,
                "config": json_col::<Value>(&format!("agent {id} revision {rev}"), &config)?,
            }))
        })
        .collect()
}

/// The author manages every agent; an agent only its direct reports.
pub fn require_manager(a: &DurableAgent, caller: &Caller) -> BoardResult<()> {
    if caller.is_author || a.reports_to == caller.id {
        return Ok(());
    }
    Err(BoardError::NotDirectReport {
        id: a.id.clone(),
        caller: caller.id.clone(),
        reports_to: a.reports_to.clone(),
    })
}

fn rejected(agent_id: Option<&str>, violations: Vec<Violation>) -> BoardResult<()> {
    if violations.is_empty() {
        return Ok(());
    }
    Err(BoardError::AgentRejected {
        agent_id: agent_id.map(str::to_string),
        violations,
    })
}

fn save_revision(c: &Connection, a: &DurableAgent, change: &str, actor: &str) -> BoardResult<()> {
    c.execute(
        "INSERT INTO nbook_board_agent_revision (agent_id, revision, config, change, actor, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            a.id,
            a.revision,
            serde_json::to_string(a).unwrap_or_else(|_| "{}".into()),
            change,
            actor,
            now()
        ],
    )?;
    Ok(())
}

fn write(c: &Connection, a: &DurableAgent) -> BoardResult<()> {
    c.execute(
        "UPDATE nbook_board_agent SET soul = ?2, instructions_text = ?3, instructions_path = ?4, heartbeat_procedure_path = ?5, memory = ?6, runtime_config = ?7, revision = ?8, updated_at = ?9, reports_to = ?10 WHERE id = ?1",
        params![
            a.id,
            a.soul,
            a.instructions_text,
            a.instructions_path,
            a.heartbeat_procedure_path,
            a.memory,
            serde_json::to_string(&a.runtime_config).unwrap_or_else(|_| "{}".into()),
            a.revision,
            a.updated_at,
            a.reports_to,
        ],
    )?;
    Ok(())
}

/// The sequence number the next created agent gets (AUTOINCREMENT: above every id ever given).
fn next_seq(c: &Connection) -> BoardResult<i64> {
    let used: Option<i64> = c
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'nbook_board_agent'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    let max: Option<i64> =
        c.query_row("SELECT MAX(seq) FROM nbook_board_agent", [], |r| r.get(0))?;
    Ok(used.unwrap_or(0).max(max.unwrap_or(0)) + 1)
}

/// Whether `id` names a manager a durable agent may report to: the author, a durable agent,
/// or (by `is_profile`) a permanent profile agent.
fn known_manager(c: &Connection, id: &str, is_profile: &dyn Fn(&str) -> bool) -> BoardResult<bool> {
    if id == USER_ID {
        return Ok(true);
    }
    if is_durable_id(id) {
        return Ok(load(c, id)?.is_some());
    }
    Ok(is_profile(id))
}

/// Create a durable agent. `reportsTo` defaults to the caller.
pub fn create(
    c: &Connection,
    new: &NewAgent,
    caller: &Caller,
    is_profile: &dyn Fn(&str) -> bool,
    extra: &[Violation],
) -> BoardResult<Outcome> {
    let mut v = extra.to_vec();
    v.extend(new.config.violations());
    let name = new.name.trim();
    if name.is_empty() {
        v.push(Violation::new("name", "empty", "give the agent a name"));
    } else if name.chars().count() > NAME_LIMIT {
        v.push(Violation::new(
            "name",
            "too-long",
            format!("{} characters; at most {NAME_LIMIT}", name.chars().count()),
        ));
    } else if all(c)?
        .iter()
        .any(|a| a.name.to_lowercase() == name.to_lowercase())
    {
        v.push(Violation::new(
            "name",
            "name-taken",
            format!("a durable agent is already named '{name}'"),
        ));
    }
    if new.role.is_none() {
        v.push(Violation::new(
            "role",
            "required",
            "role is one of triage, executor, reviewer, merger, engineer, custom",
        ));
    }
    let reports_to = new
        .reports_to
        .as_deref()
        .map(str::trim)
        .unwrap_or(&caller.id)
        .to_string();
    if !known_manager(c, &reports_to, is_profile)? {
        v.push(Violation::new(
            "reportsTo",
            "unknown-agent",
            format!("'{reports_to}' is not an agent: give a permanent agent's id from fn_list_agents (a profile key or agent-<n>) or dashboard (the author)"),
        ));
    }
    rejected(None, v)?;
    let seq = next_seq(c)?;
    let id = format!("{AGENT_PREFIX}{seq:03}");
    let at = now();
    let mut a = DurableAgent {
        id: id.clone(),
        name: name.to_string(),
        role: new.role.unwrap_or(AgentRole::Custom),
        reports_to,
        soul: String::new(),
        instructions_text: String::new(),
        instructions_path: None,
        heartbeat_procedure_path: None,
        memory: String::new(),
        runtime_config: RuntimeConfig::default(),
        revision: 1,
        created_by: Some(caller.id.clone()),
        created_at: at.clone(),
        updated_at: at,
    };
    new.config.apply(&mut a);
    c.execute(
        "INSERT INTO nbook_board_agent (seq, id, name, role, reports_to, soul, instructions_text, instructions_path, heartbeat_procedure_path, memory, runtime_config, revision, created_by, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        params![
            seq,
            a.id,
            a.name,
            a.role.as_str(),
            a.reports_to,
            a.soul,
            a.instructions_text,
            a.instructions_path,
            a.heartbeat_procedure_path,
            a.memory,
            serde_json::to_string(&a.runtime_config).unwrap_or_else(|_| "{}".into()),
            a.revision,
            a.created_by,
            a.created_at,
            a.updated_at,
        ],
    )?;
    Ok(Outcome {
        text: format!(
            "Created durable agent {id} ({}), role {}, reporting to {}; its sessions run with the {} profile's tools.",
            a.name,
            a.role.as_str(),
            a.reports_to,
            a.role.profile()
        ),
        value: json!({
            "outcome": "created",
            "agentId": id,
            "agent": a,
        }),
        touched: vec![Touched::Agent(id)],
        // The id depends on the sequence: an agent created meanwhile makes the preview stale.
        targets: vec![TargetState {
            key: "board/agent/next-id".into(),
            fingerprint: format!("seq {seq}"),
        }],
        ..Outcome::default()
    })
}

/// Change a direct report's config (the caller must be its manager or the author).
pub fn update_config(
    c: &Connection,
    id: &str,
    patch: &ConfigPatch,
    caller: &Caller,
    extra: &[Violation],
) -> BoardResult<Outcome> {
    let mut a = require(c, id)?;
    require_manager(&a, caller)?;
    let mut v = extra.to_vec();
    if patch.is_empty() && v.is_empty() {
        v.push(Violation::new(
            "agent_id",
            "no-fields",
            "give at least one field to change: soul, instructions_text, instructions_path, heartbeat_procedure_path, heartbeat_interval_ms, heartbeat_timeout_ms, max_concurrent_runs, message_response_mode",
        ));
    }
    v.extend(patch.violations());
    rejected(Some(id), v)?;
    edit(c, &mut a, patch, "config", &caller.id)
}

/// The calling durable agent edits its own soul, instructions text or memory.
pub fn update_identity(
    c: &Connection,
    id: &str,
    patch: &ConfigPatch,
    actor: &str,
) -> BoardResult<Outcome> {
    let mut a = require(c, id)?;
    let mut v = Vec::new();
    if patch.soul.is_none() && patch.instructions_text.is_none() && patch.memory.is_none() {
        v.push(Violation::new(
            "soul",
            "no-fields",
            "give at least one of soul, instructionsText, memory",
        ));
    }
    v.extend(patch.violations().into_iter().map(|mut x| {
        if x.field == "instructions_text" {
            x.field = "instructionsText".into();
        }
        x
    }));
    rejected(Some(id), v)?;
    edit(c, &mut a, patch, "identity", actor)
}

fn edit(
    c: &Connection,
    a: &mut DurableAgent,
    patch: &ConfigPatch,
    change: &str,
    actor: &str,
) -> BoardResult<Outcome> {
    let before = a.clone();
    patch.apply(a);
    if *a == before {
        return Ok(Outcome {
            text: format!("{} already has that config; nothing changed.", a.id),
            value: json!({"agentId": a.id, "changed": false, "agent": a}),
            ..Outcome::default()
        });
    }
    save_revision(c, &before, change, actor)?;
    a.revision += 1;
    a.updated_at = now();
    write(c, a)?;
    let fields: Vec<&str> = [
        ("soul", before.soul != a.soul),
        (
            "instructionsText",
            before.instructions_text != a.instructions_text,
        ),
        (
            "instructionsPath",
            before.instructions_path != a.instructions_path,
        ),
        (
            "heartbeatProcedurePath",
            before.heartbeat_procedure_path != a.heartbeat_procedure_path,
        ),
        ("memory", before.memory != a.memory),
        ("runtimeConfig", before.runtime_config != a.runtime_config),
    ]
    .into_iter()
    .filter_map(|(f, changed)| changed.then_some(f))
    .collect();
    Ok(Outcome {
        text: format!(
            "Updated {} ({}): {} (revision {}; revision {} is archived).",
            a.id,
            a.name,
            fields.join(", "),
            a.revision,
            before.revision
        ),
        value: json!({
            "agentId": a.id,
            "changed": true,
            "fields": fields,
            "revision": a.revision,
            "agent": a,
        }),
        touched: vec![Touched::Agent(a.id.clone())],
        ..Outcome::default()
    })
}

/// Delete a direct report. Its open assigned tasks block the delete unless `force` (they are
/// unassigned) or `reassign_to` (they go to that agent); its own reports move up to its
/// manager; its last config is archived.
pub fn delete(
    c: &Connection,
    id: &str,
    force: bool,
    reassign_to: Option<&str>,
    caller: &Caller,
    is_profile: &dyn Fn(&str) -> bool,
) -> BoardResult<Outcome> {
    let a = require(c, id)?;
    require_manager(&a, caller)?;
    let tasks = assigned_tasks(c, id)?;
    let to = reassign_to.map(str::trim).filter(|s| !s.is_empty());
    if let Some(to) = to {
        let ok = to != id && to != USER_ID && known_manager(c, to, is_profile)?;
        if !ok {
            return Err(BoardError::AgentRejected {
                agent_id: Some(id.to_string()),
                violations: vec![Violation::new(
                    "reassign_to",
                    "unknown-agent",
                    format!("'{to}' cannot take the tasks: give another permanent agent from fn_list_agents (a profile key or agent-<n>)"),
                )],
            });
        }
    }
    if !tasks.is_empty() && to.is_none() && !force {
        return Err(BoardError::AgentHasTasks {
            id: id.to_string(),
            tasks,
        });
    }
    let mut out = Outcome::default();
    let mut moved = Vec::new();
    for t in &tasks {
        let o = match to {
            Some(to) => set_assignee(c, t, to, Some(&caller.id))?,
            None => clear_assignee(c, t, Some(&caller.id))?,
        };
        out.touched.extend(o.touched);
        out.files.extend(o.files);
        moved.push(t.clone());
    }
    let reports = reports_of(c, id)?;
    for r in &reports {
        let mut ra = require(c, r)?;
        save_revision(c, &ra, "config", &caller.id)?;
        ra.reports_to = a.reports_to.clone();
        ra.revision += 1;
        ra.updated_at = now();
        write(c, &ra)?;
        out.touched.push(Touched::Agent(r.clone()));
    }
    save_revision(c, &a, "delete", &caller.id)?;
    c.execute("DELETE FROM nbook_board_agent WHERE id = ?1", [id])?;
    out.touched.insert(0, Touched::Agent(id.to_string()));
    let mut text = format!("Deleted durable agent {id} ({}).", a.name);
    if !moved.is_empty() {
        text.push_str(&match to {
            Some(to) => format!(" Its tasks {} are now assigned to {to}.", moved.join(", ")),
            None => format!(" Its tasks {} are unassigned.", moved.join(", ")),
        });
    }
    if !reports.is_empty() {
        text.push_str(&format!(
            " Its reports {} now report to {}.",
            reports.join(", "),
            a.reports_to
        ));
    }
    out.text = text;
    out.value = json!({
        "outcome": "deleted",
        "agentId": id,
        "reassignedTo": to,
        "tasks": moved,
        "reparented": reports,
    });
    Ok(out)
}

/// The record as the preview diff shows it.
pub fn snapshot(c: &Connection, id: &str) -> BoardResult<Option<Value>> {
    Ok(load(c, id)?.and_then(|a| serde_json::to_value(a).ok()))
}

/// The part of a durable agent's system prompt that is its identity: soul, instructions (the
/// text, then the file's content, given by the caller who may read it), memory.
pub fn prompt_section(a: &DurableAgent, instructions_file: Option<&str>) -> String {
    let mut s = format!(
        "\n\n# You are {} ({}), a durable {} agent reporting to {}\n",
        a.name,
        a.id,
        a.role.as_str(),
        a.reports_to
    );
    let part = |s: &mut String, title: &str, body: &str| {
        if !body.trim().is_empty() {
            s.push_str(&format!("\n## {title}\n\n{}\n", body.trim_end()));
        }
    };
    part(&mut s, "Soul", &a.soul);
    part(&mut s, "Instructions", &a.instructions_text);
    if let (Some(p), Some(text)) = (&a.instructions_path, instructions_file) {
        part(&mut s, &format!("Instructions ({p})"), text);
    }
    part(&mut s, "Memory", &a.memory);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_intervals() {
        assert!(is_durable_id("agent-001"));
        assert!(!is_durable_id("agent-"));
        assert!(!is_durable_id("agent-x1"));
        assert!(!is_durable_id("writer"));
        let mut rc = RuntimeConfig::default();
        assert_eq!(rc.effective_interval_ms(), None);
        rc.heartbeat_interval_ms = Some(1000);
        assert_eq!(rc.effective_interval_ms(), Some(MIN_HEARTBEAT_MS));
        rc.heartbeat_interval_ms = Some(3_600_000);
        assert_eq!(rc.effective_interval_ms(), Some(3_600_000));
    }

    #[test]
    fn every_violation_is_listed() {
        let p = ConfigPatch {
            soul: Some("x".repeat(SOUL_LIMIT + 1)),
            heartbeat_interval_ms: Some(999),
            heartbeat_timeout_ms: Some(4999),
            max_concurrent_runs: Some(0),
            ..ConfigPatch::default()
        };
        let codes: Vec<(String, &str)> = p
            .violations()
            .into_iter()
            .map(|v| (v.field, v.code))
            .collect();
        assert_eq!(
            codes,
            vec![
                ("soul".into(), "too-long"),
                ("heartbeat_interval_ms".into(), "below-minimum"),
                ("heartbeat_timeout_ms".into(), "below-minimum"),
                ("max_concurrent_runs".into(), "below-minimum"),
            ]
        );
    }
}
