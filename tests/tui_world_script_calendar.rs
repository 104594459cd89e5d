//! The World pane on a project whose calendar is a script (`kind = "custom"`): the UI task
//! never runs the script. Labels of the cursor, mark A and the strip's ends are asked of a
//! job and drawn as "…" until it answers; the jump prompt's text is read by a job, with the
//! prompt saying so meanwhile; the script's own error keeps the prompt open.

mod tui_world_support;

use nbook::tui::action::{Action, Effect};
use nbook::tui::app::AppState;
use nbook::tui::input::Overlay;
use nbook::tui::world::jobs::WorldJob;
use nbook::tui::world::overlay::WorldOverlay;
use nbook::tui::world::LABEL_PENDING;
use nbook::world::prepare::NewPatch;
use nbook::world::schema::Op;
use serde_json::json;
use tui_world_support::*;

/// Years of 400 days, counted from the founding.
const AGES_JS: &str = r#"const DAY = 86400n, YEAR = 400n * 86400n;
export function format(t) {
  const y = t >= 0n ? t / YEAR : -((-t + YEAR - 1n) / YEAR);
  const rest = t - y * YEAR;
  return `Year ${y} day ${rest / DAY}`;
}
export function parse(text) {
  const m = /^Year (-?\d+) day (\d+)$/.exec(text.trim());
  if (!m) throw new SyntaxError(`expected "Year N day D", got ${JSON.stringify(text)}`);
  return BigInt(m[1]) * YEAR + BigInt(m[2]) * DAY;
}
"#;

fn script_book() -> Book {
    let b = empty_book();
    let we = b.root.join("world-engine");
    std::fs::create_dir_all(&we).unwrap();
    std::fs::write(
        we.join("calendar.toml"),
        "kind = \"custom\"\nscript = \"ages.js\"\n",
    )
    .unwrap();
    std::fs::write(we.join("ages.js"), AGES_JS).unwrap();
    for (time, age) in [("Year 3 day 10", 30), ("Year 5 day 0", 32)] {
        b.write(
            time,
            "Keeper's age",
            "event",
            vec![NewPatch {
                subject_id: "char-ada".into(),
                path: "/age".into(),
                op: Op::Replace,
                value: Some(json!(age)),
                summary: None,
                declared_type: Some("character".into()),
                name: Some("Ada".into()),
            }],
        );
    }
    b
}

fn label_jobs(fx: &[Effect]) -> Vec<Vec<i64>> {
    fx.iter()
        .filter_map(|f| match f {
            Effect::WorldJob {
                job: WorldJob::Labels(ts),
                ..
            } => Some(ts.clone()),
            _ => None,
        })
        .collect()
}

fn prompt_error(app: &AppState) -> Option<String> {
    match &app.overlay {
        Some(Overlay::World(o)) => match o.as_ref() {
            WorldOverlay::Jump { error, .. } => error.clone(),
            WorldOverlay::Find { .. } => None,
        },
        _ => None,
    }
}

#[test]
fn labels_come_from_a_job_and_show_pending_until_then() {
    let b = script_book();
    let mut app = b.app(90, 24);
    // Loaded and labelled by the jobs: the cursor sits on the last slice.
    assert_eq!(app.world.cursor, b.instant("Year 5 day 0"));
    assert_eq!(app.world.cursor_label, "Year 5 day 0");
    assert!(!app.world.window.first_label.is_empty());
    assert_ne!(app.world.window.first_label, LABEL_PENDING);

    // One step back: `update` asks for the new label instead of running the script.
    let fx = press(&mut app, "[");
    assert_eq!(app.world.cursor, b.instant("Year 3 day 10"));
    assert_eq!(app.world.cursor_label, LABEL_PENDING);
    let asked = label_jobs(&fx);
    assert_eq!(asked.len(), 1, "one labels job: {fx:?}");
    assert!(asked[0].contains(&app.world.cursor));
    let screen = render(&mut app, 90, 24);
    assert!(screen.contains(LABEL_PENDING), "{screen}");

    // The job's answer relabels the cursor; nothing more is asked for it.
    let rest = b.run(&mut app, fx);
    assert!(label_jobs(&rest).is_empty());
    assert_eq!(app.world.cursor_label, "Year 3 day 10");
    let screen = render(&mut app, 90, 24);
    assert!(screen.contains("Year 3 day 10"), "{screen}");

    // A label already known is not asked again.
    let fx = press(&mut app, "]");
    assert_eq!(app.world.cursor_label, "Year 5 day 0");
    assert!(label_jobs(&fx)
        .iter()
        .all(|ts| !ts.contains(&app.world.cursor)));
    b.run(&mut app, fx);
}

#[test]
fn the_jump_prompt_is_read_by_a_job() {
    let b = script_book();
    let mut app = b.app(90, 24);
    b.keys(&mut app, "t");
    app.update(Action::Paste("Year 4 day 7".into()));
    let fx = press(&mut app, "<Enter>");
    assert!(
        fx.iter().any(|f| matches!(
            f,
            Effect::WorldJob {
                job: WorldJob::Parse(text),
                ..
            } if text == "Year 4 day 7"
        )),
        "{fx:?}"
    );
    // Still open, saying what it waits for; a second Enter asks nothing more.
    assert!(matches!(app.overlay, Some(Overlay::World(_))));
    insta::assert_snapshot!("script_calendar_jump_reading", render(&mut app, 90, 24));
    assert!(press(&mut app, "<Enter>").is_empty());

    b.run(&mut app, fx);
    assert!(app.overlay.is_none());
    assert_eq!(app.world.cursor, b.instant("Year 4 day 7"));
    assert_eq!(app.status.as_ref().unwrap().text, "Cursor at Year 4 day 7");
}

#[test]
fn the_scripts_error_keeps_the_prompt_open_and_esc_drops_a_late_answer() {
    let b = script_book();
    let mut app = b.app(90, 24);
    let before = app.world.cursor;
    b.keys(&mut app, "t");
    app.update(Action::Paste("next Tuesday".into()));
    b.keys(&mut app, "<Enter>");
    let e = prompt_error(&app).expect("the script's error");
    assert!(e.contains("expected \"Year N day D\""), "{e}");
    assert_eq!(app.world.cursor, before);

    // Cancelled while the job reads the text: its answer changes nothing.
    press(&mut app, "<Esc> t");
    app.update(Action::Paste("Year 1 day 1".into()));
    let fx = press(&mut app, "<Enter> <Esc>");
    assert!(app.overlay.is_none());
    b.run(&mut app, fx);
    assert!(app.overlay.is_none());
    assert_eq!(app.world.cursor, before);
}
