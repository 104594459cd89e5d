//! Promises: the reader-debt ledger. Stored status is the author's intent (open / fulfilled /
//! abandoned, any may be set); the stage is derived from the beats ([`super::derive`]).
//! `abandon` is the agents' soft delete.
//!
//! Ledger order: open, fulfilled, abandoned; then importance high → low; then id.

use super::ctx::{
    check_enum, int, json_text, normalize_tags, opt_int, opt_text, required_text, text, Plot,
};
use super::error::{PlotError, PlotResult};
use super::input::PromiseInput;
use super::model::*;
use super::rows;
use super::track::Table;

fn status_rank(s: &str) -> u8 {
    match s {
        "open" => 0,
        "fulfilled" => 1,
        "abandoned" => 2,
        _ => 3,
    }
}

fn importance_rank(s: &str) -> u8 {
    match s {
        "high" => 0,
        "medium" => 1,
        "low" => 2,
        _ => 3,
    }
}

impl Plot<'_> {
    pub fn get_promise(&mut self, id: i64) -> PlotResult<PromiseDto> {
        let mut p = self.find_promise(id, "/promiseId")?;
        let beats = self
            .beat_kinds(Some(&[id]))?
            .remove(&id)
            .unwrap_or_default();
        self.fill_promise(&mut p, &beats)?;
        Ok(p)
    }

    /// `get_story_promise` without an id: the ledger with derived stage and beat stats.
    pub fn list_promises(&mut self) -> PlotResult<Vec<PromiseDto>> {
        let Some(story) = self.story_id()? else {
            return Ok(Vec::new());
        };
        let sql = format!(
            "SELECT {} FROM \"StoryPromise\" WHERE \"storyId\" = ?1",
            rows::PROMISE_COLS
        );
        let mut list = self.all(&sql, [story], rows::promise)?;
        let mut beats = self.beat_kinds(None)?;
        for p in &mut list {
            let b = beats.remove(&p.id).unwrap_or_default();
            self.fill_promise(p, &b)?;
        }
        list.sort_by_key(|p| (status_rank(&p.status), importance_rank(&p.importance), p.id));
        Ok(list)
    }

    /// `get_story_promise` with an id: the promise and its beats with their scenes and chapters.
    pub fn promise_detail(&mut self, id: i64) -> PlotResult<PromiseDetailDto> {
        let promise = self.get_promise(id)?;
        let beats = self.all(
            "SELECT b.\"id\", b.\"promiseId\", b.\"sceneId\", b.\"kind\", b.\"note\", b.\"createdAt\", b.\"updatedAt\", \
             s.\"title\", s.\"status\", s.\"threadId\", s.\"chapterId\", c.\"name\" AS \"chapterName\", c.\"title\" AS \"chapterTitle\" \
             FROM \"StoryPromiseBeat\" b JOIN \"StoryScene\" s ON s.\"id\" = b.\"sceneId\" LEFT JOIN \"StoryChapter\" c ON c.\"id\" = s.\"chapterId\" \
             WHERE b.\"promiseId\" = ?1 ORDER BY c.\"sortOrder\" IS NULL, c.\"sortOrder\", s.\"chapterSortOrder\", s.\"threadSortOrder\", b.\"id\"",
            [id],
            |r| {
                let status: String = r.get("status")?;
                let chapter_id: Option<i64> = r.get("chapterId")?;
                let chapter = match (chapter_id, r.get::<_, Option<String>>("chapterName")?) {
                    (Some(cid), Some(name)) => Some(ChapterRef {
                        id: cid,
                        name,
                        title: r.get::<_, Option<String>>("chapterTitle")?.unwrap_or_default(),
                    }),
                    _ => None,
                };
                Ok(BeatDto {
                    id: r.get("id")?,
                    promise_id: r.get("promiseId")?,
                    scene_id: r.get("sceneId")?,
                    kind: r.get("kind")?,
                    note: r.get("note")?,
                    state: super::derive::beat_state(&status).to_string(),
                    scene: BeatSceneRef {
                        id: r.get("sceneId")?,
                        title: r.get("title")?,
                        status,
                        thread_id: r.get("threadId")?,
                        chapter_id,
                        chapter,
                    },
                    created_at: rows::ts(r, "createdAt")?,
                    updated_at: rows::ts(r, "updatedAt")?,
                })
            },
        )?;
        Ok(PromiseDetailDto { promise, beats })
    }

    fn check_promise_fields(&mut self, input: &PromiseInput) -> PlotResult<()> {
        if let Some(s) = &input.status {
            check_enum("/status", s, PROMISE_STATUSES)?;
        }
        if let Some(i) = &input.importance {
            check_enum("/importance", i, IMPORTANCES)?;
        }
        if let Some(c) = input.cadence_chapters.value() {
            if *c < 1 {
                return Err(PlotError::invalid(
                    "/cadenceChapters",
                    "must be 1 or more (or null to clear it)",
                ));
            }
        }
        if let Some(c) = input.deadline_chapter_id.value() {
            self.find_chapter(*c, "/deadlineChapterId")?;
        }
        Ok(())
    }

    /// Create a promise: `name` and `title` required; it starts `open` (no `status` accepted).
    pub fn create_promise(&mut self, input: &PromiseInput) -> PlotResult<PromiseDetailDto> {
        if input.status.is_some() {
            return Err(PlotError::invalid("/status", "a new promise is always open; set its status later with action abandon, fulfill or update"));
        }
        let name = required_text(
            "/name",
            input
                .name
                .as_deref()
                .ok_or_else(|| PlotError::invalid("/name", "required to create a promise"))?,
        )?;
        let title = required_text(
            "/title",
            input
                .title
                .as_deref()
                .ok_or_else(|| PlotError::invalid("/title", "required to create a promise"))?,
        )?;
        let story = self.ensure_story()?;
        self.check_promise_fields(input)?;
        self.assert_name_free(Table::Promise, story, &name, None, "promise")?;
        let id = self.insert(
            Table::Promise,
            &[
                ("storyId", int(story)),
                ("name", text(&name)),
                ("title", text(&title)),
                ("status", text("open")),
                (
                    "importance",
                    text(input.importance.as_deref().unwrap_or("medium")),
                ),
                ("summary", text(input.summary.as_deref().unwrap_or(""))),
                (
                    "payoffExpectation",
                    opt_text(input.payoff_expectation.value()),
                ),
                (
                    "cadenceChapters",
                    opt_int(input.cadence_chapters.value().copied()),
                ),
                (
                    "deadlineChapterId",
                    opt_int(input.deadline_chapter_id.value().copied()),
                ),
                (
                    "tags",
                    json_text(&normalize_tags(input.tags.as_deref().unwrap_or(&[]))),
                ),
            ],
        )?;
        self.promise_detail(id)
    }

    /// Update fields; `status: open` reopens.
    pub fn update_promise(
        &mut self,
        id: i64,
        input: &PromiseInput,
    ) -> PlotResult<PromiseDetailDto> {
        self.write_promise(id, input, "update")
    }

    /// Soft delete: status becomes `abandoned`.
    pub fn abandon_promise(
        &mut self,
        id: i64,
        input: &PromiseInput,
    ) -> PlotResult<PromiseDetailDto> {
        self.forced_status(id, input, "abandoned", "abandon")
    }

    /// Mark paid off by hand (a payoff beat usually does it).
    pub fn fulfill_promise(
        &mut self,
        id: i64,
        input: &PromiseInput,
    ) -> PlotResult<PromiseDetailDto> {
        self.forced_status(id, input, "fulfilled", "fulfill")
    }

    fn forced_status(
        &mut self,
        id: i64,
        input: &PromiseInput,
        status: &str,
        action: &str,
    ) -> PlotResult<PromiseDetailDto> {
        if let Some(s) = input.status.as_deref().filter(|s| *s != status) {
            return Err(PlotError::invalid("/status", format!("{action} sets the status to {status}; it cannot also set status '{s}' (use action update for other statuses)")));
        }
        let input = PromiseInput {
            status: Some(status.into()),
            ..input.clone()
        };
        self.write_promise(id, &input, action)
    }

    fn write_promise(
        &mut self,
        id: i64,
        input: &PromiseInput,
        action: &str,
    ) -> PlotResult<PromiseDetailDto> {
        self.ensure_story()?;
        let promise = self.find_promise(id, "/promiseId")?;
        self.check_promise_fields(input)?;
        let mut sets = Vec::new();
        if let Some(n) = &input.name {
            let n = required_text("/name", n)?;
            if n != promise.name {
                self.assert_name_free(Table::Promise, promise.story_id, &n, Some(id), "promise")?;
            }
            sets.push(("name", text(&n)));
        }
        if let Some(t) = &input.title {
            sets.push(("title", text(&required_text("/title", t)?)));
        }
        if let Some(s) = &input.status {
            sets.push(("status", text(s)));
        }
        if let Some(i) = &input.importance {
            sets.push(("importance", text(i)));
        }
        if let Some(s) = &input.summary {
            sets.push(("summary", text(s)));
        }
        if !input.payoff_expectation.is_keep() {
            sets.push((
                "payoffExpectation",
                opt_text(input.payoff_expectation.value()),
            ));
        }
        if !input.cadence_chapters.is_keep() {
            sets.push((
                "cadenceChapters",
                opt_int(input.cadence_chapters.value().copied()),
            ));
        }
        if !input.deadline_chapter_id.is_keep() {
            sets.push((
                "deadlineChapterId",
                opt_int(input.deadline_chapter_id.value().copied()),
            ));
        }
        if let Some(t) = &input.tags {
            sets.push(("tags", json_text(&normalize_tags(t))));
        }
        self.update(Table::Promise, id, action, &sets)?;
        self.promise_detail(id)
    }
}
