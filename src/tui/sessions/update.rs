//! The Sessions pane as a control surface: moving in the session list, the transcript cursor
//! (expanding tool calls), the composer (prompt / steer / follow-up), cancelling a run, the
//! background jobs view, and what comes back from the agent host (admission, the end of a run).

use crate::engine::agents::{InvokeMode, InvokeOutcome};
use crate::engine::jobs::JobSnapshot;
use crate::engine::LogLine;
use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::{AppState, MsgKind};
use crate::tui::input::{composer, text_of};
use crate::tui::keymap::Context;
use crate::tui::sessions::{is_busy, Delivery, Entry, Outgoing, SessionsView, Transcript};

fn move_index(i: &mut usize, len: usize, cmd: Command, page: usize) {
    let last = len.saturating_sub(1);
    match cmd {
        Command::Down => *i = (*i + 1).min(last),
        Command::Up => *i = i.saturating_sub(1),
        Command::PageDown => *i = (*i + page).min(last),
        Command::PageUp => *i = i.saturating_sub(page),
        Command::Top => *i = 0,
        Command::Bottom => *i = last,
        _ => {}
    }
}

fn is_move(cmd: Command) -> bool {
    matches!(
        cmd,
        Command::Down
            | Command::Up
            | Command::PageDown
            | Command::PageUp
            | Command::Top
            | Command::Bottom
    )
}

impl AppState {
    fn sessions_key(&self, cmd: Command, ctx: Context) -> String {
        self.keymap
            .key_for(cmd, &[ctx, Context::Sessions])
            .map(|k| k.notation())
            .unwrap_or_else(|| cmd.name().to_string())
    }

    /// Give the composer the keys (a draft per session is kept).
    pub(crate) fn start_composing(&mut self) -> bool {
        let Some(id) = self.sessions.selected().map(|s| s.id.clone()) else {
            let key = self.sessions_key(Command::NewSession, Context::Sessions);
            self.info(format!("No session yet: {key} starts one."));
            return false;
        };
        // The author session records the author's own edits: no model runs there.
        if self.sessions.selected().map(|s| s.profile.as_str())
            == Some(crate::engine::author::AUTHOR_PROFILE)
        {
            let key = self.sessions_key(Command::NewSession, Context::Sessions);
            self.info(format!(
                "Session {id} records your own edits; no agent runs there. {key} starts a session to talk to an agent."
            ));
            return false;
        }
        self.sessions
            .drafts
            .entry(id)
            .or_insert_with(|| composer("write a message…"));
        self.sessions.composing = true;
        self.sessions.in_transcript = false;
        true
    }

    pub(crate) fn sessions_command(&mut self, cmd: Command, page: usize) -> Vec<Effect> {
        match cmd {
            Command::Compose => {
                self.sessions.view = SessionsView::Sessions;
                self.start_composing();
                return Vec::new();
            }
            Command::NewSession => return self.open_new_session(),
            Command::ToggleJobs => {
                let s = &mut self.sessions;
                s.view = match s.view {
                    SessionsView::Sessions => SessionsView::Jobs,
                    SessionsView::Jobs => SessionsView::Sessions,
                };
                s.in_transcript = false;
                return Vec::new();
            }
            Command::CancelRun if self.sessions.view == SessionsView::Jobs => {
                return self.cancel_job()
            }
            Command::CancelRun => return self.cancel_run(),
            Command::CancelJob => return self.cancel_job(),
            Command::JobSession => return self.job_session(),
            Command::Send => return self.send(false),
            Command::SendFollowup => return self.send(true),
            Command::Newline => {
                if let Some(id) = self.sessions.selected().map(|s| s.id.clone()) {
                    if let Some(t) = self.sessions.drafts.get_mut(&id) {
                        t.insert_newline();
                        self.last_typed = Some(self.clock.now());
                    }
                }
                return Vec::new();
            }
            Command::LeaveComposer => {
                self.sessions.composing = false;
                return Vec::new();
            }
            Command::OpenTranscript => {
                let n = self
                    .sessions
                    .transcript
                    .as_ref()
                    .filter(|t| Some(&t.session_id) == self.sessions.selected().map(|s| &s.id))
                    .map_or(0, |t| t.entries.len());
                if n == 0 {
                    self.info("The transcript is empty: nothing to select yet.");
                    return Vec::new();
                }
                let s = &mut self.sessions;
                s.view = SessionsView::Sessions;
                s.in_transcript = true;
                s.cursor = s.scroll.unwrap_or(n - 1).min(n - 1);
                s.scroll = Some(s.cursor);
                return Vec::new();
            }
            Command::LeaveTranscript => {
                self.sessions.in_transcript = false;
                return Vec::new();
            }
            Command::ToggleEntry => return self.toggle_entry(),
            Command::RateRun => {
                self.rate_open_session();
                return Vec::new();
            }
            _ => {}
        }
        if self.sessions.view == SessionsView::Jobs {
            let j = &mut self.sessions.jobs;
            if is_move(cmd) {
                move_index(&mut j.selected, j.list.len(), cmd, page);
                j.offset = crate::tui::files::tree::window_offset(
                    j.offset,
                    j.selected,
                    page,
                    j.list.len(),
                );
            }
            return Vec::new();
        }
        if self.sessions.in_transcript && is_move(cmd) {
            let s = &mut self.sessions;
            let n = s.transcript.as_ref().map_or(0, |t| t.entries.len());
            move_index(&mut s.cursor, n, cmd, page);
            s.scroll = Some(s.cursor);
            return Vec::new();
        }
        let s = &mut self.sessions;
        let before = s.selected;
        match cmd {
            c if is_move(c) => move_index(&mut s.selected, s.list.len(), c, page),
            Command::DetailUp => {
                let n = s.transcript.as_ref().map(|t| t.entries.len()).unwrap_or(0);
                let anchor = s.scroll.unwrap_or(n.saturating_sub(1));
                s.scroll = Some(anchor.saturating_sub(3));
                s.cursor = s.scroll.unwrap_or(0);
            }
            Command::DetailDown => {
                let n = s.transcript.as_ref().map(|t| t.entries.len()).unwrap_or(0);
                s.scroll = s.scroll.map(|a| a + 3).filter(|a| *a + 1 < n);
                if let Some(a) = s.scroll {
                    s.cursor = a;
                }
            }
            Command::Follow => {
                s.scroll = None;
                let n = s.transcript.as_ref().map(|t| t.entries.len()).unwrap_or(0);
                s.cursor = n.saturating_sub(1);
                if s.in_transcript {
                    s.scroll = Some(s.cursor);
                }
            }
            Command::Refresh => return self.load_selected_session(),
            _ => {}
        }
        let s = &mut self.sessions;
        s.offset = crate::tui::files::tree::window_offset(s.offset, s.selected, page, s.list.len());
        if s.selected != before {
            s.in_transcript = false;
            return self.load_selected_session();
        }
        Vec::new()
    }

    fn toggle_entry(&mut self) -> Vec<Effect> {
        let s = &mut self.sessions;
        let Some(t) = &mut s.transcript else {
            return Vec::new();
        };
        match t.entries.get(s.cursor).and_then(Entry::call_id) {
            Some(id) => {
                let id = id.to_string();
                if !t.expanded.remove(&id) {
                    t.expanded.insert(id);
                }
            }
            None => self.info("Only tool calls expand; this line is shown in full."),
        }
        Vec::new()
    }

    fn cancel_run(&mut self) -> Vec<Effect> {
        let Some(s) = self.sessions.selected() else {
            self.info("No session selected: nothing to cancel.");
            return Vec::new();
        };
        let id = s.id.clone();
        if !is_busy(s.state) {
            let quit = self
                .keymap
                .key_for(Command::Quit, &[Context::Global])
                .map(|k| k.notation())
                .unwrap_or_else(|| "quit".into());
            self.info(format!(
                "Session {id} is {}: there is no run to cancel ({quit} quits nbook).",
                s.state.label()
            ));
            return Vec::new();
        }
        self.info(format!(
            "Cancelling session {id}'s run (its follow-ups, questions and the agents it waits on stop too)…"
        ));
        vec![Effect::CancelRun { session_id: id }]
    }

    fn cancel_job(&mut self) -> Vec<Effect> {
        let Some(j) = self.sessions.jobs.selected() else {
            self.info("No background job to cancel.");
            return Vec::new();
        };
        let (id, title, status) = (j.job_id.clone(), j.title.clone(), j.status);
        if status.is_final() {
            self.info(format!("Job {id} is already {}.", status.as_str()));
            return Vec::new();
        }
        self.info(format!("Cancelling job {id} ({title})…"));
        vec![Effect::CancelJob { job_id: id }]
    }

    /// Go to the session a job runs (an `invoke_agent` job), else the one that owns it.
    fn job_session(&mut self) -> Vec<Effect> {
        let Some(j) = self.sessions.jobs.selected() else {
            return Vec::new();
        };
        let target = j
            .reference
            .get("sessionId")
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .or_else(|| j.owner_session_id.clone());
        let id = j.job_id.clone();
        match target {
            Some(sid) if self.sessions.select_id(&sid) => {
                self.sessions.view = SessionsView::Sessions;
                self.sessions.in_transcript = false;
                self.load_selected_session()
            }
            Some(sid) => {
                self.info(format!("Job {id}'s session {sid} is not in the list."));
                Vec::new()
            }
            None => {
                self.info(format!(
                    "Job {id} was started by the author: it has no session."
                ));
                Vec::new()
            }
        }
    }

    /// Enter (or the follow-up key) in the composer.
    fn send(&mut self, followup: bool) -> Vec<Effect> {
        let Some(info) = self.sessions.selected().cloned() else {
            self.sessions.composing = false;
            self.info("No session selected: nothing to send to.");
            return Vec::new();
        };
        let text = self
            .sessions
            .drafts
            .get(&info.id)
            .map(text_of)
            .unwrap_or_default()
            .trim()
            .to_string();
        if text.is_empty() {
            let leave = self.sessions_key(Command::LeaveComposer, Context::Composer);
            self.error(format!(
                "Nothing to send: type a message first ({leave} leaves the composer)."
            ));
            return Vec::new();
        }
        let mode = match (is_busy(info.state), followup) {
            (false, _) => InvokeMode::Prompt,
            (true, false) => InvokeMode::Steer,
            (true, true) => InvokeMode::Followup,
        };
        if followup && mode == InvokeMode::Prompt {
            self.info(format!(
                "Session {} is not running, so the message goes as a prompt.",
                info.id
            ));
        }
        self.sessions
            .drafts
            .insert(info.id.clone(), composer("write a message…"));
        self.sessions
            .outbox
            .entry(info.id.clone())
            .or_default()
            .push(Outgoing {
                text: text.clone(),
                mode,
                delivery: Delivery::Sending,
            });
        self.sessions.scroll = None;
        vec![Effect::Invoke {
            session_id: info.id,
            text,
            mode,
        }]
    }

    fn restore_draft(&mut self, session_id: &str, text: &str) -> bool {
        let draft = self
            .sessions
            .drafts
            .entry(session_id.to_string())
            .or_insert_with(|| composer("write a message…"));
        if !text_of(draft).trim().is_empty() {
            return false;
        }
        draft.select_all();
        draft.cut();
        draft.insert_str(text);
        true
    }

    /// The agent host admitted a composer message, or refused it.
    pub(crate) fn invoke_admitted(
        &mut self,
        session_id: String,
        text: String,
        mode: InvokeMode,
        result: Result<(), String>,
    ) -> Vec<Effect> {
        let out = self.sessions.outbox.entry(session_id.clone()).or_default();
        let pos = out
            .iter()
            .position(|o| o.text == text && o.delivery == Delivery::Sending);
        match result {
            Ok(()) => {
                if let Some(p) = pos {
                    if mode != InvokeMode::Prompt {
                        out[p].delivery = Delivery::Queued;
                    }
                }
                let msg = match mode {
                    InvokeMode::Steer => format!(
                        "→ steer for session {session_id}: the agent reads it at its next turn."
                    ),
                    InvokeMode::Followup => format!(
                        "→ follow-up queued for session {session_id}: it runs when the current run ends."
                    ),
                    _ => format!("→ sent to session {session_id}."),
                };
                self.info(msg);
            }
            Err(e) => {
                if let Some(p) = pos {
                    out.remove(p);
                }
                let back = if self.restore_draft(&session_id, &text) {
                    " Your message is back in the composer."
                } else {
                    ""
                };
                self.error(format!("Not sent to session {session_id}: {e}.{back}"));
            }
        }
        Vec::new()
    }

    /// The run a composer message started or joined has ended.
    pub(crate) fn invoke_finished(
        &mut self,
        session_id: String,
        text: String,
        outcome: InvokeOutcome,
    ) -> Vec<Effect> {
        let out = self.sessions.outbox.entry(session_id.clone()).or_default();
        let pos = out.iter().position(|o| o.text == text);
        let error = outcome.error.clone().unwrap_or_default();
        if outcome.status == "error" {
            if let Some(p) = pos {
                out[p].delivery = Delivery::Failed(error.clone());
            }
            if error.contains("cancelled") {
                self.info(format!("Session {session_id}: {error}."));
            } else {
                self.error(format!("Session {session_id}: {error}"));
            }
        } else {
            if let Some(p) = pos {
                out.remove(p);
            }
            if outcome.status == "waiting" {
                self.info(format!("Session {session_id} stopped: {error}."));
            } else if self.focus != crate::tui::app::Pane::Sessions
                || self.sessions.selected().map(|s| s.id.as_str()) != Some(session_id.as_str())
            {
                self.message(
                    format!("✔ session {session_id} finished its run"),
                    MsgKind::Ok,
                );
            }
        }
        Vec::new()
    }

    pub(crate) fn job_changed(&mut self, snap: JobSnapshot) -> Vec<Effect> {
        let ended = snap.status.is_final()
            && self
                .sessions
                .jobs
                .list
                .iter()
                .any(|j| j.job_id == snap.job_id && !j.status.is_final());
        if ended && snap.owner_session_id.is_none() {
            let text = match &snap.error {
                Some(e) => format!(
                    "Job {} ({}) {}: {e}",
                    snap.job_id,
                    snap.title,
                    snap.status.as_str()
                ),
                None => format!(
                    "Job {} ({}) {}",
                    snap.job_id,
                    snap.title,
                    snap.status.as_str()
                ),
            };
            self.info(text);
        }
        self.sessions.jobs.upsert(snap);
        Vec::new()
    }

    /// Read the selected session's log in the background.
    pub(crate) fn load_selected_session(&mut self) -> Vec<Effect> {
        let Some(id) = self.sessions.selected().map(|s| s.id.clone()) else {
            self.sessions.transcript = None;
            return Vec::new();
        };
        let ticket = self.ticket();
        let mut t = match self.sessions.transcript.take() {
            Some(t) if t.session_id == id => t,
            _ => {
                self.sessions.scroll = None;
                Transcript::new(&id)
            }
        };
        t.loading = Some(ticket);
        t.live.clear();
        self.sessions.transcript = Some(t);
        vec![Effect::LoadSessionLog {
            ticket,
            session_id: id,
        }]
    }

    pub(crate) fn session_log_loaded(
        &mut self,
        ticket: Ticket,
        session_id: String,
        result: Result<Vec<LogLine>, String>,
    ) -> Vec<Effect> {
        let Some(t) = &mut self.sessions.transcript else {
            return Vec::new();
        };
        if t.session_id != session_id || t.loading != Some(ticket) {
            return Vec::new();
        }
        match result {
            Ok(lines) => {
                t.load(lines);
                t.error = None;
            }
            Err(e) => t.error = Some(e),
        }
        t.loading = None;
        t.live.clear();
        Vec::new()
    }
}
