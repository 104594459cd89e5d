//! The egress gate and declared effects, end to end through a real Engine and a real HTTP
//! server on 127.0.0.1 (reached through `allow_hosts`): under `supervised` the first request
//! to a host waits for the author with a preview of the URL, the host, the asking session and
//! what it (and the session that started it) read; a host grant covers later calls; another
//! host asks again; `[web] allow_egress` pre-allows; `locked` refuses; `neurobook` runs.
//! Also: a changing call announces the domains its tool declares, and `nbook tools --json`
//! lists every tool's effects.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nbook::config::{Config, Dirs, Preset, WebConfig};
use nbook::engine::effects::Domain;
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, EngineEvent, Mode, PendingCall,
    PreviewBody, ToolCall,
};
use serde_json::{json, Value};

/// A tiny HTTP/1.1 server on 127.0.0.1 answering every GET or POST with a text page; it
/// records each request line (method and target).
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

fn serve() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let port = listener.local_addr().expect("local addr").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let log = log.clone();
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
                let len: usize = head
                    .lines()
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
                let first = head.lines().next().unwrap_or("").to_string();
                log.lock().unwrap().push(first.clone());
                let body = if first.starts_with("POST /search") {
                    r#"{"results":[{"title":"T","url":"https://example.org/a","content":"c"}]}"#
                } else {
                    "salt roads"
                };
                let ct = if first.starts_with("POST") {
                    "application/json"
                } else {
                    "text/plain"
                };
                let out = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {ct}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(out.as_bytes());
            });
        }
    });
    Server { port, seen }
}

struct Fixture {
    _tmp: tempfile::TempDir,
    engine: Arc<Engine>,
}

fn fixture(preset: Preset, web: WebConfig) -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).expect("init");
    std::fs::write(root.join("secret.md"), "the heir is the gardener\n").expect("secret");
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).expect("workspace");
    let mut config = Config {
        web,
        ..Config::default()
    };
    config.approval.preset = preset;
    let engine = Arc::new(
        Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).expect("engine"),
    );
    Fixture { _tmp: tmp, engine }
}

/// Both loopback spellings may be fetched (SSRF allowance); whether data may leave is the
/// egress gate's business.
fn local(allow_egress: &[&str]) -> WebConfig {
    WebConfig {
        allow_hosts: vec!["127.0.0.1".into(), "localhost".into()],
        allow_egress: allow_egress.iter().map(|h| h.to_string()).collect(),
        ..WebConfig::default()
    }
}

fn tool_call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: name.into(),
        arguments: args,
    }
}

/// Start a call in the background and wait until it is pending; returns its queue entry.
async fn pending_call(
    f: &Fixture,
    sid: &str,
    name: &str,
    args: Value,
) -> (PendingCall, tokio::task::JoinHandle<CallResult>) {
    let before = f.engine.pending().len();
    let (e, s, c) = (f.engine.clone(), sid.to_string(), tool_call(name, args));
    let handle = tokio::spawn(async move { e.call(&s, c, Approval::Queue).await });
    for _ in 0..400 {
        let q = f.engine.pending();
        if q.len() > before {
            return (q.last().cloned().expect("entry"), handle);
        }
        assert!(!handle.is_finished(), "the call finished without asking");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{name} never reached the approval queue");
}

/// Run a call that must not ask (fails the test if it waits in the queue).
async fn runs_at_once(f: &Fixture, sid: &str, name: &str, args: Value) -> CallResult {
    let fut = f.engine.call(sid, tool_call(name, args), Approval::Queue);
    let r = tokio::time::timeout(Duration::from_secs(20), fut)
        .await
        .unwrap_or_else(|_| panic!("{name} waited: {:?}", f.engine.pending()));
    assert!(!r.waited, "{name} went through the queue");
    r
}

fn egress_body(p: &PendingCall) -> (&Vec<nbook::engine::EgressShown>, &String, &Vec<String>) {
    match &p.preview.body {
        PreviewBody::Egress {
            requests,
            session,
            earlier,
        } => (requests, session, earlier),
        other => panic!("not an egress preview: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn supervised_asks_once_per_host_with_the_url_the_session_and_what_it_read() {
    let s = serve();
    let f = fixture(Preset::Supervised, local(&[]));
    let leader = f
        .engine
        .create_session("leader.default", Mode::Normal, "lead", None)
        .expect("leader")
        .id;
    let r = runs_at_once(&f, &leader, "read", json!({"path": "secret.md"})).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let sid = f
        .engine
        .create_session("researcher", Mode::Normal, "research", Some(leader.clone()))
        .expect("researcher")
        .id;

    // The first request to 127.0.0.1 waits, with nothing sent yet.
    let secret = "x".repeat(812);
    let url = format!("http://127.0.0.1:{}/find?q={secret}&lang=en", s.port);
    let (p, handle) = pending_call(&f, &sid, "web_fetch", json!({ "url": url })).await;
    assert!(
        s.seen.lock().unwrap().is_empty(),
        "nothing is sent before approval"
    );
    assert!(p.session_grant_allowed);
    let (requests, session, earlier) = egress_body(&p);
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].host, "127.0.0.1");
    assert_eq!(requests[0].method, "GET");
    assert_eq!(
        requests[0].url,
        format!(
            "http://127.0.0.1:{}/find?q=xxxxxxxxxxxxxxxx…(812 chars)&lang=en",
            s.port
        )
    );
    assert_eq!(session, &format!("{sid} (researcher)"));
    assert!(
        earlier
            .iter()
            .any(|e| e.contains(&format!("session {leader}")) && e.contains("read path=secret.md")),
        "the parent's read is shown: {earlier:?}"
    );
    assert!(
        p.preview.summary.contains("127.0.0.1"),
        "{}",
        p.preview.summary
    );
    f.engine
        .decide(&p.approval_id, Decision::ApproveForSession)
        .expect("decide");
    let r = handle.await.expect("join");
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert!(r.waited);
    assert_eq!(s.seen.lock().unwrap().len(), 1);

    // The same host again: granted for this session, runs at once.
    let again = format!("http://127.0.0.1:{}/other", s.port);
    let r = runs_at_once(&f, &sid, "web_fetch", json!({ "url": again })).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(s.seen.lock().unwrap().len(), 2);

    // Another host asks again; a rejection sends nothing.
    let other = format!("http://localhost:{}/page", s.port);
    let (p, handle) = pending_call(&f, &sid, "web_fetch", json!({ "url": other })).await;
    assert_eq!(egress_body(&p).0[0].host, "localhost");
    f.engine
        .decide(&p.approval_id, Decision::Reject { reason: None })
        .expect("decide");
    let r = handle.await.expect("join");
    assert_eq!(r.status, CallStatus::Rejected, "{}", r.content);
    assert_eq!(
        s.seen.lock().unwrap().len(),
        2,
        "a rejected request is not sent"
    );

    // The grant belongs to that session: another session asks for 127.0.0.1 anew.
    let fresh = f
        .engine
        .create_session("researcher", Mode::Normal, "other", None)
        .expect("session")
        .id;
    let (p, handle) = pending_call(&f, &fresh, "web_fetch", json!({ "url": again })).await;
    let (_, _, earlier) = egress_body(&p);
    assert!(earlier[0].contains("no project data read"), "{earlier:?}");
    f.engine
        .decide(&p.approval_id, Decision::Approve)
        .expect("decide");
    assert_eq!(handle.await.expect("join").status, CallStatus::Ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_egress_pre_allows_a_host_and_headless_calls_report_the_preview() {
    let s = serve();
    let f = fixture(Preset::Supervised, local(&["127.0.0.1"]));
    let sid = f
        .engine
        .create_session("researcher", Mode::Discuss, "r", None)
        .expect("session")
        .id;
    let url = format!("http://127.0.0.1:{}/page", s.port);
    let r = runs_at_once(&f, &sid, "web_fetch", json!({ "url": url })).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    // A host not listed still asks; without an author (headless) nothing is sent.
    let other = format!("http://localhost:{}/page", s.port);
    let r = f
        .engine
        .call(
            &sid,
            tool_call("web_fetch", json!({ "url": other })),
            Approval::Fail,
        )
        .await;
    assert_eq!(r.status, CallStatus::NeedsApproval, "{}", r.content);
    assert!(matches!(
        r.preview.map(|p| p.body),
        Some(PreviewBody::Egress { .. })
    ));
    assert_eq!(s.seen.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locked_refuses_egress_and_neurobook_does_not_ask() {
    let s = serve();
    let url = format!("http://127.0.0.1:{}/page", s.port);
    let f = fixture(Preset::Locked, local(&[]));
    let sid = f
        .engine
        .create_session("researcher", Mode::Normal, "r", None)
        .expect("session")
        .id;
    let r = runs_at_once(&f, &sid, "web_fetch", json!({ "url": url })).await;
    assert_eq!(r.status, CallStatus::Refused, "{}", r.content);
    assert!(r.content.contains("allow_egress"), "{}", r.content);
    assert!(s.seen.lock().unwrap().is_empty());

    let f = fixture(Preset::Neurobook, local(&[]));
    let sid = f
        .engine
        .create_session("researcher", Mode::Plan, "r", None)
        .expect("session")
        .id;
    let r = runs_at_once(&f, &sid, "web_fetch", json!({ "url": url })).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(s.seen.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_search_asks_for_the_providers_host_and_shows_the_query() {
    let s = serve();
    std::env::set_var("NBOOK_TEST_EGRESS_TAVILY_KEY", "k");
    let web = WebConfig {
        search_order: vec!["tavily".into()],
        tavily_api_key_env: Some("NBOOK_TEST_EGRESS_TAVILY_KEY".into()),
        tavily_base_url: Some(format!("http://localhost:{}", s.port)),
        ..local(&[])
    };
    let f = fixture(Preset::Supervised, web);
    let sid = f
        .engine
        .create_session("researcher", Mode::Normal, "r", None)
        .expect("session")
        .id;
    let (p, handle) = pending_call(&f, &sid, "web_search", json!({"query": "salt tax 1820"})).await;
    let (requests, _, _) = egress_body(&p);
    assert_eq!(requests[0].host, "localhost");
    assert_eq!(requests[0].method, "POST");
    assert_eq!(
        requests[0].url,
        format!("http://localhost:{}/search", s.port)
    );
    assert_eq!(requests[0].body, vec!["query=salt tax 1820".to_string()]);
    assert!(s.seen.lock().unwrap().is_empty());
    f.engine
        .decide(&p.approval_id, Decision::ApproveForSession)
        .expect("decide");
    assert_eq!(handle.await.expect("join").status, CallStatus::Ok);
    // The host grant also covers web_fetch to that host: grants are keyed by host.
    let url = format!("http://localhost:{}/page", s.port);
    let r = runs_at_once(&f, &sid, "web_fetch", json!({ "url": url })).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_announces_the_domains_its_tool_declares() {
    let f = fixture(Preset::Neurobook, WebConfig::default());
    let sid = f
        .engine
        .create_session("leader.default", Mode::Normal, "lead", None)
        .expect("session")
        .id;
    let mut events = f.engine.subscribe();
    let r = runs_at_once(&f, &sid, "read", json!({"path": "secret.md"})).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let r = runs_at_once(
        &f,
        &sid,
        "write",
        json!({"path": "notes.md", "content": "new\n"}),
    )
    .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let mut changed = Vec::new();
    while let Ok(ev) = events.try_recv() {
        if let EngineEvent::DomainsChanged { tool, domains, .. } = ev {
            changed.push((tool, domains));
        }
    }
    // The read changed nothing, so only the write is announced.
    assert_eq!(changed, vec![("write".to_string(), vec![Domain::Files])]);
}

#[test]
fn tools_json_lists_every_tools_effects() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_nbook"))
        .args(["tools", "--json"])
        .env("NBOOK_HOME", home.path())
        .output()
        .expect("run nbook tools");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json");
    let by = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed"))["effects"]
            .clone()
    };
    assert!(rows.iter().all(|r| r["effects"]["domains"].is_array()));
    assert_eq!(by("web_fetch")["egress"], json!(true));
    assert_eq!(by("web_fetch")["domains"], json!(["network"]));
    assert_eq!(by("novel_rankings")["egress"], json!(false));
    assert_eq!(by("switch_mode")["always_asks"], json!(true));
    assert_eq!(by("request_user_input")["pauses"], json!(true));
    assert_eq!(by("bash")["prompt_gated_in_neurobook"], json!(true));
    assert_eq!(by("report_result")["ends_run"], json!(true));
    assert_eq!(
        by("execute_sql")["domains"],
        json!(["sql", "plot", "world"])
    );
}
