//! The `openai` provider against a local HTTP server speaking the chat-completions SSE format:
//! streamed text, tool-call fragments joined by index, usage, in-band errors, retries, the idle
//! timeout, cancellation, and the request body.

mod provider_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use nbook::agent::{
    build_provider_with, Message, ModelEvent, ModelRequest, Provider, ProviderError, ToolSpec,
};
use nbook::engine::ToolCall;
use provider_support::*;
use serde_json::{json, Value};

fn provider(server: &Server) -> Arc<dyn Provider> {
    build_provider_with(
        &config("openai", &server.base_url(), ""),
        "m",
        fast_settings(),
    )
    .unwrap()
}

fn req(text: &str) -> ModelRequest {
    ModelRequest {
        system: "You are terse.".into(),
        messages: vec![Message::User { text: text.into() }],
        tools: vec![],
    }
}

fn chunk(delta: Value) -> String {
    json!({"id": "c1", "object": "chat.completion.chunk", "model": "test-model",
           "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
    .to_string()
}

fn finish(reason: &str) -> String {
    json!({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
        .to_string()
}

fn usage(prompt: u64, completion: u64, cached: u64, reasoning: u64) -> String {
    json!({"id": "c1", "object": "chat.completion.chunk", "choices": [], "usage": {
        "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning}}})
    .to_string()
}

fn tool_frag(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> String {
    let mut f = json!({"index": index, "function": {"arguments": args}});
    if let Some(id) = id {
        f["id"] = json!(id);
        f["type"] = json!("function");
    }
    if let Some(name) = name {
        f["function"]["name"] = json!(name);
    }
    chunk(json!({"tool_calls": [f]}))
}

fn ok_text(text: &str) -> Reply {
    Reply::data(&[
        chunk(json!({"role": "assistant", "content": text})),
        finish("stop"),
        usage(5, 1, 0, 0),
        "[DONE]".into(),
    ])
}

#[tokio::test]
async fn streams_text_and_usage() {
    let mut steps: Vec<Step> = vec![Step::Chunk(format!(
        "data: {}\n\n",
        chunk(json!({"role": "assistant", "content": ""}))
    ))];
    for word in ["Hello", ", ", "wor", "ld"] {
        steps.push(Step::Chunk(format!(
            "data: {}\n\n",
            chunk(json!({"content": word}))
        )));
    }
    // One event split across two writes, and a comment line, as servers do.
    let last = format!("data: {}\n\n", chunk(json!({"content": "!"})));
    let (a, b) = last.split_at(17);
    steps.push(Step::Chunk(a.to_string()));
    steps.push(Step::Chunk(format!("{b}: keep-alive\n\n")));
    steps.push(Step::Chunk(format!("data: {}\r\n\r\n", finish("stop"))));
    steps.push(Step::Chunk(format!(
        "data: {}\n\ndata: [DONE]\n\n",
        usage(12, 6, 4, 2)
    )));
    let server = Server::start(vec![Reply::sse(steps)]).await;
    let p = provider(&server);
    let (events, err) = collect(p.as_ref(), req("hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_of(&events), "Hello, world!");
    let deltas = events
        .iter()
        .filter(|e| matches!(e, ModelEvent::TextDelta(_)))
        .count();
    assert_eq!(deltas, 5, "text arrives as it streams: {events:?}");
    assert!(
        events.contains(&ModelEvent::Usage {
            input_tokens: 12,
            output_tokens: 6
        }),
        "{events:?}"
    );
    assert!(events.contains(&ModelEvent::UsageDetails {
        cached_input_tokens: 4,
        reasoning_tokens: 2,
        estimated: false
    }));
    assert_eq!(p.prices(), (2.0, 8.0));
    assert_eq!(server.requests()[0].path, "/v1/chat/completions");
}

#[tokio::test]
async fn parallel_tool_calls_are_joined_by_index() {
    let server = Server::start(vec![Reply::data(&[
        chunk(json!({"role": "assistant", "content": "Reading both."})),
        tool_frag(0, Some("call_a"), Some("read"), ""),
        tool_frag(0, None, None, "{\"pa"),
        tool_frag(1, Some("call_b"), Some("read"), "{\"path\""),
        tool_frag(0, None, None, "th\": \"AGENTS"),
        tool_frag(1, None, None, ": \"project.yaml\", \"limit\": 3}"),
        tool_frag(0, None, None, ".md\"}"),
        finish("tool_calls"),
        usage(40, 20, 0, 0),
        "[DONE]".into(),
    ])])
    .await;
    let (events, err) = collect(provider(&server).as_ref(), req("read")).await;
    assert!(err.is_none(), "{err:?}");
    let calls = calls_of(&events);
    assert_eq!(
        calls,
        vec![
            ToolCall {
                id: "call_a".into(),
                name: "read".into(),
                arguments: json!({"path": "AGENTS.md"})
            },
            ToolCall {
                id: "call_b".into(),
                name: "read".into(),
                arguments: json!({"path": "project.yaml", "limit": 3})
            },
        ]
    );
    assert_eq!(text_of(&events), "Reading both.");
}

#[tokio::test]
async fn invalid_json_arguments_reach_the_engine_as_a_raw_string() {
    let server = Server::start(vec![Reply::data(&[
        tool_frag(0, Some("call_x"), Some("read"), "{\"path\": AGENTS.md}"),
        finish("tool_calls"),
        "[DONE]".into(),
    ])])
    .await;
    let (events, err) = collect(provider(&server).as_ref(), req("read")).await;
    assert!(err.is_none(), "{err:?}");
    let calls = calls_of(&events);
    assert_eq!(calls[0].arguments, json!("{\"path\": AGENTS.md}"));
    // No usage chunk: the counts are estimated and say so.
    assert!(events.iter().any(|e| matches!(
        e,
        ModelEvent::UsageDetails {
            estimated: true,
            ..
        }
    )));
}

#[tokio::test]
async fn in_band_error_fails_the_request() {
    let server = Server::start(vec![Reply::data(&[
        chunk(json!({"role": "assistant", "content": "Sure"})),
        json!({"error": {"code": 500, "message": "The model produced output that does not match the expected peg-native format", "type": "server_error"}}).to_string(),
        "[DONE]".into(),
    ])])
    .await;
    let (events, err) = collect(provider(&server).as_ref(), req("x")).await;
    assert_eq!(text_of(&events), "Sure");
    let err = err.expect("an error");
    assert!(matches!(err, ProviderError::Stream(_)), "{err:?}");
    assert!(err.to_string().contains("peg-native format"), "{err}");
    assert_eq!(server.requests().len(), 1, "a failed stream is not retried");
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after_then_succeeds() {
    let server = Server::start(vec![
        Reply::error(
            429,
            r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#,
        )
        .header("Retry-After", "1"),
        ok_text("after the wait"),
    ])
    .await;
    let started = Instant::now();
    let (events, err) = collect(provider(&server).as_ref(), req("x")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_of(&events), "after the wait");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "retried once");
    let gap = reqs[1].at - reqs[0].at;
    assert!(
        gap >= Duration::from_millis(990),
        "Retry-After honoured, waited {gap:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(reqs[0].body, reqs[1].body, "the same request is sent again");
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff() {
    let server = Server::start(vec![
        Reply::error(500, r#"{"error":{"message":"boom"}}"#),
        Reply::error(503, "upstream down"),
        ok_text("third time"),
    ])
    .await;
    let (events, err) = collect(provider(&server).as_ref(), req("x")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_of(&events), "third time");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(
        reqs[1].at - reqs[0].at >= Duration::from_millis(15),
        "backoff between attempts"
    );
}

#[tokio::test]
async fn retries_are_bounded() {
    let server = Server::start(
        (0..6)
            .map(|_| Reply::error(502, r#"{"error":"bad gateway"}"#))
            .collect(),
    )
    .await;
    let (_, err) = collect(provider(&server).as_ref(), req("x")).await;
    let err = err.expect("gives up");
    assert!(
        matches!(err, ProviderError::Http { status: 502, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("bad gateway") && err.to_string().contains("4 attempts"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn unauthorized_fails_at_once_with_the_server_message() {
    let server = Server::start(vec![
        Reply::error(
            401,
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#,
        ),
        ok_text("never"),
    ])
    .await;
    let (_, err) = collect(provider(&server).as_ref(), req("x")).await;
    let msg = err.expect("fails").to_string();
    assert!(
        msg.contains("401") && msg.contains("Incorrect API key provided"),
        "{msg}"
    );
    assert_eq!(server.requests().len(), 1, "no retry on 401");
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout() {
    let server = Server::start(vec![Reply::sse(vec![
        Step::Chunk(format!(
            "data: {}\n\n",
            chunk(json!({"content": "Once upon"}))
        )),
        Step::Stall,
    ])])
    .await;
    let started = Instant::now();
    let (events, err) = collect(provider(&server).as_ref(), req("x")).await;
    assert_eq!(text_of(&events), "Once upon");
    let err = err.expect("idle timeout");
    assert!(matches!(err, ProviderError::Idle(_)), "{err:?}");
    assert!(
        err.to_string()
            .contains("no data from the model server for 400 ms"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_body_cut_short_is_an_error() {
    let server = Server::start(vec![Reply::data(&[chunk(json!({"content": "half"}))])]).await;
    let (_, err) = collect(provider(&server).as_ref(), req("x")).await;
    assert!(err
        .expect("incomplete")
        .to_string()
        .contains("ended before the reply was complete"));
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let mut steps = vec![];
    for i in 0..200 {
        steps.push(Step::Chunk(format!(
            "data: {}\n\n",
            chunk(json!({"content": format!("w{i} ")}))
        )));
        steps.push(Step::Sleep(Duration::from_millis(20)));
    }
    let server = Server::start(vec![Reply::sse(steps)]).await;
    let p = provider(&server);
    let mut s = p.stream(req("x"));
    use futures::StreamExt;
    assert!(matches!(s.next().await, Some(Ok(ModelEvent::TextDelta(_)))));
    drop(s);
    let until = Instant::now() + Duration::from_secs(3);
    while server.disconnects() == 0 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.disconnects(), 1, "the server saw the client go away");
}

#[tokio::test]
async fn nothing_is_sent_before_the_stream_is_polled() {
    let server = Server::start(vec![ok_text("x")]).await;
    let p = provider(&server);
    drop(p.stream(req("x")));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn the_request_has_the_chat_completions_shape() {
    std::env::set_var("NBOOK_TEST_PROVIDER_OPENAI_KEY", "sk-test-123");
    let server = Server::start(vec![ok_text("ok")]).await;
    let cfg = config(
        "openai",
        &server.base_url(),
        "api_key_env = \"NBOOK_TEST_PROVIDER_OPENAI_KEY\"\nheaders = { \"X-Project\" = \"book\" }",
    );
    let p = build_provider_with(&cfg, "m", fast_settings()).unwrap();
    let request = ModelRequest {
        system: "You are the lead author.".into(),
        messages: vec![
            Message::User {
                text: "What does AGENTS.md say?".into(),
            },
            Message::Assistant {
                text: "Let me look.".into(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "read".into(),
                    arguments: json!({"path": "AGENTS.md"}),
                }],
            },
            Message::ToolResult {
                call_id: "call_1".into(),
                content: "# Agents\nBe kind.".into(),
                is_error: false,
            },
        ],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
    };
    let (_, err) = collect(p.as_ref(), request).await;
    assert!(err.is_none(), "{err:?}");
    let r = &server.requests()[0];
    assert_eq!(r.header("authorization"), Some("Bearer sk-test-123"));
    assert_eq!(r.header("x-project"), Some("book"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.body,
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "You are the lead author."},
                {"role": "user", "content": "What does AGENTS.md say?"},
                {"role": "assistant", "content": "Let me look.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"AGENTS.md\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "# Agents\nBe kind."}
            ],
            "tools": [{"type": "function", "function": {
                "name": "read", "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
            }}],
            "stream": true,
            "stream_options": {"include_usage": true}
        })
    );
}

#[tokio::test]
async fn config_errors_name_what_is_missing() {
    let cfg = config(
        "openai",
        "http://127.0.0.1:9/v1",
        "api_key_env = \"NBOOK_TEST_SURELY_UNSET_KEY\"",
    );
    let err = build_provider_with(&cfg, "m", fast_settings())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("NBOOK_TEST_SURELY_UNSET_KEY"), "{err}");
    let err = build_provider_with(&cfg, "gpt-9", fast_settings())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("unknown model 'gpt-9'") && err.contains("m"),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_ignores_stream_still_works() {
    let body = json!({"id": "c1", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": "One moment.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"AGENTS.md\"}"}}]}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4}});
    let server = Server::start(vec![Reply::json(&body.to_string())]).await;
    let (events, err) = collect(provider(&server).as_ref(), req("x")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_of(&events), "One moment.");
    assert_eq!(calls_of(&events)[0].arguments, json!({"path": "AGENTS.md"}));
    assert!(events.contains(&ModelEvent::Usage {
        input_tokens: 9,
        output_tokens: 4
    }));
}
