//! The Approvals pane's model: the FIFO of pending calls as the engine reported them, the
//! selection, and small labels (what a call targets, how long it has waited) shared by the
//! list, the preview, the receipts and the status bar.

use crate::engine::{PendingCall, PreviewBody};

#[derive(Debug, Default)]
pub struct ApprovalsState {
    /// Oldest first, as the engine queues them.
    pub queue: Vec<PendingCall>,
    pub selected: usize,
    pub offset: usize,
    pub preview_scroll: usize,
}

impl ApprovalsState {
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Add a call at the end unless it is already queued.
    pub fn push(&mut self, call: PendingCall) {
        if !self.queue.iter().any(|c| c.call_id == call.call_id) {
            self.queue.push(call);
        }
    }

    /// Remove a call; the selection stays on the same row (the next call moves up).
    pub fn remove(&mut self, call_id: &str) -> Option<PendingCall> {
        let pos = self.queue.iter().position(|c| c.call_id == call_id)?;
        let call = self.queue.remove(pos);
        if pos < self.selected {
            self.selected -= 1;
        }
        if pos == self.selected {
            self.preview_scroll = 0;
        }
        self.selected = self.selected.min(self.queue.len().saturating_sub(1));
        Some(call)
    }

    pub fn replace_all(&mut self, calls: Vec<PendingCall>) {
        let keep = self.selected_call().map(|c| c.call_id.clone());
        self.queue.clear();
        for c in calls {
            self.push(c);
        }
        self.selected = keep
            .and_then(|id| self.queue.iter().position(|c| c.call_id == id))
            .unwrap_or(0);
    }

    pub fn selected_call(&self) -> Option<&PendingCall> {
        self.queue.get(self.selected)
    }

    pub fn get(&self, call_id: &str) -> Option<&PendingCall> {
        self.queue.iter().find(|c| c.call_id == call_id)
    }

    pub fn move_by(&mut self, delta: isize) {
        let last = self.queue.len().saturating_sub(1);
        let next = self.selected.saturating_add_signed(delta).min(last);
        if next != self.selected {
            self.selected = next;
            self.preview_scroll = 0;
        }
    }
}

/// Cut `s` to `max` characters with an ellipsis, first line only.
pub fn cut(s: &str, max: usize) -> String {
    let first = s.lines().next().unwrap_or("");
    let multi = s.lines().nth(1).is_some();
    let count = first.chars().count();
    if count <= max && !multi {
        return first.to_string();
    }
    let keep = max.saturating_sub(1).min(count);
    let mut out: String = first.chars().take(keep).collect();
    out.push('…');
    out
}

/// What a call acts on, for receipts and prompts: "write manuscript/001.md".
pub fn target_label(call: &PendingCall) -> String {
    let target = match &call.preview.body {
        PreviewBody::Files { changes } => match changes.as_slice() {
            [] => call.preview.summary.clone(),
            [one] => match &one.move_to {
                Some(to) => format!("{} → {to}", one.path),
                None => one.path.clone(),
            },
            [first, rest @ ..] => format!("{} (+{} more)", first.path, rest.len()),
        },
        PreviewBody::Command { command, .. } => format!("$ {command}"),
        _ => call.preview.summary.clone(),
    };
    format!("{} {}", call.tool, cut(&target, 60))
}

/// "12s", "4m", "2h" since an RFC 3339 time; "?" when it cannot be read.
pub fn age(requested_at: &str, now: time::OffsetDateTime) -> String {
    let Ok(then) =
        time::OffsetDateTime::parse(requested_at, &time::format_description::well_known::Rfc3339)
    else {
        return "?".into();
    };
    let secs = (now - then).whole_seconds().max(0);
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m", secs / 60),
        3600..=86_399 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_and_age() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("ab\ncd", 10), "ab…");
        let now = time::macros::datetime!(2026-01-01 12:00:30 UTC);
        assert_eq!(age("2026-01-01T12:00:00Z", now), "30s");
        assert_eq!(age("2026-01-01T10:00:00Z", now), "2h");
        assert_eq!(age("garbage", now), "?");
    }
}
