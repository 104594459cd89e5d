//! Draft areas and the merge gate through the real engine on a real project (issue #16): a
//! task session of the executor profile writes, edits, patches and deletes in its task's
//! draft (no approval under `supervised`, the manuscript byte-identical), reads its own
//! changes, and is refused paths outside the project; the merger's `merge_task_draft`
//! previews only in-scope files as file diffs (the rest held back), with the book's checks,
//! writes exactly those files when approved (task → Done), changes nothing when rejected,
//! rebases a stale draft that applies cleanly and returns a conflicting one to Drafting;
//! `fn_report_build_failure` sends the task back with its message.

#[allow(dead_code)]
mod engine_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine_support::{call, APPROVE};
use nbook::board::draft::{self, DraftChangeKind};
use nbook::board::tasks::{self, Done, DoneOutcome, NewTask};
use nbook::board::Board;
use nbook::config::{Config, Dirs, Preset};
use nbook::engine::{
    Approval, CallResult, CallStatus, ChangeKind, Decision, Engine, Mode, PreviewBody,
};
use nbook::tools::fusion::SESSION_TASK;
use serde_json::{json, Value};

struct Fx {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    engine: Arc<Engine>,
    board: Board,
}

/// Any call that asks the author is rejected: a call that succeeds under it never asked.
fn reject() -> Approval {
    Approval::Auto {
        decision: Decision::Reject {
            reason: Some("the test rejects every approval".into()),
        },
        by: "test",
    }
}

fn fx() -> Fx {
    fx_with(Preset::Supervised)
}

fn fx_with(preset: Preset) -> Fx {
    fx_in(preset, false)
}

/// The same book, kept in git: its files committed, `.nbook/` left untracked as an author
/// who never added it would have it.
fn fx_git() -> Fx {
    fx_in(Preset::Supervised, true)
}

/// `git -C dir args` with a fixed identity; its standard output.
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

fn commit_all(root: &Path) {
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "--all", "--", ".", ":(exclude).nbook"]);
    git(root, &["commit", "-q", "-m", "The book so far"]);
}

fn fx_in(preset: Preset, in_git: bool) -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    for (p, text) in [
        ("manuscript/012/a.md", "one\ntwo\nthree\nfour\nfive\n"),
        ("manuscript/012/b.md", "Flett waits at the harbour.\n"),
        ("notes/flett.md", "Flett's notes.\n"),
    ] {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    if in_git {
        commit_all(&root);
    }
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let mut config = Config::default();
    config.approval.preset = preset;
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine =
        Arc::new(Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).unwrap());
    let board = Board::new(&root, "book");
    Fx {
        _tmp: tmp,
        root,
        engine,
        board,
    }
}

/// A case that runs on both kinds of draft area: the overlay (a plain project folder) and a
/// git worktree (the project is a repository with a commit).
macro_rules! both_areas {
    ($case:ident, $overlay:ident, $git:ident) => {
        #[tokio::test]
        async fn $overlay() {
            $case(fx()).await
        }
        #[tokio::test]
        async fn $git() {
            $case(fx_git()).await
        }
    };
}

/// Every file of the project outside `.nbook/`, with its bytes.
fn manuscript(root: &Path) -> BTreeMap<String, Vec<u8>> {
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

impl Fx {
    /// A task planned with `## File Scope` = manuscript/012/*.md, promoted to Drafting.
    fn drafting_task(&self) -> String {
        let new = NewTask {
            description: "Draft chapter 12 from its brief".into(),
            ..NewTask::default()
        };
        let out = self.board.commit(|c| tasks::create(c, &new)).unwrap();
        let id = out.outcome.value["taskId"].as_str().unwrap().to_string();
        let p = format!("# Task: {id} — Draft chapter 12\n\n## Mission\nDraft it.\n\n## Steps\n### Step 0: Preflight\n### Step 1: Draft\n\n## File Scope\n- manuscript/012/*.md\n\n## Acceptance Criteria\n- Done.\n");
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
        assert_eq!(self.task(id).column, "review");
    }

    fn task(&self, id: &str) -> nbook::board::Task {
        self.board.read(|c| tasks::require(c, id)).unwrap()
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

    /// The executor's draft: an edit of a.md (line 2), a patch of b.md, a new c.md and the
    /// deletion of notes/flett.md (outside the scope).
    async fn draft_changes(&self, id: &str) -> String {
        let ex = self.session("executor", id);
        self.unasked(
            &ex,
            "edit",
            json!({"path": "manuscript/012/a.md", "edits": [{"oldText": "two", "newText": "TWO"}]}),
        )
        .await;
        self.unasked(
            &ex,
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: manuscript/012/b.md\n@@\n-Flett waits at the harbour.\n+Flett waits at the harbour in the rain.\n*** Delete File: notes/flett.md\n*** End Patch"}),
        )
        .await;
        self.unasked(
            &ex,
            "write",
            json!({"path": "manuscript/012/c.md", "content": "A new scene.\n"}),
        )
        .await;
        ex
    }

    fn preview_of(&self, r: &CallResult) -> nbook::engine::Preview {
        assert_eq!(r.status, CallStatus::NeedsApproval, "{}", r.content);
        r.preview.clone().expect("a preview")
    }

    fn log_text(&self, id: &str) -> String {
        self.board
            .read(|c| tasks::logs(c, id, 100))
            .unwrap()
            .into_iter()
            .map(|e| e.action)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn read_text(r: &CallResult) -> String {
    r.content.clone()
}

both_areas!(
    executor_writes_edits_patches_and_deletes_land_in_the_draft_only_case,
    executor_writes_edits_patches_and_deletes_land_in_the_draft_only,
    in_a_worktree_executor_writes_edits_patches_and_deletes_land_in_the_draft_only
);
async fn executor_writes_edits_patches_and_deletes_land_in_the_draft_only_case(f: Fx) {
    let id = f.drafting_task();
    let before = manuscript(&f.root);
    let ex = f.draft_changes(&id).await;
    assert_eq!(manuscript(&f.root), before, "the manuscript changed");
    // Reads see the draft: the edit, the patch, the new file; the deleted file is gone.
    let a = f
        .unasked(&ex, "read", json!({"path": "manuscript/012/a.md"}))
        .await;
    assert!(read_text(&a).contains("TWO"), "{}", a.content);
    let b = f
        .unasked(&ex, "read", json!({"path": "manuscript/012/b.md"}))
        .await;
    assert!(b.content.contains("in the rain"), "{}", b.content);
    let gone = f
        .run(&ex, "read", json!({"path": "notes/flett.md"}), reject())
        .await;
    assert!(!gone.ok, "{}", gone.content);
    // A file the draft never touched reads as the manuscript, also after the author edits it.
    std::fs::write(f.root.join("manuscript/012/d.md"), "Author's page.\n").unwrap();
    let d = f
        .unasked(&ex, "read", json!({"path": "manuscript/012/d.md"}))
        .await;
    assert!(d.content.contains("Author's page."), "{}", d.content);
    std::fs::write(
        f.root.join("manuscript/012/d.md"),
        "Author's page, revised.\n",
    )
    .unwrap();
    let d = f
        .unasked(&ex, "read", json!({"path": "manuscript/012/d.md"}))
        .await;
    assert!(d.content.contains("revised"), "{}", d.content);
    // The draft's change list (the Board's "draft diff so far").
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let changes = draft::changes(&ws, &id).unwrap();
    let kinds: Vec<(String, DraftChangeKind)> =
        changes.iter().map(|c| (c.path.clone(), c.kind)).collect();
    assert_eq!(
        kinds,
        vec![
            ("manuscript/012/a.md".into(), DraftChangeKind::Update),
            ("manuscript/012/b.md".into(), DraftChangeKind::Update),
            ("manuscript/012/c.md".into(), DraftChangeKind::Add),
            ("notes/flett.md".into(), DraftChangeKind::Delete),
        ]
    );
    assert!(f
        .root
        .join(format!(".nbook/tasks/{id}/draft/manuscript/012/c.md"))
        .is_file());
}

#[tokio::test]
async fn a_path_outside_the_project_is_a_typed_error_and_nothing_is_written() {
    let f = fx();
    let id = f.drafting_task();
    let ex = f.session("executor", &id);
    let before = manuscript(&f.root);
    for path in ["../escape.md", "/tmp/nbook-draft-escape.md", ".nbook/x.md"] {
        let r = f
            .run(
                &ex,
                "write",
                json!({"path": path, "content": "x"}),
                reject(),
            )
            .await;
        assert_eq!(r.status, CallStatus::ToolError, "{path}: {}", r.content);
        let d = r.details.unwrap_or(Value::Null);
        assert_eq!(d["code"], "DRAFT_PATH_OUTSIDE_PROJECT", "{path}: {d}");
        assert_eq!(d["taskId"], json!(id));
    }
    assert!(!f.root.parent().unwrap().join("escape.md").exists());
    assert!(!Path::new("/tmp/nbook-draft-escape.md").exists());
    assert_eq!(manuscript(&f.root), before);
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    assert!(draft::changes(&ws, &id).unwrap().is_empty());
}

both_areas!(
    the_merge_previews_in_scope_files_holds_back_the_rest_and_writes_exactly_them_case,
    the_merge_previews_in_scope_files_holds_back_the_rest_and_writes_exactly_them,
    in_a_worktree_the_merge_previews_in_scope_files_and_writes_exactly_them
);
async fn the_merge_previews_in_scope_files_holds_back_the_rest_and_writes_exactly_them_case(f: Fx) {
    let id = f.drafting_task();
    f.draft_changes(&id).await;
    f.to_review(&id);
    let merger = f.session("merger", &id);
    let before = manuscript(&f.root);
    // The preview, without deciding: file diffs of the in-scope files plus the merge report.
    let r = f
        .run(&merger, "merge_task_draft", json!({}), Approval::Fail)
        .await;
    let p = f.preview_of(&r);
    let PreviewBody::Files { changes } = &p.body else {
        panic!("not a file preview: {:?}", p.body)
    };
    let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    let report = format!(".nbook/tasks/{id}/merge-report.md");
    assert_eq!(
        paths,
        vec![
            "manuscript/012/a.md",
            "manuscript/012/b.md",
            "manuscript/012/c.md",
            report.as_str()
        ]
    );
    assert_eq!(changes[2].kind, ChangeKind::Add);
    assert!(changes[0].diff.contains("-two") && changes[0].diff.contains("+TWO"));
    assert!(
        p.summary.contains("held back: notes/flett.md"),
        "{}",
        p.summary
    );
    assert!(changes[3]
        .diff
        .contains("+- notes/flett.md — outside ## File Scope"));
    assert_eq!(manuscript(&f.root), before);
    // Approved: exactly the in-scope files change; the task is Done.
    let r = f.run(&merger, "merge_task_draft", json!({}), APPROVE).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let after = manuscript(&f.root);
    let changed: std::collections::BTreeSet<&String> = after
        .keys()
        .chain(before.keys())
        .filter(|k| after.get(*k) != before.get(*k))
        .collect();
    let changed: Vec<&String> = changed.into_iter().collect();
    assert_eq!(
        changed,
        vec![
            "manuscript/012/a.md",
            "manuscript/012/b.md",
            "manuscript/012/c.md"
        ]
    );
    assert_eq!(
        after["manuscript/012/a.md"],
        b"one\nTWO\nthree\nfour\nfive\n"
    );
    assert_eq!(after["notes/flett.md"], b"Flett's notes.\n");
    let t = f.task(&id);
    assert_eq!(t.column, "done");
    assert!(f
        .log_text(&id)
        .contains("held back in the draft: notes/flett.md"));
    assert!(f.root.join(&report).is_file());
    // Merged files leave the draft; the held-back deletion stays there.
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let left: Vec<String> = draft::changes(&ws, &id)
        .unwrap()
        .into_iter()
        .map(|c| c.path)
        .collect();
    assert_eq!(left, vec!["notes/flett.md".to_string()]);
}

both_areas!(
    a_rejected_merge_changes_nothing_case,
    a_rejected_merge_changes_nothing,
    in_a_worktree_a_rejected_merge_changes_nothing
);
async fn a_rejected_merge_changes_nothing_case(f: Fx) {
    let id = f.drafting_task();
    f.draft_changes(&id).await;
    f.to_review(&id);
    let merger = f.session("merger", &id);
    let before = manuscript(&f.root);
    let rev = f.task(&id).revision;
    let r = f
        .run(&merger, "merge_task_draft", json!({}), reject())
        .await;
    assert_eq!(r.status, CallStatus::Rejected, "{}", r.content);
    assert_eq!(manuscript(&f.root), before);
    let t = f.task(&id);
    assert_eq!((t.column.as_str(), t.revision), ("review", rev));
    assert!(!f
        .root
        .join(format!(".nbook/tasks/{id}/merge-report.md"))
        .exists());
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    assert_eq!(draft::changes(&ws, &id).unwrap().len(), 4);
}

both_areas!(
    a_stale_merge_that_applies_cleanly_is_rebased_case,
    a_stale_merge_that_applies_cleanly_is_rebased,
    in_a_worktree_a_stale_merge_that_applies_cleanly_is_rebased
);
async fn a_stale_merge_that_applies_cleanly_is_rebased_case(f: Fx) {
    let id = f.drafting_task();
    f.draft_changes(&id).await;
    f.to_review(&id);
    // The author changes another line of a.md after the draft copied it.
    std::fs::write(
        f.root.join("manuscript/012/a.md"),
        "one\ntwo\nthree\nfour\nFIVE\n",
    )
    .unwrap();
    let merger = f.session("merger", &id);
    let r = f.run(&merger, "merge_task_draft", json!({}), APPROVE).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert!(r.content.contains("1 rebased"), "{}", r.content);
    assert_eq!(
        std::fs::read_to_string(f.root.join("manuscript/012/a.md")).unwrap(),
        "one\nTWO\nthree\nfour\nFIVE\n"
    );
    assert_eq!(f.task(&id).column, "done");
}

both_areas!(
    a_conflicting_stale_merge_returns_the_task_to_drafting_case,
    a_conflicting_stale_merge_returns_the_task_to_drafting,
    in_a_worktree_a_conflicting_stale_merge_returns_the_task_to_drafting
);
async fn a_conflicting_stale_merge_returns_the_task_to_drafting_case(f: Fx) {
    let id = f.drafting_task();
    f.draft_changes(&id).await;
    f.to_review(&id);
    // The author rewrote the very line the draft changed.
    let theirs = "one\nzwei\nthree\nfour\nfive\n";
    std::fs::write(f.root.join("manuscript/012/a.md"), theirs).unwrap();
    let before = manuscript(&f.root);
    let merger = f.session("merger", &id);
    let r = f
        .run(&merger, "merge_task_draft", json!({}), Approval::Fail)
        .await;
    let p = f.preview_of(&r);
    assert!(
        p.summary.starts_with(&format!("Return {id} to Drafting")),
        "{}",
        p.summary
    );
    let r = f.run(&merger, "merge_task_draft", json!({}), APPROVE).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(r.details.as_ref().unwrap()["outcome"], "returned");
    assert_eq!(
        manuscript(&f.root),
        before,
        "a conflict wrote the manuscript"
    );
    let t = f.task(&id);
    assert_eq!(
        (t.column.as_str(), t.status.as_str()),
        ("drafting", "merge-conflict")
    );
    assert!(f.log_text(&id).contains("manuscript/012/a.md"));
    // The executor finds both versions in its draft.
    let ex = f.session("executor", &id);
    let a = f
        .unasked(&ex, "read", json!({"path": "manuscript/012/a.md"}))
        .await;
    assert!(
        a.content.contains("<<<<<<< draft") && a.content.contains("zwei"),
        "{}",
        a.content
    );
    // Finished again without resolving them, the merge's checks say so.
    f.to_review(&id);
    let r = f
        .run(
            &merger,
            "merge_task_draft",
            json!({"check_only": true}),
            reject(),
        )
        .await;
    let d = r.details.unwrap();
    assert_eq!(d["checksPassed"], false, "{d}");
    assert!(
        r.content
            .contains("FAIL conflict: manuscript/012/a.md still holds unresolved conflict markers"),
        "{}",
        r.content
    );
}

#[tokio::test]
async fn report_build_failure_sends_the_task_back_with_the_message() {
    let f = fx();
    let id = f.drafting_task();
    f.draft_changes(&id).await;
    f.to_review(&id);
    let merger = f.session("merger", &id);
    let blank = f
        .run(
            &merger,
            "fn_report_build_failure",
            json!({"message": "   "}),
            APPROVE,
        )
        .await;
    assert_eq!(blank.status, CallStatus::ToolError, "{}", blank.content);
    assert_eq!(blank.details.unwrap()["code"], "INVALID_ARGUMENT");
    assert_eq!(f.task(&id).column, "review");
    let r = f
        .run(
            &merger,
            "fn_report_build_failure",
            json!({"message": "brief: chapter 12's writer brief is needs_plot"}),
            APPROVE,
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let t = f.task(&id);
    assert_eq!(
        (t.column.as_str(), t.status.as_str()),
        ("drafting", "build-failed")
    );
    assert!(f.log_text(&id).contains(
        "the book's checks failed at merge: brief: chapter 12's writer brief is needs_plot"
    ));
    // A second report finds the task no longer in Review.
    let again = f
        .run(
            &merger,
            "fn_report_build_failure",
            json!({"message": "x"}),
            APPROVE,
        )
        .await;
    assert_eq!(again.details.unwrap()["code"], "TASK_WRONG_COLUMN");
}

#[tokio::test]
async fn a_failing_book_check_shows_in_the_preview_and_in_check_only() {
    let f = fx();
    let id = f.drafting_task();
    let ex = f.session("executor", &id);
    f.unasked(
        &ex,
        "write",
        json!({"path": "manuscript/012/ch.md", "content": "---\nchapter: no-such-chapter\n---\nText.\n"}),
    )
    .await;
    f.to_review(&id);
    let merger = f.session("merger", &id);
    let r = f
        .run(
            &merger,
            "merge_task_draft",
            json!({"check_only": true}),
            reject(),
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let d = r.details.unwrap();
    assert_eq!(d["checksPassed"], false, "{d}");
    assert_eq!(f.task(&id).column, "review");
    let r = f
        .run(&merger, "merge_task_draft", json!({}), Approval::Fail)
        .await;
    let p = f.preview_of(&r);
    assert!(p.summary.contains("checks FAILED"), "{}", p.summary);
    assert!(p.summary.contains("no-such-chapter"), "{}", p.summary);
    let PreviewBody::Files { changes } = &p.body else {
        panic!("{:?}", p.body)
    };
    let report = changes.last().unwrap();
    assert!(
        report
            .diff
            .contains("+- FAIL brief: manuscript/012/ch.md names chapter no-such-chapter"),
        "{}",
        report.diff
    );
}

#[tokio::test]
async fn routing_is_the_profiles_choice_and_the_tasks_records_stay_readable() {
    let f = fx();
    let id = f.drafting_task();
    // A step session drafts too.
    let step = f.session("step-session", &id);
    f.unasked(
        &step,
        "write",
        json!({"path": "manuscript/012/s.md", "content": "A step's page.\n"}),
    )
    .await;
    assert!(!f.root.join("manuscript/012/s.md").exists());
    // The executor reads its PROMPT.md where the prompt says it is.
    let ex = f.session("executor", &id);
    let p = f
        .unasked(
            &ex,
            "read",
            json!({"path": format!(".nbook/tasks/{id}/PROMPT.md")}),
        )
        .await;
    assert!(p.content.contains("## File Scope"), "{}", p.content);
    // A profile that does not opt in writes the manuscript, through the approval gate, even
    // in a task session: the rejection changes nothing.
    let writer = f.session("writer", &id);
    let r = f
        .run(
            &writer,
            "write",
            json!({"path": "manuscript/012/w.md", "content": "x"}),
            reject(),
        )
        .await;
    assert_eq!(r.status, CallStatus::Rejected, "{}", r.content);
    assert!(!f.root.join("manuscript/012/w.md").exists());
}

#[tokio::test]
async fn a_session_task_that_is_not_on_the_board_is_refused() {
    let f = fx();
    for bogus in ["NB-404", "../../escape"] {
        let ex = f.session("executor", bogus);
        let r = f
            .run(
                &ex,
                "write",
                json!({"path": "manuscript/012/x.md", "content": "x"}),
                reject(),
            )
            .await;
        assert_eq!(r.status, CallStatus::ToolError, "{bogus}: {}", r.content);
        assert_eq!(r.details.unwrap()["code"], "TASK_NOT_FOUND", "{bogus}");
    }
    assert!(!f.root.join(".nbook/tasks/NB-404").exists());
    assert!(!f.root.join("escape").exists() && !f.root.parent().unwrap().join("escape").exists());
    assert!(!f.root.join("manuscript/012/x.md").exists());
}

#[tokio::test]
async fn the_locked_preset_still_refuses_draft_writes() {
    let f = fx_with(Preset::Locked);
    let id = f.drafting_task();
    let ex = f.session("executor", &id);
    let r = f
        .run(
            &ex,
            "edit",
            json!({"path": "manuscript/012/a.md", "edits": [{"oldText": "two", "newText": "TWO"}]}),
            APPROVE,
        )
        .await;
    assert_eq!(r.status, CallStatus::Refused, "{}", r.content);
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    assert!(draft::changes(&ws, &id).unwrap().is_empty());
}

#[tokio::test]
async fn a_merge_of_some_files_writes_only_them_and_its_report_reads_the_same() {
    let f = fx();
    let id = f.drafting_task();
    f.draft_changes(&id).await;
    f.to_review(&id);
    let merger = f.session("merger", &id);
    let report_of = |p: &nbook::engine::Preview| match &p.body {
        PreviewBody::Files { changes } => changes.last().unwrap().diff.clone(),
        b => panic!("{b:?}"),
    };
    let whole = f
        .run(&merger, "merge_task_draft", json!({}), Approval::Fail)
        .await;
    let whole = f.preview_of(&whole);
    let only = json!({"files": ["manuscript/012/a.md"]});
    let part = f
        .run(&merger, "merge_task_draft", only.clone(), Approval::Fail)
        .await;
    let part = f.preview_of(&part);
    let PreviewBody::Files { changes } = &part.body else {
        panic!("{:?}", part.body)
    };
    assert_eq!(changes.len(), 2, "a.md and the report");
    assert_eq!(changes[0].path, "manuscript/012/a.md");
    assert_eq!(report_of(&part), report_of(&whole));
    assert!(
        part.summary
            .contains("left out: manuscript/012/b.md, manuscript/012/c.md"),
        "{}",
        part.summary
    );
    let before = manuscript(&f.root);
    let r = f.run(&merger, "merge_task_draft", only, APPROVE).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let after = manuscript(&f.root);
    assert_eq!(
        after["manuscript/012/a.md"],
        b"one\nTWO\nthree\nfour\nfive\n"
    );
    assert_eq!(after["manuscript/012/b.md"], before["manuscript/012/b.md"]);
    assert!(!after.contains_key("manuscript/012/c.md"));
    assert_eq!(f.task(&id).column, "done");
    assert!(f
        .log_text(&id)
        .contains("manuscript/012/b.md (left out of this merge)"));
    assert_left_after_merging_a(&f, &id);
}

/// Queue a merge for the author and return the waiting call with its result's handle.
async fn queued_merge(
    f: &Fx,
    merger: &str,
) -> (
    tokio::task::JoinHandle<CallResult>,
    nbook::engine::PendingCall,
) {
    let (e, s) = (f.engine.clone(), merger.to_string());
    let h = tokio::spawn(async move {
        e.call(&s, call("merge_task_draft", json!({})), Approval::Queue)
            .await
    });
    for _ in 0..1000 {
        if let Some(p) = f.engine.pending().into_iter().next() {
            return (h, p);
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    panic!("the merge never reached the approval queue");
}

/// The ids of the parts of the previewed files whose path passes `keep`.
fn parts_where(p: &nbook::engine::PendingCall, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let PreviewBody::Files { changes } = &p.preview.body else {
        panic!("{:?}", p.preview.body)
    };
    nbook::engine::parts::parts_of(&p.preview)
        .into_iter()
        .filter(|part| keep(&changes[part.file].path))
        .map(|part| part.id)
        .collect()
}

fn keep_parts(p: &nbook::engine::PendingCall, ids: Vec<String>, reason: &str) -> Decision {
    Decision::ApproveParts {
        selection: nbook::engine::parts::PartSelection {
            preview: nbook::engine::parts::parts_digest(&p.preview),
            keep: ids,
            reason: Some(reason.into()),
        },
    }
}

/// The author approves the merge of a.md and the report and drops b.md and c.md in the queue:
/// only a.md reaches the manuscript, the others stay in the draft, the task is Done and the
/// agent's result says what was rejected and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_rejected_per_file_writes_only_the_kept_files() {
    let f = fx();
    let id = f.drafting_task();
    f.draft_changes(&id).await;
    f.to_review(&id);
    let merger = f.session("merger", &id);
    let before = manuscript(&f.root);
    let (h, p) = queued_merge(&f, &merger).await;
    assert!(p.parts, "a merge may be approved per file");
    let kept = parts_where(&p, |path| {
        !path.ends_with("b.md") && !path.ends_with("c.md")
    });
    f.engine
        .decide(
            &p.approval_id,
            keep_parts(&p, kept, "b and c are not ready"),
        )
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert!(r.content.contains("b and c are not ready"), "{}", r.content);
    let after = manuscript(&f.root);
    assert_eq!(
        after["manuscript/012/a.md"],
        b"one\nTWO\nthree\nfour\nfive\n"
    );
    assert_eq!(after["manuscript/012/b.md"], before["manuscript/012/b.md"]);
    assert!(!after.contains_key("manuscript/012/c.md"));
    assert_eq!(f.task(&id).column, "done");
    assert!(f
        .root
        .join(format!(".nbook/tasks/{id}/merge-report.md"))
        .exists());
    assert_left_after_merging_a(&f, &id);
}

/// Dropping the merge report while keeping manuscript files is refused with what to do:
/// nothing is merged and the task stays in Review.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_without_its_report_is_refused_and_changes_nothing() {
    let f = fx();
    let id = f.drafting_task();
    f.draft_changes(&id).await;
    f.to_review(&id);
    let merger = f.session("merger", &id);
    let before = manuscript(&f.root);
    let (h, p) = queued_merge(&f, &merger).await;
    let kept = parts_where(&p, |path| path.starts_with("manuscript/"));
    f.engine
        .decide(&p.approval_id, keep_parts(&p, kept, "no report"))
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(
        r.content.contains("written with every merge") && r.content.contains("nothing was changed"),
        "{}",
        r.content
    );
    assert_eq!(manuscript(&f.root), before);
    assert_eq!(f.task(&id).column, "review");
    assert!(!f
        .root
        .join(format!(".nbook/tasks/{id}/merge-report.md"))
        .exists());
}

/// After merging only a.md, the draft still holds b.md, c.md and the out-of-scope note.
fn assert_left_after_merging_a(f: &Fx, id: &str) {
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let left: Vec<String> = draft::changes(&ws, id)
        .unwrap()
        .into_iter()
        .map(|c| c.path)
        .collect();
    assert_eq!(
        left,
        vec![
            "manuscript/012/b.md",
            "manuscript/012/c.md",
            "notes/flett.md"
        ]
    );
}

/// The draft area of `id` as the Board reads it.
fn area(f: &Fx, id: &str) -> Option<draft::Area> {
    draft::Draft::new(&f.root, id).area().unwrap()
}

#[tokio::test]
async fn a_git_project_drafts_in_a_worktree_on_the_tasks_branch() {
    let f = fx_git();
    let id = f.drafting_task();
    // The author's uncommitted edit of a file the draft has not touched yet.
    std::fs::write(
        f.root.join("manuscript/012/b.md"),
        "Flett waits at the harbour, uncommitted.\n",
    )
    .unwrap();
    let before = manuscript(&f.root);
    let ex = f.session("executor", &id);
    let b = f
        .unasked(&ex, "read", json!({"path": "manuscript/012/b.md"}))
        .await;
    assert!(b.content.contains("uncommitted"), "{}", b.content);
    f.unasked(
        &ex,
        "write",
        json!({"path": "manuscript/012/c.md", "content": "A new scene.\n"}),
    )
    .await;
    let wt = f.root.join(format!(".nbook/tasks/{id}/draft"));
    assert!(wt.join(".git").is_file(), "not a worktree");
    let branch = format!("nbook/{id}");
    assert_eq!(
        git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        branch
    );
    let head = git(&f.root, &["rev-parse", "HEAD"]);
    assert!(matches!(
        area(&f, &id),
        Some(draft::Area::Worktree { branch: b, base_commit }) if b == branch && base_commit == head.trim()
    ));
    // The whole book is there, at the base commit, with the draft's files on top.
    assert!(wt.join("notes/flett.md").is_file());
    assert_eq!(
        std::fs::read_to_string(wt.join("manuscript/012/c.md")).unwrap(),
        "A new scene.\n"
    );
    // Nothing in the author's checkout changed, and git sees nbook's worktree.
    assert_eq!(manuscript(&f.root), before);
    assert!(git(&f.root, &["worktree", "list"]).contains(&format!("[{branch}]")));
    // The change list: the new file only (the copied-up b.md is unchanged against its base).
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let kinds: Vec<(String, DraftChangeKind)> = draft::changes(&ws, &id)
        .unwrap()
        .into_iter()
        .map(|c| (c.path, c.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![("manuscript/012/c.md".into(), DraftChangeKind::Add)]
    );
}

#[tokio::test]
async fn archiving_commits_the_worktree_on_its_branch_and_removes_it() {
    let f = fx_git();
    let id = f.drafting_task();
    f.draft_changes(&id).await;
    let before = manuscript(&f.root);
    f.board
        .commit(|c| tasks::move_to(c, &id, "archived", None))
        .unwrap();
    let wt = f.root.join(format!(".nbook/tasks/{id}/draft"));
    assert!(!wt.exists(), "the worktree folder is still there");
    let branch = format!("nbook/{id}");
    assert!(!git(&f.root, &["worktree", "list"]).contains(&branch));
    assert!(matches!(area(&f, &id), Some(draft::Area::Retired { branch: b }) if b == branch));
    // Nothing is lost: the branch holds the draft, nbook's own folder not committed.
    assert_eq!(
        git(&f.root, &["show", &format!("{branch}:manuscript/012/c.md")]),
        "A new scene.\n"
    );
    assert!(git(&f.root, &["show", &format!("{branch}:manuscript/012/a.md")]).contains("TWO"));
    let files = git(&f.root, &["ls-tree", "-r", "--name-only", &branch]);
    assert!(!files.contains("notes/flett.md"), "{files}");
    assert!(!files.contains(".nbook"), "{files}");
    assert!(git(&f.root, &["log", "-1", "--format=%s", &branch]).contains("archived"));
    assert_eq!(
        manuscript(&f.root),
        before,
        "archiving changed the manuscript"
    );
    // Drafted again, the task's worktree comes back from its branch, changes and all.
    f.board
        .commit(|c| tasks::move_to(c, &id, "drafting", None))
        .unwrap();
    let ex = f.session("executor", &id);
    let c = f
        .unasked(&ex, "read", json!({"path": "manuscript/012/c.md"}))
        .await;
    assert!(c.content.contains("A new scene."), "{}", c.content);
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    assert_eq!(draft::changes(&ws, &id).unwrap().len(), 4);
}

#[tokio::test]
async fn the_authors_git_hooks_do_not_run_for_nbooks_worktrees() {
    let f = fx_git();
    let hook = f.root.join(".git/hooks/post-checkout");
    let ran = f.root.parent().unwrap().join("hook-ran");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", ran.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let id = f.drafting_task();
    f.draft_changes(&id).await;
    assert!(area(&f, &id).is_some_and(|a| matches!(a, draft::Area::Worktree { .. })));
    assert!(!ran.exists(), "the author's post-checkout hook ran");
}

#[tokio::test]
async fn a_book_inside_a_larger_repository_keeps_the_overlay() {
    let f = fx();
    // The repository is the folder above the book: checking it out per task is not ours.
    commit_all(f.root.parent().unwrap());
    let id = f.drafting_task();
    f.draft_changes(&id).await;
    assert_eq!(area(&f, &id), Some(draft::Area::Overlay));
    assert!(!f
        .root
        .join(format!(".nbook/tasks/{id}/draft/.git"))
        .exists());
}

#[tokio::test]
async fn a_corrupt_worktree_record_is_a_typed_error_and_nothing_is_written() {
    let f = fx_git();
    let id = f.drafting_task();
    let rec = f.root.join(format!(".nbook/tasks/{id}/worktree"));
    std::fs::create_dir_all(&rec).unwrap();
    std::fs::write(rec.join("worktree.json"), "{ not json").unwrap();
    let before = manuscript(&f.root);
    let ex = f.session("executor", &id);
    let r = f
        .run(
            &ex,
            "write",
            json!({"path": "manuscript/012/c.md", "content": "x"}),
            reject(),
        )
        .await;
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert_eq!(r.details.unwrap()["code"], "DRAFT_UNAVAILABLE");
    assert!(r.content.contains("worktree record"), "{}", r.content);
    assert_eq!(manuscript(&f.root), before);
    assert!(!f.root.join(format!(".nbook/tasks/{id}/draft")).exists());
}
