//! The World pane's `/`: a fuzzy finder over the listed subjects' names (nucleo, as Files'
//! `/`), Enter selects the subject and asks for its state; Esc leaves the selection alone.

mod tui_world_support;

use nbook::tui::action::Action;
use nbook::tui::input::Overlay;
use nbook::tui::world::overlay::WorldOverlay;
use tui_world_support::*;

fn selected(app: &nbook::tui::app::AppState) -> String {
    app.world.selected_subject().expect("a subject").id.clone()
}

fn finding(app: &nbook::tui::app::AppState) -> bool {
    matches!(&app.overlay, Some(Overlay::World(o)) if matches!(o.as_ref(), WorldOverlay::Find { .. }))
}

#[test]
fn slash_finds_a_subject_by_name_and_enter_selects_it() {
    let b = book();
    let mut app = b.app(120, 40);
    assert_eq!(selected(&app), "c-ada");
    b.keys(&mut app, "/");
    assert!(finding(&app), "{:?}", app.overlay);
    b.keys(&mut app, "w e a t h");
    let s = screen(&mut app, 120, 40);
    assert!(s.contains("The weather book"), "{s}");
    assert!(
        !s.contains("Thomas Marwick  "),
        "only matches are listed:\n{s}"
    );
    insta::assert_snapshot!("world_find_120x40", s);
    b.keys(&mut app, "<Enter>");
    assert!(app.overlay.is_none());
    assert_eq!(selected(&app), "i-book");
    // Its state at the cursor is what the detail now shows (asked of a job, run here).
    let st = app.world.state.as_ref().expect("a state");
    assert_eq!(st.key.0, "i-book");
}

#[test]
fn the_finder_moves_between_matches_and_esc_changes_nothing() {
    let b = book();
    let mut app = b.app(120, 40);
    b.keys(&mut app, "/");
    app.update(Action::Paste("marwick".into()));
    b.keys(&mut app, "<Down> <Enter>");
    assert_eq!(selected(&app), "c-thomas", "the second match");
    b.keys(&mut app, "/");
    app.update(Action::Paste("ada".into()));
    b.keys(&mut app, "<Esc>");
    assert!(app.overlay.is_none());
    assert_eq!(selected(&app), "c-thomas", "Esc keeps the selection");
}

#[test]
fn no_match_says_so_and_enter_keeps_the_finder_open() {
    let b = book();
    let mut app = b.app(120, 40);
    b.keys(&mut app, "/");
    app.update(Action::Paste("zzqx".into()));
    let s = screen(&mut app, 120, 40);
    assert!(s.contains("No subject's name matches"), "{s}");
    b.keys(&mut app, "<Enter>");
    assert!(finding(&app));
    assert_eq!(selected(&app), "c-ada");
}

#[test]
fn slash_before_the_world_is_loaded_says_why() {
    let b = empty_book();
    let mut app = b.app(120, 40);
    b.keys(&mut app, "/");
    assert!(!finding(&app));
    let status = app
        .status
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(status.contains("no subject"), "{status}");
}
