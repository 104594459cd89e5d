//! Threads of the causal tree. Status changes are free; `archive` is the agents' soft delete
//! (it forces `archived` and refuses any other status in the same call). Archiving a thread
//! leaves its scenes as they are.

use super::ctx::{
    check_enum, int, json_text, normalize_tags, opt_int, opt_text, required_text, text, Plot,
};
use super::error::{PlotError, PlotResult};
use super::input::ThreadInput;
use super::model::*;
use super::track::Table;

impl Plot<'_> {
    pub fn get_thread(&mut self, id: i64) -> PlotResult<ThreadDto> {
        self.find_thread(id, "/threadId")
    }

    /// `get_story_thread`: the thread with its scenes.
    pub fn thread_detail(&mut self, id: i64) -> PlotResult<ThreadDetailDto> {
        let thread = self.get_thread(id)?;
        let scenes = self.thread_scenes(id)?;
        Ok(ThreadDetailDto { thread, scenes })
    }

    fn check_thread_fields(&mut self, input: &ThreadInput) -> PlotResult<Option<Option<i64>>> {
        if let Some(s) = &input.status {
            check_enum("/status", s, THREAD_STATUSES)?;
        }
        if let Some(m) = input.mice_type.value() {
            check_enum("/miceType", m, MICE_TYPES)?;
        }
        Ok(match &input.story_phase_id {
            super::input::Field::Keep => None,
            super::input::Field::Clear => Some(None),
            super::input::Field::Set(p) => Some(Some(self.find_phase(*p, "/storyPhaseId")?.id)),
        })
    }

    /// Create a thread: `name` and `title` required; status defaults to `draft`.
    pub fn create_thread(&mut self, input: &ThreadInput) -> PlotResult<ThreadDetailDto> {
        let name = required_text(
            "/name",
            input
                .name
                .as_deref()
                .ok_or_else(|| PlotError::invalid("/name", "required to create a thread"))?,
        )?;
        let title = required_text(
            "/title",
            input
                .title
                .as_deref()
                .ok_or_else(|| PlotError::invalid("/title", "required to create a thread"))?,
        )?;
        let story = self.ensure_story()?;
        let phase = self.check_thread_fields(input)?.flatten();
        self.assert_name_free(Table::Thread, story, &name, None, "thread")?;
        let order = self.next_order(Table::Thread, "sortOrder", "storyId", story)?;
        let id = self.insert(
            Table::Thread,
            &[
                ("storyId", int(story)),
                ("storyPhaseId", opt_int(phase)),
                ("sortOrder", int(order)),
                ("name", text(&name)),
                ("title", text(&title)),
                (
                    "isMainThread",
                    int(i64::from(input.is_main_thread.unwrap_or(false))),
                ),
                ("status", text(input.status.as_deref().unwrap_or("draft"))),
                ("miceType", opt_text(input.mice_type.value())),
                ("summary", text(input.summary.as_deref().unwrap_or(""))),
                (
                    "tags",
                    json_text(&normalize_tags(input.tags.as_deref().unwrap_or(&[]))),
                ),
                ("writingTip", opt_text(input.writing_tip.value())),
                ("note", opt_text(input.note.value())),
            ],
        )?;
        self.thread_detail(id)
    }

    pub fn update_thread(&mut self, id: i64, input: &ThreadInput) -> PlotResult<ThreadDetailDto> {
        self.write_thread(id, input, "update")
    }

    /// Soft delete: status becomes `archived`; a different `status` in the same call is refused.
    pub fn archive_thread(&mut self, id: i64, input: &ThreadInput) -> PlotResult<ThreadDetailDto> {
        if let Some(s) = input.status.as_deref().filter(|s| *s != "archived") {
            return Err(PlotError::invalid("/status", format!("archive sets the status to archived; it cannot also set status '{s}' (use action update for other statuses)")));
        }
        let input = ThreadInput {
            status: Some("archived".into()),
            ..input.clone()
        };
        self.write_thread(id, &input, "archive")
    }

    fn write_thread(
        &mut self,
        id: i64,
        input: &ThreadInput,
        action: &str,
    ) -> PlotResult<ThreadDetailDto> {
        self.ensure_story()?;
        let thread = self.find_thread(id, "/threadId")?;
        let phase = self.check_thread_fields(input)?;
        let mut sets = Vec::new();
        if let Some(p) = phase {
            sets.push(("storyPhaseId", opt_int(p)));
        }
        if let Some(n) = &input.name {
            let n = required_text("/name", n)?;
            if n != thread.name {
                self.assert_name_free(Table::Thread, thread.story_id, &n, Some(id), "thread")?;
            }
            sets.push(("name", text(&n)));
        }
        if let Some(t) = &input.title {
            sets.push(("title", text(&required_text("/title", t)?)));
        }
        if let Some(m) = input.is_main_thread {
            sets.push(("isMainThread", int(i64::from(m))));
        }
        if let Some(s) = &input.status {
            sets.push(("status", text(s)));
        }
        if !input.mice_type.is_keep() {
            sets.push(("miceType", opt_text(input.mice_type.value())));
        }
        if let Some(s) = &input.summary {
            sets.push(("summary", text(s)));
        }
        if let Some(t) = &input.tags {
            sets.push(("tags", json_text(&normalize_tags(t))));
        }
        if !input.writing_tip.is_keep() {
            sets.push(("writingTip", opt_text(input.writing_tip.value())));
        }
        if !input.note.is_keep() {
            sets.push(("note", opt_text(input.note.value())));
        }
        self.update(Table::Thread, id, action, &sets)?;
        self.thread_detail(id)
    }
}
