//! Web and embedding calls share one network runtime and client: many sequential calls start
//! no thread at all once warm. A sampler watches `/proc/self/task` while the calls run, so a
//! thread started and joined within one call is seen too. Local server on 127.0.0.1 only.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nbook::config::{Config, Dirs, WebConfig};
use nbook::engine::{Approval, CallStatus, Engine, Mode, ToolCall};
use nbook::net::embed::EmbedConfig;
use serde_json::json;

/// A one-thread HTTP server: connections are answered in turn on the accepting thread, so
/// it adds no threads while the calls run.
fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut buf = Vec::new();
            let mut tmp = [0u8; 4096];
            let head_end = loop {
                match s.read(&mut tmp) {
                    Ok(0) | Err(_) => break None,
                    Ok(n) => buf.extend_from_slice(&tmp[..n]),
                }
                if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                    break Some(p + 4);
                }
            };
            let Some(head_end) = head_end else { continue };
            let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            while buf.len() < head_end + len {
                match s.read(&mut tmp) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&tmp[..n]),
                }
            }
            let (ct, body) = if head.starts_with("post /v1/embeddings") {
                let req: serde_json::Value =
                    serde_json::from_slice(&buf[head_end..]).unwrap_or_default();
                let n = req["input"].as_array().map_or(0, Vec::len);
                let data: Vec<_> = (0..n)
                    .map(|i| json!({"index": i, "embedding": [1.0, i as f64]}))
                    .collect();
                ("application/json", json!({ "data": data }).to_string())
            } else {
                ("text/html", "<title>T</title><p>Hello</p>".to_string())
            };
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\ncontent-type: {ct}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

fn tids() -> HashSet<u64> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

fn thread_count() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_web_and_embedding_calls_start_no_threads() {
    let port = serve();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let web = WebConfig {
        allow_hosts: vec!["127.0.0.1".into()],
        allow_egress: vec!["127.0.0.1".into()],
        ..WebConfig::default()
    };
    let config = Config {
        web,
        ..Config::default()
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine =
        Arc::new(Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).unwrap());
    let sid = engine
        .create_session("researcher", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let embed = EmbedConfig {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        model: "m".into(),
        api_key: None,
    };
    let round = |n: usize| {
        let (engine, sid, embed) = (engine.clone(), sid.clone(), embed.clone());
        async move {
            for i in 0..n {
                let call = ToolCall {
                    id: String::new(),
                    name: "web_fetch".into(),
                    arguments: json!({"url": format!("http://127.0.0.1:{port}/p{i}")}),
                };
                let r = engine.call(&sid, call, Approval::Queue).await;
                assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
                let texts = vec![format!("text {i}"), "other".to_string()];
                let e = embed.clone();
                let v =
                    tokio::task::spawn_blocking(move || e.embed(&texts, Duration::from_secs(10)))
                        .await
                        .unwrap()
                        .unwrap();
                assert_eq!(v.len(), 2);
            }
        }
    };
    // Warm up: the shared runtime, the client and the test runtime's blocking thread.
    round(5).await;
    let before = tids();
    let count_before = thread_count();
    let new: Arc<Mutex<HashSet<u64>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (new, stop, before) = (new.clone(), stop.clone(), before.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let now = tids();
                new.lock().unwrap().extend(now.difference(&before));
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };
    round(40).await;
    stop.store(true, Ordering::Relaxed);
    let sampler_tid_free = sampler.join().is_ok();
    assert!(sampler_tid_free);
    // The sampler itself is one thread that appears; tokio's blocking pools may add a worker
    // when two blocking tasks overlap on a loaded machine. A thread per call (what this test
    // guards against) shows as 80 or more new threads for these 80 calls.
    let new = new.lock().unwrap().clone();
    assert!(new.len() <= 3, "threads started during the calls: {new:?}");
    assert!(
        thread_count() <= count_before + 2,
        "{} threads after the calls, {count_before} before",
        thread_count()
    );
}
