//! Web tools for the researcher profile: `web_fetch` (a local, guarded HTTP GET that turns HTML
//! into readable text) and `web_search` (Tavily or Brave, API keys from env vars named in
//! `[web]` of config.toml).
//!
//! Both declare the `egress` effect: they send data off the machine, so under `supervised` the
//! engine asks the author before the first request to each host of a session (see
//! `engine::effects`). Each tool names, without touching the network, the requests a call will
//! send (`Tool::egress`).
//!
//! Split by responsibility: `ssrf` (which addresses may be reached), `fetch` (web_fetch),
//! `charset` (which charset a page's bytes are in), `html` (HTML to readable text), `search`
//! (web_search and its providers).

use std::time::Duration;

use crate::engine::tool::ToolError;

mod charset;
mod error;
mod fetch;
mod html;
mod search;
mod ssrf;

pub use error::WebError;
pub use fetch::{fetch_page, Limits, Page, PageError, WebFetch};
pub use html::html_to_text;
pub use search::{search_blocking, search_requests, WebSearch, DEFAULT_SEARCH_ORDER};
pub use ssrf::precheck_url;
pub use ssrf::{blocked_reason, embedded_ipv4};

pub const MAX_REDIRECTS: usize = 5;
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
pub const MAX_CONTENT_CHARS: usize = 20_000;
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(20);
pub const SEARCH_TIMEOUT: Duration = Duration::from_secs(20);
/// Run a request future on the shared network runtime (tools are synchronous).
/// The edge: a web error becomes the tool's failure text.
fn run_async<T: Send + 'static>(
    fut: impl std::future::Future<Output = Result<T, WebError>> + Send + 'static,
) -> Result<T, ToolError> {
    crate::net::runtime::block_on(fut)
        .map_err(|e| ToolError::failed(e.to_string()))?
        .map_err(|e| ToolError::failed(e.to_string()))
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
