//! The tool engine: registry, profiles and allowlists, modes, the approval policy, the FIFO
//! approval queue shared by every session, session logs, and the dispatch of one tool call.
//!
//! Clients (the TUI, the agent loop, the CLI) hold an `Arc<Engine>`, call tools through
//! [`Engine::call`], answer approvals with [`Engine::decide`] and follow what happens through
//! [`Engine::subscribe`]. The engine never imports ratatui.

pub mod agent_session;
pub mod agents;
pub mod author;
mod call_result;
pub mod clients;
pub mod dispatch;
mod draft_route;
pub mod effects;
mod egress;
pub mod history;
pub mod inputs;
pub mod jobs;
pub mod lock;
pub mod log_cap;
pub mod mail;
mod part_approval;
pub mod pending_store;
pub mod policy;
pub mod profiles;
pub mod read;
pub mod registry;
pub mod services;
pub mod session_log;
pub mod tool;
pub mod typed;
pub mod types;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use tokio::sync::{broadcast, oneshot};

use crate::config::{Config, Dirs};
use crate::workspace::Workspace;
pub use dispatch::{Approval, CallResult, CallStatus};
use profiles::{Profile, ProfileError, Profiles};
use registry::Registry;
use session_log::{read_log, LogWriter, ReadLog, SessionLog};
pub use types::*;

/// A tool that sets this session-state key changes the session's mode (an approved
/// `switch_mode`); the engine applies it and logs a mode change.
pub const MODE_STATE_KEY: &str = "ui.agentMode";

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("unknown profile '{0}'; `nbook tools --json` and the profiles/ folder list the available ones")]
    UnknownProfile(String),
    #[error("no session with id '{0}'")]
    UnknownSession(String),
    #[error("no pending approval with id '{0}' (it may have been decided or cancelled already); `PendingCall::approval_id` names it")]
    UnknownCall(String),
    #[error("session log {path}: {source} (check free disk space and that the file is a writable regular file)")]
    Log {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A selection of parts (`Decision::ApproveParts`) that does not fit the waiting call.
    #[error(transparent)]
    Selection(#[from] SelectionError),
    #[error("{0}")]
    Setup(String),
}

/// Arguments the author edited that no call could take.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    #[error("unknown tool {0}")]
    UnknownTool(String),
    /// Every bad field, with its JSON Pointer.
    #[error("{}", registry::describe_field_errors(tool, errors))]
    Invalid {
        tool: String,
        errors: Vec<registry::FieldError>,
    },
}

/// A live or past session as the engine tracks it.
struct SessionRt {
    info: SessionInfo,
    /// Custom state set by tools, rebuilt from `custom` records on load.
    custom: Arc<BTreeMap<String, serde_json::Value>>,
    profile: Arc<Profile>,
    /// Cloned out of the state for writing: appends never hold the state lock.
    log: Arc<LogWriter>,
}

impl SessionRt {
    /// A session created now: idle, no usage yet, writing to the log just opened.
    fn fresh(
        id: &str,
        profile: Arc<Profile>,
        title: &str,
        mode: Mode,
        parent: Option<String>,
        log: SessionLog,
    ) -> SessionRt {
        SessionRt {
            info: SessionInfo {
                id: id.to_string(),
                profile: profile.key.clone(),
                title: title.to_string(),
                mode,
                state: SessionState::Idle,
                created_at: now_rfc3339(),
                parent,
                input_tokens: 0,
                output_tokens: 0,
                cost: 0.0,
                context_tokens: 0,
                context_window: 0,
                client: None,
                agent: None,
            },
            custom: Arc::default(),
            profile,
            log: Arc::new(LogWriter::open(log)),
        }
    }
}

#[derive(Default)]
struct State {
    sessions: BTreeMap<SessionId, SessionRt>,
    queue: VecDeque<PendingCall>,
    /// Keyed by approval id (never by the provider's call id, which sessions may share).
    waiters: HashMap<ApprovalId, oneshot::Sender<Decision>>,
    /// (session, tool, target) triples the author approved for the rest of a session.
    grants: HashSet<(SessionId, String, String)>,
    /// (session, host) pairs the author allowed egress to for the rest of a session.
    egress_grants: HashSet<(SessionId, String)>,
    /// Per session, the latest calls that read or changed local data (shown when the session
    /// asks to send data off the machine). Kept in memory for this process only.
    seen: HashMap<SessionId, egress::Seen>,
    /// Staged calls whose held change was committed (cleared when the call returns), by
    /// (session, call id): providers of different sessions may use the same call id.
    committed: HashSet<(SessionId, CallId)>,
    next_call: u64,
    /// The number of the last approval id minted (`ap-<n>`); starts after the highest in the
    /// session logs, so ids are not reused across restarts.
    next_approval: u64,
    /// Calls that went to the approval queue (cleared when the call returns), by (session,
    /// call id).
    asked: HashSet<(SessionId, CallId)>,
    /// Questions waiting for the author, with the channel that wakes the asker.
    inputs: VecDeque<(inputs::InputRequest, oneshot::Sender<Vec<inputs::Answer>>)>,
    /// Calls put back in the queue at open from `.nbook/agent/pending/` (no run waits on
    /// them; [`Engine::serve_restored`] does), by approval id.
    restored: HashMap<ApprovalId, pending_store::Restored>,
    /// What restoring the queue had to report (corrupt files, dropped calls).
    restore_notes: Vec<String>,
    /// What decided each running mutating call and what it applied, by (session, call id),
    /// until the call returns and its history entry is written (`history`).
    history_notes: HashMap<(SessionId, CallId), history::Note>,
}

pub struct Engine {
    ws: Arc<Workspace>,
    /// Swapped whole when config.toml changes ([`Engine::reload_config_if_changed`]).
    config: crate::config::LiveConfig,
    config_watch: crate::config::live::Watch,
    registry: Registry,
    /// The profile folders (user config, then the project's), read again when they change.
    profile_dirs: Vec<PathBuf>,
    /// Swapped whole when the profile files change ([`Engine::reload_profiles_if_changed`]).
    profiles: RwLock<Arc<Profiles>>,
    profile_errors: RwLock<Arc<Vec<ProfileError>>>,
    /// What the profile folders looked like when `profiles` was loaded.
    profiles_seen: Mutex<profiles::Fingerprint>,
    events: broadcast::Sender<EngineEvent>,
    state: Mutex<State>,
    lock: lock::EngineLock,
    jobs: Arc<jobs::JobStore>,
    /// No author at a keyboard (`nbook run`): questions fail at once instead of waiting.
    headless: std::sync::atomic::AtomicBool,
    host: Mutex<Option<std::sync::Weak<dyn agents::AgentHost>>>,
    /// The approval queue on disk (`.nbook/agent/pending/`).
    pending_store: pending_store::PendingStore,
    /// The process is ending ([`Engine::close_queue`]): dropped calls stay on disk.
    closing: std::sync::atomic::AtomicBool,
}

impl Engine {
    /// Open the engine on a project with the tools of `registry` (built by the composition
    /// root, e.g. `crate::tools::registry()`): migrate the database, load profiles, and
    /// recover session logs: calls pending at the last stop wait again when they were kept
    /// on disk (`pending_store`), the others become `interrupted`.
    pub fn open(
        ws: Workspace,
        config: Config,
        dirs: &Dirs,
        registry: Registry,
    ) -> Result<Engine, EngineError> {
        let lock = lock::EngineLock::acquire(&ws.nbook_dir().join("agent"));
        Engine::open_with_lock(ws, config, dirs, registry, lock)
    }

    /// [`Engine::open`] without trying to own the approval queue: a long-lived helper process
    /// (`nbook mcp`) must never keep the author's TUI, started later, from owning it.
    pub fn open_guest(
        ws: Workspace,
        config: Config,
        dirs: &Dirs,
        registry: Registry,
    ) -> Result<Engine, EngineError> {
        Engine::open_with_lock(ws, config, dirs, registry, lock::EngineLock::guest())
    }

    fn open_with_lock(
        ws: Workspace,
        config: Config,
        dirs: &Dirs,
        registry: Registry,
        lock: lock::EngineLock,
    ) -> Result<Engine, EngineError> {
        drop(crate::store::open(&ws.db_path())?);
        let profile_dirs = vec![
            dirs.config.join("profiles"),
            ws.nbook_dir().join("profiles"),
        ];
        let seen = profiles::Fingerprint::of(&profile_dirs);
        let (profiles, profile_errors) = load_profiles(&profile_dirs, &registry);
        let (events, _) = broadcast::channel(4096);
        let agent_dir = ws.nbook_dir().join("agent");
        let jobs = Arc::new(jobs::JobStore::open(
            &ws.nbook_dir().join("agent").join("jobs"),
            lock.owned(),
        ));
        let engine = Engine {
            config: crate::config::LiveConfig::new(config, dirs.config_file()),
            config_watch: crate::config::live::Watch::new(dirs, Some(ws.root())),
            ws: Arc::new(ws),
            registry,
            profile_dirs,
            profiles: RwLock::new(Arc::new(profiles)),
            profile_errors: RwLock::new(Arc::new(profile_errors)),
            profiles_seen: Mutex::new(seen),
            events,
            state: Mutex::new(State::default()),
            lock,
            jobs,
            headless: Default::default(),
            host: Mutex::new(None),
            pending_store: pending_store::PendingStore::new(&agent_dir),
            closing: Default::default(),
        };
        engine.load_sessions()?;
        Ok(engine)
    }

    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.ws
    }

    /// The config in force now (a snapshot: a reload swaps in a new one).
    pub fn config(&self) -> Arc<Config> {
        self.config.get()
    }

    /// The shared handle on the config (the agent host reads its models through it).
    pub fn live_config(&self) -> &crate::config::LiveConfig {
        &self.config
    }

    /// Load config.toml (global and the project's) again if either changed since the last
    /// look. A file that no longer loads leaves the previous config in force and says why.
    pub fn reload_config_if_changed(&self) -> Option<crate::config::Reload> {
        self.config_watch
            .reload_if_changed(&self.config, self.registry.names())
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The declared effects of a registered tool (`None` for an unknown name).
    pub fn effects(&self, tool: &str) -> Option<effects::Effects> {
        self.registry.get(tool).map(|t| t.tool.effects())
    }

    /// The profiles as last loaded (a snapshot: a reload swaps in a new set).
    pub fn profiles(&self) -> Arc<Profiles> {
        self.profiles
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Profile files that failed to load (shown by the TUI and the CLI, never fatal).
    pub fn profile_errors(&self) -> Arc<Vec<ProfileError>> {
        self.profile_errors
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Read the profile folders again if a file in them changed since the last load, and
    /// make every session enforce its profile as the files now say: a tool taken out of an
    /// allowlist is refused from the next call on, one added is allowed. A session whose
    /// profile file was removed falls back to the built-in of that key, or to no tools at
    /// all. Returns whether anything was reloaded (callers tell their clients then).
    pub fn reload_profiles_if_changed(&self) -> bool {
        let now = profiles::Fingerprint::of(&self.profile_dirs);
        {
            let mut seen = self.profiles_seen.lock().unwrap_or_else(|e| e.into_inner());
            if *seen == now {
                return false;
            }
            *seen = now;
        }
        let (fresh, errors) = load_profiles(&self.profile_dirs, &self.registry);
        let fresh = Arc::new(fresh);
        *self.profiles.write().unwrap_or_else(|e| e.into_inner()) = fresh.clone();
        *self
            .profile_errors
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Arc::new(errors);
        let mut st = self.state();
        for rt in st.sessions.values_mut() {
            rt.profile = fresh
                .get(&rt.info.profile)
                .unwrap_or_else(|| Arc::new(missing_profile(&rt.info.profile)));
        }
        true
    }

    /// Why the project database is open read-only (a newer nbook wrote it), for a warning at
    /// open; `None` when it is writable.
    pub fn database_read_only(&self) -> Option<String> {
        crate::store::read_only_reason(&self.ws.db_path()).map(|e| e.to_string())
    }

    /// Mark this process as having no author to answer questions (`nbook run`).
    pub fn set_headless(&self, headless: bool) {
        self.headless
            .store(headless, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn is_headless(&self) -> bool {
        self.headless.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether this engine owns the project's approval queue (`lock`): only the owner marks
    /// calls left pending by a stopped nbook as interrupted.
    pub fn owns_queue(&self) -> bool {
        self.lock.owned()
    }

    /// Background jobs of this project.
    pub fn jobs(&self) -> &Arc<jobs::JobStore> {
        &self.jobs
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.events.subscribe()
    }

    /// The board changed outside a tool call (the scheduler's stage moves, `crate::runner`):
    /// clients reload what shows it, as after a board tool's call. `by` names the changer.
    pub fn board_changed(&self, by: &str) {
        self.emit(EngineEvent::DomainsChanged {
            session_id: by.to_string(),
            tool: "board scheduler".into(),
            domains: vec![crate::protocol::Domain::Board],
        });
    }

    /// Publish live progress of a model reply (`TextDelta`, `ReasoningDelta`,
    /// `ToolCallProgress`); other events are the engine's own to send.
    pub fn publish_progress(&self, event: EngineEvent) {
        if matches!(
            event,
            EngineEvent::TextDelta { .. }
                | EngineEvent::ReasoningDelta { .. }
                | EngineEvent::ToolCallProgress { .. }
        ) {
            self.emit(event);
        }
    }

    fn emit(&self, event: EngineEvent) {
        // No subscriber is fine (headless runs).
        let _ = self.events.send(event);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the queue half-updated in a way that
        // matters more than stopping the whole program would; keep going with the data.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn load_sessions(&self) -> Result<(), EngineError> {
        let dir = self.ws.sessions_dir();
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(());
        };
        // Logs are recovered and read without the state lock; only the inserts take it.
        let mut loaded = Vec::new();
        let mut next_approval = 0;
        // Only the queue's owner puts stored calls back; a guest's queue is another process's.
        let mut restore = if self.lock.owned() {
            self.stored_calls_to_restore()
        } else {
            HashMap::new()
        };
        let mut restored = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                continue;
            }
            if self.lock.owned() {
                let stem = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let keep: HashSet<String> = match restore.remove(&stem) {
                    Some(calls) => {
                        let ids = calls.iter().map(|c| c.approval_id.clone()).collect();
                        restored.extend(calls);
                        ids
                    }
                    None => HashSet::new(),
                };
                if let Err(e) = session_log::recover_except(&path, &keep) {
                    tracing::warn!("cannot recover {}: {e}", path.display());
                }
            }
            let Ok(read) = read_log(&path) else { continue };
            next_approval = next_approval.max(session_log::highest_approval_number(&read.lines));
            if let Some(info) = summarize(&read) {
                let custom = Arc::new(custom_state(&read));
                let profile = self
                    .profiles()
                    .get(&info.profile)
                    .unwrap_or_else(|| Arc::new(missing_profile(&info.profile)));
                loaded.push(SessionRt {
                    info,
                    custom,
                    profile,
                    log: Arc::new(LogWriter::lazy(path)),
                });
            }
        }
        let mut st = self.state();
        st.next_approval = st.next_approval.max(next_approval);
        for s in loaded {
            st.sessions.insert(s.info.id.clone(), s);
        }
        drop(st);
        self.drop_unloaded(restore);
        self.enqueue_restored(restored);
        Ok(())
    }

    /// Start a new session with a profile and a mode. Its log file is created now.
    pub fn create_session(
        &self,
        profile_key: &str,
        mode: Mode,
        title: &str,
        parent: Option<SessionId>,
    ) -> Result<SessionInfo, EngineError> {
        let profile = self
            .profiles()
            .get(profile_key)
            .ok_or_else(|| EngineError::UnknownProfile(profile_key.to_string()))?;
        let dir = self.ws.sessions_dir();
        let mut st = self.state();
        let mut next = st
            .sessions
            .keys()
            .filter_map(|k| k.parse::<u64>().ok())
            .max()
            .unwrap_or(0)
            + 1;
        // Another process may have created ids we have not seen: `create_new` decides.
        let (id, log) = loop {
            let id = next.to_string();
            let path = dir.join(format!("{id}.jsonl"));
            match SessionLog::create(&path) {
                Ok(log) => break (id, log),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => next += 1,
                Err(source) => {
                    return Err(EngineError::Log {
                        path: path.display().to_string(),
                        source,
                    })
                }
            }
        };
        let rt = SessionRt::fresh(&id, profile, title, mode, parent.clone(), log);
        let info = rt.info.clone();
        st.sessions.insert(id.clone(), rt);
        drop(st);
        self.append(
            &id,
            LogRecord::Header {
                session_id: id.clone(),
                profile: profile_key.to_string(),
                mode,
                title: title.to_string(),
                parent,
            },
        )?;
        self.emit(EngineEvent::Session {
            session: info.clone(),
        });
        Ok(info)
    }

    /// The session used by headless `nbook call`: `cli.jsonl`, one header per process.
    pub fn open_cli_session(
        &self,
        profile_key: &str,
        mode: Mode,
    ) -> Result<SessionId, EngineError> {
        let profile = self
            .profiles()
            .get(profile_key)
            .ok_or_else(|| EngineError::UnknownProfile(profile_key.to_string()))?;
        let id = "cli".to_string();
        let path = self.ws.sessions_dir().join("cli.jsonl");
        let log = SessionLog::open_append(&path).map_err(|source| EngineError::Log {
            path: path.display().to_string(),
            source,
        })?;
        let info = SessionInfo {
            id: id.clone(),
            profile: profile.key.clone(),
            title: "headless calls".into(),
            mode,
            state: SessionState::Idle,
            created_at: now_rfc3339(),
            parent: None,
            input_tokens: 0,
            output_tokens: 0,
            cost: 0.0,
            context_tokens: 0,
            context_window: 0,
            client: None,
            agent: None,
        };
        self.state().sessions.insert(
            id.clone(),
            SessionRt {
                info,
                custom: Arc::default(),
                profile,
                log: Arc::new(LogWriter::open(log)),
            },
        );
        self.append(
            &id,
            LogRecord::Header {
                session_id: id.clone(),
                profile: profile_key.to_string(),
                mode,
                title: "headless calls".into(),
                parent: None,
            },
        )?;
        Ok(id)
    }

    pub fn sessions(&self) -> Vec<SessionInfo> {
        let mut v: Vec<SessionInfo> = self
            .state()
            .sessions
            .values()
            .map(|s| s.info.clone())
            .collect();
        v.sort_by_key(|s| (s.id.parse::<u64>().unwrap_or(u64::MAX), s.id.clone()));
        v
    }

    pub fn session(&self, id: &str) -> Option<SessionInfo> {
        self.state().sessions.get(id).map(|s| s.info.clone())
    }

    pub fn session_profile(&self, id: &str) -> Option<Arc<Profile>> {
        self.state().sessions.get(id).map(|s| s.profile.clone())
    }

    /// The session's custom state (read by tools through `ToolCtx::session_state`).
    pub fn session_state(&self, id: &str) -> Arc<BTreeMap<String, serde_json::Value>> {
        self.state()
            .sessions
            .get(id)
            .map(|s| s.custom.clone())
            .unwrap_or_default()
    }

    /// Set custom-state keys for a session and log each as a `custom` record.
    pub fn set_session_state(
        &self,
        id: &str,
        updates: Vec<(String, serde_json::Value)>,
    ) -> Result<(), EngineError> {
        if updates.is_empty() {
            return Ok(());
        }
        let new_mode = updates
            .iter()
            .find(|(k, _)| k == MODE_STATE_KEY)
            .and_then(|(_, v)| v.as_str().and_then(Mode::parse));
        {
            let mut st = self.state();
            let s = st
                .sessions
                .get_mut(id)
                .ok_or_else(|| EngineError::UnknownSession(id.to_string()))?;
            let mut map = (*s.custom).clone();
            for (k, v) in &updates {
                map.insert(k.clone(), v.clone());
            }
            s.custom = Arc::new(map);
        }
        // The Sessions pane names the durable agent a session runs as: every client hears it.
        if let Some((_, v)) = updates
            .iter()
            .find(|(k, _)| k == agent_session::AGENT_STATE_KEY)
        {
            let agent = agent_session::agent_of(v);
            self.update_session(id, |s| s.agent = agent);
        }
        for (key, value) in updates {
            self.append(id, LogRecord::Custom { key, value })?;
        }
        if let Some(mode) = new_mode {
            self.set_mode(id, mode, "agent (approved)")?;
        }
        Ok(())
    }

    /// Everything in a session's log file.
    pub fn session_log(&self, id: &str) -> Result<ReadLog, EngineError> {
        let path = self
            .state()
            .sessions
            .get(id)
            .map(|s| s.log.path().to_path_buf())
            .ok_or_else(|| EngineError::UnknownSession(id.to_string()))?;
        read_log(&path).map_err(|source| EngineError::Log {
            path: path.display().to_string(),
            source,
        })
    }

    /// Append a record to a session's log and tell subscribers. The session's own writer
    /// serialises its appends; the engine's state lock is held only to find the writer.
    pub fn append(&self, session_id: &str, record: LogRecord) -> Result<LogLine, EngineError> {
        let log = self
            .state()
            .sessions
            .get(session_id)
            .map(|s| s.log.clone())
            .ok_or_else(|| EngineError::UnknownSession(session_id.to_string()))?;
        log.append(record, |line| {
            self.emit(EngineEvent::Log {
                session_id: session_id.to_string(),
                line: line.clone(),
            })
        })
        .map_err(|source| EngineError::Log {
            path: log.path().display().to_string(),
            source,
        })
    }

    fn update_session(&self, id: &str, f: impl FnOnce(&mut SessionInfo)) {
        let info = {
            let mut st = self.state();
            let Some(s) = st.sessions.get_mut(id) else {
                return;
            };
            f(&mut s.info);
            s.info.clone()
        };
        self.emit(EngineEvent::Session { session: info });
    }

    pub fn set_state(&self, id: &str, state: SessionState) {
        self.update_session(id, |s| s.state = state);
    }

    pub fn set_title(&self, id: &str, title: &str) {
        self.update_session(id, |s| s.title = title.to_string());
    }

    /// The author switches mode directly (no approval); `by` is recorded in the log.
    pub fn set_mode(&self, id: &str, mode: Mode, by: &str) -> Result<(), EngineError> {
        let from = self
            .session(id)
            .ok_or_else(|| EngineError::UnknownSession(id.to_string()))?
            .mode;
        if from == mode {
            return Ok(());
        }
        self.append(
            id,
            LogRecord::ModeChange {
                from,
                to: mode,
                by: by.to_string(),
            },
        )?;
        self.update_session(id, |s| s.mode = mode);
        Ok(())
    }

    pub fn add_usage(
        &self,
        id: &str,
        input: u64,
        output: u64,
        cost: f64,
    ) -> Result<(), EngineError> {
        self.add_usage_detailed(id, input, output, cost, 0, 0, false)
    }

    /// Record one assistant message's usage (the per-message figure) and add it to the
    /// session's totals.
    #[allow(clippy::too_many_arguments)]
    pub fn add_usage_detailed(
        &self,
        id: &str,
        input: u64,
        output: u64,
        cost: f64,
        cached: u64,
        reasoning: u64,
        estimated: bool,
    ) -> Result<(), EngineError> {
        self.append(
            id,
            LogRecord::Usage {
                input_tokens: input,
                output_tokens: output,
                cost,
                cached_input_tokens: cached,
                reasoning_tokens: reasoning,
                estimated,
            },
        )?;
        self.update_session(id, |s| {
            s.input_tokens += input;
            s.output_tokens += output;
            s.cost += cost;
        });
        Ok(())
    }

    /// Record how much of the model's window a session's next request uses (estimated).
    pub fn set_context_use(&self, id: &str, tokens: u64, window: u64) {
        self.update_session(id, |s| {
            s.context_tokens = tokens;
            s.context_window = window;
        });
    }

    /// Calls waiting for the author, oldest first (FIFO across sessions).
    pub fn pending(&self) -> Vec<PendingCall> {
        self.state().queue.iter().cloned().collect()
    }

    /// Answer a pending call by its approval id (`PendingCall::approval_id`). The waiting call
    /// then runs, is refused, or fails as stale. A selection of parts that does not fit the
    /// call (unknown part ids, another preview, a tool that cannot apply parts) is an error
    /// and decides nothing; dropping every part is a reject, keeping every part an approval.
    pub fn decide(&self, approval_id: &str, decision: Decision) -> Result<(), EngineError> {
        let (waiter, decision) = {
            let mut st = self.state();
            if st.restored.get(approval_id).is_some_and(|r| r.rx.is_some()) {
                // Restored at open, but nothing in this process would run it.
                return Err(EngineError::Setup(format!(
                    "{approval_id} waits from before the restart and this nbook runs no agent host to carry it out; decide it in the TUI (`nbook PATH`)"
                )));
            }
            if !st.waiters.contains_key(approval_id) {
                return Err(EngineError::UnknownCall(approval_id.to_string()));
            }
            // A selection of parts is checked against the waiting call's preview first: a
            // bad one is refused here and the call keeps waiting.
            let decision = match decision {
                Decision::ApproveParts { selection } => {
                    let Some(pending) = st.queue.iter().find(|p| p.approval_id == approval_id)
                    else {
                        return Err(EngineError::UnknownCall(approval_id.to_string()));
                    };
                    part_approval::settle(pending, selection)?
                }
                d => d,
            };
            let Some(tx) = st.waiters.remove(approval_id) else {
                return Err(EngineError::UnknownCall(approval_id.to_string()));
            };
            st.queue.retain(|p| p.approval_id != approval_id);
            (tx, decision)
        };
        self.forget_pending(approval_id);
        let label = decision.label().to_string();
        if waiter.send(decision).is_err() {
            return Err(EngineError::UnknownCall(approval_id.to_string()));
        }
        self.emit(EngineEvent::ApprovalResolved {
            approval_id: approval_id.to_string(),
            decision: label,
        });
        Ok(())
    }

    /// Check edited arguments before sending them with `Decision::Edit`.
    pub fn validate_args(&self, tool: &str, args: &serde_json::Value) -> Result<(), ArgsError> {
        let t = self
            .registry
            .get(tool)
            .ok_or_else(|| ArgsError::UnknownTool(tool.to_string()))?;
        t.validate(&tool::CallArgs::new(args.clone()))
            .map_err(|errors| ArgsError::Invalid {
                tool: tool.to_string(),
                errors,
            })
    }

    /// A new approval id, `ap-<n>`: unique in this engine and after every id in the logs.
    fn mint_approval_id(&self) -> ApprovalId {
        let mut st = self.state();
        st.next_approval += 1;
        format!("ap-{}", st.next_approval)
    }

    fn next_call_id(&self) -> CallId {
        let mut st = self.state();
        st.next_call += 1;
        format!("call-{}-{}", std::process::id(), st.next_call)
    }
}

/// Rebuild a session's summary from its log.
fn summarize(read: &ReadLog) -> Option<SessionInfo> {
    let mut info: Option<SessionInfo> = None;
    for line in &read.lines {
        match &line.record {
            LogRecord::Header {
                session_id,
                profile,
                mode,
                title,
                parent,
            } if info.is_none() => {
                info = Some(SessionInfo {
                    id: session_id.clone(),
                    profile: profile.clone(),
                    title: title.clone(),
                    mode: *mode,
                    state: SessionState::Idle,
                    created_at: line.ts.clone(),
                    parent: parent.clone(),
                    input_tokens: 0,
                    output_tokens: 0,
                    cost: 0.0,
                    context_tokens: 0,
                    context_window: 0,
                    client: None,
                    agent: None,
                });
            }
            LogRecord::ModeChange { to, .. } => {
                if let Some(i) = info.as_mut() {
                    i.mode = *to;
                }
            }
            LogRecord::Custom { key, value } if key == clients::CLIENT_STATE_KEY => {
                if let Some(i) = info.as_mut() {
                    i.client = value.as_str().map(str::to_string);
                }
            }
            LogRecord::Custom { key, value } if key == agent_session::AGENT_STATE_KEY => {
                if let Some(i) = info.as_mut() {
                    i.agent = agent_session::agent_of(value);
                }
            }
            LogRecord::Usage {
                input_tokens,
                output_tokens,
                cost,
                ..
            } => {
                if let Some(i) = info.as_mut() {
                    i.input_tokens += input_tokens;
                    i.output_tokens += output_tokens;
                    i.cost += cost;
                }
            }
            LogRecord::Lifecycle { status, .. } => {
                if let Some(i) = info.as_mut() {
                    i.state = if status == "error" {
                        SessionState::Failed
                    } else {
                        SessionState::Idle
                    };
                }
            }
            _ => {}
        }
    }
    info
}

/// Custom state of a session: the last value of each key.
fn custom_state(read: &ReadLog) -> BTreeMap<String, serde_json::Value> {
    let mut map = BTreeMap::new();
    for line in &read.lines {
        if let LogRecord::Custom { key, value } = &line.record {
            map.insert(key.clone(), value.clone());
        }
    }
    map
}

/// The profiles of `dirs` over the built-ins, with the load errors and the profiles that
/// list an author-only tool reported.
fn load_profiles(dirs: &[PathBuf], registry: &Registry) -> (Profiles, Vec<ProfileError>) {
    let (profiles, mut errors) = Profiles::load(dirs);
    errors.extend(profiles::author_only_listed(&profiles, |t| {
        registry
            .get(t)
            .is_some_and(|r| r.tool.effects().author_only)
    }));
    (profiles, errors)
}

/// A session whose profile no longer exists still lists and reads; it just allows no tools.
fn missing_profile(key: &str) -> Profile {
    Profile {
        key: key.to_string(),
        name: key.to_string(),
        description: "profile not found".into(),
        creation: profiles::Creation::SystemOnly,
        world_access: profiles::WorldAccess::None,
        tools: Vec::new(),
        draft: false,
        initial_schema: None,
        payload_schema: None,
        output_schema: None,
        prompt: String::new(),
        source: "missing".into(),
    }
}
