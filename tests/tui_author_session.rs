//! The author's own Story-pane edit as the Sessions pane shows it: the project's author
//! session in the list, and in its transcript the tool call the edit became, approved by
//! `author`, with its result — the same entries an agent's change leaves. Real project, real
//! engine; the edit goes through the Story pane's keys and jobs. Snapshots at 80×24 and 120×40.

mod tui_story_support;

use nbook::engine::author::AUTHOR_SESSION_ID;
use nbook::plot::ledger::NodeRef;
use nbook::tui::action::Action;
use nbook::tui::app::{AppState, Pane};
use tui_story_support::tui_support::empty_app_with;
use tui_story_support::*;

/// Edit a thread's title from the Story pane, then open the author session's transcript.
fn author_session_app(b: &Book, w: u16, h: u16) -> AppState {
    let mut app = b.app(w, h);
    b.keys(&mut app, "t");
    b.select(&mut app, NodeRef::Thread(b.ids.t_book));
    b.keys(&mut app, "e");
    if let Some(nbook::tui::input::Overlay::Story(o)) = &mut app.overlay {
        if let nbook::tui::story::overlay::StoryOverlay::Edit { input, .. } = o.as_mut() {
            let text =
                nbook::tui::input::text_of(input).replace("The weather book", "The Weather Book");
            *input = nbook::tui::input::editor(&text);
        }
    }
    b.keys(&mut app, "<C-s>");
    assert!(
        b.text(&format!(
            "SELECT title FROM StoryThread WHERE id = {}",
            b.ids.t_book
        )) == "The Weather Book"
    );

    let (mut view, _) = empty_app_with(w, h, b.engine.sessions(), vec![]);
    press(&mut view, "4");
    assert_eq!(view.focus, Pane::Sessions);
    let lines = b.engine.session_log(AUTHOR_SESSION_ID).unwrap().lines;
    let fx = press(&mut view, "r");
    let ticket = fx
        .iter()
        .find_map(|f| match f {
            nbook::tui::action::Effect::LoadSessionLog { ticket, .. } => Some(*ticket),
            _ => None,
        })
        .expect("a log load");
    view.update(Action::SessionLogLoaded {
        ticket,
        session_id: AUTHOR_SESSION_ID.into(),
        result: Ok(lines),
    });
    view.status = None;
    view
}

#[test]
fn the_author_session_shows_the_edit_as_a_tool_call_approved_by_the_author() {
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let b = book();
        let mut app = author_session_app(&b, w, h);
        let s = screen(&mut app, w, h);
        assert!(s.contains("save_story_thread"), "{s}");
        assert!(s.contains("approved by author"), "{s}");
        insta::assert_snapshot!(format!("author_session_{w}x{h}"), s);
    }
}

#[test]
fn the_composer_does_not_open_on_the_author_session() {
    let b = book();
    let mut app = author_session_app(&b, 120, 40);
    let fx = press(&mut app, "i");
    assert!(fx.is_empty());
    assert!(!app.sessions.composing);
    let status = app
        .status
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(
        status.contains("records your own edits") && status.contains("n starts a session"),
        "{status}"
    );
}
