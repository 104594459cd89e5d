//! The Story pane's blocking work, run by the runtime on the blocking pool and returned as
//! ticketed actions (stale tickets are dropped): the tree overview with both ledgers, the
//! scenes of one chapter or thread, a node's detail or a chapter's writer brief, the search
//! index and its fuzzy matches (nucleo), edit forms, previews of writes and the writes
//! themselves. Reads go through the engine's read model; writes are tool calls by the author
//! through [`Engine::author_call`] (previewed with [`Engine::author_preview`]), logged in the
//! project's author session and announced like an agent's change. Plain functions over the
//! engine so tests and benches call them directly.

use std::sync::Arc;

use nucleo::pattern::{CaseMatching, Normalization, Pattern};
use nucleo::{Config, Matcher, Utf32Str};

use crate::engine::author::preview_lines;
use crate::engine::read::ReadModel;
use crate::engine::types::{Preview, PreviewBody, RecordChange};
use crate::engine::{CallResult, CallStatus, Engine};
use crate::plot::brief::{BriefDto, BriefMode};
use crate::plot::ledger::{NodeDetail, NodeRef};
use crate::tui::story::data::{Parent, SceneItem, StoryData};
use crate::tui::story::edit::{self, EditForm, StoryWrite};
use crate::tui::widgets::markdown::{classify, LineKind};

/// Most search hits kept (best first).
pub const SEARCH_LIMIT: usize = 300;

/// What the right-hand view shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DetailKey {
    Node(NodeRef),
    /// A chapter's writer brief.
    Brief(i64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum DetailDoc {
    Node(Box<NodeDetail>),
    Brief {
        brief: Box<BriefDto>,
        /// The Markdown brief, classified once for drawing.
        lines: Vec<(LineKind, String)>,
    },
}

/// One searchable title.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchItem {
    pub node: NodeRef,
    pub title: String,
    /// For scenes: (thread, chapter), to reveal them.
    pub place: Option<(i64, Option<i64>)>,
}

impl SearchItem {
    pub fn kind(&self) -> &'static str {
        match self.node {
            NodeRef::Story => "story",
            NodeRef::Act(_) => "act",
            NodeRef::Chapter(_) => "chapter",
            NodeRef::Phase(_) => "phase",
            NodeRef::Thread(_) => "thread",
            NodeRef::Scene(_) => "scene",
            NodeRef::Promise(_) => "promise",
            NodeRef::Decision(_) => "decision",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchHit {
    /// Index into the search items.
    pub item: usize,
    /// Matched character positions in the title, sorted.
    pub indices: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StoryJob {
    Scenes(Parent),
    Detail(DetailKey),
    SearchIndex(Arc<StoryData>),
    Match {
        query: String,
        items: Arc<Vec<SearchItem>>,
    },
    EditForm(NodeRef),
    /// Preview a write (a delete: its cascade) for the confirmation dialog.
    Prepare(StoryWrite),
    /// A write the author made without a dialog (an edit form's changed keys).
    Write(StoryWrite),
    /// A write the author confirmed on this preview: stale if its records changed since.
    Confirmed(StoryWrite, Box<Preview>),
}

/// What the confirmation dialog shows, and the preview it confirms.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    pub lines: Vec<String>,
    pub preview: Box<Preview>,
}

/// A committed write: what changed, and where it was logged.
#[derive(Clone, Debug, PartialEq)]
pub struct Written {
    pub changes: Vec<RecordChange>,
    /// The author session it was logged to, or why logging failed.
    pub logged: Option<Result<String, String>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StoryJobResult {
    Scenes(Parent, Result<Vec<SceneItem>, String>),
    Detail(DetailKey, Result<DetailDoc, String>),
    SearchIndex(Result<Vec<SearchItem>, String>),
    Matched { query: String, hits: Vec<SearchHit> },
    EditForm(NodeRef, Result<EditForm, String>),
    Prepared(StoryWrite, Result<Prepared, String>),
    Written(StoryWrite, Result<Written, String>),
}

/// Both trees with counts and brief statuses, and both ledgers (one read).
pub fn load(read: &ReadModel) -> Result<StoryData, String> {
    let o = read.story_overview().map_err(|e| e.to_string())?;
    Ok(StoryData::new(o.tree, o.promises, o.decisions))
}

pub fn run(engine: &Arc<Engine>, job: StoryJob) -> StoryJobResult {
    let read = engine.read();
    let err = |e: crate::engine::read::ReadError| e.to_string();
    match job {
        StoryJob::Scenes(parent) => {
            let r = match parent {
                Parent::Chapter(c) => read
                    .chapter_scenes(c)
                    .map(|v| v.iter().map(|s| SceneItem::from_chapter(c, s)).collect()),
                Parent::Thread(t) => read
                    .thread_scenes(t)
                    .map(|v| v.iter().map(SceneItem::from_thread).collect()),
            }
            .map_err(err);
            StoryJobResult::Scenes(parent, r)
        }
        StoryJob::Detail(key) => {
            let r = match key {
                DetailKey::Node(n) => read.node_detail(n).map(|d| DetailDoc::Node(Box::new(d))),
                DetailKey::Brief(c) => read.writer_brief(c, BriefMode::Autonomous).map(|brief| {
                    let lines = classify(&brief.suggested_brief_markdown, true);
                    DetailDoc::Brief {
                        brief: Box::new(brief),
                        lines,
                    }
                }),
            }
            .map_err(err);
            StoryJobResult::Detail(key, r)
        }
        StoryJob::SearchIndex(data) => StoryJobResult::SearchIndex(search_index(&read, &data)),
        StoryJob::Match { query, items } => {
            let hits = fuzzy(&query, &items, SEARCH_LIMIT);
            StoryJobResult::Matched { query, hits }
        }
        StoryJob::EditForm(node) => {
            let r = read
                .node_detail(node)
                .map_err(err)
                .and_then(|d| edit::form_of(&d));
            StoryJobResult::EditForm(node, r)
        }
        StoryJob::Prepare(w) => {
            let r = prepare(engine, &w);
            StoryJobResult::Prepared(w, r)
        }
        StoryJob::Write(w) => {
            let r = write(engine, &w, None);
            StoryJobResult::Written(w, r)
        }
        StoryJob::Confirmed(w, seen) => {
            let r = write(engine, &w, Some(*seen));
            StoryJobResult::Written(w, r)
        }
    }
}

/// Run an engine call from this blocking job (the runtime runs jobs on its blocking pool).
fn block_on<T>(f: impl std::future::Future<Output = T>) -> Result<T, String> {
    tokio::runtime::Handle::try_current()
        .map(|h| h.block_on(f))
        .map_err(|_| "no engine runtime to run the call on; nothing was changed".to_string())
}

/// A failed call as the pane shows it: each bad field as `/pointer: message`, and whether
/// anything changed.
fn failure(r: &CallResult) -> String {
    let text = match (&r.status, &r.details) {
        (CallStatus::InvalidArgs, Some(d)) => {
            let fields: Vec<String> = d
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| {
                    format!(
                        "{}: {}",
                        f["pointer"]
                            .as_str()
                            .filter(|p| !p.is_empty())
                            .unwrap_or("/"),
                        f["message"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            fields.join("; ")
        }
        _ => r.content.clone(),
    };
    if text.contains("nothing was changed") || r.status == CallStatus::LogFailed {
        text
    } else {
        format!("{text} (nothing was changed)")
    }
}

/// The engine's preview of a write, as lines for the confirmation dialog.
fn prepare(engine: &Arc<Engine>, w: &StoryWrite) -> Result<Prepared, String> {
    let call = w.call().map_err(|e| e.to_string())?;
    let preview =
        block_on(engine.author_preview(call.tool, &call.args))?.map_err(|r| failure(&r))?;
    Ok(Prepared {
        lines: preview_lines(&preview),
        preview: Box::new(preview),
    })
}

/// Make the write as the author: previewed (its record changes are what the status bar
/// counts), then called on that preview, so a change made meanwhile makes it stale.
fn write(engine: &Arc<Engine>, w: &StoryWrite, seen: Option<Preview>) -> Result<Written, String> {
    let call = w.call().map_err(|e| e.to_string())?;
    let preview = match seen {
        Some(p) => p,
        None => block_on(engine.author_preview(call.tool, &call.args))?.map_err(|r| failure(&r))?,
    };
    let r = block_on(engine.author_call(call.tool, call.args, Some(&preview)))?;
    if !r.ok {
        return Err(failure(&r));
    }
    // A delete's preview is its cascade summary; its result lists every record it removed.
    let changes = match (
        &preview.body,
        r.details.as_ref().and_then(|d| d.get("changes")),
    ) {
        (PreviewBody::Records { changes }, _) => changes.clone(),
        (_, Some(v)) => serde_json::from_value(v.clone()).unwrap_or_default(),
        _ => Vec::new(),
    };
    Ok(Written {
        changes,
        logged: Some(Ok(crate::engine::author::AUTHOR_SESSION_ID.to_string())),
    })
}

/// Every title in the story: acts, chapters, phases, threads, promises, decisions (from the
/// loaded data) and all scenes (one query).
pub fn search_index(read: &ReadModel, data: &StoryData) -> Result<Vec<SearchItem>, String> {
    let o = &data.overview;
    let item = |node, title: &str| SearchItem {
        node,
        title: title.to_string(),
        place: None,
    };
    let mut out = Vec::new();
    for (a, _) in &o.acts {
        out.push(item(NodeRef::Act(a.id), &a.title));
    }
    for c in data.chapters_in_order() {
        out.push(item(NodeRef::Chapter(c.chapter.id), &c.chapter.title));
    }
    for (p, threads) in &o.phases {
        out.push(item(NodeRef::Phase(p.id), &p.title));
        for t in threads {
            out.push(item(NodeRef::Thread(t.thread.id), &t.thread.title));
        }
    }
    for t in &o.ungrouped_threads {
        out.push(item(NodeRef::Thread(t.thread.id), &t.thread.title));
    }
    for p in &data.promises {
        out.push(item(NodeRef::Promise(p.id), &p.title));
    }
    for d in &data.decisions {
        out.push(item(NodeRef::Decision(d.id), &d.title));
    }
    let scenes = read
        .scene_titles()
        .map_err(|e| format!("cannot list the scenes: {e}"))?;
    out.extend(scenes.into_iter().map(|s| SearchItem {
        node: NodeRef::Scene(s.id),
        title: s.title,
        place: Some((s.thread_id, s.chapter_id)),
    }));
    Ok(out)
}

/// Fuzzy-match titles; an empty query keeps the first `limit` items in order. Ties keep the
/// index order, so results are deterministic.
pub fn fuzzy(query: &str, items: &[SearchItem], limit: usize) -> Vec<SearchHit> {
    let query = query.trim();
    if query.is_empty() {
        return (0..items.len().min(limit))
            .map(|item| SearchHit {
                item,
                indices: Vec::new(),
            })
            .collect();
    }
    let mut matcher = Matcher::new(Config::DEFAULT);
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut buf = Vec::new();
    let mut scored: Vec<(u32, usize)> = items
        .iter()
        .enumerate()
        .filter_map(|(i, it)| {
            pattern
                .score(Utf32Str::new(&it.title, &mut buf), &mut matcher)
                .map(|s| (s, i))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(limit);
    scored
        .into_iter()
        .map(|(_, item)| {
            let mut indices = Vec::new();
            pattern.indices(
                Utf32Str::new(&items[item].title, &mut buf),
                &mut matcher,
                &mut indices,
            );
            indices.sort_unstable();
            indices.dedup();
            SearchHit { item, indices }
        })
        .collect()
}
