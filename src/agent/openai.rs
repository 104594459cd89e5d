//! The `openai` provider: any OpenAI-compatible chat-completions server (OpenAI, Ollama,
//! llama.cpp's `llama-server`, vLLM), streamed with `stream_options.include_usage`.
//!
//! Wire rules (reference/models-notes.md):
//! - tool-call fragments are joined by `index`: `id` and `name` come in the first fragment,
//!   `arguments` are split across many; calls are emitted once the reply is complete;
//! - a data line holding `{"error": …}` is a failed request (llama.cpp sends these mid-stream);
//! - usage comes in a last chunk with empty `choices`; input counts include cached tokens;
//! - `[DONE]` ends the reply; a body that ends without it or a `finish_reason` is an error.
//!
//! Arguments that are not valid JSON are passed on as a JSON *string* holding the raw text. Every
//! tool schema wants an object, so the engine rejects the call with an argument error that
//! quotes what the model sent (`at /: "{\"path\": …" is not of type "object"`), the agent sees
//! it as the call's result and can send the call again; the session goes on. The raw string is
//! sent back verbatim in the assistant message of the next request.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use serde_json::{json, Map, Value};

use super::http::{
    drive, error_message, estimate_tokens, truncate, Decoder, Endpoint, Flow, SseEvent,
};
use super::provider::{Message, ModelEvent, ModelRequest, Provider, ProviderError};
use crate::engine::ToolCall;

pub struct OpenAiProvider {
    endpoint: Arc<Endpoint>,
    model: String,
    label: String,
    prices: (f64, f64),
    window: Option<usize>,
    extra_body: Map<String, Value>,
}

impl OpenAiProvider {
    /// `endpoint` posts to `<base_url>/chat/completions` (see `chat_url`) with the auth header.
    pub fn new(endpoint: Endpoint, model: impl Into<String>, prices: (f64, f64)) -> OpenAiProvider {
        let model = model.into();
        OpenAiProvider {
            label: format!("openai:{model}"),
            endpoint: Arc::new(endpoint),
            model,
            prices,
            window: None,
            extra_body: Map::new(),
        }
    }

    /// Extra top-level fields merged into every request body (e.g. `temperature`,
    /// `tool_choice`, `max_tokens`); they win over the fields nbook sets.
    pub fn with_extra_body(mut self, extra: Map<String, Value>) -> Self {
        self.extra_body = extra;
        self
    }

    /// `[models.X]` generation settings: each set field goes into the body under its
    /// chat-completions name (`max_tokens`, `temperature`, `top_p`, `stop`, `tool_choice`,
    /// `parallel_tool_calls`, `reasoning_effort`), then `extra_body` verbatim, which wins.
    pub fn with_generation(mut self, g: &crate::config::GenerationSettings) -> Self {
        let mut fields = Map::new();
        if let Some(n) = g.max_tokens {
            fields.insert("max_tokens".into(), json!(n));
        }
        if let Some(t) = g.temperature {
            fields.insert("temperature".into(), json!(t));
        }
        if let Some(p) = g.top_p {
            fields.insert("top_p".into(), json!(p));
        }
        if let Some(stop) = &g.stop {
            fields.insert("stop".into(), json!(stop.to_vec()));
        }
        if let Some(c) = &g.tool_choice {
            fields.insert("tool_choice".into(), c.clone());
        }
        if let Some(p) = g.parallel_tool_calls {
            fields.insert("parallel_tool_calls".into(), json!(p));
        }
        if let Some(r) = &g.reasoning_effort {
            fields.insert("reasoning_effort".into(), json!(r));
        }
        for (k, v) in &g.extra_body {
            fields.insert(k.clone(), v.clone());
        }
        self.extra_body.extend(fields);
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
}

/// The chat-completions URL for a base URL such as `http://127.0.0.1:8080/v1`.
pub fn chat_url(base_url: &str) -> String {
    super::http::join_url(base_url, "/chat/completions")
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.label
    }

    fn stream(&self, req: ModelRequest) -> BoxStream<'static, Result<ModelEvent, ProviderError>> {
        let body = request_body(&self.model, &req, &self.extra_body);
        let text = body.to_string();
        let decoder = ChatDecoder::new(estimate_tokens(text.len()));
        drive(self.endpoint.clone(), text.into_bytes(), decoder)
    }

    fn prices(&self) -> (f64, f64) {
        self.prices
    }

    fn context_window(&self) -> Option<usize> {
        self.window
    }
}

/// The JSON body of a streamed chat-completions request.
pub fn request_body(model: &str, req: &ModelRequest, extra: &Map<String, Value>) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for m in &req.messages {
        messages.push(match m {
            Message::User { text } => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } => {
                let mut msg = json!({"role": "assistant", "content": text});
                if !tool_calls.is_empty() {
                    if text.is_empty() {
                        msg["content"] = Value::Null;
                    }
                    msg["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": arguments_text(&c.arguments)},
                            })
                        })
                        .collect();
                }
                msg
            }
            Message::ToolResult { call_id, content, is_error } => {
                let content = if *is_error { format!("Error: {content}") } else { content.clone() };
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    for (k, v) in extra {
        body.insert(k.clone(), v.clone());
    }
    Value::Object(body)
}

/// Arguments as the wire wants them: a JSON text. A string is the raw text of arguments that
/// did not parse, sent back as the model wrote it.
fn arguments_text(args: &Value) -> String {
    match args {
        Value::String(raw) => raw.clone(),
        Value::Null => "{}".into(),
        other => other.to_string(),
    }
}

/// Parse streamed arguments: empty means none; text that is not JSON stays a raw string.
pub fn parse_arguments(tool: &str, raw: &str) -> Value {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Null) => Value::Object(Map::new()),
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(tool, error = %e, "the model sent tool arguments that are not valid JSON");
            Value::String(raw.to_string())
        }
    }
}

#[derive(Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

#[derive(Default)]
struct Usage {
    input: u64,
    cached: u64,
    output: u64,
    reasoning: u64,
}

struct ChatDecoder {
    calls: BTreeMap<u64, PartialCall>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    input_estimate: u64,
    output_chars: usize,
    tag: String,
}

impl ChatDecoder {
    fn new(input_estimate: u64) -> Self {
        ChatDecoder {
            calls: BTreeMap::new(),
            usage: None,
            finish_reason: None,
            input_estimate,
            output_chars: 0,
            tag: format!("{:08x}", rand::random::<u32>()),
        }
    }

    fn delta(&mut self, delta: &Value, out: &mut Vec<ModelEvent>) {
        for key in ["content", "refusal"] {
            if let Some(t) = delta
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                self.output_chars += t.len();
                out.push(ModelEvent::TextDelta(t.to_string()));
            }
        }
        // llama.cpp and DeepSeek stream reasoning as `reasoning_content`, others as `reasoning`.
        for key in ["reasoning_content", "reasoning"] {
            if let Some(t) = delta
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                self.output_chars += t.len();
                out.push(ModelEvent::ReasoningDelta(t.to_string()));
            }
        }
        let Some(fragments) = delta.get("tool_calls").and_then(Value::as_array) else {
            return;
        };
        for (pos, frag) in fragments.iter().enumerate() {
            let id = frag
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty());
            let index = match frag.get("index").and_then(Value::as_u64) {
                Some(i) => i,
                // No index (some servers send whole calls): match by id, else a new slot.
                None => match id
                    .and_then(|id| self.calls.iter().find(|(_, c)| c.id.as_deref() == Some(id)))
                {
                    Some((i, _)) => *i,
                    None => self
                        .calls
                        .keys()
                        .next_back()
                        .map_or(pos as u64, |last| last + 1),
                },
            };
            let call = self.calls.entry(index).or_default();
            if let Some(id) = id {
                call.id.get_or_insert_with(|| id.to_string());
            }
            if let Some(f) = frag.get("function") {
                if let Some(name) = f.get("name").and_then(Value::as_str) {
                    if call.name.is_empty() {
                        call.name = name.to_string();
                    }
                }
                match f.get("arguments") {
                    Some(Value::String(a)) => call.arguments.push_str(a),
                    // A few servers send the arguments as an object.
                    Some(v @ Value::Object(_)) => call.arguments.push_str(&v.to_string()),
                    _ => {}
                }
                self.output_chars += f
                    .get("arguments")
                    .and_then(Value::as_str)
                    .map_or(0, str::len);
            }
            out.push(ModelEvent::ToolCallProgress {
                index,
                name: call.name.clone(),
                argument_chars: call.arguments.len(),
            });
        }
    }

    fn usage(&mut self, u: &Value) {
        let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
        let input = n(u.get("prompt_tokens").or_else(|| u.get("input_tokens")));
        let output = n(u
            .get("completion_tokens")
            .or_else(|| u.get("output_tokens")));
        let cached = n(u.pointer("/prompt_tokens_details/cached_tokens"))
            .max(n(u.pointer("/input_tokens_details/cached_tokens")));
        let reasoning = n(u.pointer("/completion_tokens_details/reasoning_tokens"))
            .max(n(u.pointer("/output_tokens_details/reasoning_tokens")));
        self.usage = Some(Usage {
            input,
            cached,
            output,
            reasoning,
        });
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        for (index, call) in std::mem::take(&mut self.calls) {
            let arguments = parse_arguments(&call.name, &call.arguments);
            let id = call
                .id
                .unwrap_or_else(|| format!("call_{}_{index}", self.tag));
            out.push(ModelEvent::ToolCall(ToolCall {
                id,
                name: call.name,
                arguments,
            }));
        }
        if let Some(reason) = self.finish_reason.clone() {
            out.push(ModelEvent::Finish { reason });
        }
        let (usage, estimated) = match self.usage.take() {
            Some(u) => (u, false),
            None => {
                let output = estimate_tokens(self.output_chars);
                (
                    Usage {
                        input: self.input_estimate,
                        output,
                        ..Usage::default()
                    },
                    true,
                )
            }
        };
        out.push(ModelEvent::Usage {
            input_tokens: usage.input,
            output_tokens: usage.output,
        });
        out.push(ModelEvent::UsageDetails {
            cached_input_tokens: usage.cached,
            reasoning_tokens: usage.reasoning,
            estimated,
        });
    }
}

impl Decoder for ChatDecoder {
    fn on_event(&mut self, ev: SseEvent, out: &mut Vec<ModelEvent>) -> Result<Flow, ProviderError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            self.finish(out);
            return Ok(Flow::Done);
        }
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::Stream(format!(
                "the server sent a chunk that is not JSON ({e}): {}",
                truncate(data, 300)
            ))
        })?;
        if chunk.get("error").is_some_and(|e| !e.is_null()) || ev.event == "error" {
            // Counts the server reported before failing are what it bills: pass them on.
            if let Some(u) = self.usage.take() {
                out.push(ModelEvent::Usage {
                    input_tokens: u.input,
                    output_tokens: u.output,
                });
                out.push(ModelEvent::UsageDetails {
                    cached_input_tokens: u.cached,
                    reasoning_tokens: u.reasoning,
                    estimated: false,
                });
            }
            let msg = error_message(&chunk).unwrap_or_else(|| truncate(data, 300));
            return Err(ProviderError::Stream(format!(
                "the server reported an error: {msg}"
            )));
        }
        if let Some(choices) = chunk.get("choices").and_then(Value::as_array) {
            for choice in choices {
                // `message`: a whole, non-streamed completion from a server that ignored `stream`.
                if let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) {
                    self.delta(delta, out);
                }
                if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                    self.finish_reason = Some(reason.to_string());
                }
            }
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage(u);
        }
        Ok(Flow::Continue)
    }

    fn on_eof(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), ProviderError> {
        if self.finish_reason.is_some() {
            self.finish(out);
            return Ok(());
        }
        Err(ProviderError::Stream(
            "the stream ended before the reply was complete (no finish_reason, no [DONE])".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::provider::ToolSpec;

    fn decode(lines: &[&str]) -> (Vec<ModelEvent>, Result<(), ProviderError>) {
        let mut d = ChatDecoder::new(10);
        let mut out = Vec::new();
        for l in lines {
            match d.on_event(
                SseEvent {
                    event: String::new(),
                    data: (*l).into(),
                },
                &mut out,
            ) {
                Ok(Flow::Done) => return (out, Ok(())),
                Ok(Flow::Continue) => {}
                Err(e) => return (out, Err(e)),
            }
        }
        let end = d.on_eof(&mut out);
        (out, end)
    }

    #[test]
    fn joins_fragments_by_index() {
        let (out, end) = decode(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"ls","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read","arguments":"{\"pa"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"x\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        end.unwrap();
        let calls: Vec<_> = out
            .iter()
            .filter_map(|e| {
                if let ModelEvent::ToolCall(c) = e {
                    Some(c)
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("a", "read")
        );
        assert_eq!(calls[0].arguments, json!({"path": "x"}));
        assert_eq!(calls[1].arguments, json!({}));
        assert!(out.contains(&ModelEvent::UsageDetails {
            cached_input_tokens: 0,
            reasoning_tokens: 0,
            estimated: true
        }));
    }

    #[test]
    fn invalid_arguments_stay_raw_and_truncation_is_an_error() {
        let (out, _) = decode(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read","arguments":"{\"path\": "}}]},"finish_reason":"length"}]}"#,
        ]);
        // Progress events come first while the call is generated; then the call itself.
        assert!(out
            .iter()
            .any(|e| matches!(e, ModelEvent::ToolCall(c) if c.arguments == json!("{\"path\": "))));
        assert!(out.contains(&ModelEvent::Finish {
            reason: "length".into()
        }));
        let (_, end) = decode(&[r#"{"choices":[{"delta":{"content":"hi"}}]}"#]);
        assert!(end.unwrap_err().to_string().contains("ended before"));
    }

    #[test]
    fn body_shape() {
        let req = ModelRequest {
            system: "sys".into(),
            messages: vec![
                Message::User { text: "hi".into() },
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "read".into(),
                        arguments: json!("{bad"),
                    }],
                },
                Message::ToolResult {
                    call_id: "c1".into(),
                    content: "nope".into(),
                    is_error: true,
                },
            ],
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }],
        };
        let mut extra = Map::new();
        extra.insert("temperature".into(), json!(0));
        let b = request_body("m", &req, &extra);
        assert_eq!(
            b["messages"][0],
            json!({"role": "system", "content": "sys"})
        );
        assert_eq!(b["messages"][2]["content"], Value::Null);
        assert_eq!(
            b["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{bad"
        );
        assert_eq!(
            b["messages"][3],
            json!({"role": "tool", "tool_call_id": "c1", "content": "Error: nope"})
        );
        assert_eq!(b["tools"][0]["function"]["name"], "read");
        assert_eq!(b["temperature"], 0);
    }
}
