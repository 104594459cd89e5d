//! The mailbox and rooms on the engine contract (issue #17; fusion-notes §2.5, §5):
//! `fn_send_message`, `fn_read_messages`, `fn_post_room_message` for agents, and the author's
//! `fn_room_create` / `fn_room_add_members` from the Inbox. Storage and checks are
//! `crate::board::mailbox`'s; this file knows who the caller is (its session's agent id
//! `session:<id>` and its profile key; the author is `dashboard`), which agent ids exist
//! (profiles and live sessions, as `fn_list_agents` lists them), and how mail reaches a
//! session.
//!
//! **Approval (Fusion calls send and post "gate-bypass").** nbook's rule is that nothing
//! mutates the project behind the author's back. A message *to the author* changes nothing
//! the author has not seen: it only informs, and it lands in the author's own Inbox. So
//! `fn_send_message` declares `Mutates::Depends`: a call whose arguments name the author
//! (`to_id: "dashboard"`, or `type: "agent-to-user"` without `to_id`) is not a mutation and
//! runs at once; every other call — a message to an agent, which wakes it and makes it act,
//! or a reply whose recipient is known only from the parent message — is mutating and waits
//! in the approval queue under `supervised`, its preview the exact dry run (the message
//! record it creates). A room post reaches every member, so `fn_post_room_message` always
//! mutates. `fn_read_messages` is a read: the read marks it sets on the mail it returns are
//! the reader's own bookkeeping (Fusion: not a mutation, exempt), like the session log.
//!
//! **Delivery.** A message to a live session in `immediate` mode (every agent today, see
//! `crate::board::mailbox::response_mode`) is delivered through the agent host exactly as a
//! question card's answers are: as the session's next user message (`InvokeMode::Prompt`),
//! which starts a turn when the session is idle and waits behind the running turn when it is
//! busy; it is marked read once handed over. A message to a permanent agent (a profile key)
//! has no session to wake: it waits unread until a session of that profile reads its inbox.
//! A message to a durable agent in `immediate` mode reaches the live session running as it
//! (`crate::engine::mail::live_session_of`) the same way; with none it waits unread.
//! So does mail in `on-heartbeat` mode, and all mail where no host runs (`nbook call`).

use std::sync::{Arc, Weak};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{board, err, preview_op, read_output, run_op, SESSION_TASK};
use crate::board::agents::is_durable_id;
use crate::board::mailbox::ResponseMode;
use crate::board::mailbox::{
    self as mb, MailKind, Message, Report, SendRequest, DEFAULT_READ_LIMIT, SESSION_AGENT, USER_ID,
};
use crate::board::{Board, BoardResult, Outcome};
use crate::engine::agents::{AgentHost, InvokeMode, InvokeRequest};
use crate::engine::author::AUTHOR_PROFILE;
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::Preview;

const BOARD: Effects = {
    use crate::engine::tool::Domain::*;
    Effects::touches(&[Board, Agents])
};

const AUTHOR_BOARD: Effects = {
    use crate::engine::tool::Domain::*;
    Effects::touches(&[Board]).author_only(
        "the author makes chat rooms and chooses their members in the Inbox (Board 6, I: N a new room, A adds members); post in your rooms with fn_post_room_message",
    )
};

/// Whether the caller is the author (the TUI's author session).
fn is_author(ctx: &ToolCtx) -> bool {
    ctx.profile.key == AUTHOR_PROFILE
}

/// The caller's id as a sender, then the ids whose mail is the caller's: the session's agent
/// id and its profile key; for the author, `dashboard`.
fn own_ids(ctx: &ToolCtx) -> Vec<String> {
    if is_author(ctx) {
        return vec![USER_ID.to_string()];
    }
    // A session running as a durable agent reads that agent's mail too, and sends as it.
    let mut ids = Vec::new();
    if let Some(d) = super::durable_agents::session_agent(ctx) {
        ids.push(d);
    }
    ids.push(format!("{SESSION_AGENT}{}", ctx.session_id));
    ids.push(ctx.profile.key.clone());
    ids
}

/// Whether `id` names an agent: a profile other than the author's, or a live session of one.
fn known_agent(ctx: &ToolCtx, id: &str) -> bool {
    let Some(e) = ctx.services.as_ref() else {
        return false;
    };
    if let Some(sid) = mb::session_of(id) {
        return e.session(sid).is_some_and(|s| s.profile != AUTHOR_PROFILE);
    }
    id != AUTHOR_PROFILE && e.profiles().get(id).is_some()
}

// ---- fn_send_message ----

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SendType {
    AgentToAgent,
    AgentToUser,
}

impl SendType {
    fn as_str(self) -> &'static str {
        match self {
            SendType::AgentToAgent => "agent-to-agent",
            SendType::AgentToUser => "agent-to-user",
        }
    }
}

/// `mail_kind` as an agent may give it (`approval` is the engine's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SendMailKind {
    Message,
    Report,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendArgs {
    /// 1–2000 characters.
    pub content: String,
    /// An agent id from fn_list_agents (a profile key, or session:<n>), or "dashboard" for the
    /// author. Omit it when replying: the reply goes to the parent message's sender.
    pub to_id: Option<String>,
    /// agent-to-agent | agent-to-user (to the author); default from the recipient.
    #[serde(rename = "type")]
    pub kind: Option<SendType>,
    /// The message this one answers (its thread).
    pub reply_to_message_id: Option<String>,
    /// message (default) | report (needs report).
    pub mail_kind: Option<SendMailKind>,
    /// A report's title and sections.
    pub report: Option<Report>,
}

/// Whether a call mutates: everything except a message the arguments address to the author.
fn send_mutates(args: &Value) -> bool {
    let to = args.get("to_id").and_then(Value::as_str);
    let kind = args.get("type").and_then(Value::as_str);
    mb::recipient_from_args(to, kind).as_deref() != Some(USER_ID)
}

fn send_request(ctx: &ToolCtx, a: &SendArgs) -> SendRequest {
    let own = own_ids(ctx);
    SendRequest {
        from_id: own[0].clone(),
        own_ids: own,
        content: a.content.clone(),
        to_id: a.to_id.clone(),
        kind: a.kind.map(|k| k.as_str().to_string()),
        reply_to: a.reply_to_message_id.clone(),
        mail_kind: a.mail_kind.map(|k| match k {
            SendMailKind::Message => MailKind::Message,
            SendMailKind::Report => MailKind::Report,
        }),
        report: a.report.clone(),
        task_id: ctx
            .session_state
            .get(SESSION_TASK)
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

fn send_op<'a>(
    ctx: &'a ToolCtx,
    req: &'a SendRequest,
) -> impl Fn(&rusqlite::Connection) -> BoardResult<Outcome> + 'a {
    move |c| mb::send(c, req, &|id| known_agent(ctx, id))
}

/// The text a woken session gets as its next message.
pub fn delivery_text(m: &Message) -> String {
    let from = match m.from_id.as_str() {
        USER_ID => "the author".to_string(),
        other => other.to_string(),
    };
    let mut head = format!("Mail {} from {from}", m.id);
    if let Some(r) = m.reply_to() {
        head.push_str(&format!(" (a reply to {r})"));
    }
    if let Some(t) = m.task_id() {
        head.push_str(&format!(" about task {t}"));
    }
    let mut text = format!("{head}:\n\n{}", m.content);
    if let Some(r) = m.report() {
        text.push_str(&format!("\n\nReport: {}", r.title));
        for s in &r.sections {
            text.push_str(&format!("\n\n## {}\n{}", s.heading, s.body));
        }
    }
    text.push_str(&format!(
        "\n\n(To answer, call fn_send_message with reply_to_message_id \"{}\".)",
        m.id
    ));
    text
}

/// Hand message `id` to session `sid` as its next message (see the module comment), on a
/// thread of its own: the host blocks until the run it starts or joins ends. The message is
/// marked read first and unread again when the host refuses it.
pub fn deliver(board: Board, host: Weak<dyn AgentHost>, sid: String, id: String) {
    let spawned = std::thread::Builder::new()
        .name(format!("mail-{id}"))
        .spawn(move || {
            let Ok(Some(m)) = board.read(|c| mb::load(c, &id)) else {
                return;
            };
            let Some(h) = host.upgrade() else { return };
            let ids = [id.clone()];
            if let Err(e) = board.commit(|c| {
                mb::mark_read(c, &ids)?;
                Ok(Outcome::default())
            }) {
                tracing::warn!("mail {id}: could not be marked read: {e}");
            }
            if let Err(x) = h.invoke_blocking(InvokeRequest {
                caller: None,
                session_id: sid.clone(),
                message: Some(delivery_text(&m)),
                input: None,
                mode: InvokeMode::Prompt,
                model: None,
                origin_call_id: None,
            }) {
                tracing::warn!("session {sid}: mail {id} was not delivered: {x}");
                let _ = board.commit(|c| {
                    mb::mark_unread(c, &id)?;
                    Ok(Outcome::default())
                });
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("a mail delivery thread could not start: {e}");
    }
}

pub struct SendMessage;

impl TypedTool for SendMessage {
    type Args = SendArgs;
    const NAME: &'static str = "fn_send_message";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Send a message to an agent or the author. content 1–2000 characters; to_id an agent id from fn_list_agents (a profile key, or session:<n> from includeEphemeral) or \"dashboard\" for the author; omit to_id when replying (reply_to_message_id): the reply goes to the parent's sender. type agent-to-agent | agent-to-user must fit the recipient. mail_kind report with report {title, sections [{heading, body}]} sends a report. A message to the author (to_id dashboard, or type agent-to-user) is delivered at once, without approval; a message to an agent wakes it (a live session gets it as its next message) and waits for the author's approval first, as does a reply without to_id — give type agent-to-user when you answer the author. details {messageId, toId, type, mailKind, wakeRecipient}. Error results (nothing is sent): MESSAGE_CONTENT_EMPTY, MESSAGE_CONTENT_TOO_LONG, RECIPIENT_NOT_FOUND, RECIPIENT_REQUIRED, MESSAGE_NOT_FOUND (reply to a message not in your mail), MESSAGE_TYPE_MISMATCH, REPORT_TITLE_REQUIRED.";
    const MUTATES: Mutates = Mutates::Depends(send_mutates);
    const EFFECTS: Effects = BOARD;
    fn write_targets(&self, _ctx: &ToolCtx, a: &SendArgs) -> Vec<String> {
        let to = mb::recipient_from_args(a.to_id.as_deref(), a.kind.map(|k| k.as_str()));
        vec![format!(
            "board/mail/{}",
            to.unwrap_or_else(|| "reply".to_string())
        )]
    }
    fn preview(&self, ctx: &ToolCtx, a: &SendArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let req = send_request(ctx, a);
        preview_op(Self::NAME, &board(ctx), send_op(ctx, &req))
    }
    fn run(&self, ctx: &ToolCtx, a: &SendArgs) -> Result<ToolOutput, ToolError> {
        let req = send_request(ctx, a);
        let b = board(ctx);
        let mut out = run_op(&b, send_op(ctx, &req))?;
        let d = out.details.clone().unwrap_or(Value::Null);
        let wake = d["wakeRecipient"].as_bool() == Some(true);
        let to = d["toId"].as_str().unwrap_or_default().to_string();
        let id = d["messageId"].as_str().unwrap_or_default().to_string();
        // Mail to a durable agent in immediate mode wakes the live session running as it.
        let immediate = d["responseMode"].as_str() == Some(ResponseMode::Immediate.as_str());
        let agent_session = (immediate && is_durable_id(&to))
            .then(|| {
                let sessions = ctx.services.as_ref()?.sessions();
                crate::engine::mail::live_session_of(&b, &sessions, &to)
            })
            .flatten();
        if let Some(sid) = &agent_session {
            if let Some(d) = out.details.as_mut() {
                d["wakeRecipient"] = json!(true);
                d["sessionId"] = json!(sid);
            }
            out.content = format!(
                "Message {id} sent to {to}: its session {sid} gets it at once (as its next message when it is busy)."
            );
        }
        let wake_session = match (wake, mb::session_of(&to)) {
            (true, Some(sid)) => Some(sid.to_string()),
            _ => agent_session,
        };
        if let Some(sid) = wake_session {
            match ctx.services.as_ref().and_then(|e| e.host()) {
                Some(h) => deliver(b, Arc::downgrade(&h), sid, id),
                None => {
                    out.content = format!(
                        "Message {id} sent to {to}: no agent host runs in this process, so it waits unread until {to} reads its inbox (fn_read_messages)."
                    );
                    if let Some(d) = out.details.as_mut() {
                        d["wakeRecipient"] = json!(false);
                    }
                }
            }
        }
        Ok(out)
    }
}

// ---- fn_read_messages ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// Only unread messages (default true).
    pub unread_only: Option<bool>,
    /// Most messages (default 20, at most 200).
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
}

/// Posts of each room shown with `fn_read_messages`.
const ROOM_POSTS: usize = 10;

pub struct ReadMessages;

impl TypedTool for ReadMessages {
    type Args = ReadArgs;
    const NAME: &'static str = "fn_read_messages";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Read your inbox, newest first: the mail to this session (session:<n>) and to your profile. unread_only (default true), limit (default 20, at most 200). The messages returned are marked read. Also the newest posts of the rooms you are a member of. details {messages: [{id, fromId, fromType, toId, toType, content, type, read, archived, metadata {replyTo, taskId, conversationId, mailKind, report, …}, createdAt}], unreadCount, rooms: [{roomId, name, posts}]}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = BOARD;
    fn run(&self, ctx: &ToolCtx, a: &ReadArgs) -> Result<ToolOutput, ToolError> {
        let own = own_ids(ctx);
        let unread_only = a.unread_only.unwrap_or(true);
        let limit = a
            .limit
            .map(|n| n as usize)
            .unwrap_or(DEFAULT_READ_LIMIT)
            .clamp(1, mb::MAX_READ_LIMIT);
        let b = board(ctx);
        let mut messages = b
            .read(|c| mb::inbox(c, &own, unread_only, limit))
            .map_err(err)?;
        let fresh: Vec<String> = messages
            .iter()
            .filter(|m| !m.read)
            .map(|m| m.id.clone())
            .collect();
        if !fresh.is_empty() {
            b.commit(|c| {
                mb::mark_read(c, &fresh)?;
                Ok(Outcome::default())
            })
            .map_err(err)?;
        }
        let rooms = b
            .read(|c| {
                let mut out = Vec::new();
                for r in mb::rooms(c)? {
                    if own.iter().any(|o| r.members.contains(o)) {
                        let posts = mb::room_posts(c, &r.id, ROOM_POSTS)?;
                        out.push((r, posts));
                    }
                }
                Ok(out)
            })
            .map_err(err)?;
        let unread = b
            .read(|c| {
                let mut n = 0;
                for o in &own {
                    n += mb::unread_count(c, o)?;
                }
                Ok(n)
            })
            .map_err(err)?;
        let mut lines: Vec<String> = messages.iter().map(mb::summary_line).collect();
        if lines.is_empty() {
            lines.push(if unread_only {
                "No unread mail.".into()
            } else {
                "No mail.".into()
            });
        }
        for (r, posts) in &rooms {
            lines.push(format!(
                "Room {} ({}): {} recent posts",
                r.id,
                r.name,
                posts.len()
            ));
            for p in posts {
                lines.push(format!(
                    "  - {} {}: {}",
                    p.id,
                    p.sender_agent_id,
                    crate::board::snippet(&p.content, 200)
                ));
            }
        }
        // The read marks just set: the list shows the state after this read.
        for m in &mut messages {
            m.read = true;
        }
        let room_v: Vec<Value> = rooms
            .iter()
            .map(|(r, posts)| json!({"roomId": r.id, "name": r.name, "posts": posts}))
            .collect();
        Ok(read_output(
            lines.join("\n"),
            json!({"messages": messages, "unreadCount": unread, "rooms": room_v}),
        ))
    }
}

// ---- fn_post_room_message ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PostArgs {
    /// e.g. room-001.
    #[serde(rename = "roomId")]
    #[schemars(length(min = 1, max = 64))]
    pub room_id: String,
    /// 1–2000 characters.
    pub content: String,
    /// A post of the same room this one answers.
    #[serde(rename = "replyToMessageId")]
    pub reply_to_message_id: Option<String>,
    /// Agent ids of members this post is for.
    pub mentions: Option<Vec<String>>,
}

fn post_op<'a>(
    own: &'a [String],
    a: &'a PostArgs,
) -> impl Fn(&rusqlite::Connection) -> BoardResult<Outcome> + 'a {
    move |c| {
        mb::room_post(
            c,
            a.room_id.trim(),
            own,
            &a.content,
            a.reply_to_message_id.as_deref(),
            a.mentions.as_deref().unwrap_or_default(),
        )
    }
}

pub struct PostRoomMessage;

impl TypedTool for PostRoomMessage {
    type Args = PostArgs;
    const NAME: &'static str = "fn_post_room_message";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Post into a chat room you are a member of (as this session or as your profile). content 1–2000 characters; replyToMessageId a post of that room; mentions member agent ids. A post reaches every member, so it waits for the author's approval first. details {roomId, messageId, mentions}. Error results (nothing is posted): ROOM_NOT_FOUND, NOT_ROOM_MEMBER, MESSAGE_CONTENT_EMPTY, MESSAGE_CONTENT_TOO_LONG, MESSAGE_NOT_FOUND, INVALID_ARGUMENT (a mention who is not a member).";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = BOARD;
    fn write_targets(&self, _ctx: &ToolCtx, a: &PostArgs) -> Vec<String> {
        vec![format!("board/room/{}", a.room_id.trim())]
    }
    fn preview(&self, ctx: &ToolCtx, a: &PostArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let own = own_ids(ctx);
        preview_op(Self::NAME, &board(ctx), post_op(&own, a))
    }
    fn run(&self, ctx: &ToolCtx, a: &PostArgs) -> Result<ToolOutput, ToolError> {
        let own = own_ids(ctx);
        run_op(&board(ctx), post_op(&own, a))
    }
}

// ---- the author's rooms ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoomCreateArgs {
    /// e.g. "Continuity desk".
    #[schemars(length(min = 1, max = 120))]
    pub name: String,
    pub description: Option<String>,
    /// Agent ids from fn_list_agents (profile keys or session:<n>).
    pub members: Option<Vec<String>>,
}

pub struct RoomCreate;

impl TypedTool for RoomCreate {
    type Args = RoomCreateArgs;
    const NAME: &'static str = "fn_room_create";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "The author's new chat room (room-001, …) with its first members (agent ids: profile keys or session:<n>). An empty or taken name (INVALID_ARGUMENT) or an unknown member (RECIPIENT_NOT_FOUND) is an error result; nothing changes. Given only to the author.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = AUTHOR_BOARD;
    fn write_targets(&self, _ctx: &ToolCtx, _a: &RoomCreateArgs) -> Vec<String> {
        vec!["board/rooms".into()]
    }
    fn preview(
        &self,
        ctx: &ToolCtx,
        a: &RoomCreateArgs,
        _raw: &Value,
    ) -> Result<Preview, ToolError> {
        let (d, m) = (
            a.description.clone().unwrap_or_default(),
            a.members.clone().unwrap_or_default(),
        );
        preview_op(Self::NAME, &board(ctx), |c: &rusqlite::Connection| {
            mb::room_create(c, &a.name, &d, &m, &|id| known_agent(ctx, id))
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &RoomCreateArgs) -> Result<ToolOutput, ToolError> {
        let (d, m) = (
            a.description.clone().unwrap_or_default(),
            a.members.clone().unwrap_or_default(),
        );
        run_op(&board(ctx), |c: &rusqlite::Connection| {
            mb::room_create(c, &a.name, &d, &m, &|id| known_agent(ctx, id))
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoomAddArgs {
    /// e.g. room-001.
    #[schemars(length(min = 1, max = 64))]
    pub room_id: String,
    /// Agent ids to add.
    #[schemars(length(min = 1))]
    pub members: Vec<String>,
}

pub struct RoomAddMembers;

impl TypedTool for RoomAddMembers {
    type Args = RoomAddArgs;
    const NAME: &'static str = "fn_room_add_members";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "The author adds members (agent ids) to a chat room. An unknown room (ROOM_NOT_FOUND) or member (RECIPIENT_NOT_FOUND) is an error result; nothing changes. Given only to the author.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = AUTHOR_BOARD;
    fn write_targets(&self, _ctx: &ToolCtx, a: &RoomAddArgs) -> Vec<String> {
        vec![format!("board/room/{}", a.room_id.trim())]
    }
    fn preview(&self, ctx: &ToolCtx, a: &RoomAddArgs, _raw: &Value) -> Result<Preview, ToolError> {
        preview_op(Self::NAME, &board(ctx), |c: &rusqlite::Connection| {
            mb::room_add_members(c, a.room_id.trim(), &a.members, &|id| known_agent(ctx, id))
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &RoomAddArgs) -> Result<ToolOutput, ToolError> {
        run_op(&board(ctx), |c: &rusqlite::Connection| {
            mb::room_add_members(c, a.room_id.trim(), &a.members, &|id| known_agent(ctx, id))
        })
    }
}
