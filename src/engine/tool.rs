//! The `Tool` trait every tool implements, and the context a call runs in.
//!
//! Tools are synchronous: the engine runs them on the blocking pool, so a slow `bash` never
//! stalls the UI. Whether a tool mutates the project, and its effects (`super::effects`), are
//! required declarations, not defaults.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use super::effects::{Domain, Effects, EgressRequest};
use super::profiles::Profile;
use super::types::{KeptParts, Mode, Preview, PreviewBody};
use crate::config::Config;
use crate::workspace::Workspace;

/// Whether a tool changes the project. `Depends` classifies one concrete call (e.g. a SQL
/// statement that only reads).
#[derive(Clone, Copy)]
pub enum Mutates {
    No,
    Yes,
    Depends(fn(&Value) -> bool),
}

impl Mutates {
    pub fn for_call(&self, args: &Value) -> bool {
        match self {
            Mutates::No => false,
            Mutates::Yes => true,
            Mutates::Depends(f) => f(args),
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            Mutates::No => "no",
            Mutates::Yes => "yes",
            Mutates::Depends(_) => "depends",
        }
    }
}

/// Everything a tool may use. Cheap to clone so a call can move onto the blocking pool.
#[derive(Clone)]
pub struct ToolCtx {
    pub workspace: Arc<Workspace>,
    pub config: Arc<Config>,
    pub profile: Arc<Profile>,
    pub session_id: String,
    pub mode: Mode,
    /// The session's custom state (e.g. `plot.selection`, `agent.tasks`) as of this call.
    /// Tools change it by returning `ToolOutput::state_updates`.
    pub session_state: Arc<BTreeMap<String, Value>>,
    /// The id of this call (jobs and questions name their origin with it).
    pub call_id: String,
    /// What the engine offers tools that read other sessions and profiles, create sessions,
    /// ask the author or start jobs — not the engine itself, so no tool can decide an
    /// approval. `None` outside the engine.
    pub services: Option<Arc<dyn super::services::ToolServices>>,
    /// Fires when the call is abandoned (its agent run was cancelled) — and also once the call
    /// has returned. Long-running tools watch it to stop early (bash kills its command).
    pub cancel: tokio_util::sync::CancellationToken,
}

/// A successful tool result: text for the model, optional structured details, and the
/// project-relative paths the call changed (for the Files pane's marks).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    pub content: String,
    pub details: Option<Value>,
    pub changed_paths: Vec<String>,
    /// Session custom-state keys to set (logged as `custom` records, replayed on load).
    pub state_updates: Vec<(String, Value)>,
}

impl ToolOutput {
    pub fn text(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            ..Default::default()
        }
    }
}

/// A tool failed. The message goes back to the agent, so it says what to do next.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments are well-formed but cannot be acted on (missing file, text not found…).
    #[error("{0}")]
    Failed(String),
    /// The target changed between preview and approval.
    #[error("stale: {0}")]
    Stale(String),
    /// A failure with a stable code and structured facts (`details.code`, e.g. the board's
    /// `TASK_DOCUMENT_PRECONDITION_FAILED` with the current revision), returned to the agent
    /// as an error result carrying `details`.
    #[error("{message}")]
    Coded { message: String, details: Value },
}

impl ToolError {
    pub fn failed(msg: impl Into<String>) -> Self {
        ToolError::Failed(msg.into())
    }

    /// The structured facts of a [`ToolError::Coded`] failure.
    pub fn details(&self) -> Option<&Value> {
        match self {
            ToolError::Coded { details, .. } => Some(details),
            _ => None,
        }
    }
}

/// A change a staging tool recorded but has not applied: the record of its effect (e.g. a
/// SQLite changeset, the transaction that produced it already rolled back), so nothing is held
/// open while the author decides. `commit` applies it after a stale check (failing with
/// [`ToolError::Stale`] if its targets changed); `rollback` discards it. Exactly one runs;
/// dropping it unresolved discards it.
pub struct HeldChange {
    pub preview: Preview,
    commit: Option<Box<dyn FnOnce() -> Result<ToolOutput, ToolError> + Send>>,
    rollback: Option<Box<dyn FnOnce() + Send>>,
}

impl HeldChange {
    pub fn new(
        preview: Preview,
        commit: impl FnOnce() -> Result<ToolOutput, ToolError> + Send + 'static,
        rollback: impl FnOnce() + Send + 'static,
    ) -> Self {
        HeldChange {
            preview,
            commit: Some(Box::new(commit)),
            rollback: Some(Box::new(rollback)),
        }
    }

    pub fn commit(mut self) -> Result<ToolOutput, ToolError> {
        self.rollback = None;
        match self.commit.take() {
            Some(f) => f(),
            None => Err(ToolError::failed("the held change was already resolved")),
        }
    }

    pub fn rollback(mut self) {
        self.commit = None;
        if let Some(f) = self.rollback.take() {
            f();
        }
    }
}

impl Drop for HeldChange {
    fn drop(&mut self) {
        if let Some(f) = self.rollback.take() {
            f();
        }
    }
}

/// Result of running a staging tool up to the point of commit.
pub enum Staged {
    /// The call changed nothing (e.g. a read-only script): it is complete.
    Done(ToolOutput),
    /// The call changed something that is held until the author decides.
    Held(HeldChange),
}

/// A call's arguments: the JSON the model (or the author) sent and, once a typed tool has
/// read it, the typed value deserialized from it. The gate deserializes once and the egress
/// check, targets, previews and the run share that value (clones share it too), so a call is
/// not parsed again at each step. Edited arguments are a new `CallArgs`.
#[derive(Clone)]
pub struct CallArgs(Arc<ArgsInner>);

struct ArgsInner {
    raw: Value,
    typed: OnceLock<Arc<dyn Any + Send + Sync>>,
}

impl CallArgs {
    pub fn new(raw: Value) -> CallArgs {
        CallArgs(Arc::new(ArgsInner {
            raw,
            typed: OnceLock::new(),
        }))
    }

    /// The arguments as JSON.
    pub fn raw(&self) -> &Value {
        &self.0.raw
    }

    /// The arguments as `T`, deserialized on first use and kept; an error names the JSON
    /// Pointer of the bad field.
    pub fn typed<T>(&self) -> Result<Arc<T>, super::registry::FieldError>
    where
        T: DeserializeOwned + Send + Sync + 'static,
    {
        if let Some(kept) = self.0.typed.get() {
            if let Ok(t) = kept.clone().downcast::<T>() {
                return Ok(t);
            }
        }
        let t: Arc<T> = Arc::new(super::typed::parse_args(&self.0.raw)?);
        // Another thread may have set it meanwhile; both values came from the same JSON.
        let _ = self.0.typed.set(t.clone());
        Ok(t)
    }
}

impl From<Value> for CallArgs {
    fn from(raw: Value) -> CallArgs {
        CallArgs::new(raw)
    }
}

impl std::fmt::Debug for CallArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CallArgs").field(&self.0.raw).finish()
    }
}

pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    /// Group as in the seeds: files, collaboration, control, tasks, plot, world, …
    fn group(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// JSON Schema of the arguments; validated before anything else runs.
    fn schema(&self) -> Value;
    /// After the schema accepted `args`: deserialize them into the tool's typed arguments, so
    /// a call that cannot be parsed is refused at the gate with the pointer of the bad field.
    /// Typed tools (`super::typed`) implement it; the default accepts.
    fn check_args(&self, _args: &CallArgs) -> Result<(), super::registry::FieldError> {
        Ok(())
    }
    fn mutates(&self) -> Mutates;
    /// What the tool touches and how its calls are treated (pauses, egress, …). Required:
    /// the policy, the run loop and the TUI read this, never the tool's name.
    fn effects(&self) -> Effects;
    /// For tools whose effects declare `egress`: the requests a call will send, worked out
    /// without touching the network. An error refuses the call before the author is asked
    /// (e.g. a URL that could never be fetched). An egress tool that names no request is
    /// asked about on every call and never covered by a host grant.
    fn egress(&self, _ctx: &ToolCtx, _args: &CallArgs) -> Result<Vec<EgressRequest>, ToolError> {
        Ok(Vec::new())
    }
    /// Reads that may run concurrently with other parallel-safe calls of the same turn.
    fn parallel_safe(&self) -> bool {
        false
    }
    /// Targets a mutating call writes (project-relative paths, or a command for `bash`). Used
    /// for the plan-mode exemption and for "approve for this session" grants.
    fn write_targets(&self, _ctx: &ToolCtx, _args: &CallArgs) -> Vec<String> {
        Vec::new()
    }
    /// For file tools: the paths a call reads or writes (as the agent gave them), so a task
    /// session's draft area can copy them up before the call runs there
    /// (`super::draft_route`). `None`: the tool cannot run in a draft area, and a draft
    /// session's call of it is refused.
    fn draft_paths(&self, _ctx: &ToolCtx, _args: &CallArgs) -> Option<Vec<String>> {
        None
    }
    /// Dry run: what the call will change, computed without changing anything.
    fn preview(&self, _ctx: &ToolCtx, args: &CallArgs) -> Result<Preview, ToolError> {
        Ok(Preview {
            summary: format!("{} call", self.name()),
            body: PreviewBody::Text {
                text: serde_json::to_string_pretty(args.raw()).unwrap_or_default(),
            },
            targets: Vec::new(),
        })
    }
    fn run(&self, ctx: &ToolCtx, args: &CallArgs) -> Result<ToolOutput, ToolError>;
    /// `run` for a mutating call decided on `approved`: the `write_targets` the policy (plan
    /// exemption, grants) and the author judged. File tools re-resolve every destination at
    /// commit time and fail as stale when one no longer resolves to an approved target (a
    /// folder swapped for a link meanwhile). `None`: no decision to honour.
    fn run_approved(
        &self,
        ctx: &ToolCtx,
        args: &CallArgs,
        approved: Option<&[String]>,
    ) -> Result<ToolOutput, ToolError> {
        let _ = approved;
        self.run(ctx, args)
    }
    /// Staging tools (declared `Mutates::Depends`) find out whether a call mutates by doing
    /// it inside a transaction that is rolled back: they return `Some(stage(..))` with a record
    /// of the effect, and the engine applies or discards it after the policy and the author
    /// decide. `run` is then not used.
    fn stage(&self, _ctx: &ToolCtx, _args: &CallArgs) -> Option<Result<Staged, ToolError>> {
        None
    }
    fn is_staging(&self) -> bool {
        false
    }
    /// Whether a call whose preview is a list of file diffs can be approved for some of its
    /// files and hunks (`Decision::ApproveParts`). Declared by the tool; the engine, the
    /// policy and the TUI read this, never the tool's name.
    fn selects_parts(&self) -> bool {
        false
    }
    /// For tools that [`Tool::selects_parts`]: the arguments of the same tool that make exactly
    /// the `kept` parts of `shown` (the preview the author chose on), computed against the
    /// targets as they are now. The engine previews them again and applies them only if that
    /// preview shows exactly the kept parts.
    fn narrow(
        &self,
        _ctx: &ToolCtx,
        _args: &CallArgs,
        _shown: &Preview,
        _kept: &KeptParts,
    ) -> Result<Value, ToolError> {
        Err(ToolError::failed(format!(
            "{} cannot apply only some of its changes; approve or reject the call whole",
            self.name()
        )))
    }
}
