//! Collaboration reads: `get_agent_profile` (what a profile can do and takes) and
//! `get_session` (a session's metadata, usage, linked agents and recent messages). Creating,
//! invoking and detaching linked agents come with the agent host (issue 5).

use serde_json::{json, Value};

use crate::engine::profiles::{Creation, Profile};
use crate::engine::services::ToolServices;
use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::LogRecord;

fn engine(ctx: &ToolCtx) -> Result<&dyn ToolServices, ToolError> {
    ctx.services
        .as_deref()
        .ok_or_else(|| ToolError::failed("sessions are not available outside the engine"))
}

fn json_out(v: Value) -> ToolOutput {
    ToolOutput {
        content: serde_json::to_string_pretty(&v).unwrap_or_default(),
        details: Some(v),
        ..ToolOutput::default()
    }
}

/// A schema as a short text summary (NeuroBook shows summaries, not the source), or "none".
pub fn schema_summary(schema: Option<&Value>) -> String {
    let Some(s) = schema else {
        return "none".into();
    };
    let props = s.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match props {
        None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
            "{} (no fields)".into()
        }
        None => "any object".into(),
        Some(p) if p.is_empty() => "{} (no fields)".into(),
        Some(p) => p
            .iter()
            .map(|(k, v)| {
                let ty = v
                    .get("type")
                    .map(|t| t.to_string().replace('"', ""))
                    .or_else(|| v.get("enum").map(|e| format!("one of {e}")))
                    .unwrap_or_else(|| "any".into());
                let req = if required.contains(&k.as_str()) {
                    " (required)"
                } else {
                    ""
                };
                let desc = v
                    .get("description")
                    .and_then(Value::as_str)
                    .map(|d| format!(" — {d}"))
                    .unwrap_or_default();
                format!("{k}: {ty}{req}{desc}")
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn profile_json(p: &Profile) -> Value {
    json!({
        "profileKey": p.key,
        "name": p.name,
        "description": p.description,
        "creationMode": match p.creation { Creation::Public => "public", Creation::SystemOnly => "system_only" },
        "createAgentAllowed": p.creation == Creation::Public,
        "toolKeys": p.tools,
        "initialSchema": schema_summary(p.initial_schema.as_ref()),
        "payloadSchema": schema_summary(p.payload_schema.as_ref()),
        "outputSchema": schema_summary(p.output_schema.as_ref()),
    })
}

pub struct GetAgentProfile;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileArgs {
    #[schemars(length(min = 1))]
    pub profile_key: String,
}

impl TypedTool for GetAgentProfile {
    type Args = ProfileArgs;
    const NAME: &'static str = "get_agent_profile";
    const GROUP: &'static str = "collaboration";
    const DESCRIPTION: &'static str = "Look at a profile before creating or calling an agent with it: its tools, whether agents may create it, and what its initial input, per-call payload and output look like.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Agents])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, args: &ProfileArgs) -> Result<ToolOutput, ToolError> {
        let key = args.profile_key.as_str();
        let p = engine(ctx)?
            .profiles()
            .get(key)
            .ok_or_else(|| ToolError::failed(format!("no profile '{key}'")))?;
        Ok(json_out(profile_json(&p)))
    }
}

pub struct GetSession;

const ROLES: [&str; 3] = ["user", "assistant", "toolResult"];

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum MessageRole {
    User,
    Assistant,
    ToolResult,
}

impl MessageRole {
    fn as_str(self) -> &'static str {
        match self {
            MessageRole::User => ROLES[0],
            MessageRole::Assistant => ROLES[1],
            MessageRole::ToolResult => ROLES[2],
        }
    }
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionArgs {
    #[schemars(length(min = 1))]
    pub session_id: Option<String>,
    pub include_recent_messages: Option<bool>,
    #[schemars(range(min = 1, max = 10))]
    pub recent_message_limit: Option<u64>,
    /// A set: each role at most once.
    pub recent_message_roles: Option<std::collections::BTreeSet<MessageRole>>,
    #[schemars(range(min = 100, max = 3000))]
    pub token_budget: Option<u64>,
}

impl TypedTool for GetSession {
    type Args = SessionArgs;
    const NAME: &'static str = "get_session";
    const GROUP: &'static str = "collaboration";
    const DESCRIPTION: &'static str = "Metadata of a session (your own when sessionId is omitted): profile, title, mode, state, token usage, linked agents, and optionally its most recent messages. Session ids are listed by get_agent; do not guess them.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Agents])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, args: &SessionArgs) -> Result<ToolOutput, ToolError> {
        let e = engine(ctx)?;
        let id = args.session_id.as_deref().unwrap_or(&ctx.session_id);
        let s = e
            .session(id)
            .ok_or_else(|| ToolError::failed(format!("no session with id '{id}'")))?;
        // The link ledger (`agent.link.*` minus `agent.detach.*`), as get_agent lists it.
        let linked: Vec<Value> = e
            .linked_agents(id)
            .into_iter()
            .filter(|a| !a.detached)
            .map(|a| json!({"sessionId": a.session_id, "profileKey": a.profile_key, "title": a.title, "status": a.status}))
            .collect();
        let mut out = json!({
            "metadata": {"sessionId": s.id, "profileKey": s.profile, "createdAt": s.created_at,
                         "parentSessionId": s.parent, "mode": s.mode.as_str(), "state": s.state.label()},
            "title": s.title,
            "usage": {"inputTokens": s.input_tokens, "outputTokens": s.output_tokens, "cost": s.cost},
            "linkedAgents": linked,
        });
        if args.include_recent_messages.unwrap_or(false) {
            let limit = args.recent_message_limit.unwrap_or(3) as usize;
            let budget_chars = args.token_budget.unwrap_or(1200) as usize * 4;
            let roles: Vec<String> = args
                .recent_message_roles
                .as_ref()
                .map(|r| r.iter().map(|x| x.as_str().to_string()).collect())
                .unwrap_or_else(|| ROLES.iter().map(|r| r.to_string()).collect());
            out["recentMessages"] = Value::Array(recent(e, id, limit, budget_chars, &roles));
        }
        Ok(json_out(out))
    }
}

/// The newest `limit` messages of the given roles, oldest first, cut to `budget` characters.
fn recent(
    e: &dyn ToolServices,
    id: &str,
    limit: usize,
    budget: usize,
    roles: &[String],
) -> Vec<Value> {
    let Ok(log) = e.session_log(id) else {
        return Vec::new();
    };
    let mut picked: Vec<(String, String, String)> = log
        .lines
        .iter()
        .rev()
        .filter_map(|l| {
            let (role, text) = match &l.record {
                LogRecord::User { text } => ("user", text.clone()),
                LogRecord::Assistant { text, .. } if !text.trim().is_empty() => {
                    ("assistant", text.clone())
                }
                LogRecord::ToolResult { tool, content, .. } => {
                    ("toolResult", format!("{tool}: {content}"))
                }
                _ => return None,
            };
            roles
                .iter()
                .any(|r| r == role)
                .then(|| (role.to_string(), text, l.ts.clone()))
        })
        .take(limit)
        .collect();
    picked.reverse();
    let mut left = budget;
    picked
        .into_iter()
        .map(|(role, text, ts)| {
            let cut: String = text.chars().take(left).collect();
            left = left.saturating_sub(cut.chars().count());
            let truncated = cut.chars().count() < text.chars().count();
            json!({"role": role, "text": cut, "timestamp": ts, "truncated": truncated})
        })
        .collect()
}
