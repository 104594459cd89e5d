//! A task's repository scope declared up front, through the real engine on real sibling
//! project folders with real SQLite: `fn_task_create`'s `repository_scope` and the plan's
//! `## Repository Scope` set the task's declared books (own book implied, duplicates folded);
//! outside workspace mode (`WORKSPACE_MODE_REQUIRED`) or for an unknown book (`UNKNOWN_REPO`
//! with the series' books; `PROMPT_INVALID` in a plan) nothing persists; acquiring a declared
//! book works as before, and acquiring an undeclared one extends the declared scope.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nbook::board::repository_scope;
use nbook::board::tasks;
use nbook::board::Board;
use nbook::config::{Config, Dirs};
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, LogRecord, Mode, ToolCall,
};
use nbook::tools::fusion::SESSION_TASK;
use serde_json::{json, Value};

const APPROVE: Approval = Approval::Auto {
    decision: Decision::Approve,
    by: "test",
};

struct Fx {
    _tmp: tempfile::TempDir,
    engine: Arc<Engine>,
    board: Board,
}

fn book(folder: &Path, name: &str, title: &str) -> PathBuf {
    let root = folder.join(name);
    nbook::workspace::init::init(&root, Some(title)).unwrap();
    root
}

/// Two books in one series folder (three when `third`); the first declares `series`.
fn fx_declaring(series: &str, third: bool) -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("series");
    let root = book(&folder, "salt-road", "The Salt Road");
    book(&folder, "iron-coast", "The Iron Coast");
    if third {
        book(&folder, "glass-sea", "The Glass Sea");
    }
    let path = root.join("project.yaml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(series);
    std::fs::write(path, text).unwrap();
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
    Fx {
        _tmp: tmp,
        engine,
        board: Board::new(&root, "salt-road"),
    }
}

fn fx() -> Fx {
    fx_declaring(
        "series:\n  - salt-road\n  - iron-coast\n  - glass-sea\n",
        true,
    )
}

fn code(r: &CallResult) -> String {
    r.details
        .as_ref()
        .and_then(|d| d["code"].as_str())
        .unwrap_or_default()
        .to_string()
}

impl Fx {
    fn session(&self, profile: &str, task: Option<&str>) -> String {
        let sid = self
            .engine
            .create_session(profile, Mode::Normal, "t", None)
            .unwrap()
            .id;
        if let Some(task) = task {
            self.engine
                .set_session_state(&sid, vec![(SESSION_TASK.into(), json!(task))])
                .unwrap();
        }
        sid
    }

    async fn run(&self, sid: &str, tool: &str, args: Value) -> CallResult {
        let call = ToolCall {
            id: String::new(),
            name: tool.into(),
            arguments: args,
        };
        self.engine.call(sid, call, APPROVE).await
    }

    async fn create(&self, args: Value) -> CallResult {
        let sid = self.session("triage", None);
        self.run(&sid, "fn_task_create", args).await
    }

    fn declared(&self, id: &str) -> Vec<String> {
        self.board
            .read(|c| repository_scope::declared(c, id))
            .unwrap()
            .into_iter()
            .map(|d| d.book)
            .collect()
    }

    fn task_count(&self) -> usize {
        self.board
            .read(|c| {
                Ok(
                    c.query_row("SELECT COUNT(*) FROM nbook_board_task", [], |r| {
                        r.get::<_, i64>(0)
                    })?,
                )
            })
            .unwrap() as usize
    }

    fn declared_rows(&self) -> usize {
        self.board
            .read(|c| {
                Ok(c.query_row(
                    "SELECT COUNT(*) FROM nbook_board_task_declared_repository",
                    [],
                    |r| r.get::<_, i64>(0),
                )?)
            })
            .unwrap() as usize
    }
}

fn plan(id: &str, scope: &str) -> String {
    format!("# Task: {id} — Carry the salt\n\n## Mission\nBoth books.\n\n## Steps\n### Step 0: Draft\n\n## File Scope\n- manuscript/*.md\n\n{scope}## Acceptance Criteria\n- Done.\n")
}

#[tokio::test]
async fn create_declares_the_books_folding_duplicates_and_the_own_book() {
    let f = fx();
    let r = f
        .create(json!({
            "description": "Carry the salt to the coast",
            "repository_scope": ["iron-coast", " salt-road ", "glass-sea", "iron-coast"],
        }))
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let d = r.details.unwrap();
    let id = d["taskId"].as_str().unwrap().to_string();
    assert_eq!(d["repositoryScope"], json!(["iron-coast", "glass-sea"]));
    assert_eq!(f.declared(&id), vec!["iron-coast", "glass-sea"]);
    assert!(r.content.contains("iron-coast, glass-sea"), "{}", r.content);
    // Declared is not acquired: no area, no acquisition row.
    assert!(f
        .board
        .read(|c| repository_scope::list(c, &id))
        .unwrap()
        .is_empty());
    let log: Vec<String> = f
        .board
        .read(|c| tasks::logs(c, &id, 50))
        .unwrap()
        .into_iter()
        .map(|e| e.action)
        .collect();
    assert!(
        log.iter()
            .any(|l| l == "Declared repository scope: iron-coast, glass-sea"),
        "{log:?}"
    );
}

#[tokio::test]
async fn outside_workspace_mode_a_declared_scope_is_refused_and_nothing_persists() {
    let f = fx_declaring("", false);
    let r = f
        .create(json!({"description": "Alone", "repository_scope": ["iron-coast"]}))
        .await;
    assert_eq!(code(&r), "WORKSPACE_MODE_REQUIRED", "{}", r.content);
    assert!(r.content.contains("series"), "{}", r.content);
    assert_eq!(f.task_count(), 0);
    assert_eq!(f.declared_rows(), 0);
    // Without the parameter the same book creates tasks as ever.
    let ok = f.create(json!({"description": "Alone"})).await;
    assert_eq!(ok.status, CallStatus::Ok, "{}", ok.content);
    assert_eq!(ok.details.unwrap()["repositoryScope"], json!([]));
}

#[tokio::test]
async fn an_unknown_book_is_unknown_repo_with_the_series_books_and_nothing_persists() {
    let f = fx();
    let r = f
        .create(json!({"description": "Lost", "repository_scope": ["iron-coast", "copper-hills"]}))
        .await;
    assert_eq!(code(&r), "UNKNOWN_REPO", "{}", r.content);
    let d = r.details.unwrap();
    assert_eq!(d["repo"], json!("copper-hills"));
    assert_eq!(
        d["available"],
        json!(["salt-road", "iron-coast", "glass-sea"])
    );
    assert_eq!(f.task_count(), 0);
    assert_eq!(f.declared_rows(), 0);
    let empty = f
        .create(json!({"description": "Lost", "repository_scope": ["  "]}))
        .await;
    assert_eq!(code(&empty), "INVALID_ARGUMENT", "{}", empty.content);
    assert_eq!(f.task_count(), 0);
}

#[tokio::test]
async fn the_plans_repository_scope_replaces_the_declared_books() {
    let f = fx();
    let r = f
        .create(json!({"description": "Carry", "repository_scope": ["glass-sea"]}))
        .await;
    let id = r.details.unwrap()["taskId"].as_str().unwrap().to_string();
    let tri = f.session("triage", Some(&id));
    let w = f
        .run(
            &tri,
            "fn_task_prompt_write",
            json!({"content": plan(&id, "## Repository Scope\n- `iron-coast`\n- salt-road\n- iron-coast\n\n")}),
        )
        .await;
    assert_eq!(w.status, CallStatus::Ok, "{}", w.content);
    assert_eq!(f.declared(&id), vec!["iron-coast"]);
    // A plan without the section leaves the declared scope as it is.
    let w = f
        .run(
            &tri,
            "fn_task_prompt_write",
            json!({"content": plan(&id, "")}),
        )
        .await;
    assert_eq!(w.status, CallStatus::Ok, "{}", w.content);
    assert_eq!(f.declared(&id), vec!["iron-coast"]);
}

#[tokio::test]
async fn a_plan_naming_an_unknown_book_is_prompt_invalid_and_changes_nothing() {
    let f = fx();
    let r = f
        .create(json!({"description": "Carry", "repository_scope": ["glass-sea"]}))
        .await;
    let id = r.details.unwrap()["taskId"].as_str().unwrap().to_string();
    let tri = f.session("triage", Some(&id));
    for (section, want) in [
        ("## Repository Scope\n- copper-hills\n\n", "copper-hills"),
        ("## Repository Scope\nnone\n\n", "- book"),
    ] {
        let w = f
            .run(
                &tri,
                "fn_task_prompt_write",
                json!({"content": plan(&id, section)}),
            )
            .await;
        assert_eq!(code(&w), "PROMPT_INVALID", "{}", w.content);
        let d = w.details.unwrap();
        assert_eq!(d["section"], json!("## Repository Scope"));
        assert!(d["message"].as_str().unwrap().contains(want), "{d}");
        assert!(f
            .board
            .read(|c| tasks::require(c, &id))
            .unwrap()
            .prompt
            .is_none());
        assert_eq!(f.declared(&id), vec!["glass-sea"]);
    }
}

#[tokio::test]
async fn a_plan_with_a_repository_scope_outside_workspace_mode_is_prompt_invalid() {
    let f = fx_declaring("", false);
    let r = f.create(json!({"description": "Alone"})).await;
    let id = r.details.unwrap()["taskId"].as_str().unwrap().to_string();
    let tri = f.session("triage", Some(&id));
    let w = f
        .run(
            &tri,
            "fn_task_prompt_write",
            json!({"content": plan(&id, "## Repository Scope\n- iron-coast\n\n")}),
        )
        .await;
    assert_eq!(code(&w), "PROMPT_INVALID", "{}", w.content);
    assert!(w.content.contains("workspace mode"), "{}", w.content);
    assert_eq!(f.declared_rows(), 0);
}

#[tokio::test]
async fn acquiring_a_declared_book_works_and_an_undeclared_one_extends_the_scope() {
    let f = fx();
    let r = f
        .create(json!({"description": "Carry", "repository_scope": ["iron-coast"]}))
        .await;
    let id = r.details.unwrap()["taskId"].as_str().unwrap().to_string();
    let tri = f.session("triage", Some(&id));
    let w = f
        .run(
            &tri,
            "fn_task_prompt_write",
            json!({"content": plan(&id, "")}),
        )
        .await;
    assert_eq!(w.status, CallStatus::Ok, "{}", w.content);
    f.board
        .commit(|c| tasks::promote(c, &id, false, None))
        .unwrap();
    let ex = f.session("executor", Some(&id));
    let a = f
        .run(
            &ex,
            "fn_acquire_repo_worktree",
            json!({"repo": "iron-coast"}),
        )
        .await;
    assert_eq!(a.status, CallStatus::Ok, "{}", a.content);
    assert_eq!(a.details.unwrap()["extendedScope"], json!(false));
    assert_eq!(f.declared(&id), vec!["iron-coast"]);
    let b = f
        .run(
            &ex,
            "fn_acquire_repo_worktree",
            json!({"repo": "glass-sea", "reason": "the ship sails on"}),
        )
        .await;
    assert_eq!(b.status, CallStatus::Ok, "{}", b.content);
    assert_eq!(b.details.unwrap()["extendedScope"], json!(true));
    let d = f
        .board
        .read(|c| repository_scope::declared(c, &id))
        .unwrap();
    assert_eq!(d.len(), 2);
    assert_eq!(d[1].book, "glass-sea");
    assert_eq!(d[1].declared_by, "acquisition");
    assert_eq!(d[1].reason.as_deref(), Some("the ship sails on"));
}

#[tokio::test]
async fn fn_task_show_lists_the_declared_and_the_acquired_books() {
    let f = fx();
    let r = f
        .create(json!({"description": "Carry", "repository_scope": ["iron-coast", "glass-sea"]}))
        .await;
    let id = r.details.unwrap()["taskId"].as_str().unwrap().to_string();
    let ex = f.session("executor", Some(&id));
    let a = f
        .run(
            &ex,
            "fn_acquire_repo_worktree",
            json!({"repo": "glass-sea"}),
        )
        .await;
    assert_eq!(a.status, CallStatus::Ok, "{}", a.content);
    let tri = f.session("triage", None);
    let s = f.run(&tri, "fn_task_show", json!({"id": id})).await;
    assert_eq!(s.status, CallStatus::Ok, "{}", s.content);
    assert!(
        s.content.contains(
            "Repository scope: this book, glass-sea (acquired), iron-coast (declared, not acquired yet)"
        ),
        "{}",
        s.content
    );
    let books = &s.details.unwrap()["repositoryScope"];
    assert_eq!(books[0]["book"], json!("glass-sea"));
    assert_eq!(books[0]["acquired"], json!(true));
    assert_eq!(books[1]["book"], json!("iron-coast"));
    assert_eq!(books[1]["acquired"], json!(false));
    assert_eq!(books[1]["declared"], json!(true));
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

/// The real scheduler starts the executor of a task that declared two books and acquired
/// one: its first message names the book still to acquire and the one it has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executors_first_message_lists_the_declared_books_to_acquire() {
    use nbook::agent::host::{Host, ProviderSource};
    use nbook::agent::{Provider, ReplayProvider};
    use nbook::runner::Runner;
    let f = fx();
    let r = f
        .create(json!({"description": "Carry", "repository_scope": ["iron-coast", "glass-sea"]}))
        .await;
    let id = r.details.unwrap()["taskId"].as_str().unwrap().to_string();
    let p = plan(&id, "");
    f.board
        .commit(|c| tasks::write_prompt(c, &id, &p, None))
        .unwrap();
    f.board
        .commit(|c| tasks::promote(c, &id, false, None))
        .unwrap();
    let ex = f.session("executor", Some(&id));
    let a = f
        .run(
            &ex,
            "fn_acquire_repo_worktree",
            json!({"repo": "glass-sea"}),
        )
        .await;
    assert_eq!(a.status, CallStatus::Ok, "{}", a.content);
    let script = json!({"text": "", "tool_calls": [], "delay_ms": 200}).to_string();
    let replay: Arc<dyn Provider> = Arc::new(ReplayProvider::parse(&script, "executor").unwrap());
    let providers: ProviderSource = Arc::new(move |_profile, _model| Ok(replay.clone()));
    let host = Host::attach(f.engine.clone(), providers, Approval::Queue);
    let runner = Runner::new(f.engine.clone(), host.clone());
    assert_eq!(runner.tick().started, 1);
    let sid = f
        .engine
        .sessions()
        .into_iter()
        .find(|s| {
            s.profile == "executor"
                && s.id != ex
                && f.engine.session_task(&s.id).as_deref() == Some(id.as_str())
        })
        .expect("the scheduler's executor session")
        .id;
    let mut first = None;
    for _ in 0..1500 {
        if let Some(m) = users(&f.engine, &sid).into_iter().next() {
            first = Some(m);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let first = first.expect("the executor's first message within 30 s");
    assert!(
        first.contains("Declared, not acquired yet: iron-coast. Call fn_acquire_repo_worktree"),
        "{first}"
    );
    assert!(first.contains("Acquired already: glass-sea"), "{first}");
    for _ in 0..1500 {
        if !host.is_running(&sid) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
