//! The Sessions pane's new-session form offers the durable agents after the profiles (read
//! from a real project through the form's real loader), choosing one asks for a session as
//! that agent, the engine starts it (its role's profile, `board.agent` set) and the list
//! shows "as agent-<n>". Snapshots of the form (agents read, and none yet) and the list.

mod tui_story_support;

use std::sync::Arc;

use nbook::engine::{Engine, Mode};
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::Pane;
use nbook::tui::input::Overlay;
use nbook::tui::widgets::forms::agent_choices;
use serde_json::json;
use tui_story_support::*;

fn agent(e: &Arc<Engine>, name: &str) -> String {
    let r = rt().block_on(e.author_call(
        "fn_agent_create",
        json!({"name": name, "role": "custom", "message_response_mode": "on-heartbeat"}),
        None,
    ));
    assert!(r.ok, "{}", r.content);
    r.details.unwrap()["agentId"].as_str().unwrap().to_string()
}

#[test]
fn the_new_session_form_starts_a_session_as_a_durable_agent() {
    let (w, h) = (100, 30);
    let b = empty_book();
    let owl = agent(&b.engine, "Owl");
    let (mut app, _) = empty_app(w, h);
    press(&mut app, "4");
    assert_eq!(app.focus, Pane::Sessions);
    let fx = press(&mut app, "n");
    assert_eq!(fx, [Effect::LoadDurableAgents], "the form reads the agents");
    let s = screen(&mut app, w, h);
    assert!(s.contains("reading the durable agents"), "{s}");
    app.update(Action::DurableAgentsLoaded(agent_choices(&b.engine)));
    let s = screen(&mut app, w, h);
    assert!(s.contains("Profile or durable agent"), "{s}");
    assert!(
        s.contains(&format!(
            "{owl} · Owl — durable custom agent, runs as profile heartbeat"
        )),
        "{s}"
    );
    // Type-ahead reaches the agent as it does a profile.
    press(&mut app, "a g");
    let s = screen(&mut app, w, h);
    insta::assert_snapshot!("new_session_with_agents_100x30", s);
    let fx = press(&mut app, "<Enter>");
    assert_eq!(
        fx,
        [Effect::CreateSession {
            profile: "heartbeat".into(),
            agent: Some(owl.clone()),
            model: None,
            title: format!("Owl ({owl})"),
            mode: Mode::Normal,
        }]
    );
    // What the runtime does with it.
    let info = b
        .engine
        .create_agent_session(&owl, Mode::Normal, &format!("Owl ({owl})"))
        .unwrap();
    assert_eq!(info.agent.as_deref(), Some(owl.as_str()));
    app.update(Action::SessionCreated(Ok(info)));
    assert!(app.overlay.is_none());
    let s = screen(&mut app, w, h);
    assert!(s.contains(&format!("heartbeat as {owl}")), "{s}");
    assert!(s.contains("Session 1 (heartbeat, as agent-0"), "{s}");
    insta::assert_snapshot!("session_list_as_agent_100x30", s);
}

#[test]
fn without_durable_agents_the_form_says_so_and_a_failed_read_is_shown() {
    let (w, h) = (100, 30);
    let b = empty_book();
    let (mut app, _) = empty_app(w, h);
    press(&mut app, "4 n");
    app.update(Action::DurableAgentsLoaded(agent_choices(&b.engine)));
    let s = screen(&mut app, w, h);
    assert!(s.contains("no durable agents yet"), "{s}");
    insta::assert_snapshot!("new_session_no_agents_100x30", s);
    app.update(Action::DurableAgentsLoaded(
        Err("database is locked".into()),
    ));
    let s = screen(&mut app, w, h);
    assert!(
        s.contains("the durable agents could not be read: database is locked"),
        "{s}"
    );
    // The profiles still work.
    let fx = press(&mut app, "<Enter>");
    assert!(matches!(
        fx.as_slice(),
        [Effect::CreateSession { agent: None, profile, .. }] if profile == "leader.default"
    ));
    assert!(matches!(app.overlay, Some(Overlay::NewSession(_))));
}
