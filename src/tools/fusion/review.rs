//! `fn_review_spec` (triage): a spec review of the session's task before drafting starts. The
//! seed lists it (upstream Fusion has since moved reviews into workflow nodes; the addendum
//! keeps it): it creates a `reviewer` task session for the same task, runs it through the
//! agent host with the plan, and returns its verdict — APPROVE, REVISE, RETHINK or
//! UNAVAILABLE (the reviewer could not run, failed, or answered without a verdict on its first
//! line; never read as an approval). The reviewer reads only; the verdict changes nothing on
//! the board — triage decides what to do with it.

use serde_json::json;

use super::tasks::NoArgs;
use super::{board, err, task_of};
use crate::board::review::{self, Verdict};
use crate::board::{tasks as bt, BoardError, PLANNING};
use crate::engine::agents::{InvokeMode, InvokeRequest};
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;

pub struct ReviewSpec;

fn unavailable(why: String, session: Option<&str>) -> ToolOutput {
    ToolOutput {
        content: format!("UNAVAILABLE: {why}"),
        details: Some(json!({
            "verdict": Verdict::Unavailable.as_str(),
            "reviewSessionId": session,
            "notes": why,
        })),
        ..ToolOutput::default()
    }
}

impl TypedTool for ReviewSpec {
    type Args = NoArgs;
    const NAME: &'static str = "fn_review_spec";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Ask for a spec review of this session's task's plan (PROMPT.md, written with fn_task_prompt_write) before it goes to drafting: a reviewer session reads the plan and answers APPROVE, REVISE (change the plan as its notes say, write it again) or RETHINK (the approach cannot work). UNAVAILABLE when no reviewer could run or it gave no verdict. The verdict changes nothing by itself. details {verdict, reviewSessionId, notes}. A task without a plan (TASK_UNPLANNED) or not in Planning (TASK_WRONG_COLUMN) is an error result.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = Effects::touches(&[crate::engine::tool::Domain::Board]);

    fn run(&self, ctx: &ToolCtx, _: &NoArgs) -> Result<ToolOutput, ToolError> {
        let id = task_of(ctx, None)?;
        // Planning is the task's workflow's planning lane (bt::need_column reads it).
        let t = board(ctx)
            .read(|c| {
                let t = bt::require(c, &id)?;
                bt::need_column(c, &t, "fn_review_spec", &[PLANNING])?;
                Ok(t)
            })
            .map_err(err)?;
        if t.prompt.is_none() {
            return Err(err(BoardError::Unplanned { id: t.id.clone() }));
        }
        let Some(services) = ctx.services.as_ref() else {
            return Ok(unavailable(
                "no agent host runs in this process".into(),
                None,
            ));
        };
        let Some(host) = services.host() else {
            return Ok(unavailable(
                "no agent host runs in this process".into(),
                None,
            ));
        };
        let info = match services.create_task_session(
            Some(&ctx.session_id),
            "reviewer",
            &t.id,
            &format!("{} · spec review", t.id),
        ) {
            Ok(i) => i,
            Err(e) => {
                return Ok(unavailable(
                    format!("the reviewer session could not be created: {e}"),
                    None,
                ))
            }
        };
        let outcome = host.invoke_blocking(InvokeRequest {
            // The triage run waits on it: cancelling triage cancels the review.
            caller: Some(ctx.session_id.clone()),
            session_id: info.id.clone(),
            message: Some(crate::runner::messages::spec_review(&t)),
            input: None,
            mode: InvokeMode::Prompt,
            model: None,
            origin_call_id: Some(ctx.call_id.clone()),
        });
        let outcome = match outcome {
            Ok(o) if o.status == "completed" => o,
            Ok(o) => {
                return Ok(unavailable(
                    format!(
                        "the reviewer session {} ended {}: {}",
                        info.id,
                        o.status,
                        o.error.unwrap_or_default()
                    ),
                    Some(&info.id),
                ))
            }
            Err(e) => {
                return Ok(unavailable(
                    format!("the reviewer session {} could not run: {e}", info.id),
                    Some(&info.id),
                ))
            }
        };
        let (verdict, notes) = review::parse(&outcome.final_message);
        Ok(ToolOutput {
            content: format!(
                "Spec review of {} (reviewer session {}): {}{}",
                t.id,
                info.id,
                verdict.as_str(),
                if notes.is_empty() {
                    String::new()
                } else {
                    format!("\n{notes}")
                }
            ),
            details: Some(json!({
                "verdict": verdict.as_str(),
                "reviewSessionId": info.id,
                "notes": notes,
            })),
            ..ToolOutput::default()
        })
    }
}
