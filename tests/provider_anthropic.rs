//! The `anthropic` provider against a local HTTP server speaking the Messages SSE format:
//! text and tool_use blocks, input_json_delta fragments, usage from message_start and
//! message_delta, error events, retries, the idle timeout and the request body.

mod provider_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use nbook::agent::{
    build_provider_with, Message, ModelEvent, ModelRequest, Provider, ProviderError, ToolSpec,
};
use nbook::engine::ToolCall;
use provider_support::*;
use serde_json::{json, Value};

const KEY_VAR: &str = "NBOOK_TEST_PROVIDER_ANTHROPIC_KEY";

fn provider(server: &Server) -> Arc<dyn Provider> {
    std::env::set_var(KEY_VAR, "sk-ant-test");
    let cfg = config(
        "anthropic",
        &server.base_url(),
        &format!("api_key_env = \"{KEY_VAR}\""),
    );
    build_provider_with(&cfg, "m", fast_settings()).unwrap()
}

fn req(text: &str) -> ModelRequest {
    ModelRequest {
        system: "Be terse.".into(),
        messages: vec![Message::User { text: text.into() }],
        tools: vec![],
    }
}

/// One SSE event with its `event:` line, as the Messages API sends them.
fn ev(data: Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

fn start(input: u64, cache_read: u64) -> String {
    ev(
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
        "model": "test-model", "content": [], "stop_reason": null,
        "usage": {"input_tokens": input, "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
    )
}

fn text_block(index: u64, parts: &[&str]) -> Vec<String> {
    let mut v = vec![ev(
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
    )];
    for p in parts {
        v.push(ev(json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}})));
    }
    v.push(ev(json!({"type": "content_block_stop", "index": index})));
    v
}

fn tool_start(index: u64, id: &str, name: &str) -> String {
    ev(json!({"type": "content_block_start", "index": index,
        "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}))
}

fn json_delta(index: u64, part: &str) -> String {
    ev(
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": part}}),
    )
}

fn stop(index: u64) -> String {
    ev(json!({"type": "content_block_stop", "index": index}))
}

fn end(reason: &str, output: u64) -> Vec<String> {
    vec![
        ev(
            json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null}, "usage": {"output_tokens": output}}),
        ),
        ev(json!({"type": "message_stop"})),
    ]
}

fn reply(events: Vec<String>) -> Reply {
    Reply::sse(events.into_iter().map(Step::Chunk).collect())
}

fn ok_text(text: &str) -> Reply {
    let mut e = vec![start(5, 0)];
    e.extend(text_block(0, &[text]));
    e.extend(end("end_turn", 2));
    reply(e)
}

#[tokio::test]
async fn streams_text_and_usage() {
    let mut e = vec![start(100, 60), ev(json!({"type": "ping"}))];
    e.extend(text_block(0, &["Hello", ", world", "!"]));
    e.extend(end("end_turn", 7));
    let server = Server::start(vec![reply(e)]).await;
    let p = provider(&server);
    let (events, err) = collect(p.as_ref(), req("hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_of(&events), "Hello, world!");
    assert!(
        events.contains(&ModelEvent::Usage {
            input_tokens: 160,
            output_tokens: 7
        }),
        "{events:?}"
    );
    assert!(events.contains(&ModelEvent::UsageDetails {
        cached_input_tokens: 60,
        reasoning_tokens: 0,
        estimated: false
    }));
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(p.prices(), (2.0, 8.0));
}

#[tokio::test]
async fn parallel_tool_use_blocks_join_their_json_fragments() {
    let mut e = vec![start(50, 0)];
    e.extend(text_block(0, &["Reading both."]));
    e.push(tool_start(1, "toolu_a", "read"));
    e.push(json_delta(1, ""));
    e.push(json_delta(1, "{\"path\": \"AG"));
    e.push(json_delta(1, "ENTS.md\"}"));
    e.push(stop(1));
    e.push(tool_start(2, "toolu_b", "read"));
    e.push(json_delta(2, "{\"path\": \"project.yaml\","));
    e.push(json_delta(2, " \"limit\": 3}"));
    e.push(stop(2));
    e.extend(end("tool_use", 30));
    let server = Server::start(vec![reply(e)]).await;
    let (events, err) = collect(provider(&server).as_ref(), req("read")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        calls_of(&events),
        vec![
            ToolCall {
                id: "toolu_a".into(),
                name: "read".into(),
                arguments: json!({"path": "AGENTS.md"})
            },
            ToolCall {
                id: "toolu_b".into(),
                name: "read".into(),
                arguments: json!({"path": "project.yaml", "limit": 3})
            },
        ]
    );
}

#[tokio::test]
async fn error_event_fails_the_request() {
    let mut e = vec![start(5, 0)];
    e.extend(text_block(0, &["Sure"]).into_iter().take(2));
    e.push(ev(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ));
    let server = Server::start(vec![reply(e)]).await;
    let (events, err) = collect(provider(&server).as_ref(), req("x")).await;
    assert_eq!(text_of(&events), "Sure");
    let err = err.expect("error");
    assert!(matches!(err, ProviderError::Stream(_)), "{err:?}");
    assert!(
        err.to_string().contains("Overloaded (overloaded_error)"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after_then_succeeds() {
    let server = Server::start(vec![
        Reply::error(429, r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}"#)
            .header("retry-after", "1"),
        ok_text("after the wait"),
    ])
    .await;
    let (events, err) = collect(provider(&server).as_ref(), req("x")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_of(&events), "after the wait");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(
        reqs[1].at - reqs[0].at >= Duration::from_millis(990),
        "waited {:?}",
        reqs[1].at - reqs[0].at
    );
}

#[tokio::test]
async fn server_errors_are_retried() {
    let server = Server::start(vec![
        Reply::error(
            500,
            r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
        ),
        Reply::error(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
        ok_text("third time"),
    ])
    .await;
    let (events, err) = collect(provider(&server).as_ref(), req("x")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_of(&events), "third time");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn unauthorized_fails_at_once() {
    let server = Server::start(vec![
        Reply::error(401, r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#),
        ok_text("never"),
    ])
    .await;
    let (_, err) = collect(provider(&server).as_ref(), req("x")).await;
    let err = err.expect("fails");
    assert!(
        matches!(err, ProviderError::Http { status: 401, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("401") && err.to_string().contains("invalid x-api-key"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout() {
    let mut steps: Vec<Step> = vec![Step::Chunk(start(5, 0))];
    steps.extend(
        text_block(0, &["Once upon"])
            .into_iter()
            .take(2)
            .map(Step::Chunk),
    );
    steps.push(Step::Stall);
    let server = Server::start(vec![Reply::sse(steps)]).await;
    let started = Instant::now();
    let (events, err) = collect(provider(&server).as_ref(), req("x")).await;
    assert_eq!(text_of(&events), "Once upon");
    assert!(matches!(err, Some(ProviderError::Idle(_))), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_reply_without_message_stop_is_an_error() {
    let mut e = vec![start(5, 0)];
    e.extend(text_block(0, &["half"]));
    let server = Server::start(vec![reply(e)]).await;
    let (_, err) = collect(provider(&server).as_ref(), req("x")).await;
    assert!(err
        .expect("incomplete")
        .to_string()
        .contains("no message_stop"));
}

#[tokio::test]
async fn the_request_has_the_messages_shape() {
    let server = Server::start(vec![ok_text("ok")]).await;
    let request = ModelRequest {
        system: "You are the lead author.".into(),
        messages: vec![
            Message::User {
                text: "What does AGENTS.md say?".into(),
            },
            Message::Assistant {
                text: "Let me look.".into(),
                tool_calls: vec![ToolCall {
                    id: "toolu_1".into(),
                    name: "read".into(),
                    arguments: json!({"path": "AGENTS.md"}),
                }],
            },
            Message::ToolResult {
                call_id: "toolu_1".into(),
                content: "# Agents".into(),
                is_error: false,
            },
            Message::User {
                text: "Thanks".into(),
            },
        ],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
    };
    let (_, err) = collect(provider(&server).as_ref(), request).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        server.requests()[0].body,
        json!({
            "model": "test-model",
            "max_tokens": 8192,
            "system": "You are the lead author.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "What does AGENTS.md say?"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "AGENTS.md"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "# Agents"},
                    {"type": "text", "text": "Thanks"}
                ]}
            ],
            "tools": [{"name": "read", "description": "Read a file",
                       "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}],
            "stream": true
        })
    );
}

#[tokio::test]
async fn a_missing_key_names_the_variable() {
    let cfg = config("anthropic", "http://127.0.0.1:9/v1", "");
    let saved = std::env::var("ANTHROPIC_API_KEY").ok();
    if saved.is_none() {
        let err = build_provider_with(&cfg, "m", fast_settings())
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    }
}

#[tokio::test]
async fn a_server_that_ignores_stream_still_works() {
    let body = json!({"id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [{"type": "text", "text": "One moment."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "AGENTS.md"}}],
        "usage": {"input_tokens": 9, "output_tokens": 4}});
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
