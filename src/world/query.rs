//! What the World pane asks of the world engine: the timeline in a window, subjects by type,
//! a subject's state at the cursor, its track, the diff between two instants, issues with their
//! explanations, and the calendar. All reads; each is a few index seeks (state queries use
//! checkpoints), except `density` and `all_issues`, which grow with the window and the world
//! and belong off the UI task.
//!
//! ```no_run
//! # fn main() -> Result<(), nbook::world::WorldError> {
//! use nbook::world::query::WorldView;
//! let view = WorldView::open(std::path::Path::new("my-novel"))?;
//! let at = view.parse_time("2020-04-12 18:00")?;
//! let ada = view.state_at("c-ada", at)?;
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{params, Connection};
use serde::Serialize;
use serde_json::Value;

use super::calendar::Zoom;
use super::issues::Issue;
use super::store::{patch_row, PatchView, SliceFilter, Subject, SubjectState, WorldStore};
use super::{World, WorldError};

/// A slice on the timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimelineEntry {
    pub id: String,
    pub instant: i64,
    /// The instant in the project calendar.
    pub time: String,
    pub title: String,
    pub kind: String,
    pub patch_count: i64,
}

/// One slice that touched a subject, with the subject's patches in it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrackEntry {
    pub slice_id: String,
    pub instant: i64,
    pub time: String,
    pub title: String,
    pub kind: String,
    pub patches: Vec<PatchView>,
}

/// One attribute that differs between two instants (`None` = absent).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AttrDiff {
    pub attr: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// A project's world, opened for reading.
pub struct WorldView {
    pub conn: Connection,
    pub world: World,
}

impl WorldView {
    /// Open the project's database (migrated, so checkpoints can be stored) and its world
    /// configuration; falls back to a read-only connection if the file cannot be written.
    pub fn open(root: &Path) -> Result<WorldView, WorldError> {
        let world = World::load(root)?;
        let db = root.join(".nbook").join("project.sqlite");
        let conn = match crate::store::open(&db) {
            Ok(c) => c,
            Err(_) => {
                crate::store::open_read_only(&db).map_err(|e| WorldError::Config(e.to_string()))?
            }
        };
        Ok(WorldView { conn, world })
    }

    pub fn new(conn: Connection, world: World) -> WorldView {
        WorldView { conn, world }
    }

    fn store(&self) -> WorldStore<'_> {
        WorldStore::new(&self.conn, &self.world)
    }

    /// Whether formatting and parsing run the project's calendar script (a custom calendar):
    /// the UI task then leaves them to jobs, since a script may take its whole time limit.
    pub fn calendar_runs_script(&self) -> bool {
        matches!(*self.world.calendar, super::Calendar::Custom(_))
    }

    /// Format an instant in the project calendar.
    pub fn format_time(&self, t: i64) -> String {
        self.world.calendar.format_lossy(t)
    }

    /// Read a time typed by the author ("jump to"), with a message saying the expected form.
    pub fn parse_time(&self, text: &str) -> Result<i64, WorldError> {
        Ok(self.world.calendar.parse(text)?)
    }

    /// Calendar-aware zoom steps for the timeline.
    pub fn floor(&self, t: i64, zoom: Zoom) -> i64 {
        self.world.calendar.floor(t, zoom)
    }

    pub fn step(&self, t: i64, zoom: Zoom, n: i64) -> i64 {
        self.world.calendar.step(t, zoom, n)
    }

    /// How many slices the world has.
    pub fn slice_count(&self) -> Result<i64, WorldError> {
        Ok(self
            .conn
            .query_row(r#"SELECT count(*) FROM "WorldSlice""#, [], |r| r.get(0))?)
    }

    /// First and last slice instants.
    pub fn bounds(&self) -> Result<Option<(i64, i64)>, WorldError> {
        let r: (Option<i64>, Option<i64>) = self.conn.query_row(
            // Two subqueries: each is one index seek (`min(), max()` together scans).
            r#"SELECT (SELECT min("instant") FROM "WorldSlice"), (SELECT max("instant") FROM "WorldSlice")"#,
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(r.0.zip(r.1))
    }

    /// Slices with `from <= instant <= to`, ascending, at most `limit` (≤ 1000).
    pub fn timeline(
        &self,
        from: i64,
        to: i64,
        limit: usize,
    ) -> Result<Vec<TimelineEntry>, WorldError> {
        let st = self.store();
        let slices = st.list_slices(&SliceFilter {
            from: Some(from),
            to: Some(to),
            limit: Some(limit.max(1)),
            ..Default::default()
        })?;
        Ok(slices
            .into_iter()
            .map(|s| TimelineEntry {
                time: st.time(s.instant),
                id: s.id,
                instant: s.instant,
                title: s.title,
                kind: s.kind,
                patch_count: s.patch_count,
            })
            .collect())
    }

    /// The `limit` (≤ 1000) slices with `instant <= at` nearest to `at`, ascending (for the
    /// slices just before the World pane's cursor).
    pub fn timeline_before(&self, at: i64, limit: usize) -> Result<Vec<TimelineEntry>, WorldError> {
        let mut stmt = self.conn.prepare_cached(
            r#"SELECT s."id", s."instant", s."title", s."kind",
                      (SELECT count(*) FROM "WorldPatch" p WHERE p."sliceId" = s."id")
               FROM "WorldSlice" s WHERE s."instant" <= ?1 ORDER BY s."instant" DESC LIMIT ?2"#,
        )?;
        let rows = stmt.query_map(params![at, limit.clamp(1, 1000) as i64], |r| {
            Ok(TimelineEntry {
                id: r.get(0)?,
                instant: r.get(1)?,
                time: String::new(),
                title: r.get(2)?,
                kind: r.get(3)?,
                patch_count: r.get(4)?,
            })
        })?;
        let mut out = rows.collect::<Result<Vec<_>, _>>()?;
        out.reverse();
        for e in &mut out {
            e.time = self.format_time(e.instant);
        }
        Ok(out)
    }

    /// Slice counts per zoom unit from `from` (floored) up to `to`, at most `max` buckets:
    /// (bucket start, count). Costs O(slices in the window).
    pub fn density(
        &self,
        from: i64,
        to: i64,
        zoom: Zoom,
        max: usize,
    ) -> Result<Vec<(i64, i64)>, WorldError> {
        let mut out = Vec::new();
        let mut t = self.floor(from, zoom);
        let mut stmt = self.conn.prepare_cached(
            r#"SELECT count(*) FROM "WorldSlice" WHERE "instant" >= ?1 AND "instant" < ?2"#,
        )?;
        while t <= to && out.len() < max {
            let next = self.step(t, zoom, 1);
            if next <= t {
                break;
            }
            let n: i64 = stmt.query_row(params![t, next], |r| r.get(0))?;
            out.push((t, n));
            t = next;
        }
        Ok(out)
    }

    /// Subject types with their counts: every type the schema declares (0 if unused), plus any
    /// type present in the database only.
    pub fn subject_types(&self) -> Result<Vec<(String, i64)>, WorldError> {
        let mut counts: BTreeMap<String, i64> = self
            .world
            .schema
            .types
            .keys()
            .map(|t| (t.clone(), 0))
            .collect();
        let mut stmt = self
            .conn
            .prepare_cached(r#"SELECT "type", count(*) FROM "WorldSubject" GROUP BY "type""#)?;
        for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
            let (t, n) = row?;
            counts.insert(t, n);
        }
        Ok(counts.into_iter().collect())
    }

    /// Subjects of a type (all when `None`), by id.
    pub fn subjects(&self, kind: Option<&str>) -> Result<Vec<Subject>, WorldError> {
        self.store().subjects(kind)
    }

    /// A subject's state at `at` with its issues (None: no such subject). Stores checkpoints
    /// the query found worth keeping, if the database is free.
    pub fn state_at(&self, id: &str, at: i64) -> Result<Option<SubjectState>, WorldError> {
        let st = self.store();
        let s = st.state_at(id, at)?;
        st.flush_checkpoints();
        Ok(s)
    }

    /// The slices that touched a subject in `[from, to]`, ascending, at most `limit`.
    pub fn track(
        &self,
        id: &str,
        from: i64,
        to: i64,
        limit: usize,
    ) -> Result<Vec<TrackEntry>, WorldError> {
        let mut stmt = self.conn.prepare_cached(
            r#"SELECT p.rowid, p."id", p."sliceId", p."subjectId", p."instant", p."seq", p."path", p."op", p."value", p."summary",
                      s."title", s."kind"
               FROM "WorldPatch" p JOIN "WorldSlice" s ON s."id" = p."sliceId"
               WHERE p."subjectId" = ?1 AND p."instant" >= ?2 AND p."instant" <= ?3
               ORDER BY p."instant", p."seq" LIMIT ?4"#,
        )?;
        let mut out: Vec<TrackEntry> = Vec::new();
        let rows = stmt.query_map(params![id, from, to, (limit.max(1) * 100) as i64], |r| {
            Ok((
                patch_row(r)?,
                r.get::<_, String>(10)?,
                r.get::<_, String>(11)?,
            ))
        })?;
        for row in rows {
            let (p, title, kind) = row?;
            if out.last().is_none_or(|e| e.slice_id != p.slice_id) {
                if out.len() == limit.max(1) {
                    break;
                }
                out.push(TrackEntry {
                    slice_id: p.slice_id.clone(),
                    instant: p.instant,
                    time: self.format_time(p.instant),
                    title,
                    kind,
                    patches: Vec::new(),
                });
            }
            if let Some(e) = out.last_mut() {
                e.patches.push(PatchView::from(&p));
            }
        }
        Ok(out)
    }

    /// Attributes of a subject that differ between instants `a` and `b`.
    pub fn diff(&self, id: &str, a: i64, b: i64) -> Result<Vec<AttrDiff>, WorldError> {
        let st = self.store();
        let (Some(x), Some(y)) = (st.state_at(id, a)?, st.state_at(id, b)?) else {
            return Err(WorldError::NotFound(format!("there is no subject {id:?}")));
        };
        st.flush_checkpoints();
        let mut keys: Vec<&String> = x.attrs.keys().chain(y.attrs.keys()).collect();
        keys.sort();
        keys.dedup();
        Ok(keys
            .into_iter()
            .filter(|k| x.attrs.get(*k) != y.attrs.get(*k))
            .map(|k| AttrDiff {
                attr: format!("/{}", super::pointer::escape(k)),
                before: x.attrs.get(k).cloned(),
                after: y.attrs.get(k).cloned(),
            })
            .collect())
    }

    /// The error issues (E1–E5, with title, message and explanation) of every subject at
    /// `at`, at most `limit`. Costs one state query per subject: run it off the UI task.
    pub fn all_issues(&self, at: i64, limit: usize) -> Result<Vec<Issue>, WorldError> {
        let st = self.store();
        let mut out = Vec::new();
        for s in st.subjects(None)? {
            let red = st.reduced_at(&s, at, None)?;
            out.extend(st.finish(s, at, red).issues);
            if out.len() >= limit {
                out.truncate(limit);
                break;
            }
        }
        st.flush_checkpoints();
        Ok(out)
    }
}
