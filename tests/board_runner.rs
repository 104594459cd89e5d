//! The board's scheduler and lifecycle (`nbook::runner`) through the real engine, the real
//! agent host and scripted (replay) models, one script per role profile: the lifecycle from
//! a new task to the merger with one REVISE whose notes reach the executor, the concurrency
//! limit, paused and dependency-blocked tasks left alone, steering delivered exactly once
//! (live session) or queued for the next session, and the REVISE bound parking the task.
//! The merge itself (`merge_task_draft`, draft areas) is branch `draft`'s: the whole-lifecycle
//! test that needs it is ignored until that branch is merged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nbook::agent::host::{Host, ProviderSource};
use nbook::agent::{Provider, ReplayProvider};
use nbook::board::{steering, tasks, Board, Task};
use nbook::config::{Config, Dirs, Preset, ToolRule};
use nbook::engine::{Approval, Decision, Engine, LogRecord, Mode, ToolCall};
use nbook::runner::{Runner, RunnerEvent, PARKED};
use nbook::tools::fusion::SESSION_TASK;
use serde_json::{json, Value};

struct Fx {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    engine: Arc<Engine>,
}

/// A project under `supervised` whose board coordination calls are allowed in
/// `[approval.tools]` (a book that lets its board run), so only what is left asks.
fn fx(max_rework: u32, concurrency: usize) -> Fx {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).expect("init");
    let dirs = Dirs {
        config: tmp.path().join("h"),
        data: tmp.path().join("h/d"),
        logs: tmp.path().join("h/l"),
    };
    let mut config = Config::default();
    config.approval.preset = Preset::Supervised;
    for t in [
        "fn_task_prompt_write",
        "fn_task_update",
        "fn_task_done",
        "fn_task_log",
        "fn_task_document_write",
    ] {
        config.approval.tools.insert(t.into(), ToolRule::Allow);
    }
    config.board.max_rework = max_rework;
    config.board.concurrency = concurrency;
    let engine = Arc::new(
        Engine::open(
            nbook::workspace::Workspace::open(&root).expect("ws"),
            config,
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .expect("engine"),
    );
    Fx {
        _tmp: tmp,
        root,
        engine,
    }
}

/// One replay script per profile; each profile's script is shared by its sessions, in order.
fn scripts(map: &[(&str, Vec<Value>)]) -> ProviderSource {
    let providers: HashMap<String, Arc<dyn Provider>> = map
        .iter()
        .map(|(k, turns)| {
            let text = turns
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n");
            let p = ReplayProvider::parse(&text, k).expect("script");
            (k.to_string(), Arc::new(p) as Arc<dyn Provider>)
        })
        .collect();
    let providers = Mutex::new(providers);
    Arc::new(move |profile, _model| {
        providers
            .lock()
            .expect("lock")
            .get(&profile.key)
            .cloned()
            .ok_or_else(|| format!("no script for {}", profile.key))
    })
}

fn turn(text: &str, calls: Value) -> Value {
    json!({"text": text, "tool_calls": calls})
}

fn slow(text: &str, calls: Value, ms: u64) -> Value {
    json!({"text": text, "tool_calls": calls, "delay_ms": ms})
}

fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

fn plan(id: &str) -> String {
    format!(
        "# Task: {id} — Draft chapter 12\n\n## Mission\nDraft chapter 12 from its brief.\n\n## Steps\n### Step 0: Preflight\nRead the brief.\n### Step 1: Draft the chapter\n\n## File Scope\n- manuscript/012-chapter.md\n\n## Acceptance Criteria\n- The storm reaches the lighthouse.\n"
    )
}

async fn create(f: &Fx, description: &str, deps: &[&str]) -> String {
    let mut args = json!({"description": description});
    if !deps.is_empty() {
        args["dependencies"] = json!(deps);
    }
    let r = f.engine.author_call("fn_task_create", args, None).await;
    assert!(r.ok, "{}", r.content);
    r.details.unwrap()["taskId"].as_str().unwrap().to_string()
}

fn board(f: &Fx) -> Board {
    Board::new(f.engine.workspace().root(), f.engine.workspace().name())
}

fn task(f: &Fx, id: &str) -> Task {
    board(f).read(|c| tasks::require(c, id)).unwrap()
}

/// Plan and promote `id` directly (what triage and the scheduler do), for tests that start
/// in Drafting.
fn planned(f: &Fx, id: &str) {
    let b = board(f);
    let p = plan(id);
    b.commit(|c: &rusqlite::Connection| tasks::write_prompt(c, id, &p, Some("test")))
        .unwrap();
    b.commit(|c: &rusqlite::Connection| tasks::promote(c, id, false, Some("test")))
        .unwrap();
}

/// Poll `cond` every 20 ms for up to 10 s; fail naming `what` if it never holds.
async fn eventually(what: &str, cond: impl Fn() -> bool) {
    for _ in 0..500 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting until {what}");
}

/// The user messages of a session, in order.
fn users(e: &Engine, sid: &str) -> Vec<String> {
    e.session_log(sid)
        .expect("log")
        .lines
        .into_iter()
        .filter_map(|l| match l.record {
            LogRecord::User { text } => Some(text),
            _ => None,
        })
        .collect()
}

/// Sessions of `profile` working on `task`, oldest first.
fn sessions_of(e: &Engine, profile: &str, task: &str) -> Vec<String> {
    e.sessions()
        .into_iter()
        .filter(|s| s.profile == profile && e.session_task(&s.id).as_deref() == Some(task))
        .map(|s| s.id)
        .collect()
}

fn collect(runner: &Runner) -> Arc<Mutex<Vec<RunnerEvent>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut rx = runner.subscribe();
    let s = seen.clone();
    tokio::spawn(async move {
        while let Ok(e) = rx.recv().await {
            s.lock().unwrap().push(e);
        }
    });
    seen
}

fn log_text(f: &Fx, id: &str) -> String {
    board(f)
        .read(|c| tasks::logs(c, id, 500))
        .unwrap()
        .into_iter()
        .map(|e| e.action)
        .collect::<Vec<_>>()
        .join("\n")
}

/// create → triage writes PROMPT.md (asking for a spec review first) → promoted → executor
/// reports its steps and finishes → reviewer REVISE → the executor's next session gets the
/// notes → reviewer APPROVE → a merger session is told to call merge_task_draft.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_goes_from_planning_through_one_revise_to_the_merger() {
    let f = fx(3, 2);
    let id = create(&f, "Draft chapter 12 from its brief", &[]).await;
    let providers = scripts(&[
        (
            "triage",
            vec![
                turn("", json!([call("fn_task_show", json!({"id": id}))])),
                turn(
                    "",
                    json!([call("fn_task_prompt_write", json!({"content": plan(&id)}))]),
                ),
                turn("", json!([call("fn_review_spec", json!({}))])),
                turn("Planned; the spec review approved it.", json!([])),
            ],
        ),
        (
            "reviewer",
            vec![
                // The spec review (fn_review_spec), then two code reviews.
                turn("APPROVE\nThe plan covers the brief.", json!([])),
                turn(
                    "REVISE: the storm must reach the lighthouse before the ending.",
                    json!([]),
                ),
                turn("APPROVE\nThe storm arrives on time now.", json!([])),
            ],
        ),
        (
            "executor",
            vec![
                turn(
                    "",
                    json!([
                        call("fn_task_update", json!({"step": 0, "status": "done"})),
                        call(
                            "fn_task_update",
                            json!({"step": 1, "status": "in-progress"})
                        )
                    ]),
                ),
                turn(
                    "",
                    json!([call(
                        "fn_task_done",
                        json!({"summary": "Chapter 12 drafted."})
                    )]),
                ),
                // After the REVISE.
                turn(
                    "",
                    json!([call(
                        "fn_task_done",
                        json!({"summary": "The storm comes earlier."})
                    )]),
                ),
            ],
        ),
        (
            "merger",
            vec![turn("merge_task_draft is not here.", json!([]))],
        ),
    ]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    let seen = collect(&runner);
    let stop = tokio_util::sync::CancellationToken::new();
    runner.spawn(stop.clone());

    eventually("a merger session starts and gets its message", || {
        sessions_of(&f.engine, "merger", &id)
            .first()
            .is_some_and(|m| !users(&f.engine, m).is_empty())
    })
    .await;
    stop.cancel();

    // Triage planned it: PROMPT.md on disk, steps from it; the spec review ran as a reviewer
    // task session linked to the triage session.
    let triage = sessions_of(&f.engine, "triage", &id);
    assert_eq!(triage.len(), 1);
    assert!(users(&f.engine, &triage[0])[0].contains("Draft chapter 12 from its brief"));
    let prompt = std::fs::read_to_string(f.root.join(format!(".nbook/tasks/{id}/PROMPT.md")))
        .expect("PROMPT.md written");
    assert!(prompt.starts_with(&format!("# Task: {id} — Draft chapter 12")));
    let spec = f
        .engine
        .session_log(&triage[0])
        .unwrap()
        .lines
        .into_iter()
        .find_map(|l| match l.record {
            LogRecord::ToolResult {
                tool, ok, details, ..
            } if tool == "fn_review_spec" => Some((ok, details)),
            _ => None,
        })
        .expect("fn_review_spec ran");
    assert!(spec.0);
    assert_eq!(spec.1.as_ref().unwrap()["verdict"], "APPROVE");
    let reviewers = sessions_of(&f.engine, "reviewer", &id);
    assert_eq!(reviewers.len(), 3, "one spec review and two code reviews");
    assert_eq!(
        f.engine.session(&reviewers[0]).unwrap().parent.as_deref(),
        Some(triage[0].as_str())
    );

    // Two executor sessions: the second starts with the reviewer's notes.
    let executors = sessions_of(&f.engine, "executor", &id);
    assert_eq!(executors.len(), 2);
    let first = &users(&f.engine, &executors[0])[0];
    assert!(first.contains("<PROMPT.md>") && !first.contains("review-notes"));
    let second = &users(&f.engine, &executors[1])[0];
    assert!(
        second.contains("the storm must reach the lighthouse before the ending"),
        "the notes reach the executor: {second}"
    );

    // The merger is told to call the merge gate.
    let merger = sessions_of(&f.engine, "merger", &id);
    assert!(users(&f.engine, &merger[0])[0].contains("merge_task_draft"));

    // The board's record of it: the steps, the verdicts in the log, the stages in order.
    let t = task(&f, &id);
    assert_eq!(t.progress(), (2, 2));
    let log = log_text(&f, &id);
    for expected in [
        "PROMPT.md written (2 steps)",
        "Promoted from planning to drafting",
        "Review REVISE (1/3",
        "Review APPROVE",
    ] {
        assert!(log.contains(expected), "{expected} missing from:\n{log}");
    }
    let moved: Vec<(String, String)> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            RunnerEvent::TaskMoved { column, status, .. } => Some((column.clone(), status.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        moved[..3],
        [
            ("drafting".to_string(), "".to_string()),
            ("drafting".to_string(), "revise".to_string()),
            ("review".to_string(), "approved".to_string()),
        ]
    );
}

/// The whole lifecycle with the draft area and the merge gate (branch `draft`): the executor
/// writes the chapter into its draft, the manuscript stays untouched until the merge, the
/// merger's merge_task_draft waits in the approval queue, the author approves, the task is
/// Done and the chapter is in the manuscript.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_lifecycle_merges_through_the_queue_and_the_manuscript_changes_only_then() {
    let f = fx(3, 2);
    let id = create(&f, "Draft chapter 12 from its brief", &[]).await;
    let chapter = "manuscript/012-chapter.md";
    let providers = scripts(&[
        (
            "triage",
            vec![
                turn(
                    "",
                    json!([call("fn_task_prompt_write", json!({"content": plan(&id)}))]),
                ),
                turn("Planned.", json!([])),
            ],
        ),
        (
            "reviewer",
            vec![
                turn("REVISE: the storm must come earlier.", json!([])),
                turn("APPROVE", json!([])),
            ],
        ),
        (
            "executor",
            vec![
                turn(
                    "",
                    json!([
                        call(
                            "write",
                            json!({"path": chapter, "content": "The storm came late.\n"})
                        ),
                        call("fn_task_update", json!({"step": 1, "status": "done"}))
                    ]),
                ),
                turn("", json!([call("fn_task_done", json!({}))])),
                turn(
                    "",
                    json!([call(
                        "write",
                        json!({"path": chapter, "content": "The storm came early.\n"})
                    )]),
                ),
                turn("", json!([call("fn_task_done", json!({}))])),
            ],
        ),
        (
            "merger",
            vec![
                turn("", json!([call("merge_task_draft", json!({}))])),
                turn("Merged.", json!([])),
            ],
        ),
    ]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    let stop = tokio_util::sync::CancellationToken::new();
    runner.spawn(stop.clone());

    eventually("the merge waits in the queue", || {
        f.engine
            .pending()
            .iter()
            .any(|p| p.tool == "merge_task_draft")
    })
    .await;
    assert!(
        !f.root.join(chapter).exists(),
        "the manuscript is untouched until the merge"
    );
    let draft = f.root.join(format!(".nbook/tasks/{id}/draft/{chapter}"));
    assert_eq!(
        std::fs::read_to_string(&draft).unwrap(),
        "The storm came early.\n"
    );
    let pending = f
        .engine
        .pending()
        .into_iter()
        .find(|p| p.tool == "merge_task_draft")
        .unwrap();
    f.engine
        .decide(&pending.approval_id, Decision::Approve)
        .unwrap();
    eventually("the task is Done", || task(&f, &id).column == "done").await;
    stop.cancel();
    assert_eq!(
        std::fs::read_to_string(f.root.join(chapter)).unwrap(),
        "The storm came early.\n"
    );
}

/// Three runnable tasks and a limit of 2: two executor sessions run at once, never three;
/// the third starts when a slot frees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_runnable_tasks_with_a_limit_of_two_run_two_at_a_time() {
    let f = fx(3, 2);
    let mut ids = Vec::new();
    for n in 1..=3 {
        let id = create(&f, &format!("Draft chapter {n}"), &[]).await;
        planned(&f, &id);
        ids.push(id);
    }
    let done = || slow("", json!([call("fn_task_done", json!({}))]), 400);
    let providers = scripts(&[
        ("executor", vec![done(), done(), done()]),
        (
            "reviewer",
            vec![
                turn("APPROVE", json!([])),
                turn("APPROVE", json!([])),
                turn("APPROVE", json!([])),
            ],
        ),
        (
            "merger",
            vec![
                turn("-", json!([])),
                turn("-", json!([])),
                turn("-", json!([])),
            ],
        ),
    ]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    assert_eq!(runner.limit(), 2);
    let first = runner.tick();
    assert_eq!(first.started, 2, "two sessions start, the third waits");
    let status = runner.status();
    assert_eq!((status.running, status.limit), (2, 2));
    let started: Vec<&str> = status.sessions.iter().map(|s| s.task.as_str()).collect();
    assert_eq!(started, [ids[0].as_str(), ids[1].as_str()]);
    assert_eq!(runner.tick().started, 0, "no slot is free");

    let max = Arc::new(Mutex::new(0usize));
    let stop = tokio_util::sync::CancellationToken::new();
    {
        let (runner, max, stop) = (runner.clone(), max.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.is_cancelled() {
                let n = runner.status().running;
                {
                    let mut m = max.lock().unwrap();
                    *m = (*m).max(n);
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
    }
    runner.spawn(stop.clone());
    eventually("every task had its executor", || {
        ids.iter()
            .all(|id| !sessions_of(&f.engine, "executor", id).is_empty())
    })
    .await;
    eventually("every task left Drafting", || {
        ids.iter().all(|id| task(&f, id).column != "drafting")
    })
    .await;
    stop.cancel();
    assert_eq!(*max.lock().unwrap(), 2, "never more than the limit");
}

/// A paused task and a task whose dependency is not Done get no session; the dependency
/// itself does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_and_dependency_blocked_tasks_are_not_scheduled() {
    let f = fx(3, 4);
    let paused = create(&f, "Revise the Flett chapters", &[]).await;
    planned(&f, &paused);
    let r = f
        .engine
        .author_call(
            "fn_task_pause",
            json!({"task_id": paused, "paused": true}),
            None,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    let first = create(&f, "Outline act 2", &[]).await;
    let blocked = create(&f, "Draft act 2 from its outline", &[&first]).await;
    let providers = scripts(&[(
        "triage",
        vec![slow("", json!([]), 2000), turn("-", json!([]))],
    )]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    let tick = runner.tick();
    assert_eq!(tick.started, 1);
    let status = runner.status();
    let working: Vec<&str> = status.sessions.iter().map(|s| s.task.as_str()).collect();
    assert_eq!(working, [first.as_str()]);
    assert!(sessions_of(&f.engine, "executor", &paused).is_empty());
    assert!(sessions_of(&f.engine, "triage", &blocked).is_empty());
    assert_eq!(task(&f, &paused).status, "paused");
}

/// A steering comment added while the executor runs goes into that session once, at its
/// next turn; later ticks do not deliver it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_reaches_the_live_session_exactly_once() {
    let f = fx(3, 2);
    let id = create(&f, "Draft chapter 12", &[]).await;
    planned(&f, &id);
    let providers = scripts(&[
        (
            "executor",
            vec![
                slow(
                    "",
                    json!([call("fn_task_update", json!({"step": 0, "status": "done"}))]),
                    1500,
                ),
                turn("", json!([call("fn_task_done", json!({}))])),
            ],
        ),
        ("reviewer", vec![slow("APPROVE", json!([]), 3000)]),
    ]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    let seen = collect(&runner);
    let stop = tokio_util::sync::CancellationToken::new();
    runner.spawn(stop.clone());
    eventually("the executor runs", || {
        runner
            .status()
            .sessions
            .iter()
            .any(|s| s.role == "executor")
    })
    .await;
    let sid = sessions_of(&f.engine, "executor", &id)[0].clone();
    let r = f
        .engine
        .author_call(
            "fn_task_steer",
            json!({"task_id": id, "text": "Keep Ilse's name out of the first page."}),
            None,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    eventually("the executor finished", || task(&f, &id).column == "review").await;
    for _ in 0..3 {
        runner.tick();
    }
    stop.cancel();
    let got: Vec<String> = users(&f.engine, &sid)
        .into_iter()
        .filter(|u| u.contains("Keep Ilse's name out of the first page."))
        .collect();
    assert_eq!(got.len(), 1, "delivered once: {got:?}");
    assert!(got[0].contains("<author-steering>"));
    let rows = board(&f).read(|c| steering::list(c, &id)).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].delivered_to.as_deref(), Some(sid.as_str()));
    let log = log_text(&f, &id);
    assert_eq!(
        log.matches(&format!("delivered to session {sid}")).count(),
        1,
        "{log}"
    );
    let live = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, RunnerEvent::Steered { live: true, .. }))
        .count();
    assert_eq!(live, 1);
    // Nothing reached the reviewer that came after.
    for r in sessions_of(&f.engine, "reviewer", &id) {
        assert!(users(&f.engine, &r).iter().all(|u| !u.contains("Ilse")));
    }
}

/// A comment for a task no session works on waits; the task's next session gets it in its
/// first message, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_without_a_live_session_waits_for_the_next_one() {
    let f = fx(3, 2);
    let id = create(&f, "Draft chapter 12", &[]).await;
    planned(&f, &id);
    let providers = scripts(&[(
        "executor",
        vec![slow("", json!([call("fn_task_done", json!({}))]), 300)],
    )]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    runner.set_enabled(false);
    assert_eq!(
        runner.tick().started,
        0,
        "a stopped scheduler starts nothing"
    );
    let r = f
        .engine
        .author_call(
            "fn_task_steer",
            json!({"task_id": id, "text": "Write it in the present tense."}),
            None,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    assert_eq!(
        board(&f).read(|c| steering::undelivered(c, &id)).unwrap(),
        1
    );
    runner.set_enabled(true);
    assert_eq!(runner.tick().started, 1);
    let sid = sessions_of(&f.engine, "executor", &id)[0].clone();
    // The run logs its first message once it starts.
    eventually("the executor's first message is logged", || {
        !users(&f.engine, &sid).is_empty()
    })
    .await;
    let msgs = users(&f.engine, &sid);
    assert!(
        msgs[0].contains("Write it in the present tense."),
        "{}",
        msgs[0]
    );
    assert_eq!(
        board(&f).read(|c| steering::undelivered(c, &id)).unwrap(),
        0
    );
    eventually("the executor finished", || !host.is_running(&sid)).await;
    let n = users(&f.engine, &sid)
        .iter()
        .filter(|u| u.contains("present tense"))
        .count();
    assert_eq!(n, 1);
}

/// With a bound of 1, the second REVISE does not send the task back: it parks in Review for
/// the author, and no third executor session starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_revise_bound_parks_the_task_for_the_author() {
    let f = fx(1, 2);
    let id = create(&f, "Draft chapter 12", &[]).await;
    planned(&f, &id);
    let providers = scripts(&[
        (
            "executor",
            vec![
                turn("", json!([call("fn_task_done", json!({}))])),
                turn("", json!([call("fn_task_done", json!({}))])),
                turn("", json!([call("fn_task_done", json!({}))])),
            ],
        ),
        (
            "reviewer",
            vec![
                turn("REVISE: more weather.", json!([])),
                turn("REVISE: still not enough weather.", json!([])),
                turn("APPROVE", json!([])),
            ],
        ),
    ]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    let stop = tokio_util::sync::CancellationToken::new();
    runner.spawn(stop.clone());
    eventually("the task parks", || task(&f, &id).status == PARKED).await;
    // Give the scheduler a chance to (wrongly) start anything else.
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.cancel();
    let t = task(&f, &id);
    assert_eq!((t.column.as_str(), t.status.as_str()), ("review", PARKED));
    assert_eq!(sessions_of(&f.engine, "executor", &id).len(), 2);
    assert_eq!(sessions_of(&f.engine, "reviewer", &id).len(), 2);
    let log = log_text(&f, &id);
    assert!(log.contains("the bound of 1 is reached"), "{log}");
    assert!(log.contains("still not enough weather"), "{log}");
}

/// Bad input to the author's steering: an unknown task, empty text, a Done task — each a
/// typed error and nothing stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_steering_is_refused_and_stores_nothing() {
    let f = fx(3, 2);
    let id = create(&f, "Draft chapter 12", &[]).await;
    let r = f
        .engine
        .author_call(
            "fn_task_steer",
            json!({"task_id": "NB-999", "text": "x"}),
            None,
        )
        .await;
    assert!(!r.ok);
    assert_eq!(r.details.as_ref().unwrap()["code"], "TASK_NOT_FOUND");
    let r = f
        .engine
        .author_call("fn_task_steer", json!({"task_id": id, "text": "   "}), None)
        .await;
    assert!(!r.ok);
    assert_eq!(r.details.as_ref().unwrap()["code"], "INVALID_ARGUMENT");
    let r = f
        .engine
        .author_call(
            "fn_task_move",
            json!({"task_id": id, "column": "done"}),
            None,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    let r = f
        .engine
        .author_call(
            "fn_task_steer",
            json!({"task_id": id, "text": "late"}),
            None,
        )
        .await;
    assert!(!r.ok);
    assert_eq!(r.details.as_ref().unwrap()["code"], "TASK_WRONG_COLUMN");
    assert!(board(&f)
        .read(|c| steering::list(c, &id))
        .unwrap()
        .is_empty());
}

/// Pausing a task while its executor runs stops that session; the task keeps its stage and is
/// not parked, and nothing starts for it until it is resumed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pausing_a_task_stops_its_running_session() {
    let f = fx(3, 2);
    let id = create(&f, "Draft chapter 12", &[]).await;
    planned(&f, &id);
    let providers = scripts(&[(
        "executor",
        vec![
            slow("", json!([call("fn_task_done", json!({}))]), 5000),
            turn("", json!([call("fn_task_done", json!({}))])),
        ],
    )]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    let stop = tokio_util::sync::CancellationToken::new();
    runner.spawn(stop.clone());
    eventually("the executor runs", || runner.status().running == 1).await;
    let sid = sessions_of(&f.engine, "executor", &id)[0].clone();
    let r = f
        .engine
        .author_call(
            "fn_task_pause",
            json!({"task_id": id, "paused": true}),
            None,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    eventually("the session is stopped", || !host.is_running(&sid)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = task(&f, &id);
    assert_eq!(
        (t.column.as_str(), t.status.as_str()),
        ("drafting", "paused")
    );
    assert_eq!(sessions_of(&f.engine, "executor", &id).len(), 1);
    // Resumed: the stage is scheduled again.
    let r = f
        .engine
        .author_call(
            "fn_task_pause",
            json!({"task_id": id, "paused": false}),
            None,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    eventually("the task reaches Review", || {
        task(&f, &id).column == "review"
    })
    .await;
    stop.cancel();
    assert_eq!(sessions_of(&f.engine, "executor", &id).len(), 2);
}

/// Pausing a task also stops the agents its executor spawned (they run as background jobs,
/// which stopping the executor alone would not reach).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pausing_a_task_stops_the_agents_its_session_spawned() {
    let f = fx(3, 2);
    let id = create(&f, "Draft chapter 12", &[]).await;
    planned(&f, &id);
    let spawn = call(
        "fn_spawn_agent",
        json!({"name": "Scene drafter", "role": "executor", "task": "Draft the harbour scene."}),
    );
    let providers = scripts(&[
        (
            "executor",
            vec![
                turn("", json!([spawn])),
                slow("", json!([call("fn_task_done", json!({}))]), 5000),
            ],
        ),
        ("step-session", vec![slow("a long scene", json!([]), 30000)]),
    ]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    let stop = tokio_util::sync::CancellationToken::new();
    runner.spawn(stop.clone());
    let child = || {
        f.engine
            .sessions()
            .into_iter()
            .find(|s| s.profile == "step-session")
            .map(|s| s.id)
    };
    eventually("the spawned child runs", || {
        child().is_some_and(|c| host.is_running(&c))
    })
    .await;
    let child = child().unwrap();
    let r = f
        .engine
        .author_call(
            "fn_task_pause",
            json!({"task_id": id, "paused": true}),
            None,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    eventually("the child is stopped", || !host.is_running(&child)).await;
    let exec = sessions_of(&f.engine, "executor", &id)[0].clone();
    eventually("the executor is stopped", || !host.is_running(&exec)).await;
    stop.cancel();
}

/// A task session whose call waits for the author without a run in this process (a call
/// restored after a restart, or one left by `nbook board run --once`) holds its task: the
/// scheduler starts no second session for that stage, and the call keeps its slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_call_without_a_run_keeps_its_task_and_its_slot() {
    let f = fx(3, 2);
    let id = create(&f, "Draft chapter 12", &[]).await;
    planned(&f, &id);
    let sid = f
        .engine
        .create_session("executor", Mode::Normal, "executor", None)
        .unwrap()
        .id;
    f.engine
        .set_session_state(&sid, vec![(SESSION_TASK.into(), json!(id))])
        .unwrap();
    // Not allowed in fx's [approval.tools]: it waits under supervised.
    let waiting = ToolCall {
        id: "c1".into(),
        name: "fn_task_file_scope_add".into(),
        arguments: json!({"files": ["manuscript/012/*.md"]}),
    };
    let (e, s) = (f.engine.clone(), sid.clone());
    let _held = tokio::spawn(async move { e.call(&s, waiting, Approval::Queue).await });
    eventually("the call waits", || f.engine.pending().len() == 1).await;

    let providers = scripts(&[("executor", vec![turn("working", json!([]))])]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    runner.tick();
    assert_eq!(
        sessions_of(&f.engine, "executor", &id),
        vec![sid.clone()],
        "no second executor for a task whose session waits for the author"
    );
    let st = runner.status();
    assert_eq!(st.running, 1, "the waiting call keeps its slot: {st:?}");
}

/// The workflow's effective `maxReviewRevisions` replaces `[board] max_rework` (3 here): a
/// value of 1 set on builtin:chapter parks the task after its first REVISE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workflow_setting_max_review_revisions_bounds_the_rework() {
    let f = fx(3, 2);
    let r = f
        .engine
        .author_call(
            "fn_workflow_settings",
            json!({"action": "set", "workflow_id": "builtin:chapter", "values": {"maxReviewRevisions": 1}}),
            None,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    let id = create(&f, "Draft chapter 12", &[]).await;
    planned(&f, &id);
    let providers = scripts(&[
        (
            "executor",
            vec![
                turn("", json!([call("fn_task_done", json!({}))])),
                turn("", json!([call("fn_task_done", json!({}))])),
            ],
        ),
        (
            "reviewer",
            vec![
                turn("REVISE: more weather.", json!([])),
                turn("REVISE: still not enough weather.", json!([])),
            ],
        ),
    ]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    let stop = tokio_util::sync::CancellationToken::new();
    runner.spawn(stop.clone());
    eventually("the task parks", || task(&f, &id).status == PARKED).await;
    stop.cancel();
    let log = log_text(&f, &id);
    assert!(log.contains("the bound of 1 is reached"), "{log}");
    assert_eq!(sessions_of(&f.engine, "reviewer", &id).len(), 2);
}

/// End to end (issue #17): a custom workflow declaring `workflowStepTimeoutMs` is created by
/// an agent (approved), the author sets its value to 1000 ms, a task runs that workflow, and
/// the executor's slow run (3 s) is stopped at the limit: the task waits for the author with
/// the reason, while a task of builtin:chapter (default 15 min) is not cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_workflows_step_timeout_stops_a_slow_role_session() {
    let f = fx(3, 2);
    let planner = f
        .engine
        .create_session("planning", Mode::Normal, "p", None)
        .unwrap()
        .id;
    let ir = json!({
        "version": "v2", "name": "Quick scenes",
        "columns": [
            {"id": "planning", "name": "Planning", "traits": [{"trait": "intake"}]},
            {"id": "drafting", "name": "Drafting", "traits": []},
            {"id": "review", "name": "Review", "traits": []},
            {"id": "done", "name": "Done", "traits": [{"trait": "complete"}]},
            {"id": "archived", "name": "Archived", "traits": [{"trait": "archived"}]}
        ],
        "nodes": [], "edges": [],
        "settings": [{"id": "workflowStepTimeoutMs", "name": "Time limit", "type": "number", "integer": true, "minimum": 1000, "default": 900000}]
    });
    let r = f
        .engine
        .call(
            &planner,
            ToolCall {
                id: String::new(),
                name: "fn_workflow_create".into(),
                arguments: json!({"name": "Quick scenes", "ir": ir}),
            },
            Approval::Auto {
                decision: Decision::Approve,
                by: "test",
            },
        )
        .await;
    assert!(r.ok, "{}", r.content);
    let wf = r.details.unwrap()["workflowId"]
        .as_str()
        .unwrap()
        .to_string();
    let r = f
        .engine
        .author_call(
            "fn_workflow_settings",
            json!({"action": "set", "workflow_id": wf, "values": {"workflowStepTimeoutMs": 1000}}),
            None,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    assert_eq!(
        r.details.unwrap()["effective"]["workflowStepTimeoutMs"],
        1000
    );
    let r = f
        .engine
        .author_call(
            "fn_task_create",
            json!({"description": "A quick scene", "workflow_id": wf}),
            None,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    let quick = r.details.unwrap()["taskId"].as_str().unwrap().to_string();
    planned(&f, &quick);
    let providers = scripts(&[(
        "executor",
        vec![slow("", json!([call("fn_task_done", json!({}))]), 3000)],
    )]);
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    let stop = tokio_util::sync::CancellationToken::new();
    let started = std::time::Instant::now();
    runner.spawn(stop.clone());
    eventually("the slow task parks", || task(&f, &quick).status == PARKED).await;
    let took = started.elapsed();
    stop.cancel();
    let t = task(&f, &quick);
    assert_eq!(t.column, "drafting", "it did not reach Review");
    let log = log_text(&f, &quick);
    assert!(
        log.contains("ran past the workflow's workflowStepTimeoutMs (1000 ms)"),
        "{log}"
    );
    assert!(
        took < Duration::from_millis(2900),
        "cut at the limit, not at the end: {took:?}"
    );
}
