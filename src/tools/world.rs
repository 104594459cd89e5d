//! World tools: `execute_world` (a JavaScript script against the world engine, in QuickJS) and
//! `get_scene_world_context` (the plot read tool that shows a scene's slice of the world).
//!
//! `execute_world` is a staging tool: the script runs inside one SQLite transaction; a script
//! that only read is complete at once (never waits for approval), one that wrote is held with
//! its transaction open and a preview of the slices and the subject states before → after, and
//! the author's approval commits it while a rejection (or cancellation) rolls it back.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension};
use serde_json::{json, Value};

use crate::engine::profiles::WorldAccess;
use crate::engine::tool::{HeldChange, Mutates, Staged, Tool, ToolCtx, ToolError, ToolOutput};
use crate::world::embed::EmbedConfig;
use crate::world::sandbox::{self, preview, Access, Options, Outcome};
use crate::world::store::{SliceFilter, WorldStore};
use crate::world::{pool, World};

pub struct ExecuteWorld;

const DESCRIPTION: &str = "Run JavaScript against the world engine (the event-sourced timeline of every subject's state). \
The code is the body of an async function; `return` a JSON-able value (≤10 240 characters). API (subject/search/slice calls are async; instants are BigInt): \
world.time.parse(text) → instant, world.time.format(instant) → text, world.time.now() → latest slice instant; \
world.subject.get(id, {deref?, derefDepth? 1–5, at?}) → attrs|null, world.subject.gets(ids, opts), world.subject.list(type?) → [{id,type,name}], world.subject.findRefs(targetId, sourceType?, {at?}) → [{subjectId, attr}]; \
world.search.text(query, {k?, threshold?, types?, attrs?, at?}) → [{subjectId, attr, text, score}]; \
world.slice.list({from?, to?, limit?, withPatches?, subjectIds?, subjectMode? any|all}), world.slice.get(sliceId); \
with write access also world.slice.write({time, title?, summary?, kind?, patches:[{subjectId, path, op: replace|increment|append|remove, value?, summary?, type? and name? on a new subject's first patch}]}) → {sliceId, issues}, \
world.slice.editPatches(sliceId, [{patchId, set:{…}} | {patchId, remove:true} | {add: patch}], {time?, title?, summary?, kind?}) (patch ids change on every edit), world.slice.delete(sliceId). \
`at`, `time`, `from`, `to` take a BigInt, an integer or a date in the project calendar. One slice per instant, ≤100 patches. \
The whole script is one transaction: throw to undo everything; a script that wrote waits for the author's approval. Result: {data, issues}; throw on error issues, report advisories. \
Limits: 5 s (read-only) / 15 s (writing), 64 MiB, no file/network/process access; console.log is captured.";

impl Tool for ExecuteWorld {
    fn name(&self) -> &'static str {
        "execute_world"
    }

    fn group(&self) -> &'static str {
        "world"
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "minLength": 1, "maxLength": 200000, "description": "JavaScript: the body of an async function receiving `world` and `console`."},
                "projectRoot": {"type": "string", "minLength": 1, "description": "Another open project (its folder name); default: this project."}
            },
            "required": ["code"],
            "additionalProperties": false
        })
    }

    /// Whether a call mutates is known only by running it (see `stage`); listed as "depends".
    fn mutates(&self) -> Mutates {
        Mutates::Depends(|_| true)
    }
    fn effects(&self) -> crate::engine::tool::Effects {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[World]).prompt_gated_in_neurobook()
    }

    fn is_staging(&self) -> bool {
        true
    }

    /// One target for every world write, so "approve for this session" covers world writes.
    fn write_targets(&self, _ctx: &ToolCtx, _args: &Value) -> Vec<String> {
        vec!["world".into()]
    }

    fn stage(&self, ctx: &ToolCtx, args: &Value) -> Option<Result<Staged, ToolError>> {
        Some(stage(ctx, args))
    }

    /// Only for callers outside the engine's approval path: runs and commits.
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        match stage(ctx, args)? {
            Staged::Done(out) => Ok(out),
            Staged::Held(h) => h.commit(),
        }
    }
}

fn project_root(ctx: &ToolCtx, args: &Value) -> Result<PathBuf, ToolError> {
    match args.get("projectRoot").and_then(Value::as_str) {
        None => Ok(ctx.workspace.root().to_path_buf()),
        Some(p) if p == ctx.workspace.name() => Ok(ctx.workspace.root().to_path_buf()),
        Some(p) if p.contains('/') || p.contains('\\') || p == ".." => Err(ToolError::failed(
            format!("projectRoot must be a project's folder name (one path segment), not {p:?}"),
        )),
        Some(p) => ctx
            .workspace
            .sibling_root(p)
            .map(|r| r.to_path_buf())
            .ok_or_else(|| {
                ToolError::failed(format!(
                    "project {p:?} is not open; open it first or omit projectRoot"
                ))
            }),
    }
}

fn stage(ctx: &ToolCtx, args: &Value) -> Result<Staged, ToolError> {
    let access = match ctx.profile.world_access {
        WorldAccess::None => {
            return Err(ToolError::failed(format!(
                "profile {} has no world access (world_access = \"none\")",
                ctx.profile.key
            )))
        }
        WorldAccess::Read => Access::Read,
        WorldAccess::Write => Access::Write,
    };
    let code = args
        .get("code")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::failed("`code` is required"))?;
    let root = project_root(ctx, args)?;
    let world =
        pool::world(&root).map_err(|e| ToolError::failed(format!("execute_world failed: {e}")))?;
    let db = root.join(".nbook").join("project.sqlite");
    let conn = pool::take(&db).map_err(|e| ToolError::failed(e.to_string()))?;
    if let Err(e) = conn.execute_batch("BEGIN DEFERRED") {
        pool::give(&db, conn);
        return Err(ToolError::failed(format!(
            "cannot start a transaction: {e}"
        )));
    }
    let (conn, result) = sandbox::run(
        conn,
        &world,
        code,
        &Options::for_access(access),
        EmbedConfig::from_config(&ctx.config),
    );
    let out = match result {
        Ok(o) => o,
        Err(msg) => {
            pool::give(&db, conn);
            let hint = if msg.contains("database is locked") || msg.contains("database is busy") {
                " Another change to this project's database is in progress or waiting for the author's approval; try again after it is decided."
            } else {
                ""
            };
            return Err(ToolError::failed(format!(
                "execute_world failed: {msg}. Nothing was written.{hint}"
            )));
        }
    };
    let output = tool_output(&out);
    if !out.wrote() {
        let _ = conn.execute_batch("COMMIT");
        // Checkpoints the reads found worth keeping, if nobody holds a lock right now.
        WorldStore::sharing(&conn, &world, &out.pending, out.checkpoints).flush_checkpoints();
        pool::give(&db, conn);
        return Ok(Staged::Done(output));
    }
    let preview = {
        let st = WorldStore::sharing(&conn, &world, &out.pending, out.checkpoints);
        st.flush_checkpoints();
        preview::build(&st, &out.changes, &out.issues)
    };
    let preview = match preview {
        Ok(p) => p,
        Err(e) => {
            pool::give(&db, conn);
            return Err(ToolError::failed(format!(
                "execute_world failed while preparing the preview: {e}. Nothing was written."
            )));
        }
    };
    Ok(Staged::Held(held(db, conn, preview, output)))
}

fn held(
    db: PathBuf,
    conn: Connection,
    preview: crate::engine::types::Preview,
    output: ToolOutput,
) -> HeldChange {
    let slot = Arc::new(Mutex::new(Some(conn)));
    let (c_slot, r_slot) = (slot.clone(), slot);
    let (c_db, r_db) = (db.clone(), db);
    HeldChange::new(
        preview,
        move || {
            let conn = c_slot
                .lock()
                .ok()
                .and_then(|mut s| s.take())
                .ok_or_else(|| ToolError::failed("the held world change is gone"))?;
            match conn.execute_batch("COMMIT") {
                Ok(()) => {
                    pool::give(&c_db, conn);
                    Ok(output)
                }
                Err(e) => {
                    pool::give(&c_db, conn);
                    Err(ToolError::failed(format!(
                        "the world change could not be committed ({e}); nothing was written"
                    )))
                }
            }
        },
        move || {
            if let Some(conn) = r_slot.lock().ok().and_then(|mut s| s.take()) {
                let _ = conn.execute_batch("ROLLBACK");
                pool::give(&r_db, conn);
            }
        },
    )
}

fn tool_output(out: &Outcome) -> ToolOutput {
    let mut content = match &out.data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if !out.issues.is_empty() {
        content.push_str("\n\nissues: ");
        content.push_str(&serde_json::to_string(&out.issues).unwrap_or_default());
    }
    if !out.logs.is_empty() {
        content.push_str("\n\nconsole:\n");
        content.push_str(&out.logs.join("\n"));
    }
    ToolOutput {
        content,
        details: Some(json!({"data": out.data, "issues": out.issues, "logs": out.logs})),
        ..Default::default()
    }
}

/// `get_scene_world_context`: the slices in a scene's time window that touch its subjects, and
/// their states at the scene's end, read from the scene's anchor in `StoryScene`.
pub struct GetSceneWorldContext;

impl Tool for GetSceneWorldContext {
    fn name(&self) -> &'static str {
        "get_scene_world_context"
    }

    fn group(&self) -> &'static str {
        "plot"
    }

    fn description(&self) -> &'static str {
        "World context of a scene: the slices between its start and end time that touch its subjects (and location), and those subjects' states at its end. sceneId defaults to the selected scene. Fails if the scene has no time range."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "sceneId": {"type": ["string", "integer"], "pattern": "^[1-9][0-9]*$", "minimum": 1},
                "projectRoot": {"type": "string", "minLength": 1}
            },
            "additionalProperties": false
        })
    }

    fn mutates(&self) -> Mutates {
        Mutates::No
    }
    fn effects(&self) -> crate::engine::tool::Effects {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Plot, World])
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let root = project_root(ctx, args)?;
        let scene_id = scene_id(ctx, args)?;
        let db = root.join(".nbook").join("project.sqlite");
        let world = pool::world(&root).map_err(|e| ToolError::failed(e.to_string()))?;
        let conn = pool::take(&db).map_err(|e| ToolError::failed(e.to_string()))?;
        let result = scene_context(&conn, &world, scene_id);
        pool::give(&db, conn);
        let v = result?;
        Ok(ToolOutput {
            content: v.to_string(),
            details: Some(v),
            ..Default::default()
        })
    }
}

fn scene_id(ctx: &ToolCtx, args: &Value) -> Result<i64, ToolError> {
    let from = |v: &Value| {
        v.as_i64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
    };
    if let Some(v) = args.get("sceneId") {
        return from(v)
            .ok_or_else(|| ToolError::failed("sceneId must be a scene id such as \"12\""));
    }
    ctx.session_state
        .get("plot.selection")
        .and_then(|s| s.get("sceneId"))
        .and_then(from)
        .ok_or_else(|| ToolError::failed("no sceneId given and no scene is selected; pass sceneId (see get_story_thread for ids)"))
}

pub fn scene_context(conn: &Connection, world: &World, scene_id: i64) -> Result<Value, ToolError> {
    let db = |e: rusqlite::Error| ToolError::failed(format!("cannot read the scene: {e}"));
    type Anchor = (Option<i64>, Option<i64>, String, Option<String>);
    let row: Option<Anchor> = conn
        .query_row(
            r#"SELECT "startInstant","endInstant","subjectIdsJson","locationSubjectId" FROM "StoryScene" WHERE "id" = ?1"#,
            [scene_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()
        .map_err(db)?;
    let Some((start, end, ids_json, location)) = row else {
        return Err(ToolError::failed(format!("there is no scene {scene_id}")));
    };
    let (Some(start), Some(end)) = (start, end) else {
        return Err(ToolError::failed(format!(
            "scene {scene_id} has no time range; set its worldAnchor startTime and endTime with save_story_scene first"
        )));
    };
    // NeuroBook reads malformed JSON as empty.
    let mut ids: Vec<String> = serde_json::from_str::<Vec<Value>>(&ids_json)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| v.as_str().map(String::from))
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(l) = location.filter(|l| !l.is_empty()) {
        if !ids.contains(&l) {
            ids.push(l);
        }
    }
    let st = WorldStore::new(conn, world);
    let fail = |e: crate::world::WorldError| ToolError::failed(e.to_string());
    let slices = if ids.is_empty() {
        Vec::new()
    } else {
        st.list_slices(&SliceFilter {
            from: Some(start.min(end)),
            to: Some(start.max(end)),
            subject_ids: ids.clone(),
            ..Default::default()
        })
        .map_err(fail)?
    };
    let mut states = Vec::new();
    let mut unresolved = Vec::new();
    for id in &ids {
        match st.state_at(id, end).map_err(fail)? {
            Some(s) => states.push(json!({"subjectId": s.subject.id, "type": s.subject.kind, "name": s.subject.name, "attrs": s.attrs})),
            None => unresolved.push(id.clone()),
        }
    }
    st.flush_checkpoints();
    Ok(json!({
        "slices": slices.iter().map(|s| json!({
            "id": s.id, "time": st.time(s.instant), "instant": s.instant, "title": s.title,
            "summary": s.summary, "kind": s.kind, "patchCount": s.patch_count
        })).collect::<Vec<_>>(),
        "subjectStates": states,
        "unresolvedSubjectIds": unresolved,
    }))
}
