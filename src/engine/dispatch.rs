//! Dispatch of one tool call: look up, allowlist, validate, classify, apply the policy,
//! preview and wait for the author when needed, re-check staleness, run, log.
//!
//! Order matters: nothing is previewed before the arguments are valid, nothing mutating runs
//! before the policy said so, and a rejected, refused, stale or interrupted call changes nothing.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::oneshot;

pub(super) use super::call_result::rejected;
use super::call_result::{not_recorded, stale_since_seen};
pub use super::call_result::{Approval, CallResult, CallStatus};
use super::effects::Effects;
use super::policy::{self, CallFacts, Verdict};
use super::registry::describe_field_errors;
use super::tool::{CallArgs, HeldChange, Staged, Tool, ToolCtx, ToolError, ToolOutput};
use super::types::*;
use super::Engine;

/// Removes a queued call if the waiting future is dropped (the agent run was cancelled).
struct QueueGuard<'a> {
    engine: &'a Engine,
    approval_id: ApprovalId,
    armed: bool,
}

impl Drop for QueueGuard<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let removed = {
            let mut st = self.engine.state();
            let had = st.waiters.remove(&self.approval_id).is_some();
            st.queue.retain(|p| p.approval_id != self.approval_id);
            had
        };
        if removed {
            // A run stopped by nbook's exit keeps its call on disk for the next open.
            if !self.engine.is_closing() {
                self.engine.forget_pending(&self.approval_id);
            }
            self.engine.emit(EngineEvent::ApprovalResolved {
                approval_id: self.approval_id.clone(),
                decision: "cancelled".into(),
            });
        }
    }
}

/// The answer to a selection of parts on a call that cannot take one (the engine refuses such
/// a selection when it is sent; this covers a decision that reached the call anyway).
pub(super) fn not_in_parts(call: &ToolCall) -> CallResult {
    CallResult::fail(
        call,
        CallStatus::NotAllowed,
        format!(
            "{} cannot be approved in parts; nothing was changed. Ask the author to approve or reject it whole.",
            call.name
        ),
    )
}

/// A call that passed the gate: its tool, the context it runs in, and its arguments
/// (deserialized once, shared by every later step).
pub(super) struct Admitted {
    pub tool: Arc<dyn Tool>,
    pub ctx: ToolCtx,
    pub args: CallArgs,
}

impl Engine {
    /// Run one tool call for a session. Never panics on bad input; every failure is a result
    /// the agent can read. Logs the call's approval and result in the session log.
    pub async fn call(
        self: &Arc<Self>,
        session_id: &str,
        call: ToolCall,
        approval: Approval,
    ) -> CallResult {
        self.call_by(Actor::Agent, session_id, call, approval, None)
            .await
    }

    /// [`Engine::call`] for any actor. `seen` is the preview the actor confirmed (the author's
    /// dialog): a call whose fresh preview has other targets fails as stale before anything.
    pub(super) async fn call_by(
        self: &Arc<Self>,
        actor: Actor,
        session_id: &str,
        call: ToolCall,
        approval: Approval,
        seen: Option<&Preview>,
    ) -> CallResult {
        let call = if call.id.is_empty() {
            ToolCall {
                id: self.next_call_id(),
                ..call
            }
        } else {
            call
        };
        let mut result = self
            .call_inner(actor, session_id, &call, approval, seen)
            .await;
        let committed = {
            let mut st = self.state();
            let key = (session_id.to_string(), call.id.clone());
            result.waited = st.asked.remove(&key);
            st.committed.remove(&key)
        };
        self.record_change(session_id, &call, &mut result);
        if result.ok {
            self.after_success(session_id, &call, committed);
        }
        self.record_result(session_id, result)
    }

    /// Log a call's result. When the log refuses it the result becomes `log_failed` and says
    /// so: the caller must not go on as if the session's record were complete.
    pub fn record_result(&self, session_id: &str, mut result: CallResult) -> CallResult {
        // A huge result is logged cut, with its full value beside the log.
        let (content, details) = super::log_cap::cap(
            &self.ws.sessions_dir(),
            session_id,
            &result.call_id,
            &result.content,
            result.details.as_ref(),
        );
        let appended = self.append(
            session_id,
            LogRecord::ToolResult {
                call_id: result.call_id.clone(),
                tool: result.tool.clone(),
                ok: result.ok,
                content,
                details,
            },
        );
        let Err(e) = appended else { return result };
        if result.status == CallStatus::LogFailed {
            // Nothing ran because the log failed already; the message says so.
            return result;
        }
        result.content = if result.ok {
            format!(
                "The call ran and its effect stays, but its result could not be recorded: {e}. Stop here; the session log must be fixed before anything else runs.\n\nResult: {}",
                result.content
            )
        } else {
            format!(
                "The call failed ({}), and its result could not be recorded either: {e}. Stop here; the session log must be fixed before anything else runs.",
                result.content
            )
        };
        result.status = CallStatus::LogFailed;
        result.ok = false;
        result
    }

    async fn call_inner(
        self: &Arc<Self>,
        actor: Actor,
        session_id: &str,
        call: &ToolCall,
        approval: Approval,
        seen: Option<&Preview>,
    ) -> CallResult {
        let admitted = match self.admit(actor, session_id, call) {
            Ok(x) => x,
            Err(r) => return *r,
        };
        if admitted.tool.is_staging() {
            return self
                .call_staged(actor, admitted, call, approval, seen)
                .await;
        }
        let Admitted { tool, ctx, args } = admitted;
        let effects = tool.effects();
        // What an egress call will send is named before anything is sent; a request that
        // could never be made is refused here, before the author is asked.
        let egress = if effects.egress {
            match tool.egress(&ctx, &args) {
                Ok(r) => Some(r),
                // A coded refusal keeps its details (fn_web_fetch's `ERROR [code]`).
                Err(e) => return CallResult::tool_error(call, &e),
            }
        } else {
            None
        };
        if !tool.mutates().for_call(&call.arguments) {
            return match egress {
                None => self.execute(tool, ctx, call, args, None).await,
                Some(requests) => {
                    self.call_egress(tool, ctx, call, args, requests, approval)
                        .await
                }
            };
        }
        let targets = tool.write_targets(&ctx, &args);
        let mut verdict = self.verdict_for(actor, &ctx, call, &targets, effects);
        if super::draft_route::is_routed(&ctx, &self.ws) {
            verdict = super::draft_route::relax(verdict, ctx.mode);
        }
        if let (Some(requests), Actor::Agent) = (&egress, actor) {
            verdict = policy::combine(verdict, self.egress_verdict(&ctx, call, requests));
        }
        let grant_allowed = match verdict {
            Verdict::Run => return self.execute(tool, ctx, call, args, Some(targets)).await,
            Verdict::Refuse(why) => return CallResult::fail(call, CallStatus::Refused, why),
            Verdict::Ask { grant_allowed } => grant_allowed,
        };
        let preview = match self.preview(&tool, &ctx, &args).await {
            Ok(p) => p,
            Err(e) => return CallResult::tool_error(call, &e),
        };
        if let Some(r) = stale_since_seen(call, seen, &preview) {
            return r;
        }
        if preview.changes_nothing() {
            // Asking the author to approve an empty diff wastes their attention.
            let paths: Vec<&str> = match &preview.body {
                PreviewBody::Files { changes } => changes.iter().map(|c| c.path.as_str()).collect(),
                _ => Vec::new(),
            };
            return CallResult {
                status: CallStatus::Ok,
                ok: true,
                content: format!(
                    "unchanged: {} already has this content; nothing was written and no approval was needed",
                    paths.join(", ")
                ),
                details: Some(serde_json::json!({"outcome": "unchanged", "paths": paths})),
                ..CallResult::fail(call, CallStatus::Ok, "")
            };
        }
        let decision = match self
            .await_decision(&ctx, call, &preview, grant_allowed, approval)
            .await
        {
            Ok(d) => d,
            Err(r) => return *r,
        };
        match decision {
            Decision::Reject { reason } => rejected(call, reason),
            Decision::Edit { new_args } => {
                let new_args = match self.validate_edit(call, new_args) {
                    Ok(a) => a,
                    Err(r) => return *r,
                };
                // The author wrote these arguments: their targets as they resolve now.
                let edited = tool.write_targets(&ctx, &new_args);
                self.execute(tool, ctx, call, new_args, Some(edited)).await
            }
            Decision::ApproveParts { selection } => {
                self.approve_parts(tool, ctx, call, args, &preview, selection)
                    .await
            }
            d @ (Decision::Approve | Decision::ApproveForSession) => {
                // The author approved what the preview showed; if the target moved since, refuse.
                if let Err(r) = self
                    .still_as_previewed(&tool, &ctx, call, &args, &preview)
                    .await
                {
                    return *r;
                }
                if d == Decision::ApproveForSession && grant_allowed {
                    self.grant(&ctx.session_id, &call.name, &targets);
                    if let Some(requests) = &egress {
                        self.grant_egress(&ctx.session_id, requests);
                    }
                }
                self.execute(tool, ctx, call, args, Some(targets)).await
            }
        }
    }

    /// Session, profile, tool, actor, allowlist and argument checks, in that order.
    pub(super) fn admit(
        self: &Arc<Self>,
        actor: Actor,
        session_id: &str,
        call: &ToolCall,
    ) -> Result<Admitted, Box<CallResult>> {
        let (Some(info), Some(profile)) =
            (self.session(session_id), self.session_profile(session_id))
        else {
            return Err(Box::new(CallResult::fail(
                call,
                CallStatus::ToolError,
                format!("no session with id '{session_id}'"),
            )));
        };
        let Some(registered) = self.registry.get(&call.name) else {
            return Err(Box::new(CallResult::fail(
                call,
                CallStatus::UnknownTool,
                format!(
                    "unknown tool '{}'; this profile may use: {}",
                    call.name,
                    profile.tools.join(", ")
                ),
            )));
        };
        if registered.tool.effects().author_only && actor != Actor::Author {
            return Err(Box::new(CallResult::fail(
                call,
                CallStatus::NotAllowed,
                format!(
                    "tool {} is for the author only, whatever profile {} lists: {}",
                    call.name,
                    profile.key,
                    registered.tool.effects().author_only_hint
                ),
            )));
        }
        if !profile.allows(&call.name) {
            return Err(Box::new(CallResult::fail(
                call,
                CallStatus::NotAllowed,
                format!(
                    "tool {} is not allowed for profile {}",
                    call.name, profile.key
                ),
            )));
        }
        // Deserialized here once; the later steps of the call share the typed value.
        let args = CallArgs::new(call.arguments.clone());
        if let Err(errors) = registered.validate(&args) {
            let mut r = CallResult::fail(
                call,
                CallStatus::InvalidArgs,
                describe_field_errors(&call.name, &errors),
            );
            r.details = serde_json::to_value(&errors).ok();
            return Err(Box::new(r));
        }
        let ctx = ToolCtx {
            workspace: self.ws.clone(),
            config: self.config(),
            profile,
            session_id: session_id.to_string(),
            mode: info.mode,
            session_state: self.session_state(session_id),
            call_id: call.id.clone(),
            services: Some(self.clone()),
            cancel: Default::default(),
        };
        // A task session's file tools work in the task's draft area.
        let ctx = super::draft_route::route(ctx, registered.tool.as_ref(), &args)
            .map_err(|e| Box::new(CallResult::tool_error(call, &e)))?;
        Ok(Admitted {
            tool: registered.tool.clone(),
            ctx,
            args,
        })
    }

    /// The policy's verdict for an agent; the author made the call, so it is always put to
    /// the author, who answers at once (`Approval::Auto` by `author`) — logged like any other.
    fn verdict_for(
        &self,
        actor: Actor,
        ctx: &ToolCtx,
        call: &ToolCall,
        targets: &[String],
        effects: Effects,
    ) -> Verdict {
        match actor {
            Actor::Author => Verdict::Ask {
                grant_allowed: false,
            },
            Actor::Agent => self.verdict(ctx, call, targets, effects),
        }
    }

    fn verdict(
        &self,
        ctx: &ToolCtx,
        call: &ToolCall,
        targets: &[String],
        effects: Effects,
    ) -> Verdict {
        let granted = {
            let st = self.state();
            !targets.is_empty()
                && targets.iter().all(|t| {
                    st.grants
                        .contains(&(ctx.session_id.clone(), call.name.clone(), t.clone()))
                })
        };
        let config = self.config();
        let verdict = policy::decide(
            &config.approval,
            &CallFacts {
                tool: &call.name,
                effects,
                mode: ctx.mode,
                targets,
                granted,
            },
        );
        if verdict == Verdict::Run {
            let rule =
                super::history::rule_for_run(&config.approval, &call.name, ctx.mode, granted);
            self.note_rule(&ctx.session_id, &call.id, rule);
        }
        verdict
    }

    pub(super) fn grant(&self, session_id: &str, tool: &str, targets: &[String]) {
        let mut st = self.state();
        for t in targets {
            st.grants
                .insert((session_id.to_string(), tool.to_string(), t.clone()));
        }
    }

    /// The author's edited arguments, checked (and deserialized) like the call's own.
    pub(super) fn validate_edit(
        &self,
        call: &ToolCall,
        new_args: Value,
    ) -> Result<CallArgs, Box<CallResult>> {
        let new_args = CallArgs::new(new_args);
        match self.registry.get(&call.name).map(|t| t.validate(&new_args)) {
            Some(Ok(())) => Ok(new_args),
            Some(Err(errors)) => Err(Box::new(CallResult::fail(
                call,
                CallStatus::InvalidArgs,
                describe_field_errors(&call.name, &errors),
            ))),
            None => Err(Box::new(CallResult::fail(
                call,
                CallStatus::UnknownTool,
                format!("unknown tool '{}'", call.name),
            ))),
        }
    }

    /// Log the request, get the author's answer (queue, automatic, or none), log the answer.
    pub(super) async fn await_decision(
        &self,
        ctx: &ToolCtx,
        call: &ToolCall,
        preview: &Preview,
        grant_allowed: bool,
        approval: Approval,
    ) -> Result<Decision, Box<CallResult>> {
        let session_id = ctx.session_id.as_str();
        let auto = match approval {
            Approval::Auto { decision, by } => Some((decision, by)),
            Approval::Queue => None,
            Approval::Fail | Approval::FailWithRemedy(_) => {
                let remedy = match approval {
                    Approval::FailWithRemedy(r) => format!(" {r}"),
                    _ => String::new(),
                };
                let mut r = CallResult::fail(
                    call,
                    CallStatus::NeedsApproval,
                    format!(
                        "{} needs the author's approval ({} mode, `{}` policy); nothing was changed. Do not retry it in this run: no author can approve it here.{remedy}",
                        call.name,
                        ctx.mode,
                        self.config().approval.preset.as_str()
                    ),
                );
                r.preview = Some(preview.clone());
                return Err(Box::new(r));
            }
        };
        let approval_id = self.mint_approval_id();
        // Nothing runs without its record: no request on file, no call.
        if let Err(e) = self.append(
            session_id,
            LogRecord::ApprovalRequested {
                approval_id: approval_id.clone(),
                call_id: call.id.clone(),
                tool: call.name.clone(),
                args: call.arguments.clone(),
                preview: preview.clone(),
                mode: ctx.mode,
            },
        ) {
            return Err(Box::new(not_recorded(call, "its approval request", &e)));
        }
        let (decision, by) = match auto {
            Some(answer) => answer,
            None => {
                let (tx, rx) = oneshot::channel();
                self.state()
                    .asked
                    .insert((session_id.to_string(), call.id.clone()));
                let pending = PendingCall {
                    approval_id: approval_id.clone(),
                    call_id: call.id.clone(),
                    session_id: session_id.to_string(),
                    profile: ctx.profile.key.clone(),
                    mode: ctx.mode,
                    tool: call.name.clone(),
                    args: call.arguments.clone(),
                    preview: preview.clone(),
                    requested_at: super::session_log::now_rfc3339(),
                    session_grant_allowed: grant_allowed,
                    parts: self
                        .registry
                        .get(&call.name)
                        .is_some_and(|t| super::part_approval::offered(t.tool.as_ref(), preview)),
                };
                // On disk before anyone can see it waiting: a quit right after keeps it.
                self.persist_pending(&pending);
                {
                    let mut st = self.state();
                    st.waiters.insert(approval_id.clone(), tx);
                    st.queue.push_back(pending.clone());
                }
                let mut guard = QueueGuard {
                    engine: self,
                    approval_id: approval_id.clone(),
                    armed: true,
                };
                let previous_state = self
                    .session(session_id)
                    .map(|s| s.state)
                    .unwrap_or(SessionState::Idle);
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
                        return Err(Box::new(CallResult::fail(
                            call,
                            CallStatus::Cancelled,
                            "the approval request was cancelled; nothing was changed",
                        )))
                    }
                }
            }
        };
        self.note_decision(session_id, &call.id, &decision, by);
        let (reason, edited) = match &decision {
            Decision::Reject { reason } => (reason.clone(), None),
            Decision::ApproveParts { selection } => (selection.reason.clone(), None),
            Decision::Edit { new_args } => (None, Some(new_args.clone())),
            _ => (None, None),
        };
        if let Err(e) = self.append(
            session_id,
            LogRecord::ApprovalResolved {
                approval_id: approval_id.clone(),
                call_id: call.id.clone(),
                decision: decision.label().into(),
                by: by.into(),
                reason,
                edited_args: edited,
            },
        ) {
            let what = format!("the decision ({})", decision.label());
            return Err(Box::new(not_recorded(call, &what, &e)));
        }
        Ok(decision)
    }

    /// Staging tools run first inside a transaction that they roll back, keeping a record of
    /// the effect; the record is applied (after the tool's own stale check) or discarded once
    /// the policy (and the author, if asked) decided. No transaction is open meanwhile.
    async fn call_staged(
        self: &Arc<Self>,
        actor: Actor,
        admitted: Admitted,
        call: &ToolCall,
        approval: Approval,
        seen: Option<&Preview>,
    ) -> CallResult {
        let Admitted { tool, ctx, args } = admitted;
        let held = match self.stage(&tool, &ctx, &args).await {
            Err(e) => return CallResult::fail(call, CallStatus::ToolError, e.to_string()),
            Ok(Staged::Done(out)) => return self.finish(&ctx.session_id, call, Ok(out)),
            Ok(Staged::Held(h)) => h,
        };
        if let Some(r) = stale_since_seen(call, seen, &held.preview) {
            let _ = self.resolve_held(&ctx.session_id, call, held, false).await;
            return r;
        }
        let targets = tool.write_targets(&ctx, &args);
        let grant_allowed = match self.verdict_for(actor, &ctx, call, &targets, tool.effects()) {
            Verdict::Run => return self.resolve_held(&ctx.session_id, call, held, true).await,
            Verdict::Refuse(why) => {
                let _ = self.resolve_held(&ctx.session_id, call, held, false).await;
                return CallResult::fail(call, CallStatus::Refused, why);
            }
            Verdict::Ask { grant_allowed } => grant_allowed,
        };
        let preview = held.preview.clone();
        let decision = match self
            .await_decision(&ctx, call, &preview, grant_allowed, approval)
            .await
        {
            Ok(d) => d,
            Err(r) => {
                let _ = self.resolve_held(&ctx.session_id, call, held, false).await;
                return *r;
            }
        };
        match decision {
            Decision::Reject { reason } => {
                let _ = self.resolve_held(&ctx.session_id, call, held, false).await;
                rejected(call, reason)
            }
            Decision::Edit { new_args } => {
                let _ = self.resolve_held(&ctx.session_id, call, held, false).await;
                let new_args = match self.validate_edit(call, new_args) {
                    Ok(a) => a,
                    Err(r) => return *r,
                };
                match self.stage(&tool, &ctx, &new_args).await {
                    Err(e) => CallResult::fail(call, CallStatus::ToolError, e.to_string()),
                    Ok(Staged::Done(out)) => self.finish(&ctx.session_id, call, Ok(out)),
                    Ok(Staged::Held(h)) => self.resolve_held(&ctx.session_id, call, h, true).await,
                }
            }
            Decision::ApproveParts { .. } => {
                let _ = self.resolve_held(&ctx.session_id, call, held, false).await;
                not_in_parts(call)
            }
            d @ (Decision::Approve | Decision::ApproveForSession) => {
                if d == Decision::ApproveForSession && grant_allowed {
                    self.grant(&ctx.session_id, &call.name, &targets);
                }
                self.resolve_held(&ctx.session_id, call, held, true).await
            }
        }
    }

    pub(super) async fn stage(
        &self,
        tool: &Arc<dyn Tool>,
        ctx: &ToolCtx,
        args: &CallArgs,
    ) -> Result<Staged, ToolError> {
        let (tool, ctx, args) = (tool.clone(), ctx.clone(), args.clone());
        tokio::task::spawn_blocking(move || {
            tool.stage(&ctx, &args)
                .unwrap_or_else(|| Err(ToolError::failed("this tool does not support staging")))
        })
        .await
        .unwrap_or_else(|e| Err(ToolError::failed(format!("tool crashed: {e}"))))
    }

    pub(super) async fn resolve_held(
        &self,
        session_id: &str,
        call: &ToolCall,
        held: HeldChange,
        commit: bool,
    ) -> CallResult {
        let (outcome, capture) = tokio::task::spawn_blocking(move || {
            if commit {
                let preview = held.preview.clone();
                super::history::capture_commit(preview, || held.commit())
            } else {
                held.rollback();
                (Err(ToolError::failed("rolled back")), None)
            }
        })
        .await
        .unwrap_or_else(|e| (Err(ToolError::failed(format!("tool crashed: {e}"))), None));
        self.note_capture(session_id, &call.id, capture);
        if commit && outcome.is_ok() {
            self.state()
                .committed
                .insert((session_id.to_string(), call.id.clone()));
        }
        self.finish(session_id, call, outcome)
    }

    pub(super) async fn preview(
        &self,
        tool: &Arc<dyn Tool>,
        ctx: &ToolCtx,
        args: &CallArgs,
    ) -> Result<Preview, ToolError> {
        let (tool, ctx, args) = (tool.clone(), ctx.clone(), args.clone());
        tokio::task::spawn_blocking(move || tool.preview(&ctx, &args))
            .await
            .unwrap_or_else(|e| Err(ToolError::failed(format!("preview crashed: {e}"))))
    }

    pub(super) async fn execute(
        &self,
        tool: Arc<dyn Tool>,
        ctx: ToolCtx,
        call: &ToolCall,
        args: CallArgs,
        approved: Option<Vec<String>>,
    ) -> CallResult {
        let session_id = ctx.session_id.clone();
        let draft = super::draft_route::draft_task(&ctx, &self.ws);
        // Dropping this future (the run was cancelled) cancels the tool's token.
        let _abandon = ctx.cancel.clone().drop_guard();
        let (outcome, capture) = tokio::task::spawn_blocking(move || {
            let run = || tool.run_approved(&ctx, &args, approved.as_deref());
            match approved.is_some() {
                // A mutating call: what it applies is recorded for the change history.
                true => super::history::capture_run(tool.as_ref(), &ctx, &args, run),
                false => (run(), None),
            }
        })
        .await
        .unwrap_or_else(|e| (Err(ToolError::failed(format!("tool crashed: {e}"))), None));
        self.note_capture(&session_id, &call.id, capture);
        let outcome = super::draft_route::annotate(outcome, draft.as_deref());
        self.finish(&session_id, call, outcome)
    }

    /// Turn a tool outcome into the call result; apply its state updates and file marks.
    pub(super) fn finish(
        &self,
        session_id: &str,
        call: &ToolCall,
        outcome: Result<ToolOutput, ToolError>,
    ) -> CallResult {
        match outcome {
            Ok(ToolOutput {
                content,
                details,
                changed_paths,
                state_updates,
            }) => {
                if !changed_paths.is_empty() {
                    self.emit(EngineEvent::FilesChanged {
                        session_id: session_id.to_string(),
                        paths: changed_paths,
                    });
                }
                let done = CallResult {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    status: CallStatus::Ok,
                    ok: true,
                    content,
                    details,
                    preview: None,
                    waited: false,
                };
                match self.set_session_state(session_id, state_updates) {
                    Ok(()) => done,
                    Err(e) => CallResult {
                        status: CallStatus::LogFailed,
                        ok: false,
                        content: format!(
                            "The call ran and its effect stays, but the session state it set could not be recorded: {e}. Stop here; the session log must be fixed before anything else runs.\n\nResult: {}",
                            done.content
                        ),
                        ..done
                    },
                }
            }
            Err(ToolError::Stale(m)) => {
                CallResult::fail(call, CallStatus::Stale, format!("stale: {m}"))
            }
            Err(e) => CallResult::tool_error(call, &e),
        }
    }
}
