//! The History view (`H` in Approvals) on a real temporary project and a real engine, driven
//! by keys and its real jobs: snapshots of the list (a grant, changes newest first with who and
//! the rule), an applied change full-screen (the prose-diff renderer, not JSON), the exact
//! reverse preview, the refusal when a later change touched the target and its "revert both"
//! plan; then `y` reverts both newest first and the file is restored byte for byte, and `u` on
//! the grant revokes it.

mod tui_story_support;

use std::sync::Arc;
use std::time::Duration;

use nbook::engine::{Approval, CallResult, Decision, Engine, Mode, ToolCall};
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::AppState;
use nbook::tui::history::jobs;
use nbook::tui::input::Overlay;
use serde_json::json;
use tui_story_support::*;

const W: u16 = 120;
const H: u16 = 32;

/// Run effects as the runtime would (History jobs; others dropped) until none are left.
fn run(engine: &Arc<Engine>, app: &mut AppState, fx: Vec<Effect>) {
    let mut queue = fx;
    while !queue.is_empty() {
        let next = match queue.remove(0) {
            Effect::HistoryJob { ticket, job } => {
                let _in_runtime = rt().enter();
                let result = jobs::run(engine, job);
                app.update(Action::HistoryJobDone { ticket, result })
            }
            _ => Vec::new(),
        };
        queue.extend(next);
    }
}

fn keys(b: &Book, app: &mut AppState, k: &str) {
    let fx = press(app, k);
    run(&b.engine, app, fx);
}

/// Dates and times of day ("2026-12-02 07:21", "07:21:03") as zeros: they change every run.
fn blanked(s: &str) -> String {
    let mut out: Vec<char> = blank_timestamps(s).chars().collect();
    for pat in ["dddd-dd-dd dd:dd", "dd:dd:dd"] {
        let pat: Vec<char> = pat.chars().collect();
        let mut i = 0;
        while i + pat.len() <= out.len() {
            let hit = pat
                .iter()
                .zip(&out[i..i + pat.len()])
                .all(|(p, c)| match p {
                    'd' => c.is_ascii_digit(),
                    p => p == c,
                });
            if hit {
                for c in &mut out[i..i + pat.len()] {
                    if c.is_ascii_digit() {
                        *c = '0';
                    }
                }
                i += pat.len();
            } else {
                i += 1;
            }
        }
    }
    out.into_iter().collect()
}

const CHAPTER: &str = "The lamp room smelled of paraffin and salt. Ada climbed the last steps with the book under her arm.\n\nBelow, the sea kept its own time.\n";

async fn call(engine: &Arc<Engine>, sid: &str, tool: &str, args: serde_json::Value) -> CallResult {
    engine
        .call(
            sid,
            ToolCall {
                id: String::new(),
                name: tool.into(),
                arguments: args,
            },
            Approval::Auto {
                decision: Decision::Approve,
                by: "author",
            },
        )
        .await
}

/// A writer session that wrote a chapter and then changed one word of it, and a grant for
/// another file approved for the session.
fn project() -> (Book, String) {
    let b = empty_book();
    let e = b.engine.clone();
    let sid = e
        .create_session("writer", Mode::Normal, "draft", None)
        .unwrap()
        .id;
    rt().block_on(async {
        let r = call(&e, &sid, "write", json!({"path": "manuscript/lamp.md", "content": CHAPTER})).await;
        assert!(r.ok, "{}", r.content);
        let r = call(
            &e,
            &sid,
            "edit",
            json!({"path": "manuscript/lamp.md", "edits": [{"oldText": "climbed the last steps", "newText": "took the last steps"}]}),
        )
        .await;
        assert!(r.ok, "{}", r.content);
        let (e2, s2) = (e.clone(), sid.clone());
        let h = tokio::spawn(async move {
            e2.call(
                &s2,
                ToolCall {
                    id: String::new(),
                    name: "write".into(),
                    arguments: json!({"path": "notes/ideas.md", "content": "- the bell\n"}),
                },
                Approval::Queue,
            )
            .await
        });
        let id = loop {
            if let Some(p) = e.pending().first() {
                break p.approval_id.clone();
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        e.decide(&id, Decision::ApproveForSession).unwrap();
        assert!(h.await.unwrap().ok);
    });
    (b, sid)
}

fn opened(b: &Book) -> AppState {
    let (mut app, _) = empty_app(W, H);
    keys(b, &mut app, "5 H");
    assert!(matches!(app.overlay, Some(Overlay::History(_))));
    app
}

#[test]
fn the_history_lists_grants_and_changes_and_shows_an_applied_change_as_a_prose_diff() {
    let (b, _) = project();
    let mut app = opened(&b);
    insta::assert_snapshot!("history_list", blanked(&render(&mut app, W, H)));
    // j past the grant to the newest change (the grant's write), again to the edit; Enter.
    keys(&b, &mut app, "j j <Enter>");
    let s = blanked(&render(&mut app, W, H));
    assert!(s.contains("took the last steps"), "{s}");
    assert!(!s.contains("\\n"), "raw JSON escapes: {s}");
    insta::assert_snapshot!("history_applied_edit", s);
}

#[test]
fn u_shows_the_reverse_preview_and_y_reverts_it_exactly() {
    let (b, _) = project();
    let mut app = opened(&b);
    keys(&b, &mut app, "j j u");
    insta::assert_snapshot!("history_reverse_preview", blanked(&render(&mut app, W, H)));
    keys(&b, &mut app, "y");
    assert_eq!(
        std::fs::read(b.root.join("manuscript/lamp.md")).unwrap(),
        CHAPTER.as_bytes()
    );
    // The revert is listed first now, by the author, and the edit says it was reverted.
    let newest = b.engine.history(1).unwrap().remove(0);
    assert_eq!(newest.new.actor, "author");
    assert_eq!(newest.new.tool, "revert_change");
}

#[test]
fn a_later_change_refuses_alone_and_y_reverts_both_newest_first() {
    let (b, _) = project();
    let mut app = opened(&b);
    // The chapter's first write is the fourth row (grant, ideas.md, edit, write).
    keys(&b, &mut app, "j j j u");
    let s = blanked(&render(&mut app, W, H));
    assert!(s.contains("cannot be reverted on its own"), "{s}");
    insta::assert_snapshot!("history_refused_revert_both", s);
    keys(&b, &mut app, "y");
    assert!(!b.root.join("manuscript/lamp.md").exists());
    assert!(
        b.root.join("notes/ideas.md").exists(),
        "the unrelated change stays"
    );
}

#[test]
fn u_on_a_grant_asks_and_y_revokes_it() {
    let (b, _) = project();
    assert_eq!(b.engine.grants().len(), 1);
    let mut app = opened(&b);
    keys(&b, &mut app, "u");
    insta::assert_snapshot!("history_revoke_grant", blanked(&render(&mut app, W, H)));
    keys(&b, &mut app, "y");
    assert!(b.engine.grants().is_empty());
    // Esc goes back to the list, then closes the view.
    keys(&b, &mut app, "<Esc>");
    assert!(app.overlay.is_none());
}

#[test]
fn a_shell_command_is_marked_not_revertible_and_u_says_why() {
    let b = empty_book();
    let e = b.engine.clone();
    let sid = e
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    rt().block_on(async {
        let r = call(&e, &sid, "bash", json!({"command": "echo x > made.txt"})).await;
        assert!(r.ok, "{}", r.content);
    });
    let mut app = opened(&b);
    keys(&b, &mut app, "u");
    let s = blanked(&render(&mut app, W, H));
    assert!(s.contains("not revertible"), "{s}");
    let said = app
        .messages
        .last()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(said.contains("cannot be reverted"), "{said}");
    assert!(b.root.join("made.txt").exists());
}
