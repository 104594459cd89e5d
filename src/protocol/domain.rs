//! The domains a tool declares it touches (its effects), named in `DomainsChanged` events.

use serde::{Deserialize, Serialize};

/// A part of the project (or of the world outside it) a tool reads or changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Domain {
    /// Project files (read, write, patch, a shell in the project).
    Files,
    /// Plot records in project.sqlite (story tree, promises, decisions).
    Plot,
    /// The world timeline (subjects, slices, patches).
    World,
    /// Raw SQL over project.sqlite (may reach plot and world tables too).
    Sql,
    /// The network outside the machine.
    Network,
    /// Other agent sessions (create, invoke, read).
    Agents,
    /// The production board (tasks, task documents, goals; `src/board/`) and the session's own
    /// task list.
    Board,
    /// Subject memory (events, memory files, retrieval).
    Memory,
    /// Background jobs and workflows.
    Jobs,
    /// The session's own control flow (mode, questions, the final result).
    Control,
}

impl Domain {
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Files => "files",
            Domain::Plot => "plot",
            Domain::World => "world",
            Domain::Sql => "sql",
            Domain::Network => "network",
            Domain::Agents => "agents",
            Domain::Board => "board",
            Domain::Memory => "memory",
            Domain::Jobs => "jobs",
            Domain::Control => "control",
        }
    }
}
