//! Replies streaming in, per session: the text, reasoning and tool calls being generated
//! that the engine's `TextDelta` / `ReasoningDelta` / `ToolCallProgress` events carry, from
//! the first delta until the reply's `assistant` record (or the run's end) lands in the log.
//! The log stays the record; this is only what the author watches while the model writes.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// One reply in progress.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveReply {
    pub text: String,
    pub reasoning: String,
    /// Tool calls being generated, by their index in the reply: (tool name, argument chars).
    pub calls: BTreeMap<u64, (String, usize)>,
    pub started: Instant,
    /// Characters received so far (text, reasoning and arguments).
    pub chars: usize,
}

impl LiveReply {
    fn new(now: Instant) -> LiveReply {
        LiveReply {
            text: String::new(),
            reasoning: String::new(),
            calls: BTreeMap::new(),
            started: now,
            chars: 0,
        }
    }

    /// Estimated tokens so far (~4 characters a token, as the providers estimate).
    pub fn tokens(&self) -> usize {
        self.chars.div_ceil(4)
    }

    /// Estimated tokens per second since the first delta; `None` in the first half second,
    /// where a rate would be noise.
    pub fn rate(&self, now: Instant) -> Option<f64> {
        let secs = now.saturating_duration_since(self.started).as_secs_f64();
        (secs >= 0.5).then(|| self.tokens() as f64 / secs)
    }

    pub fn elapsed(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.started)
    }
}

/// Every session's reply in progress.
#[derive(Clone, Debug, Default)]
pub struct LiveReplies {
    by_session: HashMap<String, LiveReply>,
}

impl LiveReplies {
    fn entry(&mut self, session_id: &str, now: Instant) -> &mut LiveReply {
        self.by_session
            .entry(session_id.to_string())
            .or_insert_with(|| LiveReply::new(now))
    }

    pub fn text(&mut self, session_id: &str, text: &str, now: Instant) {
        let r = self.entry(session_id, now);
        r.chars += text.len();
        r.text.push_str(text);
    }

    pub fn reasoning(&mut self, session_id: &str, text: &str, now: Instant) {
        let r = self.entry(session_id, now);
        r.chars += text.len();
        r.reasoning.push_str(text);
    }

    pub fn call(&mut self, session_id: &str, index: u64, name: &str, chars: usize, now: Instant) {
        let r = self.entry(session_id, now);
        let slot = r.calls.entry(index).or_insert_with(|| (String::new(), 0));
        r.chars += chars.saturating_sub(slot.1);
        if !name.is_empty() {
            slot.0 = name.to_string();
        }
        slot.1 = chars;
    }

    /// The reply was logged (or the run ended): the transcript shows it from the log now.
    pub fn end(&mut self, session_id: &str) {
        self.by_session.remove(session_id);
    }

    pub fn get(&self, session_id: &str) -> Option<&LiveReply> {
        self.by_session.get(session_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_deltas_and_estimates_the_rate() {
        let t0 = Instant::now();
        let mut l = LiveReplies::default();
        l.text("s1", "Hello, ", t0);
        l.text("s1", "world", t0);
        l.call("s1", 0, "write", 10, t0);
        l.call("s1", 0, "", 30, t0);
        let r = l.get("s1").expect("live reply");
        assert_eq!(r.text, "Hello, world");
        assert_eq!(r.calls[&0], ("write".to_string(), 30));
        assert_eq!(r.chars, 12 + 30);
        assert_eq!(r.rate(t0), None);
        let rate = r.rate(t0 + Duration::from_secs(2)).expect("rate");
        assert!((rate - 5.5).abs() < 0.01, "{rate}");
        l.end("s1");
        assert!(l.get("s1").is_none());
    }
}
