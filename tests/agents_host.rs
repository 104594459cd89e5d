//! Linked agents through the real engine, the real agent host and scripted (replay) models:
//! create/get/detach, synchronous and background invoke_agent, invocation modes, steering,
//! cancellation that reaches sub-agents, request_user_input, and job delivery.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nbook::agent::host::{Host, ProviderSource};
use nbook::agent::{Provider, ReplayProvider};
use nbook::config::{Config, Dirs, Preset};
use nbook::engine::agents::{InvokeMode, InvokeRequest};
use nbook::engine::inputs::Answer;
use nbook::engine::jobs::{DeliveryStatus, JobStatus};
use nbook::engine::{Approval, Engine, EngineEvent, LogRecord, Mode, SessionState};
use serde_json::{json, Value};

struct Fx {
    _tmp: tempfile::TempDir,
    engine: Arc<Engine>,
}

fn fx() -> Fx {
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
    let engine = Arc::new(
        Engine::open(
            nbook::workspace::Workspace::open(&root).expect("ws"),
            config,
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .expect("engine"),
    );
    Fx { _tmp: tmp, engine }
}

/// One replay script per profile; each profile's script is shared by its sessions.
fn scripts(map: &[(&str, Vec<Value>)], delay_ms: u64) -> ProviderSource {
    let providers: HashMap<String, Arc<dyn Provider>> = map
        .iter()
        .map(|(k, turns)| {
            let text = turns
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n");
            let p = ReplayProvider::parse(&text, k)
                .expect("script")
                .with_word_delay(Duration::from_millis(delay_ms));
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

fn session(f: &Fx, profile: &str) -> String {
    f.engine
        .create_session(profile, Mode::Normal, profile, None)
        .expect("session")
        .id
}

fn call(name: &str, arguments: Value) -> nbook::engine::ToolCall {
    nbook::engine::ToolCall {
        id: String::new(),
        name: name.into(),
        arguments,
    }
}

/// Poll `cond` every 10 ms for up to 5 s; fail naming `what` if it never holds.
async fn eventually(what: &str, cond: impl Fn() -> bool) {
    for _ in 0..500 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting until {what}");
}

fn job_status(f: &Fx, id: &str) -> Option<JobStatus> {
    f.engine.jobs().get(id).map(|r| r.snapshot.status)
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

fn results(e: &Engine, sid: &str) -> Vec<(String, bool, String, Option<Value>)> {
    e.session_log(sid)
        .expect("log")
        .lines
        .into_iter()
        .filter_map(|l| match l.record {
            LogRecord::ToolResult {
                tool,
                ok,
                content,
                details,
                ..
            } => Some((tool, ok, content, details)),
            _ => None,
        })
        .collect()
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leader_creates_and_invokes_a_writer_synchronously() {
    let f = fx();
    let leader = session(&f, "leader.default");
    let source = scripts(
        &[
            (
                "leader.default",
                vec![
                    turn(
                        "I'll get a writer.",
                        json!([
                            {"name": "create_agent", "arguments": {"profileKey": "summarizer"}},
                            {"name": "create_agent", "arguments": {"profileKey": "writer", "initial": {"colour": "red"}}},
                            {"name": "create_agent", "arguments": {"profileKey": "writer", "title": "Chapter 3 writer"}}
                        ]),
                    ),
                    turn(
                        "Now draft.",
                        json!([
                            {"name": "invoke_agent", "arguments": {"sessionId": "2", "input": {"chapter": 3}}},
                            {"name": "invoke_agent", "arguments": {"sessionId": leader, "message": "me"}},
                            {"name": "invoke_agent", "arguments": {"sessionId": "2", "message": "Draft chapter 3.", "input": {"path": "manuscript/ch3.md"}}}
                        ]),
                    ),
                    turn("Drafted.", json!([{"name": "get_agent", "arguments": {}}])),
                    turn("Done.", json!([])),
                ],
            ),
            (
                "writer",
                vec![turn(
                    "Writing.",
                    json!([{"name": "report_result", "arguments": {"result": "Chapter 3 drafted", "data": {"summary": "2,400 words"}}}]),
                )],
            ),
        ],
        0,
    );
    let host = Host::attach(f.engine.clone(), source, Approval::Queue);
    let out = host
        .invoke(prompt(&leader, "Write chapter 3"))
        .await
        .expect("run");
    assert_eq!(out.status, "completed", "{out:?}");
    let r = results(&f.engine, &leader);
    // create_agent: system-only refused; a bad initial names its JSON pointer; the good one links.
    assert!(!r[0].1 && r[0].2.contains("system-only"), "{:?}", r[0]);
    assert!(!r[1].1 && r[1].2.contains("/initial"), "{:?}", r[1]);
    assert!(r[2].1, "{:?}", r[2]);
    assert_eq!(
        r[2].3.as_ref().and_then(|d| d["sessionId"].as_str()),
        Some("2")
    );
    // invoke_agent (parallel-safe, so the three results may log in any order): the payload
    // schema is enforced, self-invocation refused, then the run.
    let invokes = &r[3..6];
    assert!(
        invokes.iter().any(|x| !x.1 && x.2.contains("/input")),
        "{invokes:?}"
    );
    assert!(
        invokes.iter().any(|x| !x.1 && x.2.contains("itself")),
        "{invokes:?}"
    );
    let ok = invokes.iter().find(|x| x.1).expect("one invoke succeeded");
    let d = ok.3.clone().expect("details");
    assert_eq!(d["status"], "completed");
    assert_eq!(d["finalMessage"], "Chapter 3 drafted");
    assert_eq!(d["data"], json!({"summary": "2,400 words"}));
    assert!(d["stats"]["elapsedMs"].is_u64());
    // get_agent lists the linked writer with its title.
    let listed = r[6].3.clone().expect("list");
    assert_eq!(listed[0]["sessionId"], "2");
    assert_eq!(listed[0]["title"], "Chapter 3 writer");
    // The writer's session is linked to its parent and got the message with the input.
    let w = f.engine.session("2").expect("writer");
    assert_eq!(w.parent.as_deref(), Some(leader.as_str()));
    assert!(users(&f.engine, "2")[0].contains("\"path\": \"manuscript/ch3.md\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn detach_reports_each_state_and_blocks_further_invokes() {
    let f = fx();
    let leader = session(&f, "leader.default");
    let w = f
        .engine
        .create_agent(Some(&leader), "writer", json!({}), None)
        .expect("writer");
    assert_eq!(f.engine.detach_agent(&leader, "99"), Ok("not_linked"));
    assert_eq!(f.engine.detach_agent(&leader, &w.id), Ok("detached"));
    assert_eq!(
        f.engine.detach_agent(&leader, &w.id),
        Ok("already_detached")
    );
    assert!(
        f.engine.session(&w.id).is_some(),
        "detaching keeps the session"
    );
    let source = scripts(
        &[(
            "leader.default",
            vec![
                turn(
                    "",
                    json!([
                        {"name": "invoke_agent", "arguments": {"sessionId": w.id, "message": "hi"}},
                        {"name": "get_agent", "arguments": {}}
                    ]),
                ),
                turn("ok", json!([])),
            ],
        )],
        0,
    );
    let host = Host::attach(f.engine.clone(), source, Approval::Queue);
    host.invoke(prompt(&leader, "go")).await.expect("run");
    let r = results(&f.engine, &leader);
    assert!(!r[0].1 && r[0].2.contains("detached"), "{:?}", r[0]);
    assert!(r[1].2.contains("no linked agents"), "{:?}", r[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn invocation_modes_follow_the_state_rules() {
    let f = fx();
    let sid = session(&f, "writer");
    let source = scripts(
        &[(
            "writer",
            vec![
                turn(
                    "reading",
                    json!([{"name": "bash", "arguments": {"command": "sleep 0.3; echo read"}}]),
                ),
                turn("after steer", json!([])),
                turn("follow-up done", json!([])),
            ],
        )],
        0,
    );
    let host = Host::attach(
        f.engine.clone(),
        source,
        Approval::Auto {
            decision: nbook::engine::Decision::Approve,
            by: "test",
        },
    );
    let mut req = prompt(&sid, "x");
    req.mode = InvokeMode::Steer;
    assert!(host
        .submit(req.clone())
        .unwrap_err()
        .to_string()
        .contains("active_invocation_required"));
    req.mode = InvokeMode::Followup;
    assert!(
        matches!(host.submit(req.clone()), Err(nbook::engine::agents::InvokeError::NotRunning(s)) if s == sid)
    );
    // An unknown session is named, through the engine's host seam too.
    assert!(matches!(
        host.start_background(prompt("no-such-session", "x")),
        Err(nbook::engine::agents::InvokeError::UnknownSession(s)) if s == "no-such-session"
    ));
    req.mode = InvokeMode::Continue;
    assert!(host
        .submit(req)
        .unwrap_err()
        .to_string()
        .contains("takes no message"));

    let mut events = f.engine.subscribe();
    let first = host.submit(prompt(&sid, "draft")).expect("start");
    assert!(host.is_running(&sid));
    // Steer once the first turn's reply is in: its bash call is still running.
    loop {
        match tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
            Ok(Ok(EngineEvent::Log { line, .. }))
                if matches!(line.record, LogRecord::Assistant { .. }) =>
            {
                break
            }
            Ok(Ok(_)) => continue,
            other => panic!("no assistant turn: {other:?}"),
        }
    }
    let mut cont = prompt(&sid, "");
    cont.message = None;
    cont.mode = InvokeMode::Continue;
    assert!(host
        .submit(cont)
        .unwrap_err()
        .to_string()
        .contains("active_invocation_exists"));
    let mut steer = prompt(&sid, "make it darker");
    steer.mode = InvokeMode::Steer;
    let steered = host.submit(steer).expect("steer");
    let mut follow = prompt(&sid, "now a title");
    follow.mode = InvokeMode::Followup;
    let followed = host.submit(follow).expect("followup");
    assert_eq!(host.queued(&sid), 1);

    let a = first.await.expect("first");
    let b = steered.await.expect("steered");
    assert_eq!(a, b, "a steer joins the running run");
    assert_eq!(
        a.final_message, "after steer",
        "the steer was drained at the turn boundary"
    );
    let c = followed.await.expect("followup");
    assert_eq!(c.final_message, "follow-up done");
    assert_eq!(
        users(&f.engine, &sid),
        vec!["draft", "make it darker", "now a title"],
        "the transcript records the steer between the turns, then the follow-up"
    );
    // The steer sits after the first turn's tool result and before the second reply.
    let kinds: Vec<String> = f
        .engine
        .session_log(&sid)
        .expect("log")
        .lines
        .iter()
        .filter_map(|l| match &l.record {
            LogRecord::User { text } => Some(format!("user:{text}")),
            LogRecord::Assistant { text, .. } => Some(format!("assistant:{text}")),
            LogRecord::ToolResult { tool, .. } => Some(format!("result:{tool}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "user:draft",
            "assistant:reading",
            "result:bash",
            "user:make it darker",
            "assistant:after steer",
            "user:now a title",
            "assistant:follow-up done"
        ]
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!host.is_running(&sid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancelling_the_leader_cancels_the_writer_it_waits_on() {
    let f = fx();
    let leader = session(&f, "leader.default");
    let w = f
        .engine
        .create_agent(Some(&leader), "writer", json!({}), None)
        .expect("writer");
    let endless = (0..2000)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let source = scripts(
        &[
            (
                "leader.default",
                vec![turn(
                    "",
                    json!([{"name": "invoke_agent", "arguments": {"sessionId": w.id, "message": "write forever"}}]),
                )],
            ),
            ("writer", vec![turn(&endless, json!([]))]),
        ],
        10,
    );
    let host = Host::attach(f.engine.clone(), source, Approval::Queue);
    let run = host.submit(prompt(&leader, "go")).expect("start");
    eventually("the writer runs", || host.is_running(&w.id)).await;
    assert!(host.cancel(&leader));
    let out = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("the leader stops")
        .expect("outcome");
    assert_eq!(out.status, "error");
    eventually("the cancel reached the writer", || !host.is_running(&w.id)).await;
    let wlog = f.engine.session_log(&w.id).expect("log");
    assert!(wlog.lines.iter().any(
        |l| matches!(&l.record, LogRecord::Lifecycle { status, .. } if status == "cancelled")
    ));
    assert_eq!(
        f.engine.session(&leader).expect("s").state,
        SessionState::Idle
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn background_invoke_is_a_job_whose_result_starts_the_owners_next_turn() {
    let f = fx();
    let leader = session(&f, "leader.default");
    let w = f
        .engine
        .create_agent(Some(&leader), "writer", json!({}), None)
        .expect("writer");
    let source = scripts(
        &[
            (
                "leader.default",
                vec![
                    turn(
                        "Started it.",
                        json!([{"name": "invoke_agent", "arguments": {"sessionId": w.id, "message": "draft", "background": true}}]),
                    ),
                    turn("I'll wait for the writer.", json!([])),
                    turn("The writer finished; reviewing.", json!([])),
                ],
            ),
            (
                "writer",
                vec![turn(
                    "",
                    json!([{"name": "report_result", "arguments": {"result": "drafted", "data": {"summary": "ok"}}}]),
                )],
            ),
        ],
        0,
    );
    let host = Host::attach(f.engine.clone(), source, Approval::Queue);
    host.invoke(prompt(&leader, "go")).await.expect("run");
    let r = results(&f.engine, &leader);
    let job = r[0]
        .3
        .as_ref()
        .and_then(|d| d["jobId"].as_str())
        .expect("job id")
        .to_string();
    eventually("the job result was delivered to the leader", || {
        f.engine
            .jobs()
            .get(&job)
            .is_some_and(|r| r.snapshot.delivery_status == DeliveryStatus::Accepted)
            && !host.is_running(&leader)
            && users(&f.engine, &leader).len() == 2
    })
    .await;
    let rec = f.engine.jobs().get(&job).expect("job");
    assert_eq!(rec.snapshot.status, JobStatus::Completed);
    assert_eq!(
        rec.result.as_ref().map(|v| v["data"].clone()),
        Some(json!({"summary": "ok"}))
    );
    let note = &users(&f.engine, &leader)[1];
    assert!(
        note.contains(&format!("Background job {job}")) && note.contains("\"summary\": \"ok\"")
    );
    // The job file is on disk.
    let file = f
        .engine
        .workspace()
        .nbook_dir()
        .join("agent/jobs")
        .join(format!("{job}.json"));
    let on_disk: Value = serde_json::from_slice(&std::fs::read(file).expect("file")).expect("json");
    assert_eq!(on_disk["snapshot"]["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn request_user_input_pauses_until_the_author_answers_and_skips_the_rest_of_the_turn() {
    let f = fx();
    let leader = session(&f, "leader.default");
    let source = scripts(
        &[(
            "leader.default",
            vec![
                turn(
                    "",
                    json!([
                        {"name": "request_user_input", "arguments": {"questions": [
                            {"question": "Whose point of view?", "options": [{"label": "Ada"}, {"label": "Magnus"}]},
                            {"question": "Working title?"}
                        ]}},
                        {"name": "read", "arguments": {"path": "AGENTS.md"}}
                    ]),
                ),
                turn("Thanks.", json!([])),
            ],
        )],
        0,
    );
    let host = Host::attach(f.engine.clone(), source, Approval::Queue);
    let mut events = f.engine.subscribe();
    let run = host.submit(prompt(&leader, "plan")).expect("start");
    let req = loop {
        match tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
            Ok(Ok(EngineEvent::InputRequested { request })) => break request,
            Ok(Ok(_)) => continue,
            other => panic!("no question: {other:?}"),
        }
    };
    assert_eq!(
        f.engine.session(&leader).expect("s").state,
        SessionState::WaitingInput
    );
    // An incomplete answer is refused and the question stays.
    let a0 = Answer {
        question_index: 0,
        text: "Ada".into(),
        selected_option_index: Some(0),
        ..Default::default()
    };
    assert!(f.engine.answer_input(&req.id, vec![a0.clone()]).is_err());
    assert_eq!(f.engine.pending_inputs().len(), 1);
    let a1 = Answer {
        question_index: 1,
        text: "The Hesta Light".into(),
        ..Default::default()
    };
    f.engine
        .answer_input(&req.id, vec![a0, a1])
        .expect("answer");
    let out = run.await.expect("outcome");
    assert_eq!(out.status, "completed");
    let r = results(&f.engine, &leader);
    assert!(r[0].1);
    assert!(
        r[0].2.contains("1. Whose point of view?\nAnswer: Ada"),
        "{}",
        r[0].2
    );
    assert!(r[0]
        .2
        .contains("2. Working title?\nAnswer: The Hesta Light"));
    assert_eq!(
        r[0].3.as_ref().expect("d")["answers"][0]["selectedOptionIndex"],
        0
    );
    assert!(!r[1].1 && r[1].2.starts_with("skipped"), "{:?}", r[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_missing_model_or_host_is_a_clear_error() {
    let f = fx();
    let leader = session(&f, "leader.default");
    // No host: invoke_agent says where agents run.
    let w = f
        .engine
        .create_agent(Some(&leader), "writer", json!({}), None)
        .expect("writer");
    let r = f
        .engine
        .call(
            &leader,
            call("invoke_agent", json!({"sessionId": w.id, "message": "hi"})),
            Approval::Fail,
        )
        .await;
    assert!(
        !r.ok && r.content.contains("no agent host"),
        "{}",
        r.content
    );
    // A host without a model for the profile: the run fails with the config hint, logged.
    let host = Host::attach(
        f.engine.clone(),
        nbook::agent::host::config_providers(f.engine.live_config().clone()),
        Approval::Queue,
    );
    let out = host.invoke(prompt(&w.id, "hi")).await.expect("outcome");
    assert_eq!(out.status, "error");
    assert!(out.error.as_deref().unwrap_or("").contains("config.toml"));
    assert_eq!(
        f.engine.session(&w.id).expect("s").state,
        SessionState::Failed
    );
    let mut bad_model = prompt(&w.id, "hi");
    bad_model.model = Some("nope".into());
    assert!(host
        .submit(bad_model)
        .unwrap_err()
        .to_string()
        .contains("unknown model"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_cut_by_a_crash_reads_back_as_interrupted_calls() {
    let f = fx();
    let sid = session(&f, "writer");
    f.engine
        .append(
            &sid,
            LogRecord::User {
                text: "draft".into(),
            },
        )
        .expect("user");
    f.engine
        .append(
            &sid,
            LogRecord::Assistant {
                text: "writing".into(),
                tool_calls: vec![nbook::engine::ToolCall {
                    id: "c1".into(),
                    name: "write".into(),
                    arguments: json!({"path": "a.md", "content": "x"}),
                }],
            },
        )
        .expect("assistant");
    // The process died here: no result for c1. The history closes the call.
    let h = nbook::agent::history(&f.engine, &sid).expect("history");
    assert_eq!(h.len(), 3);
    match &h[2] {
        nbook::agent::Message::ToolResult {
            call_id,
            is_error,
            content,
        } => {
            assert_eq!(call_id, "c1");
            assert!(*is_error && content.contains("interrupted"));
        }
        other => panic!("{other:?}"),
    }
    // `continue` resumes from that tail.
    let source = scripts(&[("writer", vec![turn("Resumed.", json!([]))])], 0);
    let host = Host::attach(f.engine.clone(), source, Approval::Queue);
    let mut req = prompt(&sid, "");
    req.message = None;
    req.mode = InvokeMode::Continue;
    let out = host.invoke(req).await.expect("continue");
    assert_eq!(out.final_message, "Resumed.");
    assert!(
        !f.engine.workspace().root().join("a.md").exists(),
        "the cut call never ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_run_answers_questions_with_an_error_instead_of_hanging() {
    let f = fx();
    f.engine.set_headless(true);
    let leader = session(&f, "leader.default");
    let r = tokio::time::timeout(
        Duration::from_secs(10),
        f.engine.call(
            &leader,
            call(
                "request_user_input",
                json!({"questions": [{"question": "Tone?"}]}),
            ),
            Approval::Fail,
        ),
    )
    .await
    .expect("does not hang");
    assert!(!r.ok && r.content.contains("headless"), "{}", r.content);
    // Bad shapes are schema errors with a pointer.
    let r = f
        .engine
        .call(
            &leader,
            call("request_user_input", json!({"questions": []})),
            Approval::Fail,
        )
        .await;
    assert!(!r.ok && r.content.contains("/questions"), "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_after_one_that_waited_for_approval_are_skipped_for_the_model_to_redo() {
    let f = fx();
    let sid = session(&f, "writer");
    let source = scripts(
        &[(
            "writer",
            vec![
                turn(
                    "",
                    json!([
                        {"name": "write", "arguments": {"path": "a.md", "content": "A"}},
                        {"name": "write", "arguments": {"path": "b.md", "content": "B"}}
                    ]),
                ),
                turn("ok", json!([])),
            ],
        )],
        0,
    );
    let host = Host::attach(f.engine.clone(), source, Approval::Queue);
    let run = host.submit(prompt(&sid, "go")).expect("start");
    let pending = loop {
        let p = f.engine.pending();
        if !p.is_empty() {
            break p;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert_eq!(pending.len(), 1, "only the first write waits");
    f.engine
        .decide(&pending[0].approval_id, nbook::engine::Decision::Approve)
        .expect("decide");
    run.await.expect("outcome");
    let root = f.engine.workspace().root().to_path_buf();
    assert!(root.join("a.md").exists());
    assert!(!root.join("b.md").exists(), "the second write never ran");
    let r = results(&f.engine, &sid);
    assert!(r[0].1);
    assert!(
        !r[1].1 && r[1].2.contains("skipped: write was waiting for the author"),
        "{:?}",
        r[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transcript_near_the_window_is_compacted_by_the_summarizer_and_logged() {
    let f = fx();
    let sid = session(&f, "writer");
    // A long earlier conversation: 60 exchanges of ~1,000 characters each (~15k tokens).
    for i in 0..60 {
        f.engine
            .append(
                &sid,
                LogRecord::User {
                    text: format!("Question {i}: {}", "why the light? ".repeat(35)),
                },
            )
            .expect("user");
        f.engine
            .append(
                &sid,
                LogRecord::Assistant {
                    text: format!("Answer {i}: {}", "because the fog. ".repeat(30)),
                    tool_calls: vec![],
                },
            )
            .expect("assistant");
    }
    let summaries: Vec<Value> = (0..40)
        .map(|i| {
            turn(
                &format!("Summary part {i}: Ada asked about the light; the fog explains it."),
                json!([]),
            )
        })
        .collect();
    let text = |turns: &[Value]| {
        turns
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let summarizer: Arc<dyn Provider> =
        Arc::new(ReplayProvider::parse(&text(&summaries), "summarizer").expect("script"));
    let writer: Arc<dyn Provider> = Arc::new(
        ReplayProvider::parse(&text(&[turn("Noted.", json!([]))]), "writer").expect("script"),
    );
    let mut opts = nbook::agent::RunOptions::new(Approval::Fail, Default::default());
    opts.context_window = Some(16_000);
    opts.summarizer = Some(summarizer);
    let out = nbook::agent::run_invocation(
        f.engine.clone(),
        sid.clone(),
        writer,
        nbook::agent::Start::Prompt("Go on.".into()),
        opts,
    )
    .await
    .expect("run");
    assert_eq!(out.final_text, "Noted.");
    let log = f.engine.session_log(&sid).expect("log");
    let (method, before, after) = log
        .lines
        .iter()
        .find_map(|l| match &l.record {
            LogRecord::Compaction {
                method,
                tokens_before,
                tokens_after,
                ..
            } => Some((method.clone(), *tokens_before, *tokens_after)),
            _ => None,
        })
        .expect("a compaction record");
    assert_eq!(method, "summary");
    assert!(after < before / 2, "{before} → {after}");
    // The rebuilt history starts with the summary and keeps the recent turns verbatim.
    let h = nbook::agent::history(&f.engine, &sid).expect("history");
    match &h[0] {
        nbook::agent::Message::User { text } => assert!(text.contains("Summary part 0"), "{text}"),
        other => panic!("{other:?}"),
    }
    assert!(h
        .iter()
        .any(|m| matches!(m, nbook::agent::Message::User { text } if text == "Go on.")));
    assert!(h.len() < 60, "older turns were folded into the summary");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn background_bash_jobs_finish_or_are_killed_by_cancel_job() {
    let f = fx();
    let leader = session(&f, "leader.default");
    let source = scripts(
        &[(
            "leader.default",
            vec![
                turn(
                    "",
                    json!([
                        {"name": "bash", "arguments": {"command": "sleep 0.2; echo fog-report", "background": true}},
                        {"name": "bash", "arguments": {"command": "sleep 30; touch never.txt", "background": true}}
                    ]),
                ),
                turn(
                    "",
                    json!([{"name": "list_jobs", "arguments": {"status": "running"}}]),
                ),
                turn(
                    "",
                    json!([{"name": "cancel_job", "arguments": {"jobId": "job-2"}}]),
                ),
                turn("Waiting for the report.", json!([])),
                turn("Got the report.", json!([])),
                turn("The second job was cancelled.", json!([])),
            ],
        )],
        0,
    );
    let host = Host::attach(
        f.engine.clone(),
        source,
        Approval::Auto {
            decision: nbook::engine::Decision::Approve,
            by: "test",
        },
    );
    host.invoke(prompt(&leader, "check the weather"))
        .await
        .expect("run");
    eventually("job-1 completed, job-2 cancelled, both delivered", || {
        job_status(&f, "job-1") == Some(JobStatus::Completed)
            && job_status(&f, "job-2") == Some(JobStatus::Cancelled)
            && !host.is_running(&leader)
            && users(&f.engine, &leader).len() >= 3
    })
    .await;
    let done = f.engine.jobs().get("job-1").expect("job-1");
    assert!(done.result.expect("result")["output"]
        .as_str()
        .unwrap_or("")
        .contains("fog-report"));
    let delivered = users(&f.engine, &leader).join("\n");
    assert!(
        delivered.contains("Background job job-1") && delivered.contains("fog-report"),
        "{delivered}"
    );
    assert!(
        delivered.contains("Background job job-2") && delivered.contains("cancelled"),
        "{delivered}"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !f.engine.workspace().root().join("never.txt").exists(),
        "the cancelled command was killed"
    );
    // Another session may not cancel this session's job.
    let other = session(&f, "leader.default");
    let r = f
        .engine
        .call(
            &other,
            call("cancel_job", json!({"jobId": "job-1"})),
            Approval::Fail,
        )
        .await;
    assert!(!r.ok, "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_command_is_killed_with_its_children() {
    let f = fx();
    let sid = session(&f, "leader.default");
    let started = std::time::Instant::now();
    let r = f
        .engine
        .call(
            &sid,
            call(
                "bash",
                json!({"command": "sleep 4; touch late.txt", "timeout": 1}),
            ),
            Approval::Auto {
                decision: nbook::engine::Decision::Approve,
                by: "test",
            },
        )
        .await;
    assert!(!r.ok && r.content.contains("timed out"), "{}", r.content);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the call returned when the timeout killed the command, not when it ended ({:?})",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_millis(3500));
    assert!(!f.engine.workspace().root().join("late.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_run_kills_its_running_command() {
    let f = fx();
    let sid = session(&f, "writer");
    let source = scripts(
        &[(
            "writer",
            vec![turn(
                "",
                json!([{"name": "bash", "arguments": {"command": "sleep 3; touch late.txt"}}]),
            )],
        )],
        0,
    );
    let host = Host::attach(
        f.engine.clone(),
        source,
        Approval::Auto {
            decision: nbook::engine::Decision::Approve,
            by: "test",
        },
    );
    let run = host.submit(prompt(&sid, "go")).expect("start");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(host.cancel(&sid));
    let out = run.await.expect("outcome");
    assert_eq!(out.status, "error");
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert!(
        !f.engine.workspace().root().join("late.txt").exists(),
        "the command died with the cancelled run"
    );
    let r = results(&f.engine, &sid);
    assert!(!r[0].1 && r[0].2.contains("cancelled"), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_run_that_waits_on_a_workflow_cancels_the_workflow() {
    let f = fx();
    let leader = session(&f, "leader.default");
    let source = scripts(
        &[(
            "leader.default",
            vec![turn(
                "",
                json!([{"name": "run_workflow", "arguments": {"script": "while (true) {}", "wait": true}}]),
            )],
        )],
        0,
    );
    let host = Host::attach(
        f.engine.clone(),
        source,
        Approval::Auto {
            decision: nbook::engine::Decision::Approve,
            by: "test",
        },
    );
    let run = host.submit(prompt(&leader, "go")).expect("start");
    eventually("the workflow job started", || {
        job_status(&f, "job-1").is_some()
    })
    .await;
    assert!(host.cancel(&leader));
    run.await.expect("outcome");
    eventually("job-1 ended", || {
        job_status(&f, "job-1").is_some_and(|s| s.is_final())
    })
    .await;
    assert_eq!(job_status(&f, "job-1"), Some(JobStatus::Cancelled));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_background_agent_waiting_for_approval_shows_its_job_as_waiting() {
    let f = fx();
    let leader = session(&f, "leader.default");
    let w = f
        .engine
        .create_agent(Some(&leader), "writer", json!({}), None)
        .expect("writer");
    let source = scripts(
        &[
            (
                "leader.default",
                vec![
                    turn(
                        "",
                        json!([{"name": "invoke_agent", "arguments": {"sessionId": w.id, "message": "draft", "background": true}}]),
                    ),
                    turn("Started.", json!([])),
                    turn("Got it.", json!([])),
                ],
            ),
            (
                "writer",
                vec![
                    turn(
                        "",
                        json!([{"name": "write", "arguments": {"path": "ch.md", "content": "Draft."}}]),
                    ),
                    turn("Written.", json!([])),
                ],
            ),
        ],
        0,
    );
    let host = Host::attach(f.engine.clone(), source, Approval::Queue);
    host.invoke(prompt(&leader, "go")).await.expect("run");
    eventually("the writer's write waits for the author", || {
        !f.engine.pending().is_empty()
    })
    .await;
    let pending = f.engine.pending();
    assert_eq!(pending.len(), 1);
    eventually("job-1 shows waiting", || {
        job_status(&f, "job-1") == Some(JobStatus::Waiting)
    })
    .await;
    f.engine
        .decide(&pending[0].approval_id, nbook::engine::Decision::Approve)
        .expect("approve");
    eventually("job-1 ended", || {
        job_status(&f, "job-1").is_some_and(|s| s.is_final())
    })
    .await;
    assert_eq!(job_status(&f, "job-1"), Some(JobStatus::Completed));
    assert!(f.engine.workspace().root().join("ch.md").exists());
}

/// A summarizer whose server is down; counts the requests it gets.
struct DownSummarizer(std::sync::atomic::AtomicUsize);

impl Provider for DownSummarizer {
    fn name(&self) -> &str {
        "down"
    }
    fn stream(
        &self,
        _req: nbook::agent::ModelRequest,
    ) -> futures::stream::BoxStream<
        'static,
        Result<nbook::agent::ModelEvent, nbook::agent::ProviderError>,
    > {
        use futures::StreamExt;
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        futures::stream::once(async {
            Err(nbook::agent::ProviderError::Request(
                "connection refused".into(),
            ))
        })
        .boxed()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_summarizer_is_asked_once_per_run_and_old_outputs_are_dropped() {
    let f = fx();
    let sid = session(&f, "writer");
    std::fs::write(
        f.engine.workspace().root().join("big.md"),
        // Many short lines: `read` cuts a single line at 2000 characters.
        "The fog came in off the Ness and sat on the water.\n".repeat(400),
    )
    .expect("write");
    let reads: Vec<Value> = (0..4)
        .map(|_| {
            turn(
                "",
                json!([{"name": "read", "arguments": {"path": "big.md"}}]),
            )
        })
        .chain([turn("Done.", json!([]))])
        .collect();
    let text = reads
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    let writer: Arc<dyn Provider> = Arc::new(ReplayProvider::parse(&text, "w").expect("script"));
    let down = Arc::new(DownSummarizer(Default::default()));
    let mut opts = nbook::agent::RunOptions::new(Approval::Fail, Default::default());
    opts.context_window = Some(16_000);
    opts.summarizer = Some(down.clone());
    let out = nbook::agent::run_invocation(
        f.engine.clone(),
        sid.clone(),
        writer,
        nbook::agent::Start::Prompt("Read it four times.".into()),
        opts,
    )
    .await
    .expect("run");
    assert_eq!(out.final_text, "Done.");
    let methods: Vec<String> = f
        .engine
        .session_log(&sid)
        .expect("log")
        .lines
        .iter()
        .filter_map(|l| match &l.record {
            LogRecord::Compaction { method, .. } => Some(method.clone()),
            _ => None,
        })
        .collect();
    assert!(methods.len() >= 2, "{methods:?}");
    assert!(
        methods.iter().all(|m| m == "dropped_tool_outputs"),
        "{methods:?}"
    );
    assert_eq!(
        down.0.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the summarizer is not asked again after it failed"
    );
}
