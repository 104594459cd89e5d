//! Supervising agents on real model servers (issue 13), against a local server speaking the
//! OpenAI SSE wire format: live deltas before the stream ends, `[models.X]` settings in the
//! request body (and the profile's overrides), usage kept for cancelled and failed turns,
//! `finish_reason: length` surfaced, the context-budget error, no-op writes, and `nbook run`'s
//! exit codes and `text_delta` lines through the real binary.

mod provider_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use nbook::agent::{build_provider_for, run_agent, RunOptions};
use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, Engine, EngineEvent, LogRecord, Mode, ToolCall};
use provider_support::*;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

struct Project {
    tmp: tempfile::TempDir,
    root: PathBuf,
    engine: Arc<Engine>,
}

fn project(config: Config) -> Project {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine =
        Arc::new(Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).unwrap());
    Project { tmp, root, engine }
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

fn usage(p: u64, c: u64) -> String {
    json!({"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": p, "completion_tokens": c}}).to_string()
}

fn data(line: &str) -> Step {
    Step::Chunk(format!("data: {line}\n\n"))
}

fn records(engine: &Engine, sid: &str) -> Vec<LogRecord> {
    engine
        .session_log(sid)
        .unwrap()
        .lines
        .into_iter()
        .map(|l| l.record)
        .collect()
}

/// A `leader.default` session on the project and the provider for model `m`.
fn leader(p: &Project, cfg: &Config) -> (String, Arc<dyn nbook::agent::Provider>) {
    let provider = build_provider_for(cfg, "m", "leader.default").unwrap();
    let sid = p
        .engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    (sid, provider)
}

fn model_config(base_url: &str, model_lines: &str, extra: &str) -> Config {
    let text = format!(
        "[providers.p]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n\
         [models.m]\nprovider = \"p\"\nname = \"test-model\"\ninput_price = 2.0\noutput_price = 8.0\n\
         {model_lines}\n{extra}"
    );
    Config::parse(&text, "test").unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_configured_setting_reaches_the_request_body_and_the_profile_overrides_it() {
    let server = Server::start(vec![
        Reply::data(&[
            chunk(json!({"content": "ok"}), Some("stop")),
            "[DONE]".into(),
        ]),
        Reply::data(&[
            chunk(json!({"content": "ok"}), Some("stop")),
            "[DONE]".into(),
        ]),
    ])
    .await;
    let cfg = model_config(
        &server.base_url(),
        "max_tokens = 64\ntemperature = 0.2\ntop_p = 0.9\nstop = [\"END\"]\n\
         tool_choice = \"required\"\nparallel_tool_calls = false\nreasoning_effort = \"low\"\n\
         extra_body = { seed = 7, cache_prompt = true }\n",
        "[defaults.profiles.writer]\nmodel = \"m\"\ntemperature = 0.7\nextra_body = { seed = 9 }\n",
    );
    let p = project(cfg.clone());
    for (profile, temperature, seed) in [("leader.default", 0.2, 7), ("writer", 0.7, 9)] {
        let provider = build_provider_for(&cfg, "m", profile).unwrap();
        let sid = p
            .engine
            .create_session(profile, Mode::Normal, "t", None)
            .unwrap()
            .id;
        let out = run_agent(
            p.engine.clone(),
            sid,
            provider,
            "hi".into(),
            RunOptions::new(Approval::Fail, CancellationToken::new()),
        )
        .await
        .unwrap();
        assert_eq!(out.error, None);
        let body = server.requests().last().unwrap().body.clone();
        assert_eq!(body["max_tokens"], 64);
        assert_eq!(body["temperature"], temperature);
        assert_eq!(body["top_p"], 0.9);
        assert_eq!(body["stop"], json!(["END"]));
        assert_eq!(body["tool_choice"], "required");
        assert_eq!(body["parallel_tool_calls"], false);
        assert_eq!(body["reasoning_effort"], "low");
        assert_eq!(body["seed"], seed);
        assert_eq!(body["cache_prompt"], true);
    }
    assert_eq!(
        nbook::agent::default_model_key(&cfg, "writer"),
        Some("m"),
        "a profile table still names its model"
    );
}

#[test]
fn anthropic_gets_the_settings_in_its_own_terms() {
    let cfg = Config::parse(
        "[providers.a]\nkind = \"anthropic\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"NBOOK_TEST_WATCH_KEY\"\n\
         [models.c]\nprovider = \"a\"\nname = \"claude-x\"\nmax_tokens = 300\nstop = \"END\"\n\
         tool_choice = \"required\"\nparallel_tool_calls = false\n",
        "t",
    )
    .unwrap();
    let g = nbook::agent::generation_for(&cfg.models["c"], &cfg, None);
    let provider = nbook::agent::AnthropicProvider::new(
        nbook::agent::http::Endpoint::new(
            "http://127.0.0.1:9/v1/messages".into(),
            &[],
            nbook::agent::HttpSettings::default(),
        )
        .unwrap(),
        "claude-x",
        (0.0, 0.0),
    )
    .with_generation(&g);
    assert_eq!(provider.max_tokens(), 300);
    let extra = provider.extra_body();
    assert_eq!(extra["stop_sequences"], json!(["END"]));
    assert_eq!(
        extra["tool_choice"],
        json!({"type": "any", "disable_parallel_tool_use": true})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reply_text_is_published_while_the_stream_is_still_running() {
    let server = Server::start(vec![Reply::sse(vec![
        data(&chunk(json!({"content": "The fog "}), None)),
        Step::Sleep(Duration::from_millis(300)),
        data(&chunk(
            json!({"reasoning_content": "thinking about fog"}),
            None,
        )),
        data(&chunk(json!({"content": "came at two."}), None)),
        Step::Sleep(Duration::from_millis(300)),
        data(&chunk(json!({}), Some("stop"))),
        data(&usage(100, 6)),
        data("[DONE]"),
    ])])
    .await;
    let cfg = model_config(&server.base_url(), "", "");
    let p = project(cfg.clone());
    let mut events = p.engine.subscribe();
    let (sid, provider) = leader(&p, &cfg);
    let run = tokio::spawn(run_agent(
        p.engine.clone(),
        sid.clone(),
        provider,
        "When?".into(),
        RunOptions::new(Approval::Fail, CancellationToken::new()),
    ));
    let mut first_delta = None;
    let mut reasoning = String::new();
    let mut live = String::new();
    while let Ok(Ok(ev)) = tokio::time::timeout(Duration::from_secs(5), events.recv()).await {
        match ev {
            EngineEvent::TextDelta { session_id, text } if session_id == sid => {
                if first_delta.is_none() {
                    // The stream still has 600 ms to go: the run must not have finished.
                    first_delta = Some(run.is_finished());
                }
                live.push_str(&text);
            }
            EngineEvent::ReasoningDelta { text, .. } => reasoning.push_str(&text),
            EngineEvent::Log { line, .. } if matches!(line.record, LogRecord::Assistant { .. }) => {
                break
            }
            _ => {}
        }
    }
    assert_eq!(
        first_delta,
        Some(false),
        "a delta arrived before the reply ended"
    );
    assert_eq!(live, "The fog came at two.");
    assert_eq!(reasoning, "thinking about fog");
    let out = run.await.unwrap().unwrap();
    assert_eq!(out.final_text, "The fog came at two.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_turn_records_the_usage_it_cost() {
    let server = Server::start(vec![Reply::sse(vec![
        data(&chunk(
            json!({"content": "A long answer that never ends "}),
            None,
        )),
        Step::Stall,
    ])])
    .await;
    let cfg = model_config(&server.base_url(), "", "");
    let p = project(cfg.clone());
    let (sid, provider) = leader(&p, &cfg);
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        c.cancel();
    });
    let out = run_agent(
        p.engine.clone(),
        sid.clone(),
        provider,
        "Go".into(),
        RunOptions::new(Approval::Fail, cancel),
    )
    .await
    .unwrap();
    assert!(out.cancelled);
    assert!(out.input_tokens > 100, "the prompt was estimated: {out:?}");
    assert!(out.output_tokens > 0 && out.cost > 0.0, "{out:?}");
    let usage = records(&p.engine, &sid)
        .into_iter()
        .find_map(|r| match r {
            LogRecord::Usage {
                output_tokens,
                estimated,
                ..
            } => Some((output_tokens, estimated)),
            _ => None,
        })
        .expect("a usage record for the cancelled turn");
    assert!(usage.0 > 0 && usage.1, "estimated and marked so: {usage:?}");
    let info = p.engine.session(&sid).unwrap();
    assert!(info.output_tokens > 0 && info.cost > 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_keeps_the_servers_usage() {
    let server = Server::start(vec![Reply::data(&[
        chunk(json!({"content": "Partial"}), None),
        usage(900, 40),
        json!({"error": {"message": "the model crashed"}}).to_string(),
    ])])
    .await;
    let cfg = model_config(&server.base_url(), "", "");
    let p = project(cfg.clone());
    let (sid, provider) = leader(&p, &cfg);
    let out = run_agent(
        p.engine.clone(),
        sid,
        provider,
        "Go".into(),
        RunOptions::new(Approval::Fail, CancellationToken::new()),
    )
    .await
    .unwrap();
    assert!(out.error.as_deref().unwrap_or("").contains("crashed"));
    assert_eq!((out.input_tokens, out.output_tokens), (900, 40));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_cut_off_by_the_length_limit_says_so_to_the_author_and_the_model() {
    let server = Server::start(vec![
        Reply::data(&[
            chunk(json!({"content": "The keeper climbed the"}), Some("length")),
            usage(500, 64),
            "[DONE]".into(),
        ]),
        Reply::data(&[
            chunk(json!({"content": "ok"}), Some("stop")),
            "[DONE]".into(),
        ]),
    ])
    .await;
    let cfg = model_config(&server.base_url(), "max_tokens = 64", "");
    let p = project(cfg.clone());
    let (sid, provider) = leader(&p, &cfg);
    let out = run_agent(
        p.engine.clone(),
        sid.clone(),
        provider.clone(),
        "Go".into(),
        RunOptions::new(Approval::Fail, CancellationToken::new()),
    )
    .await
    .unwrap();
    assert!(out.cut_off);
    assert!(
        out.final_text
            .contains("[reply cut off at 64 tokens: the output-token limit was reached]"),
        "{}",
        out.final_text
    );
    // The next turn's request carries the marker in the assistant message.
    run_agent(
        p.engine.clone(),
        sid,
        provider,
        "Go on".into(),
        RunOptions::new(Approval::Fail, CancellationToken::new()),
    )
    .await
    .unwrap();
    let body = server.requests()[1].body.to_string();
    assert!(body.contains("reply cut off at 64 tokens"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_that_cannot_fit_the_window_fails_before_any_request_with_the_figures() {
    let server = Server::start(vec![]).await;
    let cfg = model_config(&server.base_url(), "context_window = 2048", "");
    let p = project(cfg.clone());
    let (sid, provider) = leader(&p, &cfg);
    let mut opts = RunOptions::new(Approval::Fail, CancellationToken::new());
    opts.context_window = Some(2048);
    let out = run_agent(p.engine.clone(), sid.clone(), provider, "Go".into(), opts)
        .await
        .unwrap();
    let err = out.error.expect("budget error");
    assert!(
        err.contains("does not fit the model's context window"),
        "{err}"
    );
    assert!(err.contains("window is 2048 tokens"), "{err}");
    assert!(err.contains("tool schemas"), "{err}");
    assert!(err.contains("author.small"), "{err}");
    assert!(server.requests().is_empty(), "nothing was sent");
    let info = p.engine.session(&sid).unwrap();
    assert_eq!(info.context_window, 2048);
    assert!(info.context_tokens > 2048);
    // No pointless compaction record either.
    assert!(!records(&p.engine, &sid)
        .iter()
        .any(|r| matches!(r, LogRecord::Compaction { .. })));
}

#[test]
fn the_small_author_profile_fits_a_4k_window_with_room_to_work() {
    let p = project(Config::default());
    let profile = p.engine.profiles().get("author.small").expect("built in");
    let tools: Vec<nbook::agent::ToolSpec> = p
        .engine
        .registry()
        .iter()
        .filter(|t| profile.allows(t.tool.name()))
        .map(|t| nbook::agent::ToolSpec {
            name: t.tool.name().into(),
            description: t.tool.description().into(),
            parameters: t.tool.schema(),
        })
        .collect();
    for needed in ["read", "write", "edit", "get_story_tree"] {
        assert!(tools.iter().any(|t| t.name == needed), "{needed}");
    }
    let b = nbook::agent::budget::ContextBudget::measure(4096, &profile.prompt, &tools, &[]);
    assert!(
        b.fixed() <= 2500,
        "prompt + tools take ~{} tokens of a 4k window",
        b.fixed()
    );
    assert!(b.check_fixed().is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_changes_nothing_returns_unchanged_without_asking() {
    let p = project(Config::default());
    std::fs::write(p.root.join("notes.md"), "same\n").unwrap();
    let sid = p
        .engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let call = |name: &str, args: Value| ToolCall {
        id: String::new(),
        name: name.into(),
        arguments: args,
    };
    let r = p
        .engine
        .call(
            &sid,
            call("write", json!({"path": "notes.md", "content": "same\n"})),
            Approval::Fail,
        )
        .await;
    assert!(r.ok, "{r:?}");
    assert!(
        r.content.starts_with("unchanged: notes.md"),
        "{}",
        r.content
    );
    let r = p
        .engine
        .call(
            &sid,
            call(
                "edit",
                json!({"path": "notes.md", "edits": [{"oldText": "same", "newText": "same"}]}),
            ),
            Approval::Fail,
        )
        .await;
    assert!(r.ok && r.content.starts_with("unchanged"), "{r:?}");
    assert!(p.engine.pending().is_empty());
    assert!(!records(&p.engine, &sid)
        .iter()
        .any(|r| matches!(r, LogRecord::ApprovalRequested { .. })));
    // A real change still asks.
    let r = p
        .engine
        .call(
            &sid,
            call("write", json!({"path": "notes.md", "content": "other\n"})),
            Approval::Fail,
        )
        .await;
    assert!(!r.ok);
    assert_eq!(
        std::fs::read_to_string(p.root.join("notes.md")).unwrap(),
        "same\n"
    );
}

// ---- the real binary ---------------------------------------------------------------------

struct Cli {
    home: PathBuf,
}

impl Cli {
    fn new(tmp: &Path, base_url: &str) -> Cli {
        let home = tmp.join("clihome");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join("config.toml"),
            format!(
                "[providers.p]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n\
                 [models.m]\nprovider = \"p\"\nname = \"test-model\"\n"
            ),
        )
        .unwrap();
        Cli { home }
    }

    fn command(&self, cwd: &Path, args: &[&str]) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_nbook"));
        c.args(args)
            .current_dir(cwd)
            .env("NBOOK_HOME", &self.home)
            .env("NBOOK_REQUEST_MAX_ATTEMPTS", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        c
    }

    async fn run(&self, cwd: &Path, args: &[&str]) -> (i32, String, String) {
        let out = tokio::time::timeout(Duration::from_secs(60), self.command(cwd, args).output())
            .await
            .expect("nbook finished")
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn write_call_reply() -> Reply {
    Reply::data(&[
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "w1", "type": "function",
                "function": {"name": "write", "arguments": "{\"path\": \"x.md\", \"content\": \"x\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        "[DONE]".into(),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nbook_run_prints_text_deltas_unless_quiet() {
    let reply = || {
        Reply::data(&[
            chunk(json!({"content": "Hello "}), None),
            chunk(json!({"content": "author."}), Some("stop")),
            "[DONE]".into(),
        ])
    };
    let server = Server::start(vec![reply(), reply()]).await;
    let p = project(Config::default());
    let cli = Cli::new(p.tmp.path(), &server.base_url());
    // Run inside a subfolder without --project: the book is found upward.
    let sub = p.root.join("manuscript");
    let (code, out, err) = cli
        .run(&sub, &["run", "--model", "m", "--message", "hi"])
        .await;
    assert_eq!(code, 0, "{err}");
    let deltas: String = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == "text_delta")
        .map(|v| v["text"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(deltas, "Hello author.");
    let (code, out, _) = cli
        .run(&sub, &["run", "--model", "m", "--message", "hi", "--quiet"])
        .await;
    assert_eq!(code, 0);
    assert!(!out.contains("\"text_delta\""), "{out}");
    assert!(out.contains("run_finished"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nbook_run_stops_after_a_refusal_and_exits_3_naming_its_own_flags() {
    let server = Server::start(vec![write_call_reply(), write_call_reply()]).await;
    let p = project(Config::default());
    let cli = Cli::new(p.tmp.path(), &server.base_url());
    let root = p.root.to_string_lossy().into_owned();
    let (code, out, err) = cli
        .run(
            p.tmp.path(),
            &["run", "--project", &root, "--model", "m", "--message", "go"],
        )
        .await;
    assert_eq!(code, 3, "{out}\n{err}");
    assert_eq!(
        server.requests().len(),
        1,
        "no second model call after the refusal"
    );
    assert!(out.contains("--approve-all or --reject-all"), "{out}");
    assert!(!out.contains("--approve or --reject"), "{out}");
    assert!(!p.root.join("x.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nbook_run_exits_3_when_an_approval_was_missing_even_if_a_later_turn_failed() {
    let server = Server::start(vec![
        write_call_reply(),
        Reply::error(500, r#"{"error": {"message": "overloaded"}}"#),
    ])
    .await;
    let p = project(Config::default());
    let cli = Cli::new(p.tmp.path(), &server.base_url());
    let root = p.root.to_string_lossy().into_owned();
    let (code, out, err) = cli
        .run(
            p.tmp.path(),
            &[
                "run",
                "--project",
                &root,
                "--model",
                "m",
                "--message",
                "go",
                "--continue-after-refusal",
            ],
        )
        .await;
    assert_eq!(server.requests().len(), 2, "{out}\n{err}");
    assert_eq!(code, 3, "{out}\n{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nbook_run_exits_1_on_a_model_error() {
    let server = Server::start(vec![Reply::error(400, r#"{"error": {"message": "bad"}}"#)]).await;
    let p = project(Config::default());
    let cli = Cli::new(p.tmp.path(), &server.base_url());
    let (code, out, _) = cli
        .run(&p.root, &["run", "--model", "m", "--message", "go"])
        .await;
    assert_eq!(code, 1, "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nbook_run_exits_130_after_ctrl_c() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let server = Server::start(vec![Reply::sse(vec![
        data(&chunk(json!({"content": "Working"}), None)),
        Step::Stall,
    ])])
    .await;
    let p = project(Config::default());
    let cli = Cli::new(p.tmp.path(), &server.base_url());
    let mut child = cli
        .command(&p.root, &["run", "--model", "m", "--message", "go"])
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    // Wait until the reply is streaming, then interrupt as a terminal's Ctrl+C would.
    let saw = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(l)) = lines.next_line().await {
            if l.contains("\"text_delta\"") {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(saw, "the run streamed");
    let pid = child.id().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-s", "INT", &pid])
        .status()
        .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("exited")
        .unwrap();
    assert_eq!(status.code(), Some(130));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_inside_a_project_find_it_and_a_new_project_has_its_template_chapter() {
    let tmp = tempfile::tempdir().unwrap();
    let cli = Cli::new(tmp.path(), "http://127.0.0.1:9/v1");
    let root = tmp.path().join("novel");
    let (code, _, err) = cli
        .run(
            tmp.path(),
            &["init", root.to_str().unwrap(), "--title", "Novel"],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    let chapter_dir = root.join("manuscript/001-volume/001-chapter");
    // The template's chapter is in the story tree: its brief resolves.
    let (code, out, err) = cli
        .run(
            &chapter_dir,
            &[
                "call",
                "get_chapter_writer_brief",
                "--args",
                r#"{"chapterId": 1}"#,
            ],
        )
        .await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("001-volume-001-chapter") || out.contains("Chapter One"),
        "{out}"
    );
    let (code, out, err) = cli.run(&chapter_dir, &["sessions", "--json"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, _, err) = cli
        .run(
            &chapter_dir,
            &["call", "read", "--args", r#"{"path": "project.yaml"}"#],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("nbook init"), "{err}");
    // Outside any project the advice is still given.
    let (code, _, err) = cli.run(tmp.path(), &["sessions"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("nbook init"), "{err}");
}
