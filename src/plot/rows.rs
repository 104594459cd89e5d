//! Reading plot rows into the DTOs. Columns are always addressed by name (NeuroBook's upgraded
//! databases order them differently), timestamps are read in all three stored forms, and JSON
//! text columns that do not parse read as empty, as NeuroBook does.

use rusqlite::types::ValueRef;
use rusqlite::Row;

use super::model::*;
use super::time::{iso_from_millis, CalendarCodec};

pub const ACT_COLS: &str =
    r#""id","storyId","sortOrder","name","title","summary","note","createdAt","updatedAt""#;
pub const CHAPTER_COLS: &str = r#""id","storyId","actId","sortOrder","name","title","note","briefGoal","briefPov","briefTone","briefPacing","briefReaderKnows","briefProtagonistKnows","briefMustHide","briefHintOnly","briefOpening","briefEnding","briefDoNotWrite","createdAt","updatedAt""#;
pub const PHASE_COLS: &str =
    r#""id","storyId","sortOrder","name","title","summary","note","createdAt","updatedAt""#;
pub const THREAD_COLS: &str = r#""id","storyId","storyPhaseId","sortOrder","name","title","isMainThread","status","miceType","summary","tags","writingTip","note","createdAt","updatedAt""#;
/// Scene columns, prefixed `s.`, plus the chapter's id/name/title from a LEFT JOIN as `c`.
pub const SCENE_COLS: &str = r#"s."id",s."storyId",s."threadId",s."chapterId",s."threadSortOrder",s."chapterSortOrder",s."title",s."status",s."outcomeType",s."pacingRole",s."summary",s."purpose",s."writingTip",s."note",s."startInstant",s."endInstant",s."subjectIdsJson",s."locationSubjectId",s."createdAt",s."updatedAt",c."name" AS "chapterName",c."title" AS "chapterTitle""#;
pub const SCENE_FROM: &str =
    r#""StoryScene" s LEFT JOIN "StoryChapter" c ON c."id" = s."chapterId""#;
pub const PROMISE_COLS: &str = r#""id","storyId","name","title","status","importance","summary","payoffExpectation","cadenceChapters","deadlineChapterId","tags","createdAt","updatedAt""#;
pub const DECISION_COLS: &str = r#""id","storyId","name","title","status","question","options","deadlineChapterId","decision","motivation","rejectedAlternatives","risk","serves","dependsOn","supersededById","anchorKind","anchorActId","anchorChapterId","anchorThreadId","anchorSceneId","anchorPromiseId","anchorPath","note","createdAt","updatedAt""#;

/// A DateTime column in any stored form, as text.
pub fn ts(row: &Row, col: &str) -> rusqlite::Result<String> {
    Ok(match row.get_ref(col)? {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Integer(ms) => iso_from_millis(ms),
        ValueRef::Real(f) => iso_from_millis(f as i64),
        ValueRef::Null | ValueRef::Blob(_) => String::new(),
    })
}

/// A BOOLEAN column (NeuroBook stores 1/0; tolerate 'true'/'false' text).
pub fn boolean(row: &Row, col: &str) -> rusqlite::Result<bool> {
    Ok(match row.get_ref(col)? {
        ValueRef::Integer(i) => i != 0,
        ValueRef::Text(t) => t == b"true" || t == b"1",
        _ => false,
    })
}

/// A JSON text column holding an array of strings; malformed → empty.
pub fn string_list(text: &str) -> Vec<String> {
    serde_json::from_str::<Vec<serde_json::Value>>(text)
        .map(|v| {
            v.into_iter()
                .filter_map(|x| {
                    x.as_str()
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn json_list<T: serde::de::DeserializeOwned>(text: &str) -> Vec<T> {
    serde_json::from_str::<Vec<serde_json::Value>>(text)
        .map(|v| {
            v.into_iter()
                .filter_map(|x| serde_json::from_value(x).ok())
                .collect()
        })
        .unwrap_or_default()
}

pub fn act(row: &Row) -> rusqlite::Result<ActDto> {
    Ok(ActDto {
        id: row.get("id")?,
        story_id: row.get("storyId")?,
        sort_order: row.get("sortOrder")?,
        name: row.get("name")?,
        title: row.get("title")?,
        summary: row.get("summary")?,
        note: row.get("note")?,
        created_at: ts(row, "createdAt")?,
        updated_at: ts(row, "updatedAt")?,
    })
}

pub fn chapter(row: &Row) -> rusqlite::Result<ChapterDto> {
    Ok(ChapterDto {
        id: row.get("id")?,
        story_id: row.get("storyId")?,
        act_id: row.get("actId")?,
        sort_order: row.get("sortOrder")?,
        name: row.get("name")?,
        title: row.get("title")?,
        note: row.get("note")?,
        brief: ChapterBrief {
            goal: row.get("briefGoal")?,
            pov: row.get("briefPov")?,
            tone: row.get("briefTone")?,
            pacing: row.get("briefPacing")?,
            reader_knows: row.get("briefReaderKnows")?,
            protagonist_knows: row.get("briefProtagonistKnows")?,
            must_hide: row.get("briefMustHide")?,
            hint_only: row.get("briefHintOnly")?,
            opening: row.get("briefOpening")?,
            ending: row.get("briefEnding")?,
            do_not_write: row.get("briefDoNotWrite")?,
        },
        created_at: ts(row, "createdAt")?,
        updated_at: ts(row, "updatedAt")?,
    })
}

pub fn chapter_ref(c: &ChapterDto) -> ChapterRef {
    ChapterRef {
        id: c.id,
        name: c.name.clone(),
        title: c.title.clone(),
    }
}

pub fn phase(row: &Row) -> rusqlite::Result<PhaseDto> {
    Ok(PhaseDto {
        id: row.get("id")?,
        story_id: row.get("storyId")?,
        sort_order: row.get("sortOrder")?,
        name: row.get("name")?,
        title: row.get("title")?,
        summary: row.get("summary")?,
        note: row.get("note")?,
        created_at: ts(row, "createdAt")?,
        updated_at: ts(row, "updatedAt")?,
    })
}

pub fn thread(row: &Row) -> rusqlite::Result<ThreadDto> {
    let tags: String = row.get("tags")?;
    Ok(ThreadDto {
        id: row.get("id")?,
        story_id: row.get("storyId")?,
        story_phase_id: row.get("storyPhaseId")?,
        sort_order: row.get("sortOrder")?,
        name: row.get("name")?,
        title: row.get("title")?,
        is_main_thread: boolean(row, "isMainThread")?,
        status: row.get("status")?,
        mice_type: row.get("miceType")?,
        summary: row.get("summary")?,
        tags: string_list(&tags),
        writing_tip: row.get("writingTip")?,
        note: row.get("note")?,
        created_at: ts(row, "createdAt")?,
        updated_at: ts(row, "updatedAt")?,
    })
}

pub fn world_anchor(row: &Row, cal: &dyn CalendarCodec) -> rusqlite::Result<WorldAnchorDto> {
    let start: Option<i64> = row.get("startInstant")?;
    let end: Option<i64> = row.get("endInstant")?;
    let subjects: String = row.get("subjectIdsJson")?;
    let mut subject_ids: Vec<String> = Vec::new();
    for s in string_list(&subjects) {
        if !subject_ids.contains(&s) {
            subject_ids.push(s);
        }
    }
    Ok(WorldAnchorDto {
        start_time: start.map(|i| cal.format(i)),
        end_time: end.map(|i| cal.format(i)),
        start_instant: start,
        end_instant: end,
        subject_ids,
        location_subject_id: row.get("locationSubjectId")?,
    })
}

/// A scene selected with [`SCENE_COLS`] from [`SCENE_FROM`].
pub fn scene(row: &Row, cal: &dyn CalendarCodec) -> rusqlite::Result<SceneDto> {
    let chapter_id: Option<i64> = row.get("chapterId")?;
    let chapter_name: Option<String> = row.get("chapterName")?;
    let chapter = match (chapter_id, chapter_name) {
        (Some(id), Some(name)) => Some(ChapterRef {
            id,
            name,
            title: row
                .get::<_, Option<String>>("chapterTitle")?
                .unwrap_or_default(),
        }),
        _ => None,
    };
    Ok(SceneDto {
        id: row.get("id")?,
        story_id: row.get("storyId")?,
        thread_id: row.get("threadId")?,
        chapter_id,
        chapter,
        thread_sort_order: row.get("threadSortOrder")?,
        chapter_sort_order: row.get("chapterSortOrder")?,
        title: row.get("title")?,
        status: row.get("status")?,
        outcome_type: row.get("outcomeType")?,
        pacing_role: row.get("pacingRole")?,
        summary: row.get("summary")?,
        purpose: row.get("purpose")?,
        writing_tip: row.get("writingTip")?,
        note: row.get("note")?,
        world_anchor: world_anchor(row, cal)?,
        created_at: ts(row, "createdAt")?,
        updated_at: ts(row, "updatedAt")?,
    })
}

/// A promise row; `derivedStage`, `beatStats` and `deadlineChapter` are filled by the caller.
pub fn promise(row: &Row) -> rusqlite::Result<PromiseDto> {
    let tags: String = row.get("tags")?;
    Ok(PromiseDto {
        id: row.get("id")?,
        story_id: row.get("storyId")?,
        name: row.get("name")?,
        title: row.get("title")?,
        status: row.get("status")?,
        importance: row.get("importance")?,
        summary: row.get("summary")?,
        payoff_expectation: row.get("payoffExpectation")?,
        cadence_chapters: row.get("cadenceChapters")?,
        deadline_chapter_id: row.get("deadlineChapterId")?,
        deadline_chapter: None,
        tags: string_list(&tags),
        derived_stage: String::new(),
        beat_stats: BeatStats::default(),
        created_at: ts(row, "createdAt")?,
        updated_at: ts(row, "updatedAt")?,
    })
}

/// A decision row as stored: refs unresolved (`valid` true), anchor as the stored kind and ids.
pub fn decision(row: &Row) -> rusqlite::Result<(DecisionDto, RawAnchor)> {
    let options: String = row.get("options")?;
    let rejected: String = row.get("rejectedAlternatives")?;
    let serves: String = row.get("serves")?;
    let depends: String = row.get("dependsOn")?;
    let raw = RawAnchor {
        kind: row.get("anchorKind")?,
        act: row.get("anchorActId")?,
        chapter: row.get("anchorChapterId")?,
        thread: row.get("anchorThreadId")?,
        scene: row.get("anchorSceneId")?,
        promise: row.get("anchorPromiseId")?,
        path: row.get("anchorPath")?,
    };
    let dto = DecisionDto {
        id: row.get("id")?,
        story_id: row.get("storyId")?,
        name: row.get("name")?,
        title: row.get("title")?,
        status: row.get("status")?,
        question: row.get("question")?,
        options: json_list(&options),
        deadline_chapter_id: row.get("deadlineChapterId")?,
        deadline_chapter: None,
        decision: row.get("decision")?,
        motivation: row.get("motivation")?,
        rejected_alternatives: json_list(&rejected),
        risk: row.get("risk")?,
        serves: string_list(&serves)
            .into_iter()
            .map(|target| RefCheck {
                target,
                valid: true,
            })
            .collect(),
        depends_on: string_list(&depends)
            .into_iter()
            .map(|target| RefCheck {
                target,
                valid: true,
            })
            .collect(),
        superseded_by_id: row.get("supersededById")?,
        anchor: raw.normalized(),
        note: row.get("note")?,
        created_at: ts(row, "createdAt")?,
        updated_at: ts(row, "updatedAt")?,
    };
    Ok((dto, raw))
}

/// The anchor columns of a decision as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawAnchor {
    pub kind: String,
    pub act: Option<i64>,
    pub chapter: Option<i64>,
    pub thread: Option<i64>,
    pub scene: Option<i64>,
    pub promise: Option<i64>,
    pub path: Option<String>,
}

impl RawAnchor {
    /// Read rule: an anchor whose foreign key was set null (target deleted) counts as `story`.
    pub fn normalized(&self) -> AnchorDto {
        let id = match self.kind.as_str() {
            "act" => self.act,
            "chapter" => self.chapter,
            "thread" => self.thread,
            "scene" => self.scene,
            "promise" => self.promise,
            _ => None,
        };
        match self.kind.as_str() {
            "act" | "chapter" | "thread" | "scene" | "promise" if id.is_some() => AnchorDto {
                kind: self.kind.clone(),
                id,
                path: None,
            },
            "content" if self.path.as_deref().is_some_and(|p| !p.is_empty()) => AnchorDto {
                kind: "content".into(),
                id: None,
                path: self.path.clone(),
            },
            _ => AnchorDto {
                kind: "story".into(),
                id: None,
                path: None,
            },
        }
    }
}
