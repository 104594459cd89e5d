//! What a write asks for, typed. The tools build these from their JSON arguments
//! ([`super::args`]); the TUI's edit forms build them directly. The same services apply the
//! same rules to both.
//!
//! Convention (NeuroBook's): an absent field keeps the stored value, `null` clears it. Fields
//! that cannot be null are plain `Option`s (`None` = keep).

use super::model::{DecisionOption, RejectedAlternative};

/// A nullable field of a patch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Field<T> {
    /// Absent: keep what is stored.
    #[default]
    Keep,
    /// `null`: clear it.
    Clear,
    Set(T),
}

impl<T> Field<T> {
    pub fn is_keep(&self) -> bool {
        matches!(self, Field::Keep)
    }

    /// The value it sets, if any.
    pub fn value(&self) -> Option<&T> {
        match self {
            Field::Set(v) => Some(v),
            _ => None,
        }
    }

    /// The stored value after the patch, given the current one.
    pub fn merge(&self, current: Option<T>) -> Option<T>
    where
        T: Clone,
    {
        match self {
            Field::Keep => current,
            Field::Clear => None,
            Field::Set(v) => Some(v.clone()),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActInput {
    pub name: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub note: Field<String>,
    pub sort_order: Option<i64>,
}

/// The chapter brief fields; each nullable free text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BriefInput {
    pub goal: Field<String>,
    pub pov: Field<String>,
    pub tone: Field<String>,
    pub pacing: Field<String>,
    pub reader_knows: Field<String>,
    pub protagonist_knows: Field<String>,
    pub must_hide: Field<String>,
    pub hint_only: Field<String>,
    pub opening: Field<String>,
    pub ending: Field<String>,
    pub do_not_write: Field<String>,
}

impl BriefInput {
    /// (column, argument key, field) for every brief field.
    pub fn columns(&self) -> [(&'static str, &'static str, &Field<String>); 11] {
        [
            ("briefGoal", "goal", &self.goal),
            ("briefPov", "pov", &self.pov),
            ("briefTone", "tone", &self.tone),
            ("briefPacing", "pacing", &self.pacing),
            ("briefReaderKnows", "readerKnows", &self.reader_knows),
            (
                "briefProtagonistKnows",
                "protagonistKnows",
                &self.protagonist_knows,
            ),
            ("briefMustHide", "mustHide", &self.must_hide),
            ("briefHintOnly", "hintOnly", &self.hint_only),
            ("briefOpening", "opening", &self.opening),
            ("briefEnding", "ending", &self.ending),
            ("briefDoNotWrite", "doNotWrite", &self.do_not_write),
        ]
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChapterInput {
    pub act_id: Field<i64>,
    pub name: Option<String>,
    pub title: Option<String>,
    pub note: Field<String>,
    pub sort_order: Option<i64>,
    pub brief: BriefInput,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadInput {
    pub story_phase_id: Field<i64>,
    pub name: Option<String>,
    pub title: Option<String>,
    pub is_main_thread: Option<bool>,
    pub status: Option<String>,
    pub mice_type: Field<String>,
    pub summary: Option<String>,
    pub tags: Option<Vec<String>>,
    pub writing_tip: Field<String>,
    pub note: Field<String>,
}

/// A scene's world anchor as written: calendar text (parsed with the project calendar),
/// the subjects in the scene and its location. The stored instants are derived from the text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorldAnchorInput {
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub subject_ids: Vec<String>,
    pub location_subject_id: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SceneRefInput {
    pub relation: String,
    /// A content path, `thread://<id or name>` or `scene://<id>`.
    pub target: String,
    pub visibility: String,
    pub note: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SceneInput {
    /// On create: the thread (the tools fill it from the selection when omitted).
    pub thread_id: Option<i64>,
    pub chapter_id: Field<i64>,
    pub title: Option<String>,
    pub status: Option<String>,
    pub outcome_type: Field<String>,
    pub pacing_role: Field<String>,
    pub summary: Option<String>,
    pub purpose: Field<String>,
    pub writing_tip: Field<String>,
    pub note: Field<String>,
    pub world_anchor: Option<WorldAnchorInput>,
    /// Replaces the whole list.
    pub refs: Option<Vec<SceneRefInput>>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromiseInput {
    pub name: Option<String>,
    pub title: Option<String>,
    pub status: Option<String>,
    pub importance: Option<String>,
    pub summary: Option<String>,
    pub payoff_expectation: Field<String>,
    pub cadence_chapters: Field<i64>,
    pub deadline_chapter_id: Field<i64>,
    pub tags: Option<Vec<String>>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BeatInput {
    /// plant | advance | setback | payoff (required for `set`).
    pub kind: Option<String>,
    pub note: Field<String>,
    /// A payoff beat fulfils its open promise unless this is `Some(false)`.
    pub auto_fulfill: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnchorInput {
    pub kind: String,
    pub id: Option<i64>,
    pub path: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecisionInput {
    pub name: Option<String>,
    pub title: Option<String>,
    pub status: Option<String>,
    pub question: Option<String>,
    pub options: Option<Vec<DecisionOption>>,
    pub deadline_chapter_id: Field<i64>,
    pub decision: Field<String>,
    pub motivation: Field<String>,
    pub rejected_alternatives: Option<Vec<RejectedAlternative>>,
    pub risk: Field<String>,
    pub chosen_option: Option<String>,
    pub serves: Option<Vec<String>>,
    pub depends_on: Option<Vec<String>>,
    pub superseded_by_id: Field<i64>,
    pub anchor: Option<AnchorInput>,
    pub note: Field<String>,
}
