//! What the Story pane shows, as loaded off the UI task: both trees down to chapters and
//! threads (with the writer-brief status of every chapter), the promise and decision ledgers,
//! and lookups by id built once per load so drawing a row is a hash lookup. Scenes are not in
//! here: they load per chapter or thread when one is opened ([`SceneItem`]).

use std::collections::HashMap;

use crate::plot::brief::BriefStatus;
use crate::plot::ledger::{ChapterStatusRow, ThreadRow, TreeOverview};
use crate::plot::model::{ActDto, ChapterSceneDto, DecisionDto, PhaseDto, PromiseDto, SceneDto};

/// The brief ladder in order, as the carrier tree's status filter cycles it.
pub const BRIEF_STATUSES: [BriefStatus; 5] = [
    BriefStatus::NeedsPlot,
    BriefStatus::NeedsWorldAnchor,
    BriefStatus::NeedsWorldContext,
    BriefStatus::NeedsChapterBrief,
    BriefStatus::Ready,
];

/// A short badge for a chapter's writer-brief status.
pub fn brief_badge(s: BriefStatus) -> &'static str {
    match s {
        BriefStatus::NeedsPlot => "needs plot",
        BriefStatus::NeedsWorldAnchor => "needs anchor",
        BriefStatus::NeedsWorldContext => "needs context",
        BriefStatus::NeedsChapterBrief => "needs brief",
        BriefStatus::Ready => "ready",
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoryData {
    pub overview: TreeOverview,
    /// Open first, importance high → low (the service's order).
    pub promises: Vec<PromiseDto>,
    /// Open, decided, superseded, dropped.
    pub decisions: Vec<DecisionDto>,
    ix: Box<Index>,
}

/// Positions by id (boxed: the data travels in an `Action`).
#[derive(Clone, Debug, Default, PartialEq)]
struct Index {
    acts: HashMap<i64, usize>,
    phases: HashMap<i64, usize>,
    /// (act index or `None` for the chapters outside any act, index in that list).
    chapters: HashMap<i64, (Option<usize>, usize)>,
    threads: HashMap<i64, (Option<usize>, usize)>,
    promises: HashMap<i64, usize>,
    decisions: HashMap<i64, usize>,
}

impl StoryData {
    pub fn new(
        overview: TreeOverview,
        promises: Vec<PromiseDto>,
        decisions: Vec<DecisionDto>,
    ) -> StoryData {
        let mut ix = Index::default();
        for (i, (a, chapters)) in overview.acts.iter().enumerate() {
            ix.acts.insert(a.id, i);
            for (j, c) in chapters.iter().enumerate() {
                ix.chapters.insert(c.chapter.id, (Some(i), j));
            }
        }
        for (j, c) in overview.ungrouped_chapters.iter().enumerate() {
            ix.chapters.insert(c.chapter.id, (None, j));
        }
        for (i, (p, threads)) in overview.phases.iter().enumerate() {
            ix.phases.insert(p.id, i);
            for (j, t) in threads.iter().enumerate() {
                ix.threads.insert(t.thread.id, (Some(i), j));
            }
        }
        for (j, t) in overview.ungrouped_threads.iter().enumerate() {
            ix.threads.insert(t.thread.id, (None, j));
        }
        ix.promises = promises
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id, i))
            .collect();
        ix.decisions = decisions
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id, i))
            .collect();
        StoryData {
            overview,
            promises,
            decisions,
            ix: Box::new(ix),
        }
    }

    /// No story row yet, or nothing in it.
    pub fn is_empty(&self) -> bool {
        let o = &self.overview;
        o.acts.is_empty()
            && o.ungrouped_chapters.is_empty()
            && o.phases.is_empty()
            && o.ungrouped_threads.is_empty()
            && self.promises.is_empty()
            && self.decisions.is_empty()
    }

    pub fn act(&self, id: i64) -> Option<&ActDto> {
        self.ix.acts.get(&id).map(|i| &self.overview.acts[*i].0)
    }

    pub fn phase(&self, id: i64) -> Option<&PhaseDto> {
        self.ix.phases.get(&id).map(|i| &self.overview.phases[*i].0)
    }

    pub fn chapter(&self, id: i64) -> Option<&ChapterStatusRow> {
        let (act, j) = *self.ix.chapters.get(&id)?;
        match act {
            Some(i) => self.overview.acts[i].1.get(j),
            None => self.overview.ungrouped_chapters.get(j),
        }
    }

    pub fn thread(&self, id: i64) -> Option<&ThreadRow> {
        let (phase, j) = *self.ix.threads.get(&id)?;
        match phase {
            Some(i) => self.overview.phases[i].1.get(j),
            None => self.overview.ungrouped_threads.get(j),
        }
    }

    pub fn promise(&self, id: i64) -> Option<&PromiseDto> {
        self.ix.promises.get(&id).map(|i| &self.promises[*i])
    }

    pub fn decision(&self, id: i64) -> Option<&DecisionDto> {
        self.ix.decisions.get(&id).map(|i| &self.decisions[*i])
    }

    /// Every chapter in reading order.
    pub fn chapters_in_order(&self) -> impl Iterator<Item = &ChapterStatusRow> {
        self.overview
            .acts
            .iter()
            .flat_map(|(_, c)| c.iter())
            .chain(self.overview.ungrouped_chapters.iter())
    }

    pub fn chapter_count(&self) -> usize {
        self.ix.chapters.len()
    }

    pub fn thread_count(&self) -> usize {
        self.ix.threads.len()
    }

    /// How many chapters are at each rung of the brief ladder ([`BRIEF_STATUSES`] order).
    pub fn brief_counts(&self) -> [usize; 5] {
        let mut out = [0; 5];
        for c in self.chapters_in_order() {
            if let Some(i) = BRIEF_STATUSES.iter().position(|s| *s == c.status) {
                out[i] += 1;
            }
        }
        out
    }
}

/// Where scenes are listed: under a chapter (carrier tree) or a thread (causal tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Parent {
    Chapter(i64),
    Thread(i64),
}

/// A scene as a tree row shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SceneItem {
    pub id: i64,
    pub title: String,
    pub status: String,
    pub thread_id: i64,
    pub chapter_id: Option<i64>,
}

impl SceneItem {
    pub fn from_thread(s: &SceneDto) -> SceneItem {
        SceneItem {
            id: s.id,
            title: s.title.clone(),
            status: s.status.clone(),
            thread_id: s.thread_id,
            chapter_id: s.chapter_id,
        }
    }

    pub fn from_chapter(chapter: i64, s: &ChapterSceneDto) -> SceneItem {
        SceneItem {
            id: s.id,
            title: s.title.clone(),
            status: s.status.clone(),
            thread_id: s.thread_id,
            chapter_id: Some(chapter),
        }
    }
}

/// One short mark per status, so narrow rows still show it.
pub fn status_mark(status: &str) -> &'static str {
    match status {
        // scenes
        "draft" => "○",
        "active" => "◐",
        "written" => "●",
        "revised" => "◉",
        "archived" => "×",
        // threads
        "paused" => "‖",
        "done" => "✔",
        // promises
        "open" => "○",
        "fulfilled" => "✔",
        "abandoned" => "×",
        // decisions
        "decided" => "✔",
        "superseded" => "↷",
        "dropped" => "×",
        _ => "·",
    }
}
