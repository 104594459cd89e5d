//! Task documents (`fn_task_document_write`, `fn_task_document_read`) and goals
//! (`fn_goal_list`, `fn_goal_show`). Document writes are compare-and-swap
//! (`crate::board::docs`); a lost race is the error result `TASK_DOCUMENT_PRECONDITION_FAILED`
//! with the current revision and hash in its details — also when it is lost between the
//! approval preview and the write.

use rusqlite::Connection;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{board, err, preview_op, read_output, run_op, task_of};
use crate::board::docs::{self as bd, Write};
use crate::board::goals::{self as bg, GoalFilter};
use crate::board::{BoardError, BoardResult, Outcome};
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::Preview;

const BOARD: Effects = {
    use crate::engine::tool::Domain::*;
    Effects::touches(&[Board])
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocWriteArgs {
    /// 1–64 characters of A-Z a-z 0-9 _ -.
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[A-Za-z0-9_-]+$"))]
    pub key: String,
    pub content: String,
    /// Default "agent".
    pub author: Option<String>,
    /// 0 = the document must not exist yet; n = it must be at revision n.
    pub expected_revision: Option<u64>,
    /// sha256:<64 lowercase hex> of the current content's UTF-8 bytes.
    #[schemars(regex(pattern = r"^sha256:[0-9a-f]{64}$"))]
    pub expected_content_hash: Option<String>,
    /// Required in chat and planning sessions; default this session's task.
    pub task_id: Option<String>,
}

pub struct TaskDocumentWrite;

impl TaskDocumentWrite {
    fn op<'a>(
        ctx: &'a ToolCtx,
        a: &'a DocWriteArgs,
        task: &'a str,
    ) -> impl Fn(&Connection) -> BoardResult<Outcome> + 'a {
        let project = ctx.workspace.name().to_string();
        move |c: &Connection| {
            bd::write(
                c,
                &project,
                task,
                &Write {
                    key: a.key.clone(),
                    content: a.content.clone(),
                    author: a.author.clone().unwrap_or_else(|| "agent".into()),
                    expected_revision: a.expected_revision,
                    expected_content_hash: a.expected_content_hash.clone(),
                },
            )
        }
    }
}

impl TypedTool for TaskDocumentWrite {
    type Args = DocWriteArgs;
    const NAME: &'static str = "fn_task_document_write";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Save a named task document as a new revision (every write keeps the prior revision). Compare-and-swap: expected_revision 0 = must not exist yet, n = must be at revision n; expected_content_hash = sha256:<64 lowercase hex> of the current UTF-8 content; both given, both must match. A mismatch is an error result with details {code: TASK_DOCUMENT_PRECONDITION_FAILED, projectId, taskId, key, expectedRevision, expectedContentHash, currentRevision, currentContentHash} (never the content): read it again and retry. Success details {key, revision, contentHash}. Chat and planning sessions must pass task_id.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = BOARD;
    fn write_targets(&self, ctx: &ToolCtx, a: &DocWriteArgs) -> Vec<String> {
        task_of(ctx, a.task_id.as_deref())
            .map(|t| vec![format!("board/{t}/documents/{}", a.key)])
            .unwrap_or_default()
    }
    fn preview(&self, ctx: &ToolCtx, a: &DocWriteArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let t = task_of(ctx, a.task_id.as_deref())?;
        let mut p = preview_op(Self::NAME, &board(ctx), Self::op(ctx, a, &t))?;
        // With a compare-and-swap the write checks its own precondition when it runs (and a
        // loser gets the typed error); only a blind write is made stale by a change since.
        if a.expected_revision.is_some() || a.expected_content_hash.is_some() {
            p.targets.retain(|s| !s.key.starts_with("board/document/"));
        }
        Ok(p)
    }
    fn run(&self, ctx: &ToolCtx, a: &DocWriteArgs) -> Result<ToolOutput, ToolError> {
        let t = task_of(ctx, a.task_id.as_deref())?;
        run_op(&board(ctx), Self::op(ctx, a, &t))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocReadArgs {
    /// Omit to list the task's documents.
    pub key: Option<String>,
    /// Required in chat and planning sessions; default this session's task.
    pub task_id: Option<String>,
}

pub struct TaskDocumentRead;

impl TypedTool for TaskDocumentRead {
    type Args = DocReadArgs;
    const NAME: &'static str = "fn_task_document_read";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Read one task document (content, revision, contentHash — pass them back as expected_revision / expected_content_hash to write safely) or, without key, list the task's documents (key, revision, contentHash, size). Chat and planning sessions must pass task_id.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = BOARD;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &DocReadArgs) -> Result<ToolOutput, ToolError> {
        let t = task_of(ctx, a.task_id.as_deref())?;
        let b = board(ctx);
        match &a.key {
            Some(key) => {
                let doc = b
                    .read(|c| {
                        bd::check_key(key)?;
                        crate::board::tasks::require(c, &t)?;
                        bd::load(c, &t, key)?.ok_or_else(|| BoardError::DocumentNotFound {
                            task_id: t.clone(),
                            key: key.clone(),
                        })
                    })
                    .map_err(err)?;
                let text = format!(
                    "{}/{} revision {} ({}):\n{}",
                    t, doc.key, doc.revision, doc.content_hash, doc.content
                );
                Ok(read_output(text, json!(doc)))
            }
            None => {
                let list = b
                    .read(|c| {
                        crate::board::tasks::require(c, &t)?;
                        bd::list(c, &t)
                    })
                    .map_err(err)?;
                let text = if list.is_empty() {
                    format!("{t} has no documents yet.")
                } else {
                    list.iter()
                        .map(|d| {
                            format!(
                                "- {} revision {} ({}, {} bytes)",
                                d.key, d.revision, d.content_hash, d.size
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                };
                Ok(read_output(text, json!({"taskId": t, "documents": list})))
            }
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalListArgs {
    /// active (default) | archived | all.
    pub status: Option<GoalFilter>,
}

pub struct GoalList;

impl TypedTool for GoalList {
    type Args = GoalListArgs;
    const NAME: &'static str = "fn_goal_list";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "List the book's goals with citation-ready snippets (80 characters). details {goals: [{id, title, status, snippet}], activeCount, softWarning (a sentence from 3 active goals, else null), hardLimit 5}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = BOARD;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &GoalListArgs) -> Result<ToolOutput, ToolError> {
        let v = board(ctx)
            .read(|c| bg::list(c, a.status.unwrap_or(GoalFilter::Active)))
            .map_err(err)?;
        let mut text: Vec<String> = v["goals"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|g| {
                format!(
                    "- {} {} [{}]: {}",
                    g["id"].as_str().unwrap_or(""),
                    g["title"].as_str().unwrap_or(""),
                    g["status"].as_str().unwrap_or(""),
                    g["snippet"].as_str().unwrap_or("")
                )
            })
            .collect();
        if text.is_empty() {
            text.push("No goals.".into());
        }
        if let Some(w) = v["softWarning"].as_str() {
            text.push(format!("Warning: {w}"));
        }
        Ok(read_output(text.join("\n"), v))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalShowArgs {
    #[schemars(length(min = 1))]
    pub id: String,
}

pub struct GoalShow;

impl TypedTool for GoalShow {
    type Args = GoalShowArgs;
    const NAME: &'static str = "fn_goal_show";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Show one goal in full, including its description. details {goal}; an unknown id is an error result GOAL_NOT_FOUND.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = BOARD;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &GoalShowArgs) -> Result<ToolOutput, ToolError> {
        let g = board(ctx)
            .read(|c| bg::require(c, a.id.trim()))
            .map_err(err)?;
        let text = format!("{} — {} [{}]\n\n{}", g.id, g.title, g.status, g.description);
        Ok(read_output(text, json!({"goal": g})))
    }
}
