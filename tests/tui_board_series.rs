//! The Board's task detail in series workspace mode: a task that acquired a draft area in
//! another book of its series (`fn_acquire_repo_worktree`, approved) shows its repository
//! scope — the book, the area's path from the book, why, and the files drafted there —
//! snapshotted at 80×24 and 120×40, read through the pane's real jobs on real sibling
//! projects.

mod tui_story_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nbook::board::tasks::{self as bt, NewTask};
use nbook::board::Board;
use nbook::engine::{Approval, CallStatus, Decision, Engine, Mode, ToolCall};
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::board::jobs;
use serde_json::{json, Value};
use tui_story_support::*;

struct Series {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    engine: Arc<Engine>,
}

fn init(folder: &Path, name: &str, title: &str, file: (&str, &str)) -> PathBuf {
    let root = folder.join(name);
    nbook::workspace::init::init(&root, Some(title)).unwrap();
    let path = root.join(file.0);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, file.1).unwrap();
    root
}

fn call(engine: &Arc<Engine>, sid: &str, tool: &str, args: Value, approval: Approval) {
    let c = ToolCall {
        id: String::new(),
        name: tool.into(),
        arguments: args,
    };
    let r = rt().block_on(engine.call(sid, c, approval));
    assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
}

/// Two books; NB-001 of the first acquired the second and drafted a chapter there.
fn series() -> Series {
    series_with(false)
}

/// With `declared`, a third book `glass-sea` that NB-001 declared (`fn_task_create`
/// `repository_scope`) but did not acquire.
fn series_with(declared: bool) -> Series {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("series");
    let root = init(
        &folder,
        "salt-road",
        "The Salt Road",
        ("manuscript/01.md", "Dawn.\n"),
    );
    init(
        &folder,
        "iron-coast",
        "The Iron Coast",
        ("manuscript/01.md", "The coast was iron grey.\n"),
    );
    if declared {
        init(
            &folder,
            "glass-sea",
            "The Glass Sea",
            ("manuscript/01.md", "Still water.\n"),
        );
    }
    let yaml = root.join("project.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    let others = if declared {
        "  - iron-coast\n  - glass-sea\n"
    } else {
        "  - iron-coast\n"
    };
    std::fs::write(&yaml, format!("{text}series:\n{others}")).unwrap();
    let dirs = nbook::config::Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = Arc::new(
        Engine::open(
            ws,
            nbook::config::Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    let board = Board::new(&root, "salt-road");
    if declared {
        let tri = engine
            .create_session("triage", Mode::Normal, "plan", None)
            .unwrap()
            .id;
        call(
            &engine,
            &tri,
            "fn_task_create",
            json!({"description": "Carry the salt to the iron coast", "repository_scope": ["glass-sea"]}),
            Approval::Auto {
                decision: Decision::Approve,
                by: "test",
            },
        );
    } else {
        board
            .commit(|c: &rusqlite::Connection| {
                bt::create(
                    c,
                    &NewTask {
                        description: "Carry the salt to the iron coast".into(),
                        ..NewTask::default()
                    },
                )
            })
            .unwrap();
    }
    let prompt = "# Task: NB-001 — Carry the salt\n\n## Mission\nBoth books.\n\n## Steps\n### Step 0: Draft\n\n## File Scope\n- manuscript/*.md\n- workspace/iron-coast/manuscript/*.md\n\n## Acceptance Criteria\n- Done.\n";
    board
        .commit(|c: &rusqlite::Connection| bt::write_prompt(c, "NB-001", prompt, None))
        .unwrap();
    board
        .commit(|c: &rusqlite::Connection| bt::promote(c, "NB-001", false, None))
        .unwrap();
    let sid = engine
        .create_session("executor", Mode::Normal, "NB-001", None)
        .unwrap()
        .id;
    engine
        .set_session_state(
            &sid,
            vec![(nbook::tools::fusion::SESSION_TASK.into(), json!("NB-001"))],
        )
        .unwrap();
    let approve = Approval::Auto {
        decision: Decision::Approve,
        by: "test",
    };
    call(
        &engine,
        &sid,
        "fn_acquire_repo_worktree",
        json!({"repo": "iron-coast", "reason": "the caravan reaches the coast"}),
        approve,
    );
    let never = Approval::Auto {
        decision: Decision::Reject { reason: None },
        by: "test",
    };
    call(
        &engine,
        &sid,
        "edit",
        json!({"path": "workspace/iron-coast/manuscript/01.md", "edits": [{"oldText": "iron grey.", "newText": "iron grey, and salt-white."}]}),
        never.clone(),
    );
    call(
        &engine,
        &sid,
        "write",
        json!({"path": "workspace/iron-coast/manuscript/02.md", "content": "The salt arrives.\n"}),
        never,
    );
    Series {
        _tmp: tmp,
        root,
        engine,
    }
}

fn run(engine: &Arc<Engine>, app: &mut AppState, fx: Vec<Effect>) {
    let mut queue = fx;
    while !queue.is_empty() {
        let next = match queue.remove(0) {
            Effect::BoardJob { ticket, job } => {
                let _in_runtime = rt().enter();
                let result = jobs::run(engine, job);
                app.update(Action::BoardJobDone { ticket, result })
            }
            _ => Vec::new(),
        };
        queue.extend(next);
    }
}

fn keys(s: &Series, app: &mut AppState, k: &str) {
    let fx = press(app, k);
    run(&s.engine, app, fx);
}

#[test]
fn the_opened_task_shows_its_repository_scope() {
    let s = series();
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let (mut app, _) = empty_app(w, h);
        let fx: Vec<Effect> = app
            .start()
            .into_iter()
            .filter(|f| matches!(f, Effect::BoardJob { .. }))
            .collect();
        run(&s.engine, &mut app, fx);
        keys(&s, &mut app, "6");
        assert_eq!(app.focus, Pane::Board);
        keys(&s, &mut app, "<Enter>");
        let (id, d) = app.board.detail.as_ref().expect("an opened task");
        assert_eq!(id, "NB-001");
        let d = d.as_ref().unwrap();
        assert_eq!(d.repository_scope.len(), 1);
        assert_eq!(d.repository_scope[0].acquired.book, "iron-coast");
        assert!(s.root.exists());
        let screen = minutes_blanked(&screen(&mut app, w, h));
        assert!(screen.contains("Repository scope"), "{screen}");
        insta::assert_snapshot!(format!("board_task_repository_scope_{w}x{h}"), screen);
    }
}

#[test]
fn declared_books_not_acquired_yet_are_shown_in_the_repository_scope() {
    let s = series_with(true);
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let (mut app, _) = empty_app(w, h);
        let fx: Vec<Effect> = app
            .start()
            .into_iter()
            .filter(|f| matches!(f, Effect::BoardJob { .. }))
            .collect();
        run(&s.engine, &mut app, fx);
        keys(&s, &mut app, "6");
        keys(&s, &mut app, "<Enter>");
        let (_, d) = app.board.detail.as_ref().expect("an opened task");
        let d = d.as_ref().unwrap();
        assert_eq!(d.repository_scope.len(), 1);
        assert_eq!(d.declared_not_acquired.len(), 1);
        assert_eq!(d.declared_not_acquired[0].book, "glass-sea");
        let screen = minutes_blanked(&screen(&mut app, w, h));
        assert!(
            screen.contains("glass-sea · declared, not acquired yet"),
            "{screen}"
        );
        insta::assert_snapshot!(
            format!("board_task_declared_repository_scope_{w}x{h}"),
            screen
        );
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

/// A bad series declaration: the book opens on its own and the status line says why.
#[test]
fn a_bad_series_declaration_is_shown_in_the_status_line() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("series");
    let root = init(
        &folder,
        "salt-road",
        "The Salt Road",
        ("manuscript/01.md", "Dawn.\n"),
    );
    init(
        &folder,
        "iron-coast",
        "The Iron Coast",
        ("manuscript/01.md", "Grey.\n"),
    );
    let yaml = root.join("project.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    std::fs::write(
        &yaml,
        format!("{text}series:\n  - iron-coast\n  - iron-coast\n"),
    )
    .unwrap();
    let dirs = nbook::config::Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = Arc::new(
        Engine::open(
            ws,
            nbook::config::Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    let mut app = nbook::tui::build_app(&engine, &dirs, None, (120, 12));
    let screen = screen(&mut app, 120, 12);
    assert!(
        screen.contains("series: project.yaml's series lists 'iron-coast' twice"),
        "{screen}"
    );
    insta::assert_snapshot!("series_declaration_error_status", screen);
}
