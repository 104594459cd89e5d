//! The author's chat rooms from the Inbox, on a real SQLite project with the real engine:
//!
//! - engine level: `fn_room_create` stores the room with the chosen members; an empty or
//!   taken name and an unknown member are refused and store nothing; an agent cannot make a
//!   room, and its refusal says where the author makes one (the Inbox, `N`).
//! - state level (the Board pane's real jobs): `N` opens the new-room form; a name with
//!   spaces is typed (Space types on the name), Tab goes to the members and Space picks them;
//!   Enter creates the room as the author, the form closes, the Inbox lists the room and `p`
//!   offers it; the form's refusals (no name, a taken name, a member deleted meanwhile) keep
//!   it open and create nothing; `A` adds members to a room. Snapshots of the forms, their
//!   error states and the Inbox with a room.

mod tui_story_support;

use std::sync::Arc;

use nbook::engine::{Approval, CallResult, Decision, Engine, Mode, ToolCall};
use nbook::tui::app::AppState;
use nbook::tui::board::overlay::BoardOverlay;
use nbook::tui::board::rooms::RoomForm;
use nbook::tui::input::Overlay;
use serde_json::{json, Value};
use tui_story_support::board_ui::{app, keys, paste};
use tui_story_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn author(e: &Arc<Engine>, tool: &str, args: Value) -> CallResult {
    rt().block_on(e.author_call(tool, args, None))
}

/// The author creates a custom durable agent.
fn agent(e: &Arc<Engine>, name: &str) -> String {
    let r = author(
        e,
        "fn_agent_create",
        json!({"name": name, "role": "custom", "message_response_mode": "immediate",
               "soul": format!("You are {name}.")}),
    );
    assert!(r.ok, "{}", r.content);
    r.details.unwrap()["agentId"].as_str().unwrap().to_string()
}

/// (rooms, memberships)
fn counts(b: &Book) -> (i64, i64) {
    (
        b.count("SELECT count(*) FROM nbook_board_room"),
        b.count("SELECT count(*) FROM nbook_board_room_member"),
    )
}

/// The members of `room`, sorted and joined by a space.
fn members(b: &Book, room: &str) -> String {
    b.text(&format!(
        "SELECT coalesce(group_concat(agent_id, ' '), '') FROM \
         (SELECT agent_id FROM nbook_board_room_member WHERE room_id = '{room}' ORDER BY agent_id)"
    ))
}

fn code(r: &CallResult) -> String {
    r.details
        .as_ref()
        .and_then(|d| d.get("code"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

// ---- engine level ----

#[test]
fn a_room_the_author_makes_has_the_chosen_members() {
    let b = empty_book();
    let e = b.engine.clone();
    let owl = agent(&e, "Owl");
    let r = author(
        &e,
        "fn_room_create",
        json!({"name": "Continuity desk", "members": [owl, "leader.default"]}),
    );
    assert!(r.ok, "{}", r.content);
    assert_eq!(counts(&b), (1, 2));
    assert_eq!(
        b.text("SELECT id || ' ' || name FROM nbook_board_room"),
        "room-001 Continuity desk"
    );
    assert_eq!(
        members(&b, "room-001"),
        format!("{owl} leader.default")
            .split(' ')
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join(" ")
    );
}

#[test]
fn a_refused_room_stores_nothing() {
    let b = empty_book();
    let e = b.engine.clone();
    let owl = agent(&e, "Owl");
    for (args, want) in [
        (json!({"name": "   "}), "INVALID_ARGUMENT"),
        (
            json!({"name": "Desk", "members": ["agent-999"]}),
            "RECIPIENT_NOT_FOUND",
        ),
    ] {
        let r = author(&e, "fn_room_create", args.clone());
        assert!(!r.ok, "{args} is refused");
        assert_eq!(code(&r), want, "{args}: {}", r.content);
        assert_eq!(counts(&b), (0, 0), "{args} stored nothing");
    }
    let r = author(
        &e,
        "fn_room_create",
        json!({"name": "Desk", "members": [owl]}),
    );
    assert!(r.ok, "{}", r.content);
    let r = author(&e, "fn_room_create", json!({"name": "Desk"}));
    assert_eq!(code(&r), "INVALID_ARGUMENT", "a taken name: {}", r.content);
    assert_eq!(counts(&b), (1, 1), "the taken name made no second room");
}

#[test]
fn an_agent_cannot_make_a_room_and_is_told_where_the_author_does() {
    let b = empty_book();
    let e = b.engine.clone();
    let s = e
        .create_session("leader.default", Mode::Normal, "leader", None)
        .unwrap();
    let call = ToolCall {
        id: String::new(),
        name: "fn_room_create".into(),
        arguments: json!({"name": "Mine"}),
    };
    let approve = Approval::Auto {
        decision: Decision::Approve,
        by: "test",
    };
    let r = rt().block_on(e.call(&s.id, call, approve));
    assert!(!r.ok, "an agent's room is refused");
    assert!(
        r.content.contains("in the Inbox") && r.content.contains("N a new room"),
        "the refusal says where the author makes rooms: {}",
        r.content
    );
    assert_eq!(counts(&b), (0, 0));
}

// ---- state level: the room forms ----

fn inbox_app(b: &Book, w: u16, h: u16) -> AppState {
    let mut app = app(b, w, h);
    keys(b, &mut app, "I");
    assert!(app.board.inbox.is_some());
    app
}

fn form(app: &AppState) -> &RoomForm {
    match &app.overlay {
        Some(Overlay::Board(o)) => match o.as_ref() {
            BoardOverlay::Room(f) => f,
            _ => panic!("another overlay"),
        },
        _ => panic!("the room form is not open"),
    }
}

/// Type `text` key by key (a space is the Space key).
fn type_keys(b: &Book, app: &mut AppState, text: &str) {
    let seq: Vec<String> = text
        .chars()
        .map(|c| {
            if c == ' ' {
                "<Space>".to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    keys(b, app, &seq.join(" "));
}

#[test]
fn n_makes_a_room_with_the_chosen_members_and_p_offers_it() {
    for (w, h) in SIZES {
        let b = empty_book();
        let e = b.engine.clone();
        let owl = agent(&e, "Owl");
        let wren = agent(&e, "Wren");
        let mut a = inbox_app(&b, w, h);
        keys(&b, &mut a, "N");
        type_keys(&b, &mut a, "Continuity desk");
        assert_eq!(
            nbook::tui::input::text_of(&form(&a).name),
            "Continuity desk",
            "Space types a space in the name"
        );
        assert!(form(&a).picked.is_empty(), "typing picked nobody");
        // Owl, then (↓) Wren: Space picks each.
        keys(&b, &mut a, "<Tab> <Space> <Down> <Space>");
        let s = screen(&mut a, w, h);
        assert!(s.contains("New chat room"), "{s}");
        assert!(s.contains("2 picked"), "{s}");
        insta::assert_snapshot!(format!("inbox_room_new_form_{w}x{h}"), s);
        keys(&b, &mut a, "<Enter>");
        assert!(a.overlay.is_none(), "created: the form closed");
        assert_eq!(counts(&b), (1, 2));
        let mut want = [owl.clone(), wren.clone()];
        want.sort();
        assert_eq!(members(&b, "room-001"), want.join(" "));
        let s = screen(&mut a, w, h);
        assert!(
            s.contains("# Continuity desk ("),
            "the Inbox lists the room: {s}"
        );
        insta::assert_snapshot!(format!("inbox_with_room_{w}x{h}"), s);
        // The room-post form offers it, and the post shows under the mail.
        keys(&b, &mut a, "p");
        let s = screen(&mut a, w, h);
        assert!(
            s.contains("Post in a room") && s.contains("Continuity desk"),
            "{s}"
        );
        paste(&b, &mut a, "Chapter 12 is in review.");
        keys(&b, &mut a, "<Enter>");
        assert!(a.overlay.is_none());
        // (The room line is cut to the list's width on a narrow screen.)
        let lines = nbook::tui::board::inbox::room_lines(a.board.inbox.as_ref().unwrap());
        assert_eq!(
            lines,
            [format!(
                "# Continuity desk ({}) · you: Chapter 12 is in review.",
                want.join(", ")
            )]
        );
    }
}

#[test]
fn the_new_room_form_shows_refusals_and_creates_nothing() {
    let (w, h) = (80, 24);
    let b = empty_book();
    let e = b.engine.clone();
    let owl = agent(&e, "Owl");
    let mut a = inbox_app(&b, w, h);
    keys(&b, &mut a, "N");
    keys(&b, &mut a, "<Enter>");
    let err = form(&a).error.clone().expect("no name is refused");
    assert!(err.contains("Type the room's name first"), "{err}");
    insta::assert_snapshot!("inbox_room_new_empty_80x24", screen(&mut a, w, h));
    assert_eq!(counts(&b), (0, 0));
    type_keys(&b, &mut a, "Desk");
    assert_eq!(form(&a).error, None, "typing clears the error");
    // A taken name: the engine's refusal shows in the form, which stays open.
    let r = author(&e, "fn_room_create", json!({"name": "Desk"}));
    assert!(r.ok, "{}", r.content);
    keys(&b, &mut a, "<Enter>");
    let err = form(&a).error.clone().expect("a taken name is refused");
    assert!(err.starts_with("Not created:"), "{err}");
    assert!(err.contains("room-001"), "it names the room: {err}");
    assert!(!form(&a).sending);
    insta::assert_snapshot!("inbox_room_new_taken_80x24", screen(&mut a, w, h));
    assert_eq!(counts(&b), (1, 0), "no second room");
    // A member deleted while the form is open: RECIPIENT_NOT_FOUND in the form.
    keys(&b, &mut a, "<Esc>");
    assert!(a.overlay.is_none());
    keys(&b, &mut a, "N");
    type_keys(&b, &mut a, "Owl's desk");
    keys(&b, &mut a, "<Tab> <Space>");
    assert!(form(&a).picked.contains(&owl));
    let r = author(&e, "fn_agent_delete", json!({"agent_id": owl}));
    assert!(r.ok, "{}", r.content);
    keys(&b, &mut a, "<Enter>");
    let err = form(&a).error.clone().expect("the engine refused it");
    assert!(
        err.starts_with("Not created:") && err.contains(&owl),
        "{err}"
    );
    insta::assert_snapshot!("inbox_room_new_unknown_member_80x24", screen(&mut a, w, h));
    assert_eq!(counts(&b), (1, 0), "nothing was created");
    keys(&b, &mut a, "<Esc>");
    assert!(a.overlay.is_none());
}

#[test]
fn a_adds_members_to_a_room() {
    let (w, h) = (80, 24);
    let b = empty_book();
    let e = b.engine.clone();
    let mut a = inbox_app(&b, w, h);
    keys(&b, &mut a, "A");
    assert!(a.overlay.is_none(), "no room yet: no form");
    let owl = agent(&e, "Owl");
    let wren = agent(&e, "Wren");
    let r = author(
        &e,
        "fn_room_create",
        json!({"name": "Continuity desk", "members": [owl]}),
    );
    assert!(r.ok, "{}", r.content);
    // The Inbox reads the rooms when it opens.
    keys(&b, &mut a, "<Esc> I");
    keys(&b, &mut a, "A");
    assert!(form(&a).adding);
    keys(&b, &mut a, "<Enter>");
    let err = form(&a).error.clone().expect("nobody picked");
    assert!(err.contains("Pick the members to add first"), "{err}");
    // Owl is in it already: Space says so and picks nothing.
    keys(&b, &mut a, "<Tab> <Space>");
    assert!(form(&a).picked.is_empty());
    assert!(form(&a)
        .error
        .as_deref()
        .is_some_and(|e| e.contains("already a member")));
    keys(&b, &mut a, "<Down> <Space>");
    assert!(form(&a).picked.contains(&wren));
    let s = screen(&mut a, w, h);
    assert!(s.contains("Add members to a room"), "{s}");
    insta::assert_snapshot!("inbox_room_add_form_80x24", s);
    keys(&b, &mut a, "<Enter>");
    assert!(a.overlay.is_none(), "added: the form closed");
    let mut want = [owl, wren];
    want.sort();
    assert_eq!(members(&b, "room-001"), want.join(" "));
    assert_eq!(counts(&b), (1, 2));
}
