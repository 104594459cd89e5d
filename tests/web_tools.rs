//! web_fetch and web_search through the engine, against local servers on 127.0.0.1 (the only
//! addresses these tests use): fetching, redirects, caps, address refusals, provider mapping
//! and the no-provider error.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use nbook::config::{Config, Dirs, WebConfig};
use nbook::engine::{Approval, CallResult, CallStatus, Engine, Mode, ToolCall};
use serde_json::{json, Value};

/// One recorded request: method, path with query, headers (lowercased names), body.
#[derive(Clone, Debug)]
struct Req {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Req {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

type Handler = dyn Fn(&Req, u16) -> (u16, Vec<(String, String)>, Vec<u8>) + Send + Sync;

/// A tiny HTTP/1.1 server on 127.0.0.1 (one request per connection).
struct Server {
    port: u16,
    log: Arc<Mutex<Vec<Req>>>,
}

fn serve(
    handler: impl Fn(&Req, u16) -> (u16, Vec<(String, String)>, Vec<u8>) + Send + Sync + 'static,
) -> Server {
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
                let headers: Vec<(String, String)> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                    .collect();
                let len: usize = headers
                    .iter()
                    .find(|(k, _)| k == "content-length")
                    .and_then(|(_, v)| v.parse().ok())
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
                    headers,
                    body: String::from_utf8_lossy(&buf[head_end..]).to_string(),
                };
                log.lock().unwrap().push(req.clone());
                let (status, hdrs, body) = handler(&req, port);
                let mut out = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                    body.len()
                );
                for (k, v) in hdrs {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str("\r\n");
                let _ = s.write_all(out.as_bytes());
                let _ = s.write_all(&body);
            });
        }
    });
    Server { port, log }
}

fn h(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

struct Fixture {
    _tmp: tempfile::TempDir,
    engine: Arc<Engine>,
    sid: String,
}

fn fixture(web: WebConfig) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    // These tests exercise fetching and searching, not the egress gate (tests/egress_gate.rs):
    // the local test servers are pre-allowed as egress hosts.
    let mut web = web;
    web.allow_egress.push("127.0.0.1".into());
    let config = Config {
        web,
        ..Config::default()
    };
    let engine =
        Arc::new(Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).unwrap());
    let sid = engine
        .create_session("researcher", Mode::Normal, "t", None)
        .unwrap()
        .id;
    Fixture {
        _tmp: tmp,
        engine,
        sid,
    }
}

fn allow_local() -> WebConfig {
    WebConfig {
        allow_hosts: vec!["127.0.0.1".into()],
        ..WebConfig::default()
    }
}

async fn call(f: &Fixture, name: &str, args: Value) -> CallResult {
    let c = ToolCall {
        id: String::new(),
        name: name.into(),
        arguments: args,
    };
    f.engine.call(&f.sid, c, Approval::Queue).await
}

fn ok(r: &CallResult) -> &Value {
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    r.details.as_ref().expect("details")
}

fn failed(r: &CallResult, needle: &str) {
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(
        r.content.contains(needle),
        "expected {needle:?} in: {}",
        r.content
    );
}

fn pages() -> Server {
    serve(|req, port| {
        let path = req.target.as_str();
        match path {
            "/page" => (
                200,
                vec![h("content-type", "text/html; charset=utf-8")],
                b"<!doctype html><html><head><title>Salt &amp; Trade</title><script>var x=1;</script></head>\
                  <body><nav><a href='/'>Home</a> | <a href='/b'>Menu</a></nav><h1>The Salt Roads</h1>\
                  <p>Salt was taxed&nbsp;heavily &mdash; see &lt;notes&gt;.</p><p>Second paragraph.</p>\
                  <style>p{color:red}</style><ul><li>Caravans</li><li>Ships</li></ul></body></html>"
                    .to_vec(),
            ),
            "/text" => (200, vec![h("content-type", "text/plain")], "x".repeat(30_000).into_bytes()),
            "/huge" => (200, vec![h("content-type", "text/plain")], vec![b'y'; 3 * 1024 * 1024]),
            "/png" => (200, vec![h("content-type", "image/png")], vec![0x89, b'P', b'N', b'G']),
            "/missing" => (404, vec![], b"nope".to_vec()),
            "/to-localhost" => (
                302,
                vec![h("location", &format!("http://localhost:{port}/page"))],
                vec![],
            ),
            "/loop" => (302, vec![h("location", "/loop")], vec![]),
            p if p.starts_with("/r/") => {
                let n: usize = p[3..].parse().unwrap_or(0);
                let next = if n <= 1 { "/page".to_string() } else { format!("/r/{}", n - 1) };
                (301, vec![h("location", &next)], vec![])
            }
            _ => (404, vec![], vec![]),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// web_fetch

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_turns_html_into_readable_text() {
    let s = pages();
    let f = fixture(allow_local());
    let url = format!("http://127.0.0.1:{}/page", s.port);
    let r = call(&f, "web_fetch", json!({"url": url})).await;
    let d = ok(&r);
    assert_eq!(d["url"], json!(url));
    assert_eq!(d["finalUrl"], json!(url));
    assert_eq!(d["title"], json!("Salt & Trade"));
    assert_eq!(d["contentFormat"], json!("markdown"));
    assert_eq!(d["provider"], json!("local"));
    assert_eq!(d["truncated"], json!(false));
    assert!(d["contentType"].as_str().unwrap().starts_with("text/html"));
    assert!(d["fetchedAt"].as_str().unwrap().ends_with('Z'));
    let c = d["content"].as_str().unwrap();
    assert!(c.contains("# The Salt Roads"), "{c}");
    assert!(c.contains("Salt was taxed heavily — see <notes>."), "{c}");
    assert!(c.contains("\n\nSecond paragraph."), "{c}");
    assert!(c.contains("- Caravans\n- Ships"), "{c}");
    for gone in ["var x", "Menu", "color:red"] {
        assert!(!c.contains(gone), "{gone} leaked into {c}");
    }
    assert_eq!(s.log.lock().unwrap()[0].method, "GET");
}

/// Chinese and Japanese pages in their own charsets, declared in the header, in a `<meta>`,
/// or not at all, come out as the text they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_decodes_gbk_shift_jis_and_utf8_pages() {
    const ZH: &str = "盐铁之利，古今所重。汉武帝时，桑弘羊主持盐铁官营，天下之盐皆归于官。";
    const JA: &str = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。";
    let page = |title: &str, meta: &str, body: &str| {
        format!("<html><head>{meta}<title>{title}</title></head><body><p>{body}</p></body></html>")
    };
    let s = serve(move |req, _| {
        let html = |ct: &str, bytes: Vec<u8>| (200, vec![h("content-type", ct)], bytes);
        match req.target.as_str() {
            "/gbk" => html(
                "text/html; charset=GBK",
                encoding_rs::GBK
                    .encode(&page("盐铁论", "", ZH))
                    .0
                    .into_owned(),
            ),
            "/sjis-meta" => html(
                "text/html",
                encoding_rs::SHIFT_JIS
                    .encode(&page("吾輩は猫である", "<meta charset=\"Shift_JIS\">", JA))
                    .0
                    .into_owned(),
            ),
            "/sjis-bare" => html(
                "text/html",
                encoding_rs::SHIFT_JIS
                    .encode(&page("吾輩は猫である", "", JA))
                    .0
                    .into_owned(),
            ),
            "/utf8" => html(
                "text/html; charset=utf-8",
                page("盐铁论", "", ZH).into_bytes(),
            ),
            _ => (404, vec![], vec![]),
        }
    });
    let f = fixture(allow_local());
    for (path, title, text, charset) in [
        ("/gbk", "盐铁论", ZH, "GBK"),
        ("/sjis-meta", "吾輩は猫である", JA, "Shift_JIS"),
        ("/sjis-bare", "吾輩は猫である", JA, "Shift_JIS"),
        ("/utf8", "盐铁论", ZH, "UTF-8"),
    ] {
        let url = format!("http://127.0.0.1:{}{path}", s.port);
        let r = call(&f, "web_fetch", json!({"url": url})).await;
        let d = ok(&r);
        assert_eq!(d["title"], json!(title), "{path}");
        assert_eq!(d["content"], json!(text), "{path}");
        assert_eq!(d["charset"], json!(charset), "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_follows_up_to_five_redirects() {
    let s = pages();
    let f = fixture(allow_local());
    let r = call(
        &f,
        "web_fetch",
        json!({"url": format!("http://127.0.0.1:{}/r/5", s.port)}),
    )
    .await;
    let d = ok(&r);
    assert_eq!(
        d["finalUrl"],
        json!(format!("http://127.0.0.1:{}/page", s.port))
    );
    let r = call(
        &f,
        "web_fetch",
        json!({"url": format!("http://127.0.0.1:{}/r/6", s.port)}),
    )
    .await;
    failed(&r, "too many redirects");
    let r = call(
        &f,
        "web_fetch",
        json!({"url": format!("http://127.0.0.1:{}/loop", s.port)}),
    )
    .await;
    failed(&r, "too many redirects");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_redirect_hop_is_rechecked() {
    let s = pages();
    let f = fixture(allow_local());
    let r = call(
        &f,
        "web_fetch",
        json!({"url": format!("http://127.0.0.1:{}/to-localhost", s.port)}),
    )
    .await;
    failed(&r, "refused: localhost resolves to");
    // Only the first hop reached the server.
    assert_eq!(s.log.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_addresses_are_refused_without_an_allowance() {
    let s = pages();
    let f = fixture(WebConfig::default());
    for host in [
        "127.0.0.1",
        "localhost",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "0.0.0.0",
    ] {
        let r = call(
            &f,
            "web_fetch",
            json!({"url": format!("http://{host}:{}/page", s.port)}),
        )
        .await;
        failed(&r, "refused");
        assert!(r.content.contains("allow_hosts"), "{}", r.content);
    }
    assert!(
        s.log.lock().unwrap().is_empty(),
        "nothing reached the server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_http_and_https() {
    let f = fixture(allow_local());
    for url in [
        "ftp://127.0.0.1/x",
        "file:///etc/passwd",
        "javascript:alert(1)",
    ] {
        let r = call(&f, "web_fetch", json!({"url": url})).await;
        failed(&r, "only fetches http and https");
    }
    let r = call(&f, "web_fetch", json!({"url": "not a url"})).await;
    failed(&r, "not a valid URL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_and_body_caps() {
    let s = pages();
    let f = fixture(allow_local());
    let r = call(
        &f,
        "web_fetch",
        json!({"url": format!("http://127.0.0.1:{}/text", s.port)}),
    )
    .await;
    let d = ok(&r);
    assert_eq!(d["contentFormat"], json!("text"));
    assert_eq!(d["truncated"], json!(true));
    assert_eq!(d["content"].as_str().unwrap().chars().count(), 20_000);
    assert!(d.get("title").is_none());
    let r = call(
        &f,
        "web_fetch",
        json!({"url": format!("http://127.0.0.1:{}/huge", s.port)}),
    )
    .await;
    let d = ok(&r);
    assert_eq!(d["truncated"], json!(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_errors_for_binary_and_http_failures() {
    let s = pages();
    let f = fixture(allow_local());
    let r = call(
        &f,
        "web_fetch",
        json!({"url": format!("http://127.0.0.1:{}/png", s.port)}),
    )
    .await;
    failed(&r, "not text");
    let r = call(
        &f,
        "web_fetch",
        json!({"url": format!("http://127.0.0.1:{}/missing", s.port)}),
    )
    .await;
    failed(&r, "404");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_arguments_are_validated() {
    let f = fixture(allow_local());
    let r = call(&f, "web_fetch", json!({})).await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
    let r = call(&f, "web_fetch", json!({"url": "http://x", "extra": 1})).await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
    let r = call(&f, "web_fetch", json!({"url": 5})).await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
    assert!(r.content.contains("/url"), "{}", r.content);
}

// ---------------------------------------------------------------------------------------------
// web_search

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_without_a_provider_says_how_to_configure_one() {
    let f = fixture(WebConfig {
        tavily_api_key_env: Some("NBOOK_TEST_WEB_NO_TAVILY_KEY".into()),
        brave_api_key_env: Some("NBOOK_TEST_WEB_NO_BRAVE_KEY".into()),
        ..WebConfig::default()
    });
    let r = call(&f, "web_search", json!({"query": "salt tax"})).await;
    failed(&r, "no web search provider is configured");
    assert!(
        r.content.contains("NBOOK_TEST_WEB_NO_TAVILY_KEY"),
        "{}",
        r.content
    );
    assert!(
        r.content.contains("NBOOK_TEST_WEB_NO_BRAVE_KEY"),
        "{}",
        r.content
    );
    assert!(r.content.contains("[web]"), "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_provider_in_search_order_is_an_error() {
    let f = fixture(WebConfig {
        search_order: vec!["bing".into()],
        ..WebConfig::default()
    });
    let r = call(&f, "web_search", json!({"query": "salt tax"})).await;
    failed(&r, "unknown web search provider \"bing\"");
}

fn tavily_server() -> Server {
    serve(|req, _| {
        if req.method != "POST" || req.target != "/search" {
            return (404, vec![], vec![]);
        }
        let body = json!({
            "query": "x",
            "results": [
                {"title": "Salt in Venice", "url": "https://history.example.org/salt", "content": "Venice taxed salt.", "score": 0.91, "published_date": "2025-01-02"},
                {"title": "Spam", "url": "https://spam.example.com/x", "content": "buy", "score": 0.5},
                {"title": "Off-list", "url": "https://other.net/y", "content": "other", "score": 0.4},
                {"title": "Sub", "url": "https://www.example.org/z", "content": "sub", "score": 0.3}
            ]
        });
        (
            200,
            vec![h("content-type", "application/json")],
            body.to_string().into_bytes(),
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tavily_request_and_response_mapping() {
    let s = tavily_server();
    std::env::set_var("NBOOK_TEST_WEB_TAVILY_KEY_1", "tv-secret");
    let f = fixture(WebConfig {
        tavily_api_key_env: Some("NBOOK_TEST_WEB_TAVILY_KEY_1".into()),
        brave_api_key_env: Some("NBOOK_TEST_WEB_NO_BRAVE_KEY".into()),
        tavily_base_url: Some(format!("http://127.0.0.1:{}", s.port)),
        ..WebConfig::default()
    });
    let r = call(
        &f,
        "web_search",
        json!({"query": "salt tax venice", "allowed_domains": ["example.org", "https://spam.example.com/"],
               "blocked_domains": ["spam.example.com"], "recency_days": 30, "max_results": 3}),
    )
    .await;
    // allowed ∩ blocked overlap is refused before any request.
    failed(&r, "both allowed and blocked");
    assert!(s.log.lock().unwrap().is_empty());

    let r = call(
        &f,
        "web_search",
        json!({"query": "salt tax venice", "allowed_domains": ["example.org", "example.com"],
               "blocked_domains": ["spam.example.com"], "recency_days": 30, "max_results": 3}),
    )
    .await;
    let d = ok(&r);
    assert_eq!(d["provider"], json!("tavily"));
    assert_eq!(d["query"], json!("salt tax venice"));
    let results = d["results"].as_array().unwrap();
    let urls: Vec<&str> = results.iter().map(|r| r["url"].as_str().unwrap()).collect();
    assert_eq!(
        urls,
        vec![
            "https://history.example.org/salt",
            "https://www.example.org/z"
        ]
    );
    assert_eq!(results[0]["title"], json!("Salt in Venice"));
    assert_eq!(results[0]["snippet"], json!("Venice taxed salt."));
    assert_eq!(results[0]["publishedAt"], json!("2025-01-02"));
    assert_eq!(results[0]["score"], json!(0.91));

    let req = s.log.lock().unwrap()[0].clone();
    assert_eq!(req.header("authorization"), Some("Bearer tv-secret"));
    let body: Value = serde_json::from_str(&req.body).unwrap();
    assert_eq!(body["query"], json!("salt tax venice"));
    assert_eq!(body["max_results"], json!(3));
    assert_eq!(
        body["include_domains"],
        json!(["example.org", "example.com"])
    );
    assert_eq!(body["exclude_domains"], json!(["spam.example.com"]));
    assert_eq!(body["time_range"], json!("month"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brave_request_and_response_mapping_and_fallback() {
    // Tavily answers 500, so the search falls through to Brave.
    let tv = serve(|_, _| {
        (
            500,
            vec![h("content-type", "application/json")],
            br#"{"detail":{"error":"boom"}}"#.to_vec(),
        )
    });
    let br = serve(|req, _| {
        if !req.target.starts_with("/res/v1/web/search?") {
            return (404, vec![], vec![]);
        }
        let body = json!({"web": {"results": [
            {"title": "Guild rules", "url": "https://guilds.example.net/a", "description": "Rules of the guild.",
             "page_age": "2024-05-01T00:00:00", "meta_url": {"hostname": "guilds.example.net"}},
            {"title": "Blocked", "url": "https://bad.example.net/b", "description": "no"}
        ]}});
        (
            200,
            vec![h("content-type", "application/json")],
            body.to_string().into_bytes(),
        )
    });
    std::env::set_var("NBOOK_TEST_WEB_TAVILY_KEY_2", "tv");
    std::env::set_var("NBOOK_TEST_WEB_BRAVE_KEY_2", "br-secret");
    let f = fixture(WebConfig {
        tavily_api_key_env: Some("NBOOK_TEST_WEB_TAVILY_KEY_2".into()),
        brave_api_key_env: Some("NBOOK_TEST_WEB_BRAVE_KEY_2".into()),
        tavily_base_url: Some(format!("http://127.0.0.1:{}", tv.port)),
        brave_base_url: Some(format!("http://127.0.0.1:{}/", br.port)),
        ..WebConfig::default()
    });
    let r = call(
        &f,
        "web_search",
        json!({"query": "medieval guilds", "blocked_domains": ["bad.example.net"], "recency_days": 5}),
    )
    .await;
    let d = ok(&r);
    assert_eq!(d["provider"], json!("brave"));
    let results = d["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["url"], json!("https://guilds.example.net/a"));
    assert_eq!(results[0]["snippet"], json!("Rules of the guild."));
    assert_eq!(results[0]["source"], json!("guilds.example.net"));
    assert_eq!(results[0]["publishedAt"], json!("2024-05-01T00:00:00"));
    assert_eq!(tv.log.lock().unwrap().len(), 1);
    let req = br.log.lock().unwrap()[0].clone();
    assert_eq!(req.header("x-subscription-token"), Some("br-secret"));
    let url = reqwest::Url::parse(&format!("http://x{}", req.target)).unwrap();
    let q: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
    assert_eq!(q["q"], "medieval guilds -site:bad.example.net");
    assert_eq!(q["count"], "5");
    assert_eq!(q["freshness"], "pw");

    // Search order is configurable: brave first means tavily is not asked.
    let f2 = fixture(WebConfig {
        search_order: vec!["brave".into(), "tavily".into()],
        tavily_api_key_env: Some("NBOOK_TEST_WEB_TAVILY_KEY_2".into()),
        brave_api_key_env: Some("NBOOK_TEST_WEB_BRAVE_KEY_2".into()),
        tavily_base_url: Some(format!("http://127.0.0.1:{}", tv.port)),
        brave_base_url: Some(format!("http://127.0.0.1:{}", br.port)),
        ..WebConfig::default()
    });
    let r = call(&f2, "web_search", json!({"query": "guilds"})).await;
    assert_eq!(ok(&r)["provider"], json!("brave"));
    assert_eq!(tv.log.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_providers_failing_reports_each() {
    let tv = serve(|_, _| {
        (
            401,
            vec![h("content-type", "application/json")],
            br#"{"detail":{"error":"bad key"}}"#.to_vec(),
        )
    });
    std::env::set_var("NBOOK_TEST_WEB_TAVILY_KEY_3", "tv");
    let f = fixture(WebConfig {
        tavily_api_key_env: Some("NBOOK_TEST_WEB_TAVILY_KEY_3".into()),
        brave_api_key_env: Some("NBOOK_TEST_WEB_NO_BRAVE_KEY".into()),
        tavily_base_url: Some(format!("http://127.0.0.1:{}", tv.port)),
        ..WebConfig::default()
    });
    let r = call(&f, "web_search", json!({"query": "anything"})).await;
    failed(&r, "tavily answered 401");
    assert!(r.content.contains("bad key"), "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_arguments_are_validated_with_pointers() {
    let f = fixture(WebConfig::default());
    let many: Vec<String> = (0..21).map(|i| format!("d{i}.com")).collect();
    let cases = [
        (json!({}), ""),
        (json!({"query": "x"}), "/query"),
        (json!({"query": "x".repeat(501)}), "/query"),
        (json!({"query": "ok", "max_results": 11}), "/max_results"),
        (json!({"query": "ok", "max_results": 0}), "/max_results"),
        (json!({"query": "ok", "recency_days": 0}), "/recency_days"),
        (
            json!({"query": "ok", "recency_days": 3651}),
            "/recency_days",
        ),
        (
            json!({"query": "ok", "allowed_domains": many}),
            "/allowed_domains",
        ),
        (
            json!({"query": "ok", "blocked_domains": [""]}),
            "/blocked_domains/0",
        ),
        (json!({"query": "ok", "extra": true}), ""),
    ];
    for (args, pointer) in cases {
        let r = call(&f, "web_search", args.clone()).await;
        assert_eq!(r.status, CallStatus::InvalidArgs, "{args}: {}", r.content);
        assert!(r.content.contains(pointer), "{args}: {}", r.content);
    }
    let r = call(&f, "web_search", json!({"query": "  "})).await;
    failed(&r, "at least 2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_tools_are_read_only_and_parallel_safe() {
    let f = fixture(WebConfig::default());
    for name in ["web_fetch", "web_search"] {
        let t = &f.engine.registry().get(name).expect(name).tool;
        assert_eq!(t.mutates().label(), "no");
        assert!(t.parallel_safe());
        assert_eq!(t.group(), "web");
    }
}
