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
use crate::engine::tool::{Mutates, Tool, ToolCtx, ToolError, ToolOutput};
use crate::engine::types::{Preview, PreviewBody};
use crate::plot::args::{self as pargs, ArgReader};
use crate::plot::model::SceneDetailDto;
use crate::plot::schemas;
use crate::plot::selection::{resolve_scene_id, resolve_thread_id, selection_update};
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

fn reader(args: &Value) -> Result<ArgReader<'_>, ToolError> {
    ArgReader::new(args).map_err(plot_err)
}

fn action(a: &ArgReader) -> Result<String, ToolError> {
    a.str("action")
        .map_err(plot_err)?
        .ok_or_else(|| plot_err(PlotError::invalid("/action", "required")))
}

/// Refuse fields the action does not take (the first one present is named).
fn forbid(a: &ArgReader, action: &str, keys: &[&str], hint: &str) -> Result<(), ToolError> {
    match keys.iter().find(|k| a.has(k)) {
        Some(k) => Err(plot_err(PlotError::invalid(
            &format!("/{k}"),
            format!("action {action} does not take {k}; {hint}"),
        ))),
        None => Ok(()),
    }
}

fn need_id(a: &ArgReader, key: &str, action: &str, hint: &str) -> Result<i64, ToolError> {
    a.id(key).map_err(plot_err)?.ok_or_else(|| {
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
    ($ty:ident, $name:literal, $schema:path, $desc:literal) => {
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
                $schema()
            }
            fn mutates(&self) -> Mutates {
                Mutates::Yes
            }
            fn effects(&self) -> crate::engine::tool::Effects {
                use crate::engine::tool::{Domain::*, Effects};
                Effects::touches(&[Plot])
            }
            fn write_targets(&self, ctx: &ToolCtx, args: &Value) -> Vec<String> {
                $ty::plan(ctx, args)
                    .map(|p| vec![p.grant_key])
                    .unwrap_or_default()
            }
            fn preview(&self, ctx: &ToolCtx, args: &Value) -> Result<Preview, ToolError> {
                preview_of($name, $ty::plan(ctx, args)?)
            }
            fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
                run_of(ctx, $ty::plan(ctx, args)?)
            }
        }
    };
}

write_tool!(SaveStoryAct, "save_story_act", schemas::save_story_act, "Create or update an act (volume) of the carrier tree. create needs name + title; update needs actId.");
write_tool!(SaveStoryChapter, "save_story_chapter", schemas::save_story_chapter, "Create or update a chapter, including its brief (goal, pov, tone, pacing, readerKnows, protagonistKnows, mustHide, hintOnly, opening, ending, doNotWrite; null clears a field). create needs name + title; update needs chapterId. Prose links back with frontmatter `chapter: <name>`.");
write_tool!(SaveStoryThread, "save_story_thread", schemas::save_story_thread, "Create, update or archive a thread. create needs name + title; update/archive target threadId (default: the selected thread); archive sets status archived (soft delete). Selects the thread.");
write_tool!(SaveStoryScene, "save_story_scene", schemas::save_story_scene, "Create, update or archive a scene. create needs title (threadId defaults to the selected thread); update/archive target sceneId (default: the selected scene); archive sets status archived and reopens promises paid off only there. worldAnchor times are calendar text (e.g. 1911-03-02 06:30). Selects the scene.");
write_tool!(SaveStoryPromise, "save_story_promise", schemas::save_story_promise, "Create or update a reader promise, or abandon/fulfill it. create needs name + title (it starts open); other actions need promiseId; update with status open reopens. A payoff beat usually fulfils it (save_promise_beat). Returns the promise with derivedStage, beatStats {total, byKind: {plant, advance, setback, payoff}, byState: {planned, factual, archived}} (as get_story_promise) and its beats.");
write_tool!(SavePromiseBeat, "save_promise_beat", schemas::save_promise_beat, "Set (upsert) or remove a promise's beat on a scene: one beat per promise and scene. kind plant/advance/setback/payoff; a payoff fulfils the open promise unless autoFulfill is false. sceneId defaults to the selected scene. Returns the promise with derivedStage, beatStats {total, byKind: {plant, advance, setback, payoff}, byState: {planned, factual, archived}} (as get_story_promise) and its beats.");
write_tool!(SaveStoryDecision, "save_story_decision", schemas::save_story_decision, "Create, update, decide or drop a decision (ADR). create needs name + title + question; decide needs decision + motivation + risk (unchosen options become rejectedAlternatives; name the winner with chosenOption); drop needs a note. Reopen with update + status open; supersede with update + status superseded + supersededById. Each option text must be unique after trimming (decide identifies the chosen option by its text).");

impl SaveStoryAct {
    fn plan(ctx: &ToolCtx, args: &Value) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args)?;
        let a = reader(args)?;
        let act = action(&a)?;
        let input = pargs::act_input(&a).map_err(plot_err)?;
        let (what, op): (String, Op) = if act == "create" {
            forbid(&a, &act, &["actId"], "to change an act use action update")?;
            (
                "create act".into(),
                Box::new(move |p: &mut Plot| saved(p.create_act(&input)?)),
            )
        } else {
            let id = need_id(&a, "actId", &act, "get_story_tree lists the acts")?;
            (
                format!("update StoryAct #{id}"),
                Box::new(move |p: &mut Plot| saved(p.update_act(id, &input)?)),
            )
        };
        Ok(Planned::new(target.name, db, what, op))
    }
}

impl SaveStoryChapter {
    fn plan(ctx: &ToolCtx, args: &Value) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args)?;
        let a = reader(args)?;
        let act = action(&a)?;
        let input = pargs::chapter_input(&a).map_err(plot_err)?;
        let (what, op): (String, Op) = if act == "create" {
            forbid(
                &a,
                &act,
                &["chapterId"],
                "to change a chapter use action update",
            )?;
            (
                "create chapter".into(),
                Box::new(move |p: &mut Plot| saved(p.create_chapter(&input)?)),
            )
        } else {
            let id = need_id(&a, "chapterId", &act, "get_story_tree lists the chapters")?;
            (
                format!("update StoryChapter #{id}"),
                Box::new(move |p: &mut Plot| saved(p.update_chapter(id, &input)?)),
            )
        };
        Ok(Planned::new(target.name, db, what, op))
    }
}

impl SaveStoryThread {
    fn plan(ctx: &ToolCtx, args: &Value) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args)?;
        let a = reader(args)?;
        let act = action(&a)?;
        let input = pargs::thread_input(&a).map_err(plot_err)?;
        let sel = |id: i64| Some((Field::Set(id), Field::Clear));
        let (what, op): (String, Op) = if act == "create" {
            forbid(
                &a,
                &act,
                &["threadId"],
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
                a.id("threadId").map_err(plot_err)?,
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
    fn plan(ctx: &ToolCtx, args: &Value) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args)?;
        let a = reader(args)?;
        let act = action(&a)?;
        let mut input = pargs::scene_input(&a).map_err(plot_err)?;
        let explicit_thread = a.id("threadId").map_err(plot_err)?;
        let sel =
            |d: &SceneDetailDto| Some((Field::Set(d.scene.thread_id), Field::Set(d.scene.id)));
        let (what, op): (String, Op) = if act == "create" {
            forbid(
                &a,
                &act,
                &["sceneId"],
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
                a.id("sceneId").map_err(plot_err)?,
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
    fn plan(ctx: &ToolCtx, args: &Value) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args)?;
        let a = reader(args)?;
        let act = action(&a)?;
        let input = pargs::promise_input(&a).map_err(plot_err)?;
        let (what, op): (String, Op) = if act == "create" {
            forbid(
                &a,
                &act,
                &["promiseId"],
                "to change a promise use action update",
            )?;
            (
                "create promise".into(),
                Box::new(move |p: &mut Plot| saved(p.create_promise(&input)?)),
            )
        } else {
            let id = need_id(
                &a,
                "promiseId",
                &act,
                "get_story_promise lists the promises",
            )?;
            let act2 = act.clone();
            (
                format!("{act} StoryPromise #{id}"),
                Box::new(move |p: &mut Plot| match act2.as_str() {
                    "abandon" => saved(p.abandon_promise(id, &input)?),
                    "fulfill" => saved(p.fulfill_promise(id, &input)?),
                    _ => saved(p.update_promise(id, &input)?),
                }),
            )
        };
        Ok(Planned::new(target.name, db, what, op))
    }
}

impl SavePromiseBeat {
    fn plan(ctx: &ToolCtx, args: &Value) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args)?;
        let a = reader(args)?;
        let act = action(&a)?;
        let promise = need_id(
            &a,
            "promiseId",
            &act,
            "get_story_promise lists the promises",
        )?;
        let scene = resolve_scene_id(
            &ctx.session_state,
            &target.name,
            a.id("sceneId").map_err(plot_err)?,
        )
        .map_err(plot_err)?;
        let (what, op): (String, Op) = if act == "remove" {
            forbid(
                &a,
                &act,
                &["kind", "note", "autoFulfill"],
                "remove needs only promiseId and sceneId",
            )?;
            (
                format!("remove beat of promise #{promise} on scene #{scene}"),
                Box::new(move |p: &mut Plot| saved(p.remove_beat(promise, scene)?)),
            )
        } else {
            let input = pargs::beat_input(&a).map_err(plot_err)?;
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
    fn plan(ctx: &ToolCtx, args: &Value) -> Result<Planned, ToolError> {
        let (target, db) = open_target(ctx, args)?;
        let a = reader(args)?;
        let act = action(&a)?;
        let input = pargs::decision_input(&a).map_err(plot_err)?;
        let (what, op): (String, Op) = if act == "create" {
            forbid(
                &a,
                &act,
                &["decisionId"],
                "to change a decision use action update",
            )?;
            (
                "create decision".into(),
                Box::new(move |p: &mut Plot| saved(p.create_decision(&input)?)),
            )
        } else {
            let id = need_id(
                &a,
                "decisionId",
                &act,
                "get_story_decision lists the decisions",
            )?;
            let act2 = act.clone();
            (
                format!("{act} StoryDecision #{id}"),
                Box::new(move |p: &mut Plot| match act2.as_str() {
                    "decide" => saved(p.decide_decision(id, &input)?),
                    "drop" => saved(p.drop_decision(id, &input)?),
                    _ => saved(p.update_decision(id, &input)?),
                }),
            )
        };
        Ok(Planned::new(target.name, db, what, op))
    }
}
