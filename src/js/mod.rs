//! QuickJS plumbing shared by every sandbox that runs JavaScript (the `execute_world` sandbox,
//! workflows and custom calendars). It imports nothing from those users. This module owns the
//! runtime with a memory cap, a stack cap and a deadline enforced by the interrupt handler
//! (which QuickJS polls while running bytecode, so a `while (true) {}` really stops), the
//! built-ins a sandboxed context gets, and the one error type for starting the engine;
//! [`settle`] owns the loop that drives a promise through the job queue under a stop check,
//! [`describe`] turns what JavaScript threw into one readable line with its line number.

pub mod describe;
pub mod settle;

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::context::{intrinsic, EvalOptions};
use rquickjs::{Context, Runtime};

pub use describe::{describe, describe_value, line_in};
pub use settle::{drain, settle, until, Check, Settled};

/// The JavaScript engine could not be started (out of memory, most likely).
#[derive(Debug, thiserror::Error)]
#[error("cannot start the JavaScript engine: {0}")]
pub struct StartError(#[from] pub rquickjs::Error);

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub memory: usize,
    pub stack: usize,
    pub time: Duration,
}

/// When the running code must stop (`None`: no limit).
pub type Deadline = Rc<Cell<Option<Instant>>>;

/// A runtime with `limits` applied; the returned cell holds the deadline (`None` = no limit).
/// The caller arms it (`Some(Instant::now() + limits.time)`) just before running code.
pub fn runtime(limits: Limits) -> Result<(Runtime, Deadline), StartError> {
    let rt = Runtime::new()?;
    rt.set_memory_limit(limits.memory);
    rt.set_max_stack_size(limits.stack);
    let deadline: Deadline = Rc::new(Cell::new(None));
    let d = deadline.clone();
    rt.set_interrupt_handler(Some(Box::new(move || {
        d.get().is_some_and(|t| Instant::now() >= t)
    })));
    Ok((rt, deadline))
}

/// The language built-ins sandboxed scripts get (world scripts and workflows). Not TypedArrays
/// (binary data has no use there, and leaving them out makes a context ~40% cheaper to start),
/// not WeakRef/DOM, no std/os modules, so no file, network or process access.
pub type Intrinsics = (
    intrinsic::Date,
    intrinsic::Eval,
    intrinsic::RegExpCompiler,
    intrinsic::RegExp,
    intrinsic::Json,
    intrinsic::Proxy,
    intrinsic::MapSet,
    intrinsic::Promise,
);

/// A context with only [`Intrinsics`].
pub fn context(rt: &Runtime) -> Result<Context, StartError> {
    Ok(Context::custom::<Intrinsics>(rt)?)
}

/// Strict-mode evaluation of code named `file` (the name errors report line numbers of).
pub fn options(file: &str) -> EvalOptions {
    let mut o = EvalOptions::default();
    o.filename = Some(file.into());
    o.strict = true;
    o
}

#[cfg(test)]
mod tests;
