//! The read model: every query the TUI's panes show, answered by the engine over read-only
//! connections (the world's pooled connections may store derived checkpoints, never data), so no
//! pane opens the project database itself. Each query opens what it needs and returns plain
//! domain values (plot DTOs, world views); a project without a database yet reads as empty.
//!
//! Blocking: call from a worker thread (the TUI's jobs), never from the UI task.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::plot::brief::{BriefDto, BriefMode};
use crate::plot::ledger::{NodeDetail, NodeRef, SceneTitleRow, TreeOverview};
use crate::plot::model::{ChapterSceneDto, DecisionDto, PromiseDto, SceneDto};
use crate::plot::{PlotDb, PlotError, ProjectMeta};
use crate::world::calendar::Calendar;
use crate::world::query::WorldView;
use crate::world::{pool, WorldError};

pub use crate::board::artifacts::{human_size, Artifact, Payload as ArtifactPayload};
pub use crate::board::draft::{Area as DraftArea, DraftChangeKind, DraftDiff};
pub use crate::board::mailbox::{
    response_mode, MailKind, Message, Report, ResponseMode, Room, SESSION_AGENT, USER_ID,
};
pub use crate::board::{DocumentInfo, Goal, Task, TaskLogEntry, PAUSED};
pub use crate::store::overview::{SliceRow, SubjectRow, TypeRow, WorldOverview};

/// Why a query could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("story query failed: {0}")]
    Plot(#[from] PlotError),
    #[error("world query failed: {0}")]
    World(#[from] WorldError),
    #[error("cannot open the project database {path}: {source} (check that the file exists and is readable)")]
    Open {
        path: String,
        #[source]
        source: crate::store::StoreError,
    },
    #[error("world query failed: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("{0}")]
    Calendar(#[from] crate::world::calendar::CalendarError),
    #[error("board query failed: {0}")]
    Board(#[from] crate::board::BoardError),
}

/// The production board as the Board pane shows it: every task in board order (the pane
/// groups them by its workflow's columns) and the active goals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoardOverview {
    pub tasks: Vec<crate::board::Task>,
    pub goals: Vec<crate::board::Goal>,
    /// The archived goals (the Board's goal list offers to unarchive them).
    pub archived_goals: Vec<crate::board::Goal>,
    /// The Board's columns (id, name): the default workflow's, then the custom workflows'.
    pub columns: Vec<(String, String)>,
    /// The author's unread mail (the pane title shows it).
    pub unread_mail: usize,
    /// The durable agents with their last heartbeat run (the agent list, `H`).
    pub agents: Vec<crate::board::agent_runs::AgentLine>,
}

/// The author's Inbox as the Board's Inbox view shows it: the mail to `dashboard` and what
/// the author sent, newest first, and the chat rooms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inbox {
    pub mail: Vec<Message>,
    pub unread: usize,
    pub rooms: Vec<Room>,
    /// The newest post of each room that has one, by room id (the Inbox's room lines).
    pub room_latest: std::collections::BTreeMap<String, crate::board::mailbox::RoomPost>,
    /// The response mode of each agent the mail names that has one configured (durable
    /// agents); any other agent is `immediate`. Read with [`Inbox::response_mode`].
    pub response_modes: std::collections::BTreeMap<String, ResponseMode>,
}

impl Inbox {
    /// How a reply reaches agent `id` (see `crate::board::mailbox::response_mode`).
    pub fn response_mode(&self, id: &str) -> ResponseMode {
        self.response_modes
            .get(id)
            .copied()
            .unwrap_or(ResponseMode::Immediate)
    }
}

/// Most mails the Inbox view lists.
pub const INBOX_LIMIT: usize = 500;

/// One task opened on the Board: the record (with PROMPT.md and steps), its documents with
/// their revisions, and the newest entries of its log.
#[derive(Clone, Debug, PartialEq)]
pub struct BoardTaskDetail {
    pub task: crate::board::Task,
    /// Each document (its current revision) with the numbers of the older revisions kept,
    /// oldest first.
    pub documents: Vec<(crate::board::DocumentInfo, Vec<u64>)>,
    pub log: Vec<crate::board::TaskLogEntry>,
    /// The draft area's changes so far (`None`: the task has no draft area yet).
    pub draft: Option<Vec<crate::board::draft::DraftDiff>>,
    /// What the draft area is (overlay, git worktree, retired worktree); `None`: none yet.
    pub draft_area: Option<crate::board::draft::Area>,
    /// The other books of the series the task acquired a draft area in (its repository
    /// scope; `crate::board::repository_scope`), each with its draft's changed files.
    pub repository_scope: Vec<ScopedBook>,
    /// The books the task declared (`fn_task_create`'s `repository_scope`, the plan's
    /// `## Repository Scope`) and did not acquire yet.
    pub declared_not_acquired: Vec<crate::board::repository_scope::Declared>,
}

/// One book of a task's repository scope, as the Board's detail shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopedBook {
    pub acquired: crate::board::repository_scope::Acquired,
    /// The area's path from this book's folder (`../<book>/.nbook/tasks/…`) when it is in
    /// the series folder, else as recorded.
    pub shown_path: String,
    /// The area's changed files (`workspace/<book>/<path>`), or why they cannot be read.
    pub changes: Result<Vec<(crate::board::draft::DraftChangeKind, String)>, String>,
}

/// Log entries a task's detail shows (the newest).
pub const BOARD_LOG_LIMIT: usize = 200;

/// Both story trees with counts and brief statuses, and both ledgers (one read).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoryOverview {
    pub tree: TreeOverview,
    /// Open first, importance high → low.
    pub promises: Vec<PromiseDto>,
    /// Open, decided, superseded, dropped.
    pub decisions: Vec<DecisionDto>,
}

/// Queries over one project. Cheap to clone; holds no connection between queries.
#[derive(Clone, Debug)]
pub struct ReadModel {
    root: PathBuf,
    db: PathBuf,
    /// The waiting calls' approval mails, oldest first (made from the engine's queue; a
    /// read model without an engine has none).
    approvals: Vec<Message>,
}

impl super::Engine {
    /// The read model over this engine's project.
    pub fn read(&self) -> ReadModel {
        let mut r = ReadModel::new(self.ws.root(), &self.ws.db_path());
        r.approvals = self
            .pending()
            .iter()
            .map(|p| self.approval_mail(p))
            .collect();
        r
    }
}

impl ReadModel {
    /// The read model of the project at `root` with its database `db` (benches and tools that
    /// have no engine; the TUI uses [`super::Engine::read`]).
    pub fn new(root: &Path, db: &Path) -> ReadModel {
        ReadModel {
            root: root.to_path_buf(),
            db: db.to_path_buf(),
            approvals: Vec::new(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn has_db(&self) -> bool {
        self.db.exists()
    }

    /// Whether the project has its database yet (a new project has none until its first write).
    pub fn has_database(&self) -> bool {
        self.has_db()
    }

    /// Where the project's database is (for messages).
    pub fn database(&self) -> &Path {
        &self.db
    }

    /// The plot services over the project, with its calendar for world anchors (the default
    /// gregorian one if `calendar.toml` cannot be read — the plot tools report that error; the
    /// story still reads).
    fn plot(&self) -> PlotDb {
        let plot = PlotDb::new(self.db.clone(), ProjectMeta::load(&self.root));
        match Calendar::load(&self.root) {
            Ok(cal) => plot.with_calendar(Arc::new(cal)),
            Err(e) => {
                tracing::warn!("read model: {e}; showing anchors in the default calendar");
                plot
            }
        }
    }

    fn board(&self) -> crate::board::Board {
        let name = self
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        crate::board::Board::new(&self.root, &name)
    }

    /// Every task and the active goals (a project without a database has none).
    pub fn board_overview(&self) -> Result<BoardOverview, ReadError> {
        if !self.has_db() {
            return Ok(BoardOverview::default());
        }
        Ok(self.board().read(|c| {
            Ok(BoardOverview {
                tasks: crate::board::tasks::all(c, None)?,
                goals: crate::board::goals::active(c)?,
                archived_goals: crate::board::goals::archived(c)?,
                columns: crate::board::workflow::board_columns(c)?
                    .into_iter()
                    .map(|col| (col.id, col.name))
                    .collect(),
                unread_mail: crate::board::mailbox::unread_count(c, USER_ID)?
                    + self.approvals.len(),
                agents: crate::board::agent_runs::lines(c)?,
            })
        })?)
    }

    /// Every workflow with its resolved setting values (the Board's Workflows view).
    pub fn board_workflows(
        &self,
    ) -> Result<
        Vec<(
            crate::board::workflow::Workflow,
            crate::board::workflow::Resolved,
        )>,
        ReadError,
    > {
        if !self.has_db() {
            let w = crate::board::workflow::builtin_chapter();
            let r = crate::board::workflow::settings::resolve(
                &w.id,
                &w.ir.settings,
                &serde_json::Map::new(),
            );
            return Ok(vec![(w, r)]);
        }
        Ok(self.board().read(|c| {
            let mut out = Vec::new();
            for w in crate::board::workflow::list(c)? {
                let r = crate::board::workflow::settings_of(c, &w.id)?;
                out.push((w, r));
            }
            Ok(out)
        })?)
    }

    /// The author's Inbox (empty for a project without a database yet).
    pub fn inbox(&self) -> Result<Inbox, ReadError> {
        if !self.has_db() {
            return Ok(Inbox::default());
        }
        let mut inbox = self.board().read(|c| {
            let mail = crate::board::mailbox::mailbox_of(c, USER_ID, INBOX_LIMIT)?;
            let mut response_modes = std::collections::BTreeMap::new();
            for id in mail.iter().flat_map(|m| [&m.from_id, &m.to_id]) {
                if crate::board::agents::is_durable_id(id) && !response_modes.contains_key(id) {
                    response_modes.insert(id.clone(), response_mode(c, id)?);
                }
            }
            let rooms = crate::board::mailbox::rooms(c)?;
            let mut room_latest = std::collections::BTreeMap::new();
            for r in rooms.iter().filter(|r| r.status == "active") {
                if let Some(p) = crate::board::mailbox::room_posts(c, &r.id, 1)?.pop() {
                    room_latest.insert(r.id.clone(), p);
                }
            }
            Ok(Inbox {
                mail,
                unread: crate::board::mailbox::unread_count(c, USER_ID)?,
                rooms,
                room_latest,
                response_modes,
            })
        })?;
        // The waiting calls' approval mails, newest first, ahead of the stored mail.
        let mut approvals = self.approvals.clone();
        approvals.reverse();
        inbox.unread += approvals.len();
        approvals.append(&mut inbox.mail);
        inbox.mail = approvals;
        Ok(inbox)
    }

    /// The thread of mail `id`, oldest first.
    pub fn mail_thread(&self, id: &str) -> Result<Vec<Message>, ReadError> {
        if !self.has_db() {
            return Ok(Vec::new());
        }
        Ok(self
            .board()
            .read(|c| crate::board::mailbox::thread(c, id))?)
    }

    /// Task `id` with its documents and log (`TASK_NOT_FOUND` for an unknown id).
    pub fn board_task(&self, id: &str) -> Result<BoardTaskDetail, ReadError> {
        if !self.has_db() {
            return Err(crate::board::BoardError::TaskNotFound { id: id.to_string() }.into());
        }
        Ok(self.board().read(|c| {
            let task = crate::board::tasks::require(c, id)?;
            let mut documents = Vec::new();
            for d in crate::board::docs::list(c, id)? {
                let revs = crate::board::docs::revisions(c, id, &d.key)?;
                documents.push((d, revs));
            }
            let log = crate::board::tasks::logs(c, id, BOARD_LOG_LIMIT)?;
            let draft = crate::board::draft::diffs(&self.root, &task)?;
            let draft_area = crate::board::draft::Draft::new(&self.root, id).area()?;
            let repository_scope = crate::board::repository_scope::list(c, id)?
                .into_iter()
                .map(|acquired| ScopedBook {
                    shown_path: self
                        .root
                        .parent()
                        .and_then(|folder| {
                            std::path::Path::new(&acquired.area_path)
                                .strip_prefix(folder)
                                .ok()
                        })
                        .map(|rest| format!("../{}", rest.display()))
                        .unwrap_or_else(|| acquired.area_path.clone()),
                    changes: crate::board::repository_scope::changed_files(
                        &self.root, &acquired, id,
                    ),
                    acquired,
                })
                .collect::<Vec<ScopedBook>>();
            let declared_not_acquired = crate::board::repository_scope::declared(c, id)?
                .into_iter()
                .filter(|d| !repository_scope.iter().any(|b| b.acquired.book == d.book))
                .collect();
            Ok(BoardTaskDetail {
                task,
                documents,
                log,
                draft,
                draft_area,
                repository_scope,
                declared_not_acquired,
            })
        })?)
    }

    /// The newest registered artifacts (at most `limit`), for the Artifacts view.
    pub fn artifacts(&self, limit: usize) -> Result<Vec<Artifact>, ReadError> {
        if !self.has_db() {
            return Ok(Vec::new());
        }
        let f = crate::board::artifacts::Filter {
            limit,
            ..Default::default()
        };
        Ok(self
            .board()
            .read(|c| Ok(crate::board::artifacts::list(c, &f)?.0))?)
    }

    /// What the Artifacts view shows of one artifact: its text, or the bytes of its managed
    /// image (only files under `.nbook/`, at most the registry's cap).
    pub fn artifact_payload(&self, a: &Artifact) -> ArtifactPayload {
        crate::board::artifacts::payload(&self.root, a)
    }

    /// Both trees and both ledgers.
    pub fn story_overview(&self) -> Result<StoryOverview, ReadError> {
        if !self.has_db() {
            return Ok(StoryOverview::default());
        }
        Ok(self.plot().read(|p| {
            Ok(StoryOverview {
                tree: p.overview()?,
                promises: p.promise_ledger()?,
                decisions: p.decision_ledger()?,
            })
        })?)
    }

    /// The scenes placed in a chapter, in chapter order.
    pub fn chapter_scenes(&self, chapter: i64) -> Result<Vec<ChapterSceneDto>, ReadError> {
        Ok(self.plot().read(|p| p.chapter_scenes(chapter))?)
    }

    /// The scenes of a thread, in thread order.
    pub fn thread_scenes(&self, thread: i64) -> Result<Vec<SceneDto>, ReadError> {
        Ok(self.plot().read(|p| p.thread_scenes(thread))?)
    }

    /// One record in full (what the detail view and the edit form show).
    pub fn node_detail(&self, node: NodeRef) -> Result<NodeDetail, ReadError> {
        Ok(self.plot().read(|p| p.node_detail(node))?)
    }

    /// A chapter's writer brief.
    pub fn writer_brief(&self, chapter: i64, mode: BriefMode) -> Result<BriefDto, ReadError> {
        Ok(self.plot().read(|p| p.writer_brief(chapter, mode))?)
    }

    /// Every scene's title with its thread and chapter (the search index's scenes).
    pub fn scene_titles(&self) -> Result<Vec<SceneTitleRow>, ReadError> {
        if !self.has_db() {
            return Ok(Vec::new());
        }
        Ok(self.plot().read(|p| p.scene_titles())?)
    }

    /// Counts, types with their first subjects, and the latest slices.
    pub fn world_overview(&self) -> Result<WorldOverview, ReadError> {
        if !self.has_db() {
            return Ok(WorldOverview::default());
        }
        let conn = self.open_read_only()?;
        Ok(crate::store::overview::world(&conn)?)
    }

    /// The project's calendar (the default gregorian one is the file's absence, not an error).
    pub fn calendar(&self) -> Result<Calendar, ReadError> {
        Calendar::load(&self.root).map_err(ReadError::Calendar)
    }

    /// Run world queries (subject lists, states, tracks, timelines, issues) on a pooled
    /// connection; `None` when the project has no database yet.
    pub fn world<T>(
        &self,
        f: impl FnOnce(&WorldView) -> Result<T, WorldError>,
    ) -> Result<Option<T>, ReadError> {
        if !self.has_db() {
            return Ok(None);
        }
        let world = pool::world(&self.root)?;
        let conn = pool::take(&self.db)?;
        let view = WorldView::new(conn, world);
        let out = f(&view);
        pool::give(&self.db, view.conn);
        Ok(Some(out?))
    }

    /// A world view on its own read-only connection, kept by the caller for quick state
    /// queries (the World pane's cursor); waits at most `busy` for a writer's lock. `None`
    /// when the project has no database yet.
    pub fn world_reader(&self, busy: Duration) -> Result<Option<WorldView>, ReadError> {
        if !self.has_db() {
            return Ok(None);
        }
        let world = pool::world(&self.root)?;
        let conn = self.open_read_only()?;
        conn.busy_timeout(busy)?;
        Ok(Some(WorldView::new(conn, world)))
    }

    fn open_read_only(&self) -> Result<rusqlite::Connection, ReadError> {
        crate::store::open_read_only(&self.db).map_err(|source| ReadError::Open {
            path: self.db.display().to_string(),
            source,
        })
    }
}
