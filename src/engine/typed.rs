//! Typed tools: a tool is one declaration — its constant facts (name, group, description,
//! mutation class, declared effects) and its `Args` type. The JSON Schema the model sees is
//! generated from `Args` (schemars, inline, no `$ref`), and the same type is what the call
//! is deserialized into, so the schema and the parser cannot disagree.
//!
//! Every `TypedTool` is a [`Tool`] through the blanket impl below: the registry validates the
//! arguments against the generated schema, then deserializes them once at the gate
//! ([`Tool::check_args`], kept in [`CallArgs`] for the later steps); an error names the JSON Pointer of the bad field either way.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::registry::FieldError;
use super::tool::{
    CallArgs, Effects, EgressRequest, Mutates, Staged, Tool, ToolCtx, ToolError, ToolOutput,
};
use super::types::{KeptParts, Preview, PreviewBody};

/// A tool declared with typed arguments. Implement this (not [`Tool`]) for a new tool.
pub trait TypedTool: Send + Sync + 'static {
    /// The arguments; `deny_unknown_fields` unless the tool accepts extra keys.
    type Args: DeserializeOwned + JsonSchema + Send + Sync + 'static;
    const NAME: &'static str;
    /// Group as in the seeds: files, collaboration, control, tasks, plot, world, …
    const GROUP: &'static str;
    const DESCRIPTION: &'static str;
    const MUTATES: Mutates;
    /// What the tool touches and how its calls are treated (see `super::effects`).
    const EFFECTS: Effects;
    /// Reads that may run concurrently with other parallel-safe calls of the same turn.
    const PARALLEL_SAFE: bool = false;
    /// Staging tools (`Mutates::Depends`) implement [`TypedTool::stage`].
    const STAGING: bool = false;
    /// Tools whose preview is a list of file diffs and that can make only some of them
    /// implement [`TypedTool::narrow`] (see [`Tool::selects_parts`]).
    const PARTS: bool = false;

    /// See [`Tool::egress`].
    fn egress(&self, _ctx: &ToolCtx, _args: &Self::Args) -> Result<Vec<EgressRequest>, ToolError> {
        Ok(Vec::new())
    }
    /// See [`Tool::write_targets`].
    fn write_targets(&self, _ctx: &ToolCtx, _args: &Self::Args) -> Vec<String> {
        Vec::new()
    }
    /// See [`Tool::draft_paths`].
    fn draft_paths(&self, _ctx: &ToolCtx, _args: &Self::Args) -> Option<Vec<String>> {
        None
    }
    /// Dry run; `raw` is the call's JSON (the default preview shows it).
    fn preview(
        &self,
        _ctx: &ToolCtx,
        _args: &Self::Args,
        raw: &Value,
    ) -> Result<Preview, ToolError> {
        Ok(Preview {
            summary: format!("{} call", Self::NAME),
            body: PreviewBody::Text {
                text: serde_json::to_string_pretty(raw).unwrap_or_default(),
            },
            targets: Vec::new(),
        })
    }
    fn run(&self, ctx: &ToolCtx, args: &Self::Args) -> Result<ToolOutput, ToolError>;
    /// See [`Tool::run_approved`].
    fn run_approved(
        &self,
        ctx: &ToolCtx,
        args: &Self::Args,
        approved: Option<&[String]>,
    ) -> Result<ToolOutput, ToolError> {
        let _ = approved;
        self.run(ctx, args)
    }
    /// See [`Tool::stage`].
    fn stage(&self, _ctx: &ToolCtx, _args: &Self::Args) -> Option<Result<Staged, ToolError>> {
        None
    }
    /// See [`Tool::narrow`].
    fn narrow(
        &self,
        _ctx: &ToolCtx,
        _args: &Self::Args,
        _shown: &Preview,
        _kept: &KeptParts,
    ) -> Result<Value, ToolError> {
        Err(ToolError::failed(format!(
            "{} cannot apply only some of its changes; approve or reject the call whole",
            Self::NAME
        )))
    }
}

/// Deserialize validated arguments; a failure names the JSON Pointer of the bad field.
pub fn parse_args<T: DeserializeOwned>(args: &Value) -> Result<T, FieldError> {
    crate::json_args::parse(args).map_err(|e| FieldError {
        pointer: e.pointer,
        message: e.message,
    })
}

/// The call's typed arguments, as the gate deserialized them (or now, for a call that did
/// not pass the gate, e.g. in a test).
fn parsed<T: TypedTool>(args: &CallArgs) -> Result<std::sync::Arc<T::Args>, ToolError> {
    args.typed::<T::Args>()
        .map_err(|e| ToolError::failed(super::registry::describe_field_errors(T::NAME, &[e])))
}

impl<T: TypedTool> Tool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }
    fn group(&self) -> &'static str {
        T::GROUP
    }
    fn description(&self) -> &'static str {
        T::DESCRIPTION
    }
    fn schema(&self) -> Value {
        crate::json_args::schema_of::<T::Args>()
    }
    fn mutates(&self) -> Mutates {
        T::MUTATES
    }
    fn effects(&self) -> Effects {
        T::EFFECTS
    }
    fn check_args(&self, args: &CallArgs) -> Result<(), FieldError> {
        args.typed::<T::Args>().map(drop)
    }
    fn egress(&self, ctx: &ToolCtx, args: &CallArgs) -> Result<Vec<EgressRequest>, ToolError> {
        TypedTool::egress(self, ctx, &*parsed::<T>(args)?)
    }
    fn parallel_safe(&self) -> bool {
        T::PARALLEL_SAFE
    }
    fn write_targets(&self, ctx: &ToolCtx, args: &CallArgs) -> Vec<String> {
        match parsed::<T>(args) {
            Ok(a) => TypedTool::write_targets(self, ctx, &a),
            Err(_) => Vec::new(),
        }
    }
    fn draft_paths(&self, ctx: &ToolCtx, args: &CallArgs) -> Option<Vec<String>> {
        match parsed::<T>(args) {
            Ok(a) => TypedTool::draft_paths(self, ctx, &a),
            // Unparseable arguments never reach a tool; no paths, the call fails on its own.
            Err(_) => Some(Vec::new()),
        }
    }
    fn preview(&self, ctx: &ToolCtx, args: &CallArgs) -> Result<Preview, ToolError> {
        TypedTool::preview(self, ctx, &*parsed::<T>(args)?, args.raw())
    }
    fn run(&self, ctx: &ToolCtx, args: &CallArgs) -> Result<ToolOutput, ToolError> {
        TypedTool::run(self, ctx, &*parsed::<T>(args)?)
    }
    fn run_approved(
        &self,
        ctx: &ToolCtx,
        args: &CallArgs,
        approved: Option<&[String]>,
    ) -> Result<ToolOutput, ToolError> {
        TypedTool::run_approved(self, ctx, &*parsed::<T>(args)?, approved)
    }
    fn stage(&self, ctx: &ToolCtx, args: &CallArgs) -> Option<Result<Staged, ToolError>> {
        match parsed::<T>(args) {
            Ok(a) => TypedTool::stage(self, ctx, &a),
            Err(e) => Some(Err(e)),
        }
    }
    fn is_staging(&self) -> bool {
        T::STAGING
    }
    fn selects_parts(&self) -> bool {
        T::PARTS
    }
    fn narrow(
        &self,
        ctx: &ToolCtx,
        args: &CallArgs,
        shown: &Preview,
        kept: &KeptParts,
    ) -> Result<Value, ToolError> {
        TypedTool::narrow(self, ctx, &*parsed::<T>(args)?, shown, kept)
    }
}
