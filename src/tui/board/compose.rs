//! The Inbox's two writing forms: `c` a new message (the recipient — a durable agent, a
//! profile agent or a live session, ↑/↓ to choose — and the text), `p` a post in a chat room
//! (the room, then the text). Both send as the author through the engine's author call
//! (`fn_send_message`, `fn_post_room_message`), like the Board's other writes. The form says
//! how the message reaches the recipient — at once in the live session of an `immediate`
//! agent, at its next run for an `on-heartbeat` one (the engine decides; see
//! `crate::board::mailbox::response_mode`). An empty or over-long text, no recipient, or a
//! refusal from the engine (a recipient deleted meanwhile) is shown in the form, which stays
//! open; nothing is sent. Keys come from `[input]` (↑/↓ choose, Enter sends, Esc cancels).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use tui_textarea::TextArea;

use crate::board::mailbox::CONTENT_LIMIT;
use crate::engine::mail::Recipient;
use crate::engine::read::Room;
use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::{AppState, MsgKind};
use crate::tui::board::inbox::InboxJob;
use crate::tui::board::jobs::{BoardJob, BoardWrite};
use crate::tui::board::overlay::BoardOverlay;
use crate::tui::chrome::{centered, overlay_frame, put_line};
use crate::tui::input::{single_line, text_of, Overlay};
use crate::tui::widgets::wrap::{draw_top_down, fit_width, Cut};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailFormKind {
    /// `c`: a message to an agent or a session.
    Message,
    /// `p`: a post in a chat room.
    RoomPost,
}

/// One recipient or room of the form's list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub id: String,
    pub label: String,
    /// How the message reaches it (a room: who reads it).
    pub note: String,
}

impl Choice {
    pub fn of_recipient(r: &Recipient) -> Choice {
        Choice {
            id: r.id.clone(),
            label: r.label.clone(),
            note: r.reach(),
        }
    }

    pub fn of_room(r: &Room) -> Choice {
        Choice {
            id: r.id.clone(),
            label: r.name.clone(),
            note: if r.members.is_empty() {
                "no members yet: nobody reads it until one is added".into()
            } else {
                format!("every member reads it: {}", r.members.join(", "))
            },
        }
    }
}

pub struct MailForm {
    pub kind: MailFormKind,
    /// `None` while the recipients are read; `Err` when they could not be.
    pub choices: Option<Result<Vec<Choice>, String>>,
    pub selected: usize,
    pub content: TextArea<'static>,
    pub error: Option<String>,
    /// Sent to the engine; the form stays open until it answers (a refusal is shown here).
    pub sending: bool,
    /// The recipients' read.
    pub ticket: Option<Ticket>,
}

impl MailForm {
    pub fn new(kind: MailFormKind, choices: Option<Result<Vec<Choice>, String>>) -> MailForm {
        MailForm {
            kind,
            choices,
            selected: 0,
            content: single_line(match kind {
                MailFormKind::Message => "your message",
                MailFormKind::RoomPost => "your post",
            }),
            error: None,
            sending: false,
            ticket: None,
        }
    }

    pub fn rows(&self) -> &[Choice] {
        match &self.choices {
            Some(Ok(c)) => c,
            _ => &[],
        }
    }

    pub fn chosen(&self) -> Option<&Choice> {
        self.rows().get(self.selected)
    }

    fn move_by(&mut self, delta: isize) {
        let n = self.rows().len();
        self.selected = self
            .selected
            .saturating_add_signed(delta)
            .min(n.saturating_sub(1));
    }

    /// What would be sent — the recipient (or room) id and the text — or what to fix first.
    pub fn check(&self) -> Result<(String, String), String> {
        let what = match self.kind {
            MailFormKind::Message => "recipient",
            MailFormKind::RoomPost => "room",
        };
        let to = match &self.choices {
            None => return Err(format!("The {what}s are still being read; a moment.")),
            Some(Err(e)) => return Err(format!("No {what} to choose: {e}")),
            Some(Ok(_)) => match self.chosen() {
                Some(c) => c.id.clone(),
                None => {
                    return Err(match self.kind {
                        MailFormKind::Message => {
                            "Nobody to write to: there is no agent, profile or session yet.".into()
                        }
                        MailFormKind::RoomPost => "There is no room to post in yet.".into(),
                    })
                }
            },
        };
        let text = text_of(&self.content).trim().to_string();
        if text.is_empty() {
            return Err(
                "Type the text first, e.g. \"Keep the fog for the last scene.\" Nothing was sent."
                    .into(),
            );
        }
        let n = text.chars().count();
        if n > CONTENT_LIMIT {
            return Err(format!(
                "The text has {n} characters; at most {CONTENT_LIMIT} fit in a message. Nothing was sent."
            ));
        }
        Ok((to, text))
    }

    fn write(&self, to: String, text: String) -> BoardWrite {
        match self.kind {
            MailFormKind::Message => BoardWrite::Compose { to, text },
            MailFormKind::RoomPost => BoardWrite::RoomPost { room: to, text },
        }
    }
}

impl AppState {
    fn mail_form(&mut self) -> Option<&mut MailForm> {
        match &mut self.overlay {
            Some(Overlay::Board(o)) => match o.as_mut() {
                BoardOverlay::Mail(f) => Some(f),
                _ => None,
            },
            _ => None,
        }
    }

    /// `c` in the Inbox: the new-message form; the recipients are read meanwhile.
    pub(crate) fn inbox_compose(&mut self) -> Vec<Effect> {
        let ticket = self.ticket();
        let mut f = MailForm::new(MailFormKind::Message, None);
        f.ticket = Some(ticket);
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::Mail(Box::new(f)))));
        vec![Effect::BoardJob {
            ticket,
            job: BoardJob::Inbox(InboxJob::Recipients),
        }]
    }

    /// The active rooms the Inbox read.
    pub(crate) fn inbox_active_rooms(&self) -> Vec<Room> {
        self.board
            .inbox
            .as_ref()
            .and_then(|v| v.data.as_ref())
            .map(|d| {
                d.rooms
                    .iter()
                    .filter(|r| r.status == "active")
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `p` in the Inbox: the room-post form over the rooms the Inbox read.
    pub(crate) fn inbox_room_post(&mut self) -> Vec<Effect> {
        let rooms: Vec<Choice> = self
            .inbox_active_rooms()
            .iter()
            .map(Choice::of_room)
            .collect();
        if rooms.is_empty() {
            self.info("There is no chat room to post in yet: N makes one.");
            return Vec::new();
        }
        let f = MailForm::new(MailFormKind::RoomPost, Some(Ok(rooms)));
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::Mail(Box::new(f)))));
        Vec::new()
    }

    /// The recipients' read finished.
    pub(crate) fn mail_recipients_loaded(
        &mut self,
        ticket: Ticket,
        r: Result<Vec<Recipient>, String>,
    ) {
        let Some(f) = self.mail_form() else { return };
        if f.ticket != Some(ticket) {
            return;
        }
        f.ticket = None;
        f.choices = Some(r.map(|list| list.iter().map(Choice::of_recipient).collect()));
        f.selected = 0;
    }

    pub(crate) fn mail_form_command(&mut self, cmd: Command) -> Vec<Effect> {
        let writing = self.board.writing.is_some();
        let Some(f) = self.mail_form() else {
            return Vec::new();
        };
        match cmd {
            Command::PrevItem | Command::Up => f.move_by(-1),
            Command::NextItem | Command::Down => f.move_by(1),
            Command::Accept | Command::Submit if f.sending => {}
            Command::Accept | Command::Submit => match f.check() {
                Err(e) => f.error = Some(e),
                Ok(_) if writing => {
                    f.error =
                        Some("A board change is still being made; try again in a moment.".into())
                }
                Ok((to, text)) => {
                    f.sending = true;
                    f.error = None;
                    let w = f.write(to, text);
                    return self.board_write(w);
                }
            },
            Command::Cancel => {
                let kind = f.kind;
                self.overlay = None;
                self.info(match kind {
                    MailFormKind::Message => "Message cancelled: nothing was sent.",
                    MailFormKind::RoomPost => "Post cancelled: nothing was posted.",
                });
            }
            _ => {}
        }
        Vec::new()
    }

    /// A message or a post landed. The form closes on success (the Inbox reloads and opens
    /// the sent message's thread) and shows a refusal. True when the form took the outcome.
    pub(crate) fn mail_write_landed(
        &mut self,
        w: &BoardWrite,
        r: &Result<(String, Option<String>), String>,
    ) -> bool {
        if !matches!(w, BoardWrite::Compose { .. } | BoardWrite::RoomPost { .. }) {
            return false;
        }
        match r {
            Err(e) => {
                if let Some(f) = self.mail_form() {
                    f.sending = false;
                    f.error = Some(format!("Not sent: {e}"));
                } else {
                    self.error(e.clone());
                }
                true
            }
            Ok((text, _)) => {
                if self.mail_form().is_some() {
                    self.overlay = None;
                }
                self.message(
                    format!("{text} (logged in the author session)"),
                    MsgKind::Ok,
                );
                if let (Some(v), BoardWrite::Compose { .. }) = (self.board.inbox.as_mut(), w) {
                    v.follow_sent = true;
                }
                false
            }
        }
    }
}

pub fn draw_form(app: &AppState, f: &MailForm, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let list_h = f.rows().len().clamp(1, 6);
    let h = 8 + list_h as u16 + if f.error.is_some() { 3 } else { 0 };
    let r = centered(area, 80, h);
    let title = match f.kind {
        MailFormKind::Message => "New message",
        MailFormKind::RoomPost => "Post in a room",
    };
    let inside = overlay_frame(title, r, buf, t);
    let w = inside.width as usize;
    let mut y = 0u16;
    let heading = match f.kind {
        MailFormKind::Message => "To (↑/↓ choose): durable agents, profile agents, sessions",
        MailFormKind::RoomPost => "Room (↑/↓ choose)",
    };
    put_line(
        buf,
        inside,
        y,
        &Line::from(Span::styled(heading, t.heading2)),
    );
    y += 1;
    match &f.choices {
        None => {
            put_line(
                buf,
                inside,
                y,
                &Line::from(Span::styled("  reading whom you can write to…", t.dim)),
            );
        }
        Some(Err(e)) => {
            put_line(
                buf,
                inside,
                y,
                &Line::from(Span::styled(format!("  {e}"), t.input_error)),
            );
        }
        Some(Ok(rows)) if rows.is_empty() => {
            put_line(
                buf,
                inside,
                y,
                &Line::from(Span::styled("  nobody to write to yet", t.dim)),
            );
        }
        Some(Ok(rows)) => {
            let start = f
                .selected
                .saturating_sub(list_h - 1)
                .min(rows.len().saturating_sub(list_h));
            for (i, c) in rows.iter().enumerate().skip(start).take(list_h) {
                let sel = i == f.selected;
                let mut l = Line::from(vec![
                    Span::styled(if sel { "  (•) " } else { "  ( ) " }, t.key_hint),
                    Span::styled(c.id.clone(), t.text),
                    Span::styled(
                        fit_width(
                            &format!(" · {}", c.label),
                            w.saturating_sub(8 + c.id.len()),
                            Cut::End,
                        ),
                        t.dim,
                    ),
                ]);
                if sel {
                    l = l.style(t.selection);
                }
                put_line(buf, inside, y + (i - start) as u16, &l);
            }
        }
    }
    y += list_h as u16;
    if let Some(c) = f.chosen() {
        put_line(
            buf,
            inside,
            y,
            &Line::from(Span::styled(fit_width(&c.note, w.max(1), Cut::End), t.dim)),
        );
    }
    y += 2;
    put_line(
        buf,
        inside,
        y,
        &Line::from(Span::styled("Text", t.heading2)),
    );
    y += 1;
    if y < inside.height {
        f.content
            .render(Rect::new(inside.x, inside.y + y, inside.width, 1), buf);
    }
    y += 1;
    let foot = if f.sending {
        "sending…".to_string()
    } else {
        format!("Enter sends · Esc cancels · at most {CONTENT_LIMIT} characters")
    };
    put_line(buf, inside, y, &Line::from(Span::styled(foot, t.dim)));
    y += 1;
    if let Some(e) = &f.error {
        let a = Rect::new(
            inside.x,
            inside.y + y,
            inside.width,
            inside.height.saturating_sub(y),
        );
        draw_top_down(
            a,
            buf,
            [(Line::from(Span::styled(e.clone(), t.input_error)), 0)],
        );
    }
}
