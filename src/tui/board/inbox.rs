//! The Inbox view of the Board pane (`I`, again or `Esc` back to the board): the author's
//! mail, newest first, on the left — an unread mark, the kind (message / report / approval),
//! the sender, the task and the first words — and the selected mail on the right: its whole
//! text, a report's title and sections, and the thread it belongs to. `Enter` opens the
//! selected mail (marks a stored mail read — an approval mail has no read mark: it leaves the
//! Inbox when its call is decided — and loads its thread); `r` replies in a one-line form (the
//! author's `fn_send_message` with `reply_to_message_id`: it reaches the agent as its
//! response mode says — at once, or at its next heartbeat); on an approval mail `a` jumps to
//! the Approvals pane; `c` writes a new message and `p` posts in a chat room
//! (`super::compose`); `N` makes a chat room and `A` adds members to one (`super::rooms`).
//! Under the mail, one line per active room: its name, members and newest post. What the author sent is listed too (`→ agent-001`), so a message is
//! followed in its thread. The pane title shows how many mails are unread.
//!
//! Reads go through the engine's read model in the Board's blocking jobs (tagged so a stale
//! answer is dropped); the read mark is the engine's `mark_mail_read` (the author's own
//! bookkeeping, not a logged change); the reply is an author call like the Board's writes.

use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::engine::read::{Inbox, MailKind, Message, USER_ID};
use crate::engine::Engine;
use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::{AppState, Pane};
use crate::tui::board::jobs::BoardJob;
use crate::tui::board::overlay::BoardOverlay;
use crate::tui::chrome::put_line;
use crate::tui::files::tree::window_offset;
use crate::tui::input::{single_line, Overlay};
use crate::tui::widgets::wrap::{draw_top_down, fit_width, Cut};

#[derive(Debug, Default)]
pub struct InboxView {
    pub data: Option<Inbox>,
    pub selected: usize,
    pub offset: usize,
    pub loading: Option<Ticket>,
    pub error: Option<String>,
    /// The opened mail's thread (`Enter`), oldest first, or why it could not be read.
    pub opened: Option<(String, Result<Vec<Message>, String>)>,
    pub open_ticket: Option<Ticket>,
    pub scroll: usize,
    /// The author just sent a message: the next load selects it (the newest mail the
    /// author sent) and opens its thread.
    pub follow_sent: bool,
}

impl InboxView {
    pub fn mail(&self) -> &[Message] {
        self.data.as_ref().map_or(&[], |d| d.mail.as_slice())
    }

    pub fn selected(&self) -> Option<&Message> {
        self.mail().get(self.selected)
    }

    pub fn unread(&self) -> usize {
        self.data.as_ref().map_or(0, |d| d.unread)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InboxJob {
    Load,
    /// Mark the mail read and read its thread.
    Open(String),
    /// Whom the new-message form offers (`super::compose`).
    Recipients,
}

#[derive(Clone, Debug, PartialEq)]
pub enum InboxJobResult {
    Loaded(Result<Inbox, String>),
    Opened(String, Result<Vec<Message>, String>),
    Recipients(Result<Vec<crate::engine::mail::Recipient>, String>),
}

/// Run a job of the view (on the blocking pool).
pub fn run(engine: &Arc<Engine>, job: InboxJob) -> InboxJobResult {
    match job {
        InboxJob::Load => InboxJobResult::Loaded(engine.read().inbox().map_err(|e| e.to_string())),
        InboxJob::Open(id) => {
            let r = engine
                .mark_mail_read(&id)
                .map_err(|e| e.to_string())
                .and_then(|()| engine.read().mail_thread(&id).map_err(|e| e.to_string()));
            InboxJobResult::Opened(id, r)
        }
        InboxJob::Recipients => {
            InboxJobResult::Recipients(engine.mail_recipients().map_err(|e| e.to_string()))
        }
    }
}

/// Who a mail is from, as the list and the detail name them.
pub fn sender(m: &Message) -> String {
    match m.from_type.as_str() {
        "system" => "nbook".into(),
        "user" => "you".into(),
        _ => m.from_id.clone(),
    }
}

impl AppState {
    /// `I`: open the view (loading the mail), or close it.
    pub(crate) fn inbox_toggle(&mut self) -> Vec<Effect> {
        if self.board.inbox.take().is_some() {
            return Vec::new();
        }
        self.board.artifacts = None;
        self.board.inbox = Some(InboxView::default());
        self.inbox_load()
    }

    pub(crate) fn inbox_load(&mut self) -> Vec<Effect> {
        let ticket = self.ticket();
        let Some(v) = self.board.inbox.as_mut() else {
            return Vec::new();
        };
        v.loading = Some(ticket);
        vec![Effect::BoardJob {
            ticket,
            job: BoardJob::Inbox(InboxJob::Load),
        }]
    }

    fn inbox_open(&mut self) -> Vec<Effect> {
        let ticket = self.ticket();
        let Some(v) = self.board.inbox.as_mut() else {
            return Vec::new();
        };
        let Some(id) = v.selected().map(|m| m.id.clone()) else {
            self.info("No mail to open.");
            return Vec::new();
        };
        v.open_ticket = Some(ticket);
        v.scroll = 0;
        vec![Effect::BoardJob {
            ticket,
            job: BoardJob::Inbox(InboxJob::Open(id)),
        }]
    }

    fn inbox_reply(&mut self) -> Vec<Effect> {
        let Some(m) = self
            .board
            .inbox
            .as_ref()
            .and_then(|v| v.selected())
            .cloned()
        else {
            self.info("No mail to reply to.");
            return Vec::new();
        };
        if m.from_type == "system" {
            self.info(format!(
                "{} is nbook's approval notice; nobody reads replies to it. a jumps to the Approvals pane.",
                m.id
            ));
            return Vec::new();
        }
        let to = if m.from_id == USER_ID {
            m.to_id.clone()
        } else {
            m.from_id.clone()
        };
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::Reply {
            mail: m.id.clone(),
            to,
            input: single_line("your answer"),
            error: None,
        })));
        Vec::new()
    }

    /// The Board's commands while the view is open.
    pub(crate) fn inbox_command(&mut self, cmd: Command, page: usize) -> Vec<Effect> {
        let Some(v) = self.board.inbox.as_mut() else {
            return Vec::new();
        };
        let n = v.mail().len();
        let before = v.selected;
        match cmd {
            Command::Down => v.selected = (v.selected + 1).min(n.saturating_sub(1)),
            Command::Up => v.selected = v.selected.saturating_sub(1),
            Command::PageDown => v.selected = (v.selected + page).min(n.saturating_sub(1)),
            Command::PageUp => v.selected = v.selected.saturating_sub(page),
            Command::Top => v.selected = 0,
            Command::Bottom => v.selected = n.saturating_sub(1),
            Command::DetailDown => v.scroll += 1,
            Command::DetailUp => v.scroll = v.scroll.saturating_sub(1),
            Command::Refresh => return self.inbox_load(),
            Command::Expand => return self.inbox_open(),
            Command::InboxReply => return self.inbox_reply(),
            Command::InboxCompose => return self.inbox_compose(),
            Command::InboxRoomPost => return self.inbox_room_post(),
            Command::InboxRoomNew => return self.inbox_room_new(),
            Command::InboxRoomAdd => return self.inbox_room_add(),
            Command::InboxApprovals => {
                let approval = v
                    .selected()
                    .is_some_and(|m| m.mail_kind() == MailKind::Approval);
                if approval {
                    return self.focus_pane(Pane::Approvals);
                }
                self.info("a jumps to the Approvals pane from an approval mail.");
                return Vec::new();
            }
            Command::Collapse if v.opened.is_some() => {
                v.opened = None;
                v.open_ticket = None;
                v.scroll = 0;
                return Vec::new();
            }
            Command::Collapse | Command::Cancel | Command::BoardInbox => {
                self.board.inbox = None;
                return Vec::new();
            }
            _ => {
                self.info("The Inbox is open: I or Esc goes back to the board.");
                return Vec::new();
            }
        }
        v.offset = window_offset(v.offset, v.selected, page.max(1), n);
        if v.selected != before {
            v.opened = None;
            v.open_ticket = None;
            v.scroll = 0;
        }
        Vec::new()
    }

    pub(crate) fn inbox_job_done(&mut self, ticket: Ticket, r: InboxJobResult) -> Vec<Effect> {
        if let InboxJobResult::Recipients(r) = r {
            if !self.room_members_loaded(ticket, &r) {
                self.mail_recipients_loaded(ticket, r);
            }
            return Vec::new();
        }
        let Some(v) = self.board.inbox.as_mut() else {
            return Vec::new();
        };
        match r {
            InboxJobResult::Loaded(r) => {
                if v.loading != Some(ticket) {
                    return Vec::new();
                }
                v.loading = None;
                match r {
                    Ok(data) => {
                        let keep = v.selected().map(|m| m.id.clone());
                        if let Some(d) = self.board.data.as_mut() {
                            Arc::make_mut(d).unread_mail = data.unread;
                        }
                        v.data = Some(data);
                        v.error = None;
                        v.selected = keep
                            .and_then(|id| v.mail().iter().position(|m| m.id == id))
                            .unwrap_or(0);
                        let sent = std::mem::take(&mut v.follow_sent)
                            .then(|| v.mail().iter().position(|m| m.from_id == USER_ID))
                            .flatten();
                        if let Some(i) = sent {
                            v.selected = i;
                            v.opened = None;
                            return self.inbox_open();
                        }
                    }
                    Err(e) => v.error = Some(e),
                }
            }
            InboxJobResult::Recipients(_) => {}
            InboxJobResult::Opened(id, r) => {
                if v.open_ticket != Some(ticket) {
                    return Vec::new();
                }
                v.open_ticket = None;
                let ok = r.is_ok();
                v.opened = Some((id.clone(), r));
                if ok {
                    if let Some(d) = v.data.as_mut() {
                        // Only mail to the author has the author's read mark.
                        if let Some(m) = d
                            .mail
                            .iter_mut()
                            .find(|m| m.id == id && !m.read && m.to_id == USER_ID)
                        {
                            m.read = true;
                            d.unread = d.unread.saturating_sub(1);
                        }
                    }
                    let unread = v.unread();
                    if let Some(d) = self.board.data.as_mut() {
                        Arc::make_mut(d).unread_mail = unread;
                    }
                }
            }
        }
        Vec::new()
    }
}

// Drawing (pure functions of the state).

pub fn pane_title(v: &InboxView) -> String {
    match v.unread() {
        0 => format!(" 6 Board · Inbox ({}) ", v.mail().len()),
        u => format!(" 6 Board · Inbox ({}, {u} unread) ", v.mail().len()),
    }
}

pub fn detail_title(v: &InboxView) -> String {
    match v.selected() {
        Some(m) => format!(" {} · {} ", m.id, m.mail_kind().as_str()),
        None => " Inbox ".into(),
    }
}

/// Whether the author has still to read `m` (what the author sent is never unread here: its
/// read mark is its recipient's).
fn unread_by_author(m: &Message) -> bool {
    !m.read && m.to_id == USER_ID
}

fn list_line(m: &Message, w: usize) -> String {
    let mark = if unread_by_author(m) { '●' } else { ' ' };
    let who = if m.from_id == USER_ID {
        format!("→ {}", m.to_id)
    } else {
        sender(m)
    };
    let mut head = format!(
        "{mark} {:<8} {} ",
        m.mail_kind().as_str(),
        fit_width(&who, 18, Cut::End)
    );
    if let Some(t) = m.task_id() {
        head.push_str(&format!("{t} "));
    }
    let first = match m.report() {
        Some(r) => r.title,
        None => crate::board::snippet(&m.content, 200),
    };
    let room = w.saturating_sub(head.chars().count());
    format!("{head}{}", fit_width(&first, room, Cut::End))
}

/// At most this many room lines under the mail (then "+N more rooms").
const ROOM_LINES: usize = 3;

/// The Inbox's room lines under the mail: each active room, its members and its newest post
/// (`p` posts, `A` adds members, `N` makes a room).
pub fn room_lines(v: &InboxView) -> Vec<String> {
    let Some(d) = v.data.as_ref() else {
        return Vec::new();
    };
    let active: Vec<_> = d.rooms.iter().filter(|r| r.status == "active").collect();
    let mut out: Vec<String> = active
        .iter()
        .take(ROOM_LINES)
        .map(|r| {
            let members = if r.members.is_empty() {
                "no members".to_string()
            } else {
                r.members.join(", ")
            };
            let latest = match d.room_latest.get(&r.id) {
                Some(p) => {
                    let who = if p.sender_agent_id == USER_ID {
                        "you"
                    } else {
                        p.sender_agent_id.as_str()
                    };
                    format!(" · {who}: {}", crate::board::snippet(&p.content, 200))
                }
                None => " · no posts yet".into(),
            };
            format!("# {} ({members}){latest}", r.name)
        })
        .collect();
    if active.len() > ROOM_LINES {
        out.push(format!("  +{} more rooms", active.len() - ROOM_LINES));
    }
    out
}

pub fn draw_list(app: &AppState, v: &InboxView, area: Rect, buf: &mut Buffer, focused: bool) {
    let t = &app.theme;
    // The rooms take the bottom lines while the mail keeps at least three.
    let rooms = room_lines(v);
    let full = area;
    let mut area = area;
    if !rooms.is_empty() && area.height as usize >= rooms.len() + 4 {
        area.height -= rooms.len() as u16;
        for (i, line) in rooms.iter().enumerate() {
            put_line(
                buf,
                full,
                area.height + i as u16,
                &Line::from(Span::styled(
                    fit_width(line, full.width as usize, Cut::End),
                    t.dim,
                )),
            );
        }
    }
    if v.mail().is_empty() {
        let (text, style): (String, Style) = match (&v.error, v.loading.is_some()) {
            (Some(e), _) => (e.clone(), t.status_error),
            (None, true) => ("loading the mail…".into(), t.dim),
            (None, false) => (
                "No mail yet. Agents write to you with fn_send_message (messages and reports), and nbook mails you when a call waits for approval. I or Esc goes back to the board.".into(),
                t.dim,
            ),
        };
        draw_top_down(area, buf, [(Line::from(Span::styled(text, style)), 2)]);
        return;
    }
    let h = area.height as usize;
    let off = window_offset(v.offset, v.selected, h, v.mail().len());
    let sel = crate::tui::chrome::sel_style(app, focused);
    for (i, m) in v.mail().iter().skip(off).take(h).enumerate() {
        let style = if unread_by_author(m) {
            t.heading2
        } else {
            t.text
        };
        let line = Line::from(Span::styled(list_line(m, area.width as usize), style));
        if off + i == v.selected {
            buf.set_style(Rect::new(area.x, area.y + i as u16, area.width, 1), sel);
            put_line(
                buf,
                area,
                i as u16,
                &crate::tui::chrome::select_line(line, sel),
            );
        } else {
            put_line(buf, area, i as u16, &line);
        }
    }
}

pub fn draw_detail(app: &AppState, v: &InboxView, area: Rect, buf: &mut Buffer) {
    let th = &app.theme;
    let Some(m) = v.selected() else {
        return;
    };
    let mut lines: Vec<(Line<'static>, usize)> = Vec::new();
    let dim = |s: String| (Line::from(Span::styled(s, th.dim)), 0);
    let mut by = format!(
        "from {} to {}",
        sender(m),
        if m.to_id == USER_ID {
            "you".to_string()
        } else {
            m.to_id.clone()
        }
    );
    if let Some(t) = m.task_id() {
        by.push_str(&format!(" · task {t}"));
    }
    let when: String = m.created_at.chars().take(19).collect();
    lines.push(dim(by));
    // On its own line, so a narrow view never wraps the time.
    lines.push(dim(when.replace('T', " ")));
    if let Some(r) = m.reply_to() {
        lines.push(dim(format!("a reply to {r}")));
    }
    lines.push((Line::default(), 0));
    if let Some(r) = m.report() {
        lines.push((Line::from(Span::styled(r.title.clone(), th.heading)), 0));
    }
    lines.extend(m.content.lines().map(|l| (Line::from(l.to_string()), 0)));
    if let Some(r) = m.report() {
        for s in &r.sections {
            lines.push((Line::default(), 0));
            lines.push((Line::from(Span::styled(s.heading.clone(), th.heading2)), 0));
            lines.extend(s.body.lines().map(|l| (Line::from(l.to_string()), 0)));
        }
    }
    lines.push((Line::default(), 0));
    let opened = v.opened.as_ref().filter(|(id, _)| id == &m.id);
    match opened {
        None => lines.push(dim(if m.mail_kind() == MailKind::Approval {
            "Enter opens it · a jumps to the Approvals pane (it goes when you decide the call)"
                .into()
        } else {
            "Enter opens it (marks it read) and shows its thread · r replies".into()
        })),
        Some((_, Err(e))) => lines.push((Line::from(Span::styled(e.clone(), th.status_error)), 0)),
        Some((_, Ok(thread))) => {
            if m.mail_kind() == MailKind::Approval {
                lines.push(dim("a jumps to the Approvals pane to decide it".into()));
            } else {
                lines.push(dim("r replies".into()));
            }
            if thread.len() > 1 {
                lines.push((Line::default(), 0));
                lines.push((
                    Line::from(Span::styled(
                        format!("Thread ({})", thread.len()),
                        th.heading2,
                    )),
                    0,
                ));
                for x in thread {
                    let here = if x.id == m.id { "▸" } else { " " };
                    lines.push((
                        Line::from(format!(
                            "{here} {} {}: {}",
                            x.id,
                            sender(x),
                            crate::board::snippet(&x.content, 300)
                        )),
                        2,
                    ));
                }
            }
        }
    }
    let skip = v.scroll.min(lines.len().saturating_sub(1));
    draw_top_down(area, buf, lines.into_iter().skip(skip));
}
