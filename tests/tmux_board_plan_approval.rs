//! `requirePlanApproval` end to end with the real binary in a real terminal (tmux): the
//! author turns it on and creates a task, a triage call writes its plan (headless
//! `nbook call`, as a triage session would); the TUI's scheduler parks the planned task at
//! `plan?` instead of promoting it; `a` on the Board approves the plan and the scheduler
//! promotes it to Drafting. The database holds the stages and the author's approval.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where a missing tmux is a failure.

use std::time::Duration;

#[allow(dead_code)]
mod tmux_support;
use tmux_support::{skip_without_tmux, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

const PLAN: &str = "# Task: NB-001 — The pier scene\n\n## Mission\nWrite the pier scene.\n\n## Steps\n### Step 0: Preflight\n### Step 1: Draft the scene\n\n## File Scope\n- manuscript/020-scene.md\n\n## Acceptance Criteria\n- The scene ends at the pier.\n";

#[test]
fn a_plan_waits_at_plan_until_a_approves_it_on_the_board() {
    if skip_without_tmux() {
        return;
    }
    let book = tmux_support::Book::init(None);
    let (home, dir, p) = (&book.home, &book.dir, book.path.clone());
    let call = |tool: &str, profile: &str, task: Option<&str>, args: serde_json::Value| {
        let args = args.to_string();
        let mut argv = vec![
            "call",
            tool,
            "--project",
            &p,
            "--profile",
            profile,
            "--approve",
            "--args",
            &args,
        ];
        if let Some(t) = task {
            argv.extend(["--task", t]);
        }
        let out = book.nbook(&argv);
        assert!(
            out.status.success(),
            "{tool}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    call(
        "fn_workflow_settings",
        "author",
        None,
        serde_json::json!({"action": "set", "workflow_id": "builtin:chapter", "values": {"requirePlanApproval": true}}),
    );
    call(
        "fn_task_create",
        "author",
        None,
        serde_json::json!({"description": "The pier scene"}),
    );
    call(
        "fn_task_prompt_write",
        "triage",
        Some("NB-001"),
        serde_json::json!({"content": PLAN}),
    );
    let name = format!("nbook-e2e-plan-approval-{}", std::process::id());
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
    t.wait_for("the plan waiting for the author", long, |s| {
        s.contains("NB-001 The pier scene 0/2 plan?")
    });
    t.keys(&["a"]);
    t.wait_for("the task promoted to Drafting", long, |s| {
        s.contains("Drafting (1)") && !s.contains("plan?")
    });
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));

    let db = rusqlite::Connection::open(dir.join(".nbook/project.sqlite")).unwrap();
    let (column, status): (String, String) = db
        .query_row(
            "SELECT column_id, status FROM nbook_board_task WHERE id = 'NB-001'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((column.as_str(), status.as_str()), ("drafting", ""));
    let mut st = db
        .prepare("SELECT outcome, actor FROM nbook_board_task_log WHERE task_id = 'NB-001' AND outcome IS NOT NULL ORDER BY id")
        .unwrap();
    let log: Vec<(String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let outcomes: Vec<&str> = log.iter().map(|(o, _)| o.as_str()).collect();
    assert_eq!(outcomes, ["plan-approval", "plan-approved"], "{log:?}");
    assert!(
        log[1].1.contains("author"),
        "the author approved it: {log:?}"
    );
}
