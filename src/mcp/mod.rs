//! `nbook mcp`: nbook's engine served to outside agents (Claude Code, Codex CLI, opencode,
//! Gemini CLI…) over the Model Context Protocol on stdio, through the same gate as nbook's
//! own agents: the profile's allowlist, validation against the generated schemas, the
//! policy, previews and — above all — the author's approval queue.
//!
//! How the pieces fit (data flows `client → server → backend → (attach → TUI's gateway |
//! local gateway) → engine`):
//! - `server` — the MCP edge, the only module that names `rmcp` types.
//! - `catalogue` — the tools a client sees: a profile's allowlist with schemas, titles and
//!   the MCP hints derived from declared effects; plus `nbook_await_approval`.
//! - `backend` — per call: attach to the author's TUI when one has the project open
//!   (`.nbook/mcp.sock`), else run in this process's own engine (a guest of the queue: it
//!   never keeps a TUI started later from owning it).
//! - `attach` / `listen` / `wire` / `peer` — the attach link: the TUI (the process that owns
//!   the queue) listens; JSON lines; owner-only (socket 0600, SO_PEERCRED on both sides).
//! - `gateway` — runs calls in an engine with a wait bound: a call still waiting for the
//!   author after `--wait-ms` returns `pending_approval`; `nbook_await_approval` collects its
//!   result once; a cancelled or abandoned call is withdrawn from the queue.
//! - `outcome` — the results in nbook types, shared by both sides of the link.
//! - `client_config` — the snippets `--print-config` prints for each client.
//!
//! Choices: one session per outside client, in `normal` mode, titled with its
//! `clientInfo.name` and marked as an MCP client; a call that needs no approval returns at
//! once; a client that declares MCP Tasks gets a task for a call that may wait (the edge in
//! `server`), every other client the long-poll tool; elicitation is never used — the decision
//! is always the author's, in nbook.

pub mod attach;
pub mod backend;
pub mod catalogue;
pub mod client_config;
pub mod gateway;
pub mod listen;
pub mod outcome;
pub mod peer;
pub mod server;
pub mod wire;

use serde_json::{json, Value};

use catalogue::AWAIT_TOOL;
use outcome::Outcome;

/// The default profile of outside clients (close to `leader.default`).
pub const DEFAULT_PROFILE: &str = "mcp.default";

/// The default bound a mutating call waits for the author before `pending_approval`.
pub const DEFAULT_WAIT_MS: u64 = 20_000;

/// An outcome as the client reads it (`structuredContent`): `outcome` is `ok` (no approval
/// was needed), `applied`, `applied_with_edits` (with `appliedArgs`), `pending_approval`,
/// `interrupted`, `cancelled`, or the engine's status of a failed call (`rejected`,
/// `stale`, `refused`, `needs_approval`, `invalid_args`, `unknown_tool`, `not_allowed`…).
pub fn outcome_json(o: &Outcome) -> Value {
    match o {
        Outcome::Done { result, resolved } => {
            let status = serde_json::to_value(result.status).unwrap_or(Value::Null);
            let label = if result.ok {
                match resolved {
                    Some(r) if r.edited_args.is_some() => json!("applied_with_edits"),
                    Some(_) => json!("applied"),
                    None => json!("ok"),
                }
            } else {
                status.clone()
            };
            let mut v = json!({"outcome": label, "status": status, "content": result.content});
            if let Some(d) = &result.details {
                v["details"] = d.clone();
            }
            if let Some(r) = resolved {
                v["approvalId"] = json!(r.approval_id);
                v["decision"] = json!(r.decision);
                if let Some(reason) = &r.reason {
                    v["reason"] = json!(reason);
                }
                if let Some(args) = &r.edited_args {
                    v["appliedArgs"] = args.clone();
                }
            }
            v
        }
        Outcome::PendingApproval(p) => json!({
            "outcome": "pending_approval",
            "approvalId": p.approval_id,
            "preview": p.preview,
            "previewHash": p.preview_hash,
            "tool": p.tool,
            "session": p.session_id,
            "next": format!("the author decides in nbook; call {AWAIT_TOOL} with {{\"approvalId\": \"{}\"}} for the result", p.approval_id),
        }),
        Outcome::Interrupted { message } => json!({"outcome": "interrupted", "message": message}),
        Outcome::Cancelled { message } => json!({"outcome": "cancelled", "message": message}),
        Outcome::Unknown { message } => {
            json!({"outcome": "unknown_approval", "message": message})
        }
        Outcome::Failed { message } => json!({"outcome": "failed", "message": message}),
    }
}

#[cfg(test)]
mod tests {
    use super::outcome::{PendingApproval, Resolved};
    use super::*;
    use crate::engine::{CallResult, CallStatus};

    fn result(ok: bool, status: CallStatus) -> Box<CallResult> {
        Box::new(CallResult {
            call_id: "c".into(),
            tool: "write".into(),
            status,
            ok,
            content: "text".into(),
            details: None,
            preview: None,
            waited: true,
        })
    }

    #[test]
    fn outcomes_read_as_the_client_expects() {
        let plain = Outcome::Done {
            result: result(true, CallStatus::Ok),
            resolved: None,
        };
        assert_eq!(outcome_json(&plain)["outcome"], "ok");
        let approved = Outcome::Done {
            result: result(true, CallStatus::Ok),
            resolved: Some(Resolved {
                approval_id: "ap-1".into(),
                decision: "approve".into(),
                reason: None,
                edited_args: None,
            }),
        };
        assert_eq!(outcome_json(&approved)["outcome"], "applied");
        let rejected = Outcome::Done {
            result: result(false, CallStatus::Rejected),
            resolved: Some(Resolved {
                approval_id: "ap-1".into(),
                decision: "reject".into(),
                reason: Some("no".into()),
                edited_args: None,
            }),
        };
        let v = outcome_json(&rejected);
        assert_eq!(v["outcome"], "rejected");
        assert_eq!(v["reason"], "no");
        let pending = Outcome::PendingApproval(PendingApproval {
            approval_id: "ap-2".into(),
            session_id: "3".into(),
            tool: "write".into(),
            preview: "Create x.md".into(),
            preview_hash: "ab".into(),
        });
        let v = outcome_json(&pending);
        assert_eq!(v["outcome"], "pending_approval");
        assert_eq!(v["approvalId"], "ap-2");
        assert_eq!(v["preview"], "Create x.md");
        assert_eq!(
            outcome_json(&Outcome::interrupted())["outcome"],
            "interrupted"
        );
        // The same values cross the attach socket unchanged.
        let wire = serde_json::to_string(&rejected).unwrap();
        assert_eq!(serde_json::from_str::<Outcome>(&wire).unwrap(), rejected);
    }
}
