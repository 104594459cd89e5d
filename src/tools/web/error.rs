//! Why a web tool's request was refused or failed. Each names the URL, host or provider and,
//! where there is one, what to change; the tool's result shows the text to the model.

use std::net::IpAddr;

use super::{FETCH_TIMEOUT, MAX_REDIRECTS};

const ALLOW_HINT: &str = "web_fetch only reaches public hosts. To allow this host, add it to `allow_hosts` under [web] in config.toml";

#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("web_fetch only fetches http and https URLs, not {0}:")]
    Scheme(String),
    #[error("{0} has no host")]
    NoHost(String),
    /// The host is, or resolves to, an address web_fetch must not reach (`why`: its kind).
    #[error("refused: {host} resolves to {ip} ({why} address); {ALLOW_HINT}")]
    Refused {
        host: String,
        ip: IpAddr,
        why: String,
    },
    #[error("refused: {0} resolves to this machine (a loopback name); {ALLOW_HINT}")]
    Loopback(String),
    #[error("cannot resolve {host}: {source}")]
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0} resolves to no address")]
    NoAddress(String),
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    #[error(transparent)]
    SharedClient(#[from] crate::net::http::ClientError),
    #[error("cannot fetch {url}: {source}")]
    Send {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("{url} answered {status} without a Location")]
    NoLocation {
        url: String,
        status: reqwest::StatusCode,
    },
    #[error("{url} redirects to an invalid URL {location:?}: {source}")]
    BadRedirect {
        url: String,
        location: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("too many redirects (more than {MAX_REDIRECTS}) starting from the requested URL; last hop {url} → {next}")]
    TooManyRedirects { url: String, next: String },
    #[error("{url} answered {status}")]
    Status {
        url: String,
        status: reqwest::StatusCode,
    },
    #[error("error reading {url}: {source}")]
    Body {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("the fetch took longer than {}s", FETCH_TIMEOUT.as_secs())]
    Timeout,
    #[error("{provider}: {url} did not answer: {source}")]
    NoAnswer {
        provider: &'static str,
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("{provider}: {url} sent no JSON ({status}): {source}")]
    NotJson {
        provider: &'static str,
        url: String,
        status: reqwest::StatusCode,
        #[source]
        source: reqwest::Error,
    },
    /// A search provider refused the request (its own message).
    #[error("{provider} answered {status}: {message}")]
    Provider {
        provider: &'static str,
        status: reqwest::StatusCode,
        message: String,
    },
    #[error("{0}: the answer has no `results` list")]
    NoResults(&'static str),
    /// Every configured search provider failed; each one's error, in the order tried.
    #[error("every web search provider failed: {}", join(.0))]
    AllFailed(Vec<WebError>),
}

fn join(errors: &[WebError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}
