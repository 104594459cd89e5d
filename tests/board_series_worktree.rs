//! Series workspace mode through the real engine on real sibling project folders with their
//! real SQLite databases: a book's `project.yaml` declares its series; every bad declaration
//! is a typed error and the book opens on its own; `fn_acquire_repo_worktree` (executor)
//! waits for the author with a preview naming the book, the task and the area, refuses
//! outside workspace mode, for an unknown book (listing the series' books) and after review
//! started, persists nothing when rejected, and on approval creates (then reuses) the task's
//! draft area in that book and records it in the task's repository scope; the executor's file
//! tools then write `workspace/<book>/<path>` in that area only; `merge_task_draft` merges
//! every book with one approval whose preview lists each book's diff, and a conflict in any
//! book merges none.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nbook::board::repository_scope;
use nbook::board::tasks::{self, Done, DoneOutcome, NewTask};
use nbook::board::Board;
use nbook::config::{Config, Dirs};
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, Mode, PreviewBody, ToolCall,
};
use nbook::tools::fusion::SESSION_TASK;
use nbook::workspace::series;
use serde_json::{json, Value};

const APPROVE: Approval = Approval::Auto {
    decision: Decision::Approve,
    by: "test",
};

fn reject() -> Approval {
    Approval::Auto {
        decision: Decision::Reject {
            reason: Some("the test rejects every approval".into()),
        },
        by: "test",
    }
}

struct Fx {
    _tmp: tempfile::TempDir,
    /// The series folder.
    folder: PathBuf,
    /// The book the engine is open on.
    root: PathBuf,
    /// The other book of the series.
    other: PathBuf,
    engine: Arc<Engine>,
    board: Board,
}

const SERIES: &str = "series:\n  - salt-road\n  - iron-coast\n";

fn book(folder: &Path, name: &str, title: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = folder.join(name);
    nbook::workspace::init::init(&root, Some(title)).unwrap();
    for (p, text) in files {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    root
}

fn declare(root: &Path, series: &str) {
    let path = root.join("project.yaml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(series);
    std::fs::write(path, text).unwrap();
}

/// Two books side by side in one series folder; the first declares the series.
fn fx_declaring(series: &str) -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("series");
    let root = book(
        &folder,
        "salt-road",
        "The Salt Road",
        &[(
            "manuscript/01.md",
            "The caravan left at dawn.\nSalt in every sack.\n",
        )],
    );
    let other = book(
        &folder,
        "iron-coast",
        "The Iron Coast",
        &[
            (
                "manuscript/01.md",
                "The coast was iron grey.\nGulls over the wreck.\nNight fell.\n",
            ),
            ("notes/gulls.md", "Gulls.\n"),
        ],
    );
    // The other book has a board of its own, with a task of the same id.
    let other_board = Board::new(&other, "iron-coast");
    other_board
        .commit(|c| {
            tasks::create(
                c,
                &NewTask {
                    description: "Its own first task".into(),
                    ..NewTask::default()
                },
            )
        })
        .unwrap();
    declare(&root, series);
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = Arc::new(
        Engine::open(
            ws,
            Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    let board = Board::new(&root, "salt-road");
    Fx {
        _tmp: tmp,
        folder: std::fs::canonicalize(&folder).unwrap(),
        root: std::fs::canonicalize(&root).unwrap(),
        other: std::fs::canonicalize(&other).unwrap(),
        engine,
        board,
    }
}

fn fx() -> Fx {
    fx_declaring(SERIES)
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: name.into(),
        arguments: args,
    }
}

/// Every file of a project outside `.nbook/`, with its bytes.
fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".nbook" || rel == ".git" {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn code(r: &CallResult) -> String {
    r.details
        .as_ref()
        .and_then(|d| d["code"].as_str())
        .unwrap_or_default()
        .to_string()
}

impl Fx {
    /// A task in Drafting whose `## File Scope` covers both books' manuscripts.
    fn drafting_task(&self) -> String {
        let out = self
            .board
            .commit(|c| {
                tasks::create(
                    c,
                    &NewTask {
                        description: "Carry the salt to the iron coast".into(),
                        ..NewTask::default()
                    },
                )
            })
            .unwrap();
        let id = out.outcome.value["taskId"].as_str().unwrap().to_string();
        let p = format!("# Task: {id} — Carry the salt\n\n## Mission\nBoth books.\n\n## Steps\n### Step 0: Draft\n\n## File Scope\n- manuscript/*.md\n- workspace/iron-coast/manuscript/*.md\n\n## Acceptance Criteria\n- Done.\n");
        self.board
            .commit(|c| tasks::write_prompt(c, &id, &p, None))
            .unwrap();
        self.board
            .commit(|c| tasks::promote(c, &id, false, None))
            .unwrap();
        id
    }

    fn to_review(&self, id: &str) {
        let d = Done {
            outcome: DoneOutcome::Completed,
            summary: Some("drafted".into()),
            blocked_by: Vec::new(),
            reason: None,
            actor: None,
        };
        self.board.commit(|c| tasks::done(c, id, &d)).unwrap();
    }

    fn session(&self, profile: &str, task: &str) -> String {
        let sid = self
            .engine
            .create_session(profile, Mode::Normal, "t", None)
            .unwrap()
            .id;
        self.engine
            .set_session_state(&sid, vec![(SESSION_TASK.into(), json!(task))])
            .unwrap();
        sid
    }

    async fn run(&self, sid: &str, tool: &str, args: Value, approval: Approval) -> CallResult {
        self.engine.call(sid, call(tool, args), approval).await
    }

    /// The call succeeds without asking the author (any approval asked is rejected).
    async fn unasked(&self, sid: &str, tool: &str, args: Value) -> CallResult {
        let r = self.run(sid, tool, args, reject()).await;
        assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
        r
    }

    fn scope(&self, id: &str) -> Vec<repository_scope::Acquired> {
        self.board.read(|c| repository_scope::list(c, id)).unwrap()
    }

    fn area(&self, id: &str) -> PathBuf {
        repository_scope::area_path(&self.other, "salt-road", id)
    }

    async fn acquire(&self, ex: &str) -> CallResult {
        let r = self
            .run(
                ex,
                "fn_acquire_repo_worktree",
                json!({"repo": "iron-coast", "reason": "the caravan reaches the coast"}),
                APPROVE,
            )
            .await;
        assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
        r
    }
}

// ---- the declaration ----

#[test]
fn a_declared_series_lists_the_sibling_books() {
    let f = fx();
    let s = series::load(&f.root).unwrap().expect("a series");
    assert_eq!(s.current, "salt-road");
    assert_eq!(s.folder, f.folder);
    assert_eq!(s.names(), vec!["salt-road", "iron-coast"]);
    assert_eq!(s.book("iron-coast").unwrap().root, f.other);
    // The title still reads from the same project.yaml.
    assert_eq!(
        nbook::workspace::Workspace::open(&f.root).unwrap().title(),
        "The Salt Road"
    );
}

#[tokio::test]
async fn every_bad_declaration_is_a_typed_error_and_the_book_opens_on_its_own() {
    let f = fx();
    std::fs::create_dir_all(f.folder.join("plain-folder")).unwrap();
    let outside = f.folder.parent().unwrap().join("elsewhere");
    nbook::workspace::init::init(&outside, Some("Elsewhere")).unwrap();
    std::os::unix::fs::symlink(&outside, f.folder.join("linked")).unwrap();
    let yaml = std::fs::read_to_string(f.root.join("project.yaml")).unwrap();
    let base = yaml.replace(SERIES, "");
    let id = f.drafting_task();
    let ex = f.session("executor", &id);
    for (series, want) in [
        ("series:\n  - gone-book\n", "SERIES_BOOK_MISSING"),
        ("series:\n  - plain-folder\n", "SERIES_BOOK_NOT_A_PROJECT"),
        (
            "series:\n  - iron-coast\n  - iron-coast\n",
            "SERIES_BOOK_DUPLICATE",
        ),
        ("series:\n  - ../elsewhere\n", "SERIES_PATH_ESCAPES"),
        ("series:\n  - /tmp\n", "SERIES_PATH_ESCAPES"),
        (
            "series:\n  - iron-coast/manuscript\n",
            "SERIES_PATH_ESCAPES",
        ),
        ("series:\n  - linked\n", "SERIES_PATH_ESCAPES"),
        ("series: iron-coast\n", "SERIES_MALFORMED"),
    ] {
        std::fs::write(f.root.join("project.yaml"), format!("{base}{series}")).unwrap();
        let e = series::load(&f.root).unwrap_err();
        assert_eq!(e.code(), want, "{series:?}: {e}");
        // The book still opens, in single-book mode.
        let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
        assert_eq!(ws.title(), "The Salt Road");
        // And the tool says why there is no series; nothing is recorded or created.
        let r = f
            .run(
                &ex,
                "fn_acquire_repo_worktree",
                json!({"repo": "iron-coast"}),
                APPROVE,
            )
            .await;
        assert_eq!(r.status, CallStatus::ToolError, "{series:?}: {}", r.content);
        assert_eq!(code(&r), "WORKSPACE_MODE_REQUIRED", "{}", r.content);
        assert!(r.content.contains(&e.to_string()), "{}", r.content);
    }
    assert!(f.scope(&id).is_empty());
    assert!(!f.area(&id).exists());
}

#[tokio::test]
async fn nbook_call_prints_a_bad_declaration_on_stderr_and_still_runs() {
    let f = fx_declaring("series:\n  - gone-book\n");
    let home = f.folder.parent().unwrap().join("cli-home");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_nbook"))
        .args(["call", "read", "--project"])
        .arg(&f.root)
        .args(["--args", r#"{"path": "manuscript/01.md"}"#])
        .env("NBOOK_HOME", &home)
        .env_remove("NBOOK_LOG")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("series:")
            && stderr.contains("gone-book")
            && stderr.contains("does not exist"),
        "{stderr}"
    );
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("The caravan left at dawn."));
}

// ---- fn_acquire_repo_worktree ----

#[tokio::test]
async fn outside_workspace_mode_acquiring_is_workspace_mode_required() {
    let f = fx_declaring("");
    let id = f.drafting_task();
    let ex = f.session("executor", &id);
    let r = f
        .run(
            &ex,
            "fn_acquire_repo_worktree",
            json!({"repo": "iron-coast"}),
            APPROVE,
        )
        .await;
    assert_eq!(code(&r), "WORKSPACE_MODE_REQUIRED", "{}", r.content);
    assert!(r.content.contains("series"), "{}", r.content);
    assert!(f.scope(&id).is_empty());
    assert!(!f.area(&id).exists());
}

#[tokio::test]
async fn an_unknown_book_is_an_error_listing_the_series_books() {
    let f = fx();
    let id = f.drafting_task();
    let ex = f.session("executor", &id);
    let r = f
        .run(
            &ex,
            "fn_acquire_repo_worktree",
            json!({"repo": "copper-hills"}),
            APPROVE,
        )
        .await;
    assert_eq!(code(&r), "UNKNOWN_REPO", "{}", r.content);
    assert_eq!(
        r.details.as_ref().unwrap()["available"],
        json!(["salt-road", "iron-coast"])
    );
    assert!(r.content.contains("salt-road, iron-coast"), "{}", r.content);
    // The task's own book is not "another book".
    let own = f
        .run(
            &ex,
            "fn_acquire_repo_worktree",
            json!({"repo": "salt-road"}),
            APPROVE,
        )
        .await;
    assert_eq!(code(&own), "INVALID_ARGUMENT", "{}", own.content);
    assert!(f.scope(&id).is_empty());
}

#[tokio::test]
async fn acquiring_waits_with_an_exact_preview_and_a_rejection_persists_nothing() {
    let f = fx();
    let id = f.drafting_task();
    let ex = f.session("executor", &id);
    let log_before = f.board.read(|c| tasks::logs(c, &id, 100)).unwrap().len();
    let r = f
        .run(
            &ex,
            "fn_acquire_repo_worktree",
            json!({"repo": "iron-coast", "reason": "the caravan reaches the coast"}),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::NeedsApproval, "{}", r.content);
    let p = r.preview.expect("a preview");
    let area = f.area(&id);
    assert!(
        p.summary.contains("iron-coast") && p.summary.contains(&id),
        "{}",
        p.summary
    );
    let PreviewBody::Text { text } = &p.body else {
        panic!("a text preview: {:?}", p.body)
    };
    for want in [
        format!("Book:       iron-coast ({})", f.other.display()),
        format!("Task:       {id} — "),
        format!("Draft area: {}", area.display()),
        "the caravan reaches the coast".to_string(),
    ] {
        assert!(text.contains(&want), "{want:?} not in\n{text}");
    }
    let rejected = f
        .run(
            &ex,
            "fn_acquire_repo_worktree",
            json!({"repo": "iron-coast"}),
            reject(),
        )
        .await;
    assert_eq!(
        rejected.status,
        CallStatus::Rejected,
        "{}",
        rejected.content
    );
    assert!(f.scope(&id).is_empty());
    assert!(!area.exists());
    assert!(!f
        .other
        .join(".nbook/tasks")
        .join(repository_scope::area_id("salt-road", &id))
        .exists());
    assert_eq!(
        f.board.read(|c| tasks::logs(c, &id, 100)).unwrap().len(),
        log_before
    );
}

#[tokio::test]
async fn approved_it_creates_the_area_records_the_scope_and_then_reuses_it() {
    let f = fx();
    let id = f.drafting_task();
    let ex = f.session("executor", &id);
    let r = f.acquire(&ex).await;
    let d = r.details.unwrap();
    let area = f.area(&id);
    assert_eq!(d["worktreePath"], json!(area.display().to_string()));
    assert_eq!(d["alreadyAcquired"], json!(false));
    assert!(area.join(".nbook").is_dir());
    // Not the other book's own task NB-001's area.
    assert!(!f.other.join(format!(".nbook/tasks/{id}/draft")).exists());
    let scope = f.scope(&id);
    assert_eq!(scope.len(), 1);
    assert_eq!(scope[0].book, "iron-coast");
    assert_eq!(scope[0].area_path, area.display().to_string());
    assert_eq!(
        scope[0].reason.as_deref(),
        Some("the caravan reaches the coast")
    );
    let again = f.acquire(&ex).await;
    assert_eq!(again.details.unwrap()["alreadyAcquired"], json!(true));
    assert_eq!(f.scope(&id).len(), 1);
    let log: Vec<String> = f
        .board
        .read(|c| tasks::logs(c, &id, 100))
        .unwrap()
        .into_iter()
        .map(|e| e.action)
        .collect();
    assert!(
        log.iter()
            .any(|l| l.contains("acquired a draft area in book iron-coast")),
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|l| l.contains("reusing the draft area in book iron-coast")),
        "{log:?}"
    );
}

#[tokio::test]
async fn a_task_in_review_cannot_acquire_a_book() {
    let f = fx();
    let id = f.drafting_task();
    f.to_review(&id);
    let ex = f.session("executor", &id);
    let r = f
        .run(
            &ex,
            "fn_acquire_repo_worktree",
            json!({"repo": "iron-coast"}),
            APPROVE,
        )
        .await;
    assert_eq!(code(&r), "LATE_REPO_ACQUISITION", "{}", r.content);
    assert!(r.content.contains("follow-up task"), "{}", r.content);
    assert!(f.scope(&id).is_empty());
    assert!(!f.area(&id).exists());
}

// ---- the executor's file tools in the acquired book ----

#[tokio::test]
async fn the_executor_writes_the_acquired_books_area_and_nowhere_else_in_that_book() {
    let f = fx();
    let id = f.drafting_task();
    let ex = f.session("executor", &id);
    let other_before = files(&f.other);
    let write = |path: &str| json!({"path": path, "content": "The salt arrives.\n"});
    // Not acquired yet.
    let r = f
        .run(
            &ex,
            "write",
            write("workspace/iron-coast/manuscript/02.md"),
            reject(),
        )
        .await;
    assert_eq!(code(&r), "REPO_NOT_ACQUIRED", "{}", r.content);
    assert!(!f.area(&id).exists());
    f.acquire(&ex).await;
    // Acquired: written in the area, without asking; the book's manuscript is unchanged.
    f.unasked(&ex, "write", write("workspace/iron-coast/manuscript/02.md"))
        .await;
    f.unasked(
        &ex,
        "edit",
        json!({"path": "workspace/iron-coast/manuscript/01.md", "edits": [{"oldText": "Night fell.", "newText": "Night fell on the salt."}]}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(f.area(&id).join("manuscript/02.md")).unwrap(),
        "The salt arrives.\n"
    );
    assert_eq!(
        files(&f.other),
        other_before,
        "the other book's manuscript changed"
    );
    let read = f
        .unasked(
            &ex,
            "read",
            json!({"path": "workspace/iron-coast/manuscript/01.md"}),
        )
        .await;
    assert!(
        read.content.contains("Night fell on the salt."),
        "{}",
        read.content
    );
    // Nowhere else in that book, and no book outside the series.
    for (path, want) in [
        (
            "workspace/iron-coast/.nbook/project.sqlite",
            "DRAFT_PATH_OUTSIDE_PROJECT",
        ),
        (
            "workspace/iron-coast/../salt-road/manuscript/01.md",
            "DRAFT_PATH_OUTSIDE_PROJECT",
        ),
        (
            "workspace/iron-coast/../../elsewhere.md",
            "DRAFT_PATH_OUTSIDE_PROJECT",
        ),
        ("workspace/copper-hills/manuscript/01.md", "UNKNOWN_REPO"),
    ] {
        let r = f.run(&ex, "write", write(path), reject()).await;
        assert_eq!(code(&r), want, "{path}: {}", r.content);
    }
    assert_eq!(files(&f.other), other_before);
    // A symlink in the area's book that points out of it is refused too.
    std::os::unix::fs::symlink(&f.root, f.other.join("escape")).unwrap();
    let r = f
        .run(
            &ex,
            "write",
            write("workspace/iron-coast/escape/x.md"),
            reject(),
        )
        .await;
    assert_eq!(code(&r), "DRAFT_PATH_OUTSIDE_PROJECT", "{}", r.content);
    assert!(!f.root.join("x.md").exists());
}

// ---- the merge ----

async fn draft_both_books(f: &Fx, id: &str) {
    let ex = f.session("executor", id);
    f.acquire(&ex).await;
    f.unasked(
        &ex,
        "edit",
        json!({"path": "manuscript/01.md", "edits": [{"oldText": "Salt in every sack.", "newText": "Salt in every sack, bound for the coast."}]}),
    )
    .await;
    f.unasked(
        &ex,
        "edit",
        json!({"path": "workspace/iron-coast/manuscript/01.md", "edits": [{"oldText": "Night fell.", "newText": "Night fell on the salt."}]}),
    )
    .await;
    f.unasked(
        &ex,
        "write",
        json!({"path": "workspace/iron-coast/notes/salt.md", "content": "Outside the scope.\n"}),
    )
    .await;
    f.to_review(id);
}

#[tokio::test]
async fn one_approval_merges_every_book_and_its_preview_lists_each_books_diff() {
    let f = fx();
    let id = f.drafting_task();
    draft_both_books(&f, &id).await;
    let merger = f.session("merger", &id);
    let r = f
        .run(&merger, "merge_task_draft", json!({}), Approval::Fail)
        .await;
    assert_eq!(r.status, CallStatus::NeedsApproval, "{}", r.content);
    let p = r.preview.unwrap();
    let PreviewBody::Files { changes } = &p.body else {
        panic!("a file preview: {:?}", p.body)
    };
    let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "manuscript/01.md",
            "workspace/iron-coast/manuscript/01.md",
            &format!(".nbook/tasks/{id}/merge-report.md"),
        ]
    );
    assert!(
        changes[1].diff.contains("+Night fell on the salt."),
        "{}",
        changes[1].diff
    );
    assert!(p.summary.contains("2 books"), "{}", p.summary);
    assert!(
        p.summary.contains("workspace/iron-coast/notes/salt.md"),
        "{}",
        p.summary
    );
    // Approved: both manuscripts change together; the held-back note stays in the area.
    let r = f.run(&merger, "merge_task_draft", json!({}), APPROVE).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert!(std::fs::read_to_string(f.root.join("manuscript/01.md"))
        .unwrap()
        .contains("bound for the coast"));
    assert!(std::fs::read_to_string(f.other.join("manuscript/01.md"))
        .unwrap()
        .contains("Night fell on the salt."));
    assert!(!f.other.join("notes/salt.md").exists());
    assert!(f.area(&id).join("notes/salt.md").exists());
    let t = f.board.read(|c| tasks::require(c, &id)).unwrap();
    assert_eq!(t.column, "done");
}

#[tokio::test]
async fn a_conflict_in_one_book_merges_no_book_and_returns_the_task() {
    let f = fx();
    let id = f.drafting_task();
    draft_both_books(&f, &id).await;
    // The author rewrote the same line of the other book meanwhile: a real conflict.
    std::fs::write(
        f.other.join("manuscript/01.md"),
        "The coast was iron grey.\nGulls over the wreck.\nNight fell hard.\n",
    )
    .unwrap();
    let here = files(&f.root);
    let there = files(&f.other);
    let merger = f.session("merger", &id);
    let r = f.run(&merger, "merge_task_draft", json!({}), APPROVE).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(r.details.as_ref().unwrap()["outcome"], "returned");
    assert!(
        r.content.contains("workspace/iron-coast/manuscript/01.md"),
        "{}",
        r.content
    );
    // Neither book was written: the clean change in this book waits with the other.
    assert_eq!(files(&f.root), here);
    assert_eq!(files(&f.other), there);
    let t = f.board.read(|c| tasks::require(c, &id)).unwrap();
    assert_eq!(
        (t.column.as_str(), t.status.as_str()),
        ("drafting", "merge-conflict")
    );
    // The conflicting file in the area holds both versions for the executor.
    let area_file = std::fs::read_to_string(f.area(&id).join("manuscript/01.md")).unwrap();
    assert!(
        area_file.contains("<<<<<<< draft") && area_file.contains("Night fell hard."),
        "{area_file}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_book_changed_after_the_preview_makes_the_merge_stale_and_nothing_is_written() {
    let f = fx();
    let id = f.drafting_task();
    draft_both_books(&f, &id).await;
    let merger = f.session("merger", &id);
    let (e, s) = (f.engine.clone(), merger.clone());
    let handle = tokio::spawn(async move {
        e.call(&s, call("merge_task_draft", json!({})), Approval::Queue)
            .await
    });
    let mut approval = None;
    for _ in 0..5000 {
        if let Some(p) = f.engine.pending().last() {
            approval = Some(p.approval_id.clone());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let approval = approval.expect("the merge reached the approval queue");
    // The author edits the other book's chapter (another line) after the preview was shown.
    let changed = "The coast was iron grey, always.\nGulls over the wreck.\nNight fell.\n";
    std::fs::write(f.other.join("manuscript/01.md"), changed).unwrap();
    let here = files(&f.root);
    f.engine.decide(&approval, Decision::Approve).unwrap();
    let r = handle.await.unwrap();
    assert_eq!(r.status, CallStatus::Stale, "{}", r.content);
    assert_eq!(
        files(&f.root),
        here,
        "this book was merged without the other"
    );
    assert_eq!(
        std::fs::read_to_string(f.other.join("manuscript/01.md")).unwrap(),
        changed
    );
    let t = f.board.read(|c| tasks::require(c, &id)).unwrap();
    assert_eq!(t.column, "review");
}

// ---- a book kept in git ----

fn git(dir: &Path, args: &[&str]) -> String {
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
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn in_a_git_book_the_area_is_a_worktree_and_archiving_the_task_keeps_it_on_its_branch() {
    let f = fx();
    git(&f.other, &["init", "-q", "-b", "main"]);
    git(&f.other, &["add", "--all", "--", ".", ":(exclude).nbook"]);
    git(&f.other, &["commit", "-q", "-m", "The Iron Coast so far"]);
    let id = f.drafting_task();
    let ex = f.session("executor", &id);
    let pending = f
        .run(
            &ex,
            "fn_acquire_repo_worktree",
            json!({"repo": "iron-coast"}),
            Approval::Fail,
        )
        .await;
    let branch = format!("nbook/{}", repository_scope::area_id("salt-road", &id));
    let PreviewBody::Text { text } = &pending.preview.as_ref().unwrap().body else {
        panic!("a text preview")
    };
    assert!(
        text.contains(&format!(
            "a new git worktree of iron-coast on branch {branch}"
        )),
        "{text}"
    );
    f.acquire(&ex).await;
    let area = f.area(&id);
    assert_eq!(
        git(&area, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        branch
    );
    f.unasked(
        &ex,
        "edit",
        json!({"path": "workspace/iron-coast/manuscript/01.md", "edits": [{"oldText": "Night fell.", "newText": "Night fell on the salt."}]}),
    )
    .await;
    assert!(git(&area, &["diff"]).contains("+Night fell on the salt."));
    // Archived, the task's worktree in the other book is committed on its branch and removed.
    f.board
        .commit(|c| tasks::move_to(c, &id, "archived", None))
        .map(|c| assert!(c.warnings.is_empty(), "{:?}", c.warnings))
        .unwrap();
    assert!(!area.exists());
    let kept = git(&f.other, &["show", &format!("{branch}:manuscript/01.md")]);
    assert!(kept.contains("Night fell on the salt."), "{kept}");
    // The other book's manuscript never changed.
    assert!(std::fs::read_to_string(f.other.join("manuscript/01.md"))
        .unwrap()
        .ends_with("Night fell.\n"));
}
