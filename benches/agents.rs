//! Agent-loop benchmarks with the replay provider (no network, no model time), on a real
//! project and real session logs:
//!
//! - `turn_overhead`: one agent turn end to end — context assembly (profile prompt, AGENTS.md,
//!   reminders, transcript rebuilt from the log at run start), the streamed reply, the
//!   assistant and usage log lines, one `read` call through the engine and its result line.
//!   Reported per turn (each sample runs a 10-turn session and divides).
//! - `ui_frame_with_20_sessions`: 20 sessions replaying scripts concurrently through the agent
//!   host (restarted as they finish) while the UI applies every engine event that arrived and
//!   draws a 200×50 frame. The time is the UI task's work per frame; DESIGN.md's frame target
//!   is ≤ 2 ms.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use nbook::agent::host::{Host, ProviderSource};
use nbook::agent::{run_agent, Provider, ReplayProvider, RunOptions};
use nbook::config::{Config, Dirs};
use nbook::engine::agents::{InvokeMode, InvokeRequest};
use nbook::engine::{Approval, Engine, Mode};
use nbook::tui::action::Action;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;

fn project() -> (tempfile::TempDir, Arc<Engine>, Dirs) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Bench")).expect("init");
    std::fs::write(root.join("notes.md"), "a short note\n".repeat(20)).expect("write");
    let dirs = Dirs {
        config: tmp.path().join("h"),
        data: tmp.path().join("h/d"),
        logs: tmp.path().join("h/l"),
    };
    let ws = nbook::workspace::Workspace::open(&root).expect("open");
    let engine = Arc::new(Engine::open(ws, Config::default(), &dirs).expect("engine"));
    (tmp, engine, dirs)
}

/// `turns` turns that each read a file, then a closing turn.
fn script(turns: usize) -> String {
    let mut lines: Vec<String> = (0..turns)
        .map(|i| {
            json!({"text": format!("Turn {i}: checking the notes again before I write."),
                   "tool_calls": [{"name": "read", "arguments": {"path": "notes.md"}}]})
            .to_string()
        })
        .collect();
    lines.push(json!({"text": "Done.", "tool_calls": []}).to_string());
    lines.join("\n")
}

fn turn_overhead(c: &mut Criterion) {
    let (_tmp, engine, _dirs) = project();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("rt");
    const TURNS: u32 = 10;
    let text = script(TURNS as usize - 1);
    let mut g = c.benchmark_group("agents");
    g.bench_function("turn_overhead", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let sid = engine
                    .create_session("writer", Mode::Normal, "bench", None)
                    .expect("session")
                    .id;
                let provider = Arc::new(ReplayProvider::parse(&text, "bench").expect("script"));
                let start = Instant::now();
                let out = rt
                    .block_on(run_agent(
                        engine.clone(),
                        sid,
                        provider,
                        "Go.".into(),
                        RunOptions::new(Approval::Fail, Default::default()),
                    ))
                    .expect("run");
                total += start.elapsed() / TURNS;
                assert_eq!(out.turns, TURNS as usize);
            }
            total
        })
    });
    g.finish();
}

fn ui_frame_with_20_sessions(c: &mut Criterion) {
    let (_tmp, engine, dirs) = project();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("rt");
    let text = Arc::new(script(30));
    let source: ProviderSource = {
        let text = text.clone();
        Arc::new(move |_profile, _model| {
            ReplayProvider::parse(&text, "bench")
                .map(|p| {
                    Arc::new(p.with_word_delay(Duration::from_micros(200))) as Arc<dyn Provider>
                })
                .map_err(|e| e.to_string())
        })
    };
    let _guard = rt.enter();
    let host = Host::attach(engine.clone(), source, Approval::Fail);
    let sessions: Vec<String> = (0..20)
        .map(|i| {
            engine
                .create_session("writer", Mode::Normal, &format!("writer {i}"), None)
                .expect("session")
                .id
        })
        .collect();
    let mut events = engine.subscribe();
    let mut app = nbook::tui::build_app(&engine, &dirs, sessions.first().cloned(), (200, 50));
    let mut term = Terminal::new(TestBackend::new(200, 50)).expect("terminal");
    let keep_busy = |host: &Arc<Host>| {
        for sid in &sessions {
            if !host.is_running(sid) {
                let _ = host.submit(InvokeRequest {
                    caller: None,
                    session_id: sid.clone(),
                    message: Some("Write.".into()),
                    input: None,
                    mode: InvokeMode::Prompt,
                    model: None,
                    origin_call_id: None,
                });
            }
        }
    };
    keep_busy(&host);
    let mut g = c.benchmark_group("agents");
    g.bench_function("ui_frame_with_20_sessions", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                keep_busy(&host);
                // Let the sessions produce a frame's worth of events (the UI ticks at ~60 Hz).
                std::thread::sleep(Duration::from_millis(2));
                let start = Instant::now();
                while let Ok(ev) = events.try_recv() {
                    let _ = app.update(Action::Engine(ev));
                }
                term.draw(|f| nbook::tui::chrome::view(&app, f))
                    .expect("draw");
                total += start.elapsed();
            }
            total
        })
    });
    g.finish();
    for sid in &sessions {
        host.cancel(sid);
    }
}

criterion_group!(benches, turn_overhead, ui_frame_with_20_sessions);
criterion_main!(benches);
