//! Running one workflow: QuickJS on the run's own thread, an event loop that drives the
//! script's promises and settles agent invocations as their threads report back, a watcher
//! that turns a cancel into "withdraw the question, cancel every session in flight", and the
//! report the run ends with.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rquickjs::function::This;
use rquickjs::{Array, Ctx, Exception, Function, Object, Value as JsValue};
use serde::Serialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::host::{Completion, Host, RunCtx, Shared};
use super::limits::{Limits, Meter, Wall};
use super::sandbox::{self, DefinitionError};
use crate::js;

const PRELUDE: &str = include_str!("prelude.js");
/// The file name inline scripts are compiled under (errors say "line N" of the script).
pub const INLINE_FILE: &str = "inline-script.js";
/// Largest result a run may return, as JSON.
pub const RESULT_LIMIT: usize = 1 << 20;
/// How long a finished run waits for the invocations it left behind to stop.
const STRAY_WAIT: Duration = Duration::from_secs(30);
const CANCELLED: &str = "the workflow run was cancelled";
/// The run's promise is pending, no job is left and no invocation is running.
pub const NEVER_SETTLED: &str = "the workflow's promise never settled: it awaits something nothing resolves (only wf.agents.invoke settles later; check for a promise whose resolve is never called)";

/// Why a run failed; the report carries its message for the agent.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Cancelled, or a limit tripped (the message names the limit and what to look for).
    #[error("{0}")]
    Stopped(String),
    /// The script threw or its promise rejected (with the line in the file).
    #[error("{0}")]
    Script(String),
    #[error(transparent)]
    Definition(#[from] DefinitionError),
    #[error("{NEVER_SETTLED}")]
    NeverSettled,
    #[error("the result cannot be turned into JSON: {0}")]
    NotSerialisable(String),
    #[error("the result is {0} bytes of JSON, more than the {RESULT_LIMIT} allowed; return a summary and leave the bulk in files")]
    ResultTooLarge(usize),
    #[error("the result is not valid JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error(transparent)]
    Start(#[from] js::StartError),
    /// A fault of nbook's own, not of the script.
    #[error("internal: {0}")]
    Internal(String),
}

/// What runs: a workflow file (its definition object's `run`) or an inline script (the body
/// of `async (wf, args) => { … }`).
#[derive(Clone, Debug)]
pub enum Code {
    Definition { code: String, file: String },
    Inline(String),
}

impl Code {
    fn file(&self) -> &str {
        match self {
            Code::Definition { file, .. } => file,
            Code::Inline(_) => INLINE_FILE,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionReport {
    pub session_id: String,
    pub profile_key: String,
    pub title: String,
    pub tokens: u64,
}

/// How a run ended (`run_workflow` with `wait: true` returns this; a background job stores it
/// as its result).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    pub run_id: String,
    pub job_id: String,
    pub workflow_key: String,
    /// completed | failed | cancelled
    pub status: String,
    pub result: Value,
    pub error: Option<String>,
    pub pending_asks: Vec<Value>,
    pub sessions: Vec<SessionReport>,
    pub usage: Usage,
}

/// Run a workflow to its end on this thread (which should have a roomy stack: the runner
/// spawns one of 16 MiB). Never panics on the script's account.
pub fn run(rc: RunCtx, code: &Code, args: &Value) -> RunReport {
    let limits = Limits::from_config(&rc.services.config().workflows);
    let shared = Arc::new(Shared::new(Wall::new(limits.wall)));
    let (tx, rx) = mpsc::channel::<Completion>();
    let done = CancellationToken::new();
    let watcher = {
        let (services, stop, done, shared) = (
            rc.services.clone(),
            rc.stop.clone(),
            done.clone(),
            shared.clone(),
        );
        std::thread::Builder::new()
            .name(format!("{}-watch", rc.job_id))
            .spawn(move || watch(services.as_ref(), &stop, &done, &shared))
            .ok()
    };
    let host = Rc::new(RefCell::new(Host::new(rc.clone(), shared, tx)));
    let info = json!({
        "sessionId": rc.caller_session,
        "jobId": rc.job_id,
        "runId": rc.run_id,
        "workflowKey": rc.workflow_key,
    });
    let outcome = execute(&host, &rx, &rc.stop, &limits, code, args, &info);

    // Invocations the script left running (it returned or failed without awaiting them).
    if host.borrow().outstanding() > 0 {
        rc.stop.cancel();
        host.borrow_mut().pump();
        let until = Instant::now() + STRAY_WAIT;
        while host.borrow().outstanding() > 0 && Instant::now() < until {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(_) => host.borrow_mut().completed(),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
    }
    done.cancel();
    if let Some(w) = watcher {
        let _ = w.join();
    }

    let h = host.borrow();
    let (status, result, error) = match outcome {
        _ if rc.job_token.is_cancelled() => (
            "cancelled",
            Value::Null,
            Some(h.wait_ask_error.clone().unwrap_or_else(|| CANCELLED.into())),
        ),
        Ok(v) => ("completed", v, None),
        Err(e) => ("failed", Value::Null, Some(e.to_string())),
    };
    let mut usage = Usage::default();
    let sessions = h
        .sessions
        .iter()
        .map(|s| {
            let (i, o) = rc
                .services
                .session(&s.session_id)
                .map(|info| (info.input_tokens, info.output_tokens))
                .unwrap_or_default();
            usage.input_tokens += i;
            usage.output_tokens += o;
            SessionReport {
                session_id: s.session_id.clone(),
                profile_key: s.profile_key.clone(),
                title: s.title.clone(),
                tokens: i + o,
            }
        })
        .collect();
    usage.total_tokens = usage.input_tokens + usage.output_tokens;
    let mut detail = h.detail();
    detail["status"] = json!(status);
    detail["error"] = json!(error);
    if let Err(e) = rc.services.jobs().set_detail(&rc.job_id, detail) {
        tracing::warn!("workflow {}: {e}", rc.job_id);
    }
    RunReport {
        run_id: rc.run_id.clone(),
        job_id: rc.job_id.clone(),
        workflow_key: rc.workflow_key.clone(),
        status: status.into(),
        result,
        error,
        pending_asks: h.pending_asks.clone(),
        sessions,
        usage,
    }
}

/// Waits for the run to be stopped (or stops it when its wall clock passes); then, until it
/// has ended, keeps withdrawing the question it waits on and cancelling every session it has
/// in flight (repeating, so an invocation or question that was just being started is caught
/// too).
fn watch(
    services: &dyn crate::engine::services::ToolServices,
    stop: &CancellationToken,
    done: &CancellationToken,
    shared: &Shared,
) {
    while !stop.is_cancelled() && !done.is_cancelled() {
        if shared.wall.check() {
            stop.cancel();
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let host = services.host();
    let mut last: std::collections::HashMap<u64, Instant> = Default::default();
    while !done.is_cancelled() {
        if let Some(id) = shared.current_ask() {
            services.withdraw_input(&id);
        }
        if let Some(h) = &host {
            for (ticket, session) in shared.inflight_sessions() {
                let due = last
                    .get(&ticket)
                    .is_none_or(|t| t.elapsed() >= Duration::from_millis(250));
                if due {
                    h.cancel_session(&session);
                    last.insert(ticket, Instant::now());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn execute(
    host: &Rc<RefCell<Host>>,
    rx: &mpsc::Receiver<Completion>,
    stop: &CancellationToken,
    limits: &Limits,
    code: &Code,
    args: &Value,
    info: &Value,
) -> Result<Value, RunError> {
    let meter = Rc::new(Meter::new(limits));
    let rt = {
        let (stop, meter) = (stop.clone(), meter.clone());
        sandbox::runtime(move || stop.is_cancelled() || meter.check().is_some())?
    };
    let context = sandbox::context(&rt)?;
    let file = code.file();
    // Why the run stopped, if it was stopped (an error from JavaScript then is only the
    // interrupt's "interrupted"), in the order the limits are reported.
    let why: Rc<dyn Fn() -> Option<String>> = {
        let (shared, stop, meter) = (host.borrow().shared.clone(), stop.clone(), meter.clone());
        Rc::new(move || {
            if shared.wall.is_over() {
                Some(shared.wall.message())
            } else if stop.is_cancelled() {
                Some(CANCELLED.to_string())
            } else {
                meter.check().map(|e| e.to_string())
            }
        })
    };
    let stopped = |e: RunError| why().map(RunError::Stopped).unwrap_or(e);
    let thrown = |msg: String| stopped(RunError::Script(msg));
    context.with(|ctx| -> Result<Value, RunError> {
        let (wf, settle, to_json) =
            prelude(&ctx, host.clone(), meter.clone(), why.clone(), args, info).map_err(|e| {
                RunError::Internal(format!(
                    "the wf API failed to load: {}",
                    js::describe(&ctx, e, "prelude.js")
                ))
            })?;
        let args_js: JsValue = wf
            .get("args")
            .map_err(|e| RunError::Internal(js::describe(&ctx, e, "prelude.js")))?;
        let started: JsValue = match code {
            Code::Definition { code, file } => {
                let mut check = || why().map_or(Ok(()), |m| Err(DefinitionError::Stopped(m)));
                let def = sandbox::eval_definition(&ctx, code, file, &mut check)
                    .map_err(|e| stopped(e.into()))?;
                let run: Function = def.get("run").map_err(|_| {
                    RunError::Definition(DefinitionError::Shape(
                        "the workflow object has no run function".into(),
                    ))
                })?;
                run.call((This(def.clone()), wf, args_js))
                    .map_err(|e| thrown(js::describe(&ctx, e, file)))?
            }
            Code::Inline(body) => {
                // Wrapped on the same first line, so line numbers are the script's own.
                let wrapped = format!("(async function (wf, args) {{ \"use strict\"; {body}\n}})");
                let f: Function = ctx
                    .eval_with_options(wrapped, sandbox::options(INLINE_FILE))
                    .map_err(|e| thrown(js::describe(&ctx, e, INLINE_FILE)))?;
                f.call((wf, args_js))
                    .map_err(|e| thrown(js::describe(&ctx, e, INLINE_FILE)))?
            }
        };
        let Some(promise) = started.clone().into_promise() else {
            return to_value(&ctx, &to_json, started, file);
        };
        // No job left: wait for an invocation to report back, which settles its promise.
        let mut idle = || -> Result<bool, RunError> {
            if host.borrow().outstanding() == 0 {
                return Ok(false);
            }
            let got = rx.recv_timeout(Duration::from_millis(100));
            meter.yielded();
            match got {
                Ok((ticket, out)) => {
                    host.borrow_mut().completed();
                    let (ok, text) = match out {
                        Ok(v) => (true, v.to_string()),
                        Err(e) => (false, e.to_string()),
                    };
                    settle
                        .call::<_, ()>((ticket as f64, ok, text))
                        .map_err(|e| thrown(js::describe(&ctx, e, file)))?;
                    Ok(true)
                }
                // The job loop checks the limits before it looks again.
                Err(RecvTimeoutError::Timeout) => Ok(true),
                Err(RecvTimeoutError::Disconnected) => {
                    Err(RunError::Internal("the invocation channel closed".into()))
                }
            }
        };
        let mut check = || why().map_or(Ok(()), |m| Err(RunError::Stopped(m)));
        let never = || RunError::NeverSettled;
        let settled = js::settle(&ctx, &promise, &mut check, &mut idle, never)?;
        match settled {
            Ok(v) => to_value(&ctx, &to_json, v, file).map_err(stopped),
            Err(reason) => Err(stopped(RunError::Script(js::describe_value(reason, file)))),
        }
    })
}

fn to_value<'js>(
    ctx: &Ctx<'js>,
    to_json: &Function<'js>,
    v: JsValue<'js>,
    file: &str,
) -> Result<Value, RunError> {
    let json: Option<String> = to_json
        .call((v,))
        .map_err(|e| RunError::NotSerialisable(js::describe(ctx, e, file)))?;
    let Some(json) = json else {
        return Ok(Value::Null);
    };
    if json.len() > RESULT_LIMIT {
        return Err(RunError::ResultTooLarge(json.len()));
    }
    serde_json::from_str(&json).map_err(RunError::NotJson)
}

/// Evaluate the prelude with the host bridge; returns (wf, settle, toJson) and installs a
/// `console` whose methods log like `wf.log`.
fn prelude<'js>(
    ctx: &Ctx<'js>,
    host: Rc<RefCell<Host>>,
    meter: Rc<Meter>,
    why: Rc<dyn Fn() -> Option<String>>,
    args: &Value,
    info: &Value,
) -> rquickjs::Result<(Object<'js>, Function<'js>, Function<'js>)> {
    let call = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, op: String, args: String| -> rquickjs::Result<String> {
            // A stopped run makes no more host calls. QuickJS polls the interrupt only every
            // few thousand operations, which with a slow call in the loop (each wf.log writes
            // the job file) could be seconds; refused calls are fast, so the poll comes soon.
            // The edge: a refused call becomes the script's exception, with this text.
            let r = match why() {
                Some(stopped) => Err(stopped),
                None => match meter.host_call(|| host.borrow_mut().call(&op, &args)) {
                    Ok(Ok(out)) => Ok(out),
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(limit) => Err(limit.to_string()),
                },
            };
            r.map_err(|msg| Exception::throw_message(&ctx, &msg))
        },
    )?;
    let make: Function = ctx.eval_with_options(PRELUDE, sandbox::options("prelude.js"))?;
    let parts: Array = make.call((call, args.to_string(), info.to_string()))?;
    let console: JsValue = parts.get(3)?;
    ctx.globals().set("console", console)?;
    Ok((parts.get(0)?, parts.get(1)?, parts.get(2)?))
}
