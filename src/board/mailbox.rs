//! The board's mailbox and chat rooms (issue #17; fusion-notes §2.5, §5 "Messages (mailbox)"
//! and "Chat rooms"): messages between agents, the author and the engine, with reply threads,
//! read marks and Fusion's idempotent system mail (`sendMessageOnce`), and rooms with members
//! and posts. Storage: migration `005_mailbox.sql`.
//!
//! **Who is who.** An agent is an id `fn_list_agents` gives: a profile key (`writer`,
//! `executor`, … — a permanent agent) or a live session `session:<id>` (an ephemeral one).
//! The author is [`USER_ID`] (`dashboard`, as in Fusion); the engine is [`SYSTEM_ID`]. A
//! session's inbox holds the mail addressed to `session:<its id>` and to its profile's key.
//!
//! **Response mode.** Fusion's `messageResponseMode` says how mail reaches an agent:
//! `immediate` (it is woken) or `on-heartbeat` (it stays unread until the agent reads its
//! inbox at its next run). A durable agent (`agent-<n>`, `crate::board::agents`) has it in its
//! runtime config; profiles and sessions have no config and are `immediate`. [`response_mode`]
//! is the single place it is decided.
//!
//! This module imports nothing from the engine: checking that a recipient exists is the
//! caller's (the tool knows the profiles and sessions), passed in as a predicate; durable
//! agents are checked here, in the database.

use rusqlite::{params, Connection, OptionalExtension};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::error::{BoardError, BoardResult};
use super::{json_col, now, snippet, Outcome, Touched};

/// The author's id in the mailbox (Fusion's dashboard user).
pub const USER_ID: &str = "dashboard";
/// The engine's id as a sender (approval mails).
pub const SYSTEM_ID: &str = "system";
/// The prefix of a live session's agent id.
pub const SESSION_AGENT: &str = "session:";
/// Most characters in a message or a room post (Fusion: 1–2000).
pub const CONTENT_LIMIT: usize = 2000;
/// `fn_read_messages`' default `limit` (Fusion's).
pub const DEFAULT_READ_LIMIT: usize = 20;
/// Most messages one read returns.
pub const MAX_READ_LIMIT: usize = 200;

/// How mail reaches an agent (Fusion's `messageResponseMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ResponseMode {
    /// The recipient is woken: an idle session gets the mail as its next message at once, a
    /// busy one when its turn ends.
    Immediate,
    /// The mail waits unread until the agent reads its inbox (`fn_read_messages`) at its next
    /// run.
    OnHeartbeat,
}

impl ResponseMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseMode::Immediate => "immediate",
            ResponseMode::OnHeartbeat => "on-heartbeat",
        }
    }
}

/// The response mode of agent `agent_id`, the single place it is decided: a durable agent's
/// `runtimeConfig.messageResponseMode`; `immediate` (Fusion's default) for profiles and
/// sessions, which have no config.
pub fn response_mode(c: &Connection, agent_id: &str) -> BoardResult<ResponseMode> {
    super::agents::response_mode(c, agent_id)
}

/// Whether `id` is a durable agent that exists (profiles and sessions are the caller's to
/// check).
fn durable_exists(c: &Connection, id: &str) -> BoardResult<bool> {
    Ok(super::agents::is_durable_id(id) && super::agents::load(c, id)?.is_some())
}

/// The session id inside an agent id `session:<id>`.
pub fn session_of(agent_id: &str) -> Option<&str> {
    agent_id
        .strip_prefix(SESSION_AGENT)
        .filter(|s| !s.is_empty())
}

/// A mail's kind (`metadata.mailKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MailKind {
    Message,
    Report,
    /// Engine-only: a call waits in the approval queue.
    Approval,
}

impl MailKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MailKind::Message => "message",
            MailKind::Report => "report",
            MailKind::Approval => "approval",
        }
    }
}

/// A report mail's body (`metadata.report`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// Required, not empty.
    pub title: String,
    #[serde(default)]
    pub sections: Vec<ReportSection>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportSection {
    pub heading: String,
    pub body: String,
}

/// One message, as Fusion's `Message` record.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub id: String,
    pub from_id: String,
    /// agent | user | system
    pub from_type: String,
    pub to_id: String,
    /// agent | user
    pub to_type: String,
    pub content: String,
    /// agent-to-agent | agent-to-user | user-to-agent | system
    #[serde(rename = "type")]
    pub kind: String,
    pub read: bool,
    pub archived: bool,
    /// `{replyTo, wakeRecipient, taskId, conversationId, mailKind, report, approvalRequestId}`
    /// (absent keys are not set).
    pub metadata: Value,
    pub created_at: String,
}

impl Message {
    pub fn mail_kind(&self) -> MailKind {
        match self.metadata.get("mailKind").and_then(Value::as_str) {
            Some("report") => MailKind::Report,
            Some("approval") => MailKind::Approval,
            _ => MailKind::Message,
        }
    }

    pub fn meta_str(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(Value::as_str)
    }

    pub fn task_id(&self) -> Option<&str> {
        self.meta_str("taskId")
    }

    pub fn reply_to(&self) -> Option<&str> {
        self.meta_str("replyTo")
    }

    pub fn report(&self) -> Option<Report> {
        self.metadata
            .get("report")
            .and_then(|r| serde_json::from_value(r.clone()).ok())
    }
}

const COLS: &str =
    "id, from_id, from_type, to_id, to_type, content, type, read, archived, metadata, created_at";

fn row(r: &rusqlite::Row) -> rusqlite::Result<(Message, String)> {
    Ok((
        Message {
            id: r.get(0)?,
            from_id: r.get(1)?,
            from_type: r.get(2)?,
            to_id: r.get(3)?,
            to_type: r.get(4)?,
            content: r.get(5)?,
            kind: r.get(6)?,
            read: r.get::<_, i64>(7)? != 0,
            archived: r.get::<_, i64>(8)? != 0,
            metadata: Value::Null,
            created_at: r.get(10)?,
        },
        r.get(9)?,
    ))
}

fn finish((mut m, meta): (Message, String)) -> BoardResult<Message> {
    m.metadata = json_col(&format!("message {}", m.id), &meta)?;
    Ok(m)
}

pub fn load(c: &Connection, id: &str) -> BoardResult<Option<Message>> {
    let r = c
        .query_row(
            &format!("SELECT {COLS} FROM nbook_board_message WHERE id = ?1"),
            [id],
            row,
        )
        .optional()?;
    r.map(finish).transpose()
}

/// Content checked as Fusion takes it: 1–[`CONTENT_LIMIT`] characters, not only whitespace.
pub fn check_content(content: &str) -> BoardResult<()> {
    if content.trim().is_empty() {
        return Err(BoardError::MessageEmpty);
    }
    let n = content.chars().count();
    if n > CONTENT_LIMIT {
        return Err(BoardError::MessageTooLong {
            length: n,
            limit: CONTENT_LIMIT,
        });
    }
    Ok(())
}

/// A message ready to store (checked by whoever built it).
#[derive(Clone, Debug, PartialEq)]
pub struct NewMessage {
    pub from_id: String,
    pub from_type: String,
    pub to_id: String,
    pub to_type: String,
    pub content: String,
    pub kind: String,
    pub metadata: Value,
}

/// Insert `m` (with `once_key` when given; an existing key inserts nothing and returns
/// `None`). Returns the new id.
fn insert(c: &Connection, m: &NewMessage, once_key: Option<&str>) -> BoardResult<Option<String>> {
    if let Some(k) = once_key {
        let seen: Option<String> = c
            .query_row(
                "SELECT id FROM nbook_board_message WHERE once_key = ?1",
                [k],
                |r| r.get(0),
            )
            .optional()?;
        if seen.is_some() {
            return Ok(None);
        }
    }
    let seq: i64 = c.query_row(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM nbook_board_message",
        [],
        |r| r.get(0),
    )?;
    let id = format!("msg-{seq:06}");
    c.execute(
        "INSERT INTO nbook_board_message (seq, id, from_id, from_type, to_id, to_type, content, type, read, archived, metadata, once_key, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0, 0, ?9, ?10, ?11)",
        params![
            seq,
            id,
            m.from_id,
            m.from_type,
            m.to_id,
            m.to_type,
            m.content,
            m.kind,
            m.metadata.to_string(),
            once_key,
            now()
        ],
    )?;
    Ok(Some(id))
}

/// Fusion's `sendMessageOnce(msg, key)`: a system mail stored at most once per `key`. Returns
/// the new message's id, or `None` when the key was used already.
pub fn send_once(c: &Connection, m: &NewMessage, key: &str) -> BoardResult<Option<String>> {
    insert(c, m, Some(key))
}

/// What a sender asks for (`fn_send_message`'s arguments plus who sends).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SendRequest {
    /// The sender's id: `session:<id>` for an agent, [`USER_ID`] for the author.
    pub from_id: String,
    /// The ids whose mail the sender may answer (its session id and its profile key; the
    /// author's: [`USER_ID`]).
    pub own_ids: Vec<String>,
    pub content: String,
    pub to_id: Option<String>,
    /// `agent-to-agent` | `agent-to-user`, when given.
    pub kind: Option<String>,
    pub reply_to: Option<String>,
    pub mail_kind: Option<MailKind>,
    pub report: Option<Report>,
    /// The sender's task (`metadata.taskId`), if it works on one.
    pub task_id: Option<String>,
}

impl SendRequest {
    fn is_from_user(&self) -> bool {
        self.from_id == USER_ID
    }
}

/// The recipient of a request, as far as the arguments alone tell (no database): the given
/// `to_id`, else [`USER_ID`] for `type: agent-to-user`; `None` when it is only known from the
/// parent message (a reply without `to_id`) or not at all.
pub fn recipient_from_args(to_id: Option<&str>, kind: Option<&str>) -> Option<String> {
    match to_id.map(str::trim).filter(|s| !s.is_empty()) {
        Some(t) => Some(t.to_string()),
        None if kind == Some("agent-to-user") => Some(USER_ID.to_string()),
        None => None,
    }
}

/// Check and store a message. Order of checks (the first failing one is the result; nothing
/// is stored): content, report, the parent of a reply, the recipient, the type.
/// `known_agent(id)` says whether an agent id names a profile or a live session. The
/// outcome's value: `{messageId, toId, type, mailKind, wakeRecipient, responseMode}`;
/// `wakeRecipient` is true when the recipient is a session to wake now.
pub fn send(
    c: &Connection,
    req: &SendRequest,
    known_agent: &dyn Fn(&str) -> bool,
) -> BoardResult<Outcome> {
    check_content(&req.content)?;
    let mail_kind = req.mail_kind.unwrap_or(if req.report.is_some() {
        MailKind::Report
    } else {
        MailKind::Message
    });
    match (mail_kind, &req.report) {
        (MailKind::Approval, _) => return Err(BoardError::ApprovalMailEngineOnly),
        (MailKind::Report, None) => return Err(BoardError::ReportTitleRequired),
        (MailKind::Report, Some(r)) if r.title.trim().is_empty() => {
            return Err(BoardError::ReportTitleRequired)
        }
        (MailKind::Message, Some(_)) => {
            return Err(BoardError::invalid(
                "report",
                "a report needs mail_kind \"report\" (or leave mail_kind out)",
            ))
        }
        _ => {}
    }
    let parent = match req
        .reply_to
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        Some(pid) => {
            let p = load(c, pid)?
                .filter(|p| req.own_ids.iter().any(|o| *o == p.to_id || *o == p.from_id));
            match p {
                Some(p) => Some(p),
                None => {
                    return Err(BoardError::MessageNotFound {
                        id: pid.to_string(),
                    })
                }
            }
        }
        None => None,
    };
    let to = match recipient_from_args(req.to_id.as_deref(), req.kind.as_deref()) {
        Some(t) => t,
        None => match &parent {
            // A reply goes back to the parent's sender (or, for one's own message, to its
            // recipient: a follow-up in the same thread).
            Some(p) if req.own_ids.contains(&p.from_id) => p.to_id.clone(),
            Some(p) if p.from_id != SYSTEM_ID => p.from_id.clone(),
            Some(p) => {
                return Err(BoardError::RecipientRequired {
                    why: format!("{} is an engine mail; nobody reads replies to it", p.id),
                })
            }
            None => {
                return Err(BoardError::RecipientRequired {
                    why: "give to_id, reply_to_message_id, or type agent-to-user for the author"
                        .into(),
                })
            }
        },
    };
    let to_user = to == USER_ID;
    if to_user && req.is_from_user() {
        return Err(BoardError::RecipientNotFound {
            id: to,
            why: "the author cannot mail themselves".into(),
        });
    }
    if !to_user && !known_agent(&to) && !durable_exists(c, &to)? {
        return Err(BoardError::RecipientNotFound {
            id: to,
            why: "fn_list_agents lists the agents (includeEphemeral: true adds sessions); the author is dashboard".into(),
        });
    }
    let derived = match (req.is_from_user(), to_user) {
        (true, _) => "user-to-agent",
        (false, true) => "agent-to-user",
        (false, false) => "agent-to-agent",
    };
    if let Some(k) = req.kind.as_deref() {
        if k != derived {
            return Err(BoardError::MessageTypeMismatch {
                given: k.to_string(),
                recipient: to,
                expected: derived,
            });
        }
    }
    let mode = (!to_user).then(|| response_mode(c, &to)).transpose()?;
    let wake = (mode == Some(ResponseMode::Immediate))
        .then(|| session_of(&to).map(str::to_string))
        .flatten();
    let mut meta = json!({
        "mailKind": mail_kind.as_str(),
        "wakeRecipient": mode == Some(ResponseMode::Immediate),
    });
    if let Some(p) = &parent {
        meta["replyTo"] = json!(p.id);
        meta["conversationId"] = json!(p.meta_str("conversationId").unwrap_or(&p.id));
    }
    if let Some(t) = req
        .task_id
        .as_deref()
        .or(parent.as_ref().and_then(|p| p.task_id()))
    {
        meta["taskId"] = json!(t);
    }
    if let Some(r) = &req.report {
        meta["report"] = json!(r);
    }
    let new = NewMessage {
        from_id: req.from_id.clone(),
        from_type: if req.is_from_user() { "user" } else { "agent" }.into(),
        to_id: to.clone(),
        to_type: if to_user { "user" } else { "agent" }.into(),
        content: req.content.clone(),
        kind: derived.into(),
        metadata: meta,
    };
    let id = insert(c, &new, None)?.unwrap_or_default();
    let how = match (&wake, to_user) {
        (_, true) => "it waits in the author's Inbox".to_string(),
        (Some(_), _) => format!("{to} gets it at once (as its next message when it is busy)"),
        (None, _) => format!("it waits unread until {to} reads its inbox (fn_read_messages)"),
    };
    let text = format!("Message {id} sent to {to}: {how}.");
    let value = json!({
        "messageId": id,
        "toId": to,
        "type": derived,
        "mailKind": mail_kind.as_str(),
        "wakeRecipient": wake.is_some(),
        "responseMode": mode.map(ResponseMode::as_str),
    });
    Ok(Outcome {
        text,
        value,
        touched: vec![Touched::Message(id)],
        ..Outcome::default()
    })
}

/// The messages addressed to any of `owners`, newest first (archived ones left out).
pub fn inbox(
    c: &Connection,
    owners: &[String],
    unread_only: bool,
    limit: usize,
) -> BoardResult<Vec<Message>> {
    if owners.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let marks = vec!["?"; owners.len()].join(", ");
    let sql = format!(
        "SELECT {COLS} FROM nbook_board_message WHERE to_id IN ({marks}) AND archived = 0 {} ORDER BY seq DESC LIMIT {}",
        if unread_only { "AND read = 0" } else { "" },
        limit.min(i64::MAX as usize)
    );
    let mut st = c.prepare_cached(&sql)?;
    let rows: Vec<(Message, String)> = st
        .query_map(rusqlite::params_from_iter(owners.iter()), row)?
        .collect::<Result<_, _>>()?;
    rows.into_iter().map(finish).collect()
}

/// What `owner` sent and received, newest first (archived ones left out): the author's
/// Inbox lists both, so a message the author wrote is there to follow in its thread.
pub fn mailbox_of(c: &Connection, owner: &str, limit: usize) -> BoardResult<Vec<Message>> {
    let sql = format!(
        "SELECT {COLS} FROM nbook_board_message WHERE (to_id = ?1 OR from_id = ?1) AND archived = 0 ORDER BY seq DESC LIMIT {}",
        limit.min(i64::MAX as usize)
    );
    let mut st = c.prepare_cached(&sql)?;
    let rows: Vec<(Message, String)> = st.query_map([owner], row)?.collect::<Result<_, _>>()?;
    rows.into_iter().map(finish).collect()
}

/// How many unread messages `owner` has.
pub fn unread_count(c: &Connection, owner: &str) -> BoardResult<usize> {
    let n: i64 = c.query_row(
        "SELECT count(*) FROM nbook_board_message WHERE to_id = ?1 AND read = 0 AND archived = 0",
        [owner],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as usize)
}

/// Mark messages read (those already read keep their first read time). Returns how many
/// changed.
pub fn mark_read(c: &Connection, ids: &[String]) -> BoardResult<usize> {
    let at = now();
    let mut n = 0;
    let mut st = c.prepare_cached(
        "UPDATE nbook_board_message SET read = 1, read_at = ?2 WHERE id = ?1 AND read = 0",
    )?;
    for id in ids {
        n += st.execute(params![id, at])?;
    }
    Ok(n)
}

/// Mark a message unread again (a delivery that could not start).
pub fn mark_unread(c: &Connection, id: &str) -> BoardResult<()> {
    c.execute(
        "UPDATE nbook_board_message SET read = 0, read_at = NULL WHERE id = ?1",
        [id],
    )?;
    Ok(())
}

/// The messages in `id`'s thread (same conversation), oldest first.
pub fn thread(c: &Connection, id: &str) -> BoardResult<Vec<Message>> {
    let Some(m) = load(c, id)? else {
        return Ok(Vec::new());
    };
    let conv = m.meta_str("conversationId").unwrap_or(&m.id).to_string();
    let mut st = c.prepare_cached(&format!(
        "SELECT {COLS} FROM nbook_board_message WHERE id = ?1 OR json_extract(metadata, '$.conversationId') = ?1 ORDER BY seq"
    ))?;
    let rows: Vec<(Message, String)> = st.query_map([conv], row)?.collect::<Result<_, _>>()?;
    rows.into_iter().map(finish).collect()
}

/// A one-line summary of a message for lists (`fn_read_messages`' text).
pub fn summary_line(m: &Message) -> String {
    let mut s = format!(
        "- {} [{}{}] from {}",
        m.id,
        m.mail_kind().as_str(),
        if m.read { "" } else { ", unread" },
        m.from_id
    );
    if let Some(r) = m.reply_to() {
        s.push_str(&format!(" (reply to {r})"));
    }
    if let Some(t) = m.task_id() {
        s.push_str(&format!(" · task {t}"));
    }
    s.push_str(": ");
    match m.report() {
        Some(r) => s.push_str(&format!(
            "report \"{}\" — {}",
            r.title,
            snippet(&m.content, 200)
        )),
        None => s.push_str(&snippet(&m.content, 400)),
    }
    s
}

// ---- rooms ----

/// A chat room with its members.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Room {
    pub id: String,
    pub name: String,
    pub slug: String,
    pub description: String,
    pub status: String,
    pub members: Vec<String>,
    pub created_at: String,
}

/// One post in a room.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoomPost {
    pub id: String,
    pub room_id: String,
    pub role: String,
    pub content: String,
    pub metadata: Value,
    pub sender_agent_id: String,
    pub mentions: Vec<String>,
    pub created_at: String,
}

fn slug_of(name: &str) -> String {
    let mut s = String::new();
    for ch in name.trim().chars() {
        if ch.is_alphanumeric() {
            s.extend(ch.to_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
}

pub fn room_load(c: &Connection, id: &str) -> BoardResult<Option<Room>> {
    let r = c
        .query_row(
            "SELECT id, name, slug, description, status, created_at FROM nbook_board_room WHERE id = ?1",
            [id],
            |r| {
                Ok(Room {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    slug: r.get(2)?,
                    description: r.get(3)?,
                    status: r.get(4)?,
                    members: Vec::new(),
                    created_at: r.get(5)?,
                })
            },
        )
        .optional()?;
    match r {
        Some(mut room) => {
            room.members = members(c, &room.id)?;
            Ok(Some(room))
        }
        None => Ok(None),
    }
}

fn members(c: &Connection, room: &str) -> BoardResult<Vec<String>> {
    let mut st = c.prepare_cached(
        "SELECT agent_id FROM nbook_board_room_member WHERE room_id = ?1 ORDER BY agent_id",
    )?;
    let m: Vec<String> = st
        .query_map([room], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(m)
}

/// Every room in creation order.
pub fn rooms(c: &Connection) -> BoardResult<Vec<Room>> {
    let mut st = c.prepare_cached("SELECT id FROM nbook_board_room ORDER BY seq")?;
    let ids: Vec<String> = st.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for id in ids {
        if let Some(r) = room_load(c, &id)? {
            out.push(r);
        }
    }
    Ok(out)
}

/// Members checked by `known_agent`; blank ids dropped, duplicates once.
fn checked_members(
    c: &Connection,
    members: &[String],
    known_agent: &dyn Fn(&str) -> bool,
) -> BoardResult<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for m in members.iter().map(|m| m.trim()).filter(|m| !m.is_empty()) {
        if !known_agent(m) && !durable_exists(c, m)? {
            return Err(BoardError::RecipientNotFound {
                id: m.to_string(),
                why: "a room member is an agent id from fn_list_agents".into(),
            });
        }
        if !out.iter().any(|o| o == m) {
            out.push(m.to_string());
        }
    }
    Ok(out)
}

/// The author's new room (`room-001`, …) with its first members.
pub fn room_create(
    c: &Connection,
    name: &str,
    description: &str,
    members: &[String],
    known_agent: &dyn Fn(&str) -> bool,
) -> BoardResult<Outcome> {
    let name = name.trim();
    if name.is_empty() {
        return Err(BoardError::invalid("name", "must not be empty"));
    }
    let slug = slug_of(name);
    if slug.is_empty() {
        return Err(BoardError::invalid("name", "needs a letter or a digit"));
    }
    let taken: Option<String> = c
        .query_row(
            "SELECT id FROM nbook_board_room WHERE slug = ?1",
            [&slug],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = taken {
        return Err(BoardError::invalid(
            "name",
            format!("room {id} is called that already"),
        ));
    }
    let members = checked_members(c, members, known_agent)?;
    let seq: i64 = c.query_row(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM nbook_board_room",
        [],
        |r| r.get(0),
    )?;
    let id = format!("room-{seq:03}");
    c.execute(
        "INSERT INTO nbook_board_room (id, seq, name, slug, description, status, created_at) VALUES (?1, ?2, ?3, ?4, ?5, 'active', ?6)",
        params![id, seq, name, slug, description.trim(), now()],
    )?;
    for m in &members {
        c.execute(
            "INSERT OR IGNORE INTO nbook_board_room_member (room_id, agent_id, role) VALUES (?1, ?2, 'member')",
            params![id, m],
        )?;
    }
    Ok(Outcome {
        text: format!(
            "Room {id} ({name}) created with {}.",
            if members.is_empty() {
                "no members yet".to_string()
            } else {
                members.join(", ")
            }
        ),
        value: json!({"roomId": id, "name": name, "slug": slug, "members": members}),
        touched: vec![Touched::Room(id)],
        ..Outcome::default()
    })
}

/// The author adds members to a room.
pub fn room_add_members(
    c: &Connection,
    room_id: &str,
    add: &[String],
    known_agent: &dyn Fn(&str) -> bool,
) -> BoardResult<Outcome> {
    let room = room_load(c, room_id)?.ok_or_else(|| BoardError::RoomNotFound {
        id: room_id.to_string(),
    })?;
    let add = checked_members(c, add, known_agent)?;
    if add.is_empty() {
        return Err(BoardError::invalid("members", "name at least one agent id"));
    }
    for m in &add {
        c.execute(
            "INSERT OR IGNORE INTO nbook_board_room_member (room_id, agent_id, role) VALUES (?1, ?2, 'member')",
            params![room.id, m],
        )?;
    }
    let all = members(c, &room.id)?;
    Ok(Outcome {
        text: format!("Room {} now has {}.", room.id, all.join(", ")),
        value: json!({"roomId": room.id, "members": all}),
        touched: vec![Touched::Room(room.id)],
        ..Outcome::default()
    })
}

/// A post into `room_id` by `sender`, which must be a member under one of `own_ids` (its
/// session's agent id or its profile key) — or the author ([`USER_ID`]), who may post in
/// every room. Mentions must be members too.
pub fn room_post(
    c: &Connection,
    room_id: &str,
    own_ids: &[String],
    content: &str,
    reply_to: Option<&str>,
    mentions: &[String],
) -> BoardResult<Outcome> {
    check_content(content)?;
    let room = room_load(c, room_id)?.ok_or_else(|| BoardError::RoomNotFound {
        id: room_id.to_string(),
    })?;
    // The author made the rooms and may post in every one of them.
    let author = own_ids.iter().any(|o| o == USER_ID);
    if !author && !own_ids.iter().any(|o| room.members.contains(o)) {
        return Err(BoardError::NotRoomMember {
            room: room.id,
            agent: own_ids.first().cloned().unwrap_or_default(),
        });
    }
    if let Some(m) = mentions.iter().find(|m| !room.members.contains(m)) {
        return Err(BoardError::invalid(
            "mentions",
            format!("{m} is not a member of {}", room.id),
        ));
    }
    let reply_to = reply_to.map(str::trim).filter(|s| !s.is_empty());
    if let Some(r) = reply_to {
        let there: Option<i64> = c
            .query_row(
                "SELECT seq FROM nbook_board_room_message WHERE id = ?1 AND room_id = ?2",
                params![r, room.id],
                |x| x.get(0),
            )
            .optional()?;
        if there.is_none() {
            return Err(BoardError::MessageNotFound { id: r.to_string() });
        }
    }
    let seq: i64 = c.query_row(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM nbook_board_room_message",
        [],
        |r| r.get(0),
    )?;
    let id = format!("rmsg-{seq:06}");
    let sender = own_ids.first().cloned().unwrap_or_default();
    let meta = match reply_to {
        Some(r) => json!({"replyTo": r}),
        None => json!({}),
    };
    c.execute(
        "INSERT INTO nbook_board_room_message (seq, id, room_id, role, content, metadata, sender_agent_id, mentions, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![seq, id, room.id, if author { "user" } else { "agent" }, content, meta.to_string(), sender, json!(mentions).to_string(), now()],
    )?;
    Ok(Outcome {
        text: format!("Posted {id} in {} ({}).", room.id, room.name),
        value: json!({"roomId": room.id, "messageId": id, "mentions": mentions}),
        touched: vec![Touched::RoomPost(id)],
        ..Outcome::default()
    })
}

pub fn room_post_load(c: &Connection, id: &str) -> BoardResult<Option<RoomPost>> {
    let r = c
        .query_row(
            "SELECT id, room_id, role, content, metadata, sender_agent_id, mentions, created_at FROM nbook_board_room_message WHERE id = ?1",
            [id],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                ))
            },
        )
        .optional()?;
    let Some((id, room_id, role, content, meta, sender, mentions, at)) = r else {
        return Ok(None);
    };
    Ok(Some(RoomPost {
        metadata: json_col(&format!("room post {id}"), &meta)?,
        mentions: json_col(&format!("room post {id}"), &mentions)?,
        id,
        room_id,
        role,
        content,
        sender_agent_id: sender,
        created_at: at,
    }))
}

/// The newest `limit` posts of a room, oldest first.
pub fn room_posts(c: &Connection, room_id: &str, limit: usize) -> BoardResult<Vec<RoomPost>> {
    let mut st = c.prepare_cached(
        "SELECT id FROM nbook_board_room_message WHERE room_id = ?1 ORDER BY seq DESC LIMIT ?2",
    )?;
    let ids: Vec<String> = st
        .query_map(params![room_id, limit as i64], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for id in ids.iter().rev() {
        if let Some(p) = room_post_load(c, id)? {
            out.push(p);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_recipients() {
        assert_eq!(slug_of("  Continuity Desk! "), "continuity-desk");
        assert_eq!(slug_of("!!"), "");
        assert_eq!(
            recipient_from_args(None, Some("agent-to-user")).as_deref(),
            Some(USER_ID)
        );
        assert_eq!(
            recipient_from_args(Some(" writer "), None).as_deref(),
            Some("writer")
        );
        assert_eq!(recipient_from_args(None, None), None);
        assert_eq!(session_of("session:s-1"), Some("s-1"));
        assert_eq!(session_of("writer"), None);
    }
}
