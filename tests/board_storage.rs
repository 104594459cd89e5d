//! The board's storage on a real project.sqlite in a temp dir: tasks, duplicates, dependency
//! cycles, plans and steps, the executor's exits, task documents with compare-and-swap (a
//! real two-thread race), goals and their limit, and the files under `.nbook/tasks/<ID>/`.

use std::path::PathBuf;

use nbook::board::docs::{self, Write};
use nbook::board::goals::{self, GoalFilter};
use nbook::board::tasks::{self, Done, DoneOutcome, NewTask, Search, Update};
use nbook::board::{Board, BoardError, StepStatus};
use serde_json::json;

struct Fx {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    board: Board,
}

fn fx() -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let board = Board::new(&root, "book");
    Fx {
        _tmp: tmp,
        root,
        board,
    }
}

fn prompt(id: &str) -> String {
    format!(
        "# Task: {id} — Draft chapter 12\n\n## Mission\nDraft it.\n\n## Steps\n### Step 0: Preflight\n### Step 1: Opening\n### Step 2: Ending\n\n## File Scope\n- manuscript/012/*.md\n\n## Acceptance Criteria\n- Ends at the harbour.\n"
    )
}

impl Fx {
    fn create(&self, description: &str, deps: &[&str]) -> String {
        let new = NewTask {
            description: description.into(),
            dependencies: deps.iter().map(|d| d.to_string()).collect(),
            ..NewTask::default()
        };
        let out = self.board.commit(|c| tasks::create(c, &new)).unwrap();
        out.outcome.value["taskId"].as_str().unwrap().to_string()
    }

    fn err(
        &self,
        op: impl Fn(&rusqlite::Connection) -> Result<nbook::board::Outcome, BoardError>,
    ) -> BoardError {
        self.board.commit(op).unwrap_err()
    }

    fn task(&self, id: &str) -> nbook::board::Task {
        self.board.read(|c| tasks::require(c, id)).unwrap()
    }

    /// A planned task promoted to Drafting.
    fn drafting(&self, description: &str) -> String {
        let id = self.create(description, &[]);
        let p = prompt(&id);
        self.board
            .commit(|c| tasks::write_prompt(c, &id, &p, None))
            .unwrap();
        self.board
            .commit(|c| tasks::promote(c, &id, false, None))
            .unwrap();
        id
    }

    fn doc(
        &self,
        task: &str,
        key: &str,
        content: &str,
        rev: Option<u64>,
        hash: Option<&str>,
    ) -> Result<serde_json::Value, BoardError> {
        let w = Write {
            key: key.into(),
            content: content.into(),
            author: "agent".into(),
            expected_revision: rev,
            expected_content_hash: hash.map(str::to_string),
        };
        self.board
            .commit(|c| docs::write(c, "book", task, &w))
            .map(|o| o.outcome.value)
    }
}

#[test]
fn migration_adds_the_board_tables_beside_neurobooks() {
    let f = fx();
    let conn = nbook::store::open(&f.root.join(".nbook/project.sqlite")).unwrap();
    for t in [
        "nbook_board_task",
        "nbook_board_task_log",
        "nbook_board_document",
        "nbook_board_document_revision",
        "nbook_board_goal",
    ] {
        let n: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1",
                [t],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1, "{t}");
    }
    for t in nbook::store::TABLES {
        let n: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1",
                [t],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1, "{t}");
    }
}

#[test]
fn tasks_get_sequential_ids_defaults_and_a_task_folder() {
    let f = fx();
    let a = f.create("Draft chapter 12 from its brief", &[]);
    let b = f.create("Audit act 2 for continuity\nEvery chapter.", &[&a]);
    assert_eq!((a.as_str(), b.as_str()), ("NB-001", "NB-002"));
    let t = f.task(&b);
    assert_eq!(t.title, "Audit act 2 for continuity");
    assert_eq!(t.column, "planning");
    assert_eq!(t.workflow_id, "builtin:chapter");
    assert_eq!(t.priority, "normal");
    assert_eq!(t.dependencies, ["NB-001"]);
    let log = f.board.agent_log(&b).unwrap();
    assert_eq!(log[0]["type"], "status");
    assert_eq!(log[0]["text"], "Task created");
}

#[test]
fn a_duplicate_description_links_instead_of_creating_twice() {
    let f = fx();
    let a = f.create("Revise the Flett chapters for the watch", &[]);
    let new = NewTask {
        description: "  revise the FLETT chapters   for the watch ".into(),
        ..NewTask::default()
    };
    let out = f.board.commit(|c| tasks::create(c, &new)).unwrap().outcome;
    assert_eq!(out.value["taskId"], json!(a));
    assert_eq!(out.value["wasDuplicate"], json!(true));
    let n = f.board.read(|c| Ok(tasks::all(c, None)?.len())).unwrap();
    assert_eq!(n, 1);
}

#[test]
fn bad_creates_are_typed_errors_and_change_nothing() {
    let f = fx();
    let bad = |d: &str, deps: Vec<String>, wf: Option<&str>| {
        let new = NewTask {
            description: d.into(),
            dependencies: deps,
            workflow_id: wf.map(str::to_string),
            ..NewTask::default()
        };
        f.err(|c| tasks::create(c, &new)).code()
    };
    assert_eq!(bad("   ", vec![], None), "INVALID_ARGUMENT");
    assert_eq!(
        bad("x", vec!["NB-404".into()], None),
        "DEPENDENCY_NOT_FOUND"
    );
    assert_eq!(
        bad("x", vec![], Some("builtin:coding")),
        "WORKFLOW_NOT_FOUND"
    );
    assert_eq!(bad(&"x".repeat(20_001), vec![], None), "INVALID_ARGUMENT");
    assert!(f.board.read(|c| tasks::all(c, None)).unwrap().is_empty());
}

#[test]
fn dependency_cycles_are_refused() {
    let f = fx();
    let a = f.create("A", &[]);
    let b = f.create("B", &[&a]);
    let c_ = f.create("C", &[&b]);
    let u = Update {
        dependencies: Some(vec![c_.clone()]),
        ..Update::default()
    };
    match f.err(|c| tasks::update(c, &a, &u)) {
        BoardError::DependencyCycle { cycle } => {
            assert_eq!(cycle, [a.clone(), c_.clone(), b.clone(), a.clone()])
        }
        e => panic!("{e}"),
    }
    let own = Update {
        dependencies: Some(vec![a.clone()]),
        ..Update::default()
    };
    assert_eq!(
        f.err(|c| tasks::update(c, &a, &own)).code(),
        "DEPENDENCY_CYCLE"
    );
    assert!(f.task(&a).dependencies.is_empty());
    assert_eq!(
        f.err(|c| tasks::add_dependency(c, &a, &b, true, None))
            .code(),
        "DEPENDENCY_CYCLE"
    );
}

#[test]
fn the_plan_sets_title_steps_and_scope_and_is_mirrored_to_prompt_md() {
    let f = fx();
    let id = f.create("Draft chapter twelve", &[]);
    let p = prompt(&id);
    f.board
        .commit(|c| tasks::write_prompt(c, &id, &p, None))
        .unwrap();
    let t = f.task(&id);
    assert_eq!(t.title, "Draft chapter 12");
    let names: Vec<&str> = t.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Preflight", "Opening", "Ending"]);
    assert_eq!(t.file_scope, ["manuscript/012/*.md"]);
    let file =
        std::fs::read_to_string(f.root.join(".nbook/tasks").join(&id).join("PROMPT.md")).unwrap();
    assert_eq!(file, p);
    // A bad plan names its section and changes nothing.
    let bad = p.replace("## Acceptance Criteria\n- Ends at the harbour.\n", "");
    match f.err(|c| tasks::write_prompt(c, &id, &bad, None)) {
        BoardError::PromptInvalid { section, .. } => assert_eq!(section, "## Acceptance Criteria"),
        e => panic!("{e}"),
    }
    assert_eq!(f.task(&id).prompt.as_deref(), Some(p.as_str()));
}

#[test]
fn promotion_needs_a_plan_and_done_dependencies() {
    let f = fx();
    let a = f.create("A", &[]);
    assert_eq!(
        f.err(|c| tasks::promote(c, &a, false, None)).code(),
        "TASK_UNPLANNED"
    );
    let b = f.create("B", &[&a]);
    let p = prompt(&b);
    f.board
        .commit(|c| tasks::write_prompt(c, &b, &p, None))
        .unwrap();
    assert_eq!(
        f.err(|c| tasks::promote(c, &b, true, None)).code(),
        "DEPENDENCIES_UNMET"
    );
    f.board
        .commit(|c| tasks::move_to(c, &a, "done", None))
        .unwrap();
    f.board
        .commit(|c| tasks::promote(c, &b, false, None))
        .unwrap();
    assert_eq!(f.task(&b).column, "drafting");
    assert_eq!(
        f.err(|c| tasks::promote(c, &b, false, None)).code(),
        "TASK_WRONG_COLUMN"
    );
    // force waives the plan, not the column.
    let c_ = f.create("C", &[]);
    f.board
        .commit(|c| tasks::promote(c, &c_, true, None))
        .unwrap();
}

#[test]
fn step_updates_are_zero_based_and_checked() {
    let f = fx();
    let id = f.drafting("Draft");
    let u = Update {
        step: Some(0),
        status: Some(StepStatus::Done),
        ..Update::default()
    };
    let out = f
        .board
        .commit(|c| tasks::update(c, &id, &u))
        .unwrap()
        .outcome;
    assert_eq!(out.text, "Step 0 (Preflight) → done. Progress 1/3");
    let far = Update {
        step: Some(3),
        status: Some(StepStatus::Done),
        ..Update::default()
    };
    assert_eq!(
        f.err(|c| tasks::update(c, &id, &far)).code(),
        "STEP_NOT_FOUND"
    );
    let half = Update {
        step: Some(1),
        ..Update::default()
    };
    assert_eq!(
        f.err(|c| tasks::update(c, &id, &half)).code(),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        f.err(|c| tasks::update(c, &id, &Update::default())).code(),
        "INVALID_ARGUMENT"
    );
    // Step updates need Drafting.
    let planning = f.create("Elsewhere", &[]);
    assert_eq!(
        f.err(|c| tasks::update(c, &planning, &u)).code(),
        "TASK_WRONG_COLUMN"
    );
}

#[test]
fn custom_fields_are_validated_against_the_workflow_and_null_clears() {
    let f = fx();
    let id = f.drafting("Draft");
    let set = |v: serde_json::Value| Update {
        custom_fields: Some(serde_json::from_value(v).unwrap()),
        ..Update::default()
    };
    let ok = set(json!({"pov": "Flett", "wordTarget": 4000, "draftStage": "first-draft"}));
    f.board.commit(|c| tasks::update(c, &id, &ok)).unwrap();
    assert_eq!(f.task(&id).custom_fields["pov"], "Flett");
    let rejection = |v: serde_json::Value| match f.err(|c| tasks::update(c, &id, &set(v.clone()))) {
        BoardError::CustomField { code, .. } => code,
        e => panic!("{e}"),
    };
    assert_eq!(rejection(json!({"colour": "red"})), "unknown-field");
    assert_eq!(rejection(json!({"wordTarget": "many"})), "type-mismatch");
    assert_eq!(rejection(json!({"draftStage": "final"})), "enum-violation");
    f.board
        .commit(|c| tasks::update(c, &id, &set(json!({"pov": null}))))
        .unwrap();
    assert!(!f.task(&id).custom_fields.contains_key("pov"));
}

#[test]
fn add_dep_needs_confirm_then_sends_the_task_back_to_planning() {
    let f = fx();
    let other = f.create("Research the watch", &[]);
    let id = f.drafting("Draft");
    assert_eq!(
        f.err(|c| tasks::add_dependency(c, &id, &other, false, None))
            .code(),
        "CONFIRM_REQUIRED"
    );
    assert!(f.task(&id).dependencies.is_empty());
    f.board
        .commit(|c| tasks::add_dependency(c, &id, &other, true, None))
        .unwrap();
    let t = f.task(&id);
    assert_eq!(
        (t.column.as_str(), t.status.as_str()),
        ("planning", "needs-replan")
    );
    assert_eq!(t.dependencies, [other]);
}

#[test]
fn completed_marks_the_remaining_steps_done_and_goes_to_review() {
    let f = fx();
    let id = f.drafting("Draft");
    let d = Done {
        outcome: DoneOutcome::Completed,
        summary: Some("Drafted.".into()),
        blocked_by: vec![],
        reason: None,
        actor: None,
    };
    f.board.commit(|c| tasks::done(c, &id, &d)).unwrap();
    let t = f.task(&id);
    assert_eq!(t.progress(), (3, 3));
    assert_eq!(
        (t.column.as_str(), t.status.as_str()),
        ("review", "awaiting-review")
    );
    // Not in Drafting any more.
    assert_eq!(
        f.err(|c| tasks::done(c, &id, &d)).code(),
        "TASK_WRONG_COLUMN"
    );
}

#[test]
fn blocked_needs_a_reason_parks_the_task_and_never_claims_completion() {
    let f = fx();
    let blocker = f.create("Decide the ending", &[]);
    let id = f.drafting("Draft");
    let mut d = Done {
        outcome: DoneOutcome::Blocked,
        summary: None,
        blocked_by: vec![blocker.clone()],
        reason: Some("  ".into()),
        actor: None,
    };
    assert_eq!(
        f.err(|c| tasks::done(c, &id, &d)).code(),
        "BLOCKED_REASON_REQUIRED"
    );
    d.reason = Some("the ending is undecided".into());
    d.blocked_by = vec!["NB-404".into()];
    assert_eq!(
        f.err(|c| tasks::done(c, &id, &d)).code(),
        "DEPENDENCY_NOT_FOUND"
    );
    d.blocked_by = vec![blocker.clone()];
    f.board.commit(|c| tasks::done(c, &id, &d)).unwrap();
    let t = f.task(&id);
    assert_eq!(
        (t.column.as_str(), t.status.as_str()),
        ("drafting", "failed")
    );
    assert_eq!(
        t.blocked_reason.as_deref(),
        Some("BLOCKED: the ending is undecided")
    );
    assert_eq!(t.blocked_by, std::slice::from_ref(&blocker));
    assert_eq!(t.dependencies, [blocker]);
    assert_eq!(t.progress(), (0, 3), "no step was marked done");
    // Without dependencies: back to planning for a new plan.
    let lone = f.drafting("Another");
    d.blocked_by = vec![];
    f.board.commit(|c| tasks::done(c, &lone, &d)).unwrap();
    let t = f.task(&lone);
    assert_eq!(
        (t.column.as_str(), t.status.as_str()),
        ("planning", "needs-replan")
    );
}

#[test]
fn logs_go_to_the_table_and_the_agent_log_and_archived_tasks_refuse() {
    let f = fx();
    let id = f.create("A", &[]);
    f.board
        .commit(|c| tasks::add_log(c, &id, "Read the brief", Some("ok"), Some("executor")))
        .unwrap();
    let logs = f.board.read(|c| tasks::logs(c, &id, 10)).unwrap();
    assert_eq!(logs.last().unwrap().action, "Read the brief");
    let agent = f.board.agent_log(&id).unwrap();
    assert_eq!(agent.last().unwrap()["outcome"], "ok");
    assert_eq!(
        f.err(|c| tasks::add_log(c, &id, " ", None, None)).code(),
        "INVALID_ARGUMENT"
    );
    f.board
        .commit(|c| tasks::move_to(c, &id, "archived", None))
        .unwrap();
    assert_eq!(
        f.err(|c| tasks::add_log(c, &id, "x", None, None)).code(),
        "TASK_ARCHIVED"
    );
    assert_eq!(
        f.err(|c| tasks::add_log(c, "NB-404", "x", None, None))
            .code(),
        "TASK_NOT_FOUND"
    );
    // A torn last line is skipped.
    let path = f
        .root
        .join(".nbook/tasks")
        .join(&id)
        .join("agent-log.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"type\":\"te");
    std::fs::write(&path, text).unwrap();
    assert_eq!(f.board.agent_log(&id).unwrap().len(), agent.len() + 1);
}

#[test]
fn file_scope_add_extends_the_scope_and_prompt_md_and_refuses_escapes() {
    let f = fx();
    let id = f.drafting("Draft");
    f.board
        .commit(|c| {
            tasks::add_file_scope(c, &id, &["notes/flett.md".into()], Some("continuity"), None)
        })
        .unwrap();
    let t = f.task(&id);
    assert_eq!(t.file_scope, ["manuscript/012/*.md", "notes/flett.md"]);
    let file =
        std::fs::read_to_string(f.root.join(".nbook/tasks").join(&id).join("PROMPT.md")).unwrap();
    assert!(file.contains("- notes/flett.md"));
    for bad in ["/etc/passwd", "../x.md", "https://e.com/x"] {
        assert_eq!(
            f.err(|c| tasks::add_file_scope(c, &id, &[bad.into()], None, None))
                .code(),
            "FILE_SCOPE_INVALID"
        );
    }
    assert_eq!(f.task(&id).file_scope.len(), 2);
}

#[test]
fn search_finds_every_word_and_honours_the_column_filters() {
    let f = fx();
    let a = f.create("Audit act 2 for continuity", &[]);
    f.create("Draft chapter 12", &[]);
    let s = |q: &str, done: bool| Search {
        query: q.into(),
        limit: 20,
        include_done: done,
        include_archived: true,
    };
    let hits = f
        .board
        .read(|c| tasks::search(c, &s("ACT continuity", true)))
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].id, a);
    f.board
        .commit(|c| tasks::move_to(c, &a, "done", None))
        .unwrap();
    assert!(f
        .board
        .read(|c| tasks::search(c, &s("continuity", false)))
        .unwrap()
        .is_empty());
    assert_eq!(
        f.board
            .read(|c| tasks::search(c, &s("nb-002", true)))
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        f.board
            .read(|c| tasks::search(c, &s("100%_", true)))
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        f.board
            .read(|c| tasks::search(c, &s("  ", true)))
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn documents_are_versioned_and_keep_every_prior_revision() {
    let f = fx();
    let id = f.create("A", &[]);
    let r1 = f.doc(&id, "notes", "first", Some(0), None).unwrap();
    assert_eq!(r1["revision"], 1);
    assert_eq!(r1["contentHash"], docs::content_hash("first"));
    let r2 = f
        .doc(&id, "notes", "second", Some(1), r1["contentHash"].as_str())
        .unwrap();
    assert_eq!(r2["revision"], 2);
    f.doc(&id, "notes", "third", None, None).unwrap();
    let (revs, old) = f
        .board
        .read(|c| {
            Ok((
                docs::revisions(c, &id, "notes")?,
                docs::revision_content(c, &id, "notes", 1)?,
            ))
        })
        .unwrap();
    assert_eq!(revs, [1, 2]);
    assert_eq!(old.as_deref(), Some("first"));
    let cur = f
        .board
        .read(|c| docs::load(c, &id, "notes"))
        .unwrap()
        .unwrap();
    assert_eq!((cur.revision, cur.content.as_str()), (3, "third"));
    // The known hash of "": sha256 of zero bytes.
    assert_eq!(
        docs::content_hash(""),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn cas_failures_report_the_current_state_never_the_content() {
    let f = fx();
    let id = f.create("A", &[]);
    f.doc(&id, "notes", "secret words", None, None).unwrap();
    let fail = |rev: Option<u64>, hash: Option<&str>| match f
        .doc(&id, "notes", "new", rev, hash)
        .unwrap_err()
    {
        e @ BoardError::Precondition(_) => e,
        e => panic!("{e}"),
    };
    let e = fail(Some(0), None);
    let d = e.details();
    assert_eq!(d["code"], "TASK_DOCUMENT_PRECONDITION_FAILED");
    assert_eq!(d["currentRevision"], 1);
    assert_eq!(d["currentContentHash"], docs::content_hash("secret words"));
    assert_eq!(d["expectedRevision"], 0);
    assert_eq!(d["projectId"], "book");
    assert!(!d.to_string().contains("secret words") && !e.to_string().contains("secret words"));
    fail(Some(2), None);
    let wrong = format!("sha256:{}", "0".repeat(64));
    fail(None, Some(&wrong));
    // Both given: both must match.
    fail(Some(1), Some(&wrong));
    // A document that does not exist is revision 0 with no hash.
    match f.doc(&id, "other", "x", Some(1), None).unwrap_err() {
        BoardError::Precondition(p) => {
            assert_eq!((p.current_revision, p.current_content_hash), (0, None))
        }
        e => panic!("{e}"),
    }
    for bad in [
        "sha256:ABC",
        "md5:00",
        &format!("sha256:{}", "A".repeat(64)),
    ] {
        assert_eq!(
            f.doc(&id, "notes", "x", None, Some(bad))
                .unwrap_err()
                .code(),
            "TASK_DOCUMENT_HASH_INVALID"
        );
    }
    for key in ["", "with space", "../x", &"k".repeat(65)] {
        assert_eq!(
            f.doc(&id, key, "x", None, None).unwrap_err().code(),
            "TASK_DOCUMENT_KEY_INVALID"
        );
    }
    assert_eq!(
        f.doc("NB-404", "notes", "x", None, None)
            .unwrap_err()
            .code(),
        "TASK_NOT_FOUND"
    );
    assert_eq!(
        f.doc(&id, "big", &"x".repeat(docs::MAX_CONTENT + 1), None, None)
            .unwrap_err()
            .code(),
        "TASK_DOCUMENT_TOO_LARGE"
    );
    assert_eq!(
        f.board
            .read(|c| docs::load(c, &id, "notes"))
            .unwrap()
            .unwrap()
            .revision,
        1
    );
}

#[test]
fn two_racing_writers_one_wins_the_other_gets_the_typed_error() {
    let f = fx();
    let id = f.create("A", &[]);
    for round in 0..10u64 {
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let results: Vec<Result<serde_json::Value, BoardError>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2)
                .map(|w| {
                    let b = barrier.clone();
                    let (board, id) = (f.board.clone(), id.clone());
                    s.spawn(move || {
                        b.wait();
                        let write = Write {
                            key: "race".into(),
                            content: format!("writer {w} round {round}"),
                            author: format!("w{w}"),
                            expected_revision: Some(round),
                            expected_content_hash: None,
                        };
                        board
                            .commit(|c| docs::write(c, "book", &id, &write))
                            .map(|o| o.outcome.value)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let wins = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(wins, 1, "round {round}: {results:?}");
        let loser = results.into_iter().find_map(Result::err).unwrap();
        assert_eq!(loser.code(), "TASK_DOCUMENT_PRECONDITION_FAILED");
        assert_eq!(loser.details()["currentRevision"], round + 1);
    }
}

#[test]
fn goals_warn_at_three_and_stop_at_five() {
    let f = fx();
    for i in 0..5 {
        f.board
            .commit(|c| goals::create(c, &format!("Goal {i}"), "First draft of act 2 by March, with every Flett chapter revised for the watch and the harbour scenes"))
            .unwrap();
    }
    let e = f
        .board
        .commit(|c| goals::create(c, "Sixth", ""))
        .unwrap_err();
    assert_eq!(e.code(), "ACTIVE_GOAL_LIMIT_EXCEEDED");
    let l = f
        .board
        .read(|c| goals::list(c, GoalFilter::Active))
        .unwrap();
    assert_eq!(l["activeCount"], 5);
    assert_eq!(l["hardLimit"], 5);
    assert!(l["softWarning"].is_string());
    let snippet = l["goals"][0]["snippet"].as_str().unwrap();
    assert_eq!(snippet.chars().count(), 80);
    assert!(snippet.ends_with('…'));
    f.board
        .commit(|c| goals::set_archived(c, "G-001", true))
        .unwrap();
    f.board
        .commit(|c| goals::set_archived(c, "G-002", true))
        .unwrap();
    f.board
        .commit(|c| goals::set_archived(c, "G-003", true))
        .unwrap();
    let l = f
        .board
        .read(|c| goals::list(c, GoalFilter::Active))
        .unwrap();
    assert!(l["softWarning"].is_null(), "{l}");
    assert_eq!(
        f.board
            .read(|c| goals::list(c, GoalFilter::Archived))
            .unwrap()["goals"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        f.board.read(|c| goals::list(c, GoalFilter::All)).unwrap()["goals"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    f.board.commit(|c| goals::create(c, "Sixth", "")).unwrap();
    f.board.commit(|c| goals::create(c, "Seventh", "")).unwrap();
    f.board.commit(|c| goals::create(c, "Eighth", "")).unwrap();
    // Unarchiving respects the limit too.
    assert_eq!(
        f.board
            .commit(|c| goals::set_archived(c, "G-001", false))
            .unwrap_err()
            .code(),
        "ACTIVE_GOAL_LIMIT_EXCEEDED"
    );
    assert_eq!(
        f.board
            .read(|c| goals::require(c, "G-999"))
            .unwrap_err()
            .code(),
        "GOAL_NOT_FOUND"
    );
}

#[test]
fn a_dry_run_changes_nothing_and_shows_the_field_diff() {
    let f = fx();
    let id = f.create("A", &[]);
    let before = f.task(&id);
    let p = prompt(&id);
    let dry = f
        .board
        .dry_run(|c| tasks::write_prompt(c, &id, &p, None))
        .unwrap();
    assert_eq!(f.task(&id), before);
    assert!(!f
        .root
        .join(".nbook/tasks")
        .join(&id)
        .join("PROMPT.md")
        .exists());
    let change = &dry.changes[0];
    assert_eq!(change.action, "update");
    assert!(change
        .fields
        .iter()
        .any(|c| c.field == "title" && c.after == json!("Draft chapter 12")));
    assert_eq!(dry.targets[0].key, format!("board/task/{id}"));
}
