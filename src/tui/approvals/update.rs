//! Approval decisions: `y` approve, `a` approve for the session (only where the engine offers
//! it), `n` reject with an optional reason, `e` edit the arguments (JSON checked here, schema
//! checked by the engine) and the full-screen detail. The typing guard and the receipts in
//! the status bar live here too.

use crate::engine::Decision;
use crate::tui::action::{Command, Effect};
use crate::tui::app::{AppState, MsgKind, TYPING_GUARD};
use crate::tui::approvals::{target_label, Waiting};
use crate::tui::input::{editor, single_line, text_of, Overlay};

fn scroll(v: &mut usize, cmd: Command, page: usize) {
    match cmd {
        Command::Down | Command::DetailDown => *v += if cmd == Command::DetailDown { 3 } else { 1 },
        Command::Up | Command::DetailUp => {
            *v = v.saturating_sub(if cmd == Command::DetailUp { 3 } else { 1 })
        }
        Command::PageDown => *v += page,
        Command::PageUp => *v = v.saturating_sub(page),
        Command::Top => *v = 0,
        Command::Bottom => *v = usize::MAX / 2,
        _ => {}
    }
}

impl AppState {
    /// List moves and preview scrolling in the Approvals pane.
    pub(crate) fn approvals_command(&mut self, cmd: Command, page: usize) -> Vec<Effect> {
        let a = &mut self.approvals;
        match cmd {
            Command::Down => a.move_by(1),
            Command::Up => a.move_by(-1),
            Command::PageDown => a.move_by(page as isize),
            Command::PageUp => a.move_by(-(page as isize)),
            Command::Top => a.move_by(isize::MIN / 2),
            Command::Bottom => a.move_by(isize::MAX / 2),
            Command::DetailDown | Command::DetailUp => scroll(&mut a.preview_scroll, cmd, page),
            _ => {}
        }
        a.offset =
            crate::tui::files::tree::window_offset(a.offset, a.selected, page, a.items.len());
        let max = match self.approvals.selected_item() {
            Some(Waiting::Call(c)) => {
                let width = crate::tui::approvals::preview::drawn_width(
                    self,
                    crate::tui::approvals::preview::Where::Pane,
                );
                crate::tui::approvals::view::request_items(self, c, width).len()
            }
            Some(Waiting::Question(q)) => {
                crate::tui::widgets::forms::view::question_rows(self, q).len()
            }
            None => 0,
        }
        .saturating_sub(1);
        self.approvals.preview_scroll = self.approvals.preview_scroll.min(max);
        Vec::new()
    }

    /// True while approval keys are ignored because the author was just typing.
    pub fn typing_guard_active(&self) -> bool {
        self.last_typed
            .is_some_and(|t| self.now().saturating_duration_since(t) < TYPING_GUARD)
    }

    /// `y`, `a`, `n`, `e` on the selected call (or the call shown in the detail overlay).
    pub(crate) fn approval_command(&mut self, cmd: Command) -> Vec<Effect> {
        let call_id = match &self.overlay {
            Some(Overlay::Detail { call_id, .. }) => Some(call_id.clone()),
            _ => self
                .approvals
                .selected_call()
                .map(|c| c.approval_id.clone()),
        };
        let Some(call) = call_id.and_then(|id| self.approvals.get(&id).cloned()) else {
            if let Some(q) = self.approvals.selected_question() {
                let key = self
                    .keymap
                    .key_for(Command::Detail, &[crate::tui::keymap::Context::Approvals])
                    .map(|k| k.notation())
                    .unwrap_or_else(|| "detail".into());
                let text = format!(
                    "\"{}\" is a question, not a call: {key} opens the form to answer it.",
                    q.title
                );
                self.info(text);
                return Vec::new();
            }
            self.info("No call is waiting for approval.");
            return Vec::new();
        };
        if self.typing_guard_active() {
            self.message(
                format!(
                    "Ignored '{}': approval keys pause for 1 s after typing, so a stray key never decides. Press it again.",
                    cmd.name()
                ),
                MsgKind::Error,
            );
            return Vec::new();
        }
        if matches!(cmd, Command::Approve | Command::ApproveSession) {
            if let Some(why) = self.approvals.stale_reason(&call.approval_id) {
                // Never approved blindly: the author first sees the change as it would be now.
                let text = format!(
                    "Not approved: {}: {why}. Previewing it anew; approve the new preview, or press n to reject.",
                    target_label(&call)
                );
                self.error(text);
                return vec![Effect::Repreview {
                    call_id: call.approval_id.clone(),
                }];
            }
        }
        match cmd {
            Command::Approve => match self.approvals.selection(&call) {
                // Every part dropped: that is a reject (with an optional reason).
                Some(selection) if selection.keep.is_empty() => {
                    self.overlay = Some(Overlay::RejectReason {
                        call_id: call.approval_id.clone(),
                        label: target_label(&call),
                        input: single_line("optional reason for the agent"),
                        parts: None,
                    });
                    self.info("Every part is dropped: approving none of them rejects the call.");
                    Vec::new()
                }
                // Some parts dropped: ask why (optional), then apply the kept ones.
                Some(selection) => {
                    self.overlay = Some(Overlay::RejectReason {
                        call_id: call.approval_id.clone(),
                        label: target_label(&call),
                        input: single_line("optional reason for the dropped parts"),
                        parts: Some(selection),
                    });
                    Vec::new()
                }
                None => self.decide(&call.approval_id, Decision::Approve),
            },
            Command::ApproveSession => {
                if call.session_grant_allowed {
                    return self.decide(&call.approval_id, Decision::ApproveForSession);
                }
                let why = if call.mode.is_read_only() {
                    format!(
                        "Approve-for-session is not offered in {} mode: an approval there covers one call only. Press y to approve this call.",
                        call.mode
                    )
                } else {
                    "Approve-for-session is not offered for this call by the approval policy. Press y to approve this call.".to_string()
                };
                self.error(why);
                Vec::new()
            }
            Command::Reject => {
                self.overlay = Some(Overlay::RejectReason {
                    call_id: call.approval_id.clone(),
                    label: target_label(&call),
                    input: single_line("optional reason for the agent"),
                    parts: None,
                });
                Vec::new()
            }
            Command::EditArgs | Command::EditArgsJson => {
                if cmd == Command::EditArgs {
                    if let Some(fx) = self.edit_proposal(&call) {
                        return fx;
                    }
                }
                let text = serde_json::to_string_pretty(&call.args)
                    .unwrap_or_else(|_| call.args.to_string());
                self.overlay = Some(Overlay::EditArgs {
                    call_id: call.approval_id.clone(),
                    tool: call.tool.clone(),
                    input: editor(&text),
                    error: None,
                    checking: false,
                });
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// Send a decision: the call leaves the list at once and a receipt shows in the status bar.
    pub(crate) fn decide(&mut self, call_id: &str, decision: Decision) -> Vec<Effect> {
        let Some(call) = self.approvals.remove(call_id) else {
            return Vec::new();
        };
        if matches!(self.overlay, Some(Overlay::Detail { .. })) {
            self.overlay = None;
        }
        let label = target_label(&call);
        let (text, kind) = match &decision {
            Decision::Approve => (format!("✔ approved {label}"), MsgKind::Ok),
            Decision::ApproveForSession => {
                (format!("✔ approved for this session {label}"), MsgKind::Ok)
            }
            Decision::Reject { reason: Some(r) } => {
                (format!("✗ rejected {label}: {r}"), MsgKind::Info)
            }
            Decision::Reject { reason: None } => (format!("✗ rejected {label}"), MsgKind::Info),
            Decision::Edit { .. } => (
                format!("✔ approved with edited arguments {label}"),
                MsgKind::Ok,
            ),
            Decision::ApproveParts { selection } => {
                let kept = crate::engine::parts::check(&call.preview, selection)
                    .map(|k| k.summary())
                    .unwrap_or_default();
                (format!("✔ approved in part ({kept}) {label}"), MsgKind::Ok)
            }
        };
        self.message(text, kind);
        vec![Effect::Decide {
            call_id: call_id.to_string(),
            decision,
        }]
    }

    pub(crate) fn open_detail(&mut self) -> Vec<Effect> {
        if let Some(id) = self.approvals.selected_question().map(|q| q.id.clone()) {
            return self.open_answer_form(&id);
        }
        match self.approvals.selected_call() {
            Some(c) => {
                self.overlay = Some(Overlay::Detail {
                    call_id: c.approval_id.clone(),
                    scroll: 0,
                });
            }
            None => self.info("No call is waiting for approval."),
        }
        Vec::new()
    }

    /// Enter / Ctrl+S in the reject prompt.
    pub(crate) fn submit_reject(&mut self) -> Vec<Effect> {
        let Some(Overlay::RejectReason {
            call_id,
            input,
            parts,
            ..
        }) = self.overlay.take()
        else {
            return Vec::new();
        };
        let reason = text_of(&input).trim().to_string();
        let reason = (!reason.is_empty()).then_some(reason);
        match parts {
            Some(selection) => self.decide(
                &call_id,
                Decision::ApproveParts {
                    selection: crate::engine::PartSelection {
                        reason,
                        ..selection
                    },
                },
            ),
            None => self.decide(&call_id, Decision::Reject { reason }),
        }
    }

    /// Ctrl+S in the argument editor: parse here, validate in the engine.
    pub(crate) fn submit_edit(&mut self) -> Vec<Effect> {
        let Some(Overlay::EditArgs {
            call_id,
            tool,
            input,
            error,
            checking,
        }) = &mut self.overlay
        else {
            return Vec::new();
        };
        if *checking {
            return Vec::new();
        }
        match serde_json::from_str::<serde_json::Value>(&text_of(input)) {
            Err(e) => {
                *error = Some(format!(
                    "Not valid JSON (line {}, column {}): {e}. Nothing was sent.",
                    e.line(),
                    e.column()
                ));
                Vec::new()
            }
            Ok(args) => {
                *error = None;
                *checking = true;
                vec![Effect::EditArgs {
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    args,
                }]
            }
        }
    }

    /// A stale restored call came back previewed anew: it shows the change as it would be made
    /// now, and only that can be approved.
    pub(crate) fn repreviewed(
        &mut self,
        call_id: String,
        result: Result<crate::engine::PendingCall, String>,
    ) -> Vec<Effect> {
        match result {
            Ok(call) => {
                let label = target_label(&call);
                if self.approvals.replace(call) {
                    self.info(format!(
                        "Previewed anew: {label} as it would change now. Read it, then approve or reject."
                    ));
                }
            }
            Err(e) => self.error(format!("{call_id} could not be previewed anew: {e}")),
        }
        Vec::new()
    }

    /// The engine checked edited arguments: `Ok` means they were sent with `Decision::Edit`.
    pub(crate) fn edit_checked(
        &mut self,
        call_id: String,
        result: Result<(), String>,
    ) -> Vec<Effect> {
        let editing_this =
            matches!(&self.overlay, Some(Overlay::EditArgs { call_id: c, .. }) if *c == call_id);
        // `e` from the detail of a write/edit: the edited file was approved, so the detail of
        // that call closes as after any other decision.
        let detail_of_this =
            matches!(&self.overlay, Some(Overlay::Detail { call_id: c, .. }) if *c == call_id);
        match result {
            Ok(()) => {
                if editing_this || detail_of_this {
                    self.overlay = None;
                }
                if let Some(call) = self.approvals.remove(&call_id) {
                    self.message(
                        format!("✔ approved with edited arguments {}", target_label(&call)),
                        MsgKind::Ok,
                    );
                }
            }
            Err(e) => {
                if let Some(Overlay::EditArgs {
                    error, checking, ..
                }) = &mut self.overlay
                {
                    if editing_this {
                        *error = Some(format!("{e}. Nothing was sent."));
                        *checking = false;
                        return Vec::new();
                    }
                }
                self.error(e);
            }
        }
        Vec::new()
    }
}
