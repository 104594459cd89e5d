//! Research runs (`fn_research_run`, `fn_research_list`, `fn_research_get`,
//! `fn_research_cancel`) through the real engine on a real project, with real servers on
//! 127.0.0.1: a Tavily-speaking search server and the pages it points at (a small HTTP/1.1
//! server), and the scripted OpenAI-compatible model server of `provider_support` (real SSE)
//! behind the real agent host, which runs the `research.synthesis` agent. The run's record is
//! read back from the project's SQLite file, its job from the engine's job store.

#[allow(dead_code)]
mod engine_support;

mod provider_support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_support::APPROVE;
use nbook::agent::build_provider_with;
use nbook::agent::host::{Host, ProviderSource};
use nbook::config::{Config, Dirs, Preset, WebConfig};
use nbook::engine::jobs::{JobKind, JobStatus};
use nbook::engine::{Approval, CallResult, CallStatus, Decision, Engine, Mode, ToolCall};
use provider_support::{fast_settings, Reply};
use serde_json::{json, Value};

// ---- the search and page server ----

/// One request: method, path, body.
#[derive(Clone, Debug)]
struct Req {
    method: String,
    target: String,
    body: String,
}

type Handler = dyn Fn(&Req, u16) -> (u16, &'static str, Vec<u8>) + Send + Sync;

struct Web {
    port: u16,
    log: Arc<Mutex<Vec<Req>>>,
}

impl Web {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
    fn hits(&self, path: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.target == path)
            .count()
    }
}

/// A tiny HTTP/1.1 server on 127.0.0.1, one request per connection.
fn serve(
    handler: impl Fn(&Req, u16) -> (u16, &'static str, Vec<u8>) + Send + Sync + 'static,
) -> Web {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = Arc::new(Mutex::new(Vec::new()));
    let handler: Arc<Handler> = Arc::new(handler);
    let l2 = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let (handler, log) = (handler.clone(), l2.clone());
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut tmp = [0u8; 4096];
                let head_end = loop {
                    let n = match s.read(&mut tmp) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    buf.extend_from_slice(&tmp[..n]);
                    if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break p + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                let mut lines = head.split("\r\n");
                let first: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
                let len: usize = lines
                    .filter_map(|l| l.split_once(':'))
                    .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
                    .and_then(|(_, v)| v.trim().parse().ok())
                    .unwrap_or(0);
                while buf.len() < head_end + len {
                    match s.read(&mut tmp) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&tmp[..n]),
                    }
                }
                let req = Req {
                    method: first.first().unwrap_or(&"").to_string(),
                    target: first.get(1).unwrap_or(&"").to_string(),
                    body: String::from_utf8_lossy(&buf[head_end..]).to_string(),
                };
                log.lock().unwrap().push(req.clone());
                let (status, ct, body) = handler(&req, port);
                let out = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: {ct}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(out.as_bytes());
                let _ = s.write_all(&body);
            });
        }
    });
    Web { port, log }
}

fn page(title: &str, text: &str) -> Vec<u8> {
    format!("<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1><p>{text}</p></body></html>").into_bytes()
}

/// Tavily's `/search` and the pages its results name. The query picks the case:
/// `provider-down` → a 500 from the provider; `all missing` → results that are all 404;
/// `slow` → a first page that takes 4 s; anything else → two good pages, one private
/// address (refused by the SSRF guard: `10.0.0.1`), one 404.
fn web() -> Web {
    serve(|req, port| {
        let base = format!("http://127.0.0.1:{port}");
        match (req.method.as_str(), req.target.as_str()) {
            ("POST", "/search") => {
                let q: Value = serde_json::from_str(&req.body).unwrap_or(Value::Null);
                let q = q["query"].as_str().unwrap_or_default().to_string();
                if q.contains("provider-down") {
                    return (
                        500,
                        "application/json",
                        br#"{"detail": {"error": "upstream index unavailable"}}"#.to_vec(),
                    );
                }
                let results = if q.contains("all missing") {
                    json!([
                        {"title": "Gone", "url": format!("{base}/missing-1"), "content": "x"},
                        {"title": "Gone too", "url": format!("{base}/missing-2"), "content": "y"},
                    ])
                } else if q.contains("slow") {
                    json!([{"title": "Slow", "url": format!("{base}/slow"), "content": "z"}])
                } else {
                    json!([
                        {"title": "Salt in Lüneburg", "url": format!("{base}/salt"), "content": "The salt works.", "score": 0.9},
                        {"title": "Private", "url": "http://10.0.0.1/intranet", "content": "no"},
                        {"title": "Taxes", "url": format!("{base}/tax"), "content": "The tax.", "score": 0.8},
                        {"title": "Missing", "url": format!("{base}/missing"), "content": "gone"},
                    ])
                };
                let body = json!({"query": q, "results": results});
                (200, "application/json", body.to_string().into_bytes())
            }
            ("GET", "/salt") => (
                200,
                "text/html; charset=utf-8",
                page(
                    "Salt in Lüneburg",
                    "Lüneburg boiled brine from its salt spring in lead pans until 1980.",
                ),
            ),
            ("GET", "/tax") => (
                200,
                "text/html; charset=utf-8",
                page(
                    "The salt tax",
                    "In 1820 the salt tax was collected at the town gates.",
                ),
            ),
            ("GET", "/slow") => {
                std::thread::sleep(Duration::from_secs(4));
                (200, "text/html", page("Slow", "late"))
            }
            _ => (404, "text/plain", b"not here".to_vec()),
        }
    })
}

// ---- the model ----

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

/// The synthesis agent's turn: one `report_result` call with `data`.
fn report(data: Value) -> Reply {
    let args = json!({"result": "done", "data": data}).to_string();
    Reply::data(&[
        chunk(
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_rr", "type": "function",
                "function": {"name": "report_result", "arguments": args}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        json!({"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 60}}).to_string(),
        "[DONE]".into(),
    ])
}

// ---- the project ----

const TAVILY_ENV: &str = "NBOOK_TEST_RESEARCH_TAVILY_KEY";

struct Fx {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    engine: Arc<Engine>,
    web: Web,
    model: provider_support::Server,
    _host: Option<Arc<Host>>,
}

/// A project whose search provider and pages are `web()`, whose model server answers with
/// `replies`, with the agent host attached unless `host` is false.
async fn fx(replies: Vec<Reply>, host: bool, adjust: impl FnOnce(&mut Config)) -> Fx {
    std::env::set_var(TAVILY_ENV, "tv-secret");
    let web = web();
    let model = provider_support::Server::start(replies).await;
    let mut config = provider_support::config("openai", &model.base_url(), "");
    config.approval.preset = Preset::Supervised;
    config.web = WebConfig {
        search_order: vec!["tavily".into()],
        tavily_api_key_env: Some(TAVILY_ENV.into()),
        tavily_base_url: Some(web.url("")),
        allow_hosts: vec!["127.0.0.1".into()],
        ..WebConfig::default()
    };
    adjust(&mut config);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = Arc::new(
        Engine::open(ws, config.clone(), &dirs, nbook::tools::registry().unwrap()).unwrap(),
    );
    let host = host.then(|| {
        let source: ProviderSource = Arc::new(move |_profile, _model| {
            build_provider_with(&config, "m", fast_settings()).map_err(|e| e.to_string())
        });
        Host::attach(engine.clone(), source, APPROVE)
    });
    Fx {
        _tmp: tmp,
        root,
        engine,
        web,
        model,
        _host: host,
    }
}

impl Fx {
    fn session(&self, profile: &str) -> String {
        self.engine
            .create_session(profile, Mode::Normal, profile, None)
            .unwrap()
            .id
    }

    async fn call(&self, sid: &str, tool: &str, args: Value, approval: Approval) -> CallResult {
        let c = ToolCall {
            id: String::new(),
            name: tool.into(),
            arguments: args,
        };
        self.engine.call(sid, c, approval).await
    }

    async fn ok(&self, sid: &str, tool: &str, args: Value) -> Value {
        let r = self.call(sid, tool, args, APPROVE).await;
        assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
        r.details.expect("details")
    }

    /// The call fails with a tool error; its code.
    async fn code(&self, sid: &str, tool: &str, args: Value) -> String {
        let r = self.call(sid, tool, args, APPROVE).await;
        assert_eq!(r.status, CallStatus::ToolError, "{tool}: {}", r.content);
        assert!(r.content.contains("nothing was changed"), "{}", r.content);
        r.details.unwrap_or(Value::Null)["code"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// The rows of `nbook_research_run` in the project's SQLite file: (id, status, error,
    /// results JSON).
    fn rows(&self) -> Vec<(String, String, Option<String>, Option<String>)> {
        let c = rusqlite::Connection::open(self.root.join(".nbook/project.sqlite")).unwrap();
        let mut st = c
            .prepare("SELECT id, status, error, results FROM nbook_research_run ORDER BY seq")
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn research_jobs(&self) -> Vec<nbook::engine::jobs::JobSnapshot> {
        self.engine
            .jobs()
            .list(None, None)
            .into_iter()
            .filter(|j| j.kind == JobKind::Research)
            .collect()
    }

    async fn until_ended(&self, sid: &str, id: &str) -> Value {
        for _ in 0..1000 {
            let d = self.ok(sid, "fn_research_get", json!({"id": id})).await;
            if !matches!(d["status"].as_str(), Some("pending" | "running")) {
                return d;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("research run {id} did not end");
    }
}

fn good_synthesis(salt: &str, tax: &str) -> Value {
    json!({
        "summary": "Lüneburg boiled brine in lead pans; the 1820 salt tax was collected at the gates.",
        "findings": [
            {"text": "Brine from the salt spring was boiled in lead pans.", "citations": [salt]},
            {"text": "The salt tax was collected at the town gates in 1820.", "citations": [tax, "http://invented.example/source"]},
            {"text": "Salt came by ship from Venice.", "citations": ["http://invented.example/venice"]},
        ]
    })
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

// ---- tests ----

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_run_searches_fetches_and_synthesises_findings_that_cite_fetched_sources() {
    // The model's reply cites the pages, whose URLs are known once the servers run.
    let f = fx(vec![], true, |_| {}).await;
    let (salt, tax) = (f.web.url("/salt"), f.web.url("/tax"));
    let f = Fx {
        model: provider_support::Server::start(vec![report(good_synthesis(&salt, &tax))]).await,
        ..f
    };
    let f = rebind_model(f).await;
    let sid = f.session("executor");
    let d = f
        .ok(
            &sid,
            "fn_research_run",
            json!({"query": "salt tax Lüneburg 1820", "wait_for_completion": true}),
        )
        .await;
    assert_eq!(d["status"], "completed", "{d}");
    let id = d["runId"].as_str().unwrap().to_string();
    assert_eq!(id, "RR-001");
    assert_eq!(d["sourceCount"], 2);
    assert!(d["summary"].as_str().unwrap().contains("lead pans"));
    // Citations must name fetched sources: the invented one is dropped, and the finding that
    // cited nothing else with it.
    let findings = d["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2, "{d}");
    assert_eq!(findings[0]["citations"], json!([salt]));
    assert_eq!(findings[1]["citations"], json!([tax]));
    assert_eq!(
        d["citations"],
        json!([{"url": salt, "title": "Salt in Lüneburg"}, {"url": tax, "title": "Taxes"}])
    );
    assert_eq!(d["error"], Value::Null);
    assert_eq!(d["tokenUsage"]["inputTokens"], 900);
    assert_eq!(d["tokenUsage"]["outputTokens"], 60);
    // The sources: two fetched, the private address refused without a request, one 404.
    let sources = d["sources"].as_array().unwrap();
    let status_of = |u: &str| {
        sources
            .iter()
            .find(|s| s["url"] == u)
            .map(|s| s["status"].as_str().unwrap().to_string())
    };
    assert_eq!(status_of(&salt).as_deref(), Some("fetched"));
    assert_eq!(
        status_of("http://10.0.0.1/intranet").as_deref(),
        Some("found")
    );
    assert_eq!(status_of(&f.web.url("/missing")).as_deref(), Some("failed"));
    let events: Vec<&str> = d["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert!(events.contains(&"citation"), "{events:?}");
    assert_eq!(events.last(), Some(&"completed"));
    // The synthesis agent read the fetched text.
    let reqs = f.model.requests();
    assert_eq!(reqs.len(), 1);
    let user = reqs[0].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(user.contains("salt tax Lüneburg 1820"), "{user}");
    assert!(user.contains("lead pans until 1980"), "{user}");
    assert!(user.contains("collected at the town gates"), "{user}");
    // The record in the SQLite file, and the job.
    let rows = f.rows();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].1, "completed");
    let results: Value = serde_json::from_str(rows[0].3.as_deref().unwrap()).unwrap();
    assert_eq!(results["findings"].as_array().unwrap().len(), 2);
    let jobs = f.research_jobs();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].status, JobStatus::Completed);
    assert_eq!(
        Some(jobs[0].job_id.clone()),
        d["jobId"].as_str().map(str::to_string)
    );
    assert_eq!(jobs[0].reference["researchRunId"], "RR-001");
    // get gives the same run; the text names its sources.
    let r = f
        .call(&sid, "fn_research_get", json!({"id": "RR-001"}), APPROVE)
        .await;
    assert!(r.content.contains(&salt), "{}", r.content);
}

/// Rebuild `f` with a host whose provider is `f.model` (tests that learn the page URLs
/// only after the servers started).
async fn rebind_model(f: Fx) -> Fx {
    let mut config = provider_support::config("openai", &f.model.base_url(), "");
    config.approval.preset = Preset::Supervised;
    config.web = f.engine.config().web.clone();
    let source: ProviderSource = Arc::new(move |_profile, _model| {
        build_provider_with(&config, "m", fast_settings()).map_err(|e| e.to_string())
    });
    let host = Host::attach(f.engine.clone(), source, APPROVE);
    Fx {
        _host: Some(host),
        ..f
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_waiting_the_run_is_pending_or_running_then_completed_through_get() {
    let f = fx(vec![], true, |_| {}).await;
    let data = good_synthesis(&f.web.url("/salt"), &f.web.url("/tax"));
    let f = Fx {
        model: provider_support::Server::start(vec![report(data)]).await,
        ..f
    };
    let f = rebind_model(f).await;
    let sid = f.session("triage");
    let d = f
        .ok(
            &sid,
            "fn_research_run",
            json!({"query": "salt tax Lüneburg 1820"}),
        )
        .await;
    let first = d["status"].as_str().unwrap().to_string();
    assert!(matches!(first.as_str(), "pending" | "running"), "{d}");
    assert_eq!(d["findings"], json!([]));
    let id = d["runId"].as_str().unwrap();
    let done = f.until_ended(&sid, id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["findings"].as_array().unwrap().len(), 2);
    assert!(done["startedAt"].is_string() && done["finishedAt"].is_string());
    // wait_for_completion with a short wait answers with the status then.
    let f2 = fx(vec![], true, |_| {}).await;
    let sid2 = f2.session("executor");
    let d = f2
        .ok(
            &sid2,
            "fn_research_run",
            json!({"query": "slow salt", "wait_for_completion": true, "max_wait_ms": 300}),
        )
        .await;
    assert_eq!(d["status"], "running", "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_provider_fails_the_run_with_its_error() {
    let f = fx(vec![], true, |_| {}).await;
    let sid = f.session("executor");
    let d = f
        .ok(
            &sid,
            "fn_research_run",
            json!({"query": "provider-down salt", "wait_for_completion": true}),
        )
        .await;
    assert_eq!(d["status"], "failed", "{d}");
    let err = d["error"].as_str().unwrap();
    assert!(
        err.contains("tavily") && err.contains("upstream index unavailable"),
        "{err}"
    );
    assert_eq!(d["summary"], Value::Null);
    assert_eq!(d["findings"], json!([]));
    let jobs = f.research_jobs();
    assert_eq!(jobs[0].status, JobStatus::Failed);
    assert!(jobs[0]
        .error
        .as_deref()
        .unwrap()
        .contains("upstream index unavailable"));
    // No page fetched and no model asked.
    assert_eq!(f.model.requests().len(), 0);
    // Every fetch failing fails the run too, before the model is asked.
    let d = f
        .ok(
            &sid,
            "fn_research_run",
            json!({"query": "all missing", "wait_for_completion": true}),
        )
        .await;
    assert_eq!(d["status"], "failed", "{d}");
    assert!(d["error"]
        .as_str()
        .unwrap()
        .contains("no source could be fetched"));
    assert_eq!(f.web.hits("/missing-1"), 1);
    assert_eq!(f.model.requests().len(), 0);
    // A model that fails (500s, retried) fails the run with the synthesis' error.
    let f = Fx {
        model: provider_support::Server::start(
            (0..4)
                .map(|_| Reply::error(500, r#"{"error":{"message":"model overloaded"}}"#))
                .collect(),
        )
        .await,
        ..f
    };
    let f = rebind_model(f).await;
    let d = f
        .ok(
            &sid,
            "fn_research_run",
            json!({"query": "salt tax", "wait_for_completion": true}),
        )
        .await;
    assert_eq!(d["status"], "failed", "{d}");
    assert!(d["error"].as_str().unwrap().contains("synthesis"), "{d}");
    let rows = f.rows();
    assert_eq!(
        rows.iter().map(|r| r.1.as_str()).collect::<Vec<_>>(),
        ["failed", "failed", "failed"]
    );
    assert!(rows.iter().all(|r| r.3.is_none()), "no results are kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn list_filters_by_status_and_limits_newest_first() {
    let f = fx(vec![], true, |_| {}).await;
    let data = good_synthesis(&f.web.url("/salt"), &f.web.url("/tax"));
    let f = Fx {
        model: provider_support::Server::start(vec![report(data)]).await,
        ..f
    };
    let f = rebind_model(f).await;
    let sid = f.session("heartbeat");
    let wait = |q: &str| json!({"query": q, "wait_for_completion": true});
    f.ok(&sid, "fn_research_run", wait("salt tax")).await;
    f.ok(&sid, "fn_research_run", wait("provider-down one"))
        .await;
    f.ok(&sid, "fn_research_run", wait("provider-down two"))
        .await;
    let all = f.ok(&sid, "fn_research_list", json!({})).await;
    let ids = |d: &Value| -> Vec<String> {
        d["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["runId"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&all), ["RR-003", "RR-002", "RR-001"]);
    assert_eq!(all["count"], 3);
    let failed = f
        .ok(&sid, "fn_research_list", json!({"status": "failed"}))
        .await;
    assert_eq!(ids(&failed), ["RR-003", "RR-002"]);
    assert!(failed["runs"][0]["error"]
        .as_str()
        .unwrap()
        .contains("tavily"));
    let completed = f
        .ok(&sid, "fn_research_list", json!({"status": "completed"}))
        .await;
    assert_eq!(ids(&completed), ["RR-001"]);
    assert!(completed["runs"][0]["summary"].is_string());
    assert_eq!(completed["runs"][0]["sourceCount"], 2);
    let one = f
        .ok(
            &sid,
            "fn_research_list",
            json!({"status": "failed", "limit": 1}),
        )
        .await;
    assert_eq!(ids(&one), ["RR-003"]);
    let r = f
        .call(
            &sid,
            "fn_research_list",
            json!({"status": "cancelled"}),
            APPROVE,
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok);
    assert_eq!(r.content, "No cancelled research runs.");
    // Bad filters are refused by the schema.
    for bad in [
        json!({"status": "done"}),
        json!({"limit": 0}),
        json!({"limit": 101}),
    ] {
        let r = f.call(&sid, "fn_research_list", bad.clone(), APPROVE).await;
        assert_eq!(r.status, CallStatus::InvalidArgs, "{bad}: {}", r.content);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancel_stops_the_run_and_its_job_and_a_finished_run_cannot_be_cancelled() {
    let f = fx(vec![], true, |_| {}).await;
    let sid = f.session("executor");
    let d = f
        .ok(&sid, "fn_research_run", json!({"query": "slow salt"}))
        .await;
    let id = d["runId"].as_str().unwrap().to_string();
    // It is fetching the slow page.
    eventually("the slow page is being fetched", || {
        f.web.hits("/slow") == 1
    })
    .await;
    let job_id = d["jobId"].as_str().unwrap().to_string();
    assert_eq!(
        f.engine.jobs().get(&job_id).unwrap().snapshot.status,
        JobStatus::Running
    );
    let c = f.ok(&sid, "fn_research_cancel", json!({"id": id})).await;
    assert_eq!(c["status"], "cancelled", "{c}");
    assert_eq!(c["error"], "cancelled");
    // The job ends cancelled at once, not when the slow fetch would have returned.
    eventually("the job is cancelled", || {
        f.engine.jobs().get(&job_id).unwrap().snapshot.status == JobStatus::Cancelled
    })
    .await;
    let rows = f.rows();
    assert_eq!(rows[0].1, "cancelled");
    // Nothing the runner does later undoes it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let again = f.ok(&sid, "fn_research_get", json!({"id": id})).await;
    assert_eq!(again["status"], "cancelled");
    assert_eq!(
        again["events"].as_array().unwrap().last().unwrap()["type"],
        "cancelled"
    );
    // Cancelling it again: a clear error, and nothing changes.
    let before = f.rows();
    assert_eq!(
        f.code(&sid, "fn_research_cancel", json!({"id": id})).await,
        "RESEARCH_RUN_FINISHED"
    );
    assert_eq!(f.rows(), before);
    // A completed or failed run cannot be cancelled either.
    f.ok(
        &sid,
        "fn_research_run",
        json!({"query": "provider-down", "wait_for_completion": true}),
    )
    .await;
    assert_eq!(
        f.code(&sid, "fn_research_cancel", json!({"id": "RR-002"}))
            .await,
        "RESEARCH_RUN_FINISHED"
    );
    // Cancelling from the Jobs view (the job's token) cancels the run too.
    let d = f
        .ok(&sid, "fn_research_run", json!({"query": "slow salt"}))
        .await;
    let id3 = d["runId"].as_str().unwrap().to_string();
    eventually("the second slow fetch started", || f.web.hits("/slow") == 2).await;
    f.engine
        .jobs()
        .cancel(d["jobId"].as_str().unwrap(), None)
        .unwrap();
    let end = f.until_ended(&sid, &id3).await;
    assert_eq!(end["status"], "cancelled", "{end}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_input_and_refused_calls_persist_nothing() {
    let f = fx(vec![], true, |_| {}).await;
    let sid = f.session("executor");
    // Unknown ids.
    assert_eq!(
        f.code(&sid, "fn_research_get", json!({"id": "RR-404"}))
            .await,
        "RESEARCH_RUN_NOT_FOUND"
    );
    assert_eq!(
        f.code(&sid, "fn_research_cancel", json!({"id": "RR-404"}))
            .await,
        "RESEARCH_RUN_NOT_FOUND"
    );
    // A blank query, schema violations.
    assert_eq!(
        f.code(&sid, "fn_research_run", json!({"query": "   "}))
            .await,
        "INVALID_INPUT"
    );
    for bad in [
        json!({}),
        json!({"query": "x"}),
        json!({"query": "salt", "max_wait_ms": 600001}),
        json!({"query": "salt", "extra": 1}),
        json!({"query": "salt", "wait_for_completion": "yes"}),
    ] {
        let r = f.call(&sid, "fn_research_run", bad.clone(), APPROVE).await;
        assert_eq!(r.status, CallStatus::InvalidArgs, "{bad}: {}", r.content);
    }
    // The author rejects the run; headless without approval it waits: nothing is written,
    // nothing is searched.
    let reject = Approval::Auto {
        decision: Decision::Reject { reason: None },
        by: "test",
    };
    let r = f
        .call(
            &sid,
            "fn_research_run",
            json!({"query": "salt tax"}),
            reject,
        )
        .await;
    assert_eq!(r.status, CallStatus::Rejected, "{}", r.content);
    let r = f
        .call(
            &sid,
            "fn_research_run",
            json!({"query": "salt tax"}),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::NeedsApproval, "{}", r.content);
    assert!(f.rows().is_empty());
    assert!(f.research_jobs().is_empty());
    assert_eq!(f.web.hits("/search"), 0);
    // Without a search provider the call is refused before the author is asked.
    let g = fx(vec![], true, |c| {
        c.web.tavily_api_key_env = Some("NBOOK_TEST_RESEARCH_NO_KEY".into());
        c.web.brave_api_key_env = Some("NBOOK_TEST_RESEARCH_NO_KEY".into());
    })
    .await;
    let gs = g.session("executor");
    let r = g
        .call(
            &gs,
            "fn_research_run",
            json!({"query": "salt tax"}),
            Approval::Queue,
        )
        .await;
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(
        r.content.contains("no web search provider"),
        "{}",
        r.content
    );
    assert!(g.engine.pending().is_empty());
    assert!(g.rows().is_empty());
    // Without an agent host (a bare `nbook call`) there is no synthesis: refused likewise.
    let h = fx(vec![], false, |_| {}).await;
    let hs = h.session("executor");
    assert_eq!(
        h.code(&hs, "fn_research_run", json!({"query": "salt tax"}))
            .await,
        "RESEARCH_UNAVAILABLE"
    );
    assert!(h.rows().is_empty());
    assert!(h.research_jobs().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_author_sees_the_search_request_and_the_limits_before_anything_is_sent() {
    let f = fx(vec![], true, |_| {}).await;
    let sid = f.session("executor");
    let engine = f.engine.clone();
    let s2 = sid.clone();
    let call = tokio::spawn(async move {
        let c = ToolCall {
            id: String::new(),
            name: "fn_research_run".into(),
            arguments: json!({"query": "provider-down salt"}),
        };
        engine.call(&s2, c, Approval::Queue).await
    });
    eventually("the run waits for the author", || {
        !f.engine.pending().is_empty()
    })
    .await;
    let p = f.engine.pending().remove(0);
    assert_eq!(p.tool, "fn_research_run");
    let text = match &p.preview.body {
        nbook::engine::PreviewBody::Text { text } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(
        text.contains(&format!("POST {}/search", f.web.url(""))),
        "{text}"
    );
    assert!(text.contains("query: provider-down salt"), "{text}");
    assert!(text.contains("up to 5"), "{text}");
    assert!(!text.contains("tv-secret"), "the API key is never shown");
    assert_eq!(f.web.hits("/search"), 0, "nothing sent before the approval");
    assert!(f.rows().is_empty(), "nothing written before the approval");
    f.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    let r = call.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let id = r.details.unwrap()["runId"].as_str().unwrap().to_string();
    let end = f.until_ended(&sid, &id).await;
    assert_eq!(end["status"], "failed");
}

#[test]
fn the_research_tools_go_to_triage_executor_and_heartbeat() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = Engine::open(
        ws,
        Config::default(),
        &dirs,
        nbook::tools::registry().unwrap(),
    )
    .unwrap();
    let tools = [
        "fn_research_run",
        "fn_research_list",
        "fn_research_get",
        "fn_research_cancel",
        "fn_research_retry",
    ];
    let profiles = engine.profiles();
    for role in ["triage", "executor", "heartbeat"] {
        let p = profiles.get(role).unwrap();
        for t in tools {
            assert!(p.allows(t), "{role} lacks {t}");
        }
    }
    for role in ["chat", "reviewer", "merger", "step-session", "researcher"] {
        let p = profiles.get(role).unwrap();
        assert!(!p.allows("fn_research_run"), "{role} has fn_research_run");
    }
    let synth = profiles.get("research.synthesis").unwrap();
    assert_eq!(synth.tools, ["report_result"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_job_is_gone_is_recorded_failed_not_left_running() {
    let f = fx(vec![], true, |_| {}).await;
    let sid = f.session("executor");
    // A run left `running` by a program that stopped: its job is not in this job store.
    let board = nbook::board::Board::new(&f.root, "Book");
    let run = nbook::board::research::create(
        &board,
        &nbook::board::research::NewRun {
            query: "salt before the crash".into(),
            trigger: "executor (session 9)".into(),
            session_id: Some("9".into()),
            job_id: Some("job-99".into()),
            tags: vec![],
            retry_of: None,
        },
    )
    .unwrap();
    assert!(nbook::board::research::mark_running(&board, &run.id).unwrap());
    let d = f.ok(&sid, "fn_research_get", json!({"id": run.id})).await;
    assert_eq!(d["status"], "failed", "{d}");
    assert!(d["error"].as_str().unwrap().starts_with("interrupted"));
    assert_eq!(f.rows()[0].1, "failed");
    let running = f
        .ok(&sid, "fn_research_list", json!({"status": "running"}))
        .await;
    assert_eq!(running["count"], 0);
    assert_eq!(
        f.code(&sid, "fn_research_cancel", json!({"id": run.id}))
            .await,
        "RESEARCH_RUN_FINISHED"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn retry_starts_a_failed_or_cancelled_run_again_as_a_new_run_that_names_it() {
    // The first synthesis fails (the model is overloaded); the retry's model answers.
    let f = fx(vec![], true, |_| {}).await;
    let (salt, tax) = (f.web.url("/salt"), f.web.url("/tax"));
    let f = Fx {
        model: provider_support::Server::start(
            (0..4)
                .map(|_| Reply::error(500, r#"{"error":{"message":"model overloaded"}}"#))
                .chain([report(good_synthesis(&salt, &tax))])
                .collect(),
        )
        .await,
        ..f
    };
    let f = rebind_model(f).await;
    let sid = f.session("executor");
    let d = f
        .ok(
            &sid,
            "fn_research_run",
            json!({"query": "salt tax", "wait_for_completion": true}),
        )
        .await;
    assert_eq!(
        (d["runId"].as_str(), d["status"].as_str()),
        (Some("RR-001"), Some("failed")),
        "{d}"
    );
    assert_eq!(d["retryOf"], Value::Null);
    // The retry waits for the author like a run: the preview names the run it retries and
    // shows the search it sends; nothing is written or sent before the approval.
    let engine = f.engine.clone();
    let s2 = sid.clone();
    let call = tokio::spawn(async move {
        let c = ToolCall {
            id: String::new(),
            name: "fn_research_retry".into(),
            arguments: json!({"id": "RR-001"}),
        };
        engine.call(&s2, c, Approval::Queue).await
    });
    eventually("the retry waits for the author", || {
        !f.engine.pending().is_empty()
    })
    .await;
    let p = f.engine.pending().remove(0);
    assert_eq!(p.tool, "fn_research_retry");
    let text = match &p.preview.body {
        nbook::engine::PreviewBody::Text { text } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(
        text.contains("Retry of research run RR-001 (failed"),
        "{text}"
    );
    assert!(
        text.contains(&format!("POST {}/search", f.web.url(""))),
        "{text}"
    );
    assert!(text.contains("query: salt tax"), "{text}");
    let searches = f.web.hits("/search");
    assert_eq!(f.rows().len(), 1, "nothing written before the approval");
    f.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    let r = call.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert!(r.content.contains("A retry of RR-001"), "{}", r.content);
    let d = r.details.unwrap();
    assert_eq!(
        (d["runId"].as_str(), d["retryOf"].as_str()),
        (Some("RR-002"), Some("RR-001")),
        "{d}"
    );
    let end = f.until_ended(&sid, "RR-002").await;
    assert_eq!(end["status"], "completed", "{end}");
    assert_eq!(end["retryOf"], "RR-001");
    assert_eq!(end["query"], "salt tax");
    assert_eq!(end["findings"].as_array().unwrap().len(), 2);
    assert_eq!(
        f.web.hits("/search"),
        searches + 1,
        "the retry searched again"
    );
    // The old run stays as it ended; the new record names it in the SQLite file.
    let old = f.ok(&sid, "fn_research_get", json!({"id": "RR-001"})).await;
    assert_eq!(old["status"], "failed");
    let c = rusqlite::Connection::open(f.root.join(".nbook/project.sqlite")).unwrap();
    let of: Option<String> = c
        .query_row(
            "SELECT retry_of FROM nbook_research_run WHERE id = 'RR-002'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(of.as_deref(), Some("RR-001"));

    // A completed run, a running one and an unknown id: typed errors, nothing written.
    let before = f.rows();
    assert_eq!(
        f.code(&sid, "fn_research_retry", json!({"id": "RR-002"}))
            .await,
        "RESEARCH_RUN_NOT_RETRYABLE"
    );
    assert_eq!(
        f.code(&sid, "fn_research_retry", json!({"id": "RR-404"}))
            .await,
        "RESEARCH_RUN_NOT_FOUND"
    );
    let r = f.call(&sid, "fn_research_retry", json!({}), APPROVE).await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
    assert_eq!(f.rows(), before);
    let d = f
        .ok(&sid, "fn_research_run", json!({"query": "slow salt"}))
        .await;
    let slow = d["runId"].as_str().unwrap().to_string();
    eventually("the slow page is being fetched", || {
        f.web.hits("/slow") == 1
    })
    .await;
    let before = f.rows();
    let r = f
        .call(&sid, "fn_research_retry", json!({"id": slow}), APPROVE)
        .await;
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(
        r.content
            .contains("is running; only a failed or cancelled run can be retried"),
        "{}",
        r.content
    );
    assert_eq!(f.rows(), before);
    // Cancelled, it can be retried; a rejected retry writes nothing.
    f.ok(&sid, "fn_research_cancel", json!({"id": slow})).await;
    let before = f.rows();
    let reject = Approval::Auto {
        decision: Decision::Reject { reason: None },
        by: "test",
    };
    let r = f
        .call(&sid, "fn_research_retry", json!({"id": slow}), reject)
        .await;
    assert_eq!(r.status, CallStatus::Rejected, "{}", r.content);
    assert_eq!(f.rows(), before);
    let d = f.ok(&sid, "fn_research_retry", json!({"id": slow})).await;
    assert_eq!(d["retryOf"].as_str(), Some(slow.as_str()), "{d}");
    let again = d["runId"].as_str().unwrap().to_string();
    f.ok(&sid, "fn_research_cancel", json!({"id": again})).await;
    assert_eq!(f.until_ended(&sid, &again).await["status"], "cancelled");
}
