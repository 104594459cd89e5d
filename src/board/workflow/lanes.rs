//! Which column of a workflow holds each stage of the board's lifecycle — planning, drafting,
//! review, merge, done, archived — read from the workflow's nodes and column traits, so the
//! scheduler (`crate::runner`) and the board operations (`fn_task_promote`, `fn_task_done`,
//! `merge_task_draft`, …) work on any workflow's own column ids, with `builtin:chapter` as one
//! instance of the same reading.
//!
//! **How a lane is found** (first that applies):
//! - planning: the column of the prompt node with seam `planning`; else the entry column
//!   (the first `intake` column, else the first).
//! - drafting: the column of the `foreach` node, or of a prompt node with seam `execute` or
//!   `step-execute`; else a column with the `wip` trait; else a column with id `drafting`.
//! - review: the column of the prompt node with seam `review` (or a `step-review` node); else a
//!   column with `human-review`; else one with id `review`.
//! - merge: the column of the prompt node with seam `merge`; else a column with the `merge`
//!   trait; else the review lane.
//! - done: the column of the `end` node; else the first `complete` column; else `done`.
//! - archived: the first `archived` column; else `archived`.
//!
//! A lane that cannot be found keeps the built-in column id (a column the workflow does not
//! have: a move there is refused by the board, which names the workflow), so a workflow that
//! only renames some columns still runs the rest.

use super::ir::IrNode;
use super::Workflow;
use crate::board::{ARCHIVED, DONE, DRAFTING, PLANNING, REVIEW};

/// The merge stage's name in [`Lanes::stage`] (the built-in puts merge in Review).
pub const MERGE: &str = "merge";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lanes {
    pub planning: String,
    pub drafting: String,
    pub review: String,
    pub merge: String,
    pub done: String,
    pub archived: String,
}

fn node_column(wf: &Workflow, pick: impl Fn(&IrNode) -> bool) -> Option<&str> {
    wf.ir
        .nodes
        .iter()
        .filter(|n| pick(n))
        .find_map(|n| n.column.as_deref())
        .filter(|c| wf.column(c).is_some())
}

fn trait_column<'a>(wf: &'a Workflow, name: &str) -> Option<&'a str> {
    wf.ir
        .columns
        .iter()
        .find(|c| c.has_trait(name))
        .map(|c| c.id.as_str())
}

fn id_column<'a>(wf: &'a Workflow, id: &'static str) -> Option<&'a str> {
    wf.column(id).map(|c| c.id.as_str())
}

impl Lanes {
    pub fn of(wf: &Workflow) -> Lanes {
        let seam = |s: &'static str| move |n: &IrNode| n.seam() == Some(s);
        let planning = node_column(wf, seam("planning")).unwrap_or_else(|| wf.entry());
        let drafting = node_column(wf, |n| {
            n.kind == "foreach" || matches!(n.seam(), Some("execute" | "step-execute"))
        })
        .or_else(|| trait_column(wf, "wip"))
        .or_else(|| id_column(wf, DRAFTING))
        .unwrap_or(DRAFTING);
        let review = node_column(wf, |n| {
            n.seam() == Some("review") || n.kind == "step-review"
        })
        .or_else(|| trait_column(wf, "human-review"))
        .or_else(|| id_column(wf, REVIEW))
        .unwrap_or(REVIEW);
        let merge = node_column(wf, seam("merge"))
            .or_else(|| trait_column(wf, "merge"))
            .unwrap_or(review);
        let done = node_column(wf, |n| n.kind == "end")
            .or_else(|| trait_column(wf, "complete"))
            .unwrap_or(DONE);
        let archived = trait_column(wf, "archived").unwrap_or(ARCHIVED);
        Lanes {
            planning: planning.into(),
            drafting: drafting.into(),
            review: review.into(),
            merge: merge.into(),
            done: done.into(),
            archived: archived.into(),
        }
    }

    /// The lanes of `builtin:chapter` (its column ids are the built-in stage names).
    pub fn builtin() -> Lanes {
        Lanes::of(&super::builtin_chapter())
    }

    /// The lifecycle stage `column` is, by its built-in name (`planning`, `drafting`,
    /// `review`, `done`, `archived`; the merge lane counts as `review` when it is its own
    /// column), or `None` for a column that is no stage (the runner leaves tasks there alone).
    pub fn stage(&self, column: &str) -> Option<&'static str> {
        if column == self.archived {
            Some(ARCHIVED)
        } else if column == self.done {
            Some(DONE)
        } else if column == self.review || column == self.merge {
            Some(REVIEW)
        } else if column == self.drafting {
            Some(DRAFTING)
        } else if column == self.planning {
            Some(PLANNING)
        } else {
            None
        }
    }

    /// The column of the built-in stage name `stage` (`merge` included).
    pub fn column<'a>(&'a self, stage: &'a str) -> &'a str {
        match stage {
            PLANNING => &self.planning,
            DRAFTING => &self.drafting,
            REVIEW => &self.review,
            MERGE => &self.merge,
            DONE => &self.done,
            ARCHIVED => &self.archived,
            other => other,
        }
    }

    pub fn finished(&self, column: &str) -> bool {
        column == self.done || column == self.archived
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wf(v: serde_json::Value) -> Workflow {
        let mut w = super::super::builtin_chapter();
        w.id = "custom".into();
        w.builtin = false;
        w.ir = serde_json::from_value(v).expect("ir");
        w
    }

    #[test]
    fn the_builtin_lanes_are_its_column_ids() {
        let l = Lanes::builtin();
        assert_eq!(
            (
                l.planning.as_str(),
                l.drafting.as_str(),
                l.review.as_str(),
                l.merge.as_str(),
                l.done.as_str(),
                l.archived.as_str()
            ),
            (PLANNING, DRAFTING, REVIEW, REVIEW, DONE, ARCHIVED)
        );
        assert_eq!(l.stage("review"), Some(REVIEW));
        assert_eq!(l.stage("elsewhere"), None);
    }

    #[test]
    fn custom_column_ids_come_from_nodes_then_traits() {
        let by_nodes = wf(json!({
            "version": "v2", "name": "Scenes",
            "columns": [
                {"id": "outline", "name": "Outline", "traits": [{"trait": "intake"}]},
                {"id": "draft", "name": "Draft"},
                {"id": "edit", "name": "Edit"},
                {"id": "publish", "name": "Publish"},
                {"id": "shelf", "name": "Shelf", "traits": [{"trait": "complete"}]}
            ],
            "nodes": [
                {"id": "plan", "kind": "prompt", "column": "outline", "config": {"seam": "planning"}},
                {"id": "write", "kind": "prompt", "column": "draft", "config": {"seam": "execute"}},
                {"id": "review", "kind": "prompt", "column": "edit", "config": {"seam": "review"}},
                {"id": "merge", "kind": "prompt", "column": "publish", "config": {"seam": "merge"}},
                {"id": "end", "kind": "end", "column": "shelf"}
            ],
            "edges": []
        }));
        let l = Lanes::of(&by_nodes);
        assert_eq!(
            [&l.planning, &l.drafting, &l.review, &l.merge, &l.done],
            ["outline", "draft", "edit", "publish", "shelf"]
        );
        assert_eq!(l.stage("publish"), Some(REVIEW));
        assert_eq!(l.archived, ARCHIVED, "no archived column: the built-in id");

        let by_traits = wf(json!({
            "version": "v2", "name": "Traits",
            "columns": [
                {"id": "ideas", "name": "Ideas", "traits": [{"trait": "intake"}]},
                {"id": "writing", "name": "Writing", "traits": [{"trait": "wip"}]},
                {"id": "reading", "name": "Reading", "traits": [{"trait": "human-review"}, {"trait": "merge"}]},
                {"id": "finished", "name": "Finished", "traits": [{"trait": "complete"}]},
                {"id": "attic", "name": "Attic", "traits": [{"trait": "archived"}]}
            ],
            "nodes": [], "edges": []
        }));
        let l = Lanes::of(&by_traits);
        assert_eq!(
            [
                &l.planning,
                &l.drafting,
                &l.review,
                &l.merge,
                &l.done,
                &l.archived
            ],
            ["ideas", "writing", "reading", "reading", "finished", "attic"]
        );
    }
}
