//! The author's chat rooms from the Inbox: `N` opens the new-room form (the room's name, then
//! its members), `A` the add-members form (the room, then the members to add). Both choose
//! members from the list the new-message form offers (durable agents, profile agents, live
//! sessions: `InboxJob::Recipients`) and write as the author through the engine
//! (`fn_room_create`, `fn_room_add_members`), a `BoardWrite` like the Board's others. A refusal
//! (an empty or taken name, an unknown member, nobody picked) is shown in the form, which stays
//! open; nothing is created.
//!
//! Why a `[form]`-context overlay (`BoardOverlay::is_form`): the name may have spaces, and
//! members are toggled with Space. In `[form]` Tab moves between the fields and Space toggles
//! the member under the cursor — or, on the name field, types a space — so the two never fight,
//! as in the new-session form. ↑/↓ move in the focused list (on the name: to the members).

use std::collections::BTreeSet;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use tui_textarea::TextArea;

use crate::board::mailbox::Room;
use crate::engine::mail::Recipient;
use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::{AppState, MsgKind};
use crate::tui::board::compose::Choice;
use crate::tui::board::inbox::InboxJob;
use crate::tui::board::jobs::{BoardJob, BoardWrite};
use crate::tui::board::overlay::BoardOverlay;
use crate::tui::chrome::{centered, overlay_frame, put_line};
use crate::tui::input::{single_line, text_of, Overlay};
use crate::tui::widgets::wrap::{draw_top_down, fit_width, Cut};

/// The longest room name the engine takes (`fn_room_create`'s schema).
pub const NAME_LIMIT: usize = 120;

/// Which field has the keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoomField {
    /// `N`: the new room's name.
    Name,
    /// `A`: the room members are added to.
    Room,
    Members,
}

pub struct RoomForm {
    /// `N` (a new room) or `A` (members for one of `rooms`).
    pub adding: bool,
    pub name: TextArea<'static>,
    /// `A`: the active rooms to choose from, and the chosen one.
    pub rooms: Vec<Room>,
    pub room: usize,
    pub field: RoomField,
    /// `None` while the recipients are read; `Err` when they could not be.
    pub members: Option<Result<Vec<Choice>, String>>,
    pub cursor: usize,
    pub picked: BTreeSet<String>,
    pub error: Option<String>,
    /// Sent to the engine; the form stays open until it answers (a refusal is shown here).
    pub sending: bool,
    /// The recipients' read.
    pub ticket: Option<Ticket>,
}

impl RoomForm {
    pub fn new_room() -> RoomForm {
        RoomForm {
            adding: false,
            name: single_line("e.g. Continuity desk"),
            rooms: Vec::new(),
            room: 0,
            field: RoomField::Name,
            members: None,
            cursor: 0,
            picked: BTreeSet::new(),
            error: None,
            sending: false,
            ticket: None,
        }
    }

    pub fn add_members(rooms: Vec<Room>) -> RoomForm {
        RoomForm {
            adding: true,
            rooms,
            field: RoomField::Room,
            ..RoomForm::new_room()
        }
    }

    pub fn rows(&self) -> &[Choice] {
        match &self.members {
            Some(Ok(c)) => c,
            _ => &[],
        }
    }

    pub fn chosen_room(&self) -> Option<&Room> {
        self.rooms.get(self.room)
    }

    /// Whether `id` is already a member of the chosen room (`A`: shown, not offered again).
    fn member_already(&self, id: &str) -> bool {
        self.adding
            && self
                .chosen_room()
                .is_some_and(|r| r.members.iter().any(|m| m == id))
    }

    fn next_field(&mut self) {
        self.field = match (self.field, self.adding) {
            (RoomField::Members, false) => RoomField::Name,
            (RoomField::Members, true) => RoomField::Room,
            _ => RoomField::Members,
        };
    }

    fn move_by(&mut self, delta: isize) {
        match self.field {
            RoomField::Name => self.field = RoomField::Members,
            RoomField::Room => {
                let n = self.rooms.len();
                self.room = self
                    .room
                    .saturating_add_signed(delta)
                    .min(n.saturating_sub(1));
            }
            RoomField::Members => {
                let n = self.rows().len();
                self.cursor = self
                    .cursor
                    .saturating_add_signed(delta)
                    .min(n.saturating_sub(1));
            }
        }
    }

    /// Space on the members: pick or unpick the one under the cursor.
    fn toggle(&mut self) {
        let Some(id) = self.rows().get(self.cursor).map(|c| c.id.clone()) else {
            return;
        };
        if self.member_already(&id) {
            self.error = Some(format!("{id} is already a member of this room."));
            return;
        }
        if !self.picked.remove(&id) {
            self.picked.insert(id);
        }
        self.error = None;
    }

    /// The picked members in the list's order.
    fn picked_ids(&self) -> Vec<String> {
        self.rows()
            .iter()
            .filter(|c| self.picked.contains(&c.id))
            .map(|c| c.id.clone())
            .collect()
    }

    /// What would be written, or what to fix first.
    pub fn check(&self) -> Result<BoardWrite, String> {
        let members = self.picked_ids();
        if self.adding {
            let Some(room) = self.chosen_room() else {
                return Err("There is no room to add members to: N makes one.".into());
            };
            if members.is_empty() {
                return Err(
                    "Pick the members to add first: Tab to the list, Space picks. Nothing was changed."
                        .into(),
                );
            }
            return Ok(BoardWrite::RoomAddMembers {
                room: room.id.clone(),
                members,
            });
        }
        let name = text_of(&self.name).trim().to_string();
        if name.is_empty() {
            return Err(
                "Type the room's name first, e.g. \"Continuity desk\". Nothing was created.".into(),
            );
        }
        let n = name.chars().count();
        if n > NAME_LIMIT {
            return Err(format!(
                "The name has {n} characters; at most {NAME_LIMIT} fit. Nothing was created."
            ));
        }
        Ok(BoardWrite::RoomCreate { name, members })
    }
}

impl AppState {
    fn room_form(&mut self) -> Option<&mut RoomForm> {
        match &mut self.overlay {
            Some(Overlay::Board(o)) => match o.as_mut() {
                BoardOverlay::Room(f) => Some(f),
                _ => None,
            },
            _ => None,
        }
    }

    fn open_room_form(&mut self, mut f: RoomForm) -> Vec<Effect> {
        let ticket = self.ticket();
        f.ticket = Some(ticket);
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::Room(Box::new(f)))));
        vec![Effect::BoardJob {
            ticket,
            job: BoardJob::Inbox(InboxJob::Recipients),
        }]
    }

    /// `N` in the Inbox: the new-room form; the possible members are read meanwhile.
    pub(crate) fn inbox_room_new(&mut self) -> Vec<Effect> {
        self.open_room_form(RoomForm::new_room())
    }

    /// `A` in the Inbox: add members to one of the active rooms the Inbox read.
    pub(crate) fn inbox_room_add(&mut self) -> Vec<Effect> {
        let rooms = self.inbox_active_rooms();
        if rooms.is_empty() {
            self.info("There is no chat room to add members to yet: N makes one.");
            return Vec::new();
        }
        self.open_room_form(RoomForm::add_members(rooms))
    }

    /// The recipients' read finished (shared with the new-message form's).
    pub(crate) fn room_members_loaded(
        &mut self,
        ticket: Ticket,
        r: &Result<Vec<Recipient>, String>,
    ) -> bool {
        let Some(f) = self.room_form() else {
            return false;
        };
        if f.ticket != Some(ticket) {
            return false;
        }
        f.ticket = None;
        f.members = Some(
            r.as_ref()
                .map(|list| list.iter().map(Choice::of_recipient).collect())
                .map_err(Clone::clone),
        );
        f.cursor = 0;
        true
    }

    pub(crate) fn room_form_command(&mut self, cmd: Command) -> Vec<Effect> {
        let writing = self.board.writing.is_some();
        let now = self.clock.now();
        let Some(f) = self.room_form() else {
            return Vec::new();
        };
        match cmd {
            Command::NextField | Command::PrevField => f.next_field(),
            Command::PrevItem | Command::Up => f.move_by(-1),
            Command::NextItem | Command::Down => f.move_by(1),
            Command::ToggleOption if f.field == RoomField::Name => {
                f.name.insert_char(' ');
                f.error = None;
                self.last_typed = Some(now);
            }
            Command::ToggleOption if f.field == RoomField::Members => f.toggle(),
            Command::Accept | Command::Submit if f.sending => {}
            Command::Accept | Command::Submit => match f.check() {
                Err(e) => f.error = Some(e),
                Ok(_) if writing => {
                    f.error =
                        Some("A board change is still being made; try again in a moment.".into())
                }
                Ok(w) => {
                    f.sending = true;
                    f.error = None;
                    return self.board_write(w);
                }
            },
            Command::Cancel => {
                let adding = f.adding;
                self.overlay = None;
                self.info(if adding {
                    "No member was added."
                } else {
                    "New room cancelled: nothing was created."
                });
            }
            _ => {}
        }
        Vec::new()
    }

    /// A key no `[form]` binding claimed: it types into the name (the lists take no typing).
    pub(crate) fn room_form_text(&mut self, key: crossterm::event::KeyEvent) -> Vec<Effect> {
        let now = self.clock.now();
        let Some(f) = self.room_form() else {
            return Vec::new();
        };
        if f.field != RoomField::Name || key.code == crossterm::event::KeyCode::Enter {
            return Vec::new();
        }
        f.name.input(key);
        f.error = None;
        self.last_typed = Some(now);
        Vec::new()
    }

    pub(crate) fn room_form_paste(&mut self, text: &str) -> Vec<Effect> {
        let now = self.clock.now();
        let Some(f) = self.room_form() else {
            return Vec::new();
        };
        if f.field == RoomField::Name {
            f.name
                .insert_str(text.replace("\r\n", " ").replace(['\r', '\n'], " "));
            f.error = None;
            self.last_typed = Some(now);
        }
        Vec::new()
    }

    /// A room was made or grew. The form closes on success and the Inbox reloads (so the `p`
    /// form lists the room); a refusal is shown in the form. `None` when the write is not a
    /// room's.
    pub(crate) fn room_write_landed(
        &mut self,
        w: &BoardWrite,
        r: &Result<(String, Option<String>), String>,
    ) -> Option<Vec<Effect>> {
        if !matches!(
            w,
            BoardWrite::RoomCreate { .. } | BoardWrite::RoomAddMembers { .. }
        ) {
            return None;
        }
        match r {
            Err(e) => {
                if let Some(f) = self.room_form() {
                    f.sending = false;
                    let what = if f.adding { "Not added" } else { "Not created" };
                    f.error = Some(format!("{what}: {e}"));
                } else {
                    self.error(e.clone());
                }
                Some(Vec::new())
            }
            Ok((text, _)) => {
                if self.room_form().is_some() {
                    self.overlay = None;
                }
                self.message(
                    format!("{text} (logged in the author session)"),
                    MsgKind::Ok,
                );
                Some(self.inbox_load())
            }
        }
    }
}

pub fn draw_form(app: &AppState, f: &RoomForm, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let list_h = f.rows().len().clamp(1, 6);
    let first_h: u16 = if f.adding {
        f.rooms.len().clamp(1, 4) as u16
    } else {
        1
    };
    let h = 9 + first_h + list_h as u16 + if f.error.is_some() { 3 } else { 0 };
    let r = centered(area, 80, h);
    let title = if f.adding {
        "Add members to a room"
    } else {
        "New chat room"
    };
    let inside = overlay_frame(title, r, buf, t);
    let w = inside.width as usize;
    let mark = |on: bool| if on { "▸ " } else { "  " };
    let mut y = 0u16;
    if f.adding {
        let on = f.field == RoomField::Room;
        put_line(
            buf,
            inside,
            y,
            &Line::from(Span::styled(
                format!("{}Room (↑/↓ choose)", mark(on)),
                t.heading2,
            )),
        );
        y += 1;
        let n = first_h as usize;
        let start = f.room.saturating_sub(n - 1);
        for (i, room) in f.rooms.iter().enumerate().skip(start).take(n) {
            let sel = i == f.room;
            let mut l = Line::from(vec![
                Span::styled(if sel { "  (•) " } else { "  ( ) " }, t.key_hint),
                Span::styled(room.id.clone(), t.text),
                Span::styled(
                    fit_width(
                        &format!(" · {}", room.name),
                        w.saturating_sub(8 + room.id.len()),
                        Cut::End,
                    ),
                    t.dim,
                ),
            ]);
            if sel && on {
                l = l.style(t.selection);
            }
            put_line(buf, inside, y + (i - start) as u16, &l);
        }
        y += first_h;
    } else {
        let on = f.field == RoomField::Name;
        put_line(
            buf,
            inside,
            y,
            &Line::from(Span::styled(format!("{}Name", mark(on)), t.heading2)),
        );
        y += 1;
        if y < inside.height {
            f.name.render(
                Rect::new(
                    inside.x + 2,
                    inside.y + y,
                    inside.width.saturating_sub(2),
                    1,
                ),
                buf,
            );
        }
        y += 1;
    }
    y += 1;
    let on = f.field == RoomField::Members;
    put_line(
        buf,
        inside,
        y,
        &Line::from(Span::styled(
            format!(
                "{}Members (Space picks · {} picked): agents, profiles, sessions",
                mark(on),
                f.picked.len()
            ),
            t.heading2,
        )),
    );
    y += 1;
    match &f.members {
        None => put_line(
            buf,
            inside,
            y,
            &Line::from(Span::styled("  reading who can be a member…", t.dim)),
        ),
        Some(Err(e)) => put_line(
            buf,
            inside,
            y,
            &Line::from(Span::styled(format!("  {e}"), t.input_error)),
        ),
        Some(Ok(rows)) if rows.is_empty() => put_line(
            buf,
            inside,
            y,
            &Line::from(Span::styled("  no agent, profile or session yet", t.dim)),
        ),
        Some(Ok(rows)) => {
            let start = f
                .cursor
                .saturating_sub(list_h - 1)
                .min(rows.len().saturating_sub(list_h));
            for (i, c) in rows.iter().enumerate().skip(start).take(list_h) {
                // The cursor is marked in text too, so it shows without colours.
                let here = if i == f.cursor && on { " ›" } else { "  " };
                let state = if f.member_already(&c.id) {
                    "[=] "
                } else if f.picked.contains(&c.id) {
                    "[x] "
                } else {
                    "[ ] "
                };
                let box_ = format!("{here}{state}");
                let mut l = Line::from(vec![
                    Span::styled(box_, t.key_hint),
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
                if i == f.cursor && on {
                    l = l.style(t.selection);
                }
                put_line(buf, inside, y + (i - start) as u16, &l);
            }
        }
    }
    y += list_h as u16;
    if let Some(room) = f.chosen_room().filter(|_| f.adding) {
        let who = if room.members.is_empty() {
            "no members yet".to_string()
        } else {
            format!("already in it ([=]): {}", room.members.join(", "))
        };
        put_line(
            buf,
            inside,
            y,
            &Line::from(Span::styled(fit_width(&who, w.max(1), Cut::End), t.dim)),
        );
    }
    y += 2;
    let foot = if f.sending {
        "sending…".to_string()
    } else if f.adding {
        "Tab: room ↔ members · Space picks · Enter adds · Esc cancels".to_string()
    } else {
        "Tab: name ↔ members · Space picks · Enter creates · Esc cancels".to_string()
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
