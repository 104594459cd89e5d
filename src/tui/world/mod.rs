//! The World pane's model: the timeline of slices in calendar time around a cursor instant
//! (zoomed by year, month, day or hour, with a density strip of slice counts per bucket), the
//! subjects filtered by type, and for the selected subject its state at the cursor, its track,
//! the diff from a marked instant A to the cursor, and every subject's issues at the cursor.
//!
//! Every query runs off the UI task ([`jobs`]): the load, subject lists, bucket counts, the
//! slices around the cursor, tracks, the issue scan and the selected subject's states (at the
//! cursor and at A), each result tagged by its ticket so a stale one is dropped; the UI task
//! keeps only the calendar (a [`WorldReader`]) for cursor steps and labels, and leaves a
//! script calendar's labels and readings to jobs too ([`Labels`]). Each [`Slot`] keeps the last answer and
//! at most one job in flight, and `sync` asks for what the current cursor, zoom, filter and
//! tab need once the job in flight is back (so fast scrubbing never piles up work).

pub mod commands;
pub mod jobs;
pub mod overlay;
mod update;
pub mod view;

use std::sync::Arc;

use crate::tui::action::Ticket;
use crate::world::calendar::Zoom;
use crate::world::issues::Issue;
use crate::world::query::{AttrDiff, TimelineEntry, TrackEntry, WorldView};
use crate::world::store::{Subject, SubjectState};

/// Slices loaded on each side of the cursor per job.
pub const AROUND: usize = 200;
/// Slices the timeline shows at most on each side of the cursor (reload when fewer are known).
pub const NEED: usize = 12;
/// Most slices in a track, most issues listed.
pub const TRACK_LIMIT: usize = 1000;
pub const ISSUE_LIMIT: usize = 200;

/// The project's world, opened read-only for the UI task's state queries.
pub struct WorldReader(pub WorldView);

impl std::fmt::Debug for WorldReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WorldReader")
    }
}

/// Counts and bounds read by the load job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorldMeta {
    /// First and last slice instants.
    pub bounds: Option<(i64, i64)>,
    /// Subject types with their counts (schema types included at 0).
    pub types: Vec<(String, i64)>,
    pub subject_count: i64,
    pub slice_count: i64,
}

impl WorldMeta {
    pub fn is_empty(&self) -> bool {
        self.slice_count == 0 && self.subject_count == 0
    }
}

/// What the load job delivers. No reader: the project has no database yet.
#[derive(Debug, Default)]
pub struct WorldLoad {
    pub reader: Option<WorldReader>,
    pub meta: WorldMeta,
}

/// The strip's window: `buckets` zoom units from `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DensityKey {
    pub start: i64,
    pub zoom: Zoom,
    pub buckets: usize,
}

/// Slices around an instant: all of them between the first and last entry, ascending.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SliceChunk {
    pub at: i64,
    pub entries: Vec<TimelineEntry>,
    /// No slice before the first entry / after the last.
    pub start_reached: bool,
    pub end_reached: bool,
}

impl SliceChunk {
    /// Index of the first entry after `t`.
    pub fn split(&self, t: i64) -> usize {
        self.entries.partition_point(|e| e.instant <= t)
    }

    /// Does it hold the `need` slices on each side of `t` (or all there are)?
    pub fn covers(&self, t: i64, need: usize) -> bool {
        let i = self.split(t);
        (i >= need || self.start_reached) && (self.entries.len() - i >= need || self.end_reached)
    }
}

/// An issue with its instant in the project calendar.
#[derive(Clone, Debug, PartialEq)]
pub struct IssueRow {
    pub issue: Issue,
    pub time: Option<String>,
}

/// The right-hand view under the timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WorldTab {
    #[default]
    State,
    Track,
    Diff,
    Issues,
}

impl WorldTab {
    pub const ALL: [WorldTab; 4] = [
        WorldTab::State,
        WorldTab::Track,
        WorldTab::Diff,
        WorldTab::Issues,
    ];

    pub fn label(self) -> &'static str {
        match self {
            WorldTab::State => "State",
            WorldTab::Track => "Track",
            WorldTab::Diff => "Diff A→⌖",
            WorldTab::Issues => "Issues",
        }
    }
}

/// Data a background job fills in: the last answer and the key it answers, at most one job
/// in flight.
#[derive(Clone, Debug)]
pub struct Slot<K, V> {
    pub key: Option<K>,
    pub data: Option<V>,
    pub error: Option<String>,
    /// False after the world changed: ask again even for the same key.
    pub fresh: bool,
    pub in_flight: Option<(Ticket, K)>,
}

impl<K, V> Default for Slot<K, V> {
    fn default() -> Self {
        Slot {
            key: None,
            data: None,
            error: None,
            fresh: false,
            in_flight: None,
        }
    }
}

impl<K: Clone + PartialEq, V> Slot<K, V> {
    /// Must a job start for `want` now? (Not while another is in flight: its answer comes
    /// first, then the caller asks again.)
    pub fn needs(&self, want: &K) -> bool {
        self.in_flight.is_none() && (self.key.as_ref() != Some(want) || !self.fresh)
    }

    /// The answer for `want`, if that is what the slot holds.
    pub fn get(&self, want: &K) -> Option<&V> {
        (self.key.as_ref() == Some(want))
            .then_some(self.data.as_ref())
            .flatten()
    }

    pub fn launched(&mut self, ticket: Ticket, key: K) {
        self.in_flight = Some((ticket, key));
    }

    /// Store a job's answer; false (and nothing changes) if the ticket is not the one in flight.
    pub fn arrive(&mut self, ticket: Ticket, result: Result<V, String>) -> bool {
        match self.in_flight.take() {
            Some((t, key)) if t == ticket => {
                self.key = Some(key);
                self.fresh = true;
                match result {
                    Ok(v) => {
                        self.data = Some(v);
                        self.error = None;
                    }
                    Err(e) => self.error = Some(e),
                }
                true
            }
            other => {
                self.in_flight = other;
                false
            }
        }
    }

    /// The world changed: keep showing the answer, ask again, drop the job in flight.
    pub fn invalidate(&mut self) {
        self.fresh = false;
        self.in_flight = None;
    }
}

/// A value for a key (a state from a job, or the diff computed from two of them).
#[derive(Clone, Debug)]
pub struct Computed<K, V> {
    pub key: K,
    pub value: Result<V, String>,
}

/// The strip's buckets and labels, computed when the window moves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Window {
    pub key: Option<DensityKey>,
    /// Start of each bucket (and the end of the last one).
    pub starts: Vec<i64>,
    pub first_label: String,
    pub last_label: String,
}

impl Window {
    /// The bucket holding `t`, if it is in the window.
    pub fn bucket_of(&self, t: i64) -> Option<usize> {
        let i = self.starts.partition_point(|s| *s <= t);
        (i > 0 && i < self.starts.len()).then(|| i - 1)
    }
}

pub struct WorldState {
    pub reader: Option<WorldReader>,
    pub meta: Option<WorldMeta>,
    pub error: Option<String>,
    pub loading: Option<Ticket>,
    /// An agent wrote the world since the last load (reloaded when the pane is focused).
    pub stale: bool,
    pub cursor: i64,
    /// The cursor in the project calendar (formatted when it moves).
    pub cursor_label: String,
    pub zoom: Zoom,
    /// Instant A of the diff, with its label.
    pub mark: Option<(i64, String)>,
    /// Subject type shown (`None`: all).
    pub filter: Option<String>,
    pub tab: WorldTab,
    pub selected: usize,
    pub offset: usize,
    /// The selected subject's id, kept across reloads of the list.
    pub selected_id: Option<String>,
    pub window: Window,
    pub subjects: Slot<Option<String>, Arc<Vec<Subject>>>,
    pub density: Slot<DensityKey, Vec<(i64, i64)>>,
    pub slices: Slot<i64, SliceChunk>,
    pub track: Slot<String, Vec<TrackEntry>>,
    pub issues: Slot<i64, Vec<IssueRow>>,
    /// The selected subject's state at the cursor (`None` inside: no such subject).
    pub state: Option<Computed<(String, i64), Option<SubjectState>>>,
    /// Its state at A, and the A→cursor diff (Diff tab).
    pub mark_state: Option<Computed<(String, i64), Option<SubjectState>>>,
    pub diff: Option<Computed<(String, i64, i64), Vec<AttrDiff>>>,
    /// The state jobs in flight (at most one each for the cursor and for A), by ticket.
    pub state_job: Option<(Ticket, (String, i64))>,
    pub mark_job: Option<(Ticket, (String, i64))>,
    pub detail_scroll: usize,
    /// Labels a script calendar gave by job, and the labels job in flight.
    pub labels: Labels,
    /// The jump prompt's text being read by a job (script calendars), by ticket.
    pub jump_parse: Option<Ticket>,
}

/// What a label shows until a script calendar's job has formatted the instant.
pub const LABEL_PENDING: &str = "…";

/// Instants formatted by a script calendar's jobs. Built-in calendars format on the UI task
/// (plain arithmetic); a custom calendar's script may run for its whole time limit, so its
/// labels are asked for by job and drawn as [`LABEL_PENDING`] until they arrive.
#[derive(Debug, Default)]
pub struct Labels {
    known: std::collections::HashMap<i64, String>,
    pub in_flight: Option<Ticket>,
}

impl Labels {
    /// Most labels kept; the cache starts over past it (scrubbing a long timeline).
    const KEEP: usize = 512;

    pub fn get(&self, t: i64) -> Option<&String> {
        self.known.get(&t)
    }

    pub fn insert(&mut self, labels: impl IntoIterator<Item = (i64, String)>) {
        if self.known.len() > Self::KEEP {
            self.known.clear();
        }
        self.known.extend(labels);
    }

    pub fn clear(&mut self) {
        self.known.clear();
        self.in_flight = None;
    }
}

impl Default for WorldState {
    fn default() -> Self {
        WorldState {
            reader: None,
            meta: None,
            error: None,
            loading: None,
            stale: false,
            cursor: 0,
            cursor_label: String::new(),
            zoom: Zoom::Month,
            mark: None,
            filter: None,
            tab: WorldTab::State,
            selected: 0,
            offset: 0,
            selected_id: None,
            window: Window::default(),
            subjects: Slot::default(),
            density: Slot::default(),
            slices: Slot::default(),
            track: Slot::default(),
            issues: Slot::default(),
            state: None,
            mark_state: None,
            diff: None,
            state_job: None,
            mark_job: None,
            detail_scroll: 0,
            labels: Labels::default(),
            jump_parse: None,
        }
    }
}

impl WorldState {
    /// The subjects of the current filter, if loaded.
    pub fn subject_list(&self) -> Option<&Arc<Vec<Subject>>> {
        self.subjects.get(&self.filter)
    }

    pub fn selected_subject(&self) -> Option<&Subject> {
        self.subject_list().and_then(|l| l.get(self.selected))
    }

    /// The project has no world data (once loaded).
    pub fn is_empty(&self) -> bool {
        self.meta.as_ref().is_some_and(WorldMeta::is_empty)
    }

    /// The loaded chunk of slices, if any.
    pub fn chunk(&self) -> Option<&SliceChunk> {
        self.slices.data.as_ref()
    }

    /// Bucket counts for the current window, if loaded.
    pub fn counts(&self) -> Option<&Vec<(i64, i64)>> {
        self.window.key.as_ref().and_then(|k| self.density.get(k))
    }
}

pub fn zoom_label(z: Zoom) -> &'static str {
    match z {
        Zoom::Year => "year",
        Zoom::Month => "month",
        Zoom::Day => "day",
        Zoom::Hour => "hour",
    }
}

pub fn zoom_in(z: Zoom) -> Zoom {
    match z {
        Zoom::Year => Zoom::Month,
        Zoom::Month => Zoom::Day,
        Zoom::Day | Zoom::Hour => Zoom::Hour,
    }
}

pub fn zoom_out(z: Zoom) -> Zoom {
    match z {
        Zoom::Hour => Zoom::Day,
        Zoom::Day => Zoom::Month,
        Zoom::Month | Zoom::Year => Zoom::Year,
    }
}

/// A zoom that shows a timeline spanning `span` seconds in a few dozen buckets.
pub fn zoom_for_span(span: i64) -> Zoom {
    const DAY: i64 = 86_400;
    match span {
        s if s > 20 * 365 * DAY => Zoom::Year,
        s if s > 60 * DAY => Zoom::Month,
        s if s > 3 * DAY => Zoom::Day,
        _ => Zoom::Hour,
    }
}

/// A JSON value as the pane shows it: strings bare, everything else compact JSON.
pub fn show_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
