//! Agent evaluations and reflections through the real engine on a real project (a real
//! SQLite file in a tempdir): the author's ratings (`fn_agent_rate`, author-only) validated
//! before anything is stored, `fn_read_evaluations` (its shape, the 10 ratings / latest + 5
//! reflections limits, an agent's own record only), and `fn_reflect_on_performance` (held for
//! approval with the file's diff, derived from the ratings and the task log, appended to
//! `.nbook/agents/<agent>-reflections.jsonl` and read back, focus_area echoed).

#[allow(dead_code)]
mod engine_support;

use std::time::Duration;

use engine_support::{fx, Fx, APPROVE};
use nbook::engine::{Approval, CallResult, CallStatus, Decision, Mode, PreviewBody, ToolCall};
use nbook::tools::fusion::memory::SESSION_AGENT;
use nbook::tools::fusion::SESSION_TASK;
use serde_json::{json, Value};

impl Fx {
    fn session(&self, profile: &str, state: &[(&str, &str)]) -> String {
        let sid = self
            .engine
            .create_session(profile, Mode::Normal, "t", None)
            .unwrap()
            .id;
        if !state.is_empty() {
            self.engine
                .set_session_state(
                    &sid,
                    state
                        .iter()
                        .map(|(k, v)| (k.to_string(), json!(v)))
                        .collect(),
                )
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

    async fn ok(&self, sid: &str, tool: &str, args: Value) -> Value {
        let r = self.run(sid, tool, args).await;
        assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
        r.details.unwrap_or(Value::Null)
    }

    async fn rate(&self, args: Value) -> CallResult {
        self.engine.author_call("fn_agent_rate", args, None).await
    }

    async fn rate_ok(&self, args: Value) -> Value {
        let r = self.rate(args).await;
        assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
        r.details.unwrap_or(Value::Null)
    }

    fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.root.join(".nbook/project.sqlite")).unwrap()
    }

    fn ratings(&self) -> i64 {
        self.db()
            .query_row("SELECT count(*) FROM nbook_agent_rating", [], |r| r.get(0))
            .unwrap()
    }

    fn reflections(&self, agent: &str) -> Option<String> {
        std::fs::read_to_string(
            self.root
                .join(format!(".nbook/agents/{agent}-reflections.jsonl")),
        )
        .ok()
    }

    /// A task-log entry as the scheduler or an agent writes it.
    fn log(&self, task: &str, action: &str, outcome: &str, actor: &str) {
        self.db()
            .execute(
                "INSERT INTO nbook_board_task_log (task_id, at, action, outcome, actor) VALUES (?1, ?2, ?3, ?4, ?5)",
                rusqlite::params![task, nbook::protocol::now_rfc3339(), action, outcome, actor],
            )
            .unwrap();
    }

    async fn task(&self, description: &str) -> String {
        let r = self
            .engine
            .author_call("fn_task_create", json!({"description": description}), None)
            .await;
        assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
        r.details.unwrap()["taskId"].as_str().unwrap().to_string()
    }
}

fn names(f: &Fx, sid: &str) -> Vec<String> {
    nbook::agent::run_loop::tool_specs(&f.engine, sid)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_roles_are_offered_the_tools_the_seed_gives_them() {
    let f = fx();
    let has = |sid: &str, t: &str| names(&f, sid).iter().any(|n| n == t);
    let hb = f.session("heartbeat", &[]);
    assert!(has(&hb, "fn_read_evaluations") && has(&hb, "fn_reflect_on_performance"));
    let ex = f.session("executor", &[]);
    assert!(has(&ex, "fn_reflect_on_performance") && !has(&ex, "fn_read_evaluations"));
    let chat = f.session("chat", &[]);
    assert!(has(&chat, "fn_read_evaluations") && !has(&chat, "fn_reflect_on_performance"));
    let writer = f.session("writer", &[]);
    assert!(!has(&writer, "fn_agent_rate"));
    for sid in [&hb, &ex, &chat] {
        assert!(!has(sid, "fn_agent_rate"), "only the author rates");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_ratings_are_refused_and_persist_nothing() {
    let f = fx();
    let ex = f.session("executor", &[]);
    let long = "x".repeat(2001);
    let cases = [
        (
            json!({"session_id": ex, "score": 0}),
            "RATING_INVALID",
            "outside 1–5",
        ),
        (
            json!({"session_id": ex, "score": 6}),
            "RATING_INVALID",
            "outside 1–5",
        ),
        (
            json!({"session_id": ex, "score": -3}),
            "RATING_INVALID",
            "outside 1–5",
        ),
        (
            json!({"session_id": ex, "score": 2.5}),
            "RATING_INVALID",
            "whole number",
        ),
        (
            json!({"session_id": ex, "score": 4, "comment": long}),
            "RATING_INVALID",
            "2001 characters; at most 2000",
        ),
        (
            json!({"session_id": ex, "score": 4, "category": "c".repeat(65)}),
            "RATING_INVALID",
            "at most 64",
        ),
        (
            json!({"score": 4}),
            "RATING_INVALID",
            "session_id, task_id or agent_id",
        ),
        (
            json!({"session_id": "nope", "score": 4}),
            "RUN_NOT_FOUND",
            "no session nope",
        ),
        (
            json!({"task_id": "NB-404", "score": 4}),
            "RUN_NOT_FOUND",
            "NB-404",
        ),
        (
            json!({"agent_id": "nobody", "score": 4}),
            "RUN_NOT_FOUND",
            "nobody",
        ),
        (
            json!({"agent_id": "author", "score": 4}),
            "RUN_NOT_FOUND",
            "author",
        ),
        (
            json!({"session_id": "author", "score": 4}),
            "RUN_NOT_FOUND",
            "your own edits",
        ),
    ];
    for (args, code, says) in cases {
        let r = f.rate(args.clone()).await;
        assert_eq!(r.status, CallStatus::ToolError, "{args}: {}", r.content);
        let d = r.details.clone().unwrap_or(Value::Null);
        assert_eq!(d["code"], code, "{args}: {}", r.content);
        assert!(r.content.contains(says), "{args}: {}", r.content);
        assert!(r.content.contains("nothing was changed"), "{}", r.content);
        assert_eq!(f.ratings(), 0, "{args} stored nothing");
    }
    // A score that is not a number at all fails the schema before the tool.
    let r = f.rate(json!({"session_id": ex, "score": "five"})).await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
    assert!(r.content.contains("/score"), "{}", r.content);
    // An agent cannot rate, not even itself: the tool is the author's.
    let r = f
        .run(&ex, "fn_agent_rate", json!({"session_id": ex, "score": 5}))
        .await;
    assert_ne!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(f.ratings(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rating_lands_on_the_sessions_agent_with_its_run_and_task() {
    let f = fx();
    let task = f.task("Draft chapter 3").await;
    let first = f.session("executor", &[(SESSION_TASK, &task)]);
    // Created later: the task's last role session.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let second = f.session("executor", &[(SESSION_TASK, &task)]);

    let d = f
        .rate_ok(json!({"session_id": first, "score": 4, "comment": "  Good storm  ", "category": "prose"}))
        .await;
    assert_eq!(d["agentId"], "executor");
    assert_eq!(d["runId"], json!(first));
    assert_eq!(d["taskId"], json!(task));
    let d = f.rate_ok(json!({"task_id": task, "score": 2})).await;
    assert_eq!(d["runId"], json!(second), "the last session on the task");
    let d = f.rate_ok(json!({"agent_id": "writer", "score": 5})).await;
    assert_eq!(d["agentId"], "writer");
    assert_eq!(d["runId"], Value::Null);
    // A durable agent's session is rated as that agent.
    let durable = f.session("executor", &[(SESSION_AGENT, "agent-7")]);
    let d = f.rate_ok(json!({"session_id": durable, "score": 3})).await;
    assert_eq!(d["agentId"], "agent-7");

    let row: (String, String, String, i64, String, String, String, String) = f
        .db()
        .query_row(
            "SELECT agent_id, rater_type, rater_id, score, category, comment, run_id, task_id FROM nbook_agent_rating ORDER BY id LIMIT 1",
            [],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                ))
            },
        )
        .unwrap();
    assert_eq!(
        row,
        (
            "executor".into(),
            "user".into(),
            "author".into(),
            4,
            "prose".into(),
            "Good storm".into(),
            first.clone(),
            task.clone()
        )
    );
    assert_eq!(f.ratings(), 4);
    // The author's preview is the new row.
    let p = f
        .engine
        .author_preview("fn_agent_rate", &json!({"session_id": first, "score": 1}))
        .await
        .unwrap();
    assert!(
        p.summary.starts_with("fn_agent_rate: create AgentRating"),
        "{}",
        p.summary
    );
    assert_eq!(f.ratings(), 4, "a preview stores nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_evaluations_gives_the_summary_the_last_ten_and_only_ones_own() {
    let f = fx();
    let hb = f.session("heartbeat", &[]);
    let d = f.ok(&hb, "fn_read_evaluations", json!({})).await;
    assert_eq!(d["agentId"], "heartbeat");
    assert_eq!(d["summary"]["count"], 0);
    assert_eq!(d["summary"]["average"], Value::Null);
    assert_eq!(d["ratings"], json!([]));
    assert_eq!(d["reflections"]["latest"], Value::Null);

    let run = f.session("heartbeat", &[]);
    for i in 0..12 {
        let score = (i % 5) + 1;
        let cat = if i % 2 == 0 { "prose" } else { "pacing" };
        f.rate_ok(json!({"session_id": run, "score": score, "comment": format!("run {i}"), "category": cat}))
            .await;
    }
    f.rate_ok(json!({"agent_id": "chat", "score": 1, "comment": "not yours"}))
        .await;

    let r = f.run(&hb, "fn_read_evaluations", json!({})).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let d = r.details.unwrap();
    assert_eq!(d["summary"]["count"], 12);
    // Scores 1..5 twice, then 1, 2: 33 / 12.
    assert_eq!(d["summary"]["average"], 2.75);
    assert_eq!(d["summary"]["byCategory"]["prose"]["count"], 6);
    assert_eq!(d["last7Days"]["count"], 12);
    let ratings = d["ratings"].as_array().unwrap();
    assert_eq!(ratings.len(), 10, "the last 10");
    assert_eq!(ratings[0]["comment"], "run 11", "newest first");
    assert_eq!(ratings[9]["comment"], "run 2");
    for key in [
        "score",
        "raterType",
        "raterId",
        "runId",
        "createdAt",
        "category",
    ] {
        assert!(ratings[0].get(key).is_some(), "{key} in {}", ratings[0]);
    }
    assert_eq!(ratings[0]["runId"], json!(run));
    assert!(r
        .content
        .contains("Evaluations of heartbeat: 12 ratings, average 2.75"));
    assert!(!r.content.contains("not yours"));
    // Another agent sees its own record only; the tool takes no agent id.
    let chat = f.session("chat", &[]);
    let d = f.ok(&chat, "fn_read_evaluations", json!({})).await;
    assert_eq!(d["summary"]["count"], 1);
    assert_eq!(d["ratings"][0]["comment"], "not yours");
    let r = f
        .run(
            &chat,
            "fn_read_evaluations",
            json!({"agent_id": "heartbeat"}),
        )
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reflection_is_derived_from_the_record_appended_and_read_back() {
    let f = fx();
    let task = f.task("Draft chapter 5").await;
    let hb = f.session("heartbeat", &[(SESSION_TASK, &task)]);
    // Its board run: its own log entry, then the reviewer's verdicts and a block.
    let r = f
        .run(&hb, "fn_task_log", json!({"message": "Drafted the storm"}))
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    f.log(
        &task,
        "Review REVISE (reviewer session s-9): stiff dialogue",
        "revise",
        "runner",
    );
    f.log(
        &task,
        "Review APPROVE (reviewer session s-10)",
        "approve",
        "runner",
    );
    f.log(
        &task,
        "BLOCKED: needs the map",
        "blocked",
        &format!("heartbeat (session {hb})"),
    );
    // Another task nobody of this agent touched does not count.
    let other = f.task("Someone else's").await;
    f.log(&other, "Review RETHINK", "rethink", "runner");
    f.rate_ok(json!({"session_id": hb, "score": 2, "comment": "The dialogue is stiff", "category": "dialogue"}))
        .await;
    f.rate_ok(
        json!({"session_id": hb, "score": 5, "comment": "Great pacing", "category": "pacing"}),
    )
    .await;

    // Under supervised it waits for approval with the file's diff; nothing is written before.
    let h = {
        let e = f.engine.clone();
        let sid = hb.clone();
        tokio::spawn(async move {
            e.call(
                &sid,
                ToolCall {
                    id: String::new(),
                    name: "fn_reflect_on_performance".into(),
                    arguments: json!({"focus_area": "dialogue"}),
                },
                Approval::Queue,
            )
            .await
        })
    };
    let mut pending = Vec::new();
    for _ in 0..500 {
        pending = f.engine.pending();
        if !pending.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let p = pending.first().expect("the reflection waits for approval");
    assert_eq!(p.tool, "fn_reflect_on_performance");
    match &p.preview.body {
        PreviewBody::Files { changes } => {
            assert_eq!(changes[0].path, ".nbook/agents/heartbeat-reflections.jsonl");
            assert!(changes[0].diff.contains("stiff"), "{}", changes[0].diff);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        f.reflections("heartbeat").is_none(),
        "nothing before approval"
    );
    f.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let d = r.details.unwrap();
    assert_eq!(d["focusArea"], "dialogue");
    assert!(d["summary"]
        .as_str()
        .unwrap()
        .starts_with("Focus: dialogue. heartbeat: 2 ratings"));
    let insights: Vec<&str> = d["insights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        insights[0].starts_with("On dialogue: 1 rating mention"),
        "{insights:?}"
    );
    assert!(
        insights
            .iter()
            .any(|i| i.contains("1 of 2 reviews sent your work back")),
        "{insights:?}"
    );
    assert!(
        insights.iter().any(|i| i.contains("1 run ended blocked")),
        "{insights:?}"
    );
    let m = &d["metrics"];
    assert_eq!(m["board"]["tasks"], 1);
    assert_eq!(m["board"]["revise"], 1);
    assert_eq!(m["board"]["approve"], 1);
    assert_eq!(m["board"]["blocked"], 1);
    assert_eq!(
        m["board"]["rethink"], 0,
        "the other task is not this agent's"
    );
    assert_eq!(m["ratings"]["count"], 2);
    assert_eq!(m["last7Days"]["ratings"]["count"], 2);
    assert_eq!(m["focusArea"], "dialogue");
    assert!(!d["suggestedImprovements"].as_array().unwrap().is_empty());

    // The file holds one line of the notes' shape.
    let text = f.reflections("heartbeat").unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    let l = &lines[0];
    for key in [
        "id",
        "agentId",
        "timestamp",
        "trigger",
        "taskId",
        "metrics",
        "insights",
        "suggestedImprovements",
        "summary",
    ] {
        assert!(l.get(key).is_some(), "{key} in {l}");
    }
    assert_eq!(l["id"], "refl-1");
    assert_eq!(l["trigger"], "manual");
    assert_eq!(l["taskId"], json!(task));

    // Read back; then seven reflections give the latest and the 5 before it.
    let d = f.ok(&hb, "fn_read_evaluations", json!({})).await;
    assert_eq!(d["reflections"]["latest"]["id"], "refl-1");
    assert_eq!(d["reflections"]["previous"], json!([]));
    for _ in 0..6 {
        f.ok(&hb, "fn_reflect_on_performance", json!({})).await;
    }
    let d = f.ok(&hb, "fn_read_evaluations", json!({})).await;
    assert_eq!(d["reflectionCount"], 7);
    assert_eq!(d["reflections"]["latest"]["id"], "refl-7");
    let prev: Vec<&str> = d["reflections"]["previous"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(prev, ["refl-6", "refl-5", "refl-4", "refl-3", "refl-2"]);
    assert!(d["reflections"]["latest"]["summary"]
        .as_str()
        .unwrap()
        .starts_with("heartbeat: 2 ratings"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_or_bad_reflection_writes_nothing() {
    let f = fx();
    let ex = f.session("executor", &[]);
    let r = f
        .engine
        .call(
            &ex,
            ToolCall {
                id: String::new(),
                name: "fn_reflect_on_performance".into(),
                arguments: json!({}),
            },
            Approval::Auto {
                decision: Decision::Reject { reason: None },
                by: "test",
            },
        )
        .await;
    assert_eq!(r.status, CallStatus::Rejected, "{}", r.content);
    assert!(f.reflections("executor").is_none());
    let r = f
        .run(
            &ex,
            "fn_reflect_on_performance",
            json!({"focus_area": "x".repeat(501)}),
        )
        .await;
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(r.content.contains("at most 500"), "{}", r.content);
    assert!(f.reflections("executor").is_none());
    assert!(!f.root.join(".nbook/agents").exists());
    // With no record the reflection says so.
    let d = f.ok(&ex, "fn_reflect_on_performance", json!({})).await;
    assert_eq!(
        d["insights"][0],
        "There is no rating and no board run to learn from yet."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reflection_approved_after_a_new_rating_is_stale() {
    let f = fx();
    let hb = f.session("heartbeat", &[]);
    let h = {
        let e = f.engine.clone();
        let sid = hb.clone();
        tokio::spawn(async move {
            e.call(
                &sid,
                ToolCall {
                    id: String::new(),
                    name: "fn_reflect_on_performance".into(),
                    arguments: json!({}),
                },
                Approval::Queue,
            )
            .await
        })
    };
    let mut pending = Vec::new();
    for _ in 0..500 {
        pending = f.engine.pending();
        if !pending.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let p = pending.first().expect("waits").clone();
    f.rate_ok(json!({"session_id": hb, "score": 1, "comment": "late"}))
        .await;
    f.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Stale, "{}", r.content);
    assert!(f.reflections("heartbeat").is_none());
}
