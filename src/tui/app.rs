//! `AppState`: the whole UI model (focus, overlays, pane states, status line) and the single
//! entry point that changes it, [`AppState::update`]. Keys are resolved to commands here
//! through the keymap for the current context; the pane-specific halves of `update` live in
//! each pane's `update` module (`files`, `story`, `world`, `sessions`, `approvals`), the
//! forms' in `widgets::forms`, overlays' in `chrome::overlay_update`, engine events in `events`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyEvent, KeyEventKind};

use crate::engine::inputs::InputRequest;
use crate::engine::jobs::JobSnapshot;
use crate::engine::{PendingCall, SessionInfo, SessionState};
use crate::tui::action::{Action, Command, Effect, Ticket};
use crate::tui::approvals::ApprovalsState;
use crate::tui::board::BoardState;
use crate::tui::chrome::layout::{regions, Regions};
use crate::tui::clock::Clock;
use crate::tui::files::{FilesState, RelPath};
use crate::tui::input::Overlay;
use crate::tui::keymap::{Context, Keymap};
use crate::tui::keys::Key;
use crate::tui::sessions::{JobsList, SessionsState};
use crate::tui::story::StoryState;
use crate::tui::theme::Theme;
use crate::tui::widgets::forms::ProfileChoice;
use crate::tui::world::WorldState;

/// Approval keys are ignored this long after the last keystroke in a text input.
pub const TYPING_GUARD: Duration = Duration::from_secs(1);
/// How long a transient status message stays.
pub const MESSAGE_TTL: Duration = Duration::from_secs(6);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pane {
    Files,
    Story,
    World,
    Sessions,
    Approvals,
    Board,
}

impl Pane {
    pub const ALL: [Pane; 6] = [
        Pane::Files,
        Pane::Story,
        Pane::World,
        Pane::Sessions,
        Pane::Approvals,
        Pane::Board,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn title(self) -> &'static str {
        match self {
            Pane::Files => "Files",
            Pane::Story => "Story",
            Pane::World => "World",
            Pane::Sessions => "Sessions",
            Pane::Approvals => "Approvals",
            Pane::Board => "Board",
        }
    }

    pub fn context(self) -> Context {
        match self {
            Pane::Files => Context::Files,
            Pane::Story => Context::Story,
            Pane::World => Context::World,
            Pane::Sessions => Context::Sessions,
            Pane::Approvals => Context::Approvals,
            Pane::Board => Context::Board,
        }
    }

    pub fn next(self) -> Pane {
        Pane::ALL[(self.index() + 1) % Pane::ALL.len()]
    }

    pub fn prev(self) -> Pane {
        Pane::ALL[(self.index() + Pane::ALL.len() - 1) % Pane::ALL.len()]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgKind {
    Info,
    Ok,
    Error,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusMsg {
    pub text: String,
    pub kind: MsgKind,
    /// `None`: stays until replaced.
    pub until: Option<Instant>,
}

/// What a new `AppState` starts from.
pub struct AppInit {
    pub title: String,
    pub keymap: Keymap,
    pub theme: Theme,
    pub clock: Arc<dyn Clock>,
    pub size: (u16, u16),
    pub sessions: Vec<SessionInfo>,
    pub pending: Vec<PendingCall>,
    /// Questions waiting for the author (shown in the Approvals pane beside the calls).
    pub inputs: Vec<InputRequest>,
    /// Background jobs as the job store lists them.
    pub jobs: Vec<JobSnapshot>,
    /// Profiles a new session may use (system-only ones left out).
    pub profiles: Vec<ProfileChoice>,
    /// Model keys from config.toml's `[models]`.
    pub models: Vec<String>,
    pub focus_session: Option<String>,
    /// Problems found while starting (keymap or theme file errors), shown in the status bar.
    pub notices: Vec<String>,
}

pub struct AppState {
    pub title: String,
    pub keymap: Keymap,
    pub theme: Theme,
    pub clock: Arc<dyn Clock>,
    pub size: (u16, u16),
    pub focus: Pane,
    pub overlay: Option<Overlay>,
    pub files: FilesState,
    pub approvals: ApprovalsState,
    pub sessions: SessionsState,
    pub story: StoryState,
    pub world: WorldState,
    pub board: BoardState,
    pub status: Option<StatusMsg>,
    /// Every status message of this run, oldest first (the `M` overlay lists them).
    pub messages: Vec<crate::tui::chrome::messages::LoggedMsg>,
    pub notices: Vec<String>,
    pub profiles: Vec<ProfileChoice>,
    pub models: Vec<String>,
    /// Last keystroke into a text input (for the typing guard).
    pub last_typed: Option<Instant>,
    /// The last click on a list row (double-clicks open it).
    pub last_click: Option<crate::tui::mouse::LastClick>,
    pub wall_now: time::OffsetDateTime,
    /// Set whenever the state changed; the runtime draws and clears it.
    pub redraw: bool,
    /// `[notify]` from config.toml: the bell and desktop notification for waiting calls.
    pub notify: crate::tui::notify::NotifyConfig,
    /// Does the terminal have the focus? (Focus events; true until one says otherwise.)
    pub terminal_focused: bool,
    /// Calls a notification was sent for (each call rings once).
    pub notified: std::collections::HashSet<String>,
    /// The author's config.toml (named by the model setup and the "no model" hints).
    pub config_file: std::path::PathBuf,
    /// The servers the model setup asks first, `(label, base_url)` (tests point it at their
    /// own server).
    pub setup_servers: Vec<(String, String)>,
    next_ticket: Ticket,
}

impl AppState {
    pub fn new(init: AppInit) -> AppState {
        let wall_now = init.clock.wall();
        let mut app = AppState {
            title: init.title,
            keymap: init.keymap,
            theme: init.theme,
            clock: init.clock,
            size: init.size,
            focus: Pane::Files,
            overlay: None,
            files: FilesState::default(),
            approvals: ApprovalsState::default(),
            sessions: SessionsState::new(init.sessions),
            story: StoryState::default(),
            world: WorldState::default(),
            board: BoardState::default(),
            status: None,
            messages: Vec::new(),
            notices: init.notices,
            profiles: init.profiles,
            models: init.models,
            last_typed: None,
            last_click: None,
            wall_now,
            redraw: true,
            notify: Default::default(),
            terminal_focused: true,
            notified: Default::default(),
            config_file: std::path::PathBuf::from("config.toml"),
            setup_servers: crate::config::setup::USUAL_SERVERS
                .iter()
                .map(|(l, u)| (l.to_string(), u.to_string()))
                .collect(),
            next_ticket: 0,
        };
        app.approvals.replace_all(init.pending, init.inputs);
        app.sessions.jobs = JobsList::new(init.jobs);
        if let Some(id) = init.focus_session {
            if app.sessions.select_id(&id) {
                app.focus = Pane::Sessions;
            }
        }
        for n in app.notices.clone() {
            app.log_message(&n, MsgKind::Error);
        }
        if let Some(first) = app.notices.first().cloned() {
            app.status = Some(StatusMsg {
                text: first,
                kind: MsgKind::Error,
                until: None,
            });
        }
        app
    }

    /// The first background loads: root folder, file walk, story, world, transcript.
    pub fn start(&mut self) -> Vec<Effect> {
        let mut fx = Vec::new();
        fx.extend(self.load_dir(&RelPath::root()));
        let ticket = self.ticket();
        self.files.walk_ticket = Some(ticket);
        fx.push(Effect::WalkFiles { ticket });
        fx.extend(self.load_story());
        fx.extend(self.load_world());
        fx.extend(self.load_board());
        fx.extend(self.load_selected_session());
        fx
    }

    pub fn ticket(&mut self) -> Ticket {
        self.next_ticket += 1;
        self.next_ticket
    }

    pub fn regions(&self) -> Regions {
        regions(self.size.0, self.size.1, self.focus)
    }

    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    pub fn info(&mut self, text: impl Into<String>) {
        self.message(text, MsgKind::Info);
    }

    pub fn error(&mut self, text: impl Into<String>) {
        self.message(text, MsgKind::Error);
    }

    pub fn message(&mut self, text: impl Into<String>, kind: MsgKind) {
        let text = text.into();
        self.log_message(&text, kind);
        self.status = Some(StatusMsg {
            text,
            kind,
            until: Some(self.now() + MESSAGE_TTL),
        });
    }

    fn log_message(&mut self, text: &str, kind: MsgKind) {
        let at = self.clock.wall();
        crate::tui::chrome::messages::push(
            &mut self.messages,
            crate::tui::chrome::messages::LoggedMsg {
                text: text.to_string(),
                kind,
                at,
            },
        );
    }

    /// The session the status bar and Shift+Tab talk about: the selected call's session when
    /// the Approvals pane is focused, else the Sessions pane's selection.
    pub fn focused_session(&self) -> Option<&SessionInfo> {
        if self.focus == Pane::Approvals {
            if let Some(item) = self.approvals.selected_item() {
                if let Some(s) = self.sessions.get(item.session_id()) {
                    return Some(s);
                }
            }
        }
        self.sessions.selected()
    }

    /// Where keys are looked up, most specific first.
    pub fn contexts(&self) -> Vec<Context> {
        match &self.overlay {
            Some(o) if o.is_form() => vec![Context::Form],
            Some(o) if o.has_text_input() => vec![Context::Input],
            Some(Overlay::Detail { .. }) if self.approvals.search.is_some() => {
                vec![Context::DiffSearch, Context::Approvals, Context::Overlay]
            }
            Some(Overlay::Detail { .. }) => vec![Context::Approvals, Context::Overlay],
            Some(_) => vec![Context::Overlay],
            None => self.pane_contexts(),
        }
    }

    /// Where keys are looked up when no overlay is open (help lists these first).
    pub fn pane_contexts(&self) -> Vec<Context> {
        if self.focus == Pane::Approvals && self.approvals.search.is_some() {
            return vec![Context::DiffSearch, Context::Approvals, Context::Global];
        }
        if self.focus == Pane::Board && self.board.inbox.is_some() {
            return vec![Context::Inbox, Context::Board, Context::Global];
        }
        if self.focus != Pane::Sessions {
            return vec![self.focus.context(), Context::Global];
        }
        if self.sessions.composing {
            return vec![Context::Composer];
        }
        let mut v = Vec::new();
        if self.sessions.view == crate::tui::sessions::SessionsView::Jobs {
            v.push(Context::Jobs);
        } else if self.sessions.in_transcript {
            v.push(Context::Transcript);
        }
        v.extend([Context::Sessions, Context::Global]);
        v
    }

    /// True when unbound keys type text (a text field, a form, the composer).
    fn typing(contexts: &[Context]) -> bool {
        matches!(
            contexts,
            [Context::Input] | [Context::Form] | [Context::Composer]
        )
    }

    /// Resolve a key through the keymap and apply it. Only presses count.
    pub fn handle_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind != KeyEventKind::Press {
            return Vec::new();
        }
        let k = Key::from_event(&key);
        let contexts = self.contexts();
        let cmd = contexts.iter().find_map(|ctx| self.keymap.lookup(*ctx, k));
        match cmd {
            Some(cmd) => self.update(Action::Cmd(cmd)),
            None if Self::typing(&contexts) => self.update(Action::Text(key)),
            None => Vec::new(),
        }
    }

    /// The only place state changes.
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        if !matches!(action, Action::Tick) {
            self.redraw = true;
        }
        match action {
            Action::Cmd(cmd) => self.command(cmd),
            Action::Text(key) => self.text_input(key),
            Action::Paste(text) => self.paste(text),
            Action::Mouse(m) => self.mouse(m),
            Action::Resize(w, h) => {
                self.size = (w, h);
                self.clamp_scrolls();
                // The World pane's strip has one bucket per column.
                self.world_sync()
            }
            Action::Tick => self.tick(),
            Action::Engine(ev) => self.engine_event(ev),
            Action::Resync {
                pending,
                inputs,
                sessions,
            } => {
                self.approvals.replace_all(pending, inputs);
                self.sessions.replace_all(sessions);
                Vec::new()
            }
            Action::Job(snap) => self.job_changed(snap),
            Action::JobsResync(list) => {
                self.sessions.jobs.replace_all(list);
                Vec::new()
            }
            Action::InvokeAdmitted {
                session_id,
                text,
                mode,
                result,
            } => self.invoke_admitted(session_id, text, mode, result),
            Action::InvokeFinished {
                session_id,
                text,
                outcome,
            } => self.invoke_finished(session_id, text, outcome),
            Action::SessionCreated(result) => self.session_created(result),
            Action::DurableAgentsLoaded(result) => self.durable_agents_loaded(result),
            Action::AnswerChecked { id, result } => self.answer_checked(id, result),
            Action::Notice(msg) => {
                self.info(msg);
                Vec::new()
            }
            Action::DirLoaded {
                ticket,
                dir,
                result,
            } => self.dir_loaded(ticket, dir, result),
            Action::FilesWalked { ticket, paths } => self.files_walked(ticket, paths),
            Action::FinderMatched { ticket, matches } => self.finder_matched(ticket, matches),
            Action::PreviewLoaded {
                ticket,
                path,
                result,
            } => self.preview_loaded(ticket, path, result),
            Action::SessionLogLoaded {
                ticket,
                session_id,
                result,
            } => self.session_log_loaded(ticket, session_id, result),
            Action::StoryLoaded { ticket, result } => self.story_loaded(ticket, result),
            Action::StoryJobDone { ticket, result } => self.story_job_done(ticket, result),
            Action::WorldJobDone { ticket, result } => self.world_job_done(ticket, result),
            Action::BoardJobDone { ticket, result } => self.board_job_done(ticket, result),
            Action::HistoryJobDone { ticket, result } => self.history_job_done(ticket, result),
            Action::BoardScheduler(status) => {
                // What the scheduler sees changed (a session started or ended, a task it
                // cannot start): the board itself may have changed too, also from another
                // process (`nbook board create`), so the pane reloads at its next tick.
                if self.board.scheduler.as_ref() != Some(&status) {
                    self.board.stale = true;
                }
                self.board.scheduler = Some(status);
                Vec::new()
            }
            Action::EditChecked { call_id, result } => self.edit_checked(call_id, result),
            Action::Repreviewed { call_id, result } => self.repreviewed(call_id, result),
            Action::EffectFailed(msg) => {
                self.error(msg);
                Vec::new()
            }
            Action::EditorDone(done) => self.editor_done(done),
            Action::Focus(focused) => {
                self.terminal_focused = focused;
                Vec::new()
            }
            Action::SetupDone { ticket, result } => self.setup_done(ticket, result),
            Action::ConfigReloaded(r) => self.config_reloaded(r),
            Action::KeymapReloaded { keymap, errors } => {
                self.keymap = *keymap;
                let file = errors.first().map(|e| e.file.clone());
                match errors.first().map(|e| e.to_string()) {
                    Some(first) => {
                        let more = match errors.len() {
                            1 => String::new(),
                            n => format!(" (and {} more)", n - 1),
                        };
                        self.message(
                            format!("keymap reloaded; {first}{more} — the other lines apply"),
                            MsgKind::Error,
                        );
                    }
                    None => self.message(
                        format!(
                            "keymap reloaded{}",
                            file.map(|f| format!(" from {f}")).unwrap_or_default()
                        ),
                        MsgKind::Ok,
                    ),
                }
                Vec::new()
            }
        }
    }

    fn tick(&mut self) -> Vec<Effect> {
        self.wall_now = self.clock.wall();
        if !self.approvals.is_empty() || self.sessions.jobs.running() > 0 {
            self.redraw = true; // ages and elapsed times move
        }
        if let Some(msg) = &self.status {
            if msg.until.is_some_and(|u| self.now() >= u) {
                self.status = None;
                self.redraw = true;
            }
        }
        let mut fx = Vec::new();
        if self.focus == Pane::Story && self.story.stale && self.story.loading.is_none() {
            fx.extend(self.load_story());
        }
        fx.extend(self.world_tick());
        fx.extend(self.board_tick());
        fx
    }

    pub fn load_story(&mut self) -> Vec<Effect> {
        let ticket = self.ticket();
        self.story.loading = Some(ticket);
        self.story.stale = false;
        vec![Effect::LoadStory { ticket }]
    }

    pub fn load_world(&mut self) -> Vec<Effect> {
        self.world_reload()
    }

    pub(crate) fn focus_pane(&mut self, pane: Pane) -> Vec<Effect> {
        self.focus = pane;
        if pane != Pane::Sessions {
            self.sessions.composing = false;
        }
        match pane {
            Pane::Story => {
                let mut fx = Vec::new();
                if self.story.stale && self.story.loading.is_none() {
                    fx.extend(self.load_story());
                }
                fx.extend(self.story_sync_detail());
                fx
            }
            Pane::World => self.world_focused(),
            Pane::Board => self.board_focused(),
            _ => Vec::new(),
        }
    }

    /// Is anything busy that quitting would cut short?
    pub fn quit_concerns(&self) -> Vec<String> {
        let mut out = Vec::new();
        let busy = self
            .sessions
            .list
            .iter()
            .filter(|s| {
                matches!(
                    s.state,
                    SessionState::Running
                        | SessionState::WaitingApproval
                        | SessionState::WaitingInput
                )
            })
            .count();
        if busy > 0 {
            out.push(format!("{busy} session(s) are running; they will stop."));
        }
        // The engine keeps an agent's waiting calls on disk; an outside client's connection
        // ends with nbook, so its calls cannot wait for it.
        let (outside, kept): (Vec<_>, Vec<_>) = self.approvals.calls().partition(|c| {
            self.sessions
                .get(&c.session_id)
                .is_some_and(|s| s.client.is_some())
        });
        if !kept.is_empty() {
            out.push(format!(
                "{} call(s) wait for approval; they stay queued and wait again when you reopen the project.",
                kept.len()
            ));
        }
        if !outside.is_empty() {
            out.push(format!(
                "{} call(s) of outside clients wait for approval; they will be recorded as interrupted and not run.",
                outside.len()
            ));
        }
        let questions = self.approvals.question_count();
        if questions > 0 {
            out.push(format!(
                "{questions} question(s) wait for an answer; they will be withdrawn."
            ));
        }
        let jobs = self.sessions.jobs.running();
        if jobs > 0 {
            out.push(format!(
                "{jobs} background job(s) are running; they will be recorded as interrupted."
            ));
        }
        out
    }

    fn command(&mut self, cmd: Command) -> Vec<Effect> {
        // The terminal's own commands work wherever their key is bound.
        match cmd {
            Command::Suspend => return self.suspend(),
            Command::ExternalEditor => return self.external_editor(),
            _ => {}
        }
        if self.overlay.as_ref().is_some_and(Overlay::is_form) {
            return self.form_command(cmd);
        }
        if self.overlay.is_some() {
            return self.overlay_command(cmd);
        }
        if cmd.is_approval_key() {
            return self.approval_command(cmd);
        }
        match cmd {
            Command::Quit => {
                let concerns = self.quit_concerns();
                if concerns.is_empty() {
                    return vec![Effect::Quit];
                }
                self.overlay = Some(Overlay::ConfirmQuit { lines: concerns });
                Vec::new()
            }
            Command::Help => {
                self.overlay = Some(Overlay::Help { scroll: 0 });
                Vec::new()
            }
            Command::Copy => self.copy_selection(),
            Command::Messages => {
                self.overlay = Some(Overlay::Messages { scroll: 0 });
                Vec::new()
            }
            Command::Palette => {
                self.open_palette();
                Vec::new()
            }
            Command::FocusNext => {
                let p = self.focus.next();
                self.focus_pane(p)
            }
            Command::FocusPrev => {
                let p = self.focus.prev();
                self.focus_pane(p)
            }
            Command::FocusFiles => self.focus_pane(Pane::Files),
            Command::FocusStory => self.focus_pane(Pane::Story),
            Command::FocusWorld => self.focus_pane(Pane::World),
            Command::FocusSessions => self.focus_pane(Pane::Sessions),
            Command::FocusApprovals => self.focus_pane(Pane::Approvals),
            Command::FocusBoard => self.focus_pane(Pane::Board),
            Command::CycleMode => self.cycle_mode(),
            Command::ModelSetup => self.open_model_setup(),
            Command::Detail => self.open_detail(),
            Command::History => self.open_history(),
            Command::Find => self.open_finder(),
            Command::EditFile => {
                let mut fx = Vec::new();
                if self.focus != Pane::Files {
                    fx = self.focus_pane(Pane::Files);
                }
                fx.extend(self.edit_selected_file());
                fx
            }
            c if c.is_world() && self.focus != Pane::World => {
                let mut fx = self.focus_pane(Pane::World);
                fx.extend(self.pane_command(c));
                fx
            }
            c if c.is_board() && self.focus != Pane::Board => {
                let mut fx = self.focus_pane(Pane::Board);
                fx.extend(self.pane_command(c));
                fx
            }
            c if c.is_story() && self.focus != Pane::Story => {
                let mut fx = self.focus_pane(Pane::Story);
                fx.extend(self.pane_command(c));
                fx
            }
            c if c.is_diff() => {
                let mut fx = Vec::new();
                if self.focus != Pane::Approvals {
                    fx = self.focus_pane(Pane::Approvals);
                }
                fx.extend(self.diff_command(c));
                fx
            }
            c if c.is_sessions() && self.focus != Pane::Sessions => {
                let mut fx = self.focus_pane(Pane::Sessions);
                fx.extend(self.pane_command(c));
                fx
            }
            _ => self.pane_command(cmd),
        }
    }

    fn cycle_mode(&mut self) -> Vec<Effect> {
        let Some(s) = self.focused_session() else {
            self.info("No session selected: focus Sessions (4) and pick one to switch its mode.");
            return Vec::new();
        };
        let (id, mode) = (s.id.clone(), s.mode.next());
        self.info(format!("Session {id}: mode → {mode}"));
        vec![Effect::SetMode {
            session_id: id,
            mode,
        }]
    }

    fn clamp_scrolls(&mut self) {
        let h = self.regions().list_height(self.focus);
        self.files.tree.scroll_into_view(h);
    }
}
