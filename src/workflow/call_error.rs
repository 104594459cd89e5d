//! Why a `wf.*` call from a workflow script failed. The runner's host bridge turns each into a
//! JavaScript `Error` with its `Display` text — the one place these become strings — so every
//! message names the call and says what the script should do instead.

use crate::engine::agents::{AgentError, InvokeError};
use crate::engine::inputs::InputError;
use crate::workspace::WorkspaceError;

use super::WorkflowError;

/// A `wf.*` host call the script made that could not be done.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The prelude sent arguments that are not JSON (a bug in prelude.js, not the script's).
    #[error("internal: bad arguments for {op}: {source}")]
    BadArguments {
        op: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("internal: unknown workflow operation {0}")]
    UnknownOperation(String),
    #[error("the workflow run was cancelled")]
    Cancelled,
    /// An argument the call cannot take; the text gives the call's shape or the rule broken.
    #[error("{0}")]
    Usage(&'static str),
    /// `what` (a call's options) is not an object.
    #[error("{what}: the options must be an object")]
    OptionsNotObject { what: &'static str },
    #[error("{what}: unknown option '{key}'; the options are {allowed}")]
    UnknownOption {
        what: &'static str,
        key: String,
        allowed: String,
    },
    /// `what` names the call and the option, e.g. `wf.agents.create: model`.
    #[error("{what} must be a string")]
    NotString { what: &'static str },
    /// `wf.progress` took a count that is not a whole number ≥ 0.
    #[error("wf.progress: {key} must be a whole number ≥ 0")]
    NotCount { key: &'static str },
    /// A model the configuration does not define (the message lists those it does).
    #[error(transparent)]
    Model(#[from] WorkflowError),
    #[error("wf.agents.create: {0}")]
    Create(#[source] AgentError),
    #[error("wf.agents.invoke: session '{0}' was not created by this workflow run; create one with wf.agents.create(profileKey) and invoke that")]
    ForeignSession(String),
    #[error("wf.agents.invoke: mode '{0}' is not one of prompt, continue, steer, followup")]
    UnknownMode(String),
    #[error("wf.agents.invoke: no agent host is running in this process, so agents cannot be invoked; run the workflow from the TUI or `nbook run`")]
    NoAgentHost,
    /// The path is not one the workflow may read (outside the project, hidden...).
    #[error("wf.workspace.read: {0}")]
    ReadPath(#[source] WorkspaceError),
    #[error("wf.workspace.read: {0} is a folder, not a file")]
    ReadFolder(String),
    #[error("wf.workspace.read: there is no file {0}")]
    ReadMissing(String),
    #[error("wf.workspace.read: cannot read {path}: {source}")]
    ReadIo {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("wf.workspace.read: {path} is {len} bytes, more than the {limit} a workflow may read at once")]
    ReadTooLarge {
        path: String,
        len: u64,
        limit: usize,
    },
    #[error("wf.workspace.read: {0} is not UTF-8 text")]
    ReadNotText(String),
    /// `wf.ask` in a run started with `wait: true`: nobody can answer, so the run is cancelled.
    #[error("the workflow asked the author \"{title}\", which a run started with wait:true cannot do, so the run was cancelled. Start it again with wait:false (it then runs in the background and the question reaches the author)")]
    AskInWaitMode { title: String },
    #[error("wf.ask({{kind: \"select\" | \"text\" | \"approve\", title, description?, options?, multi?}}): {0}")]
    AskShape(&'static str),
    #[error("wf.ask: options[{0}] needs a label")]
    AskOptionLabel(usize),
    #[error("wf.ask: options[{0}] must be a string or {{label, description}}")]
    AskOption(usize),
    #[error("the workflow run was cancelled while waiting for the author")]
    AskCancelled,
    #[error("wf.ask: {0}")]
    Ask(#[source] InputError),
}

/// Why an agent invocation's promise rejects (sent back to the script's thread).
#[derive(Debug, thiserror::Error)]
pub enum InvocationError {
    #[error("the workflow run was cancelled before this invocation started")]
    CancelledBeforeStart,
    #[error("the agent host stopped")]
    HostStopped,
    #[error(transparent)]
    Invoke(#[from] InvokeError),
    #[error("cannot start a thread for the invocation: {0}")]
    Thread(#[source] std::io::Error),
}
