//! What the scheduler does next with each task — a pure function of the board and the tasks'
//! workflows, so the rules are tested without sessions: which role session a task needs (or a
//! promotion, which needs none), which tasks are left alone and why, and which runnable tasks
//! get the free slots.
//!
//! **Any workflow.** A task's column is read through its workflow's lanes
//! ([`crate::board::workflow::Lanes`]: which column is planning, drafting, review, merge,
//! done, archived — from the workflow's nodes and column traits), so a custom workflow with
//! its own column ids (`outline`, `draft`, `edit`, `done`) is scheduled like `builtin:chapter`.
//! Rules: planning lane without a plan (or `needs-replan`) → triage; with a plan → promote;
//! drafting lane (`""` or `revise`) → executor; review lane (`awaiting-review` or `""`) →
//! reviewer; `approved` in the merge lane (the review column in the built-in) → merger. A
//! column that is no lane is left alone ("no stage for its column").
//! Never scheduled: a finished task (its workflow's done or archived column), `paused`,
//! [`PARKED`] (waits for the author), a plan waiting for the author's approval
//! (`crate::board::plan_approval::AWAITING`), `failed` (blocked by its `blockedBy`), a task with a
//! dependency that is not finished, a task a session already works on.
//!
//! **WIP limits.** A column with the `wip` trait whose `limitSetting` names a number setting
//! holds at most that many tasks a role session works on (the effective value of the task's
//! workflow; `builtin:chapter`'s drafting column reads `maxParallelSteps`, default 2); a
//! runnable task over it waits for a free place, it does not take the slot. With the trait's
//! `countPending: true` the limit caps the column's occupancy, not only its sessions: tasks
//! there that wait (paused, parked for the author, blocked, waiting for a dependency) hold a
//! place too, and a promotion into the column waits while it is full (every task there counts,
//! started or not). With `countPending` false or absent only tasks a session works on count.
//! Order of the free slots: priority (urgent first), then the task nearest done (review, then
//! drafting, then planning: finishing work frees the book sooner), then board order.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::board::workflow::{Lanes, Resolved, Workflow};
use crate::board::{Task, PAUSED};

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

/// One column's `wip` limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wip {
    /// The most tasks that count there at once.
    pub limit: usize,
    /// Waiting tasks count too (the trait's `countPending`).
    pub count_pending: bool,
}

/// What the scheduler reads of one workflow: its lanes and its columns' WIP limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flow {
    pub lanes: Lanes,
    /// Column id → its WIP limit.
    pub wip: HashMap<String, Wip>,
}

impl Flow {
    /// `wf` with the effective settings `settings` (a `wip` limit names its setting).
    pub fn of(wf: &Workflow, settings: &Resolved) -> Flow {
        let wip = wf
            .ir
            .columns
            .iter()
            .filter_map(|c| {
                let t = c.traits.iter().find(|t| t.name == "wip")?;
                let config = t.config.as_ref()?;
                let name = config.get("limitSetting")?.as_str()?;
                let n = settings.u64(name)?;
                Some((
                    c.id.clone(),
                    Wip {
                        limit: usize::try_from(n.max(1)).unwrap_or(usize::MAX),
                        count_pending: config
                            .get("countPending")
                            .and_then(serde_json::Value::as_bool)
                            .unwrap_or(false),
                    },
                ))
            })
            .collect();
        Flow {
            lanes: Lanes::of(wf),
            wip,
        }
    }

    pub fn builtin() -> Flow {
        Flow {
            lanes: Lanes::builtin(),
            wip: HashMap::new(),
        }
    }
}

/// Workflow id → its [`Flow`]; a task whose workflow is missing reads as `builtin:chapter`
/// without limits.
pub type Flows = HashMap<String, Flow>;

fn flow_of<'a>(flows: &'a Flows, fallback: &'a Flow, t: &Task) -> &'a Flow {
    flows.get(&t.workflow_id).unwrap_or(fallback)
}

/// What task `t` needs next in a workflow with `lanes`; `done` holds the ids of finished tasks.
pub fn next_for(t: &Task, lanes: &Lanes, done: &HashSet<&str>) -> Next {
    if lanes.finished(&t.column) {
        return Next::Wait("finished");
    }
    match t.status.as_str() {
        PAUSED => return Next::Wait("paused by the author"),
        PARKED => return Next::Wait("waits for the author"),
        crate::board::plan_approval::AWAITING => {
            return Next::Wait("its plan waits for the author's approval")
        }
        "failed" => return Next::Wait("blocked"),
        _ => {}
    }
    if t.dependencies.iter().any(|d| !done.contains(d.as_str())) {
        return Next::Wait("waits for its dependencies");
    }
    let (col, st) = (t.column.as_str(), t.status.as_str());
    if col == lanes.planning {
        return if st == "needs-replan" || t.prompt.is_none() || t.steps.is_empty() {
            Next::Start(Role::Triage)
        } else {
            Next::Promote
        };
    }
    if col == lanes.drafting {
        return match st {
            "" | REVISE => Next::Start(Role::Executor),
            _ => Next::Wait("no stage for its status"),
        };
    }
    if col == lanes.merge && st == APPROVED {
        return Next::Start(Role::Merger);
    }
    if col == lanes.review {
        return match st {
            "" | "awaiting-review" => Next::Start(Role::Reviewer),
            _ => Next::Wait("no stage for its status"),
        };
    }
    if col == lanes.merge && st.is_empty() {
        return Next::Start(Role::Merger);
    }
    Next::Wait("no stage for its column")
}

fn priority_rank(p: &str) -> u8 {
    match p {
        "urgent" => 0,
        "high" => 1,
        "normal" => 2,
        _ => 3,
    }
}

fn stage_rank(lanes: &Lanes, column: &str) -> u8 {
    if column == lanes.review || column == lanes.merge {
        0
    } else if column == lanes.drafting {
        1
    } else {
        2
    }
}

/// The tasks to act on now, in order: every promotion (they need no slot), then role
/// sessions for at most `free` tasks, each column's WIP limit kept. `busy` holds the tasks a
/// session already works on.
pub fn pick(
    tasks: &[Task],
    flows: &Flows,
    busy: &HashSet<&str>,
    free: usize,
) -> Vec<(String, Next)> {
    let fallback = Flow::builtin();
    let done: HashSet<&str> = tasks
        .iter()
        .filter(|t| flow_of(flows, &fallback, t).lanes.finished(&t.column))
        .map(|t| t.id.as_str())
        .collect();
    // Tasks worked on now, per (workflow, column), for the WIP limits.
    let mut working: HashMap<(&str, &str), usize> = HashMap::new();
    for t in tasks.iter().filter(|t| busy.contains(t.id.as_str())) {
        *working
            .entry((t.workflow_id.as_str(), t.column.as_str()))
            .or_default() += 1;
    }
    // Every unfinished task per (workflow, column), for a `countPending` column's promotions.
    let mut occupied: HashMap<(&str, &str), usize> = HashMap::new();
    let mut promote = Vec::new();
    let mut promotions: Vec<(&Task, &Flow)> = Vec::new();
    let mut start: Vec<(&Task, Role, &Flow)> = Vec::new();
    for t in tasks {
        let flow = flow_of(flows, &fallback, t);
        let key = (t.workflow_id.as_str(), t.column.as_str());
        if !flow.lanes.finished(&t.column) {
            *occupied.entry(key).or_default() += 1;
        }
        if busy.contains(t.id.as_str()) {
            continue;
        }
        let counts_waiting = flow.wip.get(&t.column).is_some_and(|w| w.count_pending);
        match next_for(t, &flow.lanes, &done) {
            Next::Promote => promotions.push((t, flow)),
            Next::Start(role) => start.push((t, role, flow)),
            // A waiting task holds its place in a countPending column.
            Next::Wait(_) if counts_waiting && !flow.lanes.finished(&t.column) => {
                *working.entry(key).or_default() += 1;
            }
            Next::Wait(_) => {}
        }
    }
    for (t, flow) in promotions {
        let into = flow.lanes.drafting.as_str();
        if let Some(w) = flow.wip.get(into).filter(|w| w.count_pending) {
            let n = occupied.entry((t.workflow_id.as_str(), into)).or_default();
            if *n >= w.limit {
                continue;
            }
            *n += 1;
        }
        promote.push((t.id.clone(), Next::Promote));
    }
    // Stable: board order breaks ties.
    start.sort_by_key(|(t, _, f)| (priority_rank(&t.priority), stage_rank(&f.lanes, &t.column)));
    let mut taken = 0;
    for (t, role, flow) in start {
        if taken == free {
            break;
        }
        let key = (t.workflow_id.as_str(), t.column.as_str());
        if let Some(w) = flow.wip.get(&t.column) {
            let n = working.entry(key).or_default();
            if *n >= w.limit {
                continue;
            }
            *n += 1;
        }
        taken += 1;
        promote.push((t.id.clone(), Next::Start(role)));
    }
    promote
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Step, ARCHIVED, DONE, DRAFTING, PLANNING, REVIEW};
    use serde_json::json;

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
        let lanes = Lanes::builtin();
        let n = |t: &Task| next_for(t, &lanes, &none);
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
            assert!(
                matches!(next_for(&t, &Lanes::builtin(), &none), Next::Wait(_)),
                "{t:?}"
            );
        }
        let mut dep = task("B", DRAFTING, "");
        dep.dependencies = vec!["A".into()];
        assert_eq!(
            next_for(&dep, &Lanes::builtin(), &none),
            Next::Wait("waits for its dependencies")
        );
        let done: HashSet<&str> = ["A"].into();
        assert_eq!(
            next_for(&dep, &Lanes::builtin(), &done),
            Next::Start(Role::Executor)
        );
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
        let got = pick(&tasks, &Flows::new(), &HashSet::new(), 2);
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
        let got = pick(&tasks, &Flows::new(), &busy, 1);
        assert_eq!(got[1], ("E".to_string(), Next::Start(Role::Reviewer)));
        assert_eq!(pick(&tasks, &Flows::new(), &HashSet::new(), 0).len(), 1);
    }

    fn custom() -> Workflow {
        let mut wf = crate::board::workflow::builtin_chapter();
        wf.id = "scenes".into();
        wf.builtin = false;
        wf.ir = serde_json::from_value(json!({
            "version": "v2", "name": "Scenes",
            "columns": [
                {"id": "outline", "name": "Outline", "traits": [{"trait": "intake"}]},
                {"id": "draft", "name": "Draft", "traits": [{"trait": "wip", "config": {"limitSetting": "maxParallelSteps"}}]},
                {"id": "edit", "name": "Edit", "traits": [{"trait": "human-review"}, {"trait": "merge"}]},
                {"id": "done", "name": "Done", "traits": [{"trait": "complete"}]}
            ],
            "nodes": [], "edges": [],
            "settings": [{"id": "maxParallelSteps", "name": "Parallel", "type": "number", "integer": true, "minimum": 1, "default": 1}]
        }))
        .expect("ir");
        wf
    }

    fn on(mut t: Task, wf: &str) -> Task {
        t.workflow_id = wf.into();
        t
    }

    #[test]
    fn a_custom_workflows_columns_get_their_roles_and_its_wip_limit() {
        let wf = custom();
        let settings = crate::board::workflow::settings::resolve(
            &wf.id,
            &wf.ir.settings,
            &serde_json::Map::new(),
        );
        let flows: Flows = [(wf.id.clone(), Flow::of(&wf, &settings))].into();
        let lanes = &flows["scenes"].lanes;
        let none = HashSet::new();
        let n = |t: Task| next_for(&on(t, "scenes"), lanes, &none);
        assert_eq!(n(task("A", "outline", "")), Next::Start(Role::Triage));
        assert_eq!(n(planned(task("A", "outline", ""))), Next::Promote);
        assert_eq!(n(task("A", "draft", "")), Next::Start(Role::Executor));
        assert_eq!(
            n(task("A", "edit", "awaiting-review")),
            Next::Start(Role::Reviewer)
        );
        assert_eq!(n(task("A", "edit", APPROVED)), Next::Start(Role::Merger));
        assert_eq!(n(task("A", "done", "")), Next::Wait("finished"));
        // The built-in's ids mean nothing in this workflow.
        assert_eq!(
            n(task("A", DRAFTING, "")),
            Next::Wait("no stage for its column")
        );

        // maxParallelSteps = 1 on the draft column: one of two drafting tasks starts, the
        // slot left goes to the next task in line.
        let tasks = vec![
            on(task("A", "draft", ""), "scenes"),
            on(task("B", "draft", ""), "scenes"),
            on(task("C", "outline", ""), "scenes"),
        ];
        let got = pick(&tasks, &flows, &HashSet::new(), 3);
        assert_eq!(
            got,
            [
                ("A".to_string(), Next::Start(Role::Executor)),
                ("C".to_string(), Next::Start(Role::Triage)),
            ]
        );
        // A busy drafting task holds the place.
        let busy: HashSet<&str> = ["A"].into();
        let got = pick(&tasks, &flows, &busy, 3);
        assert_eq!(got, [("C".to_string(), Next::Start(Role::Triage))]);
        // A dependency on a task in the custom done column counts as met.
        let mut dep = on(task("D", "draft", ""), "scenes");
        dep.dependencies = vec!["E".into()];
        let tasks = vec![dep, on(task("E", "done", ""), "scenes")];
        let got = pick(&tasks, &flows, &HashSet::new(), 3);
        assert_eq!(got, [("D".to_string(), Next::Start(Role::Executor))]);
    }

    fn with_count_pending(count_pending: bool, limit: u64) -> Flows {
        let mut wf = custom();
        wf.ir.columns[1].traits[0].config =
            Some(json!({"limitSetting": "maxParallelSteps", "countPending": count_pending}));
        let settings = crate::board::workflow::settings::resolve(
            &wf.id,
            &wf.ir.settings,
            &serde_json::Map::from_iter([("maxParallelSteps".to_string(), json!(limit))]),
        );
        [(wf.id.clone(), Flow::of(&wf, &settings))].into()
    }

    #[test]
    fn count_pending_makes_waiting_tasks_hold_their_place_and_holds_promotions() {
        // Two places in draft: A is paused there, B parked, C and D could start, E is planned.
        let tasks = vec![
            on(task("A", "draft", PAUSED), "scenes"),
            on(task("B", "draft", PARKED), "scenes"),
            on(task("C", "draft", ""), "scenes"),
            on(planned(task("E", "outline", "")), "scenes"),
        ];
        // countPending false: only sessions count, so C starts and E is promoted.
        let got = pick(&tasks, &with_count_pending(false, 2), &HashSet::new(), 3);
        assert_eq!(
            got,
            [
                ("E".to_string(), Next::Promote),
                ("C".to_string(), Next::Start(Role::Executor)),
            ]
        );
        // countPending true: A and B fill both places — C waits and E stays in outline.
        let flows = with_count_pending(true, 2);
        assert_eq!(pick(&tasks, &flows, &HashSet::new(), 3), []);
        // One place more: C starts (A, B and C fill it); E still waits for a place.
        let flows = with_count_pending(true, 3);
        assert_eq!(
            pick(&tasks, &flows, &HashSet::new(), 3),
            [("C".to_string(), Next::Start(Role::Executor))]
        );
        // Four places: the three there plus E's promotion.
        let flows = with_count_pending(true, 4);
        let got = pick(&tasks, &flows, &HashSet::new(), 3);
        assert_eq!(
            got,
            [
                ("E".to_string(), Next::Promote),
                ("C".to_string(), Next::Start(Role::Executor)),
            ]
        );
        // A task waiting for its dependency holds a place as well.
        let mut dep = on(task("F", "draft", ""), "scenes");
        dep.dependencies = vec!["Z".into()];
        let tasks = vec![
            dep,
            on(task("Z", "outline", "needs-replan"), "scenes"),
            on(task("G", "draft", ""), "scenes"),
        ];
        let got = pick(&tasks, &with_count_pending(true, 1), &HashSet::new(), 3);
        assert_eq!(got, [("Z".to_string(), Next::Start(Role::Triage))]);
        let got = pick(&tasks, &with_count_pending(false, 1), &HashSet::new(), 3);
        assert_eq!(got.len(), 2, "{got:?}");
    }
}
