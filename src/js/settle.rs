//! Driving a promise to its end under a stop check.
//!
//! Why the job loop is ours: QuickJS runs promise reactions and `queueMicrotask` callbacks as
//! jobs, one per `JS_ExecutePendingJob`, and an interrupt inside a job only ends that job (rquickjs
//! swallows its exception and reports "a job ran"). A script that keeps queuing jobs therefore
//! never returns to the host on its own; the deadline holds only if the host checks it between
//! jobs, which [`settle`] and [`drain`] do before every one. The error type is the caller's, so
//! each sandbox reports a stop in its own terms.

use std::time::Instant;

use rquickjs::promise::PromiseState;
use rquickjs::{Ctx, Promise, Value};

/// Why the stop check ended a run, or nothing to stop for.
pub type Check<'a, E> = dyn FnMut() -> Result<(), E> + 'a;

/// How a promise ended: `Ok(value)` resolved, `Err(reason)` rejected.
pub type Settled<'js> = Result<Value<'js>, Value<'js>>;

/// Run the job queue until `promise` settles. Before every job `check` may stop the run (its
/// `Err` is returned as is): this is what bounds a script that keeps queuing microtasks or
/// promise reactions, since no single job runs long enough for the interrupt to end the run.
/// When the promise is pending and no job is left, `idle` is asked to wait for something from
/// outside (`Ok(true)`: something happened, look again; `Ok(false)`: nothing can settle it,
/// which is reported as `never()`).
pub fn settle<'js, E>(
    ctx: &Ctx<'js>,
    promise: &Promise<'js>,
    check: &mut Check<'_, E>,
    idle: &mut dyn FnMut() -> Result<bool, E>,
    never: impl FnOnce() -> E,
) -> Result<Settled<'js>, E> {
    loop {
        match promise.state() {
            PromiseState::Resolved => {
                return match promise.result::<Value>() {
                    Some(Ok(v)) => Ok(Ok(v)),
                    Some(Err(_)) => Ok(Err(ctx.catch())),
                    None => Ok(Ok(Value::new_undefined(ctx.clone()))),
                }
            }
            PromiseState::Rejected => {
                return match promise.result::<Value>() {
                    Some(Ok(v)) => Ok(Err(v)),
                    Some(Err(_)) => Ok(Err(ctx.catch())),
                    None => Ok(Err(Value::new_undefined(ctx.clone()))),
                }
            }
            PromiseState::Pending => {
                check()?;
                if ctx.execute_pending_job() {
                    continue;
                }
                if !idle()? {
                    return Err(never());
                }
            }
        }
    }
}

/// Run the jobs left in the queue (those a finished call queued and left behind), `check`ing
/// before each one, until none is left.
pub fn drain<E>(ctx: &Ctx<'_>, check: &mut Check<'_, E>) -> Result<(), E> {
    loop {
        check()?;
        if !ctx.execute_pending_job() {
            return Ok(());
        }
    }
}

/// A stop check for a plain deadline: `Err(msg())` once `deadline` has passed.
pub fn until<E>(deadline: Instant, msg: impl Fn() -> E) -> impl FnMut() -> Result<(), E> {
    move || {
        if Instant::now() >= deadline {
            Err(msg())
        } else {
            Ok(())
        }
    }
}
