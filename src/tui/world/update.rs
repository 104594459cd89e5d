//! The World pane's half of `update`: commands (scrub, zoom, jump, filter, mark, tabs, list
//! moves), finished jobs, and `world_sync`, which brings everything the screen needs in line
//! with the cursor, zoom, filter, selection and tab — asking the runtime's jobs for every
//! query (the subject's states included) and computing only the A→cursor diff here.

use serde_json::{Map, Value};

use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::{AppState, Pane};
use crate::tui::files::tree::window_offset;
use crate::tui::world::jobs::{WorldJob, WorldJobResult};
use crate::tui::world::view::{self, detail as world_detail};
use crate::tui::world::{
    zoom_for_span, zoom_in, zoom_label, zoom_out, Computed, DensityKey, Window, WorldLoad,
    WorldState, WorldTab, AROUND, LABEL_PENDING, NEED,
};
use crate::world::pointer;
use crate::world::query::AttrDiff;
use crate::world::store::SubjectState;

/// A subject and the instant its state is read at.
type StateKey = (String, i64);

/// Attributes that differ between two states (`None` = absent), by name.
pub fn attr_diff(a: &Map<String, Value>, b: &Map<String, Value>) -> Vec<AttrDiff> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| AttrDiff {
            attr: format!("/{}", pointer::escape(k)),
            before: a.get(k).cloned(),
            after: b.get(k).cloned(),
        })
        .collect()
}

impl WorldState {
    /// The jobs the screen needs that are neither answered nor in flight.
    fn wants(&self) -> Vec<WorldJob> {
        let mut out = Vec::new();
        if self.subjects.needs(&self.filter) {
            out.push(WorldJob::Subjects(self.filter.clone()));
        }
        if let Some(k) = self.window.key {
            if self.density.needs(&k) {
                out.push(WorldJob::Density(k));
            }
        }
        let s = &self.slices;
        let known = s.fresh
            && (s.key == Some(self.cursor)
                || s.data.as_ref().is_some_and(|c| c.covers(self.cursor, NEED)));
        if !known && s.in_flight.is_none() {
            out.push(WorldJob::Slices {
                at: self.cursor,
                around: AROUND,
            });
        }
        match (self.tab, self.selected_id.as_ref()) {
            (WorldTab::Track, Some(id)) if self.track.needs(id) => {
                out.push(WorldJob::Track(id.clone()))
            }
            (WorldTab::Issues, _) if self.issues.needs(&self.cursor) => {
                out.push(WorldJob::Issues(self.cursor))
            }
            _ => {}
        }
        if let Some(job) = self.labels_wanted() {
            out.push(job);
        }
        let (key, mkey) = self.state_keys();
        let held = |c: &Option<Computed<(String, i64), Option<SubjectState>>>,
                    k: &(String, i64)| {
            c.as_ref().is_some_and(|c| &c.key == k)
        };
        if let Some(k) = key {
            if self.state_job.is_none() && !held(&self.state, &k) {
                out.push(WorldJob::State { id: k.0, at: k.1 });
            }
        }
        if let Some(k) = mkey {
            if self.mark_job.is_none() && !held(&self.mark_state, &k) {
                out.push(WorldJob::State { id: k.0, at: k.1 });
            }
        }
        out
    }

    fn launched(&mut self, t: Ticket, job: &WorldJob) {
        match job {
            WorldJob::Load => self.loading = Some(t),
            WorldJob::Subjects(k) => self.subjects.launched(t, k.clone()),
            WorldJob::Density(k) => self.density.launched(t, *k),
            WorldJob::Slices { at, .. } => self.slices.launched(t, *at),
            WorldJob::Track(id) => self.track.launched(t, id.clone()),
            WorldJob::Issues(at) => self.issues.launched(t, *at),
            WorldJob::Labels(_) => self.labels.in_flight = Some(t),
            WorldJob::Parse(_) => self.jump_parse = Some(t),
            WorldJob::State { id, at } => {
                let key = (id.clone(), *at);
                let for_cursor = self.state_keys().0.as_ref() == Some(&key)
                    && self.state_job.is_none()
                    && self.state.as_ref().is_none_or(|c| c.key != key);
                if for_cursor {
                    self.state_job = Some((t, key));
                } else {
                    self.mark_job = Some((t, key));
                }
            }
        }
    }

    /// An instant's label: formatted here for a built-in calendar, from the labels jobs
    /// brought for a script calendar ([`LABEL_PENDING`] until one has).
    pub(crate) fn format(&self, t: i64) -> String {
        match &self.reader {
            Some(r) if !r.0.calendar_runs_script() => r.0.format_time(t),
            Some(_) => self
                .labels
                .get(t)
                .cloned()
                .unwrap_or_else(|| LABEL_PENDING.to_string()),
            None => t.to_string(),
        }
    }

    /// The labels job a script calendar needs: the cursor, mark A and the strip's ends that
    /// no job has formatted yet (none while one is in flight).
    fn labels_wanted(&self) -> Option<WorldJob> {
        let script = self
            .reader
            .as_ref()
            .is_some_and(|r| r.0.calendar_runs_script());
        if !script || self.labels.in_flight.is_some() {
            return None;
        }
        let mut want = vec![self.cursor];
        want.extend(self.mark.as_ref().map(|(a, _)| *a));
        if let (Some(first), Some(last)) = (self.window.starts.first(), self.window_last()) {
            want.extend([*first, last]);
        }
        want.retain(|t| self.labels.get(*t).is_none());
        want.sort_unstable();
        want.dedup();
        (!want.is_empty()).then_some(WorldJob::Labels(want))
    }

    /// The start of the strip's last bucket (its right-hand label).
    fn window_last(&self) -> Option<i64> {
        let n = self.window.key?.buckets;
        self.window.starts.get(n.saturating_sub(1)).copied()
    }

    /// Labels arrived: redraw every label drawn from them.
    fn relabel(&mut self) {
        self.cursor_label = self.format(self.cursor);
        if let Some((a, _)) = self.mark {
            self.mark = Some((a, self.format(a)));
        }
        if let Some(first) = self.window.starts.first().copied() {
            self.window.first_label = self.format(first);
        }
        if let Some(last) = self.window_last() {
            self.window.last_label = self.format(last);
        }
    }

    fn set_cursor(&mut self, t: i64) {
        if t != self.cursor || self.cursor_label.is_empty() {
            self.cursor = t;
            self.cursor_label = self.format(t);
        }
    }

    /// Keep the selection on the same subject when the list changes.
    fn reselect(&mut self) {
        let Some(list) = self.subject_list().cloned() else {
            return;
        };
        let found = self.selected_id.as_ref().and_then(|id| {
            if list.get(self.selected).is_some_and(|s| &s.id == id) {
                return Some(self.selected);
            }
            list.iter().position(|s| &s.id == id)
        });
        let len = list.len();
        self.selected = found.unwrap_or(self.selected.min(len.saturating_sub(1)));
        self.selected_id = list.get(self.selected).map(|s| s.id.clone());
    }

    /// Move the strip's window if the cursor left it or the zoom or width changed.
    fn place_window(&mut self, n: usize) {
        let Some(r) = &self.reader else { return };
        let v = &r.0;
        let fits = self
            .window
            .key
            .is_some_and(|k| k.zoom == self.zoom && k.buckets == n);
        if fits && self.window.bucket_of(self.cursor).is_some() {
            return;
        }
        let z = self.zoom;
        let floor = v.floor(self.cursor, z);
        // The whole timeline when it fits, else the cursor in the middle.
        let mut start = v.step(floor, z, -((n / 2) as i64));
        if let Some((a, b)) = self.meta.as_ref().and_then(|m| m.bounds) {
            let first = v.floor(a, z);
            let end = v.step(first, z, n as i64);
            if end > b && self.cursor >= first && self.cursor < end {
                start = first;
            }
        }
        let mut starts = Vec::with_capacity(n + 1);
        let mut t = start;
        starts.push(t);
        for _ in 0..n {
            t = v.step(t, z, 1);
            starts.push(t);
        }
        self.window = Window {
            key: Some(DensityKey {
                start,
                zoom: z,
                buckets: n,
            }),
            first_label: String::new(),
            last_label: String::new(),
            starts,
        };
        self.window.first_label = self.format(start);
        self.window.last_label = self
            .window_last()
            .map_or_else(String::new, |t| self.format(t));
    }

    /// The (subject, instant) states the screen needs: at the cursor, and at A on the Diff tab.
    fn state_keys(&self) -> (Option<StateKey>, Option<StateKey>) {
        let Some(id) = self.selected_id.clone() else {
            return (None, None);
        };
        let mark = match &self.mark {
            Some((a, _)) if self.tab == WorldTab::Diff => Some((id.clone(), *a)),
            _ => None,
        };
        (Some((id, self.cursor)), mark)
    }

    /// Drop what no longer applies, and compute the A→cursor diff from the two states once
    /// both have arrived (the states themselves are read by jobs, never on the UI task).
    fn compute(&mut self) {
        if self.selected_id.is_none() {
            self.state = None;
            return;
        }
        if self.mark.is_none() {
            self.mark_state = None;
            self.diff = None;
            return;
        }
        let (Some(key), Some(mkey)) = self.state_keys() else {
            return;
        };
        let dkey = (key.0.clone(), mkey.1, key.1);
        if self.diff.as_ref().map(|c| &c.key) == Some(&dkey) {
            return;
        }
        let before = self.mark_state.as_ref().filter(|c| c.key == mkey);
        let after = self.state.as_ref().filter(|c| c.key == key);
        let (Some(before), Some(after)) = (before, after) else {
            return;
        };
        let value = match (&before.value, &after.value) {
            (Ok(Some(x)), Ok(Some(y))) => Ok(attr_diff(&x.attrs, &y.attrs)),
            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
            _ => Err(format!("there is no subject {:?}", dkey.0)),
        };
        self.diff = Some(Computed { key: dkey, value });
    }

    /// A state job came back: keep it only if its ticket is the one in flight.
    fn state_arrived(
        &mut self,
        ticket: Ticket,
        key: (String, i64),
        value: Result<Option<SubjectState>, String>,
    ) -> bool {
        if self.state_job.as_ref() == Some(&(ticket, key.clone())) {
            self.state_job = None;
            self.state = Some(Computed { key, value });
            true
        } else if self.mark_job.as_ref() == Some(&(ticket, key.clone())) {
            self.mark_job = None;
            self.mark_state = Some(Computed { key, value });
            true
        } else {
            false
        }
    }

    fn invalidate_all(&mut self) {
        self.subjects.invalidate();
        self.density.invalidate();
        self.slices.invalidate();
        self.track.invalidate();
        self.issues.invalidate();
        self.state = None;
        self.mark_state = None;
        self.diff = None;
        self.state_job = None;
        self.mark_job = None;
        self.window.key = None;
    }

    fn loaded(&mut self, load: WorldLoad) {
        let first = self.meta.is_none();
        self.reader = load.reader;
        if first {
            if let Some((a, b)) = load.meta.bounds {
                self.cursor = b;
                self.zoom = zoom_for_span(b.saturating_sub(a));
            }
        }
        self.meta = Some(load.meta);
        self.error = None;
        self.invalidate_all();
        // The calendar may have changed with the reload.
        self.labels.clear();
        self.cursor_label = self.format(self.cursor);
        if let Some((a, _)) = self.mark {
            self.mark = Some((a, self.format(a)));
        }
    }
}

impl AppState {
    /// Reload the world's counts and reader (then everything shown).
    pub(crate) fn world_reload(&mut self) -> Vec<Effect> {
        let ticket = self.ticket();
        self.world.loading = Some(ticket);
        self.world.stale = false;
        vec![Effect::WorldJob {
            ticket,
            job: WorldJob::Load,
        }]
    }

    /// The pane got the focus.
    pub(crate) fn world_focused(&mut self) -> Vec<Effect> {
        if self.world.stale && self.world.loading.is_none() {
            return self.world_reload();
        }
        self.world_sync()
    }

    /// Once a second: reload after agent writes, retry a state the database was too busy for.
    pub(crate) fn world_tick(&mut self) -> Vec<Effect> {
        if self.focus != Pane::World {
            return Vec::new();
        }
        if self.world.stale && self.world.loading.is_none() {
            self.redraw = true;
            return self.world_reload();
        }
        if self.world.state.as_ref().is_some_and(|c| c.value.is_err()) {
            self.world.state = None;
            self.redraw = true;
        }
        self.world_sync()
    }

    /// Ask for what the screen needs (the selected subject's states included) and compute the
    /// A→cursor diff from states already here.
    pub(crate) fn world_sync(&mut self) -> Vec<Effect> {
        let w = &self.world;
        if self.focus != Pane::World || w.reader.is_none() || w.meta.is_none() || w.is_empty() {
            return Vec::new();
        }
        let n = view::strip_width(self).max(1);
        self.world.place_window(n);
        self.world.reselect();
        self.world.compute();
        let mut fx = Vec::new();
        for job in self.world.wants() {
            let t = self.ticket();
            self.world.launched(t, &job);
            fx.push(Effect::WorldJob { ticket: t, job });
        }
        fx
    }

    pub(crate) fn world_job_done(&mut self, ticket: Ticket, result: WorldJobResult) -> Vec<Effect> {
        let w = &mut self.world;
        match result {
            WorldJobResult::Loaded(r) => {
                if w.loading != Some(ticket) {
                    return Vec::new();
                }
                w.loading = None;
                match r {
                    Ok(load) => w.loaded(load),
                    Err(e) => w.error = Some(e),
                }
            }
            WorldJobResult::Subjects(r) => {
                if !w.subjects.arrive(ticket, r) {
                    return Vec::new();
                }
                w.reselect();
            }
            WorldJobResult::Density(r) => {
                if !w.density.arrive(ticket, r) {
                    return Vec::new();
                }
            }
            WorldJobResult::Slices(r) => {
                if !w.slices.arrive(ticket, r) {
                    return Vec::new();
                }
            }
            WorldJobResult::Track(r) => {
                if !w.track.arrive(ticket, r) {
                    return Vec::new();
                }
                self.world_anchor_track();
            }
            WorldJobResult::Issues(r) => {
                if !w.issues.arrive(ticket, r) {
                    return Vec::new();
                }
            }
            WorldJobResult::State { id, at, value } => {
                if !w.state_arrived(ticket, (id, at), value) {
                    return Vec::new();
                }
            }
            WorldJobResult::Labels(r) => {
                if w.labels.in_flight != Some(ticket) {
                    return Vec::new();
                }
                w.labels.in_flight = None;
                match r {
                    Ok(labels) => w.labels.insert(labels),
                    // The database went away meanwhile: the labels stay pending until the
                    // next load, rather than asking again on every frame.
                    Err(e) => w.error = Some(e),
                }
                w.relabel();
            }
            WorldJobResult::Parsed(r) => {
                if w.jump_parse != Some(ticket) {
                    return Vec::new();
                }
                w.jump_parse = None;
                let r = r.map(|(t, label)| {
                    w.labels.insert([(t, label)]);
                    t
                });
                return self.world_jump_read(r);
            }
        }
        self.world_sync()
    }

    /// Scroll the track so the cursor's slice is near the top.
    fn world_anchor_track(&mut self) {
        if self.world.tab == WorldTab::Track {
            let anchor = world_detail::track_anchor(&self.world);
            let h = view::tab_height(self);
            self.world.detail_scroll = if anchor + 2 < h {
                0
            } else {
                anchor.saturating_sub(h / 3)
            };
        }
    }

    pub(crate) fn world_move_cursor(&mut self, t: i64) {
        self.world.set_cursor(t);
        self.world_anchor_track();
    }

    pub(crate) fn world_command(&mut self, cmd: Command) -> Vec<Effect> {
        if cmd == Command::Refresh {
            return self.world_reload();
        }
        if cmd == Command::WorldFind {
            return self.world_open_find();
        }
        if self.world.reader.is_none() || self.world.is_empty() {
            return Vec::new();
        }
        let page = self
            .regions()
            .list_height(Pane::World)
            .saturating_sub(1)
            .max(1);
        let len = self.world.subject_list().map(|l| l.len()).unwrap_or(0);
        let step = |app: &AppState, n: i64| {
            let w = &app.world;
            w.reader
                .as_ref()
                .map(|r| r.0.step(w.cursor, w.zoom, n))
                .unwrap_or(w.cursor)
        };
        let before = self.world.selected;
        match cmd {
            Command::Down => self.world.selected = (before + 1).min(len.saturating_sub(1)),
            Command::Up => self.world.selected = before.saturating_sub(1),
            Command::PageDown => self.world.selected = (before + page).min(len.saturating_sub(1)),
            Command::PageUp => self.world.selected = before.saturating_sub(page),
            Command::Top => self.world.selected = 0,
            Command::Bottom => self.world.selected = len.saturating_sub(1),
            Command::DetailDown | Command::DetailUp => {
                let max = world_detail::tab_rows(self, view::detail_width(self))
                    .len()
                    .saturating_sub(1);
                let s = &mut self.world.detail_scroll;
                *s = if cmd == Command::DetailDown {
                    (*s + 3).min(max)
                } else {
                    s.saturating_sub(3).min(max)
                };
            }
            Command::WorldBack => self.world_move_cursor(step(self, -1)),
            Command::WorldForward => self.world_move_cursor(step(self, 1)),
            Command::WorldPrevSlice | Command::WorldNextSlice => {
                self.world_slice_step(cmd == Command::WorldNextSlice)
            }
            Command::WorldFirst | Command::WorldLast => {
                if let Some((a, b)) = self.world.meta.as_ref().and_then(|m| m.bounds) {
                    self.world_move_cursor(if cmd == Command::WorldFirst { a } else { b });
                }
            }
            Command::WorldZoomIn | Command::WorldZoomOut => {
                let z = self.world.zoom;
                let nz = if cmd == Command::WorldZoomIn {
                    zoom_in(z)
                } else {
                    zoom_out(z)
                };
                if nz == z {
                    self.info(format!("Already zoomed to the {}.", zoom_label(z)));
                }
                self.world.zoom = nz;
            }
            Command::WorldJump => self.world_open_jump(),
            Command::WorldFilter => self.world_next_filter(),
            Command::WorldMark => {
                let w = &mut self.world;
                if w.mark.as_ref().is_some_and(|m| m.0 == w.cursor) {
                    w.mark = None;
                    self.info("Mark A cleared.");
                } else {
                    w.mark = Some((w.cursor, w.cursor_label.clone()));
                    w.tab = WorldTab::Diff;
                    w.detail_scroll = 0;
                    let label = w.cursor_label.clone();
                    self.info(format!(
                        "A = {label}. Move the cursor: the Diff shows what changed from A."
                    ));
                }
            }
            Command::WorldState
            | Command::WorldTrack
            | Command::WorldDiff
            | Command::WorldIssues => {
                self.world.tab = match cmd {
                    Command::WorldTrack => WorldTab::Track,
                    Command::WorldDiff => WorldTab::Diff,
                    Command::WorldIssues => WorldTab::Issues,
                    _ => WorldTab::State,
                };
                self.world.detail_scroll = 0;
                self.world_anchor_track();
            }
            _ => {}
        }
        if self.world.selected != before {
            let w = &mut self.world;
            w.selected_id = w
                .subject_list()
                .and_then(|l| l.get(w.selected))
                .map(|s| s.id.clone());
            if w.tab != WorldTab::Issues {
                w.detail_scroll = 0;
            }
            self.world_anchor_track();
        }
        let w = &mut self.world;
        w.offset = window_offset(w.offset, w.selected, page, len);
        self.world_sync()
    }

    /// Select the `i`th listed subject (the finder's choice) and ask for its state.
    pub(crate) fn world_select_subject(&mut self, i: usize) -> Vec<Effect> {
        let page = self
            .regions()
            .list_height(Pane::World)
            .saturating_sub(1)
            .max(1);
        let w = &mut self.world;
        let Some(list) = w.subject_list().cloned() else {
            return Vec::new();
        };
        let Some(s) = list.get(i) else {
            return Vec::new();
        };
        if w.selected != i {
            w.selected = i;
            w.selected_id = Some(s.id.clone());
            if w.tab != WorldTab::Issues {
                w.detail_scroll = 0;
            }
            self.world_anchor_track();
        }
        let w = &mut self.world;
        w.offset = window_offset(w.offset, w.selected, page, list.len());
        self.world_sync()
    }

    /// Move the cursor to the previous or next slice (known from the slices around it).
    fn world_slice_step(&mut self, next: bool) {
        let w = &self.world;
        let Some(c) = w.chunk() else {
            self.info("The timeline is still loading.");
            return;
        };
        let i = c.split(w.cursor);
        let target = if next {
            c.entries.get(i).map(|e| e.instant)
        } else {
            // The slice at the cursor itself does not count as "previous".
            let j = c.entries.partition_point(|e| e.instant < w.cursor);
            j.checked_sub(1)
                .and_then(|j| c.entries.get(j))
                .map(|e| e.instant)
        };
        let known = c.covers(w.cursor, 1);
        match target {
            Some(t) => self.world_move_cursor(t),
            None if known && next => self.info("No slice after the cursor."),
            None if known => self.info("No slice before the cursor."),
            None => self.info("The timeline is still loading."),
        }
    }

    /// Show the next subject type (types with subjects only), then all.
    fn world_next_filter(&mut self) {
        let types: Vec<String> = self
            .world
            .meta
            .as_ref()
            .map(|m| {
                m.types
                    .iter()
                    .filter(|t| t.1 > 0)
                    .map(|t| t.0.clone())
                    .collect()
            })
            .unwrap_or_default();
        let w = &mut self.world;
        w.filter = match &w.filter {
            None => types.first().cloned(),
            Some(f) => types
                .iter()
                .position(|t| t == f)
                .and_then(|i| types.get(i + 1).cloned()),
        };
        w.offset = 0;
        w.selected = 0;
        let label = w.filter.clone().unwrap_or_else(|| "all types".into());
        self.info(format!("Subjects: {label}"));
    }

    /// Subjects loaded for the filter (tests and benches).
    pub fn world_subject_ids(&self) -> Vec<String> {
        self.world
            .subject_list()
            .map(|l| l.iter().map(|s| s.id.clone()).collect())
            .unwrap_or_default()
    }
}
