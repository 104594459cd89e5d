//! The Artifacts view end to end with the real binary in a real terminal (tmux): an image and
//! a character sheet registered headless with `nbook call fn_artifact_register --approve`, then
//! nbook opened on the project; `6` then `A` lists both, the sheet's text shows on the right,
//! `j` selects the map and shows its plain facts (tmux speaks no image protocol), `A` goes
//! back to the board.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where a missing tmux is a failure.

use std::time::Duration;

use base64::Engine as _;

// The driver has more than this test uses.
#[allow(dead_code)]
mod tmux_support;
use tmux_support::{skip_without_tmux, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[test]
fn the_artifacts_view_lists_shows_text_and_falls_back_for_images() {
    if skip_without_tmux() {
        return;
    }
    let book = tmux_support::Book::init(None);
    let (home, dir, p) = (&book.home, &book.dir, book.path.clone());
    let nbook = |args: &[&str]| book.nbook(args);
    std::fs::create_dir_all(dir.join("art")).unwrap();
    std::fs::write(
        dir.join("art/map.png"),
        base64::engine::general_purpose::STANDARD
            .decode(PNG_1X1)
            .unwrap(),
    )
    .unwrap();
    for args in [
        r#"{"type":"image","title":"Map of the lagoon","path":"art/map.png"}"#,
        r##"{"type":"document","title":"Lucia character sheet","content":"# Lucia\nAfraid of deep water."}"##,
    ] {
        let out = nbook(&[
            "call",
            "fn_artifact_register",
            "--project",
            &p,
            "--profile",
            "executor",
            "--approve",
            "--args",
            args,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }

    let t = Tmux::start(
        &format!("nbook-e2e-artifacts-{}", std::process::id()),
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
    t.wait_for("the Board", long, |s| s.contains("6 Board"));
    t.keys(&["A"]);
    let s = t.wait_for("the list and the sheet", long, |s| {
        s.contains("Artifacts (2)") && s.contains("Afraid of deep water.")
    });
    assert!(
        s.contains("ART-002 document") && s.contains("ART-001 image"),
        "{s}"
    );
    t.keys(&["j"]);
    // The facts show at once; the image line replaces "loading…" when its read is done.
    let s = t.wait_for("the map's facts and the image fallback", long, |s| {
        s.contains("1×1 pixels") && s.contains("shows no images here")
    });
    assert!(s.contains("path .nbook/artifacts/ART-001.png"), "{s}");
    t.keys(&["A"]);
    t.wait_for("the board again", long, |s| {
        s.contains("No tasks on the board yet")
    });
    t.keys(&["q"]);
}
