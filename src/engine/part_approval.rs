//! Approving a call in parts (`Decision::ApproveParts`): the check of the author's selection
//! when it is sent (a bad one is refused and the call keeps waiting), and the apply path —
//! the call's targets must be as previewed, the tool narrows its arguments to the kept parts,
//! the narrowed call is previewed again and runs only if that preview holds exactly the kept
//! parts of the one the author saw. The agent's result says what was applied and what was
//! rejected, with the author's reason. Which tools offer this is their declaration
//! (`Tool::selects_parts`).

use std::sync::Arc;

use serde_json::{json, Value};

use super::dispatch::{CallResult, CallStatus};
use super::tool::{CallArgs, Tool, ToolCtx, ToolError};
use super::types::parts::{self, PartSelection, SelectionError};
use super::types::*;
use super::Engine;

/// Whether a call may be approved in parts: its tool declares it and its preview is file
/// diffs (staging tools hold a change that cannot be cut).
pub(super) fn offered(tool: &dyn Tool, preview: &Preview) -> bool {
    tool.selects_parts()
        && !tool.is_staging()
        && matches!(&preview.body, PreviewBody::Files { changes } if !changes.is_empty())
}

/// The decision a selection amounts to for a waiting call: every part dropped is a reject
/// (with the author's reason), every part kept an approval, anything else stays a selection.
pub(super) fn settle(
    pending: &PendingCall,
    selection: PartSelection,
) -> Result<Decision, SelectionError> {
    if !pending.parts {
        return Err(SelectionError::NotSupported {
            tool: pending.tool.clone(),
        });
    }
    let kept = parts::check(&pending.preview, &selection)?;
    Ok(if kept.is_none() {
        Decision::Reject {
            reason: Some(
                selection
                    .reason
                    .unwrap_or_else(|| "the author dropped every part of this call".into()),
            ),
        }
    } else if kept.is_all() {
        Decision::Approve
    } else {
        Decision::ApproveParts { selection }
    })
}

impl Engine {
    /// Apply only the kept parts of a call the author saw as `shown`.
    pub(super) async fn approve_parts(
        self: &Arc<Self>,
        tool: Arc<dyn Tool>,
        ctx: ToolCtx,
        call: &ToolCall,
        args: CallArgs,
        shown: &Preview,
        selection: PartSelection,
    ) -> CallResult {
        let kept = match parts::check(shown, &selection) {
            Ok(k) => k,
            Err(e) => return CallResult::fail(call, CallStatus::InvalidArgs, e.to_string()),
        };
        if let Err(r) = self
            .still_as_previewed(&tool, &ctx, call, &args, shown)
            .await
        {
            return *r;
        }
        let narrowed = {
            let (tool, ctx, args, shown, kept) = (
                tool.clone(),
                ctx.clone(),
                args.clone(),
                shown.clone(),
                kept.clone(),
            );
            tokio::task::spawn_blocking(move || tool.narrow(&ctx, &args, &shown, &kept))
                .await
                .unwrap_or_else(|e| Err(ToolError::failed(format!("tool crashed: {e}"))))
        };
        let narrowed = match narrowed {
            Ok(v) => v,
            Err(ToolError::Stale(m)) => {
                return CallResult::fail(call, CallStatus::Stale, format!("stale: {m}"))
            }
            Err(e) => {
                return CallResult::fail(
                    call,
                    CallStatus::ToolError,
                    format!("could not apply only the kept parts: {e}; nothing was changed"),
                )
            }
        };
        let args = match self.validate_edit(call, narrowed) {
            Ok(a) => a,
            Err(r) => return *r,
        };
        let now = match self.preview(&tool, &ctx, &args).await {
            Ok(p) => p,
            Err(e) => {
                return CallResult::fail(
                    call,
                    CallStatus::Stale,
                    format!("stale: the kept parts no longer apply ({e}); nothing was changed. Read the files again and propose the change anew."),
                )
            }
        };
        if let Err(why) = parts::matches_kept(shown, &kept, &now) {
            return CallResult::fail(
                call,
                CallStatus::Stale,
                format!("stale: the kept parts would not come out as the preview showed them ({why}); nothing was changed. Read the files again and propose the change anew."),
            );
        }
        let targets = tool.write_targets(&ctx, &args);
        let mut r = self.execute(tool, ctx, call, args, Some(targets)).await;
        if r.ok {
            let reason = selection.reason.as_deref();
            r.content = format!(
                "{}\n\n{}",
                parts::result_note(shown, &kept, reason),
                r.content
            );
            let (applied, rejected) = parts::describe(shown, &kept);
            let note = json!({
                "applied": applied,
                "rejected": rejected,
                "kept": kept.ids(),
                "reason": reason,
            });
            r.details = Some(match r.details.take() {
                Some(Value::Object(mut m)) => {
                    m.insert("parts".into(), note);
                    Value::Object(m)
                }
                Some(other) => json!({"parts": note, "result": other}),
                None => json!({"parts": note}),
            });
        }
        r
    }

    /// The call's targets are as they were when `shown` was computed; else the stale result.
    pub(super) async fn still_as_previewed(
        &self,
        tool: &Arc<dyn Tool>,
        ctx: &ToolCtx,
        call: &ToolCall,
        args: &CallArgs,
        shown: &Preview,
    ) -> Result<(), Box<CallResult>> {
        match self.preview(tool, ctx, args).await {
            Ok(now) if now.targets == shown.targets => Ok(()),
            Ok(now) => {
                let changed = super::call_result::changed_targets(&shown.targets, &now.targets);
                let mut r = CallResult::fail(
                    call,
                    CallStatus::Stale,
                    format!(
                        "stale: the target of this {} call changed after the preview was shown (changed: {}); nothing was changed. Read the file again and propose the change anew.",
                        call.name,
                        changed.join(", ")
                    ),
                );
                r.details = Some(json!({"changed": changed}));
                Err(Box::new(r))
            }
            // A coded failure (a lost compare-and-swap) is the tool's own typed answer: the
            // agent gets it with its details, not a generic "stale".
            Err(e @ ToolError::Coded { .. }) => Err(Box::new(CallResult::tool_error(call, &e))),
            Err(e) => Err(Box::new(CallResult::fail(
                call,
                CallStatus::Stale,
                format!("stale: the target changed after the preview was shown ({e}); nothing was changed"),
            ))),
        }
    }
}
