//! The column trait catalogue (`fn_trait_list`): Fusion's built-in traits (fusion-notes §4),
//! each with what it means for a book's board and the config keys it reads. nbook has no
//! plugins, so this is the whole catalogue and a column naming anything else is refused
//! (`column-traits`).

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TraitInfo {
    #[serde(rename = "trait")]
    pub name: &'static str,
    pub description: &'static str,
    /// Config keys the trait reads (empty: none).
    pub config_keys: &'static [&'static str],
}

pub const TRAITS: &[TraitInfo] = &[
    TraitInfo {
        name: "intake",
        description: "New tasks land here (the workflow's entry column).",
        config_keys: &[],
    },
    TraitInfo {
        name: "complete",
        description: "Finished work: a task here counts as done for its dependants.",
        config_keys: &[],
    },
    TraitInfo {
        name: "archived",
        description: "Archived tasks: read-only, off the active board.",
        config_keys: &[],
    },
    TraitInfo {
        name: "merge-blocker",
        description: "A task here blocks the merge of its draft until it leaves.",
        config_keys: &[],
    },
    TraitInfo {
        name: "wip",
        description: "Limits how many tasks work here at once.",
        config_keys: &["limitSetting", "countPending"],
    },
    TraitInfo {
        name: "hold",
        description:
            "Tasks wait here until released (manual, timer, capacity, dependency, external-event).",
        config_keys: &["release"],
    },
    TraitInfo {
        name: "human-review",
        description: "The author reviews work here.",
        config_keys: &[],
    },
    TraitInfo {
        name: "gate",
        description: "A task leaves only when the column's gate passes.",
        config_keys: &[],
    },
    TraitInfo {
        name: "merge",
        description: "The draft is merged into the manuscript from here.",
        config_keys: &[],
    },
    TraitInfo {
        name: "abort-on-exit",
        description: "Leaving the column stops the task's running session.",
        config_keys: &[],
    },
    TraitInfo {
        name: "reset-on-entry",
        description: "Entering the column resets the task's step progress.",
        config_keys: &[],
    },
    TraitInfo {
        name: "timing",
        description: "Time spent in the column is recorded.",
        config_keys: &[],
    },
    TraitInfo {
        name: "stall-detection",
        description: "A task that sits here too long is surfaced.",
        config_keys: &["stalenessMs"],
    },
    TraitInfo {
        name: "notify",
        description: "Entering the column notifies the author.",
        config_keys: &["event"],
    },
];

pub fn find(name: &str) -> Option<&'static TraitInfo> {
    TRAITS.iter().find(|t| t.name == name)
}
