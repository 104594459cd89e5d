//! `nbook mcp`'s side of the attach socket: connect to the author's TUI on this project,
//! open the client's session there, and send it calls. A reader task routes replies to the
//! requests waiting for them; when the TUI goes away every waiting request ends as
//! `interrupted` (the TUI never executed it), and the link is marked dead so the next call
//! looks for a TUI again.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};

use super::gateway::Progress;
use super::outcome::Outcome;
use super::peer::check_same_user;
use super::wire::{Envelope, Reply, ReplyBody, Request, MAX_LINE};
use crate::engine::SessionId;

#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("{0}")]
    ForeignOwner(String),
    #[error("the nbook on this project refused the MCP session: {0}")]
    Refused(String),
    #[error("the nbook on this project closed the attach link before it answered")]
    Closed,
}

type Waiters = Arc<Mutex<HashMap<u64, oneshot::Sender<ReplyBody>>>>;
/// Where the progress reports of a request go while it runs.
type Watchers = Arc<Mutex<HashMap<u64, mpsc::UnboundedSender<Progress>>>>;

/// A live link to the TUI, with this client's session there.
pub struct Attached {
    tx: mpsc::UnboundedSender<String>,
    waiters: Waiters,
    watchers: Watchers,
    next: AtomicU64,
    alive: Arc<AtomicBool>,
    pub session_id: SessionId,
}

impl Attached {
    /// Attach to the nbook listening on `sock`. `Ok(None)`: no nbook has the project open
    /// (no socket file, or one that nothing answers on — a stale file is left for the queue
    /// owner to remove).
    pub async fn connect(
        sock: &Path,
        client: &str,
        profile: &str,
    ) -> Result<Option<Attached>, AttachError> {
        let stream = match UnixStream::connect(sock).await {
            Ok(s) => s,
            Err(_) => return Ok(None),
        };
        // A socket another user planted must not receive this client's calls.
        check_same_user(&stream).map_err(AttachError::ForeignOwner)?;
        let (read, mut write) = stream.into_split();
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let waiters: Waiters = Arc::default();
        let watchers: Watchers = Arc::default();
        let alive = Arc::new(AtomicBool::new(true));
        tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                if write.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
        {
            let waiters = waiters.clone();
            let watchers = watchers.clone();
            let alive = alive.clone();
            tokio::spawn(async move {
                let mut r = BufReader::new(read);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    use tokio::io::AsyncReadExt;
                    match (&mut r)
                        .take(MAX_LINE as u64 + 1)
                        .read_until(b'\n', &mut buf)
                        .await
                    {
                        Ok(0) | Err(_) => break,
                        Ok(_) if buf.len() > MAX_LINE => break,
                        Ok(_) => {}
                    }
                    let Ok(reply) = serde_json::from_slice::<Reply>(&buf) else {
                        tracing::warn!("mcp: unreadable reply from nbook");
                        continue;
                    };
                    if reply.id == 0 {
                        // Not an answer to a request: the TUI refused the link or a line.
                        if let ReplyBody::Error { message } = &reply.body {
                            tracing::warn!("mcp: nbook says: {message}");
                        }
                        continue;
                    }
                    if let ReplyBody::Progress { progress } = reply.body {
                        // Not the answer: the request goes on.
                        let w = watchers.lock().unwrap_or_else(|e| e.into_inner());
                        if let Some(w) = w.get(&reply.id) {
                            let _ = w.send(progress);
                        }
                        continue;
                    }
                    let w = waiters
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&reply.id);
                    if let Some(w) = w {
                        let _ = w.send(reply.body);
                    }
                }
                alive.store(false, Ordering::SeqCst);
                // Dropping the senders ends every waiting request as interrupted.
                waiters.lock().unwrap_or_else(|e| e.into_inner()).clear();
                watchers.lock().unwrap_or_else(|e| e.into_inner()).clear();
            });
        }
        let mut link = Attached {
            tx,
            waiters,
            watchers,
            next: AtomicU64::new(0),
            alive,
            session_id: String::new(),
        };
        let hello = Request::Hello {
            client: client.to_string(),
            profile: profile.to_string(),
        };
        match link.request(link.next_id(), hello).await {
            Some(ReplyBody::Session { session_id }) => link.session_id = session_id,
            Some(ReplyBody::Error { message }) => return Err(AttachError::Refused(message)),
            _ => return Err(AttachError::Closed),
        }
        Ok(Some(link))
    }

    pub fn alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// A fresh request id (to name a request in a later cancellation).
    pub fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Send request `id` and wait for its reply; `None` when the link broke first.
    pub async fn request(&self, id: u64, request: Request) -> Option<ReplyBody> {
        let (tx, rx) = oneshot::channel();
        self.waiters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, tx);
        let mut line = serde_json::to_string(&Envelope { id, request }).ok()?;
        line.push('\n');
        if !self.alive() || self.tx.send(line).is_err() {
            self.waiters
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
            return None;
        }
        rx.await.ok()
    }

    /// The progress reports of request `id` (sent by the TUI while it runs), until
    /// [`Attached::unwatch_progress`] or the link breaks.
    pub fn watch_progress(&self, id: u64) -> mpsc::UnboundedReceiver<Progress> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.watchers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, tx);
        rx
    }

    pub fn unwatch_progress(&self, id: u64) {
        self.watchers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }

    /// Fire a request whose reply nobody waits for (a cancellation).
    pub fn notify(&self, request: Request) {
        let id = self.next_id();
        if let Ok(mut line) = serde_json::to_string(&Envelope { id, request }) {
            line.push('\n');
            let _ = self.tx.send(line);
        }
    }

    /// A request whose reply is an outcome: anything else, or a broken link, is the
    /// outcome that says why there is none.
    pub async fn outcome(&self, id: u64, request: Request) -> Outcome {
        match self.request(id, request).await {
            Some(ReplyBody::Outcome { outcome }) => outcome,
            Some(ReplyBody::Error { message }) => Outcome::Failed { message },
            Some(other) => Outcome::Failed {
                message: format!("unexpected reply from nbook: {other:?}"),
            },
            None => Outcome::interrupted(),
        }
    }
}
