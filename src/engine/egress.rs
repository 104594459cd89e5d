//! The egress gate: calls of tools declared `egress` (they send data off the machine) go
//! through the approval queue like mutating calls, even when they change nothing.
//!
//! Under `supervised` the first request to each host in a session waits for the author. The
//! preview shows every request the call may send (URL with long values elided with their
//! length, body fields, the host), which session asked, and what that session and the
//! sessions that started it did before: the engine keeps, per session and in memory for this
//! process, the latest calls that read or changed local data (`Seen`). The session log holds
//! the full history. "Approve for session" grants the HOSTS, not the tool: a later call of any
//! egress tool to a granted host runs at once. `[web] allow_egress` pre-allows hosts.
//!
//! Also here: the after-call bookkeeping every call gets (what it saw, which domains changed).

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::Value;

use super::dispatch::{rejected, Approval, CallResult, CallStatus};
use super::effects::{display_url, elide_value, normalize_host, Domain, Effects, EgressRequest};
use super::policy::{self, EgressFacts, Verdict};
use super::tool::{CallArgs, Tool, ToolCtx};
use super::types::*;
use super::Engine;

/// How many earlier calls per session the egress preview can show.
const SEEN_KEEP: usize = 8;
/// How many sessions up the parent chain the preview looks.
const SEEN_DEPTH: usize = 4;

/// The latest calls of one session that read or changed local data.
#[derive(Default)]
pub struct Seen {
    recent: VecDeque<String>,
    total: usize,
}

impl Engine {
    /// A call of an egress tool that changes nothing: the egress gate alone decides.
    pub(super) async fn call_egress(
        self: &Arc<Self>,
        tool: Arc<dyn Tool>,
        ctx: ToolCtx,
        call: &ToolCall,
        args: CallArgs,
        requests: Vec<EgressRequest>,
        approval: Approval,
    ) -> CallResult {
        let grant_allowed = match self.egress_verdict(&ctx, call, &requests) {
            Verdict::Run => return self.execute(tool, ctx, call, args, None).await,
            Verdict::Refuse(why) => return CallResult::fail(call, CallStatus::Refused, why),
            Verdict::Ask { grant_allowed } => grant_allowed,
        };
        let preview = self.egress_preview(&ctx, &requests);
        let decision = match self
            .await_decision(&ctx, call, &preview, grant_allowed, approval)
            .await
        {
            Ok(d) => d,
            Err(r) => return *r,
        };
        match decision {
            Decision::Reject { reason } => rejected(call, reason),
            Decision::Edit { new_args } => match self.validate_edit(call, new_args) {
                Ok(new_args) => self.execute(tool, ctx, call, new_args, None).await,
                Err(r) => *r,
            },
            Decision::ApproveParts { .. } => super::dispatch::not_in_parts(call),
            d @ (Decision::Approve | Decision::ApproveForSession) => {
                if d == Decision::ApproveForSession && grant_allowed {
                    self.grant_egress(&ctx.session_id, &requests);
                }
                self.execute(tool, ctx, call, args, None).await
            }
        }
    }

    /// The hosts a call sends to; empty when any request could not name its host.
    fn egress_hosts(requests: &[EgressRequest]) -> Vec<String> {
        if requests.is_empty() || requests.iter().any(|r| r.host.is_empty()) {
            return Vec::new();
        }
        let mut hosts: Vec<String> = requests.iter().map(|r| normalize_host(&r.host)).collect();
        hosts.sort();
        hosts.dedup();
        hosts
    }

    pub(super) fn egress_verdict(
        &self,
        ctx: &ToolCtx,
        call: &ToolCall,
        requests: &[EgressRequest],
    ) -> Verdict {
        let hosts = Self::egress_hosts(requests);
        let allowed: Vec<String> = self
            .config()
            .web
            .allow_egress
            .iter()
            .map(|h| normalize_host(h))
            .collect();
        let not_preallowed: Vec<String> = hosts
            .iter()
            .filter(|h| !allowed.contains(h))
            .cloned()
            .collect();
        let not_granted: Vec<String> = {
            let st = self.state();
            not_preallowed
                .iter()
                .filter(|h| {
                    !st.egress_grants
                        .contains(&(ctx.session_id.clone(), (*h).clone()))
                })
                .cloned()
                .collect()
        };
        policy::decide_egress(
            &self.config().approval,
            &EgressFacts {
                tool: &call.name,
                hosts: &hosts,
                not_preallowed: &not_preallowed,
                not_granted: &not_granted,
            },
        )
    }

    pub(super) fn grant_egress(&self, session_id: &str, requests: &[EgressRequest]) {
        let hosts = Self::egress_hosts(requests);
        let mut st = self.state();
        for h in hosts {
            st.egress_grants.insert((session_id.to_string(), h));
        }
    }

    /// What the author sees before data leaves the machine.
    pub(super) fn egress_preview(&self, ctx: &ToolCtx, requests: &[EgressRequest]) -> Preview {
        let shown: Vec<EgressShown> = requests
            .iter()
            .map(|r| EgressShown {
                host: r.host.clone(),
                method: r.method.to_string(),
                url: display_url(&r.url),
                body: r
                    .body
                    .iter()
                    .map(|(k, v)| format!("{k}={}", elide_value(v)))
                    .collect(),
            })
            .collect();
        let hosts = Self::egress_hosts(requests);
        let summary = match hosts.as_slice() {
            [] => "Send data off the machine".to_string(),
            [one] => format!("Send a request to {one}"),
            many => format!("Send requests to one of {}", many.join(", ")),
        };
        Preview {
            summary,
            body: PreviewBody::Egress {
                requests: shown,
                session: format!("{} ({})", ctx.session_id, ctx.profile.key),
                earlier: self.earlier_calls(&ctx.session_id),
            },
            targets: Vec::new(),
        }
    }

    /// The asking session's latest local-data calls, then its parent's, and so on.
    fn earlier_calls(&self, session_id: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut next = Some(session_id.to_string());
        for depth in 0..SEEN_DEPTH {
            let Some(id) = next.take() else { break };
            let info = self.session(&id);
            let profile = info.as_ref().map(|i| i.profile.clone()).unwrap_or_default();
            let role = if depth == 0 { "" } else { ", which started it" };
            let st = self.state();
            match st.seen.get(&id) {
                Some(seen) if seen.total > 0 => {
                    let older = seen.total - seen.recent.len();
                    if older > 0 {
                        out.push(format!(
                            "session {id} ({profile}{role}): … {older} earlier call(s)"
                        ));
                    }
                    for note in &seen.recent {
                        out.push(format!("session {id} ({profile}{role}): {note}"));
                    }
                }
                _ => out.push(format!(
                    "session {id} ({profile}{role}): no project data read since nbook started"
                )),
            }
            drop(st);
            next = info.and_then(|i| i.parent);
        }
        out
    }

    /// Bookkeeping after a successful call: remember what it saw (for egress previews) and
    /// tell clients which domains changed (from the tool's declared effects).
    pub(super) fn after_success(&self, session_id: &str, call: &ToolCall, committed: bool) {
        let Some(registered) = self.registry.get(&call.name) else {
            return;
        };
        let tool = &registered.tool;
        let effects = tool.effects();
        if sees_local_data(&effects) {
            let note = call_note(&call.name, &call.arguments);
            let mut st = self.state();
            let seen = st.seen.entry(session_id.to_string()).or_default();
            seen.total += 1;
            seen.recent.push_back(note);
            while seen.recent.len() > SEEN_KEEP {
                seen.recent.pop_front();
            }
        }
        let changed = if tool.is_staging() {
            committed
        } else {
            tool.mutates().for_call(&call.arguments)
        };
        if changed && !effects.domains.is_empty() {
            self.emit(EngineEvent::DomainsChanged {
                session_id: session_id.to_string(),
                tool: call.name.clone(),
                domains: effects.domains.to_vec(),
            });
        }
    }
}

/// Calls that bring project data into the agent's context (or change it): everything but
/// egress itself and pure control flow.
fn sees_local_data(e: &Effects) -> bool {
    !e.egress && e.domains.iter().any(|d| *d != Domain::Control)
}

/// `read path=manuscript/secret.md` — the tool and its scalar arguments, long values elided.
fn call_note(tool: &str, args: &Value) -> String {
    let mut parts = vec![tool.to_string()];
    if let Some(map) = args.as_object() {
        for (k, v) in map {
            let v = match v {
                Value::String(s) => elide_value(s),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Null => continue,
                Value::Array(a) => format!("[{} item(s)]", a.len()),
                Value::Object(_) => "{…}".to_string(),
            };
            parts.push(format!("{k}={v}"));
        }
    }
    let note = parts.join(" ");
    if note.chars().count() > 160 {
        let head: String = note.chars().take(159).collect();
        format!("{head}…")
    } else {
        note
    }
}
