//! The limits of one workflow run (config `[workflows]`), and the meters that enforce them:
//!
//! - a **wall clock** for the whole run, paused while the run waits for the author's answer
//!   (the author is present then and can cancel; a late answer should not throw away the
//!   agents' work). The cancel watcher cancels the run when it passes, which also withdraws
//!   a question and cancels every invocation in flight;
//! - a **script slice**: JavaScript may run at most this long without yielding, that is without
//!   returning to the runner's event loop to wait for an agent. Time inside host calls does not
//!   count (a `wf.ask` may take an hour), bytecode and promise jobs do;
//! - a **host-call budget**: at most this many calls into `wf` per run, so a script cannot keep
//!   the host busy (each `wf.log` writes the job file) in a loop the slice does not see.
//!
//! Whichever trips first says why in one message naming its config key.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::config::WorkflowConfig;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub wall: Duration,
    pub slice: Duration,
    pub max_host_calls: u64,
}

impl Limits {
    pub fn from_config(c: &WorkflowConfig) -> Limits {
        Limits {
            wall: Duration::from_secs(c.time_limit_secs),
            slice: Duration::from_millis(c.script_slice_ms),
            max_host_calls: c.max_host_calls,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::from_config(&WorkflowConfig::default())
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else if d.subsec_millis() == 0 {
        format!("{s} s")
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// A limit the run passed, naming its config key and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error("the workflow ran longer than its {} limit ([workflows] time_limit_secs; time waiting for the author does not count) and was stopped; raise the limit in config.toml if the run really needs longer", secs(*.0))]
    Wall(Duration),
    #[error("the workflow's JavaScript ran for {} without waiting for an agent ([workflows] script_slice_ms) and was stopped; look for an endless loop (also one of promises or microtasks), or do heavy work in smaller steps", secs(*.0))]
    Slice(Duration),
    #[error("the workflow made more than {0} calls to wf ([workflows] max_host_calls) and was stopped; look for a loop that keeps calling wf.log, wf.progress or wf.workspace.read")]
    HostCalls(u64),
}

/// The run's wall clock; shared with the watcher thread.
pub struct Wall {
    started: Instant,
    limit: Duration,
    /// Time paused so far, and since when it is paused now.
    paused: Mutex<(Duration, Option<Instant>)>,
    over: AtomicBool,
}

impl Wall {
    pub fn new(limit: Duration) -> Wall {
        Wall {
            started: Instant::now(),
            limit,
            paused: Mutex::new((Duration::ZERO, None)),
            over: AtomicBool::new(false),
        }
    }

    /// The run starts waiting for the author.
    pub fn pause(&self) {
        let mut p = self.paused.lock().unwrap_or_else(|e| e.into_inner());
        p.1.get_or_insert_with(Instant::now);
    }

    /// The author answered (or the question ended).
    pub fn resume(&self) {
        let mut p = self.paused.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(since) = p.1.take() {
            p.0 += since.elapsed();
        }
    }

    /// Whether the limit has passed (checked now; stays true once it has).
    pub fn check(&self) -> bool {
        if self.over.load(Ordering::Relaxed) {
            return true;
        }
        let p = self.paused.lock().unwrap_or_else(|e| e.into_inner());
        if p.1.is_some() {
            return false;
        }
        let over = self.started.elapsed() >= self.limit.saturating_add(p.0);
        if over {
            self.over.store(true, Ordering::Relaxed);
        }
        over
    }

    /// Whether [`Wall::check`] has found the limit passed.
    pub fn is_over(&self) -> bool {
        self.over.load(Ordering::Relaxed)
    }

    pub fn message(&self) -> String {
        LimitError::Wall(self.limit).to_string()
    }
}

/// The script slice and the host-call count; lives on the script's thread.
pub struct Meter {
    slice_start: Cell<Instant>,
    slice: Duration,
    calls: Cell<u64>,
    max_calls: u64,
    /// Why the run must stop, once a limit tripped.
    tripped: RefCell<Option<LimitError>>,
}

impl Meter {
    pub fn new(l: &Limits) -> Meter {
        Meter {
            slice_start: Cell::new(Instant::now()),
            slice: l.slice,
            calls: Cell::new(0),
            max_calls: l.max_host_calls,
            tripped: RefCell::new(None),
        }
    }

    /// The script yielded (the runner waited for an agent): a new slice starts.
    pub fn yielded(&self) {
        self.slice_start.set(Instant::now());
    }

    fn trip(&self, why: LimitError) {
        self.tripped.borrow_mut().get_or_insert(why);
    }

    /// Why the run must stop, if a limit tripped (checks the slice now).
    pub fn check(&self) -> Option<LimitError> {
        if self.tripped.borrow().is_none() && self.slice_start.get().elapsed() >= self.slice {
            self.trip(LimitError::Slice(self.slice));
        }
        self.tripped.borrow().clone()
    }

    /// Run one host call: counted against the budget, its time left out of the slice.
    pub fn host_call<R>(&self, f: impl FnOnce() -> R) -> Result<R, LimitError> {
        if let Some(why) = self.tripped.borrow().clone() {
            return Err(why);
        }
        let n = self.calls.get() + 1;
        self.calls.set(n);
        if n > self.max_calls {
            let why = LimitError::HostCalls(self.max_calls);
            self.trip(why.clone());
            return Err(why);
        }
        let t0 = Instant::now();
        let out = f();
        self.slice_start.set(self.slice_start.get() + t0.elapsed());
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wall_clock_pauses_while_the_author_is_asked() {
        let w = Wall::new(Duration::from_millis(60));
        w.pause();
        std::thread::sleep(Duration::from_millis(90));
        assert!(!w.check(), "paused time does not count");
        w.resume();
        assert!(!w.check());
        std::thread::sleep(Duration::from_millis(80));
        assert!(w.check() && w.is_over());
        assert!(w.message().contains("time_limit_secs"));
    }

    #[test]
    fn host_calls_are_counted_and_their_time_is_not_script_time() {
        let m = Meter::new(&Limits {
            wall: Duration::from_secs(60),
            slice: Duration::from_millis(50),
            max_host_calls: 3,
        });
        m.host_call(|| std::thread::sleep(Duration::from_millis(80)))
            .unwrap();
        assert_eq!(m.check(), None, "host-call time is not in the slice");
        m.host_call(|| ()).unwrap();
        m.host_call(|| ()).unwrap();
        let e = m.host_call(|| ()).unwrap_err();
        assert!(e.to_string().contains("max_host_calls"), "{e}");
        assert_eq!(m.check(), Some(e));
        let m = Meter::new(&Limits {
            wall: Duration::from_secs(60),
            slice: Duration::from_millis(20),
            max_host_calls: 3,
        });
        std::thread::sleep(Duration::from_millis(30));
        assert!(m
            .check()
            .is_some_and(|e| e.to_string().contains("script_slice_ms")));
    }
}
