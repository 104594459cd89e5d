//! The Board pane (`6`) on a real temporary project, read through the pane's real jobs (the
//! engine's read model) and written as the author through the engine: snapshots at 80×24 and
//! 120×40 of the empty state, the columns with their cards and goals, and an opened task; the
//! keys (`n` new task, `m`/`M` move, `p` pause/resume, `x` archive, `Enter`/`Esc`, Tab order);
//! and the author-only tools they call (`fn_task_move`, `fn_task_pause`) refusing bad input
//! with typed errors and changing nothing.

mod tui_story_support;

use nbook::board::tasks::{self as bt, NewTask, Update};
use nbook::board::{docs, goals, StepStatus};
use nbook::tui::action::Action;
use nbook::tui::app::Pane;
use serde_json::json;
use tui_story_support::board_ui::{app, board, keys};
use tui_story_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn prompt(id: &str) -> String {
    format!(
        "# Task: {id} — Draft chapter 12\n\n## Mission\nDraft chapter 12 from its brief.\n\n## Steps\n### Step 0: Preflight\nRead the brief.\n### Step 1: Draft the opening\n### Step 2: Draft the ending\n\n## File Scope\n- manuscript/012-chapter/*.md\n\n## Acceptance Criteria\n- The brief's ending is reached.\n"
    )
}

fn create(b: &Book, description: &str) {
    board(b)
        .commit(|c: &rusqlite::Connection| {
            bt::create(
                c,
                &NewTask {
                    description: description.into(),
                    ..NewTask::default()
                },
            )
        })
        .unwrap();
}

/// Three tasks: NB-001 planned, promoted and two steps done, with a document in two
/// revisions; NB-002 paused in Planning; NB-003 in Review. One active goal.
fn filled() -> Book {
    let b = empty_book();
    create(&b, "Draft chapter 12 from its brief");
    create(&b, "Audit act 2 for continuity");
    create(&b, "Revise the Flett chapters for the watch");
    let bd = board(&b);
    bd.commit(|c: &rusqlite::Connection| bt::write_prompt(c, "NB-001", &prompt("NB-001"), None))
        .unwrap();
    bd.commit(|c: &rusqlite::Connection| bt::promote(c, "NB-001", false, None))
        .unwrap();
    for step in [0, 1] {
        bd.commit(|c: &rusqlite::Connection| {
            bt::update(
                c,
                "NB-001",
                &Update {
                    step: Some(step),
                    status: Some(StepStatus::Done),
                    dependencies: None,
                    custom_fields: None,
                    actor: Some("executor".into()),
                },
            )
        })
        .unwrap();
    }
    for (content, rev) in [("First notes.", 0), ("Second notes.", 1)] {
        bd.commit(|c: &rusqlite::Connection| {
            docs::write(
                c,
                "book",
                "NB-001",
                &docs::Write {
                    key: "notes".into(),
                    content: content.into(),
                    author: "executor".into(),
                    expected_revision: Some(rev),
                    expected_content_hash: None,
                },
            )
        })
        .unwrap();
    }
    bd.commit(|c: &rusqlite::Connection| bt::set_paused(c, "NB-002", true, None))
        .unwrap();
    bd.commit(|c: &rusqlite::Connection| bt::move_to(c, "NB-003", "review", None))
        .unwrap();
    bd.commit(|c: &rusqlite::Connection| {
        goals::create(c, "First draft of act 2 by March", "All of act 2 drafted.")
    })
    .unwrap();
    b
}

fn snap(name: &str, book: impl Fn() -> Book, then: &str) {
    let b = book();
    for (w, h) in SIZES {
        let mut a = app(&b, w, h);
        if !then.is_empty() {
            keys(&b, &mut a, then);
        }
        let s = minutes_blanked(&screen(&mut a, w, h));
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), s);
    }
}

/// The log's times to the minute ("2026-12-02 04:01") as zeros (they change every run).
fn minutes_blanked(s: &str) -> String {
    let mut out: Vec<char> = s.chars().collect();
    let pat: Vec<char> = "dddd-dd-dd dd:dd".chars().collect();
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
    out.into_iter().collect()
}

fn task(b: &Book, id: &str) -> nbook::board::Task {
    board(b)
        .read(|c: &rusqlite::Connection| bt::require(c, id))
        .unwrap()
}

#[test]
fn empty_board_says_how_to_start() {
    snap("board_empty", empty_book, "");
}

#[test]
fn columns_with_cards_and_goals() {
    snap("board_columns", filled, "");
}

/// `filled`, plus NB-001's executor at work: it edited the chapter file it had read and wrote
/// a note outside the task's `## File Scope`, in its draft area (no approval asked).
fn drafted() -> Book {
    drafted_with(false)
}

/// `drafted`, in a book kept in git: the draft area is a worktree on branch nbook/NB-001.
fn drafted_in_git() -> Book {
    drafted_with(true)
}

/// `drafted_in_git`, then NB-001 archived: its worktree is retired onto its branch.
fn drafted_in_git_and_archived() -> Book {
    let b = drafted_in_git();
    board(&b)
        .commit(|c: &rusqlite::Connection| bt::move_to(c, "NB-001", "archived", None))
        .unwrap();
    b
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Author",
            "-c",
            "user.email=author@example.com",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn drafted_with(in_git: bool) -> Book {
    use nbook::engine::{Approval, CallStatus, Decision, Mode, ToolCall};
    let b = filled();
    let page = b.root.join("manuscript/012-chapter/012.md");
    std::fs::create_dir_all(page.parent().unwrap()).unwrap();
    let text = "The harbour was empty.\nFlett waited.\nThe bell rang.\n";
    std::fs::write(&page, text).unwrap();
    if in_git {
        git(&b.root, &["init", "-q", "-b", "main"]);
        git(&b.root, &["add", "--all", "--", ".", ":(exclude).nbook"]);
        git(&b.root, &["commit", "-q", "-m", "The book so far"]);
    }
    let sid = b
        .engine
        .create_session("executor", Mode::Normal, "NB-001", None)
        .unwrap()
        .id;
    b.engine
        .set_session_state(
            &sid,
            vec![(nbook::tools::fusion::SESSION_TASK.into(), json!("NB-001"))],
        )
        .unwrap();
    for (tool, args) in [
        (
            "edit",
            json!({"path": "manuscript/012-chapter/012.md", "edits": [{"oldText": "Flett waited.", "newText": "Flett waited in the rain."}]}),
        ),
        (
            "write",
            json!({"path": "notes/flett.md", "content": "Flett hates the rain.\n"}),
        ),
    ] {
        let call = ToolCall {
            id: String::new(),
            name: tool.into(),
            arguments: args,
        };
        // Any approval asked would be rejected: these calls must not ask.
        let reject = Approval::Auto {
            decision: Decision::Reject { reason: None },
            by: "test",
        };
        let r = rt().block_on(b.engine.call(&sid, call, reject));
        assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
    }
    assert_eq!(std::fs::read_to_string(&page).unwrap(), text);
    b
}

#[test]
fn the_opened_task_shows_the_draft_diff_so_far() {
    snap("board_task_draft", drafted, "j <Enter>");
}

#[test]
fn a_git_books_task_says_its_draft_is_a_worktree_on_its_branch() {
    snap("board_task_draft_worktree", drafted_in_git, "j <Enter>");
}

#[test]
fn an_archived_tasks_retired_worktree_names_the_branch_that_keeps_it() {
    // Archived, NB-001 is the Board's last card.
    snap(
        "board_task_draft_retired",
        drafted_in_git_and_archived,
        "G <Enter>",
    );
}

#[test]
fn enter_opens_the_task() {
    snap("board_task_detail", filled, "j <Enter>");
}

#[test]
fn the_opened_task_shows_prompt_steps_documents_and_log() {
    let b = filled();
    let mut a = app(&b, 120, 40);
    keys(&b, &mut a, "j <Enter>");
    let (id, d) = a.board.detail.as_ref().expect("an opened task");
    assert_eq!(id, "NB-001");
    let d = d.as_ref().unwrap();
    assert_eq!(d.task.progress(), (2, 3));
    assert_eq!(d.documents.len(), 1);
    assert_eq!(d.documents[0].0.revision, 2);
    assert_eq!(d.documents[0].1, vec![1]);
    assert!(d.log.iter().any(|e| e.action.contains("Promoted")));
    let s = screen(&mut a, 120, 40);
    assert!(
        s.contains("PROMPT.md") && s.contains("Draft the opening"),
        "{s}"
    );
    keys(&b, &mut a, "<Esc>");
    assert!(a.board.detail.is_none());
}

#[test]
fn six_and_tab_reach_the_board() {
    let b = empty_book();
    let (mut a, _) = empty_app(80, 24);
    keys(&b, &mut a, "5");
    keys(&b, &mut a, "<Tab>");
    assert_eq!(a.focus, Pane::Board);
    keys(&b, &mut a, "<Tab>");
    assert_eq!(a.focus, Pane::Files);
    keys(&b, &mut a, "6");
    assert_eq!(a.focus, Pane::Board);
}

#[test]
fn n_creates_a_task_as_the_author() {
    let b = empty_book();
    let mut a = app(&b, 80, 24);
    keys(&b, &mut a, "n");
    // An empty description keeps the prompt open and creates nothing.
    keys(&b, &mut a, "<Enter>");
    assert!(a.overlay.is_some());
    for c in "Draft chapter 3".chars() {
        let k = if c == ' ' {
            "<Space>".to_string()
        } else {
            c.to_string()
        };
        keys(&b, &mut a, &k);
    }
    keys(&b, &mut a, "<Enter>");
    assert!(a.overlay.is_none());
    assert_eq!(task(&b, "NB-001").title, "Draft chapter 3");
    // A second one becomes the selected card.
    keys(&b, &mut a, "n");
    for c in ["o", "k", "<Enter>"] {
        keys(&b, &mut a, c);
    }
    assert_eq!(
        a.board.selected_task().map(|t| t.id.as_str()),
        Some("NB-002")
    );
    keys(&b, &mut a, "k");
    assert_eq!(
        a.board.selected_task().map(|t| t.id.as_str()),
        Some("NB-001")
    );
    let log = std::fs::read_to_string(b.root.join(".nbook/agent/sessions/author.jsonl")).unwrap();
    assert!(log.contains("fn_task_create"), "{log}");
}

#[test]
fn n_then_esc_creates_nothing() {
    let b = empty_book();
    let mut a = app(&b, 80, 24);
    keys(&b, &mut a, "n x y <Esc>");
    assert!(a.overlay.is_none());
    assert!(a.board.is_empty());
}

#[test]
fn m_moves_p_pauses_x_archives() {
    let b = filled();
    let mut a = app(&b, 80, 24);
    assert_eq!(a.board.selected_task().unwrap().id, "NB-002");
    keys(&b, &mut a, "m");
    assert_eq!(task(&b, "NB-002").column, "drafting");
    assert_eq!(a.board.selected_task().unwrap().id, "NB-002");
    keys(&b, &mut a, "M");
    assert_eq!(task(&b, "NB-002").column, "planning");
    // NB-002 is paused: p resumes, p again pauses.
    keys(&b, &mut a, "p");
    assert_eq!(task(&b, "NB-002").status, "");
    keys(&b, &mut a, "p");
    assert_eq!(task(&b, "NB-002").status, "paused");
    keys(&b, &mut a, "x");
    assert_eq!(task(&b, "NB-002").column, "archived");
    // Archived: x again says so and changes nothing; p is refused by the tool.
    let rev = task(&b, "NB-002").revision;
    keys(&b, &mut a, "x");
    keys(&b, &mut a, "p");
    assert_eq!(task(&b, "NB-002").revision, rev);
    let msg = a
        .status
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(msg.contains("nothing was changed"), "{msg}");
}

#[test]
fn move_keys_stop_at_the_ends() {
    let b = empty_book();
    create(&b, "A task");
    let mut a = app(&b, 80, 24);
    let rev = task(&b, "NB-001").revision;
    keys(&b, &mut a, "M");
    assert_eq!(task(&b, "NB-001").revision, rev);
    assert!(a.status.as_ref().unwrap().text.contains("first column"));
}

fn author(b: &Book, tool: &str, args: serde_json::Value) -> nbook::engine::CallResult {
    rt().block_on(b.engine.author_call(tool, args, None))
}

#[test]
fn author_board_tools_refuse_bad_input_and_change_nothing() {
    let b = filled();
    let before = task(&b, "NB-003");
    for (tool, args, code) in [
        (
            "fn_task_move",
            json!({"task_id": "NB-404", "column": "done"}),
            "TASK_NOT_FOUND",
        ),
        (
            "fn_task_move",
            json!({"task_id": "NB-003", "column": "limbo"}),
            "INVALID_ARGUMENT",
        ),
        (
            "fn_task_move",
            json!({"task_id": "NB-003", "column": "review"}),
            "INVALID_ARGUMENT",
        ),
        (
            "fn_task_pause",
            json!({"task_id": "NB-404", "paused": true}),
            "TASK_NOT_FOUND",
        ),
        (
            "fn_task_pause",
            json!({"task_id": "NB-003", "paused": false}),
            "INVALID_ARGUMENT",
        ),
        (
            "fn_task_pause",
            json!({"task_id": "NB-002", "paused": true}),
            "INVALID_ARGUMENT",
        ),
    ] {
        let r = author(&b, tool, args.clone());
        assert!(!r.ok, "{tool} {args}: {}", r.content);
        let got = r
            .details
            .as_ref()
            .and_then(|d| d["code"].as_str())
            .unwrap_or_default()
            .to_string();
        assert_eq!(got, code, "{tool} {args}: {}", r.content);
    }
    // Bad arguments fail validation before anything runs.
    let r = author(&b, "fn_task_move", json!({"task_id": "NB-003"}));
    assert!(!r.ok);
    assert_eq!(task(&b, "NB-003"), before);
    // A Done task cannot be paused.
    assert!(
        author(
            &b,
            "fn_task_move",
            json!({"task_id": "NB-003", "column": "done"})
        )
        .ok
    );
    let r = author(
        &b,
        "fn_task_pause",
        json!({"task_id": "NB-003", "paused": true}),
    );
    assert_eq!(
        r.details.as_ref().and_then(|d| d["code"].as_str()),
        Some("TASK_WRONG_COLUMN"),
        "{}",
        r.content
    );
}

#[test]
fn only_the_author_has_the_board_moves() {
    let b = empty_book();
    let profiles = b.engine.profiles();
    for p in profiles.iter() {
        let has = p
            .tools
            .iter()
            .any(|t| t == "fn_task_move" || t == "fn_task_pause");
        assert_eq!(has, p.key == "author", "profile {}", p.key);
    }
}

#[test]
fn a_card_counts_the_calls_waiting_on_its_task() {
    use nbook::engine::{Mode, PreviewBody};
    let b = filled();
    let mut a = app(&b, 120, 40);
    let mut call = tui_support::pending(
        "call-update",
        "fn_task_update",
        PreviewBody::Text {
            text: "step 2 done".into(),
        },
        "fn_task_update: update NB-001",
        false,
        Mode::Normal,
    );
    call.args = json!({"step": 2, "status": "done"});
    // The preview's stale-check targets say which task the call changes.
    call.preview.targets = vec![nbook::protocol::TargetState {
        key: "board/task/NB-001".into(),
        fingerprint: "updated 1".into(),
    }];
    // A call on another task does not count, whatever its summary says.
    let mut other = call.clone();
    other.approval_id = "call-other".into();
    other.preview.summary = "fn_task_update: update NB-001 from NB-003".into();
    other.preview.targets[0].key = "board/task/NB-003".into();
    a.update(Action::Resync {
        pending: vec![call, other],
        inputs: Vec::new(),
        sessions: Vec::new(),
    });
    let s = screen(&mut a, 120, 40);
    let line = s.lines().find(|l| l.contains("NB-001 Draft")).unwrap();
    assert!(line.contains("⧗1"), "{line}");
    let line = s.lines().find(|l| l.contains("NB-002 Audit")).unwrap();
    assert!(!line.contains('⧗'), "{line}");
}
