//! The event loop: terminal input, engine events, finished jobs and a 1 s tick all arrive on
//! one channel; each wake-up drains everything pending, applies it through `AppState`, runs
//! the effects, and draws at most once per frame (≤ 60 fps) and only if something changed.
//! Effects that block (files, database, logs) run on the blocking pool and come back as
//! ticketed actions. Messages to agents go through the agent host without blocking; the end
//! of the run they start comes back as an action too. Background jobs are forwarded from the
//! job store's broadcast like engine events. Lending the terminal (the author's editor,
//! Ctrl+Z) and notifications are the loop's own effects: it holds the terminal, through a
//! [`Handover`] so tests can fake the lending.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream, KeyEvent};
use crossterm::execute;
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use futures::StreamExt;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use crate::agent::host::Host;
use crate::engine::agents::InvokeRequest;
use crate::engine::inputs::InputError;
use crate::engine::jobs::JobSnapshot;
use crate::engine::{Decision, Engine, EngineEvent};
use crate::tui::action::{Action, EditorJob, Effect};
use crate::tui::app::AppState;
use crate::tui::chrome::view;
use crate::tui::external::{editor_from_env, Handover};
use crate::tui::files::finder::{fuzzy_match, FINDER_LIMIT};
use crate::tui::files::jobs;
use crate::tui::story::jobs as story_jobs;
use crate::tui::terminal::Term;
use crate::tui::world::jobs as world_jobs;
use crate::tui::TuiError;

use crate::tui::action::AnswerRefusal;
use crate::tui::sessions::setup::{SetupJob, SetupResult};
use crate::tui::sessions::MODEL_STATE_KEY;

/// One frame at 60 fps.
pub const FRAME: Duration = Duration::from_micros(16_667);

pub enum Msg {
    Key(KeyEvent),
    Action(Box<Action>),
    /// The engine's broadcast lagged: re-read its state.
    Lagged,
    /// SIGTERM or SIGHUP: leave at once (the terminal is restored by the caller; calls still
    /// pending stay queued on disk and wait again at the next start).
    Terminate,
}

/// Runs effects against the engine and the file system; results come back on `tx`.
#[derive(Clone)]
pub struct Executor {
    pub engine: Arc<Engine>,
    pub tx: UnboundedSender<Msg>,
    pub root: PathBuf,
    pub db: PathBuf,
    /// Runs the agents the author prompts, steers and cancels (absent in tests and benches
    /// that only load data: those effects then say so).
    pub host: Option<Arc<Host>>,
    /// The config dir, where the author's trust of a project config is recorded.
    pub dirs: Option<crate::config::Dirs>,
    /// The board's scheduler (`S` stops and starts it).
    pub runner: Option<Arc<crate::runner::Runner>>,
    /// The heartbeat scheduler (the Board's agent list wakes an agent through it).
    pub heartbeats: Option<Arc<crate::runner::heartbeat::Heartbeats>>,
}

impl Executor {
    pub fn new(engine: Arc<Engine>, tx: UnboundedSender<Msg>) -> Executor {
        let root = engine.workspace().root().to_path_buf();
        let db = engine.workspace().db_path();
        Executor {
            engine,
            tx,
            root,
            db,
            host: None,
            dirs: None,
            runner: None,
            heartbeats: None,
        }
    }

    pub fn with_heartbeats(
        mut self,
        heartbeats: Option<Arc<crate::runner::heartbeat::Heartbeats>>,
    ) -> Executor {
        self.heartbeats = heartbeats;
        self
    }

    pub fn with_runner(mut self, runner: Option<Arc<crate::runner::Runner>>) -> Executor {
        self.runner = runner;
        self
    }

    pub fn with_host(mut self, host: Option<Arc<Host>>) -> Executor {
        self.host = host;
        self
    }

    pub fn with_dirs(mut self, dirs: Option<crate::config::Dirs>) -> Executor {
        self.dirs = dirs;
        self
    }

    fn host(&self) -> Result<&Arc<Host>, String> {
        self.host
            .as_ref()
            .ok_or_else(|| "no agent host runs in this view".to_string())
    }

    /// The model chosen for a session in the new-session form (`ui.model`), if any.
    pub fn session_model(&self, session_id: &str) -> Option<String> {
        self.engine
            .session_state(session_id)
            .get(MODEL_STATE_KEY)
            .and_then(|v| v.as_str())
            .map(str::to_string)
    }

    fn invoke(&self, session_id: String, text: String, mode: crate::engine::agents::InvokeMode) {
        let admitted = |result| Action::InvokeAdmitted {
            session_id: session_id.clone(),
            text: text.clone(),
            mode,
            result,
        };
        let host = match self.host() {
            Ok(h) => h,
            Err(e) => return self.send(admitted(Err(e))),
        };
        let req = InvokeRequest {
            caller: None,
            session_id: session_id.clone(),
            message: Some(text.clone()),
            input: None,
            mode,
            model: self.session_model(&session_id),
            origin_call_id: None,
        };
        match host.submit(req) {
            Err(e) => self.send(admitted(Err(e.to_string()))),
            Ok(rx) => {
                self.send(admitted(Ok(())));
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    if let Ok(outcome) = rx.await {
                        let _ = tx.send(Msg::Action(Box::new(Action::InvokeFinished {
                            session_id,
                            text,
                            outcome,
                        })));
                    }
                });
            }
        }
    }

    fn send(&self, a: Action) {
        let _ = self.tx.send(Msg::Action(Box::new(a)));
    }

    fn blocking(&self, f: impl FnOnce(&Executor) -> Action + Send + 'static) {
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            let a = f(&me);
            me.send(a);
        });
    }

    /// Run one effect. Returns true when the UI should quit.
    pub fn execute(&self, fx: Effect) -> bool {
        match fx {
            Effect::Quit => return true,
            // The terminal's: the run loop handles these before the executor sees them.
            Effect::Editor(_) | Effect::Notify(_) | Effect::Clipboard(_) => {
                tracing::warn!("a terminal effect reached the executor; ignored");
            }
            Effect::TrustProjectConfig {
                project,
                sha256,
                lines,
            } => {
                let result = match &self.dirs {
                    None => Err("no config dir in this view".to_string()),
                    Some(d) => crate::config::trust::trust(
                        d,
                        std::path::Path::new(&project),
                        &sha256,
                        lines,
                    )
                    .map_err(|e| e.to_string()),
                };
                self.send(match result {
                    Ok(_) => Action::Notice(format!(
                        "Trusted {project}'s config: its lines apply the next time you open the project."
                    )),
                    Err(e) => Action::EffectFailed(format!("cannot record the trust: {e}")),
                });
            }
            Effect::Decide { call_id, decision } => {
                if let Err(e) = self.engine.decide(&call_id, decision) {
                    self.send(Action::EffectFailed(format!(
                        "The decision was not delivered: {e}"
                    )));
                }
            }
            Effect::Repreview { call_id } => {
                self.blocking(move |x| Action::Repreviewed {
                    result: x.engine.repreview(&call_id),
                    call_id,
                });
            }
            Effect::EditArgs {
                call_id,
                tool,
                args,
            } => {
                let result = self
                    .engine
                    .validate_args(&tool, &args)
                    .map_err(|e| e.to_string())
                    .and_then(|()| {
                        self.engine
                            .decide(&call_id, Decision::Edit { new_args: args })
                            .map_err(|e| e.to_string())
                    });
                self.send(Action::EditChecked { call_id, result });
            }
            Effect::SetMode { session_id, mode } => {
                self.blocking(
                    move |x| match x.engine.set_mode(&session_id, mode, "author") {
                        Ok(()) => Action::Tick,
                        Err(e) => Action::EffectFailed(format!("Mode not changed: {e}")),
                    },
                )
            }
            Effect::Invoke {
                session_id,
                text,
                mode,
            } => self.invoke(session_id, text, mode),
            Effect::CancelRun { session_id } => match self.host() {
                Ok(h) => {
                    if !h.cancel(&session_id) {
                        self.send(Action::Notice(format!(
                            "Session {session_id} had no run to cancel (it may have just ended)."
                        )));
                    }
                }
                Err(e) => self.send(Action::EffectFailed(format!("Not cancelled: {e}"))),
            },
            Effect::LoadDurableAgents => self.blocking(move |x| {
                Action::DurableAgentsLoaded(crate::tui::widgets::forms::agent_choices(&x.engine))
            }),
            Effect::CreateSession {
                profile,
                agent,
                model,
                title,
                mode,
            } => self.blocking(move |x| {
                let created = match &agent {
                    Some(id) => x
                        .engine
                        .create_agent_session(id, mode, &title)
                        .map_err(|e| e.to_string()),
                    None => x
                        .engine
                        .create_session(&profile, mode, &title, None)
                        .map_err(|e| e.to_string()),
                };
                let result = created.and_then(|info| match model {
                    Some(m) => x
                        .engine
                        .set_session_state(&info.id, vec![(MODEL_STATE_KEY.into(), m.into())])
                        .map(|()| info)
                        .map_err(|e| format!("created, but the model was not stored: {e}")),
                    None => Ok(info),
                });
                Action::SessionCreated(result)
            }),
            Effect::AnswerInput { id, answers } => {
                let result = self.engine.answer_input(&id, answers).map_err(|e| {
                    let stays = matches!(e, InputError::BadAnswer { .. });
                    AnswerRefusal {
                        message: e.to_string(),
                        stays,
                    }
                });
                self.send(Action::AnswerChecked { id, result });
            }
            Effect::CancelJob { job_id } => match self.engine.jobs().cancel(&job_id, None) {
                Ok(snap) => self.send(Action::Notice(format!(
                    "Cancel sent to job {job_id} ({}); it stops at its next checkpoint.",
                    snap.title
                ))),
                Err(e) => self.send(Action::EffectFailed(format!("Job {job_id}: {e}"))),
            },
            Effect::LoadDir { ticket, dir } => self.blocking(move |x| {
                let result = jobs::list_dir(&x.root, &dir);
                Action::DirLoaded {
                    ticket,
                    dir,
                    result,
                }
            }),
            Effect::WalkFiles { ticket } => self.blocking(move |x| Action::FilesWalked {
                ticket,
                paths: Arc::new(jobs::walk_files(&x.root)),
            }),
            Effect::FilterFiles {
                ticket,
                query,
                paths,
            } => self.blocking(move |_| Action::FinderMatched {
                ticket,
                matches: {
                    let shown: Vec<_> = paths.iter().map(|p| p.shown()).collect();
                    fuzzy_match(&query, shown.iter().map(|s| s.as_ref()), true, FINDER_LIMIT)
                },
            }),
            Effect::LoadPreview { ticket, path } => self.blocking(move |x| {
                let result = jobs::read_preview(&x.root, &path);
                Action::PreviewLoaded {
                    ticket,
                    path,
                    result,
                }
            }),
            Effect::LoadSessionLog { ticket, session_id } => self.blocking(move |x| {
                let result = x
                    .engine
                    .session_log(&session_id)
                    .map(|r| r.lines)
                    .map_err(|e| e.to_string());
                Action::SessionLogLoaded {
                    ticket,
                    session_id,
                    result,
                }
            }),
            Effect::LoadStory { ticket } => self.blocking(move |x| Action::StoryLoaded {
                ticket,
                result: story_jobs::load(&x.engine.read()),
            }),
            Effect::StoryJob { ticket, job } => self.blocking(move |x| Action::StoryJobDone {
                ticket,
                result: story_jobs::run(&x.engine, job),
            }),
            Effect::BoardScheduler { on } => match &self.runner {
                Some(r) => r.set_enabled(on),
                None => self.send(Action::EffectFailed(
                    "No board scheduler runs in this view.".into(),
                )),
            },
            Effect::HeartbeatWake { agent } => match &self.heartbeats {
                Some(h) => {
                    let (h, tx) = (h.clone(), self.tx.clone());
                    tokio::task::spawn_blocking(move || {
                        use crate::runner::heartbeat::Woken;
                        let a = match h.wake(&agent) {
                            Ok(Woken::Started { run_id, session_id }) => Action::Notice(format!(
                                "{agent} woke: heartbeat run {run_id} in session {session_id} (Sessions pane)"
                            )),
                            Ok(Woken::Coalesced) => Action::Notice(format!(
                                "{agent} is at its maxConcurrentRuns: the wake runs when its current run ends"
                            )),
                            Err(e) => Action::EffectFailed(e.to_string()),
                        };
                        let _ = tx.send(Msg::Action(Box::new(a)));
                    });
                }
                None => self.send(Action::EffectFailed(
                    "This nbook does not run the heartbeats (another nbook on this project does, or none runs here): wake the agent there, or with `nbook agent wake ID`.".into(),
                )),
            },
            Effect::BoardJob { ticket, job } => self.blocking(move |x| Action::BoardJobDone {
                ticket,
                result: crate::tui::board::jobs::run(&x.engine, job),
            }),
            Effect::HistoryJob { ticket, job } => self.blocking(move |x| Action::HistoryJobDone {
                ticket,
                result: crate::tui::history::jobs::run(&x.engine, job),
            }),
            Effect::WorldJob { ticket, job } => self.blocking(move |x| Action::WorldJobDone {
                ticket,
                result: world_jobs::run(&x.engine.read(), job),
            }),
            Effect::Setup { ticket, job } => self.setup(ticket, job),
        }
        false
    }

    /// A job of the model setup form: probes on the runtime, file work on a blocking thread.
    fn setup(&self, ticket: crate::tui::action::Ticket, job: SetupJob) {
        use crate::config::setup;
        let done = move |result| Action::SetupDone { ticket, result };
        match job {
            SetupJob::Detect(candidates) => {
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let found = setup::detect(&candidates, setup::DETECT_TIMEOUT).await;
                    let _ = tx.send(Msg::Action(Box::new(done(SetupResult::Detected(found)))));
                });
            }
            SetupJob::Probe {
                base_url,
                api_key_env,
            } => {
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let env = |v: &str| std::env::var(v).ok();
                    let r = setup::probe(&base_url, api_key_env.as_deref(), &env)
                        .await
                        .map_err(|e| e.to_string());
                    let _ = tx.send(Msg::Action(Box::new(done(SetupResult::Probed(r)))));
                });
            }
            SetupJob::Plan {
                file,
                server,
                model,
            } => self.blocking(move |_| {
                done(SetupResult::Planned(
                    setup::plan(&file, &server, &model)
                        .map(Box::new)
                        .map_err(|e| e.to_string()),
                ))
            }),
            SetupJob::Write(plan) => self.blocking(move |x| {
                if let Err(e) = setup::apply(&plan) {
                    return done(SetupResult::Written(Err(e.to_string())));
                }
                // Reload now rather than at the next poll, so a session can start at once.
                if let Some(r) = x.engine.reload_config_if_changed() {
                    let dir = x.dirs.as_ref().map(|d| d.config.as_path());
                    x.send(config_reload_action(r, dir));
                }
                done(SetupResult::Written(Ok(plan.model_key.clone())))
            }),
        }
    }
}

/// The TUI's view of a reloaded config; `config_dir` is where user themes live (no theme is
/// loaded without it).
fn config_reload_action(r: crate::config::Reload, config_dir: Option<&std::path::Path>) -> Action {
    use crate::tui::action::ConfigReload;
    Action::ConfigReloaded(match r {
        crate::config::Reload::Applied(report) => {
            let mut notes = report.notes();
            let theme = config_dir.map(|dir| {
                let (theme, note) = crate::tui::theme::Theme::load(
                    report.config.theme.as_deref(),
                    Some(dir),
                    crate::tui::theme::Theme::no_colour_env(),
                );
                notes.extend(note);
                Box::new(theme)
            });
            ConfigReload {
                result: Ok((
                    report.config.models.keys().cloned().collect(),
                    report.config.notify.clone(),
                )),
                notes,
                theme,
            }
        }
        crate::config::Reload::Failed(e) => ConfigReload {
            result: Err(e.to_string()),
            notes: Vec::new(),
            theme: None,
        },
    })
}

/// Every ~2 s: load config.toml and keymap.toml again when their bytes changed, and tell the
/// UI. (Profiles have their own watch, `watch_profiles`.)
fn watch_settings(
    engine: Arc<Engine>,
    keymap_file: Option<std::path::PathBuf>,
    tx: UnboundedSender<Msg>,
) -> tokio::task::JoinHandle<()> {
    // The bytes the keymap in force came from, read now, before the first frame is drawn:
    // read inside the task, a keymap written while the task waited to be scheduled (a busy
    // machine) would count as already seen and never be reloaded.
    let mut keymap_seen = keymap_file.as_ref().map(|f| std::fs::read(f).ok());
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(2));
        every.tick().await;
        loop {
            every.tick().await;
            let e = engine.clone();
            let file = keymap_file.clone();
            let seen = keymap_seen.clone();
            let Ok((config, keymap, now)) = tokio::task::spawn_blocking(move || {
                let config = e.reload_config_if_changed();
                let now = file.as_ref().map(|f| std::fs::read(f).ok());
                let keymap = match (&file, now != seen) {
                    (Some(f), true) => Some(crate::tui::keymap::Keymap::load(f)),
                    _ => None,
                };
                (config, keymap, now)
            })
            .await
            else {
                break;
            };
            keymap_seen = now;
            if let Some(r) = config {
                if tx
                    .send(Msg::Action(Box::new(config_reload_action(
                        r,
                        keymap_file.as_ref().and_then(|f| f.parent()),
                    ))))
                    .is_err()
                {
                    break;
                }
            }
            if let Some((keymap, errors)) = keymap {
                let a = Action::KeymapReloaded {
                    keymap: Box::new(keymap),
                    errors,
                };
                if tx.send(Msg::Action(Box::new(a))).is_err() {
                    break;
                }
            }
        }
    })
}

/// What the loop listens to besides the terminal.
pub struct Sources {
    /// Subscribed before the app read the engine's queue, so no request falls in between.
    pub events: broadcast::Receiver<EngineEvent>,
    /// Subscribed before the app read the job list.
    pub jobs: broadcast::Receiver<JobSnapshot>,
    pub host: Option<Arc<Host>>,
    /// The config dir (for recording trust); absent in tests that do not trust.
    pub dirs: Option<crate::config::Dirs>,
    /// The board's scheduler, run while the UI is open (absent in tests that do not run it).
    pub runner: Option<Arc<crate::runner::Runner>>,
    /// The heartbeat scheduler, run beside the board's while this process holds the
    /// project's scheduler lock (absent otherwise, and in tests that do not run it).
    pub heartbeats: Option<Arc<crate::runner::heartbeat::Heartbeats>>,
}

/// Read the terminal's input. Stopped (the task aborted, which drops the stream and its
/// reader thread) while another program has the terminal, so no keystroke meant for the
/// editor or the shell is taken; started again afterwards.
fn spawn_input(tx: &UnboundedSender<Msg>) -> tokio::task::JoinHandle<()> {
    let t = tx.clone();
    tokio::spawn(async move {
        let mut events = EventStream::new();
        while let Some(ev) = events.next().await {
            let msg = match ev {
                Ok(Event::Key(k)) => Msg::Key(k),
                Ok(Event::Mouse(m)) => Msg::Action(Box::new(Action::Mouse(m))),
                Ok(Event::Resize(w, h)) => Msg::Action(Box::new(Action::Resize(w, h))),
                Ok(Event::Paste(s)) => Msg::Action(Box::new(Action::Paste(s))),
                Ok(Event::FocusGained) => Msg::Action(Box::new(Action::Focus(true))),
                Ok(Event::FocusLost) => Msg::Action(Box::new(Action::Focus(false))),
                Err(e) => {
                    tracing::warn!("terminal input error: {e}");
                    break;
                }
            };
            if t.send(msg).is_err() {
                break;
            }
        }
    })
}

fn spawn_sources(
    mut sub: broadcast::Receiver<EngineEvent>,
    mut jobs: broadcast::Receiver<JobSnapshot>,
    tx: &UnboundedSender<Msg>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = Vec::new();
    let t = tx.clone();
    tasks.push(tokio::spawn(async move {
        loop {
            let msg = match sub.recv().await {
                Ok(ev) => Msg::Action(Box::new(Action::Engine(ev))),
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!("UI lagged {n} engine events; resyncing");
                    Msg::Lagged
                }
                Err(RecvError::Closed) => break,
            };
            if t.send(msg).is_err() {
                break;
            }
        }
    }));
    let t = tx.clone();
    tasks.push(tokio::spawn(async move {
        loop {
            let msg = match jobs.recv().await {
                Ok(snap) => Msg::Action(Box::new(Action::Job(snap))),
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!("UI lagged {n} job updates; resyncing");
                    Msg::Lagged
                }
                Err(RecvError::Closed) => break,
            };
            if t.send(msg).is_err() {
                break;
            }
        }
    }));
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let t = tx.clone();
        tasks.push(tokio::spawn(async move {
            let (Ok(mut term), Ok(mut hup)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = hup.recv() => {}
            }
            let _ = t.send(Msg::Terminate);
        }));
        // SIGINT: in raw mode Ctrl+C is a key, so a SIGINT comes from elsewhere — or from a
        // Ctrl+C typed into a program the terminal is lent to (an editor in cooked mode gets
        // it too, and handles it). That one must not end nbook; another ends it like SIGTERM.
        let t = tx.clone();
        tasks.push(tokio::spawn(async move {
            let Ok(mut int) = signal(SignalKind::interrupt()) else {
                return;
            };
            while int.recv().await.is_some() {
                if crate::tui::external::handed_over() {
                    continue;
                }
                let _ = t.send(Msg::Terminate);
                break;
            }
        }));
    }
    let t = tx.clone();
    tasks.push(tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(1));
        loop {
            every.tick().await;
            if t.send(Msg::Action(Box::new(Action::Tick))).is_err() {
                break;
            }
        }
    }));
    tasks
}

/// The profile files are the allowlists: one the author edits while nbook runs is enforced
/// from the next call on (for agents and attached MCP clients alike), without a restart.
fn watch_profiles(engine: Arc<Engine>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(2));
        every.tick().await;
        loop {
            every.tick().await;
            let e = engine.clone();
            if tokio::task::spawn_blocking(move || e.reload_profiles_if_changed())
                .await
                .is_err()
            {
                break;
            }
        }
    })
}

fn draw(term: &mut Term, app: &AppState) -> Result<(), TuiError> {
    let _ = execute!(term.backend_mut(), BeginSynchronizedUpdate);
    let r = term.draw(|f| view(app, f)).map(|_| ());
    let _ = execute!(term.backend_mut(), EndSynchronizedUpdate);
    r?;
    Ok(())
}

/// Lend the terminal for one [`EditorJob`]: input reading stops, the program runs, input
/// reading starts again and the whole screen is drawn anew (the program drew over it).
async fn hand_over(
    exec: &Executor,
    handover: &mut dyn Handover,
    input: &mut tokio::task::JoinHandle<()>,
    term: &mut Term,
    job: EditorJob,
) -> Result<Action, TuiError> {
    input.abort();
    let _ = (&mut *input).await; // the stream (and its reader thread) is gone once this returns
    let editor = editor_from_env().map_err(|e| e.to_string());
    let done = crate::tui::handover::perform(&exec.engine, &exec.root, handover, editor, job).await;
    *input = spawn_input(&exec.tx);
    term.clear()?;
    Ok(Action::EditorDone(done))
}

/// Write a notification to the terminal (outside the frame: it draws nothing).
fn notify(term: &mut Term, n: &crate::tui::notify::Notification) {
    use std::io::Write as _;
    let tmux = std::env::var_os("TMUX").is_some();
    let out = term.backend_mut();
    if let Err(e) = out
        .write_all(n.bytes(tmux).as_bytes())
        .and_then(|()| out.flush())
    {
        tracing::warn!("cannot write a notification to the terminal: {e}");
    }
}

/// Put text on the clipboard through the terminal (OSC 52; outside the frame: it draws
/// nothing).
fn copy_to_clipboard(term: &mut Term, text: &str) {
    use std::io::Write as _;
    let tmux = std::env::var_os("TMUX").is_some();
    let out = term.backend_mut();
    if let Err(e) = out
        .write_all(crate::tui::clipboard::osc52(text, tmux).as_bytes())
        .and_then(|()| out.flush())
    {
        tracing::warn!("cannot write to the clipboard through the terminal: {e}");
    }
}

/// Run the UI until the author quits. The subscriptions in `sources` must have been made
/// before `app` read the engine's queue and job list, so nothing falls in between.
/// `handover` lends the terminal to the author's editor and the shell (`TerminalHandover`
/// for the real terminal).
pub async fn run_loop(
    engine: Arc<Engine>,
    sources: Sources,
    mut app: AppState,
    term: &mut Term,
    handover: &mut dyn Handover,
    started: Instant,
) -> Result<(), TuiError> {
    let (tx, mut rx) = unbounded_channel::<Msg>();
    let mut tasks = spawn_sources(sources.events, sources.jobs, &tx);
    tasks.push(watch_profiles(engine.clone()));
    tasks.push(watch_settings(
        engine.clone(),
        sources.dirs.as_ref().map(|d| d.config.join("keymap.toml")),
        tx.clone(),
    ));
    let mut input = spawn_input(&tx);
    let runner_stop = tokio_util::sync::CancellationToken::new();
    if let Some(r) = &sources.runner {
        tasks.push(r.spawn(runner_stop.clone()));
        tasks.push(forward_scheduler(r.clone(), tx.clone()));
    }
    if let Some(h) = &sources.heartbeats {
        tasks.push(h.spawn(runner_stop.clone()));
    }
    let exec = Executor::new(engine.clone(), tx.clone())
        .with_host(sources.host)
        .with_dirs(sources.dirs)
        .with_runner(sources.runner)
        .with_heartbeats(sources.heartbeats.clone());
    let mut quit = false;
    let mut queue: VecDeque<Effect> = app.start().into();
    while let Some(fx) = queue.pop_front() {
        quit |= exec.execute(fx);
    }
    draw(term, &app)?;
    app.redraw = false;
    tracing::info!(
        "first frame {} ms after start",
        started.elapsed().as_millis()
    );
    let mut last_draw = Instant::now();
    while !quit {
        let first = if app.redraw {
            let wait = (last_draw + FRAME).saturating_duration_since(Instant::now());
            match tokio::time::timeout(wait, rx.recv()).await {
                Ok(Some(m)) => Some(m),
                Ok(None) => break,
                Err(_) => None,
            }
        } else {
            match rx.recv().await {
                Some(m) => Some(m),
                None => break,
            }
        };
        let mut batch: Vec<Msg> = first.into_iter().collect();
        while batch.len() < 4096 {
            match rx.try_recv() {
                Ok(m) => batch.push(m),
                Err(_) => break,
            }
        }
        for msg in batch {
            let fx = match msg {
                Msg::Key(k) => app.handle_key(k),
                Msg::Action(a) => app.update(*a),
                Msg::Lagged => {
                    let mut fx = app.update(Action::Resync {
                        pending: engine.pending(),
                        inputs: engine.pending_inputs(),
                        sessions: engine.sessions(),
                    });
                    fx.extend(app.update(Action::JobsResync(engine.jobs().list(None, None))));
                    fx
                }
                Msg::Terminate => {
                    quit = true;
                    break;
                }
            };
            queue.extend(fx);
            while let Some(e) = queue.pop_front() {
                match e {
                    Effect::Editor(job) => {
                        let a = hand_over(&exec, handover, &mut input, term, job).await?;
                        queue.extend(app.update(a));
                        app.redraw = true;
                    }
                    Effect::Notify(n) => notify(term, &n),
                    Effect::Clipboard(text) => copy_to_clipboard(term, &text),
                    e => quit |= exec.execute(e),
                }
                if quit {
                    break;
                }
            }
            if quit {
                break;
            }
        }
        if !quit && app.redraw && last_draw.elapsed() >= FRAME {
            draw(term, &app)?;
            app.redraw = false;
            last_draw = Instant::now();
        }
    }
    input.abort();
    runner_stop.cancel();
    if let Some(h) = &sources.heartbeats {
        // No timer fires after the UI is gone (the spawned loop may not run again).
        h.stop();
    }
    for t in tasks {
        t.abort();
    }
    Ok(())
}

/// The scheduler's state for the Board: sent when it reports something and once a second
/// (a session starting to wait for the author is the engine's news, not the scheduler's),
/// only when it changed.
fn forward_scheduler(
    runner: Arc<crate::runner::Runner>,
    tx: UnboundedSender<Msg>,
) -> tokio::task::JoinHandle<()> {
    let mut events = runner.subscribe();
    tokio::spawn(async move {
        let mut last = None;
        loop {
            let status = runner.status();
            if last.as_ref() != Some(&status) {
                last = Some(status.clone());
                let msg = Msg::Action(Box::new(Action::BoardScheduler(status)));
                if tx.send(msg).is_err() {
                    break;
                }
            }
            tokio::select! {
                ev = events.recv() => {
                    if matches!(ev, Err(RecvError::Closed)) {
                        break;
                    }
                }
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    })
}
