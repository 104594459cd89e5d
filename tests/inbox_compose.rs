//! Writing from the Inbox, and sessions run as durable agents, on a real SQLite project with
//! the real engine and agent host (a scripted replay model):
//!
//! - engine level: a session started as a durable agent runs with its role's profile, has
//!   `board.agent` set, the agent's identity in its system prompt, and the list names the
//!   agent (also after a restart); an unknown or malformed agent id starts nothing. The
//!   author's message to an `immediate` agent is stored with `wakeRecipient: true` and reaches
//!   its live session at once; to an `on-heartbeat` agent it is stored with
//!   `wakeRecipient: false` and stays unread for its next run. Whom the author can write to
//!   (durable agents with their modes, profiles, sessions). Every bad message (empty, over
//!   2000 characters, unknown recipient, unknown room) stores nothing. The author posts in a
//!   room; opening a mail the author sent never marks it read for its recipient.
//! - state level (the Board pane's real jobs): `c` opens the new-message form, the recipient
//!   is chosen with ↓, Enter sends as the author and the Inbox opens the sent message's
//!   thread; the form's error states (empty, too long, a recipient deleted meanwhile) keep it
//!   open and send nothing; `p` posts in a room. Snapshots of the forms and the error states.

mod tui_story_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nbook::agent::host::{Host, ProviderSource};
use nbook::agent::{Provider, ReplayProvider};
use nbook::board::mailbox as mb;
use nbook::engine::agent_session::AgentSessionError;
use nbook::engine::mail::RecipientKind;
use nbook::engine::{Approval, CallResult, Decision, Engine, LogRecord, Mode, SessionState};
use nbook::tui::app::AppState;
use nbook::tui::input::Overlay;
use serde_json::{json, Value};
use tui_story_support::board_ui::{app, board, keys, paste};
use tui_story_support::*;

const APPROVE: Approval = Approval::Auto {
    decision: Decision::Approve,
    by: "test",
};

fn author(e: &Arc<Engine>, tool: &str, args: Value) -> CallResult {
    rt().block_on(e.author_call(tool, args, None))
}

/// The author creates a custom durable agent (its sessions run with profile `heartbeat`).
fn agent(e: &Arc<Engine>, name: &str, mode: &str) -> String {
    let r = author(
        e,
        "fn_agent_create",
        json!({"name": name, "role": "custom", "message_response_mode": mode,
               "soul": format!("You are {name}, who keeps the continuity of the book.")}),
    );
    assert!(r.ok, "{}", r.content);
    r.details.unwrap()["agentId"].as_str().unwrap().to_string()
}

fn mail(b: &Book, id: &str) -> mb::Message {
    board(b)
        .read(|c: &rusqlite::Connection| mb::load(c, id))
        .unwrap()
        .unwrap_or_else(|| panic!("{id} is stored"))
}

/// (messages, room posts)
fn counts(b: &Book) -> (i64, i64) {
    (
        b.count("SELECT count(*) FROM nbook_board_message"),
        b.count("SELECT count(*) FROM nbook_board_room_message"),
    )
}

fn scripts(profile: &str, reply: &str) -> ProviderSource {
    let p = ReplayProvider::parse(
        &json!({"text": reply, "tool_calls": []}).to_string(),
        profile,
    )
    .expect("script");
    let map: HashMap<String, Arc<dyn Provider>> =
        [(profile.to_string(), Arc::new(p) as Arc<dyn Provider>)].into();
    let map = Mutex::new(map);
    Arc::new(move |profile, _model| {
        map.lock()
            .unwrap()
            .get(&profile.key)
            .cloned()
            .ok_or_else(|| format!("no script for {}", profile.key))
    })
}

fn user_messages(e: &Engine, sid: &str) -> Vec<String> {
    e.session_log(sid)
        .unwrap()
        .lines
        .iter()
        .filter_map(|l| match &l.record {
            LogRecord::User { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn message_id(r: &CallResult) -> String {
    r.details.as_ref().unwrap()["messageId"]
        .as_str()
        .unwrap()
        .to_string()
}

// ---- engine level ----

#[test]
fn a_session_as_a_durable_agent_has_its_profile_identity_and_mark() {
    let b = empty_book();
    let e = b.engine.clone();
    let a = agent(&e, "Continuity", "immediate");
    let mut events = e.subscribe();
    let s = e.create_agent_session(&a, Mode::Normal, "").unwrap();
    assert_eq!(s.profile, "heartbeat", "a custom agent runs as heartbeat");
    // The last session event (what the Sessions pane keeps) names the agent too: the list
    // would otherwise show the session without it.
    let mut last = None;
    while let Ok(ev) = events.try_recv() {
        if let nbook::engine::EngineEvent::Session { session } = ev {
            if session.id == s.id {
                last = Some(session);
            }
        }
    }
    assert_eq!(
        last.expect("a session event").agent.as_deref(),
        Some(a.as_str())
    );
    assert_eq!(s.agent.as_deref(), Some(a.as_str()));
    assert_eq!(s.title, format!("Continuity ({a})"));
    assert_eq!(e.session_state(&s.id)["board.agent"], json!(a));
    let prompt = nbook::agent::run_loop::system_prompt(&e, &s.id);
    assert!(
        prompt.contains("who keeps the continuity of the book"),
        "the agent's soul is in the prompt: {prompt}"
    );
    assert_eq!(
        e.sessions().iter().find(|x| x.id == s.id).unwrap().agent,
        Some(a.clone())
    );
    // A rating of its run lands on the agent.
    let r = author(&e, "fn_agent_rate", json!({"session_id": s.id, "score": 4}));
    assert!(r.ok, "{}", r.content);
    assert_eq!(
        b.text("SELECT agent_id FROM nbook_agent_rating"),
        a,
        "the rating is the agent's"
    );
    // Bad ids start nothing.
    let before = e.sessions().len();
    let err = e
        .create_agent_session("agent-042", Mode::Normal, "")
        .unwrap_err();
    assert!(
        matches!(err, AgentSessionError::UnknownAgent { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("fn_list_agents"), "{err}");
    let err = e
        .create_agent_session("writer", Mode::Normal, "")
        .unwrap_err();
    assert!(matches!(err, AgentSessionError::NotAgentId { .. }), "{err}");
    assert!(err.to_string().contains("agent-<n>"), "{err}");
    assert_eq!(e.sessions().len(), before, "no session was created");
    // After a restart the list still names the agent.
    let home = tempfile::tempdir().unwrap();
    let dirs = nbook::config::Dirs {
        config: home.path().join("home"),
        data: home.path().join("home/data"),
        logs: home.path().join("home/logs"),
    };
    let reopened = Engine::open(
        nbook::workspace::Workspace::open(&b.root).unwrap(),
        nbook::config::Config::default(),
        &dirs,
        nbook::tools::registry().unwrap(),
    )
    .unwrap();
    let again = reopened.session(&s.id).unwrap();
    assert_eq!(again.agent.as_deref(), Some(a.as_str()));
}

#[test]
fn a_message_to_an_immediate_agent_reaches_its_live_session_at_once() {
    let b = empty_book();
    let e = b.engine.clone();
    let a = agent(&e, "Continuity", "immediate");
    let s = e.create_agent_session(&a, Mode::Normal, "").unwrap();
    let _in_rt = rt().enter();
    let _host = Host::attach(
        e.clone(),
        scripts("heartbeat", "Noted: the fog stays."),
        APPROVE,
    );
    let r = author(
        &e,
        "fn_send_message",
        json!({"to_id": a, "content": "Keep the fog for the last scene."}),
    );
    assert!(r.ok, "{}", r.content);
    let d = r.details.clone().unwrap();
    assert_eq!(d["wakeRecipient"], true, "{d}");
    assert_eq!(d["sessionId"], json!(s.id), "{d}");
    let id = message_id(&r);
    let m = mail(&b, &id);
    assert_eq!(m.metadata["wakeRecipient"], true);
    assert_eq!(m.from_id, "dashboard");
    assert_eq!(m.kind, "user-to-agent");
    let mut got = Vec::new();
    for _ in 0..3000 {
        got = user_messages(&e, &s.id);
        if !got.is_empty() && e.session(&s.id).unwrap().state == SessionState::Idle {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(got.len(), 1, "delivered once as the next message: {got:?}");
    assert!(
        got[0].contains("Keep the fog for the last scene."),
        "{}",
        got[0]
    );
    assert!(
        got[0].contains(&format!("Mail {id} from the author")),
        "{}",
        got[0]
    );
    assert!(mail(&b, &id).read, "handed over: read");
}

#[test]
fn a_message_to_an_on_heartbeat_agent_stays_unread_until_its_next_run() {
    let b = empty_book();
    let e = b.engine.clone();
    let a = agent(&e, "Night owl", "on-heartbeat");
    let s = e.create_agent_session(&a, Mode::Normal, "").unwrap();
    let _in_rt = rt().enter();
    let _host = Host::attach(e.clone(), scripts("heartbeat", "unused"), APPROVE);
    let r = author(
        &e,
        "fn_send_message",
        json!({"to_id": a, "content": "The outline changed."}),
    );
    assert!(r.ok, "{}", r.content);
    assert_eq!(r.details.as_ref().unwrap()["wakeRecipient"], false);
    assert_eq!(r.details.as_ref().unwrap()["responseMode"], "on-heartbeat");
    let id = message_id(&r);
    std::thread::sleep(Duration::from_millis(300));
    assert!(user_messages(&e, &s.id).is_empty(), "nobody was woken");
    let m = mail(&b, &id);
    assert_eq!(m.metadata["wakeRecipient"], false);
    assert!(!m.read, "it waits unread");
    // Its next run reads it as its own mail.
    let read = rt().block_on(e.call(
        &s.id,
        nbook::engine::ToolCall {
            id: String::new(),
            name: "fn_read_messages".into(),
            arguments: json!({}),
        },
        APPROVE,
    ));
    assert!(
        read.content.contains("The outline changed."),
        "{}",
        read.content
    );
    assert!(mail(&b, &id).read);
}

#[test]
fn the_recipients_are_agents_with_their_modes_profiles_and_sessions() {
    let b = empty_book();
    let e = b.engine.clone();
    let quick = agent(&e, "Quick", "immediate");
    let owl = agent(&e, "Owl", "on-heartbeat");
    let s = e.create_agent_session(&quick, Mode::Normal, "").unwrap();
    let w = e
        .create_session("writer", Mode::Normal, "drafting", None)
        .unwrap();
    let list = e.mail_recipients().unwrap();
    let get = |id: &str| {
        list.iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("{id} in {list:?}"))
    };
    assert_eq!(get(&quick).kind, RecipientKind::Durable);
    assert_eq!(get(&quick).live_session.as_deref(), Some(s.id.as_str()));
    assert!(
        get(&quick).reach().contains("at once"),
        "{}",
        get(&quick).reach()
    );
    assert_eq!(get(&owl).mode, mb::ResponseMode::OnHeartbeat);
    assert!(
        get(&owl).reach().contains("next run"),
        "{}",
        get(&owl).reach()
    );
    assert_eq!(get("writer").kind, RecipientKind::Profile);
    assert_eq!(
        get(&format!("session:{}", w.id)).kind,
        RecipientKind::Session
    );
    assert!(get(&format!("session:{}", s.id)).label.contains(&quick));
    assert!(
        !list
            .iter()
            .any(|r| r.id == "author" || r.id == "session:author"),
        "the author does not write to themselves: {list:?}"
    );
    // The durable agents come first, in creation order.
    assert_eq!(list[0].id, quick);
    assert_eq!(list[1].id, owl);
}

#[test]
fn bad_messages_and_posts_store_nothing() {
    let b = empty_book();
    let e = b.engine.clone();
    let a = agent(&e, "Continuity", "immediate");
    let before = counts(&b);
    for (args, code) in [
        (
            json!({"to_id": a, "content": "   "}),
            "MESSAGE_CONTENT_EMPTY",
        ),
        (
            json!({"to_id": a, "content": "x".repeat(2001)}),
            "MESSAGE_CONTENT_TOO_LONG",
        ),
        (
            json!({"to_id": "agent-099", "content": "hello"}),
            "RECIPIENT_NOT_FOUND",
        ),
        (
            json!({"to_id": "ghost", "content": "hello"}),
            "RECIPIENT_NOT_FOUND",
        ),
        (
            json!({"to_id": "session:77", "content": "hello"}),
            "RECIPIENT_NOT_FOUND",
        ),
    ] {
        let r = author(&e, "fn_send_message", args.clone());
        assert!(!r.ok, "{args}: {}", r.content);
        assert_eq!(r.details.unwrap_or(Value::Null)["code"], code, "{args}");
        assert_eq!(counts(&b), before, "{args} stored something");
    }
    let r = author(
        &e,
        "fn_post_room_message",
        json!({"roomId": "room-009", "content": "hi"}),
    );
    assert!(!r.ok);
    assert_eq!(r.details.unwrap_or(Value::Null)["code"], "ROOM_NOT_FOUND");
    assert_eq!(counts(&b), before);
    // Exactly 2000 characters is a message.
    let r = author(
        &e,
        "fn_send_message",
        json!({"to_id": a, "content": "y".repeat(2000)}),
    );
    assert!(r.ok, "{}", r.content);
}

#[test]
fn the_author_posts_in_any_room_and_opening_sent_mail_leaves_it_unread() {
    let b = empty_book();
    let e = b.engine.clone();
    let a = agent(&e, "Owl", "on-heartbeat");
    let r = author(
        &e,
        "fn_room_create",
        json!({"name": "Continuity desk", "members": [a]}),
    );
    assert!(r.ok, "{}", r.content);
    let r = author(
        &e,
        "fn_post_room_message",
        json!({"roomId": "room-001", "content": "Chapter 12 is in review."}),
    );
    assert!(
        r.ok,
        "the author posts without being a member: {}",
        r.content
    );
    assert_eq!(
        b.text("SELECT sender_agent_id || '/' || role FROM nbook_board_room_message"),
        "dashboard/user"
    );
    let r = author(
        &e,
        "fn_send_message",
        json!({"to_id": a, "content": "Read the review."}),
    );
    let id = message_id(&r);
    let inbox = e.read().inbox().unwrap();
    assert_eq!(inbox.mail[0].id, id, "the Inbox lists what the author sent");
    assert_eq!(inbox.unread, 0, "sent mail is not the author's unread mail");
    e.mark_mail_read(&id).unwrap();
    assert!(!mail(&b, &id).read, "its read mark stays its recipient's");
}

// ---- state level: the Inbox forms ----

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn inbox_app(b: &Book, w: u16, h: u16) -> AppState {
    let mut app = app(b, w, h);
    keys(b, &mut app, "I");
    assert!(app.board.inbox.is_some());
    app
}

fn form_error(app: &AppState) -> Option<String> {
    match &app.overlay {
        Some(Overlay::Board(o)) => match o.as_ref() {
            nbook::tui::board::overlay::BoardOverlay::Mail(f) => f.error.clone(),
            _ => panic!("another overlay"),
        },
        _ => panic!("the form is not open"),
    }
}

#[test]
fn c_writes_to_a_durable_agent_and_the_inbox_opens_the_thread() {
    for (w, h) in SIZES {
        let b = empty_book();
        let e = b.engine.clone();
        let _quick = agent(&e, "Quick", "immediate");
        let owl = agent(&e, "Owl", "on-heartbeat");
        let mut a = inbox_app(&b, w, h);
        keys(&b, &mut a, "c");
        keys(&b, &mut a, "<Down>");
        paste(&b, &mut a, "The outline changed: read chapter 12 again.");
        let s = screen(&mut a, w, h);
        assert!(s.contains("New message"), "{s}");
        assert!(
            s.contains("next run"),
            "the form says how it reaches Owl: {s}"
        );
        insta::assert_snapshot!(format!("inbox_compose_form_{w}x{h}"), s);
        keys(&b, &mut a, "<Enter>");
        assert!(a.overlay.is_none(), "sent: the form closed");
        let m = mail(&b, "msg-000001");
        assert_eq!(
            (m.from_id.as_str(), m.to_id.as_str()),
            ("dashboard", owl.as_str())
        );
        assert_eq!(m.content, "The outline changed: read chapter 12 again.");
        assert_eq!(m.metadata["wakeRecipient"], false);
        assert!(!m.read, "it waits for Owl's next run");
        let v = a.board.inbox.as_ref().unwrap();
        assert_eq!(v.selected().unwrap().id, "msg-000001");
        assert!(v
            .opened
            .as_ref()
            .is_some_and(|(id, t)| id == "msg-000001" && t.is_ok()));
        let s = screen(&mut a, w, h);
        assert!(s.contains(&format!("→ {owl}")), "{s}");
        insta::assert_snapshot!(format!("inbox_compose_sent_{w}x{h}"), s);
    }
}

#[test]
fn the_form_refuses_bad_messages_and_sends_nothing() {
    let (w, h) = (80, 24);
    let b = empty_book();
    let e = b.engine.clone();
    let owl = agent(&e, "Owl", "on-heartbeat");
    let mut a = inbox_app(&b, w, h);
    keys(&b, &mut a, "c");
    keys(&b, &mut a, "<Enter>");
    let err = form_error(&a).expect("an empty message is refused");
    assert!(err.contains("Type the text first"), "{err}");
    insta::assert_snapshot!("inbox_compose_empty_80x24", screen(&mut a, w, h));
    paste(&b, &mut a, &"z".repeat(2001));
    assert_eq!(form_error(&a), None, "typing clears the error");
    keys(&b, &mut a, "<Enter>");
    let err = form_error(&a).expect("too long");
    assert!(err.contains("2001 characters; at most 2000"), "{err}");
    insta::assert_snapshot!("inbox_compose_too_long_80x24", screen(&mut a, w, h));
    assert_eq!(counts(&b), (0, 0));
    // The recipient is deleted while the form is open: the engine's refusal shows in it.
    keys(&b, &mut a, "<Esc>");
    keys(&b, &mut a, "c");
    paste(&b, &mut a, "Still there?");
    let r = author(&e, "fn_agent_delete", json!({"agent_id": owl}));
    assert!(r.ok, "{}", r.content);
    keys(&b, &mut a, "<Enter>");
    let err = form_error(&a).expect("the engine refused it");
    assert!(err.starts_with("Not sent:"), "{err}");
    assert!(err.contains(&owl), "{err}");
    insta::assert_snapshot!(
        "inbox_compose_unknown_recipient_80x24",
        screen(&mut a, w, h)
    );
    assert_eq!(counts(&b), (0, 0), "nothing was sent");
    keys(&b, &mut a, "<Esc>");
    assert!(a.overlay.is_none());
}

#[test]
fn p_posts_in_a_room_as_the_author() {
    let (w, h) = (80, 24);
    let b = empty_book();
    let e = b.engine.clone();
    let mut a = inbox_app(&b, w, h);
    keys(&b, &mut a, "p");
    assert!(a.overlay.is_none(), "no room yet: no form");
    let owl = agent(&e, "Owl", "on-heartbeat");
    let r = author(
        &e,
        "fn_room_create",
        json!({"name": "Continuity desk", "members": [owl]}),
    );
    assert!(r.ok, "{}", r.content);
    // The Inbox reads the rooms when it opens.
    keys(&b, &mut a, "<Esc> I");
    keys(&b, &mut a, "p");
    paste(&b, &mut a, "Chapter 12 is in review.");
    let s = screen(&mut a, w, h);
    assert!(s.contains("Post in a room"), "{s}");
    assert!(s.contains("Continuity desk"), "{s}");
    insta::assert_snapshot!("inbox_room_post_form_80x24", s);
    keys(&b, &mut a, "<Enter>");
    assert!(a.overlay.is_none());
    assert_eq!(
        b.text("SELECT room_id || ' ' || sender_agent_id || ': ' || content FROM nbook_board_room_message"),
        "room-001 dashboard: Chapter 12 is in review."
    );
}
