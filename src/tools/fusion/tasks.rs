//! Task tools: `fn_task_create`, `fn_task_list`, `fn_task_search`, `fn_task_show`,
//! `fn_task_update`, `fn_task_add_dep`, `fn_task_done`, `fn_task_log`, `fn_task_logs_read`,
//! `fn_task_prompt_write`, `fn_task_promote`, `fn_task_file_scope_add`; the author's `fn_task_move`,
//! `fn_task_pause`, `fn_task_steer`, `fn_task_approve_plan`, `fn_task_reject_plan`. Names, parameters and
//! behaviour follow seeds/fusion-engine-tools.txt and reference/fusion-notes.md; the column
//! rules are `crate::board::tasks`'s.

use std::collections::BTreeMap;

use rusqlite::Connection;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{actor, board, err, preview_op, read_output, run_op, task_of};
use crate::board::repository_scope as scope;
use crate::board::tasks::{self as bt, Done, DoneOutcome, NewTask, Search, Update};
use crate::board::{docs as bd, BoardResult, Outcome, Priority, StepStatus};
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::Preview;

const READS: Effects = {
    use crate::engine::tool::Domain::*;
    Effects::touches(&[Board])
};
const WRITES: Effects = READS;
/// A call that ends the executor's work on its task (the run stops after it).
const ENDS: Effects = READS.ends_run();

/// A mutating board tool: its task (for grants and the log) and its change.
macro_rules! write_tool {
    ($ty:ident, $name:literal, $args:ty, $effects:expr, $desc:expr) => {
        pub struct $ty;
        impl TypedTool for $ty {
            type Args = $args;
            const NAME: &'static str = $name;
            const GROUP: &'static str = "board";
            const DESCRIPTION: &'static str = $desc;
            const MUTATES: Mutates = Mutates::Yes;
            const EFFECTS: Effects = $effects;
            fn write_targets(&self, ctx: &ToolCtx, a: &$args) -> Vec<String> {
                $ty::task(ctx, a)
                    .map(|t| vec![format!("board/{t}")])
                    .unwrap_or_default()
            }
            fn preview(
                &self,
                ctx: &ToolCtx,
                a: &$args,
                _raw: &Value,
            ) -> Result<Preview, ToolError> {
                let t = $ty::task(ctx, a)?;
                let who = actor(ctx);
                preview_op($name, &board(ctx), |c: &Connection| $ty::op(c, a, &t, &who))
            }
            fn run(&self, ctx: &ToolCtx, a: &$args) -> Result<ToolOutput, ToolError> {
                let t = $ty::task(ctx, a)?;
                let who = actor(ctx);
                run_op(&board(ctx), |c: &Connection| $ty::op(c, a, &t, &who))
            }
        }
    };
}

// ---- fn_task_create ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// What the task is for; its first line becomes the title.
    #[schemars(length(min = 1, max = 20000))]
    pub description: String,
    /// Ids of tasks this one waits for.
    pub dependencies: Option<Vec<String>>,
    pub priority: Option<Priority>,
    /// Default builtin:chapter.
    pub workflow_id: Option<String>,
    /// Series workspace mode: the books of the series (folder names) the task will work in,
    /// declared up front; this book is implied. Outside workspace mode an error result.
    pub repository_scope: Option<Vec<String>>,
}

/// `fn_task_create` is written out (not `write_tool!`): its declared repository scope is
/// checked against the series on disk before the board transaction starts.
pub struct TaskCreate;

impl TypedTool for TaskCreate {
    type Args = CreateArgs;
    const NAME: &'static str = "fn_task_create";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Create a follow-up task on the book's board (column Planning of its workflow, default builtin:chapter). Duplicate detection: when a task that is not archived already has the same description (case and spacing aside), it is linked instead (details.wasDuplicate true, details.taskId the existing task) and nothing new is created. In series workspace mode, repository_scope lists the books of the series (folder names) the task will work in (this book is implied; duplicates are folded); the executor is told to acquire them with fn_acquire_repo_worktree. details {taskId, wasDuplicate, task, repositoryScope}. Unknown dependencies or workflows, repository_scope outside workspace mode (WORKSPACE_MODE_REQUIRED) and an unknown book (UNKNOWN_REPO, details.available) are error results; nothing is created.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = WRITES;
    fn write_targets(&self, _: &ToolCtx, _: &CreateArgs) -> Vec<String> {
        vec!["board/new-task".to_string()]
    }
    fn preview(&self, ctx: &ToolCtx, a: &CreateArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let books = TaskCreate::scope(ctx, a)?;
        let who = actor(ctx);
        preview_op("fn_task_create", &board(ctx), |c: &Connection| {
            TaskCreate::op(c, a, &books, &who)
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &CreateArgs) -> Result<ToolOutput, ToolError> {
        let books = TaskCreate::scope(ctx, a)?;
        let who = actor(ctx);
        run_op(&board(ctx), |c: &Connection| {
            TaskCreate::op(c, a, &books, &who)
        })
    }
}

impl TaskCreate {
    /// The declared repository scope, checked against this book's series.
    fn scope(ctx: &ToolCtx, a: &CreateArgs) -> Result<Vec<String>, ToolError> {
        let names = a.repository_scope.clone().unwrap_or_default();
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let s = super::series::series_of(ctx.workspace.root()).map_err(err)?;
        scope::check_declared(Some(&scope::SeriesBooks::of(&s)), &names, "").map_err(err)
    }
    fn op(c: &Connection, a: &CreateArgs, books: &[String], who: &str) -> BoardResult<Outcome> {
        let mut out = bt::create(
            c,
            &NewTask {
                description: a.description.clone(),
                title: None,
                dependencies: a.dependencies.clone().unwrap_or_default(),
                priority: a.priority,
                workflow_id: a.workflow_id.clone(),
                actor: Some(who.to_string()),
            },
        )?;
        let id = out.value["taskId"].as_str().unwrap_or_default().to_string();
        let duplicate = out.value["wasDuplicate"].as_bool().unwrap_or(false);
        // A linked duplicate keeps its own scope: the call creates nothing.
        if !duplicate && !books.is_empty() {
            scope::declare(c, &mut out, &id, books, "create", Some(who))?;
            out.text.push_str(&format!(
                " Repository scope: this book and {}.",
                books.join(", ")
            ));
        }
        let declared: Vec<String> = scope::declared(c, &id)?
            .into_iter()
            .map(|d| d.book)
            .collect();
        out.value["repositoryScope"] = json!(declared);
        Ok(out)
    }
}

// ---- reads ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

pub struct TaskList;

impl TypedTool for TaskList {
    type Args = NoArgs;
    const NAME: &'static str = "fn_task_list";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "List the active tasks (Planning, Drafting, Review) grouped by column, for duplicate checks and discovery: id, title, status, step progress. At most 200 per column; fn_task_search narrows. details {columns: [{id, name, count, tasks}]}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = READS;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, _: &NoArgs) -> Result<ToolOutput, ToolError> {
        let (text, value) = board(ctx).read(bt::list).map_err(err)?;
        Ok(read_output(text, value))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words that must all appear in the task's id, title or description (any case).
    #[schemars(length(min = 1, max = 500))]
    pub query: String,
    /// 1–50, default 20.
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// Include Done tasks (default true).
    #[serde(rename = "includeDone")]
    pub include_done: Option<bool>,
    /// Include Archived tasks (default true).
    #[serde(rename = "includeArchived")]
    pub include_archived: Option<bool>,
}

pub struct TaskSearch;

impl TypedTool for TaskSearch {
    type Args = SearchArgs;
    const NAME: &'static str = "fn_task_search";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Keyword search over all tasks (Done and Archived included by default) for duplicate detection; newest first. details {tasks: [{id, title, column, status, priority, progress, dependencies}]}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = READS;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &SearchArgs) -> Result<ToolOutput, ToolError> {
        let s = Search {
            query: a.query.clone(),
            limit: a.limit.unwrap_or(20).clamp(1, 50) as usize,
            include_done: a.include_done.unwrap_or(true),
            include_archived: a.include_archived.unwrap_or(true),
        };
        let hits = board(ctx).read(|c| bt::search(c, &s)).map_err(err)?;
        let text = if hits.is_empty() {
            format!("No task matches '{}'.", a.query)
        } else {
            hits.iter()
                .map(|t| {
                    format!(
                        "- {} {} ({}{}, {})",
                        t.id,
                        t.title,
                        t.column,
                        if t.status.is_empty() {
                            String::new()
                        } else {
                            format!(", {}", t.status)
                        },
                        t.progress
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        Ok(read_output(text, json!({"tasks": hits})))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowArgs {
    #[schemars(length(min = 1))]
    pub id: String,
}

pub struct TaskShow;

/// The full detail of a task: the record with its PROMPT.md, its latest log entries and its
/// documents (without content).
pub fn show_value(c: &Connection, id: &str) -> BoardResult<(String, Value)> {
    let t = bt::require(c, id)?;
    let log = bt::logs(c, id, 20)?;
    let documents = bd::list(c, id)?;
    let (d, n) = t.progress();
    let mut text = format!(
        "{} — {}\nColumn: {}{} · priority {} · workflow {} · steps {d}/{n}\n",
        t.id,
        t.title,
        t.column,
        if t.status.is_empty() {
            String::new()
        } else {
            format!(" ({})", t.status)
        },
        t.priority,
        t.workflow_id
    );
    if !t.dependencies.is_empty() {
        text.push_str(&format!("Dependencies: {}\n", t.dependencies.join(", ")));
    }
    if let Some(r) = &t.blocked_reason {
        text.push_str(&format!("{r} (blocked by {})\n", t.blocked_by.join(", ")));
    }
    text.push_str(&format!("\nDescription:\n{}\n", t.description));
    for (i, s) in t.steps.iter().enumerate() {
        if i == 0 {
            text.push_str("\nSteps:\n");
        }
        text.push_str(&format!("  Step {i}: {} [{}]\n", s.name, s.status.as_str()));
    }
    match &t.prompt {
        Some(p) => text.push_str(&format!("\nPROMPT.md:\n{p}")),
        None => text.push_str("\nPROMPT.md: not written yet\n"),
    }
    // Series workspace mode: the books the task declared or acquired, so an agent reading
    // the task knows which it still has to acquire (fn_acquire_repo_worktree).
    let declared = scope::declared(c, id)?;
    let acquired = scope::list(c, id)?;
    let mut books: Vec<Value> = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    for a in &acquired {
        let was_declared = declared.iter().any(|d| d.book == a.book);
        books.push(json!({"book": a.book, "declared": was_declared, "acquired": true, "areaPath": a.area_path}));
        shown.push(format!("{} (acquired)", a.book));
    }
    for d in declared
        .iter()
        .filter(|d| !acquired.iter().any(|a| a.book == d.book))
    {
        books.push(json!({"book": d.book, "declared": true, "acquired": false, "areaPath": null}));
        shown.push(format!("{} (declared, not acquired yet)", d.book));
    }
    if !shown.is_empty() {
        text.push_str(&format!(
            "\nRepository scope: this book, {}\n",
            shown.join(", ")
        ));
    }
    let value = json!({"task": t, "log": log, "documents": documents, "repositoryScope": books});
    Ok((text, value))
}

impl TypedTool for TaskShow {
    type Args = ShowArgs;
    const NAME: &'static str = "fn_task_show";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Full detail of one task, including its PROMPT.md, steps with their status, dependencies, blockedBy, custom fields, its latest 20 log entries, its documents (keys and revisions) and, in series workspace mode, its repository scope (repositoryScope: each book declared and/or acquired). An unknown id is an error result (TASK_NOT_FOUND).";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = READS;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &ShowArgs) -> Result<ToolOutput, ToolError> {
        let (text, value) = board(ctx)
            .read(|c| show_value(c, a.id.trim()))
            .map_err(err)?;
        Ok(read_output(text, value))
    }
}

// ---- executor: fn_task_update, fn_task_add_dep, fn_task_done ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// 0-based step number, as `### Step N:` in PROMPT.md (Step 0 = Preflight).
    pub step: Option<u64>,
    pub status: Option<StepStatus>,
    /// Replaces the task's dependencies (cycles are refused).
    pub dependencies: Option<Vec<String>>,
    /// Values keyed by the workflow's field ids; null clears a field.
    pub custom_fields: Option<BTreeMap<String, Value>>,
}

write_tool!(TaskUpdate, "fn_task_update", UpdateArgs, WRITES,
    "Update this session's task: a step's status (step is 0-based as in PROMPT.md, Step 0 = Preflight; status pending | in-progress | done | skipped; needs the task in Drafting), its dependencies (replaced; unknown ids and cycles refused) and/or custom field values (validated against the workflow's fields: pov string, wordTarget number, draftStage outline|first-draft|revision|polish; null clears). Answers `Step N (name) → status. Progress a/b`. A rejected field is an error result with details.code CUSTOM_FIELD_REJECTED and details.rejection no-fields-defined | unknown-field | type-mismatch | enum-violation (Fusion answers it as plain text).");

impl TaskUpdate {
    fn task(ctx: &ToolCtx, _: &UpdateArgs) -> Result<String, ToolError> {
        task_of(ctx, None)
    }
    fn op(c: &Connection, a: &UpdateArgs, t: &str, who: &str) -> BoardResult<Outcome> {
        bt::update(
            c,
            t,
            &Update {
                step: a.step,
                status: a.status,
                dependencies: a.dependencies.clone(),
                custom_fields: a.custom_fields.clone(),
                actor: Some(who.to_string()),
            },
        )
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddDepArgs {
    /// The task this session's task must wait for.
    #[schemars(length(min = 1))]
    pub task_id: String,
    /// Must be true: the task then stops and goes back to Planning to be replanned.
    pub confirm: Option<bool>,
}

write_tool!(TaskAddDep, "fn_task_add_dep", AddDepArgs, ENDS,
    "Add a dependency to this session's task. Confirmation-gated: without confirm: true it is an error result (CONFIRM_REQUIRED) and nothing changes. With it, execution stops and the task goes back to Planning with status needs-replan; end your turn. Unknown ids and cycles are error results.");

impl TaskAddDep {
    fn task(ctx: &ToolCtx, _: &AddDepArgs) -> Result<String, ToolError> {
        task_of(ctx, None)
    }
    fn op(c: &Connection, a: &AddDepArgs, t: &str, who: &str) -> BoardResult<Outcome> {
        bt::add_dependency(c, t, &a.task_id, a.confirm == Some(true), Some(who))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneArgs {
    pub summary: Option<String>,
    /// completed (default) or blocked.
    pub outcome: Option<DoneOutcome>,
    /// Task ids that block this one (outcome blocked).
    #[serde(rename = "blockedBy")]
    pub blocked_by: Option<Vec<String>>,
    /// Required when blocked: what blocks the task.
    pub reason: Option<String>,
}

pub struct TaskDone;

impl TypedTool for TaskDone {
    type Args = DoneArgs;
    const NAME: &'static str = "fn_task_done";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "End this session's task. outcome completed (default): needs its PROMPT.md steps and every dependency Done; marks the remaining steps done and moves it to Review. outcome blocked: reason is required (an error result BLOCKED_REASON_REQUIRED without it, where Fusion answers plain text); parks it honestly with `BLOCKED: <reason>` and claims no completion: blockedBy ids (which must exist) merge into its dependencies and blockedBy becomes them; with dependencies it stays in Drafting with status failed, without any it goes back to Planning (needs-replan). Steps are kept. The run ends after it.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = ENDS;
    fn write_targets(&self, ctx: &ToolCtx, a: &DoneArgs) -> Vec<String> {
        TaskDone::task(ctx, a)
            .map(|t| vec![format!("board/{t}")])
            .unwrap_or_default()
    }
    fn preview(&self, ctx: &ToolCtx, a: &DoneArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let t = TaskDone::task(ctx, a)?;
        let who = actor(ctx);
        preview_op(Self::NAME, &board(ctx), |c: &Connection| {
            TaskDone::op(c, a, &t, &who)
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &DoneArgs) -> Result<ToolOutput, ToolError> {
        let t = TaskDone::task(ctx, a)?;
        let who = actor(ctx);
        let mut out = run_op(&board(ctx), |c: &Connection| TaskDone::op(c, a, &t, &who))?;
        // The task's work is over: the children this session spawned for it stop too.
        let stopped = super::agents::stop_children(ctx);
        if !stopped.is_empty() {
            out.content.push_str(&format!(
                "\nStopped the agents spawned for it: session {}.",
                stopped.join(", ")
            ));
            if let Some(d) = out.details.as_mut() {
                d["stoppedAgents"] = json!(stopped);
            }
        }
        Ok(out)
    }
}

impl TaskDone {
    fn task(ctx: &ToolCtx, _: &DoneArgs) -> Result<String, ToolError> {
        task_of(ctx, None)
    }
    fn op(c: &Connection, a: &DoneArgs, t: &str, who: &str) -> BoardResult<Outcome> {
        bt::done(
            c,
            t,
            &Done {
                outcome: a.outcome.unwrap_or(DoneOutcome::Completed),
                summary: a.summary.clone(),
                blocked_by: a.blocked_by.clone().unwrap_or_default(),
                reason: a.reason.clone(),
                actor: Some(who.to_string()),
            },
        )
    }
}

// ---- logs ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogArgs {
    #[schemars(length(min = 1, max = 4000))]
    pub message: String,
    pub outcome: Option<String>,
}

write_tool!(TaskLog, "fn_task_log", LogArgs, WRITES,
    "Write a significant entry to this session's task log (also appended to its agent log as a status entry). Answers `Logged: …`; an archived task is an error result (TASK_ARCHIVED).");

impl TaskLog {
    fn task(ctx: &ToolCtx, _: &LogArgs) -> Result<String, ToolError> {
        task_of(ctx, None)
    }
    fn op(c: &Connection, a: &LogArgs, t: &str, who: &str) -> BoardResult<Outcome> {
        bt::add_log(c, t, &a.message, a.outcome.as_deref(), Some(who))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LogType {
    Text,
    Status,
    Tool,
    Thinking,
    ToolResult,
    ToolError,
}

impl LogType {
    pub fn as_str(self) -> &'static str {
        match self {
            LogType::Text => "text",
            LogType::Status => "status",
            LogType::Tool => "tool",
            LogType::Thinking => "thinking",
            LogType::ToolResult => "tool_result",
            LogType::ToolError => "tool_error",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogsReadArgs {
    /// 1–500, default 100.
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
    /// Entries to skip, counted from the newest (default 0).
    pub offset: Option<u32>,
    #[serde(rename = "type")]
    pub kind: Option<LogType>,
    /// Required in chat and planning sessions; default this session's task.
    pub task_id: Option<String>,
}

pub struct TaskLogsRead;

impl TypedTool for TaskLogsRead {
    type Args = LogsReadArgs;
    const NAME: &'static str = "fn_task_logs_read";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Read a task's agent log (.nbook/tasks/<ID>/agent-log.jsonl), newest first, paged (limit default 100, offset from the newest), optionally one type: text | status | tool | thinking | tool_result | tool_error. Chat and planning sessions must pass task_id (TASK_ID_REQUIRED otherwise). details {taskId, entries, total, offset, limit}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = READS;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &LogsReadArgs) -> Result<ToolOutput, ToolError> {
        let id = task_of(ctx, a.task_id.as_deref())?;
        let b = board(ctx);
        b.read(|c| bt::require(c, &id)).map_err(err)?;
        let want = a.kind.map(LogType::as_str);
        let mut entries = b.agent_log(&id).map_err(err)?;
        entries.reverse();
        let entries: Vec<Value> = entries
            .into_iter()
            .filter(|e| want.is_none_or(|w| e["type"] == w))
            .collect();
        let total = entries.len();
        let limit = a.limit.unwrap_or(100).clamp(1, 500) as usize;
        let offset = a.offset.unwrap_or(0) as usize;
        let page: Vec<Value> = entries.into_iter().skip(offset).take(limit).collect();
        let text = if page.is_empty() {
            format!("No agent log entries for {id} in this range ({total} in all).")
        } else {
            page.iter()
                .map(|e| {
                    format!(
                        "{} [{}] {}",
                        e["timestamp"].as_str().unwrap_or(""),
                        e["type"].as_str().unwrap_or(""),
                        e["text"].as_str().unwrap_or("")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        Ok(read_output(
            text,
            json!({"taskId": id, "entries": page, "total": total, "offset": offset, "limit": limit}),
        ))
    }
}

// ---- planning: fn_task_prompt_write, fn_task_promote, fn_task_file_scope_add ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptWriteArgs {
    /// The complete, final PROMPT.md.
    #[schemars(length(min = 1, max = 200000))]
    pub content: String,
}

/// Written out (not `write_tool!`): the plan's `## Repository Scope` is checked against the
/// series on disk before the board transaction starts.
pub struct TaskPromptWrite;

impl TypedTool for TaskPromptWrite {
    type Args = PromptWriteArgs;
    const NAME: &'static str = "fn_task_prompt_write";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Replace this session's task's PROMPT.md (its plan) with the complete final content; only while the task is in Planning. Validated: `# Task: <ID> — <Title>`, `## Mission`, `## Steps` with `### Step N: Title` numbered from 0 (Step 0 = Preflight) without gaps, `## File Scope` with project-relative `- path` entries (no absolute paths, `..` or URLs), `## Acceptance Criteria`; other sections are kept. In series workspace mode an optional `## Repository Scope` lists the books of the series the task works in (`- book`; it replaces the declared scope). A failing plan is an error result PROMPT_INVALID whose details.section names the section. Sets the task's title, steps and file scope; do not write prose here.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = WRITES;
    fn write_targets(&self, ctx: &ToolCtx, _: &PromptWriteArgs) -> Vec<String> {
        task_of(ctx, None)
            .map(|t| vec![format!("board/{t}")])
            .unwrap_or_default()
    }
    fn preview(
        &self,
        ctx: &ToolCtx,
        a: &PromptWriteArgs,
        _raw: &Value,
    ) -> Result<Preview, ToolError> {
        let t = task_of(ctx, None)?;
        let who = actor(ctx);
        let series = TaskPromptWrite::series(ctx);
        preview_op("fn_task_prompt_write", &board(ctx), |c: &Connection| {
            bt::write_prompt_in_series(c, &t, &a.content, series.as_ref(), Some(&who))
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &PromptWriteArgs) -> Result<ToolOutput, ToolError> {
        let t = task_of(ctx, None)?;
        let who = actor(ctx);
        let series = TaskPromptWrite::series(ctx);
        run_op(&board(ctx), |c: &Connection| {
            bt::write_prompt_in_series(c, &t, &a.content, series.as_ref(), Some(&who))
        })
    }
}

impl TaskPromptWrite {
    /// This book's series, if it declares one that loads (a broken one is no series: a plan
    /// naming books then says so as a PROMPT_INVALID).
    fn series(ctx: &ToolCtx) -> Option<scope::SeriesBooks> {
        super::series::series_of(ctx.workspace.root())
            .ok()
            .map(|s| scope::SeriesBooks::of(&s))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromoteArgs {
    /// Default this session's task.
    pub task_id: Option<String>,
    /// Waive only the "no plan yet" check.
    pub force: Option<bool>,
}

write_tool!(TaskPromote, "fn_task_promote", PromoteArgs, WRITES,
    "Promote a held task out of Planning (the workflow's hold column) into Drafting (default this session's task). Needs its PROMPT.md (force: true waives only that) and every dependency Done; otherwise an error result (TASK_UNPLANNED, DEPENDENCIES_UNMET, TASK_WRONG_COLUMN).");

impl TaskPromote {
    fn task(ctx: &ToolCtx, a: &PromoteArgs) -> Result<String, ToolError> {
        task_of(ctx, a.task_id.as_deref())
    }
    fn op(c: &Connection, a: &PromoteArgs, t: &str, who: &str) -> BoardResult<Outcome> {
        bt::promote(c, t, a.force == Some(true), Some(who))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileScopeArgs {
    /// Project-relative paths or globs.
    #[schemars(length(min = 1))]
    pub files: Vec<String>,
    pub reason: Option<String>,
}

write_tool!(TaskFileScopeAdd, "fn_task_file_scope_add", FileScopeArgs, WRITES,
    "Add project-relative files or globs (e.g. manuscript/012-chapter/*.md) to this session's task's ## File Scope when you must edit beyond it, so the merge does not hold those edits back. Absolute paths, `..` and URLs are error results (FILE_SCOPE_INVALID); entries already in scope are skipped.");

impl TaskFileScopeAdd {
    fn task(ctx: &ToolCtx, _: &FileScopeArgs) -> Result<String, ToolError> {
        task_of(ctx, None)
    }
    fn op(c: &Connection, a: &FileScopeArgs, t: &str, who: &str) -> BoardResult<Outcome> {
        bt::add_file_scope(c, t, &a.files, a.reason.as_deref(), Some(who))
    }
}

// ---- the author's Board moves (author-only: profiles/author.toml) ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveArgs {
    /// The task to move, e.g. NB-001.
    #[schemars(length(min = 1, max = 64))]
    pub task_id: String,
    /// A column id of the task's workflow (builtin:chapter: planning, drafting, review, done,
    /// archived).
    #[schemars(length(min = 1, max = 64))]
    pub column: String,
}

write_tool!(TaskMove, "fn_task_move", MoveArgs, WRITES,
    "The author's move of a task to another column of its workflow from the Board (archiving is a move to `archived`). An unknown task (TASK_NOT_FOUND), a column the workflow lacks or the task's own column (INVALID_ARGUMENT) are error results; nothing changes. Given only to the author.");

impl TaskMove {
    fn task(_: &ToolCtx, a: &MoveArgs) -> Result<String, ToolError> {
        Ok(a.task_id.trim().to_string())
    }
    fn op(c: &Connection, a: &MoveArgs, t: &str, who: &str) -> BoardResult<Outcome> {
        bt::move_to(c, t, a.column.trim(), Some(who))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseArgs {
    /// The task, e.g. NB-001.
    #[schemars(length(min = 1, max = 64))]
    pub task_id: String,
    /// true pauses, false resumes.
    pub paused: bool,
}

write_tool!(TaskPause, "fn_task_pause", PauseArgs, WRITES,
    "The author's pause (paused: true) or resume (false) of a task from the Board: a paused task keeps its column and steps, with sub-status `paused`. A Done or Archived task (TASK_WRONG_COLUMN / TASK_ARCHIVED), pausing a paused task or resuming one that is not paused (INVALID_ARGUMENT) are error results; nothing changes. Given only to the author.");

impl TaskPause {
    fn task(_: &ToolCtx, a: &PauseArgs) -> Result<String, ToolError> {
        Ok(a.task_id.trim().to_string())
    }
    fn op(c: &Connection, a: &PauseArgs, t: &str, who: &str) -> BoardResult<Outcome> {
        bt::set_paused(c, t, a.paused, Some(who))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SteerArgs {
    /// The task, e.g. NB-001.
    #[schemars(length(min = 1, max = 64))]
    pub task_id: String,
    /// The comment for the task's agent.
    #[schemars(length(min = 1, max = 2000))]
    pub text: String,
}

write_tool!(TaskSteer, "fn_task_steer", SteerArgs, WRITES,
    "The author's steering comment on a task from the Board (`s`): delivered exactly once — into the task's live session at its next turn boundary, or, when no session of the task is running, into the first message of its next role session. A Done or Archived task (TASK_WRONG_COLUMN), an unknown task (TASK_NOT_FOUND) or empty text (INVALID_ARGUMENT) are error results; nothing changes. Given only to the author.");

impl TaskSteer {
    fn task(_: &ToolCtx, a: &SteerArgs) -> Result<String, ToolError> {
        Ok(a.task_id.trim().to_string())
    }
    fn op(c: &Connection, a: &SteerArgs, t: &str, who: &str) -> BoardResult<Outcome> {
        crate::board::steering::add(c, t, &a.text, who)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovePlanArgs {
    /// The task whose plan waits for approval (sub-status awaiting-plan-approval), e.g. NB-001.
    #[schemars(length(min = 1, max = 64))]
    pub task_id: String,
}

write_tool!(TaskApprovePlan, "fn_task_approve_plan", ApprovePlanArgs, WRITES,
    "The author's approval of a task's plan when its workflow has requirePlanApproval (`a` on the Board): the task, parked in planning at sub-status awaiting-plan-approval, becomes plan-approved and the scheduler releases it to drafting. A task with no plan waiting (PLAN_NOT_AWAITING_APPROVAL), out of planning (TASK_WRONG_COLUMN) or unknown (TASK_NOT_FOUND) is an error result; nothing changes. Given only to the author.");

impl TaskApprovePlan {
    fn task(_: &ToolCtx, a: &ApprovePlanArgs) -> Result<String, ToolError> {
        Ok(a.task_id.trim().to_string())
    }
    fn op(c: &Connection, _: &ApprovePlanArgs, t: &str, who: &str) -> BoardResult<Outcome> {
        crate::board::plan_approval::approve(c, t, Some(who))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectPlanArgs {
    /// The task whose plan waits for approval, e.g. NB-001.
    #[schemars(length(min = 1, max = 64))]
    pub task_id: String,
    /// What the plan must change; the next triage session reads it.
    #[schemars(length(min = 1, max = 2000))]
    pub reason: String,
}

write_tool!(TaskRejectPlan, "fn_task_reject_plan", RejectPlanArgs, WRITES,
    "The author sends a task's plan back to planning (`d` on the Board) when its workflow has requirePlanApproval: the task, parked at awaiting-plan-approval, becomes needs-replan and the next triage session gets the reason as its notes. An empty reason (INVALID_ARGUMENT), a task with no plan waiting (PLAN_NOT_AWAITING_APPROVAL), out of planning (TASK_WRONG_COLUMN) or unknown (TASK_NOT_FOUND) is an error result; nothing changes. Given only to the author.");

impl TaskRejectPlan {
    fn task(_: &ToolCtx, a: &RejectPlanArgs) -> Result<String, ToolError> {
        Ok(a.task_id.trim().to_string())
    }
    fn op(c: &Connection, a: &RejectPlanArgs, t: &str, who: &str) -> BoardResult<Outcome> {
        crate::board::plan_approval::reject(c, t, &a.reason, Some(who))
    }
}
