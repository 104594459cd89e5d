//! Mouse in the focused list (Files, Story, Sessions, Approvals): a click selects the row under
//! it, a second click on the same row within the double-click time opens it as Enter does; a
//! click elsewhere in an unfocused pane focuses it, as before.

mod tui_support;

use std::time::Duration;

use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::input::Overlay;
use tui_support::*;

const W: u16 = 120;
const H: u16 = 40;

fn click_at(app: &mut AppState, column: u16, row: u16) -> Vec<Effect> {
    app.update(Action::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }))
}

/// The screen row where `text` is drawn in the left column (the panes).
fn row_of(app: &mut AppState, text: &str) -> u16 {
    let screen = render(app, W, H);
    let left = app.regions().panes[0].width as usize;
    screen
        .lines()
        .position(|l| l.chars().take(left).collect::<String>().contains(text))
        .unwrap_or_else(|| panic!("{text} is not in the panes:\n{screen}")) as u16
}

fn click_on(app: &mut AppState, text: &str) -> Vec<Effect> {
    let row = row_of(app, text);
    click_at(app, 3, row)
}

fn selected_file(app: &AppState) -> String {
    app.files
        .tree
        .selected_node()
        .unwrap()
        .name
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_click_selects_a_file_and_a_double_click_opens_it() {
    let (mut app, clock) = full_app(W, H);
    press(&mut app, "1");
    click_on(&mut app, "AGENTS.md");
    assert_eq!(selected_file(&app), "AGENTS.md");
    insta::assert_snapshot!("mouse_files_click_120x40", render(&mut app, W, H));
    // A folder: one click selects, a second one soon after opens it (loads it, as Enter).
    clock.advance(Duration::from_secs(2));
    let fx = click_on(&mut app, "lorebook");
    assert_eq!(selected_file(&app), "lorebook");
    assert!(
        !fx.iter().any(|f| matches!(f, Effect::LoadDir { .. })),
        "{fx:?}"
    );
    clock.advance(Duration::from_millis(200));
    let fx = click_on(&mut app, "lorebook");
    assert!(
        fx.iter()
            .any(|f| matches!(f, Effect::LoadDir { dir, .. } if dir == "lorebook")),
        "{fx:?}"
    );
}

#[test]
fn two_slow_clicks_are_two_single_clicks() {
    let (mut app, clock) = full_app(W, H);
    press(&mut app, "1");
    click_on(&mut app, "lorebook");
    clock.advance(Duration::from_secs(1));
    let fx = click_on(&mut app, "lorebook");
    assert!(
        !fx.iter().any(|f| matches!(f, Effect::LoadDir { .. })),
        "{fx:?}"
    );
    // Two quick clicks on different rows are two selections, not an open.
    click_on(&mut app, "AGENTS.md");
    clock.advance(Duration::from_millis(100));
    let fx = click_on(&mut app, "lorebook");
    assert_eq!(selected_file(&app), "lorebook");
    assert!(
        !fx.iter().any(|f| matches!(f, Effect::LoadDir { .. })),
        "{fx:?}"
    );
}

#[test]
fn a_click_below_the_last_row_changes_nothing() {
    let (mut app, _) = full_app(W, H);
    press(&mut app, "5");
    let before = app.approvals.selected;
    let list = nbook::tui::chrome::layout::inner(app.regions().panes[Pane::Approvals.index()]);
    click_at(&mut app, 3, list.y + list.height - 1);
    assert_eq!(app.approvals.selected, before);
    assert_eq!(app.focus, Pane::Approvals);
}

#[test]
fn approvals_click_selects_and_double_click_shows_the_detail() {
    let (mut app, clock) = full_app(W, H);
    press(&mut app, "5");
    assert_eq!(app.approvals.selected, 0);
    click_on(&mut app, "bash");
    assert_eq!(app.approvals.selected, 1);
    assert!(app.overlay.is_none(), "one click never opens");
    clock.advance(Duration::from_millis(150));
    click_on(&mut app, "bash");
    assert!(
        matches!(&app.overlay, Some(Overlay::Detail { call_id, .. }) if call_id == "call-bash"),
        "{:?}",
        app.overlay
    );
}

#[test]
fn sessions_click_selects_and_loads_the_transcript() {
    let (mut app, _) = full_app(W, H);
    press(&mut app, "4");
    let fx = click_on(&mut app, "2 writer");
    assert_eq!(app.sessions.selected().unwrap().id, "2");
    assert!(
        fx.iter()
            .any(|f| matches!(f, Effect::LoadSessionLog { .. })),
        "{fx:?}"
    );
}

#[test]
fn story_click_selects_the_row() {
    let (mut app, _) = full_app(W, H);
    press(&mut app, "2");
    let before = app.story.selected;
    let list = nbook::tui::chrome::layout::inner(app.regions().panes[Pane::Story.index()]);
    click_at(&mut app, 3, list.y + 2);
    assert_ne!(app.story.selected, before);
    assert_eq!(app.story.selected, app.story.offset + 2);
}

#[test]
fn a_click_on_an_unfocused_pane_focuses_it_without_selecting() {
    let (mut app, _) = full_app(W, H);
    press(&mut app, "1");
    let before = app.approvals.selected;
    let pane = app.regions().panes[Pane::Approvals.index()];
    click_at(&mut app, 3, pane.y + 1);
    assert_eq!(app.focus, Pane::Approvals);
    assert_eq!(app.approvals.selected, before);
}
