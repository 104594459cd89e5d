//! Dispatch of one tool call: look up, allowlist, validate, classify, apply the policy,
//! preview and wait for the author when needed, re-check staleness, run, log.
//!
//! Order matters: nothing is previewed before the arguments are valid, nothing mutating runs
//! before the policy said so, and a rejected, refused, stale or interrupted call changes nothing.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;

use super::policy::{self, CallFacts, Verdict};
use super::registry::describe_field_errors;
use super::tool::{Tool, ToolCtx, ToolError, ToolOutput};
use super::types::*;
use super::Engine;

/// How a call that needs approval gets its answer.
#[derive(Clone, Debug)]
pub enum Approval {
    /// Put it in the queue and wait for [`Engine::decide`] (TUI, agent runs).
    Queue,
    /// Answer at once, as the author would (headless `--approve` / `--reject`).
    Auto { decision: Decision, by: &'static str },
    /// Do not ask: report `needs_approval` and change nothing (headless without a flag).
    Fail,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Ok,
    ToolError,
    InvalidArgs,
    UnknownTool,
    NotAllowed,
    NeedsApproval,
    Rejected,
    Refused,
    Stale,
    Cancelled,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallResult {
    pub call_id: CallId,
    pub tool: String,
    pub status: CallStatus,
    pub ok: bool,
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<Preview>,
}

impl CallResult {
    fn fail(call: &ToolCall, status: CallStatus, content: impl Into<String>) -> Self {
        CallResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            status,
            ok: false,
            content: content.into(),
            details: None,
            preview: None,
        }
    }
}

/// Removes a queued call if the waiting future is dropped (the agent run was cancelled).
struct QueueGuard<'a> {
    engine: &'a Engine,
    call_id: CallId,
    armed: bool,
}

impl Drop for QueueGuard<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let removed = {
            let mut st = self.engine.state();
            let had = st.waiters.remove(&self.call_id).is_some();
            st.queue.retain(|p| p.call_id != self.call_id);
            had
        };
        if removed {
            self.engine.emit(EngineEvent::ApprovalResolved {
                call_id: self.call_id.clone(),
                decision: "cancelled".into(),
            });
        }
    }
}

impl Engine {
    /// Run one tool call for a session. Never panics on bad input; every failure is a result
    /// the agent can read. Logs the call's approval and result in the session log.
    pub async fn call(self: &Arc<Self>, session_id: &str, call: ToolCall, approval: Approval) -> CallResult {
        let call = if call.id.is_empty() {
            ToolCall {
                id: self.next_call_id(),
                ..call
            }
        } else {
            call
        };
        let result = self.call_inner(session_id, &call, approval).await;
        let _ = self.append(
            session_id,
            LogRecord::ToolResult {
                call_id: result.call_id.clone(),
                tool: result.tool.clone(),
                ok: result.ok,
                content: result.content.clone(),
                details: result.details.clone(),
            },
        );
        result
    }

    async fn call_inner(self: &Arc<Self>, session_id: &str, call: &ToolCall, approval: Approval) -> CallResult {
        let Some(info) = self.session(session_id) else {
            return CallResult::fail(call, CallStatus::ToolError, format!("no session with id '{session_id}'"));
        };
        let Some(profile) = self.session_profile(session_id) else {
            return CallResult::fail(call, CallStatus::ToolError, format!("no session with id '{session_id}'"));
        };
        let Some(registered) = self.registry.get(&call.name) else {
            return CallResult::fail(
                call,
                CallStatus::UnknownTool,
                format!("unknown tool '{}'; this profile may use: {}", call.name, profile.tools.join(", ")),
            );
        };
        if !profile.allows(&call.name) {
            return CallResult::fail(
                call,
                CallStatus::NotAllowed,
                format!("tool {} is not allowed for profile {}", call.name, profile.key),
            );
        }
        if let Err(errors) = registered.validate(&call.arguments) {
            let mut r = CallResult::fail(call, CallStatus::InvalidArgs, describe_field_errors(&call.name, &errors));
            r.details = serde_json::to_value(&errors).ok();
            return r;
        }
        let tool = registered.tool.clone();
        let ctx = ToolCtx {
            workspace: self.ws.clone(),
            config: self.config.clone(),
            profile: profile.clone(),
            session_id: session_id.to_string(),
            mode: info.mode,
        };
        if !tool.mutates().for_call(&call.arguments) {
            return self.execute(tool, ctx, call, call.arguments.clone()).await;
        }

        let targets = tool.write_targets(&ctx, &call.arguments);
        let granted = {
            let st = self.state();
            !targets.is_empty()
                && targets
                    .iter()
                    .all(|t| st.grants.contains(&(session_id.to_string(), call.name.clone(), t.clone())))
        };
        let verdict = policy::decide(
            &self.config.approval,
            &CallFacts {
                tool: &call.name,
                mode: info.mode,
                targets: &targets,
                granted,
            },
        );
        let grant_allowed = match verdict {
            Verdict::Run => return self.execute(tool, ctx, call, call.arguments.clone()).await,
            Verdict::Refuse(why) => return CallResult::fail(call, CallStatus::Refused, why),
            Verdict::Ask { grant_allowed } => grant_allowed,
        };

        let preview = match self.preview(&tool, &ctx, &call.arguments).await {
            Ok(p) => p,
            Err(e) => return CallResult::fail(call, CallStatus::ToolError, e.to_string()),
        };
        let auto = match approval {
            Approval::Auto { decision, by } => Some((decision, by)),
            Approval::Queue => None,
            Approval::Fail => {
            let mut r = CallResult::fail(
                call,
                CallStatus::NeedsApproval,
                format!(
                    "{} needs the author's approval ({} mode, `{}` policy); nothing was changed. Re-run with --approve or --reject.",
                    call.name, info.mode, self.config.approval.preset.as_str()
                ),
            );
            r.preview = Some(preview);
            return r;
            }
        };
        let _ = self.append(
            session_id,
            LogRecord::ApprovalRequested {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                args: call.arguments.clone(),
                preview: preview.clone(),
                mode: info.mode,
            },
        );

        let (decision, by) = match auto {
            Some(answer) => answer,
            None => {
                let (tx, rx) = oneshot::channel();
                let pending = PendingCall {
                    call_id: call.id.clone(),
                    session_id: session_id.to_string(),
                    profile: profile.key.clone(),
                    mode: info.mode,
                    tool: call.name.clone(),
                    args: call.arguments.clone(),
                    preview: preview.clone(),
                    requested_at: super::session_log::now_rfc3339(),
                    session_grant_allowed: grant_allowed,
                };
                {
                    let mut st = self.state();
                    st.waiters.insert(call.id.clone(), tx);
                    st.queue.push_back(pending.clone());
                }
                let mut guard = QueueGuard {
                    engine: self,
                    call_id: call.id.clone(),
                    armed: true,
                };
                let previous_state = info.state;
                self.set_state(session_id, SessionState::WaitingApproval);
                self.emit(EngineEvent::ApprovalRequested { call: pending });
                let answer = rx.await;
                guard.armed = false;
                self.set_state(
                    session_id,
                    if previous_state == SessionState::WaitingApproval {
                        SessionState::Running
                    } else {
                        previous_state
                    },
                );
                match answer {
                    Ok(d) => (d, "author"),
                    Err(_) => {
                        return CallResult::fail(call, CallStatus::Cancelled, "the approval request was cancelled; nothing was changed")
                    }
                }
            }
        };

        let (reason, edited) = match &decision {
            Decision::Reject { reason } => (reason.clone(), None),
            Decision::Edit { new_args } => (None, Some(new_args.clone())),
            _ => (None, None),
        };
        let _ = self.append(
            session_id,
            LogRecord::ApprovalResolved {
                call_id: call.id.clone(),
                decision: decision.label().into(),
                by: by.into(),
                reason: reason.clone(),
                edited_args: edited,
            },
        );

        match decision {
            Decision::Reject { reason } => {
                let why = reason
                    .filter(|r| !r.trim().is_empty())
                    .map(|r| format!(" Reason: {r}"))
                    .unwrap_or_default();
                CallResult::fail(
                    call,
                    CallStatus::Rejected,
                    format!(
                        "The author rejected this {} call.{why} Do not retry the same call; ask the author what should change, or continue without it.",
                        call.name
                    ),
                )
            }
            Decision::Edit { new_args } => {
                if let Err(errors) = registered.validate(&new_args) {
                    return CallResult::fail(call, CallStatus::InvalidArgs, describe_field_errors(&call.name, &errors));
                }
                self.execute(tool, ctx, call, new_args).await
            }
            d @ (Decision::Approve | Decision::ApproveForSession) => {
                // The author approved what the preview showed; if the target moved since, refuse.
                match self.preview(&tool, &ctx, &call.arguments).await {
                    Ok(now) if now.targets == preview.targets => {}
                    Ok(_) => {
                        return CallResult::fail(
                            call,
                            CallStatus::Stale,
                            format!(
                                "stale: the target of this {} call changed after the preview was shown; nothing was changed. Read the file again and propose the change anew.",
                                call.name
                            ),
                        )
                    }
                    Err(e) => {
                        return CallResult::fail(
                            call,
                            CallStatus::Stale,
                            format!("stale: the target changed after the preview was shown ({e}); nothing was changed"),
                        )
                    }
                }
                if d == Decision::ApproveForSession && grant_allowed {
                    let mut st = self.state();
                    for t in &targets {
                        st.grants.insert((session_id.to_string(), call.name.clone(), t.clone()));
                    }
                }
                self.execute(tool, ctx, call, call.arguments.clone()).await
            }
        }
    }

    async fn preview(&self, tool: &Arc<dyn Tool>, ctx: &ToolCtx, args: &Value) -> Result<Preview, ToolError> {
        let (tool, ctx, args) = (tool.clone(), ctx.clone(), args.clone());
        tokio::task::spawn_blocking(move || tool.preview(&ctx, &args))
            .await
            .unwrap_or_else(|e| Err(ToolError::failed(format!("preview crashed: {e}"))))
    }

    async fn execute(&self, tool: Arc<dyn Tool>, ctx: ToolCtx, call: &ToolCall, args: Value) -> CallResult {
        let session_id = ctx.session_id.clone();
        let outcome = tokio::task::spawn_blocking(move || tool.run(&ctx, &args))
            .await
            .unwrap_or_else(|e| Err(ToolError::failed(format!("tool crashed: {e}"))));
        match outcome {
            Ok(ToolOutput {
                content,
                details,
                changed_paths,
            }) => {
                if !changed_paths.is_empty() {
                    self.emit(EngineEvent::FilesChanged {
                        session_id,
                        paths: changed_paths,
                    });
                }
                CallResult {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    status: CallStatus::Ok,
                    ok: true,
                    content,
                    details,
                    preview: None,
                }
            }
            Err(ToolError::Stale(m)) => CallResult::fail(call, CallStatus::Stale, format!("stale: {m}")),
            Err(e) => CallResult::fail(call, CallStatus::ToolError, e.to_string()),
        }
    }
}

