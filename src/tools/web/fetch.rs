//! `web_fetch`: a guarded HTTP GET of one public page, returned as readable text.
//!
//! Guard rails: http/https only; at most 5 redirects, each hop re-checked (`ssrf`); the
//! shared fetch client resolves through the same check, so a second DNS answer cannot swap a
//! checked address for a private one.
//! Bodies are capped at 2 MB, the whole fetch at 20 s, and the returned content at 20 000
//! characters ([`fetch_page`] takes other [`Limits`]: `fn_web_fetch` passes its own). Its egress request (host and URL) is named before anything is sent; redirects
//! are not asked about again, as the hosts they lead to only learn what the first host chose
//! to put in the redirect.

use serde_json::json;

use super::charset;
use super::html::html_to_text;
use super::ssrf::{check_url, fetch_client, precheck_url};
use super::{
    now_rfc3339, WebError, FETCH_TIMEOUT, MAX_BODY_BYTES, MAX_CONTENT_CHARS, MAX_REDIRECTS,
};
use crate::config::WebConfig;
use crate::engine::effects::normalize_host;
use crate::engine::tool::{EgressRequest, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;

// web_fetch

pub struct WebFetch;

/// The `url` argument as given (trimmed) and parsed.
fn url_arg(args: &FetchArgs) -> Result<(String, reqwest::Url), ToolError> {
    let raw = args.url.trim().to_string();
    let url = reqwest::Url::parse(&raw)
        .map_err(|e| ToolError::failed(format!("{raw:?} is not a valid URL: {e}")))?;
    Ok((raw, url))
}

struct Fetched {
    final_url: String,
    content_type: String,
    body: Vec<u8>,
    body_truncated: bool,
}

/// How long a fetch may take and how much of the body it keeps.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub timeout: std::time::Duration,
    pub max_body: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: FETCH_TIMEOUT,
            max_body: MAX_BODY_BYTES,
        }
    }
}

/// A fetched page as readable text.
#[derive(Clone, Debug)]
pub struct Page {
    pub final_url: String,
    pub title: Option<String>,
    pub content_type: String,
    pub charset: String,
    pub charset_source: String,
    pub content: String,
    /// `markdown` (converted HTML) or `text`.
    pub format: &'static str,
    /// The body was longer than `Limits::max_body` and was cut there.
    pub body_truncated: bool,
}

/// Why a page could not be fetched as text.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error(transparent)]
    Web(#[from] WebError),
    #[error("{url} is {content_type} and not text; web_fetch only returns web pages and text")]
    NotText { url: String, content_type: String },
    #[error("{0}")]
    Runtime(String),
}

/// Fetch `url` (http/https, checked like every hop) within `limits` and turn it into text.
/// Callable from sync code: it runs on the shared network runtime.
pub fn fetch_page(web: &WebConfig, url: reqwest::Url, limits: Limits) -> Result<Page, PageError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(WebError::Scheme(url.scheme().to_string()).into());
    }
    let fetched = crate::net::runtime::block_on(fetch(web.clone(), url, limits))
        .map_err(|e| PageError::Runtime(e.to_string()))??;
    let ct = fetched.content_type.to_ascii_lowercase();
    let is_html = ct.contains("html") || (ct.is_empty() && looks_like_html(&fetched.body));
    let is_text =
        ct.starts_with("text/") || ct.contains("json") || ct.contains("xml") || ct.is_empty();
    if !is_html && !is_text {
        return Err(PageError::NotText {
            url: fetched.final_url,
            content_type: fetched.content_type,
        });
    }
    let host = reqwest::Url::parse(&fetched.final_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default();
    let decoded = charset::decode(&fetched.body, &fetched.content_type, is_html, &host);
    let (title, content, format) = if is_html {
        let (t, c) = html_to_text(&decoded.text);
        (t, c, "markdown")
    } else {
        (None, decoded.text.trim().to_string(), "text")
    };
    Ok(Page {
        final_url: fetched.final_url,
        title,
        content_type: fetched.content_type,
        charset: decoded.charset.to_string(),
        charset_source: decoded.source.to_string(),
        content,
        format,
        body_truncated: fetched.body_truncated,
    })
}

async fn fetch(web: WebConfig, start: reqwest::Url, limits: Limits) -> Result<Fetched, WebError> {
    let deadline = tokio::time::Instant::now() + limits.timeout;
    let work = async move {
        let mut url = start;
        let mut hops = 0usize;
        loop {
            check_url(&web, &url).await?;
            // The client's resolver checks the addresses it connects to again, so a second
            // DNS answer cannot swap a checked address for a private one.
            let client = fetch_client(&web)?;
            let resp = client
                .get(url.clone())
                .header(
                    "accept",
                    "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
                )
                .send()
                .await
                .map_err(|source| WebError::Send {
                    url: url.to_string(),
                    source,
                })?;
            let status = resp.status();
            if status.is_redirection() {
                let loc = resp
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| WebError::NoLocation {
                        url: url.to_string(),
                        status,
                    })?;
                let next = url.join(loc).map_err(|e| WebError::BadRedirect {
                    url: url.to_string(),
                    location: loc.to_string(),
                    source: Box::new(e),
                })?;
                hops += 1;
                if hops > MAX_REDIRECTS {
                    return Err(WebError::TooManyRedirects {
                        url: url.to_string(),
                        next: next.to_string(),
                    });
                }
                url = next;
                continue;
            }
            if !status.is_success() {
                return Err(WebError::Status {
                    url: url.to_string(),
                    status,
                });
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
            while let Some(chunk) = resp.chunk().await.map_err(|source| WebError::Body {
                url: url.to_string(),
                source,
            })? {
                let room = limits.max_body - body.len();
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
        .map_err(|_| WebError::Timeout)?
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchArgs {
    /// The http or https URL to fetch
    #[schemars(length(min = 1, max = 4000))]
    pub url: String,
}

impl TypedTool for WebFetch {
    type Args = FetchArgs;
    const NAME: &'static str = "web_fetch";
    const GROUP: &'static str = "web";
    const DESCRIPTION: &'static str = "Fetch one public web page (http/https) and return its readable text (HTML is converted to markdown-ish text, at most 20000 characters). Follows up to 5 redirects; private and local addresses are refused.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Network]).egress()
    };
    const PARALLEL_SAFE: bool = true;
    fn egress(&self, ctx: &ToolCtx, args: &FetchArgs) -> Result<Vec<EgressRequest>, ToolError> {
        let (_, url) = url_arg(args)?;
        let host =
            precheck_url(&ctx.config.web, &url).map_err(|e| ToolError::failed(e.to_string()))?;
        Ok(vec![EgressRequest {
            host: normalize_host(&host),
            method: "GET",
            url: url.to_string(),
            body: Vec::new(),
        }])
    }
    fn run(&self, ctx: &ToolCtx, args: &FetchArgs) -> Result<ToolOutput, ToolError> {
        let (raw, url) = url_arg(args)?;
        let page = fetch_page(&ctx.config.web, url, Limits::default())
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let mut content = page.content;
        let mut truncated = page.body_truncated;
        if content.chars().count() > MAX_CONTENT_CHARS {
            content = content.chars().take(MAX_CONTENT_CHARS).collect();
            truncated = true;
        }
        let mut out = json!({
            "url": raw,
            "finalUrl": page.final_url,
        });
        if let Some(t) = &page.title {
            out["title"] = json!(t);
        }
        out["contentType"] = json!(page.content_type);
        out["charset"] = json!(page.charset);
        out["charsetSource"] = json!(page.charset_source);
        out["fetchedAt"] = json!(now_rfc3339());
        out["content"] = json!(content);
        out["contentFormat"] = json!(page.format);
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
