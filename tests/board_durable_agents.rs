//! Durable agents (`fn_agent_create`, `fn_agent_delete`, `fn_get_agent_config`,
//! `fn_update_agent_config`, `fn_update_identity`) through the real engine on a real project:
//! creation and deletion wait in the approval queue whatever the preset (nothing exists before
//! the author approves; a reject creates nothing; no agent-callable tool can decide), every
//! rejected bound is listed and persists nothing (checked in the real SQLite file), direct
//! reports only, identity limits and the identity in the system prompt, delete with assigned
//! tasks, and the mailbox's response mode from the agent's runtime config.

#[allow(dead_code)]
mod engine_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use engine_support::{call, APPROVE};
use nbook::board::mailbox::{response_mode, ResponseMode};
use nbook::board::tasks as bt;
use nbook::board::Board;
use nbook::config::{Config, Dirs, Preset};
use nbook::engine::{Approval, CallResult, CallStatus, Decision, Engine, Mode};
use nbook::tools::fusion::memory::SESSION_AGENT;
use serde_json::{json, Value};

struct Fx {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    engine: Arc<Engine>,
}

fn fx() -> Fx {
    fx_with(Preset::Supervised)
}

fn fx_with(preset: Preset) -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let mut config = Config::default();
    config.approval.preset = preset;
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine =
        Arc::new(Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).unwrap());
    Fx {
        _tmp: tmp,
        root,
        outside,
        engine,
    }
}

impl Fx {
    fn session(&self, profile: &str) -> String {
        self.engine
            .create_session(profile, Mode::Normal, profile, None)
            .unwrap()
            .id
    }

    /// A session running as durable agent `agent`.
    fn as_agent(&self, profile: &str, agent: &str) -> String {
        let sid = self.session(profile);
        self.engine
            .set_session_state(&sid, vec![(SESSION_AGENT.into(), json!(agent))])
            .unwrap();
        sid
    }

    async fn run(&self, sid: &str, tool: &str, args: Value) -> CallResult {
        self.engine.call(sid, call(tool, args), APPROVE).await
    }

    async fn ok(&self, sid: &str, tool: &str, args: Value) -> Value {
        let r = self.run(sid, tool, args).await;
        assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
        r.details.unwrap_or(Value::Null)
    }

    async fn author(&self, tool: &str, args: Value) -> CallResult {
        self.engine.author_call(tool, args, None).await
    }

    async fn author_ok(&self, tool: &str, args: Value) -> Value {
        let r = self.author(tool, args).await;
        assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
        r.details.unwrap_or(Value::Null)
    }

    /// The call fails with a tool error carrying `code`; its message says nothing changed.
    async fn code(&self, sid: &str, tool: &str, args: Value) -> (String, Value) {
        let r = self.run(sid, tool, args).await;
        coded(r)
    }

    async fn author_code(&self, tool: &str, args: Value) -> (String, Value) {
        coded(self.author(tool, args).await)
    }

    /// Spawn a queued call and wait until it is visible in the queue.
    async fn queued(
        &self,
        sid: &str,
        tool: &str,
        args: Value,
    ) -> (tokio::task::JoinHandle<CallResult>, String) {
        let before = self.engine.pending().len();
        let (e, s, c) = (self.engine.clone(), sid.to_string(), call(tool, args));
        let handle = tokio::spawn(async move { e.call(&s, c, Approval::Queue).await });
        for _ in 0..1000 {
            let p = self.engine.pending();
            if p.len() > before {
                return (handle, p.last().unwrap().approval_id.clone());
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        panic!("the call never reached the approval queue");
    }

    fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.root.join(".nbook/project.sqlite")).unwrap()
    }

    /// Every stored agent row and archived revision, read from the real SQLite file.
    fn stored(&self) -> (Vec<String>, i64) {
        let c = self.db();
        let mut st = c
            .prepare("SELECT id || ' ' || name || ' ' || revision || ' ' || soul || ' ' || instructions_text || ' ' || memory || ' ' || IFNULL(instructions_path, '-') || ' ' || IFNULL(heartbeat_procedure_path, '-') || ' ' || runtime_config || ' ' || reports_to FROM nbook_board_agent ORDER BY seq")
            .unwrap();
        let rows = st
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let revs: i64 = c
            .query_row("SELECT COUNT(*) FROM nbook_board_agent_revision", [], |r| {
                r.get(0)
            })
            .unwrap();
        (rows, revs)
    }

    fn board(&self) -> Board {
        Board::new(&self.root, "Book")
    }

    /// The author creates agent `name` reporting to `boss`; returns its id.
    async fn agent(&self, name: &str, boss: &str) -> String {
        let d = self
            .author_ok(
                "fn_agent_create",
                json!({"name": name, "role": "custom", "reportsTo": boss}),
            )
            .await;
        d["agentId"].as_str().unwrap().to_string()
    }

    async fn listed(&self, sid: &str) -> Vec<Value> {
        let d = self.ok(sid, "fn_list_agents", json!({})).await;
        d["agents"].as_array().cloned().unwrap_or_default()
    }
}

fn coded(r: CallResult) -> (String, Value) {
    assert_eq!(r.status, CallStatus::ToolError, "{}: {}", r.tool, r.content);
    assert!(r.content.contains("nothing was changed"), "{}", r.content);
    let d = r.details.unwrap_or(Value::Null);
    (d["code"].as_str().unwrap_or("").to_string(), d)
}

/// The violations' `(field, code)` pairs.
fn violations(d: &Value) -> Vec<(String, String)> {
    d["violations"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| {
                    (
                        v["field"].as_str().unwrap_or("").to_string(),
                        v["code"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn names(f: &Fx, sid: &str) -> Vec<String> {
    nbook::agent::run_loop::tool_specs(&f.engine, sid)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

const TOOLS: [&str; 5] = [
    "fn_agent_create",
    "fn_agent_delete",
    "fn_get_agent_config",
    "fn_update_agent_config",
    "fn_update_identity",
];

#[test]
fn executor_and_heartbeat_are_offered_the_tools_of_their_seed_column() {
    let f = fx();
    for (profile, want) in [
        ("executor", &TOOLS[..4]),
        ("heartbeat", &TOOLS[..]),
        ("triage", &[][..]),
        ("reviewer", &[][..]),
        ("chat", &[][..]),
    ] {
        let sid = f.session(profile);
        let offered = names(&f, &sid);
        let have: Vec<&str> = TOOLS
            .iter()
            .copied()
            .filter(|t| offered.iter().any(|o| o == t))
            .collect();
        assert_eq!(have, want.to_vec(), "{profile}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_agent_exists_only_after_the_author_approves_and_is_then_listed() {
    let f = fx();
    let hb = f.session("heartbeat");
    let args = json!({
        "name": "Continuity keeper",
        "role": "custom",
        "soul": "You keep the book's facts straight.",
        "heartbeat_interval_ms": 1000,
        "message_response_mode": "on-heartbeat",
    });
    let (h, id) = f.queued(&hb, "fn_agent_create", args).await;
    let p = f.engine.pending();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].tool, "fn_agent_create");
    assert!(!p[0].session_grant_allowed, "provisioning is never granted");
    // The exact preview: the record to create, with its id and fields.
    let preview = serde_json::to_string(&p[0].preview).unwrap();
    assert!(
        preview.contains("Agent agent-001 (Continuity keeper)"),
        "{preview}"
    );
    assert!(
        preview.contains("You keep the book's facts straight."),
        "{preview}"
    );
    assert!(preview.contains("on-heartbeat"), "{preview}");
    // Nothing exists while it waits: not in the file, not in the list.
    assert_eq!(f.stored(), (vec![], 0));
    let other = f.session("executor");
    assert!(!f
        .listed(&other)
        .await
        .iter()
        .any(|a| a["id"] == "agent-001"));
    f.engine.decide(&id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert!(r.waited);
    let d = r.details.unwrap();
    assert_eq!(d["outcome"], "created");
    assert_eq!(d["agentId"], "agent-001");
    assert_eq!(d["agent"]["reportsTo"], "heartbeat", "default: the caller");
    assert_eq!(d["agent"]["runtimeConfig"]["heartbeatIntervalMs"], 1000);
    let (rows, _) = f.stored();
    assert_eq!(rows.len(), 1);
    assert!(
        rows[0].starts_with("agent-001 Continuity keeper 1 "),
        "{rows:?}"
    );
    let listed = f.listed(&other).await;
    let a = listed
        .iter()
        .find(|a| a["id"] == "agent-001")
        .expect("listed");
    assert_eq!(a["durable"], true);
    assert_eq!(a["ephemeral"], false);
    assert_eq!(a["role"], "custom");
    assert_eq!(a["profile"], "heartbeat");
    assert_eq!(a["state"], "idle");
    assert_eq!(a["reportsTo"], "heartbeat");
    // The role filter finds it too.
    let d = f
        .ok(&other, "fn_list_agents", json!({"role": "custom"}))
        .await;
    assert!(d["agents"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["id"] == "agent-001"));
    // The manager reads its config; the stored interval is kept, scheduling clamps it.
    let g = f
        .ok(&hb, "fn_get_agent_config", json!({"agent_id": "agent-001"}))
        .await;
    assert_eq!(g["agent"]["runtimeConfig"]["heartbeatIntervalMs"], 1000);
    assert_eq!(g["effectiveHeartbeatIntervalMs"], 300_000);
    assert_eq!(g["profile"], "heartbeat");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_create_creates_nothing_and_the_next_gets_the_same_id() {
    let f = fx();
    let ex = f.session("executor");
    let (h, id) = f
        .queued(
            &ex,
            "fn_agent_create",
            json!({"name": "Scout", "role": "engineer"}),
        )
        .await;
    f.engine
        .decide(
            &id,
            Decision::Reject {
                reason: Some("not now".into()),
            },
        )
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Rejected, "{}", r.content);
    assert_eq!(f.stored(), (vec![], 0));
    assert!(!f.listed(&ex).await.iter().any(|a| a["durable"] == true));
    // Delete waits and a reject keeps the agent.
    let a = f.agent("Scout", "executor").await;
    assert_eq!(a, "agent-001");
    let before = f.stored();
    let (h, id) = f
        .queued(&ex, "fn_agent_delete", json!({"agent_id": a}))
        .await;
    let p = f.engine.pending();
    let preview = serde_json::to_string(&p[0].preview).unwrap();
    assert!(preview.contains("delete"), "{preview}");
    assert_eq!(f.stored(), before, "nothing is deleted while it waits");
    f.engine
        .decide(&id, Decision::Reject { reason: None })
        .unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Rejected);
    assert_eq!(f.stored(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provisioning_waits_even_where_the_preset_would_run_it() {
    // Under `neurobook`, normal mode runs mutating calls without asking; provisioning still
    // waits for the author.
    let f = fx_with(Preset::Neurobook);
    let hb = f.session("heartbeat");
    let (h, id) = f
        .queued(
            &hb,
            "fn_agent_create",
            json!({"name": "Scout", "role": "triage"}),
        )
        .await;
    assert_eq!(f.stored(), (vec![], 0));
    f.engine.decide(&id, Decision::Approve).unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Ok);
    assert_eq!(f.stored().0.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_agent_callable_tool_can_decide_a_pending_creation() {
    let f = fx();
    // No tool an agent profile lists takes an approval (the queue's ids are `apr-…`; only
    // `Engine::decide`, the author's keys, resolves one).
    let registry = nbook::tools::registry().unwrap();
    let profiles = f.engine.profiles();
    for p in profiles.iter().filter(|p| p.key != "author") {
        for t in registry
            .iter()
            .filter(|t| p.tools.iter().any(|x| x == t.tool.name()))
        {
            let schema = t.tool.schema();
            let props: Vec<String> = schema["properties"]
                .as_object()
                .map(|o| o.keys().map(|k| k.to_lowercase()).collect())
                .unwrap_or_default();
            assert!(
                !props.iter().any(|k| k.contains("approval")),
                "{} (offered to {}) takes {props:?}",
                t.tool.name(),
                p.key
            );
        }
    }
    // An agent trying its mail while its creation waits decides nothing.
    let hb = f.session("heartbeat");
    let (h, id) = f
        .queued(
            &hb,
            "fn_agent_create",
            json!({"name": "Self-made", "role": "custom"}),
        )
        .await;
    let peer = f.session("heartbeat");
    let r = f
        .run(
            &peer,
            "fn_send_message",
            json!({"type": "agent-to-user", "content": format!("approve {id}")}),
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let mail = f
        .ok(&peer, "fn_read_messages", json!({"unread_only": false}))
        .await;
    for m in mail["messages"].as_array().into_iter().flatten() {
        if let Some(mid) = m["id"].as_str() {
            let _ = f
                .run(
                    &peer,
                    "fn_send_message",
                    json!({"reply_to_message_id": mid, "content": "approved"}),
                )
                .await;
        }
    }
    let (code, _) = f
        .code(
            &peer,
            "fn_get_agent_config",
            json!({"agent_id": "agent-001"}),
        )
        .await;
    assert_eq!(code, "AGENT_NOT_FOUND");
    assert_eq!(f.engine.pending().len(), 1, "still waiting");
    assert_eq!(f.stored(), (vec![], 0));
    f.engine
        .decide(&id, Decision::Reject { reason: None })
        .unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Rejected);
    assert_eq!(f.stored(), (vec![], 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_create_is_refused_before_it_waits_and_persists_nothing() {
    let f = fx();
    std::fs::write(f.outside.join("secret.md"), "x").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&f.outside, f.root.join("escape")).unwrap();
    let hb = f.session("heartbeat");
    let cases: Vec<(Value, Vec<(String, String)>)> = vec![
        (
            json!({"name": "  ", "role": "custom"}),
            pairs(&[("name", "empty")]),
        ),
        (
            json!({"name": "x".repeat(81), "role": "custom"}),
            pairs(&[("name", "too-long")]),
        ),
        (
            json!({"name": "A", "role": "custom", "reportsTo": "nobody"}),
            pairs(&[("reportsTo", "unknown-agent")]),
        ),
        (
            json!({"name": "A", "role": "custom", "reportsTo": "agent-042"}),
            pairs(&[("reportsTo", "unknown-agent")]),
        ),
        (
            json!({"name": "A", "role": "custom", "instructions_path": "/etc/passwd"}),
            pairs(&[("instructions_path", "path-invalid")]),
        ),
        (
            json!({"name": "A", "role": "custom", "instructions_path": "../outside/secret.md"}),
            pairs(&[("instructions_path", "path-invalid")]),
        ),
        (
            json!({"name": "A", "role": "custom", "instructions_path": "workspace/other/x.md"}),
            pairs(&[("instructions_path", "path-invalid")]),
        ),
        (
            json!({
                "name": "A", "role": "custom",
                "soul": "s".repeat(10_001),
                "instructions_text": "i".repeat(50_001),
                "heartbeat_interval_ms": 999,
                "heartbeat_timeout_ms": 4999,
                "max_concurrent_runs": 0,
            }),
            pairs(&[
                ("soul", "too-long"),
                ("instructions_text", "too-long"),
                ("heartbeat_interval_ms", "below-minimum"),
                ("heartbeat_timeout_ms", "below-minimum"),
                ("max_concurrent_runs", "below-minimum"),
            ]),
        ),
    ];
    for (args, want) in cases {
        let (code, d) = f.code(&hb, "fn_agent_create", args.clone()).await;
        assert_eq!(code, "AGENT_CONFIG_INVALID", "{args}");
        assert_eq!(violations(&d), want, "{args}");
        assert!(f.engine.pending().is_empty(), "a bad call never waits");
        assert_eq!(f.stored(), (vec![], 0), "{args}");
    }
    #[cfg(unix)]
    {
        let (code, d) = f
            .code(
                &hb,
                "fn_agent_create",
                json!({"name": "A", "role": "custom", "instructions_path": "escape/secret.md"}),
            )
            .await;
        assert_eq!(code, "AGENT_CONFIG_INVALID");
        assert_eq!(
            violations(&d),
            pairs(&[("instructions_path", "path-invalid")])
        );
    }
    // Arguments the schema refuses (an unknown role or mode) are refused before anything.
    for args in [
        json!({"name": "A", "role": "wizard"}),
        json!({"name": "A", "role": "custom", "message_response_mode": "sometimes"}),
        json!({"name": "A"}),
    ] {
        let r = f.run(&hb, "fn_agent_create", args.clone()).await;
        assert_eq!(r.status, CallStatus::InvalidArgs, "{args}: {}", r.content);
        assert_eq!(f.stored(), (vec![], 0), "{args}");
    }
    // A taken name (case-insensitive).
    f.agent("Scout", "heartbeat").await;
    let before = f.stored();
    let (code, d) = f
        .code(
            &hb,
            "fn_agent_create",
            json!({"name": "scout", "role": "custom"}),
        )
        .await;
    assert_eq!(code, "AGENT_CONFIG_INVALID");
    assert_eq!(violations(&d), pairs(&[("name", "name-taken")]));
    assert_eq!(f.stored(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_updates_list_every_violation_persist_nothing_and_archive_the_prior_config() {
    let f = fx();
    let a = f.agent("Scout", "heartbeat").await;
    let hb = f.session("heartbeat");
    std::fs::write(f.root.join("notes.md"), "Look at chapter 3 first.\n").unwrap();
    let before = f.stored();
    let cases: Vec<(Value, Vec<(String, String)>)> = vec![
        (json!({"agent_id": a}), pairs(&[("agent_id", "no-fields")])),
        (
            json!({
                "agent_id": a,
                "soul": "s".repeat(10_001),
                "instructions_text": "i".repeat(50_001),
                "heartbeat_interval_ms": 0,
                "heartbeat_timeout_ms": -1,
                "max_concurrent_runs": 0,
                "instructions_path": "/abs.md",
                "heartbeat_procedure_path": "../../x.md",
            }),
            pairs(&[
                ("instructions_path", "path-invalid"),
                ("heartbeat_procedure_path", "path-invalid"),
                ("soul", "too-long"),
                ("instructions_text", "too-long"),
                ("heartbeat_interval_ms", "below-minimum"),
                ("heartbeat_timeout_ms", "below-minimum"),
                ("max_concurrent_runs", "below-minimum"),
            ]),
        ),
    ];
    for (args, want) in cases {
        let (code, d) = f.code(&hb, "fn_update_agent_config", args.clone()).await;
        assert_eq!(code, "AGENT_CONFIG_INVALID", "{args}");
        assert_eq!(d["agentId"], a.as_str());
        assert_eq!(violations(&d), want, "{args}");
        assert_eq!(f.stored(), before, "{args}");
    }
    let r = f
        .run(
            &hb,
            "fn_update_agent_config",
            json!({"agent_id": a, "message_response_mode": "later"}),
        )
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs);
    assert_eq!(f.stored(), before);
    // The bounds themselves are accepted.
    let d = f
        .ok(
            &hb,
            "fn_update_agent_config",
            json!({
                "agent_id": a,
                "soul": "s".repeat(10_000),
                "heartbeat_interval_ms": 1000,
                "heartbeat_timeout_ms": 5000,
                "max_concurrent_runs": 1,
                "instructions_path": "notes.md",
                "heartbeat_procedure_path": "./notes.md",
            }),
        )
        .await;
    assert_eq!(d["revision"], 2);
    assert_eq!(d["agent"]["instructionsPath"], "notes.md");
    assert_eq!(d["agent"]["heartbeatProcedurePath"], "notes.md");
    let revs = f
        .board()
        .read(|c| nbook::board::agents::revisions(c, &a))
        .unwrap();
    assert_eq!(revs.len(), 1);
    assert_eq!(revs[0]["revision"], 1);
    assert_eq!(revs[0]["change"], "config");
    assert_eq!(
        revs[0]["config"]["soul"], "",
        "the prior config is archived"
    );
    // "" clears a path.
    let d = f
        .ok(
            &hb,
            "fn_update_agent_config",
            json!({"agent_id": a, "instructions_path": ""}),
        )
        .await;
    assert_eq!(d["agent"]["instructionsPath"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_manages_only_its_direct_reports_and_the_author_all() {
    let f = fx();
    let mine = f.agent("Mine", "heartbeat").await;
    let theirs = f.agent("Theirs", "executor").await;
    let hb = f.session("heartbeat");
    let before = f.stored();
    for (tool, args) in [
        ("fn_get_agent_config", json!({"agent_id": theirs})),
        (
            "fn_update_agent_config",
            json!({"agent_id": theirs, "soul": "mine now"}),
        ),
        ("fn_agent_delete", json!({"agent_id": theirs})),
    ] {
        let (code, d) = f.code(&hb, tool, args).await;
        assert_eq!(code, "AGENT_NOT_DIRECT_REPORT", "{tool}");
        assert_eq!(d["reportsTo"], "executor");
        assert_eq!(d["callerId"], "heartbeat");
        assert!(f.engine.pending().is_empty());
        assert_eq!(f.stored(), before, "{tool}");
    }
    f.ok(&hb, "fn_get_agent_config", json!({"agent_id": mine}))
        .await;
    let ex = f.session("executor");
    f.ok(&ex, "fn_get_agent_config", json!({"agent_id": theirs}))
        .await;
    // A durable agent's session is that agent: it creates its own reports and manages them,
    // not its siblings.
    let boss = f.as_agent("heartbeat", &mine);
    let d = f
        .ok(
            &boss,
            "fn_agent_create",
            json!({"name": "Junior", "role": "executor"}),
        )
        .await;
    let junior = d["agentId"].as_str().unwrap().to_string();
    assert_eq!(d["agent"]["reportsTo"], mine.as_str());
    f.ok(
        &boss,
        "fn_update_agent_config",
        json!({"agent_id": junior, "max_concurrent_runs": 2}),
    )
    .await;
    let (code, _) = f
        .code(&boss, "fn_get_agent_config", json!({"agent_id": theirs}))
        .await;
    assert_eq!(code, "AGENT_NOT_DIRECT_REPORT");
    let (code, _) = f
        .code(&hb, "fn_get_agent_config", json!({"agent_id": junior}))
        .await;
    assert_eq!(
        code, "AGENT_NOT_DIRECT_REPORT",
        "a report's report is not mine"
    );
    // The author manages every agent.
    for id in [&mine, &theirs, &junior] {
        f.author_ok("fn_get_agent_config", json!({"agent_id": id}))
            .await;
    }
    f.author_ok(
        "fn_update_agent_config",
        json!({"agent_id": theirs, "soul": "set by the author"}),
    )
    .await;
    // Deleting a manager moves its reports up to its own manager.
    let d = f
        .author_ok("fn_agent_delete", json!({"agent_id": mine}))
        .await;
    assert_eq!(d["outcome"], "deleted");
    assert_eq!(d["reparented"], json!([junior]));
    let j = f
        .author_ok("fn_get_agent_config", json!({"agent_id": junior}))
        .await;
    assert_eq!(j["agent"]["reportsTo"], "heartbeat");
    // Profiles, sessions and unknown ids.
    for (id, code) in [
        ("writer", "AGENT_BUILTIN"),
        ("executor", "AGENT_BUILTIN"),
        ("session:s-1", "AGENT_EPHEMERAL"),
        ("agent-099", "AGENT_NOT_FOUND"),
    ] {
        let before = f.stored();
        for tool in ["fn_get_agent_config", "fn_agent_delete"] {
            let (got, _) = f.author_code(tool, json!({"agent_id": id})).await;
            assert_eq!(got, code, "{tool} {id}");
        }
        let (got, _) = f
            .author_code(
                "fn_update_agent_config",
                json!({"agent_id": id, "soul": "x"}),
            )
            .await;
        assert_eq!(got, code, "update {id}");
        assert_eq!(f.stored(), before);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identity_edits_are_bounded_archived_and_reach_the_system_prompt() {
    let f = fx();
    let a = f.agent("Keeper", "heartbeat").await;
    let me = f.as_agent("heartbeat", &a);
    let before = f.stored();
    let (code, d) = f.code(&me, "fn_update_identity", json!({})).await;
    assert_eq!(code, "AGENT_CONFIG_INVALID");
    assert_eq!(violations(&d), pairs(&[("soul", "no-fields")]));
    assert_eq!(f.stored(), before);
    let (code, d) = f
        .code(
            &me,
            "fn_update_identity",
            json!({
                "soul": "s".repeat(10_001),
                "instructionsText": "i".repeat(50_001),
                "memory": "m".repeat(50_001),
            }),
        )
        .await;
    assert_eq!(code, "AGENT_CONFIG_INVALID");
    assert_eq!(
        violations(&d),
        pairs(&[
            ("soul", "too-long"),
            ("instructionsText", "too-long"),
            ("memory", "too-long"),
        ])
    );
    assert_eq!(f.stored(), before);
    // Not a durable agent's session.
    let plain = f.session("heartbeat");
    let (code, _) = f
        .code(&plain, "fn_update_identity", json!({"soul": "me"}))
        .await;
    assert_eq!(code, "IDENTITY_NOT_DURABLE");
    assert_eq!(f.stored(), before);
    // At the limits it is stored, the prior identity archived.
    let d = f
        .ok(
            &me,
            "fn_update_identity",
            json!({
                "soul": "You are the keeper of the book's continuity.",
                "instructionsText": "i".repeat(50_000),
                "memory": "Mara's eyes are green (ch. 2).",
            }),
        )
        .await;
    assert_eq!(d["revision"], 2);
    let revs = f
        .board()
        .read(|c| nbook::board::agents::revisions(c, &a))
        .unwrap();
    assert_eq!(revs.len(), 1);
    assert_eq!(revs[0]["change"], "identity");
    let prompt = nbook::agent::run_loop::system_prompt(&f.engine, &me);
    assert!(prompt.contains("You are Keeper (agent-001)"), "{prompt}");
    assert!(
        prompt.contains("You are the keeper of the book's continuity."),
        "{prompt}"
    );
    assert!(prompt.contains("Mara's eyes are green (ch. 2)."));
    // The instructions file joins the prompt too.
    std::fs::write(f.root.join("keeper.md"), "Check every date.\n").unwrap();
    f.author_ok(
        "fn_update_agent_config",
        json!({"agent_id": a, "instructions_path": "keeper.md"}),
    )
    .await;
    let prompt = nbook::agent::run_loop::system_prompt(&f.engine, &me);
    assert!(
        prompt.contains("## Instructions (keeper.md)\n\nCheck every date."),
        "{prompt}"
    );
    assert!(!nbook::agent::run_loop::system_prompt(&f.engine, &plain).contains("Keeper"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_agent_with_assigned_tasks_needs_force_or_reassign_to() {
    let f = fx();
    let a = f.agent("Drafter", "heartbeat").await;
    let hb = f.session("heartbeat");
    let d = f
        .ok(
            &hb,
            "fn_delegate_task",
            json!({"agent_id": a, "description": "Draft chapter 4"}),
        )
        .await;
    let task = d["taskId"].as_str().unwrap().to_string();
    assert_eq!(d["assignee"], a.as_str());
    let assignee = |f: &Fx| {
        let t = f.board().read(|c| bt::require(c, &task)).unwrap();
        nbook::board::assign::assignee(&t).map(str::to_string)
    };
    let before = f.stored();
    let (code, d) = f.code(&hb, "fn_agent_delete", json!({"agent_id": a})).await;
    assert_eq!(code, "AGENT_HAS_ASSIGNED_TASKS");
    assert_eq!(d["assignedTasks"], json!([task]));
    assert_eq!(f.stored(), before);
    for bad in ["nobody", a.as_str(), "dashboard", "session:s-1"] {
        let (code, d) = f
            .code(
                &hb,
                "fn_agent_delete",
                json!({"agent_id": a, "reassign_to": bad}),
            )
            .await;
        assert_eq!(code, "AGENT_CONFIG_INVALID", "{bad}");
        assert_eq!(violations(&d), pairs(&[("reassign_to", "unknown-agent")]));
        assert_eq!(f.stored(), before);
        assert_eq!(assignee(&f).as_deref(), Some(a.as_str()));
    }
    let d = f
        .ok(
            &hb,
            "fn_agent_delete",
            json!({"agent_id": a, "reassign_to": "writer"}),
        )
        .await;
    assert_eq!(d["outcome"], "deleted");
    assert_eq!(d["tasks"], json!([task]));
    assert_eq!(assignee(&f).as_deref(), Some("writer"));
    let (rows, revs) = f.stored();
    assert!(rows.is_empty());
    assert_eq!(revs, 1, "the last config is archived");
    // force: the tasks are unassigned. A new agent never gets a deleted agent's id.
    let b = f.agent("Drafter", "heartbeat").await;
    assert_eq!(b, "agent-002");
    f.ok(
        &hb,
        "fn_delegate_task",
        json!({"agent_id": b, "description": "Draft chapter 5"}),
    )
    .await;
    let d = f
        .ok(
            &hb,
            "fn_agent_delete",
            json!({"agent_id": b, "force": true}),
        )
        .await;
    let t5 = d["tasks"][0].as_str().unwrap().to_string();
    let t = f.board().read(|c| bt::require(c, &t5)).unwrap();
    assert_eq!(nbook::board::assign::assignee(&t), None);
    assert!(f.stored().0.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mailbox_uses_the_agents_message_response_mode() {
    let f = fx();
    let d = f
        .author_ok(
            "fn_agent_create",
            json!({"name": "Night owl", "role": "custom", "reportsTo": "heartbeat", "message_response_mode": "on-heartbeat"}),
        )
        .await;
    let a = d["agentId"].as_str().unwrap().to_string();
    let mode = |f: &Fx, id: &str| f.board().read(|c| response_mode(c, id)).unwrap();
    assert_eq!(mode(&f, &a), ResponseMode::OnHeartbeat);
    assert_eq!(mode(&f, "writer"), ResponseMode::Immediate);
    assert_eq!(mode(&f, "agent-077"), ResponseMode::Immediate);
    let hb = f.session("heartbeat");
    let sent = f
        .ok(
            &hb,
            "fn_send_message",
            json!({"to_id": a, "content": "The outline changed."}),
        )
        .await;
    assert_eq!(sent["responseMode"], "on-heartbeat");
    assert_eq!(sent["wakeRecipient"], false);
    // Its session reads the mail as its own.
    let me = f.as_agent("heartbeat", &a);
    let inbox = f.ok(&me, "fn_read_messages", json!({})).await;
    assert!(serde_json::to_string(&inbox)
        .unwrap()
        .contains("The outline changed."));
    f.ok(
        &hb,
        "fn_update_agent_config",
        json!({"agent_id": a, "message_response_mode": "immediate"}),
    )
    .await;
    assert_eq!(mode(&f, &a), ResponseMode::Immediate);
}
