//! The plot records as the tools return them (NeuroBook's DTO shapes: camelCase keys, ids as
//! strings) and as the TUI reads them (plain `i64` ids on the Rust side; they serialize as
//! strings). Enum values are kept as the stored text and checked against the lists below.

use serde::{Serialize, Serializer};

pub const THREAD_STATUSES: &[&str] = &["active", "draft", "paused", "done", "archived"];
pub const MICE_TYPES: &[&str] = &["milieu", "idea", "character", "event"];
pub const SCENE_STATUSES: &[&str] = &["draft", "active", "written", "revised", "archived"];
pub const OUTCOME_TYPES: &[&str] = &[
    "yes_but",
    "no_and",
    "yes_and",
    "no_but",
    "yes",
    "no",
    "no_conflict",
    "passive",
];
pub const PACING_ROLES: &[&str] = &["setup", "escalation", "breather", "climax", "resolution"];
pub const REF_VISIBILITIES: &[&str] = &["author", "reader"];
pub const PROMISE_STATUSES: &[&str] = &["open", "fulfilled", "abandoned"];
pub const IMPORTANCES: &[&str] = &["low", "medium", "high"];
pub const BEAT_KINDS: &[&str] = &["plant", "advance", "setback", "payoff"];
pub const DECISION_STATUSES: &[&str] = &["open", "decided", "superseded", "dropped"];
pub const ANCHOR_KINDS: &[&str] = &[
    "story", "act", "chapter", "thread", "scene", "promise", "content",
];
/// Suggested (not enforced) promise tags.
pub const PROMISE_TAGS: &[&str] = &["setup_payoff", "prophecy", "motif", "mirror"];
/// Most subjects one scene may list.
pub const MAX_SUBJECTS: usize = 100;

pub(crate) fn ser_id<S: Serializer>(id: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&id.to_string())
}

pub(crate) fn ser_opt_id<S: Serializer>(id: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(v) => s.serialize_str(&v.to_string()),
        None => s.serialize_none(),
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoryDto {
    /// `None` when no Story row exists yet (it is created by the first plot write).
    #[serde(serialize_with = "ser_opt_id")]
    pub id: Option<i64>,
    pub title: String,
    pub summary: String,
    pub note: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActDto {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    #[serde(serialize_with = "ser_id")]
    pub story_id: i64,
    pub sort_order: i64,
    pub name: String,
    pub title: String,
    pub summary: String,
    pub note: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// The chapter's writing instructions (`StoryChapter.brief*` columns).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChapterBrief {
    pub goal: Option<String>,
    pub pov: Option<String>,
    pub tone: Option<String>,
    pub pacing: Option<String>,
    pub reader_knows: Option<String>,
    pub protagonist_knows: Option<String>,
    pub must_hide: Option<String>,
    pub hint_only: Option<String>,
    pub opening: Option<String>,
    pub ending: Option<String>,
    pub do_not_write: Option<String>,
}

impl ChapterBrief {
    /// The four information-control fields are all empty (the brief then needs them).
    pub fn info_control_empty(&self) -> bool {
        [
            &self.reader_knows,
            &self.protagonist_knows,
            &self.must_hide,
            &self.hint_only,
        ]
        .iter()
        .all(|f| f.as_deref().is_none_or(|s| s.trim().is_empty()))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChapterDto {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    #[serde(serialize_with = "ser_id")]
    pub story_id: i64,
    #[serde(serialize_with = "ser_opt_id")]
    pub act_id: Option<i64>,
    pub sort_order: i64,
    pub name: String,
    pub title: String,
    pub note: Option<String>,
    pub brief: ChapterBrief,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChapterRef {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    pub name: String,
    pub title: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseDto {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    #[serde(serialize_with = "ser_id")]
    pub story_id: i64,
    pub sort_order: i64,
    pub name: String,
    pub title: String,
    pub summary: String,
    pub note: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadDto {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    #[serde(serialize_with = "ser_id")]
    pub story_id: i64,
    #[serde(serialize_with = "ser_opt_id")]
    pub story_phase_id: Option<i64>,
    pub sort_order: i64,
    pub name: String,
    pub title: String,
    pub is_main_thread: bool,
    pub status: String,
    pub mice_type: Option<String>,
    pub summary: String,
    pub tags: Vec<String>,
    pub writing_tip: Option<String>,
    pub note: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// Where a scene sits in story time and who is in it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorldAnchorDto {
    /// Calendar text of the instants (formatted with the project calendar).
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    #[serde(serialize_with = "ser_opt_id")]
    pub start_instant: Option<i64>,
    #[serde(serialize_with = "ser_opt_id")]
    pub end_instant: Option<i64>,
    pub subject_ids: Vec<String>,
    pub location_subject_id: Option<String>,
}

impl WorldAnchorDto {
    /// Subject ids plus the location, de-duplicated, in order.
    pub fn all_subject_ids(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for id in self
            .subject_ids
            .iter()
            .chain(self.location_subject_id.iter())
        {
            if !out.contains(id) {
                out.push(id.clone());
            }
        }
        out
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SceneDto {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    #[serde(serialize_with = "ser_id")]
    pub story_id: i64,
    #[serde(serialize_with = "ser_id")]
    pub thread_id: i64,
    #[serde(serialize_with = "ser_opt_id")]
    pub chapter_id: Option<i64>,
    pub chapter: Option<ChapterRef>,
    pub thread_sort_order: i64,
    pub chapter_sort_order: Option<i64>,
    pub title: String,
    pub status: String,
    pub outcome_type: Option<String>,
    pub pacing_role: Option<String>,
    pub summary: String,
    pub purpose: Option<String>,
    pub writing_tip: Option<String>,
    pub note: Option<String>,
    pub world_anchor: WorldAnchorDto,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SceneRefDto {
    pub relation: String,
    /// `thread://<id>`, `scene://<id>` or a project-relative content path.
    pub target: String,
    /// content | thread | scene
    pub target_kind: String,
    pub visibility: String,
    pub note: Option<String>,
    /// False when the thread or scene it pointed at was deleted since.
    pub valid: bool,
}

/// A promise beat as seen from its scene.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SceneBeatDto {
    #[serde(serialize_with = "ser_id")]
    pub promise_id: i64,
    pub promise_name: String,
    pub promise_title: String,
    pub promise_status: String,
    pub kind: String,
    pub note: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SceneDetailDto {
    #[serde(flatten)]
    pub scene: SceneDto,
    pub refs: Vec<SceneRefDto>,
    pub beats: Vec<SceneBeatDto>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadDetailDto {
    #[serde(flatten)]
    pub thread: ThreadDto,
    pub scenes: Vec<SceneDto>,
}

/// A scene as listed under its chapter.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChapterSceneDto {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    #[serde(serialize_with = "ser_id")]
    pub thread_id: i64,
    pub thread_title: String,
    pub thread_is_main: bool,
    pub chapter_sort_order: Option<i64>,
    pub thread_sort_order: i64,
    pub title: String,
    pub status: String,
    pub summary: String,
    pub purpose: Option<String>,
    pub world_anchor: WorldAnchorDto,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChapterDetailDto {
    pub chapter: ChapterDto,
    pub scenes: Vec<ChapterSceneDto>,
    pub total_scenes: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SceneContextDto {
    pub thread: ThreadDetailDto,
    pub scene: SceneDetailDto,
    pub chapter_plot: Option<ChapterDetailDto>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KindCounts {
    pub plant: usize,
    pub advance: usize,
    pub setback: usize,
    pub payoff: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StateCounts {
    pub planned: usize,
    pub factual: usize,
    pub archived: usize,
}

/// Beat counts of one promise. `byKind` counts only beats whose scene is not archived
/// (archived beats take part in no derivation); `byState` and `total` count every beat.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BeatStats {
    pub total: usize,
    pub by_kind: KindCounts,
    pub by_state: StateCounts,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromiseDto {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    #[serde(serialize_with = "ser_id")]
    pub story_id: i64,
    pub name: String,
    pub title: String,
    pub status: String,
    pub importance: String,
    pub summary: String,
    pub payoff_expectation: Option<String>,
    pub cadence_chapters: Option<i64>,
    #[serde(serialize_with = "ser_opt_id")]
    pub deadline_chapter_id: Option<i64>,
    pub deadline_chapter: Option<ChapterRef>,
    pub tags: Vec<String>,
    /// unplanted | planted | echoed | paid_off
    pub derived_stage: String,
    pub beat_stats: BeatStats,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BeatSceneRef {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    pub title: String,
    pub status: String,
    #[serde(serialize_with = "ser_id")]
    pub thread_id: i64,
    #[serde(serialize_with = "ser_opt_id")]
    pub chapter_id: Option<i64>,
    pub chapter: Option<ChapterRef>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BeatDto {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    #[serde(serialize_with = "ser_id")]
    pub promise_id: i64,
    #[serde(serialize_with = "ser_id")]
    pub scene_id: i64,
    pub kind: String,
    pub note: Option<String>,
    /// planned | factual | archived (from the scene's status)
    pub state: String,
    pub scene: BeatSceneRef,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromiseDetailDto {
    #[serde(flatten)]
    pub promise: PromiseDto,
    pub beats: Vec<BeatDto>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionOption {
    pub option: String,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RejectedAlternative {
    pub option: String,
    #[serde(default)]
    pub why_rejected: Option<String>,
}

/// A `serves`/`dependsOn` entry with whether its target still exists.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RefCheck {
    pub target: String,
    pub valid: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AnchorDto {
    pub kind: String,
    #[serde(serialize_with = "ser_opt_id")]
    pub id: Option<i64>,
    pub path: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionDto {
    #[serde(serialize_with = "ser_id")]
    pub id: i64,
    #[serde(serialize_with = "ser_id")]
    pub story_id: i64,
    pub name: String,
    pub title: String,
    pub status: String,
    pub question: String,
    pub options: Vec<DecisionOption>,
    #[serde(serialize_with = "ser_opt_id")]
    pub deadline_chapter_id: Option<i64>,
    /// `None` also when the deadline chapter no longer exists (the id has no foreign key).
    pub deadline_chapter: Option<ChapterRef>,
    pub decision: Option<String>,
    pub motivation: Option<String>,
    pub rejected_alternatives: Vec<RejectedAlternative>,
    pub risk: Option<String>,
    pub serves: Vec<RefCheck>,
    pub depends_on: Vec<RefCheck>,
    #[serde(serialize_with = "ser_opt_id")]
    pub superseded_by_id: Option<i64>,
    /// An anchor whose target was deleted reads as `story`.
    pub anchor: AnchorDto,
    pub note: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadNode {
    #[serde(flatten)]
    pub thread: ThreadDto,
    pub scenes: Vec<SceneDto>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseNode {
    #[serde(flatten)]
    pub phase: PhaseDto,
    pub threads: Vec<ThreadNode>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActNode {
    #[serde(flatten)]
    pub act: ActDto,
    pub chapters: Vec<ChapterDto>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub phases: usize,
    pub threads: usize,
    pub scenes: usize,
    pub acts: usize,
    pub chapters: usize,
}

/// `get_story_tree`: both trees and the ledger counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeDto {
    pub story: StoryDto,
    pub phases: Vec<PhaseNode>,
    pub ungrouped_threads: Vec<ThreadNode>,
    pub acts: Vec<ActNode>,
    pub ungrouped_chapters: Vec<ChapterDto>,
    pub totals: Totals,
    pub open_promise_count: i64,
    pub open_decision_count: i64,
}
