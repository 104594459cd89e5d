//! Routing a pane command to the focused pane, and the translation of engine events into
//! state: sessions, live transcript lines, the approval queue and the questions waiting
//! beside it, changed files, and which panes must reload.

use crate::engine::effects::Domain;
use crate::engine::{EngineEvent, LogRecord};
use crate::tui::action::{Command, Effect};
use crate::tui::app::{AppState, Pane};
use crate::tui::approvals::target_label;
use crate::tui::input::Overlay;

impl AppState {
    pub(crate) fn pane_command(&mut self, cmd: Command) -> Vec<Effect> {
        let page = self.regions().list_height(self.focus).max(1);
        match self.focus {
            Pane::Files => self.files_command(cmd),
            Pane::Story => self.story_command(cmd),
            Pane::World => self.world_command(cmd),
            Pane::Sessions => self.sessions_command(cmd, page),
            Pane::Approvals => self.approvals_command(cmd, page),
            Pane::Board => self.board_command(cmd, page),
        }
    }

    pub(crate) fn engine_event(&mut self, ev: EngineEvent) -> Vec<Effect> {
        match ev {
            EngineEvent::Session { session } => {
                let had_none = self.sessions.list.is_empty();
                self.sessions.upsert(session);
                if had_none {
                    return self.load_selected_session();
                }
                Vec::new()
            }
            EngineEvent::Log { session_id, line } => {
                if let LogRecord::User { text } = &line.record {
                    self.sessions.delivered(&session_id, text);
                }
                if matches!(
                    line.record,
                    LogRecord::Assistant { .. } | LogRecord::Lifecycle { .. }
                ) {
                    self.sessions.live.end(&session_id);
                }
                if let Some(t) = &mut self.sessions.transcript {
                    if t.session_id == session_id {
                        t.push_live(line);
                    }
                }
                Vec::new()
            }
            EngineEvent::ApprovalRequested { call } => {
                // The engine mailed the author about it: the Inbox and its count change.
                self.board.stale = true;
                if self.focus != Pane::Approvals {
                    let key = self
                        .keymap
                        .key_for(
                            Command::FocusApprovals,
                            &[crate::tui::keymap::Context::Global],
                        )
                        .map(|k| format!(" — press {} to review", k.notation()))
                        .unwrap_or_default();
                    self.info(format!(
                        "⏸ session {} asks to {}{key}",
                        call.session_id,
                        target_label(&call)
                    ));
                }
                let fx = self.notify_waiting(&call);
                self.approvals.push(call);
                fx
            }
            EngineEvent::ApprovalResolved {
                approval_id: call_id,
                decision,
            } => {
                self.notified.remove(&call_id);
                let ours = matches!(&self.overlay,
                    Some(Overlay::EditArgs { call_id: c, checking: true, .. }) if *c == call_id);
                if ours {
                    return self.edit_checked(call_id, Ok(()));
                }
                let was_open = match &self.overlay {
                    Some(Overlay::Detail { call_id: c, .. })
                    | Some(Overlay::RejectReason { call_id: c, .. })
                    | Some(Overlay::EditArgs { call_id: c, .. }) => *c == call_id,
                    _ => false,
                };
                let removed = self.approvals.remove(&call_id);
                if was_open {
                    self.overlay = None;
                    if let Some(call) = removed {
                        self.info(format!(
                            "{} was resolved elsewhere ({decision}); nothing was sent from here",
                            target_label(&call)
                        ));
                    }
                }
                Vec::new()
            }
            EngineEvent::FilesChanged { paths, .. } => self.files_changed(paths),
            EngineEvent::TextDelta { session_id, text } => {
                let now = self.now();
                self.sessions.live.text(&session_id, &text, now);
                Vec::new()
            }
            EngineEvent::ReasoningDelta { session_id, text } => {
                let now = self.now();
                self.sessions.live.reasoning(&session_id, &text, now);
                Vec::new()
            }
            EngineEvent::ToolCallProgress {
                session_id,
                index,
                name,
                argument_chars,
            } => {
                let now = self.now();
                self.sessions
                    .live
                    .call(&session_id, index, &name, argument_chars, now);
                Vec::new()
            }
            // Reload what shows a changed domain; the tool's declared effects say which.
            EngineEvent::DomainsChanged { domains, .. } => {
                if domains.contains(&Domain::Plot) {
                    self.story.stale = true;
                }
                if domains.contains(&Domain::World) {
                    self.world.stale = true;
                }
                if domains.contains(&Domain::Board) {
                    self.board.stale = true;
                }
                Vec::new()
            }
            EngineEvent::InputRequested { request } => {
                if self.focus != Pane::Approvals {
                    let key = self
                        .keymap
                        .key_for(
                            Command::FocusApprovals,
                            &[crate::tui::keymap::Context::Global],
                        )
                        .map(|k| format!(" — press {} to answer", k.notation()))
                        .unwrap_or_default();
                    let who = match request.source {
                        crate::engine::inputs::InputSource::Agent => "session",
                        crate::engine::inputs::InputSource::Workflow => "a workflow of session",
                    };
                    self.info(format!(
                        "? {who} {} asks: {}{key}",
                        request.session_id, request.title
                    ));
                }
                self.approvals.push_question(request);
                Vec::new()
            }
            EngineEvent::InputResolved { id, outcome } => {
                let ours = matches!(&self.overlay,
                    Some(Overlay::Answer(f)) if f.request.id == id && f.sending);
                if ours && outcome == "answered" {
                    return self.answer_checked(id, Ok(()));
                }
                let open = matches!(&self.overlay, Some(Overlay::Answer(f)) if f.request.id == id);
                let removed = self.approvals.remove_question(&id);
                if open {
                    self.overlay = None;
                    if let Some(q) = removed {
                        self.info(format!(
                            "The question \"{}\" was {outcome} elsewhere; nothing was sent from here",
                            q.title
                        ));
                    }
                }
                Vec::new()
            }
        }
    }
}
