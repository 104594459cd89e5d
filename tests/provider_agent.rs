//! The agent loop driven by the real `openai` provider: against a local scripted server (always),
//! and against a real OpenAI-compatible server (opt-in: set `NBOOK_TEST_OPENAI_URL`).

mod provider_support;

use std::sync::Arc;
use std::time::Duration;

use nbook::agent::{
    build_provider_with, run_agent, HttpSettings, ModelEvent, ModelRequest, OpenAiProvider,
    Provider, ProviderError, RunOptions,
};
use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, Engine, LogRecord, Mode};
use provider_support::*;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

struct Project {
    _tmp: tempfile::TempDir,
    engine: Arc<Engine>,
}

/// A fresh project; `profile` = (key, toml tools line, prompt) adds a project profile.
fn project(config: Config, profile: Option<(&str, &str, &str)>) -> Project {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    std::fs::write(
        root.join("AGENTS.md"),
        "# House rules\n\nThe lighthouse keeper is called Ilse.\n",
    )
    .unwrap();
    if let Some((key, tools, prompt)) = profile {
        let dir = root.join(".nbook/profiles");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("{key}.toml")),
            format!(
                "key = \"{key}\"\nname = \"Probe\"\ndescription = \"test\"\ncreation = \"public\"\n\
                 world_access = \"none\"\n{tools}\n"
            ),
        )
        .unwrap();
        std::fs::write(dir.join(format!("{key}.md")), prompt).unwrap();
    }
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine =
        Arc::new(Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).unwrap());
    Project { _tmp: tmp, engine }
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

fn usage(p: u64, c: u64) -> String {
    json!({"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": p, "completion_tokens": c}}).to_string()
}

fn log_records(engine: &Engine, sid: &str) -> Vec<LogRecord> {
    engine
        .session_log(sid)
        .unwrap()
        .lines
        .into_iter()
        .map(|l| l.record)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_reads_a_file_and_answers_through_the_openai_provider() {
    let server = Server::start(vec![
        Reply::data(&[
            chunk(json!({"role": "assistant", "content": "I'll check the house rules."}), None),
            chunk(json!({"tool_calls": [{"index": 0, "id": "call_r1", "type": "function",
                                          "function": {"name": "read", "arguments": ""}}]}), None),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\": \"AGE"}}]}), None),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "NTS.md\"}"}}]}), None),
            chunk(json!({}), Some("tool_calls")),
            usage(1000, 30),
            "[DONE]".into(),
        ]),
        Reply::data(&[
            chunk(json!({"content": "The keeper "}), None),
            chunk(json!({"content": "is Ilse."}), None),
            chunk(json!({}), Some("stop")),
            usage(1200, 10),
            "[DONE]".into(),
        ]),
    ])
    .await;
    let cfg = config("openai", &server.base_url(), "");
    let p = project(cfg.clone(), None);
    let provider = build_provider_with(&cfg, "m", fast_settings()).unwrap();
    let sid = p
        .engine
        .create_session("leader.default", Mode::Normal, "keeper", None)
        .unwrap()
        .id;
    let opts = RunOptions::new(Approval::Fail, CancellationToken::new());
    let out = run_agent(
        p.engine.clone(),
        sid.clone(),
        provider,
        "Who keeps the lighthouse?".into(),
        opts,
    )
    .await
    .unwrap();
    assert_eq!(out.error, None);
    assert_eq!((out.turns, out.tool_calls, out.needed_approval), (2, 1, 0));
    assert_eq!(out.final_text, "The keeper is Ilse.");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let first = &reqs[0].body;
    assert_eq!(first["model"], "test-model");
    assert_eq!(first["messages"][0]["role"], "system");
    assert_eq!(
        first["messages"][1],
        json!({"role": "user", "content": "Who keeps the lighthouse?"})
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"read"), "{tools:?}");
    let second = reqs[1].body["messages"].as_array().unwrap();
    let assistant = &second[2];
    assert_eq!(assistant["tool_calls"][0]["id"], "call_r1");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        "{\"path\":\"AGENTS.md\"}"
    );
    let tool_msg = &second[3];
    assert_eq!(tool_msg["role"], "tool");
    assert_eq!(tool_msg["tool_call_id"], "call_r1");
    assert!(
        tool_msg["content"].as_str().unwrap().contains("Ilse"),
        "{tool_msg}"
    );

    let log = log_records(&p.engine, &sid);
    assert!(log.iter().any(
        |r| matches!(r, LogRecord::ToolResult { call_id, ok: true, .. } if call_id == "call_r1")
    ));
    let info = p.engine.session(&sid).unwrap();
    assert_eq!((info.input_tokens, info.output_tokens), (2200, 40));
    let expected_cost = (2200.0 * 2.0 + 40.0 * 8.0) / 1e6;
    assert!((info.cost - expected_cost).abs() < 1e-9, "{}", info.cost);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_json_arguments_come_back_as_an_error_the_agent_can_fix() {
    let server = Server::start(vec![
        Reply::data(&[
            chunk(json!({"tool_calls": [{"index": 0, "id": "call_bad", "function": {"name": "read", "arguments": "{\"path\": AGENTS.md}"}}]}), None),
            chunk(json!({}), Some("tool_calls")),
            "[DONE]".into(),
        ]),
        Reply::data(&[
            chunk(json!({"tool_calls": [{"index": 0, "id": "call_ok", "function": {"name": "read", "arguments": "{\"path\": \"AGENTS.md\"}"}}]}), None),
            chunk(json!({}), Some("tool_calls")),
            "[DONE]".into(),
        ]),
        Reply::data(&[chunk(json!({"content": "Ilse."}), Some("stop")), "[DONE]".into()]),
    ])
    .await;
    let cfg = config("openai", &server.base_url(), "");
    let p = project(cfg.clone(), None);
    let provider = build_provider_with(&cfg, "m", fast_settings()).unwrap();
    let sid = p
        .engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let opts = RunOptions::new(Approval::Fail, CancellationToken::new());
    let out = run_agent(p.engine.clone(), sid.clone(), provider, "Who?".into(), opts)
        .await
        .unwrap();
    assert_eq!(out.error, None);
    assert_eq!(out.turns, 3, "the session went on after the bad call");
    let second = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        second[2]["tool_calls"][0]["function"]["arguments"], "{\"path\": AGENTS.md}",
        "sent back verbatim"
    );
    let err = second[3]["content"].as_str().unwrap();
    assert!(
        err.starts_with("Error: invalid arguments for read"),
        "{err}"
    );
    assert!(
        err.contains("AGENTS.md}") && err.contains("object"),
        "the error quotes the raw text: {err}"
    );
}

/// `nbook run --model NAME` picks the model from config.toml and talks to its server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nbook_run_with_model_uses_the_configured_provider() {
    let server = Server::start(vec![Reply::data(&[
        chunk(json!({"content": "Hello from the model."}), Some("stop")),
        usage(50, 5),
        "[DONE]".into(),
    ])])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{}\"\n\
             [providers.keyed]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"NBOOK_TEST_CLI_UNSET_KEY\"\n\
             [models.small]\nprovider = \"local\"\nname = \"smollm2\"\n\
             [models.keyed]\nprovider = \"keyed\"\nname = \"x\"\n",
            server.base_url(),
            server.base_url()
        ),
    )
    .unwrap();
    let run = |model: &str| {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_nbook"));
        cmd.args(["run", "--project"])
            .arg(&root)
            .args(["--message", "Say hello", "--model", model])
            .env("NBOOK_HOME", &home)
            .env_remove("NBOOK_TEST_CLI_UNSET_KEY")
            .stdin(std::process::Stdio::null());
        cmd.output()
    };
    let out = run("small").await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["outcome"]["final_text"], "Hello from the model.");
    assert_eq!(server.requests()[0].body["model"], "smollm2");

    let out = run("large").await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("unknown model 'large'") && stderr.contains("small"),
        "{stderr}"
    );
    let out = run("keyed").await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("NBOOK_TEST_CLI_UNSET_KEY"), "{stderr}");
}

/// Opt-in: a real agent turn with a tool call against a real OpenAI-compatible server.
///
/// `NBOOK_TEST_OPENAI_URL` (e.g. `http://127.0.0.1:8088/v1`) turns it on;
/// `NBOOK_TEST_OPENAI_MODEL` names the model (default `smollm2`); `NBOOK_TEST_OPENAI_API_KEY`
/// is sent as a bearer token when set; `NBOOK_TEST_OPENAI_EXTRA` is a JSON object merged into
/// the first request (default: `tool_choice` required, one call, temperature 0, 256 tokens);
/// later requests get `tool_choice: none` so the model answers in text. Only the structure is
/// checked: a `read` call ran through the engine, its result went back to the model, the model
/// answered, and usage was counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_openai_server_agent_turn_with_a_tool_call() {
    let Ok(url) = std::env::var("NBOOK_TEST_OPENAI_URL") else {
        eprintln!("skipped: set NBOOK_TEST_OPENAI_URL (and NBOOK_TEST_OPENAI_MODEL) to run against a real server");
        return;
    };
    let model = std::env::var("NBOOK_TEST_OPENAI_MODEL").unwrap_or_else(|_| "smollm2".into());
    let first_extra: Map<String, Value> = match std::env::var("NBOOK_TEST_OPENAI_EXTRA") {
        Ok(s) => serde_json::from_str(&s).expect("NBOOK_TEST_OPENAI_EXTRA must be a JSON object"),
        Err(_) => json!({"tool_choice": "required", "parallel_tool_calls": false, "temperature": 0, "max_tokens": 256})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    };
    let mut later_extra = first_extra.clone();
    later_extra.insert("tool_choice".into(), json!("none"));
    let mut headers = Vec::new();
    if let Ok(key) = std::env::var("NBOOK_TEST_OPENAI_API_KEY") {
        headers.push(("authorization".to_string(), format!("Bearer {key}")));
    }
    let settings = HttpSettings {
        idle_timeout: Duration::from_secs(120),
        ..HttpSettings::default()
    };
    let make = |extra: Map<String, Value>| {
        let ep = nbook::agent::http::Endpoint::new(
            nbook::agent::openai::chat_url(&url),
            &headers,
            settings.clone(),
        )
        .unwrap();
        OpenAiProvider::new(ep, model.clone(), (0.0, 0.0)).with_extra_body(extra)
    };
    let provider: Arc<dyn Provider> = Arc::new(FirstTurnThenText {
        first: make(first_extra),
        later: make(later_extra),
    });

    let prompt = "You answer questions about a book project. Use the read tool to open AGENTS.md, then answer.";
    let p = project(
        Config::default(),
        Some(("probe", "tools = [\"read\"]", prompt)),
    );
    let sid = p
        .engine
        .create_session("probe", Mode::Normal, "live", None)
        .unwrap()
        .id;
    let opts = RunOptions::new(Approval::Fail, CancellationToken::new());
    let run = run_agent(
        p.engine.clone(),
        sid.clone(),
        provider,
        "Read AGENTS.md and tell me the keeper's name.".into(),
        opts,
    );
    let out = tokio::time::timeout(Duration::from_secs(600), run)
        .await
        .expect("the run finished")
        .unwrap();
    eprintln!("live outcome: {out:?}");
    assert_eq!(out.error, None);
    assert!(out.tool_calls >= 1, "the model called a tool: {out:?}");
    let log = log_records(&p.engine, &sid);
    let call = log.iter().find_map(|r| match r {
        LogRecord::Assistant { tool_calls, .. } => tool_calls.first().cloned(),
        _ => None,
    });
    let call = call.expect("a logged tool call");
    assert_eq!(call.name, "read");
    assert!(
        call.arguments.is_object(),
        "arguments parsed as JSON: {:?}",
        call.arguments
    );
    assert!(log
        .iter()
        .any(|r| matches!(r, LogRecord::ToolResult { tool, .. } if tool == "read")));
    assert!(out.turns >= 2, "the model answered after the tool result");
    assert!(
        p.engine.session(&sid).unwrap().input_tokens > 0,
        "usage was counted"
    );
}

/// Small models call tools reliably only under `tool_choice: required`; afterwards they must be
/// allowed to answer in text, or they call forever.
struct FirstTurnThenText {
    first: OpenAiProvider,
    later: OpenAiProvider,
}

impl Provider for FirstTurnThenText {
    fn name(&self) -> &str {
        self.first.name()
    }
    fn stream(
        &self,
        req: ModelRequest,
    ) -> futures::stream::BoxStream<'static, Result<ModelEvent, ProviderError>> {
        let after_tools = req
            .messages
            .iter()
            .any(|m| matches!(m, nbook::agent::Message::ToolResult { .. }));
        if after_tools {
            self.later.stream(req)
        } else {
            self.first.stream(req)
        }
    }
}
