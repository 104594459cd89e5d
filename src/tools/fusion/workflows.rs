//! Board workflow tools (issue #17; fusion-notes §2.3): `fn_workflow_list`, `fn_workflow_get`,
//! `fn_workflow_validate`, `fn_trait_list` (reads), `fn_workflow_create`,
//! `fn_workflow_update`, `fn_workflow_delete`, `fn_workflow_select` (board changes through
//! the approval gate, previewed by the exact dry run) and `fn_workflow_settings`, whose `get`
//! is a read and only `set` mutates (`Mutates::Depends`). Not to be confused with
//! `crate::tools::workflows`, NeuroBook's JavaScript workflows.
//!
//! Choices where the notes are silent: `confirm_policy_escalation` is accepted and has no
//! effect (nbook binds no agents with their own policies to columns, so no column can widen a
//! policy); `fn_workflow_validate` answers an invalid IR with a normal result
//! `{valid: false, errors}` (it is a dry run that succeeded), while create and update refuse it
//! with the error result `WORKFLOW_IR_INVALID` carrying the same `errors`.

use rusqlite::Connection;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{board, err, preview_op, read_output, run_op, task_of};
use crate::board::workflow::{self as wf, validate, Actor, NewWorkflow, WorkflowUpdate as Changes};
use crate::board::BoardError;
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::Preview;

const BOARD: Effects = {
    use crate::engine::tool::Domain::*;
    Effects::touches(&[Board])
};

/// Who calls: the author (`user`) or an agent session.
fn actor(ctx: &ToolCtx) -> Actor {
    if ctx.profile.key == "author" {
        Actor {
            kind: "user",
            id: "author".into(),
        }
    } else {
        Actor {
            kind: "agent",
            id: super::actor(ctx),
        }
    }
}

/// Heartbeat, chat and planning sessions may not author nodes that skip approval: their
/// `cliSkipApproval` / `autoApprove` flags are stripped (Fusion does the same).
fn strip_flags(ctx: &ToolCtx, ir: &Value) -> Value {
    let mut ir = ir.clone();
    if !matches!(ctx.profile.key.as_str(), "heartbeat" | "chat" | "planning") {
        return ir;
    }
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Object(c)) = m.get_mut("config") {
                    c.remove("cliSkipApproval");
                    c.remove("autoApprove");
                }
                m.values_mut().for_each(walk);
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    if let Some(nodes) = ir.get_mut("nodes") {
        walk(nodes);
    }
    ir
}

fn ir_object(ir: &Value) -> Result<(), ToolError> {
    if ir.is_object() {
        Ok(())
    } else {
        Err(err(BoardError::invalid("ir", "must be an IR v2 object")))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

pub struct WorkflowList;

impl TypedTool for WorkflowList {
    type Args = NoArgs;
    const NAME: &'static str = "fn_workflow_list";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "List the board's workflows: the read-only built-ins (builtin:chapter, the default) and the custom ones, each with its columns and declared settings.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = BOARD;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, _a: &NoArgs) -> Result<ToolOutput, ToolError> {
        let all = board(ctx).read(wf::list).map_err(err)?;
        let mut text = String::new();
        let rows: Vec<Value> = all
            .iter()
            .map(|w| {
                let cols: Vec<&str> = w.ir.columns.iter().map(|c| c.id.as_str()).collect();
                text.push_str(&format!(
                    "- {} {}{}: {}\n",
                    w.id,
                    w.name,
                    if w.builtin {
                        " (built-in, read-only)"
                    } else {
                        ""
                    },
                    cols.join(" → ")
                ));
                json!({"id": w.id, "name": w.name, "description": w.description, "icon": w.icon,
                       "builtin": w.builtin, "columns": cols,
                       "settings": w.ir.settings.iter().map(|s| &s.id).collect::<Vec<_>>()})
            })
            .collect();
        Ok(read_output(text, json!({"workflows": rows})))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowIdArgs {
    /// e.g. builtin:chapter or WF-001.
    #[schemars(length(min = 1, max = 64))]
    pub workflow_id: String,
}

pub struct WorkflowGet;

impl TypedTool for WorkflowGet {
    type Args = WorkflowIdArgs;
    const NAME: &'static str = "fn_workflow_get";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Fetch one workflow by id: name, description, builtin flag and the full IR v2 as JSON (columns with traits, nodes, edges, artifacts, fields, settings). builtin:chapter's settings array is the canonical settings catalogue. Unknown id: WORKFLOW_NOT_FOUND.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = BOARD;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &WorkflowIdArgs) -> Result<ToolOutput, ToolError> {
        let w = board(ctx)
            .read(|c| wf::require(c, a.workflow_id.trim()))
            .map_err(err)?;
        let v = json!({"id": w.id, "name": w.name, "description": w.description, "icon": w.icon,
                       "builtin": w.builtin, "ir": w.ir, "layout": w.layout});
        let text = serde_json::to_string_pretty(&v).unwrap_or_default();
        Ok(read_output(text, v))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateArgs {
    /// Validate a stored workflow…
    pub workflow_id: Option<String>,
    /// …or this IR v2 object.
    pub ir: Option<Value>,
    /// Accepted; nbook has no column agent policies to escalate.
    pub confirm_policy_escalation: Option<bool>,
}

pub struct WorkflowValidate;

impl TypedTool for WorkflowValidate {
    type Args = ValidateArgs;
    const NAME: &'static str = "fn_workflow_validate";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Dry-run validate a workflow IR v2 (give ir, or workflow_id for a stored one) with the same checks create and update run; nothing changes. Returns {valid: true} or {valid: false, errors: [{type: workflow-ir | column-traits | code-node | column-agent, message}]}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = BOARD;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &ValidateArgs) -> Result<ToolOutput, ToolError> {
        let raw = match (&a.ir, a.workflow_id.as_deref().map(str::trim)) {
            (Some(ir), None) => {
                ir_object(ir)?;
                ir.clone()
            }
            (None, Some(id)) if !id.is_empty() => {
                let w = board(ctx).read(|c| wf::require(c, id)).map_err(err)?;
                serde_json::to_value(&w.ir).unwrap_or(Value::Null)
            }
            _ => {
                return Err(err(BoardError::invalid(
                    "ir",
                    "give exactly one of ir and workflow_id",
                )))
            }
        };
        Ok(match validate::validate_value(&raw) {
            Ok(_) => read_output("valid".into(), json!({"valid": true})),
            Err(errors) => {
                let text = errors
                    .iter()
                    .map(|e| format!("- [{}] {}", json!(e.kind).as_str().unwrap_or(""), e.message))
                    .collect::<Vec<_>>()
                    .join("\n");
                read_output(
                    format!("invalid ({} errors):\n{text}", errors.len()),
                    json!({"valid": false, "errors": errors}),
                )
            }
        })
    }
}

pub struct TraitList;

impl TypedTool for TraitList {
    type Args = NoArgs;
    const NAME: &'static str = "fn_trait_list";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "List the column trait catalogue (what each trait means and the config keys it reads); a column naming any other trait is refused (column-traits).";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = BOARD;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, _ctx: &ToolCtx, _a: &NoArgs) -> Result<ToolOutput, ToolError> {
        let text = wf::traits::TRAITS
            .iter()
            .map(|t| format!("- {}: {}", t.name, t.description))
            .collect::<Vec<_>>()
            .join("\n");
        Ok(read_output(text, json!({"traits": wf::traits::TRAITS})))
    }
}

/// A mutating workflow tool: its target key and its op.
macro_rules! change_tool {
    ($ty:ident, $name:literal, $args:ty, $desc:expr, $mutates:expr) => {
        pub struct $ty;
        impl TypedTool for $ty {
            type Args = $args;
            const NAME: &'static str = $name;
            const GROUP: &'static str = "board";
            const DESCRIPTION: &'static str = $desc;
            const MUTATES: Mutates = $mutates;
            const EFFECTS: Effects = BOARD;
            fn write_targets(&self, ctx: &ToolCtx, a: &$args) -> Vec<String> {
                $ty::target(ctx, a)
            }
            fn preview(
                &self,
                ctx: &ToolCtx,
                a: &$args,
                _raw: &Value,
            ) -> Result<Preview, ToolError> {
                let op = $ty::prepare(ctx, a)?;
                preview_op($name, &board(ctx), |c: &Connection| op(c))
            }
            fn run(&self, ctx: &ToolCtx, a: &$args) -> Result<ToolOutput, ToolError> {
                if let Some(out) = $ty::read(ctx, a)? {
                    return Ok(out);
                }
                let op = $ty::prepare(ctx, a)?;
                run_op(&board(ctx), |c: &Connection| op(c))
            }
        }
    };
}

type BoxOp<'a> = Box<dyn Fn(&Connection) -> crate::board::BoardResult<crate::board::Outcome> + 'a>;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    #[schemars(length(min = 1, max = 120))]
    pub name: String,
    pub description: Option<String>,
    pub icon: Option<String>,
    /// The IR v2 object: {version: "v2", name, columns, nodes, edges, artifacts?, fields?, settings?}.
    pub ir: Value,
    /// Node positions for an editor; stored as given.
    pub layout: Option<Value>,
    pub confirm_policy_escalation: Option<bool>,
}

change_tool!(
    WorkflowCreate,
    "fn_workflow_create",
    CreateArgs,
    "Create a custom workflow from an IR v2 graph (validated first: an invalid IR is the error result WORKFLOW_IR_INVALID with details.errors, nothing stored). v2 supports parse-steps, foreach (mode, isolation, concurrency 1-8, maxReworkCycles), step-execute, step-review, code nodes, rework edges, artifacts, custom fields and typed settings declarations. Heartbeat, chat and planning sessions have cliSkipApproval/autoApprove node flags stripped.",
    Mutates::Yes
);

impl WorkflowCreate {
    fn target(_ctx: &ToolCtx, _a: &CreateArgs) -> Vec<String> {
        vec!["board/workflows".into()]
    }
    fn read(_ctx: &ToolCtx, _a: &CreateArgs) -> Result<Option<ToolOutput>, ToolError> {
        Ok(None)
    }
    fn prepare<'a>(ctx: &ToolCtx, a: &'a CreateArgs) -> Result<BoxOp<'a>, ToolError> {
        ir_object(&a.ir)?;
        let n = NewWorkflow {
            name: a.name.clone(),
            description: a.description.clone(),
            icon: a.icon.clone(),
            ir: strip_flags(ctx, &a.ir),
            layout: a.layout.clone(),
        };
        let who = actor(ctx);
        Ok(Box::new(move |c| wf::create(c, &n, &who)))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    #[schemars(length(min = 1, max = 64))]
    pub workflow_id: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub icon: Option<String>,
    pub ir: Option<Value>,
    pub layout: Option<Value>,
    /// A column of the new IR that takes the tasks of removed columns.
    pub rehome_to: Option<String>,
    pub confirm_policy_escalation: Option<bool>,
}

change_tool!(
    WorkflowUpdate,
    "fn_workflow_update",
    UpdateArgs,
    "Update a custom workflow's name, description, icon, IR or layout. Built-ins are refused (WORKFLOW_BUILTIN_READONLY). Removing a column that holds tasks fails with WORKFLOW_OCCUPIED_COLUMNS, details {occupiedColumns, occupants, retryWith: \"rehome_to\"}: retry with rehome_to naming a column of the new IR. Editing fields orphans existing task values instead of destroying them; editing settings declarations leaves stored values orphaned (shown by fn_workflow_settings).",
    Mutates::Yes
);

impl WorkflowUpdate {
    fn target(_ctx: &ToolCtx, a: &UpdateArgs) -> Vec<String> {
        vec![format!("board/workflows/{}", a.workflow_id.trim())]
    }
    fn read(_ctx: &ToolCtx, _a: &UpdateArgs) -> Result<Option<ToolOutput>, ToolError> {
        Ok(None)
    }
    fn prepare<'a>(ctx: &ToolCtx, a: &'a UpdateArgs) -> Result<BoxOp<'a>, ToolError> {
        if let Some(ir) = &a.ir {
            ir_object(ir)?;
        }
        let u = Changes {
            name: a.name.clone(),
            description: a.description.clone(),
            icon: a.icon.clone(),
            ir: a.ir.as_ref().map(|ir| strip_flags(ctx, ir)),
            layout: a.layout.clone(),
            rehome_to: a.rehome_to.clone(),
        };
        let who = actor(ctx);
        let id = a.workflow_id.trim();
        Ok(Box::new(move |c| wf::update(c, id, &u, &who)))
    }
}

change_tool!(
    WorkflowDelete,
    "fn_workflow_delete",
    WorkflowIdArgs,
    "Delete a custom workflow (built-ins are protected: WORKFLOW_BUILTIN_READONLY). Its tasks are re-homed to the default workflow (builtin:chapter) in its entry column, Planning (archived tasks stay archived); its stored setting values go with it.",
    Mutates::Yes
);

impl WorkflowDelete {
    fn target(_ctx: &ToolCtx, a: &WorkflowIdArgs) -> Vec<String> {
        vec![format!("board/workflows/{}", a.workflow_id.trim())]
    }
    fn read(_ctx: &ToolCtx, _a: &WorkflowIdArgs) -> Result<Option<ToolOutput>, ToolError> {
        Ok(None)
    }
    fn prepare<'a>(ctx: &ToolCtx, a: &'a WorkflowIdArgs) -> Result<BoxOp<'a>, ToolError> {
        let who = actor(ctx);
        let id = a.workflow_id.trim();
        Ok(Box::new(move |c| wf::delete(c, id, &who)))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectArgs {
    #[schemars(length(min = 1, max = 64))]
    pub workflow_id: String,
    /// Default: this session's task (required where the session has none).
    pub task_id: Option<String>,
}

change_tool!(
    WorkflowSelect,
    "fn_workflow_select",
    SelectArgs,
    "Assign a workflow to a task (default: this session's task; chat and planning sessions pass task_id). The task keeps its column if the workflow has one of that id, else it moves to the workflow's entry column. Unknown ids: WORKFLOW_NOT_FOUND / TASK_NOT_FOUND; archived tasks: TASK_ARCHIVED.",
    Mutates::Yes
);

impl WorkflowSelect {
    fn target(ctx: &ToolCtx, a: &SelectArgs) -> Vec<String> {
        task_of(ctx, a.task_id.as_deref())
            .map(|t| vec![format!("board/{t}")])
            .unwrap_or_default()
    }
    fn read(_ctx: &ToolCtx, _a: &SelectArgs) -> Result<Option<ToolOutput>, ToolError> {
        Ok(None)
    }
    fn prepare<'a>(ctx: &ToolCtx, a: &'a SelectArgs) -> Result<BoxOp<'a>, ToolError> {
        let task = task_of(ctx, a.task_id.as_deref())?;
        let who = actor(ctx);
        let id = a.workflow_id.trim();
        Ok(Box::new(move |c| wf::select(c, id, &task, &who)))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SettingsAction {
    Get,
    Set,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsArgs {
    pub action: SettingsAction,
    #[schemars(length(min = 1, max = 64))]
    pub workflow_id: String,
    /// set: {settingId: value | null}; null clears a stored value (orphaned ones too).
    pub values: Option<Map<String, Value>>,
}

fn settings_set(args: &Value) -> bool {
    args.get("action").and_then(Value::as_str) == Some("set")
}

change_tool!(
    WorkflowSettings,
    "fn_workflow_settings",
    SettingsArgs,
    "Read (action get) or write (action set, values {id: value | null}) a workflow's setting values; both return {workflowId, stored, effective, orphaned}: effective is what the board runs with (declared defaults filled in, orphans dropped), orphaned the stored values whose declaration is gone or that no longer validate. null clears a stored value, orphaned ones included. Built-in values are writable (built-in declarations are not). An invalid set is the error result WORKFLOW_SETTINGS_REJECTED with details {workflowId, rejections: [{code: no-settings-defined | unknown-setting | type-mismatch | enum-violation, settingId, message}]} listing every bad key; nothing is stored. Only set waits for approval.",
    Mutates::Depends(settings_set)
);

impl WorkflowSettings {
    fn target(_ctx: &ToolCtx, a: &SettingsArgs) -> Vec<String> {
        vec![format!("board/workflow-settings/{}", a.workflow_id.trim())]
    }
    fn read(ctx: &ToolCtx, a: &SettingsArgs) -> Result<Option<ToolOutput>, ToolError> {
        if a.action != SettingsAction::Get {
            return Ok(None);
        }
        if a.values.is_some() {
            return Err(err(BoardError::invalid("values", "only with action set")));
        }
        let r = board(ctx)
            .read(|c| wf::settings_of(c, a.workflow_id.trim()))
            .map_err(err)?;
        let v = serde_json::to_value(&r).unwrap_or(Value::Null);
        Ok(Some(read_output(
            serde_json::to_string_pretty(&v).unwrap_or_default(),
            v,
        )))
    }
    fn prepare<'a>(ctx: &ToolCtx, a: &'a SettingsArgs) -> Result<BoxOp<'a>, ToolError> {
        let Some(values) = &a.values else {
            return Err(err(BoardError::invalid(
                "values",
                "action set needs values {settingId: value | null}",
            )));
        };
        let who = actor(ctx);
        let id = a.workflow_id.trim();
        Ok(Box::new(move |c| wf::set_settings(c, id, values, &who)))
    }
}
