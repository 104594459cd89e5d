//! The author's plan approval (a workflow's `requirePlanApproval`, fusion-notes §4): when the
//! setting is true, a planned task does not leave its workflow's planning lane on its own.
//! The scheduler parks it there with sub-status [`AWAITING`] (the card shows `plan?`); the
//! author approves the plan (`fn_task_approve_plan`, `a` on the Board), which sets
//! [`APPROVED`] so the scheduler's next promotion takes it on, or sends it back
//! (`fn_task_reject_plan`, `d`) with a reason: `needs-replan`, the reason in the task log
//! (outcome `plan-rejected`), which the next triage session reads as its notes.
//!
//! `fn_task_promote` (`super::tasks::promote`) refuses a task whose workflow requires the
//! approval and whose plan is not approved ([`BoardError::PlanNotApproved`]), so no agent
//! promotes around the author. State is the task's sub-status and log only: nothing else is
//! stored, and a task moved or re-planned starts over.

use rusqlite::Connection;
use serde_json::json;

use super::error::{BoardError, BoardResult};
use super::model::Task;
use super::tasks::{log, need_column, require, save};
use super::{Outcome, Touched, PLANNING};

/// The workflow setting.
pub const SETTING: &str = "requirePlanApproval";
/// Sub-status: the plan waits for the author.
pub const AWAITING: &str = "awaiting-plan-approval";
/// Sub-status: the author approved the plan; the next promotion releases the task.
pub const APPROVED: &str = "plan-approved";
/// What the card shows for [`AWAITING`].
pub const CARD_LABEL: &str = "plan?";

/// Whether `t`'s workflow requires the author's plan approval.
pub fn required(c: &Connection, t: &Task) -> bool {
    super::workflow::effective_for_task(c, t)
        .bool(SETTING)
        .unwrap_or(false)
}

fn waiting(c: &Connection, id: &str, action: &'static str) -> BoardResult<Task> {
    let t = require(c, id)?;
    need_column(c, &t, action, &[PLANNING])?;
    if t.status != AWAITING {
        return Err(BoardError::NoPlanWaiting {
            id: t.id.clone(),
            status: t.status.clone(),
        });
    }
    Ok(t)
}

/// `fn_task_approve_plan`: the author approves the plan of a task parked at `plan?`.
pub fn approve(c: &Connection, id: &str, actor: Option<&str>) -> BoardResult<Outcome> {
    let mut t = waiting(c, id, "fn_task_approve_plan")?;
    t.status = APPROVED.into();
    save(c, &t)?;
    let mut out = Outcome::default();
    log(
        c,
        &mut out,
        &t.id,
        "Plan approved by the author: the scheduler releases the task to drafting",
        Some("plan-approved"),
        actor,
    )?;
    out.text = format!("{}'s plan is approved; it goes on to drafting.", t.id);
    out.value = json!({"taskId": t.id, "column": t.column, "status": t.status});
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}

/// `fn_task_reject_plan`: the author sends the plan back to planning with `reason`.
pub fn reject(c: &Connection, id: &str, reason: &str, actor: Option<&str>) -> BoardResult<Outcome> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(BoardError::invalid(
            "reason",
            "say what the plan must change, e.g. \"split step 2 into two scenes\"",
        ));
    }
    let mut t = waiting(c, id, "fn_task_reject_plan")?;
    t.status = "needs-replan".into();
    save(c, &t)?;
    let mut out = Outcome::default();
    log(
        c,
        &mut out,
        &t.id,
        &format!("Plan sent back by the author: {reason}"),
        Some("plan-rejected"),
        actor,
    )?;
    out.text = format!("{}'s plan is sent back to planning: {reason}", t.id);
    out.value = json!({"taskId": t.id, "column": t.column, "status": t.status});
    out.touched.push(Touched::Task(t.id));
    Ok(out)
}
