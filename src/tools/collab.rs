//! Collaboration tools that act on other sessions: `create_agent` (a linked session for
//! another profile), `invoke_agent` (run it, synchronously or as a background job, with
//! NeuroBook's invocation modes), `get_agent` (the caller's linked agents) and `detach_agent`.
//! Plus `request_user_input`, which pauses the session until the author answers.
//!
//! Choice (NeuroBook is silent): an agent may invoke only its own linked, non-detached agents,
//! so one agent cannot drive the author's other sessions.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::engine::agents::{AgentHost, InvokeMode, InvokeRequest};
use crate::engine::inputs::{render_answers, InputSource, Question, QuestionOption};
use crate::engine::services::ToolServices;
use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;

fn engine(ctx: &ToolCtx) -> Result<&dyn ToolServices, ToolError> {
    ctx.services
        .as_deref()
        .ok_or_else(|| ToolError::failed("agents are not available outside the engine"))
}

fn host(e: &dyn ToolServices) -> Result<Arc<dyn AgentHost>, ToolError> {
    e.host().ok_or_else(|| {
        ToolError::failed(
            "no agent host in this process: agents run inside `nbook` (the TUI) or `nbook run`, not `nbook call`",
        )
    })
}

fn json_out(content: String, v: Value) -> ToolOutput {
    ToolOutput {
        content,
        details: Some(v),
        ..ToolOutput::default()
    }
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateAgentArgs {
    #[schemars(length(min = 1))]
    pub profile_key: String,
    /// The profile's initial object (omitted = {})
    pub initial: Option<serde_json::Map<String, Value>>,
    #[schemars(length(max = 120))]
    pub title: Option<String>,
}

#[derive(Clone, Copy, Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InvokeModeArg {
    Prompt,
    Continue,
    Steer,
    Followup,
}

impl InvokeModeArg {
    fn mode(self) -> InvokeMode {
        match self {
            InvokeModeArg::Prompt => InvokeMode::Prompt,
            InvokeModeArg::Continue => InvokeMode::Continue,
            InvokeModeArg::Steer => InvokeMode::Steer,
            InvokeModeArg::Followup => InvokeMode::Followup,
        }
    }
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InvokeAgentArgs {
    #[schemars(length(min = 1))]
    pub session_id: String,
    pub message: Option<String>,
    pub input: Option<serde_json::Map<String, Value>>,
    pub title: Option<String>,
    pub mode: Option<InvokeModeArg>,
    /// A model key from config.toml, for this call only
    #[schemars(length(min = 1))]
    pub model: Option<String>,
    pub background: Option<bool>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentIdArgs {
    #[schemars(length(min = 1))]
    pub session_id: Option<String>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DetachArgs {
    #[schemars(length(min = 1))]
    pub session_id: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionArgs {
    #[schemars(length(min = 1))]
    pub label: String,
    pub description: Option<String>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionArgs {
    #[schemars(length(max = 60))]
    pub header: Option<String>,
    #[schemars(length(min = 1))]
    pub question: String,
    #[schemars(length(max = 9))]
    pub options: Option<Vec<OptionArgs>>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    #[schemars(length(min = 1, max = 10))]
    pub questions: Vec<QuestionArgs>,
}

impl QuestionArgs {
    fn question(&self) -> Question {
        Question {
            header: self.header.clone(),
            question: self.question.clone(),
            options: self
                .options
                .iter()
                .flatten()
                .map(|o| QuestionOption {
                    label: o.label.clone(),
                    description: o.description.clone(),
                })
                .collect(),
            multi: false,
        }
    }
}

pub struct CreateAgent;

impl TypedTool for CreateAgent {
    type Args = CreateAgentArgs;
    const NAME: &'static str = "create_agent";
    const GROUP: &'static str = "agents";
    const DESCRIPTION: &'static str = "Create a linked agent session for a profile (get_agent_profile shows what it takes). `initial` must match the profile's initial schema. Returns {sessionId, profileKey, title}; then use invoke_agent.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Agents])
    };
    fn run(&self, ctx: &ToolCtx, args: &CreateAgentArgs) -> Result<ToolOutput, ToolError> {
        let e = engine(ctx)?;
        let profile = args.profile_key.as_str();
        let initial = Value::Object(args.initial.clone().unwrap_or_default());
        let info = e
            .create_agent(
                Some(&ctx.session_id),
                profile,
                initial,
                args.title.as_deref(),
            )
            .map_err(|err| ToolError::failed(err.to_string()))?;
        let v = json!({"sessionId": info.id, "profileKey": info.profile, "title": info.title});
        Ok(json_out(v.to_string(), v))
    }
}

pub struct InvokeAgent;

impl TypedTool for InvokeAgent {
    type Args = InvokeAgentArgs;
    const NAME: &'static str = "invoke_agent";
    const GROUP: &'static str = "agents";
    const DESCRIPTION: &'static str = "Run one of your linked agents. mode: prompt (default with a message or input) starts a run, continue (default without) resumes it, steer injects a message into its running turn, followup queues one after it. `input` must match the profile's payload schema. background:true returns a jobId at once and the result arrives later as a message (do not poll). Returns {status, sessionId, finalMessage, data, error?, stats}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Agents])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, args: &InvokeAgentArgs) -> Result<ToolOutput, ToolError> {
        let e = engine(ctx)?;
        let target = args.session_id.clone();
        if target == ctx.session_id {
            return Err(ToolError::failed(
                "an agent cannot invoke itself; pass the sessionId of a linked agent",
            ));
        }
        let linked = e.linked_agents(&ctx.session_id);
        match linked.iter().find(|a| a.session_id == target) {
            None => {
                return Err(ToolError::failed(format!(
                    "session {target} is not one of your linked agents; create_agent first (get_agent lists yours)"
                )))
            }
            Some(a) if a.detached => {
                return Err(ToolError::failed(format!(
                    "session {target} was detached; create a new agent instead"
                )))
            }
            Some(_) => {}
        }
        if let Some(t) = args.title.as_deref().filter(|t| !t.trim().is_empty()) {
            e.set_title(&target, t);
        }
        let message = args.message.clone();
        let input = args.input.clone().map(Value::Object);
        let mode = match args.mode {
            Some(m) => m.mode(),
            None if message.is_some() || input.is_some() => InvokeMode::Prompt,
            None => InvokeMode::Continue,
        };
        let req = InvokeRequest {
            caller: Some(ctx.session_id.clone()),
            session_id: target.clone(),
            message,
            input,
            mode,
            model: args.model.clone(),
            origin_call_id: Some(ctx.call_id.clone()),
        };
        let h = host(e)?;
        if args.background == Some(true) {
            let job = h
                .invoke_background(req)
                .map_err(|e| ToolError::failed(e.to_string()))?;
            let v = json!({"jobId": job, "sessionId": target, "status": "started", "data": null, "finalMessage": "", "background": true});
            return Ok(json_out(
                format!("{v}\nThe result will arrive as a message when the job ends; do not poll."),
                v,
            ));
        }
        let out = h
            .invoke_blocking(req)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let v = serde_json::to_value(&out).unwrap_or(Value::Null);
        if out.status == "error" {
            return Err(ToolError::failed(format!(
                "agent {target} failed: {}",
                out.error.unwrap_or_else(|| "unknown error".into())
            )));
        }
        let mut content = out.final_message.clone();
        if !out.data.is_null() {
            content.push_str(&format!("\n\ndata: {}", out.data));
        }
        if let Some(err) = &out.error {
            content.push_str(&format!("\n\n({}: {err})", out.status));
        }
        Ok(json_out(content, v))
    }
}

pub struct GetAgent;

impl TypedTool for GetAgent {
    type Args = AgentIdArgs;
    const NAME: &'static str = "get_agent";
    const GROUP: &'static str = "agents";
    const DESCRIPTION: &'static str = "Without sessionId: your linked agents (not detached) with their status. With sessionId: that agent.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Agents])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, args: &AgentIdArgs) -> Result<ToolOutput, ToolError> {
        let e = engine(ctx)?;
        let linked = e.linked_agents(&ctx.session_id);
        match args.session_id.as_deref() {
            None => {
                let list: Vec<&_> = linked.iter().filter(|a| !a.detached).collect();
                let v = serde_json::to_value(&list).unwrap_or(Value::Null);
                let content = if list.is_empty() {
                    "You have no linked agents; create_agent makes one.".to_string()
                } else {
                    serde_json::to_string_pretty(&v).unwrap_or_default()
                };
                Ok(json_out(content, v))
            }
            Some(id) => {
                let a = linked.iter().find(|a| a.session_id == id).ok_or_else(|| {
                    ToolError::failed(format!(
                        "session {id} is not one of your linked agents (get_agent without sessionId lists them)"
                    ))
                })?;
                let v = serde_json::to_value(a).unwrap_or(Value::Null);
                Ok(json_out(
                    serde_json::to_string_pretty(&v).unwrap_or_default(),
                    v,
                ))
            }
        }
    }
}

pub struct DetachAgent;

impl TypedTool for DetachAgent {
    type Args = DetachArgs;
    const NAME: &'static str = "detach_agent";
    const GROUP: &'static str = "agents";
    const DESCRIPTION: &'static str = "Unlink one of your agents (its session is kept, not deleted). Returns detached, already_detached or not_linked.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Agents])
    };
    fn run(&self, ctx: &ToolCtx, args: &DetachArgs) -> Result<ToolOutput, ToolError> {
        let e = engine(ctx)?;
        let id = args.session_id.as_str();
        let status = e
            .detach_agent(&ctx.session_id, id)
            .map_err(|err| ToolError::failed(err.to_string()))?;
        let v = json!({"sessionId": id, "status": status});
        Ok(json_out(v.to_string(), v))
    }
}

pub struct RequestUserInput;

impl TypedTool for RequestUserInput {
    type Args = AskArgs;
    const NAME: &'static str = "request_user_input";
    const GROUP: &'static str = "control";
    const DESCRIPTION: &'static str = "Ask the author one or more questions and wait for the answers (the session pauses). Give options when the choice is among a few; leave them out for a free answer.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Control]).pauses()
    };
    fn run(&self, ctx: &ToolCtx, args: &AskArgs) -> Result<ToolOutput, ToolError> {
        let e = engine(ctx)?;
        let questions: Vec<Question> = args.questions.iter().map(QuestionArgs::question).collect();
        let title = questions
            .first()
            .map(|q| q.header.clone().unwrap_or_else(|| q.question.clone()))
            .unwrap_or_default();
        let answers = e
            .ask_blocking(
                &ctx.session_id,
                InputSource::Agent,
                &ctx.call_id,
                &title,
                questions.clone(),
            )
            .map_err(|err| ToolError::failed(err.to_string()))?;
        let req = crate::engine::inputs::InputRequest {
            id: ctx.call_id.clone(),
            session_id: ctx.session_id.clone(),
            source: InputSource::Agent,
            title,
            questions,
            requested_at: String::new(),
        };
        Ok(json_out(
            render_answers(&req, &answers),
            json!({"answers": answers}),
        ))
    }
}
