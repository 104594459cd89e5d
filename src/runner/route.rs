//! Where a task goes when the scheduler moves it on: the walk along its workflow's edges from
//! the node that just finished, through the nodes that decide without a role session (`code`
//! nodes run in the sandbox, `super::code`), to the next node a lane holds.
//!
//! **The walk.** From node `from` the edge taken is the one whose `condition` is the outcome
//! (`success`, `failure`, `outcome:<x>`), else one without a condition; `rework` edges are
//! not followed (rework is the verdict's, `super::Runner::verdict`). Passed through: `start`,
//! `parse-steps` (the steps were parsed when PROMPT.md was saved) and `notify` (the Board
//! shows the move; no notification is sent) — each by its `success` edge; a `code` node by the
//! edge its result names. It stops at the first node that is a stage: a prompt/script node
//! by its seam (`planning`, `execute`/`step-execute`, `review`, `merge`), `foreach` (drafting),
//! `step-review` (review), `merge-gate`/`merge-attempt` (merge), `end` (done). Any other node
//! (`hold`, `ask-user`, `gate`, …) holds the task for the author: nbook's runner does not run
//! those kinds. A walk of more than [`MAX_HOPS`] nodes is refused (a loop of code nodes).
//!
//! The scheduler walks at three points: promotion (from the `planning` node, `success`), the
//! executor's end once `fn_task_done` moved the task to review (from the drafting node,
//! `success`), and an APPROVE verdict (from the `review` node, `outcome:approve`). A workflow
//! without that node, or without an edge from it, keeps the plain lifecycle.

use super::code::{CodeError, CodeResult};
use crate::board::workflow::ir::IrNode;
use crate::board::workflow::Workflow;

pub const MAX_HOPS: usize = 32;

/// The stage a walk ends at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Planning,
    Drafting,
    Review,
    Merge,
    Done,
    /// A node nbook's runner does not run: the task waits for the author there.
    Hold(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub target: Target,
    /// The node the walk ended at.
    pub node: String,
    /// One line per code node run on the way (`code node 'x': outcome y (value …)`).
    pub via: Vec<String>,
}

/// The node a walk point starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkFrom {
    Planning,
    Drafting,
    Review,
}

fn start_node(wf: &Workflow, from: WalkFrom) -> Option<&IrNode> {
    wf.ir.nodes.iter().find(|n| match from {
        WalkFrom::Planning => n.seam() == Some("planning"),
        WalkFrom::Drafting => {
            n.kind == "foreach" || matches!(n.seam(), Some("execute" | "step-execute"))
        }
        WalkFrom::Review => n.seam() == Some("review") || n.kind == "step-review",
    })
}

/// Whether the workflow has a code node at all (the scheduler runs walks that may execute
/// code off its tick).
pub fn has_code(wf: &Workflow) -> bool {
    wf.ir.nodes.iter().any(|n| n.kind == "code")
}

fn edge<'a>(wf: &'a Workflow, from: &str, condition: &str) -> Option<&'a str> {
    let out = || {
        wf.ir
            .edges
            .iter()
            .filter(|e| e.from == from && !e.is_rework())
    };
    out()
        .find(|e| e.condition.as_deref() == Some(condition))
        .or_else(|| out().find(|e| e.condition.is_none()))
        .map(|e| e.to.as_str())
}

fn stage_of(n: &IrNode) -> Option<Target> {
    Some(match (n.kind.as_str(), n.seam()) {
        ("prompt" | "script", Some("planning")) => Target::Planning,
        ("prompt" | "script", Some("execute" | "step-execute")) | ("foreach", _) => {
            Target::Drafting
        }
        ("prompt" | "script", Some("review")) | ("step-review", _) => Target::Review,
        ("prompt" | "script", Some("merge")) | ("merge-gate" | "merge-attempt", _) => Target::Merge,
        ("end", _) => Target::Done,
        _ => return None,
    })
}

/// Walk from the `from` node with `condition`. `Ok(None)`: the workflow has no such node or
/// no edge from it (the caller keeps the plain lifecycle). `Err`: why the task must wait for
/// the author (a code node failed, or its outcome has no edge).
pub fn walk(
    wf: &Workflow,
    from: WalkFrom,
    condition: &str,
    run: &mut dyn FnMut(&IrNode) -> Result<CodeResult, CodeError>,
) -> Result<Option<Route>, String> {
    let Some(start) = start_node(wf, from) else {
        return Ok(None);
    };
    let Some(mut at) = edge(wf, &start.id, condition) else {
        return Ok(None);
    };
    let mut via = Vec::new();
    for _ in 0..MAX_HOPS {
        let Some(n) = wf.ir.nodes.iter().find(|n| n.id == at) else {
            return Err(format!(
                "workflow {}: an edge leads to node '{at}', which does not exist",
                wf.id
            ));
        };
        if let Some(target) = stage_of(n) {
            return Ok(Some(Route {
                target,
                node: n.id.clone(),
                via,
            }));
        }
        let condition = match n.kind.as_str() {
            "code" => {
                let r = run(n).map_err(|e| e.to_string())?;
                let mut line = format!("code node '{}': outcome {}", n.id, r.outcome);
                if let Some(v) = r.shown_value() {
                    line.push_str(&format!(" (value {v})"));
                }
                via.push(line);
                r.condition()
            }
            "start" | "parse-steps" | "notify" => "success".to_string(),
            kind => {
                return Ok(Some(Route {
                    target: Target::Hold(format!("{kind} node '{}'", n.id)),
                    node: n.id.clone(),
                    via,
                }))
            }
        };
        at = match edge(wf, &n.id, &condition) {
            Some(to) => to,
            None if n.kind == "code" => {
                return Err(format!(
                    "{}, and no edge from '{}' takes {condition}",
                    via.last().map_or("", String::as_str),
                    n.id
                ))
            }
            None => {
                return Ok(Some(Route {
                    target: Target::Hold(format!("{} node '{}' (no edge on)", n.kind, n.id)),
                    node: n.id.clone(),
                    via,
                }))
            }
        };
    }
    Err(format!(
        "workflow {}: the route passes more than {MAX_HOPS} nodes without reaching a stage",
        wf.id
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wf(nodes: serde_json::Value, edges: serde_json::Value) -> Workflow {
        let mut w = crate::board::workflow::builtin_chapter();
        w.id = "custom".into();
        w.ir.nodes = serde_json::from_value(nodes).unwrap();
        w.ir.edges = serde_json::from_value(edges).unwrap();
        w
    }

    fn never(_: &IrNode) -> Result<CodeResult, CodeError> {
        panic!("no code node here")
    }

    #[test]
    fn the_builtin_walks_to_its_next_stages() {
        let b = crate::board::workflow::builtin_chapter();
        let to = |from, cond| walk(&b, from, cond, &mut never).unwrap().map(|r| r.target);
        assert_eq!(to(WalkFrom::Planning, "success"), Some(Target::Drafting));
        assert_eq!(to(WalkFrom::Drafting, "success"), Some(Target::Review));
        assert_eq!(to(WalkFrom::Review, "outcome:approve"), Some(Target::Merge));
    }

    #[test]
    fn a_code_node_picks_the_edge_and_its_failure_is_an_error() {
        let w = wf(
            json!([
                {"id": "review", "kind": "prompt", "config": {"seam": "review"}},
                {"id": "gate", "kind": "code", "config": {"source": "x"}},
                {"id": "merge", "kind": "prompt", "config": {"seam": "merge"}},
                {"id": "again", "kind": "prompt", "config": {"seam": "execute"}},
                {"id": "ask", "kind": "ask-user"}
            ]),
            json!([
                {"from": "review", "to": "gate", "condition": "outcome:approve"},
                {"from": "gate", "to": "merge", "condition": "success"},
                {"from": "gate", "to": "again", "condition": "outcome:short"},
                {"from": "gate", "to": "ask", "condition": "outcome:unsure"}
            ]),
        );
        let with = |outcome: &'static str| {
            walk(&w, WalkFrom::Review, "outcome:approve", &mut |_| {
                Ok(CodeResult {
                    outcome: outcome.into(),
                    value: Some(json!(3)),
                    ..CodeResult::default()
                })
            })
        };
        let r = with("success").unwrap().unwrap();
        assert_eq!(r.target, Target::Merge);
        assert_eq!(r.via, ["code node 'gate': outcome success (value 3)"]);
        assert_eq!(with("short").unwrap().unwrap().target, Target::Drafting);
        assert_eq!(
            with("unsure").unwrap().unwrap().target,
            Target::Hold("ask-user node 'ask'".into())
        );
        let e = with("other").unwrap_err();
        assert!(e.contains("no edge from 'gate' takes outcome:other"), "{e}");
        let e = walk(&w, WalkFrom::Review, "outcome:approve", &mut |n| {
            Err(CodeError::TimedOut {
                node: n.id.clone(),
                ms: 1000,
            })
        })
        .unwrap_err();
        assert!(e.contains("timeoutMs (1000 ms)"), "{e}");
        // No planning node: the plain lifecycle.
        assert_eq!(
            walk(&w, WalkFrom::Planning, "success", &mut never),
            Ok(None)
        );
    }
}
