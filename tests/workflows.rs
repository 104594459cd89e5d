//! Workflows end to end on a real project: the catalogue (built-ins, project overrides, broken
//! files), run_workflow behind the approval gate, the wf API (workspace reads, logs, progress,
//! questions for the author, agent invocations through the real agent host with replayed
//! models, real concurrency in wf.map), cancellation of a CPU loop and of a run blocked in an
//! invocation, determinism guards, and the durable job file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nbook::agent::host::{Host, ProviderSource};
use nbook::agent::{Provider, ReplayProvider};
use nbook::config::{Config, Dirs, ModelConfig, Preset, WorkflowConfig};
use nbook::engine::inputs::{Answer, InputSource};
use nbook::engine::jobs::{JobKind, JobRecord, JobStatus, JobStore};
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, Mode, PreviewBody, ToolCall,
};
use serde_json::{json, Value};

struct Fx {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    engine: Arc<Engine>,
    /// The leader session that runs the workflows.
    sid: String,
}

fn fx(preset: Preset) -> Fx {
    fx_with(preset, WorkflowConfig::default())
}

fn fx_with(preset: Preset, workflows: WorkflowConfig) -> Fx {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).expect("init");
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let mut config = Config::default();
    config.approval.preset = preset;
    config.workflows = workflows;
    config.models.insert(
        "small".into(),
        ModelConfig {
            provider: "local".into(),
            name: "smollm2".into(),
            context_window: Some(8192),
            input_price: 0.0,
            output_price: 0.0,
            generation: Default::default(),
        },
    );
    let ws = nbook::workspace::Workspace::open(&root).expect("ws");
    let engine = Arc::new(
        Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).expect("engine"),
    );
    let sid = engine
        .create_session("leader.default", Mode::Normal, "lead", None)
        .expect("session")
        .id;
    Fx {
        _tmp: tmp,
        root,
        engine,
        sid,
    }
}

fn approve() -> Approval {
    Approval::Auto {
        decision: Decision::Approve,
        by: "test",
    }
}

async fn call(fx: &Fx, sid: &str, name: &str, args: Value, approval: Approval) -> CallResult {
    fx.engine
        .call(
            sid,
            ToolCall {
                id: String::new(),
                name: name.into(),
                arguments: args,
            },
            approval,
        )
        .await
}

/// run_workflow, approved, returning its details.
async fn run(fx: &Fx, args: Value) -> Value {
    let r = call(fx, &fx.sid, "run_workflow", args, approve()).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    r.details.expect("details")
}

fn write_project_workflow(root: &Path, key: &str, code: &str) {
    let dir = root.join(".nbook/workflows").join(key);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("workflow.js"), code).expect("write");
}

/// Wait (polling) until a job has ended.
async fn finished(engine: &Engine, id: &str, within: Duration) -> JobRecord {
    let until = Instant::now() + within;
    loop {
        let r = engine.jobs().get(id).expect("job");
        if r.snapshot.status.is_final() {
            return r;
        }
        assert!(
            Instant::now() < until,
            "job {id} still {:?} after {within:?}",
            r.snapshot.status
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn until<F: Fn() -> bool>(what: &str, within: Duration, f: F) {
    let end = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn job_file(root: &Path, id: &str) -> Value {
    let text = std::fs::read_to_string(root.join(format!(".nbook/agent/jobs/{id}.json")))
        .expect("job file");
    serde_json::from_str(&text).expect("job json")
}

/// One replay script per profile; each profile's script is shared by its sessions.
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

// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalogue_lists_builtins_project_overrides_and_broken_files() {
    let fx = fx(Preset::Supervised);
    write_project_workflow(&fx.root, "broken", "({ title: 'Broken', run( })");
    write_project_workflow(
        &fx.root,
        "consistency-audit",
        "({ title: 'Our own audit', description: 'd', whenToUse: 'w', async run(wf, args) { return 'mine'; } })",
    );
    std::fs::create_dir_all(fx.root.join(".nbook/workflows/empty")).expect("mkdir");
    let r = call(&fx, &fx.sid, "list_workflows", json!({}), Approval::Fail).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let d = r.details.expect("details");
    let list = d["workflows"].as_array().expect("workflows");
    let by_key = |k: &str| {
        list.iter()
            .find(|w| w["key"] == k)
            .unwrap_or_else(|| panic!("{k} missing from {list:?}"))
            .clone()
    };
    let cwrr = by_key("chapter-write-review-revise");
    assert_eq!(cwrr["source"], "builtin");
    assert!(cwrr["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(cwrr["whenToUse"].as_str().is_some_and(|t| !t.is_empty()));
    assert_eq!(cwrr["argsHint"][0]["name"], "path");
    assert!(cwrr.get("error").is_none());
    assert_eq!(by_key("parallel-brainstorm")["source"], "builtin");
    // The project file overrides the built-in of the same key.
    let audit = by_key("consistency-audit");
    assert_eq!(audit["source"], "project");
    assert_eq!(audit["title"], "Our own audit");
    // Broken files are listed with their error; nothing else is hidden by them.
    let broken = by_key("broken");
    assert!(
        broken["error"]
            .as_str()
            .is_some_and(|e| e.contains("SyntaxError")),
        "{broken}"
    );
    assert!(by_key("empty")["error"]
        .as_str()
        .is_some_and(|e| e.contains("no workflow.js")));
    assert_eq!(d["models"][0]["modelKey"], "small");

    // Running the overriding project workflow runs the project's code.
    let out = run(
        &fx,
        json!({"workflowKey": "consistency-audit", "wait": true}),
    )
    .await;
    assert_eq!(out["status"], "completed", "{out}");
    assert_eq!(out["result"], "mine");
    // A broken workflow cannot run, and says why.
    let r = call(
        &fx,
        &fx.sid,
        "run_workflow",
        json!({"workflowKey": "broken"}),
        approve(),
    )
    .await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(
        r.content.contains("cannot run") && r.content.contains("SyntaxError"),
        "{}",
        r.content
    );
    let r = call(
        &fx,
        &fx.sid,
        "run_workflow",
        json!({"workflowKey": "nope"}),
        approve(),
    )
    .await;
    assert!(
        r.content.contains("chapter-write-review-revise"),
        "{}",
        r.content
    );
    let r = call(
        &fx,
        &fx.sid,
        "run_workflow",
        json!({"workflowKey": "broken", "script": "return 1"}),
        approve(),
    )
    .await;
    assert!(r.content.contains("not both"), "{}", r.content);
    let r = call(
        &fx,
        &fx.sid,
        "run_workflow",
        json!({"script": "return 1", "model": "huge"}),
        approve(),
    )
    .await;
    assert!(r.content.contains("small"), "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_workflow_waits_for_the_author_and_a_rejection_runs_nothing() {
    let fx = fx(Preset::Supervised);
    write_project_workflow(
        &fx.root,
        "hello",
        "({\n  title: 'Hello',\n  description: 'Says hello',\n  whenToUse: 'never',\n  argsHint: [{name: 'who', label: 'Who', defaultValue: 'world'}],\n  async run(wf, args) {\n    wf.log('hello ' + args.who);\n    return 'hello ' + args.who;\n  },\n})\n",
    );
    let queued = |args: Value| {
        let (e, s) = (fx.engine.clone(), fx.sid.clone());
        tokio::spawn(async move {
            e.call(
                &s,
                ToolCall {
                    id: String::new(),
                    name: "run_workflow".into(),
                    arguments: args,
                },
                Approval::Queue,
            )
            .await
        })
    };
    let h = queued(json!({"workflowKey": "hello", "args": {"tone": "warm"}, "wait": true}));
    until("the approval request", Duration::from_secs(5), || {
        !fx.engine.pending().is_empty()
    })
    .await;
    let p = fx.engine.pending().remove(0);
    assert_eq!(p.tool, "run_workflow");
    assert!(p.preview.summary.contains("hello"), "{}", p.preview.summary);
    let PreviewBody::Text { text } = &p.preview.body else {
        panic!("expected a text preview, got {:?}", p.preview.body)
    };
    assert!(text.contains("Workflow: hello — Hello (project"), "{text}");
    assert!(
        text.contains("\"tone\": \"warm\""),
        "arguments pretty-printed: {text}"
    );
    assert!(
        text.contains("\"who\": \"world\""),
        "defaults shown: {text}"
    );
    assert!(
        text.contains("wf.log('hello ' + args.who);"),
        "code shown: {text}"
    );
    fx.engine
        .decide(
            &p.approval_id,
            Decision::Reject {
                reason: Some("not now".into()),
            },
        )
        .expect("decide");
    let r = h.await.expect("join");
    assert_eq!(r.status, CallStatus::Rejected, "{}", r.content);
    assert!(fx.engine.jobs().list(None, None).is_empty(), "nothing ran");
    assert!(
        !fx.root.join(".nbook/agent/jobs").exists()
            || std::fs::read_dir(fx.root.join(".nbook/agent/jobs"))
                .expect("dir")
                .next()
                .is_none()
    );

    // The file changes between preview and approval: stale, nothing runs.
    let h = queued(json!({"workflowKey": "hello", "wait": true}));
    until("the approval request", Duration::from_secs(5), || {
        !fx.engine.pending().is_empty()
    })
    .await;
    let id = fx.engine.pending()[0].approval_id.clone();
    write_project_workflow(
        &fx.root,
        "hello",
        "({ title: 'Hello', async run(wf) { return 'changed'; } })",
    );
    fx.engine.decide(&id, Decision::Approve).expect("decide");
    let r = h.await.expect("join");
    assert_eq!(r.status, CallStatus::Stale, "{}", r.content);
    assert!(fx.engine.jobs().list(None, None).is_empty());

    // An inline script, approved: it runs.
    let h = queued(json!({"script": "return args.n * 2;", "args": {"n": 21}, "wait": true}));
    until("the approval request", Duration::from_secs(5), || {
        !fx.engine.pending().is_empty()
    })
    .await;
    let p = fx.engine.pending().remove(0);
    let PreviewBody::Text { text } = &p.preview.body else {
        panic!("text preview")
    };
    assert!(text.contains("return args.n * 2;"), "{text}");
    fx.engine
        .decide(&p.approval_id, Decision::Approve)
        .expect("decide");
    let r = h.await.expect("join");
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let d = r.details.expect("details");
    assert_eq!(d["status"], "completed");
    assert_eq!(d["result"], 42);
    assert_eq!(d["workflowKey"], "inline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_logs_and_progress_complete_and_the_job_file_records_them() {
    let fx = fx(Preset::Supervised);
    std::fs::create_dir_all(fx.root.join("notes")).expect("mkdir");
    std::fs::write(fx.root.join("notes/a.md"), "alpha\nbeta\n").expect("write");
    write_project_workflow(
        &fx.root,
        "count-lines",
        r#"export default {
  title: "Count lines",
  description: "Counts the lines of files",
  whenToUse: "tests",
  phases: [{ key: "count", title: "Count" }],
  async run(wf, args) {
    const out = {};
    let done = 0;
    for (const p of args.paths) {
      const text = await wf.workspace.read(p);
      out[p] = text.split("\n").filter(Boolean).length;
      wf.log("counted", p, out[p]);
      wf.progress({ phase: "count", done: ++done, total: args.paths.length });
    }
    console.log("caller", wf.caller().sessionId);
    return { counts: out, caller: wf.caller() };
  },
};
"#,
    );
    // wait:true
    let out = run(
        &fx,
        json!({"workflowKey": "count-lines", "args": {"paths": ["notes/a.md"]}, "wait": true}),
    )
    .await;
    assert_eq!(out["status"], "completed", "{out}");
    assert_eq!(out["result"]["counts"]["notes/a.md"], 2);
    assert_eq!(out["result"]["caller"]["sessionId"], fx.sid.as_str());
    let job_id = out["jobId"].as_str().expect("jobId").to_string();
    assert_eq!(out["runId"], job_id.replace("job-", "run-"));
    let file = job_file(&fx.root, &job_id);
    assert_eq!(file["snapshot"]["kind"], "workflow");
    assert_eq!(file["snapshot"]["status"], "completed");
    assert_eq!(
        file["snapshot"]["progress"],
        json!({"phase": "count", "done": 1, "total": 1})
    );
    assert_eq!(file["result"]["result"]["counts"]["notes/a.md"], 2);
    let log: Vec<&str> = file["detail"]["log"]
        .as_array()
        .expect("log")
        .iter()
        .filter_map(|l| l["text"].as_str())
        .collect();
    assert!(log.contains(&"counted notes/a.md 2"), "{log:?}");
    assert!(log.iter().any(|l| l.starts_with("caller ")), "{log:?}");

    // wait:false: a background job owned by the caller.
    let out = run(
        &fx,
        json!({"workflowKey": "count-lines", "args": {"paths": ["notes/a.md", "AGENTS.md"]}}),
    )
    .await;
    assert_eq!(out["status"], "started");
    assert_eq!(out["background"], true);
    let id = out["jobId"].as_str().expect("jobId").to_string();
    let rec = finished(&fx.engine, &id, Duration::from_secs(10)).await;
    assert_eq!(
        rec.snapshot.status,
        JobStatus::Completed,
        "{:?}",
        rec.snapshot.error
    );
    assert_eq!(
        rec.snapshot.owner_session_id.as_deref(),
        Some(fx.sid.as_str())
    );
    assert_eq!(rec.result.expect("result")["status"], "completed");
    // list_jobs / get_job see it.
    let r = call(&fx, &fx.sid, "list_jobs", json!({}), Approval::Fail).await;
    let jobs = r.details.expect("details")["jobs"].clone();
    assert_eq!(
        jobs.as_array().map(Vec::len),
        Some(1),
        "only this session's: {jobs}"
    );
    let r = call(
        &fx,
        &fx.sid,
        "list_jobs",
        json!({"all": true, "status": "completed"}),
        Approval::Fail,
    )
    .await;
    assert_eq!(
        r.details.expect("details")["jobs"].as_array().map(Vec::len),
        Some(2)
    );
    let r = call(
        &fx,
        &fx.sid,
        "get_job",
        json!({"jobId": id}),
        Approval::Fail,
    )
    .await;
    let d = r.details.expect("details");
    assert_eq!(d["status"], "completed");
    assert_eq!(
        d["result"]["result"]["counts"]["AGENTS.md"]
            .as_u64()
            .map(|n| n > 0),
        Some(true)
    );
    assert_eq!(d["detail"]["runId"], id.replace("job-", "run-"));
    let r = call(
        &fx,
        &fx.sid,
        "get_job",
        json!({"jobId": "job-99"}),
        Approval::Fail,
    )
    .await;
    assert!(r.content.contains("list_jobs"), "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_outside_the_project_are_refused() {
    let fx = fx(Preset::Supervised);
    std::fs::write(
        fx.root.parent().expect("parent").join("secret.txt"),
        "s3cret",
    )
    .expect("write");
    for path in ["../secret.txt", "/etc/passwd"] {
        let out = run(
            &fx,
            json!({"script": format!("return await wf.workspace.read({path:?});"), "wait": true}),
        )
        .await;
        assert_eq!(out["status"], "failed", "{out}");
        let err = out["error"].as_str().expect("error");
        assert!(err.contains("refused"), "{err}");
        assert!(!out.to_string().contains("s3cret"));
    }
    // A script can catch the refusal and go on.
    let out = run(
        &fx,
        json!({"script": "try { await wf.workspace.read('../secret.txt'); } catch (e) { return 'caught: ' + e.message; }", "wait": true}),
    )
    .await;
    assert!(
        out["result"]
            .as_str()
            .is_some_and(|s| s.starts_with("caught: wf.workspace.read")),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clock_and_randomness_throw() {
    let fx = fx(Preset::Supervised);
    for src in [
        "return Date.now();",
        "return new Date().getTime();",
        "return Math.random();",
    ] {
        let out = run(&fx, json!({"script": src, "wait": true})).await;
        assert_eq!(out["status"], "failed", "{src}: {out}");
        assert!(
            out["error"]
                .as_str()
                .is_some_and(|e| e.contains("deterministic") && e.contains("line 1")),
            "{src}: {out}"
        );
    }
    let out = run(
        &fx,
        json!({"script": "return new Date(Date.UTC(2020, 3, 12)).toISOString();", "wait": true}),
    )
    .await;
    assert_eq!(out["result"], "2020-04-12T00:00:00.000Z", "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_waits_for_the_author_answered_from_another_thread() {
    let fx = fx(Preset::Supervised);
    let script = r#"
const tone = await wf.ask({ kind: "select", title: "Tone?", description: "for chapter 4", options: ["bleak", { label: "warm", description: "hopeful" }] });
const name = await wf.ask({ kind: "text", title: "Name the inn" });
const ok = await wf.ask({ kind: "approve", title: "Go ahead?" });
return { tone, name, ok };
"#;
    let out = run(&fx, json!({"script": script})).await;
    let id = out["jobId"].as_str().expect("jobId").to_string();
    let answers = [
        Answer {
            question_index: 0,
            text: "warm".into(),
            selected_option_index: Some(1),
            ..Default::default()
        },
        Answer {
            question_index: 0,
            text: "The Drowned Bell".into(),
            ..Default::default()
        },
        Answer {
            question_index: 0,
            text: "Reject".into(),
            selected_option_index: Some(1),
            note: Some("make it shorter".into()),
            ..Default::default()
        },
    ];
    for (n, a) in answers.into_iter().enumerate() {
        let qid = format!("{id}:{}", n + 1);
        until("the question", Duration::from_secs(10), || {
            fx.engine.pending_inputs().iter().any(|q| q.id == qid)
        })
        .await;
        let q = fx
            .engine
            .pending_inputs()
            .into_iter()
            .find(|q| q.id == qid)
            .expect("question");
        assert_eq!(q.source, InputSource::Workflow);
        assert_eq!(q.session_id, fx.sid);
        if n == 0 {
            assert_eq!(q.questions[0].options.len(), 2);
            assert!(q.questions[0].question.contains("for chapter 4"));
        }
        assert_eq!(
            fx.engine.jobs().get(&id).expect("job").snapshot.status,
            JobStatus::Waiting
        );
        let engine = fx.engine.clone();
        std::thread::spawn(move || engine.answer_input(&qid, vec![a]))
            .join()
            .expect("thread")
            .expect("answer");
    }
    let rec = finished(&fx.engine, &id, Duration::from_secs(10)).await;
    assert_eq!(
        rec.snapshot.status,
        JobStatus::Completed,
        "{:?}",
        rec.snapshot.error
    );
    assert_eq!(
        rec.result.expect("result")["result"],
        json!({"tone": "warm", "name": "The Drowned Bell", "ok": {"approved": false, "note": "make it shorter"}})
    );
    let asks = rec.detail.expect("detail")["asks"].clone();
    assert_eq!(asks.as_array().map(Vec::len), Some(3), "{asks}");

    // With wait:true nobody can answer: the run is cancelled with an error.
    let out = run(
        &fx,
        json!({"script": "wf.log('before'); await wf.ask({kind: 'text', title: 'Anything?'}); return 1;", "wait": true}),
    )
    .await;
    assert_eq!(out["status"], "cancelled", "{out}");
    assert!(
        out["error"]
            .as_str()
            .is_some_and(|e| e.contains("wait:false")),
        "{out}"
    );
    assert_eq!(out["pendingAsks"][0]["title"], "Anything?");
    assert!(fx.engine.pending_inputs().is_empty());
    let id = out["jobId"].as_str().expect("jobId");
    assert_eq!(
        fx.engine.jobs().get(id).expect("job").snapshot.status,
        JobStatus::Cancelled
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_job_stops_a_cpu_loop_and_a_question() {
    let fx = fx(Preset::Supervised);
    let other = fx
        .engine
        .create_session("leader.default", Mode::Normal, "other", None)
        .expect("session")
        .id;
    let out = run(&fx, json!({"script": "let i = 0; while (true) { i++; }"})).await;
    let id = out["jobId"].as_str().expect("jobId").to_string();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        fx.engine.jobs().get(&id).expect("job").snapshot.status,
        JobStatus::Running
    );
    // Only the owner may cancel it.
    let r = call(
        &fx,
        &other,
        "cancel_job",
        json!({"jobId": id}),
        Approval::Fail,
    )
    .await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(r.content.contains("another session"), "{}", r.content);
    let r = call(
        &fx,
        &fx.sid,
        "cancel_job",
        json!({"jobId": id}),
        Approval::Fail,
    )
    .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let rec = finished(&fx.engine, &id, Duration::from_secs(5)).await;
    assert_eq!(rec.snapshot.status, JobStatus::Cancelled);
    assert_eq!(job_file(&fx.root, &id)["snapshot"]["status"], "cancelled");
    let r = call(
        &fx,
        &fx.sid,
        "cancel_job",
        json!({"jobId": id}),
        Approval::Fail,
    )
    .await;
    assert!(r.content.contains("already cancelled"), "{}", r.content);

    // A run waiting on the author: the question is withdrawn.
    let out = run(
        &fx,
        json!({"script": "return await wf.ask({kind: 'text', title: 'Never answered'});"}),
    )
    .await;
    let id = out["jobId"].as_str().expect("jobId").to_string();
    until("the question", Duration::from_secs(10), || {
        !fx.engine.pending_inputs().is_empty()
    })
    .await;
    let r = call(
        &fx,
        &fx.sid,
        "cancel_job",
        json!({"jobId": id}),
        Approval::Fail,
    )
    .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let rec = finished(&fx.engine, &id, Duration::from_secs(5)).await;
    assert_eq!(rec.snapshot.status, JobStatus::Cancelled);
    until("the question to go", Duration::from_secs(5), || {
        fx.engine.pending_inputs().is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_workflow_is_interrupted_when_the_jobs_are_reopened() {
    let fx = fx(Preset::Supervised);
    let out = run(&fx, json!({"script": "while (true) {}"})).await;
    let id = out["jobId"].as_str().expect("jobId").to_string();
    assert_eq!(job_file(&fx.root, &id)["snapshot"]["status"], "running");
    // What the next process sees: the file says running, so the job was cut short.
    let reopened = JobStore::open(&fx.root.join(".nbook/agent/jobs"), true);
    let rec = reopened.get(&id).expect("job");
    assert_eq!(rec.snapshot.kind, JobKind::Workflow);
    assert_eq!(rec.snapshot.status, JobStatus::Interrupted);
    assert_eq!(job_file(&fx.root, &id)["snapshot"]["status"], "interrupted");
    assert_eq!(rec.snapshot.reference["workflowKey"], "inline");
    fx.engine.jobs().cancel(&id, None).expect("cancel");
    finished(&fx.engine, &id, Duration::from_secs(5)).await;
}

/// Start `script` in the background; once it has ended, its record and how long it ran.
async fn run_to_end(fx: &Fx, script: &str, within: Duration) -> (JobRecord, Duration) {
    let t0 = Instant::now();
    let out = run(fx, json!({"script": script})).await;
    let id = out["jobId"].as_str().expect("jobId").to_string();
    let rec = finished(&fx.engine, &id, within).await;
    (rec, t0.elapsed())
}

/// Another connection can write to the project database.
fn database_is_free(root: &Path) {
    let c = nbook::store::open(&root.join(".nbook/project.sqlite")).expect("db");
    c.busy_timeout(Duration::from_millis(50)).expect("timeout");
    c.execute_batch(
        "BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS probe(x); INSERT INTO probe VALUES (1); COMMIT;",
    )
    .expect("the database is not locked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn script_time_without_yielding_is_limited_also_in_promise_jobs() {
    let fx = fx_with(
        Preset::Supervised,
        WorkflowConfig {
            script_slice_ms: 300,
            ..WorkflowConfig::default()
        },
    );
    for script in [
        "while (true) {}",
        "for (;;) { try { while (true) {} } catch (e) {} }",
        "function l(){queueMicrotask(l);queueMicrotask(l)} l(); await new Promise(()=>{})",
        "function l(){ return Promise.resolve().then(l) } l(); await new Promise(()=>{})",
        "while (true) { await Promise.resolve(); }",
    ] {
        let (rec, took) = run_to_end(&fx, script, Duration::from_secs(5)).await;
        assert_eq!(rec.snapshot.status, JobStatus::Failed, "{script}");
        let e = rec.snapshot.error.clone().unwrap_or_default();
        assert!(
            e.contains("300 ms") && e.contains("script_slice_ms") && e.contains("stopped"),
            "{script}: {e}"
        );
        assert!(took < Duration::from_millis(1500), "{script}: {took:?}");
        let file = job_file(&fx.root, &rec.snapshot.job_id);
        assert_eq!(file["snapshot"]["status"], "failed");
    }
    database_is_free(&fx.root);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wall_clock_and_the_host_call_budget_end_a_run() {
    let fx = fx_with(
        Preset::Supervised,
        WorkflowConfig {
            time_limit_secs: 1,
            max_host_calls: 1_000_000,
            ..WorkflowConfig::default()
        },
    );
    // Host calls do not count as script time, so only the wall clock ends this one.
    let (rec, took) = run_to_end(
        &fx,
        "for (;;) { try { wf.progress({phase: 'spin', done: 1, total: 2}); wf.log(1); } catch (e) {} }",
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(rec.snapshot.status, JobStatus::Failed);
    let e = rec.snapshot.error.clone().unwrap_or_default();
    assert!(
        e.contains("1 s limit") && e.contains("time_limit_secs"),
        "{e}"
    );
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(2500),
        "{took:?}"
    );

    let fx = fx_with(
        Preset::Supervised,
        WorkflowConfig {
            max_host_calls: 50,
            ..WorkflowConfig::default()
        },
    );
    // Catching the refusal does not help: the run is over once the budget is spent.
    let (rec, took) = run_to_end(
        &fx,
        "let n = 0; for (;;) { try { wf.log('x', n++); } catch (e) {} }",
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(rec.snapshot.status, JobStatus::Failed);
    let e = rec.snapshot.error.clone().unwrap_or_default();
    assert!(
        e.contains("more than 50 calls") && e.contains("max_host_calls"),
        "{e}"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    let detail = &job_file(&fx.root, &rec.snapshot.job_id)["detail"];
    assert_eq!(detail["log"].as_array().map(Vec::len), Some(50));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_promise_that_can_never_settle_fails_at_once() {
    let fx = fx(Preset::Supervised);
    let (rec, took) = run_to_end(&fx, "await new Promise(() => {});", Duration::from_secs(5)).await;
    assert_eq!(rec.snapshot.status, JobStatus::Failed);
    let e = rec.snapshot.error.clone().unwrap_or_default();
    assert!(e.contains("the workflow's promise never settled"), "{e}");
    assert!(took < Duration::from_secs(1), "{took:?}");
}

// ---------------------------------------------------------------------------------------------
// With the real agent host and replayed models.

fn researcher_turn(text: &str, delay_ms: u64) -> Value {
    json!({"text": text, "delay_ms": delay_ms})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wf_map_runs_agent_invocations_concurrently() {
    let fx = fx(Preset::Supervised);
    let _host = Host::attach(
        fx.engine.clone(),
        scripts(&[
            (
                "researcher",
                vec![
                    researcher_turn("idea one", 1000),
                    researcher_turn("idea two", 1000),
                    researcher_turn("idea three", 1000),
                    researcher_turn("slow one", 600),
                    researcher_turn("slow two", 600),
                ],
            ),
            ("leader.default", vec![json!({"text": "noted"})]),
        ]),
        approve(),
    );
    let script = r#"
const ids = [];
for (let i = 0; i < 3; i++) ids.push(await wf.agents.create("researcher", { title: "r" + i }));
const out = await wf.map(ids, async (id) => {
  const r = await wf.agents.invoke(id, { message: "one idea please" });
  if (r.status !== "completed") throw new Error(r.status + " " + r.error);
  return r.result.message;
}, { concurrency: 3 });
return out.sort();
"#;
    let t0 = Instant::now();
    let out = run(&fx, json!({"script": script, "wait": true})).await;
    let elapsed = t0.elapsed();
    assert_eq!(out["status"], "completed", "{out}");
    assert_eq!(out["result"], json!(["idea one", "idea three", "idea two"]));
    assert!(
        elapsed < Duration::from_millis(2600),
        "three 1 s invocations with concurrency 3 took {elapsed:?}"
    );
    let sessions = out["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 3);
    assert!(sessions
        .iter()
        .all(|s| s["profileKey"] == "researcher" && s["tokens"].as_u64().is_some_and(|t| t > 0)));
    assert!(
        out["usage"]["totalTokens"].as_u64().is_some_and(|t| t > 0),
        "{out}"
    );
    // The limit holds: with concurrency 1 the two invocations run one after the other.
    let script = r#"
const ids = [await wf.agents.create("researcher"), await wf.agents.create("researcher")];
return await wf.map(ids, async (id) => (await wf.agents.invoke(id, { message: "go" })).result.message, { concurrency: 1 });
"#;
    let t0 = Instant::now();
    let out = run(&fx, json!({"script": script, "wait": true})).await;
    assert_eq!(out["result"], json!(["slow one", "slow two"]), "{out}");
    assert!(
        t0.elapsed() >= Duration::from_millis(1200),
        "{:?}",
        t0.elapsed()
    );
    // Invoking a session the run did not create is refused.
    let out = run(
        &fx,
        json!({"script": format!("return await wf.agents.invoke({:?}, {{message: 'hi'}});", fx.sid), "wait": true}),
    )
    .await;
    assert_eq!(out["status"], "failed");
    assert!(
        out["error"]
            .as_str()
            .is_some_and(|e| e.contains("not created by this workflow")),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancel_job_stops_a_workflow_blocked_in_an_invocation() {
    let fx = fx(Preset::Supervised);
    let host = Host::attach(
        fx.engine.clone(),
        scripts(&[
            ("researcher", vec![researcher_turn("too late", 600_000)]),
            ("leader.default", vec![json!({"text": "noted"})]),
        ]),
        approve(),
    );
    let out = run(
        &fx,
        json!({"script": "const s = await wf.agents.create('researcher'); const r = await wf.agents.invoke(s, {message: 'slow'}); return r;"}),
    )
    .await;
    let id = out["jobId"].as_str().expect("jobId").to_string();
    let running = || {
        fx.engine
            .sessions()
            .into_iter()
            .find(|s| s.profile == "researcher")
            .map(|s| s.id)
            .filter(|sid| host.is_running(sid))
    };
    until("the invocation to start", Duration::from_secs(10), || {
        running().is_some()
    })
    .await;
    let sid = running().expect("session");
    let t0 = Instant::now();
    let r = call(
        &fx,
        &fx.sid,
        "cancel_job",
        json!({"jobId": id}),
        Approval::Fail,
    )
    .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let rec = finished(&fx.engine, &id, Duration::from_secs(10)).await;
    assert_eq!(rec.snapshot.status, JobStatus::Cancelled);
    assert!(t0.elapsed() < Duration::from_secs(10));
    until("the agent to stop", Duration::from_secs(10), || {
        !host.is_running(&sid)
    })
    .await;
    let detail = rec.detail.expect("detail");
    assert_eq!(detail["sessions"][0]["sessionId"], sid.as_str());
    assert_eq!(detail["status"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chapter_write_review_revise_drafts_reviews_revises_and_asks_the_author() {
    let fx = fx(Preset::Supervised);
    let path = "manuscript/001-volume/009-chapter/index.md";
    let writer_turns = vec![
        // 1. the draft (writer session)
        json!({"text": "Drafting.", "tool_calls": [
            {"name": "write", "arguments": {"path": path, "content": "# Chapter 9\n\nThe fog came in gold.\n"}},
            {"name": "report_result", "arguments": {"result": "drafted", "data": {"summary": "Drafted chapter 9", "outputPath": path}}}
        ]}),
        // 2. the review (reviewer session)
        json!({"text": "Reviewing.", "tool_calls": [
            {"name": "report_result", "arguments": {"result": "notes", "data": {"summary": "1. Fog is grey, not gold."}}}
        ]}),
        // 3. the revision (writer session)
        json!({"text": "Revising.", "tool_calls": [
            {"name": "edit", "arguments": {"path": path, "edits": [{"oldText": "gold", "newText": "grey"}]}},
            {"name": "report_result", "arguments": {"result": "revised", "data": {"summary": "Made the fog grey", "outputPath": path}}}
        ]}),
    ];
    let _host = Host::attach(
        fx.engine.clone(),
        scripts(&[
            ("writer", writer_turns),
            ("leader.default", vec![json!({"text": "noted"})]),
        ]),
        approve(),
    );
    let out = run(
        &fx,
        json!({"workflowKey": "chapter-write-review-revise", "args": {"path": path, "instructions": "a foggy night"}}),
    )
    .await;
    let id = out["jobId"].as_str().expect("jobId").to_string();
    let qid = format!("{id}:1");
    until("the approval question", Duration::from_secs(20), || {
        fx.engine.pending_inputs().iter().any(|q| q.id == qid)
    })
    .await;
    let q = fx
        .engine
        .pending_inputs()
        .into_iter()
        .find(|q| q.id == qid)
        .expect("question");
    assert!(
        q.questions[0].question.contains("grey"),
        "the chapter's opening is shown: {}",
        q.questions[0].question
    );
    fx.engine
        .answer_input(
            &qid,
            vec![Answer {
                question_index: 0,
                text: "Approve".into(),
                selected_option_index: Some(0),
                ..Default::default()
            }],
        )
        .expect("answer");
    let rec = finished(&fx.engine, &id, Duration::from_secs(20)).await;
    assert_eq!(
        rec.snapshot.status,
        JobStatus::Completed,
        "{:?}",
        rec.snapshot.error
    );
    let result = rec.result.expect("result")["result"].clone();
    assert_eq!(result["approved"], true, "{result}");
    let phases: Vec<&str> = result["history"]
        .as_array()
        .expect("history")
        .iter()
        .filter_map(|h| h["phase"].as_str())
        .collect();
    assert_eq!(phases, ["draft", "review", "revise"]);
    assert_eq!(result["history"][1]["summary"], "1. Fog is grey, not gold.");
    assert_eq!(
        std::fs::read_to_string(fx.root.join(path)).expect("chapter"),
        "# Chapter 9\n\nThe fog came in grey.\n"
    );
    let progress = rec.snapshot.progress.expect("progress");
    assert_eq!(
        (progress.phase.as_deref(), progress.done, progress.total),
        (Some("approve"), 4, 4)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn consistency_audit_returns_the_world_keepers_issues() {
    let fx = fx(Preset::Supervised);
    let path = "manuscript/001-volume/009-chapter/index.md";
    std::fs::create_dir_all(fx.root.join("manuscript/001-volume/009-chapter")).expect("mkdir");
    std::fs::write(
        fx.root.join(path),
        "# Chapter 9\n\nMagnus took out his gold watch.\n",
    )
    .expect("write");
    let reply = json!({"issues": [{"severity": "error", "quote": "his gold watch", "problem": "the watch is silver", "worldFact": "item/flett-watch material = silver", "suggestion": "silver watch"}]});
    let _host = Host::attach(
        fx.engine.clone(),
        scripts(&[
            (
                "world.engine",
                vec![json!({"text": format!("Checked.\n{reply}")})],
            ),
            ("leader.default", vec![json!({"text": "noted"})]),
        ]),
        approve(),
    );
    let out = run(
        &fx,
        json!({"workflowKey": "consistency-audit", "args": {"path": path}, "wait": true}),
    )
    .await;
    assert_eq!(out["status"], "completed", "{out}");
    assert_eq!(out["result"]["parts"], 1);
    assert_eq!(out["result"]["issues"][0]["problem"], "the watch is silver");
    assert_eq!(out["result"]["issues"][0]["part"], 1);
    assert_eq!(out["sessions"][0]["profileKey"], "world.engine");
}

/// Choosing a workflow fails with a typed error that carries what the caller needs: the key
/// asked for and the keys there are, or the file that is broken and why (real files, real
/// QuickJS).
#[test]
fn selecting_a_missing_or_broken_workflow_names_it() {
    use nbook::workflow::{self, DefinitionError, WorkflowError};
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    write_project_workflow(root, "mine", "({ title: 'Mine', run: async () => 1 })");
    write_project_workflow(root, "broken", "({ title: , })");
    let e = workflow::select(root, Some("nope"), None).unwrap_err();
    match &e {
        WorkflowError::NotFound { key, available } => {
            assert_eq!(key, "nope");
            assert!(available.iter().any(|k| k == "mine"), "{available:?}");
            assert!(
                available.iter().any(|k| k == "consistency-audit"),
                "{available:?}"
            );
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    let text = e.to_string();
    assert!(
        text.starts_with("no workflow 'nope'; the workflows are: ") && text.contains("mine"),
        "{text}"
    );
    let e = workflow::select(root, Some("broken"), None).unwrap_err();
    assert!(
        matches!(&e, WorkflowError::Broken { key, path, reason: DefinitionError::Script(m) }
            if key == "broken" && path == ".nbook/workflows/broken/workflow.js" && m.starts_with("SyntaxError")),
        "{e:?}"
    );
    assert!(matches!(
        workflow::select(root, Some("mine"), Some("return 1")),
        Err(WorkflowError::KeyAndScript)
    ));
    assert!(workflow::select(root, Some("mine"), None).is_ok());
    let config = Config::default();
    let e = workflow::check_model(&config, "huge").unwrap_err();
    assert!(
        matches!(&e, WorkflowError::UnknownModel { name, .. } if name == "huge"),
        "{e:?}"
    );
}
