//! Plot reads: `get_story_tree`, `get_story_thread`, `get_story_scene_context`,
//! `get_story_chapter`, `get_chapter_writer_brief`, `get_story_promise`, `get_story_decision`.
//! Not mutating, and sequential as in NeuroBook. The result text is the DTO as JSON (the brief:
//! its Markdown) and `details` the DTO. Thread and scene reads update `plot.selection`.
//! (`get_scene_world_context` lives with the world tools.)

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::plot::brief::BriefMode;
use crate::plot::selection::{resolve_scene_id, resolve_thread_id, selection_update};
use crate::plot::wire::PlotId;
use crate::plot::{resolve_target, Field, PlotDb, PlotError, PlotTarget};

/// The call's failure, as the agent reads it.
pub(crate) fn plot_err(e: PlotError) -> ToolError {
    ToolError::failed(e.to_string())
}

/// The project the call is about (`projectRoot`, default the current one) and its database.
pub(crate) fn open_target(
    ctx: &ToolCtx,
    project_root: Option<&str>,
) -> Result<(PlotTarget, PlotDb), ToolError> {
    let target = resolve_target(&ctx.workspace, project_root).map_err(plot_err)?;
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

macro_rules! read_tool {
    ($ty:ident, $name:literal, $desc:literal) => {
        pub struct $ty;
        impl TypedTool for $ty {
            type Args = <$ty as ReadArgs>::Args;
            const NAME: &'static str = $name;
            const GROUP: &'static str = "plot";
            const DESCRIPTION: &'static str = $desc;
            const MUTATES: Mutates = Mutates::No;
            const EFFECTS: crate::engine::tool::Effects = {
                use crate::engine::tool::{Domain::*, Effects};
                Effects::touches(&[Plot])
            };
            fn run(&self, ctx: &ToolCtx, args: &Self::Args) -> Result<ToolOutput, ToolError> {
                $ty::read(ctx, args)
            }
        }
    };
}

/// Each read tool's argument type, next to its `read`.
pub trait ReadArgs {
    type Args;
}

/// Declare a read tool's arguments: `projectRoot` plus the listed fields.
macro_rules! read_args {
    ($tool:ident, $args:ident { $($(#[$m:meta])* $field:ident: $ty:ty),* $(,)? }) => {
        #[derive(Debug, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $args {
            $($(#[$m])* pub $field: $ty,)*
            /// Optional single-segment folder name of another open project; default: the current project
            #[schemars(length(min = 1))]
            pub project_root: Option<String>,
        }
        impl ReadArgs for $tool {
            type Args = $args;
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

read_args!(GetStoryTree, StoryTreeArgs {});

impl GetStoryTree {
    fn read(ctx: &ToolCtx, args: &StoryTreeArgs) -> Result<ToolOutput, ToolError> {
        let (_, db) = open_target(ctx, args.project_root.as_deref())?;
        json_output(&db.read(|p| p.tree()).map_err(plot_err)?)
    }
}

read_args!(GetStoryThread, StoryThreadArgs {
    /// Thread id; default: the selected thread
    thread_id: Option<PlotId>,
});

impl GetStoryThread {
    fn read(ctx: &ToolCtx, args: &StoryThreadArgs) -> Result<ToolOutput, ToolError> {
        let (target, db) = open_target(ctx, args.project_root.as_deref())?;
        let explicit = args.thread_id.map(PlotId::get);
        let id = resolve_thread_id(&ctx.session_state, &target.name, explicit).map_err(plot_err)?;
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

read_args!(GetStorySceneContext, SceneContextArgs {
    /// Scene id; default: the selected scene
    scene_id: Option<PlotId>,
});

impl GetStorySceneContext {
    fn read(ctx: &ToolCtx, args: &SceneContextArgs) -> Result<ToolOutput, ToolError> {
        let (target, db) = open_target(ctx, args.project_root.as_deref())?;
        let explicit = args.scene_id.map(PlotId::get);
        let id = resolve_scene_id(&ctx.session_state, &target.name, explicit).map_err(plot_err)?;
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

read_args!(
    GetStoryChapter,
    StoryChapterArgs {
        /// Chapter id (get_story_tree lists them)
        chapter_id: PlotId,
    }
);

impl GetStoryChapter {
    fn read(ctx: &ToolCtx, args: &StoryChapterArgs) -> Result<ToolOutput, ToolError> {
        let (_, db) = open_target(ctx, args.project_root.as_deref())?;
        let id = args.chapter_id.get();
        json_output(&db.read(|p| p.chapter_detail(id)).map_err(plot_err)?)
    }
}

/// How much of the world the writer brief spells out.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BriefModeArg {
    Autonomous,
    Curated,
}

read_args!(GetChapterWriterBrief, WriterBriefArgs {
    /// Chapter id (get_story_tree lists them)
    chapter_id: PlotId,
    /// autonomous (default): the writer queries the world itself; curated: the brief spells out the world context
    mode: Option<BriefModeArg>,
});

impl GetChapterWriterBrief {
    fn read(ctx: &ToolCtx, args: &WriterBriefArgs) -> Result<ToolOutput, ToolError> {
        let (_, db) = open_target(ctx, args.project_root.as_deref())?;
        let id = args.chapter_id.get();
        let mode = match args.mode {
            Some(BriefModeArg::Curated) => BriefMode::Curated,
            Some(BriefModeArg::Autonomous) | None => BriefMode::Autonomous,
        };
        let brief = db.read(|p| p.writer_brief(id, mode)).map_err(plot_err)?;
        let mut out = json_output(&brief)?;
        out.content = brief.suggested_brief_markdown.clone();
        Ok(out)
    }
}

read_args!(GetStoryPromise, StoryPromiseArgs {
    /// Promise id; omit to list the ledger
    promise_id: Option<PlotId>,
});

impl GetStoryPromise {
    fn read(ctx: &ToolCtx, args: &StoryPromiseArgs) -> Result<ToolOutput, ToolError> {
        let (_, db) = open_target(ctx, args.project_root.as_deref())?;
        match args.promise_id.map(PlotId::get) {
            Some(id) => json_output(&db.read(|p| p.promise_detail(id)).map_err(plot_err)?),
            None => json_output(&db.read(|p| p.list_promises()).map_err(plot_err)?),
        }
    }
}

read_args!(GetStoryDecision, StoryDecisionArgs {
    /// Decision id; omit to list the ledger
    decision_id: Option<PlotId>,
});

impl GetStoryDecision {
    fn read(ctx: &ToolCtx, args: &StoryDecisionArgs) -> Result<ToolOutput, ToolError> {
        let (_, db) = open_target(ctx, args.project_root.as_deref())?;
        match args.decision_id.map(PlotId::get) {
            Some(id) => json_output(&db.read(|p| p.get_decision(id)).map_err(plot_err)?),
            None => json_output(&db.read(|p| p.list_decisions()).map_err(plot_err)?),
        }
    }
}
