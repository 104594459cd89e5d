//! The chapter writer brief: everything a writer needs for one chapter, and whether the chapter
//! is ready to hand over.
//!
//! Status ladder, first failing check wins: `needs_plot` (no scenes) → `needs_world_anchor`
//! (a scene without start or end time) → `needs_world_context` (a scene names subjects the
//! world engine does not know) → `needs_chapter_brief` (readerKnows, protagonistKnows,
//! mustHide and hintOnly all empty) → `ready`.
//!
//! Choice: archived scenes are left out of the brief altogether (status ladder, plot points,
//! promise tasks) — an archived scene is soft-deleted and must not be written.

use std::collections::HashMap;

use serde::Serialize;

use super::ctx::Plot;
use super::error::{PlotError, PlotResult};
use super::model::*;
use super::world_anchor::{resolve_subjects, WorldSubjectRow};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BriefStatus {
    #[default]
    NeedsPlot,
    NeedsWorldAnchor,
    NeedsWorldContext,
    NeedsChapterBrief,
    Ready,
}

impl BriefStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            BriefStatus::NeedsPlot => "needs_plot",
            BriefStatus::NeedsWorldAnchor => "needs_world_anchor",
            BriefStatus::NeedsWorldContext => "needs_world_context",
            BriefStatus::NeedsChapterBrief => "needs_chapter_brief",
            BriefStatus::Ready => "ready",
        }
    }

    /// The ladder, from the facts it looks at.
    pub fn from_facts(
        scenes: usize,
        missing_anchor: bool,
        unresolved_subjects: bool,
        info_control_empty: bool,
    ) -> BriefStatus {
        if scenes == 0 {
            BriefStatus::NeedsPlot
        } else if missing_anchor {
            BriefStatus::NeedsWorldAnchor
        } else if unresolved_subjects {
            BriefStatus::NeedsWorldContext
        } else if info_control_empty {
            BriefStatus::NeedsChapterBrief
        } else {
            BriefStatus::Ready
        }
    }
}

/// `autonomous` (default): the writer queries the world itself; the brief gives query hints.
/// `curated`: the brief spells out the world context for a writer who cannot query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BriefMode {
    #[default]
    Autonomous,
    Curated,
}

impl BriefMode {
    pub fn parse(s: &str) -> Option<BriefMode> {
        match s {
            "autonomous" => Some(BriefMode::Autonomous),
            "curated" => Some(BriefMode::Curated),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorldContextDto {
    pub subjects: Vec<WorldSubjectRow>,
    pub location: Option<WorldSubjectRow>,
    pub unresolved_subject_ids: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BriefSceneDto {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    #[serde(serialize_with = "ser_id")]
    pub thread_id: i64,
    pub thread_title: String,
    pub thread_is_main: bool,
    pub thread_summary: String,
    pub thread_writing_tip: Option<String>,
    pub chapter_sort_order: Option<i64>,
    pub thread_sort_order: i64,
    pub title: String,
    pub status: String,
    pub summary: String,
    pub purpose: Option<String>,
    pub writing_tip: Option<String>,
    pub world_anchor: WorldAnchorDto,
    /// `None` until the scene has a complete time range.
    pub world_context: Option<WorldContextDto>,
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReadingDto {
    pub path: String,
    pub relation: String,
    pub note: Option<String>,
    pub source: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromiseTaskDto {
    #[serde(serialize_with = "ser_id")]
    pub scene_id: i64,
    pub scene_title: String,
    #[serde(serialize_with = "ser_id")]
    pub promise_id: i64,
    pub promise_name: String,
    pub promise_title: String,
    pub kind: String,
    pub note: Option<String>,
    /// Only on payoff beats.
    pub payoff_expectation: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenDecisionDto {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    pub name: String,
    pub title: String,
    pub question: String,
    pub anchor: AnchorDto,
    pub deadline_chapter: Option<ChapterRef>,
    /// Why it concerns this chapter.
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BriefDto {
    pub chapter: ChapterDto,
    pub mode: String,
    pub status: BriefStatus,
    /// The one thing to do next, in words.
    pub next_step: String,
    pub scenes: Vec<BriefSceneDto>,
    pub total_scenes: usize,
    pub suggested_reading: Vec<ReadingDto>,
    pub promise_tasks: Vec<PromiseTaskDto>,
    pub open_decisions: Vec<OpenDecisionDto>,
    pub warnings: Vec<String>,
    pub suggested_brief_markdown: String,
}

/// Open story-level decisions whose deadline is at most this many chapters ahead are listed.
const DEADLINE_WINDOW: i64 = 3;

impl Plot<'_> {
    /// `get_chapter_writer_brief`.
    pub fn writer_brief(&mut self, chapter_id: i64, mode: BriefMode) -> PlotResult<BriefDto> {
        let chapter = self.get_chapter(chapter_id)?;
        let thread_info: HashMap<i64, ThreadDto> = match self.story_id()? {
            Some(story) => self
                .threads(story)?
                .into_iter()
                .map(|t| (t.id, t))
                .collect(),
            None => HashMap::new(),
        };
        let scenes: Vec<ChapterSceneDto> = self
            .chapter_scenes(chapter_id)?
            .into_iter()
            .filter(|s| s.status != "archived")
            .collect();
        let mut brief_scenes = Vec::new();
        let (mut missing_anchor, mut unresolved) = (false, false);
        let mut reading: Vec<ReadingDto> = Vec::new();
        for s in &scenes {
            let full = self.get_scene(s.id)?;
            let thread = thread_info.get(&s.thread_id).cloned().unwrap_or_default();
            let mut warnings = Vec::new();
            let anchor = s.world_anchor.clone();
            let world_context = if anchor.start_instant.is_none() || anchor.end_instant.is_none() {
                missing_anchor = true;
                warnings.push(format!("Scene \"{}\" (#{}) has no complete world time range: set worldAnchor startTime and endTime.", s.title, s.id));
                None
            } else {
                let (known, missing) = resolve_subjects(self.conn(), &anchor.all_subject_ids())?;
                if !missing.is_empty() {
                    unresolved = true;
                    warnings.push(format!(
                        "Scene \"{}\" (#{}) names subjects the world engine does not know: {}.",
                        s.title,
                        s.id,
                        missing.join(", ")
                    ));
                }
                let location = anchor
                    .location_subject_id
                    .as_ref()
                    .and_then(|l| known.iter().find(|k| &k.id == l).cloned());
                Some(WorldContextDto {
                    subjects: known
                        .into_iter()
                        .filter(|k| anchor.subject_ids.contains(&k.id))
                        .collect(),
                    location,
                    unresolved_subject_ids: missing,
                })
            };
            for r in self.scene_refs(s.id)? {
                if r.target_kind == "content" && !reading.iter().any(|x| x.path == r.target) {
                    reading.push(ReadingDto {
                        path: r.target,
                        relation: r.relation,
                        note: r.note,
                        source: "scene".into(),
                    });
                }
            }
            brief_scenes.push(BriefSceneDto {
                id: s.id,
                thread_id: s.thread_id,
                thread_title: s.thread_title.clone(),
                thread_is_main: s.thread_is_main,
                thread_summary: thread.summary,
                thread_writing_tip: thread.writing_tip,
                chapter_sort_order: s.chapter_sort_order,
                thread_sort_order: s.thread_sort_order,
                title: s.title.clone(),
                status: s.status.clone(),
                summary: s.summary.clone(),
                purpose: s.purpose.clone(),
                writing_tip: full.writing_tip,
                world_anchor: anchor,
                world_context,
                warnings,
            });
        }
        let status = BriefStatus::from_facts(
            scenes.len(),
            missing_anchor,
            unresolved,
            chapter.brief.info_control_empty(),
        );
        let promise_tasks = self.promise_tasks(&scenes)?;
        let open_decisions = self.open_decisions_for(&chapter, &scenes, &promise_tasks)?;
        let mut warnings: Vec<String> = Vec::new();
        for w in brief_scenes.iter().flat_map(|s| s.warnings.iter()) {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
        if scenes.is_empty() {
            warnings.push(format!("No scenes are placed in this chapter yet: create scenes with chapterId {} (save_story_scene).", chapter.id));
        }
        if status == BriefStatus::NeedsChapterBrief {
            warnings.push("Information control is empty: fill at least one of readerKnows, protagonistKnows, mustHide or hintOnly in the chapter brief (save_story_chapter, brief).".into());
        }
        let next_step = next_step(status, &brief_scenes, chapter.id);
        let mut dto = BriefDto {
            chapter,
            mode: match mode {
                BriefMode::Autonomous => "autonomous".into(),
                BriefMode::Curated => "curated".into(),
            },
            status,
            next_step,
            total_scenes: brief_scenes.len(),
            scenes: brief_scenes,
            suggested_reading: reading,
            promise_tasks,
            open_decisions,
            warnings,
            suggested_brief_markdown: String::new(),
        };
        dto.suggested_brief_markdown = super::brief_md::render(&dto, mode);
        Ok(dto)
    }

    /// Beats on the chapter's scenes, in scene order; abandoned promises left out.
    fn promise_tasks(&mut self, scenes: &[ChapterSceneDto]) -> PlotResult<Vec<PromiseTaskDto>> {
        let mut out = Vec::new();
        for s in scenes {
            let rows = self.all(
                "SELECT p.\"id\", p.\"name\", p.\"title\", p.\"payoffExpectation\", b.\"kind\", b.\"note\" FROM \"StoryPromiseBeat\" b \
                 JOIN \"StoryPromise\" p ON p.\"id\" = b.\"promiseId\" WHERE b.\"sceneId\" = ?1 AND p.\"status\" != 'abandoned' ORDER BY p.\"id\"",
                [s.id],
                |r| {
                    let kind: String = r.get(4)?;
                    let expectation: Option<String> = r.get(3)?;
                    Ok(PromiseTaskDto {
                        scene_id: s.id,
                        scene_title: s.title.clone(),
                        promise_id: r.get(0)?,
                        promise_name: r.get(1)?,
                        promise_title: r.get(2)?,
                        payoff_expectation: if kind == "payoff" { expectation } else { None },
                        kind,
                        note: r.get(5)?,
                    })
                },
            )?;
            out.extend(rows);
        }
        Ok(out)
    }

    /// Open decisions that concern the chapter: anchored on it, on its scenes, their threads or
    /// the promises beaten in it; or story-level with a deadline at most three chapters ahead
    /// (overdue ones included). Non-blocking.
    fn open_decisions_for(
        &mut self,
        chapter: &ChapterDto,
        scenes: &[ChapterSceneDto],
        tasks: &[PromiseTaskDto],
    ) -> PlotResult<Vec<OpenDecisionDto>> {
        let order: Vec<i64> = self.chapters_in_order()?.iter().map(|c| c.id).collect();
        let pos = |id: i64| order.iter().position(|c| *c == id).map(|p| p as i64);
        let here = pos(chapter.id);
        let mut out = Vec::new();
        for d in self
            .list_decisions()?
            .into_iter()
            .filter(|d| d.status == "open")
        {
            let id = d.anchor.id;
            let reason = match d.anchor.kind.as_str() {
                "chapter" if id == Some(chapter.id) => Some("anchored on this chapter".to_string()),
                "scene" if scenes.iter().any(|s| Some(s.id) == id) => {
                    Some(format!("anchored on scene #{}", id.unwrap_or_default()))
                }
                "thread" if scenes.iter().any(|s| Some(s.thread_id) == id) => {
                    Some(format!("anchored on thread #{}", id.unwrap_or_default()))
                }
                "promise" if tasks.iter().any(|t| Some(t.promise_id) == id) => Some(format!(
                    "anchored on promise #{}, beaten in this chapter",
                    id.unwrap_or_default()
                )),
                "story" => match (d.deadline_chapter_id.and_then(pos), here) {
                    (Some(dl), Some(h)) if dl - h <= DEADLINE_WINDOW => Some(if dl < h {
                        "story-level, its deadline chapter has passed".to_string()
                    } else {
                        format!("story-level, due within {} chapter(s)", dl - h)
                    }),
                    _ => None,
                },
                _ => None,
            };
            if let Some(reason) = reason {
                out.push(OpenDecisionDto {
                    id: d.id,
                    name: d.name,
                    title: d.title,
                    question: d.question,
                    anchor: d.anchor,
                    deadline_chapter: d.deadline_chapter,
                    reason,
                });
            }
        }
        Ok(out)
    }
}

fn next_step(status: BriefStatus, scenes: &[BriefSceneDto], chapter_id: i64) -> String {
    let first = |pred: &dyn Fn(&BriefSceneDto) -> bool| {
        scenes
            .iter()
            .find(|s| pred(s))
            .map(|s| format!("scene #{} \"{}\"", s.id, s.title))
            .unwrap_or_default()
    };
    match status {
        BriefStatus::NeedsPlot => format!("Place scenes in chapter {chapter_id} (save_story_scene with chapterId {chapter_id})."),
        BriefStatus::NeedsWorldAnchor => format!(
            "Give {} a world time range (save_story_scene worldAnchor startTime and endTime).",
            first(&|s| s.world_anchor.start_instant.is_none() || s.world_anchor.end_instant.is_none())
        ),
        BriefStatus::NeedsWorldContext => format!(
            "Create the missing world subjects of {} (execute_world) or correct its worldAnchor subjectIds.",
            first(&|s| s.world_context.as_ref().is_some_and(|c| !c.unresolved_subject_ids.is_empty()))
        ),
        BriefStatus::NeedsChapterBrief => format!("Fill the chapter's information control (save_story_chapter chapterId {chapter_id}, brief readerKnows / protagonistKnows / mustHide / hintOnly)."),
        BriefStatus::Ready => "Ready: hand the brief to the writer.".into(),
    }
}

impl std::str::FromStr for BriefMode {
    type Err = PlotError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BriefMode::parse(s).ok_or_else(|| {
            PlotError::invalid("/mode", format!("'{s}' is not autonomous or curated"))
        })
    }
}
