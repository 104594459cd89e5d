//! Sessions started *as* a durable agent (`agent-<n>`, `crate::board::agents`): the Sessions
//! pane's new-session form and `nbook run --agent` both come here. Such a session runs with
//! its agent's role profile (`AgentRole::profile`), and its state key [`AGENT_STATE_KEY`]
//! (`board.agent`) holds the agent id — which is what gives it the agent's identity in its
//! system prompt (`crate::agent::run_loop`), makes mail to the agent its mail, and makes a
//! rating of its run land on the agent. The session list shows the agent
//! ([`SessionInfo::agent`], kept from the same state record so it survives a restart).

use serde_json::Value;

use super::{Engine, EngineError, Mode, SessionInfo};
use crate::board::agents::{self as ba, DurableAgent};
use crate::board::{Board, BoardError};

/// The session-state key naming the durable agent a session runs as (the tools'
/// `crate::tools::fusion::memory::SESSION_AGENT`).
pub const AGENT_STATE_KEY: &str = "board.agent";

/// How the author lists the durable agents, for the errors that name an unknown one.
pub const LIST_AGENTS_HINT: &str = "`nbook call fn_list_agents --profile executor --args '{}'` lists the agents (durable ones are agent-<n>), or open the project in nbook: the Sessions pane's new-session form (n) lists them";

/// Why no session was started as an agent. Nothing is created in any of these cases.
#[derive(Debug, thiserror::Error)]
pub enum AgentSessionError {
    #[error("'{id}' is not a durable agent id: durable agents are agent-<n>; {LIST_AGENTS_HINT}")]
    NotAgentId { id: String },
    #[error("there is no durable agent {id} in this project; {LIST_AGENTS_HINT}")]
    UnknownAgent { id: String },
    #[error("durable agent {id} could not be read: {source}")]
    Board {
        id: String,
        #[source]
        source: BoardError,
    },
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// The agent id a `board.agent` state value names, when it names a durable agent.
pub fn agent_of(v: &Value) -> Option<String> {
    v.as_str()
        .filter(|id| ba::is_durable_id(id))
        .map(str::to_string)
}

impl Engine {
    fn agents_board(&self) -> Board {
        Board::new(self.ws.root(), self.ws.name())
    }

    /// Every durable agent of the project, oldest first (none without a database yet).
    pub fn durable_agents(&self) -> Result<Vec<DurableAgent>, BoardError> {
        if !self.ws.db_path().exists() {
            return Ok(Vec::new());
        }
        self.agents_board().read(ba::all)
    }

    /// The durable agent `id`, or why there is none.
    pub fn durable_agent(&self, id: &str) -> Result<DurableAgent, AgentSessionError> {
        let id = id.trim();
        if !ba::is_durable_id(id) {
            return Err(AgentSessionError::NotAgentId { id: id.to_string() });
        }
        let unknown = || AgentSessionError::UnknownAgent { id: id.to_string() };
        if !self.ws.db_path().exists() {
            return Err(unknown());
        }
        self.agents_board()
            .read(|c| ba::load(c, id))
            .map_err(|source| AgentSessionError::Board {
                id: id.to_string(),
                source,
            })?
            .ok_or_else(unknown)
    }

    /// A new session running as durable agent `agent_id`: its role's profile, `board.agent`
    /// set before anything runs in it. `title` empty: "<name> (<id>)".
    pub fn create_agent_session(
        &self,
        agent_id: &str,
        mode: Mode,
        title: &str,
    ) -> Result<SessionInfo, AgentSessionError> {
        let agent = self.durable_agent(agent_id)?;
        let title = match title.trim() {
            "" => format!("{} ({})", agent.name, agent.id),
            t => t.to_string(),
        };
        let info = self.create_session(agent.role.profile(), mode, &title, None)?;
        self.set_session_state(
            &info.id,
            vec![(AGENT_STATE_KEY.to_string(), Value::from(agent.id.clone()))],
        )?;
        Ok(self.session(&info.id).unwrap_or(info))
    }
}
