//! The author's goal changes from the Board: `fn_goal_create` (title, description) and
//! `fn_goal_archive` (archive or unarchive). Author-only, like `fn_task_move`: agents read
//! goals (`fn_goal_list`, `fn_goal_show`) but never set them. At most
//! [`crate::board::goals::ACTIVE_GOAL_LIMIT`] goals are active; a sixth (created or
//! unarchived) is the error result `ACTIVE_GOAL_LIMIT_EXCEEDED` and nothing changes.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{board, preview_op, run_op};
use crate::board::goals as bg;
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::Preview;

const AUTHOR_BOARD: Effects = {
    use crate::engine::tool::Domain::*;
    Effects::touches(&[Board]).author_only(
        "the author sets the book's goals on the Board (o new goal, O the goals); read them with fn_goal_list",
    )
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalCreateArgs {
    /// e.g. "First draft of act 2 by March".
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    pub description: Option<String>,
}

pub struct GoalCreate;

impl TypedTool for GoalCreate {
    type Args = GoalCreateArgs;
    const NAME: &'static str = "fn_goal_create";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "The author's new book goal from the Board (active, G-001, …). An empty title (INVALID_ARGUMENT) or a sixth active goal (ACTIVE_GOAL_LIMIT_EXCEEDED: archive one first) is an error result; nothing changes. Given only to the author.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = AUTHOR_BOARD;
    fn write_targets(&self, _ctx: &ToolCtx, _a: &GoalCreateArgs) -> Vec<String> {
        vec!["board/goals".into()]
    }
    fn preview(
        &self,
        ctx: &ToolCtx,
        a: &GoalCreateArgs,
        _raw: &Value,
    ) -> Result<Preview, ToolError> {
        let d = a.description.clone().unwrap_or_default();
        preview_op(Self::NAME, &board(ctx), |c: &rusqlite::Connection| {
            bg::create(c, &a.title, &d)
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &GoalCreateArgs) -> Result<ToolOutput, ToolError> {
        let d = a.description.clone().unwrap_or_default();
        run_op(&board(ctx), |c: &rusqlite::Connection| {
            bg::create(c, &a.title, &d)
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalArchiveArgs {
    /// e.g. G-001.
    #[schemars(length(min = 1, max = 64))]
    pub goal_id: String,
    /// true archives, false makes it active again.
    pub archived: bool,
}

pub struct GoalArchive;

impl TypedTool for GoalArchive {
    type Args = GoalArchiveArgs;
    const NAME: &'static str = "fn_goal_archive";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "The author's archive (archived: true) or unarchive (false) of a book goal from the Board. An unknown goal (GOAL_NOT_FOUND) or unarchiving into a sixth active goal (ACTIVE_GOAL_LIMIT_EXCEEDED) is an error result; nothing changes. Given only to the author.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = AUTHOR_BOARD;
    fn write_targets(&self, _ctx: &ToolCtx, a: &GoalArchiveArgs) -> Vec<String> {
        vec![format!("board/goals/{}", a.goal_id.trim())]
    }
    fn preview(
        &self,
        ctx: &ToolCtx,
        a: &GoalArchiveArgs,
        _raw: &Value,
    ) -> Result<Preview, ToolError> {
        let id = a.goal_id.trim();
        preview_op(Self::NAME, &board(ctx), |c: &rusqlite::Connection| {
            bg::set_archived(c, id, a.archived)
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &GoalArchiveArgs) -> Result<ToolOutput, ToolError> {
        let id = a.goal_id.trim();
        run_op(&board(ctx), |c: &rusqlite::Connection| {
            bg::set_archived(c, id, a.archived)
        })
    }
}
