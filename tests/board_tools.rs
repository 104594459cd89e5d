//! The board's fn_* tools through the real engine on a real project: the per-role tool sets
//! (withheld when the session is built), mutating calls held in the approval queue with the
//! board's field diff as their preview, the session's own task, typed error results with
//! `details.code`, and a compare-and-swap race lost between preview and approval.

#[allow(dead_code)]
mod engine_support;

use std::time::Duration;

use engine_support::{call, fx, Fx, APPROVE};
use nbook::engine::{Approval, CallResult, CallStatus, Decision, Mode, PreviewBody};
use nbook::tools::fusion::SESSION_TASK;
use serde_json::{json, Value};

impl Fx {
    fn session(&self, profile: &str, task: Option<&str>) -> String {
        let sid = self
            .engine
            .create_session(profile, Mode::Normal, "t", None)
            .unwrap()
            .id;
        if let Some(t) = task {
            self.engine
                .set_session_state(&sid, vec![(SESSION_TASK.into(), json!(t))])
                .unwrap();
        }
        sid
    }

    async fn run(&self, sid: &str, tool: &str, args: Value) -> CallResult {
        self.engine.call(sid, call(tool, args), APPROVE).await
    }

    async fn ok(&self, sid: &str, tool: &str, args: Value) -> Value {
        let r = self.run(sid, tool, args).await;
        assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
        r.details.unwrap_or(Value::Null)
    }

    /// The call fails with a tool error carrying `code`.
    async fn code(&self, sid: &str, tool: &str, args: Value) -> (String, Value) {
        let r = self.run(sid, tool, args).await;
        assert_eq!(r.status, CallStatus::ToolError, "{tool}: {}", r.content);
        let d = r.details.unwrap_or(Value::Null);
        (d["code"].as_str().unwrap_or("").to_string(), d)
    }

    fn prompt(id: &str) -> String {
        format!("# Task: {id} — Draft chapter 12\n\n## Mission\nDraft it.\n\n## Steps\n### Step 0: Preflight\n### Step 1: Draft\n\n## File Scope\n- manuscript/012/*.md\n\n## Acceptance Criteria\n- Done.\n")
    }
}

fn names(f: &Fx, sid: &str) -> Vec<String> {
    nbook::agent::run_loop::tool_specs(&f.engine, sid)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

#[test]
fn each_role_is_offered_exactly_its_tools() {
    let f = fx();
    let triage = names(&f, &f.session("triage", None));
    let executor = names(&f, &f.session("executor", None));
    assert!(
        !triage.contains(&"fn_task_update".to_string()),
        "{triage:?}"
    );
    assert!(
        executor.contains(&"fn_task_update".to_string()),
        "{executor:?}"
    );
    for t in [
        "fn_task_list",
        "fn_task_search",
        "fn_task_show",
        "fn_task_prompt_write",
        "fn_task_create",
    ] {
        assert!(triage.contains(&t.to_string()), "triage lacks {t}");
    }
    assert!(!triage
        .iter()
        .any(|t| t == "write" || t == "edit" || t == "fn_task_done"));
    for t in [
        "write",
        "edit",
        "apply_patch",
        "read",
        "get_scene_world_context",
        "fn_task_done",
        "fn_task_add_dep",
    ] {
        assert!(executor.contains(&t.to_string()), "executor lacks {t}");
    }
    let step = names(&f, &f.session("step-session", None));
    assert!(!step
        .iter()
        .any(|t| t == "fn_task_update" || t == "fn_task_done"));
    let reviewer = names(&f, &f.session("reviewer", None));
    assert!(!reviewer
        .iter()
        .any(|t| t == "write" || t == "edit" || t == "apply_patch" || t == "bash"));
    for role in ["merger", "heartbeat", "chat", "planning"] {
        let tools = names(&f, &f.session(role, None));
        assert!(!tools.contains(&"fn_task_update".to_string()), "{role}");
        assert!(tools.contains(&"read".to_string()), "{role}");
    }
    // Every fn_* tool a role lists is a registered tool.
    for p in f.engine.profiles().iter() {
        for t in p.tools.iter().filter(|t| t.starts_with("fn_")) {
            assert!(
                f.engine.registry().get(t).is_some(),
                "profile {} lists unknown {t}",
                p.key
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_outside_the_role_is_not_allowed() {
    let f = fx();
    let sid = f.session("triage", Some("NB-001"));
    let r = f
        .run(&sid, "fn_task_update", json!({"step": 0, "status": "done"}))
        .await;
    assert_eq!(r.status, CallStatus::NotAllowed, "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutating_board_calls_wait_in_the_queue_with_a_field_diff() {
    let f = fx();
    let sid = f.session("triage", None);
    let (e, s) = (f.engine.clone(), sid.clone());
    let h = tokio::spawn(async move {
        e.call(
            &s,
            call(
                "fn_task_create",
                json!({"description": "Draft chapter 12 from its brief", "priority": "high"}),
            ),
            Approval::Queue,
        )
        .await
    });
    let mut pending = Vec::new();
    for _ in 0..500 {
        pending = f.engine.pending();
        if !pending.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let p = pending.first().expect("the create waits for approval");
    assert_eq!(p.tool, "fn_task_create");
    assert!(
        p.preview
            .summary
            .starts_with("fn_task_create: create Task NB-001"),
        "{}",
        p.preview.summary
    );
    match &p.preview.body {
        PreviewBody::Records { changes } => {
            assert!(changes[0]
                .fields
                .iter()
                .any(|c| c.field == "priority" && c.after == json!("high")))
        }
        other => panic!("{other:?}"),
    }
    let conn = nbook::store::open(&f.root.join(".nbook/project.sqlite")).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM nbook_board_task", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0, "nothing is created before approval");
    f.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(r.details.unwrap()["taskId"], "NB-001");
    // Rejected: nothing changes.
    let r = f
        .engine
        .call(
            &sid,
            call("fn_task_create", json!({"description": "Another"})),
            Approval::Auto {
                decision: Decision::Reject {
                    reason: Some("no".into()),
                },
                by: "test",
            },
        )
        .await;
    assert_eq!(r.status, CallStatus::Rejected);
    let n: i64 = conn
        .query_row("SELECT count(*) FROM nbook_board_task", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triage_plans_and_the_executor_works_its_own_task() {
    let f = fx();
    let triage0 = f.session("triage", None);
    let created = f
        .ok(
            &triage0,
            "fn_task_create",
            json!({"description": "Draft chapter 12"}),
        )
        .await;
    let id = created["taskId"].as_str().unwrap().to_string();
    let dup = f
        .ok(
            &triage0,
            "fn_task_create",
            json!({"description": "draft   CHAPTER 12"}),
        )
        .await;
    assert_eq!(
        (dup["taskId"].as_str(), dup["wasDuplicate"].as_bool()),
        (Some(id.as_str()), Some(true))
    );
    let found = f
        .ok(&triage0, "fn_task_search", json!({"query": "chapter 12"}))
        .await;
    assert_eq!(found["tasks"][0]["id"], json!(id));
    let triage = f.session("triage", Some(&id));
    // A bad plan names its section.
    let bad = Fx::prompt(&id).replace("## Mission\nDraft it.\n", "");
    let (code, d) = f
        .code(&triage, "fn_task_prompt_write", json!({"content": bad}))
        .await;
    assert_eq!(
        (code.as_str(), d["section"].as_str()),
        ("PROMPT_INVALID", Some("## Mission"))
    );
    f.ok(
        &triage,
        "fn_task_prompt_write",
        json!({"content": Fx::prompt(&id)}),
    )
    .await;
    let shown = f.run(&triage, "fn_task_show", json!({"id": id})).await;
    assert!(
        shown.content.contains("## Acceptance Criteria"),
        "{}",
        shown.content
    );
    let exec = f.session("executor", Some(&id));
    let (code, _) = f
        .code(
            &exec,
            "fn_task_update",
            json!({"step": 0, "status": "done"}),
        )
        .await;
    assert_eq!(code, "TASK_WRONG_COLUMN");
    f.ok(&exec, "fn_task_promote", json!({})).await;
    let r = f
        .run(
            &exec,
            "fn_task_update",
            json!({"step": 0, "status": "done"}),
        )
        .await;
    assert_eq!(r.content, "Step 0 (Preflight) → done. Progress 1/2");
    let (code, _) = f
        .code(
            &exec,
            "fn_task_update",
            json!({"step": 5, "status": "done"}),
        )
        .await;
    assert_eq!(code, "STEP_NOT_FOUND");
    let (code, d) = f
        .code(
            &exec,
            "fn_task_update",
            json!({"custom_fields": {"draftStage": "final"}}),
        )
        .await;
    assert_eq!(
        (code.as_str(), d["rejection"].as_str()),
        ("CUSTOM_FIELD_REJECTED", Some("enum-violation"))
    );
    let (code, _) = f
        .code(
            &exec,
            "fn_task_file_scope_add",
            json!({"files": ["/etc/passwd"]}),
        )
        .await;
    assert_eq!(code, "FILE_SCOPE_INVALID");
    f.ok(
        &exec,
        "fn_task_log",
        json!({"message": "Opening drafted", "outcome": "ok"}),
    )
    .await;
    let logs = f
        .ok(
            &exec,
            "fn_task_logs_read",
            json!({"type": "status", "limit": 1}),
        )
        .await;
    assert_eq!(logs["entries"][0]["text"], "Opening drafted");
    let (code, _) = f
        .code(&exec, "fn_task_done", json!({"outcome": "blocked"}))
        .await;
    assert_eq!(code, "BLOCKED_REASON_REQUIRED");
    let done = f
        .ok(&exec, "fn_task_done", json!({"summary": "Drafted"}))
        .await;
    assert_eq!(done["column"], "review");
    assert!(
        nbook::engine::Engine::effects(&f.engine, "fn_task_done")
            .unwrap()
            .ends_run
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_and_planning_must_name_the_task() {
    let f = fx();
    let triage = f.session("triage", None);
    f.ok(&triage, "fn_task_create", json!({"description": "A"}))
        .await;
    for role in ["chat", "planning"] {
        let sid = f.session(role, None);
        let (code, _) = f
            .code(
                &sid,
                "fn_task_document_write",
                json!({"key": "notes", "content": "x"}),
            )
            .await;
        assert_eq!(code, "TASK_ID_REQUIRED", "{role}");
        let (code, _) = f.code(&sid, "fn_task_document_read", json!({})).await;
        assert_eq!(code, "TASK_ID_REQUIRED", "{role}");
        f.ok(
            &sid,
            "fn_task_document_write",
            json!({"key": format!("{role}-notes"), "content": "x", "task_id": "NB-001"}),
        )
        .await;
    }
    let sid = f.session("chat", None);
    let list = f
        .ok(&sid, "fn_task_document_read", json!({"task_id": "NB-001"}))
        .await;
    assert_eq!(list["documents"].as_array().unwrap().len(), 2);
    let (code, _) = f
        .code(
            &sid,
            "fn_task_document_read",
            json!({"task_id": "NB-001", "key": "missing"}),
        )
        .await;
    assert_eq!(code, "TASK_DOCUMENT_NOT_FOUND");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cas_race_lost_in_the_queue_gets_the_typed_error() {
    let f = fx();
    let triage = f.session("triage", None);
    f.ok(&triage, "fn_task_create", json!({"description": "A"}))
        .await;
    let a = f.session("executor", Some("NB-001"));
    let b = f.session("executor", Some("NB-001"));
    // Both writers ask to create the document (expected_revision 0); both previews pass.
    let spawn = |sid: String, content: &'static str| {
        let e = f.engine.clone();
        tokio::spawn(async move {
            e.call(
                &sid,
                call(
                    "fn_task_document_write",
                    json!({"key": "plan-notes", "content": content, "expected_revision": 0}),
                ),
                Approval::Queue,
            )
            .await
        })
    };
    let ha = spawn(a, "from a");
    let hb = spawn(b, "from b");
    let mut pending = Vec::new();
    for _ in 0..1000 {
        pending = f.engine.pending();
        if pending.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(pending.len(), 2);
    f.engine
        .decide(&pending[0].approval_id, Decision::Approve)
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    f.engine
        .decide(&pending[1].approval_id, Decision::Approve)
        .unwrap();
    let (ra, rb) = (ha.await.unwrap(), hb.await.unwrap());
    let (win, lose) = if ra.ok { (ra, rb) } else { (rb, ra) };
    assert!(win.ok, "{}", win.content);
    assert_eq!(lose.status, CallStatus::ToolError, "{}", lose.content);
    let d = lose.details.unwrap();
    assert_eq!(d["code"], "TASK_DOCUMENT_PRECONDITION_FAILED");
    assert_eq!(d["currentRevision"], 1);
    assert_eq!(d["expectedRevision"], 0);
    assert_eq!(d["taskId"], "NB-001");
    assert!(d["currentContentHash"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    assert!(!lose.content.contains("from a") && !d.to_string().contains("from a"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn goals_read_through_the_tools() {
    let f = fx();
    let board = nbook::board::Board::new(&f.root, "book");
    for i in 0..3 {
        board
            .commit(|c| nbook::board::goals::create(c, &format!("Act {i}"), "First draft by March"))
            .unwrap();
    }
    let sid = f.session("executor", None);
    let l = f.ok(&sid, "fn_goal_list", json!({})).await;
    assert_eq!(
        (l["activeCount"].as_u64(), l["hardLimit"].as_u64()),
        (Some(3), Some(5))
    );
    assert!(l["softWarning"].is_string());
    let g = f.ok(&sid, "fn_goal_show", json!({"id": "G-002"})).await;
    assert_eq!(g["goal"]["title"], "Act 1");
    let (code, _) = f.code(&sid, "fn_goal_show", json!({"id": "G-404"})).await;
    assert_eq!(code, "GOAL_NOT_FOUND");
    let r = f.run(&sid, "fn_goal_list", json!({"status": "done"})).await;
    assert_eq!(r.status, CallStatus::InvalidArgs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_after_the_task_changed_is_stale_and_changes_nothing() {
    let f = fx();
    let triage = f.session("triage", None);
    f.ok(
        &triage,
        "fn_task_create",
        json!({"description": "Draft chapter 12"}),
    )
    .await;
    let planner = f.session("triage", Some("NB-001"));
    f.ok(
        &planner,
        "fn_task_prompt_write",
        json!({"content": Fx::prompt("NB-001")}),
    )
    .await;
    let exec = f.session("executor", Some("NB-001"));
    f.ok(&exec, "fn_task_promote", json!({})).await;
    let (e, s) = (f.engine.clone(), exec.clone());
    let h = tokio::spawn(async move {
        e.call(
            &s,
            call("fn_task_update", json!({"step": 1, "status": "done"})),
            Approval::Queue,
        )
        .await
    });
    let mut pending = Vec::new();
    for _ in 0..500 {
        pending = f.engine.pending();
        if !pending.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let p = pending.first().expect("the update waits");
    assert_eq!(p.preview.targets[0].key, "board/task/NB-001");
    // Meanwhile another session changes the task.
    let other = f.session("executor", Some("NB-001"));
    f.ok(
        &other,
        "fn_task_update",
        json!({"step": 0, "status": "done"}),
    )
    .await;
    f.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Stale, "{}", r.content);
    let shown = f.ok(&triage, "fn_task_list", json!({})).await;
    assert_eq!(
        shown["columns"][1]["tasks"][0]["progress"], "1/2",
        "only the other update ran"
    );
    let (code, _) = f
        .code(&triage, "fn_task_show", json!({"id": "NB-404"}))
        .await;
    assert_eq!(code, "TASK_NOT_FOUND");
}
