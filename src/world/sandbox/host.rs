//! The Rust side of the sandbox API: each `world.*` call arrives as an op name and a JSON
//! array of arguments and answers with JSON. Write ops are refused here too when the profile
//! only reads, so hiding them in the prelude is not the only guard.

use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde_json::{json, Map, Value};

use std::sync::Arc;

use crate::net::embed::{EmbedConfig, EmbedError};
use crate::world::embed::{self, SearchOptions};
use crate::world::index::Pending;
use crate::world::issues::Issue;
use crate::world::prepare::NewPatch;
use crate::world::schema::{short, Op};
use crate::world::store::{SliceFilter, SliceInfo, WorldStore, MAX_SLICES};
use crate::world::write::{Change, NewSlice, PatchEdit, SliceMeta};
use crate::world::{World, WorldError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

const MAX_LOG_LINES: usize = 200;
const MAX_LOG_BYTES: usize = 20_000;

pub struct Host {
    /// Always `Some` until the run takes it back.
    pub conn: Option<Connection>,
    pub world: World,
    pub pending: Pending,
    pub checkpoints: bool,
    pub access: Access,
    /// Latest slice instant when the script started (0 for an empty timeline).
    pub now: i64,
    /// Where subject reads look by default: `now`, raised to the latest instant written.
    pub query_instant: i64,
    pub changes: Vec<Change>,
    pub issues: Vec<Issue>,
    pub logs: Vec<String>,
    log_bytes: usize,
    /// The embedding service for `world.search.text`, or why there is none (shared: it is
    /// reported to every search the script makes).
    pub embedding: Result<EmbedConfig, Arc<EmbedError>>,
    pub deadline: Instant,
}

type Out = Result<Value, WorldError>;

/// Why a `world.*` call from the script was refused; the prelude's bridge throws it into the
/// script as an exception with this text.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("world.{op} was refused: the script's time limit has passed and it is being stopped")]
    TimeUp { op: String },
    /// The prelude sent arguments that are not JSON (a bug in the prelude, not the script's).
    #[error("{op}: bad arguments: {source}")]
    BadArguments {
        op: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("world.{op} is not available: this profile has read-only world access")]
    ReadOnly { op: String },
    #[error("the world database is closed")]
    Closed,
    #[error(transparent)]
    World(#[from] WorldError),
}

/// The latest slice instant (0 for none) and whether checkpoints may be used.
pub fn probe(conn: &Connection, world: &World) -> Result<(i64, bool), WorldError> {
    let st = WorldStore::new(conn, world);
    Ok((st.latest_instant()?.unwrap_or(0), st.uses_checkpoints()))
}

impl Host {
    /// `now` and `checkpoints` come from [`probe`].
    pub fn new(
        conn: Connection,
        world: World,
        access: Access,
        embedding: Result<EmbedConfig, Arc<EmbedError>>,
        deadline: Instant,
        (now, checkpoints): (i64, bool),
    ) -> Host {
        Host {
            conn: Some(conn),
            world,
            pending: Pending::default(),
            checkpoints,
            access,
            now,
            query_instant: now,
            changes: Vec::new(),
            issues: Vec::new(),
            logs: Vec::new(),
            log_bytes: 0,
            embedding,
            deadline,
        }
    }

    pub fn log(&mut self, level: &str, text: &str) {
        if self.logs.len() >= MAX_LOG_LINES || self.log_bytes >= MAX_LOG_BYTES {
            if self.logs.last().is_none_or(|l| !l.starts_with("… ")) {
                self.logs
                    .push("… further console output was dropped".into());
            }
            return;
        }
        let line = if level == "log" || level == "info" {
            text.to_string()
        } else {
            format!("[{level}] {text}")
        };
        self.log_bytes += line.len();
        self.logs.push(line);
    }

    /// Run one API call. Errors become JavaScript exceptions with the same message.
    pub fn call(&mut self, op: &str, args: &str) -> Result<String, CallError> {
        // A script that keeps calling the host (from a loop or from promise jobs) is bounded
        // by the deadline here too, not only by the interrupt between bytecodes.
        if Instant::now() >= self.deadline {
            return Err(CallError::TimeUp { op: op.into() });
        }
        let args: Vec<Value> =
            serde_json::from_str(args).map_err(|source| CallError::BadArguments {
                op: op.into(),
                source,
            })?;
        let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
        let write_op = matches!(op, "slice.write" | "slice.editPatches" | "slice.delete");
        if write_op && self.access != Access::Write {
            return Err(CallError::ReadOnly { op: op.into() });
        }
        let conn = self.conn.as_ref().ok_or(CallError::Closed)?;
        let st = WorldStore::sharing(conn, &self.world, &self.pending, self.checkpoints);
        let mut found: Vec<Issue> = Vec::new();
        let mut change: Option<(Change, i64)> = None;
        let out: Out = (|| match op {
            "time.parse" => {
                let text = arg(0);
                let text = text
                    .as_str()
                    .ok_or_else(|| WorldError::invalid("world.time.parse needs a string"))?;
                Ok(json!(st.calendar.parse(text)?.to_string()))
            }
            "time.format" => Ok(json!(st.calendar.format(self.instant(
                &st,
                &arg(0),
                "the instant"
            )?)?)),
            "time.now" => Ok(json!(self.now.to_string())),
            "subject.get" => {
                let (at, depth) = self.read_opts(&st, &arg(1))?;
                let id = arg(0);
                let id = id.as_str().ok_or_else(|| {
                    WorldError::invalid("world.subject.get needs a subject id (text)")
                })?;
                self.get(&st, id, at, depth, &mut found)
            }
            "subject.gets" => {
                let (at, depth) = self.read_opts(&st, &arg(1))?;
                let ids = arg(0);
                let ids = ids
                    .as_array()
                    .ok_or_else(|| WorldError::invalid("world.subject.gets needs a list of ids"))?;
                let mut out = Vec::new();
                for id in ids {
                    let id = id.as_str().ok_or_else(|| {
                        WorldError::invalid(format!("subject ids are text, not {}", short(id)))
                    })?;
                    out.push(self.get(&st, id, at, depth, &mut found)?);
                }
                Ok(Value::Array(out))
            }
            "subject.list" => {
                let t = arg(0);
                let subjects = st.subjects(t.as_str())?;
                Ok(serde_json::to_value(subjects).unwrap_or_default())
            }
            "subject.findRefs" => {
                let target = arg(0);
                let target = target.as_str().ok_or_else(|| {
                    WorldError::invalid("world.subject.findRefs needs a subject id")
                })?;
                let at = self
                    .opt_instant(&st, &arg(2), "at")?
                    .unwrap_or(self.query_instant);
                let t = arg(1);
                let refs = st.find_refs(target, t.as_str(), at)?;
                Ok(refs
                    .into_iter()
                    .map(|(s, a)| json!({"subjectId": s, "attr": a}))
                    .collect())
            }
            "search.text" => self.search(&st, &arg(0), &arg(1)),
            "slice.list" => self.list(&st, &arg(0)),
            "slice.get" => {
                let id = arg(0);
                let id = id
                    .as_str()
                    .ok_or_else(|| WorldError::invalid("world.slice.get needs a slice id"))?;
                let s = st.slice(id)?.ok_or_else(|| {
                    WorldError::NotFound(format!(
                        "world.slice.get: there is no slice {id:?}; find slice ids with world.slice.list"
                    ))
                })?;
                let prev = st.previous_instant(s.instant)?;
                let mut v = slice_json(&s);
                v["previousInstant"] = prev.map(|p| json!(p.to_string())).unwrap_or(Value::Null);
                let mut issues = st.issues_of_slices(&[(s.id.clone(), s.instant)])?;
                v["issues"] = serde_json::to_value(issues.remove(&s.id).unwrap_or_default())
                    .unwrap_or_default();
                Ok(v)
            }
            "slice.write" => {
                let s = self.new_slice(&st, &arg(0))?;
                let out = st.write_slice(&s)?;
                found.extend(out.issues.clone());
                change = Some((out.change, s.instant));
                Ok(json!({"sliceId": out.slice_id, "issues": out.issues}))
            }
            "slice.editPatches" => {
                let id = arg(0);
                let id = id.as_str().ok_or_else(|| {
                    WorldError::invalid("world.slice.editPatches needs a slice id")
                })?;
                let edits = parse_edits(&arg(1))?;
                let meta = self.meta(&st, &arg(2))?;
                let out = st.edit_slice(id, &edits, &meta)?;
                found.extend(out.issues.clone());
                let t = out
                    .change
                    .after
                    .as_ref()
                    .map_or(self.query_instant, |a| a.instant);
                change = Some((out.change, t));
                Ok(json!({"sliceId": out.slice_id, "issues": out.issues}))
            }
            "slice.delete" => {
                let id = arg(0);
                let id = id
                    .as_str()
                    .ok_or_else(|| WorldError::invalid("world.slice.delete needs a slice id"))?;
                let out = st.delete_slice(id)?;
                found.extend(out.issues.clone());
                change = Some((out.change, i64::MIN));
                Ok(json!({"issues": out.issues}))
            }
            other => Err(WorldError::invalid(format!(
                "unknown world API call {other}"
            ))),
        })();
        drop(st);
        self.issues.extend(found);
        if let Some((c, t)) = change {
            self.query_instant = self.query_instant.max(t);
            self.changes.push(c);
        }
        Ok(out?.to_string())
    }

    /// An instant argument: a BigInt, an integer, or a date in the project calendar.
    fn instant(&self, st: &WorldStore<'_>, v: &Value, what: &str) -> Result<i64, WorldError> {
        match v {
            Value::Number(n) => n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() <= 9.007_199_254_740_991e15).map(|f| f as i64))
                .ok_or_else(|| WorldError::invalid(format!("{what} must be a whole number of seconds, not {n}"))),
            Value::Object(o) if o.len() == 1 && o.get("$bigint").is_some_and(Value::is_string) => o["$bigint"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| WorldError::invalid(format!("{what} does not fit a 64-bit instant"))),
            Value::String(s) => Ok(st.calendar.parse(s)?),
            other => Err(WorldError::invalid(format!(
                "{what} must be a BigInt instant, an integer, or a date in the project calendar (e.g. {:?}), not {}",
                st.calendar.format_lossy(self.now),
                short(other)
            ))),
        }
    }

    fn opt_instant(
        &self,
        st: &WorldStore<'_>,
        opts: &Value,
        key: &str,
    ) -> Result<Option<i64>, WorldError> {
        match opts.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.instant(st, v, &format!("`{key}`")).map(Some),
        }
    }

    fn read_opts(&self, st: &WorldStore<'_>, opts: &Value) -> Result<(i64, u32), WorldError> {
        if !opts.is_object() {
            return Err(WorldError::invalid(
                "options must be an object like {deref: true, at: …}",
            ));
        }
        let at = self
            .opt_instant(st, opts, "at")?
            .unwrap_or(self.query_instant);
        let deref = opts.get("deref").and_then(Value::as_bool).unwrap_or(false);
        let depth = match opts.get("derefDepth") {
            None | Some(Value::Null) => 1,
            Some(v) => v
                .as_u64()
                .filter(|d| (1..=5).contains(d))
                .ok_or_else(|| WorldError::invalid("derefDepth must be 1 to 5"))?
                as u32,
        };
        Ok((at, if deref { depth } else { 0 }))
    }

    fn get(
        &self,
        st: &WorldStore<'_>,
        id: &str,
        at: i64,
        depth: u32,
        found: &mut Vec<Issue>,
    ) -> Out {
        let Some(state) = st.state_at(id, at)? else {
            return Ok(Value::Null);
        };
        found.extend(state.issues);
        let mut v = Value::Object(state.attrs);
        if depth > 0 {
            let mut seen = vec![id.to_string()];
            deref(st, &mut v, at, depth, &mut seen)?;
        }
        Ok(v)
    }

    fn search(&self, st: &WorldStore<'_>, query: &Value, opts: &Value) -> Out {
        let cfg = self
            .embedding
            .as_ref()
            .map_err(|e| WorldError::Embedding(e.clone()))?;
        let query = query
            .as_str()
            .filter(|q| !q.trim().is_empty())
            .ok_or_else(|| WorldError::invalid("world.search.text needs a query text"))?;
        let list = |k: &str| -> Vec<String> {
            opts.get(k)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        let threshold = match opts.get("threshold") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_f64()
                    .filter(|t| (-1.0..=1.0).contains(t))
                    .ok_or_else(|| WorldError::invalid("threshold must be between -1 and 1"))?
                    as f32,
            ),
        };
        let o = SearchOptions {
            k: opts
                .get("k")
                .and_then(Value::as_u64)
                .map(|k| k.clamp(1, 100) as usize)
                .unwrap_or(10),
            threshold,
            types: list("types"),
            attrs: list("attrs"),
            at: self
                .opt_instant(st, opts, "at")?
                .unwrap_or(self.query_instant),
        };
        let left = self
            .deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(100));
        Ok(Value::Array(embed::search(st, cfg, query, &o, left)?))
    }

    /// `world.slice.list`: arguments are checked as NeuroBook does, each error naming the
    /// argument; every item carries the error issues of its own patches.
    fn list(&self, st: &WorldStore<'_>, opts: &Value) -> Out {
        if !opts.is_object() {
            return Err(WorldError::invalid(
                "world.slice.list takes an options object {from?, to?, limit?, withPatches?, subjectIds?, subjectMode?}",
            ));
        }
        let ids: Vec<String> = match opts.get("subjectIds") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| {
                    x.as_str().map(String::from).ok_or_else(|| {
                        WorldError::invalid(format!(
                            "subjectIds must hold subject ids (text), not {}",
                            short(x)
                        ))
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(WorldError::invalid(format!(
                    "subjectIds must be a list of subject ids, not {}",
                    short(other)
                )))
            }
        };
        let all = match opts.get("subjectMode") {
            None | Some(Value::Null) => false,
            Some(_) if ids.is_empty() => {
                return Err(WorldError::invalid(
                    "subjectMode needs subjectIds: give the subjects to match, or leave subjectMode out",
                ))
            }
            Some(Value::String(m)) if m == "any" => false,
            Some(Value::String(m)) if m == "all" => true,
            Some(m) => {
                return Err(WorldError::invalid(format!(
                    "subjectMode is \"any\" or \"all\", not {}",
                    short(m)
                )))
            }
        };
        if !ids.is_empty() {
            let mut known = false;
            for id in &ids {
                known |= st.subject(id)?.is_some();
            }
            if !known {
                return Err(WorldError::invalid(format!(
                    "subjectIds names no known subject ({}); list subjects with world.subject.list",
                    ids.join(", ")
                )));
            }
        }
        let limit = match opts.get("limit") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|l| *l >= 1)
                    .ok_or_else(|| {
                        WorldError::invalid(format!(
                            "limit must be a positive integer, not {}",
                            short(v)
                        ))
                    })?
                    .min(MAX_SLICES as u64) as usize,
            ),
        };
        let from = self.opt_instant(st, opts, "from")?;
        let to = self.opt_instant(st, opts, "to")?;
        if let (Some(f), Some(t)) = (from, to) {
            if f > t {
                return Err(WorldError::invalid(format!(
                    "from ({}) is after to ({}); swap them",
                    st.time(f),
                    st.time(t)
                )));
            }
        }
        let f = SliceFilter {
            from,
            to,
            limit,
            with_patches: opts
                .get("withPatches")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            subject_ids: ids,
            all_subjects: all,
        };
        let slices = st.list_slices(&f)?;
        let keys: Vec<(String, i64)> = slices.iter().map(|s| (s.id.clone(), s.instant)).collect();
        let mut issues = st.issues_of_slices(&keys)?;
        Ok(slices
            .iter()
            .map(|s| {
                let mut v = slice_json(s);
                v["issues"] = serde_json::to_value(issues.remove(&s.id).unwrap_or_default())
                    .unwrap_or_default();
                v
            })
            .collect())
    }

    fn new_slice(&self, st: &WorldStore<'_>, v: &Value) -> Result<NewSlice, WorldError> {
        let o = v.as_object().ok_or_else(|| {
            WorldError::invalid("world.slice.write needs {time, title?, summary?, kind?, patches}")
        })?;
        if let Some(k) = o
            .keys()
            .find(|k| !["time", "title", "summary", "kind", "patches"].contains(&k.as_str()))
        {
            return Err(WorldError::invalid(format!(
                "world.slice.write: unknown field {k:?} (time, title, summary, kind, patches)"
            )));
        }
        let time = o.get("time").ok_or_else(|| {
            WorldError::invalid(
                "world.slice.write needs `time` (e.g. world.time.parse(\"2020-04-12 18:00\"))",
            )
        })?;
        let patches = o
            .get("patches")
            .and_then(Value::as_array)
            .ok_or_else(|| WorldError::invalid("world.slice.write needs `patches`, a list"))?;
        let text = |k: &str| o.get(k).and_then(Value::as_str).map(String::from);
        Ok(NewSlice {
            instant: self.instant(st, time, "`time`")?,
            title: text("title").unwrap_or_default(),
            summary: text("summary").unwrap_or_default(),
            kind: text("kind").unwrap_or_else(|| "event".into()),
            patches: patches
                .iter()
                .enumerate()
                .map(|(i, p)| NewPatch::from_json(&unbig(p.clone()), i))
                .collect::<Result<_, _>>()?,
        })
    }

    fn meta(&self, st: &WorldStore<'_>, v: &Value) -> Result<SliceMeta, WorldError> {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        Ok(SliceMeta {
            instant: self.opt_instant(st, v, "time")?,
            title: text("title"),
            summary: text("summary"),
            kind: text("kind"),
        })
    }
}

/// A BigInt that crossed the bridge inside a value becomes a plain number.
fn unbig(v: Value) -> Value {
    match v {
        Value::Object(o) if o.len() == 1 && o.get("$bigint").is_some_and(Value::is_string) => {
            let s = o["$bigint"].as_str().unwrap_or("0");
            s.parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| Value::String(s.into()))
        }
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, x)| (k, unbig(x)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(unbig).collect()),
        other => other,
    }
}

fn parse_edits(v: &Value) -> Result<Vec<PatchEdit>, WorldError> {
    let list = v
        .as_array()
        .ok_or_else(|| WorldError::invalid("editPatches needs a list of edits"))?;
    list.iter()
        .enumerate()
        .map(|(i, e)| {
            let bad = |why: &str| WorldError::Invalid(format!("edit {i}: {why}"));
            if let Some(add) = e.get("add") {
                return Ok(PatchEdit::Add(NewPatch::from_json(&unbig(add.clone()), i)?));
            }
            let id = e
                .get("patchId")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("needs patchId (or `add`)"))?
                .to_string();
            if e.get("remove") == Some(&Value::Bool(true)) {
                return Ok(PatchEdit::Remove { patch_id: id });
            }
            let set = e.get("set").and_then(Value::as_object).ok_or_else(|| {
                bad("needs `set: {path?, op?, value?, summary?}`, `remove: true` or `add`")
            })?;
            let op = match set.get("op") {
                None => None,
                Some(o) => Some(
                    o.as_str()
                        .and_then(Op::parse)
                        .ok_or_else(|| bad("op is replace, increment, append or remove"))?,
                ),
            };
            Ok(PatchEdit::Set {
                patch_id: id,
                path: set.get("path").and_then(Value::as_str).map(String::from),
                op,
                value: set.get("value").map(|v| {
                    if v.is_null() && op == Some(Op::Remove) {
                        None
                    } else {
                        Some(unbig(v.clone()))
                    }
                }),
                summary: set.get("summary").map(|s| s.as_str().map(String::from)),
            })
        })
        .collect()
}

pub fn slice_json(s: &SliceInfo) -> Value {
    let mut v = serde_json::to_value(s).unwrap_or_default();
    v["instant"] = json!(s.instant.to_string());
    v
}

/// Replace `subject://` values by `{__ref, ...attrs}` down to `depth` levels.
fn deref(
    st: &WorldStore<'_>,
    v: &mut Value,
    at: i64,
    depth: u32,
    seen: &mut Vec<String>,
) -> Result<(), WorldError> {
    match v {
        Value::String(s) => {
            let Some(id) = crate::world::schema::ref_target(s).map(String::from) else {
                return Ok(());
            };
            let mut obj = Map::new();
            obj.insert("__ref".into(), Value::String(s.clone()));
            if seen.contains(&id) {
                obj.insert("__circular".into(), Value::Bool(true));
            } else {
                match st.state_at(&id, at)? {
                    None => {
                        obj.insert("__missing".into(), Value::Bool(true));
                    }
                    Some(state) => {
                        let mut inner = Value::Object(state.attrs);
                        if depth > 1 {
                            seen.push(id);
                            deref(st, &mut inner, at, depth - 1, seen)?;
                            seen.pop();
                        }
                        if let Value::Object(m) = inner {
                            obj.extend(m);
                        }
                    }
                }
            }
            *v = Value::Object(obj);
            Ok(())
        }
        Value::Array(a) => a.iter_mut().try_for_each(|x| deref(st, x, at, depth, seen)),
        Value::Object(o) => o
            .values_mut()
            .try_for_each(|x| deref(st, x, at, depth, seen)),
        _ => Ok(()),
    }
}
