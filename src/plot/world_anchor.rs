//! A scene's world anchor as the world engine needs it (for `get_scene_world_context`), and
//! which of its subjects the world knows (`WorldSubject` rows).

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use super::ctx::Plot;
use super::error::{PlotError, PlotResult};
use super::rows::string_list;

/// Where and when a scene happens.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SceneAnchor {
    pub scene_id: i64,
    pub thread_id: i64,
    pub chapter_id: Option<i64>,
    pub title: String,
    pub status: String,
    pub start_instant: Option<i64>,
    pub end_instant: Option<i64>,
    pub subject_ids: Vec<String>,
    pub location_subject_id: Option<String>,
}

impl SceneAnchor {
    /// `[start, end]` when both are set.
    pub fn time_range(&self) -> Option<(i64, i64)> {
        Some((self.start_instant?, self.end_instant?))
    }

    /// The subjects plus the location, de-duplicated, in order.
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

/// A subject the world engine knows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WorldSubjectRow {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
}

/// Load the anchor of a scene of the project's story (lowest story id), or a not-found error
/// naming `/sceneId`.
pub fn load_scene_anchor(conn: &Connection, scene_id: i64) -> PlotResult<SceneAnchor> {
    let found = conn
        .prepare_cached(
            "SELECT s.\"id\", s.\"threadId\", s.\"chapterId\", s.\"title\", s.\"status\", s.\"startInstant\", s.\"endInstant\", s.\"subjectIdsJson\", s.\"locationSubjectId\" \
             FROM \"StoryScene\" s WHERE s.\"id\" = ?1 AND s.\"storyId\" = (SELECT MIN(\"id\") FROM \"Story\")",
        )?
        .query_row([scene_id], |r| {
            let subjects: String = r.get(7)?;
            let mut subject_ids: Vec<String> = Vec::new();
            for s in string_list(&subjects) {
                if !subject_ids.contains(&s) {
                    subject_ids.push(s);
                }
            }
            Ok(SceneAnchor {
                scene_id: r.get(0)?,
                thread_id: r.get(1)?,
                chapter_id: r.get(2)?,
                title: r.get(3)?,
                status: r.get(4)?,
                start_instant: r.get(5)?,
                end_instant: r.get(6)?,
                subject_ids,
                location_subject_id: r.get(8)?,
            })
        })
        .optional()?;
    found.ok_or_else(|| {
        PlotError::not_found(
            "/sceneId",
            format!("no scene with id {scene_id} in this story"),
        )
    })
}

/// The known subjects among `ids` (in the order given) and the ids the world does not know.
pub fn resolve_subjects(
    conn: &Connection,
    ids: &[String],
) -> PlotResult<(Vec<WorldSubjectRow>, Vec<String>)> {
    let mut stmt = conn.prepare_cached(
        "SELECT \"id\",\"type\",\"name\" FROM \"WorldSubject\" WHERE \"id\" = ?1",
    )?;
    let mut known = Vec::new();
    let mut unresolved = Vec::new();
    for id in ids {
        match stmt
            .query_row([id], |r| {
                Ok(WorldSubjectRow {
                    id: r.get(0)?,
                    kind: r.get(1)?,
                    name: r.get(2)?,
                })
            })
            .optional()?
        {
            Some(s) => known.push(s),
            None => unresolved.push(id.clone()),
        }
    }
    Ok((known, unresolved))
}

/// Every subject id the world knows (for checking many scenes at once).
pub fn known_subject_ids(conn: &Connection) -> PlotResult<HashSet<String>> {
    let mut stmt = conn.prepare_cached("SELECT \"id\" FROM \"WorldSubject\"")?;
    let ids = stmt.query_map([], |r| r.get::<_, String>(0))?;
    Ok(ids.collect::<Result<_, _>>()?)
}

impl Plot<'_> {
    pub fn scene_anchor(&mut self, scene_id: i64) -> PlotResult<SceneAnchor> {
        load_scene_anchor(self.conn(), scene_id)
    }
}
