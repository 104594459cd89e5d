//! The Story pane's writes: `e` reads the selected record into a JSON edit form, `x` and `D`
//! ask the engine what an archive or delete would change (its preview: the field changes, or
//! the cascade summary) and ask the author, and the results come back here — the status bar
//! shows what changed and that it was logged in the author session, and the pane reloads.

use crate::engine::types::Preview;
use crate::plot::ledger::NodeRef;
use crate::tui::action::{Effect, Ticket};
use crate::tui::app::{AppState, MsgKind};
use crate::tui::input::Overlay;
use crate::tui::story::edit::{self, EditForm, StoryWrite};
use crate::tui::story::jobs::{Prepared, StoryJob, Written};
use crate::tui::story::overlay::StoryOverlay;

impl AppState {
    fn selected_record(&mut self, what: &str) -> Option<NodeRef> {
        let node = self.story.selected_row().and_then(|r| r.node.node());
        if node.is_none() {
            self.info(format!("Select a record to {what}."));
        }
        node
    }

    pub(super) fn story_edit(&mut self) -> Vec<Effect> {
        let Some(node) = self.selected_record("edit") else {
            return Vec::new();
        };
        if let NodeRef::Phase(_) = node {
            self.info("Phases cannot be edited here (they have no update service).");
            return Vec::new();
        }
        let t = self.ticket();
        self.story.form_ticket = Some(t);
        vec![Effect::StoryJob {
            ticket: t,
            job: StoryJob::EditForm(node),
        }]
    }

    pub(super) fn story_archive(&mut self) -> Vec<Effect> {
        let Some(node) = self.selected_record("archive") else {
            return Vec::new();
        };
        match (node, edit::archive_verb(node)) {
            (_, None) => {
                self.info("Acts, chapters and phases have no archive; D deletes (it asks first).");
                Vec::new()
            }
            (NodeRef::Decision(_), _) => {
                self.overlay = Some(Overlay::Story(Box::new(StoryOverlay::note(node))));
                Vec::new()
            }
            _ => self.story_prepare(StoryWrite::Archive { node, note: None }),
        }
    }

    pub(super) fn story_delete(&mut self) -> Vec<Effect> {
        let Some(node) = self.selected_record("delete") else {
            return Vec::new();
        };
        if let NodeRef::Phase(_) = node {
            self.info("Phases cannot be deleted here; delete or move their threads.");
            return Vec::new();
        }
        self.story_prepare(StoryWrite::Delete { node })
    }

    /// Compute what a write would do (off the UI task), then ask.
    pub(crate) fn story_prepare(&mut self, write: StoryWrite) -> Vec<Effect> {
        let t = self.ticket();
        self.story.preparing = Some(t);
        self.info(format!(
            "Checking what {} {} would change…",
            write.verb(),
            edit::node_label(write.node())
        ));
        vec![Effect::StoryJob {
            ticket: t,
            job: StoryJob::Prepare(write),
        }]
    }

    /// Save a write; `seen` is the preview the author confirmed, if there was a dialog.
    pub(crate) fn story_write(
        &mut self,
        write: StoryWrite,
        seen: Option<Box<Preview>>,
    ) -> Vec<Effect> {
        let t = self.ticket();
        self.story.writing = Some(t);
        self.info(format!(
            "Saving: {} {}…",
            write.verb(),
            edit::node_label(write.node())
        ));
        let job = match seen {
            Some(preview) => StoryJob::Confirmed(write, preview),
            None => StoryJob::Write(write),
        };
        vec![Effect::StoryJob { ticket: t, job }]
    }

    pub(super) fn story_written(
        &mut self,
        ticket: Ticket,
        write: StoryWrite,
        r: Result<Written, String>,
    ) -> Vec<Effect> {
        if self.story.writing == Some(ticket) {
            self.story.writing = None;
        }
        let label = edit::node_label(write.node());
        match r {
            Err(e) => {
                if !self.story_edit_failed(ticket, &e) {
                    self.error(format!("✗ {} {label}: {e}", write.verb()));
                }
                Vec::new()
            }
            Ok(w) => {
                self.story_edit_saved(ticket);
                let n = w.changes.len();
                let what = format!("{} changed", crate::text::count(n, "record", "records"));
                let (log, kind) = match &w.logged {
                    Some(Ok(s)) => (format!(" · logged in session {s}"), MsgKind::Ok),
                    Some(Err(e)) => (format!(" · NOT logged: {e}"), MsgKind::Error),
                    None => (String::new(), MsgKind::Ok),
                };
                self.message(format!("✔ {} {label}: {what}{log}", write.verb()), kind);
                self.story.detail.gen += 1;
                self.load_story()
            }
        }
    }

    /// The edit form was read: open it (unless another overlay took the screen meanwhile).
    pub(super) fn story_form_ready(
        &mut self,
        ticket: Ticket,
        node: NodeRef,
        r: Result<EditForm, String>,
    ) -> Vec<Effect> {
        if self.story.form_ticket != Some(ticket) {
            return Vec::new();
        }
        self.story.form_ticket = None;
        match r {
            Ok(form) if self.overlay.is_none() => {
                self.overlay = Some(Overlay::Story(Box::new(StoryOverlay::edit(form))));
            }
            Ok(_) => {}
            Err(e) => self.error(format!("Cannot edit {}: {e}", edit::node_label(node))),
        }
        Vec::new()
    }

    /// A write's preview is ready: ask, listing what it changes or cascades.
    pub(super) fn story_prepared(
        &mut self,
        ticket: Ticket,
        write: StoryWrite,
        r: Result<Prepared, String>,
    ) -> Vec<Effect> {
        if self.story.preparing != Some(ticket) {
            return Vec::new();
        }
        self.story.preparing = None;
        match r {
            Ok(Prepared { lines, preview }) if self.overlay.is_none() => {
                self.status = None;
                let label = edit::node_label(write.node());
                let (title, lines) = match &write {
                    StoryWrite::Delete { .. } => {
                        ("Delete — this cannot be undone".to_string(), lines)
                    }
                    _ => {
                        let mut l = vec![format!("This {} changes:", write.verb())];
                        l.extend(lines);
                        (format!("{} {label}?", capitalise(write.verb())), l)
                    }
                };
                self.overlay = Some(Overlay::Story(Box::new(StoryOverlay::Confirm {
                    title,
                    lines,
                    write,
                    preview,
                    scroll: 0,
                })));
            }
            Ok(_) => {}
            Err(e) => self.error(format!(
                "✗ {} {}: {e}",
                write.verb(),
                edit::node_label(write.node())
            )),
        }
        Vec::new()
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
