//! Draft areas end to end with the real binary: a task planned and promoted headless
//! (`nbook call … --task NB-001`), an executor's `edit` through `nbook call --profile executor
//! --task NB-001` lands in the draft without `--approve` (the manuscript unchanged), nbook
//! opened in a real terminal (tmux) shows the draft's diff in the Board's task detail, and the
//! merger's approved `merge_task_draft` writes the manuscript and empties the diff.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where a missing tmux is a failure.

use std::process::Command;
use std::time::Duration;

// Shared with the other tmux tests; this one types no text.
#[allow(dead_code)]
mod tmux_support;
use tmux_support::{skip_without_tmux, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

#[test]
fn the_board_detail_shows_an_executors_draft_and_the_merge_empties_it() {
    draft_flow(false);
}

/// The same, in a book kept in git: the draft is a worktree on branch `nbook/NB-001`, and
/// archiving the task from the Board (`x`) commits what is left on that branch and removes
/// the worktree.
#[test]
fn in_a_git_book_the_draft_is_a_worktree_and_archiving_keeps_it_on_its_branch() {
    draft_flow(true);
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
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
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn draft_flow(in_git: bool) {
    if skip_without_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let dir = tmp.path().join("book");
    let p = dir.display().to_string();
    let nbook = |args: &[&str], stdin: Option<&str>| {
        use std::io::Write;
        let mut child = Command::new(BIN)
            .args(args)
            .env("NBOOK_HOME", &home)
            .env_remove("NBOOK_LOG")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
        drop(input);
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "nbook {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    nbook(&["init", &p, "--title", "Book"], None);
    let page = dir.join("manuscript/012/ch.md");
    std::fs::create_dir_all(page.parent().unwrap()).unwrap();
    std::fs::write(&page, "The harbour was empty.\nFlett waited.\n").unwrap();
    if in_git {
        git(&dir, &["init", "-q", "-b", "main"]);
        git(&dir, &["add", "--all", "--", ".", ":(exclude).nbook"]);
        git(&dir, &["commit", "-q", "-m", "The book so far"]);
    }
    nbook(
        &["board", "create", "Draft chapter 12", "--project", &p],
        None,
    );
    let prompt = serde_json::json!({"content": "# Task: NB-001 — Draft chapter 12\n\n## Mission\nDraft it.\n\n## Steps\n### Step 0: Preflight\n### Step 1: Draft\n\n## File Scope\n- manuscript/012/*.md\n\n## Acceptance Criteria\n- Done.\n"}).to_string();
    let as_task = |profile: &'static str| {
        ["--project", &p, "--profile", profile, "--task", "NB-001"].map(str::to_string)
    };
    let call = |tool: &str, profile: &'static str, extra: &[&str], stdin: &str| {
        let mut args: Vec<String> = vec!["call".into(), tool.into()];
        args.extend(as_task(profile));
        args.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        nbook(&refs, Some(stdin))
    };
    call("fn_task_prompt_write", "triage", &["--approve"], &prompt);
    call("fn_task_promote", "executor", &["--approve"], "{}");
    // No --approve: a draft write needs none.
    let out = call(
        "edit",
        "executor",
        &[],
        r#"{"path": "manuscript/012/ch.md", "edits": [{"oldText": "Flett waited.", "newText": "Flett waited in the rain."}]}"#,
    );
    assert!(out.contains("draft area"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&page).unwrap(),
        "The harbour was empty.\nFlett waited.\n"
    );

    let t = Tmux::start(
        &format!(
            "nbook-e2e-draft-{}{}",
            if in_git { "git-" } else { "" },
            std::process::id()
        ),
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
    t.wait_for("the card", long, |s| s.contains("NB-001 Draft chapter 12"));
    t.keys(&["Enter"]);
    let s = t.wait_for("the draft's diff", long, |s| {
        s.contains("Draft (changes so far)") && s.contains("+Flett waited in the rain.")
    });
    assert!(
        s.contains("M manuscript/012/ch.md +1 -1") && s.contains("-Flett waited."),
        "{s}"
    );
    let worktree = dir.join(".nbook/tasks/NB-001/draft");
    if in_git {
        assert!(s.contains("git worktree on branch nbook/NB-001"), "{s}");
        assert_eq!(
            git(&worktree, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
            "nbook/NB-001"
        );
    } else {
        assert!(!s.contains("git worktree"), "{s}");
    }

    call(
        "fn_task_done",
        "executor",
        &["--approve"],
        r#"{"summary": "drafted"}"#,
    );
    let out = call("merge_task_draft", "merger", &["--approve"], "{}");
    assert!(out.contains("merged and moved to Done"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&page).unwrap(),
        "The harbour was empty.\nFlett waited in the rain.\n"
    );
    // Reopened, the task's draft has nothing left to merge.
    // Apart: Escape and the next key in one read are Alt+key.
    t.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["Enter"]);
    let s = t.wait_for("the emptied draft", long, |s| s.contains("no changes yet"));
    assert!(s.contains("Done"), "{s}");
    if !in_git {
        return;
    }
    // The executor adds a note outside the scope after the merge; archiving keeps it on the
    // task's branch and removes the worktree.
    call(
        "write",
        "executor",
        &[],
        r#"{"path": "notes/after.md", "content": "Kept on the branch.\n"}"#,
    );
    // Apart: Escape then x in one write reads as Alt+x.
    t.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["x"]);
    t.wait_for("the archived card", long, |s| s.contains("Archived (1)"));
    t.keys(&["G", "Enter"]);
    let s = t.wait_for("the retired draft", long, |s| {
        s.contains("its last state is") && s.contains("Archived ·")
    });
    assert!(s.contains("nbook/NB-001"), "{s}");
    assert!(!worktree.exists(), "the worktree is still there");
    assert_eq!(
        git(&dir, &["show", "nbook/NB-001:notes/after.md"]),
        "Kept on the branch.\n"
    );
    assert!(!dir.join("notes/after.md").exists());
}
