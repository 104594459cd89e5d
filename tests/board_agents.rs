//! Agents at task level (`fn_list_agents`, `fn_delegate_task`, `fn_spawn_agent`,
//! `fn_ask_question`, `fn_heartbeat_done`) through the real engine on a real project, and —
//! where a model runs — through the real agent host with scripted (replay) models: which
//! roles are offered which tools (withheld when the session is built; `fn_heartbeat_done`
//! listed last), each tool's result and typed errors, a spawned child counted against the
//! concurrency limit and stopped when its parent's task ends, and a question card answered in
//! the author's form arriving as the session's next message.

#[allow(dead_code)]
mod engine_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_support::{call, Fx, APPROVE};
use nbook::agent::host::{Host, ProviderSource};
use nbook::agent::{Provider, ReplayProvider};
use nbook::board::tasks::{self as bt, NewTask};
use nbook::board::Board;
use nbook::config::{Config, Preset};
use nbook::engine::agents::{InvokeMode, InvokeRequest};
use nbook::engine::jobs::{DeliveryStatus, JobStatus};
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, LogRecord, Mode, SessionState,
};
use nbook::tools::fusion::agents::{running_task_sessions, SESSION_PARENT};
use nbook::tools::fusion::SESSION_TASK;
use nbook::tui::widgets::forms::AnswerForm;
use serde_json::{json, Value};

fn fx() -> Fx {
    fx_with(|_| {})
}

fn fx_with(adjust: impl FnOnce(&mut Config)) -> Fx {
    let mut config = Config::default();
    config.approval.preset = Preset::Supervised;
    adjust(&mut config);
    engine_support::fx_with(config)
}

impl Fx {
    fn session(&self, profile: &str, task: Option<&str>) -> String {
        let sid = self
            .engine
            .create_session(profile, Mode::Normal, profile, None)
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

    async fn ok(&self, sid: &str, tool: &str, args: Value) -> CallResult {
        let r = self.run(sid, tool, args).await;
        assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
        r
    }

    /// The call fails with a tool error carrying `code`; its message says nothing changed.
    async fn code(&self, sid: &str, tool: &str, args: Value) -> String {
        let r = self.run(sid, tool, args).await;
        assert_eq!(r.status, CallStatus::ToolError, "{tool}: {}", r.content);
        assert!(r.content.contains("nothing was changed"), "{}", r.content);
        r.details.unwrap_or(Value::Null)["code"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    fn board(&self) -> Board {
        Board::new(&self.root, "Book")
    }

    fn tasks(&self) -> Vec<nbook::board::Task> {
        self.board().read(|c| bt::all(c, None)).unwrap()
    }

    /// A task planned and promoted into Drafting, as the executor finds it.
    fn drafting_task(&self) -> String {
        let b = self.board();
        b.commit(|c| {
            bt::create(
                c,
                &NewTask {
                    description: "Draft chapter 12 from its brief".into(),
                    ..NewTask::default()
                },
            )
        })
        .unwrap();
        let plan = "# Task: NB-001 — Draft chapter 12\n\n## Mission\nDraft it.\n\n## Steps\n### Step 0: Preflight\n### Step 1: Draft\n\n## File Scope\n- manuscript/012/*.md\n\n## Acceptance Criteria\n- Done.\n";
        b.commit(|c| bt::write_prompt(c, "NB-001", plan, None))
            .unwrap();
        b.commit(|c| bt::promote(c, "NB-001", false, None)).unwrap();
        "NB-001".into()
    }
}

fn names(f: &Fx, sid: &str) -> Vec<String> {
    nbook::agent::run_loop::tool_specs(&f.engine, sid)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

const AGENT_TOOLS: [&str; 5] = [
    "fn_list_agents",
    "fn_delegate_task",
    "fn_spawn_agent",
    "fn_ask_question",
    "fn_heartbeat_done",
];

#[test]
fn each_role_is_offered_exactly_its_agent_tools_and_heartbeat_done_comes_last() {
    let f = fx();
    let expect: &[(&str, &[&str])] = &[
        ("triage", &["fn_list_agents"]),
        ("executor", &["fn_list_agents", "fn_spawn_agent"]),
        ("step-session", &["fn_list_agents"]),
        ("reviewer", &[]),
        ("merger", &[]),
        (
            "heartbeat",
            &[
                "fn_list_agents",
                "fn_delegate_task",
                "fn_ask_question",
                "fn_heartbeat_done",
            ],
        ),
        (
            "chat",
            &["fn_list_agents", "fn_delegate_task", "fn_ask_question"],
        ),
        ("planning", &[]),
    ];
    for (role, tools) in expect {
        let sid = f.session(role, None);
        let offered = names(&f, &sid);
        let have: Vec<&str> = AGENT_TOOLS
            .iter()
            .copied()
            .filter(|t| offered.iter().any(|o| o == t))
            .collect();
        let mut want: Vec<&str> = tools.to_vec();
        want.sort_by_key(|t| AGENT_TOOLS.iter().position(|a| a == t));
        assert_eq!(have, want, "{role}'s agent tools");
    }
    let hb = f.session("heartbeat", None);
    let offered = names(&f, &hb);
    assert_eq!(
        offered.last().map(String::as_str),
        Some("fn_heartbeat_done"),
        "{offered:?}"
    );
    // The rest stay in name order.
    let rest = &offered[..offered.len() - 1];
    let mut sorted = rest.to_vec();
    sorted.sort();
    assert_eq!(rest, &sorted[..]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withheld_agent_tool_is_not_allowed_when_called_anyway() {
    let f = fx();
    let triage = f.session("triage", Some("NB-001"));
    for (tool, args) in [
        (
            "fn_spawn_agent",
            json!({"name": "x", "role": "executor", "task": "y"}),
        ),
        (
            "fn_delegate_task",
            json!({"agent_id": "writer", "description": "Draft chapter 3"}),
        ),
        ("fn_heartbeat_done", json!({})),
    ] {
        let r = f.run(&triage, tool, args).await;
        assert_eq!(r.status, CallStatus::NotAllowed, "{tool}: {}", r.content);
    }
    assert!(f.tasks().is_empty());
    // The author's goal tools are the author's only.
    let chat = f.session("chat", None);
    let r = f
        .run(&chat, "fn_goal_create", json!({"title": "Act 2 by March"}))
        .await;
    assert_eq!(r.status, CallStatus::NotAllowed, "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_agents_gives_profiles_and_optionally_sessions_with_their_task() {
    let f = fx();
    let exec = f.session("executor", Some("NB-001"));
    let chat = f.session("chat", None);
    let r = f.ok(&chat, "fn_list_agents", json!({})).await;
    let agents = r.details.unwrap()["agents"].as_array().unwrap().clone();
    let ids: Vec<&str> = agents.iter().filter_map(|a| a["id"].as_str()).collect();
    for id in [
        "writer",
        "triage",
        "executor",
        "heartbeat",
        "leader.default",
    ] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    assert!(!ids.contains(&"author"), "the author is a person");
    assert!(agents.iter().all(|a| a["ephemeral"] == false));
    let writer = agents.iter().find(|a| a["id"] == "writer").unwrap();
    assert_eq!(writer["role"], "custom");
    assert_eq!(writer["state"], "idle");
    let executor = agents.iter().find(|a| a["id"] == "executor").unwrap();
    assert_eq!(executor["role"], "executor");

    // With the sessions: the executor's session names its task; states follow the sessions.
    f.engine.set_state(&exec, SessionState::WaitingApproval);
    let r = f
        .ok(
            &chat,
            "fn_list_agents",
            json!({"includeEphemeral": true, "role": "executor"}),
        )
        .await;
    let agents = r.details.unwrap()["agents"].as_array().unwrap().clone();
    let worker = agents
        .iter()
        .find(|a| a["id"] == format!("session:{exec}"))
        .expect("the executor session");
    assert_eq!(worker["taskId"], "NB-001");
    assert_eq!(worker["state"], "paused");
    assert_eq!(worker["ephemeral"], true);
    assert!(agents.iter().all(|a| a["role"] == "executor"), "{agents:?}");
    let profile = agents.iter().find(|a| a["id"] == "executor").unwrap();
    assert_eq!(
        profile["state"], "paused",
        "its session waits for the author"
    );
    assert!(r.content.contains("task NB-001"), "{}", r.content);

    let r = f
        .ok(&chat, "fn_list_agents", json!({"state": "running"}))
        .await;
    assert!(r.details.unwrap()["agents"].as_array().unwrap().is_empty());
    assert!(r.content.contains("No agent matches"));

    // A role or state outside the lists is refused at the gate, naming the field.
    for bad in [json!({"role": "wizard"}), json!({"state": "asleep"})] {
        let r = f.run(&chat, "fn_list_agents", bad.clone()).await;
        assert_eq!(r.status, CallStatus::InvalidArgs, "{bad}: {}", r.content);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_task_creates_an_assigned_task_and_refuses_unknown_agents() {
    let f = fx();
    let hb = f.session("heartbeat", None);
    let r = f
        .ok(
            &hb,
            "fn_delegate_task",
            json!({"agent_id": "writer", "description": "Revise the Flett chapters for the watch"}),
        )
        .await;
    let d = r.details.unwrap();
    assert_eq!(d["taskId"], "NB-001");
    assert_eq!(d["assignee"], "writer");
    assert_eq!(d["wasDuplicate"], false);
    let t = &f.tasks()[0];
    assert_eq!(t.column, "planning");
    assert_eq!(t.custom_fields["assignee"], "writer");
    let log = f.board().read(|c| bt::logs(c, "NB-001", 10)).unwrap();
    assert!(
        log.iter().any(|e| e.action == "Assigned to writer"),
        "{log:?}"
    );

    // The same work again links to it and keeps its assignee.
    let r = f
        .ok(
            &hb,
            "fn_delegate_task",
            json!({"agent_id": "researcher", "description": "revise the Flett chapters  for the watch"}),
        )
        .await;
    let d = r.details.unwrap();
    assert_eq!(d["wasDuplicate"], true);
    assert_eq!(d["assignee"], "writer");
    assert!(
        r.content.contains("stays assigned to writer"),
        "{}",
        r.content
    );
    assert_eq!(f.tasks().len(), 1);

    // Unknown agents, the author and sessions: typed errors, nothing created.
    let exec = f.session("executor", Some("NB-001"));
    for (agent, want) in [
        ("ghostwriter", "AGENT_NOT_FOUND"),
        ("author", "AGENT_NOT_FOUND"),
        (&format!("session:{exec}") as &str, "AGENT_NOT_DELEGABLE"),
    ] {
        let code = f
            .code(
                &hb,
                "fn_delegate_task",
                json!({"agent_id": agent, "description": "Audit act 2 for continuity"}),
            )
            .await;
        assert_eq!(code, want, "{agent}");
    }
    let code = f
        .code(
            &hb,
            "fn_delegate_task",
            json!({"agent_id": "writer", "description": "Audit act 2", "dependencies": ["NB-404"]}),
        )
        .await;
    assert_eq!(code, "DEPENDENCY_NOT_FOUND");
    assert_eq!(f.tasks().len(), 1, "nothing was created");
    // An empty description is refused at the gate.
    let r = f
        .run(
            &hb,
            "fn_delegate_task",
            json!({"agent_id": "writer", "description": ""}),
        )
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_waits_for_the_author_with_the_new_task_as_its_preview() {
    let f = fx();
    let hb = f.session("heartbeat", None);
    let (e, s) = (f.engine.clone(), hb.clone());
    let h = tokio::spawn(async move {
        e.call(
            &s,
            call(
                "fn_delegate_task",
                json!({"agent_id": "writer", "description": "Draft chapter 4"}),
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
    let p = pending.first().expect("the delegation waits");
    assert_eq!(p.tool, "fn_delegate_task");
    let shown = serde_json::to_string(&p.preview.body).unwrap();
    assert!(shown.contains("writer"), "{shown}");
    assert!(f.tasks().is_empty(), "nothing before the approval");
    f.engine
        .decide(
            &p.approval_id,
            Decision::Reject {
                reason: Some("not now".into()),
            },
        )
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Rejected);
    assert!(
        f.tasks().is_empty(),
        "a rejected delegation created nothing"
    );
}

// ---- through the real agent host ----

/// One replay script per profile; each profile's script is shared by its sessions.
fn scripts(map: &[(&str, Vec<Value>, u64)]) -> ProviderSource {
    let providers: HashMap<String, Arc<dyn Provider>> = map
        .iter()
        .map(|(k, turns, delay)| {
            let text = turns
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n");
            let p = ReplayProvider::parse(&text, k)
                .expect("script")
                .with_word_delay(Duration::from_millis(*delay));
            (k.to_string(), Arc::new(p) as Arc<dyn Provider>)
        })
        .collect();
    let providers = Mutex::new(providers);
    Arc::new(move |profile, _model| {
        providers
            .lock()
            .unwrap()
            .get(&profile.key)
            .cloned()
            .ok_or_else(|| format!("no script for {}", profile.key))
    })
}

fn turn(text: &str, calls: Value) -> Value {
    json!({"text": text, "tool_calls": calls})
}

fn prompt(sid: &str, text: &str) -> InvokeRequest {
    InvokeRequest {
        caller: None,
        session_id: sid.into(),
        message: Some(text.into()),
        input: None,
        mode: InvokeMode::Prompt,
        model: None,
        origin_call_id: None,
    }
}

async fn eventually(what: &str, cond: impl Fn() -> bool) {
    for _ in 0..1000 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting until {what}");
}

/// (tool, ok, content) of every tool result in a session's log.
fn results(e: &Engine, sid: &str) -> Vec<(String, bool, String)> {
    let log = e.session_log(sid).unwrap();
    let mut names = HashMap::new();
    let mut out = Vec::new();
    for l in &log.lines {
        match &l.record {
            LogRecord::Assistant { tool_calls, .. } => {
                for c in tool_calls {
                    names.insert(c.id.clone(), c.name.clone());
                }
            }
            LogRecord::ToolResult {
                call_id,
                content,
                ok,
                ..
            } => out.push((
                names.get(call_id).cloned().unwrap_or_default(),
                *ok,
                content.clone(),
            )),
            _ => {}
        }
    }
    out
}

fn user_messages(e: &Engine, sid: &str) -> Vec<String> {
    e.session_log(sid)
        .unwrap()
        .lines
        .iter()
        .filter_map(|l| match &l.record {
            LogRecord::User { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_spawned_child_shares_the_task_counts_against_the_limit_and_stops_when_the_task_ends() {
    let f = fx();
    let task = f.drafting_task();
    let exec = f.session("executor", Some(&task));
    // The child talks slowly (about 4 s for its reply), so it is still running when its
    // parent ends the task.
    let long = vec!["word"; 200].join(" ");
    let source = scripts(&[
        (
            "executor",
            vec![
                turn(
                    "",
                    json!([{"name": "fn_spawn_agent", "arguments": {
                        "name": "Scene drafter", "role": "executor",
                        "task": "Draft the harbour scene of chapter 12 in the draft.",
                        "systemPromptOverride": "You draft one scene."}}]),
                ),
                // Words before the call, so the parent ends the task only after the test has
                // seen the child running (about half a second).
                turn(
                    &vec!["ending"; 25].join(" "),
                    json!([{"name": "fn_task_done", "arguments": {"summary": "drafted"}}]),
                ),
            ],
            20,
        ),
        ("step-session", vec![turn(&long, json!([]))], 20),
    ]);
    let host = Host::attach(f.engine.clone(), source, APPROVE);
    let rx = host.submit(prompt(&exec, "work on NB-001")).unwrap();

    // The child exists as soon as the spawn returned: a step session of the same task.
    eventually("the child session exists", || {
        f.engine
            .sessions()
            .iter()
            .any(|s| s.profile == "step-session")
    })
    .await;
    let child = f
        .engine
        .sessions()
        .into_iter()
        .find(|s| s.profile == "step-session")
        .unwrap();
    let st = f.engine.session_state(&child.id);
    assert_eq!(
        st[SESSION_TASK],
        json!(task),
        "its writes route to the task's draft"
    );
    assert_eq!(st[SESSION_PARENT], json!(exec));
    assert_eq!(
        st[nbook::engine::agents::SYSTEM_PROMPT_KEY],
        "You draft one scene."
    );
    assert_eq!(child.title, "Scene drafter");
    assert_eq!(child.parent.as_deref(), Some(exec.as_str()));
    eventually("the child runs", || {
        f.engine.session(&child.id).unwrap().state == SessionState::Running
    })
    .await;
    assert!(
        running_task_sessions(f.engine.as_ref()) >= 1,
        "the running child counts against the limit"
    );

    let out = tokio::time::timeout(Duration::from_secs(20), rx)
        .await
        .expect("the parent's run ends")
        .unwrap();
    assert_eq!(out.status, "completed", "{out:?}");
    let res = results(&f.engine, &exec);
    let spawn = res.iter().find(|r| r.0 == "fn_spawn_agent").unwrap();
    assert!(spawn.1, "{}", spawn.2);
    let done = res.iter().find(|r| r.0 == "fn_task_done").unwrap();
    assert!(done.1, "{}", done.2);
    assert!(
        done.2.contains(&format!(
            "Stopped the agents spawned for it: session {}",
            child.id
        )),
        "{}",
        done.2
    );
    assert_eq!(f.tasks()[0].column, "review");

    // The child was stopped mid-reply, its job cancelled and not delivered to the parent.
    eventually("the child is idle", || {
        f.engine.session(&child.id).unwrap().state == SessionState::Idle
    })
    .await;
    let job = f
        .engine
        .jobs()
        .list(Some(&exec), None)
        .into_iter()
        .next()
        .expect("the child's job");
    eventually("the job ended", || {
        f.engine
            .jobs()
            .get(&job.job_id)
            .is_some_and(|j| j.snapshot.status.is_final())
    })
    .await;
    let j = f.engine.jobs().get(&job.job_id).unwrap().snapshot;
    assert_eq!(j.status, JobStatus::Cancelled);
    assert_eq!(j.delivery_status, DeliveryStatus::NotRequired);
    let child_log = f.engine.session_log(&child.id).unwrap();
    assert!(
        child_log.lines.iter().any(|l| matches!(&l.record,
            LogRecord::Lifecycle { status, .. } if status == "cancelled")),
        "the child's run was cancelled"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        user_messages(&f.engine, &exec).len(),
        1,
        "the parent got no job result after its task ended"
    );
    assert_eq!(running_task_sessions(f.engine.as_ref()), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawn_at_the_concurrency_limit_or_with_a_bad_role_is_refused() {
    let f = fx();
    let task = f.drafting_task();
    let exec = f.session("executor", Some(&task));
    let other = f.session("executor", Some("NB-009"));
    let host = Host::attach(f.engine.clone(), scripts(&[]), APPROVE);
    let args = json!({"name": "Helper", "role": "executor", "task": "Draft a scene"});

    // Two task sessions running (this one and another): the limit (2) is reached.
    f.engine.set_state(&exec, SessionState::Running);
    f.engine.set_state(&other, SessionState::WaitingApproval);
    assert_eq!(running_task_sessions(f.engine.as_ref()), 2);
    let before = f.engine.sessions().len();
    assert_eq!(
        f.code(&exec, "fn_spawn_agent", args.clone()).await,
        "CONCURRENCY_LIMIT_REACHED"
    );
    assert_eq!(f.engine.sessions().len(), before, "nothing was spawned");

    // One slot free: still, a merger is not spawnable, and an unknown role is refused.
    f.engine.set_state(&other, SessionState::Idle);
    assert_eq!(
        f.code(
            &exec,
            "fn_spawn_agent",
            json!({"name": "M", "role": "merger", "task": "merge"})
        )
        .await,
        "ROLE_UNAVAILABLE"
    );
    let r = f
        .run(
            &exec,
            "fn_spawn_agent",
            json!({"name": "W", "role": "wizard", "task": "x"}),
        )
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
    let r = f
        .run(
            &exec,
            "fn_spawn_agent",
            json!({"name": "W", "role": "executor"}),
        )
        .await;
    assert_eq!(
        r.status,
        CallStatus::InvalidArgs,
        "task is required: {}",
        r.content
    );
    // A session without a task of its own cannot spawn for one.
    let loose = f.session("executor", None);
    assert_eq!(
        f.code(&loose, "fn_spawn_agent", args.clone()).await,
        "TASK_ID_REQUIRED"
    );
    assert_eq!(
        f.engine.sessions().len(),
        before + 1,
        "only `loose` was added"
    );
    drop(host);
}

/// The limit is the project's `[board] concurrency`, the scheduler's own: with 1, the
/// spawning session itself fills it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spawn_limit_is_the_projects_board_concurrency() {
    let f = fx_with(|c| c.board.concurrency = 1);
    let task = f.drafting_task();
    let exec = f.session("executor", Some(&task));
    let host = Host::attach(f.engine.clone(), scripts(&[]), APPROVE);
    f.engine.set_state(&exec, SessionState::Running);
    let before = f.engine.sessions().len();
    let args = json!({"name": "Helper", "role": "executor", "task": "Draft a scene"});
    assert_eq!(
        f.code(&exec, "fn_spawn_agent", args).await,
        "CONCURRENCY_LIMIT_REACHED"
    );
    assert_eq!(f.engine.sessions().len(), before, "nothing was spawned");
    drop(host);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_question_card_ends_the_run_and_its_answer_from_the_form_is_the_next_message() {
    let f = fx();
    let chat = f.session("chat", None);
    let source = scripts(&[(
        "chat",
        vec![
            turn(
                "Let me ask.",
                json!([
                    {"name": "fn_ask_question", "arguments": {"questions": [
                        {"question": "Which title for act 2?", "header": "Act 2",
                         "type": "single_select",
                         "options": [{"label": "The Watch"}, {"label": "Low Tide", "description": "darker"}]},
                        {"question": "Anything the board should know?", "description": "Free text."},
                        {"question": "Start drafting now?", "type": "confirm"}
                    ]}},
                    {"name": "fn_list_agents", "arguments": {}}
                ]),
            ),
            turn("Thanks, noted.", json!([])),
        ],
        0,
    )]);
    let host = Host::attach(f.engine.clone(), source, APPROVE);
    let out = host.invoke(prompt(&chat, "plan act 2")).await.unwrap();
    assert_eq!(out.status, "completed", "{out:?}");
    // The run ended at the card: the call after it was skipped, no second model turn yet.
    let res = results(&f.engine, &chat);
    assert!(res[0].1 && res[0].0 == "fn_ask_question", "{res:?}");
    assert!(res[0].2.contains("End your turn"), "{}", res[0].2);
    assert!(!res[1].1 && res[1].2.starts_with("skipped"), "{res:?}");
    assert_eq!(f.engine.session(&chat).unwrap().state, SessionState::Idle);

    let pending = f.engine.pending_inputs();
    assert_eq!(pending.len(), 1);
    let req = pending[0].clone();
    assert_eq!(req.session_id, chat);
    assert_eq!(req.title, "Act 2");
    assert_eq!(req.questions[0].options.len(), 2);
    assert_eq!(
        req.questions[1].question,
        "Anything the board should know?\nFree text."
    );
    let labels: Vec<&str> = req.questions[2]
        .options
        .iter()
        .map(|o| o.label.as_str())
        .collect();
    assert_eq!(labels, ["Yes", "No"]);

    // The author answers in the question form.
    let mut form = AnswerForm::new(req.clone());
    assert!(form.choose(1), "Low Tide");
    form.next_question();
    form.text_mut().unwrap().insert_str("Keep Flett offstage");
    form.next_question();
    assert!(form.choose(0), "Yes");
    let answers = form.build().expect("complete answers");
    f.engine.answer_input(&req.id, answers).unwrap();

    eventually("the answer started the next turn", || {
        user_messages(&f.engine, &chat).len() == 2
            && f.engine.session(&chat).unwrap().state == SessionState::Idle
            && results(&f.engine, &chat).len() == 2
            && f.engine
                .session_log(&chat)
                .unwrap()
                .lines
                .iter()
                .filter(|l| matches!(l.record, LogRecord::Assistant { .. }))
                .count()
                == 2
    })
    .await;
    let msgs = user_messages(&f.engine, &chat);
    let next = &msgs[1];
    assert!(
        next.contains("The author answered your question card"),
        "{next}"
    );
    assert!(next.contains("Answer: Low Tide"), "{next}");
    assert!(next.contains("Answer: Keep Flett offstage"), "{next}");
    assert!(next.contains("Answer: Yes"), "{next}");
    assert!(f.engine.pending_inputs().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_question_cards_are_refused_and_nothing_is_asked() {
    let f = fx();
    let chat = f.session("chat", None);
    let _host = Host::attach(f.engine.clone(), scripts(&[]), APPROVE);
    let r = f
        .run(&chat, "fn_ask_question", json!({"questions": []}))
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
    for (card, why) in [
        (
            json!({"question": "Pick one", "type": "single_select"}),
            "needs options",
        ),
        (
            json!({"question": "Sure?", "type": "confirm", "options": [{"label": "Maybe"}]}),
            "confirm takes no options",
        ),
        (
            json!({"question": "Name?", "type": "text", "options": [{"label": "A"}]}),
            "text takes no options",
        ),
        (json!({"question": "   "}), "empty"),
        (
            json!({"question": "Which?", "type": "single_select", "multiSelect": true, "options": [{"label": "A"}]}),
            "contradicts",
        ),
    ] {
        let r = f
            .run(&chat, "fn_ask_question", json!({"questions": [card]}))
            .await;
        assert_eq!(r.status, CallStatus::ToolError, "{card}: {}", r.content);
        assert_eq!(r.details.as_ref().unwrap()["code"], "QUESTION_INVALID");
        assert!(r.content.contains(why), "{card}: {}", r.content);
    }
    assert!(f.engine.pending_inputs().is_empty(), "nothing was asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_done_ends_the_run_with_its_summary() {
    let f = fx();
    let hb = f.session("heartbeat", None);
    let source = scripts(&[(
        "heartbeat",
        vec![
            turn(
                "",
                json!([
                    {"name": "fn_heartbeat_done", "arguments": {"summary": "Board checked; nothing stuck."}},
                    {"name": "fn_list_agents", "arguments": {}}
                ]),
            ),
            turn("never reached", json!([])),
        ],
        0,
    )]);
    let host = Host::attach(f.engine.clone(), source, APPROVE);
    let out = host.invoke(prompt(&hb, "tick")).await.unwrap();
    assert_eq!(out.status, "completed");
    assert_eq!(
        out.final_message,
        "Heartbeat run ended: Board checked; nothing stuck."
    );
    let res = results(&f.engine, &hb);
    assert_eq!(res.len(), 2);
    assert!(res[1].2.starts_with("skipped"), "{res:?}");
    let turns = f
        .engine
        .session_log(&hb)
        .unwrap()
        .lines
        .iter()
        .filter(|l| matches!(l.record, LogRecord::Assistant { .. }))
        .count();
    assert_eq!(turns, 1, "no model turn after fn_heartbeat_done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_authors_goal_tools_refuse_bad_input_and_change_nothing() {
    let f = fx();
    let code = |r: &CallResult| {
        r.details
            .as_ref()
            .map(|d| d["code"].clone())
            .unwrap_or(Value::Null)
    };
    let r = f
        .engine
        .author_call("fn_goal_create", json!({"title": "   "}), None)
        .await;
    assert!(!r.ok);
    assert_eq!(code(&r), "INVALID_ARGUMENT", "{}", r.content);
    let r = f
        .engine
        .author_call(
            "fn_goal_archive",
            json!({"goal_id": "G-404", "archived": true}),
            None,
        )
        .await;
    assert!(!r.ok);
    assert_eq!(code(&r), "GOAL_NOT_FOUND", "{}", r.content);
    let none = f
        .board()
        .read(|c| nbook::board::goals::list(c, nbook::board::goals::GoalFilter::All))
        .unwrap();
    assert_eq!(none["goals"], json!([]), "nothing was created");
    for i in 0..5 {
        let r = f
            .engine
            .author_call(
                "fn_goal_create",
                json!({"title": format!("Goal {i}")}),
                None,
            )
            .await;
        assert!(r.ok, "{}", r.content);
    }
    let r = f
        .engine
        .author_call("fn_goal_create", json!({"title": "Sixth"}), None)
        .await;
    assert_eq!(code(&r), "ACTIVE_GOAL_LIMIT_EXCEEDED", "{}", r.content);
    assert!(r.content.contains("archive one first"), "{}", r.content);
    let all = f
        .board()
        .read(|c| nbook::board::goals::list(c, nbook::board::goals::GoalFilter::All))
        .unwrap();
    assert_eq!(all["goals"].as_array().unwrap().len(), 5);
}
