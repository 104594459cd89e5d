//! The author's goals from the Board pane and its wide layout, on a real temporary project
//! read through the pane's real jobs and written as the author through the engine: `o` the
//! goal form (title, then description; an empty title refused in the form), `O` the goal list
//! (Enter archives ⇄ unarchives), the sixth active goal refused by the engine with a clear
//! message and nothing changed; and the columns side by side at 160 columns, stacked at 80.
//! Snapshots at 80×24 and 120×40 (and 160×45 for the wide layout).

mod tui_story_support;

use nbook::board::goals;
use nbook::board::tasks::{self as bt, NewTask};
use tui_story_support::board_ui::{app, board, keys, paste};
use tui_story_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn all_goals(b: &Book) -> Vec<nbook::board::Goal> {
    board(b)
        .read(|c: &rusqlite::Connection| {
            let mut g = goals::active(c)?;
            g.extend(goals::archived(c)?);
            Ok(g)
        })
        .unwrap()
}

fn with_goals(n: usize) -> Book {
    let b = empty_book();
    let titles = [
        "First draft of act 2 by March",
        "Flett's arc closes in chapter 30",
        "Cut 20,000 words from act 1",
        "Every chapter has a writer brief",
        "Continuity audit of the watch",
    ];
    for t in titles.iter().take(n) {
        board(&b)
            .commit(|c: &rusqlite::Connection| goals::create(c, t, "Agreed with the editor."))
            .unwrap();
    }
    b
}

fn with_tasks() -> Book {
    let b = with_goals(2);
    for d in [
        "Draft chapter 12 from its brief",
        "Audit act 2 for continuity",
        "Revise the Flett chapters for the watch",
        "Draft chapter 13 from its brief",
    ] {
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
    let bd = board(&b);
    bd.commit(|c: &rusqlite::Connection| bt::move_to(c, "NB-002", "drafting", None))
        .unwrap();
    bd.commit(|c: &rusqlite::Connection| bt::move_to(c, "NB-003", "review", None))
        .unwrap();
    bd.commit(|c: &rusqlite::Connection| {
        nbook::board::assign::set_assignee(c, "NB-003", "writer", None)
    })
    .unwrap();
    b
}

#[test]
fn o_creates_a_goal_with_a_title_and_a_description() {
    for (w, h) in SIZES {
        let b = with_goals(1);
        let mut a = app(&b, w, h);
        keys(&b, &mut a, "o");
        paste(&b, &mut a, "Flett's arc closes in chapter 30");
        insta::assert_snapshot!(format!("board_goal_form_{w}x{h}"), screen(&mut a, w, h));
        keys(&b, &mut a, "<Enter>");
        paste(&b, &mut a, "The watch scene pays off the lamp.");
        keys(&b, &mut a, "<Enter>");
        assert!(a.overlay.is_none(), "the form closed");
        let g = all_goals(&b);
        assert_eq!(g.len(), 2);
        assert_eq!(g[1].title, "Flett's arc closes in chapter 30");
        assert_eq!(g[1].description, "The watch scene pays off the lamp.");
        assert_eq!(g[1].status, "active");
        insta::assert_snapshot!(format!("board_goal_created_{w}x{h}"), screen(&mut a, w, h));
    }
}

#[test]
fn an_empty_goal_title_is_refused_in_the_form_and_esc_creates_nothing() {
    let b = with_goals(0);
    let mut a = app(&b, 80, 24);
    keys(&b, &mut a, "o <Enter>");
    let s = screen(&mut a, 80, 24);
    assert!(s.contains("Type the goal's title"), "{s}");
    keys(&b, &mut a, "<Esc>");
    assert!(a.overlay.is_none());
    assert!(all_goals(&b).is_empty(), "nothing was created");
}

#[test]
fn a_sixth_active_goal_is_refused_with_a_clear_message() {
    for (w, h) in SIZES {
        let b = with_goals(5);
        let mut a = app(&b, w, h);
        keys(&b, &mut a, "o");
        paste(&b, &mut a, "A sixth goal");
        keys(&b, &mut a, "<C-s>");
        let s = screen(&mut a, w, h);
        insta::assert_snapshot!(format!("board_goal_limit_{w}x{h}"), s);
        let g = all_goals(&b);
        assert_eq!(g.len(), 5, "nothing was created");
        assert!(g.iter().all(|g| g.title != "A sixth goal"));
    }
}

#[test]
fn the_goal_list_archives_and_unarchives_within_the_limit() {
    for (w, h) in SIZES {
        let b = with_goals(5);
        let mut a = app(&b, w, h);
        keys(&b, &mut a, "O");
        insta::assert_snapshot!(format!("board_goal_list_{w}x{h}"), screen(&mut a, w, h));
        // Enter archives the first goal; the list keeps it, at the end, archived.
        keys(&b, &mut a, "<Enter>");
        let g = all_goals(&b);
        assert_eq!(g.iter().filter(|g| g.status == "active").count(), 4);
        assert_eq!(
            g.iter().find(|g| g.id == "G-001").unwrap().status,
            "archived"
        );
        insta::assert_snapshot!(
            format!("board_goal_list_archived_{w}x{h}"),
            screen(&mut a, w, h)
        );
        // With four active, a new goal fits; then unarchiving G-001 would be the sixth.
        keys(&b, &mut a, "<Esc> o");
        paste(&b, &mut a, "A fifth active goal");
        keys(&b, &mut a, "<C-s>");
        keys(&b, &mut a, "O j j j j j");
        keys(&b, &mut a, "<Enter>");
        let g = all_goals(&b);
        assert_eq!(g.iter().filter(|g| g.status == "active").count(), 5);
        assert_eq!(
            g.iter().find(|g| g.id == "G-001").unwrap().status,
            "archived",
            "unarchiving into a sixth active goal changed nothing"
        );
        let s = screen(&mut a, w, h);
        assert!(s.contains("Not unarchived: 5 goals are active"), "{s}");
        // Archive another (the selection follows it to the archived end), then G-001 comes
        // back.
        keys(&b, &mut a, "k");
        keys(&b, &mut a, "<Enter>");
        let g = all_goals(&b);
        assert_eq!(
            g.iter().find(|g| g.id == "G-006").unwrap().status,
            "archived"
        );
        keys(&b, &mut a, "k");
        keys(&b, &mut a, "<Enter>");
        let g = all_goals(&b);
        assert_eq!(
            g.iter().find(|g| g.id == "G-001").unwrap().status,
            "active",
            "{g:?}"
        );
        assert_eq!(g.iter().filter(|g| g.status == "active").count(), 5);
    }
}

#[test]
fn columns_sit_side_by_side_when_wide_and_stack_when_narrow() {
    let b = with_tasks();
    let mut wide = app(&b, 160, 45);
    keys(&b, &mut wide, "j");
    let s = screen(&mut wide, 160, 45);
    insta::assert_snapshot!("board_side_by_side_160x45", s);
    let header = s
        .lines()
        .find(|l| l.contains("Planning (2)"))
        .expect("a header line");
    for col in ["Drafting (1)", "Review (1)", "Done (0)", "Archived (0)"] {
        assert!(header.contains(col), "{col} on the same line: {header}");
    }
    let mut narrow = app(&b, 80, 24);
    keys(&b, &mut narrow, "j");
    let s = screen(&mut narrow, 80, 24);
    insta::assert_snapshot!("board_stacked_80x24", s);
    assert!(
        !s.lines()
            .any(|l| l.contains("Planning (") && l.contains("Drafting (")),
        "stacked: one column per line"
    );
    // Opening a task replaces the columns with the task.
    keys(&b, &mut wide, "<Enter>");
    let s = screen(&mut wide, 160, 45);
    assert!(s.contains("PROMPT.md"), "{s}");
}
