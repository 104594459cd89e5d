//! A series of two books end to end with the real binary in a real terminal (tmux) and a
//! scripted model server speaking the OpenAI wire format (tests/provider_support): the first
//! book declares the series in project.yaml and has a task in Drafting; nbook opened on it
//! runs the executor, whose `fn_acquire_repo_worktree` waits in the Approvals pane with its
//! preview (book, task, draft area); approved (`y`), the executor edits both books, the Board's
//! task detail shows the repository scope, the reviewer approves, and the merger's
//! `merge_task_draft` waits with both books' diffs; approved, both manuscripts change.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where a missing tmux is a failure.

mod provider_support;
// Shared with the other tmux tests; this one types no text.
#[allow(dead_code)]
mod tmux_support;

use std::time::Duration;

use provider_support::*;
use serde_json::{json, Value};
use tmux_support::{skip_without_tmux, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

fn tool_call(id: &str, name: &str, args: &Value, wait: u64) -> Reply {
    Reply::sse(vec![
        Step::Sleep(Duration::from_millis(wait)),
        Step::Chunk(format!(
            "data: {}\n\n",
            chunk(
                json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                       "function": {"name": name, "arguments": args.to_string()}}]}),
                None,
            )
        )),
        Step::Chunk(format!(
            "data: {}\n\n",
            chunk(json!({}), Some("tool_calls"))
        )),
        Step::Chunk("data: [DONE]\n\n".into()),
    ])
}

fn text(t: &str) -> Reply {
    Reply::data(&[chunk(json!({"content": t}), Some("stop")), "[DONE]".into()])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_acquires_the_other_book_and_one_merge_writes_both() {
    if skip_without_tmux() {
        return;
    }
    let server = Server::start(vec![
        tool_call(
            "c1",
            "fn_acquire_repo_worktree",
            &json!({"repo": "iron-coast", "reason": "the caravan reaches the coast"}),
            1000,
        ),
        tool_call(
            "c2",
            "edit",
            &json!({"path": "workspace/iron-coast/manuscript/01.md", "edits": [{"oldText": "Night fell.", "newText": "Night fell on the salt."}]}),
            300,
        ),
        tool_call(
            "c3",
            "edit",
            &json!({"path": "manuscript/01.md", "edits": [{"oldText": "Salt in every sack.", "newText": "Salt in every sack, bound for the coast."}]}),
            300,
        ),
        tool_call("c4", "fn_task_done", &json!({"summary": "Both books drafted."}), 300),
        text("APPROVE\nBoth books read well."),
        tool_call("c5", "merge_task_draft", &json!({}), 300),
        text("Merged."),
    ])
    .await;
    let config = format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}\"\n\
         [models.small]\nprovider = \"local\"\nname = \"smollm2\"\n\
         [defaults]\nmodel = \"small\"\n\
         [approval.tools]\nfn_task_update = \"allow\"\nfn_task_done = \"allow\"\n",
        server.base_url()
    );
    let book = tmux_support::Book::init(Some(&config));
    let (home, p) = (&book.home, book.path.clone());
    let root = std::path::PathBuf::from(&p);
    let folder = root.parent().unwrap().to_path_buf();
    let other = folder.join("iron-coast");
    let ok = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    ok(book.nbook(&[
        "init",
        &other.display().to_string(),
        "--title",
        "The Iron Coast",
    ]));
    for (dir, text) in [
        (&root, "The caravan left at dawn.\nSalt in every sack.\n"),
        (
            &other,
            "The coast was iron grey.\nGulls over the wreck.\nNight fell.\n",
        ),
    ] {
        std::fs::create_dir_all(dir.join("manuscript")).unwrap();
        std::fs::write(dir.join("manuscript/01.md"), text).unwrap();
    }
    let yaml = root.join("project.yaml");
    let y = std::fs::read_to_string(&yaml).unwrap();
    std::fs::write(&yaml, format!("{y}series:\n  - iron-coast\n")).unwrap();
    ok(book.nbook(&[
        "board",
        "create",
        "Carry the salt to the coast",
        "--project",
        &p,
    ]));
    let prompt = json!({"content": "# Task: NB-001 — Carry the salt\n\n## Mission\nBoth books.\n\n## Steps\n### Step 0: Draft\n\n## File Scope\n- manuscript/*.md\n- workspace/iron-coast/manuscript/*.md\n\n## Acceptance Criteria\n- Done.\n"}).to_string();
    for (tool, profile, args) in [
        ("fn_task_prompt_write", "triage", prompt.as_str()),
        ("fn_task_promote", "executor", "{}"),
    ] {
        ok(book.nbook(&[
            "call",
            tool,
            "--project",
            &p,
            "--profile",
            profile,
            "--task",
            "NB-001",
            "--approve",
            "--args",
            args,
        ]));
    }
    let t = Tmux::start(
        &format!("nbook-e2e-series-{}", std::process::id()),
        &format!(
            "env NBOOK_HOME='{}' TERM=xterm-256color '{}' '{}'",
            home.display(),
            BIN,
            p
        ),
    );
    let long = Duration::from_secs(90);
    t.wait_for("the TUI", long, |s| s.contains("1 Files"));
    t.keys(&["5"]);
    let s = t.wait_for("the acquisition waiting with its preview", long, |s| {
        s.contains("fn_acquire_repo_worktree") && s.contains("Draft area:")
    });
    assert!(s.contains("iron-coast"), "{s}");
    println!("--- the acquisition's approval preview ---\n{s}");
    assert!(!other.join(".nbook/tasks/book--NB-001").exists());
    std::thread::sleep(Duration::from_millis(1200)); // the approval guard after typing
    t.keys(&["y"]);
    // The executor goes on, the reviewer approves, the merger's merge waits.
    let s = t.wait_for("the merge waiting with both books' diffs", long, |s| {
        s.contains("merge_task_draft") && s.contains("workspace/iron-coast/manuscript/01.md")
    });
    println!("--- the merge's approval preview ---\n{s}");
    assert!(std::fs::read_to_string(other.join("manuscript/01.md"))
        .unwrap()
        .ends_with("Night fell.\n"));
    // The Board's task detail shows the repository scope.
    t.keys(&["6"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["Enter"]);
    let s = t.wait_for("the task detail with its repository scope", long, |s| {
        s.contains("Repository scope") && s.contains("iron-coast")
    });
    println!("--- the task detail ---\n{s}");
    t.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["5"]);
    std::thread::sleep(Duration::from_millis(1200));
    t.keys(&["y"]);
    let deadline = std::time::Instant::now() + long;
    loop {
        let here = std::fs::read_to_string(root.join("manuscript/01.md")).unwrap();
        let there = std::fs::read_to_string(other.join("manuscript/01.md")).unwrap();
        if here.contains("bound for the coast") && there.contains("Night fell on the salt.") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the merge never wrote both books:\n{here}\n{there}\n{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
