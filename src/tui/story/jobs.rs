//! The Story pane's blocking work, run by the runtime on the blocking pool and returned as
//! ticketed actions (stale tickets are dropped): the tree overview with both ledgers, the
//! scenes of one chapter or thread, a node's detail or a chapter's writer brief, the search
//! index and its fuzzy matches (nucleo), edit forms, previews of writes and the writes
//! themselves. Plain functions over a [`PlotDb`] so tests and benches call them directly.
//!
//! Author writes are logged by [`log_author_edit`]: a `custom` record with key
//! `author.plot_edit` (the write and its field-by-field changes) in an "Author edits" session
//! the UI opens on the first write of a run, plus a `tracing` line.

use std::path::Path;
use std::sync::{Arc, Mutex};

use nucleo::pattern::{CaseMatching, Normalization, Pattern};
use nucleo::{Config, Matcher, Utf32Str};
use serde_json::json;

use crate::engine::types::RecordChange;
use crate::engine::{Engine, LogRecord, Mode};
use crate::plot::brief::{BriefDto, BriefMode};
use crate::plot::ledger::{NodeDetail, NodeRef};
use crate::plot::{PlotDb, ProjectMeta};
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
    /// Dry-run a write (or summarise a delete's cascade) for the confirmation dialog.
    Prepare(StoryWrite),
    Write(StoryWrite),
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
    Prepared(StoryWrite, Result<Vec<String>, String>),
    Written(StoryWrite, Result<Written, String>),
}

/// The project's plot database as the pane reads and writes it, with the project calendar
/// for world anchors (the default gregorian one if `calendar.toml` cannot be read — the
/// plot tools report that error; the pane still shows the story).
pub fn plot_db(root: &Path, db: &Path) -> PlotDb {
    let plot = PlotDb::new(db.to_path_buf(), ProjectMeta::load(root));
    match crate::world::calendar::Calendar::load(root) {
        Ok(cal) => plot.with_calendar(std::sync::Arc::new(cal)),
        Err(e) => {
            tracing::warn!("story pane: {e}; showing anchors in the default calendar");
            plot
        }
    }
}

/// Both trees with counts and brief statuses, and both ledgers (one read).
pub fn load(db: &PlotDb) -> Result<StoryData, String> {
    if !db.db_path.exists() {
        return Ok(StoryData::default());
    }
    db.read(|p| {
        let overview = p.overview()?;
        let promises = p.promise_ledger()?;
        let decisions = p.decision_ledger()?;
        Ok(StoryData::new(overview, promises, decisions))
    })
    .map_err(|e| format!("story query failed: {e}"))
}

pub fn run(db: &PlotDb, job: StoryJob) -> StoryJobResult {
    let err = |e: crate::plot::PlotError| e.to_string();
    match job {
        StoryJob::Scenes(parent) => {
            let r = db
                .read(|p| match parent {
                    Parent::Chapter(c) => Ok(p
                        .chapter_scenes(c)?
                        .iter()
                        .map(|s| SceneItem::from_chapter(c, s))
                        .collect()),
                    Parent::Thread(t) => Ok(p
                        .thread_scenes(t)?
                        .iter()
                        .map(SceneItem::from_thread)
                        .collect()),
                })
                .map_err(err);
            StoryJobResult::Scenes(parent, r)
        }
        StoryJob::Detail(key) => {
            let r = db
                .read(|p| match key {
                    DetailKey::Node(n) => Ok(DetailDoc::Node(Box::new(p.node_detail(n)?))),
                    DetailKey::Brief(c) => {
                        let brief = p.writer_brief(c, BriefMode::Autonomous)?;
                        let lines = classify(&brief.suggested_brief_markdown, true);
                        Ok(DetailDoc::Brief {
                            brief: Box::new(brief),
                            lines,
                        })
                    }
                })
                .map_err(err);
            StoryJobResult::Detail(key, r)
        }
        StoryJob::SearchIndex(data) => StoryJobResult::SearchIndex(search_index(db, &data)),
        StoryJob::Match { query, items } => {
            let hits = fuzzy(&query, &items, SEARCH_LIMIT);
            StoryJobResult::Matched { query, hits }
        }
        StoryJob::EditForm(node) => {
            let r = db
                .read(|p| p.node_detail(node))
                .map_err(err)
                .and_then(|d| edit::form_of(&d));
            StoryJobResult::EditForm(node, r)
        }
        StoryJob::Prepare(w) => {
            let r = match &w {
                StoryWrite::Delete { node } => {
                    db.read(|p| p.cascade_summary(*node)).map(|s| s.lines())
                }
                other => db
                    .dry_run(|p| edit::apply(p, other))
                    .map(|o| edit::change_lines(&o.changes)),
            }
            .map_err(|e| format!("{e} (nothing was changed)"));
            StoryJobResult::Prepared(w, r)
        }
        StoryJob::Write(w) => {
            let r = db
                .commit(|p| edit::apply(p, &w))
                .map(|o| Written {
                    changes: o.changes,
                    logged: None,
                })
                .map_err(|e| format!("{e} (nothing was changed)"));
            StoryJobResult::Written(w, r)
        }
    }
}

/// Every title in the story: acts, chapters, phases, threads, promises, decisions (from the
/// loaded data) and all scenes (one query).
pub fn search_index(db: &PlotDb, data: &StoryData) -> Result<Vec<SearchItem>, String> {
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
    if db.db_path.exists() {
        let scenes = db
            .read(|p| p.scene_titles())
            .map_err(|e| format!("cannot list the scenes: {e}"))?;
        out.extend(scenes.into_iter().map(|s| SearchItem {
            node: NodeRef::Scene(s.id),
            title: s.title,
            place: Some((s.thread_id, s.chapter_id)),
        }));
    }
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

/// The title of the session author edits are logged to.
pub const AUTHOR_SESSION_TITLE: &str = "Author edits (Story pane)";
/// The `custom` record key of an author edit.
pub const AUTHOR_EDIT_KEY: &str = "author.plot_edit";

/// Log a committed author write: a `custom` record in this run's author session (opened on
/// the first write; `session` remembers it), and a tracing line. Returns the session id.
pub fn log_author_edit(
    engine: &Engine,
    session: &Mutex<Option<String>>,
    write: &StoryWrite,
    changes: &[RecordChange],
) -> Result<String, String> {
    let mut slot = session.lock().unwrap_or_else(|e| e.into_inner());
    let id = match slot.as_ref() {
        Some(id) => id.clone(),
        None => {
            let profile = if engine.profiles().get("leader.default").is_some() {
                "leader.default".to_string()
            } else {
                engine
                    .profiles()
                    .iter()
                    .next()
                    .map(|p| p.key.clone())
                    .ok_or("no agent profile to open the author session with")?
            };
            let info = engine
                .create_session(&profile, Mode::Normal, AUTHOR_SESSION_TITLE, None)
                .map_err(|e| e.to_string())?;
            *slot = Some(info.id.clone());
            info.id
        }
    };
    let mut value = json!({
        "action": write.verb(),
        "target": edit::node_label(write.node()),
        "by": "author",
        "changes": changes,
    });
    match write {
        StoryWrite::Update { args, .. } => value["args"] = args.clone(),
        StoryWrite::Archive { note: Some(n), .. } => value["note"] = json!(n),
        _ => {}
    }
    tracing::info!(
        target: "nbook::author",
        "author {} {}: {} record(s) changed",
        write.verb(),
        edit::node_label(write.node()),
        changes.len()
    );
    engine
        .append(
            &id,
            LogRecord::Custom {
                key: AUTHOR_EDIT_KEY.into(),
                value,
            },
        )
        .map_err(|e| e.to_string())?;
    Ok(id)
}

/// Log a job's committed write, if it is one (the runtime calls this after [`run`]).
pub fn log_result(engine: &Engine, session: &Mutex<Option<String>>, result: &mut StoryJobResult) {
    if let StoryJobResult::Written(w, Ok(written)) = result {
        written.logged = Some(log_author_edit(engine, session, w, &written.changes));
    }
}
