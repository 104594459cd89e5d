//! The summarising closure backed by a real [`Provider`], with the summarizer profile's prompt
//! and the compaction instructions.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::StreamExt;

use super::super::provider::{ModelEvent, ModelRequest, Provider, ProviderError};
use super::*;

/// Why the provider-backed summariser gave no summary (the message goes to the log's
/// `summary_error`, and compaction falls back to dropping).
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    #[error("{source}")]
    Provider {
        provider: String,
        #[source]
        source: ProviderError,
    },
    #[error("{provider} returned no summary text")]
    Empty { provider: String },
}

/// The summarizer profile's prompt followed by [`COMPACTION_INSTRUCTIONS`]: the system prompt
/// [`summarize_with`] sends.
pub fn compaction_system_prompt(summarizer_prompt: &str) -> String {
    format!("{}{COMPACTION_INSTRUCTIONS}", summarizer_prompt.trim_end())
}

/// A summarising closure for [`compact`]: each call sends one `ModelRequest` to `provider`
/// (system: `compaction_system_prompt(&summarizer_prompt)`, i.e. the summarizer profile's
/// prompt followed by [`COMPACTION_INSTRUCTIONS`]; the text as the only user message; no
/// tools) and returns the streamed text. A provider error, or a reply without text, is an
/// `Err`.
pub fn summarize_with(
    provider: Arc<dyn Provider>,
    summarizer_prompt: String,
) -> impl Fn(String) -> BoxFuture<'static, Result<String, SummaryError>> + Clone + Send + Sync + 'static
{
    let system = compaction_system_prompt(&summarizer_prompt);
    move |text: String| {
        let provider = provider.clone();
        let req = ModelRequest {
            system: system.clone(),
            messages: vec![Message::User { text }],
            tools: Vec::new(),
        };
        Box::pin(async move {
            let mut stream = provider.stream(req);
            let mut out = String::new();
            while let Some(event) = stream.next().await {
                match event {
                    Ok(ModelEvent::TextDelta(t)) => out.push_str(&t),
                    Ok(_) => {}
                    Err(source) => {
                        return Err(SummaryError::Provider {
                            provider: provider.name().to_string(),
                            source,
                        })
                    }
                }
            }
            if out.trim().is_empty() {
                Err(SummaryError::Empty {
                    provider: provider.name().to_string(),
                })
            } else {
                Ok(out)
            }
        }) as BoxFuture<'static, Result<String, SummaryError>>
    }
}
