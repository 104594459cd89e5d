//! Chapters of the carrier tree, with their brief (the writer's instructions): create and
//! update only. Chapter detail lists the scenes placed in the chapter.
//!
//! A new chapter's sort order defaults to one past the highest in the whole story, so it
//! lands last whichever way a reader orders chapters (per act or story-wide).

use super::act::check_sort_order;
use super::ctx::{int, opt_int, opt_text, required_text, text, Plot};
use super::error::{PlotError, PlotResult};
use super::input::ChapterInput;
use super::model::*;
use super::rows;
use super::track::Table;

impl Plot<'_> {
    pub fn get_chapter(&mut self, id: i64) -> PlotResult<ChapterDto> {
        self.find_chapter(id, "/chapterId")
    }

    /// A chapter's scenes in chapter order (archived ones included, with their status).
    pub fn chapter_scenes(&mut self, chapter_id: i64) -> PlotResult<Vec<ChapterSceneDto>> {
        let sql = "SELECT s.\"id\", s.\"threadId\", t.\"title\" AS \"threadTitle\", t.\"isMainThread\", s.\"chapterSortOrder\", s.\"threadSortOrder\", \
                   s.\"title\", s.\"status\", s.\"summary\", s.\"purpose\", s.\"startInstant\", s.\"endInstant\", s.\"subjectIdsJson\", s.\"locationSubjectId\" \
                   FROM \"StoryScene\" s JOIN \"StoryThread\" t ON t.\"id\" = s.\"threadId\" \
                   WHERE s.\"chapterId\" = ?1 ORDER BY s.\"chapterSortOrder\", s.\"id\"";
        let cal = self.calendar_arc();
        self.all(sql, [chapter_id], |r| {
            Ok(ChapterSceneDto {
                id: r.get("id")?,
                thread_id: r.get("threadId")?,
                thread_title: r.get("threadTitle")?,
                thread_is_main: rows::boolean(r, "isMainThread")?,
                chapter_sort_order: r.get("chapterSortOrder")?,
                thread_sort_order: r.get("threadSortOrder")?,
                title: r.get("title")?,
                status: r.get("status")?,
                summary: r.get("summary")?,
                purpose: r.get("purpose")?,
                world_anchor: rows::world_anchor(r, cal.as_ref())?,
            })
        })
    }

    /// `get_story_chapter`: the chapter (with its brief) and its scenes.
    pub fn chapter_detail(&mut self, id: i64) -> PlotResult<ChapterDetailDto> {
        let chapter = self.get_chapter(id)?;
        let scenes = self.chapter_scenes(id)?;
        Ok(ChapterDetailDto {
            total_scenes: scenes.len(),
            chapter,
            scenes,
        })
    }

    pub fn create_chapter(&mut self, input: &ChapterInput) -> PlotResult<ChapterDto> {
        let name = required_text(
            "/name",
            input
                .name
                .as_deref()
                .ok_or_else(|| PlotError::invalid("/name", "required to create a chapter"))?,
        )?;
        let title = required_text(
            "/title",
            input
                .title
                .as_deref()
                .ok_or_else(|| PlotError::invalid("/title", "required to create a chapter"))?,
        )?;
        check_sort_order(input.sort_order)?;
        let story = self.ensure_story()?;
        self.assert_name_free(Table::Chapter, story, &name, None, "chapter")?;
        let act_id = match input.act_id.value() {
            Some(a) => Some(self.find_act(*a, "/actId")?.id),
            None => None,
        };
        let order = match input.sort_order {
            Some(o) => o,
            None => self.next_order(Table::Chapter, "sortOrder", "storyId", story)?,
        };
        let mut cols = vec![
            ("storyId", int(story)),
            ("actId", opt_int(act_id)),
            ("sortOrder", int(order)),
            ("name", text(&name)),
            ("title", text(&title)),
            ("note", opt_text(input.note.value())),
        ];
        for (col, _, field) in input.brief.columns() {
            cols.push((col, opt_text(field.value())));
        }
        let id = self.insert(Table::Chapter, &cols)?;
        self.get_chapter(id)
    }

    pub fn update_chapter(&mut self, id: i64, input: &ChapterInput) -> PlotResult<ChapterDto> {
        self.ensure_story()?;
        let chapter = self.find_chapter(id, "/chapterId")?;
        check_sort_order(input.sort_order)?;
        let mut sets = Vec::new();
        if !input.act_id.is_keep() {
            let act = match input.act_id.value() {
                Some(a) => Some(self.find_act(*a, "/actId")?.id),
                None => None,
            };
            sets.push(("actId", opt_int(act)));
        }
        if let Some(n) = &input.name {
            let n = required_text("/name", n)?;
            if n != chapter.name {
                self.assert_name_free(Table::Chapter, chapter.story_id, &n, Some(id), "chapter")?;
            }
            sets.push(("name", text(&n)));
        }
        if let Some(t) = &input.title {
            sets.push(("title", text(&required_text("/title", t)?)));
        }
        if !input.note.is_keep() {
            sets.push(("note", opt_text(input.note.value())));
        }
        if let Some(o) = input.sort_order {
            sets.push(("sortOrder", int(o)));
        }
        for (col, _, field) in input.brief.columns() {
            if !field.is_keep() {
                sets.push((col, opt_text(field.value())));
            }
        }
        self.update(Table::Chapter, id, "update", &sets)?;
        self.get_chapter(id)
    }
}
