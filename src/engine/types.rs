//! The engine's public vocabulary: modes, decisions, previews, pending calls, session records
//! and the events the engine emits. Everything here is plain serde data so it can be logged,
//! replayed, sent to the TUI and printed by the CLI without conversion.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub type CallId = String;
pub type SessionId = String;

/// Who makes a call. Agents call from their session's run; the author calls from the TUI
/// (auto-approved, logged in the author session); later MCP clients. Author-only tools
/// (`Effects::author_only`) are refused for every actor but [`Actor::Author`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    Agent,
    Author,
}

impl Actor {
    /// The name written in the log (`by` of a tool call and its approval).
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Agent => "agent",
            Actor::Author => "author",
        }
    }
}

/// Session mode. `discuss` and `plan` are read-only: mutating calls are held for approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Normal,
    Discuss,
    Plan,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Normal, Mode::Discuss, Mode::Plan];

    /// The Shift+Tab cycle: normal → discuss → plan → normal.
    pub fn next(self) -> Mode {
        match self {
            Mode::Normal => Mode::Discuss,
            Mode::Discuss => Mode::Plan,
            Mode::Plan => Mode::Normal,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Normal => "normal",
            Mode::Discuss => "discuss",
            Mode::Plan => "plan",
        }
    }

    pub fn is_read_only(self) -> bool {
        !matches!(self, Mode::Normal)
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The author's answer to a pending call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    Approve,
    /// Approve, and let this tool run on the same target(s) without asking for the rest of
    /// the session. Only honoured in `normal` mode; elsewhere it counts as a one-call approval.
    ApproveForSession,
    Reject {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Replace the arguments, then approve. The new arguments are validated and previewed again.
    Edit {
        new_args: Value,
    },
}

impl Decision {
    pub fn label(&self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::ApproveForSession => "approve_for_session",
            Decision::Reject { .. } => "reject",
            Decision::Edit { .. } => "edit",
        }
    }
}

/// How one file will change, as shown to the author before approval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Add,
    Update,
    Delete,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Project-relative path (or `workspace/<project>/<path>` for a sibling project).
    pub path: String,
    pub kind: ChangeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_to: Option<String>,
    /// Unified diff of the change (`---`/`+++` headers, `@@` hunks).
    pub diff: String,
    pub added: usize,
    pub removed: usize,
}

/// What a mutating call will do. Built by the tool's dry run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PreviewBody {
    Files {
        changes: Vec<FileChange>,
    },
    Command {
        command: String,
        cwd: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_secs: Option<u64>,
    },
    /// Plot records (and the derived changes a write causes, e.g. a payoff beat fulfilling
    /// its promise), one entry per record.
    Records {
        changes: Vec<RecordChange>,
    },
    Statement {
        sql: String,
        #[serde(default)]
        rows: Vec<Value>,
    },
    Text {
        text: String,
    },
    /// A call that sends data off the machine: each request it may send, which session asked,
    /// and what that session (and the sessions that started it) did before.
    Egress {
        requests: Vec<EgressShown>,
        /// e.g. "7 (researcher)".
        session: String,
        /// Earlier calls of the asking session and its parents, most recent last, e.g.
        /// "session 3 (leader.default): read path=manuscript/secret.md".
        #[serde(default)]
        earlier: Vec<String>,
    },
}

/// One egress request as the author sees it: long URL parts and body values elided with their
/// length (`q=Once upon a tim…(812 chars)`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EgressShown {
    pub host: String,
    pub method: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub body: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordChange {
    /// e.g. "StoryPromise #3 (the-letter)".
    pub record: String,
    /// create | update | archive | delete | …
    pub action: String,
    pub fields: Vec<FieldChange>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldChange {
    pub field: String,
    pub before: Value,
    pub after: Value,
}

/// A target the preview was computed against, with a fingerprint of its state at that time.
/// On approval the engine recomputes the fingerprints; any difference makes the call stale.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetState {
    pub key: String,
    pub fingerprint: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Preview {
    /// One line, e.g. "Edit manuscript/001.md (+3 -1)".
    pub summary: String,
    pub body: PreviewBody,
    #[serde(default)]
    pub targets: Vec<TargetState>,
}

impl Preview {
    /// True for a file change that leaves every file as it is (a `write` of the content the
    /// file already has, an `edit` whose replacement equals the text): nothing to approve.
    pub fn changes_nothing(&self) -> bool {
        match &self.body {
            PreviewBody::Files { changes } => {
                !changes.is_empty()
                    && changes.iter().all(|c| {
                        c.kind == ChangeKind::Update
                            && c.move_to.is_none()
                            && c.added == 0
                            && c.removed == 0
                    })
            }
            _ => false,
        }
    }
}

/// A call waiting for the author, as held in the engine's FIFO queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    pub call_id: CallId,
    pub session_id: SessionId,
    pub profile: String,
    pub mode: Mode,
    pub tool: String,
    pub args: Value,
    pub preview: Preview,
    pub requested_at: String,
    /// Whether `approve_for_session` is on offer (normal mode, a policy that allows grants).
    pub session_grant_allowed: bool,
}

/// Lifecycle state of a session as shown in the Sessions pane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    Running,
    WaitingApproval,
    WaitingInput,
    Idle,
    Failed,
}

impl SessionState {
    pub fn label(self) -> &'static str {
        match self {
            SessionState::Running => "running",
            SessionState::WaitingApproval => "waiting for approval",
            SessionState::WaitingInput => "waiting for input",
            SessionState::Idle => "idle",
            SessionState::Failed => "failed",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub id: SessionId,
    pub profile: String,
    pub title: String,
    pub mode: Mode,
    pub state: SessionState,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<SessionId>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: f64,
    /// Estimated tokens of the last request (prompt, tool schemas, transcript) and the
    /// model's window, as the run loop measured them before its latest turn; 0 = unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub context_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub context_window: u64,
}

/// A tool call as a model proposed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: CallId,
    pub name: String,
    pub arguments: Value,
}

/// One line of a session log (`.nbook/agent/sessions/<id>.jsonl`), minus its timestamp.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LogRecord {
    Header {
        session_id: SessionId,
        profile: String,
        mode: Mode,
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<SessionId>,
    },
    User {
        text: String,
    },
    Assistant {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// A call made by someone other than the session's model (the author from the TUI);
    /// a model's calls are in its `assistant` record.
    ToolCall {
        call_id: CallId,
        tool: String,
        args: Value,
        /// author
        by: String,
    },
    ApprovalRequested {
        call_id: CallId,
        tool: String,
        args: Value,
        preview: Preview,
        mode: Mode,
    },
    ApprovalResolved {
        call_id: CallId,
        /// approve | approve_for_session | reject | edit | interrupted
        decision: String,
        /// author | cli | policy | engine
        by: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edited_args: Option<Value>,
    },
    ToolResult {
        call_id: CallId,
        tool: String,
        ok: bool,
        content: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// A session custom-state key set by a tool (e.g. `plot.selection`).
    Custom {
        key: String,
        value: Value,
    },
    ModeChange {
        from: Mode,
        to: Mode,
        by: String,
    },
    /// Usage of the assistant message just before it (per-message totals).
    Usage {
        input_tokens: u64,
        output_tokens: u64,
        cost: f64,
        #[serde(default, skip_serializing_if = "is_zero")]
        cached_input_tokens: u64,
        #[serde(default, skip_serializing_if = "is_zero")]
        reasoning_tokens: u64,
        /// nbook's estimate: the server reported no counts (a cancelled or failed turn).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        estimated: bool,
    },
    /// The transcript sent to the model was compacted: from here on the model sees
    /// `messages` (a summary and the recent turns) instead of everything before.
    Compaction {
        method: String,
        tokens_before: usize,
        tokens_after: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        messages: Vec<Value>,
    },
    Lifecycle {
        /// start | waiting | resumed | end | error | cancelled | interrupted
        status: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    pub ts: String,
    #[serde(flatten)]
    pub record: LogRecord,
}

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
        call_id: CallId,
        decision: String,
    },
    /// A question for the author (`request_user_input`, a workflow's `wf.ask`).
    InputRequested {
        request: super::inputs::InputRequest,
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
        domains: Vec<super::effects::Domain>,
    },
}
