//! The MCP edge: the only module that speaks `rmcp` types. It answers `initialize` (taking
//! the client's name for its session), `tools/list` (the profile's catalogue with schemas,
//! titles and hints) and `tools/call` (through the [`Backend`]), sends progress notifications
//! while a call goes on and `notifications/tools/list_changed` when the profile files change.
//! Everything else is converted to and from nbook types at this boundary.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};

use super::backend::Backend;
use super::catalogue::{parse_await, ToolSpec, AWAIT_TOOL};
use super::gateway::Progress;
use super::outcome::Outcome;

pub struct NbookServer {
    backend: Arc<Backend>,
    tools: Arc<RwLock<Vec<ToolSpec>>>,
}

/// Serve MCP on stdin/stdout until the client closes the stream. `refresh` is polled for a
/// new catalogue (the profile files changed); when it returns one, clients are told.
pub async fn serve_stdio(
    backend: Arc<Backend>,
    tools: Vec<ToolSpec>,
    refresh: Option<Box<dyn FnMut() -> Option<Vec<ToolSpec>> + Send>>,
) -> Result<(), String> {
    let tools = Arc::new(RwLock::new(tools));
    let server = NbookServer {
        backend,
        tools: tools.clone(),
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("MCP session did not start: {e}"))?;
    if let Some(mut refresh) = refresh {
        let peer = running.peer().clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(2));
            loop {
                every.tick().await;
                if let Some(fresh) = refresh() {
                    *tools.write().unwrap_or_else(|e| e.into_inner()) = fresh;
                    if peer.notify_tool_list_changed().await.is_err() {
                        return;
                    }
                }
            }
        });
    }
    running
        .waiting()
        .await
        .map_err(|e| format!("MCP session ended abnormally: {e}"))?;
    Ok(())
}

fn to_tool(spec: &ToolSpec) -> Tool {
    let schema: Map<String, Value> = match &spec.schema {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    let annotations = ToolAnnotations::with_title(spec.title.clone())
        .read_only(spec.read_only)
        .destructive(spec.destructive)
        .open_world(spec.open_world);
    Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema),
    )
    .with_title(spec.title.clone())
    .annotate(annotations)
}

/// Progress notifications for a request that asked for them (`_meta.progressToken`).
fn progress_sink(ctx: &RequestContext<RoleServer>) -> impl Fn(Progress) + Send + Sync {
    let token = ctx.meta.get_progress_token();
    let peer: Peer<RoleServer> = ctx.peer.clone();
    move |p: Progress| {
        let Some(token) = token.clone() else { return };
        let peer = peer.clone();
        let param =
            ProgressNotificationParam::new(token, p.elapsed.as_secs_f64()).with_message(p.message);
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }
}

impl ServerHandler for NbookServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("nbook", env!("CARGO_PKG_VERSION")))
        .with_instructions(format!(
            "nbook's tools on one novel project. Changes wait for the author's approval in nbook: a call that returns {{\"outcome\": \"pending_approval\"}} is not done; call {AWAIT_TOOL} with its approvalId until the author decided. A rejection is final: do not retry the same call."
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.backend.set_client(&request.client_info.name);
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self.tools.read().unwrap_or_else(|e| e.into_inner());
        Ok(ListToolsResult::with_all_items(
            tools.iter().map(to_tool).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let progress = progress_sink(&context);
        let outcome = if request.name == AWAIT_TOOL {
            match parse_await(&args) {
                Err(message) => {
                    return Ok(error_result(
                        json!({"outcome": "invalid_args", "message": message}),
                        &message,
                    )
                    .into())
                }
                Ok(a) => {
                    let wait = a
                        .wait_ms
                        .map(Duration::from_millis)
                        .unwrap_or(Duration::from_millis(super::catalogue::MAX_AWAIT_MS))
                        .min(Duration::from_millis(super::catalogue::MAX_AWAIT_MS));
                    self.backend
                        .await_approval(&a.approval_id, wait, context.ct.clone(), &progress)
                        .await
                }
            }
        } else {
            self.backend
                .call(&request.name, args, context.ct.clone(), &progress)
                .await
        };
        Ok(to_result(outcome).into())
    }
}

fn error_result(structured: Value, text: &str) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(text.to_string())]);
    r.structured_content = Some(structured);
    r
}

fn ok_result(structured: Value, text: &str) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text.to_string())]);
    r.structured_content = Some(structured);
    r
}

/// An nbook outcome as a tool result: `structuredContent` carries the machine-readable
/// outcome, the text the same for clients that read only text.
pub fn to_result(outcome: Outcome) -> CallToolResult {
    let structured = super::outcome_json(&outcome);
    match outcome {
        Outcome::Done { result, .. } => {
            if result.ok {
                ok_result(structured, &result.content)
            } else {
                error_result(structured, &result.content)
            }
        }
        Outcome::PendingApproval(_) => {
            let text = structured.to_string();
            ok_result(structured, &text)
        }
        Outcome::Interrupted { message }
        | Outcome::Cancelled { message }
        | Outcome::Unknown { message }
        | Outcome::Failed { message } => error_result(structured, &message),
    }
}
