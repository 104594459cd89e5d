//! Key-sequence tests of the World pane on a real temporary project (timeline written through
//! the world store's write API; the pane's jobs run for real): scrubbing asks a job for the
//! shown state (never read inside `update`), stale answers are dropped, zoom changes the buckets, a typed time lands the cursor, an invalid one shows
//! the calendar's error, the type filter, diff marks, track and issues, reloads after an
//! agent's write, and the palette and help.

mod tui_world_support;

use nbook::engine::EngineEvent;
use nbook::tui::action::{Action, Command, Effect};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::input::Overlay;
use nbook::tui::world::jobs::WorldJob;
use nbook::tui::world::overlay::WorldOverlay;
use nbook::tui::world::WorldTab;
use nbook::world::calendar::Zoom;
use serde_json::{json, Value};
use tui_world_support::*;

fn attr(app: &AppState, name: &str) -> Option<Value> {
    let c = app.world.state.as_ref().expect("a state");
    let st = c
        .value
        .as_ref()
        .expect("no error")
        .as_ref()
        .expect("a subject");
    st.attrs.get(name).cloned()
}

fn jump(b: &Book, app: &mut AppState, time: &str) {
    b.keys(app, "t");
    app.update(Action::Paste(time.into()));
    b.keys(app, "<Enter>");
    assert!(app.overlay.is_none(), "jumped to {time}");
}

fn jump_error(app: &AppState) -> Option<String> {
    match &app.overlay {
        Some(Overlay::World(o)) => match o.as_ref() {
            WorldOverlay::Jump { error, .. } => error.clone(),
            WorldOverlay::Find { .. } => None,
        },
        _ => None,
    }
}

fn selected(app: &AppState) -> String {
    app.world.selected_subject().expect("a subject").id.clone()
}

#[test]
fn opens_at_the_last_slice_with_the_first_subject() {
    let b = book();
    let app = b.app(120, 40);
    assert_eq!(app.focus, Pane::World);
    assert_eq!(app.world.cursor, b.instant("1913-01-01 00:00"));
    assert_eq!(app.world.cursor_label, "1913-01-01 00:00");
    assert_eq!(app.world.zoom, Zoom::Month);
    assert_eq!(
        app.world_subject_ids(),
        ["c-ada", "c-thomas", "f-board", "i-book", "l-geo", "l-light"]
    );
    assert_eq!(selected(&app), "c-ada");
    assert_eq!(attr(&app, "location"), Some(json!("subject://l-light")));
    let m = app.world.meta.as_ref().unwrap();
    assert_eq!((m.subject_count, m.slice_count), (6, 10));
}

fn state_jobs(fx: &[Effect]) -> Vec<(u64, String, i64)> {
    fx.iter()
        .filter_map(|f| match f {
            Effect::WorldJob {
                ticket,
                job: WorldJob::State { id, at },
            } => Some((*ticket, id.clone(), *at)),
            _ => None,
        })
        .collect()
}

#[test]
fn scrubbing_asks_a_job_for_the_state_and_update_never_reads_it() {
    let b = book();
    let mut app = b.app(120, 40);
    jump(&b, &mut app, "1911-02-20 21:00");
    b.keys(&mut app, "+ +");
    assert_eq!(app.world.zoom, Zoom::Hour);
    assert_eq!(attr(&app, "hp"), Some(json!(100)));
    // One hour later: `update` moves the cursor and asks a job for the state; it does not
    // read it (the state shown is still the old one's key, so the tab says "…").
    let fx = press(&mut app, "l");
    assert_eq!(app.world.cursor_label, "1911-02-20 22:00");
    let id = selected(&app);
    let cursor = app.world.cursor;
    let asked = state_jobs(&fx);
    assert_eq!(
        asked
            .iter()
            .map(|(_, i, at)| (i.clone(), *at))
            .collect::<Vec<_>>(),
        [(id.clone(), cursor)],
        "{fx:?}"
    );
    assert_ne!(
        app.world.state.as_ref().map(|c| c.key.clone()),
        Some((id.clone(), cursor))
    );
    assert!(
        fx.iter().all(|f| matches!(f, Effect::WorldJob { .. })),
        "{fx:?}"
    );
    assert!(
        screen(&mut app, 120, 40).contains('…'),
        "loading note while the job runs"
    );
    // A result under a ticket that is not in flight is dropped.
    let (ticket, _, _) = asked[0];
    let stale = nbook::tui::world::jobs::WorldJobResult::State {
        id: id.clone(),
        at: cursor,
        value: Ok(None),
    };
    app.update(Action::WorldJobDone {
        ticket: ticket + 1000,
        result: stale,
    });
    assert_ne!(
        app.world.state.as_ref().map(|c| c.key.clone()),
        Some((id.clone(), cursor))
    );
    // The real job's answer is shown.
    b.run(&mut app, fx);
    assert_eq!(attr(&app, "hp"), Some(json!(80)));
    b.keys(&mut app, "h");
    assert_eq!(attr(&app, "hp"), Some(json!(100)));
    // <Left>/<Right> too; a day at day zoom.
    b.keys(&mut app, "- <Right>");
    assert_eq!(app.world.cursor_label, "1911-02-21 21:00");
    assert_eq!(attr(&app, "hp"), Some(json!(80)));
    b.keys(&mut app, "<Left>");
    assert_eq!(app.world.cursor_label, "1911-02-20 21:00");
}

#[test]
fn a_state_answer_for_an_old_cursor_is_not_shown_and_the_new_one_is_asked() {
    let b = book();
    let mut app = b.app(120, 40);
    jump(&b, &mut app, "1911-02-20 21:00");
    b.keys(&mut app, "+ +");
    let mut fx = press(&mut app, "l");
    // Back before the 22:00 job returns: one state job stays in flight, no second one.
    fx.extend(press(&mut app, "h"));
    assert_eq!(state_jobs(&fx).len(), 1, "{fx:?}");
    // Its 22:00 answer arrives; the cursor is at 21:00, so the tab shows the 21:00 state
    // only after the job it asks next.
    b.run(&mut app, fx);
    assert_eq!(app.world.cursor_label, "1911-02-20 21:00");
    assert_eq!(
        app.world.state.as_ref().map(|c| c.key.1),
        Some(app.world.cursor)
    );
    assert_eq!(attr(&app, "hp"), Some(json!(100)));
}

#[test]
fn brackets_step_from_slice_to_slice() {
    let b = book();
    let mut app = b.app(120, 40);
    jump(&b, &mut app, "1911-02-20 21:00");
    b.keys(&mut app, "]");
    assert_eq!(app.world.cursor_label, "1911-02-20 22:00");
    b.keys(&mut app, "] ]");
    assert_eq!(app.world.cursor_label, "1911-03-03 18:00");
    assert_eq!(attr(&app, "location"), Some(json!("subject://l-geo")));
    b.keys(&mut app, "[ [ [");
    assert_eq!(app.world.cursor_label, "1911-02-14 07:00");
    b.keys(&mut app, "<");
    assert_eq!(app.world.cursor_label, "1911-01-01 00:00");
    b.keys(&mut app, "[");
    assert_eq!(app.world.cursor_label, "1911-01-01 00:00");
    assert!(app
        .status
        .as_ref()
        .unwrap()
        .text
        .contains("No slice before"));
    b.keys(&mut app, ">");
    assert_eq!(app.world.cursor_label, "1913-01-01 00:00");
}

#[test]
fn zoom_changes_the_buckets() {
    let b = book();
    let mut app = b.app(120, 40);
    jump(&b, &mut app, "1911-03-03 18:00");
    let width = app.world.window.key.unwrap().buckets;
    assert_eq!(width, 76, "one bucket per cell of the 120×40 detail");
    let month = app.world.counts().unwrap().clone();
    assert_eq!(month.len(), width);
    assert_eq!(month[0], (b.instant("1911-01-01"), 2));
    assert_eq!(month[2], (b.instant("1911-03-01"), 3));
    assert_eq!(month.iter().map(|c| c.1).sum::<i64>(), 10);
    b.keys(&mut app, "+");
    let day = app.world.counts().unwrap().clone();
    assert_eq!(app.world.zoom, Zoom::Day);
    assert_eq!(day[1].0 - day[0].0, 86_400);
    let march3 = day.iter().find(|c| c.0 == b.instant("1911-03-03")).unwrap();
    assert_eq!(march3.1, 2);
    b.keys(&mut app, "- - -");
    assert_eq!(app.world.zoom, Zoom::Year);
    assert!(app.status.as_ref().unwrap().text.contains("Already"));
    let years = app.world.counts().unwrap().clone();
    assert_eq!(
        &years[..3],
        [
            (b.instant("1911-01-01"), 8),
            (b.instant("1912-01-01"), 1),
            (b.instant("1913-01-01"), 1)
        ]
    );
    // The cursor's bucket is the one holding it.
    assert_eq!(app.world.window.bucket_of(app.world.cursor), Some(0));
}

#[test]
fn a_typed_time_lands_the_cursor() {
    let b = book();
    let mut app = b.app(80, 24);
    jump(&b, &mut app, "1911-03-03 18:00");
    assert_eq!(app.world.cursor, b.instant("1911-03-03 18:00"));
    assert_eq!(
        app.status.as_ref().unwrap().text,
        "Cursor at 1911-03-03 18:00"
    );
    // The date alone means midnight.
    jump(&b, &mut app, "1912-06-01");
    assert_eq!(app.world.cursor_label, "1912-06-01 00:00");
    assert_eq!(attr(&app, "age"), Some(json!(15)));
}

#[test]
fn an_invalid_time_shows_the_expected_form() {
    let b = book();
    let mut app = b.app(80, 24);
    let before = app.world.cursor;
    b.keys(&mut app, "t");
    app.update(Action::Paste("next Tuesday".into()));
    b.keys(&mut app, "<Enter>");
    let e = jump_error(&app).expect("an error");
    // A plain sentence with an example in the project's own form, never the template's
    // placeholders (`{year}`, `{month:02}`) the calendar is configured with.
    assert!(!e.contains('{') && !e.contains('}'), "{e}");
    assert!(e.contains("a number for the year"), "{e}");
    assert!(e.contains("write it like \"2020-04-12 18:00\""), "{e}");
    assert_eq!(app.world.cursor, before);
    // Typing clears it; Enter on nothing asks for a time; Esc leaves the cursor alone.
    press(&mut app, "x");
    assert_eq!(jump_error(&app), None);
    b.keys(&mut app, "<Esc>");
    assert!(app.overlay.is_none());
    b.keys(&mut app, "t <Enter>");
    assert!(jump_error(&app).unwrap().starts_with("Type a time"));
    b.keys(&mut app, "<Esc>");
    assert_eq!(app.world.cursor, before);
}

#[test]
fn f_filters_subjects_by_type() {
    let b = book();
    let mut app = b.app(120, 40);
    let mut seen = Vec::new();
    for _ in 0..5 {
        b.keys(&mut app, "f");
        seen.push((app.world.filter.clone(), app.world_subject_ids()));
    }
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        seen,
        [
            (Some("character".into()), s(&["c-ada", "c-thomas"])),
            (Some("faction".into()), s(&["f-board"])),
            (Some("item".into()), s(&["i-book"])),
            (Some("location".into()), s(&["l-geo", "l-light"])),
            (
                None,
                s(&["c-ada", "c-thomas", "f-board", "i-book", "l-geo", "l-light"])
            ),
        ]
    );
    // The selection follows the list; the state follows the selection.
    assert_eq!(
        selected(&app),
        "l-geo",
        "the location filter selected its first"
    );
    b.keys(&mut app, "g j j");
    assert_eq!(selected(&app), "f-board");
    assert_eq!(attr(&app, "treasury"), Some(json!(60)));
    b.keys(&mut app, "G");
    assert_eq!(selected(&app), "l-light");
    b.keys(&mut app, "g");
    assert_eq!(selected(&app), "c-ada");
    // A type without the selected subject selects its first.
    b.keys(&mut app, "f f");
    assert_eq!(selected(&app), "f-board");
    b.keys(&mut app, "f f f");
    assert_eq!(selected(&app), "f-board", "kept in the full list");
}

#[test]
fn marks_give_the_diff_from_a_to_the_cursor() {
    let b = book();
    let mut app = b.app(120, 40);
    b.keys(&mut app, "d");
    assert_eq!(app.world.tab, WorldTab::Diff);
    assert!(app.world.diff.is_none());
    jump(&b, &mut app, "1911-01-01");
    b.keys(&mut app, "m");
    assert_eq!(app.world.mark.as_ref().unwrap().1, "1911-01-01 00:00");
    jump(&b, &mut app, "1912-06-01");
    let diff = app.world.diff.as_ref().unwrap().value.as_ref().unwrap();
    let attrs: Vec<&str> = diff.iter().map(|d| d.attr.as_str()).collect();
    assert_eq!(attrs, ["/age", "/hp", "/inventory", "/location"]);
    assert_eq!(
        (diff[1].before.clone(), diff[1].after.clone()),
        (Some(json!(100)), Some(json!(80)))
    );
    // Scrubbing updates it.
    b.keys(&mut app, ">");
    let diff = app.world.diff.as_ref().unwrap().value.as_ref().unwrap();
    assert!(
        !diff.iter().any(|d| d.attr == "/location"),
        "back at the light"
    );
    // Another subject.
    b.keys(&mut app, "j");
    let diff = app.world.diff.as_ref().unwrap().value.as_ref().unwrap();
    assert!(diff.iter().any(|d| d.attr == "/mood"));
    // m elsewhere moves A; m on A clears it.
    b.keys(&mut app, "m");
    assert!(app
        .world
        .diff
        .as_ref()
        .unwrap()
        .value
        .as_ref()
        .unwrap()
        .is_empty());
    b.keys(&mut app, "m");
    assert!(app.world.mark.is_none());
    assert!(render(&mut app, 120, 40).contains("to mark instant A"));
}

#[test]
fn track_and_issues_load_off_the_ui_task() {
    let b = book();
    let mut app = b.app(120, 40);
    jump(&b, &mut app, "1911-03-10 09:00");
    let fx = press(&mut app, "c");
    assert!(fx.contains(&Effect::WorldJob {
        ticket: app.world.track.in_flight.as_ref().unwrap().0,
        job: WorldJob::Track("c-ada".into())
    }));
    b.run(&mut app, fx);
    let track = app.world.track.get(&"c-ada".to_string()).unwrap();
    assert_eq!(
        track.iter().map(|t| t.title.as_str()).collect::<Vec<_>>(),
        [
            "Opening state",
            "Ada finds the weather book",
            "Storm on the light",
            "Ada hides the book",
            "A year on the rock",
            "New keeper"
        ]
    );
    b.keys(&mut app, "j");
    assert_eq!(
        app.world.track.get(&"c-thomas".to_string()).unwrap().len(),
        5
    );
    b.keys(&mut app, "i");
    let issues = app.world.issues.get(&app.world.cursor).unwrap();
    assert_eq!(issues.len(), 1);
    let i = &issues[0].issue;
    assert_eq!((i.code.as_str(), i.subject_id.as_str()), ("E1", "c-thomas"));
    assert!(!i.explanation.suggested_action.is_empty());
    assert_eq!(issues[0].time.as_deref(), Some("1911-03-10 09:00"));
    let s = render(&mut app, 120, 40);
    assert!(s.contains("Suggested action:"), "{s}");
    // Before the increment there is none.
    jump(&b, &mut app, "1911-03-09");
    assert!(app.world.issues.get(&app.world.cursor).unwrap().is_empty());
}

#[test]
fn fast_scrubbing_keeps_one_job_of_a_kind_in_flight() {
    let b = book();
    let mut app = b.app(120, 40);
    b.keys(&mut app, "i - -");
    let mut fx = Vec::new();
    for _ in 0..20 {
        fx.extend(press(&mut app, "h"));
    }
    let issues = fx
        .iter()
        .filter(|f| {
            matches!(
                f,
                Effect::WorldJob {
                    job: WorldJob::Issues(_),
                    ..
                }
            )
        })
        .count();
    assert!(issues <= 1, "{fx:?}");
    // Once the jobs are back, the answers are for where the cursor is now.
    b.run(&mut app, fx);
    assert_eq!(app.world.issues.key, Some(app.world.cursor));
    assert!(app.world.counts().is_some());
}

#[test]
fn an_agent_write_reloads_the_world() {
    let b = book();
    let mut app = b.app(120, 40);
    b.write(
        "1914-01-01",
        "War",
        "event",
        vec![nbook::world::prepare::NewPatch {
            subject_id: "c-ada".into(),
            path: "/age".into(),
            op: nbook::world::schema::Op::Replace,
            value: Some(json!(17)),
            summary: None,
            declared_type: None,
            name: None,
        }],
    );
    // The engine says which domains a call changed (from the tool's declared effects).
    app.update(Action::Engine(EngineEvent::DomainsChanged {
        session_id: "1".into(),
        tool: "execute_world".into(),
        domains: vec![nbook::engine::effects::Domain::World],
    }));
    assert!(app.world.stale);
    let fx = app.update(Action::Tick);
    b.run(&mut app, fx);
    assert_eq!(app.world.meta.as_ref().unwrap().slice_count, 11);
    b.keys(&mut app, ">");
    assert_eq!(app.world.cursor_label, "1914-01-01 00:00");
    assert_eq!(attr(&app, "age"), Some(json!(17)));
}

#[test]
fn palette_and_help_know_the_world_keys() {
    let b = book();
    let mut app = b.app(120, 40);
    b.keys(&mut app, "1");
    assert_eq!(app.focus, Pane::Files);
    // A world command from the palette focuses the pane first.
    let fx = app.update(Action::Cmd(Command::WorldZoomIn));
    b.run(&mut app, fx);
    assert_eq!((app.focus, app.world.zoom), (Pane::World, Zoom::Day));
    b.keys(&mut app, "?");
    let s = render(&mut app, 120, 40);
    assert!(s.contains("[world]"), "{s}");
    assert!(s.contains("Cursor back one zoom unit"), "{s}");
    // Keys read as the author types them: `<`, not its keymap name `<Lt>`.
    let first = s
        .lines()
        .find(|l| l.contains("Cursor to the first slice"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(first.contains(" <  ") && !first.contains("<Lt>"), "{first}");
    insta::assert_snapshot!("world_help_120x40", s);
}

#[test]
fn an_empty_project_says_how_the_timeline_gets_written() {
    let b = empty_book();
    let mut app = b.app(80, 24);
    assert!(app.world.is_empty());
    assert!(b.keys(&mut app, "l + t").is_empty());
    assert!(app.overlay.is_none());
    let s = render(&mut app, 80, 24);
    assert!(s.contains("No world timeline yet."), "{s}");
    assert!(s.contains("execute_world"), "{s}");
}

#[test]
fn odd_sizes_do_not_panic() {
    let b = book();
    for (w, h) in [(40, 12), (49, 30), (50, 10), (20, 6), (200, 60)] {
        let mut app = b.app(w, h);
        b.keys(&mut app, "c l d i + t");
        render(&mut app, w, h);
    }
}
