//! What the scheduler does next with each task — a pure function of the board, so the rules
//! are tested without sessions: which role session a task needs (or a promotion, which needs
//! none), which tasks are left alone and why, and which runnable tasks get the free slots.
//!
//! Rules (builtin:chapter): Planning without a plan (or `needs-replan`) → triage; Planning
//! with a plan → promote to Drafting; Drafting (`""` or `revise`) → executor; Review
//! (`awaiting-review` or `""`) → reviewer; Review `approved` → merger. Never scheduled: Done,
//! Archived, `paused`, [`PARKED`] (waits for the author), `failed` (blocked by its
//! `blockedBy`), a task with a dependency that is not Done, a task a session already works on.
//! Order of the free slots: priority (urgent first), then the task nearest Done (Review, then
//! Drafting, then Planning: finishing work frees the book sooner), then board order.

use std::collections::HashSet;

use serde::Serialize;

use crate::board::{Task, ARCHIVED, DONE, DRAFTING, PAUSED, PLANNING, REVIEW};

/// The sub-status of a task the scheduler stopped on: it waits for the author (a REVISE
/// bound reached, a role session that ended without doing its part). Pausing and resuming
/// the task (`p` twice on the Board) or moving it clears it.
pub const PARKED: &str = "needs-author";
/// Review passed; the merger comes next.
pub const APPROVED: &str = "approved";
/// Sent back to Drafting by a REVISE verdict; the notes are in the task log.
pub const REVISE: &str = "revise";

/// A role session the board runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Triage,
    Executor,
    Reviewer,
    Merger,
}

impl Role {
    /// The built-in profile of the role.
    pub fn profile(self) -> &'static str {
        match self {
            Role::Triage => "triage",
            Role::Executor => "executor",
            Role::Reviewer => "reviewer",
            Role::Merger => "merger",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Start(Role),
    /// Planned and waiting in Planning: release it to Drafting (no session needed).
    Promote,
    /// Left alone, and why (for `nbook board run`'s report and the tests).
    Wait(&'static str),
}

/// What task `t` needs next; `done` holds the ids of Done and Archived tasks.
pub fn next_for(t: &Task, done: &HashSet<&str>) -> Next {
    if t.column == DONE || t.column == ARCHIVED {
        return Next::Wait("finished");
    }
    match t.status.as_str() {
        PAUSED => return Next::Wait("paused by the author"),
        PARKED => return Next::Wait("waits for the author"),
        "failed" => return Next::Wait("blocked"),
        _ => {}
    }
    if t.dependencies.iter().any(|d| !done.contains(d.as_str())) {
        return Next::Wait("waits for its dependencies");
    }
    match (t.column.as_str(), t.status.as_str()) {
        (PLANNING, "needs-replan") => Next::Start(Role::Triage),
        (PLANNING, _) if t.prompt.is_none() || t.steps.is_empty() => Next::Start(Role::Triage),
        (PLANNING, _) => Next::Promote,
        (DRAFTING, "" | REVISE) => Next::Start(Role::Executor),
        (REVIEW, "" | "awaiting-review") => Next::Start(Role::Reviewer),
        (REVIEW, APPROVED) => Next::Start(Role::Merger),
        _ => Next::Wait("no stage for its status"),
    }
}

fn priority_rank(p: &str) -> u8 {
    match p {
        "urgent" => 0,
        "high" => 1,
        "normal" => 2,
        _ => 3,
    }
}

fn stage_rank(column: &str) -> u8 {
    match column {
        REVIEW => 0,
        DRAFTING => 1,
        _ => 2,
    }
}

/// The tasks to act on now, in order: every promotion (they need no slot), then role
/// sessions for at most `free` tasks. `busy` holds the tasks a session already works on.
pub fn pick(tasks: &[Task], busy: &HashSet<&str>, free: usize) -> Vec<(String, Next)> {
    let done: HashSet<&str> = tasks
        .iter()
        .filter(|t| t.column == DONE || t.column == ARCHIVED)
        .map(|t| t.id.as_str())
        .collect();
    let mut promote = Vec::new();
    let mut start: Vec<(&Task, Role)> = Vec::new();
    for t in tasks {
        if busy.contains(t.id.as_str()) {
            continue;
        }
        match next_for(t, &done) {
            Next::Promote => promote.push((t.id.clone(), Next::Promote)),
            Next::Start(role) => start.push((t, role)),
            Next::Wait(_) => {}
        }
    }
    // Stable: board order breaks ties.
    start.sort_by_key(|(t, _)| (priority_rank(&t.priority), stage_rank(&t.column)));
    promote.extend(
        start
            .into_iter()
            .take(free)
            .map(|(t, r)| (t.id.clone(), Next::Start(r))),
    );
    promote
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Step;

    fn task(id: &str, column: &str, status: &str) -> Task {
        Task {
            id: id.into(),
            title: id.into(),
            description: String::new(),
            column: column.into(),
            status: status.into(),
            priority: "normal".into(),
            workflow_id: crate::board::DEFAULT_WORKFLOW.into(),
            dependencies: Vec::new(),
            steps: Vec::new(),
            custom_fields: Default::default(),
            blocked_by: Vec::new(),
            blocked_reason: None,
            file_scope: Vec::new(),
            prompt: None,
            summary: None,
            revision: 1,
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    fn planned(mut t: Task) -> Task {
        t.prompt = Some("# Task".into());
        t.steps = vec![Step {
            name: "Preflight".into(),
            status: crate::board::StepStatus::Pending,
        }];
        t
    }

    #[test]
    fn each_stage_gets_its_role() {
        let none = HashSet::new();
        let n = |t: &Task| next_for(t, &none);
        assert_eq!(n(&task("A", PLANNING, "")), Next::Start(Role::Triage));
        assert_eq!(n(&planned(task("A", PLANNING, ""))), Next::Promote);
        assert_eq!(
            n(&planned(task("A", PLANNING, "needs-replan"))),
            Next::Start(Role::Triage)
        );
        assert_eq!(n(&task("A", DRAFTING, "")), Next::Start(Role::Executor));
        assert_eq!(n(&task("A", DRAFTING, REVISE)), Next::Start(Role::Executor));
        assert_eq!(
            n(&task("A", REVIEW, "awaiting-review")),
            Next::Start(Role::Reviewer)
        );
        assert_eq!(n(&task("A", REVIEW, APPROVED)), Next::Start(Role::Merger));
    }

    #[test]
    fn paused_parked_blocked_finished_and_waiting_tasks_are_left_alone() {
        let none = HashSet::new();
        for t in [
            task("A", DRAFTING, PAUSED),
            task("A", REVIEW, PARKED),
            task("A", DRAFTING, "failed"),
            task("A", DONE, ""),
            task("A", ARCHIVED, ""),
        ] {
            assert!(matches!(next_for(&t, &none), Next::Wait(_)), "{t:?}");
        }
        let mut dep = task("B", DRAFTING, "");
        dep.dependencies = vec!["A".into()];
        assert_eq!(
            next_for(&dep, &none),
            Next::Wait("waits for its dependencies")
        );
        let done: HashSet<&str> = ["A"].into();
        assert_eq!(next_for(&dep, &done), Next::Start(Role::Executor));
    }

    #[test]
    fn free_slots_go_by_priority_then_nearest_done_and_promotions_need_none() {
        let mut urgent = task("C", PLANNING, "");
        urgent.priority = "urgent".into();
        let tasks = vec![
            task("A", PLANNING, ""),
            task("B", DRAFTING, ""),
            urgent,
            planned(task("D", PLANNING, "")),
            task("E", REVIEW, "awaiting-review"),
        ];
        let got = pick(&tasks, &HashSet::new(), 2);
        assert_eq!(
            got,
            [
                ("D".to_string(), Next::Promote),
                ("C".to_string(), Next::Start(Role::Triage)),
                ("E".to_string(), Next::Start(Role::Reviewer)),
            ]
        );
        // A task a session works on is skipped; no free slot starts nothing.
        let busy: HashSet<&str> = ["C"].into();
        let got = pick(&tasks, &busy, 1);
        assert_eq!(got[1], ("E".to_string(), Next::Start(Role::Reviewer)));
        assert_eq!(pick(&tasks, &HashSet::new(), 0).len(), 1);
    }
}
