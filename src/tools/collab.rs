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
use crate::engine::inputs::{render_answers, InputSource, Question};
use crate::engine::services::ToolServices;
use crate::engine::tool::{Mutates, Tool, ToolCtx, ToolError, ToolOutput};

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

fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

pub struct CreateAgent;

impl Tool for CreateAgent {
    fn name(&self) -> &'static str {
        "create_agent"
    }
    fn group(&self) -> &'static str {
        "agents"
    }
    fn description(&self) -> &'static str {
        "Create a linked agent session for a profile (get_agent_profile shows what it takes). `initial` must match the profile's initial schema. Returns {sessionId, profileKey, title}; then use invoke_agent."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "profileKey": {"type": "string", "minLength": 1},
                "initial": {"type": "object", "description": "The profile's initial object (omitted = {})"},
                "title": {"type": "string", "maxLength": 120}
            },
            "required": ["profileKey"],
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::No
    }
    fn effects(&self) -> crate::engine::tool::Effects {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Agents])
    }
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let e = engine(ctx)?;
        let profile = str_arg(args, "profileKey").unwrap_or_default();
        let initial = args.get("initial").cloned().unwrap_or_else(|| json!({}));
        let info = e
            .create_agent(
                Some(&ctx.session_id),
                profile,
                initial,
                str_arg(args, "title"),
            )
            .map_err(|err| ToolError::failed(err.to_string()))?;
        let v = json!({"sessionId": info.id, "profileKey": info.profile, "title": info.title});
        Ok(json_out(v.to_string(), v))
    }
}

pub struct InvokeAgent;

impl Tool for InvokeAgent {
    fn name(&self) -> &'static str {
        "invoke_agent"
    }
    fn group(&self) -> &'static str {
        "agents"
    }
    fn description(&self) -> &'static str {
        "Run one of your linked agents. mode: prompt (default with a message or input) starts a run, continue (default without) resumes it, steer injects a message into its running turn, followup queues one after it. `input` must match the profile's payload schema. background:true returns a jobId at once and the result arrives later as a message (do not poll). Returns {status, sessionId, finalMessage, data, error?, stats}."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "sessionId": {"type": "string", "minLength": 1},
                "message": {"type": "string"},
                "input": {"type": "object"},
                "title": {"type": "string"},
                "mode": {"type": "string", "enum": ["prompt", "continue", "steer", "followup"]},
                "model": {"type": "string", "minLength": 1, "description": "A model key from config.toml, for this call only"},
                "background": {"type": "boolean"}
            },
            "required": ["sessionId"],
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::No
    }
    fn effects(&self) -> crate::engine::tool::Effects {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Agents])
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let e = engine(ctx)?;
        let target = str_arg(args, "sessionId").unwrap_or_default().to_string();
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
        if let Some(t) = str_arg(args, "title").filter(|t| !t.trim().is_empty()) {
            e.set_title(&target, t);
        }
        let message = str_arg(args, "message").map(str::to_string);
        let input = args.get("input").cloned();
        let mode = match str_arg(args, "mode") {
            Some(m) => InvokeMode::parse(m).unwrap_or(InvokeMode::Prompt),
            None if message.is_some() || input.is_some() => InvokeMode::Prompt,
            None => InvokeMode::Continue,
        };
        let req = InvokeRequest {
            caller: Some(ctx.session_id.clone()),
            session_id: target.clone(),
            message,
            input,
            mode,
            model: str_arg(args, "model").map(str::to_string),
            origin_call_id: Some(ctx.call_id.clone()),
        };
        let h = host(e)?;
        if args.get("background").and_then(Value::as_bool) == Some(true) {
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

impl Tool for GetAgent {
    fn name(&self) -> &'static str {
        "get_agent"
    }
    fn group(&self) -> &'static str {
        "agents"
    }
    fn description(&self) -> &'static str {
        "Without sessionId: your linked agents (not detached) with their status. With sessionId: that agent."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"sessionId": {"type": "string", "minLength": 1}},
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::No
    }
    fn effects(&self) -> crate::engine::tool::Effects {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Agents])
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let e = engine(ctx)?;
        let linked = e.linked_agents(&ctx.session_id);
        match str_arg(args, "sessionId") {
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

impl Tool for DetachAgent {
    fn name(&self) -> &'static str {
        "detach_agent"
    }
    fn group(&self) -> &'static str {
        "agents"
    }
    fn description(&self) -> &'static str {
        "Unlink one of your agents (its session is kept, not deleted). Returns detached, already_detached or not_linked."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"sessionId": {"type": "string", "minLength": 1}},
            "required": ["sessionId"],
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::No
    }
    fn effects(&self) -> crate::engine::tool::Effects {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Agents])
    }
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let e = engine(ctx)?;
        let id = str_arg(args, "sessionId").unwrap_or_default();
        let status = e
            .detach_agent(&ctx.session_id, id)
            .map_err(|err| ToolError::failed(err.to_string()))?;
        let v = json!({"sessionId": id, "status": status});
        Ok(json_out(v.to_string(), v))
    }
}

pub struct RequestUserInput;

impl Tool for RequestUserInput {
    fn name(&self) -> &'static str {
        "request_user_input"
    }
    fn group(&self) -> &'static str {
        "control"
    }
    fn description(&self) -> &'static str {
        "Ask the author one or more questions and wait for the answers (the session pauses). Give options when the choice is among a few; leave them out for a free answer."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "questions": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 10,
                    "items": {
                        "type": "object",
                        "properties": {
                            "header": {"type": "string", "maxLength": 60},
                            "question": {"type": "string", "minLength": 1},
                            "options": {
                                "type": "array",
                                "maxItems": 9,
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "label": {"type": "string", "minLength": 1},
                                        "description": {"type": "string"}
                                    },
                                    "required": ["label"],
                                    "additionalProperties": false
                                }
                            }
                        },
                        "required": ["question"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["questions"],
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::No
    }
    fn effects(&self) -> crate::engine::tool::Effects {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Control]).pauses()
    }
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let e = engine(ctx)?;
        let questions: Vec<Question> =
            serde_json::from_value(args.get("questions").cloned().unwrap_or(Value::Null))
                .map_err(|err| ToolError::failed(format!("questions: {err}")))?;
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
