//! The story tree a new project starts with, so it agrees with the template's files: the
//! template's `manuscript/001-volume/001-chapter/index.md` names `chapter:
//! 001-volume-001-chapter` in its front matter, so `nbook init` creates that act (volume) and
//! chapter — through the same services as every other write, with NeuroBook's timestamps.

use std::path::Path;

use super::input::{ActInput, ChapterInput};
use super::Field;
use super::{PlotDb, PlotResult, ProjectMeta};

/// The template's volume and chapter, as its front matter names them.
pub const TEMPLATE_ACT: (&str, &str) = ("001-volume", "Volume One");
pub const TEMPLATE_CHAPTER: (&str, &str) = ("001-volume-001-chapter", "Chapter One");

/// Create the template's act and chapter in a new project's story tree. A project whose
/// story already has acts is left as it is (a NeuroBook book being re-initialised).
pub fn seed_new_project(root: &Path, db_path: &Path) -> PlotResult<()> {
    let db = PlotDb::new(db_path.to_path_buf(), ProjectMeta::load(root));
    let has_acts = db.read(|p| Ok(p.count("SELECT COUNT(*) FROM \"StoryAct\"", [])? > 0))?;
    if has_acts {
        return Ok(());
    }
    db.commit(|p| {
        let act = p.create_act(&ActInput {
            name: Some(TEMPLATE_ACT.0.into()),
            title: Some(TEMPLATE_ACT.1.into()),
            ..ActInput::default()
        })?;
        p.create_chapter(&ChapterInput {
            act_id: Field::Set(act.id),
            name: Some(TEMPLATE_CHAPTER.0.into()),
            title: Some(TEMPLATE_CHAPTER.1.into()),
            ..ChapterInput::default()
        })?;
        Ok(())
    })?;
    Ok(())
}
