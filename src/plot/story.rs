//! The story and its two trees: the carrier tree (acts → chapters) and the causal tree
//! (phases → threads → scenes), as `get_story_tree` returns them.
//!
//! Order everywhere: acts, chapters, phases and threads by `sortOrder` then id; scenes by
//! `threadSortOrder` within their thread. Archived threads and scenes are listed (with their
//! status) — the tree is the whole record.

use std::collections::HashMap;

use super::ctx::Plot;
use super::error::PlotResult;
use super::model::*;
use super::rows;

impl Plot<'_> {
    pub(crate) fn acts(&mut self, story: i64) -> PlotResult<Vec<ActDto>> {
        let sql = format!(
            "SELECT {} FROM \"StoryAct\" WHERE \"storyId\" = ?1 ORDER BY \"sortOrder\",\"id\"",
            rows::ACT_COLS
        );
        self.all(&sql, [story], rows::act)
    }

    /// Every chapter of the story in reading order: acts in order with their chapters, then the
    /// chapters outside any act.
    pub fn chapters_in_order(&mut self) -> PlotResult<Vec<ChapterDto>> {
        let Some(story) = self.story_id()? else {
            return Ok(Vec::new());
        };
        let sql = format!(
            "SELECT {} FROM \"StoryChapter\" ch LEFT JOIN \"StoryAct\" a ON a.\"id\" = ch.\"actId\" WHERE ch.\"storyId\" = ?1 \
             ORDER BY (a.\"id\" IS NULL), a.\"sortOrder\", a.\"id\", ch.\"sortOrder\", ch.\"id\"",
            rows::CHAPTER_COLS.split(',').map(|c| format!("ch.{c}")).collect::<Vec<_>>().join(",")
        );
        self.all(&sql, [story], rows::chapter)
    }

    fn chapters(&mut self, story: i64) -> PlotResult<Vec<ChapterDto>> {
        let sql = format!(
            "SELECT {} FROM \"StoryChapter\" WHERE \"storyId\" = ?1 ORDER BY \"sortOrder\",\"id\"",
            rows::CHAPTER_COLS
        );
        self.all(&sql, [story], rows::chapter)
    }

    fn phases(&mut self, story: i64) -> PlotResult<Vec<PhaseDto>> {
        let sql = format!(
            "SELECT {} FROM \"StoryPhase\" WHERE \"storyId\" = ?1 ORDER BY \"sortOrder\",\"id\"",
            rows::PHASE_COLS
        );
        self.all(&sql, [story], rows::phase)
    }

    pub(crate) fn threads(&mut self, story: i64) -> PlotResult<Vec<ThreadDto>> {
        let sql = format!(
            "SELECT {} FROM \"StoryThread\" WHERE \"storyId\" = ?1 ORDER BY \"sortOrder\",\"id\"",
            rows::THREAD_COLS
        );
        self.all(&sql, [story], rows::thread)
    }

    /// A thread's scenes in thread order.
    pub fn thread_scenes(&mut self, thread_id: i64) -> PlotResult<Vec<SceneDto>> {
        let sql = format!(
            "SELECT {} FROM {} WHERE s.\"threadId\" = ?1 ORDER BY s.\"threadSortOrder\", s.\"id\"",
            rows::SCENE_COLS,
            rows::SCENE_FROM
        );
        let cal = self.calendar_arc();
        self.all(&sql, [thread_id], |r| rows::scene(r, cal.as_ref()))
    }

    fn all_scenes(&mut self, story: i64) -> PlotResult<Vec<SceneDto>> {
        let sql = format!(
            "SELECT {} FROM {} WHERE s.\"storyId\" = ?1 ORDER BY s.\"threadId\", s.\"threadSortOrder\", s.\"id\"",
            rows::SCENE_COLS,
            rows::SCENE_FROM
        );
        let cal = self.calendar_arc();
        self.all(&sql, [story], |r| rows::scene(r, cal.as_ref()))
    }

    /// `get_story_tree`.
    pub fn tree(&mut self) -> PlotResult<TreeDto> {
        let story = self.story()?;
        let Some(id) = story.id else {
            return Ok(TreeDto {
                story,
                ..TreeDto::default()
            });
        };
        let mut scenes_by_thread: HashMap<i64, Vec<SceneDto>> = HashMap::new();
        let scenes = self.all_scenes(id)?;
        let total_scenes = scenes.len();
        for s in scenes {
            scenes_by_thread.entry(s.thread_id).or_default().push(s);
        }
        let mut threads_by_phase: HashMap<Option<i64>, Vec<ThreadNode>> = HashMap::new();
        let threads = self.threads(id)?;
        let total_threads = threads.len();
        for t in threads {
            let scenes = scenes_by_thread.remove(&t.id).unwrap_or_default();
            threads_by_phase
                .entry(t.story_phase_id)
                .or_default()
                .push(ThreadNode { thread: t, scenes });
        }
        let phases: Vec<PhaseNode> = self
            .phases(id)?
            .into_iter()
            .map(|p| PhaseNode {
                threads: threads_by_phase.remove(&Some(p.id)).unwrap_or_default(),
                phase: p,
            })
            .collect();
        // Threads whose phase no longer exists count as ungrouped.
        let mut ungrouped_threads = threads_by_phase.remove(&None).unwrap_or_default();
        for (_, mut orphans) in threads_by_phase.drain() {
            ungrouped_threads.append(&mut orphans);
        }
        ungrouped_threads.sort_by_key(|t| (t.thread.sort_order, t.thread.id));
        let mut chapters_by_act: HashMap<Option<i64>, Vec<ChapterDto>> = HashMap::new();
        let chapters = self.chapters(id)?;
        let total_chapters = chapters.len();
        for c in chapters {
            chapters_by_act.entry(c.act_id).or_default().push(c);
        }
        let acts: Vec<ActNode> = self
            .acts(id)?
            .into_iter()
            .map(|a| ActNode {
                chapters: chapters_by_act.remove(&Some(a.id)).unwrap_or_default(),
                act: a,
            })
            .collect();
        let mut ungrouped_chapters = chapters_by_act.remove(&None).unwrap_or_default();
        for (_, mut orphans) in chapters_by_act.drain() {
            ungrouped_chapters.append(&mut orphans);
        }
        ungrouped_chapters.sort_by_key(|c| (c.sort_order, c.id));
        let open_promise_count = self.count(
            "SELECT COUNT(*) FROM \"StoryPromise\" WHERE \"storyId\" = ?1 AND \"status\" = 'open'",
            [id],
        )?;
        let open_decision_count = self.count(
            "SELECT COUNT(*) FROM \"StoryDecision\" WHERE \"storyId\" = ?1 AND \"status\" = 'open'",
            [id],
        )?;
        Ok(TreeDto {
            totals: Totals {
                phases: phases.len(),
                threads: total_threads,
                scenes: total_scenes,
                acts: acts.len(),
                chapters: total_chapters,
            },
            story,
            phases,
            ungrouped_threads,
            acts,
            ungrouped_chapters,
            open_promise_count,
            open_decision_count,
        })
    }
}
