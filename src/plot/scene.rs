//! Scenes: where the causal tree meets the carrier tree (a scene belongs to a thread and may be
//! placed in a chapter) and the bridge to the world engine (its world anchor).
//!
//! Archiving (status → archived, by `archive` or `update`) runs the promise revert rule for
//! every promise beaten on the scene. Moving a scene to another thread or chapter puts it last
//! there; the old thread/chapter keeps its (now gapped) order, which is harmless.

use super::ctx::{check_enum, int, json_text, opt_int, opt_text, required_text, text, Plot};
use super::error::{PlotError, PlotResult};
use super::input::{Field, SceneInput, WorldAnchorInput};
use super::model::*;
use super::track::Table;

/// The stored form of a world anchor.
struct AnchorCols {
    start: Option<i64>,
    end: Option<i64>,
    subjects: Vec<String>,
    location: Option<String>,
}

impl Plot<'_> {
    pub fn get_scene(&mut self, id: i64) -> PlotResult<SceneDto> {
        self.find_scene(id, "/sceneId")
    }

    /// The promise beats placed on a scene.
    pub fn scene_beats(&mut self, scene_id: i64) -> PlotResult<Vec<SceneBeatDto>> {
        self.all(
            "SELECT b.\"promiseId\", p.\"name\", p.\"title\", p.\"status\", b.\"kind\", b.\"note\" FROM \"StoryPromiseBeat\" b \
             JOIN \"StoryPromise\" p ON p.\"id\" = b.\"promiseId\" WHERE b.\"sceneId\" = ?1 ORDER BY p.\"id\"",
            [scene_id],
            |r| {
                Ok(SceneBeatDto {
                    promise_id: r.get(0)?,
                    promise_name: r.get(1)?,
                    promise_title: r.get(2)?,
                    promise_status: r.get(3)?,
                    kind: r.get(4)?,
                    note: r.get(5)?,
                })
            },
        )
    }

    pub fn scene_detail(&mut self, id: i64) -> PlotResult<SceneDetailDto> {
        let scene = self.get_scene(id)?;
        let refs = self.scene_refs(id)?;
        let beats = self.scene_beats(id)?;
        Ok(SceneDetailDto { scene, refs, beats })
    }

    /// `get_story_scene_context`: the scene, its thread (with its scenes) and its chapter.
    pub fn scene_context(&mut self, id: i64) -> PlotResult<SceneContextDto> {
        let scene = self.scene_detail(id)?;
        let thread = self.thread_detail(scene.scene.thread_id)?;
        let chapter_plot = match scene.scene.chapter_id {
            Some(c) => Some(self.chapter_detail(c)?),
            None => None,
        };
        Ok(SceneContextDto {
            thread,
            scene,
            chapter_plot,
        })
    }

    fn anchor_cols(&self, a: &WorldAnchorInput) -> PlotResult<AnchorCols> {
        let parse = |field: &str, v: &Option<String>| -> PlotResult<Option<i64>> {
            match v {
                None => Ok(None),
                Some(t) => self.calendar().parse(t).map(Some).map_err(|e| {
                    PlotError::invalid(&format!("/worldAnchor/{field}"), e.to_string())
                }),
            }
        };
        let start = parse("startTime", &a.start_time)?;
        let end = parse("endTime", &a.end_time)?;
        if let (Some(s), Some(e)) = (start, end) {
            if s > e {
                return Err(PlotError::invalid(
                    "/worldAnchor/endTime",
                    "the scene ends before it starts (endTime is earlier than startTime)",
                ));
            }
        }
        if a.subject_ids.len() > MAX_SUBJECTS {
            return Err(PlotError::invalid(
                "/worldAnchor/subjectIds",
                format!(
                    "{} subject ids; a scene lists at most {MAX_SUBJECTS}",
                    a.subject_ids.len()
                ),
            ));
        }
        for (i, s) in a.subject_ids.iter().enumerate() {
            let ptr = format!("/worldAnchor/subjectIds/{i}");
            if s.trim().is_empty() || s.trim() != s {
                return Err(PlotError::invalid(
                    &ptr,
                    format!("'{s}' is not a subject id (empty or surrounded by spaces)"),
                ));
            }
            if let Some(j) = a.subject_ids[..i].iter().position(|o| o == s) {
                return Err(PlotError::invalid(
                    &ptr,
                    format!("duplicate subject id '{s}' (also at index {j})"),
                ));
            }
        }
        if let Some(l) = &a.location_subject_id {
            if l.trim().is_empty() || l.trim() != l {
                return Err(PlotError::invalid(
                    "/worldAnchor/locationSubjectId",
                    format!("'{l}' is not a subject id"),
                ));
            }
        }
        Ok(AnchorCols {
            start,
            end,
            subjects: a.subject_ids.clone(),
            location: a.location_subject_id.clone(),
        })
    }

    fn check_scene_enums(input: &SceneInput) -> PlotResult<()> {
        if let Some(s) = &input.status {
            check_enum("/status", s, SCENE_STATUSES)?;
        }
        if let Some(o) = input.outcome_type.value() {
            check_enum("/outcomeType", o, OUTCOME_TYPES)?;
        }
        if let Some(p) = input.pacing_role.value() {
            check_enum("/pacingRole", p, PACING_ROLES)?;
        }
        Ok(())
    }

    /// Create a scene in `input.thread_id` (required here; the tools default it from the
    /// selection). Status defaults to `draft`.
    pub fn create_scene(&mut self, input: &SceneInput) -> PlotResult<SceneDetailDto> {
        let title = required_text(
            "/title",
            input
                .title
                .as_deref()
                .ok_or_else(|| PlotError::invalid("/title", "required to create a scene"))?,
        )?;
        let thread_id = input
            .thread_id
            .ok_or_else(|| PlotError::invalid("/threadId", "required to create a scene: pass threadId, or read or create a thread first so it is selected"))?;
        Self::check_scene_enums(input)?;
        let story = self.ensure_story()?;
        let thread = self.find_thread(thread_id, "/threadId")?;
        let chapter = match input.chapter_id.value() {
            Some(c) => Some(self.find_chapter(*c, "/chapterId")?.id),
            None => None,
        };
        let anchor = match &input.world_anchor {
            Some(a) => self.anchor_cols(a)?,
            None => AnchorCols {
                start: None,
                end: None,
                subjects: Vec::new(),
                location: None,
            },
        };
        let refs = match &input.refs {
            Some(r) => Some(self.resolve_scene_refs(r)?),
            None => None,
        };
        let thread_order =
            self.next_order(Table::Scene, "threadSortOrder", "threadId", thread.id)?;
        let chapter_order = match chapter {
            Some(c) => Some(self.next_order(Table::Scene, "chapterSortOrder", "chapterId", c)?),
            None => None,
        };
        let id = self.insert(
            Table::Scene,
            &[
                ("storyId", int(story)),
                ("threadId", int(thread.id)),
                ("chapterId", opt_int(chapter)),
                ("threadSortOrder", int(thread_order)),
                ("chapterSortOrder", opt_int(chapter_order)),
                ("title", text(&title)),
                ("status", text(input.status.as_deref().unwrap_or("draft"))),
                ("outcomeType", opt_text(input.outcome_type.value())),
                ("pacingRole", opt_text(input.pacing_role.value())),
                ("summary", text(input.summary.as_deref().unwrap_or(""))),
                ("purpose", opt_text(input.purpose.value())),
                ("writingTip", opt_text(input.writing_tip.value())),
                ("note", opt_text(input.note.value())),
                ("startInstant", opt_int(anchor.start)),
                ("endInstant", opt_int(anchor.end)),
                ("subjectIdsJson", json_text(&anchor.subjects)),
                ("locationSubjectId", opt_text(anchor.location.as_ref())),
            ],
        )?;
        if let Some(refs) = refs {
            let now = self.now_string();
            self.replace_scene_refs(id, &refs, &now)?;
        }
        self.scene_detail(id)
    }

    pub fn update_scene(&mut self, id: i64, input: &SceneInput) -> PlotResult<SceneDetailDto> {
        self.write_scene(id, input, "update")
    }

    /// Soft delete: status becomes `archived` (a different `status` in the same call is refused);
    /// promises paid off only on this scene reopen.
    pub fn archive_scene(&mut self, id: i64, input: &SceneInput) -> PlotResult<SceneDetailDto> {
        if let Some(s) = input.status.as_deref().filter(|s| *s != "archived") {
            return Err(PlotError::invalid("/status", format!("archive sets the status to archived; it cannot also set status '{s}' (use action update for other statuses)")));
        }
        let input = SceneInput {
            status: Some("archived".into()),
            ..input.clone()
        };
        self.write_scene(id, &input, "archive")
    }

    fn write_scene(
        &mut self,
        id: i64,
        input: &SceneInput,
        action: &str,
    ) -> PlotResult<SceneDetailDto> {
        self.ensure_story()?;
        let scene = self.find_scene(id, "/sceneId")?;
        Self::check_scene_enums(input)?;
        let mut sets = Vec::new();
        if let Some(t) = input.thread_id.filter(|t| *t != scene.thread_id) {
            let thread = self.find_thread(t, "/threadId")?;
            sets.push(("threadId", int(thread.id)));
            sets.push((
                "threadSortOrder",
                int(self.next_order(Table::Scene, "threadSortOrder", "threadId", thread.id)?),
            ));
        }
        match &input.chapter_id {
            Field::Keep => {}
            Field::Clear => {
                sets.push(("chapterId", opt_int(None)));
                sets.push(("chapterSortOrder", opt_int(None)));
            }
            Field::Set(c) => {
                let chapter = self.find_chapter(*c, "/chapterId")?;
                if scene.chapter_id != Some(chapter.id) {
                    sets.push(("chapterId", int(chapter.id)));
                    sets.push((
                        "chapterSortOrder",
                        int(self.next_order(
                            Table::Scene,
                            "chapterSortOrder",
                            "chapterId",
                            chapter.id,
                        )?),
                    ));
                }
            }
        }
        if let Some(t) = &input.title {
            sets.push(("title", text(&required_text("/title", t)?)));
        }
        if let Some(s) = &input.status {
            sets.push(("status", text(s)));
        }
        for (col, field) in [
            ("outcomeType", &input.outcome_type),
            ("pacingRole", &input.pacing_role),
            ("purpose", &input.purpose),
            ("writingTip", &input.writing_tip),
            ("note", &input.note),
        ] {
            if !field.is_keep() {
                sets.push((col, opt_text(field.value())));
            }
        }
        if let Some(s) = &input.summary {
            sets.push(("summary", text(s)));
        }
        if let Some(a) = &input.world_anchor {
            let a = self.anchor_cols(a)?;
            sets.push(("startInstant", opt_int(a.start)));
            sets.push(("endInstant", opt_int(a.end)));
            sets.push(("subjectIdsJson", json_text(&a.subjects)));
            sets.push(("locationSubjectId", opt_text(a.location.as_ref())));
        }
        let refs = match &input.refs {
            Some(r) => Some(self.resolve_scene_refs(r)?),
            None => None,
        };
        self.update(Table::Scene, id, action, &sets)?;
        if let Some(refs) = refs {
            let now = self.now_string();
            self.replace_scene_refs(id, &refs, &now)?;
        }
        if input.status.as_deref() == Some("archived") {
            let promises = self.promises_beaten_on(&[id])?;
            self.revert_fulfilled(&promises)?;
        }
        self.scene_detail(id)
    }
}
