//! Snapshots of the World pane at 80×24 and 120×40 on a real temporary project (its timeline
//! written through the world store, read through the pane's real jobs): the timeline at each
//! zoom, a subject's state with its issues, its track, the A→cursor diff, every issue with its
//! explanation, the jump prompt showing the calendar's error, the type filter, and the empty
//! state.

mod tui_world_support;

use nbook::tui::action::Action;
use nbook::tui::app::AppState;
use tui_world_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn snap(name: &str, build: impl Fn(&Book, u16, u16) -> AppState) {
    let b = book();
    for (w, h) in SIZES {
        let mut app = build(&b, w, h);
        let s = screen(&mut app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), s);
    }
}

/// Jump the cursor to `time` through the prompt.
pub fn jump(b: &Book, app: &mut AppState, time: &str) {
    b.keys(app, "t");
    app.update(Action::Paste(time.into()));
    b.keys(app, "<Enter>");
    assert!(app.overlay.is_none(), "the prompt closed");
    app.status = None;
}

fn at(time: &'static str, keys: &'static str) -> impl Fn(&Book, u16, u16) -> AppState {
    move |b, w, h| {
        let mut app = b.app(w, h);
        jump(b, &mut app, time);
        if !keys.is_empty() {
            b.keys(&mut app, keys);
        }
        app.status = None;
        app
    }
}

#[test]
fn timeline_by_year() {
    snap("world_timeline_year", at("1911-03-03 18:00", "- -"));
}

#[test]
fn timeline_by_month() {
    snap("world_timeline_month", at("1911-03-03 18:00", ""));
}

#[test]
fn timeline_by_day() {
    snap("world_timeline_day", at("1911-03-03 18:00", "+"));
}

#[test]
fn timeline_by_hour() {
    snap("world_timeline_hour", at("1911-03-03 18:00", "+ +"));
}

#[test]
fn state_with_an_issue() {
    // Thomas at the oil delivery, whose base was deleted: E1 in his state.
    snap("world_state", at("1911-03-10 09:00", "j"));
}

#[test]
fn track() {
    snap("world_track", at("1911-02-20 22:00", "c"));
}

#[test]
fn diff_from_a_to_the_cursor() {
    snap("world_diff", |b, w, h| {
        let mut app = at("1911-01-01 00:00", "m")(b, w, h);
        jump(b, &mut app, "1912-06-01");
        app
    });
}

#[test]
fn issues_with_explanations() {
    snap("world_issues", at("1911-03-10 09:00", "i"));
}

#[test]
fn jump_prompt_with_an_error() {
    snap("world_jump_error", |b, w, h| {
        let mut app = b.app(w, h);
        b.keys(&mut app, "t");
        app.update(Action::Paste("next Tuesday".into()));
        b.keys(&mut app, "<Enter>");
        app
    });
}

#[test]
fn filtered_by_type() {
    snap("world_filter", at("1911-03-03 18:00", "f"));
}

#[test]
fn empty_project() {
    let b = empty_book();
    for (w, h) in SIZES {
        let mut app = b.app(w, h);
        let s = screen(&mut app, w, h);
        insta::assert_snapshot!(format!("world_empty_{w}x{h}"), s);
    }
}
