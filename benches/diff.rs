//! Prose diff benchmarks (#14 item 2): a 30,000-word chapter rewritten (about one word in
//! eight changed, in every paragraph) waiting for approval.
//! `diff/word_diff_30k_first_screen`: the call arrives (its diff is parsed and word-diffed)
//! and the first screen of the full-screen detail is drawn — budget 50 ms.
//! `diff/word_diff_30k_scroll_frame`: one page down and a redraw — budget 2 ms.
//! Run: `cargo bench --bench diff -- --warm-up-time 1 --measurement-time 3`.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use nbook::engine::{ChangeKind, EngineEvent, FileChange, Mode, PendingCall, Preview, PreviewBody};
use nbook::tui::action::{Action, Command};
use nbook::tui::app::{AppInit, AppState, Pane};
use nbook::tui::clock::ManualClock;
use nbook::tui::keymap::Keymap;
use nbook::tui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

const WORDS: [&str; 16] = [
    "harbour", "quiet", "boats", "Mira", "counted", "twice", "because", "the", "first", "count",
    "came", "out", "wrong", "gulls", "had", "gone",
];

/// 300 paragraphs of 100 words, and the same with every eighth word replaced.
fn chapter() -> (String, String) {
    let (mut old, mut new) = (String::new(), String::new());
    for p in 0..300 {
        for w in 0..100 {
            let word = WORDS[(p * 7 + w * 3) % WORDS.len()];
            let sep = if w == 99 { ".\n" } else { " " };
            old.push_str(word);
            old.push_str(sep);
            if (p + w) % 8 == 0 {
                new.push_str("storm");
            } else {
                new.push_str(word);
            }
            new.push_str(sep);
        }
        old.push('\n');
        new.push('\n');
    }
    (old, new)
}

fn call(diff: String) -> PendingCall {
    PendingCall {
        approval_id: "bench".into(),
        call_id: "bench".into(),
        session_id: "1".into(),
        profile: "writer".into(),
        mode: Mode::Normal,
        tool: "write".into(),
        args: serde_json::json!({"path": "manuscript/001/index.md"}),
        preview: Preview {
            summary: "Rewrite a chapter".into(),
            body: PreviewBody::Files {
                changes: vec![FileChange {
                    path: "manuscript/001/index.md".into(),
                    kind: ChangeKind::Update,
                    move_to: None,
                    diff,
                    added: 300,
                    removed: 300,
                }],
            },
            targets: vec![],
        },
        requested_at: "2026-03-01T10:00:00Z".into(),
        session_grant_allowed: true,
        parts: false,
    }
}

fn app() -> AppState {
    let mut app = AppState::new(AppInit {
        title: "bench".into(),
        keymap: Keymap::defaults(),
        theme: Theme::builtin("dark").expect("the dark theme is built in"),
        clock: Arc::new(ManualClock::new(
            time::macros::datetime!(2026-03-01 10:00:42 UTC),
        )),
        size: (120, 40),
        sessions: Vec::new(),
        pending: Vec::new(),
        inputs: Vec::new(),
        jobs: Vec::new(),
        profiles: Vec::new(),
        models: Vec::new(),
        focus_session: None,
        notices: Vec::new(),
    });
    app.focus = Pane::Approvals;
    app
}

fn bench(c: &mut Criterion) {
    let (old, new) = chapter();
    let diff = similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header("a/index.md", "b/index.md")
        .to_string();
    let pending = call(diff);
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("test backend");
    let mut g = c.benchmark_group("diff");
    g.bench_function("word_diff_30k_first_screen", |b| {
        b.iter(|| {
            let mut app = app();
            app.update(Action::Engine(EngineEvent::ApprovalRequested {
                call: pending.clone(),
            }));
            app.update(Action::Cmd(Command::Detail));
            term.draw(|f| nbook::tui::chrome::view(&app, f))
                .expect("draw");
        })
    });
    let mut app = app();
    app.update(Action::Engine(EngineEvent::ApprovalRequested {
        call: pending.clone(),
    }));
    app.update(Action::Cmd(Command::Detail));
    term.draw(|f| nbook::tui::chrome::view(&app, f))
        .expect("draw");
    let mut down = true;
    let mut steps = 0;
    g.bench_function("word_diff_30k_scroll_frame", |b| {
        b.iter(|| {
            // Down through the chapter and back, a page a frame.
            steps += 1;
            if steps % 200 == 0 {
                down = !down;
            }
            let cmd = if down {
                Command::PageDown
            } else {
                Command::PageUp
            };
            app.update(Action::Cmd(cmd));
            term.draw(|f| nbook::tui::chrome::view(&app, f))
                .expect("draw");
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
