//! Reading the world from `WorldSubject`, `WorldSlice` and `WorldPatch`: subjects, slices and
//! the state of a subject at any instant (checkpoint + the patches since it, see [`index`]).
//!
//! A `WorldStore` borrows a connection; it never opens or ends transactions except for the
//! best-effort checkpoint flush, so callers decide the transaction (the sandbox runs a whole
//! script in one).

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::Serialize;
use serde_json::{Map, Value};

use super::index::{self, Checkpoint, Pending, Tally};
use super::issues::{self, Issue};
use super::reducer::{self, PatchRow, Reduced};
use super::schema::Schema;
use super::{Calendar, World, WorldError};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Subject {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
}

/// A subject's state at an instant, with the error issues (E1–E5) that hold there.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubjectState {
    #[serde(flatten)]
    pub subject: Subject,
    pub at: i64,
    pub attrs: Map<String, Value>,
    pub issues: Vec<Issue>,
}

/// A patch as scripts and panes see it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchView {
    pub patch_id: String,
    pub subject_id: String,
    pub path: String,
    pub op: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl From<&PatchRow> for PatchView {
    fn from(p: &PatchRow) -> Self {
        PatchView {
            patch_id: p.id.clone(),
            subject_id: p.subject_id.clone(),
            path: p.path.clone(),
            op: p.op.clone(),
            value: p
                .value
                .as_deref()
                .and_then(|v| serde_json::from_str(v).ok()),
            summary: p.summary.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SliceInfo {
    pub id: String,
    pub instant: i64,
    pub title: String,
    pub summary: String,
    pub kind: String,
    pub patch_count: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patches: Option<Vec<PatchView>>,
}

/// Which slices to list. `limit` without a range gives the latest `limit` slices.
#[derive(Clone, Debug, Default)]
pub struct SliceFilter {
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub limit: Option<usize>,
    pub with_patches: bool,
    /// Only slices touching these subjects (any of them, or all with `all_subjects`).
    pub subject_ids: Vec<String>,
    pub all_subjects: bool,
}

/// Most slices one listing returns; page with `from`/`to`.
pub const MAX_SLICES: usize = 1000;

/// Changes that are not (yet) in the database, for computing states as they were: patches to
/// leave out, old patches to put back, and a bound below which checkpoints are still valid.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    pub below: i64,
    pub exclude: HashSet<String>,
    pub extra: Vec<PatchRow>,
}

pub struct WorldStore<'c> {
    pub conn: &'c Connection,
    pub schema: &'c Schema,
    pub calendar: &'c Calendar,
    pending: Slot<'c>,
    checkpoints: bool,
}

/// Queued checkpoint work: the store's own, or shared by stores made one per call (sandbox).
enum Slot<'c> {
    Own(Pending),
    Shared(&'c Pending),
}

const PATCH_COLS: &str =
    r#"rowid, "id", "sliceId", "subjectId", "instant", "seq", "path", "op", "value", "summary""#;

pub fn patch_row(r: &Row<'_>) -> rusqlite::Result<PatchRow> {
    Ok(PatchRow {
        rowid: r.get(0)?,
        id: r.get(1)?,
        slice_id: r.get(2)?,
        subject_id: r.get(3)?,
        instant: r.get(4)?,
        seq: r.get(5)?,
        path: r.get(6)?,
        op: r.get(7)?,
        value: r.get(8)?,
        summary: r.get(9)?,
    })
}

impl<'c> WorldStore<'c> {
    pub fn new(conn: &'c Connection, world: &'c World) -> WorldStore<'c> {
        let checkpoints = index::check_schema(conn, &world.schema.fingerprint);
        WorldStore {
            conn,
            schema: &world.schema,
            calendar: &world.calendar,
            pending: Slot::Own(Pending::default()),
            checkpoints,
        }
    }

    /// A store sharing queued checkpoint work with others on the same connection; `checkpoints`
    /// is what [`WorldStore::uses_checkpoints`] said for this connection and schema.
    pub fn sharing(
        conn: &'c Connection,
        world: &'c World,
        pending: &'c Pending,
        checkpoints: bool,
    ) -> WorldStore<'c> {
        WorldStore {
            conn,
            schema: &world.schema,
            calendar: &world.calendar,
            pending: Slot::Shared(pending),
            checkpoints,
        }
    }

    /// An instant in the project calendar, for messages.
    pub fn time(&self, t: i64) -> String {
        self.calendar.format_lossy(t)
    }

    pub(crate) fn pending(&self) -> &Pending {
        match &self.pending {
            Slot::Own(p) => p,
            Slot::Shared(p) => p,
        }
    }

    /// Whether checkpoints are in use (false: another schema's checkpoints could not be
    /// dropped on this connection, so every query replays).
    pub fn uses_checkpoints(&self) -> bool {
        self.checkpoints
    }

    /// Write queued checkpoint work now if nobody holds a lock (see [`index::Pending::flush`]).
    pub fn flush_checkpoints(&self) -> usize {
        if !self.checkpoints {
            self.pending().clear();
            return 0;
        }
        self.pending().flush(self.conn)
    }

    pub fn subject(&self, id: &str) -> Result<Option<Subject>, WorldError> {
        Ok(self
            .conn
            .prepare_cached(r#"SELECT "id","type","name" FROM "WorldSubject" WHERE "id" = ?1"#)?
            .query_row([id], |r| {
                Ok(Subject {
                    id: r.get(0)?,
                    kind: r.get(1)?,
                    name: r.get(2)?,
                })
            })
            .optional()?)
    }

    /// Subjects of a type (all when `None`), by id. A type neither the schema nor the database
    /// knows is an error naming the known ones.
    pub fn subjects(&self, kind: Option<&str>) -> Result<Vec<Subject>, WorldError> {
        let map = |r: &Row<'_>| {
            Ok(Subject {
                id: r.get(0)?,
                kind: r.get(1)?,
                name: r.get(2)?,
            })
        };
        let out: Vec<Subject> = match kind {
            Some(k) => self
                .conn
                .prepare_cached(r#"SELECT "id","type","name" FROM "WorldSubject" WHERE "type" = ?1 ORDER BY "id""#)?
                .query_map([k], map)?
                .collect::<Result<_, _>>()?,
            None => self
                .conn
                .prepare_cached(r#"SELECT "id","type","name" FROM "WorldSubject" ORDER BY "type","id""#)?
                .query_map([], map)?
                .collect::<Result<_, _>>()?,
        };
        if let Some(k) = kind {
            if out.is_empty() && !self.schema.has_type(k) {
                return Err(WorldError::Invalid(format!(
                    "unknown subject type {k:?}; world-engine/schema.toml declares: {}",
                    self.schema.type_names().join(", ")
                )));
            }
        }
        Ok(out)
    }

    /// The latest slice instant (NeuroBook's "now"), or None for an empty timeline.
    pub fn latest_instant(&self) -> Result<Option<i64>, WorldError> {
        Ok(self
            .conn
            .prepare_cached(r#"SELECT max("instant") FROM "WorldSlice""#)?
            .query_row([], |r| r.get(0))?)
    }

    /// The slice at exactly `instant`: (id, title).
    pub fn slice_at(&self, instant: i64) -> Result<Option<(String, String)>, WorldError> {
        Ok(self
            .conn
            .prepare_cached(r#"SELECT "id","title" FROM "WorldSlice" WHERE "instant" = ?1"#)?
            .query_row([instant], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }

    /// State of a subject at `at`, with its E1–E5 issues; None if there is no such subject.
    pub fn state_at(&self, id: &str, at: i64) -> Result<Option<SubjectState>, WorldError> {
        let Some(subject) = self.subject(id)? else {
            return Ok(None);
        };
        let red = self.reduced_at(&subject, at, None)?;
        Ok(Some(self.finish(subject, at, red)))
    }

    /// Attach the reference issues (E2) and package a reduction.
    pub fn finish(&self, subject: Subject, at: i64, red: Reduced) -> SubjectState {
        let mut issues = red.issues.clone();
        let mut type_of = |id: &str| self.subject(id).ok().flatten().map(|s| s.kind);
        issues.extend(reducer::check_refs(
            &red,
            self.schema,
            &subject.id,
            &subject.kind,
            &mut type_of,
        ));
        issues::dedup(&mut issues);
        SubjectState {
            subject,
            at,
            attrs: red.state,
            issues,
        }
    }

    /// Reduce a subject's patches up to `at`, from the nearest valid checkpoint. With an
    /// overlay, the state is computed as if the overlay's changes were undone (no checkpoint is
    /// made from such a reduction).
    pub fn reduced_at(
        &self,
        subject: &Subject,
        at: i64,
        overlay: Option<&Overlay>,
    ) -> Result<Reduced, WorldError> {
        let cp = if self.checkpoints {
            index::latest_valid(
                self.conn,
                self.pending(),
                &subject.id,
                &subject.kind,
                at,
                overlay.map(|o| o.below),
            )?
        } else {
            None
        };
        let from = cp.as_ref().map(|c| c.instant);
        let mut tally = cp.as_ref().map(Tally::from_checkpoint).unwrap_or_default();
        let mut red = cp.map(|c| c.reduced).unwrap_or_default();
        let mut rows = self.patches_between(&subject.id, from, at)?;
        if let Some(o) = overlay {
            rows.retain(|p| !o.exclude.contains(&p.id));
            rows.extend(
                o.extra
                    .iter()
                    .filter(|p| {
                        p.subject_id == subject.id
                            && p.instant <= at
                            && from.is_none_or(|f| p.instant > f)
                    })
                    .cloned(),
            );
            rows.sort_by_key(|p| (p.instant, p.seq, p.rowid));
        }
        let make = overlay.is_none() && self.checkpoints;
        for (i, p) in rows.iter().enumerate() {
            red.apply(self.schema, &subject.kind, p);
            tally.add(p);
            let boundary = rows.get(i + 1).is_none_or(|n| n.instant != p.instant);
            if make && boundary && tally.due(&red.state) {
                self.pending().insert(Checkpoint {
                    subject_id: subject.id.clone(),
                    instant: p.instant,
                    subject_type: subject.kind.clone(),
                    patch_count: tally.count,
                    max_rowid: tally.max_rowid,
                    max_patch_id: tally.max_id.clone(),
                    reduced: red.clone(),
                });
                tally.reset();
            }
        }
        Ok(red)
    }

    /// A subject's patches with `from < instant <= to` (no lower bound for `None`), in
    /// application order.
    pub fn patches_between(
        &self,
        subject_id: &str,
        from: Option<i64>,
        to: i64,
    ) -> Result<Vec<PatchRow>, WorldError> {
        let lower = if from.is_some() {
            r#""instant" > ?2"#
        } else {
            "?2 IS NULL"
        };
        let sql = format!(
            r#"SELECT {PATCH_COLS} FROM "WorldPatch" WHERE "subjectId" = ?1 AND {lower} AND "instant" <= ?3
               ORDER BY "instant", "seq", rowid"#
        );
        let rows = self
            .conn
            .prepare_cached(&sql)?
            .query_map(params![subject_id, from, to], patch_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The patches of one slice, in order.
    pub fn slice_patches(&self, slice_id: &str) -> Result<Vec<PatchRow>, WorldError> {
        let sql = format!(
            r#"SELECT {PATCH_COLS} FROM "WorldPatch" WHERE "sliceId" = ?1 ORDER BY "seq", rowid"#
        );
        let rows = self
            .conn
            .prepare_cached(&sql)?
            .query_map([slice_id], patch_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// One slice with its patches.
    pub fn slice(&self, id: &str) -> Result<Option<SliceInfo>, WorldError> {
        let head = self
            .conn
            .prepare_cached(r#"SELECT "id","instant","title","summary","kind" FROM "WorldSlice" WHERE "id" = ?1"#)?
            .query_row([id], slice_head)
            .optional()?;
        let Some(mut s) = head else { return Ok(None) };
        let patches = self.slice_patches(id)?;
        s.patch_count = patches.len() as i64;
        s.patches = Some(patches.iter().map(PatchView::from).collect());
        Ok(Some(s))
    }

    /// The instant of the slice before `instant`, if any.
    pub fn previous_instant(&self, instant: i64) -> Result<Option<i64>, WorldError> {
        Ok(self
            .conn
            .prepare_cached(r#"SELECT max("instant") FROM "WorldSlice" WHERE "instant" < ?1"#)?
            .query_row([instant], |r| r.get(0))?)
    }

    /// Slices in ascending time (see [`SliceFilter`]); at most [`MAX_SLICES`].
    pub fn list_slices(&self, f: &SliceFilter) -> Result<Vec<SliceInfo>, WorldError> {
        let limit = f.limit.unwrap_or(MAX_SLICES).min(MAX_SLICES) as i64;
        let (from, to) = (f.from.unwrap_or(i64::MIN), f.to.unwrap_or(i64::MAX));
        let latest = f.limit.is_some() && f.from.is_none() && f.to.is_none();
        let order = if latest { "DESC" } else { "ASC" };
        let mut out: Vec<SliceInfo> = if f.subject_ids.is_empty() {
            let sql = format!(
                r#"SELECT "id","instant","title","summary","kind" FROM "WorldSlice"
                   WHERE "instant" >= ?1 AND "instant" <= ?2 ORDER BY "instant" {order} LIMIT ?3"#
            );
            self.conn
                .prepare_cached(&sql)?
                .query_map(params![from, to, limit], slice_head)?
                .collect::<Result<_, _>>()?
        } else {
            let ids = serde_json::to_string(&f.subject_ids).unwrap_or_else(|_| "[]".into());
            let want = if f.all_subjects {
                f.subject_ids.iter().collect::<HashSet<_>>().len() as i64
            } else {
                1
            };
            let sql = format!(
                r#"SELECT s."id", s."instant", s."title", s."summary", s."kind" FROM "WorldSlice" s
                   JOIN (SELECT p."sliceId" AS sid, count(DISTINCT p."subjectId") AS n FROM "WorldPatch" p
                         WHERE p."subjectId" IN (SELECT value FROM json_each(?1))
                           AND p."instant" >= ?2 AND p."instant" <= ?3 GROUP BY p."sliceId") t ON t.sid = s."id"
                   WHERE t.n >= ?4 ORDER BY s."instant" {order} LIMIT ?5"#
            );
            self.conn
                .prepare_cached(&sql)?
                .query_map(params![ids, from, to, want, limit], slice_head)?
                .collect::<Result<_, _>>()?
        };
        if latest {
            out.reverse();
        }
        for s in &mut out {
            if f.with_patches {
                let patches = self.slice_patches(&s.id)?;
                s.patch_count = patches.len() as i64;
                s.patches = Some(patches.iter().map(PatchView::from).collect());
            } else {
                s.patch_count = self
                    .conn
                    .prepare_cached(r#"SELECT count(*) FROM "WorldPatch" WHERE "sliceId" = ?1"#)?
                    .query_row([&s.id], |r| r.get(0))?;
            }
        }
        Ok(out)
    }

    /// The error issues of each slice's own patches, keyed by slice id: the E1/E3/E4/E5 its
    /// patches raise and the E2 of references it wrote, as they stand at its instant. One
    /// reduction pass per subject over all the slices, so listing many slices stays cheap.
    pub fn issues_of_slices(
        &self,
        slices: &[(String, i64)],
    ) -> Result<HashMap<String, Vec<Issue>>, WorldError> {
        let mut out: HashMap<String, Vec<Issue>> = HashMap::new();
        let mut by_subject: BTreeMap<String, Vec<(i64, String)>> = BTreeMap::new();
        for (id, t) in slices {
            out.entry(id.clone()).or_default();
            let ids: Vec<String> = self
                .conn
                .prepare_cached(
                    r#"SELECT DISTINCT "subjectId" FROM "WorldPatch" WHERE "sliceId" = ?1"#,
                )?
                .query_map([id], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for s in ids {
                by_subject.entry(s).or_default().push((*t, id.clone()));
            }
        }
        for (sid, mut marks) in by_subject {
            let Some(subject) = self.subject(&sid)? else {
                continue;
            };
            marks.sort();
            let mut at: Option<i64> = None;
            let mut red = Reduced::default();
            for (t, slice) in marks {
                match at {
                    None => red = self.reduced_at(&subject, t, None)?,
                    Some(a) if a < t => {
                        for p in self.patches_between(&sid, Some(a), t)? {
                            red.apply(self.schema, &subject.kind, &p);
                        }
                    }
                    Some(_) => {}
                }
                at = Some(t);
                let mine = |i: &Issue| i.slice_id.as_deref() == Some(slice.as_str());
                let list = out.entry(slice.clone()).or_default();
                list.extend(red.issues.iter().filter(|i| mine(i)).cloned());
                let mut type_of = |id: &str| self.subject(id).ok().flatten().map(|s| s.kind);
                list.extend(
                    reducer::check_refs(&red, self.schema, &sid, &subject.kind, &mut type_of)
                        .into_iter()
                        .filter(|i| mine(i)),
                );
            }
        }
        for v in out.values_mut() {
            issues::dedup(v);
        }
        Ok(out)
    }

    /// Subjects whose state at `at` holds `subject://<target>`, with the JSON Pointer where.
    /// Candidates come from a scan of patch values (no reverse index yet), then each is
    /// confirmed on its reduced state, so removed references are not reported.
    pub fn find_refs(
        &self,
        target: &str,
        source_type: Option<&str>,
        at: i64,
    ) -> Result<Vec<(String, String)>, WorldError> {
        let needle = format!("subject://{target}");
        let like = format!(
            "%{}%",
            needle
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        let candidates: Vec<String> = self
            .conn
            .prepare_cached(
                r#"SELECT DISTINCT "subjectId" FROM "WorldPatch" WHERE "instant" <= ?1 AND "value" LIKE ?2 ESCAPE '\'
                   ORDER BY "subjectId""#,
            )?
            .query_map(params![at, like], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let mut out = Vec::new();
        for id in candidates {
            let Some(subject) = self.subject(&id)? else {
                continue;
            };
            if source_type.is_some_and(|t| t != subject.kind) {
                continue;
            }
            let red = self.reduced_at(&subject, at, None)?;
            let mut path = Vec::new();
            collect_refs(&Value::Object(red.state), &needle, &mut path, &mut |p| {
                out.push((id.clone(), super::pointer::join(p)))
            });
        }
        Ok(out)
    }
}

fn slice_head(r: &Row<'_>) -> rusqlite::Result<SliceInfo> {
    Ok(SliceInfo {
        id: r.get(0)?,
        instant: r.get(1)?,
        title: r.get(2)?,
        summary: r.get(3)?,
        kind: r.get(4)?,
        patch_count: 0,
        patches: None,
    })
}

fn collect_refs(v: &Value, needle: &str, path: &mut Vec<String>, f: &mut dyn FnMut(&[String])) {
    match v {
        Value::String(s) if s == needle => f(path),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                collect_refs(x, needle, path, f);
                path.pop();
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                path.push(k.clone());
                collect_refs(x, needle, path, f);
                path.pop();
            }
        }
        _ => {}
    }
}
