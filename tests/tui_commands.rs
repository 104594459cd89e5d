//! The panes' command reports against what is drawn: for every pane and a few representative
//! states, every key drawn in a hint row (the Sessions hint line, the approval options, the
//! World tab bar) is in the `?` help with the same key, and in the palette when it is
//! available; every available command help lists for the focused pane is in the palette;
//! what a pane reports unavailable is marked in help and left out of the palette. Driven
//! through `update` and rendered with TestBackend. Also snapshots of the help and palette
//! where the report changes them.

mod tui_support;

use nbook::tui::action::{Action, Command};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::chrome::overlay_update::palette_for;
use nbook::tui::chrome::overlays::{help_sections, HelpEntry};
use nbook::tui::commands::key_of;
use nbook::tui::input::Overlay;
use nbook::tui::keymap::Context;
use nbook::tui::sessions::view::sessions_hint;
use tui_support::*;

/// Wide and tall enough that no hint, help row or palette entry is cut.
const W: u16 = 170;
const H: u16 = 230;

/// The states checked: a name and how to reach it from a fresh app.
fn states() -> Vec<(&'static str, AppState)> {
    let full = |pane: Pane, keys: &str| {
        let (mut app, _) = full_app(W, H);
        app.focus = pane;
        if !keys.is_empty() {
            press(&mut app, keys);
        }
        app
    };
    let empty = |pane: Pane| {
        let (mut app, _) = empty_app(W, H);
        app.focus = pane;
        app
    };
    vec![
        ("files", full(Pane::Files, "")),
        ("files empty", empty(Pane::Files)),
        ("story on an act", full(Pane::Story, "")),
        ("story on a chapter", full(Pane::Story, "j")),
        ("story empty", empty(Pane::Story)),
        ("world", full(Pane::World, "")),
        ("world empty", empty(Pane::World)),
        ("sessions list", full(Pane::Sessions, "")),
        ("sessions transcript", full(Pane::Sessions, "l")),
        ("sessions jobs", full(Pane::Sessions, "b")),
        ("sessions composer", full(Pane::Sessions, "i")),
        ("sessions empty", empty(Pane::Sessions)),
        ("approvals first call", full(Pane::Approvals, "")),
        ("approvals second call", full(Pane::Approvals, "j")),
        ("approvals empty", empty(Pane::Approvals)),
    ]
}

/// The help rows of the focused pane's sections (where the pane's report applies).
fn pane_help(app: &AppState) -> Vec<HelpEntry> {
    let pane = app.pane_contexts();
    help_sections(app)
        .into_iter()
        .filter(|(ctx, _)| pane.contains(ctx) || *ctx == Context::Global)
        .flat_map(|(_, es)| es)
        .collect()
}

/// The help overlay as drawn, opened through `update`.
fn help_screen(app: &mut AppState) -> String {
    app.update(Action::Cmd(Command::Help));
    let screen = render(app, W, H);
    app.overlay = None;
    screen
}

/// The palette's list as opened through `update` (empty query).
fn palette_list(app: &mut AppState) -> Vec<Command> {
    app.update(Action::Cmd(Command::Palette));
    let list = match &app.overlay {
        Some(Overlay::Palette { matches, .. }) => matches.iter().map(|(c, _)| *c).collect(),
        _ => panic!("the palette did not open"),
    };
    app.overlay = None;
    list
}

fn help_line(e: &HelpEntry) -> String {
    let keys = e.keys.join(", ");
    if e.available {
        format!("  {keys:<22}{}", e.desc)
    } else {
        format!("  {keys:<22}{} (not now)", e.desc)
    }
}

#[test]
fn every_drawn_hint_is_in_help_and_the_palette() {
    for (name, mut app) in states() {
        let report = app.pane_commands();
        assert!(!report.is_empty(), "{name}: the pane reports no commands");
        let screen = render(&mut app, W, H);
        let help = help_sections(&app);
        let help_text = help_screen(&mut app);
        let palette = palette_list(&mut app);
        assert_eq!(palette, palette_for(&app), "{name}");
        let approvals_row = app.focus == Pane::Approvals && app.approvals.selected_call().is_some();
        let world_tabs = app.focus == Pane::World && app.world.meta.is_some();
        for pc in report.iter().filter(|pc| pc.hint) {
            let key = key_of(&app, pc).unwrap_or_else(|| "—".into());
            // Drawn where the pane draws its hints.
            if app.focus == Pane::Sessions || approvals_row || world_tabs {
                let drawn = format!("{key} {}", pc.label);
                assert!(screen.contains(&drawn), "{name}: hint {drawn:?} not drawn");
            }
            // In help, on a row of the same command carrying the same key, drawn as such.
            let entry = help
                .iter()
                .flat_map(|(_, es)| es)
                .find(|e| e.cmd == pc.cmd && e.keys.contains(&key))
                .unwrap_or_else(|| panic!("{name}: {:?} on {key} is not in help", pc.cmd));
            assert!(
                help_text.contains(&help_line(entry)),
                "{name}: help does not draw {:?}",
                help_line(entry)
            );
            assert_eq!(
                palette.contains(&pc.cmd),
                pc.available,
                "{name}: {:?} palette vs availability",
                pc.cmd
            );
        }
    }
}

#[test]
fn help_marks_the_report_and_the_palette_offers_what_help_offers() {
    for (name, mut app) in states() {
        let report = app.pane_commands();
        let entries = pane_help(&app);
        let palette = palette_list(&mut app);
        for pc in &report {
            let marked: Vec<&HelpEntry> = entries.iter().filter(|e| e.cmd == pc.cmd).collect();
            assert!(!marked.is_empty(), "{name}: {:?} not in help", pc.cmd);
            assert!(
                marked.iter().all(|e| e.available == pc.available),
                "{name}: help marks {:?} wrongly",
                pc.cmd
            );
            assert_eq!(
                palette.contains(&pc.cmd),
                pc.available,
                "{name}: {:?} palette vs availability",
                pc.cmd
            );
        }
        for e in entries.iter().filter(|e| e.available) {
            assert!(
                palette.contains(&e.cmd),
                "{name}: help offers {:?} but the palette does not",
                e.cmd
            );
        }
    }
}

#[test]
fn reports_follow_the_state() {
    let find = |app: &AppState, cmd: Command| {
        app.pane_commands()
            .into_iter()
            .find(|pc| pc.cmd == cmd)
            .unwrap_or_else(|| panic!("{cmd:?} not reported"))
    };
    // A scene jump needs a scene; an act is not one.
    let (mut app, _) = full_app(W, H);
    app.focus = Pane::Story;
    assert!(!find(&app, Command::StoryJumpChapter).available);
    assert!(find(&app, Command::StoryEdit).available);
    // Nothing to write to without a session: the hint keeps its place, its key dimmed.
    let (mut empty, _) = empty_app(W, H);
    empty.focus = Pane::Sessions;
    assert!(!find(&empty, Command::Compose).available);
    assert!(find(&empty, Command::NewSession).available);
    let line = sessions_hint(&empty);
    let compose_key = line
        .spans
        .iter()
        .find(|s| s.content == "i")
        .expect("the compose key is drawn");
    assert_eq!(compose_key.style, empty.theme.dim);
    let new_key = line
        .spans
        .iter()
        .find(|s| s.content == "n")
        .expect("the new-session key is drawn");
    assert_eq!(new_key.style, empty.theme.key_hint);
    // A running session can be cancelled; in the composer too.
    app.focus = Pane::Sessions;
    assert!(find(&app, Command::CancelRun).available);
    press(&mut app, "i");
    assert!(find(&app, Command::CancelRun).available);
    assert!(find(&app, Command::Send).available);
}

fn snap(name: &str, build: impl Fn(u16, u16) -> AppState) {
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let mut app = build(w, h);
        let screen = render(&mut app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

#[test]
fn help_marks_what_the_story_pane_cannot_do_now() {
    // On an act: the scene jumps are not available and say so.
    snap("help_story_on_an_act", |w, h| {
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Story;
        press(&mut app, "?");
        app
    });
}

#[test]
fn palette_leaves_out_what_the_sessions_pane_cannot_do_now() {
    // No session: no mode to cycle, nothing to write to, open or cancel.
    snap("palette_sessions_empty", |w, h| {
        let (mut app, _) = empty_app(w, h);
        app.focus = Pane::Sessions;
        press(&mut app, "<C-p>");
        app
    });
}
