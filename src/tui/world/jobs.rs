//! The World pane's blocking work, run by the runtime on the blocking pool and returned as
//! ticketed actions: the load (counts, bounds, types and the UI task's read-only reader), a
//! type's subjects, slice counts per bucket, the slices around the cursor, a subject's track
//! and every subject's issues at the cursor, a subject's state at an instant, and — for a
//! script calendar — the labels of the cursor and the strip's ends and the jump prompt's
//! reading of a typed time. Plain
//! functions over the engine's read model (the pane never opens the database itself) so tests
//! and benches call them directly; the reader is the read model's own read-only view.

use std::sync::Arc;
use std::time::Duration;

use crate::engine::read::ReadModel;
use crate::tui::world::{DensityKey, IssueRow, SliceChunk, WorldLoad, WorldMeta, WorldReader};
use crate::world::query::{TrackEntry, WorldView};
use crate::world::store::{Subject, SubjectState};
use crate::world::WorldError;

/// How long the UI task's reader waits for a writer's lock before reporting "busy".
pub const READER_BUSY: Duration = Duration::from_millis(50);

#[derive(Clone, Debug, PartialEq)]
pub enum WorldJob {
    Load,
    /// Subjects of a type (all: `None`).
    Subjects(Option<String>),
    Density(DensityKey),
    /// Up to `around` slices on each side of `at`.
    Slices {
        at: i64,
        around: usize,
    },
    Track(String),
    Issues(i64),
    /// A subject's state at an instant (the cursor, or mark A for the diff).
    State {
        id: String,
        at: i64,
    },
    /// Labels of instants in a script calendar (the UI task never runs the script).
    Labels(Vec<i64>),
    /// The jump prompt's text read in a script calendar.
    Parse(String),
}

#[derive(Debug)]
pub enum WorldJobResult {
    Loaded(Result<WorldLoad, String>),
    Subjects(Result<Arc<Vec<Subject>>, String>),
    Density(Result<Vec<(i64, i64)>, String>),
    Slices(Result<SliceChunk, String>),
    Track(Result<Vec<TrackEntry>, String>),
    Issues(Result<Vec<IssueRow>, String>),
    State {
        id: String,
        at: i64,
        value: Result<Option<SubjectState>, String>,
    },
    Labels(Result<Vec<(i64, String)>, String>),
    /// The instant read, with its label.
    Parsed(Result<(i64, String), String>),
}

fn msg(e: WorldError) -> String {
    e.to_string()
}

/// Run one job against the project the read model answers for.
pub fn run(read: &ReadModel, job: WorldJob) -> WorldJobResult {
    match job {
        WorldJob::Load => WorldJobResult::Loaded(load(read)),
        WorldJob::Subjects(kind) => WorldJobResult::Subjects(with_view(read, |v| {
            v.subjects(kind.as_deref()).map(Arc::new)
        })),
        WorldJob::Density(k) => WorldJobResult::Density(with_view(read, |v| {
            let end = v.step(k.start, k.zoom, k.buckets as i64);
            v.density(k.start, end.saturating_sub(1), k.zoom, k.buckets)
        })),
        WorldJob::Slices { at, around } => {
            WorldJobResult::Slices(with_view(read, |v| slices(v, at, around)))
        }
        WorldJob::Track(id) => WorldJobResult::Track(with_view(read, |v| {
            v.track(&id, i64::MIN, i64::MAX, crate::tui::world::TRACK_LIMIT)
        })),
        WorldJob::Issues(at) => WorldJobResult::Issues(with_view(read, |v| {
            Ok(v.all_issues(at, crate::tui::world::ISSUE_LIMIT)?
                .into_iter()
                .map(|issue| IssueRow {
                    time: issue.instant.map(|t| v.format_time(t)),
                    issue,
                })
                .collect())
        })),
        WorldJob::State { id, at } => {
            let value = with_view(read, |v| v.state_at(&id, at));
            WorldJobResult::State { id, at, value }
        }
        WorldJob::Labels(instants) => WorldJobResult::Labels(with_view(read, |v| {
            Ok(instants.iter().map(|t| (*t, v.format_time(*t))).collect())
        })),
        WorldJob::Parse(text) => WorldJobResult::Parsed(with_view(read, |v| {
            let t = v.parse_time(&text)?;
            Ok((t, v.format_time(t)))
        })),
    }
}

/// Open the world for the UI: counts, bounds, types, and a read-only reader. A project
/// without a database yet loads as empty.
pub fn load(read: &ReadModel) -> Result<WorldLoad, String> {
    let Some(view) = read.world_reader(READER_BUSY).map_err(|e| e.to_string())? else {
        return Ok(WorldLoad::default());
    };
    let meta = meta(&view).map_err(msg)?;
    Ok(WorldLoad {
        reader: Some(WorldReader(view)),
        meta,
    })
}

pub fn meta(view: &WorldView) -> Result<WorldMeta, WorldError> {
    let types = view.subject_types()?;
    let slice_count = view.slice_count()?;
    Ok(WorldMeta {
        bounds: view.bounds()?,
        subject_count: types.iter().map(|t| t.1).sum(),
        types,
        slice_count,
    })
}

fn slices(v: &WorldView, at: i64, around: usize) -> Result<SliceChunk, WorldError> {
    let mut entries = v.timeline_before(at, around)?;
    let start_reached = entries.len() < around;
    let after = match at.checked_add(1) {
        Some(next) => v.timeline(next, i64::MAX, around)?,
        None => Vec::new(),
    };
    let end_reached = after.len() < around;
    entries.extend(after);
    Ok(SliceChunk {
        at,
        entries,
        start_reached,
        end_reached,
    })
}

/// A query on the read model's pooled view; a project without a database yet has no world
/// to ask (the load reports it as empty first, so the pane never asks then).
fn with_view<T>(
    read: &ReadModel,
    f: impl FnOnce(&WorldView) -> Result<T, WorldError>,
) -> Result<T, String> {
    read.world(f)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "the project has no database yet".to_string())
}

/// The world tables' overview (counts by kind), read on the blocking pool through the read
/// model (a project without a database yet: an error saying so).
pub fn overview(read: &ReadModel) -> Result<crate::engine::read::WorldOverview, String> {
    if !read.has_database() {
        return Err(format!("{} does not exist yet", read.database().display()));
    }
    read.world_overview().map_err(|e| e.to_string())
}
