//! Linked agents: creating a session for another profile on behalf of a caller (with its
//! `initial` object checked against the profile's schema), the caller's link ledger
//! (`agent.link.<id>` / `agent.detach.<id>` custom-state keys), and the [`AgentHost`] seam
//! through which tools and workflows start model runs.
//!
//! The engine knows nothing about model providers; the agent layer (`crate::agent::host`)
//! implements `AgentHost` and registers itself with [`Engine::set_host`]. Without a host
//! (e.g. a bare `nbook call`), tools that need one fail with a clear message.

use std::sync::{Arc, Weak};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::profiles::Creation;
use super::types::{Mode, SessionId, SessionInfo};
use super::Engine;

pub const LINK_PREFIX: &str = "agent.link.";
pub const DETACH_PREFIX: &str = "agent.detach.";
/// The `initial` object a session was created with.
pub const INITIAL_KEY: &str = "agent.initial";
/// A session's own system prompt, used in place of its profile's (a spawned child's
/// `systemPromptOverride`).
pub const SYSTEM_PROMPT_KEY: &str = "agent.system_prompt";

/// NeuroBook's invocation modes (notes §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InvokeMode {
    /// Start a run with a message and/or input (queued as a follow-up if one is running).
    Prompt,
    /// Resume from the tail without a new message (idle sessions only).
    Continue,
    /// Inject a message into the running run at its next turn boundary.
    Steer,
    /// Run after the current run completes.
    Followup,
}

impl InvokeMode {
    pub fn parse(s: &str) -> Option<InvokeMode> {
        match s {
            "prompt" => Some(InvokeMode::Prompt),
            "continue" => Some(InvokeMode::Continue),
            "steer" => Some(InvokeMode::Steer),
            "followup" => Some(InvokeMode::Followup),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            InvokeMode::Prompt => "prompt",
            InvokeMode::Continue => "continue",
            InvokeMode::Steer => "steer",
            InvokeMode::Followup => "followup",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct InvokeRequest {
    /// The invoking session; `None` for the author, a workflow or a system caller.
    pub caller: Option<SessionId>,
    pub session_id: SessionId,
    pub message: Option<String>,
    /// Checked against the target profile's payload schema.
    pub input: Option<Value>,
    pub mode: InvokeMode,
    /// `provider/model` or a model key from config.toml, for this invocation only.
    pub model: Option<String>,
    pub origin_call_id: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InvokeStats {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
    pub elapsed_ms: u64,
}

/// `invoke_agent`'s details (notes §2.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InvokeOutcome {
    /// completed | waiting | error | queued
    pub status: String,
    pub session_id: SessionId,
    pub final_message: String,
    pub data: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<InvokeStats>,
}

/// Starts model runs. Implemented by the agent layer; every method may block its thread, so
/// call them from worker threads (tools and workflow scripts already run on one).
pub trait AgentHost: Send + Sync {
    /// Admit an invocation and wait for the run it starts (or joins) to end.
    fn invoke_blocking(&self, req: InvokeRequest) -> Result<InvokeOutcome, InvokeError>;
    /// Admit an invocation as a background job owned by `req.caller`; returns the job id.
    /// The job's result is delivered to the owner as a follow-up message when it ends.
    fn invoke_background(&self, req: InvokeRequest) -> Result<String, InvokeError>;
    /// Stop a session's running turn (cancel); true if something was running.
    fn cancel_session(&self, session_id: &str) -> bool;
}

/// Why an invocation was refused before it started, or lost. Each names the session and, where
/// there is one, the mode to use instead.
#[derive(Debug, thiserror::Error)]
pub enum InvokeError {
    #[error("no session with id '{0}'")]
    UnknownSession(String),
    #[error("an agent cannot invoke itself (session {0})")]
    SelfInvoke(String),
    #[error("active_invocation_required: session {0} is idle; use mode \"prompt\" to start it")]
    NotRunning(String),
    #[error("active_invocation_exists: session {0} is running; use \"steer\" or \"followup\", or wait for it to finish")]
    Running(String),
    /// The request itself is wrong (the message says which field and what is expected).
    #[error("{0}")]
    Invalid(String),
    #[error("the invocation of session {0} was dropped")]
    Dropped(String),
    #[error("the agent host is shutting down")]
    ShuttingDown,
    #[error(transparent)]
    Job(#[from] super::jobs::JobError),
}

/// A value that does not match a JSON Schema (or a schema that cannot be compiled).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SchemaMismatch {
    #[error("invalid schema: {0}")]
    BadSchema(String),
    /// One line per error, each naming its JSON Pointer.
    #[error("{}", .0.join("\n  "))]
    Errors(Vec<String>),
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AgentError {
    #[error("unknown profile '{0}'; get_agent_profile or `nbook tools` list the available ones")]
    UnknownProfile(String),
    #[error("profile '{0}' is system-only and cannot be created by an agent")]
    SystemOnly(String),
    #[error("initial does not match the schema of profile {profile}:\n  {errors}")]
    BadInitial {
        profile: String,
        errors: SchemaMismatch,
    },
    #[error("no session with id '{0}'")]
    UnknownSession(String),
    #[error("{0}")]
    Other(String),
}

/// Check a value against a JSON Schema; errors name the JSON Pointer under `prefix`.
pub fn schema_errors(schema: &Value, value: &Value, prefix: &str) -> Result<(), SchemaMismatch> {
    let validator =
        jsonschema::validator_for(schema).map_err(|e| SchemaMismatch::BadSchema(e.to_string()))?;
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("at {prefix}{}: {e}", e.instance_path))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(SchemaMismatch::Errors(errors))
    }
}

/// One linked agent, as `get_agent` lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkedAgent {
    pub session_id: SessionId,
    pub profile_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub status: String,
    pub detached: bool,
}

impl Engine {
    /// Register the agent host (held weakly: the host owns the engine, not the reverse).
    pub fn set_host(&self, host: Weak<dyn AgentHost>) {
        *self.host.lock().unwrap_or_else(|e| e.into_inner()) = Some(host);
    }

    pub fn host(&self) -> Option<Arc<dyn AgentHost>> {
        self.host
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(Weak::upgrade)
    }

    /// Create a session for `profile_key`, linked to `caller` when there is one. `caller`
    /// `None` is a system caller (workflow, subject memory), which may use system-only profiles.
    pub fn create_agent(
        &self,
        caller: Option<&str>,
        profile_key: &str,
        initial: Value,
        title: Option<&str>,
    ) -> Result<SessionInfo, AgentError> {
        let profile = self
            .profiles()
            .get(profile_key)
            .ok_or_else(|| AgentError::UnknownProfile(profile_key.to_string()))?;
        if caller.is_some() && profile.creation == Creation::SystemOnly {
            return Err(AgentError::SystemOnly(profile_key.to_string()));
        }
        if let Some(c) = caller {
            if self.session(c).is_none() {
                return Err(AgentError::UnknownSession(c.to_string()));
            }
        }
        if let Some(schema) = &profile.initial_schema {
            schema_errors(schema, &initial, "/initial").map_err(|errors| {
                AgentError::BadInitial {
                    profile: profile_key.to_string(),
                    errors,
                }
            })?;
        }
        let title = title
            .map(str::to_string)
            .unwrap_or_else(|| profile.name.clone());
        let info = self
            .create_session(
                profile_key,
                Mode::Normal,
                &title,
                caller.map(str::to_string),
            )
            .map_err(|e| AgentError::Other(e.to_string()))?;
        let set = |id: &str, k: String, v: Value| {
            self.set_session_state(id, vec![(k, v)])
                .map_err(|e| AgentError::Other(e.to_string()))
        };
        set(&info.id, INITIAL_KEY.into(), initial)?;
        if let Some(c) = caller {
            set(
                c,
                format!("{LINK_PREFIX}{}", info.id),
                json!({"sessionId": info.id, "profileKey": profile_key}),
            )?;
        }
        Ok(info)
    }

    /// Create a child session of `parent` on the engine's behalf (a system caller: role
    /// profiles are system-only), with `state` set on it before anything can run it, and
    /// linked to the parent like `create_agent` links (so the parent's cancel reaches it while
    /// it waits on it). Nothing is created when the parent or the profile is unknown.
    pub fn spawn_child(
        &self,
        parent: &str,
        profile_key: &str,
        initial: Value,
        title: &str,
        state: Vec<(String, Value)>,
    ) -> Result<SessionInfo, AgentError> {
        if self.session(parent).is_none() {
            return Err(AgentError::UnknownSession(parent.to_string()));
        }
        if self.profiles().get(profile_key).is_none() {
            return Err(AgentError::UnknownProfile(profile_key.to_string()));
        }
        let info = self
            .create_session(profile_key, Mode::Normal, title, Some(parent.to_string()))
            .map_err(|e| AgentError::Other(e.to_string()))?;
        let mut updates = vec![(INITIAL_KEY.to_string(), initial)];
        updates.extend(state);
        self.set_session_state(&info.id, updates)
            .map_err(|e| AgentError::Other(e.to_string()))?;
        self.set_session_state(
            parent,
            vec![(
                format!("{LINK_PREFIX}{}", info.id),
                json!({"sessionId": info.id, "profileKey": profile_key}),
            )],
        )
        .map_err(|e| AgentError::Other(e.to_string()))?;
        Ok(info)
    }

    /// Create a task session (see `crate::runner`): a session of `profile_key` whose state
    /// names the board task it works on (`board.task`), so the task tools act on that task and
    /// the scheduler counts it against the concurrency limit. `parent` is the session that
    /// started it, if any (it is linked to it like `create_agent`'s agents); system-only
    /// profiles are allowed (the role profiles are).
    pub fn create_task_session(
        &self,
        parent: Option<&str>,
        profile_key: &str,
        task: &str,
        title: &str,
    ) -> Result<SessionInfo, AgentError> {
        if self.profiles().get(profile_key).is_none() {
            return Err(AgentError::UnknownProfile(profile_key.to_string()));
        }
        if let Some(p) = parent {
            if self.session(p).is_none() {
                return Err(AgentError::UnknownSession(p.to_string()));
            }
        }
        let info = self
            .create_session(profile_key, Mode::Normal, title, parent.map(str::to_string))
            .map_err(|e| AgentError::Other(e.to_string()))?;
        self.set_session_state(
            &info.id,
            vec![(crate::tools::fusion::SESSION_TASK.to_string(), json!(task))],
        )
        .map_err(|e| AgentError::Other(e.to_string()))?;
        if let Some(p) = parent {
            self.set_session_state(
                p,
                vec![(
                    format!("{LINK_PREFIX}{}", info.id),
                    json!({"sessionId": info.id, "profileKey": profile_key}),
                )],
            )
            .map_err(|e| AgentError::Other(e.to_string()))?;
        }
        Ok(info)
    }

    /// The board task a session works on (`board.task` in its state), if any.
    pub fn session_task(&self, id: &str) -> Option<String> {
        self.session_state(id)
            .get(crate::tools::fusion::SESSION_TASK)
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// The caller's linked agents, detached ones included (flagged).
    pub fn linked_agents(&self, caller: &str) -> Vec<LinkedAgent> {
        let state = self.session_state(caller);
        let mut out = Vec::new();
        for (key, value) in state.range(LINK_PREFIX.to_string()..) {
            let Some(id) = key.strip_prefix(LINK_PREFIX) else {
                break;
            };
            let detached = state.contains_key(&format!("{DETACH_PREFIX}{id}"));
            let info = self.session(id);
            out.push(LinkedAgent {
                session_id: id.to_string(),
                profile_key: value
                    .get("profileKey")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                title: info.as_ref().map(|i| i.title.clone()),
                status: info
                    .map(|i| i.state.label().to_string())
                    .unwrap_or_else(|| "missing".into()),
                detached,
            });
        }
        out.sort_by_key(|a| a.session_id.parse::<u64>().unwrap_or(u64::MAX));
        out
    }

    /// Unlink an agent from the caller (the session itself stays).
    /// Returns `detached`, `already_detached` or `not_linked`.
    pub fn detach_agent(&self, caller: &str, id: &str) -> Result<&'static str, AgentError> {
        let linked = self.linked_agents(caller);
        let Some(a) = linked.iter().find(|a| a.session_id == id) else {
            return Ok("not_linked");
        };
        if a.detached {
            return Ok("already_detached");
        }
        self.set_session_state(
            caller,
            vec![(
                format!("{DETACH_PREFIX}{id}"),
                json!({"sessionId": id, "detachedAt": super::session_log::now_rfc3339()}),
            )],
        )
        .map_err(|e| AgentError::Other(e.to_string()))?;
        Ok("detached")
    }
}
