//! `bash`: run a shell command with the project root as its working directory, a timeout, and
//! output cut to its last 2000 lines / 50 KB. It is a trusted shell (NeuroBook's rule): it is
//! not confined to the project, which is why the `supervised` policy asks before each command.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use tokio_util::sync::CancellationToken;

use crate::engine::jobs::{JobKind, JobStart};
use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{Preview, PreviewBody};

const DEFAULT_TIMEOUT_SECS: u64 = 120;
const MAX_TIMEOUT_SECS: u64 = 3600;
const TAIL_LINES: usize = 2000;
const TAIL_BYTES: usize = 50 * 1024;

pub struct Bash;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    #[schemars(length(min = 1))]
    pub command: String,
    /// Seconds before the command is killed (default 120)
    #[schemars(range(min = 1, max = "MAX_TIMEOUT_SECS"))]
    pub timeout: Option<u64>,
    /// Run as a background job and return its jobId at once; the result arrives as a message when it ends. Do not poll.
    pub background: Option<bool>,
}

fn command_arg(args: &BashArgs) -> &str {
    &args.command
}

fn timeout_arg(args: &BashArgs) -> u64 {
    args.timeout
        .unwrap_or(DEFAULT_TIMEOUT_SECS)
        .clamp(1, MAX_TIMEOUT_SECS)
}

/// Keep the tail of the output: the end of a build log is where the error is.
pub fn tail(text: &str) -> (String, bool) {
    let lines: Vec<&str> = text.lines().collect();
    let mut start = lines.len().saturating_sub(TAIL_LINES);
    let mut cut = start > 0;
    while start < lines.len()
        && lines[start..].iter().map(|l| l.len() + 1).sum::<usize>() > TAIL_BYTES
    {
        start += 1;
        cut = true;
    }
    let mut out = lines[start..].join("\n");
    if cut {
        out = format!(
            "[output cut: showing the last {} of {} lines]\n{out}",
            lines.len() - start,
            lines.len()
        );
    }
    (out, cut)
}

impl TypedTool for Bash {
    type Args = BashArgs;
    const NAME: &'static str = "bash";
    const GROUP: &'static str = "files";
    const DESCRIPTION: &'static str = "Run a shell command (bash -c) in the project root: search (rg), list, run scripts. Output is cut to its last 2000 lines / 50 KB; a non-zero exit is an error. Do not use it to write files; use write, edit or apply_patch.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        // Its network use is gated with every call, as a mutating tool.
        Effects::touches(&[Files, Network]).prompt_gated_in_neurobook()
    };
    fn write_targets(&self, _ctx: &ToolCtx, args: &BashArgs) -> Vec<String> {
        vec![format!("$ {}", command_arg(args))]
    }
    fn preview(&self, ctx: &ToolCtx, args: &BashArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let command = command_arg(args).to_string();
        let first = command.lines().next().unwrap_or_default();
        Ok(Preview {
            summary: format!("Run `{}`", first.chars().take(80).collect::<String>()),
            body: PreviewBody::Command {
                command,
                cwd: ctx.workspace.root().display().to_string(),
                timeout_secs: Some(timeout_arg(args)),
            },
            targets: Vec::new(),
        })
    }
    fn run(&self, ctx: &ToolCtx, args: &BashArgs) -> Result<ToolOutput, ToolError> {
        let command = command_arg(args).to_string();
        let timeout = Duration::from_secs(timeout_arg(args));
        if args.background == Some(true) {
            return start_background(ctx, command, timeout);
        }
        // A cancelled run abandons this call: its token kills the command.
        finish(run_command(
            ctx.workspace.root(),
            &command,
            timeout,
            Some(&ctx.cancel),
        )?)
    }
}

/// How a command ended.
pub struct CommandRun {
    /// `None`: killed (timeout or cancel).
    pub status: Option<std::process::ExitStatus>,
    pub output: String,
    pub timeout: Duration,
    pub cancelled: bool,
}

/// Run `bash -c command` in `cwd`, killing its whole process group on timeout or cancel.
pub fn run_command(
    cwd: &std::path::Path,
    command: &str,
    timeout: Duration,
    cancel: Option<&CancellationToken>,
) -> Result<CommandRun, ToolError> {
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| ToolError::failed(format!("cannot start bash: {e}")))?;
    // Drain both pipes on threads so a chatty command never blocks on a full pipe.
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let mut cancelled = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => {
                kill_group(&mut child);
                break None;
            }
            Ok(None) if cancel.is_some_and(|c| c.is_cancelled()) => {
                cancelled = true;
                kill_group(&mut child);
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(ToolError::failed(format!("waiting for bash failed: {e}"))),
        }
    };
    let mut text = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    if !stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&stderr);
    }
    Ok(CommandRun {
        status,
        output: text,
        timeout,
        cancelled,
    })
}

/// A finished command as a tool result: non-zero exit and timeouts are errors.
fn finish(run: CommandRun) -> Result<ToolOutput, ToolError> {
    let (shown, truncated) = tail(&run.output);
    match run.status {
        None if run.cancelled => Err(ToolError::failed(format!(
            "command was cancelled and killed\n{shown}"
        ))),
        None => Err(ToolError::failed(format!(
            "command timed out after {}s and was killed\n{shown}",
            run.timeout.as_secs()
        ))),
        Some(s) if s.success() => Ok(ToolOutput {
            content: if shown.is_empty() {
                "(no output)".into()
            } else {
                shown
            },
            details: Some(json!({"exitCode": 0, "truncated": truncated})),
            changed_paths: Vec::new(),
            state_updates: Vec::new(),
        }),
        Some(s) => Err(ToolError::failed(format!(
            "command exited with {}\n{shown}",
            s.code()
                .map_or("a signal".to_string(), |c| format!("code {c}"))
        ))),
    }
}

/// `background: true`: record a bash job, run the command on its own thread, and return the
/// job id at once. The job's end is delivered to this session by the agent host.
fn start_background(
    ctx: &ToolCtx,
    command: String,
    timeout: Duration,
) -> Result<ToolOutput, ToolError> {
    let engine = ctx.services.clone().ok_or_else(|| {
        ToolError::failed("background commands need the engine's job store; run without background")
    })?;
    let (job_id, cancel) = engine
        .jobs()
        .start(JobStart {
            kind: JobKind::Bash,
            title: format!("$ {}", command.lines().next().unwrap_or_default()),
            owner_session_id: Some(ctx.session_id.clone()),
            origin_tool_call_id: Some(ctx.call_id.clone()),
            reference: json!({"command": command}),
            preview: None,
        })
        .map_err(|e| ToolError::failed(e.to_string()))?;
    let root = ctx.workspace.root().to_path_buf();
    let id = job_id.clone();
    let cmd = command.clone();
    std::thread::spawn(move || {
        let outcome = run_command(&root, &cmd, timeout, Some(&cancel)).and_then(finish);
        let result = match outcome {
            Ok(out) => Ok(json!({"exitCode": 0, "output": out.content})),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = engine.jobs().finish(&id, result) {
            tracing::warn!("bash job {id}: {e}");
        }
    });
    let details =
        json!({"jobId": job_id, "command": command, "status": "started", "background": true});
    Ok(ToolOutput {
        content: details.to_string(),
        details: Some(details),
        ..Default::default()
    })
}

use std::os::unix::process::CommandExt;

/// Kill the whole process group so children of the shell die too.
fn kill_group(child: &mut std::process::Child) {
    let pid = child.id() as i32;
    // Signal the group with the `kill` utility; no libc binding needed.
    // `-s KILL -- -PID`: procps' kill reads a bare `-PID` after `-KILL` as another option and
    // signals nothing, which left a timed-out command running to its end.
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{pid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::tail;

    #[test]
    fn tail_keeps_the_end() {
        let text: String = (0..3000).map(|i| format!("line {i}\n")).collect();
        let (out, cut) = tail(&text);
        assert!(cut);
        assert!(out.ends_with("line 2999"));
        assert!(!out.contains("line 999\n"));
    }
}
