//! The board's typed errors. Each has a stable `code` (Fusion's where Fusion has one, e.g.
//! `TASK_DOCUMENT_PRECONDITION_FAILED`, `GOAL_NOT_FOUND`, `ACTIVE_GOAL_LIMIT_EXCEEDED`) and the
//! structured `details` a tool returns with it, so an agent can act on the failure without
//! parsing the message. Every error means nothing was changed.

use serde_json::{json, Value};

#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    #[error("no task {id}; fn_task_list or fn_task_search find the ids")]
    TaskNotFound { id: String },
    #[error("no goal {id}; fn_goal_list lists the goals")]
    GoalNotFound { id: String },
    #[error("no workflow {id}; fn_workflow_list lists them (the default is builtin:chapter)")]
    WorkflowNotFound { id: String },
    #[error("workflow {id} is built in: its declarations cannot be {action} (create a custom workflow instead; its setting values are writable with fn_workflow_settings)")]
    WorkflowBuiltin { id: String, action: &'static str },
    #[error("the workflow IR is invalid: {}", errors.iter().map(|e| e.message.as_str()).collect::<Vec<_>>().join("; "))]
    WorkflowInvalid {
        errors: Vec<super::workflow::validate::IrError>,
    },
    #[error("workflow {workflow_id}: the new IR removes columns that hold tasks ({}); retry with rehome_to naming a column of the new IR", occupied.iter().map(|(c, t)| format!("{c}: {}", t.join(", "))).collect::<Vec<_>>().join("; "))]
    OccupiedColumns {
        workflow_id: String,
        occupied: std::collections::BTreeMap<String, Vec<String>>,
    },
    #[error("settings of {workflow_id} rejected: {}", rejections.iter().map(|r| format!("{} ({}): {}", r.setting_id, r.code, r.message)).collect::<Vec<_>>().join("; "))]
    SettingsRejected {
        workflow_id: String,
        rejections: Vec<super::workflow::settings::Rejection>,
    },
    #[error("task {id} is in column {column}; {action} needs it in {}", allowed.join(" or "))]
    WrongColumn {
        id: String,
        column: String,
        action: &'static str,
        allowed: Vec<String>,
    },
    #[error("task {id} is archived and read-only")]
    Archived { id: String },
    #[error("dependency {dependency} does not exist; fn_task_search finds task ids")]
    DependencyNotFound { dependency: String },
    #[error("a task cannot depend on itself ({id})")]
    SelfDependency { id: String },
    #[error("that dependency would make a cycle: {}", cycle.join(" → "))]
    DependencyCycle { cycle: Vec<String> },
    #[error("task {id} cannot start: its dependencies {} are not done", pending.join(", "))]
    DependenciesUnmet { id: String, pending: Vec<String> },
    #[error("task {id} has no plan yet: write its PROMPT.md with fn_task_prompt_write first")]
    Unplanned { id: String },
    #[error("task {id}'s plan waits for the author's approval (its workflow's requirePlanApproval): the author approves it (fn_task_approve_plan, or a on the Board) before it leaves planning")]
    PlanNotApproved { id: String },
    #[error("task {id} has no plan waiting for approval (its sub-status is {status:?}); only a task parked at plan? can be approved or sent back")]
    NoPlanWaiting { id: String, status: String },
    #[error("PROMPT.md is invalid in section {section}: {message}")]
    PromptInvalid { section: String, message: String },
    #[error("outcome blocked needs a reason saying what blocks the task")]
    BlockedWithoutReason,
    #[error("adding a dependency stops this task and sends it back to planning; call again with confirm: true to do it")]
    ConfirmRequired,
    #[error("step {step} does not exist; this task has steps 0 to {last}", last = count.saturating_sub(1))]
    StepOutOfRange { step: u64, count: usize },
    #[error("task {id} has no steps; its PROMPT.md has no ### Step sections")]
    NoSteps { id: String },
    #[error("custom field '{field}' rejected ({code}): {detail}")]
    CustomField {
        field: String,
        code: &'static str,
        detail: String,
    },
    #[error("file scope entry '{entry}' refused: {reason}")]
    FileScope { entry: String, reason: &'static str },
    #[error("document key '{key}' is invalid: 1 to 64 characters of A-Z a-z 0-9 _ -")]
    DocumentKey { key: String },
    #[error("expected_content_hash '{hash}' is invalid: it must be sha256:<64 lowercase hex>")]
    DocumentHash { hash: String },
    #[error("task {task_id} has no document '{key}'; call fn_task_document_read without a key to list them")]
    DocumentNotFound { task_id: String, key: String },
    #[error("document content is {size} bytes; at most {limit} bytes")]
    DocumentTooLarge { size: usize, limit: usize },
    #[error("the document {}/{} is not at the expected state (now revision {}{}); read it again and retry", .0.task_id, .0.key, .0.current_revision, .0.current_content_hash.as_deref().map(|h| format!(", {h}")).unwrap_or_default())]
    Precondition(Box<PreconditionFailed>),
    #[error("{active} goals are active; at most {limit} may be (archive one first)")]
    ActiveGoalLimit { active: usize, limit: usize },
    #[error("this session has no task of its own: pass task_id")]
    TaskIdRequired,
    #[error("the message is empty; write 1 to 2000 characters")]
    MessageEmpty,
    #[error("the message is {length} characters; at most {limit}")]
    MessageTooLong { length: usize, limit: usize },
    #[error("mail_kind approval is the engine's own (it mails the author when a call waits for approval); send message or report")]
    ApprovalMailEngineOnly,
    #[error("a report needs report.title (and optional sections [{{heading, body}}])")]
    ReportTitleRequired,
    #[error("no message {id} in your mail; fn_read_messages lists yours (unread_only: false for the read ones too)")]
    MessageNotFound { id: String },
    #[error("no recipient: {why}")]
    RecipientRequired { why: String },
    #[error("no recipient '{id}': {why}")]
    RecipientNotFound { id: String, why: String },
    #[error("type {given} does not fit recipient {recipient}: that message is {expected}")]
    MessageTypeMismatch {
        given: String,
        recipient: String,
        expected: &'static str,
    },
    #[error("no room {id}; the author creates rooms from the Inbox")]
    RoomNotFound { id: String },
    #[error("{agent} is not a member of room {room}; only members post there (the author adds members from the Inbox)")]
    NotRoomMember { room: String, agent: String },
    #[error("rating refused ({field}): {message}")]
    RatingInvalid {
        field: &'static str,
        message: String,
    },
    #[error("no run to rate: {why}")]
    RunNotFound { why: String },
    #[error("no durable agent {id}; fn_list_agents lists the agents (durable ones are agent-<n>)")]
    AgentNotFound { id: String },
    #[error(
        "{id} reports to {reports_to}, not to {caller}: an agent manages only its direct reports"
    )]
    NotDirectReport {
        id: String,
        caller: String,
        reports_to: String,
    },
    #[error("{id} has open tasks assigned to it ({}); pass reassign_to (another agent takes them) or force: true (they are unassigned)", tasks.join(", "))]
    AgentHasTasks { id: String, tasks: Vec<String> },
    #[error("agent config rejected: {}", violations.iter().map(|v| format!("{} ({}): {}", v.field, v.code, v.message)).collect::<Vec<_>>().join("; "))]
    AgentRejected {
        agent_id: Option<String>,
        violations: Vec<super::agents::Violation>,
    },
    #[error("this book is not in series workspace mode: {why}")]
    WorkspaceModeRequired { why: String },
    #[error("unknown book '{repo}' in this series; the series' books are: {}", available.join(", "))]
    UnknownRepo {
        repo: String,
        available: Vec<String>,
    },
    #[error("cannot acquire book '{repo}' for task {id} after review or merging has started; create a follow-up task with fn_task_create for that book")]
    LateRepoAcquisition { id: String, repo: String },
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("board database: {0}")]
    Db(#[from] rusqlite::Error),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("board record {what} is corrupt: {message}")]
    Corrupt { what: String, message: String },
    #[error("git {command} failed: {message}")]
    Git { command: String, message: String },
}

impl BoardError {
    pub fn invalid(field: &'static str, message: impl Into<String>) -> BoardError {
        BoardError::Invalid {
            field,
            message: message.into(),
        }
    }

    /// The stable code an agent (or a script) can match on.
    pub fn code(&self) -> &'static str {
        use BoardError::*;
        match self {
            TaskNotFound { .. } => "TASK_NOT_FOUND",
            GoalNotFound { .. } => "GOAL_NOT_FOUND",
            WorkflowNotFound { .. } => "WORKFLOW_NOT_FOUND",
            WorkflowBuiltin { .. } => "WORKFLOW_BUILTIN_READONLY",
            WorkflowInvalid { .. } => "WORKFLOW_IR_INVALID",
            OccupiedColumns { .. } => "WORKFLOW_OCCUPIED_COLUMNS",
            SettingsRejected { .. } => "WORKFLOW_SETTINGS_REJECTED",
            WrongColumn { .. } => "TASK_WRONG_COLUMN",
            Archived { .. } => "TASK_ARCHIVED",
            DependencyNotFound { .. } => "DEPENDENCY_NOT_FOUND",
            SelfDependency { .. } | DependencyCycle { .. } => "DEPENDENCY_CYCLE",
            DependenciesUnmet { .. } => "DEPENDENCIES_UNMET",
            Unplanned { .. } => "TASK_UNPLANNED",
            PlanNotApproved { .. } => "PLAN_APPROVAL_REQUIRED",
            NoPlanWaiting { .. } => "PLAN_NOT_AWAITING_APPROVAL",
            PromptInvalid { .. } => "PROMPT_INVALID",
            BlockedWithoutReason => "BLOCKED_REASON_REQUIRED",
            ConfirmRequired => "CONFIRM_REQUIRED",
            StepOutOfRange { .. } | NoSteps { .. } => "STEP_NOT_FOUND",
            CustomField { .. } => "CUSTOM_FIELD_REJECTED",
            FileScope { .. } => "FILE_SCOPE_INVALID",
            DocumentKey { .. } => "TASK_DOCUMENT_KEY_INVALID",
            DocumentHash { .. } => "TASK_DOCUMENT_HASH_INVALID",
            DocumentNotFound { .. } => "TASK_DOCUMENT_NOT_FOUND",
            DocumentTooLarge { .. } => "TASK_DOCUMENT_TOO_LARGE",
            Precondition(_) => "TASK_DOCUMENT_PRECONDITION_FAILED",
            ActiveGoalLimit { .. } => "ACTIVE_GOAL_LIMIT_EXCEEDED",
            TaskIdRequired => "TASK_ID_REQUIRED",
            MessageEmpty => "MESSAGE_CONTENT_EMPTY",
            MessageTooLong { .. } => "MESSAGE_CONTENT_TOO_LONG",
            ApprovalMailEngineOnly => "MAIL_KIND_ENGINE_ONLY",
            ReportTitleRequired => "REPORT_TITLE_REQUIRED",
            MessageNotFound { .. } => "MESSAGE_NOT_FOUND",
            RecipientRequired { .. } => "RECIPIENT_REQUIRED",
            RecipientNotFound { .. } => "RECIPIENT_NOT_FOUND",
            MessageTypeMismatch { .. } => "MESSAGE_TYPE_MISMATCH",
            RoomNotFound { .. } => "ROOM_NOT_FOUND",
            NotRoomMember { .. } => "NOT_ROOM_MEMBER",
            AgentNotFound { .. } => "AGENT_NOT_FOUND",
            NotDirectReport { .. } => "AGENT_NOT_DIRECT_REPORT",
            AgentHasTasks { .. } => "AGENT_HAS_ASSIGNED_TASKS",
            AgentRejected { .. } => "AGENT_CONFIG_INVALID",
            Invalid { .. } => "INVALID_ARGUMENT",
            WorkspaceModeRequired { .. } => "WORKSPACE_MODE_REQUIRED",
            UnknownRepo { .. } => "UNKNOWN_REPO",
            LateRepoAcquisition { .. } => "LATE_REPO_ACQUISITION",
            RatingInvalid { .. } => "RATING_INVALID",
            RunNotFound { .. } => "RUN_NOT_FOUND",
            Db(_) | Store(_) | Io { .. } | Corrupt { .. } | Git { .. } => "BOARD_STORAGE",
        }
    }

    /// `{code, …}`: the code plus the facts of the failure (never a document's content).
    pub fn details(&self) -> Value {
        use BoardError::*;
        let mut d = match self {
            TaskNotFound { id }
            | Archived { id }
            | Unplanned { id }
            | NoSteps { id }
            | PlanNotApproved { id } => {
                json!({"taskId": id})
            }
            NoPlanWaiting { id, status } => json!({"taskId": id, "status": status}),
            GoalNotFound { id } => json!({"goalId": id}),
            WorkflowNotFound { id } => json!({"workflowId": id}),
            WorkflowBuiltin { id, .. } => json!({"workflowId": id, "builtin": true}),
            WorkflowInvalid { errors } => json!({"valid": false, "errors": errors}),
            OccupiedColumns {
                workflow_id,
                occupied,
            } => json!({
                "workflowId": workflow_id,
                "occupiedColumns": occupied.keys().collect::<Vec<_>>(),
                "occupants": occupied,
                "retryWith": "rehome_to",
            }),
            SettingsRejected {
                workflow_id,
                rejections,
            } => json!({"workflowId": workflow_id, "rejections": rejections}),
            WrongColumn {
                id,
                column,
                action,
                allowed,
            } => {
                json!({"taskId": id, "column": column, "action": action, "allowedColumns": allowed})
            }
            DependencyNotFound { dependency } => json!({"dependency": dependency}),
            SelfDependency { id } => json!({"cycle": [id, id]}),
            DependencyCycle { cycle } => json!({"cycle": cycle}),
            DependenciesUnmet { id, pending } => json!({"taskId": id, "pending": pending}),
            PromptInvalid { section, message } => json!({"section": section, "message": message}),
            StepOutOfRange { step, count } => json!({"step": step, "stepCount": count}),
            CustomField {
                field,
                code,
                detail,
            } => json!({"fieldId": field, "rejection": code, "detail": detail}),
            FileScope { entry, reason } => json!({"entry": entry, "reason": reason}),
            DocumentKey { key } => json!({"key": key}),
            DocumentHash { hash } => json!({"expectedContentHash": hash}),
            DocumentNotFound { task_id, key } => json!({"taskId": task_id, "key": key}),
            DocumentTooLarge { size, limit } => json!({"size": size, "limit": limit}),
            Precondition(p) => json!({
                "projectId": p.project_id,
                "taskId": p.task_id,
                "key": p.key,
                "expectedRevision": p.expected_revision,
                "expectedContentHash": p.expected_content_hash,
                "currentRevision": p.current_revision,
                "currentContentHash": p.current_content_hash,
            }),
            ActiveGoalLimit { active, limit } => json!({"activeCount": active, "hardLimit": limit}),
            Invalid { field, message } | RatingInvalid { field, message } => {
                json!({"field": field, "message": message})
            }
            AgentNotFound { id } => json!({"agentId": id}),
            NotDirectReport {
                id,
                caller,
                reports_to,
            } => json!({"agentId": id, "callerId": caller, "reportsTo": reports_to}),
            AgentHasTasks { id, tasks } => json!({"agentId": id, "assignedTasks": tasks}),
            AgentRejected {
                agent_id,
                violations,
            } => json!({"agentId": agent_id, "violations": violations}),
            MessageTooLong { length, limit } => json!({"length": length, "limit": limit}),
            MessageNotFound { id } => json!({"messageId": id}),
            RecipientNotFound { id, .. } => json!({"toId": id}),
            MessageTypeMismatch {
                given,
                recipient,
                expected,
            } => json!({"type": given, "toId": recipient, "expectedType": expected}),
            RoomNotFound { id } => json!({"roomId": id}),
            UnknownRepo { repo, available } => json!({"repo": repo, "available": available}),
            LateRepoAcquisition { id, repo } => json!({"taskId": id, "repo": repo}),
            NotRoomMember { room, agent } => json!({"roomId": room, "agentId": agent}),
            _ => json!({}),
        };
        d["code"] = json!(self.code());
        d
    }
}

/// A lost compare-and-swap: what was expected and what the document is now (never its
/// content). Boxed: it is the largest failure, and every board result carries the error type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreconditionFailed {
    pub project_id: String,
    pub task_id: String,
    pub key: String,
    pub expected_revision: Option<u64>,
    pub expected_content_hash: Option<String>,
    pub current_revision: u64,
    pub current_content_hash: Option<String>,
}

pub type BoardResult<T> = Result<T, BoardError>;
