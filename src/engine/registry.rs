//! The tool registry: every built-in tool with its compiled argument validator.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::tool::{CallArgs, Tool};

pub struct RegisteredTool {
    pub tool: Arc<dyn Tool>,
    /// The argument schema, generated once at registration: a typed tool's schema is derived
    /// from its `Args` type, and deriving it for every tool on every turn showed as +40 % in
    /// the agent-turn benchmark.
    pub schema: Value,
    validator: jsonschema::Validator,
}

/// One invalid field: where it is (JSON Pointer) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FieldError {
    pub pointer: String,
    pub message: String,
}

impl RegisteredTool {
    /// Validate `args` against the schema, then deserialize them into the tool's typed
    /// arguments; every error names the JSON Pointer of the bad field ("" = the root).
    pub fn validate(&self, args: &CallArgs) -> Result<(), Vec<FieldError>> {
        let errors: Vec<FieldError> = self
            .validator
            .iter_errors(args.raw())
            .map(|e| FieldError {
                pointer: e.instance_path.to_string(),
                message: e.to_string(),
            })
            .collect();
        if errors.is_empty() {
            self.tool.check_args(args).map_err(|e| vec![e])
        } else {
            Err(errors)
        }
    }
}

/// A tool the registry cannot take.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("schema of tool {tool} is invalid: {message}")]
    InvalidSchema { tool: &'static str, message: String },
}

/// The tools an engine may call. Cloning shares the registered tools (their schemas and
/// compiled validators), so a process builds them once however many engines it opens.
#[derive(Clone, Default)]
pub struct Registry {
    tools: BTreeMap<&'static str, Arc<RegisteredTool>>,
}

impl Registry {
    /// Register a tool. Its schema is one we wrote, so a schema that does not compile is a
    /// programming error reported at start-up, never at call time.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let schema = tool.schema();
        let validator =
            jsonschema::validator_for(&schema).map_err(|e| RegistryError::InvalidSchema {
                tool: tool.name(),
                message: e.to_string(),
            })?;
        self.tools.insert(
            tool.name(),
            Arc::new(RegisteredTool {
                tool,
                schema,
                validator,
            }),
        );
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name).map(|t| &**t)
    }

    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values().map(|t| &**t)
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.keys().copied()
    }
}

/// Render field errors as one message for the agent.
pub fn describe_field_errors(tool: &str, errors: &[FieldError]) -> String {
    let mut out = format!("invalid arguments for {tool}:");
    for e in errors {
        let at = if e.pointer.is_empty() {
            "/"
        } else {
            &e.pointer
        };
        out.push_str(&format!("\n  at {at}: {}", e.message));
    }
    out
}
