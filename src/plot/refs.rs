//! References between plot records and to content: a scene's `refs` (content path,
//! `thread://<id or name>`, `scene://<id>`), a decision's `serves`/`dependsOn`
//! (`promise://N`, `decision://N`, `thread://N`, `scene://N` or a content path) and a
//! decision's anchor. Checked for format and existence on write; flagged `valid: false` on
//! read when the target has gone (no cascading clean-up, as in NeuroBook).

use serde_json::{json, Value};

use super::ctx::{check_enum, int, opt_int, opt_text, text, Plot};
use super::error::{PlotError, PlotResult};
use super::input::{AnchorInput, SceneRefInput};
use super::model::*;
use super::rows::RawAnchor;
use super::track::Table;

/// A project-relative content path, or `None` when it is absolute, has a drive letter, a
/// backslash, a `..` segment or a URI scheme. A leading `./` is dropped.
pub fn content_path(raw: &str) -> Option<String> {
    let t = raw.trim();
    let t = t.strip_prefix("./").unwrap_or(t);
    let drive = t.len() >= 2 && t.as_bytes()[1] == b':' && t.as_bytes()[0].is_ascii_alphabetic();
    if t.is_empty()
        || t.starts_with('/')
        || t.contains('\\')
        || t.contains("://")
        || drive
        || t.split('/').any(|s| s == "..")
    {
        return None;
    }
    Some(t.to_string())
}

fn positive_id(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.is_empty() || s.starts_with('0') || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A scene ref ready to store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoredSceneRef {
    pub relation: String,
    pub raw_target: String,
    pub target_kind: &'static str,
    pub thread: Option<i64>,
    pub scene: Option<i64>,
    pub visibility: String,
    pub note: Option<String>,
}

/// A `serves`/`dependsOn` entry, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecisionRef {
    Entity { kind: &'static str, id: i64 },
    Content(String),
}

pub fn parse_decision_ref(target: &str) -> Option<DecisionRef> {
    let t = target.trim();
    if let Some((scheme, rest)) = t.split_once("://") {
        let kind = match scheme.to_ascii_lowercase().as_str() {
            "promise" => "promise",
            "decision" => "decision",
            "thread" => "thread",
            "scene" => "scene",
            _ => return None,
        };
        return positive_id(rest).map(|id| DecisionRef::Entity { kind, id });
    }
    content_path(t).map(DecisionRef::Content)
}

/// The anchor columns of a decision.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AnchorColumns(pub RawAnchor);

impl Plot<'_> {
    fn entity_exists(&mut self, kind: &str, id: i64) -> PlotResult<bool> {
        let story = self.story_id()?.unwrap_or(-1);
        let table = match kind {
            "promise" => Table::Promise,
            "decision" => Table::Decision,
            "thread" => Table::Thread,
            "scene" => Table::Scene,
            "act" => Table::Act,
            "chapter" => Table::Chapter,
            _ => return Ok(false),
        };
        let sql = format!(
            "SELECT COUNT(*) FROM \"{}\" WHERE \"id\" = ?1 AND \"storyId\" = ?2",
            table.name()
        );
        Ok(self.count(&sql, [id, story])? > 0)
    }

    /// Check scene refs: known visibility, non-empty relation, no duplicate (relation, target),
    /// targets that parse and exist. Thread targets may name the thread; they are stored by id.
    pub(crate) fn resolve_scene_refs(
        &mut self,
        refs: &[SceneRefInput],
    ) -> PlotResult<Vec<StoredSceneRef>> {
        let mut out: Vec<StoredSceneRef> = Vec::new();
        let story = self.story_id()?.unwrap_or(-1);
        for (i, r) in refs.iter().enumerate() {
            let relation = r.relation.trim().to_string();
            if relation.is_empty() {
                return Err(PlotError::invalid(
                    &format!("/refs/{i}/relation"),
                    "must not be empty (e.g. defines, constrains, depends_on, part_of)",
                ));
            }
            check_enum(
                &format!("/refs/{i}/visibility"),
                &r.visibility,
                REF_VISIBILITIES,
            )?;
            let ptr = format!("/refs/{i}/target");
            let target = r.target.trim();
            let stored = if let Some((scheme, rest)) = target.split_once("://") {
                match scheme.to_ascii_lowercase().as_str() {
                    "thread" => {
                        let id = match positive_id(rest) {
                            Some(id) if self.entity_exists("thread", id)? => id,
                            Some(id) => return Err(PlotError::not_found(&ptr, format!("no thread with id {id} in this story"))),
                            None => self
                                .one(
                                    "SELECT \"id\" FROM \"StoryThread\" WHERE \"storyId\" = ?1 AND \"name\" = ?2",
                                    rusqlite::params![story, rest.trim()],
                                    |row| row.get(0),
                                )?
                                .ok_or_else(|| PlotError::not_found(&ptr, format!("no thread named '{}' in this story", rest.trim())))?,
                        };
                        (format!("thread://{id}"), "thread", Some(id), None)
                    }
                    "scene" => {
                        let id = positive_id(rest).ok_or_else(|| PlotError::invalid(&ptr, format!("'{target}': a scene target is scene://<id>")))?;
                        if !self.entity_exists("scene", id)? {
                            return Err(PlotError::not_found(&ptr, format!("no scene with id {id} in this story")));
                        }
                        (format!("scene://{id}"), "scene", None, Some(id))
                    }
                    _ => return Err(PlotError::invalid(&ptr, format!("'{target}' is not a supported target; use a content path, thread://<id or name> or scene://<id>"))),
                }
            } else {
                let path = content_path(target).ok_or_else(|| PlotError::invalid(&ptr, format!("'{target}' is not a project-relative content path (no absolute paths, drive letters, backslashes or ..)")))?;
                (path, "content", None, None)
            };
            if out
                .iter()
                .any(|o| o.relation == relation && o.raw_target == stored.0)
            {
                return Err(PlotError::invalid(
                    &format!("/refs/{i}"),
                    format!("duplicate ref ({relation} → {})", stored.0),
                ));
            }
            out.push(StoredSceneRef {
                relation,
                raw_target: stored.0,
                target_kind: stored.1,
                thread: stored.2,
                scene: stored.3,
                visibility: r.visibility.clone(),
                note: r.note.clone(),
            });
        }
        Ok(out)
    }

    /// A scene's refs in order, with the target as it reads now.
    pub fn scene_refs(&mut self, scene_id: i64) -> PlotResult<Vec<SceneRefDto>> {
        self.all(
            "SELECT \"relation\",\"rawTarget\",\"targetKind\",\"targetThreadId\",\"targetSceneId\",\"visibility\",\"note\" \
             FROM \"StorySceneRef\" WHERE \"sceneId\" = ?1 ORDER BY \"sortOrder\",\"id\"",
            [scene_id],
            |r| {
                let kind: String = r.get("targetKind")?;
                let raw: String = r.get("rawTarget")?;
                let (target, valid) = match kind.as_str() {
                    "thread" => match r.get::<_, Option<i64>>("targetThreadId")? {
                        Some(id) => (format!("thread://{id}"), true),
                        None => (raw, false),
                    },
                    "scene" => match r.get::<_, Option<i64>>("targetSceneId")? {
                        Some(id) => (format!("scene://{id}"), true),
                        None => (raw, false),
                    },
                    _ => (raw, true),
                };
                Ok(SceneRefDto {
                    relation: r.get("relation")?,
                    target,
                    target_kind: kind,
                    visibility: r.get("visibility")?,
                    note: r.get("note")?,
                    valid,
                })
            },
        )
    }

    /// Replace a scene's refs (the scene must already be touched); the preview shows the
    /// change as a `refs` field of the scene.
    pub(crate) fn replace_scene_refs(
        &mut self,
        scene_id: i64,
        refs: &[StoredSceneRef],
        now: &str,
    ) -> PlotResult<()> {
        let show = |l: &[SceneRefDto]| -> Value {
            Value::Array(l.iter().map(|r| json!({"relation": r.relation, "target": r.target, "visibility": r.visibility, "note": r.note})).collect())
        };
        let before = show(&self.scene_refs(scene_id)?);
        self.conn()
            .prepare_cached("DELETE FROM \"StorySceneRef\" WHERE \"sceneId\" = ?1")?
            .execute([scene_id])?;
        let mut stmt = self.conn().prepare_cached(
            "INSERT INTO \"StorySceneRef\" (\"sceneId\",\"sortOrder\",\"relation\",\"rawTarget\",\"targetKind\",\"targetThreadId\",\"targetSceneId\",\"visibility\",\"note\",\"createdAt\",\"updatedAt\") \
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?10)",
        )?;
        for (i, r) in refs.iter().enumerate() {
            stmt.execute(rusqlite::params_from_iter([
                int(scene_id),
                int(i as i64),
                text(&r.relation),
                text(&r.raw_target),
                text(r.target_kind),
                opt_int(r.thread),
                opt_int(r.scene),
                text(&r.visibility),
                opt_text(r.note.as_ref()),
                text(now),
            ]))?;
        }
        drop(stmt);
        let after = show(&self.scene_refs(scene_id)?);
        self.extra_change(Table::Scene, scene_id, "refs", before, after);
        Ok(())
    }

    /// Check `serves`/`dependsOn` on write: every entry well-formed, every entity in this story.
    /// Returns the entries trimmed.
    pub(crate) fn check_decision_refs(
        &mut self,
        field: &str,
        targets: &[String],
    ) -> PlotResult<Vec<String>> {
        let mut out = Vec::new();
        for (i, t) in targets.iter().enumerate() {
            let ptr = format!("/{field}/{i}");
            match parse_decision_ref(t) {
                None => return Err(PlotError::invalid(&ptr, format!("'{t}' is not a reference; use promise://<id>, decision://<id>, thread://<id>, scene://<id> or a project-relative content path such as lorebook/character/ada/"))),
                Some(DecisionRef::Entity { kind, id }) => {
                    if !self.entity_exists(kind, id)? {
                        return Err(PlotError::not_found(&ptr, format!("'{t}' points at no {kind} of this story")));
                    }
                }
                Some(DecisionRef::Content(_)) => {}
            }
            out.push(t.trim().to_string());
        }
        Ok(out)
    }

    /// Mark each reference valid or dangling, for reading.
    pub(crate) fn ref_checks(&mut self, refs: &[RefCheck]) -> PlotResult<Vec<RefCheck>> {
        let mut out = Vec::with_capacity(refs.len());
        for r in refs {
            let valid = match parse_decision_ref(&r.target) {
                None => false,
                Some(DecisionRef::Content(_)) => true,
                Some(DecisionRef::Entity { kind, id }) => self.entity_exists(kind, id)?,
            };
            out.push(RefCheck {
                target: r.target.clone(),
                valid,
            });
        }
        Ok(out)
    }

    /// Resolve an anchor: `story` takes no id or path, `content` a path only, the others an id
    /// of an existing record of this story.
    pub(crate) fn resolve_anchor(&mut self, a: &AnchorInput) -> PlotResult<AnchorColumns> {
        check_enum("/anchor/kind", &a.kind, ANCHOR_KINDS)?;
        let mut raw = RawAnchor {
            kind: a.kind.clone(),
            ..RawAnchor::default()
        };
        match a.kind.as_str() {
            "story" | "content" => {
                if a.id.is_some() {
                    return Err(PlotError::invalid(
                        "/anchor/id",
                        format!("anchor kind {} takes no id", a.kind),
                    ));
                }
                if a.kind == "story" {
                    if a.path.is_some() {
                        return Err(PlotError::invalid(
                            "/anchor/path",
                            "anchor kind story takes no path; use kind content for a content node",
                        ));
                    }
                } else {
                    let p = a.path.as_deref().ok_or_else(|| {
                        PlotError::invalid(
                            "/anchor/path",
                            "anchor kind content needs a path (e.g. lorebook/character/ada/)",
                        )
                    })?;
                    raw.path = Some(content_path(p).ok_or_else(|| {
                        PlotError::invalid(
                            "/anchor/path",
                            format!("'{p}' is not a project-relative content path"),
                        )
                    })?);
                }
            }
            kind => {
                if a.path.is_some() {
                    return Err(PlotError::invalid(
                        "/anchor/path",
                        format!("anchor kind {kind} takes an id, not a path"),
                    ));
                }
                let id = a.id.ok_or_else(|| {
                    PlotError::invalid(
                        "/anchor/id",
                        format!("anchor kind {kind} needs the id of the {kind}"),
                    )
                })?;
                if !self.entity_exists(kind, id)? {
                    return Err(PlotError::not_found(
                        "/anchor/id",
                        format!("no {kind} with id {id} in this story"),
                    ));
                }
                match kind {
                    "act" => raw.act = Some(id),
                    "chapter" => raw.chapter = Some(id),
                    "thread" => raw.thread = Some(id),
                    "scene" => raw.scene = Some(id),
                    _ => raw.promise = Some(id),
                }
            }
        }
        Ok(AnchorColumns(raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_paths_and_decision_refs() {
        assert_eq!(
            content_path("./lorebook/character/ada/"),
            Some("lorebook/character/ada/".into())
        );
        for bad in ["/etc/passwd", "C:/x", "a\\b", "a/../b", "", "http://x"] {
            assert_eq!(content_path(bad), None, "{bad}");
        }
        assert_eq!(
            parse_decision_ref("promise://3"),
            Some(DecisionRef::Entity {
                kind: "promise",
                id: 3
            })
        );
        assert_eq!(
            parse_decision_ref("PROMISE://3"),
            Some(DecisionRef::Entity {
                kind: "promise",
                id: 3
            })
        );
        assert_eq!(parse_decision_ref("promise://03"), None);
        assert_eq!(parse_decision_ref("act://3"), None);
        assert_eq!(
            parse_decision_ref("lorebook/x/"),
            Some(DecisionRef::Content("lorebook/x/".into()))
        );
    }
}
