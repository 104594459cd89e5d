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
use rquickjs::promise::PromiseState;
use rquickjs::{Array, Ctx, Exception, Function, Object, Value as JsValue};
use serde::Serialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::host::{Completion, Host, RunCtx, Shared};
use super::sandbox;
use crate::world::js;

const PRELUDE: &str = include_str!("prelude.js");
/// The file name inline scripts are compiled under (errors say "line N" of the script).
pub const INLINE_FILE: &str = "inline-script.js";
/// Largest result a run may return, as JSON.
pub const RESULT_LIMIT: usize = 1 << 20;
/// How long a finished run waits for the invocations it left behind to stop.
const STRAY_WAIT: Duration = Duration::from_secs(30);
const CANCELLED: &str = "the workflow run was cancelled";

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
    let shared = Arc::new(Shared::default());
    let (tx, rx) = mpsc::channel::<Completion>();
    let done = CancellationToken::new();
    let watcher = {
        let (engine, stop, done, shared) = (
            rc.engine.clone(),
            rc.stop.clone(),
            done.clone(),
            shared.clone(),
        );
        std::thread::Builder::new()
            .name(format!("{}-watch", rc.job_id))
            .spawn(move || watch(&engine, &stop, &done, &shared))
            .ok()
    };
    let host = Rc::new(RefCell::new(Host::new(rc.clone(), shared, tx)));
    let info = json!({
        "sessionId": rc.caller_session,
        "jobId": rc.job_id,
        "runId": rc.run_id,
        "workflowKey": rc.workflow_key,
    });
    let outcome = execute(&host, &rx, &rc.stop, code, args, &info);

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
        Err(e) => ("failed", Value::Null, Some(e)),
    };
    let mut usage = Usage::default();
    let sessions = h
        .sessions
        .iter()
        .map(|s| {
            let (i, o) = rc
                .engine
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
    if let Err(e) = rc.engine.jobs().set_detail(&rc.job_id, detail) {
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

/// Waits for the run to be stopped; then, until it has ended, keeps withdrawing the question
/// it waits on and cancelling every session it has in flight (repeating, so an invocation
/// or question that was just being started is caught too).
fn watch(
    engine: &crate::engine::Engine,
    stop: &CancellationToken,
    done: &CancellationToken,
    shared: &Shared,
) {
    futures::executor::block_on(futures::future::select(
        Box::pin(stop.cancelled()),
        Box::pin(done.cancelled()),
    ));
    let host = engine.host();
    let mut last: std::collections::HashMap<u64, Instant> = Default::default();
    while !done.is_cancelled() {
        if let Some(id) = shared.current_ask() {
            engine.withdraw_input(&id);
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
    code: &Code,
    args: &Value,
    info: &Value,
) -> Result<Value, String> {
    let rt = sandbox::runtime(None, Some(stop.clone()))?;
    let context = sandbox::context(&rt)?;
    let file = code.file();
    let stopped = |e: String| {
        if stop.is_cancelled() {
            CANCELLED.to_string()
        } else {
            e
        }
    };
    context.with(|ctx| -> Result<Value, String> {
        let (wf, settle, to_json) = prelude(&ctx, host.clone(), args, info).map_err(|e| {
            format!(
                "internal: the wf API failed to load: {}",
                js::describe(&ctx, e, "prelude.js")
            )
        })?;
        let args_js: JsValue = wf
            .get("args")
            .map_err(|e| format!("internal: {}", js::describe(&ctx, e, "prelude.js")))?;
        let started: JsValue = match code {
            Code::Definition { code, file } => {
                let def = sandbox::eval_definition(&ctx, code, file).map_err(stopped)?;
                let run: Function = def
                    .get("run")
                    .map_err(|_| "the workflow object has no run function".to_string())?;
                run.call((This(def.clone()), wf, args_js))
                    .map_err(|e| stopped(js::describe(&ctx, e, file)))?
            }
            Code::Inline(body) => {
                // Wrapped on the same first line, so line numbers are the script's own.
                let wrapped =
                    format!("(async function (wf, args) {{ \"use strict\"; {body}\n}})");
                let f: Function = ctx
                    .eval_with_options(wrapped, sandbox::options(INLINE_FILE))
                    .map_err(|e| stopped(js::describe(&ctx, e, INLINE_FILE)))?;
                f.call((wf, args_js))
                    .map_err(|e| stopped(js::describe(&ctx, e, INLINE_FILE)))?
            }
        };
        let Some(promise) = started.clone().into_promise() else {
            return to_value(&ctx, &to_json, started, file);
        };
        loop {
            if stop.is_cancelled() {
                return Err(CANCELLED.into());
            }
            match promise.state() {
                PromiseState::Pending => {
                    if ctx.execute_pending_job() {
                        continue;
                    }
                    if ctx.has_exception() {
                        return Err(stopped(js::describe_value(ctx.catch(), file)));
                    }
                    if host.borrow().outstanding() == 0 {
                        return Err("the workflow awaits a promise that never settles (only wf.agents.invoke settles later; check for a missing resolve)".into());
                    }
                    match rx.recv_timeout(Duration::from_millis(100)) {
                        Ok((ticket, out)) => {
                            host.borrow_mut().completed();
                            let (ok, text) = match out {
                                Ok(v) => (true, v.to_string()),
                                Err(e) => (false, e),
                            };
                            settle
                                .call::<_, ()>((ticket as f64, ok, text))
                                .map_err(|e| stopped(js::describe(&ctx, e, file)))?;
                        }
                        Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Disconnected) => {
                            return Err("internal: the invocation channel closed".into())
                        }
                    }
                }
                PromiseState::Rejected => {
                    let reason: JsValue = match promise.result::<JsValue>() {
                        Some(Err(_)) => ctx.catch(),
                        Some(Ok(v)) => v,
                        None => JsValue::new_undefined(ctx.clone()),
                    };
                    return Err(stopped(js::describe_value(reason, file)));
                }
                PromiseState::Resolved => {
                    let v: JsValue = promise
                        .result::<JsValue>()
                        .ok_or("internal: no result")?
                        .map_err(|e| js::describe(&ctx, e, file))?;
                    return to_value(&ctx, &to_json, v, file);
                }
            }
        }
    })
}

fn to_value<'js>(
    ctx: &Ctx<'js>,
    to_json: &Function<'js>,
    v: JsValue<'js>,
    file: &str,
) -> Result<Value, String> {
    let json: Option<String> = to_json.call((v,)).map_err(|e| {
        format!(
            "the result cannot be turned into JSON: {}",
            js::describe(ctx, e, file)
        )
    })?;
    let Some(json) = json else {
        return Ok(Value::Null);
    };
    if json.len() > RESULT_LIMIT {
        return Err(format!(
            "the result is {} bytes of JSON, more than the {RESULT_LIMIT} allowed; return a summary and leave the bulk in files",
            json.len()
        ));
    }
    serde_json::from_str(&json).map_err(|e| format!("the result is not valid JSON: {e}"))
}

/// Evaluate the prelude with the host bridge; returns (wf, settle, toJson) and installs a
/// `console` whose methods log like `wf.log`.
fn prelude<'js>(
    ctx: &Ctx<'js>,
    host: Rc<RefCell<Host>>,
    args: &Value,
    info: &Value,
) -> rquickjs::Result<(Object<'js>, Function<'js>, Function<'js>)> {
    let call = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, op: String, args: String| -> rquickjs::Result<String> {
            let r = host.borrow_mut().call(&op, &args);
            r.map_err(|msg| Exception::throw_message(&ctx, &msg))
        },
    )?;
    let make: Function = ctx.eval_with_options(PRELUDE, sandbox::options("prelude.js"))?;
    let parts: Array = make.call((call, args.to_string(), info.to_string()))?;
    let console: JsValue = parts.get(3)?;
    ctx.globals().set("console", console)?;
    Ok((parts.get(0)?, parts.get(1)?, parts.get(2)?))
}
