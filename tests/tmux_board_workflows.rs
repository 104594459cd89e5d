//! The Workflows view end to end with the real binary in a real terminal (tmux): `6` then
//! `W` lists builtin:chapter and draws its graph; `e` opens the settings form, a bad value is
//! refused in the form with the engine's rejection code, a good one is the author's
//! `fn_workflow_settings set` and the view shows it `stored`; the database holds it, and a
//! headless `nbook call fn_workflow_settings` get (no approval needed) reads the same
//! effective value.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where a missing tmux is a failure.

use std::time::Duration;

mod tmux_support;
use tmux_support::{skip_without_tmux, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

#[test]
fn a_workflow_setting_is_set_from_the_workflows_view() {
    if skip_without_tmux() {
        return;
    }
    let book = tmux_support::Book::init(None);
    let (home, dir, p) = (&book.home, &book.dir, book.path.clone());
    let name = format!("nbook-e2e-workflows-{}", std::process::id());
    let t = Tmux::start(
        &name,
        &format!(
            "env NBOOK_HOME='{}' TERM=xterm-256color '{}' '{}'",
            home.display(),
            BIN,
            p
        ),
    );
    let long = Duration::from_secs(60);
    t.wait_for("the TUI", long, |s| s.contains("1 Files"));
    t.keys(&["6"]);
    t.keys(&["W"]);
    t.wait_for("the Workflows view", long, |s| {
        s.contains("Workflows (1)") && s.contains("Columns and their nodes")
    });
    t.keys(&["e"]);
    t.wait_for("the settings form", long, |s| {
        s.contains("Setting of builtin:chapter")
    });
    t.type_text("maxReviewRevisions = 0");
    t.keys(&["Enter"]);
    t.wait_for("the refusal in the form", long, |s| {
        s.contains("type-mismatch")
    });
    t.keys(&["Escape"]);
    t.keys(&["e"]);
    t.wait_for("the settings form again", long, |s| {
        s.contains("Setting of builtin:chapter")
    });
    t.type_text("maxReviewRevisions = 2");
    t.keys(&["Enter"]);
    t.wait_for("the stored value", long, |s| {
        s.contains("Settings of builtin:chapter")
    });
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));

    let db = rusqlite::Connection::open(dir.join(".nbook/project.sqlite")).unwrap();
    let values: String = db
        .query_row(
            "SELECT \"values\" FROM nbook_board_workflow_settings WHERE workflow_id = 'builtin:chapter'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(values, r#"{"maxReviewRevisions":2}"#);
    let out = book.nbook(&[
        "call",
        "fn_workflow_settings",
        "--project",
        &p,
        "--profile",
        "executor",
        "--args",
        r#"{"action": "get", "workflow_id": "builtin:chapter"}"#,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v.to_string();
    assert!(text.contains(r#""maxReviewRevisions":2"#), "{text}");
}
