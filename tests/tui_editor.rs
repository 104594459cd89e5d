//! The author's editor, Ctrl+Z and notifications, on the UI side: which keys hand which text
//! to the editor (as `Effect::Editor`), what the UI does with what comes back (status line,
//! text put back in its field, a call's edited arguments sent for checking), and when a
//! waiting call notifies (not on the Approvals pane unless the terminal is unfocused; once per
//! call). Snapshots show the messages and the status bar's count of waiting calls. The
//! hand-over itself, on a real engine and project, is in `tui_editor_handover.rs`; the real
//! binary with a real `$EDITOR` in tmux is in `tmux_e2e.rs`.

mod tui_support;

use nbook::engine::{EngineEvent, Mode, SessionState};
use nbook::tui::action::{Action, EditorDone, EditorJob, Effect, FileSaved, TextTarget};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::input::{text_of, Overlay};
use nbook::tui::notify::{Desktop, NotifyConfig};
use serde_json::json;
use tui_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn snap(name: &str, build: impl Fn(u16, u16) -> AppState) {
    for (w, h) in SIZES {
        let mut app = build(w, h);
        let screen = render(&mut app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

fn status(app: &AppState) -> String {
    app.status
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default()
}

fn approvals_app() -> AppState {
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
    clock.advance(std::time::Duration::from_secs(2));
    app
}

const CHAPTER_PATH: &str = "manuscript/001-volume/001-chapter/index.md";

#[test]
fn e_in_files_hands_the_selected_file_to_the_editor_and_not_a_folder() {
    let (mut app, _) = full_app(120, 40);
    app.focus = Pane::Files;
    assert_eq!(
        press(&mut app, "e"),
        [Effect::Editor(EditorJob::File {
            path: CHAPTER_PATH.into()
        })]
    );
    assert!(app.files.tree.select_path("manuscript"));
    assert!(press(&mut app, "e").is_empty());
    assert!(status(&app).contains("folder"), "{}", status(&app));
}

#[test]
fn a_saved_file_says_so_and_reloads_its_preview_and_an_unchanged_one_says_no_changes() {
    let (mut app, _) = full_app(120, 40);
    app.focus = Pane::Files;
    let fx = app.update(Action::EditorDone(EditorDone::File {
        path: CHAPTER_PATH.into(),
        result: Ok(FileSaved::Saved {
            summary: "14 → 15 lines".into(),
        }),
    }));
    assert!(
        fx.iter()
            .any(|f| matches!(f, Effect::LoadPreview { path, .. } if path.shown() == CHAPTER_PATH)),
        "{fx:?}"
    );
    assert!(status(&app).contains("logged as yours"), "{}", status(&app));
    app.update(Action::EditorDone(EditorDone::File {
        path: CHAPTER_PATH.into(),
        result: Ok(FileSaved::Unchanged),
    }));
    assert!(
        status(&app).starts_with("No changes to "),
        "{}",
        status(&app)
    );
}

#[test]
fn snapshot_file_saved_from_the_editor() {
    snap("editor_file_saved", |w, h| {
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Files;
        app.update(Action::EditorDone(EditorDone::File {
            path: CHAPTER_PATH.into(),
            result: Ok(FileSaved::Saved {
                summary: "14 → 15 lines".into(),
            }),
        }));
        app
    });
}

#[test]
fn snapshot_file_unchanged_in_the_editor() {
    snap("editor_file_unchanged", |w, h| {
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Files;
        app.update(Action::EditorDone(EditorDone::File {
            path: CHAPTER_PATH.into(),
            result: Ok(FileSaved::Unchanged),
        }));
        app
    });
}

#[test]
fn snapshot_editor_not_found() {
    snap("editor_not_found", |w, h| {
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Files;
        app.update(Action::EditorDone(EditorDone::File {
            path: CHAPTER_PATH.into(),
            result: Err("the editor `no-such-editor` (from $EDITOR) was not found; set $VISUAL or $EDITOR to an editor that is installed. Nothing was changed".into()),
        }));
        app
    });
}

#[test]
fn e_on_a_write_opens_the_proposed_file_and_on_bash_the_json_editor() {
    let mut app = approvals_app();
    let call = write_call();
    assert_eq!(
        press(&mut app, "e"),
        [Effect::Editor(EditorJob::Proposal {
            approval_id: call.approval_id.clone(),
            tool: "write".into(),
            args: call.args.clone(),
        })]
    );
    assert!(app.overlay.is_none());
    // E is always the JSON editor.
    assert!(press(&mut app, "E").is_empty());
    assert!(matches!(app.overlay, Some(Overlay::EditArgs { .. })));
    press(&mut app, "<Esc>");
    // bash proposes no file: `e` edits its JSON.
    press(&mut app, "j");
    assert!(press(&mut app, "e").is_empty());
    match &app.overlay {
        Some(Overlay::EditArgs { tool, .. }) => assert_eq!(tool, "bash"),
        other => panic!("JSON editor expected, got {other:?}"),
    }
}

#[test]
fn an_edited_proposal_is_sent_for_checking_and_an_unchanged_one_still_waits() {
    let mut app = approvals_app();
    let id = write_call().approval_id;
    let args = json!({"path": CHAPTER_PATH, "content": "The harbour was loud.\n"});
    let fx = app.update(Action::EditorDone(EditorDone::Proposal {
        approval_id: id.clone(),
        tool: "write".into(),
        result: Ok(Some(args.clone())),
    }));
    assert_eq!(
        fx,
        [Effect::EditArgs {
            call_id: id.clone(),
            tool: "write".into(),
            args
        }]
    );
    let fx = app.update(Action::EditorDone(EditorDone::Proposal {
        approval_id: id.clone(),
        tool: "write".into(),
        result: Ok(None),
    }));
    assert!(fx.is_empty());
    assert!(status(&app).contains("still waits"), "{}", status(&app));
    assert_eq!(app.approvals.len(), 2);
    // The call was decided meanwhile: nothing is sent.
    let fx = app.update(Action::EditorDone(EditorDone::Proposal {
        approval_id: "gone".into(),
        tool: "write".into(),
        result: Ok(Some(json!({}))),
    }));
    assert!(fx.is_empty());
    assert!(status(&app).contains("not sent"), "{}", status(&app));
}

#[test]
fn ctrl_e_in_the_reject_prompt_hands_its_text_over_and_puts_the_edit_back() {
    let mut app = approvals_app();
    press(&mut app, "n");
    press(&mut app, "t o");
    let fx = press(&mut app, "<C-e>");
    let id = write_call().approval_id;
    assert_eq!(
        fx,
        [Effect::Editor(EditorJob::Text {
            target: TextTarget::RejectReason {
                call_id: id.clone()
            },
            text: "to".into(),
            name: "reject-reason.md".into(),
        })]
    );
    app.update(Action::EditorDone(EditorDone::Text {
        target: TextTarget::RejectReason { call_id: id },
        result: Ok(Some("too long\nkeep it short\n".into())),
    }));
    match &app.overlay {
        Some(Overlay::RejectReason { input, .. }) => {
            assert_eq!(text_of(input), "too long\nkeep it short")
        }
        other => panic!("the reject prompt should stay open: {other:?}"),
    }
}

#[test]
fn snapshot_reject_reason_back_from_the_editor() {
    snap("editor_reject_reason_back", |w, h| {
        let (mut app, clock) = full_app(w, h);
        app.focus = Pane::Approvals;
        clock.advance(std::time::Duration::from_secs(2));
        press(&mut app, "n");
        let call_id = match &app.overlay {
            Some(Overlay::RejectReason { call_id, .. }) => call_id.clone(),
            _ => panic!("reject prompt expected"),
        };
        app.update(Action::EditorDone(EditorDone::Text {
            target: TextTarget::RejectReason { call_id },
            result: Ok(Some(
                "Keep the patch to chapter one.\nThe lorebook entry can wait.\n".into(),
            )),
        }));
        app
    });
}

#[test]
fn ctrl_e_in_the_argument_editor_and_the_composer() {
    let mut app = approvals_app();
    press(&mut app, "E");
    let fx = press(&mut app, "<C-e>");
    match fx.as_slice() {
        [Effect::Editor(EditorJob::Text {
            target: TextTarget::EditArgs { .. },
            text,
            name,
        })] => {
            assert!(text.contains("\"content\""), "{text}");
            assert_eq!(name, "arguments.json");
        }
        other => panic!("{other:?}"),
    }
    // The composer: the draft goes over, the edit comes back into it.
    let (mut app, _) = empty_app_with(
        100,
        30,
        vec![session(
            "7",
            "writer",
            Mode::Normal,
            SessionState::Idle,
            None,
        )],
        Vec::new(),
    );
    press(&mut app, "4 i");
    press(&mut app, "h i");
    let fx = press(&mut app, "<C-e>");
    assert_eq!(
        fx,
        [Effect::Editor(EditorJob::Text {
            target: TextTarget::Composer {
                session_id: "7".into()
            },
            text: "hi".into(),
            name: "message.md".into(),
        })]
    );
    app.update(Action::EditorDone(EditorDone::Text {
        target: TextTarget::Composer {
            session_id: "7".into(),
        },
        result: Ok(Some("Write chapter two.\nKeep it short.\n".into())),
    }));
    assert_eq!(
        text_of(app.sessions.drafts.get("7").unwrap()),
        "Write chapter two.\nKeep it short."
    );
    // A failed editor leaves the draft as it was.
    app.update(Action::EditorDone(EditorDone::Text {
        target: TextTarget::Composer {
            session_id: "7".into(),
        },
        result: Err("the editor `nope` (from $EDITOR) was not found".into()),
    }));
    assert_eq!(
        text_of(app.sessions.drafts.get("7").unwrap()),
        "Write chapter two.\nKeep it short."
    );
    assert!(status(&app).contains("as it was"), "{}", status(&app));
}

#[test]
fn ctrl_e_where_there_is_no_long_text_says_where_it_works() {
    let mut app = approvals_app();
    press(&mut app, ":");
    assert!(press(&mut app, "<C-e>").is_empty());
    assert!(status(&app).contains("composer"), "{}", status(&app));
}

#[test]
fn ctrl_z_suspends_from_a_pane_and_from_the_composer() {
    let mut app = approvals_app();
    assert_eq!(
        press(&mut app, "<C-z>"),
        [Effect::Editor(EditorJob::Suspend)]
    );
    press(&mut app, "4 i");
    assert_eq!(
        press(&mut app, "<C-z>"),
        [Effect::Editor(EditorJob::Suspend)]
    );
}

fn requested(app: &mut AppState, id: &str) -> Vec<Effect> {
    let mut call = write_call();
    call.approval_id = id.into();
    call.call_id = id.into();
    app.update(Action::Engine(EngineEvent::ApprovalRequested { call }))
}

fn notifications(fx: &[Effect]) -> Vec<&nbook::tui::notify::Notification> {
    fx.iter()
        .filter_map(|f| match f {
            Effect::Notify(n) => Some(n),
            _ => None,
        })
        .collect()
}

#[test]
fn a_waiting_call_notifies_once_when_the_author_is_elsewhere() {
    let (mut app, _) = full_app(120, 40);
    app.focus = Pane::Files;
    let fx = requested(&mut app, "ap-9");
    let n = notifications(&fx);
    assert_eq!(n.len(), 1, "{fx:?}");
    assert!(n[0].body.contains("session 1"), "{}", n[0].body);
    assert!(n[0].body.contains(CHAPTER_PATH), "{}", n[0].body);
    assert!(n[0].bell);
    assert_eq!(n[0].desktop, Desktop::Osc9);
    // The same call again (a duplicate event): no second notification.
    assert!(notifications(&requested(&mut app, "ap-9")).is_empty());
    // On the Approvals pane, with the terminal focused: none.
    app.focus = Pane::Approvals;
    assert!(notifications(&requested(&mut app, "ap-10")).is_empty());
    // On the Approvals pane with the terminal unfocused: one.
    app.update(Action::Focus(false));
    assert_eq!(notifications(&requested(&mut app, "ap-11")).len(), 1);
    app.update(Action::Focus(true));
    assert!(notifications(&requested(&mut app, "ap-12")).is_empty());
}

#[test]
fn notifications_follow_the_config() {
    let (mut app, _) = full_app(120, 40);
    app.focus = Pane::Story;
    app.notify = NotifyConfig {
        bell: false,
        desktop: Desktop::Off,
    };
    assert!(notifications(&requested(&mut app, "ap-20")).is_empty());
    app.notify = NotifyConfig {
        bell: false,
        desktop: Desktop::Osc777,
    };
    let fx = requested(&mut app, "ap-21");
    let n = notifications(&fx);
    assert_eq!(n.len(), 1);
    assert!(!n[0].bell);
    assert_eq!(n[0].desktop, Desktop::Osc777);
    assert!(n[0].bytes(false).starts_with("\x1b]777;notify;nbook: "));
}

#[test]
fn snapshot_status_bar_counts_waiting_calls_elsewhere() {
    snap("status_bar_waiting_count", |w, h| {
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Story;
        requested(&mut app, "ap-30");
        app
    });
}

#[test]
fn e_from_the_detail_of_a_write_closes_it_once_the_edit_is_approved() {
    let mut app = approvals_app();
    press(&mut app, "<Enter>");
    assert!(matches!(app.overlay, Some(Overlay::Detail { .. })));
    let fx = press(&mut app, "e");
    assert!(
        matches!(fx.as_slice(), [Effect::Editor(EditorJob::Proposal { .. })]),
        "{fx:?}"
    );
    let id = write_call().approval_id;
    app.update(Action::EditChecked {
        call_id: id,
        result: Ok(()),
    });
    assert!(app.overlay.is_none());
    assert_eq!(app.approvals.len(), 1);
    assert!(
        status(&app).contains("edited arguments"),
        "{}",
        status(&app)
    );
}
