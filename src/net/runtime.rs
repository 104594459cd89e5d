//! The one tokio runtime that runs the HTTP requests (and small timers) of synchronous code.
//!
//! Tools run on the engine's blocking pool, in tests, or on plain threads; each web or
//! embedding call used to start an OS thread and a runtime of its own. This runtime is built
//! on first use and kept for the life of the process, so its connection pool and threads are
//! reused. [`block_on`] hands it a future and waits on a plain channel, which works from any
//! thread — a blocking-pool thread, a plain thread, even (blocking it, as any synchronous
//! call does) a worker of another runtime — and never starts a runtime within a runtime.
//! Its own threads never wait on its work, so it cannot deadlock itself.

use std::future::Future;
use std::sync::{Arc, OnceLock};

use tokio::runtime::{Handle, Runtime};

/// The name of the runtime's threads (workers and blocking pool alike).
pub const THREAD_NAME: &str = "nbook-net";

#[derive(Debug, Clone, thiserror::Error)]
pub enum RuntimeError {
    #[error("cannot start the network runtime: {0}; the system may be out of threads or memory")]
    Start(#[source] Arc<std::io::Error>),
    #[error("the network request stopped unexpectedly (a bug; the log has its panic)")]
    Crashed,
    #[error("a blocking network call was made on the network runtime's own thread, where it would wait forever (a bug)")]
    Reentrant,
}

/// Built once; a failure is kept (shared) so every later call reports the same cause.
static RUNTIME: OnceLock<Result<Runtime, Arc<std::io::Error>>> = OnceLock::new();

/// The shared runtime's handle, built on first use.
pub fn handle() -> Result<&'static Handle, RuntimeError> {
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .max_blocking_threads(8)
                .thread_name(THREAD_NAME)
                .enable_all()
                .build()
                .map_err(Arc::new)
        })
        .as_ref()
        .map(Runtime::handle)
        .map_err(|e| RuntimeError::Start(e.clone()))
}

/// Run `fut` on the shared runtime and wait for its output on this thread.
pub fn block_on<T: Send + 'static>(
    fut: impl Future<Output = T> + Send + 'static,
) -> Result<T, RuntimeError> {
    if std::thread::current().name() == Some(THREAD_NAME) {
        return Err(RuntimeError::Reentrant);
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    handle()?.spawn(async move {
        let _ = tx.send(fut.await);
    });
    // A panic in the future drops the sender: the wait ends with an error, not a hang.
    rx.recv().map_err(|_| RuntimeError::Crashed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn works_inside_another_runtime_and_survives_a_panic() {
        assert_eq!(block_on(async { 1 + 1 }).unwrap(), 2);
        let inner = tokio::task::spawn_blocking(|| block_on(async { "blocking pool" }))
            .await
            .unwrap();
        assert_eq!(inner.unwrap(), "blocking pool");
        let crashed = block_on(async {
            if true {
                panic!("boom");
            }
        });
        assert!(matches!(crashed, Err(RuntimeError::Crashed)));
        let nested = block_on(async { block_on(async {}) }).unwrap();
        assert!(matches!(nested, Err(RuntimeError::Reentrant)));
    }
}
