//! The Board's agent list (`H`, `nbook::tui::board::heartbeats`) on a real temporary project
//! read through the pane's real jobs: each durable agent with its role, its heartbeat interval
//! and its last run from `nbook_agent_run` (or "never ran"); Enter asks the heartbeat
//! scheduler to wake the selected agent; an empty list says how agents come to be. Snapshots
//! at 80×24 and 120×40.

mod tui_story_support;

use std::sync::Arc;

use nbook::board::agent_runs::{self, WakeReason};
use nbook::board::agents::{self, AgentRole, Caller, ConfigPatch, NewAgent};
use nbook::board::Board;
use nbook::engine::Engine;
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::board::jobs;
use tui_story_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn board(b: &Book) -> Board {
    Board::new(&b.root, "book")
}

/// Run the board jobs `fx` asks for; every other effect is returned.
fn run(engine: &Arc<Engine>, app: &mut AppState, fx: Vec<Effect>) -> Vec<Effect> {
    let mut queue = fx;
    let mut other = Vec::new();
    while !queue.is_empty() {
        let next = match queue.remove(0) {
            Effect::BoardJob { ticket, job } => {
                let _in_runtime = rt().enter();
                let result = jobs::run(engine, job);
                app.update(Action::BoardJobDone { ticket, result })
            }
            e => {
                other.push(e);
                Vec::new()
            }
        };
        queue.extend(next);
    }
    other
}

fn keys(b: &Book, app: &mut AppState, k: &str) -> Vec<Effect> {
    let fx = press(app, k);
    run(&b.engine, app, fx)
}

fn app(b: &Book, w: u16, h: u16) -> AppState {
    let (mut app, _) = empty_app(w, h);
    let fx: Vec<Effect> = app
        .start()
        .into_iter()
        .filter(|f| matches!(f, Effect::BoardJob { .. }))
        .collect();
    run(&b.engine, &mut app, fx);
    keys(b, &mut app, "6");
    assert_eq!(app.focus, Pane::Board);
    app
}

fn agent(b: &Book, name: &str, role: AgentRole, config: ConfigPatch) -> String {
    let new = NewAgent {
        name: name.into(),
        role: Some(role),
        reports_to: None,
        config,
    };
    let out = board(b)
        .commit(|c: &rusqlite::Connection| {
            agents::create(c, &new, &Caller::author(), &|_| true, &[])
        })
        .unwrap();
    out.outcome.value["agentId"].as_str().unwrap().to_string()
}

/// Two agents: the continuity editor (every 30 minutes) with one finished run at a fixed
/// time, and a reviewer with no timer that never ran.
fn with_agents() -> Book {
    let b = empty_book();
    let editor = agent(
        &b,
        "Continuity editor",
        AgentRole::Custom,
        ConfigPatch {
            heartbeat_interval_ms: Some(30 * 60_000),
            ..ConfigPatch::default()
        },
    );
    agent(
        &b,
        "Second reader",
        AgentRole::Reviewer,
        ConfigPatch::default(),
    );
    // 2026-03-16 02:00 UTC.
    let at = 1_773_626_400_000;
    board(&b)
        .read(|c| {
            let id = agent_runs::start(c, &editor, WakeReason::Timer, None, "s-7", at)?;
            agent_runs::end(
                c,
                id,
                agent_runs::DONE,
                Some("Chapter 3 gives Magnus a gold watch; chapter 2 and the lorebook say silver. Mailed the author."),
                at + 90_000,
            )
        })
        .unwrap();
    b
}

#[test]
fn the_agent_list_shows_each_agents_last_run_and_enter_wakes_the_selected_one() {
    for (w, h) in SIZES {
        let b = with_agents();
        let mut a = app(&b, w, h);
        keys(&b, &mut a, "H");
        let s = screen(&mut a, w, h);
        assert!(s.contains("timer · done"), "{s}");
        assert!(s.contains("never ran"), "{s}");
        insta::assert_snapshot!(format!("board_agent_list_{w}x{h}"), s);
        let fx = keys(&b, &mut a, "j <Enter>");
        assert_eq!(
            fx,
            vec![Effect::HeartbeatWake {
                agent: "agent-002".into()
            }]
        );
        let s = screen(&mut a, w, h);
        assert!(s.contains("Waking agent-002"), "{s}");
        assert!(!s.contains("Agents · 2"), "the list closed: {s}");
    }
}

#[test]
fn an_empty_agent_list_says_how_agents_come_to_be_and_wakes_nobody() {
    let b = empty_book();
    let mut a = app(&b, 80, 24);
    keys(&b, &mut a, "H");
    let s = screen(&mut a, 80, 24);
    assert!(s.contains("No durable agents yet"), "{s}");
    let fx = keys(&b, &mut a, "<Enter>");
    assert!(fx.is_empty(), "{fx:?}");
    // Esc closes the list.
    keys(&b, &mut a, "H <Esc>");
    assert!(!screen(&mut a, 80, 24).contains("Agents · 0"));
}
