//! Time as the UI sees it, injectable so tests can step it: the typing guard, message expiry
//! and approval ages read the clock instead of calling `Instant::now` directly.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub trait Clock: Send + Sync {
    /// Monotonic time (guards, expiry).
    fn now(&self) -> Instant;
    /// Wall time (ages of pending calls).
    fn wall(&self) -> time::OffsetDateTime;
}

#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
    fn wall(&self) -> time::OffsetDateTime {
        time::OffsetDateTime::now_utc()
    }
}

/// A clock that only moves when told to. Clones share the same time.
#[derive(Clone, Debug)]
pub struct ManualClock {
    inner: Arc<Mutex<(Instant, time::OffsetDateTime)>>,
}

impl ManualClock {
    pub fn new(wall: time::OffsetDateTime) -> ManualClock {
        ManualClock {
            inner: Arc::new(Mutex::new((Instant::now(), wall))),
        }
    }

    pub fn advance(&self, by: Duration) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += by;
        g.1 += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).0
    }
    fn wall(&self) -> time::OffsetDateTime {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).1
    }
}
