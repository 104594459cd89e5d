//! A scripted model server for the provider tests: a tokio `TcpListener` on 127.0.0.1:0 that
//! speaks real HTTP/1.1 — one scripted reply per request, in order; `text/event-stream` bodies
//! go out with chunked transfer encoding, one write per step — and records each request.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use nbook::agent::{ModelEvent, Provider, ProviderError};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub enum Step {
    /// Bytes written as one chunk.
    Chunk(String),
    Sleep(Duration),
    /// Hold the connection open and send nothing more.
    Stall,
}

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// For 200: the event-stream steps. For errors: `body` is sent whole.
    pub steps: Vec<Step>,
    /// Sent whole as `application/json` instead of an event stream.
    pub body: Option<String>,
}

impl Reply {
    pub fn sse(steps: Vec<Step>) -> Reply {
        Reply {
            status: 200,
            headers: vec![],
            steps,
            body: None,
        }
    }
    /// One chunk per SSE data line.
    pub fn data(lines: &[String]) -> Reply {
        Reply::sse(
            lines
                .iter()
                .map(|l| Step::Chunk(format!("data: {l}\n\n")))
                .collect(),
        )
    }
    pub fn error(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![],
            steps: vec![],
            body: Some(body.to_string()),
        }
    }
    /// A 200 with a plain JSON body (a server that ignored `stream: true`).
    pub fn json(body: &str) -> Reply {
        Reply::error(200, body)
    }
    pub fn header(mut self, k: &str, v: &str) -> Reply {
        self.headers.push((k.into(), v.into()));
        self
    }
}

#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub at: Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Shared {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
    /// Replies whose client went away before the reply was fully written.
    disconnects: usize,
}

pub struct Server {
    pub addr: std::net::SocketAddr,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    pub async fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Mutex::new(Shared {
            replies: replies.into(),
            ..Default::default()
        }));
        let s = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                tokio::spawn(serve(sock, s.clone()));
            }
        });
        Server { addr, shared, task }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().unwrap().requests.clone()
    }

    pub fn disconnects(&self) -> usize {
        self.shared.lock().unwrap().disconnects
    }
}

async fn serve(mut sock: TcpStream, shared: Arc<Mutex<Shared>>) {
    let Some(req) = read_request(&mut sock).await else {
        return;
    };
    let reply = {
        let mut s = shared.lock().unwrap();
        s.requests.push(req);
        s.replies.pop_front()
    };
    let reply = reply.unwrap_or_else(|| {
        Reply::error(500, r#"{"error":{"message":"no more scripted replies"}}"#)
    });
    if write_reply(&mut sock, reply).await.is_err() {
        shared.lock().unwrap().disconnects += 1;
    }
}

async fn read_request(sock: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_string();
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
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null);
    Some(Recorded {
        path,
        headers,
        body,
        at: Instant::now(),
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

async fn write_reply(sock: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nConnection: close\r\n",
        reply.status,
        reason(reply.status)
    );
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(body) = &reply.body {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        ));
        head.push_str(body);
        sock.write_all(head.as_bytes()).await?;
        return sock.flush().await;
    }
    head.push_str("Content-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n");
    sock.write_all(head.as_bytes()).await?;
    sock.flush().await?;
    for step in reply.steps {
        match step {
            Step::Chunk(data) => {
                sock.write_all(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes())
                    .await?;
                sock.flush().await?;
            }
            Step::Sleep(d) => tokio::time::sleep(d).await,
            Step::Stall => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
        }
    }
    sock.write_all(b"0\r\n\r\n").await?;
    sock.flush().await
}

/// Everything a stream produced, stopping at the first error.
pub async fn collect(
    p: &dyn Provider,
    req: nbook::agent::ModelRequest,
) -> (Vec<ModelEvent>, Option<ProviderError>) {
    let mut s = p.stream(req);
    let mut events = Vec::new();
    while let Some(item) = s.next().await {
        match item {
            Ok(e) => events.push(e),
            Err(e) => return (events, Some(e)),
        }
    }
    (events, None)
}

pub fn text_of(events: &[ModelEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

pub fn calls_of(events: &[ModelEvent]) -> Vec<nbook::engine::ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolCall(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

/// Fast retries and a short idle timeout for tests.
pub fn fast_settings() -> nbook::agent::HttpSettings {
    nbook::agent::HttpSettings {
        max_attempts: 4,
        base_delay: Duration::from_millis(20),
        max_delay: Duration::from_millis(100),
        max_retry_after: Duration::from_secs(5),
        idle_timeout: Duration::from_millis(400),
        connect_timeout: Duration::from_secs(2),
    }
}

/// A config with one provider of `kind` at `base_url` and one model `m`.
pub fn config(kind: &str, base_url: &str, extra_provider_lines: &str) -> nbook::config::Config {
    let text = format!(
        "[providers.p]\nkind = \"{kind}\"\nbase_url = \"{base_url}\"\n{extra_provider_lines}\n\
         [models.m]\nprovider = \"p\"\nname = \"test-model\"\ninput_price = 2.0\noutput_price = 8.0\n"
    );
    nbook::config::Config::parse(&text, "test").unwrap()
}
