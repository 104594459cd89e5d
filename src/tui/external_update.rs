//! The UI side of the author's editor, Ctrl+Z and notifications: which text goes to the
//! editor (`e` on a file, Ctrl+E in a text field, `e` on a waiting `write`/`edit`), what comes
//! back (saved, unchanged, put back in the field, the call's edited arguments), and when a
//! waiting call rings the bell. The terminal work itself is the run loop's
//! (`tui::handover`, `tui::external`); here it is only [`Effect`]s and [`EditorDone`]s.

use tui_textarea::TextArea;

use crate::engine::PendingCall;
use crate::tools::content_edit::ContentCall;
use crate::tui::action::{EditorDone, EditorJob, Effect, FileSaved, TextTarget};
use crate::tui::app::{AppState, MsgKind, Pane};
use crate::tui::approvals::target_label;
use crate::tui::input::{text_of, Overlay};
use crate::tui::notify::Notification;
use crate::tui::story::overlay::StoryOverlay;

/// Replace a field's whole text (one undoable change), leaving the cursor at its end. The
/// single newline editors add at the end of a file is dropped.
fn put_back(t: &mut TextArea<'static>, text: &str) {
    let text = text.strip_suffix('\n').unwrap_or(text);
    t.select_all();
    t.cut();
    t.insert_str(text);
}

impl AppState {
    /// `e` in the Files pane: the selected file in the editor.
    pub(crate) fn edit_selected_file(&mut self) -> Vec<Effect> {
        match self.files.tree.selected_node() {
            Some(n) if !n.is_dir => {
                let path = n.path.clone();
                vec![Effect::Editor(EditorJob::File { path })]
            }
            Some(_) => {
                self.info("That is a folder: select a file to edit it in your editor.");
                Vec::new()
            }
            None => {
                self.info("No file selected.");
                Vec::new()
            }
        }
    }

    /// Ctrl+E: hand the text being written to the editor.
    pub(crate) fn external_editor(&mut self) -> Vec<Effect> {
        let job = match &self.overlay {
            Some(Overlay::RejectReason { call_id, input, .. }) => Some((
                TextTarget::RejectReason {
                    call_id: call_id.clone(),
                },
                text_of(input),
                "reject-reason.md",
            )),
            Some(Overlay::EditArgs { call_id, input, .. }) => Some((
                TextTarget::EditArgs {
                    call_id: call_id.clone(),
                },
                text_of(input),
                "arguments.json",
            )),
            Some(Overlay::Story(o)) => match o.as_ref() {
                StoryOverlay::Edit { input, .. } => {
                    Some((TextTarget::StoryRecord, text_of(input), "record.json"))
                }
                _ => None,
            },
            None if self.focus == Pane::Sessions && self.sessions.composing => {
                self.sessions.selected().map(|s| {
                    let text = self
                        .sessions
                        .drafts
                        .get(&s.id)
                        .map(text_of)
                        .unwrap_or_default();
                    (
                        TextTarget::Composer {
                            session_id: s.id.clone(),
                        },
                        text,
                        "message.md",
                    )
                })
            }
            _ => None,
        };
        match job {
            Some((target, text, name)) => vec![Effect::Editor(EditorJob::Text {
                target,
                text,
                name: name.into(),
            })],
            None => {
                self.info("Ctrl+E hands a text to your editor in the composer, the reject reason, the argument editor and the Story record editor.");
                Vec::new()
            }
        }
    }

    /// `e` on a waiting call: a `write` or `edit` opens the file it proposes in the editor;
    /// `None` for other calls (their arguments are edited as JSON).
    pub(crate) fn edit_proposal(&mut self, call: &PendingCall) -> Option<Vec<Effect>> {
        match ContentCall::of(&call.tool, &call.args) {
            Ok(Some(_)) => Some(vec![Effect::Editor(EditorJob::Proposal {
                approval_id: call.approval_id.clone(),
                tool: call.tool.clone(),
                args: call.args.clone(),
            })]),
            // Arguments the tool does not take: the JSON editor shows them as they are.
            Ok(None) | Err(_) => None,
        }
    }

    /// Ctrl+Z.
    pub(crate) fn suspend(&mut self) -> Vec<Effect> {
        vec![Effect::Editor(EditorJob::Suspend)]
    }

    /// The terminal is back.
    pub(crate) fn editor_done(&mut self, done: EditorDone) -> Vec<Effect> {
        match done {
            EditorDone::Suspended(Ok(())) => Vec::new(),
            EditorDone::Suspended(Err(e)) => {
                self.error(e);
                Vec::new()
            }
            EditorDone::File { path, result } => match result {
                Ok(FileSaved::Unchanged) => {
                    self.info(format!("No changes to {path}."));
                    Vec::new()
                }
                Ok(FileSaved::Saved { summary }) => {
                    self.message(
                        format!("✔ saved {path} ({summary}, logged as yours)"),
                        MsgKind::Ok,
                    );
                    // The engine's files_changed event marks it and reloads its folder; the
                    // preview is reloaded here too, in case that event is still on its way.
                    self.preview_selected(true)
                }
                Err(e) => {
                    self.error(format!("Not saved: {e}"));
                    Vec::new()
                }
            },
            EditorDone::Text { target, result } => self.text_back(target, result),
            EditorDone::Proposal {
                approval_id,
                tool,
                result,
            } => {
                let label = self.approvals.get(&approval_id).map(target_label);
                match (result, label) {
                    (_, None) => {
                        self.error("The call was decided or withdrawn while you edited it; your edit was not sent.");
                        Vec::new()
                    }
                    (Ok(None), Some(label)) => {
                        self.info(format!("No changes: {label} still waits."));
                        Vec::new()
                    }
                    (Ok(Some(args)), Some(label)) => {
                        self.info(format!("Checking your edit of {label}…"));
                        vec![Effect::EditArgs {
                            call_id: approval_id,
                            tool,
                            args,
                        }]
                    }
                    (Err(e), Some(_)) => {
                        self.error(format!("Not edited: {e}. The call still waits."));
                        Vec::new()
                    }
                }
            }
        }
    }

    fn text_back(
        &mut self,
        target: TextTarget,
        result: Result<Option<String>, String>,
    ) -> Vec<Effect> {
        let text = match result {
            Ok(Some(t)) => t,
            Ok(None) => {
                self.info("No changes.");
                return Vec::new();
            }
            Err(e) => {
                self.error(format!("Your text is as it was: {e}"));
                return Vec::new();
            }
        };
        let field: Option<&mut TextArea<'static>> = match (&target, &mut self.overlay) {
            (
                TextTarget::RejectReason { call_id },
                Some(Overlay::RejectReason {
                    call_id: c, input, ..
                }),
            )
            | (
                TextTarget::EditArgs { call_id },
                Some(Overlay::EditArgs {
                    call_id: c, input, ..
                }),
            ) if c == call_id => Some(input),
            (TextTarget::StoryRecord, Some(Overlay::Story(o))) => match o.as_mut() {
                StoryOverlay::Edit { input, .. } => Some(input),
                _ => None,
            },
            (TextTarget::Composer { session_id }, None) => self.sessions.drafts.get_mut(session_id),
            _ => None,
        };
        match field {
            Some(t) => {
                put_back(t, &text);
                self.last_typed = Some(self.clock.now());
                self.info("Your edited text is back in the field.");
            }
            None => {
                let kept = crate::tui::external::keep_text(text.as_bytes(), "text.md")
                    .map(|p| format!("it is kept in {}", p.display()))
                    .unwrap_or_else(|e| format!("it could not be kept: {e}"));
                self.error(format!("The field you edited is closed; {kept}."));
            }
        }
        Vec::new()
    }

    /// A call starts waiting: a notification if the author is not looking at the Approvals
    /// pane (or the terminal is not focused), once per call.
    pub(crate) fn notify_waiting(&mut self, call: &PendingCall) -> Vec<Effect> {
        let looking = self.focus == Pane::Approvals && self.terminal_focused;
        if looking || self.notify.is_off() || !self.notified.insert(call.approval_id.clone()) {
            return Vec::new();
        }
        vec![Effect::Notify(Notification {
            title: format!("nbook: {} waits for you", self.title),
            body: format!("session {} asks to {}", call.session_id, target_label(call)),
            bell: self.notify.bell,
            desktop: self.notify.desktop,
        })]
    }
}
