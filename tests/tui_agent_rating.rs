//! The author's rating of an agent's run, on a real temporary project read and written through
//! the engine (the pane's real jobs; the rating is the author's `fn_agent_rate`): `R` on the
//! selected session in the Sessions pane and on the selected task in the Board (its last role
//! session) opens the form; a score outside 1–5 or not a number is refused in the form and
//! nothing is saved; a valid one is stored against the session's agent with the run and task.
//! Snapshots of the form (80×24, 120×40), its refusal, and the hint lines that offer `R`.

mod tui_story_support;

use nbook::board::tasks::{self as bt, NewTask};
use nbook::board::Board;
use nbook::tui::action::Effect;
use nbook::tui::app::{AppState, Pane};
use tui_story_support::board_ui::{keys, paste, run};
use tui_story_support::tui_support::empty_app_with;
use tui_story_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

/// A book with task NB-001 and an executor session that worked on it.
fn book_with_run() -> (Book, String) {
    let b = empty_book();
    Board::new(&b.root, "book")
        .commit(|c: &rusqlite::Connection| {
            bt::create(
                c,
                &NewTask {
                    description: "Draft chapter 12 from its brief".into(),
                    ..NewTask::default()
                },
            )
        })
        .unwrap();
    let s = b
        .engine
        .create_task_session(None, "executor", "NB-001", "Draft chapter 12")
        .unwrap();
    (b, s.id)
}

fn app(b: &Book, w: u16, h: u16, pane: &str) -> AppState {
    let (mut app, _) = empty_app_with(w, h, b.engine.sessions(), Vec::new());
    let fx: Vec<Effect> = app
        .start()
        .into_iter()
        .filter(|f| matches!(f, Effect::BoardJob { .. }))
        .collect();
    run(&b.engine, &mut app, fx);
    keys(b, &mut app, pane);
    app
}

/// (agent, score, comment, run, task) of each stored rating, oldest first.
type Row = (String, i64, Option<String>, Option<String>, Option<String>);

fn ratings(b: &Book) -> Vec<Row> {
    let c = b.conn();
    let mut st = c
        .prepare(
            "SELECT agent_id, score, comment, run_id, task_id FROM nbook_agent_rating ORDER BY id",
        )
        .unwrap();
    st.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

#[test]
fn r_in_sessions_rates_the_selected_run() {
    for (w, h) in SIZES {
        let (b, sid) = book_with_run();
        let mut a = app(&b, w, h, "4");
        assert_eq!(a.focus, Pane::Sessions);
        keys(&b, &mut a, "R");
        insta::assert_snapshot!(format!("rate_form_{w}x{h}"), screen(&mut a, w, h));
        paste(&b, &mut a, "4");
        keys(&b, &mut a, "<Enter>");
        paste(&b, &mut a, "The storm lands; the dialogue drags.");
        insta::assert_snapshot!(format!("rate_form_comment_{w}x{h}"), screen(&mut a, w, h));
        keys(&b, &mut a, "<Enter>");
        assert!(a.overlay.is_none(), "the form closed");
        assert_eq!(
            ratings(&b),
            vec![(
                "executor".into(),
                4,
                Some("The storm lands; the dialogue drags.".into()),
                Some(sid.clone()),
                Some("NB-001".into())
            )]
        );
        let s = screen(&mut a, w, h);
        assert!(s.contains("Rated execut"), "{s}");
    }
}

#[test]
fn a_score_outside_one_to_five_is_refused_in_the_form_and_nothing_is_saved() {
    for (w, h) in SIZES {
        let (b, _) = book_with_run();
        let mut a = app(&b, w, h, "4");
        keys(&b, &mut a, "R");
        paste(&b, &mut a, "7");
        keys(&b, &mut a, "<Enter>");
        insta::assert_snapshot!(format!("rate_form_refused_{w}x{h}"), screen(&mut a, w, h));
        assert!(ratings(&b).is_empty(), "nothing was saved");
        // Not a number, zero, a fraction, empty: each refused, even with Ctrl+S.
        for bad in ["four", "0", "2.5", ""] {
            keys(
                &b,
                &mut a,
                "<Backspace> <Backspace> <Backspace> <Backspace>",
            );
            paste(&b, &mut a, bad);
            keys(&b, &mut a, "<C-s>");
            let s = screen(&mut a, w, h);
            assert!(
                s.contains("type a whole number") || s.contains("Type a score"),
                "{bad}: {s}"
            );
            assert!(a.overlay.is_some(), "{bad}: the form stays open");
        }
        keys(&b, &mut a, "<Esc>");
        assert!(a.overlay.is_none());
        assert!(ratings(&b).is_empty(), "nothing was saved");
    }
}

#[test]
fn r_on_a_board_task_rates_its_last_role_session() {
    for (w, h) in SIZES {
        let (b, _) = book_with_run();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let last = b
            .engine
            .create_task_session(None, "reviewer", "NB-001", "Review chapter 12")
            .unwrap()
            .id;
        let mut a = app(&b, w, h, "6");
        assert_eq!(a.focus, Pane::Board);
        keys(&b, &mut a, "R");
        insta::assert_snapshot!(format!("board_rate_form_{w}x{h}"), screen(&mut a, w, h));
        paste(&b, &mut a, "5");
        keys(&b, &mut a, "<C-s>");
        assert!(a.overlay.is_none(), "the form closed");
        assert_eq!(
            ratings(&b),
            vec![(
                "reviewer".into(),
                5,
                None,
                Some(last.clone()),
                Some("NB-001".into())
            )]
        );
    }
}

#[test]
fn a_task_nobody_worked_on_is_refused_by_the_engine_in_the_form() {
    let b = empty_book();
    Board::new(&b.root, "book")
        .commit(|c: &rusqlite::Connection| {
            bt::create(
                c,
                &NewTask {
                    description: "Audit act 2".into(),
                    ..NewTask::default()
                },
            )
        })
        .unwrap();
    let mut a = app(&b, 80, 24, "6");
    keys(&b, &mut a, "R");
    paste(&b, &mut a, "3");
    keys(&b, &mut a, "<C-s>");
    let s = screen(&mut a, 80, 24);
    assert!(s.contains("Not rated: no run to rate"), "{s}");
    assert!(a.overlay.is_some());
    assert!(ratings(&b).is_empty());
}

#[test]
fn the_hint_lines_offer_r() {
    let (b, _) = book_with_run();
    let mut a = app(&b, 160, 40, "4");
    let s = screen(&mut a, 160, 40);
    let hint = s
        .lines()
        .find(|l| l.contains("n new session"))
        .expect("the Sessions hint line")
        .to_string();
    assert!(hint.contains("R rate"), "{hint}");
    insta::assert_snapshot!("sessions_hint_with_rate_160x40", hint);
    // The Board lists it in help with its key.
    keys(&b, &mut a, "6 ?");
    let s = screen(&mut a, 160, 40);
    assert!(s.contains("Rate the task's last run"), "{s}");
    insta::assert_snapshot!("board_help_with_rate_160x40", s);
}
