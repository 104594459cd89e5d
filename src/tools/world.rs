//! World tools: `execute_world` (a JavaScript script against the world engine, in QuickJS) and
//! `get_scene_world_context` (the plot read tool that shows a scene's slice of the world).
//!
//! `execute_world` is a staging tool: the script runs inside one SQLite transaction (deferred,
//! so a script that only reads never takes the write lock); a script that only read is
//! complete at once (never waits for approval). For one that wrote, every row it changed is
//! recorded as a changeset (`store::changeset`), the preview (the error issues it creates, the slices
//! and the subject states before → after) is built, and the transaction is **rolled back at once**: nothing is
//! held while the author decides. Approval applies the changeset in a new transaction after
//! the stale check (any recorded row changed meanwhile fails the call, nothing written) and
//! drops the touched subjects' checkpoints from the earliest changed instant on, as a direct
//! write does; checkpoints are also self-validating (count and highest rowid of the patches
//! they cover), so rowids that differ from the recording run only make them miss, never lie.

use std::path::{Path, PathBuf};

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension};
use serde_json::{json, Value};

use crate::engine::profiles::WorldAccess;
use crate::engine::tool::{HeldChange, Mutates, Staged, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::net::embed::EmbedConfig;
use crate::plot::wire::PlotId;
use crate::store::changeset::{Changeset, ChangesetError, Recorder};
use crate::world::sandbox::{self, preview, Access, Options, Outcome};
use crate::world::store::{SliceFilter, WorldStore};
use crate::world::{pool, World};

pub struct ExecuteWorld;

const DESCRIPTION: &str = "Run JavaScript against the world engine (the event-sourced timeline of every subject's state). \
The code is the body of an async function; `return` a JSON-able value (≤10 240 characters). API (subject/search/slice calls are async; instants are BigInt): \
world.time.parse(text) → instant, world.time.format(instant) → text, world.time.now() → latest slice instant; \
world.subject.get(id, {deref?, derefDepth? 1–5, at?}) → attrs|null, world.subject.gets(ids, opts), world.subject.list(type?) → [{id,type,name}], world.subject.findRefs(targetId, sourceType?, {at?}) → [{subjectId, attr}]; \
world.search.text(query, {k?, threshold?, types?, attrs?, at?}) → [{subjectId, attr, text, score}]; \
world.slice.list({from?, to?, limit? (positive integer; without from/to the latest N), withPatches?, subjectIds?, subjectMode? any|all (needs subjectIds)}) → [{id, instant, title, summary, kind, patchCount, patches?, issues}] (≤1000; from after to, or subjectIds naming no known subject, throw), \
world.slice.get(sliceId) → the same plus previousInstant (an unknown id throws); \
with write access also world.slice.write({time, title?, summary?, kind?, patches:[{subjectId, path, op: replace|increment|append|remove, value?, summary?, type?, name?}]}) → {sliceId, issues}, \
world.slice.editPatches(sliceId, [{patchId, set:{path?, op?, value?, summary?}} | {patchId, remove:true} | {add: patch}], {time?, title?, summary?, kind?}) → {sliceId, issues} (all patch ids change on every edit; add cannot create subjects), \
world.slice.delete(sliceId) → {issues} (the error issues of its subjects, recomputed). Unknown slice or patch ids throw. \
A slice holds 1 to 100 patches; one slice per instant. A new subject needs `type` (and optionally `name`) on any of its patches in the slice that creates it; on an existing subject type/name are ignored. \
replace on a missing nested path creates the objects on the way (/stats/str → {stats: {str: …}}); remove deletes one key or index. \
Embedding-text lists (events) take only append of {text: \"non-empty\"} (no vector or other fields; no replace/remove inside, e.g. /events/0); records (memory) take replace at /memory/<key>. \
A patch that cannot apply at its instant does NOT fail the write: the slice is kept with all its patches, the failing patch is skipped when state is computed, and an issue is returned and listed on the slice until a later write fixes it: \
E1 broken-relative (increment/append without a usable base, e.g. before the base is written), E3 invalid-path (list index past the end, a path through a scalar), E4 cross-ref (a path through a subject:// reference); E2 dangling-ref and E5 embedding-whole-replace are refused. \
Writing a base into the past clears a later E1 and reports A1 base-shifted; A2 masked = a later absolute change overrides this one. \
Issues are {code, label, severity (error|advisory), sliceId?, patchId?, subjectId, attr, path?, op?, title, message, explanation{whatHappened, whyItMatters, suggestedAction}}. \
`at`, `time`, `from`, `to` take a BigInt, an integer or a date in the project calendar. \
The whole script is one transaction: throw to undo everything (throw on an error issue you did not intend); a script that wrote waits for the author's approval, whose preview lists every error issue the write creates (if the rows it changed are changed by someone else before that, the call fails as stale). Result: {data, issues}; report advisories. \
Limits: 5 s (read-only) / 15 s (writing), 64 MiB, no file/network/process access; console.log is captured.";

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorldArgs {
    /// JavaScript: the body of an async function receiving `world` and `console`.
    #[schemars(length(min = 1, max = 200000))]
    pub code: String,
    /// Another open project (its folder name); default: this project.
    #[schemars(length(min = 1))]
    pub project_root: Option<String>,
}

impl TypedTool for ExecuteWorld {
    type Args = WorldArgs;
    const NAME: &'static str = "execute_world";
    const GROUP: &'static str = "world";
    const DESCRIPTION: &'static str = DESCRIPTION;
    /// Whether a call mutates is known only by running it (see `stage`); listed as "depends".
    const MUTATES: Mutates = Mutates::Depends(|_| true);
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[World]).prompt_gated_in_neurobook()
    };
    const STAGING: bool = true;

    /// One target for every world write, so "approve for this session" covers world writes.
    fn write_targets(&self, _ctx: &ToolCtx, _args: &WorldArgs) -> Vec<String> {
        vec!["world".into()]
    }

    fn stage(&self, ctx: &ToolCtx, args: &WorldArgs) -> Option<Result<Staged, ToolError>> {
        Some(stage(ctx, args))
    }

    /// Only for callers outside the engine's approval path: runs and commits.
    fn run(&self, ctx: &ToolCtx, args: &WorldArgs) -> Result<ToolOutput, ToolError> {
        match stage(ctx, args)? {
            Staged::Done(out) => Ok(out),
            Staged::Held(h) => h.commit(),
        }
    }
}

fn project_root(ctx: &ToolCtx, project_root: Option<&str>) -> Result<PathBuf, ToolError> {
    match project_root {
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

fn stage(ctx: &ToolCtx, args: &WorldArgs) -> Result<Staged, ToolError> {
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
    let code = args.code.as_str();
    let root = project_root(ctx, args.project_root.as_deref())?;
    let world =
        pool::world(&root).map_err(|e| ToolError::failed(format!("execute_world failed: {e}")))?;
    let db = root.join(".nbook").join("project.sqlite");
    let conn = pool::take(&db).map_err(|e| ToolError::failed(e.to_string()))?;
    // Settle the checkpoint schema check outside the script's transaction: if it has to
    // write, that write commits now instead of turning a read-only script into a writer.
    drop(WorldStore::new(&conn, &world));
    if let Err(e) = conn.execute_batch("BEGIN DEFERRED") {
        pool::give(&db, conn);
        return Err(ToolError::failed(format!(
            "cannot start a transaction: {e}"
        )));
    }
    // What the script reads from: another write to it before approval makes this one stale
    // (its preview's states, and values the script computed from reads, would be wrong).
    let fingerprint = match world_fingerprint(&conn) {
        Ok(f) => f,
        Err(e) => {
            pool::give(&db, conn);
            return Err(ToolError::failed(format!("execute_world failed: {e}")));
        }
    };
    // SAFETY: `conn` comes back from `sandbox::run` in every case and is given back to the
    // pool (which may close it) only after `recorder` is finished or dropped below.
    let recorder = match unsafe { Recorder::start_unbound(&conn) } {
        Ok(r) => r,
        Err(e) => {
            pool::give(&db, conn);
            return Err(ToolError::failed(format!("execute_world failed: {e}")));
        }
    };
    let (conn, result) = sandbox::run(
        conn,
        &world,
        code,
        &Options::for_access(access),
        EmbedConfig::from_config(&ctx.config, "world.search.text"),
    );
    let out = match result {
        Ok(o) => o,
        Err(e) => {
            let msg = e.to_string();
            drop(recorder);
            let hint = match crate::store::check_writable(&conn) {
                Err(e) if msg.contains("readonly") => format!(" {e}"),
                _ if msg.contains("database is locked") || msg.contains("database is busy") => {
                    " Another change to this project's database is being written right now; try again in a moment.".into()
                }
                _ => String::new(),
            };
            pool::give(&db, conn);
            return Err(ToolError::failed(format!(
                "execute_world failed: {msg}. Nothing was written.{hint}"
            )));
        }
    };
    let output = tool_output(&out);
    if !out.wrote() {
        drop(recorder);
        let _ = conn.execute_batch("COMMIT");
        // Checkpoints the reads found worth keeping, if nobody holds a lock right now.
        WorldStore::sharing(&conn, &world, &out.pending, out.checkpoints).flush_checkpoints();
        pool::give(&db, conn);
        return Ok(Staged::Done(output));
    }
    let recorded = (|| {
        let st = WorldStore::sharing(&conn, &world, &out.pending, out.checkpoints);
        let preview = preview::build(&st, &out.changes, &out.issues)
            .map_err(|e| format!("while preparing the preview: {e}"))?;
        let cs = recorder.finish().map_err(|e| e.to_string())?;
        Ok::<_, String>((preview, cs))
    })();
    // Checkpoints computed inside the script's transaction may include its writes: drop them
    // with the transaction.
    out.pending.clear();
    let rolled_back = conn.execute_batch("ROLLBACK");
    pool::give(&db, conn);
    let (preview, cs) = recorded.map_err(|e| {
        ToolError::failed(format!("execute_world failed {e}. Nothing was written."))
    })?;
    rolled_back.map_err(|e| {
        ToolError::failed(format!(
            "execute_world could not roll back its trial run ({e}); nothing was written"
        ))
    })?;
    Ok(Staged::Held(HeldChange::new(
        preview,
        move || apply(&db, &cs, &fingerprint, output),
        || {},
    )))
}

/// Apply a recorded world write at approval: stale check, the checkpoints it invalidates,
/// commit.
fn apply(
    db: &Path,
    cs: &Changeset,
    fingerprint: &Fingerprint,
    output: ToolOutput,
) -> Result<ToolOutput, ToolError> {
    let conn = pool::take(db).map_err(|e| ToolError::failed(format!("execute_world: {e}")))?;
    let result = apply_on(&conn, cs, fingerprint);
    if !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    pool::give(db, conn);
    result.map(|()| output)
}

/// Row count and highest rowid of each world table. Neither program edits a patch in place
/// (see `world::index`), so any other write to the timeline changes one of these.
type Fingerprint = Vec<(&'static str, i64, Option<i64>)>;

const WORLD_TABLES: [&str; 3] = ["WorldSubject", "WorldSlice", "WorldPatch"];

fn world_fingerprint(conn: &Connection) -> rusqlite::Result<Fingerprint> {
    WORLD_TABLES
        .iter()
        .map(|t| {
            conn.prepare_cached(&format!(r#"SELECT count(*), max(rowid) FROM "{t}""#))?
                .query_row([], |r| Ok((*t, r.get(0)?, r.get(1)?)))
        })
        .collect()
}

fn apply_on(conn: &Connection, cs: &Changeset, fingerprint: &Fingerprint) -> Result<(), ToolError> {
    crate::store::check_writable(conn)
        .map_err(|e| ToolError::failed(format!("execute_world: {e}")))?;
    let db_err = |e: rusqlite::Error| {
        ToolError::failed(format!(
            "the world change could not be written ({e}); nothing was written"
        ))
    };
    conn.execute_batch("BEGIN IMMEDIATE").map_err(db_err)?;
    let now = world_fingerprint(conn).map_err(db_err)?;
    let moved: Vec<&str> = now
        .iter()
        .zip(fingerprint)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a.0)
        .collect();
    let applied = if moved.is_empty() {
        cs.apply(conn)
    } else {
        Err(ChangesetError::Stale(format!(
            "{} changed since the preview (another write added or removed rows)",
            moved.join(", ")
        )))
    };
    match applied {
        Ok(()) => {}
        Err(ChangesetError::Stale(why)) => {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(ToolError::Stale(format!(
                "the world rows this execute_world script changes were changed after the preview was shown: {why}. Nothing was written; read the world again and run the script anew."
            )));
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(ToolError::failed(format!("execute_world: {e}")));
        }
    }
    forget_checkpoints(conn, cs).map_err(db_err)?;
    conn.execute_batch("COMMIT").map_err(db_err)?;
    crate::store::applied::committed(cs.clone());
    Ok(())
}

/// Drop the world checkpoints an applied changeset invalidates (every subject whose patches
/// it changed, from the earliest instant changed). Also used when a change is reverted.
pub(crate) fn forget_checkpoints(conn: &Connection, cs: &Changeset) -> rusqlite::Result<()> {
    for (subject, instant) in &touched_subjects(conn, cs)? {
        crate::world::index::delete_from(conn, subject, *instant)?;
    }
    Ok(())
}

/// Every subject whose patches the changeset changes, with the earliest instant changed.
fn touched_subjects(
    conn: &Connection,
    cs: &Changeset,
) -> rusqlite::Result<std::collections::BTreeMap<String, i64>> {
    let cols: Vec<String> = conn
        .prepare_cached(r#"SELECT name FROM pragma_table_info('WorldPatch') ORDER BY cid"#)?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let at = |name: &str| cols.iter().position(|c| c == name);
    let (Some(i_subject), Some(i_instant)) = (at("subjectId"), at("instant")) else {
        return Ok(Default::default());
    };
    let mut out = std::collections::BTreeMap::new();
    let rows = cs.rows().map_err(|e| {
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
            Some(e.to_string()),
        )
    })?;
    for c in rows
        .iter()
        .filter(|c| c.table.eq_ignore_ascii_case("WorldPatch"))
    {
        let pick = |i: usize| -> Vec<SqlValue> {
            [c.old.get(i), c.new.get(i)]
                .into_iter()
                .flatten()
                .flatten()
                .cloned()
                .collect()
        };
        let mut subjects: Vec<String> = pick(i_subject)
            .into_iter()
            .filter_map(|v| match v {
                SqlValue::Text(t) => Some(t),
                _ => None,
            })
            .collect();
        let mut instants: Vec<i64> = pick(i_instant)
            .into_iter()
            .filter_map(|v| match v {
                SqlValue::Integer(i) => Some(i),
                _ => None,
            })
            .collect();
        if subjects.is_empty() || instants.is_empty() {
            // An update that kept these columns: read them from the applied row.
            let key = c.key();
            let row: Option<(String, i64)> = conn
                .prepare_cached(
                    r#"SELECT "subjectId","instant" FROM "WorldPatch" WHERE "id" IS ?1"#,
                )?
                .query_row(rusqlite::params_from_iter(key.iter().take(1)), |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()?;
            if let Some((s, i)) = row {
                subjects.push(s);
                instants.push(i);
            }
        }
        let Some(first) = instants.iter().min().copied() else {
            continue;
        };
        for s in subjects {
            let e = out.entry(s).or_insert(first);
            *e = (*e).min(first);
        }
    }
    Ok(out)
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

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SceneWorldArgs {
    pub scene_id: Option<PlotId>,
    #[schemars(length(min = 1))]
    pub project_root: Option<String>,
}

impl TypedTool for GetSceneWorldContext {
    type Args = SceneWorldArgs;
    const NAME: &'static str = "get_scene_world_context";
    const GROUP: &'static str = "plot";
    const DESCRIPTION: &'static str = "World context of a scene: the slices between its start and end time that touch its subjects (and location), and those subjects' states at its end. sceneId defaults to the selected scene. Fails if the scene has no time range.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Plot, World])
    };
    const PARALLEL_SAFE: bool = true;

    fn run(&self, ctx: &ToolCtx, args: &SceneWorldArgs) -> Result<ToolOutput, ToolError> {
        let root = project_root(ctx, args.project_root.as_deref())?;
        let scene_id = scene_id(ctx, args.scene_id)?;
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

fn scene_id(ctx: &ToolCtx, explicit: Option<PlotId>) -> Result<i64, ToolError> {
    let from = |v: &Value| {
        v.as_i64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
    };
    if let Some(id) = explicit {
        return Ok(id.get());
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
