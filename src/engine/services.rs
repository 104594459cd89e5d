//! What the engine offers tools and workflow runs — and nothing more. A tool gets these
//! capabilities through `ToolCtx::services`, never the engine itself, so no tool can decide
//! an approval, reach the queue or write another session's log.
//!
//! The capabilities: read sessions and profiles, create and detach linked sessions and reach
//! the agent host (which starts model runs), ask the author, and start and follow jobs.

use std::sync::Arc;

use std::collections::BTreeMap;

use serde_json::Value;
use tokio::sync::oneshot;

use super::agents::{AgentError, AgentHost, LinkedAgent};
use super::inputs::InputError;
use super::jobs::JobStore;
use super::profiles::Profiles;
use super::session_log::ReadLog;
use super::{Engine, EngineError};
use crate::config::Config;
use crate::protocol::{Answer, InputRequest, InputSource, Question, SessionInfo};
use crate::workspace::Workspace;

/// The engine as tools see it. Implemented by the engine; every method forwards to it.
pub trait ToolServices: Send + Sync {
    fn workspace(&self) -> &Arc<Workspace>;
    fn config(&self) -> Arc<Config>;

    // Read model: sessions and profiles.
    fn profiles(&self) -> Arc<Profiles>;
    fn session(&self, id: &str) -> Option<SessionInfo>;
    fn session_log(&self, id: &str) -> Result<ReadLog, EngineError>;
    /// The caller's linked agents, detached ones included (flagged).
    fn linked_agents(&self, caller: &str) -> Vec<LinkedAgent>;
    /// Every session of this project (the board's agents: `fn_list_agents`).
    fn sessions(&self) -> Vec<SessionInfo>;
    /// A session's custom state (read only: a tool changes only its own, by its output).
    fn session_state(&self, id: &str) -> Arc<BTreeMap<String, Value>>;

    // Sessions and the agent-host seam.
    /// Create a session for `profile_key`, linked to `caller` when there is one (`None`: a
    /// system caller, which may use system-only profiles).
    fn create_agent(
        &self,
        caller: Option<&str>,
        profile_key: &str,
        initial: Value,
        title: Option<&str>,
    ) -> Result<SessionInfo, AgentError>;
    fn detach_agent(&self, caller: &str, id: &str) -> Result<&'static str, AgentError>;
    /// A child session of `parent` created on the engine's behalf with `state` set on it
    /// (`fn_spawn_agent`); see [`Engine::spawn_child`].
    fn spawn_child(
        &self,
        parent: &str,
        profile_key: &str,
        initial: Value,
        title: &str,
        state: Vec<(String, Value)>,
    ) -> Result<SessionInfo, AgentError>;
    /// Create a session of `profile_key` working on board task `task` (`board.task`), linked
    /// to `parent` when there is one.
    fn create_task_session(
        &self,
        parent: Option<&str>,
        profile_key: &str,
        task: &str,
        title: &str,
    ) -> Result<SessionInfo, AgentError>;
    fn set_title(&self, id: &str, title: &str);
    /// The agent host, when this process runs agents (the TUI, `nbook run`).
    fn host(&self) -> Option<Arc<dyn AgentHost>>;

    // The author.
    /// Ask the author and block this (worker) thread until the answer or a withdrawal.
    fn ask_blocking(
        &self,
        session_id: &str,
        source: InputSource,
        id: &str,
        title: &str,
        questions: Vec<Question>,
    ) -> Result<Vec<Answer>, InputError>;
    /// Ask the author without waiting (the answer is the receiver's); see
    /// [`Engine::ask_deferred`].
    fn ask_deferred(
        &self,
        session_id: &str,
        id: &str,
        title: &str,
        questions: Vec<Question>,
    ) -> Result<(InputRequest, oneshot::Receiver<Vec<Answer>>), InputError>;
    fn withdraw_input(&self, id: &str);

    // Jobs.
    fn jobs(&self) -> &Arc<JobStore>;
}

impl ToolServices for Engine {
    fn workspace(&self) -> &Arc<Workspace> {
        Engine::workspace(self)
    }
    fn config(&self) -> Arc<Config> {
        Engine::config(self)
    }
    fn profiles(&self) -> Arc<Profiles> {
        Engine::profiles(self)
    }
    fn session(&self, id: &str) -> Option<SessionInfo> {
        Engine::session(self, id)
    }
    fn session_log(&self, id: &str) -> Result<ReadLog, EngineError> {
        Engine::session_log(self, id)
    }
    fn linked_agents(&self, caller: &str) -> Vec<LinkedAgent> {
        Engine::linked_agents(self, caller)
    }
    fn sessions(&self) -> Vec<SessionInfo> {
        Engine::sessions(self)
    }
    fn session_state(&self, id: &str) -> Arc<BTreeMap<String, Value>> {
        Engine::session_state(self, id)
    }
    fn create_agent(
        &self,
        caller: Option<&str>,
        profile_key: &str,
        initial: Value,
        title: Option<&str>,
    ) -> Result<SessionInfo, AgentError> {
        Engine::create_agent(self, caller, profile_key, initial, title)
    }
    fn detach_agent(&self, caller: &str, id: &str) -> Result<&'static str, AgentError> {
        Engine::detach_agent(self, caller, id)
    }
    fn spawn_child(
        &self,
        parent: &str,
        profile_key: &str,
        initial: Value,
        title: &str,
        state: Vec<(String, Value)>,
    ) -> Result<SessionInfo, AgentError> {
        Engine::spawn_child(self, parent, profile_key, initial, title, state)
    }
    fn create_task_session(
        &self,
        parent: Option<&str>,
        profile_key: &str,
        task: &str,
        title: &str,
    ) -> Result<SessionInfo, AgentError> {
        Engine::create_task_session(self, parent, profile_key, task, title)
    }
    fn set_title(&self, id: &str, title: &str) {
        Engine::set_title(self, id, title)
    }
    fn host(&self) -> Option<Arc<dyn AgentHost>> {
        Engine::host(self)
    }
    fn ask_blocking(
        &self,
        session_id: &str,
        source: InputSource,
        id: &str,
        title: &str,
        questions: Vec<Question>,
    ) -> Result<Vec<Answer>, InputError> {
        Engine::ask_blocking(self, session_id, source, id, title, questions)
    }
    fn ask_deferred(
        &self,
        session_id: &str,
        id: &str,
        title: &str,
        questions: Vec<Question>,
    ) -> Result<(InputRequest, oneshot::Receiver<Vec<Answer>>), InputError> {
        Engine::ask_deferred(self, session_id, id, title, questions)
    }
    fn withdraw_input(&self, id: &str) {
        Engine::withdraw_input(self, id)
    }
    fn jobs(&self) -> &Arc<JobStore> {
        Engine::jobs(self)
    }
}
