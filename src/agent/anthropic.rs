//! The `anthropic` provider: the Messages API, streamed, with tool use.
//!
//! Wire rules (reference/models-notes.md §1b): `message_start` carries the input usage (with
//! cache reads and writes), `content_block_start` opens a text or `tool_use` block (id, name),
//! `content_block_delta` brings `text_delta` or `input_json_delta.partial_json` pieces that are
//! joined and parsed at `content_block_stop`, `message_delta` carries `stop_reason` and the
//! output count, `message_stop` ends the reply, an `error` event fails it. Headers: `x-api-key`
//! and `anthropic-version`.
//!
//! Usage: `input_tokens` reported to the loop = uncached input + cache reads + cache writes, so
//! it means the same as OpenAI's `prompt_tokens`; cache reads are the cached count. Tool input
//! that is not valid JSON becomes a raw string, as in the `openai` provider.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use serde_json::{json, Map, Value};

use super::http::{
    drive, error_message, estimate_tokens, truncate, Decoder, Endpoint, Flow, SseEvent,
};
use super::openai::parse_arguments;
use super::provider::{Message, ModelEvent, ModelRequest, Provider, ProviderError};
use crate::engine::ToolCall;

pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API; this fits every current model.
pub const DEFAULT_MAX_TOKENS: u64 = 8192;

pub struct AnthropicProvider {
    endpoint: Arc<Endpoint>,
    model: String,
    label: String,
    prices: (f64, f64),
    window: Option<usize>,
    max_tokens: u64,
    /// Fields merged into every request body after nbook's own (see `with_generation`).
    extra_body: Map<String, Value>,
}

impl AnthropicProvider {
    /// `endpoint` posts to `<base_url>/messages` (see `messages_url`) with `x-api-key` and
    /// `anthropic-version` (see `auth_headers`).
    pub fn new(
        endpoint: Endpoint,
        model: impl Into<String>,
        prices: (f64, f64),
    ) -> AnthropicProvider {
        let model = model.into();
        AnthropicProvider {
            label: format!("anthropic:{model}"),
            endpoint: Arc::new(endpoint),
            model,
            prices,
            window: None,
            max_tokens: DEFAULT_MAX_TOKENS,
            extra_body: Map::new(),
        }
    }

    /// The `max_tokens` every request sends.
    pub fn max_tokens(&self) -> u64 {
        self.max_tokens
    }

    /// The fields merged into every request body (from `with_generation`).
    pub fn extra_body(&self) -> &Map<String, Value> {
        &self.extra_body
    }

    pub fn with_max_tokens(mut self, n: u64) -> Self {
        self.max_tokens = n;
        self
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// The model's context window in tokens (from config), for compaction.
    pub fn with_context_window(mut self, window: Option<usize>) -> Self {
        self.window = window;
        self
    }

    /// `[models.X]` generation settings in the Messages API's terms: `stop` is sent as
    /// `stop_sequences`; `tool_choice` `"required"` becomes `{"type": "any"}`; and
    /// `parallel_tool_calls = false` sets `disable_parallel_tool_use`. `reasoning_effort` is
    /// an OpenAI field with no Messages equivalent: it is not sent (set `extra_body.thinking`).
    pub fn with_generation(mut self, g: &crate::config::GenerationSettings) -> Self {
        if let Some(n) = g.max_tokens {
            self.max_tokens = n;
        }
        let mut fields = Map::new();
        if let Some(t) = g.temperature {
            fields.insert("temperature".into(), json!(t));
        }
        if let Some(p) = g.top_p {
            fields.insert("top_p".into(), json!(p));
        }
        if let Some(stop) = &g.stop {
            fields.insert("stop_sequences".into(), json!(stop.to_vec()));
        }
        let mut choice = match &g.tool_choice {
            Some(Value::String(s)) => Some(match s.as_str() {
                "required" | "any" => json!({"type": "any"}),
                "none" => json!({"type": "none"}),
                _ => json!({"type": "auto"}),
            }),
            Some(other) => Some(other.clone()),
            None => None,
        };
        if g.parallel_tool_calls == Some(false) {
            let c = choice.get_or_insert_with(|| json!({"type": "auto"}));
            if let Some(obj) = c.as_object_mut() {
                obj.insert("disable_parallel_tool_use".into(), json!(true));
            }
        }
        if let Some(c) = choice {
            fields.insert("tool_choice".into(), c);
        }
        if g.reasoning_effort.is_some() {
            tracing::warn!(
                "reasoning_effort is not sent to the Anthropic Messages API; use extra_body"
            );
        }
        for (k, v) in &g.extra_body {
            fields.insert(k.clone(), v.clone());
        }
        self.extra_body = fields;
        self
    }
}

pub fn messages_url(base_url: &str) -> String {
    super::http::join_url(base_url, "/messages")
}

pub fn auth_headers(api_key: &str) -> Vec<(String, String)> {
    vec![
        ("x-api-key".into(), api_key.into()),
        ("anthropic-version".into(), API_VERSION.into()),
    ]
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        &self.label
    }

    fn stream(&self, req: ModelRequest) -> BoxStream<'static, Result<ModelEvent, ProviderError>> {
        let mut body = request_body(&self.model, self.max_tokens, &req);
        if let Some(obj) = body.as_object_mut() {
            for (k, v) in &self.extra_body {
                obj.insert(k.clone(), v.clone());
            }
        }
        let body = body.to_string();
        let decoder = MessagesDecoder {
            input_estimate: estimate_tokens(body.len()),
            ..Default::default()
        };
        drive(self.endpoint.clone(), body.into_bytes(), decoder)
    }

    fn prices(&self) -> (f64, f64) {
        self.prices
    }

    fn context_window(&self) -> Option<usize> {
        self.window
    }
}

/// The JSON body of a streamed Messages request. Consecutive messages of one role are merged
/// (tool results and a following user text share one user turn), as the API wants turns to
/// alternate.
pub fn request_body(model: &str, max_tokens: u64, req: &ModelRequest) -> Value {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in &req.messages {
        let (role, blocks) = match m {
            Message::User { text } if text.is_empty() => continue,
            Message::User { text } => ("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    let input = match &c.arguments {
                        Value::Object(_) => c.arguments.clone(),
                        // Input that did not parse (or is not an object): keep it visible.
                        Value::String(raw) => json!({"__invalid_json": raw}),
                        Value::Null => json!({}),
                        other => json!({"__invalid_json": other.to_string()}),
                    };
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
                if blocks.is_empty() {
                    continue;
                }
                ("assistant", blocks)
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
        };
        match turns.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(max_tokens));
    if !req.system.is_empty() {
        body.insert("system".into(), json!(req.system));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
        start_input: Value,
    },
    Other,
}

#[derive(Default)]
struct MessagesDecoder {
    blocks: BTreeMap<u64, Block>,
    input: u64,
    cache_read: u64,
    cache_write: u64,
    output: u64,
    saw_usage: bool,
    input_estimate: u64,
    output_chars: usize,
    stop_reason: Option<String>,
}

impl MessagesDecoder {
    fn usage(&mut self, u: &Value) {
        let set = |key: &str, slot: &mut u64| {
            if let Some(n) = u.get(key).and_then(Value::as_u64) {
                *slot = n;
                true
            } else {
                false
            }
        };
        let mut any = set("input_tokens", &mut self.input);
        any |= set("cache_read_input_tokens", &mut self.cache_read);
        any |= set("cache_creation_input_tokens", &mut self.cache_write);
        any |= set("output_tokens", &mut self.output);
        self.saw_usage |= any;
    }

    fn close_block(&mut self, index: u64, out: &mut Vec<ModelEvent>) {
        if let Some(Block::ToolUse {
            id,
            name,
            json,
            start_input,
        }) = self.blocks.remove(&index)
        {
            let arguments = if json.trim().is_empty() {
                start_input
            } else {
                parse_arguments(&name, &json)
            };
            out.push(ModelEvent::ToolCall(ToolCall {
                id,
                name,
                arguments,
            }));
        }
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        if let Some(reason) = self.stop_reason.take() {
            out.push(ModelEvent::Finish { reason });
        }
        let open: Vec<u64> = self.blocks.keys().copied().collect();
        for index in open {
            self.close_block(index, out);
        }
        let (input, output, estimated) = if self.saw_usage {
            (
                self.input + self.cache_read + self.cache_write,
                self.output,
                false,
            )
        } else {
            (
                self.input_estimate,
                estimate_tokens(self.output_chars),
                true,
            )
        };
        out.push(ModelEvent::Usage {
            input_tokens: input,
            output_tokens: output,
        });
        out.push(ModelEvent::UsageDetails {
            cached_input_tokens: self.cache_read,
            reasoning_tokens: 0,
            estimated,
        });
    }
}

impl Decoder for MessagesDecoder {
    fn on_event(&mut self, ev: SseEvent, out: &mut Vec<ModelEvent>) -> Result<Flow, ProviderError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::Stream(format!(
                "the server sent an event that is not JSON ({e}): {}",
                truncate(data, 300)
            ))
        })?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(ev.event.as_str());
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    self.usage(u);
                }
            }
            "content_block_start" => {
                let b = v.get("content_block").cloned().unwrap_or(Value::Null);
                let block = match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = b
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            self.output_chars += t.len();
                            out.push(ModelEvent::TextDelta(t.to_string()));
                        }
                        Block::Text
                    }
                    Some("tool_use") => Block::ToolUse {
                        id: b
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        name: b
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        json: String::new(),
                        start_input: match b.get("input") {
                            Some(i @ Value::Object(_)) => i.clone(),
                            _ => json!({}),
                        },
                    },
                    _ => Block::Other,
                };
                self.blocks.insert(index, block);
            }
            "content_block_delta" => {
                let d = v.get("delta").cloned().unwrap_or(Value::Null);
                match d.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(t) = d
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            self.output_chars += t.len();
                            out.push(ModelEvent::TextDelta(t.to_string()));
                        }
                    }
                    Some("input_json_delta") => {
                        let part = d
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        self.output_chars += part.len();
                        if let Some(Block::ToolUse { json, name, .. }) = self.blocks.get_mut(&index)
                        {
                            json.push_str(part);
                            out.push(ModelEvent::ToolCallProgress {
                                index,
                                name: name.clone(),
                                argument_chars: json.len(),
                            });
                        }
                    }
                    Some("thinking_delta") => {
                        if let Some(t) = d
                            .get("thinking")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            self.output_chars += t.len();
                            out.push(ModelEvent::ReasoningDelta(t.to_string()));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => self.close_block(index, out),
            "message_delta" => {
                if let Some(u) = v.get("usage") {
                    self.usage(u);
                }
                if let Some(reason) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
            }
            "message_stop" => {
                self.finish(out);
                return Ok(Flow::Done);
            }
            // A whole, non-streamed reply from a server that ignored `stream`.
            "message" => {
                if let Some(u) = v.get("usage") {
                    self.usage(u);
                }
                let blocks = v
                    .get("content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(t) = b.get("text").and_then(Value::as_str) {
                                self.output_chars += t.len();
                                out.push(ModelEvent::TextDelta(t.to_string()));
                            }
                        }
                        Some("tool_use") => out.push(ModelEvent::ToolCall(ToolCall {
                            id: b
                                .get("id")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                            name: b
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                            arguments: b
                                .get("input")
                                .filter(|i| i.is_object())
                                .cloned()
                                .unwrap_or_else(|| json!({})),
                        })),
                        _ => {}
                    }
                }
                self.finish(out);
                return Ok(Flow::Done);
            }
            "error" => {
                let msg = error_message(&v).unwrap_or_else(|| truncate(data, 300));
                return Err(ProviderError::Stream(format!(
                    "the server reported an error: {msg}"
                )));
            }
            _ => {} // ping, and event types added later
        }
        Ok(Flow::Continue)
    }

    fn on_eof(&mut self, _out: &mut Vec<ModelEvent>) -> Result<(), ProviderError> {
        Err(ProviderError::Stream(
            "the stream ended before the reply was complete (no message_stop)".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_alternate_and_tool_results_merge() {
        let req = ModelRequest {
            system: String::new(),
            messages: vec![
                Message::User { text: "hi".into() },
                Message::Assistant {
                    text: "looking".into(),
                    tool_calls: vec![
                        ToolCall {
                            id: "t1".into(),
                            name: "read".into(),
                            arguments: json!({"path": "a"}),
                        },
                        ToolCall {
                            id: "t2".into(),
                            name: "read".into(),
                            arguments: json!("{oops"),
                        },
                    ],
                },
                Message::ToolResult {
                    call_id: "t1".into(),
                    content: "A".into(),
                    is_error: false,
                },
                Message::ToolResult {
                    call_id: "t2".into(),
                    content: "bad".into(),
                    is_error: true,
                },
            ],
            tools: vec![],
        };
        let b = request_body("claude", 100, &req);
        assert!(b.get("system").is_none() && b.get("tools").is_none());
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3);
        assert_eq!(
            msgs[1]["content"][2]["input"],
            json!({"__invalid_json": "{oops"})
        );
        assert_eq!(msgs[2]["role"], "user");
        assert_eq!(
            msgs[2]["content"][1],
            json!({"type": "tool_result", "tool_use_id": "t2", "content": "bad", "is_error": true})
        );
    }
}
