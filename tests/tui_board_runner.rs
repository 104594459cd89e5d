//! The Board pane's scheduler and steering (`crate::runner` in the TUI): snapshots of the
//! header line with the scheduler on (running 1/2, the session on its card) and stopped (with
//! why a task gets no session); `S` stopping and starting it; `s` steering the selected task
//! as the author (`fn_task_steer`, stored once), its empty/cancel/finished-task refusals; and
//! the new keys in help and the palette.

mod tui_story_support;

use std::sync::Arc;

use nbook::board::steering;
use nbook::board::tasks::{self as bt, NewTask};
use nbook::engine::Engine;
use nbook::runner::{RunnerStatus, SessionLine};
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::board::jobs;
use tui_story_support::board_ui::board;
use tui_story_support::*;

fn create(b: &Book, description: &str) {
    board(b)
        .commit(|c: &rusqlite::Connection| {
            bt::create(
                c,
                &NewTask {
                    description: description.into(),
                    ..NewTask::default()
                },
            )
        })
        .unwrap();
}

/// Two tasks: NB-001 in Drafting (an executor works on it), NB-002 in Planning.
fn two_tasks() -> Book {
    let b = empty_book();
    create(&b, "Draft chapter 12 from its brief");
    create(&b, "Audit act 2 for continuity");
    board(&b)
        .commit(|c: &rusqlite::Connection| bt::move_to(c, "NB-001", "drafting", None))
        .unwrap();
    b
}

/// Run effects as the runtime would (Board jobs; the scheduler toggle recorded) until none
/// are left.
fn run(engine: &Arc<Engine>, app: &mut AppState, fx: Vec<Effect>) -> Vec<bool> {
    let mut toggles = Vec::new();
    let mut queue = fx;
    while !queue.is_empty() {
        let next = match queue.remove(0) {
            Effect::BoardJob { ticket, job } => {
                let _in_runtime = rt().enter();
                let result = jobs::run(engine, job);
                app.update(Action::BoardJobDone { ticket, result })
            }
            Effect::BoardScheduler { on } => {
                toggles.push(on);
                Vec::new()
            }
            _ => Vec::new(),
        };
        queue.extend(next);
    }
    toggles
}

fn keys(b: &Book, app: &mut AppState, k: &str) -> Vec<bool> {
    let fx = press(app, k);
    run(&b.engine, app, fx)
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

fn on_with_one_session() -> RunnerStatus {
    RunnerStatus {
        enabled: true,
        running: 1,
        limit: 2,
        sessions: vec![SessionLine {
            task: "NB-001".into(),
            role: "executor".into(),
            session_id: "4".into(),
            waiting: false,
        }],
        problems: Vec::new(),
    }
}

fn stopped_with_a_problem() -> RunnerStatus {
    RunnerStatus {
        enabled: false,
        running: 1,
        limit: 2,
        sessions: vec![SessionLine {
            task: "NB-001".into(),
            role: "merger".into(),
            session_id: "7".into(),
            waiting: true,
        }],
        problems: vec![nbook::runner::TaskProblem {
            task: "NB-002".into(),
            message: "no triage session: no model is set for profile triage".into(),
        }],
    }
}

#[test]
fn the_header_shows_the_scheduler_and_the_card_its_session() {
    for (name, status) in [
        ("board_scheduler_on", on_with_one_session()),
        ("board_scheduler_stopped", stopped_with_a_problem()),
    ] {
        let b = two_tasks();
        for (w, h) in [(80, 24), (120, 40)] {
            let mut a = app(&b, w, h);
            a.update(Action::BoardScheduler(status.clone()));
            let s = screen(&mut a, w, h);
            insta::assert_snapshot!(format!("{name}_{w}x{h}"), s);
        }
    }
}

#[test]
fn without_a_scheduler_the_board_has_no_header_line() {
    let b = two_tasks();
    let mut a = app(&b, 120, 40);
    let s = screen(&mut a, 120, 40);
    assert!(!s.contains("Scheduler"), "{s}");
    a.update(Action::BoardScheduler(on_with_one_session()));
    let s = screen(&mut a, 120, 40);
    assert!(s.contains("Scheduler on · 1/2 running"), "{s}");
    assert!(s.contains("NB-001 ▶ executor #4 Draft"), "{s}");
}

#[test]
fn shift_s_stops_and_starts_the_scheduler() {
    let b = two_tasks();
    let mut a = app(&b, 80, 24);
    // No scheduler in this view: S says so and asks for nothing.
    assert!(keys(&b, &mut a, "S").is_empty());
    assert!(a.status.as_ref().unwrap().text.contains("No scheduler"));
    a.update(Action::BoardScheduler(on_with_one_session()));
    assert_eq!(keys(&b, &mut a, "S"), [false]);
    assert!(a
        .status
        .as_ref()
        .unwrap()
        .text
        .contains("Scheduler stopped"));
    let mut off = on_with_one_session();
    off.enabled = false;
    a.update(Action::BoardScheduler(off));
    assert_eq!(keys(&b, &mut a, "S"), [true]);
}

#[test]
fn s_steers_the_selected_task_as_the_author() {
    let b = two_tasks();
    let mut a = app(&b, 80, 24);
    assert_eq!(a.board.selected_task().unwrap().id, "NB-002");
    keys(&b, &mut a, "j");
    assert_eq!(a.board.selected_task().unwrap().id, "NB-001");
    keys(&b, &mut a, "s");
    assert!(a.overlay.is_some());
    let s = screen(&mut a, 80, 24);
    assert!(s.contains("Steer NB-001"), "{s}");
    // Empty text keeps the prompt open and stores nothing.
    keys(&b, &mut a, "<Enter>");
    assert!(a.overlay.is_some());
    typed(&b, &mut a, "Keep the storm for the last scene");
    keys(&b, &mut a, "<Enter>");
    assert!(a.overlay.is_none());
    let rows = board(&b)
        .read(|c: &rusqlite::Connection| steering::list(c, "NB-001"))
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].text, "Keep the storm for the last scene");
    assert_eq!(rows[0].delivered_at, None);
    let log = std::fs::read_to_string(b.root.join(".nbook/agent/sessions/author.jsonl")).unwrap();
    assert!(log.contains("fn_task_steer"), "{log}");

    // Esc cancels: nothing more is stored.
    keys(&b, &mut a, "s");
    typed(&b, &mut a, "never mind");
    keys(&b, &mut a, "<Esc>");
    assert!(a.overlay.is_none());
    let n = board(&b)
        .read(|c: &rusqlite::Connection| steering::list(c, "NB-001"))
        .unwrap()
        .len();
    assert_eq!(n, 1);
}

#[test]
fn a_finished_task_cannot_be_steered() {
    let b = two_tasks();
    board(&b)
        .commit(|c: &rusqlite::Connection| bt::move_to(c, "NB-002", "done", None))
        .unwrap();
    let mut a = app(&b, 80, 24);
    let done = a
        .board
        .rows
        .iter()
        .position(|r| {
            matches!(r, nbook::tui::board::BoardRow::Card(i)
                if a.board.data.as_ref().unwrap().tasks[*i].id == "NB-002")
        })
        .unwrap();
    a.board.selected = done;
    keys(&b, &mut a, "s");
    assert!(a.overlay.is_none());
    assert!(a.status.as_ref().unwrap().text.contains("finished"));
}

#[test]
fn help_and_the_palette_list_the_new_keys() {
    let b = two_tasks();
    let mut a = app(&b, 120, 40);
    let rows = a.keymap.help_rows(nbook::tui::keymap::Context::Board);
    let row = |k: &str| {
        rows.iter()
            .find(|(keys, _)| keys == k)
            .map(|(_, d)| d.clone())
    };
    assert!(row("s").unwrap().starts_with("Steer the task"), "{rows:?}");
    assert!(
        row("S").unwrap().starts_with("Stop the scheduler"),
        "{rows:?}"
    );
    // The palette's Board commands: steering needs a live task; the toggle needs a scheduler.
    let cmds = nbook::tui::board::commands::commands(&a);
    let find = |name: &str| {
        cmds.iter()
            .find(|c| c.cmd.name() == name)
            .map(|c| (c.label, c.available))
    };
    assert_eq!(find("board_steer"), Some(("steer", true)));
    assert_eq!(find("board_scheduler"), Some(("scheduler", false)));
    a.update(Action::BoardScheduler(on_with_one_session()));
    let cmds = nbook::tui::board::commands::commands(&a);
    let label = cmds
        .iter()
        .find(|c| c.cmd.name() == "board_scheduler")
        .map(|c| (c.label, c.available));
    assert_eq!(label, Some(("stop scheduler", true)));
    // In the help overlay too.
    keys(&b, &mut a, "?");
    let help = render(&mut a, 120, 40);
    assert!(help.contains("Steer the task"), "{help}");
}
