//! The book's checks at merge time — nbook's "build verification" for a task's change: world
//! issues (the E1–E5 errors of every subject at the end of story time), the writer-brief
//! status of each chapter a merged file names in its front matter (`chapter: <name>`), and
//! plot references (scene refs to content that the merge deletes), and no conflict markers
//! left from a merge that returned the task. Each result passes or
//! fails with a message the merger can pass on through `fn_report_build_failure`.
//!
//! Reads only: the world's derived checkpoints may be written, as any world query does.

use std::path::Path;

use serde::Serialize;

use super::merge::MergeFile;
use crate::plot::brief::BriefStatus;
use crate::plot::project::ProjectMeta;
use crate::plot::PlotDb;

/// At most this many world issues are listed.
const WORLD_ISSUE_LIMIT: usize = 20;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    /// `conflict`, `world`, `brief` or `refs`.
    pub kind: &'static str,
    pub ok: bool,
    pub message: String,
}

impl Check {
    fn pass(kind: &'static str, message: impl Into<String>) -> Check {
        Check {
            kind,
            ok: true,
            message: message.into(),
        }
    }
    fn fail(kind: &'static str, message: impl Into<String>) -> Check {
        Check {
            kind,
            ok: false,
            message: message.into(),
        }
    }
}

/// Run every check for the merge of `files` into the project at `root`.
pub fn run(root: &Path, files: &[MergeFile]) -> Vec<Check> {
    let db = root.join(".nbook").join("project.sqlite");
    if !db.exists() {
        let mut out = markers(files);
        out.push(Check::pass(
            "world",
            "no project database yet: nothing to check",
        ));
        return out;
    }
    let mut out = markers(files);
    out.extend(world(root, &db));
    out.extend(briefs(root, &db, files));
    out.extend(refs(&db, files));
    out
}

/// A file still holding the markers of a conflict the merge wrote into the draft.
fn markers(files: &[MergeFile]) -> Vec<Check> {
    files
        .iter()
        .filter(|f| {
            f.after.as_deref().is_some_and(|t| {
                t.lines()
                    .any(|l| l.starts_with(super::draft::merge3::DRAFT_MARKER))
            })
        })
        .map(|f| {
            Check::fail(
                "conflict",
                format!("{} still holds unresolved conflict markers", f.path),
            )
        })
        .collect()
}

fn world(root: &Path, db: &Path) -> Vec<Check> {
    use crate::world::{pool, query::WorldView};
    let issues = (|| {
        let world = pool::world(root)?;
        let conn = pool::take(db)?;
        let view = WorldView::new(conn, world);
        let issues = view.all_issues(i64::MAX, WORLD_ISSUE_LIMIT);
        pool::give(db, view.conn);
        issues
    })();
    match issues {
        Err(e) => vec![Check::fail(
            "world",
            format!("the world could not be checked: {e}"),
        )],
        Ok(list) if list.is_empty() => vec![Check::pass("world", "no world issues")],
        Ok(list) => list
            .into_iter()
            .map(|i| {
                Check::fail(
                    "world",
                    format!(
                        "{} {} on {}{}: {}",
                        i.code, i.title, i.subject_id, i.attr, i.message
                    ),
                )
            })
            .collect(),
    }
}

/// The chapter a manuscript file names in its YAML front matter (`chapter: <name>`).
pub fn chapter_of(text: &str) -> Option<String> {
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---")?;
    rest[..end].lines().find_map(|l| {
        l.strip_prefix("chapter:")
            .map(|v| v.trim().trim_matches('"').trim_matches('\'').to_string())
            .filter(|v| !v.is_empty())
    })
}

fn briefs(root: &Path, db: &Path, files: &[MergeFile]) -> Vec<Check> {
    let named: Vec<(&str, String)> = files
        .iter()
        .filter_map(|f| Some((f.path.as_str(), chapter_of(f.after.as_deref()?)?)))
        .collect();
    if named.is_empty() {
        return Vec::new();
    }
    let plot = PlotDb::new(db.to_path_buf(), ProjectMeta::load(root));
    let rows = match plot.read(|p| p.chapter_statuses()) {
        Ok(r) => r,
        Err(e) => {
            return vec![Check::fail(
                "brief",
                format!("the story could not be read: {e}"),
            )]
        }
    };
    named
        .into_iter()
        .map(|(path, name)| match rows.iter().find(|r| r.chapter.name == name) {
            None => Check::fail(
                "brief",
                format!("{path} names chapter {name}, which the story tree does not have"),
            ),
            Some(r) if r.status == BriefStatus::Ready => Check::pass(
                "brief",
                format!("{path}: chapter {name}'s writer brief is ready"),
            ),
            Some(r) => Check::fail(
                "brief",
                format!(
                    "{path}: chapter {name}'s writer brief is {} (get_chapter_writer_brief says what it needs)",
                    r.status.as_str()
                ),
            ),
        })
        .collect()
}

fn refs(db: &Path, files: &[MergeFile]) -> Vec<Check> {
    let deleted: Vec<&str> = files
        .iter()
        .filter(|f| f.after.is_none())
        .map(|f| f.path.as_str())
        .collect();
    if deleted.is_empty() {
        return Vec::new();
    }
    let found = (|| -> Result<Vec<(i64, String, String)>, String> {
        let conn = crate::store::open_read_only(db).map_err(|e| e.to_string())?;
        let s = |e: rusqlite::Error| e.to_string();
        let mut stmt = conn
            .prepare(
                "SELECT r.\"sceneId\", s.\"title\", r.\"rawTarget\" FROM \"StorySceneRef\" r \
             JOIN \"StoryScene\" s ON s.\"id\" = r.\"sceneId\" WHERE r.\"targetKind\" = 'content'",
            )
            .map_err(s)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(s)?;
        rows.collect::<rusqlite::Result<_>>().map_err(s)
    })();
    match found {
        Err(e) => vec![Check::fail(
            "refs",
            format!("plot references could not be read: {e}"),
        )],
        Ok(rows) => {
            let broken: Vec<Check> = rows
                .into_iter()
                .filter_map(|(id, title, raw)| {
                    let target = crate::plot::refs::content_path(&raw)?;
                    deleted.contains(&target.as_str()).then(|| {
                        Check::fail(
                            "refs",
                            format!("scene #{id} \"{title}\" refers to {target}, which this merge deletes"),
                        )
                    })
                })
                .collect();
            if broken.is_empty() {
                vec![Check::pass(
                    "refs",
                    "no plot reference points at a deleted file",
                )]
            } else {
                broken
            }
        }
    }
}
