//! The first message of each role session: what the role is asked to do with its task, the
//! task's plan, the latest review notes when a review sent it back, and the author's
//! steering comments that were waiting for the task's next session.

use crate::board::steering::Steering;
use crate::board::Task;

use super::pick::Role;

/// The steering comments, as a block the agent reads as the author's.
pub fn steering_block(comments: &[Steering]) -> String {
    if comments.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n\n<author-steering>\nThe author added these comments while the task waited; follow them:\n");
    for c in comments {
        s.push_str(&format!("- {}\n", c.text));
    }
    s.push_str("</author-steering>");
    s
}

/// A steering comment delivered into a live session.
pub fn live_steering(comments: &[Steering]) -> String {
    let mut s = String::from("<author-steering>\nThe author steers this task:\n");
    for c in comments {
        s.push_str(&format!("- {}\n", c.text));
    }
    s.push_str("</author-steering>");
    s
}

fn plan(t: &Task) -> String {
    t.prompt
        .as_deref()
        .map(|p| format!("\n\n<PROMPT.md>\n{}</PROMPT.md>", p))
        .unwrap_or_default()
}

/// Series workspace mode: what the role is told of the task's repository scope. The executor
/// gets the declared books it has not acquired yet (acquire each with
/// fn_acquire_repo_worktree before editing there) and the ones it has; the triage gets the
/// series' books, to confirm the scope in `## Repository Scope`. Empty outside a series.
pub fn repository_scope_block(
    role: Role,
    series_books: &[String],
    declared: &[String],
    acquired: &[String],
) -> String {
    if series_books.is_empty() {
        return String::new();
    }
    match role {
        Role::Triage => format!(
            "\n\n<repository-scope>\nThis book is part of a series; its other books are: {}. If the task works in any of them, list them in PROMPT.md under `## Repository Scope` as `- book`.{}\n</repository-scope>",
            series_books.join(", "),
            if declared.is_empty() {
                String::new()
            } else {
                format!(" Declared so far: {}.", declared.join(", "))
            }
        ),
        Role::Executor => {
            let pending: Vec<&String> = declared.iter().filter(|d| !acquired.contains(d)).collect();
            if pending.is_empty() && acquired.is_empty() {
                return String::new();
            }
            let mut s = String::from("\n\n<repository-scope>\nBesides this book, the task works in other books of the series.");
            if !pending.is_empty() {
                s.push_str(&format!(
                    " Declared, not acquired yet: {}. Call fn_acquire_repo_worktree {{repo}} for each before you edit there; then address its files as workspace/<book>/<path>.",
                    pending.iter().map(|b| b.as_str()).collect::<Vec<_>>().join(", ")
                ));
            }
            if !acquired.is_empty() {
                s.push_str(&format!(
                    " Acquired already: {} (address them as workspace/<book>/<path>).",
                    acquired.join(", ")
                ));
            }
            s.push_str("\n</repository-scope>");
            s
        }
        _ => String::new(),
    }
}

/// The role session's first message for task `t`. `notes` are the latest review's, when a
/// review sent the task back.
pub fn first_message(role: Role, t: &Task, notes: Option<&str>, comments: &[Steering]) -> String {
    let head = match role {
        Role::Triage => {
            let mut s = format!(
                "Plan task {id} — {title}.\n\nDescription:\n{desc}\n\nCheck for duplicates (fn_task_search), then write the complete PROMPT.md with fn_task_prompt_write. You may ask for a spec review with fn_review_spec before you finish. The scheduler releases the task to Drafting once the plan is saved.",
                id = t.id,
                title = t.title,
                desc = t.description
            );
            if let Some(n) = notes {
                s.push_str(&format!(
                    "\n\nThe plan was sent back to planning. Rework PROMPT.md for this:\n<replan-notes>\n{n}\n</replan-notes>"
                ));
            }
            s
        }
        Role::Executor => {
            let mut s = format!(
                "Carry out task {id} — {title}, step by step, in your draft area. Report each step with fn_task_update (Step 0 is the Preflight) and finish with fn_task_done.",
                id = t.id,
                title = t.title
            );
            if let Some(n) = notes {
                s.push_str(&format!(
                    "\n\nThe review sent the task back (REVISE). Address these notes, then call fn_task_done again:\n<review-notes>\n{n}\n</review-notes>"
                ));
            }
            s
        }
        Role::Reviewer => format!(
            "Review the draft of task {id} — {title}: read its plan below and the files it changed in its draft area. Answer with the verdict on the first line (APPROVE, REVISE or RETHINK), then your notes; for REVISE, the concrete changes, each tied to a step or a file.",
            id = t.id,
            title = t.title
        ),
        Role::Merger => format!(
            "Merge task {id} — {title} into the manuscript: call merge_task_draft. Its preview is the task's whole change for the author's approval; if the book's checks fail, call fn_report_build_failure with what failed instead.",
            id = t.id,
            title = t.title
        ),
    };
    format!("{head}{}{}", plan(t), steering_block(comments))
}

/// The spec reviewer's message (`fn_review_spec`).
pub fn spec_review(t: &Task) -> String {
    format!(
        "Review the plan (spec) of task {id} — {title} before any drafting starts. Answer with the verdict on the first line: APPROVE, REVISE (the plan needs the changes you list) or RETHINK (the approach cannot work, say why).{}",
        plan(t),
        id = t.id,
        title = t.title
    )
}
