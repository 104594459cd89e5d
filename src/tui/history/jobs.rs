//! The History view's blocking work, run by the runtime on the blocking pool and returned as
//! ticketed actions: loading the change history and the session grants, the reverse preview of
//! a change, reverting changes (each a `revert_change` call by the author, newest first, each
//! on the preview the author saw), and revoking a grant. Plain functions over the engine so
//! tests call them directly.

use std::sync::Arc;

use crate::engine::history::Entry;
use crate::engine::history::Grant;
use crate::engine::{CallResult, Engine, Preview};
use crate::tools::revert::revert_call;

/// How many entries the view lists (newest first).
pub const LISTED: usize = 500;

#[derive(Clone, Debug, PartialEq)]
pub enum HistoryJob {
    Load,
    /// The reverse preview of entry `id` (or why it cannot be reverted on its own).
    Reverse(i64),
    /// Revert these entries, in this order (newest first).
    Revert(Vec<i64>),
    Revoke(Grant),
}

/// Why an entry cannot be reverted on its own, and what would revert it.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub message: String,
    /// Every entry to revert, newest first, ending with the one asked for (empty: no way).
    pub plan: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum HistoryJobResult {
    Loaded(Result<(Vec<Entry>, Vec<Grant>), String>),
    Reverse(i64, Result<Preview, Refusal>),
    /// The entries reverted (in order) and, if one failed, why (the rest were not tried).
    Reverted(Vec<i64>, Option<String>),
    Revoked(Grant, bool),
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> Result<T, String> {
    tokio::runtime::Handle::try_current()
        .map(|h| h.block_on(f))
        .map_err(|_| "no engine runtime to run the call on; nothing was changed".to_string())
}

fn refusal(r: &CallResult) -> Refusal {
    let plan = r
        .details
        .as_ref()
        .filter(|d| d.get("code").and_then(|c| c.as_str()) == Some("LATER_CHANGES"))
        .and_then(|d| d.get("plan"))
        .and_then(|p| serde_json::from_value::<Vec<i64>>(p.clone()).ok())
        .unwrap_or_default();
    Refusal {
        message: r.content.clone(),
        plan,
    }
}

pub fn run(engine: &Arc<Engine>, job: HistoryJob) -> HistoryJobResult {
    match job {
        HistoryJob::Load => HistoryJobResult::Loaded(
            engine
                .history(LISTED)
                .map(|h| (h, engine.grants()))
                .map_err(|e| e.to_string()),
        ),
        HistoryJob::Reverse(id) => {
            let (tool, args) = revert_call(id);
            let r = block_on(engine.author_preview(tool, &args)).map_err(|e| Refusal {
                message: e,
                plan: Vec::new(),
            });
            HistoryJobResult::Reverse(id, r.and_then(|p| p.map_err(|r| refusal(&r))))
        }
        HistoryJob::Revert(plan) => {
            let mut done = Vec::new();
            for id in plan {
                let (tool, args) = revert_call(id);
                let r = block_on(async {
                    let seen = engine.author_preview(tool, &args).await?;
                    Ok::<_, CallResult>(engine.author_call(tool, args.clone(), Some(&seen)).await)
                });
                match r {
                    Ok(Ok(r)) if r.ok => done.push(id),
                    Ok(Ok(r)) | Ok(Err(r)) => {
                        return HistoryJobResult::Reverted(done, Some(r.content))
                    }
                    Err(e) => return HistoryJobResult::Reverted(done, Some(e)),
                }
            }
            HistoryJobResult::Reverted(done, None)
        }
        HistoryJob::Revoke(g) => {
            let removed = engine.revoke_grant(&g);
            HistoryJobResult::Revoked(g, removed)
        }
    }
}
