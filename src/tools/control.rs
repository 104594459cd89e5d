//! Control tools: `report_result` (ends a run with a result validated against the profile's
//! output schema) and `switch_mode` (an agent asks to change its session's mode; the policy
//! always holds it for the author, whatever the preset).

use serde_json::{json, Value};

use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{Mode, Preview, PreviewBody};

use crate::engine::MODE_STATE_KEY as MODE_KEY;

pub struct ReportResult;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportArgs {
    pub result: String,
    pub data: Option<Value>,
}

impl TypedTool for ReportResult {
    type Args = ReportArgs;
    const NAME: &'static str = "report_result";
    const GROUP: &'static str = "result";
    const DESCRIPTION: &'static str = "Finish this run and return a result to whoever invoked you: `result` is a short text; `data` must match your profile's output schema when it has one.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Control]).ends_run()
    };
    fn run(&self, ctx: &ToolCtx, args: &ReportArgs) -> Result<ToolOutput, ToolError> {
        let data = args.data.clone().unwrap_or(Value::Null);
        if let Some(schema) = &ctx.profile.output_schema {
            let validator = jsonschema::validator_for(schema).map_err(|e| {
                ToolError::failed(format!(
                    "profile {} has an invalid output schema: {e}",
                    ctx.profile.key
                ))
            })?;
            let errors: Vec<String> = validator
                .iter_errors(&data)
                .map(|e| {
                    let at = e.instance_path.to_string();
                    format!(
                        "at /data{}: {e}",
                        if at.is_empty() { String::new() } else { at }
                    )
                })
                .collect();
            if !errors.is_empty() {
                return Err(ToolError::failed(format!(
                    "data does not match the output schema of profile {}; fix the object at these paths and call report_result again:\n  {}",
                    ctx.profile.key,
                    errors.join("\n  ")
                )));
            }
        }
        let result = args.result.as_str();
        Ok(ToolOutput {
            content: result.to_string(),
            details: Some(json!({"result": result, "data": data})),
            changed_paths: Vec::new(),
            state_updates: Vec::new(),
        })
    }
}

pub struct SwitchMode;

#[derive(Clone, Copy, Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TargetMode {
    Normal,
    Discuss,
    Plan,
}

/// Not `deny_unknown_fields`, as in NeuroBook: extra keys are ignored.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SwitchModeArgs {
    pub target_mode: TargetMode,
    pub reason: Option<String>,
    pub plan_file_path: Option<String>,
}

fn target(args: &SwitchModeArgs) -> Option<Mode> {
    Some(match args.target_mode {
        TargetMode::Normal => Mode::Normal,
        TargetMode::Discuss => Mode::Discuss,
        TargetMode::Plan => Mode::Plan,
    })
}

impl TypedTool for SwitchMode {
    type Args = SwitchModeArgs;
    const NAME: &'static str = "switch_mode";
    const GROUP: &'static str = "control";
    const DESCRIPTION: &'static str = "Ask the author to switch this session's mode (normal, discuss, plan). Always waits for approval. When leaving plan mode, give planFilePath (.agent/plan/<slug>.md) so the author can review the plan.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Control]).pauses().always_asks()
    };
    fn preview(
        &self,
        ctx: &ToolCtx,
        args: &SwitchModeArgs,
        _raw: &Value,
    ) -> Result<Preview, ToolError> {
        let to = target(args)
            .ok_or_else(|| ToolError::failed("targetMode must be normal, discuss or plan"))?;
        let mut text = format!("Switch this session from {} to {} mode.", ctx.mode, to);
        if let Some(r) = args.reason.as_deref().filter(|r| !r.trim().is_empty()) {
            text.push_str(&format!("\nReason: {r}"));
        }
        if let Some(p) = args.plan_file_path.as_deref() {
            let plan = plan_file(ctx, p)?;
            text.push_str(&format!("\n\nPlan file {p}:\n\n{plan}"));
        }
        Ok(Preview {
            summary: format!("Switch to {to} mode"),
            body: PreviewBody::Text { text },
            targets: Vec::new(),
        })
    }
    fn run(&self, ctx: &ToolCtx, args: &SwitchModeArgs) -> Result<ToolOutput, ToolError> {
        let to = target(args)
            .ok_or_else(|| ToolError::failed("targetMode must be normal, discuss or plan"))?;
        if to == ctx.mode {
            return Ok(ToolOutput::text(format!(
                "The session is already in {to} mode."
            )));
        }
        let phase = match (ctx.mode, to) {
            (Mode::Plan, _) => "exit",
            _ => "enter",
        };
        let state = json!({
            "mode": to.as_str(),
            "fromMode": ctx.mode.as_str(),
            "phase": phase,
            "lastTransition": "switch_mode",
            "approved": true,
            "reason": args.reason,
        });
        Ok(ToolOutput {
            content: format!("The author approved: the session is now in {to} mode."),
            details: Some(state.clone()),
            changed_paths: Vec::new(),
            state_updates: vec![
                ("agent.mode".into(), state),
                (MODE_KEY.into(), json!(to.as_str())),
            ],
        })
    }
}

/// The plan file must be a `.md` under `.agent/plan/` that exists; its text goes in the preview.
fn plan_file(ctx: &ToolCtx, path: &str) -> Result<String, ToolError> {
    let r = ctx
        .workspace
        .resolve(path, crate::workspace::Access::Read)
        .map_err(|e| ToolError::failed(e.to_string()))?;
    if !(r.rel.starts_with(".agent/plan/") && r.rel.ends_with(".md")) {
        return Err(ToolError::failed(format!(
            "planFilePath must be a .md file under .agent/plan/, got {path}"
        )));
    }
    std::fs::read_to_string(&r.abs)
        .map_err(|e| ToolError::failed(format!("cannot read the plan file {path}: {e}")))
}
