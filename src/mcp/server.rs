//! The MCP edge: the only module that speaks `rmcp` types. It answers `initialize` (taking
//! the client's name for its session), `tools/list` (the profile's catalogue with schemas,
//! titles and hints) and `tools/call` (through the [`Backend`]), sends progress notifications
//! while a call goes on and `notifications/tools/list_changed` when the profile files change.
//! Everything else is converted to and from nbook types at this boundary.
//!
//! MCP Tasks (the `io.modelcontextprotocol/tasks` extension): a client that declares it gets
//! a task for every call that may wait for the author (any tool that is not read-only). The
//! task runs the same call through the same backend, waiting as long as the author takes
//! (no `pending_approval` round trips); its status message names the approval id and the
//! preview while it waits; `tasks/get` returns the same result the long-poll tool would;
//! `tasks/cancel` withdraws the call from the queue (nothing changed; the task settles as
//! `cancelled`). Reads answer at once either way. Clients without the extension use
//! `pending_approval` and `nbook_await_approval`.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, GetTaskParams, GetTaskResult, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::backend::Backend;
use super::catalogue::{parse_await, ToolSpec, AWAIT_TOOL};
use super::gateway::Progress;
use super::outcome::Outcome;

pub struct NbookServer {
    backend: Arc<Backend>,
    tools: Arc<RwLock<Vec<ToolSpec>>>,
    tasks: TaskManager,
}

/// How long a task is kept: an author may leave a call waiting for hours (lunch, a night);
/// a task older than this is failed and its call withdrawn from the queue.
const TASK_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// How often a client is asked to poll `tasks/get`.
const TASK_POLL_MS: u64 = 1000;

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
        tasks: TaskManager::new(),
    };
    let running = server
        // Non-blocking pipes on the IO reactor where the client gave us FIFOs (as MCP clients
        // do): no hand-off to the blocking pool per message; plain stdio otherwise.
        .serve(rmcp::transport::stdio_pipes())
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

/// Progress notifications for a request that asked for them (`_meta.progressToken`): a job's
/// steps done out of its total when the call runs one that reports them, else the seconds
/// it has run. MCP wants the value to grow with every notification, so job steps are
/// counted on from the last value sent before the job reported (the message keeps the
/// job's own `done/total`), and a notification that would not grow is not sent.
fn progress_sink(ctx: &RequestContext<RoleServer>) -> impl Fn(Progress) + Send + Sync {
    let token = ctx.meta.get_progress_token();
    let peer: Peer<RoleServer> = ctx.peer.clone();
    let scale = std::sync::Mutex::new(ProgressScale::default());
    move |p: Progress| {
        let Some(token) = token.clone() else { return };
        let Some((value, total)) = scale.lock().unwrap_or_else(|e| e.into_inner()).place(&p) else {
            return;
        };
        let mut param = ProgressNotificationParam::new(token, value).with_message(p.message);
        if let Some(total) = total {
            param = param.with_total(total);
        }
        let peer = peer.clone();
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }
}

/// Keeps a request's progress values strictly growing across its two units (seconds, then
/// a job's steps).
#[derive(Debug, Default)]
struct ProgressScale {
    last: Option<f64>,
    /// Where the job's step 0 sits: the last value sent before the job first reported.
    offset: Option<f64>,
}

impl ProgressScale {
    /// The (progress, total) to send for `p`, or `None` when it would not grow.
    fn place(&mut self, p: &Progress) -> Option<(f64, Option<f64>)> {
        let (value, total) = match p.done {
            Some(done) => {
                let offset = *self.offset.get_or_insert(self.last.unwrap_or(0.0));
                (done as f64 + offset, p.total.map(|t| t as f64 + offset))
            }
            None => (p.elapsed.as_secs_f64(), None),
        };
        if self.last.is_some_and(|last| value <= last) {
            return None;
        }
        self.last = Some(value);
        Some((value, total))
    }
}

impl ServerHandler for NbookServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_tasks()
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
        // Clients on the 2026 protocol send who they are with every request, not once.
        if let Some(info) = context.client_info() {
            self.backend.set_client(&info.name);
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let wants_task = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        if wants_task && request.name != AWAIT_TOOL && !self.is_read_only(&request.name) {
            let backend = self.backend.clone();
            let tool = request.name.to_string();
            let options = TaskOptions::new()
                .with_ttl_ms(TASK_TTL_MS)
                .with_poll_interval_ms(TASK_POLL_MS)
                .with_status_message(format!("{tool}: running in nbook"));
            let task = self.tasks.spawn(options, move |ctx| {
                Box::pin(run_as_task(backend, tool, args, ctx))
            });
            return Ok(CallToolResponse::Task(CreateTaskResult::new(task)));
        }
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
            let wait = self.backend.options().wait;
            self.backend
                .call(&request.name, args, wait, context.ct.clone(), &progress)
                .await
        };
        Ok(to_result(outcome).into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.tasks
            .get_task(&request.task_id)
            .map(GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        // nbook never asks a client for input inside a task (the decision is the author's),
        // so there is nothing to deliver; unknown keys are ignored as the extension says.
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel_task(&request.task_id)
    }
}

impl NbookServer {
    /// Whether the tool changes nothing whatever its arguments (so it never waits). Unknown
    /// names count as not read-only: the engine answers them, in a task or not.
    fn is_read_only(&self, tool: &str) -> bool {
        self.tools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|t| t.name == tool && t.read_only)
    }
}

/// One call as an MCP task: the same backend call, then the author's decision however long
/// it takes; a `tasks/cancel` withdraws it (the backend takes it out of the queue).
async fn run_as_task(
    backend: Arc<Backend>,
    tool: String,
    args: Value,
    ctx: TaskContext,
) -> Result<CallToolResult, TaskExit> {
    let cancel = CancellationToken::new();
    let quiet = |_: Progress| {};
    let work = async {
        // No wait bound inside a task: it says at once that the call waits for the author.
        let mut outcome = backend
            .call(&tool, args, Duration::ZERO, cancel.clone(), &quiet)
            .await;
        while let Outcome::PendingApproval(p) = &outcome {
            ctx.set_status_message(format!(
                "waiting for the author's approval in nbook ({}): {}",
                p.approval_id, p.preview
            ));
            let id = p.approval_id.clone();
            let wait = Duration::from_millis(super::catalogue::MAX_AWAIT_MS);
            outcome = backend
                .await_approval(&id, wait, cancel.clone(), &quiet)
                .await;
        }
        outcome
    };
    tokio::pin!(work);
    let outcome = tokio::select! {
        o = &mut work => o,
        _ = ctx.cancelled() => {
            cancel.cancel();
            (&mut work).await
        }
    };
    // The last status message says how it ended, not that it waited.
    let ended = super::outcome_json(&outcome);
    ctx.set_status_message(format!(
        "{tool}: {}",
        ended["outcome"].as_str().unwrap_or("done")
    ));
    match outcome {
        Outcome::Cancelled { .. } => Err(TaskExit::Cancelled),
        o => Ok(to_result(o)),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Progress {
        Progress::elapsed(Duration::from_secs(s), "running")
    }

    fn steps(done: u64, total: u64) -> Progress {
        Progress {
            done: Some(done),
            total: Some(total),
            ..secs(0)
        }
    }

    #[test]
    fn progress_grows_across_seconds_then_job_steps() {
        let mut s = ProgressScale::default();
        assert_eq!(s.place(&secs(1)), Some((1.0, None)));
        assert_eq!(s.place(&secs(2)), Some((2.0, None)));
        // The job's steps count on from 2: step 0 would not grow, so it is not sent.
        assert_eq!(s.place(&steps(0, 4)), None);
        assert_eq!(s.place(&steps(1, 4)), Some((3.0, Some(6.0))));
        assert_eq!(
            s.place(&steps(1, 4)),
            None,
            "the same step twice is sent once"
        );
        assert_eq!(s.place(&steps(4, 4)), Some((6.0, Some(6.0))));
        // Later seconds (the job is done, the call ends) would go back: not sent.
        assert_eq!(s.place(&secs(5)), None);
    }

    #[test]
    fn a_job_that_reports_first_uses_its_own_steps() {
        let mut s = ProgressScale::default();
        assert_eq!(s.place(&steps(0, 3)), Some((0.0, Some(3.0))));
        assert_eq!(s.place(&steps(2, 3)), Some((2.0, Some(3.0))));
    }
}
