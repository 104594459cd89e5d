//! Task list, report_result and switch_mode through the real engine.

use std::sync::Arc;

use nbook::agent::{run_agent, ReplayProvider, RunOptions};
use nbook::config::{Config, Dirs, Preset};
use nbook::engine::{Approval, CallStatus, Decision, Engine, LogRecord, Mode, ToolCall};
use serde_json::{json, Value};

struct Fx {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    dirs: Dirs,
}

fn fx() -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("h"),
        data: tmp.path().join("h/d"),
        logs: tmp.path().join("h/l"),
    };
    Fx {
        _tmp: tmp,
        root,
        dirs,
    }
}

fn engine(f: &Fx, preset: Preset) -> Arc<Engine> {
    let mut config = Config::default();
    config.approval.preset = preset;
    Arc::new(
        Engine::open(
            nbook::workspace::Workspace::open(&f.root).unwrap(),
            config,
            &f.dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    )
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: name.into(),
        arguments: args,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_list_rules_and_persistence() {
    let f = fx();
    let e = engine(&f, Preset::Supervised);
    let sid = e
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let r = e
        .call(
            &sid,
            call("task_set_status", json!({"id": "a", "status": "completed"})),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(r.content.contains("no task list"), "{}", r.content);
    let steps = json!({"title": "Chapter 4", "steps": [
        {"id": "a", "text": "outline", "status": "in_progress"},
        {"id": "b", "text": "draft", "status": "in_progress"},
        {"id": "c", "text": "revise", "status": "pending"}]});
    let r = e
        .call(&sid, call("task_create", steps), Approval::Fail)
        .await;
    assert!(r.ok, "{}", r.content);
    let list = r.details.unwrap();
    assert_eq!(
        list["steps"][1]["status"], "pending",
        "only one step may be in progress"
    );
    let dup = json!({"steps": [{"id": "a", "text": "x", "status": "pending"}, {"id": "a", "text": "y", "status": "pending"}]});
    let r = e.call(&sid, call("task_create", dup), Approval::Fail).await;
    assert!(!r.ok && r.content.contains("/steps/1/id"), "{}", r.content);
    let r = e
        .call(
            &sid,
            call(
                "task_set_status",
                json!({"id": "zz", "status": "completed"}),
            ),
            Approval::Fail,
        )
        .await;
    assert!(!r.ok && r.content.contains("no step with id 'zz'"));
    let r = e
        .call(
            &sid,
            call(
                "task_set_status",
                json!({"id": "c", "status": "in_progress", "note": "now"}),
            ),
            Approval::Fail,
        )
        .await;
    let list = r.details.unwrap();
    assert_eq!(
        list["steps"][0]["status"], "pending",
        "the previous in-progress step is demoted"
    );
    assert_eq!(list["steps"][2]["status"], "in_progress");
    // The list survives a restart: it is rebuilt from the session log.
    drop(e);
    let e = engine(&f, Preset::Supervised);
    assert_eq!(
        e.session_state(&sid)["agent.tasks"]["steps"][2]["note"],
        "now"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_result_checks_the_output_schema_and_ends_the_run() {
    let f = fx();
    let e = engine(&f, Preset::Supervised);
    let sid = e
        .create_session("writer", Mode::Normal, "w", None)
        .unwrap()
        .id;
    // writer's output schema requires `summary`.
    let r = e
        .call(
            &sid,
            call(
                "report_result",
                json!({"result": "done", "data": {"outputPath": 3}}),
            ),
            Approval::Fail,
        )
        .await;
    assert!(!r.ok, "{}", r.content);
    assert!(r.content.contains("/data"), "{}", r.content);
    let script = [
        json!({"text": "Reporting.", "tool_calls": [
            {"name": "report_result", "arguments": {"result": "Chapter drafted", "data": {"summary": "ok"}}},
            {"name": "write", "arguments": {"path": "after.md", "content": "x"}}]}),
        json!({"text": "never played"}),
    ]
    .iter()
    .map(|t| t.to_string())
    .collect::<Vec<_>>()
    .join("\n");
    let provider = Arc::new(ReplayProvider::parse(&script, "s").unwrap());
    let out = run_agent(
        e.clone(),
        sid.clone(),
        provider.clone(),
        "draft".into(),
        RunOptions::new(
            Approval::Auto {
                decision: Decision::Approve,
                by: "test",
            },
            Default::default(),
        ),
    )
    .await
    .unwrap();
    assert_eq!(out.final_text, "Chapter drafted");
    assert_eq!(out.data, Some(json!({"summary": "ok"})));
    assert_eq!(out.turns, 1, "the run stops after report_result");
    assert_eq!(provider.turns_left(), 1);
    assert!(
        !f.root.join("after.md").exists(),
        "calls after report_result are skipped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switch_mode_always_waits_and_applies_only_when_approved() {
    let f = fx();
    let e = engine(&f, Preset::Neurobook);
    let sid = e
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    // Even under the permissive neurobook preset, the author must answer.
    let r = e
        .call(
            &sid,
            call(
                "switch_mode",
                json!({"targetMode": "plan", "reason": "outline first"}),
            ),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::NeedsApproval);
    assert!(
        matches!(&r.preview.unwrap().body, nbook::engine::PreviewBody::Text { text } if text.contains("outline first"))
    );
    let r = e
        .call(
            &sid,
            call("switch_mode", json!({"targetMode": "plan"})),
            Approval::Auto {
                decision: Decision::Reject { reason: None },
                by: "test",
            },
        )
        .await;
    assert_eq!(r.status, CallStatus::Rejected);
    assert_eq!(e.session(&sid).unwrap().mode, Mode::Normal);
    let r = e
        .call(
            &sid,
            call("switch_mode", json!({"targetMode": "plan"})),
            Approval::Auto {
                decision: Decision::Approve,
                by: "test",
            },
        )
        .await;
    assert!(r.ok, "{}", r.content);
    assert_eq!(e.session(&sid).unwrap().mode, Mode::Plan);
    let log = e.session_log(&sid).unwrap();
    assert!(log.lines.iter().any(|l| matches!(&l.record, LogRecord::ModeChange { to: Mode::Plan, by, .. } if by.contains("agent"))));
    // Leaving plan mode with a plan file shows the plan in the preview; a path elsewhere is refused.
    std::fs::write(
        f.root.join(".agent/plan/outline.md"),
        "1. Storm\n2. Wreck\n",
    )
    .unwrap();
    let r = e
        .call(
            &sid,
            call(
                "switch_mode",
                json!({"targetMode": "normal", "planFilePath": ".agent/plan/outline.md"}),
            ),
            Approval::Fail,
        )
        .await;
    assert!(
        matches!(&r.preview.unwrap().body, nbook::engine::PreviewBody::Text { text } if text.contains("2. Wreck"))
    );
    let r = e
        .call(
            &sid,
            call(
                "switch_mode",
                json!({"targetMode": "normal", "planFilePath": "AGENTS.md"}),
            ),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::ToolError);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_agent_profile_and_get_session_describe_profiles_and_sessions() {
    let f = fx();
    let e = engine(&f, Preset::Supervised);
    let sid = e
        .create_session("leader.default", Mode::Normal, "lead", None)
        .unwrap()
        .id;
    // Linked the way an agent links one: create_agent records it in the caller's ledger.
    let child = e
        .create_agent(Some(&sid), "writer", json!({}), Some("chapter 4"))
        .unwrap()
        .id;
    let r = e
        .call(
            &sid,
            call("get_agent_profile", json!({"profileKey": "writer"})),
            Approval::Fail,
        )
        .await;
    assert!(r.ok, "{}", r.content);
    let d = r.details.unwrap();
    assert_eq!(d["creationMode"], "public");
    assert_eq!(d["createAgentAllowed"], true);
    assert!(d["toolKeys"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == "execute_world"));
    assert!(
        d["payloadSchema"]
            .as_str()
            .unwrap()
            .contains("path: string (required)"),
        "{}",
        d["payloadSchema"]
    );
    let r = e
        .call(
            &sid,
            call("get_agent_profile", json!({"profileKey": "summarizer"})),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.details.unwrap()["createAgentAllowed"], false);
    let r = e
        .call(
            &sid,
            call("get_agent_profile", json!({"profileKey": "nobody"})),
            Approval::Fail,
        )
        .await;
    assert!(!r.ok && r.content.contains("no profile 'nobody'"));

    e.append(
        &sid,
        LogRecord::User {
            text: "Plan chapter four".into(),
        },
    )
    .unwrap();
    e.append(
        &sid,
        LogRecord::Assistant {
            text: "Here is the plan.".into(),
            tool_calls: vec![],
        },
    )
    .unwrap();
    let r = e
        .call(&sid, call("get_session", json!({"includeRecentMessages": true, "recentMessageLimit": 2, "recentMessageRoles": ["user", "assistant"]})), Approval::Fail)
        .await;
    let d = r.details.unwrap();
    assert_eq!(d["metadata"]["profileKey"], "leader.default");
    assert_eq!(d["linkedAgents"][0]["sessionId"], child.as_str());
    let msgs = d["recentMessages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0]["text"], "Plan chapter four");
    assert_eq!(msgs[1]["role"], "assistant");
    let r = e
        .call(
            &sid,
            call("get_session", json!({"sessionId": child})),
            Approval::Fail,
        )
        .await;
    assert_eq!(
        r.details.unwrap()["metadata"]["parentSessionId"],
        sid.as_str()
    );
    let r = e
        .call(
            &sid,
            call("get_session", json!({"sessionId": "999"})),
            Approval::Fail,
        )
        .await;
    assert!(!r.ok && r.content.contains("no session with id '999'"));
    let r = e
        .call(
            &sid,
            call("get_session", json!({"recentMessageLimit": 50})),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs);
    // The retrieval profile may not use them.
    let rt = e
        .create_session("retrieval", Mode::Normal, "r", None)
        .unwrap()
        .id;
    let r = e
        .call(&rt, call("get_session", json!({})), Approval::Fail)
        .await;
    assert_eq!(r.status, CallStatus::NotAllowed);
}
