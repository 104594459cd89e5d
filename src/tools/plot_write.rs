//! Plot writes: `save_story_act`, `save_story_chapter`, `save_story_thread`, `save_story_scene`,
//! `save_story_promise`, `save_promise_beat`, `save_story_decision`. Each takes a required
//! `action`; other fields are flat and optional (`null` clears, absent keeps). All mutate.
//!
//! The preview runs the very same service call in a transaction that is rolled back, and
//! shows the field diff of every record it changed — derived changes included (a payoff beat
//! fulfilling its promise, an archive reopening one). Its targets fingerprint every row the call
//! touched or relied on, so a row changed before approval makes the call stale. `run` does the
//! write in one transaction. Agents cannot hard-delete: `archive`, `abandon` and `drop` are
//! their soft deletes.

use serde::Serialize;
use serde_json::Value;

use super::plot_read::{json_output, open_target, plot_err};
use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{Preview, PreviewBody};
use crate::plot::args::*;
use crate::plot::model::SceneDetailDto;
use crate::plot::selection::{resolve_scene_id, resolve_thread_id, selection_update};
use crate::plot::wire::PlotId;
use crate::plot::{Field, Plot, PlotDb, PlotError, PlotResult};

/// What a write returns, and how it moves the session's selection (thread, scene).
struct Saved {
    value: Value,
    selection: Option<(Field<i64>, Field<i64>)>,
}

type Op = Box<dyn FnOnce(&mut Plot) -> PlotResult<Saved> + Send>;

/// A parsed call, ready to preview or run.
struct Planned {
    project: String,
    db: PlotDb,
    /// e.g. "update StoryThread #3".
    what: String,
    /// The record the call is about, for "approve for this session" grants.
    grant_key: String,
    op: Op,
}

impl Planned {
    fn new(project: String, db: PlotDb, what: String, op: Op) -> Planned {
        Planned {
            project,
            db,
            grant_key: format!("plot/{what}"),
            what,
            op,
        }
    }
}

fn saved<T: Serialize>(v: T) -> PlotResult<Saved> {
    Ok(Saved {
        value: serde_json::to_value(v)
            .map_err(|e| PlotError::db(format!("cannot encode the result: {e}")))?,
        selection: None,
    })
}

/// Refuse fields the action does not take (the first one present is named).
fn forbid(action: &str, present: &[(&str, bool)], hint: &str) -> Result<(), ToolError> {
    match present.iter().find(|(_, given)| *given) {
        Some((k, _)) => Err(plot_err(PlotError::invalid(
            &format!("/{k}"),
            format!("action {action} does not take {k}; {hint}"),
        ))),
        None => Ok(()),
    }
}

fn need_id(id: Option<PlotId>, key: &str, action: &str, hint: &str) -> Result<i64, ToolError> {
    id.map(PlotId::get).ok_or_else(|| {
        plot_err(PlotError::invalid(
            &format!("/{key}"),
            format!("required for action {action}; {hint}"),
        ))
    })
}

fn preview_of(tool: &str, p: Planned) -> Result<Preview, ToolError> {
    let Planned { db, what, op, .. } = p;
    let out = db
        .dry_run(op)
        .map_err(|e| ToolError::failed(format!("{e} (nothing was changed)")))?;
    let derived = out.changes.len().saturating_sub(1);
    // Lead with the record the call is about, not the Story row a first write creates.
    let main = out
        .changes
        .iter()
        .find(|c| !c.record.starts_with("Story #"))
        .or(out.changes.first());
    let summary = match (main, derived) {
        (None, _) => format!("{tool}: {what} (no field changes)"),
        (Some(c), 0) => format!("{tool}: {} {}", c.action, c.record),
        (Some(c), n) => format!(
            "{tool}: {} {} (+{n} more record{})",
            c.action,
            c.record,
            if n == 1 { "" } else { "s" }
        ),
    };
    Ok(Preview {
        summary,
        body: PreviewBody::Records {
            changes: out.changes,
        },
        targets: out.targets,
    })
}

fn run_of(ctx: &ToolCtx, p: Planned) -> Result<ToolOutput, ToolError> {
    let Planned {
        db, op, project, ..
    } = p;
    let out = db
        .commit(op)
        .map_err(|e| ToolError::failed(format!("{e} (nothing was changed)")))?;
    let mut result = json_output(&out.value.value)?;
    if let Some((thread, scene)) = out.value.selection {
        result.state_updates.push(selection_update(
            &ctx.session_state,
            &project,
            thread,
            scene,
        ));
    }
    Ok(result)
}

macro_rules! write_tool {
    ($ty:ident, $name:literal, $args:ty, $desc:literal) => {
        pub struct $ty;
        impl TypedTool for $ty {
            type Args = $args;
            const NAME: &'static str = $name;
            const GROUP: &'static str = "plot";
            const DESCRIPTION: &'static str = $desc;
            const MUTATES: Mutates = Mutates::Yes;
            const EFFECTS: crate::engine::tool::Effects = {
                use crate::engine::tool::{Domain::*, Effects};
                Effects::touches(&[Plot])
            };
            fn write_targets(&self, ctx: &ToolCtx, args: &$args) -> Vec<String> {
                $ty::plan(ctx, args)
                    .map(|p| vec![p.grant_key])
                    .unwrap_or_default()
            }
            fn preview(
                &self,
                ctx: &ToolCtx,
                args: &$args,
                _raw: &Value,
            ) -> Result<Preview, ToolError> {
                preview_of($name, $ty::plan(ctx, args)?)
            }
            fn run(&self, ctx: &ToolCtx, args: &$args) -> Result<ToolOutput, ToolError> {
                run_of(ctx, $ty::plan(ctx, args)?)
            }
        }
    };
}

write_tool!(SaveStoryAct, "save_story_act", SaveActArgs, "Create or update an act (volume) of the carrier tree. create needs name + title; update needs actId.");
write_tool!(SaveStoryChapter, "save_story_chapter", SaveChapterArgs, "Create or update a chapter, including its brief (goal, pov, tone, pacing, readerKnows, protagonistKnows, mustHide, hintOnly, opening, ending, doNotWrite; null clears a field). create needs name + title; update needs chapterId. Prose links back with frontmatter `chapter: <name>`.");
write_tool!(SaveStoryThread, "save_story_thread", SaveThreadArgs, "Create, update or archive a thread. create needs name + title; update/archive target threadId (default: the selected thread); archive sets status archived (soft delete). Selects the thread.");
write_tool!(SaveStoryScene, "save_story_scene", SaveSceneArgs, "Create, update or archive a scene. create needs title (threadId defaults to the selected thread); update/archive target sceneId (default: the selected scene); archive sets status archived and reopens promises paid off only there. worldAnchor times are calendar text (e.g. 1911-03-02 06:30). Selects the scene.");
write_tool!(SaveStoryPromise, "save_story_promise", SavePromiseArgs, "Create or update a reader promise, or abandon/fulfill it. create needs name + title (it starts open); other actions need promiseId; update with status open reopens. A payoff beat usually fulfils it (save_promise_beat). Returns the promise with derivedStage, beatStats {total, byKind: {plant, advance, setback, payoff}, byState: {planned, factual, archived}} (as get_story_promise) and its beats.");
write_tool!(SavePromiseBeat, "save_promise_beat", SaveBeatArgs, "Set (upsert) or remove a promise's beat on a scene: one beat per promise and scene. kind plant/advance/setback/payoff; a payoff fulfils the open promise unless autoFulfill is false. sceneId defaults to the selected scene. Returns the promise with derivedStage, beatStats {total, byKind: {plant, advance, setback, payoff}, byState: {planned, factual, archived}} (as get_story_promise) and its beats.");
write_tool!(SaveStoryDecision, "save_story_decision", SaveDecisionArgs, "Create, update, decide or drop a decision (ADR). create needs name + title + question; decide needs decision + motivation + risk (unchosen options become rejectedAlternatives; name the winner with chosenOption); drop needs a note. Reopen with update + status open; supersede with update + status superseded + supersededById. Each option text must be unique after trimming (decide identifies the chosen option by its text).");

impl SaveStoryAct {
    fn plan(ctx: &ToolCtx, args: &SaveActArgs) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args.project_root.as_deref())?;
        let act = args.action.as_str();
        let input = args.input();
        let (what, op): (String, Op) = if act == "create" {
            forbid(
                act,
                &[("actId", args.act_id.is_some())],
                "to change an act use action update",
            )?;
            (
                "create act".into(),
                Box::new(move |p: &mut Plot| saved(p.create_act(&input)?)),
            )
        } else {
            let id = need_id(args.act_id, "actId", act, "get_story_tree lists the acts")?;
            (
                format!("update StoryAct #{id}"),
                Box::new(move |p: &mut Plot| saved(p.update_act(id, &input)?)),
            )
        };
        Ok(Planned::new(target.name, db, what, op))
    }
}

impl SaveStoryChapter {
    fn plan(ctx: &ToolCtx, args: &SaveChapterArgs) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args.project_root.as_deref())?;
        let act = args.action.as_str();
        let input = args.input();
        let (what, op): (String, Op) = if act == "create" {
            forbid(
                act,
                &[("chapterId", args.chapter_id.is_some())],
                "to change a chapter use action update",
            )?;
            (
                "create chapter".into(),
                Box::new(move |p: &mut Plot| saved(p.create_chapter(&input)?)),
            )
        } else {
            let id = need_id(
                args.chapter_id,
                "chapterId",
                act,
                "get_story_tree lists the chapters",
            )?;
            (
                format!("update StoryChapter #{id}"),
                Box::new(move |p: &mut Plot| saved(p.update_chapter(id, &input)?)),
            )
        };
        Ok(Planned::new(target.name, db, what, op))
    }
}

impl SaveStoryThread {
    fn plan(ctx: &ToolCtx, args: &SaveThreadArgs) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args.project_root.as_deref())?;
        let act = args.action.as_str();
        let input = args.input();
        let sel = |id: i64| Some((Field::Set(id), Field::Clear));
        let (what, op): (String, Op) = if act == "create" {
            forbid(
                act,
                &[("threadId", args.thread_id.is_some())],
                "to change a thread use action update",
            )?;
            (
                "create thread".into(),
                Box::new(move |p: &mut Plot| {
                    let d = p.create_thread(&input)?;
                    let id = d.thread.id;
                    Ok(Saved {
                        selection: sel(id),
                        ..saved(d)?
                    })
                }),
            )
        } else {
            let id = resolve_thread_id(
                &ctx.session_state,
                &target.name,
                args.thread_id.map(PlotId::get),
            )
            .map_err(plot_err)?;
            let archive = act == "archive";
            (
                format!("{act} StoryThread #{id}"),
                Box::new(move |p: &mut Plot| {
                    let d = if archive {
                        p.archive_thread(id, &input)?
                    } else {
                        p.update_thread(id, &input)?
                    };
                    Ok(Saved {
                        selection: sel(id),
                        ..saved(d)?
                    })
                }),
            )
        };
        Ok(Planned::new(target.name, db, what, op))
    }
}

impl SaveStoryScene {
    fn plan(ctx: &ToolCtx, args: &SaveSceneArgs) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args.project_root.as_deref())?;
        let act = args.action.as_str();
        let mut input = args.input();
        let explicit_thread = args.thread_id.map(PlotId::get);
        let sel =
            |d: &SceneDetailDto| Some((Field::Set(d.scene.thread_id), Field::Set(d.scene.id)));
        let (what, op): (String, Op) = if act == "create" {
            forbid(
                act,
                &[("sceneId", args.scene_id.is_some())],
                "to change a scene use action update",
            )?;
            input.thread_id = Some(
                resolve_thread_id(&ctx.session_state, &target.name, explicit_thread)
                    .map_err(plot_err)?,
            );
            (
                "create scene".into(),
                Box::new(move |p: &mut Plot| {
                    let d = p.create_scene(&input)?;
                    Ok(Saved {
                        selection: sel(&d),
                        ..saved(d)?
                    })
                }),
            )
        } else {
            let id = resolve_scene_id(
                &ctx.session_state,
                &target.name,
                args.scene_id.map(PlotId::get),
            )
            .map_err(plot_err)?;
            input.thread_id = explicit_thread;
            let archive = act == "archive";
            (
                format!("{act} StoryScene #{id}"),
                Box::new(move |p: &mut Plot| {
                    let d = if archive {
                        p.archive_scene(id, &input)?
                    } else {
                        p.update_scene(id, &input)?
                    };
                    Ok(Saved {
                        selection: sel(&d),
                        ..saved(d)?
                    })
                }),
            )
        };
        Ok(Planned::new(target.name, db, what, op))
    }
}

impl SaveStoryPromise {
    fn plan(ctx: &ToolCtx, args: &SavePromiseArgs) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args.project_root.as_deref())?;
        let act = args.action.as_str();
        let input = args.input();
        let (what, op): (String, Op) = if act == "create" {
            forbid(
                act,
                &[("promiseId", args.promise_id.is_some())],
                "to change a promise use action update",
            )?;
            (
                "create promise".into(),
                Box::new(move |p: &mut Plot| saved(p.create_promise(&input)?)),
            )
        } else {
            let id = need_id(
                args.promise_id,
                "promiseId",
                act,
                "get_story_promise lists the promises",
            )?;
            let action = args.action;
            (
                format!("{act} StoryPromise #{id}"),
                Box::new(move |p: &mut Plot| match action {
                    PromiseAction::Abandon => saved(p.abandon_promise(id, &input)?),
                    PromiseAction::Fulfill => saved(p.fulfill_promise(id, &input)?),
                    _ => saved(p.update_promise(id, &input)?),
                }),
            )
        };
        Ok(Planned::new(target.name, db, what, op))
    }
}

impl SavePromiseBeat {
    fn plan(ctx: &ToolCtx, args: &SaveBeatArgs) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args.project_root.as_deref())?;
        let act = args.action.as_str();
        let promise = args.promise_id.get();
        let scene = resolve_scene_id(
            &ctx.session_state,
            &target.name,
            args.scene_id.map(PlotId::get),
        )
        .map_err(plot_err)?;
        let (what, op): (String, Op) = if act == "remove" {
            forbid(
                act,
                &[
                    ("kind", args.kind.is_some()),
                    ("note", !args.note.is_keep()),
                    ("autoFulfill", args.auto_fulfill.is_some()),
                ],
                "remove needs only promiseId and sceneId",
            )?;
            (
                format!("remove beat of promise #{promise} on scene #{scene}"),
                Box::new(move |p: &mut Plot| saved(p.remove_beat(promise, scene)?)),
            )
        } else {
            let input = args.input();
            (
                format!("set beat of promise #{promise} on scene #{scene}"),
                Box::new(move |p: &mut Plot| saved(p.set_beat(promise, scene, &input)?)),
            )
        };
        Ok(Planned {
            project: target.name,
            db,
            grant_key: format!("plot/beat {promise}x{scene}"),
            what,
            op,
        })
    }
}

impl SaveStoryDecision {
    fn plan(ctx: &ToolCtx, args: &SaveDecisionArgs) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args.project_root.as_deref())?;
        let act = args.action.as_str();
        let input = args.input();
        let (what, op): (String, Op) = if act == "create" {
            forbid(
                act,
                &[("decisionId", args.decision_id.is_some())],
                "to change a decision use action update",
            )?;
            (
                "create decision".into(),
                Box::new(move |p: &mut Plot| saved(p.create_decision(&input)?)),
            )
        } else {
            let id = need_id(
                args.decision_id,
                "decisionId",
                act,
                "get_story_decision lists the decisions",
            )?;
            let action = args.action;
            (
                format!("{act} StoryDecision #{id}"),
                Box::new(move |p: &mut Plot| match action {
                    DecisionAction::Decide => saved(p.decide_decision(id, &input)?),
                    DecisionAction::Drop => saved(p.drop_decision(id, &input)?),
                    _ => saved(p.update_decision(id, &input)?),
                }),
            )
        };
        Ok(Planned::new(target.name, db, what, op))
    }
}
