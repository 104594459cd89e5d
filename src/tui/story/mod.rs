//! The Story pane's model. Four views of the plot: the carrier tree (acts → chapters →
//! scenes, each chapter with its writer-brief badge), the causal tree (phases → threads →
//! scenes), the promise ledger and the decision ledger; on the right the selected node's
//! detail or its chapter's writer brief.
//!
//! Everything heavy happens off the UI task (see [`jobs`]): the overview loads once per
//! change, scenes load when their chapter or thread is opened, the detail of the selection
//! loads with at most one job in flight (the latest selection wins). The visible rows are a
//! flat list rebuilt only when the data, an open/close or the filter changes, so drawing
//! touches just the rows on screen even with 100k scenes open.

pub mod commands;
pub mod data;
pub mod edit;
pub mod jobs;
pub mod overlay;
mod update;
pub mod view;
mod writes;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::plot::ledger::NodeRef;
use crate::plot::model::{DECISION_STATUSES, PROMISE_STATUSES, THREAD_STATUSES};
use crate::tui::action::Ticket;
use data::{Parent, SceneItem, StoryData, BRIEF_STATUSES};
use jobs::{DetailDoc, DetailKey, SearchItem};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StoryView {
    /// Acts → chapters → scenes.
    #[default]
    Carrier,
    /// Phases → threads → scenes.
    Causal,
    Promises,
    Decisions,
}

impl StoryView {
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn label(self) -> &'static str {
        match self {
            StoryView::Carrier => "carrier",
            StoryView::Causal => "causal",
            StoryView::Promises => "promises",
            StoryView::Decisions => "decisions",
        }
    }

    /// The statuses the filter cycles through in this view.
    pub fn statuses(self) -> Vec<&'static str> {
        match self {
            StoryView::Carrier => BRIEF_STATUSES.iter().map(|s| s.as_str()).collect(),
            StoryView::Causal => THREAD_STATUSES.to_vec(),
            StoryView::Promises => PROMISE_STATUSES.to_vec(),
            StoryView::Decisions => DECISION_STATUSES.to_vec(),
        }
    }
}

/// What the right-hand view shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RightMode {
    #[default]
    Detail,
    Brief,
}

/// One row of the left-hand list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowNode {
    Act(i64),
    /// "Chapters without an act".
    NoAct,
    Chapter(i64),
    Phase(i64),
    /// "Threads without a phase".
    NoPhase,
    Thread(i64),
    /// `index` into the parent's loaded scene list.
    Scene {
        parent: Parent,
        index: u32,
        id: i64,
    },
    ScenesLoading(Parent),
    ScenesError(Parent),
    NoScenes(Parent),
    Promise(i64),
    Decision(i64),
}

impl RowNode {
    /// The plot record this row is about (group and placeholder rows have none).
    pub fn node(self) -> Option<NodeRef> {
        Some(match self {
            RowNode::Act(id) => NodeRef::Act(id),
            RowNode::Chapter(id) => NodeRef::Chapter(id),
            RowNode::Phase(id) => NodeRef::Phase(id),
            RowNode::Thread(id) => NodeRef::Thread(id),
            RowNode::Scene { id, .. } => NodeRef::Scene(id),
            RowNode::Promise(id) => NodeRef::Promise(id),
            RowNode::Decision(id) => NodeRef::Decision(id),
            _ => return None,
        })
    }

    /// Can it be opened and closed?
    pub fn foldable(self) -> bool {
        matches!(
            self,
            RowNode::Act(_)
                | RowNode::NoAct
                | RowNode::Chapter(_)
                | RowNode::Phase(_)
                | RowNode::NoPhase
                | RowNode::Thread(_)
        )
    }

    fn same(self, other: RowNode) -> bool {
        match (self, other) {
            (
                RowNode::Scene { parent, id, .. },
                RowNode::Scene {
                    parent: p2, id: i2, ..
                },
            ) => parent == p2 && id == i2,
            _ => self == other,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub node: RowNode,
    pub depth: u8,
}

/// A chapter's or thread's scenes.
#[derive(Clone, Debug, Default)]
pub struct SceneList {
    pub items: Option<Arc<Vec<SceneItem>>>,
    pub loading: Option<Ticket>,
    pub error: Option<String>,
}

/// The right-hand view: what is wanted, what is in flight, what arrived.
#[derive(Clone, Debug, Default)]
pub struct DetailState {
    pub want: Option<DetailKey>,
    /// (ticket, key, generation it was asked in).
    pub inflight: Option<(Ticket, DetailKey, u64)>,
    pub shown: Option<(DetailKey, u64, Result<Arc<DetailDoc>, String>)>,
    /// Bumped by every reload and write: documents of older generations are fetched again.
    pub gen: u64,
    pub scroll: usize,
}

#[derive(Clone, Debug, Default)]
pub struct StoryState {
    pub data: Option<Arc<StoryData>>,
    pub error: Option<String>,
    pub loading: Option<Ticket>,
    /// Something changed since the last load (reloaded when the pane is visible).
    pub stale: bool,
    pub view: StoryView,
    /// The tree `t` returns to from a ledger.
    pub last_tree: StoryView,
    pub right: RightMode,
    /// Per view: the status shown, `None` for all.
    pub filter: [Option<&'static str>; 4],
    /// Per view: the row selected when it was left.
    memory: [Option<RowNode>; 4],
    /// Closed acts, phases and groups (open by default).
    closed: HashSet<RowNode>,
    /// Open chapters and threads (closed by default).
    open: HashSet<Parent>,
    pub scenes: HashMap<Parent, SceneList>,
    pub rows: Vec<Row>,
    pub selected: usize,
    pub offset: usize,
    pub detail: DetailState,
    /// A node to select once its scenes have loaded (a jump or a search hit).
    pub reveal: Option<(NodeRef, Parent)>,
    pub search_index: Option<Arc<Vec<SearchItem>>>,
    pub search_loading: Option<Ticket>,
    /// The story reloaded since the index was built: rebuild it on the next search.
    pub search_stale: bool,
    /// The write in flight (its result updates the status bar and the data).
    pub writing: Option<Ticket>,
    /// The edit form being read.
    pub form_ticket: Option<Ticket>,
    /// The preview (dry run or cascade) being computed for a confirmation.
    pub preparing: Option<Ticket>,
}

impl StoryState {
    /// The detail document for what the selection wants, if it has arrived (any generation).
    pub fn shown_detail(&self) -> Option<&Result<Arc<DetailDoc>, String>> {
        let want = self.detail.want?;
        match &self.detail.shown {
            Some((k, _, doc)) if *k == want => Some(doc),
            _ => None,
        }
    }

    pub fn selected_row(&self) -> Option<Row> {
        self.rows.get(self.selected).copied()
    }

    pub fn is_open(&self, node: RowNode) -> bool {
        match node {
            RowNode::Chapter(c) => self.open.contains(&Parent::Chapter(c)),
            RowNode::Thread(t) => self.open.contains(&Parent::Thread(t)),
            n if n.foldable() => !self.closed.contains(&n),
            _ => false,
        }
    }

    fn set_open(&mut self, node: RowNode, open: bool) {
        match node {
            RowNode::Chapter(c) => set(&mut self.open, Parent::Chapter(c), open),
            RowNode::Thread(t) => set(&mut self.open, Parent::Thread(t), open),
            n if n.foldable() => set(&mut self.closed, n, !open),
            _ => {}
        }
    }

    pub fn open_parents(&self) -> impl Iterator<Item = Parent> + '_ {
        self.open.iter().copied()
    }

    pub fn filter(&self) -> Option<&'static str> {
        self.filter[self.view.index()]
    }

    /// The scene at a row.
    pub fn scene(&self, parent: Parent, index: u32) -> Option<&SceneItem> {
        self.scenes
            .get(&parent)?
            .items
            .as_ref()?
            .get(index as usize)
    }

    /// Rebuild the visible rows for the current view, keeping the selected node if it is
    /// still there.
    pub fn rebuild(&mut self) {
        let keep = self.selected_row().map(|r| r.node);
        self.rows = self.build_rows();
        match keep {
            Some(k) => {
                if !self.select(k) {
                    self.selected = self.selected.min(self.rows.len().saturating_sub(1));
                }
            }
            None => self.selected = 0,
        }
    }

    /// Select the row showing `node`; false if it is not visible.
    pub fn select(&mut self, node: RowNode) -> bool {
        match self.rows.iter().position(|r| r.node.same(node)) {
            Some(i) => {
                self.selected = i;
                true
            }
            None => false,
        }
    }

    /// Switch the view, remembering where the selection was.
    pub fn switch(&mut self, view: StoryView) {
        if let Some(r) = self.selected_row() {
            self.memory[self.view.index()] = Some(r.node);
        }
        if matches!(view, StoryView::Carrier | StoryView::Causal) {
            self.last_tree = view;
        }
        self.view = view;
        self.rows = self.build_rows();
        self.selected = 0;
        self.offset = 0;
        if let Some(m) = self.memory[view.index()] {
            self.select(m);
        }
    }

    fn build_rows(&self) -> Vec<Row> {
        let Some(d) = self.data.clone() else {
            return Vec::new();
        };
        let mut rows = Vec::new();
        let f = self.filter();
        let push = |rows: &mut Vec<Row>, node, depth| rows.push(Row { node, depth });
        match self.view {
            StoryView::Carrier => {
                let keep = |c: &&crate::plot::ledger::ChapterStatusRow| {
                    f.is_none_or(|s| c.status.as_str() == s)
                };
                let groups = d
                    .overview
                    .acts
                    .iter()
                    .map(|(a, ch)| (RowNode::Act(a.id), ch))
                    .chain(
                        (!d.overview.ungrouped_chapters.is_empty())
                            .then_some((RowNode::NoAct, &d.overview.ungrouped_chapters)),
                    );
                for (group, chapters) in groups {
                    let shown: Vec<_> = chapters.iter().filter(keep).collect();
                    if f.is_some() && shown.is_empty() {
                        continue;
                    }
                    push(&mut rows, group, 0);
                    if !self.is_open(group) {
                        continue;
                    }
                    for c in shown {
                        let node = RowNode::Chapter(c.chapter.id);
                        push(&mut rows, node, 1);
                        if self.is_open(node) {
                            self.push_scenes(&mut rows, Parent::Chapter(c.chapter.id), 2);
                        }
                    }
                }
            }
            StoryView::Causal => {
                let keep =
                    |t: &&crate::plot::ledger::ThreadRow| f.is_none_or(|s| t.thread.status == s);
                let groups = d
                    .overview
                    .phases
                    .iter()
                    .map(|(p, th)| (RowNode::Phase(p.id), th))
                    .chain(
                        (!d.overview.ungrouped_threads.is_empty())
                            .then_some((RowNode::NoPhase, &d.overview.ungrouped_threads)),
                    );
                for (group, threads) in groups {
                    let shown: Vec<_> = threads.iter().filter(keep).collect();
                    if f.is_some() && shown.is_empty() {
                        continue;
                    }
                    push(&mut rows, group, 0);
                    if !self.is_open(group) {
                        continue;
                    }
                    for t in shown {
                        let node = RowNode::Thread(t.thread.id);
                        push(&mut rows, node, 1);
                        if self.is_open(node) {
                            self.push_scenes(&mut rows, Parent::Thread(t.thread.id), 2);
                        }
                    }
                }
            }
            StoryView::Promises => {
                for p in d
                    .promises
                    .iter()
                    .filter(|p| f.is_none_or(|s| p.status == s))
                {
                    push(&mut rows, RowNode::Promise(p.id), 0);
                }
            }
            StoryView::Decisions => {
                for x in d
                    .decisions
                    .iter()
                    .filter(|x| f.is_none_or(|s| x.status == s))
                {
                    push(&mut rows, RowNode::Decision(x.id), 0);
                }
            }
        }
        rows
    }

    fn push_scenes(&self, rows: &mut Vec<Row>, parent: Parent, depth: u8) {
        let list = self.scenes.get(&parent);
        match list.and_then(|l| l.items.as_ref()) {
            Some(items) if items.is_empty() => rows.push(Row {
                node: RowNode::NoScenes(parent),
                depth,
            }),
            Some(items) => {
                rows.extend(items.iter().enumerate().map(|(i, s)| Row {
                    node: RowNode::Scene {
                        parent,
                        index: i as u32,
                        id: s.id,
                    },
                    depth,
                }));
            }
            None if list.is_some_and(|l| l.error.is_some()) => rows.push(Row {
                node: RowNode::ScenesError(parent),
                depth,
            }),
            None => rows.push(Row {
                node: RowNode::ScenesLoading(parent),
                depth,
            }),
        }
    }

    /// The row's parent row index (for "collapse goes to the parent").
    pub fn parent_row(&self, i: usize) -> Option<usize> {
        let depth = self.rows.get(i)?.depth;
        (0..i).rev().find(|&j| self.rows[j].depth < depth)
    }

    /// What the right-hand view should show for the selection.
    pub fn wanted_detail(&self) -> Option<DetailKey> {
        let row = self.selected_row()?;
        if self.right == RightMode::Brief {
            return self.chapter_of(row.node).map(DetailKey::Brief);
        }
        match row.node {
            RowNode::NoAct | RowNode::NoPhase => Some(DetailKey::Node(NodeRef::Story)),
            RowNode::ScenesLoading(p) | RowNode::ScenesError(p) | RowNode::NoScenes(p) => {
                Some(DetailKey::Node(match p {
                    Parent::Chapter(c) => NodeRef::Chapter(c),
                    Parent::Thread(t) => NodeRef::Thread(t),
                }))
            }
            n => n.node().map(DetailKey::Node),
        }
    }

    /// The chapter a row belongs to (itself, or a scene's chapter).
    pub fn chapter_of(&self, node: RowNode) -> Option<i64> {
        match node {
            RowNode::Chapter(c) => Some(c),
            RowNode::Scene { parent, index, .. } => self.scene(parent, index)?.chapter_id,
            RowNode::ScenesLoading(Parent::Chapter(c))
            | RowNode::ScenesError(Parent::Chapter(c))
            | RowNode::NoScenes(Parent::Chapter(c)) => Some(c),
            _ => None,
        }
    }

    /// Make `node` visible in the current view by opening the groups above it. Returns the
    /// parent whose scenes must be loaded first, if any.
    pub fn expose(&mut self, node: NodeRef, place: Option<(i64, Option<i64>)>) -> Option<Parent> {
        let d = self.data.clone()?;
        match node {
            NodeRef::Chapter(c) => {
                let act = d.chapter(c).and_then(|r| r.chapter.act_id);
                self.set_open(act.map(RowNode::Act).unwrap_or(RowNode::NoAct), true);
                None
            }
            NodeRef::Thread(t) => {
                let phase = d.thread(t).and_then(|r| r.thread.story_phase_id);
                self.set_open(phase.map(RowNode::Phase).unwrap_or(RowNode::NoPhase), true);
                None
            }
            NodeRef::Scene(_) => {
                let (thread, chapter) = place?;
                let parent = match (self.view, chapter) {
                    (StoryView::Carrier, Some(c)) => {
                        self.expose(NodeRef::Chapter(c), None);
                        Parent::Chapter(c)
                    }
                    _ => {
                        self.expose(NodeRef::Thread(thread), None);
                        Parent::Thread(thread)
                    }
                };
                self.set_open(
                    match parent {
                        Parent::Chapter(c) => RowNode::Chapter(c),
                        Parent::Thread(t) => RowNode::Thread(t),
                    },
                    true,
                );
                Some(parent)
            }
            _ => None,
        }
    }

    /// Is `node` hidden by the current filter?
    pub fn filtered_out(&self, node: NodeRef) -> bool {
        let (Some(f), Some(d)) = (self.filter(), self.data.as_ref()) else {
            return false;
        };
        match node {
            NodeRef::Chapter(c) => d.chapter(c).is_some_and(|r| r.status.as_str() != f),
            NodeRef::Thread(t) => d.thread(t).is_some_and(|r| r.thread.status != f),
            NodeRef::Promise(p) => d.promise(p).is_some_and(|r| r.status != f),
            NodeRef::Decision(x) => d.decision(x).is_some_and(|r| r.status != f),
            _ => false,
        }
    }
}

fn set<T: std::hash::Hash + Eq>(s: &mut HashSet<T>, v: T, on: bool) {
    if on {
        s.insert(v);
    } else {
        s.remove(&v);
    }
}

/// The view a node lives in (scenes: the current tree).
pub fn view_of(node: NodeRef, current: StoryView) -> StoryView {
    match node {
        NodeRef::Act(_) | NodeRef::Chapter(_) => StoryView::Carrier,
        NodeRef::Phase(_) | NodeRef::Thread(_) => StoryView::Causal,
        NodeRef::Promise(_) => StoryView::Promises,
        NodeRef::Decision(_) => StoryView::Decisions,
        NodeRef::Scene(_) | NodeRef::Story => match current {
            StoryView::Promises | StoryView::Decisions => StoryView::Carrier,
            v => v,
        },
    }
}

/// The row node showing a plot record (scenes need their parent).
pub fn row_of(node: NodeRef, parent: Option<Parent>) -> Option<RowNode> {
    Some(match node {
        NodeRef::Act(id) => RowNode::Act(id),
        NodeRef::Chapter(id) => RowNode::Chapter(id),
        NodeRef::Phase(id) => RowNode::Phase(id),
        NodeRef::Thread(id) => RowNode::Thread(id),
        NodeRef::Promise(id) => RowNode::Promise(id),
        NodeRef::Decision(id) => RowNode::Decision(id),
        NodeRef::Scene(id) => RowNode::Scene {
            parent: parent?,
            index: 0,
            id,
        },
        NodeRef::Story => return None,
    })
}
