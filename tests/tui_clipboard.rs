//! Copying to the clipboard through the terminal (OSC 52): `Y` copies the selected path in
//! Files, the shown writer brief in Story, the selected message in the transcript and the
//! selected call's preview in Approvals. `update` returns an `Effect::Clipboard` with the text;
//! the run loop writes the escape sequence (rendering stays pure).

mod tui_story_support;

use nbook::plot::ledger::NodeRef;
use nbook::tui::action::Effect;
use nbook::tui::app::AppState;
use nbook::tui::clipboard::osc52;
use tui_story_support::tui_support::*;

fn copied(fx: &[Effect]) -> Option<String> {
    fx.iter().find_map(|f| match f {
        Effect::Clipboard(text) => Some(text.clone()),
        _ => None,
    })
}

fn status(app: &AppState) -> String {
    app.status
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default()
}

#[test]
fn y_in_files_copies_the_selected_path() {
    let (mut app, _) = full_app(120, 40);
    press(&mut app, "1");
    let fx = press(&mut app, "Y");
    assert_eq!(
        copied(&fx).as_deref(),
        Some("manuscript/001-volume/001-chapter/index.md")
    );
    assert!(status(&app).contains("Copied the path"), "{}", status(&app));
    insta::assert_snapshot!("clipboard_files_120x40", render(&mut app, 120, 40));
}

#[test]
fn y_in_the_transcript_copies_the_selected_message() {
    let (mut app, _) = full_app(120, 40);
    press(&mut app, "4 l");
    // Up to the user's message (the first entry after the header).
    press(&mut app, "g j");
    let fx = press(&mut app, "Y");
    assert_eq!(
        copied(&fx).as_deref(),
        Some("Tighten the opening of chapter one.")
    );
    // A tool call copies its arguments and result.
    press(&mut app, "j j");
    let fx = press(&mut app, "Y");
    let text = copied(&fx).expect("a tool call is copied");
    assert!(text.contains("read"), "{text}");
    assert!(
        text.contains("manuscript/001-volume/001-chapter/index.md"),
        "{text}"
    );
}

#[test]
fn y_in_approvals_copies_the_preview() {
    let (mut app, _) = full_app(120, 40);
    press(&mut app, "5");
    let fx = press(&mut app, "Y");
    let text = copied(&fx).expect("the preview is copied");
    assert!(
        text.contains("+The harbour was quiet, and the gulls had gone."),
        "{text}"
    );
    assert!(text.contains("lorebook/character/mira/index.md"), "{text}");
    // Y is not y: nothing was approved.
    assert_eq!(app.approvals.len(), 3);
    press(&mut app, "j");
    let fx = press(&mut app, "Y");
    assert_eq!(
        copied(&fx).as_deref(),
        Some("wc -w manuscript/*/*/index.md")
    );
}

#[test]
fn y_in_story_copies_the_shown_brief_and_says_what_to_do_without_one() {
    let b = tui_story_support::book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    b.select(&mut app, NodeRef::Chapter(i.ch_oil));
    let fx = b.keys(&mut app, "Y");
    assert_eq!(copied(&fx), None);
    assert!(status(&app).contains("b shows"), "{}", status(&app));
    b.keys(&mut app, "b");
    let fx = b.keys(&mut app, "Y");
    let text = copied(&fx).expect("the brief is copied");
    assert!(
        text.contains("Ada finds the weather book and hides it."),
        "{text}"
    );
}

#[test]
fn nothing_to_copy_says_so() {
    let (mut app, _) = empty_app(120, 40);
    press(&mut app, "5");
    let fx = press(&mut app, "Y");
    assert_eq!(copied(&fx), None);
    assert!(status(&app).contains("Nothing to copy"), "{}", status(&app));
}

#[test]
fn the_osc52_sequence_is_base64_and_wrapped_for_tmux() {
    assert_eq!(osc52("hello", false), "\x1b]52;c;aGVsbG8=\x07");
    assert_eq!(osc52("", false), "\x1b]52;c;\x07");
    assert_eq!(osc52("ab", false), "\x1b]52;c;YWI=\x07");
    assert_eq!(osc52("abc", false), "\x1b]52;c;YWJj\x07");
    // UTF-8 bytes, so a CJK title survives.
    assert_eq!(osc52("港", false), "\x1b]52;c;5riv\x07");
    let t = osc52("hi", true);
    // Inside tmux: plain (for set-clipboard on), then through the passthrough.
    assert_eq!(
        t,
        "\x1b]52;c;aGk=\x07\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\"
    );
}
