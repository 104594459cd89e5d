//! Plot reads: `get_story_tree`, `get_story_thread`, `get_story_scene_context`,
//! `get_story_chapter`, `get_chapter_writer_brief`, `get_story_promise`, `get_story_decision`.
//! Not mutating, and sequential as in NeuroBook. The result text is the DTO as JSON (the brief:
//! its Markdown) and `details` the DTO. Thread and scene reads update `plot.selection`.
//! (`get_scene_world_context` lives with the world tools.)

use serde::Serialize;
use serde_json::{json, Value};

use crate::engine::tool::{Mutates, Tool, ToolCtx, ToolError, ToolOutput};
use crate::plot::args::ArgReader;
use crate::plot::brief::BriefMode;
use crate::plot::schemas::{id_prop, project_root_prop};
use crate::plot::selection::{resolve_scene_id, resolve_thread_id, selection_update};
use crate::plot::{resolve_target, Field, PlotDb, PlotError, PlotTarget};

/// The call's failure, as the agent reads it.
pub(crate) fn plot_err(e: PlotError) -> ToolError {
    ToolError::failed(e.to_string())
}

/// The project the call is about (`projectRoot`, default the current one) and its database.
pub(crate) fn open_target(ctx: &ToolCtx, args: &Value) -> Result<(PlotTarget, PlotDb), ToolError> {
    let root = ArgReader::new(args)
        .and_then(|a| a.str("projectRoot"))
        .map_err(plot_err)?;
    let target = resolve_target(&ctx.workspace, root.as_deref()).map_err(plot_err)?;
    // World anchors are read and written in the project's own calendar.
    let calendar = crate::world::calendar::Calendar::load(&target.root).map_err(|e| {
        ToolError::failed(format!(
            "{e}; scene world anchors use the project calendar, so fix world-engine/calendar.toml first"
        ))
    })?;
    let db = PlotDb::for_target(&target).with_calendar(std::sync::Arc::new(calendar));
    Ok((target, db))
}

/// JSON text plus the same value as details.
pub(crate) fn json_output<T: Serialize>(value: &T) -> Result<ToolOutput, ToolError> {
    let v = serde_json::to_value(value)
        .map_err(|e| ToolError::failed(format!("cannot encode the result: {e}")))?;
    Ok(ToolOutput {
        content: serde_json::to_string_pretty(&v).unwrap_or_default(),
        details: Some(v),
        ..ToolOutput::default()
    })
}

fn schema(props: Value, required: &[&str]) -> Value {
    let mut p = props;
    if let Value::Object(o) = &mut p {
        o.insert("projectRoot".into(), project_root_prop());
    }
    json!({"type": "object", "properties": p, "required": required, "additionalProperties": false})
}

fn id_arg(args: &Value, key: &str) -> Result<Option<i64>, ToolError> {
    ArgReader::new(args)
        .and_then(|a| a.id(key))
        .map_err(plot_err)
}

fn required_id(args: &Value, key: &str) -> Result<i64, ToolError> {
    id_arg(args, key)?.ok_or_else(|| plot_err(PlotError::invalid(&format!("/{key}"), "required")))
}

macro_rules! read_tool {
    ($ty:ident, $name:literal, $desc:literal) => {
        pub struct $ty;
        impl Tool for $ty {
            fn name(&self) -> &'static str {
                $name
            }
            fn group(&self) -> &'static str {
                "plot"
            }
            fn description(&self) -> &'static str {
                $desc
            }
            fn schema(&self) -> Value {
                $ty::args_schema()
            }
            fn mutates(&self) -> Mutates {
                Mutates::No
            }
            fn effects(&self) -> crate::engine::tool::Effects {
                use crate::engine::tool::{Domain::*, Effects};
                Effects::touches(&[Plot])
            }
            fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
                $ty::read(ctx, args)
            }
        }
    };
}

read_tool!(GetStoryTree, "get_story_tree", "Read the story tree: the carrier tree (acts → chapters) and the causal tree (phases → threads → scenes), totals, and the open promise and decision counts.");
read_tool!(GetStoryThread, "get_story_thread", "Read a thread with its scenes. threadId defaults to the selected thread (plot.selection); selects the thread.");
read_tool!(GetStorySceneContext, "get_story_scene_context", "Read a scene with its refs and promise beats, its thread (with the thread's scenes) and its chapter. sceneId defaults to the selected scene; selects the scene.");
read_tool!(GetStoryChapter, "get_story_chapter", "Read a chapter with its brief fields and the scenes placed in it. Use get_story_tree to list chapters.");
read_tool!(GetChapterWriterBrief, "get_chapter_writer_brief", "Compile the writer brief of a chapter: status (needs_plot → needs_world_anchor → needs_world_context → needs_chapter_brief → ready), the next step, and the Markdown brief for the writer (text). mode=autonomous (default) gives world query hints; curated spells out the world context.");
read_tool!(GetStoryPromise, "get_story_promise", "Read the promise ledger. Without promiseId: every promise (open first, importance high to low) with derivedStage (unplanted/planted/echoed/paid_off) and beatStats. With promiseId: the promise (same fields) and its beats with their scenes and chapters. beatStats is exactly {total, byKind: {plant, advance, setback, payoff}, byState: {planned, factual, archived}} (integers): a beat is planned while its scene is draft/active, factual once written/revised, archived with its scene; total and byState count every beat, byKind only beats whose scene is not archived (archived beats count towards no stage).");
read_tool!(GetStoryDecision, "get_story_decision", "Read the decision ledger. Without decisionId: every decision (open, decided, superseded, dropped). With decisionId: one decision. References that no longer resolve are marked valid=false.");

impl GetStoryTree {
    fn args_schema() -> Value {
        schema(json!({}), &[])
    }
    fn read(ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let (_, db) = open_target(ctx, args)?;
        json_output(&db.read(|p| p.tree()).map_err(plot_err)?)
    }
}

impl GetStoryThread {
    fn args_schema() -> Value {
        schema(
            json!({"threadId": id_prop("Thread id; default: the selected thread")}),
            &[],
        )
    }
    fn read(ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let (target, db) = open_target(ctx, args)?;
        let id = resolve_thread_id(&ctx.session_state, &target.name, id_arg(args, "threadId")?)
            .map_err(plot_err)?;
        let detail = db.read(|p| p.thread_detail(id)).map_err(plot_err)?;
        let mut out = json_output(&detail)?;
        out.state_updates.push(selection_update(
            &ctx.session_state,
            &target.name,
            Field::Set(id),
            Field::Clear,
        ));
        Ok(out)
    }
}

impl GetStorySceneContext {
    fn args_schema() -> Value {
        schema(
            json!({"sceneId": id_prop("Scene id; default: the selected scene")}),
            &[],
        )
    }
    fn read(ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let (target, db) = open_target(ctx, args)?;
        let id = resolve_scene_id(&ctx.session_state, &target.name, id_arg(args, "sceneId")?)
            .map_err(plot_err)?;
        let context = db.read(|p| p.scene_context(id)).map_err(plot_err)?;
        let thread = context.scene.scene.thread_id;
        let mut out = json_output(&context)?;
        out.state_updates.push(selection_update(
            &ctx.session_state,
            &target.name,
            Field::Set(thread),
            Field::Set(id),
        ));
        Ok(out)
    }
}

impl GetStoryChapter {
    fn args_schema() -> Value {
        schema(
            json!({"chapterId": id_prop("Chapter id (get_story_tree lists them)")}),
            &["chapterId"],
        )
    }
    fn read(ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let (_, db) = open_target(ctx, args)?;
        let id = required_id(args, "chapterId")?;
        json_output(&db.read(|p| p.chapter_detail(id)).map_err(plot_err)?)
    }
}

impl GetChapterWriterBrief {
    fn args_schema() -> Value {
        schema(
            json!({
                "chapterId": id_prop("Chapter id (get_story_tree lists them)"),
                "mode": {"type": "string", "enum": ["autonomous", "curated"], "description": "autonomous (default): the writer queries the world itself; curated: the brief spells out the world context"}
            }),
            &["chapterId"],
        )
    }
    fn read(ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let (_, db) = open_target(ctx, args)?;
        let id = required_id(args, "chapterId")?;
        let mode = match ArgReader::new(args)
            .and_then(|a| a.str("mode"))
            .map_err(plot_err)?
        {
            Some(m) => m.parse::<BriefMode>().map_err(plot_err)?,
            None => BriefMode::Autonomous,
        };
        let brief = db.read(|p| p.writer_brief(id, mode)).map_err(plot_err)?;
        let mut out = json_output(&brief)?;
        out.content = brief.suggested_brief_markdown.clone();
        Ok(out)
    }
}

impl GetStoryPromise {
    fn args_schema() -> Value {
        schema(
            json!({"promiseId": id_prop("Promise id; omit to list the ledger")}),
            &[],
        )
    }
    fn read(ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let (_, db) = open_target(ctx, args)?;
        match id_arg(args, "promiseId")? {
            Some(id) => json_output(&db.read(|p| p.promise_detail(id)).map_err(plot_err)?),
            None => json_output(&db.read(|p| p.list_promises()).map_err(plot_err)?),
        }
    }
}

impl GetStoryDecision {
    fn args_schema() -> Value {
        schema(
            json!({"decisionId": id_prop("Decision id; omit to list the ledger")}),
            &[],
        )
    }
    fn read(ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let (_, db) = open_target(ctx, args)?;
        match id_arg(args, "decisionId")? {
            Some(id) => json_output(&db.read(|p| p.get_decision(id)).map_err(plot_err)?),
            None => json_output(&db.read(|p| p.list_decisions()).map_err(plot_err)?),
        }
    }
}
