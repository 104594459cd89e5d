//! The author's Story-pane changes as tool calls: `delete_story_node`, the hard delete with its
//! cascade (declared author-only: the engine refuses it for every agent, whatever a profile
//! lists), and the mapping of the pane's edit, archive and delete to calls — an edit is the
//! record's `save_story_*` `update` with only the changed keys; archive is NeuroBook's soft
//! delete per kind (thread and scene `archive`, promise `abandon`, decision `drop` with its
//! note); delete is `delete_story_node`. Tool names stay here, beside the tools.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::engine::tool::{Domain, Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{Preview, PreviewBody};
use crate::plot::ledger::NodeRef;
use crate::plot::wire::PlotId;
use crate::plot::{resolve_target, PlotDb};

/// A Story-pane change that has no tool call (shown to the author as is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoryCallError {
    #[error(
        "the story and its phases have no save tool; edit project.yaml or the phase's threads"
    )]
    NoSaveTool,
    #[error("an edit is one JSON object of changed fields")]
    NotAnObject,
    #[error("only threads and scenes (archive), promises (abandon) and decisions (drop) have a soft delete; acts and chapters can only be deleted")]
    NoSoftDelete,
    #[error("only acts, chapters, threads, scenes, promises and decisions can be deleted; delete or move a phase's threads")]
    NotDeletable,
}

/// A tool call the author's change becomes.
#[derive(Clone, Debug, PartialEq)]
pub struct StoryCall {
    pub tool: &'static str,
    pub args: Value,
}

/// The `save_story_*` tool of a kind and the argument naming the record.
fn save_tool(node: NodeRef) -> Result<(&'static str, &'static str, i64), StoryCallError> {
    Ok(match node {
        NodeRef::Act(id) => ("save_story_act", "actId", id),
        NodeRef::Chapter(id) => ("save_story_chapter", "chapterId", id),
        NodeRef::Thread(id) => ("save_story_thread", "threadId", id),
        NodeRef::Scene(id) => ("save_story_scene", "sceneId", id),
        NodeRef::Promise(id) => ("save_story_promise", "promiseId", id),
        NodeRef::Decision(id) => ("save_story_decision", "decisionId", id),
        NodeRef::Story | NodeRef::Phase(_) => return Err(StoryCallError::NoSaveTool),
    })
}

/// An edit: the record's `update` with the changed keys (`null` clears, absent keeps).
pub fn update_call(node: NodeRef, changed: &Value) -> Result<StoryCall, StoryCallError> {
    let (tool, key, id) = save_tool(node)?;
    let Value::Object(fields) = changed else {
        return Err(StoryCallError::NotAnObject);
    };
    let mut args = Map::new();
    args.insert("action".into(), json!("update"));
    args.insert(key.into(), json!(id));
    args.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
    Ok(StoryCall {
        tool,
        args: Value::Object(args),
    })
}

/// The soft delete of a kind: thread and scene `archive`, promise `abandon`, decision `drop`
/// (the note says why; NeuroBook requires one).
pub fn archive_call(node: NodeRef, note: Option<&str>) -> Result<StoryCall, StoryCallError> {
    let action = match node {
        NodeRef::Thread(_) | NodeRef::Scene(_) => "archive",
        NodeRef::Promise(_) => "abandon",
        NodeRef::Decision(_) => "drop",
        _ => return Err(StoryCallError::NoSoftDelete),
    };
    let (tool, key, id) = save_tool(node)?;
    let mut args = Map::new();
    args.insert("action".into(), json!(action));
    args.insert(key.into(), json!(id));
    if let Some(n) = note.map(str::trim).filter(|n| !n.is_empty()) {
        args.insert("note".into(), json!(n));
    }
    Ok(StoryCall {
        tool,
        args: Value::Object(args),
    })
}

/// The hard delete of a record with its cascade.
pub fn delete_call(node: NodeRef) -> Result<StoryCall, StoryCallError> {
    let (kind, id) = Kind::of(node)?;
    Ok(StoryCall {
        tool: DeleteStoryNode::NAME,
        args: json!({"kind": kind, "id": id}),
    })
}

/// The kinds of record `delete_story_node` deletes, as its `kind` argument names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Act,
    Chapter,
    Thread,
    Scene,
    Promise,
    Decision,
}

impl Kind {
    /// The kind and id of a deletable record.
    fn of(node: NodeRef) -> Result<(Kind, i64), StoryCallError> {
        Ok(match node {
            NodeRef::Act(id) => (Kind::Act, id),
            NodeRef::Chapter(id) => (Kind::Chapter, id),
            NodeRef::Thread(id) => (Kind::Thread, id),
            NodeRef::Scene(id) => (Kind::Scene, id),
            NodeRef::Promise(id) => (Kind::Promise, id),
            NodeRef::Decision(id) => (Kind::Decision, id),
            NodeRef::Story | NodeRef::Phase(_) => return Err(StoryCallError::NotDeletable),
        })
    }

    fn node(self, id: i64) -> NodeRef {
        match self {
            Kind::Act => NodeRef::Act(id),
            Kind::Chapter => NodeRef::Chapter(id),
            Kind::Thread => NodeRef::Thread(id),
            Kind::Scene => NodeRef::Scene(id),
            Kind::Promise => NodeRef::Promise(id),
            Kind::Decision => NodeRef::Decision(id),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// What kind of record
    kind: Kind,
    /// The record's id
    id: PlotId,
}

impl DeleteArgs {
    fn node(&self) -> NodeRef {
        self.kind.node(self.id.get())
    }
}

fn plot_db(ctx: &ToolCtx) -> Result<PlotDb, ToolError> {
    let target =
        resolve_target(&ctx.workspace, None).map_err(|e| ToolError::failed(e.to_string()))?;
    Ok(PlotDb::for_target(&target))
}

/// Hard delete of a story record and what cascades with it (author only).
pub struct DeleteStoryNode;

impl TypedTool for DeleteStoryNode {
    type Args = DeleteArgs;
    const NAME: &'static str = "delete_story_node";
    const GROUP: &'static str = "plot";
    const DESCRIPTION: &'static str = "Delete a story record for good, with its cascade: a thread takes its scenes, their beats and refs; a scene its beats and refs; a promise its beats; a chapter unplaces its scenes and clears promise deadlines; an act ungroups its chapters; decision anchors on it read as story; promises paid off only there reopen. The author only; agents archive, abandon or drop instead.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = Effects::touches(&[Domain::Plot]).author_only(
        "the author deletes story records from the Story pane (D); agents cannot hard-delete plot data: archive, abandon or drop instead",
    );

    fn write_targets(&self, _ctx: &ToolCtx, args: &DeleteArgs) -> Vec<String> {
        vec![format!("plot/delete {:?}", args.node())]
    }
    /// The cascade summary (what goes, what is detached, which promises reopen), computed by
    /// the delete itself in a transaction that is rolled back; its targets fingerprint every
    /// record the delete touches.
    fn preview(
        &self,
        ctx: &ToolCtx,
        args: &DeleteArgs,
        _raw: &Value,
    ) -> Result<Preview, ToolError> {
        let node = args.node();
        let out = plot_db(ctx)?
            .dry_run(|p| p.hard_delete(node))
            .map_err(|e| ToolError::failed(format!("{e} (nothing was changed)")))?;
        let more = out.changes.len().saturating_sub(1);
        Ok(Preview {
            summary: format!(
                "delete_story_node: delete {} (+{more} more record{})",
                out.value.target,
                if more == 1 { "" } else { "s" }
            ),
            body: PreviewBody::Text {
                text: out.value.lines().join("\n"),
            },
            targets: out.targets,
        })
    }
    fn run(&self, ctx: &ToolCtx, args: &DeleteArgs) -> Result<ToolOutput, ToolError> {
        let node = args.node();
        let out = plot_db(ctx)?
            .commit(|p| p.hard_delete(node))
            .map_err(|e| ToolError::failed(format!("{e} (nothing was changed)")))?;
        // The log keeps every deleted record's fields: the only trace of them afterwards.
        let details = json!({
            "deleted": out.value.target,
            "cascade": out.value,
            "changes": out.changes,
        });
        Ok(ToolOutput {
            content: format!(
                "deleted {} and {} more record change(s)",
                out.value.target,
                out.changes.len().saturating_sub(1)
            ),
            details: Some(details),
            ..ToolOutput::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_map_to_the_tools_and_their_actions() {
        let c = update_call(NodeRef::Scene(5), &json!({"title": "T", "threadId": 2})).unwrap();
        assert_eq!(c.tool, "save_story_scene");
        assert_eq!(
            c.args,
            json!({"action": "update", "sceneId": 5, "title": "T", "threadId": 2})
        );
        let a = archive_call(NodeRef::Decision(3), Some(" moot ")).unwrap();
        assert_eq!(a.tool, "save_story_decision");
        assert_eq!(
            a.args,
            json!({"action": "drop", "decisionId": 3, "note": "moot"})
        );
        assert_eq!(
            archive_call(NodeRef::Promise(1), None).unwrap().args,
            json!({"action": "abandon", "promiseId": 1})
        );
        assert!(archive_call(NodeRef::Act(1), None).is_err());
        assert_eq!(
            delete_call(NodeRef::Thread(4)).unwrap().args,
            json!({"kind": "thread", "id": 4})
        );
        assert!(delete_call(NodeRef::Phase(1)).is_err());
        let args: DeleteArgs =
            crate::engine::typed::parse_args(&json!({"kind": "scene", "id": "7"})).unwrap();
        assert_eq!(args.node(), NodeRef::Scene(7));
        let bad =
            crate::engine::typed::parse_args::<DeleteArgs>(&json!({"kind": "phase", "id": 1}));
        assert_eq!(bad.unwrap_err().pointer, "/kind");
    }
}
