//! `execute_world`: the agent's JavaScript runs in QuickJS as the body of a strict-mode async
//! function `(world, console) => { … }`, with:
//! - a memory cap, a stack cap and a deadline (5 s read-only, 15 s read-write) that bounds
//!   everything the script causes: its bytecode (QuickJS's interrupt handler really stops a CPU
//!   loop), the job queue (promise reactions and microtasks, checked between jobs by
//!   [`crate::js::settle`]), every host call (refused once the time is up) and each SQLite statement
//!   a host call runs (a progress handler aborts it at the deadline);
//! - no file, network or process access: the context has only the language built-ins plus
//!   `world` and `console` (QuickJS's std/os modules are not loaded);
//! - a deterministic `Math.random`;
//! - a 10 240-character cap on the JSON of the result.
//!
//! The caller owns the transaction: it begins one before [`run`] and commits, holds or rolls
//! back after, so a throw anywhere leaves the database as it was. World host calls are
//! synchronous, so promises settle by running QuickJS's job queue; a script awaiting something
//! that can never settle is reported as such.

pub mod host;
pub mod preview;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rquickjs::{
    Array, Ctx, Exception, Function, Module, Promise, Runtime, Value as JsValue, WriteOptions,
};
use rusqlite::Connection;
use serde_json::Value;

pub use host::Access;
use host::Host;

use super::index::Pending;
use super::issues::{self, Issue};
use super::write::Change;
use super::{World, WorldError};
use crate::js;
use crate::net::embed::{EmbedConfig, EmbedError};

const PRELUDE: &str = include_str!("prelude.js");
const FILE: &str = "script.js";
/// A script whose promise is pending with no job left to run: nothing can ever settle it.
pub const NEVER_SETTLED: &str = "the script's promise never settled: it awaits something nothing resolves (world calls settle at once; check for a promise whose resolve is never called)";

/// Why a script produced no outcome. Nothing it wrote stays: the caller rolls back.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The script threw, or was stopped by a limit (the message says which and what the
    /// script was doing), with the line in the script where known.
    #[error("{0}")]
    Failed(String),
    #[error("the result is {chars} characters of JSON, more than the {limit} allowed; return less (a summary, fewer fields, or ids to read later)")]
    ResultTooLarge { chars: usize, limit: usize },
    #[error("the result is not valid JSON: {0}")]
    ResultNotJson(#[source] serde_json::Error),
    #[error(transparent)]
    Start(#[from] js::StartError),
    /// Reading the world before the script ran failed.
    #[error(transparent)]
    World(#[from] WorldError),
    /// A fault of nbook's own (the world API failed to load), not of the script.
    #[error("internal: {0}")]
    Internal(String),
}

#[derive(Clone, Debug)]
pub struct Options {
    pub access: Access,
    pub time_limit: Duration,
    pub memory_limit: usize,
    pub result_limit: usize,
}

impl Options {
    /// NeuroBook's limits: 5 s read-only, 15 s read-write, 10 240 characters of result; nbook
    /// adds a 64 MiB heap.
    pub fn for_access(access: Access) -> Options {
        Options {
            access,
            time_limit: Duration::from_secs(if access == Access::Write { 15 } else { 5 }),
            memory_limit: 64 << 20,
            result_limit: 10_240,
        }
    }
}

/// What a script did.
pub struct Outcome {
    /// The returned value (`"done"` for undefined), BigInts as strings.
    pub data: Value,
    pub issues: Vec<Issue>,
    pub logs: Vec<String>,
    pub changes: Vec<Change>,
    /// Checkpoint work queued by the script's reads, to flush when convenient.
    pub pending: Pending,
    pub checkpoints: bool,
}

impl Outcome {
    pub fn wrote(&self) -> bool {
        !self.changes.is_empty()
    }
}

/// Run `code`; the connection comes back in every case (with the transaction still open).
pub fn run(
    conn: Connection,
    world: &World,
    code: &str,
    opts: &Options,
    embedding: Result<EmbedConfig, EmbedError>,
) -> (Connection, Result<Outcome, ScriptError>) {
    let started = Instant::now();
    let deadline = started + opts.time_limit;
    // A single slow query (a huge scan, a runaway recursive view) is bounded by the same
    // deadline: SQLite polls this every 1000 VM steps and aborts the statement once it says
    // stop. Removed again below, so the caller's commit and preview are not cut short.
    conn.progress_handler(1000, Some(move || Instant::now() >= deadline));
    let probed = match host::probe(&conn, world) {
        Ok(p) => p,
        Err(e) => {
            conn.progress_handler(0, None::<fn() -> bool>);
            return (conn, Err(e.into()));
        }
    };
    let host = Rc::new(RefCell::new(Host::new(
        conn,
        world.clone(),
        opts.access,
        embedding.map_err(Arc::new),
        deadline,
        probed,
    )));
    let result = execute(&host, code, opts, started);
    let mut h = host.borrow_mut();
    let conn = h.conn.take();
    let mut issues = std::mem::take(&mut h.issues);
    let outcome = result.map(|data| {
        issues::dedup(&mut issues);
        Outcome {
            data,
            issues,
            logs: std::mem::take(&mut h.logs),
            changes: std::mem::take(&mut h.changes),
            pending: std::mem::take(&mut h.pending),
            checkpoints: h.checkpoints,
        }
    });
    drop(h);
    let Some(conn) = conn else {
        unreachable!("the host holds the connection until here")
    };
    conn.progress_handler(0, None::<fn() -> bool>);
    (conn, outcome)
}

fn execute(
    host: &Rc<RefCell<Host>>,
    code: &str,
    opts: &Options,
    started: Instant,
) -> Result<Value, ScriptError> {
    let limits = js::Limits {
        memory: opts.memory_limit,
        stack: 512 << 10,
        time: opts.time_limit,
    };
    let (rt, deadline) = js::runtime(limits)?;
    deadline.set(Some(started + opts.time_limit));
    let ctx = js::context(&rt)?;
    let timed_out = || started.elapsed() >= opts.time_limit;
    let limit_msg = |what: String| {
        if timed_out() {
            let kind = if opts.access == Access::Write {
                "read-write"
            } else {
                "read-only"
            };
            let limit = if opts.time_limit.subsec_millis() == 0 {
                format!("{} s", opts.time_limit.as_secs())
            } else {
                format!("{} ms", opts.time_limit.as_millis())
            };
            ScriptError::Failed(format!("the script ran longer than the {limit} limit for {kind} scripts and was stopped ({what})"))
        } else {
            ScriptError::Failed(what)
        }
    };
    ctx.with(|ctx| -> Result<Value, ScriptError> {
        let (world, console, result) = prelude(&ctx, host.clone(), opts.access)
            .map_err(|e| ScriptError::Internal(format!("the world API failed to load: {e}")))?;
        // The body is wrapped on the same first line, so line numbers are the script's own.
        let wrapped = format!("(async function (world, console) {{ \"use strict\"; {code}\n}})");
        let f: Function = ctx
            .eval_with_options(wrapped, js::options(FILE))
            .map_err(|e| limit_msg(js::describe(&ctx, e, FILE)))?;
        let v: JsValue = f
            .call((world, console))
            .map_err(|e| limit_msg(js::describe(&ctx, e, FILE)))?;
        let promise: Promise = v
            .into_promise()
            .ok_or_else(|| ScriptError::Internal("the script did not return a promise".into()))?;
        let deadline = started + opts.time_limit;
        let mut check = js::until(deadline, || {
            limit_msg("it kept queuing promise jobs".into())
        });
        let never = || ScriptError::Failed(NEVER_SETTLED.into());
        let settled = js::settle(&ctx, &promise, &mut check, &mut || Ok(false), never)?;
        let v = match settled {
            Ok(v) => v,
            Err(reason) => return Err(limit_msg(js::describe_value(reason, FILE))),
        };
        let json: Option<String> = result.call((v,)).map_err(|e| {
            limit_msg(format!(
                "the result cannot be turned into JSON: {}",
                js::describe(&ctx, e, FILE)
            ))
        })?;
        let Some(json) = json else {
            return Ok(Value::String("done".into()));
        };
        let n = json.chars().count();
        if n > opts.result_limit {
            return Err(ScriptError::ResultTooLarge {
                chars: n,
                limit: opts.result_limit,
            });
        }
        serde_json::from_str(&json).map_err(ScriptError::ResultNotJson)
    })
}

/// The world prelude (compiled into the binary) failed to compile: a bug, never the script's
/// fault. Kept in the cache, so it holds QuickJS's description rather than its error.
#[derive(Clone, Debug, thiserror::Error)]
#[error("internal: the world API prelude failed to compile: {0}")]
struct PreludeError(String);

/// The prelude compiled once to QuickJS bytecode: loading it is ~6x cheaper than parsing it
/// for every script (DESIGN.md wants a whole execute_world call under 0.5 ms).
fn prelude_bytecode() -> Result<&'static [u8], PreludeError> {
    static BYTES: OnceLock<Result<Vec<u8>, PreludeError>> = OnceLock::new();
    BYTES
        .get_or_init(|| {
            let rt = Runtime::new().map_err(|e| PreludeError(e.to_string()))?;
            let ctx = js::context(&rt).map_err(|e| PreludeError(e.to_string()))?;
            ctx.with(|ctx| {
                let src = format!(
                    "export default {}",
                    PRELUDE.trim_end().trim_end_matches(';')
                );
                Module::declare(ctx.clone(), "prelude.js", src)
                    .and_then(|m| m.write(WriteOptions::default()))
                    .map_err(|e| PreludeError(js::describe(&ctx, e, "prelude.js")))
            })
        })
        .as_deref()
        .map_err(Clone::clone)
}

/// Evaluate the prelude with the host bridge; returns (world, console, toJson).
fn prelude<'js>(
    ctx: &Ctx<'js>,
    host: Rc<RefCell<Host>>,
    access: Access,
) -> rquickjs::Result<(JsValue<'js>, JsValue<'js>, Function<'js>)> {
    let h = host.clone();
    let call = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, op: String, args: String| -> rquickjs::Result<String> {
            let r = h.borrow_mut().call(&op, &args);
            r.map_err(|e| Exception::throw_message(&ctx, &e.to_string()))
        },
    )?;
    let sink = Function::new(ctx.clone(), move |level: String, text: String| {
        host.borrow_mut().log(&level, &text);
    })?;
    let bytes = prelude_bytecode().map_err(|e| Exception::throw_internal(ctx, &e.to_string()))?;
    // SAFETY: `bytes` was written by this same QuickJS build, in this process, from the
    // prelude source compiled into the binary (see `prelude_bytecode`) — never from input.
    let module = unsafe { Module::load(ctx.clone(), bytes) }?;
    let (module, done) = module.eval()?;
    done.finish::<()>()?;
    let make: Function = module.get("default")?;
    let access = if access == Access::Write {
        "write"
    } else {
        "read"
    };
    let parts: Array = make.call((call, access, sink))?;
    Ok((parts.get(0)?, parts.get(1)?, parts.get(2)?))
}
