//! The `replay` provider: plays a JSONL script of assistant turns, one turn per request, in
//! order, whatever the conversation says. Each line is
//! `{"text": "...", "tool_calls": [{"name": "...", "arguments": {...}, "id"?: "..."}], "delay_ms"?: 600}`.
//! Text streams word by word so the TUI shows a live session.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{self, BoxStream, StreamExt};
use serde::Deserialize;
use serde_json::Value;

use super::provider::{ModelEvent, ModelRequest, Provider, ProviderError};
use crate::engine::ToolCall;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptTurn {
    #[serde(default)]
    text: String,
    #[serde(default)]
    tool_calls: Vec<ScriptCall>,
    #[serde(default)]
    delay_ms: u64,
}

pub struct ReplayProvider {
    turns: Arc<Vec<ScriptTurn>>,
    next: AtomicUsize,
    /// Pause between streamed words; zero in tests.
    word_delay: Duration,
    run_tag: String,
}

impl ReplayProvider {
    pub fn from_file(path: &Path) -> Result<ReplayProvider, ProviderError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ProviderError::Script(format!("cannot read replay script {}: {e}", path.display()))
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, source: &str) -> Result<ReplayProvider, ProviderError> {
        let mut turns = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let turn: ScriptTurn = serde_json::from_str(line).map_err(|e| {
                ProviderError::Script(format!("{source}:{}: not a valid replay turn: {e}", i + 1))
            })?;
            turns.push(turn);
        }
        if turns.is_empty() {
            return Err(ProviderError::Script(format!(
                "{source}: the replay script has no turns"
            )));
        }
        Ok(ReplayProvider {
            turns: Arc::new(turns),
            next: AtomicUsize::new(0),
            word_delay: Duration::ZERO,
            run_tag: format!("{:06x}", rand::random::<u32>() & 0xff_ffff),
        })
    }

    /// Stream text with a pause between words (the demo uses this to look alive).
    pub fn with_word_delay(mut self, d: Duration) -> Self {
        self.word_delay = d;
        self
    }

    /// Turns not played yet.
    pub fn turns_left(&self) -> usize {
        self.turns
            .len()
            .saturating_sub(self.next.load(Ordering::SeqCst))
    }
}

impl Provider for ReplayProvider {
    fn name(&self) -> &str {
        "replay"
    }

    fn stream(&self, req: ModelRequest) -> BoxStream<'static, Result<ModelEvent, ProviderError>> {
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        let Some(turn) = self.turns.get(index).cloned() else {
            // The script is over: an empty reply ends the run.
            return stream::empty().boxed();
        };
        let word_delay = self.word_delay;
        let input_tokens = estimate_tokens(&req);
        let output_tokens = (turn.text.len() as u64 / 4).max(1);
        let tag = self.run_tag.clone();
        let calls: Vec<ToolCall> = turn
            .tool_calls
            .iter()
            .enumerate()
            .map(|(j, c)| ToolCall {
                id: c
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("replay-{tag}-{index}-{j}")),
                name: c.name.clone(),
                arguments: if c.arguments.is_null() {
                    Value::Object(Default::default())
                } else {
                    c.arguments.clone()
                },
            })
            .collect();
        let words: Vec<String> = split_keeping_spaces(&turn.text);
        let delay = Duration::from_millis(turn.delay_ms);
        let text_stream = stream::iter(words).then(move |w| async move {
            if !word_delay.is_zero() {
                tokio::time::sleep(word_delay).await;
            }
            Ok(ModelEvent::TextDelta(w))
        });
        let start = stream::once(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
        })
        .filter_map(|_| async { None });
        let tail = stream::iter(
            calls
                .into_iter()
                .map(|c| Ok(ModelEvent::ToolCall(c)))
                .chain(std::iter::once(Ok(ModelEvent::Usage {
                    input_tokens,
                    output_tokens,
                }))),
        );
        start.chain(text_stream).chain(tail).boxed()
    }
}

fn split_keeping_spaces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in text.chars() {
        cur.push(ch);
        if ch == ' ' || ch == '\n' {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A rough count (4 characters a token) so replayed sessions show plausible usage.
fn estimate_tokens(req: &ModelRequest) -> u64 {
    let chars = req.system.len()
        + req
            .messages
            .iter()
            .map(|m| serde_json::to_string(m).map(|s| s.len()).unwrap_or(0))
            .sum::<usize>();
    (chars as u64 / 4).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_line_is_named() {
        let err = ReplayProvider::parse("{\"text\":\"a\"}\n{oops}\n", "s.jsonl")
            .err()
            .unwrap();
        assert!(err.to_string().contains("s.jsonl:2"), "{err}");
        assert!(ReplayProvider::parse("\n", "e").is_err());
        assert!(ReplayProvider::parse("{\"txt\":\"a\"}", "u").is_err());
    }

    #[tokio::test]
    async fn plays_turns_in_order_then_ends() {
        let p = ReplayProvider::parse(
            "{\"text\":\"hello there\",\"tool_calls\":[{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}]}\n{\"text\":\"done\"}\n",
            "t",
        )
        .unwrap();
        let req = ModelRequest {
            system: String::new(),
            messages: vec![],
            tools: vec![],
        };
        let first: Vec<_> = p.stream(req.clone()).collect().await;
        let text: String = first
            .iter()
            .filter_map(|e| match e {
                Ok(ModelEvent::TextDelta(t)) => Some(t.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "hello there");
        assert!(first
            .iter()
            .any(|e| matches!(e, Ok(ModelEvent::ToolCall(c)) if c.name == "read")));
        let second: Vec<_> = p.stream(req.clone()).collect().await;
        assert!(second
            .iter()
            .any(|e| matches!(e, Ok(ModelEvent::TextDelta(t)) if t == "done")));
        assert!(p.stream(req).collect::<Vec<_>>().await.is_empty());
    }
}
