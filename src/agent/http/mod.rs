//! HTTP plumbing shared by the real providers (`openai`, `anthropic`): one POST whose reply is a
//! `text/event-stream`, with
//! - retries before the first byte: 429, 5xx and connection failures, `attempts` in all, waiting
//!   `Retry-After` (or `retry-after-ms`) when the server sends one, else exponential backoff with
//!   jitter; any other 4xx fails at once with the server's own message;
//! - an idle timeout: no bytes (response headers included) for `idle_timeout` fails the request;
//! - server-sent-event parsing (`SseParser`), handed event by event to a wire `Decoder`;
//! - cancellation: the returned stream owns the connection, so dropping it stops the request.
//!
//! Streams are never retried once the body has started: a reply cut off mid-way is an error.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{self, BoxStream, StreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::provider::{ModelEvent, ProviderError};

mod retry;
mod sse;

pub use retry::retry_after;
pub use sse::{SseEvent, SseParser};

/// Retry and timeout knobs. `from_env` reads `NBOOK_STREAM_IDLE_TIMEOUT_SECS` and
/// `NBOOK_REQUEST_MAX_ATTEMPTS` over the defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpSettings {
    /// Attempts in all (1 = no retry).
    pub max_attempts: u32,
    /// First backoff wait; it doubles each attempt, up to `max_delay`.
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// A `Retry-After` longer than this fails at once instead of waiting.
    pub max_retry_after: Duration,
    /// No bytes for this long (while waiting for the response or within the stream) fails it.
    pub idle_timeout: Duration,
    pub connect_timeout: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(300),
            connect_timeout: Duration::from_secs(20),
        }
    }
}

impl HttpSettings {
    pub fn from_env() -> Self {
        let mut s = HttpSettings::default();
        let num = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<f64>().ok())
        };
        if let Some(secs) =
            num("NBOOK_STREAM_IDLE_TIMEOUT_SECS").filter(|v| *v > 0.0 && v.is_finite())
        {
            s.idle_timeout = Duration::from_secs_f64(secs);
        }
        if let Some(n) = num("NBOOK_REQUEST_MAX_ATTEMPTS").filter(|v| *v >= 1.0) {
            s.max_attempts = n.min(20.0) as u32;
        }
        s
    }
}

/// Where and how to send one provider's requests.
pub struct Endpoint {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    settings: HttpSettings,
}

impl Endpoint {
    /// `headers` are sent with every request (authentication and the config's `headers`).
    pub fn new(
        url: String,
        headers: &[(String, String)],
        settings: HttpSettings,
    ) -> Result<Endpoint, ProviderError> {
        let parsed = reqwest::Url::parse(&url)
            .map_err(|e| ProviderError::Config(format!("invalid base_url {url}: {e}")))?;
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| ProviderError::Config(format!("invalid header name '{k}'")))?;
            let mut value = HeaderValue::from_str(v)
                .map_err(|_| ProviderError::Config(format!("invalid value for header '{k}'")))?;
            value.set_sensitive(is_secret_header(k));
            map.insert(name, value);
        }
        let mut builder = reqwest::Client::builder().connect_timeout(settings.connect_timeout);
        if is_loopback(&parsed) {
            // A local model server: never route it through a proxy from the environment.
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| {
            ProviderError::Config(format!(
                "cannot set up the HTTP client: {}",
                error_chain(&e)
            ))
        })?;
        Ok(Endpoint {
            client,
            url,
            headers: map,
            settings,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }
}

fn is_secret_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "authorization" || n.contains("key") || n.contains("token")
}

fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `base_url` + `path`, unless the base already ends with it.
pub fn join_url(base: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with(path) {
        base.to_string()
    } else {
        format!("{base}{path}")
    }
}

/// Whether the reply is complete after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Done,
}

/// A wire format: turns server-sent events into model events.
pub trait Decoder: Send + 'static {
    fn on_event(&mut self, ev: SseEvent, out: &mut Vec<ModelEvent>) -> Result<Flow, ProviderError>;
    /// The body ended without `Flow::Done`: finish the reply or explain why it is incomplete.
    fn on_eof(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), ProviderError>;
}

type ByteStream = BoxStream<'static, reqwest::Result<Vec<u8>>>;

enum Phase {
    Start,
    Body(ByteStream),
    Finished,
}

struct Driver<D> {
    endpoint: Arc<Endpoint>,
    body: Vec<u8>,
    decoder: D,
    parser: SseParser,
    /// Set when the server answered with plain JSON instead of an event stream (it ignored
    /// `stream: true`): the whole body becomes one event at the end.
    whole: Option<Vec<u8>>,
    queue: VecDeque<Result<ModelEvent, ProviderError>>,
    phase: Phase,
}

/// POST `body` to the endpoint and stream the decoded reply. Nothing is sent until the stream is
/// first polled; dropping the stream closes the connection.
pub fn drive<D: Decoder>(
    endpoint: Arc<Endpoint>,
    body: Vec<u8>,
    decoder: D,
) -> BoxStream<'static, Result<ModelEvent, ProviderError>> {
    let driver = Driver {
        endpoint,
        body,
        decoder,
        parser: SseParser::default(),
        whole: None,
        queue: VecDeque::new(),
        phase: Phase::Start,
    };
    stream::unfold(driver, |mut d| async move {
        loop {
            if let Some(item) = d.queue.pop_front() {
                return Some((item, d));
            }
            match &mut d.phase {
                Phase::Finished => return None,
                Phase::Start => match retry::send(&d.endpoint, &d.body).await {
                    Ok(resp) => {
                        if is_plain_json(&resp) {
                            d.whole = Some(Vec::new());
                        }
                        d.phase =
                            Phase::Body(resp.bytes_stream().map(|r| r.map(|b| b.to_vec())).boxed())
                    }
                    Err(e) => {
                        d.phase = Phase::Finished;
                        return Some((Err(e), d));
                    }
                },
                Phase::Body(body) => {
                    let idle = d.endpoint.settings.idle_timeout;
                    let next = tokio::time::timeout(idle, body.next()).await;
                    d.step(next);
                }
            }
        }
    })
    .boxed()
}

impl<D: Decoder> Driver<D> {
    fn step(
        &mut self,
        next: Result<Option<reqwest::Result<Vec<u8>>>, tokio::time::error::Elapsed>,
    ) {
        let mut events = Vec::new();
        let eof = match next {
            Err(_) => {
                return self.fail(idle_error(
                    &self.endpoint.settings,
                    "in the middle of the reply",
                ))
            }
            Ok(Some(Err(e))) => {
                return self.fail(ProviderError::Stream(format!(
                    "the connection broke: {}",
                    error_chain(&e)
                )))
            }
            Ok(Some(Ok(bytes))) => {
                match &mut self.whole {
                    Some(buf) => buf.extend_from_slice(&bytes),
                    None => self.parser.push(&bytes, &mut events),
                }
                false
            }
            Ok(None) => {
                match self.whole.take() {
                    Some(buf) => events.push(SseEvent {
                        event: String::new(),
                        data: String::from_utf8_lossy(&buf).into_owned(),
                    }),
                    None => self.parser.finish(&mut events),
                }
                true
            }
        };
        let mut out = Vec::new();
        for ev in events {
            match self.decoder.on_event(ev, &mut out) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Done) => {
                    self.queue.extend(out.drain(..).map(Ok));
                    self.phase = Phase::Finished;
                    return;
                }
                Err(e) => {
                    self.queue.extend(out.drain(..).map(Ok));
                    return self.fail(e);
                }
            }
        }
        if eof {
            let end = self.decoder.on_eof(&mut out);
            self.queue.extend(out.drain(..).map(Ok));
            if let Err(e) = end {
                self.queue.push_back(Err(e));
            }
            self.phase = Phase::Finished;
        } else {
            self.queue.extend(out.drain(..).map(Ok));
        }
    }

    fn fail(&mut self, e: ProviderError) {
        self.queue.push_back(Err(e));
        self.phase = Phase::Finished;
    }
}

fn is_plain_json(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("application/json"))
}

fn idle_error(settings: &HttpSettings, when: &str) -> ProviderError {
    ProviderError::Idle(format!(
        "no data from the model server for {} {when}; the request was abandoned \
         (NBOOK_STREAM_IDLE_TIMEOUT_SECS raises the limit for slow local models)",
        fmt_duration(settings.idle_timeout)
    ))
}

/// The message of an error object in the shapes servers use: `{"error": {"message"}}`,
/// `{"error": "text"}`, `{"message"}` or `{"detail"}`.
pub fn error_message(v: &Value) -> Option<String> {
    let err = v.get("error").filter(|e| !e.is_null()).unwrap_or(v);
    if let Some(s) = err.as_str() {
        return Some(s.to_string());
    }
    let msg = ["message", "detail", "msg"]
        .iter()
        .find_map(|k| err.get(*k).and_then(Value::as_str))?;
    let kind = err
        .get("type")
        .and_then(Value::as_str)
        .filter(|t| *t != "error");
    Some(match kind {
        Some(k) => format!("{msg} ({k})"),
        None => msg.to_string(),
    })
}

pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// An error and its sources, joined: reqwest's own message alone rarely says what went wrong.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(src) = cur {
        let part = src.to_string();
        if !s.contains(&part) {
            s.push_str(": ");
            s.push_str(&part);
        }
        cur = src.source();
    }
    s
}

pub fn fmt_duration(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// A rough token count (four characters a token) for servers that report no usage.
pub fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_in_common_shapes() {
        let v =
            serde_json::json!({"error": {"message": "bad key", "type": "invalid_request_error"}});
        assert_eq!(
            error_message(&v).as_deref(),
            Some("bad key (invalid_request_error)")
        );
        assert_eq!(
            error_message(&serde_json::json!({"error": "boom"})).as_deref(),
            Some("boom")
        );
        assert_eq!(
            error_message(&serde_json::json!({"detail": "nope"})).as_deref(),
            Some("nope")
        );
        assert_eq!(
            join_url("http://h/v1/", "/chat/completions"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            join_url("http://h/v1/messages", "/messages"),
            "http://h/v1/messages"
        );
    }
}
