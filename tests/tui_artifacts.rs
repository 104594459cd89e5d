//! The Artifacts view of the Board pane (`A`) on a real project, read through the pane's real
//! jobs (the engine's read model): snapshots at 80×24 and 120×40 of the empty view, the list
//! with an image selected (the plain fallback: type, size, pixel size, path — test terminals
//! speak no image protocol) and a text artifact's content; `j`/`k` follow the selection, `A`
//! and `Esc` go back to the board.

mod tui_story_support;

use nbook::board::artifacts::{self as art, Kind, Register};
use nbook::board::Board;
use nbook::tui::board::artifacts::Shown;
use tui_story_support::board_ui::{app, keys};
use tui_story_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn register(b: &Book, r: Register) {
    let ws = nbook::workspace::Workspace::open(&b.root).unwrap();
    let p = art::prepare(&ws, &r).unwrap();
    art::commit(&Board::new(&b.root, "book"), &b.root, &p).unwrap();
}

/// A character sheet (text) and a map (PNG), the map newest.
fn with_artifacts() -> Book {
    let b = empty_book();
    register(
        &b,
        Register {
            kind: Some(Kind::Document),
            title: "Lucia — character sheet".into(),
            content: Some(
                "# Lucia\n\nAfraid of deep water since the flood.\nSister of Marco.".into(),
            ),
            author_id: "ada".into(),
            author_type: "agent".into(),
            ..Register::default()
        },
    );
    register(
        &b,
        Register {
            kind: Some(Kind::Image),
            title: "Map of the lagoon".into(),
            description: Some("Drawn for chapter 3.".into()),
            data_base64: Some(PNG_1X1.into()),
            author_id: "ada".into(),
            author_type: "agent".into(),
            ..Register::default()
        },
    );
    b
}

fn snap(name: &str, book: impl Fn() -> Book, then: &str) {
    let b = book();
    for (w, h) in SIZES {
        let mut a = app(&b, w, h);
        // One key at a time, each after the jobs of the one before (as the runtime does).
        for k in then.split(' ') {
            keys(&b, &mut a, k);
        }
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen(&mut a, w, h));
    }
}

#[test]
fn no_artifacts_says_where_they_come_from() {
    snap("artifacts_empty", empty_book, "A");
}

#[test]
fn an_image_shows_its_plain_facts_without_an_image_protocol() {
    snap("artifacts_image", with_artifacts, "A");
}

#[test]
fn a_text_artifact_shows_its_content() {
    snap("artifacts_text", with_artifacts, "A j");
}

#[test]
fn keys_follow_the_selection_and_go_back_to_the_board() {
    let b = with_artifacts();
    let mut a = app(&b, 120, 40);
    keys(&b, &mut a, "A");
    let v = a.board.artifacts.as_ref().expect("the view is open");
    assert_eq!(v.items.len(), 2);
    assert_eq!(v.selected().unwrap().id, "ART-002");
    assert!(matches!(v.shown, Some((ref id, Shown::Image(None))) if id == "ART-002"));
    let s = screen(&mut a, 120, 40);
    assert!(
        s.contains("1×1 pixels") && s.contains("path .nbook/artifacts/ART-002.png"),
        "{s}"
    );
    keys(&b, &mut a, "j");
    let v = a.board.artifacts.as_ref().unwrap();
    assert_eq!(v.selected().unwrap().id, "ART-001");
    assert!(
        matches!(&v.shown, Some((id, Shown::Text(t, false))) if id == "ART-001" && t.contains("deep water"))
    );
    keys(&b, &mut a, "k");
    assert_eq!(
        a.board.artifacts.as_ref().unwrap().selected().unwrap().id,
        "ART-002"
    );
    keys(&b, &mut a, "A");
    assert!(a.board.artifacts.is_none(), "A again goes back");
    keys(&b, &mut a, "A");
    keys(&b, &mut a, "<Esc>");
    assert!(a.board.artifacts.is_none(), "Esc goes back");
    let s = screen(&mut a, 120, 40);
    assert!(s.contains("No tasks on the board yet"), "{s}");
}
