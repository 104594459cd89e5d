//! Rows for a reply still streaming in: a spinner with the elapsed time and tokens/s, the
//! reasoning (dimmed, its last lines), the text so far, and a "preparing write …" line per
//! tool call whose arguments are being generated.

use std::time::Instant;

use ratatui::text::{Line, Span};

use crate::tui::sessions::live_reply::LiveReply;
use crate::tui::theme::Theme;
use crate::tui::widgets::wrap::Row;

const SPINNER: [&str; 8] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧"];
/// Reasoning can run long; the last lines are what the author follows.
const REASONING_LINES: usize = 3;

pub fn live_rows(t: &Theme, r: &LiveReply, now: Instant) -> Vec<Row> {
    let elapsed = r.elapsed(now);
    let frame = SPINNER[(elapsed.as_millis() / 100) as usize % SPINNER.len()];
    let mut status = format!(
        "{frame} the model is writing · {:.1} s · ~{} tokens",
        elapsed.as_secs_f64(),
        r.tokens()
    );
    if let Some(rate) = r.rate(now) {
        status.push_str(&format!(" · {rate:.1} tok/s"));
    }
    let mut rows: Vec<Row> = vec![(Line::from(Span::styled(status, t.tool_wait)), 0)];
    if !r.reasoning.is_empty() {
        let lines: Vec<&str> = r.reasoning.lines().collect();
        for l in &lines[lines.len().saturating_sub(REASONING_LINES)..] {
            rows.push((Line::from(Span::styled(format!("⋯ {l}"), t.dim)), 2));
        }
    }
    for l in r.text.lines() {
        rows.push((Line::from(Span::styled(l.to_string(), t.assistant)), 0));
    }
    for (name, chars) in r.calls.values() {
        let name = if name.is_empty() { "a tool call" } else { name };
        rows.push((
            Line::from(Span::styled(
                format!("  preparing {name} … ({chars} characters of arguments)"),
                t.tool_wait,
            )),
            2,
        ));
    }
    rows
}
