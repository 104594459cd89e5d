//! Key-sequence tests: keys in keymap notation drive `AppState::handle_key` / `update`, and
//! the emitted effects and state are checked — approvals (y, a, n, e), the typing guard with a
//! stepped clock, focus keys, the quit dialog, engine events, mode switching, mouse focus.

mod tui_support;

use std::time::Duration;

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use nbook::engine::{Decision, EngineEvent, Mode, SessionState};
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::input::Overlay;
use tui_support::*;

fn approvals_app() -> (AppState, nbook::tui::clock::ManualClock) {
    let (mut app, clock) = empty_app_with(
        100,
        30,
        vec![session(
            "1",
            "leader.default",
            Mode::Normal,
            SessionState::WaitingApproval,
            None,
        )],
        vec![write_call(), command_call()],
    );
    press(&mut app, "5");
    assert_eq!(app.focus, Pane::Approvals);
    (app, clock)
}

fn decide(call: &str, decision: Decision) -> Effect {
    Effect::Decide {
        call_id: call.into(),
        decision,
    }
}

#[test]
fn y_approves_the_selected_call() {
    let (mut app, _) = approvals_app();
    let fx = press(&mut app, "y");
    assert_eq!(fx, [decide("call-write", Decision::Approve)]);
    assert_eq!(app.approvals.len(), 1);
    assert!(app
        .status
        .as_ref()
        .unwrap()
        .text
        .starts_with("✔ approved write manuscript/"));
    // The next call is selected; j/k move; y approves that one.
    let fx = press(&mut app, "y");
    assert_eq!(fx, [decide("call-bash", Decision::Approve)]);
    assert!(press(&mut app, "y").is_empty());
}

#[test]
fn selection_moves_with_j_and_k() {
    let (mut app, _) = approvals_app();
    press(&mut app, "j");
    assert_eq!(
        press(&mut app, "y"),
        [decide("call-bash", Decision::Approve)]
    );
}

#[test]
fn a_approves_for_session_only_when_offered() {
    let (mut app, _) = approvals_app();
    // write: grant allowed.
    assert_eq!(
        press(&mut app, "a"),
        [decide("call-write", Decision::ApproveForSession)]
    );
    // bash in discuss mode: not offered; nothing is sent and the status bar says why.
    assert!(press(&mut app, "a").is_empty());
    let msg = &app.status.as_ref().unwrap().text;
    assert!(msg.contains("discuss mode"), "{msg}");
    assert_eq!(app.approvals.len(), 1);
}

#[test]
fn n_then_reason_then_enter_rejects_with_the_reason() {
    let (mut app, clock) = approvals_app();
    assert!(press(&mut app, "n").is_empty());
    assert!(matches!(app.overlay, Some(Overlay::RejectReason { .. })));
    assert!(press(&mut app, "t o o <Space> l o n g").is_empty());
    clock.advance(Duration::from_millis(10));
    let fx = press(&mut app, "<Enter>");
    assert_eq!(
        fx,
        [decide(
            "call-write",
            Decision::Reject {
                reason: Some("too long".into())
            }
        )]
    );
    assert!(app.overlay.is_none());
    assert!(app
        .status
        .as_ref()
        .unwrap()
        .text
        .contains("✗ rejected write"));
}

#[test]
fn n_then_enter_rejects_without_reason() {
    let (mut app, _) = approvals_app();
    let fx = press(&mut app, "n <Enter>");
    assert_eq!(
        fx,
        [decide("call-write", Decision::Reject { reason: None })]
    );
}

#[test]
fn n_then_esc_sends_nothing() {
    let (mut app, _) = approvals_app();
    assert!(press(&mut app, "n h i <Esc>").is_empty());
    assert!(app.overlay.is_none());
    assert_eq!(app.approvals.len(), 2);
}

#[test]
fn json_edit_with_invalid_json_sends_nothing_and_shows_an_error() {
    let (mut app, _) = approvals_app();
    assert!(press(&mut app, "E").is_empty());
    assert!(press(&mut app, "x <C-s>").is_empty());
    match &app.overlay {
        Some(Overlay::EditArgs { error: Some(e), .. }) => {
            assert!(e.contains("Not valid JSON"), "{e}")
        }
        other => panic!("expected the editor with an error, got {other:?}"),
    }
    assert_eq!(app.approvals.len(), 2);
}

#[test]
fn json_edit_with_valid_json_asks_the_engine_then_closes_on_success() {
    let (mut app, _) = approvals_app();
    press(&mut app, "E");
    // Enter inserts a new line in the editor (the JSON stays valid).
    let fx = press(&mut app, "<Enter> <C-s>");
    let expected = Effect::EditArgs {
        call_id: "call-write".into(),
        tool: "write".into(),
        args: write_call().args,
    };
    assert_eq!(fx, [expected]);
    // A schema error comes back: shown in the editor, nothing sent, editor stays open.
    app.update(Action::EditChecked {
        call_id: "call-write".into(),
        result: Err("write: /content: required".into()),
    });
    match &app.overlay {
        Some(Overlay::EditArgs {
            error: Some(e),
            checking: false,
            ..
        }) => assert!(e.contains("/content")),
        other => panic!("editor should show the engine's error: {other:?}"),
    }
    // Submitting again and succeeding closes it and removes the call.
    assert_eq!(press(&mut app, "<C-s>").len(), 1);
    app.update(Action::EditChecked {
        call_id: "call-write".into(),
        result: Ok(()),
    });
    assert!(app.overlay.is_none());
    assert_eq!(app.approvals.len(), 1);
}

#[test]
fn typing_guard_blocks_approval_keys_for_one_second() {
    let (mut app, clock) = approvals_app();
    // Type into the palette, close it, press y at once: ignored.
    press(&mut app, ": x <Esc>");
    assert!(app.overlay.is_none());
    assert!(press(&mut app, "y").is_empty());
    assert!(app
        .status
        .as_ref()
        .unwrap()
        .text
        .contains("pause for 1 s after typing"));
    assert!(press(&mut app, "n").is_empty());
    assert!(
        app.overlay.is_none(),
        "n must not open the reject prompt during the guard"
    );
    clock.advance(Duration::from_millis(900));
    assert!(press(&mut app, "y").is_empty());
    clock.advance(Duration::from_millis(150));
    assert_eq!(
        press(&mut app, "y"),
        [decide("call-write", Decision::Approve)]
    );
}

#[test]
fn only_key_presses_count() {
    let (mut app, _) = approvals_app();
    let mut release = KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE);
    release.kind = KeyEventKind::Release;
    assert!(app.handle_key(release).is_empty());
    let mut repeat = release;
    repeat.kind = KeyEventKind::Repeat;
    assert!(app.handle_key(repeat).is_empty());
    assert_eq!(app.approvals.len(), 2);
}

#[test]
fn approval_keys_do_nothing_outside_the_approvals_pane() {
    let (mut app, _) = approvals_app();
    press(&mut app, "1");
    assert!(press(&mut app, "y").is_empty());
    assert_eq!(app.approvals.len(), 2);
}

#[test]
fn tab_and_digits_focus_panes() {
    let (mut app, _) = empty_app(80, 24);
    assert_eq!(app.focus, Pane::Files);
    let order: Vec<Pane> = (0..6)
        .map(|_| {
            press(&mut app, "<Tab>");
            app.focus
        })
        .collect();
    assert_eq!(
        order,
        [
            Pane::Story,
            Pane::World,
            Pane::Sessions,
            Pane::Approvals,
            Pane::Board,
            Pane::Files
        ]
    );
    for (k, p) in [
        ("1", Pane::Files),
        ("2", Pane::Story),
        ("3", Pane::World),
        ("4", Pane::Sessions),
        ("5", Pane::Approvals),
        ("6", Pane::Board),
    ] {
        press(&mut app, k);
        assert_eq!(app.focus, p, "{k}");
    }
}

#[test]
fn q_asks_first_when_a_call_is_pending() {
    let (mut app, _) = approvals_app();
    assert!(press(&mut app, "q").is_empty());
    match &app.overlay {
        Some(Overlay::ConfirmQuit { lines }) => {
            assert!(lines.iter().any(|l| l.contains("wait for approval")))
        }
        other => panic!("expected the quit dialog, got {other:?}"),
    }
    // Esc stays; q then y quits.
    assert!(press(&mut app, "<Esc>").is_empty());
    assert!(app.overlay.is_none());
    assert_eq!(press(&mut app, "q y"), [Effect::Quit]);
}

#[test]
fn q_quits_at_once_when_idle() {
    let (mut app, _) = empty_app(80, 24);
    assert_eq!(press(&mut app, "q"), [Effect::Quit]);
}

#[test]
fn resolved_elsewhere_removes_without_sending() {
    let (mut app, _) = approvals_app();
    press(&mut app, "<Enter>");
    assert!(matches!(app.overlay, Some(Overlay::Detail { .. })));
    let fx = app.update(Action::Engine(EngineEvent::ApprovalResolved {
        approval_id: "call-write".into(),
        decision: "approve".into(),
    }));
    assert!(fx.is_empty());
    assert!(app.overlay.is_none());
    assert_eq!(app.approvals.len(), 1);
    // A request that arrives later is queued at the end (FIFO).
    app.update(Action::Engine(EngineEvent::ApprovalRequested {
        call: text_call(),
    }));
    assert_eq!(app.approvals.calls().last().unwrap().call_id, "call-mode");
}

#[test]
fn approve_from_the_detail_overlay() {
    let (mut app, _) = approvals_app();
    let fx = press(&mut app, "<Enter> j y");
    assert_eq!(fx, [decide("call-write", Decision::Approve)]);
    assert!(app.overlay.is_none());
}

#[test]
fn shift_tab_cycles_the_focused_session_mode() {
    let (mut app, _) = approvals_app();
    press(&mut app, "4");
    assert_eq!(
        press(&mut app, "<S-Tab>"),
        [Effect::SetMode {
            session_id: "1".into(),
            mode: Mode::Discuss
        }]
    );
    let (mut app, _) = empty_app(80, 24);
    assert!(press(&mut app, "<S-Tab>").is_empty());
}

#[test]
fn palette_runs_the_chosen_action() {
    let (mut app, _) = approvals_app();
    press(&mut app, "1");
    press(&mut app, ": f o c u s <Space> s e s s");
    press(&mut app, "<Enter>");
    assert_eq!(app.focus, Pane::Sessions);
}

#[test]
fn mouse_click_focuses_and_wheel_scrolls() {
    let (mut app, _) = approvals_app();
    let r = app.regions();
    let story = r.panes[Pane::Story.index()];
    let click = MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: story.x + 2,
        row: story.y + 1,
        modifiers: KeyModifiers::NONE,
    };
    app.update(Action::Mouse(click));
    assert_eq!(app.focus, Pane::Story);
    let r = app.regions();
    let approvals = r.panes[Pane::Approvals.index()];
    let wheel = MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: approvals.x + 1,
        row: approvals.y + 1,
        modifiers: KeyModifiers::NONE,
    };
    app.update(Action::Mouse(wheel));
    assert_eq!(app.approvals.selected, 1);
    assert_eq!(app.focus, Pane::Story);
}

#[test]
fn finder_reveals_the_chosen_file() {
    let (mut app, _) = empty_app(100, 30);
    let fx = app.start();
    let root = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadDir { ticket, .. } => Some(*ticket),
            _ => None,
        })
        .unwrap();
    app.update(Action::DirLoaded {
        ticket: root,
        dir: "".into(),
        result: Ok(vec![nbook::tui::files::tree::DirEntry {
            name: "lorebook".into(),
            is_dir: true,
        }]),
    });
    let walk = app.files.walk_ticket.unwrap();
    app.update(Action::FilesWalked {
        ticket: walk,
        paths: std::sync::Arc::new(vec!["lorebook/mira.md".into()]),
    });
    press(&mut app, "/");
    let fx = press(&mut app, "<Enter>");
    // The folder must be listed first; then the file is selected and previewed.
    let t = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadDir { ticket, dir } if dir == "lorebook" => Some(*ticket),
            _ => None,
        })
        .expect("lists lorebook");
    let fx = app.update(Action::DirLoaded {
        ticket: t,
        dir: "lorebook".into(),
        result: Ok(vec![nbook::tui::files::tree::DirEntry {
            name: "mira.md".into(),
            is_dir: false,
        }]),
    });
    assert_eq!(
        app.files.tree.selected_node().unwrap().path,
        "lorebook/mira.md"
    );
    assert!(fx
        .iter()
        .any(|f| matches!(f, Effect::LoadPreview { path, .. } if path == "lorebook/mira.md")));
}

#[test]
fn stale_job_results_are_dropped() {
    let (mut app, _) = empty_app(100, 30);
    let fx = app.start();
    let root = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadDir { ticket, .. } => Some(*ticket),
            _ => None,
        })
        .unwrap();
    app.update(Action::DirLoaded {
        ticket: root + 1000,
        dir: "".into(),
        result: Ok(vec![nbook::tui::files::tree::DirEntry {
            name: "stale".into(),
            is_dir: false,
        }]),
    });
    // Root is still loading under the right ticket; the stale result was ignored.
    assert!(app.files.tree.rows().is_empty());
    let story = app.story.loading.unwrap();
    app.update(Action::StoryLoaded {
        ticket: story + 1000,
        result: Ok(story_data()),
    });
    assert!(app.story.data.is_none());
}

fn story_data() -> nbook::tui::story::data::StoryData {
    tui_support::story()
}

#[test]
fn files_changed_marks_and_reloads() {
    let (mut app, _) = full_app(100, 30);
    let fx = app.update(Action::Engine(EngineEvent::FilesChanged {
        session_id: "1".into(),
        paths: vec!["manuscript/001-volume/002-chapter/index.md".into()],
    }));
    assert!(app
        .files
        .changed
        .contains("manuscript/001-volume/002-chapter/index.md"));
    // Its folder is not listed yet, so the nearest listed ancestor reloads.
    assert!(fx
        .iter()
        .any(|f| matches!(f, Effect::LoadDir { dir, .. } if dir == "manuscript/001-volume")));
}

#[test]
fn scrolling_is_clamped_so_up_works_after_bottom() {
    let (mut app, _) = full_app(80, 24);
    press(&mut app, "?");
    press(&mut app, "G");
    let bottom = match &app.overlay {
        Some(Overlay::Help { scroll }) => *scroll,
        other => panic!("help expected, got {other:?}"),
    };
    assert!(bottom > 0 && bottom < 1000, "{bottom}");
    press(&mut app, "k");
    assert!(matches!(&app.overlay, Some(Overlay::Help { scroll }) if *scroll == bottom - 1));
    press(&mut app, "<Esc> 2 G");
    let s = app.story.selected;
    assert!(s > 0);
    press(&mut app, "k");
    assert_eq!(app.story.selected, s - 1);
}

/// Issue 11 item 12: two names that are not UTF-8 and used to print alike as `bad�` are
/// listed as two rows, shown with their bytes escaped, and opening the second previews the
/// second (the tree keys entries by the real name). Uses real files and the real jobs.
#[test]
fn non_utf8_names_are_distinct_and_open_the_right_file() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let first = std::ffi::OsStr::from_bytes(b"bad\xfe.md");
    let second = std::ffi::OsStr::from_bytes(b"bad\xff.md");
    std::fs::write(dir.path().join(first), "the first file\n").unwrap();
    std::fs::write(dir.path().join(second), "the second file\n").unwrap();
    let (mut app, _) = empty_app(60, 12);
    let fx = app.start();
    let root = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadDir { ticket, .. } => Some(*ticket),
            _ => None,
        })
        .unwrap();
    let listing = nbook::tui::files::jobs::list_dir(dir.path(), &"".into()).unwrap();
    assert_eq!(listing.len(), 2);
    app.update(Action::DirLoaded {
        ticket: root,
        dir: "".into(),
        result: Ok(listing),
    });
    let shown: Vec<String> = app
        .files
        .tree
        .rows()
        .iter()
        .map(|&r| app.files.tree.node(r).unwrap().path.to_string())
        .collect();
    assert_eq!(shown, ["bad\\xfe.md", "bad\\xff.md"]);
    app.focus = nbook::tui::app::Pane::Files;
    let fx = press(&mut app, "j");
    let (ticket, path) = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadPreview { ticket, path } => Some((*ticket, path.clone())),
            _ => None,
        })
        .expect("moving to the second row previews it");
    assert_eq!(path.as_os_str(), second);
    let doc = nbook::tui::files::jobs::read_preview(dir.path(), &path).unwrap();
    assert_eq!(doc.lines.len(), 1);
    app.update(Action::PreviewLoaded {
        ticket,
        path,
        result: Ok(doc),
    });
    let screen = render(&mut app, 60, 12);
    assert!(
        screen.contains("bad\\xff.md") && screen.contains("bad\\xfe.md"),
        "{screen}"
    );
    assert!(screen.contains("the second file"), "{screen}");
    assert!(screen.contains("not UTF-8"), "{screen}");
    insta::assert_snapshot!("files_non_utf8_names_60x12", screen);
}
