//! The Board's plan approval (`requirePlanApproval`, `crate::board::plan_approval`): a card
//! whose plan waits for the author shows `plan?`, its detail says which keys decide and the
//! hint row offers them (snapshots); `a` approves the plan as the author
//! (`fn_task_approve_plan`), `d` asks for a reason and sends the plan back
//! (`fn_task_reject_plan`); an empty reason keeps the prompt open, Esc sends nothing, and on a
//! card that does not wait neither key writes anything.

mod tui_story_support;

use std::sync::Arc;

use nbook::board::tasks::{self as bt, NewTask};
use nbook::board::{plan_approval, Board};
use nbook::engine::Engine;
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::board::jobs;
use tui_story_support::*;

fn board(b: &Book) -> Board {
    Board::new(&b.root, "book")
}

const PLAN: &str = "# Task: NB-001 — The pier scene\n\n## Mission\nWrite the pier scene.\n\n## Steps\n### Step 0: Preflight\n### Step 1: Draft the scene\n\n## File Scope\n- manuscript/020-scene.md\n\n## Acceptance Criteria\n- The scene ends at the pier.\n";

/// NB-001 planned and waiting for the author's approval; NB-002 in Planning without a plan.
fn waiting_book() -> Book {
    let b = empty_book();
    for d in ["The pier scene", "The lighthouse scene"] {
        board(&b)
            .commit(|c: &rusqlite::Connection| {
                bt::create(
                    c,
                    &NewTask {
                        description: d.into(),
                        ..NewTask::default()
                    },
                )
            })
            .unwrap();
    }
    board(&b)
        .commit(|c: &rusqlite::Connection| bt::write_prompt(c, "NB-001", PLAN, Some("triage")))
        .unwrap();
    board(&b)
        .commit(|c: &rusqlite::Connection| {
            bt::set_stage(
                c,
                "NB-001",
                &bt::Stage {
                    from: "planning",
                    column: "planning",
                    status: plan_approval::AWAITING,
                    why: "The plan waits for the author's approval (requirePlanApproval)",
                    outcome: Some("plan-approval"),
                    actor: "runner",
                },
            )
        })
        .unwrap();
    b
}

fn run(engine: &Arc<Engine>, app: &mut AppState, fx: Vec<Effect>) {
    let mut queue = fx;
    while !queue.is_empty() {
        let next = match queue.remove(0) {
            Effect::BoardJob { ticket, job } => {
                let _in_runtime = rt().enter();
                let result = jobs::run(engine, job);
                app.update(Action::BoardJobDone { ticket, result })
            }
            _ => Vec::new(),
        };
        queue.extend(next);
    }
}

fn keys(b: &Book, app: &mut AppState, k: &str) {
    let fx = press(app, k);
    run(&b.engine, app, fx);
}

fn typed(b: &Book, app: &mut AppState, text: &str) {
    for c in text.chars() {
        let k = if c == ' ' {
            "<Space>".to_string()
        } else {
            c.to_string()
        };
        keys(b, app, &k);
    }
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

fn select(a: &mut AppState, id: &str) {
    let row = a
        .board
        .rows
        .iter()
        .position(|r| {
            matches!(r, nbook::tui::board::BoardRow::Card(i)
                if a.board.data.as_ref().unwrap().tasks[*i].id == id)
        })
        .unwrap();
    a.board.selected = row;
}

/// The screen with the log's minutes (`2026-12-04 01:36`) as `YYYY-MM-DD hh:mm`.
fn undated(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let shape = "dddd-dd-dd dd:dd";
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let fits = i + shape.len() <= chars.len()
            && shape.chars().zip(&chars[i..]).all(|(p, c)| {
                if p == 'd' {
                    c.is_ascii_digit()
                } else {
                    p == *c
                }
            });
        if fits {
            out.push_str("YYYY-MM-DD hh:mm");
            i += shape.len();
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

fn status(b: &Book, id: &str) -> String {
    board(b)
        .read(|c: &rusqlite::Connection| bt::require(c, id))
        .unwrap()
        .status
}

#[test]
fn a_plan_waiting_for_the_author_shows_plan_and_its_keys() {
    let b = waiting_book();
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = app(&b, w, h);
        select(&mut a, "NB-001");
        keys(&b, &mut a, "<Enter>");
        let s = undated(&screen(&mut a, w, h));
        assert!(s.contains("plan?"), "{s}");
        insta::assert_snapshot!(format!("board_plan_waiting_{w}x{h}"), s);
    }
}

#[test]
fn a_approves_the_plan_as_the_author() {
    let b = waiting_book();
    let mut a = app(&b, 80, 24);
    // On a card that does not wait, a writes nothing.
    select(&mut a, "NB-002");
    keys(&b, &mut a, "a");
    assert!(a
        .status
        .as_ref()
        .unwrap()
        .text
        .contains("does not wait for your approval"));
    assert_eq!(status(&b, "NB-002"), "");
    select(&mut a, "NB-001");
    keys(&b, &mut a, "a");
    assert_eq!(status(&b, "NB-001"), plan_approval::APPROVED);
    let log = std::fs::read_to_string(b.root.join(".nbook/agent/sessions/author.jsonl")).unwrap();
    assert!(log.contains("fn_task_approve_plan"), "{log}");
    // Approved, it no longer waits: a second a says so and changes nothing.
    keys(&b, &mut a, "a");
    assert_eq!(status(&b, "NB-001"), plan_approval::APPROVED);
}

#[test]
fn d_sends_the_plan_back_with_a_reason() {
    let b = waiting_book();
    let mut a = app(&b, 80, 24);
    select(&mut a, "NB-002");
    keys(&b, &mut a, "d");
    assert!(a.overlay.is_none(), "no plan waits on NB-002");
    select(&mut a, "NB-001");
    keys(&b, &mut a, "d");
    assert!(a.overlay.is_some());
    let s = screen(&mut a, 80, 24);
    assert!(s.contains("Send back the plan of NB-001"), "{s}");
    // Empty: the prompt stays and nothing changes.
    keys(&b, &mut a, "<Enter>");
    assert!(a.overlay.is_some());
    assert_eq!(status(&b, "NB-001"), plan_approval::AWAITING);
    // Esc: nothing sent.
    typed(&b, &mut a, "never mind");
    keys(&b, &mut a, "<Esc>");
    assert!(a.overlay.is_none());
    assert_eq!(status(&b, "NB-001"), plan_approval::AWAITING);
    keys(&b, &mut a, "d");
    typed(&b, &mut a, "Split the scene in two");
    keys(&b, &mut a, "<Enter>");
    assert!(a.overlay.is_none());
    assert_eq!(status(&b, "NB-001"), "needs-replan");
    let entries = board(&b)
        .read(|c: &rusqlite::Connection| bt::logs_with_outcome(c, "NB-001", &["plan-rejected"]))
        .unwrap();
    assert_eq!(entries.len(), 1);
    assert!(entries[0].action.contains("Split the scene in two"));
}

#[test]
fn help_lists_the_plan_keys() {
    let b = waiting_book();
    let a = app(&b, 120, 40);
    let rows = a.keymap.help_rows(nbook::tui::keymap::Context::Board);
    let row = |k: &str| {
        rows.iter()
            .find(|(keys, _)| keys == k)
            .map(|(_, d)| d.clone())
    };
    assert!(
        row("a").unwrap().starts_with("Approve the task's plan"),
        "{rows:?}"
    );
    assert!(
        row("d").unwrap().starts_with("Send the task's plan back"),
        "{rows:?}"
    );
}
