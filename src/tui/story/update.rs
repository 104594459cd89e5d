//! The Story pane's half of `AppState::update`: moving, opening and closing, switching views,
//! the status filter, jumps and search hits (revealing a node, loading its scenes first if
//! needed), the right-hand detail (one job in flight, latest selection wins), and the search.
//! The author's edits, archives and deletes are in `writes`.

use std::sync::Arc;

use crate::tui::story::data::{Parent, StoryData};

use crate::plot::ledger::NodeRef;
use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::{AppState, Pane};
use crate::tui::files::tree::window_offset;
use crate::tui::input::Overlay;
use crate::tui::story::jobs::{StoryJob, StoryJobResult};
use crate::tui::story::overlay::StoryOverlay;
use crate::tui::story::view::detail::detail_rows;
use crate::tui::story::{row_of, view_of, RightMode, RowNode, SceneList, StoryView};

impl AppState {
    fn story_page(&self) -> usize {
        self.regions().list_height(Pane::Story).max(1)
    }

    /// A command for the focused Story pane.
    pub(crate) fn story_command(&mut self, cmd: Command) -> Vec<Effect> {
        let page = self.story_page();
        let st = &mut self.story;
        let last = st.rows.len().saturating_sub(1);
        match cmd {
            Command::Down => st.selected = (st.selected + 1).min(last),
            Command::Up => st.selected = st.selected.saturating_sub(1),
            Command::PageDown => st.selected = (st.selected + page).min(last),
            Command::PageUp => st.selected = st.selected.saturating_sub(page),
            Command::Top => st.selected = 0,
            Command::Bottom => st.selected = last,
            Command::DetailDown | Command::DetailUp => {
                let max = detail_rows(self).len().saturating_sub(1);
                let d = &mut self.story.detail;
                d.scroll = if cmd == Command::DetailDown {
                    (d.scroll + 3).min(max)
                } else {
                    d.scroll.saturating_sub(3)
                };
                return Vec::new();
            }
            Command::Refresh => return self.load_story(),
            Command::Expand => return self.story_expand(),
            Command::Collapse => self.story_collapse(),
            Command::StoryToggleTree => {
                let v = match st.view {
                    StoryView::Carrier => StoryView::Causal,
                    StoryView::Causal => StoryView::Carrier,
                    _ => st.last_tree,
                };
                st.switch(v);
            }
            Command::StoryPromises | Command::StoryDecisions => {
                let v = if cmd == Command::StoryPromises {
                    StoryView::Promises
                } else {
                    StoryView::Decisions
                };
                let to = if st.view == v { st.last_tree } else { v };
                st.switch(to);
            }
            Command::StoryBrief => {
                st.right = match st.right {
                    RightMode::Detail => RightMode::Brief,
                    RightMode::Brief => RightMode::Detail,
                };
            }
            Command::StoryFilter => self.story_cycle_filter(),
            Command::StoryJumpChapter => return self.story_jump(false),
            Command::StoryJumpThread => return self.story_jump(true),
            Command::StorySearch => return self.story_open_search(),
            Command::StoryEdit => return self.story_edit(),
            Command::StoryArchive => return self.story_archive(),
            Command::StoryDelete => return self.story_delete(),
            _ => return Vec::new(),
        }
        let st = &mut self.story;
        st.offset = window_offset(st.offset, st.selected, page, st.rows.len());
        self.story_sync_detail()
    }

    /// The overview and ledgers arrived.
    pub(crate) fn story_loaded(
        &mut self,
        ticket: Ticket,
        result: Result<StoryData, String>,
    ) -> Vec<Effect> {
        if self.story.loading != Some(ticket) {
            return Vec::new();
        }
        self.story.loading = None;
        let data = match result {
            Ok(d) => d,
            Err(e) => {
                self.story.error = Some(e);
                return Vec::new();
            }
        };
        let st = &mut self.story;
        st.data = Some(Arc::new(data));
        st.error = None;
        // An open search keeps its titles (its hits point into them); the next `/` re-reads.
        st.search_stale = true;
        st.search_loading = None;
        st.detail.gen += 1;
        // Cached scenes of closed chapters/threads may be out of date: forget them.
        let open: Vec<Parent> = st.open_parents().collect();
        st.scenes.retain(|p, _| open.contains(p));
        st.rebuild();
        let mut fx = Vec::new();
        for p in open {
            fx.extend(self.story_load_scenes(p));
        }
        fx.extend(self.story_sync_detail());
        fx
    }

    fn story_load_scenes(&mut self, parent: Parent) -> Vec<Effect> {
        let t = self.ticket();
        self.story.scenes.entry(parent).or_default().loading = Some(t);
        vec![Effect::StoryJob {
            ticket: t,
            job: StoryJob::Scenes(parent),
        }]
    }

    /// A Story job finished.
    pub(crate) fn story_job_done(&mut self, ticket: Ticket, result: StoryJobResult) -> Vec<Effect> {
        match result {
            StoryJobResult::Scenes(parent, r) => self.story_scenes_loaded(ticket, parent, r),
            StoryJobResult::Detail(key, r) => {
                let d = &mut self.story.detail;
                match d.inflight {
                    Some((t, k, gen)) if t == ticket && k == key => {
                        d.inflight = None;
                        d.shown = Some((key, gen, r.map(Arc::new)));
                        self.story_sync_detail()
                    }
                    _ => Vec::new(),
                }
            }
            StoryJobResult::SearchIndex(r) => {
                if self.story.search_loading != Some(ticket) {
                    return Vec::new();
                }
                self.story.search_loading = None;
                match r {
                    Ok(items) => {
                        self.story.search_index = Some(Arc::new(items));
                        self.story.search_stale = false;
                        // Hits of the old index would point at the wrong titles.
                        if let Some(Overlay::Story(o)) = &mut self.overlay {
                            if let StoryOverlay::Search { hits, selected, .. } = o.as_mut() {
                                hits.clear();
                                *selected = 0;
                            }
                        }
                        self.story_rematch()
                    }
                    Err(e) => {
                        self.error(e);
                        Vec::new()
                    }
                }
            }
            StoryJobResult::Matched { hits, .. } => {
                self.story_matched(ticket, hits);
                Vec::new()
            }
            StoryJobResult::EditForm(node, r) => self.story_form_ready(ticket, node, r),
            StoryJobResult::Prepared(write, r) => self.story_prepared(ticket, write, r),
            StoryJobResult::Written(write, r) => self.story_written(ticket, write, r),
        }
    }

    fn story_scenes_loaded(
        &mut self,
        ticket: Ticket,
        parent: Parent,
        r: Result<Vec<crate::tui::story::data::SceneItem>, String>,
    ) -> Vec<Effect> {
        let Some(list) = self.story.scenes.get_mut(&parent) else {
            return Vec::new();
        };
        if list.loading != Some(ticket) {
            return Vec::new();
        }
        list.loading = None;
        match r {
            Ok(items) => {
                list.items = Some(Arc::new(items));
                list.error = None;
            }
            Err(e) if list.items.is_some() => self.error(format!("Scenes not reloaded: {e}")),
            Err(e) => {
                *list = SceneList {
                    error: Some(e),
                    ..SceneList::default()
                }
            }
        }
        self.story.rebuild();
        if let Some((node, p)) = self.story.reveal {
            if p == parent {
                self.story.reveal = None;
                if let Some(row) = row_of(node, Some(p)) {
                    self.story.select(row);
                }
                self.story_center();
            }
        }
        self.story_sync_detail()
    }

    /// Ask for the detail of the selection unless it is shown or already on its way.
    pub(crate) fn story_sync_detail(&mut self) -> Vec<Effect> {
        if self.focus != Pane::Story {
            return Vec::new();
        }
        let want = self.story.wanted_detail();
        let d = &mut self.story.detail;
        if want != d.want {
            d.want = want;
            d.scroll = 0;
        }
        let Some(w) = want else {
            return Vec::new();
        };
        let fresh = d
            .shown
            .as_ref()
            .is_some_and(|(k, g, _)| *k == w && *g == d.gen);
        if fresh || d.inflight.is_some() {
            return Vec::new();
        }
        let t = self.ticket();
        let d = &mut self.story.detail;
        d.inflight = Some((t, w, d.gen));
        vec![Effect::StoryJob {
            ticket: t,
            job: StoryJob::Detail(w),
        }]
    }

    fn story_expand(&mut self) -> Vec<Effect> {
        let Some(row) = self.story.selected_row() else {
            return Vec::new();
        };
        if !row.node.foldable() {
            return Vec::new();
        }
        if self.story.is_open(row.node) {
            // Already open: step into it.
            if self
                .story
                .rows
                .get(self.story.selected + 1)
                .is_some_and(|r| r.depth > row.depth)
            {
                self.story.selected += 1;
            }
            return self.story_sync_detail();
        }
        self.story.set_open(row.node, true);
        let mut fx = Vec::new();
        let parent = match row.node {
            RowNode::Chapter(c) => Some(Parent::Chapter(c)),
            RowNode::Thread(t) => Some(Parent::Thread(t)),
            _ => None,
        };
        if let Some(p) = parent {
            let have = self
                .story
                .scenes
                .get(&p)
                .is_some_and(|l| l.items.is_some() || l.loading.is_some());
            if !have {
                fx.extend(self.story_load_scenes(p));
            }
        }
        self.story.rebuild();
        fx.extend(self.story_sync_detail());
        fx
    }

    fn story_collapse(&mut self) {
        let Some(row) = self.story.selected_row() else {
            return;
        };
        if row.node.foldable() && self.story.is_open(row.node) {
            self.story.set_open(row.node, false);
            self.story.rebuild();
        } else if let Some(p) = self.story.parent_row(self.story.selected) {
            self.story.selected = p;
        }
    }

    fn story_cycle_filter(&mut self) {
        let st = &mut self.story;
        let statuses = st.view.statuses();
        let i = st.view.index();
        st.filter[i] = match st.filter[i] {
            None => statuses.first().copied(),
            Some(s) => statuses
                .iter()
                .position(|x| *x == s)
                .and_then(|p| statuses.get(p + 1))
                .copied(),
        };
        st.rebuild();
        let label = st.filter[i].unwrap_or("all");
        let shown = st.rows.len();
        self.info(format!(
            "Filter: {label} ({}) — f for the next status",
            crate::text::count(shown, "row", "rows")
        ));
    }

    /// Keep the selection a third down the page after a jump.
    fn story_center(&mut self) {
        let page = self.story_page();
        let st = &mut self.story;
        st.offset = st.selected.saturating_sub(page / 3);
    }

    /// `c` / `T`: from the selected scene to its chapter or its thread.
    fn story_jump(&mut self, to_thread: bool) -> Vec<Effect> {
        let target = self.story.selected_row().and_then(|r| match r.node {
            RowNode::Scene { parent, index, id } => {
                let s = self.story.scene(parent, index)?;
                Some((id, s.thread_id, s.chapter_id))
            }
            _ => None,
        });
        let Some((scene, thread, chapter)) = target else {
            self.info("Select a scene first: c jumps to its chapter, T to its thread.");
            return Vec::new();
        };
        if to_thread {
            return self.story_reveal(NodeRef::Thread(thread), None);
        }
        match chapter {
            Some(c) => self.story_reveal(NodeRef::Chapter(c), None),
            None => {
                self.info(format!("Scene #{scene} is not placed in a chapter yet."));
                Vec::new()
            }
        }
    }

    /// Show `node` in its view: switch views, clear a filter that hides it, open the groups
    /// above it, load its scenes list if needed, select it.
    pub(crate) fn story_reveal(
        &mut self,
        node: NodeRef,
        place: Option<(i64, Option<i64>)>,
    ) -> Vec<Effect> {
        let st = &mut self.story;
        let mut view = view_of(node, st.view);
        if let (NodeRef::Scene(_), Some((_, chapter))) = (node, place) {
            if view == StoryView::Carrier && chapter.is_none() {
                view = StoryView::Causal;
            }
        }
        if st.view != view {
            st.switch(view);
        }
        let blocker = match (node, place) {
            (NodeRef::Scene(_), Some((t, c))) => match (view, c) {
                (StoryView::Carrier, Some(c)) => NodeRef::Chapter(c),
                _ => NodeRef::Thread(t),
            },
            _ => node,
        };
        if st.filtered_out(blocker) {
            st.filter[view.index()] = None;
            self.info("The filter hid it: showing all statuses.");
        }
        let st = &mut self.story;
        let parent = st.expose(node, place);
        st.rebuild();
        let mut fx = Vec::new();
        match parent {
            Some(p) if st.scenes.get(&p).is_some_and(|l| l.items.is_some()) => {
                if let Some(r) = row_of(node, Some(p)) {
                    st.select(r);
                }
            }
            Some(p) => {
                st.reveal = Some((node, p));
                if let Some(r) = row_of(
                    match p {
                        Parent::Chapter(c) => NodeRef::Chapter(c),
                        Parent::Thread(t) => NodeRef::Thread(t),
                    },
                    None,
                ) {
                    st.select(r);
                }
                if st.scenes.get(&p).is_none_or(|l| l.loading.is_none()) {
                    fx.extend(self.story_load_scenes(p));
                }
            }
            None => {
                if let Some(r) = row_of(node, None) {
                    st.select(r);
                }
            }
        }
        self.story_center();
        fx.extend(self.story_sync_detail());
        fx
    }

    pub(crate) fn story_reveal_item(&mut self, i: usize) -> Vec<Effect> {
        let Some(item) = self
            .story
            .search_index
            .as_ref()
            .and_then(|s| s.get(i))
            .cloned()
        else {
            return Vec::new();
        };
        self.story_reveal(item.node, item.place)
    }

    fn story_open_search(&mut self) -> Vec<Effect> {
        let Some(data) = self.story.data.clone() else {
            self.info("The story is still loading.");
            return Vec::new();
        };
        self.overlay = Some(Overlay::Story(Box::new(StoryOverlay::search())));
        if self.story.search_index.is_some() && !self.story.search_stale {
            return self.story_rematch();
        }
        if self.story.search_loading.is_some() {
            return Vec::new();
        }
        let t = self.ticket();
        self.story.search_loading = Some(t);
        vec![Effect::StoryJob {
            ticket: t,
            job: StoryJob::SearchIndex(data),
        }]
    }
}
