//! The approval queue on disk, so a call that waits for the author still waits after nbook
//! stops and starts again: `.nbook/agent/pending/<approval id>.json`, one file per waiting
//! call, written atomically (temp file renamed over it) before the call shows in the queue,
//! and removed when it leaves it.
//!
//! Why files beside the session logs and not a table in project.sqlite: the queue must be
//! writable whenever a session log is — also when project.sqlite is open read-only (a newer
//! nbook wrote it) or busy with another program's long write (NeuroBook edits the same
//! database) — and one file per call means a torn or corrupt entry loses that call only.
//!
//! On open, the engine that owns the queue (`lock`) puts every stored call back in the queue
//! instead of marking it `interrupted`, after checking it against its session log (a call
//! whose log already has the decision is gone). A stored file that cannot be read is reported,
//! renamed to `*.corrupt` and skipped: it is never approved. Calls of outside (MCP) clients
//! are dropped with a note and recorded as interrupted: the client's connection ended when
//! nbook stopped, its `nbook_await_approval` handle died with that process, so nobody could
//! ever collect the result, and running a change nobody will hear about is worse than asking
//! the client to call again.
//!
//! A restored call has no run waiting on it. [`Engine::serve_restored`] (started by the agent
//! host) first re-fingerprints each call's targets — one whose target changed meanwhile is
//! *stale*: it can be rejected or previewed anew ([`Engine::repreview`]), and an approval
//! that still finds the target moved fails as stale — then waits for the author's decision,
//! runs the call like the live path would, records the decision and the result in the session
//! log, and hands the session back to the host so its run continues with the result.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::call_result::{changed_targets, not_recorded, rejected};
use super::dispatch::Admitted;
use super::effects::EgressRequest;
use super::session_log::{read_log, unresolved_calls};
use super::tool::Staged;
use super::types::*;
use super::{CallResult, CallStatus, Engine};

/// The folder under `.nbook/agent/`.
pub const DIR: &str = "pending";
/// The format of a stored call; a newer one is reported and left alone.
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Stored {
    version: u32,
    call: PendingCall,
}

/// What `load` found: the calls it could read and one line per file it could not.
#[derive(Debug, Default)]
pub struct Loaded {
    pub calls: Vec<PendingCall>,
    pub problems: Vec<String>,
}

pub struct PendingStore {
    dir: PathBuf,
}

/// Approval ids are minted by the engine (`ap-<n>`); anything else never names a file.
fn file_name(approval_id: &str) -> Option<String> {
    let ok = !approval_id.is_empty()
        && approval_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    ok.then(|| format!("{approval_id}.json"))
}

impl PendingStore {
    /// The store of the project whose agent folder is `agent_dir`.
    pub fn new(agent_dir: &Path) -> PendingStore {
        PendingStore {
            dir: agent_dir.join(DIR),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Write (or replace) a waiting call's file, whole or not at all.
    pub fn save(&self, call: &PendingCall) -> io::Result<()> {
        let name = file_name(&call.approval_id).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("approval id '{}' cannot name a file", call.approval_id),
            )
        })?;
        let bytes = serde_json::to_vec_pretty(&Stored {
            version: VERSION,
            call: call.clone(),
        })
        .map_err(io::Error::other)?;
        // Whole or not at all (a temp file renamed over the entry), but without fsync: the
        // entry is written before the call shows in the queue, and an fsync here costs about
        // a frame (~18 ms measured on the 2-core machine). A power cut can at worst leave an
        // empty or torn entry, which `load` reports and skips — it is never approved.
        std::fs::create_dir_all(&self.dir)?;
        let temp = self
            .dir
            .join(format!(".{name}.{:016x}.tmp", rand::random::<u64>()));
        std::fs::write(&temp, &bytes)
            .and_then(|()| std::fs::rename(&temp, self.dir.join(&name)))
            .inspect_err(|_| {
                let _ = std::fs::remove_file(&temp);
            })
    }

    /// Remove a call's file; one already gone is fine.
    pub fn remove(&self, approval_id: &str) -> io::Result<()> {
        let Some(name) = file_name(approval_id) else {
            return Ok(());
        };
        match std::fs::remove_file(self.dir.join(name)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Every stored call, oldest request first. A file that is not a whole stored call is
    /// renamed to `<name>.corrupt` (kept for the author to look at) and reported once.
    pub fn load(&self) -> Loaded {
        let mut out = Loaded::default();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return out;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            // Temp files of a write that never finished start with a dot: nothing refers to
            // them (the call never showed in the queue), so they go.
            if name.starts_with('.') {
                if name.ends_with(".tmp") {
                    let _ = std::fs::remove_file(&path);
                }
                continue;
            }
            if !name.ends_with(".json") {
                continue;
            }
            match read_stored(&path, &name) {
                Ok(call) => out.calls.push(call),
                Err(why) => {
                    let aside = path.with_extension("json.corrupt");
                    let moved = match std::fs::rename(&path, &aside) {
                        Ok(()) => format!("moved to {}", aside.display()),
                        Err(e) => format!("could not be moved aside ({e})"),
                    };
                    out.problems.push(format!(
                        "{}: {why}; skipped and not approved ({moved}); the agent was told nothing ran",
                        path.display()
                    ));
                }
            }
        }
        out.calls
            .sort_by(|a, b| a.requested_at.cmp(&b.requested_at));
        out
    }
}

fn read_stored(path: &Path, name: &str) -> Result<PendingCall, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read ({e})"))?;
    let stored: Stored = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "not a whole pending call (line {}, column {}: {e})",
            e.line(),
            e.column()
        )
    })?;
    if stored.version > VERSION {
        return Err(format!(
            "written by a newer nbook (format {}, this one reads {VERSION})",
            stored.version
        ));
    }
    if file_name(&stored.call.approval_id).as_deref() != Some(name) {
        return Err(format!(
            "its approval id '{}' does not match the file name",
            stored.call.approval_id
        ));
    }
    Ok(stored.call)
}

/// A call put back in the queue at open, as the Approvals pane shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoredCall {
    /// Why the call's target no longer matches its preview (`None`: unchanged).
    pub stale: Option<String>,
}

/// A restored call in the engine's state: the call as the queue holds it now (its preview
/// replaced by [`Engine::repreview`]), and the receiver of its decision until it is served.
pub(super) struct Restored {
    pub call: PendingCall,
    pub stale: Option<String>,
    pub rx: Option<oneshot::Receiver<Decision>>,
}

/// Told the id of a session whose restored calls are all decided and recorded: its run
/// may continue from its log.
pub type OnResolved = Arc<dyn Fn(&str) + Send + Sync>;

fn tool_call(call: &PendingCall) -> ToolCall {
    ToolCall {
        id: call.call_id.clone(),
        name: call.tool.clone(),
        arguments: call.args.clone(),
    }
}

impl Engine {
    /// A call entered the queue: keep it on disk. A failure is logged, not fatal — the call
    /// still waits in this process, it just would not survive a restart.
    pub(super) fn persist_pending(&self, call: &PendingCall) {
        if let Err(e) = self.pending_store.save(call) {
            tracing::warn!(
                "cannot keep pending call {} on disk in {}: {e}",
                call.approval_id,
                self.pending_store.dir().display()
            );
        }
    }

    /// A call left the queue (decided, withdrawn, cancelled).
    pub(super) fn forget_pending(&self, approval_id: &str) {
        if let Err(e) = self.pending_store.remove(approval_id) {
            tracing::warn!("cannot remove pending call {approval_id} from disk: {e}");
        }
    }

    /// This process is ending: calls dropped from now on (the runtime stopping their runs)
    /// keep their record on disk and wait again at the next open.
    pub fn close_queue(&self) {
        self.closing
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether [`Engine::close_queue`] was called.
    pub fn is_closing(&self) -> bool {
        self.closing.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// What restoring the queue at open had to say (corrupt files, dropped calls).
    pub fn restore_notes(&self) -> Vec<String> {
        self.state().restore_notes.clone()
    }

    /// The calls in the queue that were put back at open, by approval id.
    pub fn restored_calls(&self) -> HashMap<ApprovalId, RestoredCall> {
        self.state()
            .restored
            .iter()
            .map(|(id, r)| {
                (
                    id.clone(),
                    RestoredCall {
                        stale: r.stale.clone(),
                    },
                )
            })
            .collect()
    }

    /// The stored calls to keep waiting, decided before the session logs are recovered:
    /// only a call whose log still has its request open, from a session that is no outside
    /// client's. The others' files are removed, each with a note. Returns the kept calls by
    /// session id.
    pub(super) fn stored_calls_to_restore(&self) -> HashMap<SessionId, Vec<PendingCall>> {
        let loaded = self.pending_store.load();
        let mut notes = loaded.problems;
        let mut by_session: HashMap<SessionId, Vec<PendingCall>> = HashMap::new();
        for call in loaded.calls {
            by_session
                .entry(call.session_id.clone())
                .or_default()
                .push(call);
        }
        let dir = self.ws.sessions_dir();
        let mut kept: HashMap<SessionId, Vec<PendingCall>> = HashMap::new();
        for (sid, calls) in by_session {
            // Session ids name log files; one that could name another path reads nothing.
            let log =
                file_name(&sid).and_then(|_| read_log(&dir.join(format!("{sid}.jsonl"))).ok());
            let open: HashSet<String> = log
                .as_ref()
                .map(|l| {
                    unresolved_calls(&l.lines)
                        .into_iter()
                        .map(|u| u.approval_id)
                        .collect()
                })
                .unwrap_or_default();
            let client = log
                .as_ref()
                .and_then(super::summarize)
                .and_then(|i| i.client);
            for call in calls {
                let drop_why = if log.is_none() {
                    Some(format!("session {sid} has no log any more"))
                } else if !open.contains(&call.approval_id) {
                    // Decided just before nbook stopped: the log has the answer.
                    None
                } else if let Some(c) = &client {
                    Some(format!(
                        "it came from the outside client {c}, whose connection ended when nbook stopped; it was recorded as interrupted and not run — the client can call again"
                    ))
                } else if self.registry.get(&call.tool).is_none() {
                    Some(format!("tool {} is not registered any more", call.tool))
                } else {
                    kept.entry(sid.clone()).or_default().push(call.clone());
                    continue;
                };
                if let Some(why) = drop_why {
                    notes.push(format!(
                        "pending call {} ({} in session {sid}) was dropped: {why}",
                        call.approval_id, call.tool
                    ));
                }
                self.forget_pending(&call.approval_id);
            }
        }
        self.state().restore_notes = notes;
        kept
    }

    /// Stored calls kept for a session whose log was not loaded after all: dropped with a
    /// note, never left waiting unseen.
    pub(super) fn drop_unloaded(&self, left: HashMap<SessionId, Vec<PendingCall>>) {
        let mut notes = Vec::new();
        for (sid, calls) in left {
            for call in calls {
                notes.push(format!(
                    "pending call {} ({} in session {sid}) was dropped: its session log could not be loaded",
                    call.approval_id, call.tool
                ));
                self.forget_pending(&call.approval_id);
            }
        }
        self.state().restore_notes.extend(notes);
    }

    /// Put restored calls back in the queue (oldest first) with a waiter each; their sessions
    /// show as waiting for the author.
    pub(super) fn enqueue_restored(&self, calls: Vec<PendingCall>) {
        let mut calls = calls;
        calls.sort_by(|a, b| a.requested_at.cmp(&b.requested_at));
        let (calls, orphans): (Vec<_>, Vec<_>) = {
            let st = self.state();
            calls
                .into_iter()
                .partition(|c| st.sessions.contains_key(&c.session_id))
        };
        let mut left: HashMap<SessionId, Vec<PendingCall>> = HashMap::new();
        for c in orphans {
            left.entry(c.session_id.clone()).or_default().push(c);
        }
        self.drop_unloaded(left);
        let mut st = self.state();
        for call in calls {
            let (tx, rx) = oneshot::channel();
            st.waiters.insert(call.approval_id.clone(), tx);
            st.queue.push_back(call.clone());
            if let Some(s) = st.sessions.get_mut(&call.session_id) {
                s.info.state = SessionState::WaitingApproval;
            }
            st.restored.insert(
                call.approval_id.clone(),
                Restored {
                    call,
                    stale: None,
                    rx: Some(rx),
                },
            );
        }
    }

    /// Check each restored call against its targets as they are now, then wait for the
    /// author's decisions and run them. `on_resolved` is told each session whose restored
    /// calls are all decided. Call once, inside a tokio runtime (the agent host does).
    pub fn serve_restored(self: &Arc<Self>, on_resolved: OnResolved) {
        let waiting: Vec<(ApprovalId, PendingCall, oneshot::Receiver<Decision>)> = {
            let mut st = self.state();
            st.restored
                .iter_mut()
                .filter_map(|(id, r)| r.rx.take().map(|rx| (id.clone(), r.call.clone(), rx)))
                .collect()
        };
        for (id, call, rx) in waiting {
            let stale = match self.preview_now(&call) {
                // Where an egress call sends follows from its arguments; its preview also
                // lists what this process saw, which a restart forgets.
                Ok(_) if matches!(call.preview.body, PreviewBody::Egress { .. }) => None,
                Ok(now) => stale_reason(&call.preview, &now),
                Err(e) => Some(e),
            };
            if let Some(r) = self.state().restored.get_mut(&id) {
                r.stale = stale;
            }
            // Held weakly while waiting: the engine owns the sender, so a strong handle here
            // would keep a closed engine (and its queue lock) alive forever.
            let weak = Arc::downgrade(self);
            let done = on_resolved.clone();
            tokio::spawn(async move {
                // The sender goes only with the engine: nothing to run then.
                let Ok(decision) = rx.await else { return };
                let Some(me) = weak.upgrade() else { return };
                let call = me
                    .state()
                    .restored
                    .get(&id)
                    .map(|r| r.call.clone())
                    .unwrap_or(call);
                me.run_restored(&call, decision).await;
                let session_done = {
                    let mut st = me.state();
                    st.restored.remove(&id);
                    !st.restored
                        .values()
                        .any(|r| r.call.session_id == call.session_id)
                };
                if session_done {
                    me.close_paused_turn(&call);
                    me.set_state(&call.session_id, SessionState::Idle);
                    done(&call.session_id);
                }
            });
        }
    }

    /// Preview a restored call anew (its target changed while nbook was closed): the queue
    /// entry shows the change as it would be made now, and an approval is judged against it.
    pub fn repreview(self: &Arc<Self>, approval_id: &str) -> Result<PendingCall, String> {
        let call = self
            .state()
            .restored
            .get(approval_id)
            .map(|r| r.call.clone())
            .ok_or_else(|| {
                format!(
                    "{approval_id} is not a call restored at open; only those are previewed anew"
                )
            })?;
        let now = self.preview_now(&call)?;
        let fresh = PendingCall {
            preview: now,
            ..call
        };
        {
            let mut st = self.state();
            if !st.waiters.contains_key(approval_id) {
                return Err(format!("{approval_id} was decided meanwhile"));
            }
            if let Some(q) = st.queue.iter_mut().find(|p| p.approval_id == approval_id) {
                *q = fresh.clone();
            }
            if let Some(r) = st.restored.get_mut(approval_id) {
                r.call = fresh.clone();
                r.stale = None;
            }
        }
        self.persist_pending(&fresh);
        Ok(fresh)
    }

    /// The call's preview as its targets are now (for a staging tool: staged and rolled back).
    fn preview_now(self: &Arc<Self>, call: &PendingCall) -> Result<Preview, String> {
        let tc = tool_call(call);
        let Admitted { tool, ctx, args } = self
            .admit(Actor::Agent, &call.session_id, &tc)
            .map_err(|r| r.content)?;
        if let Some(requests) = egress_only(&tool, &ctx, &args, &tc)? {
            return Ok(self.egress_preview(&ctx, &requests));
        }
        if tool.is_staging() {
            match tool.stage(&ctx, &args) {
                Some(Ok(Staged::Held(h))) => {
                    let p = h.preview.clone();
                    h.rollback();
                    Ok(p)
                }
                Some(Ok(Staged::Done(_))) => Err(
                    "the call no longer changes anything; reject it and let the agent look again"
                        .into(),
                ),
                Some(Err(e)) => Err(format!("it can no longer be previewed: {e}")),
                None => Err("this tool does not support staging".into()),
            }
        } else {
            tool.preview(&ctx, &args)
                .map_err(|e| format!("it can no longer be previewed: {e}"))
        }
    }

    /// Run a restored call as the author decided, and record the decision and the result
    /// in its session log (the live path's order: decision first, then the result).
    async fn run_restored(self: &Arc<Self>, call: &PendingCall, decision: Decision) -> CallResult {
        let tc = tool_call(call);
        let result = self.restored_outcome(call, &tc, decision).await;
        let committed = self
            .state()
            .committed
            .remove(&(call.session_id.clone(), tc.id.clone()));
        if result.ok {
            self.after_success(&call.session_id, &tc, committed);
        }
        self.record_result(&call.session_id, result)
    }

    async fn restored_outcome(
        self: &Arc<Self>,
        call: &PendingCall,
        tc: &ToolCall,
        decision: Decision,
    ) -> CallResult {
        let (reason, edited) = match &decision {
            Decision::Reject { reason } => (reason.clone(), None),
            Decision::Edit { new_args } => (None, Some(new_args.clone())),
            _ => (None, None),
        };
        if let Err(e) = self.append(
            &call.session_id,
            LogRecord::ApprovalResolved {
                approval_id: call.approval_id.clone(),
                call_id: call.call_id.clone(),
                decision: decision.label().into(),
                by: "author".into(),
                reason,
                edited_args: edited,
            },
        ) {
            let what = format!("the decision ({})", decision.label());
            return not_recorded(tc, &what, &e);
        }
        if let Decision::Reject { reason } = decision {
            return rejected(tc, reason);
        }
        let Admitted { tool, ctx, args } = match self.admit(Actor::Agent, &call.session_id, tc) {
            Ok(a) => a,
            Err(r) => return *r,
        };
        // A read that sends data off the machine: the author approved where it goes.
        let egress = match egress_only(&tool, &ctx, &args, tc) {
            Ok(e) => e,
            Err(e) => return CallResult::fail(tc, CallStatus::ToolError, e),
        };
        if let Some(requests) = egress {
            return match decision {
                Decision::Edit { new_args } => match self.validate_edit(tc, new_args) {
                    Ok(a) => self.execute(tool, ctx, tc, a, None).await,
                    Err(r) => *r,
                },
                d => {
                    if d == Decision::ApproveForSession && call.session_grant_allowed {
                        self.grant_egress(&call.session_id, &requests);
                    }
                    self.execute(tool, ctx, tc, args, None).await
                }
            };
        }
        let (args, check) = match decision {
            Decision::Edit { new_args } => match self.validate_edit(tc, new_args) {
                // The author wrote these arguments: nothing of the old preview binds them.
                Ok(a) => (a, false),
                Err(r) => return *r,
            },
            Decision::ApproveForSession => {
                if call.session_grant_allowed {
                    let targets = tool.write_targets(&ctx, &args);
                    self.grant(&call.session_id, &call.tool, &targets);
                }
                (args, true)
            }
            _ => (args, true),
        };
        if tool.is_staging() {
            let held = match self.stage(&tool, &ctx, &args).await {
                Err(e) => return CallResult::fail(tc, CallStatus::ToolError, e.to_string()),
                Ok(Staged::Done(out)) => return self.finish(&call.session_id, tc, Ok(out)),
                Ok(Staged::Held(h)) => h,
            };
            if check {
                if let Some(why) = stale_reason(&call.preview, &held.preview) {
                    held.rollback();
                    return stale(tc, &why);
                }
            }
            return self.resolve_held(&call.session_id, tc, held, true).await;
        }
        if check {
            match self.preview(&tool, &ctx, &args).await {
                Ok(now) => {
                    if let Some(why) = stale_reason(&call.preview, &now) {
                        return stale(tc, &why);
                    }
                }
                Err(e) => return stale(tc, &format!("it can no longer be previewed: {e}")),
            }
        }
        let targets = tool.write_targets(&ctx, &args);
        self.execute(tool, ctx, tc, args, Some(targets)).await
    }

    /// Give the calls of the paused turn that never ran their "skipped" result, as the live
    /// run does when a call waits, so the transcript the model reads next is whole.
    fn close_paused_turn(&self, call: &PendingCall) {
        let Ok(log) = self.session_log(&call.session_id) else {
            return;
        };
        let Some(turn) = log.lines.iter().rev().find_map(|l| match &l.record {
            LogRecord::Assistant { tool_calls, .. }
                if tool_calls.iter().any(|c| c.id == call.call_id) =>
            {
                Some(tool_calls.clone())
            }
            _ => None,
        }) else {
            return;
        };
        let answered: HashSet<&str> = log
            .lines
            .iter()
            .filter_map(|l| match &l.record {
                LogRecord::ToolResult { call_id, .. } => Some(call_id.as_str()),
                _ => None,
            })
            .collect();
        for c in turn.iter().filter(|c| !answered.contains(c.id.as_str())) {
            let r = CallResult::fail(
                c,
                CallStatus::Cancelled,
                format!(
                    "skipped: {} was waiting for the author; the turn ended there. Call this again if it is still needed.",
                    call.tool
                ),
            );
            self.record_result(&call.session_id, r);
        }
    }
}

/// The requests of a call that only sends data off the machine (a non-mutating egress
/// tool: it waited for the author because of where it sends, and changes nothing).
fn egress_only(
    tool: &Arc<dyn super::tool::Tool>,
    ctx: &super::tool::ToolCtx,
    args: &super::tool::CallArgs,
    tc: &ToolCall,
) -> Result<Option<Vec<EgressRequest>>, String> {
    if !tool.effects().egress || tool.mutates().for_call(&tc.arguments) {
        return Ok(None);
    }
    tool.egress(ctx, args)
        .map(Some)
        .map_err(|e| format!("it can no longer be sent: {e}"))
}

/// Why a call's target no longer matches the preview the author would approve.
/// Targets with fingerprints bind a preview; a preview without them (the staging tools keep
/// their fingerprint in the held change, which a restart loses) binds by what it shows.
fn stale_reason(shown: &Preview, now: &Preview) -> Option<String> {
    if shown.targets == now.targets {
        if !shown.targets.is_empty() || shown.body == now.body {
            return None;
        }
        return Some(format!(
            "it would now change something else than its preview showed ({})",
            now.summary
        ));
    }
    let changed = changed_targets(&shown.targets, &now.targets);
    Some(format!(
        "its target changed since the preview: {}",
        changed.join(", ")
    ))
}

fn stale(tc: &ToolCall, why: &str) -> CallResult {
    let mut r = CallResult::fail(
        tc,
        CallStatus::Stale,
        format!(
            "stale: this {} call cannot run as its preview showed: {why}; nothing was changed. Read it again and propose the change anew.",
            tc.name
        ),
    );
    r.details = Some(serde_json::json!({"reason": why}));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> PendingCall {
        PendingCall {
            approval_id: id.into(),
            call_id: "c".into(),
            session_id: "1".into(),
            profile: "writer".into(),
            mode: Mode::Normal,
            tool: "write".into(),
            args: serde_json::json!({}),
            preview: Preview {
                summary: "s".into(),
                body: PreviewBody::Text { text: "t".into() },
                targets: vec![],
            },
            requested_at: "2026-01-01T00:00:00Z".into(),
            session_grant_allowed: false,
            parts: false,
        }
    }

    #[test]
    fn an_id_that_could_name_another_path_is_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let store = PendingStore::new(dir.path());
        for bad in ["../escape", "a/b", "", "ap 1"] {
            assert!(store.save(&call(bad)).is_err(), "{bad:?} was written");
        }
        assert!(!dir.path().join("escape.json").exists());
        store.save(&call("ap-1")).unwrap();
        let loaded = store.load();
        assert_eq!(loaded.calls, vec![call("ap-1")]);
        assert!(loaded.problems.is_empty());
        store.remove("ap-1").unwrap();
        // Removing twice, or an id that names no file, is fine.
        store.remove("ap-1").unwrap();
        store.remove("../escape").unwrap();
        assert!(store.load().calls.is_empty());
    }

    #[test]
    fn a_newer_format_is_reported_and_left_unapproved() {
        let dir = tempfile::tempdir().unwrap();
        let store = PendingStore::new(dir.path());
        let text = serde_json::json!({"version": 99, "call": call("ap-2")}).to_string();
        std::fs::create_dir_all(store.dir()).unwrap();
        std::fs::write(store.dir().join("ap-2.json"), text).unwrap();
        let loaded = store.load();
        assert!(loaded.calls.is_empty());
        assert!(
            loaded.problems[0].contains("newer nbook"),
            "{:?}",
            loaded.problems
        );
    }
}
