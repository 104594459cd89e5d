//! The author as a principal: every change the author makes in the TUI is a tool call through
//! the same dispatch as an agent's (admit, validate, preview, stale check, run, log), by the
//! actor [`Actor::Author`], auto-approved because the author made it.
//!
//! Calls are logged in the project's author session (`author.jsonl`, built-in system-only
//! profile `author`, created once per project and reused): a `tool_call` record by `author`,
//! the approval requested and resolved by `author`, and the result — and they emit the same
//! events as an agent's change (`log`, `domains_changed`, `files_changed`), so every pane and
//! every other engine client sees them. [`Engine::author_preview`] is the dry run the author
//! confirms; passing it back to [`Engine::author_call`] makes the call fail as stale if what it
//! was computed against changed meanwhile.

use std::sync::Arc;

use serde_json::Value;

use super::dispatch::{Approval, CallResult, CallStatus};
use super::session_log::SessionLog;
use super::tool::Staged;
use super::types::*;
use super::{Engine, EngineError, SessionRt};

/// The built-in profile of the author session. Reserved: a profile file with this key outside
/// the built-ins is reported and ignored.
pub const AUTHOR_PROFILE: &str = "author";
/// The author session's id (its log is `.nbook/agent/sessions/author.jsonl`).
pub const AUTHOR_SESSION_ID: &str = "author";
/// The author session's title, as the Sessions pane lists it.
pub const AUTHOR_SESSION_TITLE: &str = "Your own edits (author, from the TUI)";

impl Engine {
    /// The project's author session: created on first use, then reused (also by later runs,
    /// which load it from its log).
    pub fn author_session(&self) -> Result<SessionId, EngineError> {
        let id = AUTHOR_SESSION_ID.to_string();
        let profile = self
            .profiles()
            .get(AUTHOR_PROFILE)
            .ok_or_else(|| EngineError::UnknownProfile(AUTHOR_PROFILE.to_string()))?;
        let path = self.ws.sessions_dir().join(format!("{id}.jsonl"));
        let info = {
            let mut st = self.state();
            if st.sessions.contains_key(&id) {
                return Ok(id);
            }
            // Another process may have created it since we loaded the sessions.
            let fresh = super::session_log::read_log(&path)
                .map(|r| r.lines.is_empty())
                .unwrap_or(true);
            let log = SessionLog::open_append(&path).map_err(|source| EngineError::Log {
                path: path.display().to_string(),
                source,
            })?;
            let rt = SessionRt::fresh(&id, profile, AUTHOR_SESSION_TITLE, Mode::Normal, None, log);
            let info = rt.info.clone();
            st.sessions.insert(id.clone(), rt);
            fresh.then_some(info)
        };
        if let Some(info) = info {
            let header = LogRecord::Header {
                session_id: id.clone(),
                profile: AUTHOR_PROFILE.into(),
                mode: Mode::Normal,
                title: AUTHOR_SESSION_TITLE.into(),
                parent: None,
            };
            if let Err(e) = self.append(&id, header) {
                // Without its header the log would not load again: try anew next time.
                self.state().sessions.remove(&id);
                return Err(e);
            }
            self.emit(EngineEvent::Session { session: info });
        }
        Ok(id)
    }

    /// A call by the author: logged as a `tool_call` by `author` in the author session, then
    /// dispatched like an agent's call and approved by `author`. `seen` is the preview the
    /// author confirmed, if any: when the call's own preview has other targets, it fails as
    /// stale and changes nothing.
    pub async fn author_call(
        self: &Arc<Self>,
        tool: &str,
        args: Value,
        seen: Option<&Preview>,
    ) -> CallResult {
        let call = ToolCall {
            id: self.next_call_id(),
            name: tool.to_string(),
            arguments: args,
        };
        let session = match self.author_session() {
            Ok(s) => s,
            Err(e) => {
                return CallResult::fail(
                    &call,
                    CallStatus::LogFailed,
                    format!(
                        "not run: the author session cannot be opened ({e}); nothing was changed"
                    ),
                )
            }
        };
        let record = LogRecord::ToolCall {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            args: call.arguments.clone(),
            by: Actor::Author.as_str().into(),
        };
        if let Err(e) = self.append(&session, record) {
            return CallResult::fail(
                &call,
                CallStatus::LogFailed,
                format!("not run: the call could not be written to the author session's log, and nothing runs without its record; nothing was changed. {e}"),
            );
        }
        let approval = Approval::Auto {
            decision: Decision::Approve,
            by: Actor::Author.as_str(),
        };
        self.call_by(Actor::Author, &session, call, approval, seen)
            .await
    }

    /// What an author call would change, computed by the tool's own dry run exactly as the call
    /// computes it (nothing is changed or logged). A call that would change nothing, or cannot
    /// run at all, is the error result the call itself would return.
    pub async fn author_preview(
        self: &Arc<Self>,
        tool: &str,
        args: &Value,
    ) -> Result<Preview, CallResult> {
        let call = ToolCall {
            id: self.next_call_id(),
            name: tool.to_string(),
            arguments: args.clone(),
        };
        let session = self
            .author_session()
            .map_err(|e| CallResult::fail(&call, CallStatus::ToolError, format!("{e}")))?;
        let super::dispatch::Admitted { tool, ctx, args } =
            self.admit(Actor::Author, &session, &call).map_err(|r| *r)?;
        // A coded refusal keeps its details (e.g. the changes that stand in a revert's way).
        let failed = |e: super::tool::ToolError| CallResult::tool_error(&call, &e);
        if tool.is_staging() {
            return match self.stage(&tool, &ctx, &args).await.map_err(failed)? {
                Staged::Held(held) => {
                    let preview = held.preview.clone();
                    held.rollback();
                    Ok(preview)
                }
                Staged::Done(_) => Err(CallResult::fail(
                    &call,
                    CallStatus::ToolError,
                    "this call changes nothing",
                )),
            };
        }
        if !tool.mutates().for_call(args.raw()) {
            return Err(CallResult::fail(
                &call,
                CallStatus::ToolError,
                format!("{} changes nothing; there is nothing to preview", call.name),
            ));
        }
        self.preview(&tool, &ctx, &args).await.map_err(failed)
    }
}

/// A preview as lines of text, for a confirmation dialog: one line per changed record with its
/// field changes under it, the text of a text preview, the statement of SQL, …
pub fn preview_lines(p: &Preview) -> Vec<String> {
    match &p.body {
        PreviewBody::Records { changes } => change_lines(changes),
        PreviewBody::Text { text } => text.lines().map(str::to_string).collect(),
        PreviewBody::Statement { sql, .. } => sql.lines().map(str::to_string).collect(),
        PreviewBody::Command { command, cwd, .. } => vec![format!("$ {command}  (in {cwd})")],
        PreviewBody::Files { changes } => changes
            .iter()
            .map(|c| format!("{:?} {} (+{} -{})", c.kind, c.path, c.added, c.removed))
            .collect(),
        PreviewBody::Egress { requests, .. } => requests
            .iter()
            .map(|r| format!("{} {}", r.method, r.url))
            .collect(),
    }
}

/// Lines describing record changes: `<action> <record>`, then `  field: before → after`.
pub fn change_lines(changes: &[RecordChange]) -> Vec<String> {
    let mut out = Vec::new();
    for c in changes {
        out.push(format!("{} {}", c.action, c.record));
        for f in &c.fields {
            out.push(format!(
                "  {}: {} → {}",
                f.field,
                short(&f.before),
                short(&f.after)
            ));
        }
    }
    out
}

fn short(v: &Value) -> String {
    let s = match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(59).collect();
        format!("{cut}…")
    } else {
        s
    }
}
