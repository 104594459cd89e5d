//! Calls that waited across a restart, as the Approvals pane shows them: `↻` for one whose
//! target is unchanged (deciding it continues the session's run), `⚠ stale` for one whose
//! target changed while nbook was closed. `y` on a stale call never approves it: it asks the
//! engine to preview it anew, and only the new preview can be approved.

mod tui_support;

use nbook::engine::pending_store::RestoredCall;
use nbook::engine::{ChangeKind, Decision, FileChange, Mode, PendingCall, PreviewBody};
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::{AppState, Pane};
use tui_support::*;

fn file_call(id: &str, path: &str, diff: &str) -> PendingCall {
    pending(
        id,
        "write",
        PreviewBody::Files {
            changes: vec![FileChange {
                path: path.into(),
                kind: ChangeKind::Update,
                move_to: None,
                diff: diff.into(),
                added: 1,
                removed: 1,
            }],
        },
        &format!("Edit {path} (+1 -1)"),
        true,
        Mode::Normal,
    )
}

const OLD: &str =
    "--- a/ch.md\n+++ b/ch.md\n@@ -1 +1 @@\n-The harbour was quiet.\n+The harbour was still.\n";
const NEW: &str = "--- a/ch.md\n+++ b/ch.md\n@@ -1 +1 @@\n-The author rewrote this line.\n+The harbour was still.\n";

/// Two restored calls (the second stale) and one that arrived after the open.
fn app() -> AppState {
    let calls = vec![
        file_call("ap-1", "notes/keeper.md", OLD),
        file_call("ap-2", "manuscript/ch.md", OLD),
        file_call("ap-3", "notes/new.md", OLD),
    ];
    let (mut app, _) = empty_app_with(120, 30, Vec::new(), calls);
    app.approvals
        .restored
        .insert("ap-1".into(), RestoredCall { stale: None });
    app.approvals.restored.insert(
        "ap-2".into(),
        RestoredCall {
            stale: Some("its target changed since the preview: manuscript/ch.md".into()),
        },
    );
    app.focus = Pane::Approvals;
    app
}

#[test]
fn a_restored_call_and_a_stale_one_snapshot() {
    let mut app = app();
    insta::assert_snapshot!("restored_unchanged_120x30", render(&mut app, 120, 30));
    press(&mut app, "j");
    insta::assert_snapshot!("restored_stale_120x30", render(&mut app, 120, 30));
}

#[test]
fn y_on_a_stale_call_previews_it_anew_and_only_the_new_preview_is_approved() {
    let mut app = app();
    press(&mut app, "j");
    let fx = press(&mut app, "y");
    assert_eq!(
        fx,
        vec![Effect::Repreview {
            call_id: "ap-2".into()
        }],
        "a stale call was decided"
    );
    assert_eq!(app.approvals.len(), 3, "the stale call must keep waiting");
    let screen = render(&mut app, 120, 30);
    assert!(screen.contains("Not approved"), "{screen}");

    // The engine's fresh preview replaces the old one in place.
    let fresh = file_call("ap-2", "manuscript/ch.md", NEW);
    app.update(Action::Repreviewed {
        call_id: "ap-2".into(),
        result: Ok(fresh.clone()),
    });
    assert_eq!(app.approvals.selected_call(), Some(&fresh));
    assert_eq!(app.approvals.stale_reason("ap-2"), None);
    let screen = render(&mut app, 120, 30);
    assert!(screen.contains("The author rewrote this line."), "{screen}");
    assert!(screen.contains("Previewed anew"), "{screen}");

    let fx = press(&mut app, "y");
    assert_eq!(
        fx,
        vec![Effect::Decide {
            call_id: "ap-2".into(),
            decision: Decision::Approve
        }]
    );
}

#[test]
fn a_failed_repreview_says_why_and_the_call_stays_stale() {
    let mut app = app();
    press(&mut app, "j");
    press(&mut app, "y");
    app.update(Action::Repreviewed {
        call_id: "ap-2".into(),
        result: Err("it can no longer be previewed: no such file".into()),
    });
    assert!(app.approvals.stale_reason("ap-2").is_some());
    let screen = render(&mut app, 120, 30);
    assert!(screen.contains("could not be previewed anew"), "{screen}");
    // Still no approval by `y`; `n` rejects as ever.
    assert!(matches!(
        press(&mut app, "y").as_slice(),
        [Effect::Repreview { .. }]
    ));
}

#[test]
fn y_on_a_restored_call_whose_target_is_unchanged_decides_it() {
    let mut app = app();
    let fx = press(&mut app, "y");
    assert_eq!(
        fx,
        vec![Effect::Decide {
            call_id: "ap-1".into(),
            decision: Decision::Approve
        }]
    );
}
