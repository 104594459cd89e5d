//! What `nbook mcp` does with a client's call: send it to the author's TUI when one has the
//! project open (attaching on the first call that finds it, again after it went away), or
//! run it in this process's own engine when none does. Speaks nbook types only; the MCP
//! edge (`server.rs`) turns them into protocol messages.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::attach::{AttachError, Attached};
use super::gateway::{every_second, CallRequest, Gate, Gateway, Progress};
use super::outcome::Outcome;
use super::peer::socket_path;
use super::wire::Request;
use crate::engine::{Engine, SessionId};

#[derive(Clone, Debug)]
pub struct BackendOptions {
    /// The profile whose tools the client sees and may call.
    pub profile: String,
    /// How long a mutating call waits for the author before `pending_approval`.
    pub wait: Duration,
    /// With no TUI open, refuse every mutating call (default) instead of letting the policy
    /// run those it would run without asking.
    pub approve_from_tui_only: bool,
}

pub struct Backend {
    local: Arc<Gateway>,
    sock: PathBuf,
    opts: BackendOptions,
    client: Mutex<String>,
    link: tokio::sync::Mutex<Option<Arc<Attached>>>,
    local_session: Mutex<Option<SessionId>>,
    /// Approval ids issued through a TUI link, with that link (a dead link means the TUI
    /// closed: the call was interrupted).
    remote: Mutex<HashMap<String, Arc<Attached>>>,
}

/// Owner id of calls made in this process's own engine (there is one client per process).
const LOCAL_OWNER: u64 = 0;

impl Backend {
    /// `engine` is this process's own engine, opened as a guest of the approval queue.
    pub fn new(engine: Arc<Engine>, opts: BackendOptions) -> Backend {
        let sock = socket_path(&engine.workspace().nbook_dir());
        Backend {
            local: Gateway::new(
                engine,
                Gate::Local {
                    approve_from_tui_only: opts.approve_from_tui_only,
                },
            ),
            sock,
            opts,
            client: Mutex::new("mcp client".into()),
            link: tokio::sync::Mutex::new(None),
            local_session: Mutex::new(None),
            remote: Mutex::new(HashMap::new()),
        }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        self.local.engine()
    }

    pub fn options(&self) -> &BackendOptions {
        &self.opts
    }

    /// The client's name from its `initialize` (`clientInfo.name`): the session's title.
    pub fn set_client(&self, name: &str) {
        let name = name.trim();
        if !name.is_empty() {
            *self.client.lock().unwrap_or_else(|e| e.into_inner()) = name.to_string();
        }
    }

    fn client(&self) -> String {
        self.client
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The live TUI link, attaching now if a TUI has the project open.
    async fn link(&self) -> Result<Option<Arc<Attached>>, AttachError> {
        let mut link = self.link.lock().await;
        if let Some(l) = link.as_ref().filter(|l| l.alive()) {
            return Ok(Some(l.clone()));
        }
        *link = None;
        if !self.sock.exists() {
            return Ok(None);
        }
        let fresh = Attached::connect(&self.sock, &self.client(), &self.opts.profile).await?;
        *link = fresh.map(Arc::new);
        Ok(link.clone())
    }

    /// Whether calls currently go to a TUI (attaching if one is there).
    pub async fn attached(&self) -> bool {
        matches!(self.link().await, Ok(Some(_)))
    }

    fn local_session(&self) -> Result<SessionId, String> {
        let mut s = self.local_session.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(id) = s.as_ref() {
            return Ok(id.clone());
        }
        let info = self
            .local
            .engine()
            .create_client_session(&self.opts.profile, &self.client())
            .map_err(|e| e.to_string())?;
        *s = Some(info.id.clone());
        Ok(info.id)
    }

    /// Run `tool`; a call still waiting for the author after `wait` comes back as
    /// `pending_approval` (with `wait` zero, as soon as it is in the queue).
    pub async fn call(
        &self,
        tool: &str,
        args: serde_json::Value,
        wait: Duration,
        cancel: CancellationToken,
        progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Outcome {
        let link = match self.link().await {
            Ok(l) => l,
            Err(e) => {
                return Outcome::Failed {
                    message: e.to_string(),
                }
            }
        };
        let Some(link) = link else {
            let session_id = match self.local_session() {
                Ok(s) => s,
                Err(message) => return Outcome::Failed { message },
            };
            let req = CallRequest {
                session_id,
                tool: tool.to_string(),
                args,
                by: format!("mcp:{}", self.client()),
                wait,
                owner: LOCAL_OWNER,
            };
            return self.local.call(req, cancel, progress).await;
        };
        let id = link.next_id();
        let request = Request::Call {
            tool: tool.to_string(),
            args,
            wait_ms: wait.as_millis() as u64,
        };
        let outcome = self
            .over_link(
                &link,
                id,
                request,
                cancel,
                &format!("{tool} is in nbook: running, or waiting for the author's decision"),
                progress,
            )
            .await;
        if let Outcome::PendingApproval(p) = &outcome {
            self.remote().insert(p.approval_id.clone(), link.clone());
        }
        outcome
    }

    pub async fn await_approval(
        &self,
        approval_id: &str,
        wait: Duration,
        cancel: CancellationToken,
        progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Outcome {
        let link = self.remote().get(approval_id).cloned();
        let Some(link) = link else {
            return self
                .local
                .await_approval(approval_id, wait, LOCAL_OWNER, cancel)
                .await;
        };
        if !link.alive() {
            self.remote().remove(approval_id);
            return Outcome::interrupted();
        }
        let request = Request::Await {
            approval_id: approval_id.to_string(),
            wait_ms: wait.as_millis() as u64,
        };
        let outcome = self
            .over_link(
                &link,
                link.next_id(),
                request,
                cancel,
                "waiting for the author's decision in nbook",
                progress,
            )
            .await;
        if !matches!(outcome, Outcome::PendingApproval(_)) {
            self.remote().remove(approval_id);
        }
        outcome
    }

    fn remote(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Attached>>> {
        self.remote.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Send a request to the TUI and wait for its outcome, telling the client every second
    /// that it goes on; a cancellation (or this future being dropped) cancels it there too.
    async fn over_link(
        &self,
        link: &Arc<Attached>,
        id: u64,
        request: Request,
        cancel: CancellationToken,
        what: &str,
        progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Outcome {
        let mut guard = CancelOnDrop {
            link: link.clone(),
            request: id,
            armed: true,
        };
        let started = tokio::time::Instant::now();
        // A call's progress comes from the TUI, which knows whether it runs, waits or runs a
        // job; while awaiting a decision, this side says it waits.
        let local_ticks = matches!(request, Request::Await { .. });
        let mut remote = link.watch_progress(id);
        let mut remote_open = true;
        let fut = link.outcome(id, request);
        tokio::pin!(fut);
        let mut ticker = every_second();
        let mut cancelled = false;
        let outcome = loop {
            tokio::select! {
                o = &mut fut => break o,
                _ = cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    link.notify(Request::CancelRequest { request: id });
                }
                _ = ticker.tick(), if local_ticks => progress(Progress::elapsed(started.elapsed(), what)),
                p = remote.recv(), if remote_open => match p {
                    Some(p) => progress(p),
                    None => remote_open = false,
                },
            }
        };
        guard.armed = false;
        // Reports the TUI sent before the answer are passed on before it.
        while let Ok(p) = remote.try_recv() {
            progress(p);
        }
        link.unwatch_progress(id);
        outcome
    }
}

/// Cancels a request on the TUI when the future waiting for it is dropped unanswered.
struct CancelOnDrop {
    link: Arc<Attached>,
    request: u64,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.link.notify(Request::CancelRequest {
                request: self.request,
            });
        }
    }
}
