//! `fn_web_fetch`: Fusion's lightweight fetch for role sessions, on nbook's own web fetcher
//! (`crate::tools::web`): the same SSRF guard (every hop and every resolved address checked,
//! `[web] allow_hosts` the only way to a private address) and the same egress rule (the request
//! is named before anything is sent, so under `supervised` the first request to a host in a
//! session waits for the author). HTML becomes readable text; no JavaScript runs.
//!
//! Failures are error results whose text starts `ERROR [code]` (Fusion's form) with
//! `details.code`: `invalid-url`, `unsupported-scheme`, `ssrf-blocked`, `dns-failed`,
//! `timeout`, `too-large` (the body is longer than `maxBytes`), `http-status`,
//! `too-many-redirects`, `not-text`, `fetch-failed`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::engine::effects::normalize_host;
use crate::engine::tool::{Effects, EgressRequest, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::tools::web::{fetch_page, precheck_url, Limits, PageError, WebError};

pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
pub const DEFAULT_MAX_BYTES: usize = 512_000;
/// Characters of readable text returned.
pub const MAX_TEXT_CHARS: usize = 50_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchArgs {
    /// The http or https URL.
    #[schemars(length(min = 1, max = 4000))]
    pub url: String,
    /// What you are looking for in the page; echoed above the text so the answer can cite it.
    #[schemars(length(max = 2000))]
    pub prompt: Option<String>,
    /// Whole-fetch timeout, default 30000 (1000–120000).
    #[serde(rename = "timeoutMs")]
    #[schemars(range(min = 1000, max = 120000))]
    pub timeout_ms: Option<u64>,
    /// Largest body accepted, default 512000 (1–5000000); a longer body is an error.
    #[serde(rename = "maxBytes")]
    #[schemars(range(min = 1, max = 5000000))]
    pub max_bytes: Option<usize>,
}

fn coded(code: &'static str, message: impl std::fmt::Display) -> ToolError {
    ToolError::Coded {
        message: format!("ERROR [{code}] {message}"),
        details: json!({"code": code}),
    }
}

fn web_code(e: &WebError) -> &'static str {
    match e {
        WebError::Scheme(_) => "unsupported-scheme",
        WebError::NoHost(_) | WebError::BadRedirect { .. } => "invalid-url",
        WebError::Refused { .. } | WebError::Loopback(_) => "ssrf-blocked",
        WebError::Resolve { .. } | WebError::NoAddress(_) => "dns-failed",
        WebError::Timeout => "timeout",
        WebError::Status { .. } => "http-status",
        WebError::TooManyRedirects { .. } => "too-many-redirects",
        _ => "fetch-failed",
    }
}

fn parse(url: &str) -> Result<reqwest::Url, ToolError> {
    let raw = url.trim();
    reqwest::Url::parse(raw)
        .map_err(|e| coded("invalid-url", format!("{raw:?} is not a valid URL: {e}")))
}

pub struct FnWebFetch;

impl TypedTool for FnWebFetch {
    type Args = FetchArgs;
    const NAME: &'static str = "fn_web_fetch";
    const GROUP: &'static str = "web";
    const DESCRIPTION: &'static str = "Fetch one public web page (http/https, up to 5 redirects) and return it as readable text (HTML converted, no JavaScript run; at most 50000 characters). timeoutMs default 30000, maxBytes default 512000 (a longer body is refused). Private and local addresses are refused (the SSRF guard of web_fetch); the first request to a host in a session may wait for the author. Failures are error results `ERROR [code] …` with details.code: invalid-url, unsupported-scheme, ssrf-blocked, dns-failed, timeout, too-large, http-status, too-many-redirects, not-text, fetch-failed.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Network]).egress()
    };
    const PARALLEL_SAFE: bool = true;
    fn egress(&self, ctx: &ToolCtx, a: &FetchArgs) -> Result<Vec<EgressRequest>, ToolError> {
        let url = parse(&a.url)?;
        let host = precheck_url(&ctx.config.web, &url).map_err(|e| coded(web_code(&e), e))?;
        Ok(vec![EgressRequest {
            host: normalize_host(&host),
            method: "GET",
            url: url.to_string(),
            body: Vec::new(),
        }])
    }
    fn run(&self, ctx: &ToolCtx, a: &FetchArgs) -> Result<ToolOutput, ToolError> {
        let url = parse(&a.url)?;
        let timeout_ms = a.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        let max_bytes = a.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        let limits = Limits {
            timeout: std::time::Duration::from_millis(timeout_ms),
            max_body: max_bytes,
        };
        let page = fetch_page(&ctx.config.web, url.clone(), limits).map_err(|e| match e {
            PageError::Web(WebError::Timeout) => coded(
                "timeout",
                format!(
                    "{url} did not finish within {timeout_ms} ms; try again or raise timeoutMs"
                ),
            ),
            PageError::Web(w) => coded(web_code(&w), w),
            PageError::NotText { .. } => coded("not-text", e),
            PageError::Runtime(m) => coded("fetch-failed", m),
        })?;
        if page.body_truncated {
            return Err(coded(
                "too-large",
                format!(
                    "{} sent more than maxBytes ({max_bytes} bytes); raise maxBytes (up to 5000000) or fetch a smaller page",
                    page.final_url
                ),
            ));
        }
        let total = page.content.chars().count();
        let truncated = total > MAX_TEXT_CHARS;
        let content: String = page.content.chars().take(MAX_TEXT_CHARS).collect();
        let mut text = format!("URL: {}\n", page.final_url);
        if let Some(t) = &page.title {
            text.push_str(&format!("Title: {t}\n"));
        }
        if let Some(p) = a.prompt.as_deref().filter(|p| !p.trim().is_empty()) {
            text.push_str(&format!("Looking for: {}\n", p.trim()));
        }
        text.push('\n');
        text.push_str(&content);
        if truncated {
            text.push_str(&format!(
                "\n… (cut at {MAX_TEXT_CHARS} of {total} characters)"
            ));
        }
        Ok(ToolOutput {
            content: text,
            details: Some(json!({
                "url": a.url.trim(),
                "finalUrl": page.final_url,
                "title": page.title,
                "contentType": page.content_type,
                "charset": page.charset,
                "contentFormat": page.format,
                "chars": total,
                "truncated": truncated,
            })),
            ..ToolOutput::default()
        })
    }
}
