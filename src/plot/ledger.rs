//! Read models for the TUI's Story pane, built to stay fast on a 300-chapter, 100k-scene book:
//! a tree overview with counts (scenes are loaded per thread or chapter on expand, through
//! [`Plot::thread_scenes`] and [`Plot::chapter_scenes`]), the writer-brief status of every
//! chapter computed in bulk, the promise and decision ledgers, and the detail of one node.

use std::collections::HashMap;

use serde::Serialize;

use super::brief::BriefStatus;
use super::ctx::Plot;
use super::error::PlotResult;
use super::model::*;
use super::rows::string_list;
use super::world_anchor::known_subject_ids;

/// A node of either tree or ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum NodeRef {
    Story,
    Act(i64),
    Chapter(i64),
    Phase(i64),
    Thread(i64),
    Scene(i64),
    Promise(i64),
    Decision(i64),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NodeDetail {
    Story {
        story: StoryDto,
    },
    Act {
        act: ActDto,
    },
    Chapter {
        detail: ChapterDetailDto,
        brief_status: BriefStatus,
    },
    Phase {
        phase: PhaseDto,
    },
    Thread {
        detail: ThreadDetailDto,
    },
    Scene {
        context: Box<SceneContextDto>,
    },
    Promise {
        detail: PromiseDetailDto,
    },
    Decision {
        decision: DecisionDto,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChapterStatusRow {
    pub chapter: ChapterDto,
    /// Scenes placed in the chapter that are not archived.
    pub scene_count: usize,
    pub status: BriefStatus,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadRow {
    pub thread: ThreadDto,
    /// All its scenes, archived included.
    pub scene_count: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TreeOverview {
    pub story: StoryDto,
    pub acts: Vec<(ActDto, Vec<ChapterStatusRow>)>,
    pub ungrouped_chapters: Vec<ChapterStatusRow>,
    pub phases: Vec<(PhaseDto, Vec<ThreadRow>)>,
    pub ungrouped_threads: Vec<ThreadRow>,
    pub scene_count: usize,
    pub open_promises: usize,
    pub open_decisions: usize,
}

/// A scene's title and where it sits (for the Story pane's search over titles).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SceneTitleRow {
    pub id: i64,
    pub thread_id: i64,
    pub chapter_id: Option<i64>,
    pub title: String,
    pub status: String,
}

#[derive(Default)]
struct ChapterFacts {
    scenes: usize,
    missing_anchor: bool,
    unresolved: bool,
}

impl Plot<'_> {
    /// Every chapter in reading order with its writer-brief status (a few queries in all).
    pub fn chapter_statuses(&mut self) -> PlotResult<Vec<ChapterStatusRow>> {
        let Some(story) = self.story_id()? else {
            return Ok(Vec::new());
        };
        let known = known_subject_ids(self.conn())?;
        let mut facts: HashMap<i64, ChapterFacts> = HashMap::new();
        let mut stmt = self.conn().prepare_cached(
            "SELECT \"chapterId\",\"startInstant\",\"endInstant\",\"subjectIdsJson\",\"locationSubjectId\" FROM \"StoryScene\" \
             WHERE \"storyId\" = ?1 AND \"chapterId\" IS NOT NULL AND \"status\" != 'archived'",
        )?;
        let mut rows = stmt.query([story])?;
        while let Some(r) = rows.next()? {
            let f = facts.entry(r.get(0)?).or_default();
            f.scenes += 1;
            let (start, end): (Option<i64>, Option<i64>) = (r.get(1)?, r.get(2)?);
            if start.is_none() || end.is_none() {
                f.missing_anchor = true;
            } else if !f.unresolved {
                // Borrowed parse (no allocation per id); escaped or malformed JSON falls back.
                let subjects = r.get_ref(3)?.as_str().unwrap_or("[]");
                let location = r.get_ref(4)?.as_str_or_null().ok().flatten();
                f.unresolved = location.is_some_and(|l| !known.contains(l))
                    || match serde_json::from_str::<Vec<&str>>(subjects) {
                        Ok(ids) => ids
                            .iter()
                            .any(|s| !s.trim().is_empty() && !known.contains(s.trim())),
                        Err(_) => string_list(subjects).iter().any(|s| !known.contains(s)),
                    };
            }
        }
        drop(rows);
        drop(stmt);
        Ok(self
            .chapters_in_order()?
            .into_iter()
            .map(|chapter| {
                let f = facts.remove(&chapter.id).unwrap_or_default();
                let status = BriefStatus::from_facts(
                    f.scenes,
                    f.missing_anchor,
                    f.unresolved,
                    chapter.brief.info_control_empty(),
                );
                ChapterStatusRow {
                    chapter,
                    scene_count: f.scenes,
                    status,
                }
            })
            .collect())
    }

    /// Both trees down to chapters and threads, with counts.
    pub fn overview(&mut self) -> PlotResult<TreeOverview> {
        let story = self.story()?;
        let Some(id) = story.id else {
            return Ok(TreeOverview {
                story,
                ..TreeOverview::default()
            });
        };
        let mut by_act: HashMap<Option<i64>, Vec<ChapterStatusRow>> = HashMap::new();
        for row in self.chapter_statuses()? {
            by_act.entry(row.chapter.act_id).or_default().push(row);
        }
        let acts: Vec<(ActDto, Vec<ChapterStatusRow>)> = self
            .acts(id)?
            .into_iter()
            .map(|a| {
                let chapters = by_act.remove(&Some(a.id)).unwrap_or_default();
                (a, chapters)
            })
            .collect();
        let mut ungrouped_chapters: Vec<ChapterStatusRow> =
            by_act.into_values().flatten().collect();
        ungrouped_chapters.sort_by_key(|c| (c.chapter.sort_order, c.chapter.id));
        let counts: HashMap<i64, usize> = self
            .all("SELECT \"threadId\", COUNT(*) FROM \"StoryScene\" WHERE \"storyId\" = ?1 GROUP BY \"threadId\"", [id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as usize))
            })?
            .into_iter()
            .collect();
        let scene_count = counts.values().sum();
        let mut by_phase: HashMap<Option<i64>, Vec<ThreadRow>> = HashMap::new();
        for t in self.threads(id)? {
            let n = counts.get(&t.id).copied().unwrap_or(0);
            by_phase
                .entry(t.story_phase_id)
                .or_default()
                .push(ThreadRow {
                    thread: t,
                    scene_count: n,
                });
        }
        let phases_sql = format!(
            "SELECT {} FROM \"StoryPhase\" WHERE \"storyId\" = ?1 ORDER BY \"sortOrder\",\"id\"",
            super::rows::PHASE_COLS
        );
        let phases: Vec<(PhaseDto, Vec<ThreadRow>)> = self
            .all(&phases_sql, [id], super::rows::phase)?
            .into_iter()
            .map(|p| {
                let threads = by_phase.remove(&Some(p.id)).unwrap_or_default();
                (p, threads)
            })
            .collect();
        let mut ungrouped_threads: Vec<ThreadRow> = by_phase.into_values().flatten().collect();
        ungrouped_threads.sort_by_key(|t| (t.thread.sort_order, t.thread.id));
        let open_promises = self.count(
            "SELECT COUNT(*) FROM \"StoryPromise\" WHERE \"storyId\" = ?1 AND \"status\" = 'open'",
            [id],
        )? as usize;
        let open_decisions = self.count(
            "SELECT COUNT(*) FROM \"StoryDecision\" WHERE \"storyId\" = ?1 AND \"status\" = 'open'",
            [id],
        )? as usize;
        Ok(TreeOverview {
            story,
            acts,
            ungrouped_chapters,
            phases,
            ungrouped_threads,
            scene_count,
            open_promises,
            open_decisions,
        })
    }

    /// Every scene's title, thread and chapter (archived included), in one query: the
    /// haystack of the Story pane's fuzzy search.
    pub fn scene_titles(&mut self) -> PlotResult<Vec<SceneTitleRow>> {
        let Some(story) = self.story_id()? else {
            return Ok(Vec::new());
        };
        self.all(
            "SELECT \"id\",\"threadId\",\"chapterId\",\"title\",\"status\" FROM \"StoryScene\" WHERE \"storyId\" = ?1 ORDER BY \"threadId\", \"threadSortOrder\", \"id\"",
            [story],
            |r| {
                Ok(SceneTitleRow {
                    id: r.get(0)?,
                    thread_id: r.get(1)?,
                    chapter_id: r.get(2)?,
                    title: r.get(3)?,
                    status: r.get(4)?,
                })
            },
        )
    }

    /// The promise ledger: open first, importance high → low, id; with stage and beat stats.
    pub fn promise_ledger(&mut self) -> PlotResult<Vec<PromiseDto>> {
        self.list_promises()
    }

    /// The decision ledger: open, decided, superseded, dropped; dangling refs marked.
    pub fn decision_ledger(&mut self) -> PlotResult<Vec<DecisionDto>> {
        self.list_decisions()
    }

    /// Every field of one node, for the detail view.
    pub fn node_detail(&mut self, node: NodeRef) -> PlotResult<NodeDetail> {
        Ok(match node {
            NodeRef::Story => NodeDetail::Story {
                story: self.story()?,
            },
            NodeRef::Act(id) => NodeDetail::Act {
                act: self.get_act(id)?,
            },
            NodeRef::Chapter(id) => {
                let detail = self.chapter_detail(id)?;
                let brief_status = self
                    .writer_brief(id, super::brief::BriefMode::Autonomous)?
                    .status;
                NodeDetail::Chapter {
                    detail,
                    brief_status,
                }
            }
            NodeRef::Phase(id) => NodeDetail::Phase {
                phase: self.find_phase(id, "/phaseId")?,
            },
            NodeRef::Thread(id) => NodeDetail::Thread {
                detail: self.thread_detail(id)?,
            },
            NodeRef::Scene(id) => NodeDetail::Scene {
                context: Box::new(self.scene_context(id)?),
            },
            NodeRef::Promise(id) => NodeDetail::Promise {
                detail: self.promise_detail(id)?,
            },
            NodeRef::Decision(id) => NodeDetail::Decision {
                decision: self.get_decision(id)?,
            },
        })
    }
}
