//! `nbook call TOOL`: one tool call, headless. `--approve`/`--reject` stand in for the
//! author's key; without them a call that needs approval changes nothing and exits 3.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use super::{exit, note, open_engine, out, Failure};
use crate::config::Dirs;
use crate::engine::{Approval, CallStatus, Decision, Mode, ToolCall};

pub struct CallArgs {
    pub tool: String,
    pub project: PathBuf,
    pub profile: String,
    pub mode: Mode,
    pub approve: bool,
    pub reject: bool,
    pub args: Option<String>,
    /// The board task the session works on (session state `board.task`).
    pub task: Option<String>,
}

pub fn exit_code(status: CallStatus) -> u8 {
    match status {
        CallStatus::Ok => exit::OK,
        CallStatus::InvalidArgs | CallStatus::UnknownTool => exit::USAGE,
        CallStatus::NeedsApproval => exit::NEEDS_APPROVAL,
        CallStatus::NotAllowed => exit::NOT_ALLOWED,
        CallStatus::ToolError
        | CallStatus::Rejected
        | CallStatus::Refused
        | CallStatus::Stale
        | CallStatus::Cancelled
        | CallStatus::LogFailed => exit::TOOL_ERROR,
    }
}

fn read_args(given: Option<String>) -> Result<Value, Failure> {
    let text = match given {
        Some(t) => t,
        None if !std::io::stdin().is_terminal() => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| Failure::usage(format!("cannot read arguments from stdin: {e}")))?;
            s
        }
        None => String::new(),
    };
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::usage(format!("--args is not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(Failure::usage(
            "--args must be a JSON object, e.g. '{\"path\": \"AGENTS.md\"}'",
        ));
    }
    Ok(v)
}

/// Make the CLI session work on `task` (checked to exist), or on none: the session is reused
/// across calls, so a task set by an earlier `--task` is cleared when this call names none.
fn set_task(
    engine: &crate::engine::Engine,
    session: &str,
    task: Option<&str>,
) -> Result<(), Failure> {
    use crate::tools::fusion::SESSION_TASK;
    let value = match task.map(str::trim) {
        Some(id) => {
            let b = crate::board::Board::new(engine.workspace().root(), engine.workspace().name());
            b.read(|c| crate::board::tasks::require(c, id))
                .map_err(|e| Failure::usage(format!("--task {id}: {e}")))?;
            Value::String(id.to_string())
        }
        None if engine.session_state(session).contains_key(SESSION_TASK) => Value::Null,
        None => return Ok(()),
    };
    engine
        .set_session_state(session, vec![(SESSION_TASK.to_string(), value)])
        .map_err(|e| Failure::tool(e.to_string()))
}

pub async fn call(a: CallArgs, dirs: Dirs) -> Result<u8, Failure> {
    let args = read_args(a.args)?;
    let engine = Arc::new(open_engine(&a.project, &dirs)?);
    let session = engine
        .open_cli_session(&a.profile, a.mode)
        .map_err(Failure::usage)?;
    set_task(&engine, &session, a.task.as_deref())?;
    let approval = if a.approve {
        Approval::Auto {
            decision: Decision::Approve,
            by: "cli",
        }
    } else if a.reject {
        Approval::Auto {
            decision: Decision::Reject {
                reason: Some("rejected with --reject".into()),
            },
            by: "cli",
        }
    } else {
        Approval::FailWithRemedy("Re-run nbook call with --approve or --reject.")
    };
    let result = engine
        .call(
            &session,
            ToolCall {
                id: String::new(),
                name: a.tool,
                arguments: args,
            },
            approval,
        )
        .await;
    let json = serde_json::to_string_pretty(&result).map_err(Failure::tool)?;
    out(crate::text::escape_json(&json))?;
    if !result.ok {
        note(format!(
            "nbook: {}",
            crate::text::escape_for_terminal(result.content.lines().next().unwrap_or_default())
        ));
    }
    Ok(exit_code(result.status))
}
