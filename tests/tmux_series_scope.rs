//! A task's declared repository scope end to end with the real binary in a real terminal
//! (tmux): a book of a three-book series; `nbook call fn_task_create --profile triage` with
//! `repository_scope` (an unknown book is refused with exit code 1 and creates nothing), the
//! triage's plan confirms two books in `## Repository Scope`, the executor acquires one; the
//! Board's task detail in the TUI shows the acquired book with its draft area and the other as
//! "declared, not acquired yet".
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where a missing tmux is a failure.

// Shared with the other tmux tests; this one types no text.
#[allow(dead_code)]
mod tmux_support;

use std::time::Duration;

use serde_json::{json, Value};
use tmux_support::{skip_without_tmux, Book, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

fn call(book: &Book, tool: &str, profile: &str, task: Option<&str>, args: &Value) -> (i32, Value) {
    let a = args.to_string();
    let mut argv = vec!["call", tool, "--project", &book.path, "--profile", profile];
    if let Some(t) = task {
        argv.extend(["--task", t]);
    }
    argv.extend(["--approve", "--args", &a]);
    let out = book.nbook(&argv);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "{tool}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn the_board_shows_declared_books_not_acquired_yet() {
    if skip_without_tmux() {
        return;
    }
    let book = Book::init(None);
    let folder = book.dir.parent().unwrap().to_path_buf();
    for (name, title) in [
        ("iron-coast", "The Iron Coast"),
        ("glass-sea", "The Glass Sea"),
    ] {
        let out = book.nbook(&[
            "init",
            &folder.join(name).display().to_string(),
            "--title",
            title,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let yaml = book.dir.join("project.yaml");
    let y = std::fs::read_to_string(&yaml).unwrap();
    std::fs::write(
        &yaml,
        format!("{y}series:\n  - iron-coast\n  - glass-sea\n"),
    )
    .unwrap();

    let (rc, v) = call(
        &book,
        "fn_task_create",
        "triage",
        None,
        &json!({"description": "Lost", "repository_scope": ["copper-hills"]}),
    );
    assert_eq!(rc, 1, "{v}");
    assert_eq!(v["details"]["code"], json!("UNKNOWN_REPO"), "{v}");
    assert_eq!(
        v["details"]["available"],
        json!(["book", "iron-coast", "glass-sea"])
    );
    let (rc, v) = call(
        &book,
        "fn_task_create",
        "triage",
        None,
        &json!({"description": "Carry the salt to the coast", "repository_scope": ["glass-sea", "book", "glass-sea"]}),
    );
    assert_eq!(rc, 0, "{v}");
    assert_eq!(
        v["details"]["taskId"],
        json!("NB-001"),
        "the refused call created nothing"
    );
    assert_eq!(v["details"]["repositoryScope"], json!(["glass-sea"]));
    let plan = "# Task: NB-001 — Carry the salt\n\n## Mission\nThree books.\n\n## Steps\n### Step 0: Draft\n\n## File Scope\n- manuscript/*.md\n\n## Repository Scope\n- iron-coast\n- glass-sea\n\n## Acceptance Criteria\n- Done.\n";
    let (rc, v) = call(
        &book,
        "fn_task_prompt_write",
        "triage",
        Some("NB-001"),
        &json!({"content": plan}),
    );
    assert_eq!(rc, 0, "{v}");
    let (rc, v) = call(
        &book,
        "fn_acquire_repo_worktree",
        "executor",
        Some("NB-001"),
        &json!({"repo": "iron-coast", "reason": "the caravan reaches the coast"}),
    );
    assert_eq!(rc, 0, "{v}");

    let t = Tmux::start(
        &format!("nbook-e2e-series-scope-{}", std::process::id()),
        &format!(
            "env NBOOK_HOME='{}' TERM=xterm-256color '{}' '{}'",
            book.home.display(),
            BIN,
            book.path
        ),
    );
    let long = Duration::from_secs(60);
    t.wait_for("the TUI", long, |s| s.contains("1 Files"));
    t.keys(&["6"]);
    t.wait_for("the Board with NB-001", long, |s| s.contains("NB-001"));
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["Enter"]);
    let s = t.wait_for("the task detail with its repository scope", long, |s| {
        s.contains("Repository scope") && s.contains("declared, not acquired yet")
    });
    println!("--- the task detail ---\n{s}");
    assert!(s.contains("glass-sea · declared, not acquired yet"), "{s}");
    assert!(s.contains("iron-coast · draft area"), "{s}");
    assert!(!s.contains("iron-coast · declared"), "{s}");
}
