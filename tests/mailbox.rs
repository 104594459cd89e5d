//! The mailbox (`fn_send_message`, `fn_read_messages`, `fn_post_room_message`, the author's
//! `fn_room_create` / `fn_room_add_members`) through the real engine on a real SQLite project:
//! every rejection code, each asserting nothing was stored; reply threads (a reply without
//! `to_id` goes to the parent's sender); `unread_only` and `limit`; which calls wait for the
//! author (a message to the author does not, one to an agent does); the engine's approval
//! mail, once per waiting call; and a reply to an idle session delivered through the real
//! agent host (a scripted replay model) as its next message, starting a turn.

#[allow(dead_code)]
mod engine_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_support::{call, fx, Fx, APPROVE};
use nbook::agent::host::{Host, ProviderSource};
use nbook::agent::{Provider, ReplayProvider};
use nbook::board::mailbox as mb;
use nbook::board::Board;
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, LogRecord, Mode, SessionState,
};
use nbook::tools::fusion::SESSION_TASK;
use serde_json::{json, Value};

impl Fx {
    fn session(&self, profile: &str) -> String {
        self.engine
            .create_session(profile, Mode::Normal, profile, None)
            .unwrap()
            .id
    }

    async fn run(&self, sid: &str, tool: &str, args: Value) -> CallResult {
        self.engine.call(sid, call(tool, args), APPROVE).await
    }

    async fn ok(&self, sid: &str, tool: &str, args: Value) -> CallResult {
        let r = self.run(sid, tool, args).await;
        assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
        r
    }

    /// The call fails with `code`, says nothing changed, and the mailbox is as before.
    async fn refused(&self, sid: &str, tool: &str, args: Value, code: &str) {
        let before = self.counts();
        let r = self.run(sid, tool, args.clone()).await;
        assert_eq!(
            r.status,
            CallStatus::ToolError,
            "{tool} {args}: {}",
            r.content
        );
        assert!(r.content.contains("nothing was changed"), "{}", r.content);
        assert_eq!(
            r.details.unwrap_or(Value::Null)["code"],
            json!(code),
            "{tool} {args}"
        );
        assert_eq!(self.counts(), before, "{tool} {args} stored something");
    }

    fn board(&self) -> Board {
        Board::new(&self.root, "Book")
    }

    /// (messages, rooms, room members, room posts)
    fn counts(&self) -> (i64, i64, i64, i64) {
        self.board()
            .read(|c| {
                let n = |t: &str| -> rusqlite::Result<i64> {
                    c.query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
                };
                Ok((
                    n("nbook_board_message")?,
                    n("nbook_board_room")?,
                    n("nbook_board_room_member")?,
                    n("nbook_board_room_message")?,
                ))
            })
            .unwrap()
    }

    fn mail(&self, id: &str) -> mb::Message {
        self.board().read(|c| mb::load(c, id)).unwrap().unwrap()
    }

    fn author_inbox(&self) -> Vec<mb::Message> {
        self.engine.read().inbox().unwrap().mail
    }

    async fn author(&self, tool: &str, args: Value) -> CallResult {
        self.engine.author_call(tool, args, None).await
    }
}

fn id_of(r: &CallResult) -> String {
    r.details.as_ref().unwrap()["messageId"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rejection_code_stores_nothing() {
    let f = fx();
    let exec = f.session("executor");
    let hb = f.session("heartbeat");
    f.refused(
        &exec,
        "fn_send_message",
        json!({"to_id": "dashboard", "content": "   "}),
        "MESSAGE_CONTENT_EMPTY",
    )
    .await;
    f.refused(
        &exec,
        "fn_send_message",
        json!({"to_id": "dashboard", "content": "é".repeat(2001)}),
        "MESSAGE_CONTENT_TOO_LONG",
    )
    .await;
    f.refused(
        &exec,
        "fn_send_message",
        json!({"to_id": "nobody", "content": "hi"}),
        "RECIPIENT_NOT_FOUND",
    )
    .await;
    f.refused(
        &exec,
        "fn_send_message",
        json!({"to_id": "session:s-999", "content": "hi"}),
        "RECIPIENT_NOT_FOUND",
    )
    .await;
    f.refused(
        &exec,
        "fn_send_message",
        json!({"to_id": "author", "content": "hi"}),
        "RECIPIENT_NOT_FOUND",
    )
    .await;
    f.refused(
        &exec,
        "fn_send_message",
        json!({"content": "hi"}),
        "RECIPIENT_REQUIRED",
    )
    .await;
    f.refused(
        &exec,
        "fn_send_message",
        json!({"content": "hi", "reply_to_message_id": "msg-000042"}),
        "MESSAGE_NOT_FOUND",
    )
    .await;
    f.refused(
        &exec,
        "fn_send_message",
        json!({"to_id": "dashboard", "content": "hi", "type": "agent-to-agent"}),
        "MESSAGE_TYPE_MISMATCH",
    )
    .await;
    f.refused(
        &exec,
        "fn_send_message",
        json!({"to_id": "dashboard", "content": "Weekly", "mail_kind": "report"}),
        "REPORT_TITLE_REQUIRED",
    )
    .await;
    f.refused(
        &exec,
        "fn_send_message",
        json!({"to_id": "dashboard", "content": "Weekly", "report": {"title": " ", "sections": []}}),
        "REPORT_TITLE_REQUIRED",
    )
    .await;
    // approval is the engine's own: the schema refuses it before the tool runs.
    let before = f.counts();
    let r = f
        .run(
            &exec,
            "fn_send_message",
            json!({"to_id": "dashboard", "content": "x", "mail_kind": "approval"}),
        )
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
    assert_eq!(f.counts(), before);

    // A mail that is not the caller's cannot be answered: it reads as missing.
    let other = f.session("chat");
    let m = f
        .ok(
            &other,
            "fn_send_message",
            json!({"to_id": "dashboard", "content": "to the author"}),
        )
        .await;
    let theirs = id_of(&m);
    f.refused(
        &exec,
        "fn_send_message",
        json!({"content": "mine now", "reply_to_message_id": theirs}),
        "MESSAGE_NOT_FOUND",
    )
    .await;

    // Rooms. Making one is the author's: an agent is told so, and nothing about plot deletes
    // (the refusal once gave every author-only tool the hard-delete advice).
    let r = f
        .run(
            &hb,
            "fn_room_create",
            json!({"name": "Agents only", "members": ["writer"]}),
        )
        .await;
    assert_eq!(r.status, CallStatus::NotAllowed, "{}", r.content);
    assert!(
        r.content.contains("for the author only") && r.content.contains("fn_post_room_message"),
        "{}",
        r.content
    );
    assert!(!r.content.contains("plot data"), "{}", r.content);
    f.refused(
        &hb,
        "fn_post_room_message",
        json!({"roomId": "room-009", "content": "hi"}),
        "ROOM_NOT_FOUND",
    )
    .await;
    let r = f
        .author(
            "fn_room_create",
            json!({"name": "Continuity desk", "members": ["writer"]}),
        )
        .await;
    assert!(r.ok, "{}", r.content);
    f.refused(
        &hb,
        "fn_post_room_message",
        json!({"roomId": "room-001", "content": "hi"}),
        "NOT_ROOM_MEMBER",
    )
    .await;
    let r = f
        .author("fn_room_create", json!({"name": "x", "members": ["ghost"]}))
        .await;
    assert!(!r.ok);
    assert_eq!(r.details.unwrap()["code"], "RECIPIENT_NOT_FOUND");
    let r = f
        .author(
            "fn_room_add_members",
            json!({"room_id": "room-001", "members": ["heartbeat"]}),
        )
        .await;
    assert!(r.ok, "{}", r.content);
    f.refused(
        &hb,
        "fn_post_room_message",
        json!({"roomId": "room-001", "content": ""}),
        "MESSAGE_CONTENT_EMPTY",
    )
    .await;
    f.refused(
        &hb,
        "fn_post_room_message",
        json!({"roomId": "room-001", "content": "hi", "replyToMessageId": "rmsg-000007"}),
        "MESSAGE_NOT_FOUND",
    )
    .await;
    f.refused(
        &hb,
        "fn_post_room_message",
        json!({"roomId": "room-001", "content": "hi", "mentions": ["executor"]}),
        "INVALID_ARGUMENT",
    )
    .await;
    let p = f
        .ok(&hb, "fn_post_room_message", json!({"roomId": "room-001", "content": "Flett's scar is on the left hand.", "mentions": ["writer"]}))
        .await;
    assert_eq!(p.details.unwrap()["messageId"], "rmsg-000001");
    // A member reads the room's posts with its inbox.
    let read = f.ok(&hb, "fn_read_messages", json!({})).await;
    let d = read.details.unwrap();
    assert_eq!(d["rooms"][0]["roomId"], "room-001");
    assert_eq!(
        d["rooms"][0]["posts"][0]["content"],
        "Flett's scar is on the left hand."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_thread_back_to_the_parents_sender_and_the_inbox_reads_unread_first() {
    let f = fx();
    let a = f.session("executor");
    let b = f.session("chat");
    f.engine
        .set_session_state(&a, vec![(SESSION_TASK.into(), json!("NB-001"))])
        .unwrap();
    // a → b (an agent: approved here), b answers without to_id.
    let first = f
        .ok(
            &a,
            "fn_send_message",
            json!({"to_id": format!("session:{b}"), "content": "Is Flett left-handed?"}),
        )
        .await;
    let first = id_of(&first);
    assert_eq!(f.mail(&first).kind, "agent-to-agent");
    assert_eq!(f.mail(&first).task_id(), Some("NB-001"));
    let reply = f
        .ok(
            &b,
            "fn_send_message",
            json!({"content": "Yes, since chapter 3.", "reply_to_message_id": first}),
        )
        .await;
    let reply = f.mail(&id_of(&reply));
    assert_eq!(reply.to_id, format!("session:{a}"));
    assert_eq!(reply.from_id, format!("session:{b}"));
    assert_eq!(reply.reply_to(), Some(first.as_str()));
    assert_eq!(reply.meta_str("conversationId"), Some(first.as_str()));
    assert_eq!(reply.task_id(), Some("NB-001"), "the thread keeps its task");

    // a's inbox: one unread; read once, then nothing unread; limit and unread_only: false.
    let r = f.ok(&a, "fn_read_messages", json!({})).await;
    let d = r.details.unwrap();
    assert_eq!(d["messages"].as_array().unwrap().len(), 1);
    assert_eq!(d["messages"][0]["content"], "Yes, since chapter 3.");
    assert_eq!(d["unreadCount"], 0);
    assert!(f.mail(&reply.id).read);
    let r = f.ok(&a, "fn_read_messages", json!({})).await;
    assert_eq!(r.details.unwrap()["messages"], json!([]));
    assert!(r.content.contains("No unread mail"));
    for i in 0..3 {
        f.ok(
            &b,
            "fn_send_message",
            json!({"to_id": format!("session:{a}"), "content": format!("note {i}")}),
        )
        .await;
    }
    // Mail to a's profile is a's too.
    f.ok(
        &b,
        "fn_send_message",
        json!({"to_id": "executor", "content": "to every executor"}),
    )
    .await;
    let r = f.ok(&a, "fn_read_messages", json!({"limit": 2})).await;
    let got: Vec<String> = r.details.unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        got,
        ["to every executor", "note 2"],
        "newest first, at most 2"
    );
    let r = f
        .ok(
            &a,
            "fn_read_messages",
            json!({"unread_only": false, "limit": 20}),
        )
        .await;
    let d = r.details.unwrap();
    assert_eq!(d["messages"].as_array().unwrap().len(), 5);
    assert_eq!(d["unreadCount"], 0);

    // An agent's report to the author; the author's reply (from the Inbox) goes back to it.
    let rep = f
        .ok(
            &a,
            "fn_send_message",
            json!({"type": "agent-to-user", "content": "Chapter 12 drafted.", "mail_kind": "report",
                   "report": {"title": "Chapter 12", "sections": [{"heading": "Done", "body": "4,100 words"}]}}),
        )
        .await;
    let rep = f.mail(&id_of(&rep));
    assert_eq!(
        (rep.to_id.as_str(), rep.kind.as_str()),
        ("dashboard", "agent-to-user")
    );
    assert_eq!(rep.report().unwrap().sections[0].body, "4,100 words");
    assert_eq!(f.engine.read().inbox().unwrap().unread, 1);
    let r = f
        .author(
            "fn_send_message",
            json!({"content": "Lovely. Trim the storm.", "reply_to_message_id": rep.id}),
        )
        .await;
    assert!(r.ok, "{}", r.content);
    let answer = f.mail(&id_of(&r));
    assert_eq!(answer.from_id, "dashboard");
    assert_eq!(answer.kind, "user-to-agent");
    assert_eq!(answer.to_id, format!("session:{a}"));
    f.engine.mark_mail_read(&rep.id).unwrap();
    assert_eq!(f.engine.read().inbox().unwrap().unread, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_to_the_author_runs_at_once_one_to_an_agent_waits_with_its_dry_run() {
    let f = fx();
    let a = f.session("executor");
    let r = f
        .engine
        .call(
            &a,
            call(
                "fn_send_message",
                json!({"to_id": "dashboard", "content": "FYI"}),
            ),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let r = f
        .engine
        .call(
            &a,
            call(
                "fn_send_message",
                json!({"to_id": "writer", "content": "Over to you"}),
            ),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::NeedsApproval, "{}", r.content);
    let preview = r.preview.unwrap();
    assert!(
        preview.summary.contains("create Message msg-000002"),
        "{}",
        preview.summary
    );
    assert_eq!(f.counts().0, 1, "the refused call stored nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_call_mails_the_author_once() {
    let f = fx();
    let a = f.session("executor");
    let e = f.engine.clone();
    let sid = a.clone();
    let waiting = tokio::spawn(async move {
        e.call(
            &sid,
            call(
                "fn_send_message",
                json!({"to_id": "writer", "content": "Over to you"}),
            ),
            Approval::Queue,
        )
        .await
    });
    for _ in 0..500 {
        if !f.engine.pending().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let pending = f.engine.pending();
    assert_eq!(pending.len(), 1);
    let inbox = f.author_inbox();
    assert_eq!(inbox.len(), 1, "{inbox:?}");
    let m = &inbox[0];
    assert_eq!(m.mail_kind(), mb::MailKind::Approval);
    assert_eq!((m.from_id.as_str(), m.kind.as_str()), ("system", "system"));
    assert_eq!(
        m.meta_str("approvalRequestId"),
        Some(pending[0].approval_id.as_str())
    );
    assert!(m.content.contains("fn_send_message"), "{}", m.content);
    assert!(m.content.contains(&format!("session {a}")), "{}", m.content);
    // Read again, still one mail for the one call; nothing was written while it waits.
    assert_eq!(f.author_inbox().len(), 1);
    f.engine
        .decide(&pending[0].approval_id, Decision::Approve)
        .unwrap();
    let r = waiting.await.unwrap();
    assert!(r.ok, "{}", r.content);
    // Decided, the call's approval mail leaves the Inbox (the History keeps the decision).
    let kinds: Vec<mb::MailKind> = f.author_inbox().iter().map(|m| m.mail_kind()).collect();
    assert!(kinds.is_empty(), "{kinds:?}");
}

fn scripts(map: &[(&str, Vec<Value>)]) -> ProviderSource {
    let providers: HashMap<String, Arc<dyn Provider>> = map
        .iter()
        .map(|(k, turns)| {
            let text = turns
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n");
            let p = ReplayProvider::parse(&text, k).expect("script");
            (k.to_string(), Arc::new(p) as Arc<dyn Provider>)
        })
        .collect();
    let providers = Mutex::new(providers);
    Arc::new(move |profile, _model| {
        providers
            .lock()
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_authors_reply_reaches_an_idle_session_as_its_next_message() {
    let f = fx();
    let chat = f.session("chat");
    let _host = Host::attach(
        f.engine.clone(),
        scripts(&[(
            "chat",
            vec![json!({"text": "Trimming the storm now.", "tool_calls": []})],
        )]),
        APPROVE,
    );
    let m = f
        .ok(
            &chat,
            "fn_send_message",
            json!({"type": "agent-to-user", "content": "Shall I trim the storm?"}),
        )
        .await;
    let parent = id_of(&m);
    assert_eq!(f.engine.session(&chat).unwrap().state, SessionState::Idle);
    let r = f
        .author(
            "fn_send_message",
            json!({"content": "Yes, by half.", "reply_to_message_id": parent}),
        )
        .await;
    assert!(r.ok, "{}", r.content);
    let reply = id_of(&r);
    assert_eq!(r.details.as_ref().unwrap()["wakeRecipient"], true);
    let mut done = false;
    for _ in 0..1000 {
        let msgs = user_messages(&f.engine, &chat);
        let assistant = f
            .engine
            .session_log(&chat)
            .unwrap()
            .lines
            .iter()
            .filter(|l| matches!(l.record, LogRecord::Assistant { .. }))
            .count();
        if msgs.len() == 1
            && assistant == 1
            && f.engine.session(&chat).unwrap().state == SessionState::Idle
        {
            done = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(done, "the reply did not start a turn");
    let msgs = user_messages(&f.engine, &chat);
    assert!(msgs[0].contains("from the author"), "{}", msgs[0]);
    assert!(msgs[0].contains("Yes, by half."), "{}", msgs[0]);
    assert!(
        msgs[0].contains(&format!("a reply to {parent}")),
        "{}",
        msgs[0]
    );
    assert!(f.mail(&reply).read, "handed over: read");
}
