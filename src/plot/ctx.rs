//! [`Plot`]: the plot services over one connection (normally a transaction). Entity modules add
//! their methods in their own `impl Plot` blocks; this file holds what they share: the Story,
//! row writes that feed the change tracker, scope guards and small validators.

use std::sync::Arc;

use rusqlite::types::Value as Sql;
use rusqlite::{params_from_iter, Connection, OptionalExtension, Params, Row};

use super::error::{ErrorKind, PlotError, PlotResult};
use super::model::*;
use super::project::ProjectMeta;
use super::rows;
use super::time::{default_calendar, now_iso, CalendarCodec};
use super::track::{Table, Tracker};
use crate::protocol::{RecordChange, TargetState};

pub struct Plot<'c> {
    conn: &'c Connection,
    meta: ProjectMeta,
    cal: Arc<dyn CalendarCodec>,
    now: String,
    story_id: Option<i64>,
    tracker: Tracker,
}

pub(crate) fn text(s: &str) -> Sql {
    Sql::Text(s.to_string())
}

pub(crate) fn opt_text(s: Option<&String>) -> Sql {
    s.map(|v| Sql::Text(v.clone())).unwrap_or(Sql::Null)
}

pub(crate) fn int(i: i64) -> Sql {
    Sql::Integer(i)
}

pub(crate) fn opt_int(i: Option<i64>) -> Sql {
    i.map(Sql::Integer).unwrap_or(Sql::Null)
}

pub(crate) fn json_text(v: &impl serde::Serialize) -> Sql {
    Sql::Text(serde_json::to_string(v).unwrap_or_else(|_| "[]".into()))
}

/// A required or renamed text value: trimmed, not blank.
pub(crate) fn required_text(pointer: &str, value: &str) -> PlotResult<String> {
    let t = value.trim();
    if t.is_empty() {
        return Err(PlotError::invalid(pointer, "must not be empty"));
    }
    Ok(t.to_string())
}

pub(crate) fn check_enum(pointer: &str, value: &str, allowed: &[&str]) -> PlotResult<()> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(PlotError::invalid(
            pointer,
            format!("'{value}' is not one of {}", allowed.join(", ")),
        ))
    }
}

/// Tags: trimmed, blanks dropped, duplicates dropped (first kept).
pub(crate) fn normalize_tags(tags: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in tags.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

impl<'c> Plot<'c> {
    pub fn new(conn: &'c Connection, meta: ProjectMeta) -> Plot<'c> {
        Plot {
            conn,
            meta,
            cal: default_calendar(),
            now: now_iso(),
            story_id: None,
            tracker: Tracker::default(),
        }
    }

    /// Use the project's calendar for world-anchor times (the default is gregorian).
    pub fn with_calendar(mut self, cal: Arc<dyn CalendarCodec>) -> Self {
        self.cal = cal;
        self
    }

    pub fn conn(&self) -> &'c Connection {
        self.conn
    }

    pub fn calendar(&self) -> &dyn CalendarCodec {
        self.cal.as_ref()
    }

    /// The timestamp every row written through this `Plot` gets.
    pub(crate) fn now_string(&self) -> String {
        self.now.clone()
    }

    pub(crate) fn calendar_arc(&self) -> Arc<dyn CalendarCodec> {
        self.cal.clone()
    }

    /// The changes made so far through this `Plot` and the rows they depend on.
    pub fn changes(&self) -> PlotResult<(Vec<RecordChange>, Vec<TargetState>)> {
        self.tracker.finish(self.conn)
    }

    // ---- queries -------------------------------------------------------------------------

    pub(crate) fn one<T, P: Params>(
        &self,
        sql: &str,
        params: P,
        f: impl FnOnce(&Row) -> rusqlite::Result<T>,
    ) -> PlotResult<Option<T>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        Ok(stmt.query_row(params, f).optional()?)
    }

    pub(crate) fn all<T, P: Params>(
        &self,
        sql: &str,
        params: P,
        f: impl FnMut(&Row) -> rusqlite::Result<T>,
    ) -> PlotResult<Vec<T>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(params, f)?;
        Ok(rows.collect::<Result<Vec<T>, _>>()?)
    }

    pub(crate) fn count<P: Params>(&self, sql: &str, params: P) -> PlotResult<i64> {
        Ok(self.one(sql, params, |r| r.get(0))?.unwrap_or(0))
    }

    // ---- the Story -----------------------------------------------------------------------

    /// The story NeuroBook uses (lowest id), without creating one.
    pub fn story_id(&mut self) -> PlotResult<Option<i64>> {
        if self.story_id.is_none() {
            self.story_id = self.one(
                "SELECT \"id\" FROM \"Story\" ORDER BY \"id\" LIMIT 1",
                [],
                |r| r.get(0),
            )?;
        }
        Ok(self.story_id)
    }

    /// The story, created from project.yaml's title and summary when there is none yet.
    pub fn ensure_story(&mut self) -> PlotResult<i64> {
        if let Some(id) = self.story_id()? {
            return Ok(id);
        }
        let (title, summary) = (self.meta.title.clone(), self.meta.summary.clone());
        let id = self.insert(
            Table::Story,
            &[("title", text(&title)), ("summary", text(&summary))],
        )?;
        self.story_id = Some(id);
        Ok(id)
    }

    /// The story as a DTO; when no row exists yet, the one that will be created (id `None`).
    pub fn story(&mut self) -> PlotResult<StoryDto> {
        let Some(id) = self.story_id()? else {
            return Ok(StoryDto {
                id: None,
                title: self.meta.title.clone(),
                summary: self.meta.summary.clone(),
                ..StoryDto::default()
            });
        };
        let found = self.one(
            "SELECT \"id\",\"title\",\"summary\",\"note\",\"createdAt\",\"updatedAt\" FROM \"Story\" WHERE \"id\" = ?1",
            [id],
            |r| {
                Ok(StoryDto {
                    id: Some(r.get("id")?),
                    title: r.get("title")?,
                    summary: r.get("summary")?,
                    note: r.get("note")?,
                    created_at: Some(rows::ts(r, "createdAt")?),
                    updated_at: Some(rows::ts(r, "updatedAt")?),
                })
            },
        )?;
        found.ok_or_else(|| PlotError::db("the story row vanished"))
    }

    // ---- writes (tracked) ----------------------------------------------------------------

    /// Insert a row with createdAt/updatedAt set now; returns its id.
    pub(crate) fn insert(&mut self, table: Table, cols: &[(&str, Sql)]) -> PlotResult<i64> {
        let mut names: Vec<String> = cols.iter().map(|(c, _)| format!("\"{c}\"")).collect();
        names.push("\"createdAt\"".into());
        names.push("\"updatedAt\"".into());
        let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT INTO \"{}\" ({}) VALUES ({})",
            table.name(),
            names.join(","),
            marks.join(",")
        );
        let mut values: Vec<Sql> = cols.iter().map(|(_, v)| v.clone()).collect();
        values.push(text(&self.now));
        values.push(text(&self.now));
        self.conn
            .prepare_cached(&sql)?
            .execute(params_from_iter(values))?;
        let id = self.conn.last_insert_rowid();
        self.tracker.created(table, id);
        Ok(id)
    }

    /// Update columns of a row and set updatedAt (always: every write stamps the row).
    pub(crate) fn update(
        &mut self,
        table: Table,
        id: i64,
        action: &str,
        sets: &[(&str, Sql)],
    ) -> PlotResult<()> {
        self.tracker.touch(self.conn, table, id, action)?;
        let mut assigns: Vec<String> = sets
            .iter()
            .enumerate()
            .map(|(i, (c, _))| format!("\"{c}\" = ?{}", i + 1))
            .collect();
        assigns.push(format!("\"updatedAt\" = ?{}", sets.len() + 1));
        let sql = format!(
            "UPDATE \"{}\" SET {} WHERE \"id\" = ?{}",
            table.name(),
            assigns.join(", "),
            sets.len() + 2
        );
        let mut values: Vec<Sql> = sets.iter().map(|(_, v)| v.clone()).collect();
        values.push(text(&self.now));
        values.push(int(id));
        self.conn
            .prepare_cached(&sql)?
            .execute(params_from_iter(values))?;
        Ok(())
    }

    /// Delete one row (foreign keys cascade as NeuroBook's schema says).
    pub(crate) fn delete_row(&mut self, table: Table, id: i64) -> PlotResult<()> {
        self.tracker.touch(self.conn, table, id, "delete")?;
        let sql = format!("DELETE FROM \"{}\" WHERE \"id\" = ?1", table.name());
        self.conn.prepare_cached(&sql)?.execute([id])?;
        Ok(())
    }

    pub(crate) fn observe(&mut self, table: Table, id: i64) -> PlotResult<()> {
        self.tracker.observe(self.conn, table, id)
    }

    pub(crate) fn touch(&mut self, table: Table, id: i64, action: &str) -> PlotResult<()> {
        self.tracker.touch(self.conn, table, id, action)
    }

    pub(crate) fn extra_change(
        &mut self,
        table: Table,
        id: i64,
        field: &str,
        before: serde_json::Value,
        after: serde_json::Value,
    ) {
        self.tracker.extra(table, id, field, before, after);
    }

    // ---- guards --------------------------------------------------------------------------

    /// Next sort order among rows matching `col = val` (0 for the first).
    pub(crate) fn next_order(
        &self,
        table: Table,
        order_col: &str,
        col: &str,
        val: i64,
    ) -> PlotResult<i64> {
        let sql = format!(
            "SELECT COALESCE(MAX(\"{order_col}\") + 1, 0) FROM \"{}\" WHERE \"{col}\" = ?1",
            table.name()
        );
        self.count(&sql, [val])
    }

    /// Names of acts, chapters, threads, promises and decisions are unique per story.
    pub(crate) fn assert_name_free(
        &self,
        table: Table,
        story: i64,
        name: &str,
        except: Option<i64>,
        what: &str,
    ) -> PlotResult<()> {
        let sql = format!(
            "SELECT \"id\" FROM \"{}\" WHERE \"storyId\" = ?1 AND \"name\" = ?2 AND \"id\" != ?3",
            table.name()
        );
        if let Some(other) = self.one(
            &sql,
            rusqlite::params![story, name, except.unwrap_or(-1)],
            |r| r.get::<_, i64>(0),
        )? {
            return Err(PlotError::conflict("/name", format!("a {what} named '{name}' already exists (id {other}); names are unique within the story")));
        }
        Ok(())
    }

    fn not_found(pointer: &str, what: &str, id: i64) -> PlotError {
        PlotError::not_found(pointer, format!("no {what} with id {id} in this story"))
    }

    pub(crate) fn find_act(&mut self, id: i64, pointer: &str) -> PlotResult<ActDto> {
        let story = self.story_id()?.unwrap_or(-1);
        let sql = format!(
            "SELECT {} FROM \"StoryAct\" WHERE \"id\" = ?1 AND \"storyId\" = ?2",
            rows::ACT_COLS
        );
        self.one(&sql, [id, story], rows::act)?
            .ok_or_else(|| Self::not_found(pointer, "act", id))
    }

    pub(crate) fn find_chapter(&mut self, id: i64, pointer: &str) -> PlotResult<ChapterDto> {
        let story = self.story_id()?.unwrap_or(-1);
        let sql = format!(
            "SELECT {} FROM \"StoryChapter\" WHERE \"id\" = ?1 AND \"storyId\" = ?2",
            rows::CHAPTER_COLS
        );
        self.one(&sql, [id, story], rows::chapter)?
            .ok_or_else(|| Self::not_found(pointer, "chapter", id))
    }

    pub(crate) fn find_phase(&mut self, id: i64, pointer: &str) -> PlotResult<PhaseDto> {
        let story = self.story_id()?.unwrap_or(-1);
        let sql = format!(
            "SELECT {} FROM \"StoryPhase\" WHERE \"id\" = ?1 AND \"storyId\" = ?2",
            rows::PHASE_COLS
        );
        self.one(&sql, [id, story], rows::phase)?
            .ok_or_else(|| Self::not_found(pointer, "phase", id))
    }

    pub(crate) fn find_thread(&mut self, id: i64, pointer: &str) -> PlotResult<ThreadDto> {
        let story = self.story_id()?.unwrap_or(-1);
        let sql = format!(
            "SELECT {} FROM \"StoryThread\" WHERE \"id\" = ?1 AND \"storyId\" = ?2",
            rows::THREAD_COLS
        );
        self.one(&sql, [id, story], rows::thread)?
            .ok_or_else(|| Self::not_found(pointer, "thread", id))
    }

    pub(crate) fn find_scene(&mut self, id: i64, pointer: &str) -> PlotResult<SceneDto> {
        let story = self.story_id()?.unwrap_or(-1);
        let sql = format!(
            "SELECT {} FROM {} WHERE s.\"id\" = ?1 AND s.\"storyId\" = ?2",
            rows::SCENE_COLS,
            rows::SCENE_FROM
        );
        let cal = self.cal.clone();
        self.one(&sql, [id, story], |r| rows::scene(r, cal.as_ref()))?
            .ok_or_else(|| Self::not_found(pointer, "scene", id))
    }

    pub(crate) fn find_promise(&mut self, id: i64, pointer: &str) -> PlotResult<PromiseDto> {
        let story = self.story_id()?.unwrap_or(-1);
        let sql = format!(
            "SELECT {} FROM \"StoryPromise\" WHERE \"id\" = ?1 AND \"storyId\" = ?2",
            rows::PROMISE_COLS
        );
        self.one(&sql, [id, story], rows::promise)?
            .ok_or_else(|| Self::not_found(pointer, "promise", id))
    }

    pub(crate) fn find_decision(
        &mut self,
        id: i64,
        pointer: &str,
    ) -> PlotResult<(DecisionDto, rows::RawAnchor)> {
        let story = self.story_id()?.unwrap_or(-1);
        let sql = format!(
            "SELECT {} FROM \"StoryDecision\" WHERE \"id\" = ?1 AND \"storyId\" = ?2",
            rows::DECISION_COLS
        );
        self.one(&sql, [id, story], rows::decision)?
            .ok_or_else(|| Self::not_found(pointer, "decision", id))
    }

    /// A chapter by id without the story scope (for references that have no foreign key).
    pub(crate) fn chapter_ref(&self, id: i64) -> PlotResult<Option<ChapterRef>> {
        self.one(
            "SELECT \"id\",\"name\",\"title\" FROM \"StoryChapter\" WHERE \"id\" = ?1",
            [id],
            |r| {
                Ok(ChapterRef {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    title: r.get(2)?,
                })
            },
        )
    }

    /// Fail with a general error when a rule about the whole call is broken.
    pub(crate) fn rule(message: impl Into<String>) -> PlotError {
        PlotError::general(ErrorKind::Invalid, message)
    }
}
