//! The context budget of one turn: how many tokens the fixed part of a request (the system
//! prompt and the tool schemas) and the transcript take, against the model's window. A turn
//! whose fixed part alone cannot fit is failed before anything is sent, with the figures and
//! what to change — the server would only answer HTTP 400, and compacting the transcript
//! cannot help. Estimates use ~4 characters a token, as compaction does.

use super::provider::{Message, ToolSpec};

/// Room kept for the reply when judging whether the fixed part fits at all.
pub const MIN_REPLY_TOKENS: usize = 512;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextBudget {
    pub window: usize,
    pub system_tokens: usize,
    pub tool_tokens: usize,
    pub tool_count: usize,
    pub transcript_tokens: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the request does not fit the model's context window: the system prompt (~{system} tokens) \
     and {tools} tool schemas (~{tool_tokens} tokens) alone need ~{fixed} tokens, and the window \
     is {window} tokens (with {reply} kept for the reply). Set a bigger context_window for this \
     model in config.toml if the server allows it, or use a profile with fewer tools (the \
     built-in author.small is made for 4k–8k models), or shorten the profile's prompt or AGENTS.md."
)]
pub struct DoesNotFit {
    pub system: usize,
    pub tools: usize,
    pub tool_tokens: usize,
    pub fixed: usize,
    pub window: usize,
    pub reply: usize,
}

fn tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}

impl ContextBudget {
    pub fn measure(
        window: usize,
        system: &str,
        tools: &[ToolSpec],
        messages: &[Message],
    ) -> ContextBudget {
        ContextBudget {
            window,
            system_tokens: tokens(system.len()),
            tool_tokens: tools
                .iter()
                .map(|t| {
                    tokens(t.name.len() + t.description.len() + t.parameters.to_string().len())
                })
                .sum(),
            tool_count: tools.len(),
            transcript_tokens: super::compact::estimate_total(messages),
        }
    }

    /// Prompt and tool schemas: what every request carries whatever the transcript.
    pub fn fixed(&self) -> usize {
        self.system_tokens + self.tool_tokens
    }

    pub fn used(&self) -> usize {
        self.fixed() + self.transcript_tokens
    }

    /// Fails when the fixed part leaves less than [`MIN_REPLY_TOKENS`] of the window.
    pub fn check_fixed(&self) -> Result<(), DoesNotFit> {
        if self.fixed() + MIN_REPLY_TOKENS <= self.window {
            return Ok(());
        }
        Err(DoesNotFit {
            system: self.system_tokens,
            tools: self.tool_count,
            tool_tokens: self.tool_tokens,
            fixed: self.fixed(),
            window: self.window,
            reply: MIN_REPLY_TOKENS,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(desc_len: usize) -> ToolSpec {
        ToolSpec {
            name: "t".into(),
            description: "x".repeat(desc_len),
            parameters: json!({}),
        }
    }

    #[test]
    fn a_fixed_part_bigger_than_the_window_fails_with_the_figures() {
        let b = ContextBudget::measure(1000, &"p".repeat(2000), &[tool(1995)], &[]);
        assert_eq!(b.system_tokens, 500);
        assert_eq!(b.tool_tokens, 500);
        let e = b.check_fixed().expect_err("does not fit");
        let msg = e.to_string();
        assert!(
            msg.contains("~500 tokens") && msg.contains("1 tool schemas"),
            "{msg}"
        );
        assert!(msg.contains("window is 1000 tokens"), "{msg}");
        assert!(ContextBudget::measure(8192, "short", &[tool(10)], &[])
            .check_fixed()
            .is_ok());
    }
}
