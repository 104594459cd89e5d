//! Writing the timeline: `write` a new slice, `edit` one (its patches are replaced and get
//! new ids, as in NeuroBook), `delete` one. Each runs in a savepoint, so it is atomic on its own
//! and inside a caller's transaction alike; each costs O(log n) index work plus the touched
//! subjects' patches since their last checkpoint — no scan of the timeline.
//!
//! Results carry issues: the error issues the change newly causes — in the slice itself (a
//! patch that cannot apply at its instant is kept and flagged, see prepare.rs) and in later
//! slices (an increment whose base this edit or delete removed) — then advisories A1/A2 when
//! the change lies before later patches of the same value. A delete returns every error issue
//! of the subjects it touched, recomputed at once.

use std::collections::{BTreeSet, HashMap};

use rusqlite::{params, OptionalExtension};
use serde_json::Value;

use super::issues::{self, Code, Issue, Origin};
use super::pointer;
use super::prepare::{self, new_id, NewPatch, Prepared};
use super::reducer::PatchRow;
use super::schema::{valid_id, Kind, Node, Op};
use super::store::{patch_row, SliceInfo, Subject, WorldStore};
use super::{index, WorldError};

/// A new slice.
#[derive(Clone, Debug, PartialEq)]
pub struct NewSlice {
    pub instant: i64,
    pub title: String,
    pub summary: String,
    pub kind: String,
    pub patches: Vec<NewPatch>,
}

/// Slice fields an edit may change.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SliceMeta {
    pub instant: Option<i64>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub kind: Option<String>,
}

/// One edit of `editPatches`.
#[derive(Clone, Debug, PartialEq)]
pub enum PatchEdit {
    /// Change fields of a patch; `value: Some(None)` removes its value.
    Set {
        patch_id: String,
        path: Option<String>,
        op: Option<Op>,
        value: Option<Option<Value>>,
        summary: Option<Option<String>>,
    },
    Remove {
        patch_id: String,
    },
    Add(NewPatch),
}

/// What a write changed: enough to show it to the author and to compute states as they were.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// write | edit | delete
    pub action: &'static str,
    pub slice_id: String,
    pub before: Option<SliceInfo>,
    pub after: Option<SliceInfo>,
    /// (subject, instant) pairs whose state may differ.
    pub touched: Vec<(Subject, i64)>,
    pub removed: Vec<PatchRow>,
    pub added: Vec<String>,
    pub new_subjects: Vec<Subject>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WriteOutcome {
    pub slice_id: String,
    pub issues: Vec<Issue>,
    pub change: Change,
}

impl WorldStore<'_> {
    fn atomically<T>(&self, f: impl FnOnce() -> Result<T, WorldError>) -> Result<T, WorldError> {
        self.conn.execute_batch("SAVEPOINT nbook_world_write")?;
        match f() {
            Ok(v) => {
                self.pending().flush(self.conn);
                self.conn.execute_batch("RELEASE nbook_world_write")?;
                Ok(v)
            }
            Err(e) => {
                self.pending().clear();
                let _ = self
                    .conn
                    .execute_batch("ROLLBACK TO nbook_world_write; RELEASE nbook_world_write");
                Err(e)
            }
        }
    }

    fn check_free(&self, instant: i64, except: Option<&str>) -> Result<(), WorldError> {
        if let Some((id, title)) = self.slice_at(instant)? {
            if except != Some(id.as_str()) {
                return Err(WorldError::Conflict(format!(
                    "{} (instant {instant}) already holds slice {id} «{title}»; there is one slice per instant — add your patches to it with world.slice.editPatches(\"{id}\", [{{add: …}}]) or choose another time",
                    self.time(instant)
                )));
            }
        }
        Ok(())
    }

    /// Write a new slice. Fails (writing nothing) on an occupied instant or a bad patch.
    pub fn write_slice(&self, s: &NewSlice) -> Result<WriteOutcome, WorldError> {
        self.atomically(|| {
            check_meta(&s.kind)?;
            self.check_free(s.instant, None)?;
            let slice_id = new_id();
            let prepared = self.prepare(&slice_id, s.instant, &s.patches, true)?;
            let later = self.with_later(&prepared.subjects, s.instant)?;
            let existing: Vec<Subject> = prepared
                .subjects
                .iter()
                .filter(|x| !prepared.new_subjects.iter().any(|n| n.id == x.id))
                .cloned()
                .collect();
            let before_now = self.issues_now(&existing)?;
            self.conn
                .prepare_cached(r#"INSERT INTO "WorldSlice" ("id","instant","title","summary","kind") VALUES (?1,?2,?3,?4,?5)"#)?
                .execute(params![slice_id, s.instant, s.title, s.summary, s.kind])?;
            self.insert(&prepared)?;
            // The slice's own error issues and those it causes later, then the advisories.
            let mut issues = self.new_issues_now(&prepared.subjects, &before_now)?;
            issues.extend(self.advisories(&prepared.rows, &later)?);
            let after = self.slice(&slice_id)?;
            Ok(WriteOutcome {
                slice_id: slice_id.clone(),
                issues,
                change: Change {
                    action: "write",
                    slice_id,
                    before: None,
                    after,
                    touched: prepared.subjects.iter().map(|x| (x.clone(), s.instant)).collect(),
                    removed: Vec::new(),
                    added: prepared.rows.iter().map(|r| r.id.clone()).collect(),
                    new_subjects: prepared.new_subjects.clone(),
                },
            })
        })
    }

    /// Replace a slice's patches after applying `edits`, and optionally its time and texts.
    /// Every patch gets a new id. New subjects cannot be registered here.
    pub fn edit_slice(
        &self,
        slice_id: &str,
        edits: &[PatchEdit],
        meta: &SliceMeta,
    ) -> Result<WriteOutcome, WorldError> {
        self.atomically(|| {
            let before = self.slice(slice_id)?.ok_or_else(|| {
                WorldError::NotFound(format!("there is no slice {slice_id:?}; find slices with world.slice.list"))
            })?;
            let old_rows = self.slice_patches(slice_id)?;
            let mut patches = prepare::from_rows(&old_rows);
            let ids: Vec<&str> = old_rows.iter().map(|r| r.id.as_str()).collect();
            let mut drop = vec![false; patches.len()];
            let mut added = Vec::new();
            for e in edits {
                let pos = |id: &str| {
                    ids.iter().position(|x| *x == id).ok_or_else(|| {
                        WorldError::Invalid(format!(
                            "patch {id:?} is not in slice {slice_id} (its patches: {}); patch ids change on every edit, so read the slice again with world.slice.get",
                            ids.join(", ")
                        ))
                    })
                };
                match e {
                    PatchEdit::Remove { patch_id } => drop[pos(patch_id)?] = true,
                    PatchEdit::Set { patch_id, path, op, value, summary } => {
                        let p = &mut patches[pos(patch_id)?];
                        if let Some(x) = path {
                            p.path = x.clone();
                        }
                        if let Some(x) = op {
                            p.op = *x;
                        }
                        if let Some(x) = value {
                            p.value = x.clone();
                        }
                        if let Some(x) = summary {
                            p.summary = x.clone();
                        }
                    }
                    PatchEdit::Add(p) => added.push(p.clone()),
                }
            }
            let mut next: Vec<NewPatch> = patches.into_iter().zip(drop).filter(|(_, d)| !d).map(|(p, _)| p).collect();
            next.extend(added);
            let instant = meta.instant.unwrap_or(before.instant);
            let kind = meta.kind.clone().unwrap_or_else(|| before.kind.clone());
            check_meta(&kind)?;
            self.check_free(instant, Some(slice_id))?;
            let old_subjects = self.subjects_of(&old_rows)?;
            let first = instant.min(before.instant);
            let before_now = self.issues_now(&old_subjects)?;
            // Take the old patches out, then check the new ones against the timeline without them.
            self.conn
                .prepare_cached(r#"DELETE FROM "WorldPatch" WHERE "sliceId" = ?1"#)?
                .execute([slice_id])?;
            for s in &old_subjects {
                self.forget_from(&s.id, before.instant)?;
            }
            let prepared = self.prepare(slice_id, instant, &next, false)?;
            self.conn
                .prepare_cached(r#"UPDATE "WorldSlice" SET "instant" = ?2, "title" = ?3, "summary" = ?4, "kind" = ?5 WHERE "id" = ?1"#)?
                .execute(params![
                    slice_id,
                    instant,
                    meta.title.as_ref().unwrap_or(&before.title),
                    meta.summary.as_ref().unwrap_or(&before.summary),
                    kind
                ])?;
            self.insert(&prepared)?;
            let mut all = old_subjects.clone();
            for s in &prepared.subjects {
                if !all.iter().any(|x| x.id == s.id) {
                    all.push(s.clone());
                }
            }
            let later = self.with_later(&all, first)?;
            // Patches the edit left as they were raise no advisories.
            let same = |r: &PatchRow| {
                old_rows.iter().any(|o| {
                    (&o.subject_id, &o.path, &o.op, &o.value, o.instant) == (&r.subject_id, &r.path, &r.op, &r.value, r.instant)
                })
            };
            let changed: Vec<PatchRow> = prepared.rows.iter().filter(|r| !same(r)).cloned().collect();
            let mut issues = self.new_issues_now(&all, &before_now)?;
            issues.extend(self.advisories(&changed, &later)?);
            let mut touched: Vec<(Subject, i64)> = old_subjects.iter().map(|s| (s.clone(), before.instant)).collect();
            touched.extend(prepared.subjects.iter().map(|s| (s.clone(), instant)));
            touched.dedup_by(|a, b| a.0.id == b.0.id && a.1 == b.1);
            Ok(WriteOutcome {
                slice_id: slice_id.to_string(),
                issues,
                change: Change {
                    action: "edit",
                    slice_id: slice_id.to_string(),
                    before: Some(before),
                    after: self.slice(slice_id)?,
                    touched,
                    removed: old_rows,
                    added: prepared.rows.iter().map(|r| r.id.clone()).collect(),
                    new_subjects: Vec::new(),
                },
            })
        })
    }

    /// Delete a slice and its patches; returns the error issues of the subjects it touched, as
    /// they stand at the end of the timeline afterwards.
    pub fn delete_slice(&self, slice_id: &str) -> Result<WriteOutcome, WorldError> {
        self.atomically(|| {
            let before = self.slice(slice_id)?.ok_or_else(|| {
                WorldError::NotFound(format!(
                    "there is no slice {slice_id:?}; find slices with world.slice.list"
                ))
            })?;
            let rows = self.slice_patches(slice_id)?;
            let subjects = self.subjects_of(&rows)?;
            self.conn
                .prepare_cached(r#"DELETE FROM "WorldPatch" WHERE "sliceId" = ?1"#)?
                .execute([slice_id])?;
            self.conn
                .prepare_cached(r#"DELETE FROM "WorldSlice" WHERE "id" = ?1"#)?
                .execute([slice_id])?;
            for s in &subjects {
                self.forget_from(&s.id, before.instant)?;
            }
            let now = self
                .latest_instant()?
                .unwrap_or(before.instant)
                .max(before.instant);
            let mut issues = Vec::new();
            for s in &subjects {
                let red = self.reduced_at(s, now, None)?;
                issues.extend(self.finish(s.clone(), now, red).issues);
            }
            issues::dedup(&mut issues);
            Ok(WriteOutcome {
                slice_id: slice_id.to_string(),
                issues,
                change: Change {
                    action: "delete",
                    slice_id: slice_id.to_string(),
                    touched: subjects
                        .iter()
                        .map(|s| (s.clone(), before.instant))
                        .collect(),
                    before: Some(before),
                    after: None,
                    removed: rows,
                    added: Vec::new(),
                    new_subjects: Vec::new(),
                },
            })
        })
    }

    fn subjects_of(&self, rows: &[PatchRow]) -> Result<Vec<Subject>, WorldError> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for r in rows {
            if seen.insert(r.subject_id.clone()) {
                if let Some(s) = self.subject(&r.subject_id)? {
                    out.push(s);
                }
            }
        }
        Ok(out)
    }

    fn insert(&self, p: &Prepared) -> Result<(), WorldError> {
        for s in &p.new_subjects {
            self.conn
                .prepare_cached(
                    r#"INSERT INTO "WorldSubject" ("id","type","name") VALUES (?1,?2,?3)"#,
                )?
                .execute(params![s.id, s.kind, s.name])?;
        }
        let mut stmt = self.conn.prepare_cached(
            r#"INSERT INTO "WorldPatch" ("id","sliceId","subjectId","instant","seq","path","op","value","summary","text","vector","model")
               VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)"#,
        )?;
        let kinds: HashMap<&str, &str> = p
            .subjects
            .iter()
            .map(|s| (s.id.as_str(), s.kind.as_str()))
            .collect();
        for r in &p.rows {
            let (text, vector, model) =
                self.embedding_columns(kinds.get(r.subject_id.as_str()).copied().unwrap_or(""), r);
            stmt.execute(params![
                r.id,
                r.slice_id,
                r.subject_id,
                r.instant,
                r.seq,
                r.path,
                r.op,
                r.value,
                r.summary,
                text,
                vector,
                model
            ])?;
        }
        for s in &p.subjects {
            self.forget_from(&s.id, p.rows.first().map_or(i64::MIN, |r| r.instant))?;
        }
        Ok(())
    }

    /// Checkpoints of `subject_id` at or after `instant` no longer hold: delete the stored ones
    /// and drop queued ones (computed from the timeline before this write).
    fn forget_from(&self, subject_id: &str, instant: i64) -> Result<(), WorldError> {
        index::delete_from(self.conn, subject_id, instant)?;
        self.pending().discard_from(subject_id, instant);
        Ok(())
    }

    /// NeuroBook's embedding columns: filled for an append to an embedding list or a replace
    /// at `/<attr>/<key>` of an embedding record, when the value has a string `text`.
    fn embedding_columns(
        &self,
        kind: &str,
        r: &PatchRow,
    ) -> (Option<String>, Option<Vec<u8>>, Option<String>) {
        let tokens = pointer::parse(&r.path).unwrap_or_default();
        let ok = match (r.op.as_str(), tokens.len()) {
            ("append", 1) => {
                matches!(self.schema.node(kind, &tokens), Node::Typed(a) if a.kind == Kind::Embedding { record: false })
            }
            ("replace", 2) => {
                matches!(self.schema.node(kind, &tokens[..1]), Node::Typed(a) if a.kind == Kind::Embedding { record: true })
            }
            _ => false,
        };
        let v: Option<Value> = r
            .value
            .as_deref()
            .and_then(|v| serde_json::from_str(v).ok());
        let Some(obj) = v.as_ref().and_then(Value::as_object).filter(|_| ok) else {
            return (None, None, None);
        };
        let Some(text) = obj.get("text").and_then(Value::as_str) else {
            return (None, None, None);
        };
        let vector = obj.get("vector").and_then(Value::as_array).map(|a| {
            a.iter()
                .flat_map(|x| (x.as_f64().unwrap_or(0.0) as f32).to_le_bytes())
                .collect::<Vec<u8>>()
        });
        (
            Some(text.to_string()),
            vector,
            obj.get("model").and_then(Value::as_str).map(String::from),
        )
    }

    /// Subjects with patches after `instant` (only they can see A1/A2 or later issues).
    fn with_later(&self, subjects: &[Subject], instant: i64) -> Result<Vec<Subject>, WorldError> {
        let mut out = Vec::new();
        for s in subjects {
            let has: Option<i64> = self
                .conn
                .prepare_cached(r#"SELECT 1 FROM "WorldPatch" WHERE "subjectId" = ?1 AND "instant" > ?2 LIMIT 1"#)?
                .query_row(params![s.id, instant], |r| r.get(0))
                .optional()?;
            if has.is_some() {
                out.push(s.clone());
            }
        }
        Ok(out)
    }

    fn issues_now(&self, subjects: &[Subject]) -> Result<Vec<Issue>, WorldError> {
        let Some(now) = self.latest_instant()? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for s in subjects {
            let red = self.reduced_at(s, now, None)?;
            out.extend(self.finish(s.clone(), now, red).issues);
        }
        Ok(out)
    }

    fn new_issues_now(
        &self,
        subjects: &[Subject],
        before: &[Issue],
    ) -> Result<Vec<Issue>, WorldError> {
        let old: BTreeSet<_> = before.iter().map(Issue::key).collect();
        let mut out: Vec<Issue> = self
            .issues_now(subjects)?
            .into_iter()
            .filter(|i| !old.contains(&i.key()))
            .collect();
        issues::dedup(&mut out);
        Ok(out)
    }

    /// A1/A2 for each new patch of a subject that has later patches.
    fn advisories(&self, rows: &[PatchRow], later: &[Subject]) -> Result<Vec<Issue>, WorldError> {
        let mut out = Vec::new();
        for r in rows
            .iter()
            .filter(|r| later.iter().any(|s| s.id == r.subject_id))
        {
            let tokens = pointer::parse(&r.path).unwrap_or_default();
            let origin = Origin {
                slice_id: Some(&r.slice_id),
                patch_id: Some(&r.id),
                subject_id: &r.subject_id,
                path: Some(&r.path),
                op: Some(&r.op),
                instant: Some(r.instant),
            };
            // A2: the first later absolute op on this path or one of its ancestors.
            let mut mask: Option<PatchRow> = None;
            for depth in 0..=tokens.len() {
                let p = pointer::join(&tokens[..depth]);
                let sql = r#"SELECT rowid, "id","sliceId","subjectId","instant","seq","path","op","value","summary" FROM "WorldPatch"
                    WHERE "subjectId" = ?1 AND "path" = ?2 AND "instant" > ?3 AND ("op" = 'replace' OR ("op" = 'remove' AND "value" IS NULL))
                    ORDER BY "instant" LIMIT 1"#;
                let hit = self
                    .conn
                    .prepare_cached(sql)?
                    .query_row(params![r.subject_id, p, r.instant], patch_row)
                    .optional()?;
                if let Some(h) = hit {
                    if mask.as_ref().is_none_or(|m| h.instant < m.instant) {
                        mask = Some(h);
                    }
                }
            }
            let until = mask.as_ref().map_or(i64::MAX, |m| m.instant);
            // A1: later relative ops on this path or below it, before the mask.
            let prefix = if tokens.is_empty() {
                "/".to_string()
            } else {
                format!("{}/", r.path)
            };
            let sql = r#"SELECT count(*), min("instant") FROM "WorldPatch"
                WHERE "subjectId" = ?1 AND ("path" = ?2 OR ("path" >= ?3 AND "path" < ?4)) AND "instant" > ?5 AND "instant" < ?6
                  AND ("op" IN ('increment','append') OR ("op" = 'remove' AND "value" IS NOT NULL))"#;
            let upper = format!("{}\u{10FFFF}", prefix);
            let (n, first): (i64, Option<i64>) = self.conn.prepare_cached(sql)?.query_row(
                params![r.subject_id, r.path, prefix, upper, r.instant, until],
                |x| Ok((x.get(0)?, x.get(1)?)),
            )?;
            if n > 0 {
                let when = first.map(|t| self.time(t)).unwrap_or_default();
                out.push(Issue::new(
                    Code::A1,
                    &origin,
                    format!("{} {} on {}: {n} later relative change(s) from {when} on now build on this value", r.op, r.path, r.subject_id),
                ));
            }
            if let Some(m) = mask {
                out.push(Issue::new(
                    Code::A2,
                    &origin,
                    format!(
                        "{} {} on {}: slice {} at {} does {} {}, so this change holds only until then",
                        r.op,
                        r.path,
                        r.subject_id,
                        m.slice_id,
                        self.time(m.instant),
                        m.op,
                        m.path
                    ),
                ));
            }
        }
        Ok(out)
    }
}

fn check_meta(kind: &str) -> Result<(), WorldError> {
    if !valid_id(kind) {
        return Err(WorldError::invalid(format!(
            "slice kind {kind:?} must be non-empty text without surrounding spaces"
        )));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
