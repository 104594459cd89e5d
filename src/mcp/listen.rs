//! The TUI's side of the attach socket. The nbook process that owns the project's approval
//! queue listens on `.nbook/mcp.sock`; each `nbook mcp` that connects gets a session in this
//! engine, and its calls run through the [`Gateway`] in the queue the author sees.
//!
//! Only the queue owner listens (a second TUI on the same project does not). A socket file
//! left by an nbook that died is removed only by the queue owner, and only when nothing
//! answers on it. Peers running as another user are refused before a byte is read.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::gateway::{CallRequest, Gate, Gateway};
use super::peer::{check_same_user, socket_path};
use super::wire::{Envelope, Reply, ReplyBody, Request, MAX_LINE};
use crate::engine::Engine;

#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error("another program answers on {0} (close it, or remove the file if it is stale)")]
    Busy(String),
    #[error("cannot listen on {path}: {source}")]
    Bind {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The listening socket; dropping it stops accepting, interrupts every waiting call (none
/// is executed) and removes the socket file.
pub struct AttachServer {
    path: PathBuf,
    gateway: Arc<Gateway>,
    accept: tokio::task::JoinHandle<()>,
    stop: CancellationToken,
}

impl AttachServer {
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    pub fn gateway(&self) -> &Arc<Gateway> {
        &self.gateway
    }
}

impl Drop for AttachServer {
    fn drop(&mut self) {
        self.stop.cancel();
        self.accept.abort();
        self.gateway.shutdown();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Listen for `nbook mcp` on this project, if this engine owns the approval queue
/// (`Ok(None)` otherwise: a second nbook on the same project does not serve clients).
pub async fn serve(engine: Arc<Engine>) -> Result<Option<AttachServer>, ListenError> {
    if !engine.owns_queue() {
        return Ok(None);
    }
    let path = socket_path(&engine.workspace().nbook_dir());
    // Named as the author sees it in the project (the absolute path is long and known).
    let shown = path
        .strip_prefix(engine.workspace().root())
        .unwrap_or(&path)
        .display()
        .to_string();
    if path.exists() {
        match UnixStream::connect(&path).await {
            Ok(_) => return Err(ListenError::Busy(shown)),
            // Nothing listens: left by an nbook that stopped; we own the queue, so it is ours.
            Err(_) => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    let listener = UnixListener::bind(&path).map_err(|source| ListenError::Bind {
        path: shown.clone(),
        source,
    })?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(
            |source| ListenError::Bind {
                path: shown.clone(),
                source,
            },
        )?;
    }
    let gateway = Gateway::new(engine, Gate::Queue);
    let stop = CancellationToken::new();
    let accept = tokio::spawn(accept_loop(listener, gateway.clone(), stop.clone()));
    Ok(Some(AttachServer {
        path,
        gateway,
        accept,
        stop,
    }))
}

async fn accept_loop(listener: UnixListener, gateway: Arc<Gateway>, stop: CancellationToken) {
    let next = AtomicU64::new(0);
    loop {
        let stream = tokio::select! {
            _ = stop.cancelled() => return,
            s = listener.accept() => match s {
                Ok((s, _)) => s,
                Err(e) => {
                    tracing::warn!("attach socket: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let owner = next.fetch_add(1, Ordering::Relaxed) + 1;
        tokio::spawn(connection(
            stream,
            gateway.clone(),
            owner,
            stop.child_token(),
        ));
    }
}

/// One attached `nbook mcp`: its requests run concurrently; when it goes away, every call it
/// has in flight or waiting is withdrawn.
async fn connection(
    mut stream: UnixStream,
    gateway: Arc<Gateway>,
    owner: u64,
    stop: CancellationToken,
) {
    if let Err(message) = check_same_user(&stream) {
        tracing::warn!("attach socket: {message}");
        let reply = Reply {
            id: 0,
            body: ReplyBody::Error { message },
        };
        if let Ok(line) = serde_json::to_string(&reply) {
            let _ = stream.write_all(format!("{line}\n").as_bytes()).await;
        }
        return;
    }
    let (read, mut write) = stream.into_split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Reply>();
    let writer = tokio::spawn(async move {
        while let Some(reply) = rx.recv().await {
            let Ok(mut line) = serde_json::to_string(&reply) else {
                continue;
            };
            line.push('\n');
            if write.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    let conn = Arc::new(Conn {
        gateway: gateway.clone(),
        owner,
        session: Mutex::new(None),
        inflight: Mutex::new(HashMap::new()),
        tx,
    });
    let mut lines = BufReader::new(read);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = tokio::select! {
            _ = stop.cancelled() => break,
            n = read_line(&mut lines, &mut buf) => n,
        };
        match n {
            Ok(0) => break,
            Ok(_) => {}
            Err(message) => {
                conn.reply(0, ReplyBody::Error { message });
                break;
            }
        }
        let env: Envelope = match serde_json::from_slice(&buf) {
            Ok(e) => e,
            Err(e) => {
                conn.reply(
                    0,
                    ReplyBody::Error {
                        message: format!("malformed attach request: {e}"),
                    },
                );
                continue;
            }
        };
        conn.clone().handle(env);
    }
    tracing::info!("mcp: attach connection {owner} closed");
    // The client went away (or nbook is stopping): nothing it asked for may go on.
    for (_, token) in conn.inflight().drain() {
        token.cancel();
    }
    gateway.withdraw_owner(owner);
    drop(conn);
    let _ = writer.await;
}

/// Read one line of at most [`MAX_LINE`] bytes (without its newline).
async fn read_line(
    r: &mut BufReader<tokio::net::unix::OwnedReadHalf>,
    buf: &mut Vec<u8>,
) -> Result<usize, String> {
    use tokio::io::AsyncReadExt;
    let n = (&mut *r)
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', buf)
        .await
        .map_err(|e| format!("attach socket read failed: {e}"))?;
    if buf.len() > MAX_LINE {
        return Err(format!("attach request longer than {MAX_LINE} bytes"));
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    Ok(n)
}

struct Conn {
    gateway: Arc<Gateway>,
    owner: u64,
    /// (session id, `mcp:<client>`) once `hello` opened it.
    session: Mutex<Option<(String, String)>>,
    inflight: Mutex<HashMap<u64, CancellationToken>>,
    tx: mpsc::UnboundedSender<Reply>,
}

impl Conn {
    fn reply(&self, id: u64, body: ReplyBody) {
        let _ = self.tx.send(Reply { id, body });
    }

    fn inflight(&self) -> std::sync::MutexGuard<'_, HashMap<u64, CancellationToken>> {
        self.inflight.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn session(&self) -> Option<(String, String)> {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn handle(self: Arc<Self>, env: Envelope) {
        let id = env.id;
        match env.request {
            Request::Hello { client, profile } => {
                let body = match self
                    .gateway
                    .engine()
                    .create_client_session(&profile, &client)
                {
                    Ok(info) => {
                        *self.session.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some((info.id.clone(), format!("mcp:{client}")));
                        ReplyBody::Session {
                            session_id: info.id,
                        }
                    }
                    Err(e) => ReplyBody::Error {
                        message: e.to_string(),
                    },
                };
                self.reply(id, body);
            }
            Request::CancelRequest { request } => {
                tracing::info!("mcp: client cancels its request {request}");
                if let Some(t) = self.inflight().remove(&request) {
                    t.cancel();
                }
                self.reply(id, ReplyBody::Ack);
            }
            Request::Withdraw { approval_id } => {
                let outcome = self.gateway.withdraw(&approval_id, self.owner);
                self.reply(id, ReplyBody::Outcome { outcome });
            }
            Request::Call {
                tool,
                args,
                wait_ms,
            } => {
                let Some((session_id, by)) = self.session() else {
                    return self.reply(id, no_hello());
                };
                let token = CancellationToken::new();
                self.inflight().insert(id, token.clone());
                tokio::spawn(async move {
                    let req = CallRequest {
                        session_id,
                        tool,
                        args,
                        by,
                        wait: Duration::from_millis(wait_ms),
                        owner: self.owner,
                    };
                    // The client hears how the call goes, as it would from its own engine.
                    let tell = |progress| self.reply(id, ReplyBody::Progress { progress });
                    let outcome = self.gateway.call(req, token, &tell).await;
                    self.inflight().remove(&id);
                    self.reply(id, ReplyBody::Outcome { outcome });
                });
            }
            Request::Await {
                approval_id,
                wait_ms,
            } => {
                if self.session().is_none() {
                    return self.reply(id, no_hello());
                }
                let token = CancellationToken::new();
                self.inflight().insert(id, token.clone());
                tokio::spawn(async move {
                    let outcome = self
                        .gateway
                        .await_approval(
                            &approval_id,
                            Duration::from_millis(wait_ms),
                            self.owner,
                            token,
                        )
                        .await;
                    self.inflight().remove(&id);
                    self.reply(id, ReplyBody::Outcome { outcome });
                });
            }
        }
    }
}

fn no_hello() -> ReplyBody {
    ReplyBody::Error {
        message: "no session yet: the first request on an attach connection must be hello".into(),
    }
}
