//! The Inbox view of the Board pane on a real temporary project, read through the pane's real
//! jobs and written as the author through the engine: `I` opens it (an honest empty state
//! without mail), the list newest first with unread marks, kind, sender and task, the unread
//! count in the pane title; Enter opens a report (its title and sections) and marks it read;
//! `r` opens the reply form, Enter sends the author's reply into the agent's thread; `a` on an
//! approval mail jumps to the Approvals pane. Snapshots at 80×24 and 120×40.

mod tui_story_support;

use nbook::board::mailbox::{self as mb, NewMessage};
use nbook::board::Outcome;
use nbook::engine::{Approval, Decision, Mode, ToolCall};
use nbook::tui::app::Pane;
use serde_json::json;
use tui_story_support::board_ui::{app, board, keys, paste};
use tui_story_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

const APPROVE: Approval = Approval::Auto {
    decision: Decision::Approve,
    by: "test",
};

/// A book with three mails to the author: a message, a report about NB-001 (newest but one)
/// and an approval notice (newest).
fn with_mail() -> Book {
    let b = empty_book();
    let e = b.engine.clone();
    let chat = e
        .create_session("chat", Mode::Normal, "chat", None)
        .unwrap()
        .id;
    let exec = e
        .create_session("executor", Mode::Normal, "executor", None)
        .unwrap()
        .id;
    e.set_session_state(
        &exec,
        vec![(nbook::tools::fusion::SESSION_TASK.into(), json!("NB-001"))],
    )
    .unwrap();
    let send = |sid: &str, args: serde_json::Value| {
        let r = rt().block_on(e.call(
            sid,
            ToolCall {
                id: String::new(),
                name: "fn_send_message".into(),
                arguments: args,
            },
            APPROVE,
        ));
        assert!(r.ok, "{}", r.content);
    };
    send(
        &chat,
        json!({"to_id": "dashboard", "content": "Shall I trim the storm in chapter 12? It runs four pages."}),
    );
    send(
        &exec,
        json!({"type": "agent-to-user", "content": "Chapter 12 is drafted and in Review.", "mail_kind": "report",
               "report": {"title": "Chapter 12 drafted", "sections": [
                   {"heading": "Done", "body": "4,100 words; the lamp scene pays off."},
                   {"heading": "Open", "body": "Flett's scar: left or right hand?"}]}}),
    );
    board(&b)
        .commit(|c: &rusqlite::Connection| {
            mb::send_once(
                c,
                &NewMessage {
                    from_id: "system".into(),
                    from_type: "system".into(),
                    to_id: "dashboard".into(),
                    to_type: "user".into(),
                    content: "executor (session 2, profile executor) waits for your approval to run fn_task_document_write on board/document/NB-001/notes: create TaskDocument NB-001/notes".into(),
                    kind: "system".into(),
                    metadata: json!({"mailKind": "approval", "approvalRequestId": "apr-1", "taskId": "NB-001"}),
                },
                "approval-mail:2/c-1",
            )?;
            Ok(Outcome::default())
        })
        .unwrap();
    b
}

#[test]
fn the_inbox_is_honest_when_empty() {
    for (w, h) in SIZES {
        let b = empty_book();
        let mut a = app(&b, w, h);
        keys(&b, &mut a, "I");
        let s = screen(&mut a, w, h);
        assert!(s.contains("No mail yet"), "{s}");
        insta::assert_snapshot!(format!("inbox_empty_{w}x{h}"), s);
        keys(&b, &mut a, "<Esc>");
        assert!(a.board.inbox.is_none(), "Esc goes back to the board");
    }
}

#[test]
fn the_list_opens_a_report_and_marks_it_read() {
    for (w, h) in SIZES {
        let b = with_mail();
        let mut a = app(&b, w, h);
        let s = screen(&mut a, w, h);
        assert!(s.contains("3 unread mail"), "the board's title counts: {s}");
        keys(&b, &mut a, "I");
        let s = screen(&mut a, w, h);
        assert!(s.contains("Inbox (3, 3 unread)"), "{s}");
        insta::assert_snapshot!(format!("inbox_list_{w}x{h}"), s);
        keys(&b, &mut a, "j <Enter>");
        let s = screen(&mut a, w, h);
        assert!(s.contains("Chapter 12 drafted"), "{s}");
        assert!(s.contains("Flett's scar"), "{s}");
        assert!(s.contains("Inbox (3, 2 unread)"), "{s}");
        insta::assert_snapshot!(format!("inbox_open_report_{w}x{h}"), s);
        let inbox = b.engine.read().inbox().unwrap();
        assert_eq!(inbox.unread, 2);
        assert!(inbox.mail[1].read, "the report is read");
    }
}

#[test]
fn r_replies_into_the_agents_thread() {
    for (w, h) in SIZES {
        let b = with_mail();
        let mut a = app(&b, w, h);
        keys(&b, &mut a, "I");
        keys(&b, &mut a, "j j r");
        paste(&b, &mut a, "Yes, trim it by half.");
        let s = screen(&mut a, w, h);
        assert!(s.contains("Reply to msg-000001"), "{s}");
        insta::assert_snapshot!(format!("inbox_reply_form_{w}x{h}"), s);
        keys(&b, &mut a, "<Enter>");
        assert!(a.overlay.is_none(), "the form closed");
        let reply = board(&b)
            .read(|c: &rusqlite::Connection| mb::load(c, "msg-000004"))
            .unwrap()
            .expect("the reply is stored");
        assert_eq!(reply.from_id, "dashboard");
        assert_eq!(reply.to_id, "session:1");
        assert_eq!(reply.reply_to(), Some("msg-000001"));
        assert_eq!(reply.content, "Yes, trim it by half.");
    }
}

#[test]
fn an_approval_mail_jumps_to_the_approvals_pane_and_takes_no_reply() {
    let b = with_mail();
    let mut a = app(&b, 80, 24);
    keys(&b, &mut a, "I");
    keys(&b, &mut a, "r");
    assert!(a.overlay.is_none(), "no reply form for an engine notice");
    keys(&b, &mut a, "a");
    assert_eq!(a.focus, Pane::Approvals);
}
