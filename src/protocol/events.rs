//! Engine events: what the engine tells its clients (the TUI, `nbook run`).

use serde::{Deserialize, Serialize};

use super::approval::PendingCall;
use super::domain::Domain;
use super::ids::{ApprovalId, SessionId};
use super::input::InputRequest;
use super::log::LogLine;
use super::session::SessionInfo;

/// What the engine tells its clients (the TUI, `nbook run`). Broadcast to every subscriber.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EngineEvent {
    /// A session was created or its state, mode, title or usage changed.
    Session {
        session: SessionInfo,
    },
    /// A line was appended to a session log.
    Log {
        session_id: SessionId,
        line: LogLine,
    },
    ApprovalRequested {
        call: PendingCall,
    },
    ApprovalResolved {
        approval_id: ApprovalId,
        decision: String,
    },
    /// A question for the author (`request_user_input`, a workflow's `wf.ask`).
    InputRequested {
        request: InputRequest,
    },
    /// The question was answered or withdrawn.
    InputResolved {
        id: String,
        outcome: String,
    },
    /// Files an agent changed (project-relative paths), for the Files pane's marks.
    FilesChanged {
        session_id: SessionId,
        paths: Vec<String>,
    },
    /// Reply text as it streams in (coalesced, a few per second). Not logged: the finished
    /// reply is, as an `assistant` record, which also ends the live text.
    TextDelta {
        session_id: SessionId,
        text: String,
    },
    /// Reasoning text as it streams in, where the server sends it.
    ReasoningDelta {
        session_id: SessionId,
        text: String,
    },
    /// A tool call whose arguments are being generated ("preparing write …").
    ToolCallProgress {
        session_id: SessionId,
        index: u64,
        name: String,
        argument_chars: usize,
    },
    /// A call changed the project: the domains its tool declares (clients reload what shows
    /// them, e.g. the Story pane on `plot`).
    DomainsChanged {
        session_id: SessionId,
        tool: String,
        domains: Vec<Domain>,
    },
}
