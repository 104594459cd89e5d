//! Web tools for the researcher profile: `web_fetch` (a local, guarded HTTP GET that turns HTML
//! into readable text) and `web_search` (Tavily or Brave, API keys from env vars named in
//! `[web]` of config.toml).
//!
//! Guard rails of `web_fetch`: http/https only; at most 5 redirects, each hop re-checked; the
//! host is resolved first and every resolved address (v4 and v6, IPv4-mapped v6 included) must
//! be public — private, loopback, link-local, unique-local, CGNAT, broadcast and unspecified
//! addresses are refused unless the host is listed in `web.allow_hosts`. The connection is
//! pinned to the checked addresses so a second DNS answer cannot swap them. Bodies are capped at
//! 2 MB, the whole fetch at 20 s, and the returned content at 20 000 characters.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde_json::{json, Value};

use crate::config::{Config, WebConfig};
use crate::engine::tool::{Mutates, Tool, ToolCtx, ToolError, ToolOutput};

pub const MAX_REDIRECTS: usize = 5;
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
pub const MAX_CONTENT_CHARS: usize = 20_000;
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(20);
pub const SEARCH_TIMEOUT: Duration = Duration::from_secs(20);

/// Run a future on its own thread with a small runtime (tools are synchronous).
fn run_async<T: Send + 'static>(
    fut: impl std::future::Future<Output = Result<T, String>> + Send + 'static,
) -> Result<T, ToolError> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
        rt.block_on(fut)
    })
    .join()
    .map_err(|_| ToolError::failed("the web request crashed"))?
    .map_err(ToolError::Failed)
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Address checks

/// Why an address may not be fetched, or `None` when it is public.
pub fn blocked_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => blocked_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return blocked_v4(v4);
            }
            let seg0 = v6.segments()[0];
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if seg0 & 0xfe00 == 0xfc00 {
                Some("unique-local")
            } else if seg0 & 0xffc0 == 0xfe80 {
                Some("link-local")
            } else if seg0 & 0xffc0 == 0xfec0 {
                Some("site-local")
            } else if v6.is_multicast() {
                Some("multicast")
            } else {
                None
            }
        }
    }
}

fn blocked_v4(v4: Ipv4Addr) -> Option<&'static str> {
    let o = v4.octets();
    if v4.is_loopback() {
        Some("loopback")
    } else if v4.is_unspecified() || o[0] == 0 {
        Some("unspecified")
    } else if v4.is_private() {
        Some("private")
    } else if v4.is_link_local() {
        Some("link-local")
    } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
        Some("shared (CGNAT)")
    } else if v4.is_broadcast() || v4.is_multicast() {
        Some("broadcast/multicast")
    } else {
        None
    }
}

fn host_allowed(web: &WebConfig, host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    web.allow_hosts.iter().any(|h| {
        h.trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .eq_ignore_ascii_case(host)
    })
}

/// Resolve and check one URL's host. Returns the addresses to pin the connection to (empty
/// for allowed hosts and IP literals, which need no pinning).
async fn check_url(web: &WebConfig, url: &reqwest::Url) -> Result<Vec<SocketAddr>, String> {
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(format!(
                "web_fetch only fetches http and https URLs, not {other}:"
            ))
        }
    }
    let host = url
        .host_str()
        .ok_or_else(|| format!("{url} has no host"))?
        .to_string();
    if host_allowed(web, &host) {
        return Ok(Vec::new());
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = if let Ok(ip) = bare.parse::<IpAddr>() {
        vec![SocketAddr::new(ip, port)]
    } else {
        tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .collect()
    };
    if addrs.is_empty() {
        return Err(format!("{host} resolves to no address"));
    }
    for a in &addrs {
        if let Some(why) = blocked_reason(a.ip()) {
            return Err(format!(
                "refused: {host} resolves to {} ({why} address); web_fetch only reaches public hosts. \
                 To allow this host, add it to `allow_hosts` under [web] in config.toml",
                a.ip()
            ));
        }
    }
    if bare.parse::<IpAddr>().is_ok() {
        return Ok(Vec::new());
    }
    Ok(addrs)
}

// ---------------------------------------------------------------------------------------------
// web_fetch

pub struct WebFetch;

struct Fetched {
    final_url: String,
    content_type: String,
    body: Vec<u8>,
    body_truncated: bool,
}

async fn fetch(web: WebConfig, start: reqwest::Url) -> Result<Fetched, String> {
    let deadline = tokio::time::Instant::now() + FETCH_TIMEOUT;
    let work = async move {
        let mut url = start;
        let mut hops = 0usize;
        loop {
            let pinned = check_url(&web, &url).await?;
            let mut builder = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(Duration::from_secs(10))
                .user_agent(concat!("nbook/", env!("CARGO_PKG_VERSION"), " (web_fetch)"));
            if !pinned.is_empty() {
                if let Some(h) = url.host_str() {
                    builder = builder.resolve_to_addrs(h, &pinned);
                }
            }
            let client = builder
                .build()
                .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
            let resp = client
                .get(url.clone())
                .header(
                    "accept",
                    "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
                )
                .send()
                .await
                .map_err(|e| format!("cannot fetch {url}: {e}"))?;
            let status = resp.status();
            if status.is_redirection() {
                let loc = resp
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| format!("{url} answered {status} without a Location"))?;
                let next = url
                    .join(loc)
                    .map_err(|e| format!("{url} redirects to an invalid URL {loc:?}: {e}"))?;
                hops += 1;
                if hops > MAX_REDIRECTS {
                    return Err(format!(
                        "too many redirects (more than {MAX_REDIRECTS}) starting from the requested URL; last hop {url} → {next}"
                    ));
                }
                url = next;
                continue;
            }
            if !status.is_success() {
                return Err(format!("{url} answered {status}"));
            }
            let content_type = resp
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let mut resp = resp;
            let mut body = Vec::new();
            let mut body_truncated = false;
            while let Some(chunk) = resp
                .chunk()
                .await
                .map_err(|e| format!("error reading {url}: {e}"))?
            {
                let room = MAX_BODY_BYTES - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    body_truncated = true;
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            return Ok(Fetched {
                final_url: url.to_string(),
                content_type,
                body,
                body_truncated,
            });
        }
    };
    tokio::time::timeout_at(deadline, work)
        .await
        .map_err(|_| format!("the fetch took longer than {}s", FETCH_TIMEOUT.as_secs()))?
}

impl Tool for WebFetch {
    fn name(&self) -> &'static str {
        "web_fetch"
    }
    fn group(&self) -> &'static str {
        "web"
    }
    fn description(&self) -> &'static str {
        "Fetch one public web page (http/https) and return its readable text (HTML is converted to markdown-ish text, at most 20000 characters). Follows up to 5 redirects; private and local addresses are refused."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "The http or https URL to fetch"}
            },
            "required": ["url"],
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::No
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let raw = args["url"].as_str().unwrap_or_default().trim().to_string();
        let url = reqwest::Url::parse(&raw)
            .map_err(|e| ToolError::failed(format!("{raw:?} is not a valid URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::failed(format!(
                "web_fetch only fetches http and https URLs, not {}:",
                url.scheme()
            )));
        }
        let fetched = run_async(fetch(ctx.config.web.clone(), url))?;
        let ct = fetched.content_type.to_ascii_lowercase();
        let is_html = ct.contains("html") || (ct.is_empty() && looks_like_html(&fetched.body));
        let is_text =
            ct.starts_with("text/") || ct.contains("json") || ct.contains("xml") || ct.is_empty();
        if !is_html && !is_text {
            return Err(ToolError::failed(format!(
                "{} is {} and not text; web_fetch only returns web pages and text",
                fetched.final_url, fetched.content_type
            )));
        }
        let text = String::from_utf8_lossy(&fetched.body).into_owned();
        let (title, mut content, format) = if is_html {
            let (t, c) = html_to_text(&text);
            (t, c, "markdown")
        } else {
            (None, text.trim().to_string(), "text")
        };
        let mut truncated = fetched.body_truncated;
        if content.chars().count() > MAX_CONTENT_CHARS {
            content = content.chars().take(MAX_CONTENT_CHARS).collect();
            truncated = true;
        }
        let mut out = json!({
            "url": raw,
            "finalUrl": fetched.final_url,
        });
        if let Some(t) = &title {
            out["title"] = json!(t);
        }
        out["contentType"] = json!(fetched.content_type);
        out["fetchedAt"] = json!(now_rfc3339());
        out["content"] = json!(content);
        out["contentFormat"] = json!(format);
        out["truncated"] = json!(truncated);
        out["provider"] = json!("local");
        Ok(ToolOutput {
            content: serde_json::to_string_pretty(&out).unwrap_or_default(),
            details: Some(out),
            ..Default::default()
        })
    }
}

fn looks_like_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    head.contains("<html") || head.contains("<!doctype html")
}

// ---------------------------------------------------------------------------------------------
// HTML → readable text

const DROP_ELEMENTS: &[&str] = &[
    "script", "style", "nav", "noscript", "template", "svg", "head", "iframe", "form", "button",
    "select", "canvas",
];
const BLOCK_ELEMENTS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "aside",
    "blockquote",
    "pre",
    "ul",
    "ol",
    "table",
    "tr",
    "figure",
    "figcaption",
    "dl",
    "dt",
    "dd",
    "hr",
    "address",
];

/// Convert HTML to readable text: returns `(title, text)`. Scripts, styles, navigation and
/// the head are dropped; headings become `#` lines, list items `- ` lines, blocks paragraphs.
pub fn html_to_text(html: &str) -> (Option<String>, String) {
    let title = extract_title(html);
    let lower = html.to_ascii_lowercase();
    let bytes = html.as_bytes();
    let mut out = String::with_capacity(html.len() / 2);
    let mut i = 0usize;
    let mut pre_depth = 0usize;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            let next = html[i..].find('<').map(|n| i + n).unwrap_or(html.len());
            let chunk = decode_entities(&html[i..next]);
            if pre_depth > 0 {
                out.push_str(&chunk);
            } else {
                push_collapsed(&mut out, &chunk);
            }
            i = next;
            continue;
        }
        if lower[i..].starts_with("<!--") {
            i = lower[i..]
                .find("-->")
                .map(|n| i + n + 3)
                .unwrap_or(html.len());
            continue;
        }
        let end = match html[i..].find('>') {
            Some(n) => i + n + 1,
            None => {
                push_collapsed(&mut out, &decode_entities(&html[i..]));
                break;
            }
        };
        let tag = &lower[i + 1..end - 1];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if name.is_empty() {
            // `<!doctype>`, `<?xml?>`, stray `<`.
            i = end;
            continue;
        }
        if !closing && DROP_ELEMENTS.contains(&name.as_str()) && !tag.ends_with('/') {
            let close = format!("</{name}");
            i = match lower[end..].find(&close) {
                Some(n) => {
                    let c = end + n;
                    lower[c..]
                        .find('>')
                        .map(|m| c + m + 1)
                        .unwrap_or(html.len())
                }
                None => html.len(),
            };
            out.push('\n');
            continue;
        }
        match name.as_str() {
            "br" => out.push('\n'),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                out.push_str("\n\n");
                if !closing {
                    let level = name[1..].parse::<usize>().unwrap_or(1);
                    out.push_str(&"#".repeat(level));
                    out.push(' ');
                }
            }
            "li" if !closing => out.push_str("\n- "),
            "pre" => {
                if closing {
                    pre_depth = pre_depth.saturating_sub(1);
                } else {
                    pre_depth += 1;
                }
                out.push_str("\n\n");
            }
            "td" | "th" if closing => out.push_str(" | "),
            n if BLOCK_ELEMENTS.contains(&n) => out.push_str("\n\n"),
            _ => {}
        }
        i = end;
    }
    (title, tidy(&out))
}

fn extract_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let mut t = String::new();
    push_collapsed(&mut t, &decode_entities(&html[open_end..close]));
    let t = t.trim().to_string();
    (!t.is_empty()).then_some(t)
}

fn push_collapsed(out: &mut String, s: &str) {
    for c in s.chars() {
        if c.is_whitespace() && c != '\u{a0}' {
            if !out.ends_with(' ') && !out.ends_with('\n') && !out.is_empty() {
                out.push(' ');
            }
        } else if c == '\u{a0}' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
}

/// Trim each line, drop empty runs of more than one blank line.
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut blank = 0usize;
    for line in s.lines() {
        let line = line.trim();
        if line.is_empty() || line == "-" || line == "|" {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line.trim_end_matches(" |").trim_end_matches('|').trim_end());
    }
    out
}

/// Decode the common named entities and all numeric ones.
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let semi = rest[..rest.len().min(12)].find(';');
        let decoded = semi.and_then(|n| {
            let ent = &rest[1..n];
            let c = if let Some(num) = ent.strip_prefix('#') {
                let v = if let Some(hex) = num.strip_prefix(['x', 'X']) {
                    u32::from_str_radix(hex, 16).ok()
                } else {
                    num.parse::<u32>().ok()
                };
                v.and_then(char::from_u32)
            } else {
                match ent {
                    "amp" => Some('&'),
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "quot" => Some('"'),
                    "apos" => Some('\''),
                    "nbsp" => Some('\u{a0}'),
                    "mdash" => Some('—'),
                    "ndash" => Some('–'),
                    "hellip" => Some('…'),
                    "lsquo" => Some('‘'),
                    "rsquo" => Some('’'),
                    "ldquo" => Some('“'),
                    "rdquo" => Some('”'),
                    "laquo" => Some('«'),
                    "raquo" => Some('»'),
                    "copy" => Some('©'),
                    "reg" => Some('®'),
                    "trade" => Some('™'),
                    "middot" => Some('·'),
                    "bull" => Some('•'),
                    "deg" => Some('°'),
                    "eacute" => Some('é'),
                    "egrave" => Some('è'),
                    "uuml" => Some('ü'),
                    "ouml" => Some('ö'),
                    "auml" => Some('ä'),
                    "szlig" => Some('ß'),
                    _ => None,
                }
            };
            c.map(|c| (c, n + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------------------------------------
// web_search

pub struct WebSearch;

pub const DEFAULT_SEARCH_ORDER: &[&str] = &["tavily", "brave"];

struct Provider {
    name: String,
    key: String,
    base: String,
}

fn key_env(web: &WebConfig, provider: &str) -> String {
    match provider {
        "tavily" => web
            .tavily_api_key_env
            .clone()
            .unwrap_or_else(|| "TAVILY_API_KEY".into()),
        _ => web
            .brave_api_key_env
            .clone()
            .unwrap_or_else(|| "BRAVE_API_KEY".into()),
    }
}

fn providers(config: &Config) -> Result<Vec<Provider>, ToolError> {
    let web = &config.web;
    let order: Vec<String> = if web.search_order.is_empty() {
        DEFAULT_SEARCH_ORDER.iter().map(|s| s.to_string()).collect()
    } else {
        web.search_order
            .iter()
            .map(|s| s.trim().to_ascii_lowercase())
            .collect()
    };
    let mut out = Vec::new();
    for name in &order {
        if !DEFAULT_SEARCH_ORDER.contains(&name.as_str()) {
            return Err(ToolError::failed(format!(
                "unknown web search provider {name:?} in [web] search_order; known providers: tavily, brave"
            )));
        }
        let env = key_env(web, name);
        let key = std::env::var(&env).unwrap_or_default();
        if key.trim().is_empty() {
            continue;
        }
        let base = match name.as_str() {
            "tavily" => web
                .tavily_base_url
                .clone()
                .unwrap_or_else(|| "https://api.tavily.com".into()),
            _ => web
                .brave_base_url
                .clone()
                .unwrap_or_else(|| "https://api.search.brave.com".into()),
        };
        out.push(Provider {
            name: name.clone(),
            key: key.trim().to_string(),
            base: base.trim_end_matches('/').to_string(),
        });
    }
    if out.is_empty() {
        return Err(ToolError::failed(format!(
            "no web search provider is configured. Set an API key in the environment: {} for Tavily (tavily.com) or {} for Brave Search (brave.com/search/api); other variable names can be set in config.toml under [web] as tavily_api_key_env / brave_api_key_env, and search_order chooses which provider is tried first",
            key_env(web, "tavily"),
            key_env(web, "brave")
        )));
    }
    Ok(out)
}

/// `example.com`, `https://www.example.com/x` → `example.com`-style domain.
fn normalize_domain(d: &str) -> String {
    let d = d.trim().to_ascii_lowercase();
    let d = d
        .strip_prefix("https://")
        .or_else(|| d.strip_prefix("http://"))
        .unwrap_or(&d);
    let d = d.split(['/', '?', '#']).next().unwrap_or("");
    let d = d.trim_start_matches("*.").trim_matches('.');
    d.strip_prefix("www.").unwrap_or(d).to_string()
}

fn host_matches(host: &str, domain: &str) -> bool {
    let host = host.to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    host == domain || host.ends_with(&format!(".{domain}"))
}

fn domains(args: &Value, key: &str) -> Vec<String> {
    args[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(normalize_domain)
                .filter(|d| !d.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

struct SearchReq {
    query: String,
    allowed: Vec<String>,
    blocked: Vec<String>,
    recency_days: Option<u64>,
    max_results: usize,
}

async fn search_tavily(p: &Provider, r: &SearchReq) -> Result<Vec<Value>, String> {
    let mut body = json!({
        "query": r.query,
        "max_results": r.max_results,
        "search_depth": "basic",
    });
    if !r.allowed.is_empty() {
        body["include_domains"] = json!(r.allowed);
    }
    if !r.blocked.is_empty() {
        body["exclude_domains"] = json!(r.blocked);
    }
    if let Some(days) = r.recency_days {
        let range = match days {
            0..=1 => Some("day"),
            2..=7 => Some("week"),
            8..=31 => Some("month"),
            32..=366 => Some("year"),
            _ => None,
        };
        if let Some(range) = range {
            body["time_range"] = json!(range);
        }
    }
    let url = format!("{}/search", p.base);
    let client = reqwest::Client::builder()
        .timeout(SEARCH_TIMEOUT)
        .build()
        .map_err(|e| e.to_string())?;
    let resp = client
        .post(&url)
        .bearer_auth(&p.key)
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("tavily: {url} did not answer: {e}"))?;
    let status = resp.status();
    let v: Value = resp
        .json()
        .await
        .map_err(|e| format!("tavily: {url} sent no JSON ({status}): {e}"))?;
    if !status.is_success() {
        let msg = v["detail"]["error"]
            .as_str()
            .or(v["error"].as_str())
            .or(v["detail"].as_str())
            .unwrap_or("no message");
        return Err(format!("tavily answered {status}: {msg}"));
    }
    let results = v["results"]
        .as_array()
        .ok_or_else(|| "tavily: the answer has no `results` list".to_string())?;
    Ok(results
        .iter()
        .map(|x| {
            let mut o = json!({
                "title": x["title"].as_str().unwrap_or_default(),
                "url": x["url"].as_str().unwrap_or_default(),
                "snippet": x["content"].as_str().unwrap_or_default(),
            });
            if let Some(d) = x["published_date"].as_str() {
                o["publishedAt"] = json!(d);
            }
            if let Some(s) = x["score"].as_f64() {
                o["score"] = json!(s);
            }
            o
        })
        .collect())
}

async fn search_brave(p: &Provider, r: &SearchReq) -> Result<Vec<Value>, String> {
    let mut q = r.query.clone();
    if !r.allowed.is_empty() {
        let sites: Vec<String> = r.allowed.iter().map(|d| format!("site:{d}")).collect();
        if sites.len() == 1 {
            q.push(' ');
            q.push_str(&sites[0]);
        } else {
            q.push_str(&format!(" ({})", sites.join(" OR ")));
        }
    }
    for d in &r.blocked {
        q.push_str(&format!(" -site:{d}"));
    }
    let mut params: Vec<(&str, String)> = vec![("q", q), ("count", r.max_results.to_string())];
    if let Some(days) = r.recency_days {
        let f = match days {
            0..=1 => "pd",
            2..=7 => "pw",
            8..=31 => "pm",
            _ => "py",
        };
        if days <= 366 {
            params.push(("freshness", f.to_string()));
        }
    }
    let url = format!("{}/res/v1/web/search", p.base);
    let client = reqwest::Client::builder()
        .timeout(SEARCH_TIMEOUT)
        .build()
        .map_err(|e| e.to_string())?;
    let resp = client
        .get(&url)
        .query(&params)
        .header("accept", "application/json")
        .header("x-subscription-token", &p.key)
        .send()
        .await
        .map_err(|e| format!("brave: {url} did not answer: {e}"))?;
    let status = resp.status();
    let v: Value = resp
        .json()
        .await
        .map_err(|e| format!("brave: {url} sent no JSON ({status}): {e}"))?;
    if !status.is_success() {
        let msg = v["error"]["detail"]
            .as_str()
            .or(v["message"].as_str())
            .unwrap_or("no message");
        return Err(format!("brave answered {status}: {msg}"));
    }
    let empty = Vec::new();
    let results = v["web"]["results"].as_array().unwrap_or(&empty);
    Ok(results
        .iter()
        .map(|x| {
            let mut o = json!({
                "title": x["title"].as_str().unwrap_or_default(),
                "url": x["url"].as_str().unwrap_or_default(),
                "snippet": x["description"].as_str().unwrap_or_default(),
            });
            if let Some(s) = x["profile"]["name"]
                .as_str()
                .or(x["meta_url"]["hostname"].as_str())
            {
                o["source"] = json!(s);
            }
            if let Some(d) = x["page_age"].as_str().or(x["age"].as_str()) {
                o["publishedAt"] = json!(d);
            }
            o
        })
        .collect())
}

/// Keep results whose host passes the allowed/blocked domain filters (providers do not
/// always honour them).
fn filter_results(
    results: Vec<Value>,
    allowed: &[String],
    blocked: &[String],
    max: usize,
) -> Vec<Value> {
    results
        .into_iter()
        .filter(|r| {
            let Some(host) = r["url"]
                .as_str()
                .and_then(|u| reqwest::Url::parse(u).ok())
                .and_then(|u| u.host_str().map(str::to_string))
            else {
                return false;
            };
            if blocked.iter().any(|d| host_matches(&host, d)) {
                return false;
            }
            allowed.is_empty() || allowed.iter().any(|d| host_matches(&host, d))
        })
        .take(max)
        .collect()
}

impl Tool for WebSearch {
    fn name(&self) -> &'static str {
        "web_search"
    }
    fn group(&self) -> &'static str {
        "web"
    }
    fn description(&self) -> &'static str {
        "Search the web (Tavily or Brave, as configured). Returns titles, URLs and snippets; use web_fetch to read a page. Domain filters are applied to the results."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 2, "maxLength": 500},
                "allowed_domains": {"type": "array", "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 253}, "description": "Only results from these domains (and their subdomains)"},
                "blocked_domains": {"type": "array", "maxItems": 50, "items": {"type": "string", "minLength": 1, "maxLength": 253}, "description": "Never results from these domains"},
                "recency_days": {"type": "integer", "minimum": 1, "maximum": 3650, "description": "Prefer results published within this many days"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::No
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let query = args["query"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_string();
        if query.chars().count() < 2 {
            return Err(ToolError::failed(
                "the query needs at least 2 non-blank characters",
            ));
        }
        let providers = providers(&ctx.config)?;
        let req = SearchReq {
            query: query.clone(),
            allowed: domains(args, "allowed_domains"),
            blocked: domains(args, "blocked_domains"),
            recency_days: args["recency_days"].as_u64(),
            max_results: args["max_results"].as_u64().unwrap_or(5).clamp(1, 10) as usize,
        };
        if let Some(d) = req.allowed.iter().find(|d| req.blocked.contains(d)) {
            return Err(ToolError::failed(format!(
                "{d} is both allowed and blocked; drop it from one of the lists"
            )));
        }
        let (provider, results) = run_async(async move {
            let mut errors = Vec::new();
            for p in &providers {
                let r = match p.name.as_str() {
                    "tavily" => search_tavily(p, &req).await,
                    _ => search_brave(p, &req).await,
                };
                match r {
                    Ok(results) => {
                        let kept =
                            filter_results(results, &req.allowed, &req.blocked, req.max_results);
                        return Ok((p.name.clone(), kept));
                    }
                    Err(e) => errors.push(e),
                }
            }
            Err(format!(
                "every web search provider failed: {}",
                errors.join("; ")
            ))
        })?;
        let out = json!({"query": query, "provider": provider, "results": results});
        Ok(ToolOutput {
            content: serde_json::to_string_pretty(&out).unwrap_or_default(),
            details: Some(out),
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_local_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(blocked_reason(ip.parse().unwrap()).is_some(), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(blocked_reason(ip.parse().unwrap()).is_none(), "{ip}");
        }
    }

    #[test]
    fn html_becomes_text() {
        let (t, c) = html_to_text(
            "<html><head><title>A &amp; B</title><style>x{}</style></head><body><nav>menu</nav>\
             <h2>Head</h2><p>One&nbsp;two &#8212; &#x41;</p><script>evil()</script><ul><li>i1</li><li>i2</li></ul></body></html>",
        );
        assert_eq!(t.as_deref(), Some("A & B"));
        assert!(
            !c.contains("menu") && !c.contains("evil") && !c.contains("x{}"),
            "{c}"
        );
        assert!(c.contains("## Head"), "{c}");
        assert!(c.contains("One two — A"), "{c}");
        assert!(c.contains("- i1\n- i2"), "{c}");
    }

    #[test]
    fn domains_normalize_and_match() {
        assert_eq!(normalize_domain("https://www.Example.com/x"), "example.com");
        assert!(host_matches("news.example.com", "example.com"));
        assert!(!host_matches("badexample.com", "example.com"));
    }
}
