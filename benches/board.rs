//! The board at 10,000 tasks (issue #16's targets): `fn_task_search` (≤ 5 ms median) and
//! `fn_task_document_write` (≤ 2 ms median), each the tool's own run on a real project.sqlite
//! (open, query or compare-and-swap write in an IMMEDIATE transaction, result JSON); and the
//! Board pane over the same 10,000 tasks: `board/pane_first_frame_10k` (≤ 150 ms: open the
//! engine, build the App, focus the Board, its load job through the read model, the first frame
//! into a 120×40 TestBackend) and `board/pane_scroll_frame_10k` (≤ 2 ms: one `j` and the frame
//! after it).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use nbook::config::{Config, Dirs};
use nbook::engine::tool::{CallArgs, Tool, ToolCtx};
use nbook::engine::{Engine, Mode};
use serde_json::json;

const TASKS: usize = 10_000;
const WORDS: [&str; 8] = [
    "harbour", "Flett", "watch", "letter", "storm", "ledger", "bridge", "lamp",
];

fn fixture() -> (tempfile::TempDir, Arc<Engine>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Bench")).expect("init");
    {
        let conn = nbook::store::open(&root.join(".nbook/project.sqlite")).expect("db");
        let tx = conn.unchecked_transaction().expect("tx");
        let columns = ["planning", "drafting", "review", "done", "archived"];
        for i in 1..=TASKS {
            let w = WORDS[i % WORDS.len()];
            let v = WORDS[(i / 7) % WORDS.len()];
            tx.execute(
                "INSERT INTO nbook_board_task (id, seq, title, description, column_id, steps, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, '[{\"name\":\"Preflight\",\"status\":\"done\"},{\"name\":\"Draft\",\"status\":\"pending\"}]', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                rusqlite::params![
                    format!("NB-{i:03}"),
                    i as i64,
                    format!("Revise chapter {i} for the {w}"),
                    format!("Revise chapter {i}: the {w} scenes and the {v} thread must agree with the world timeline and the brief."),
                    columns[i % columns.len()],
                ],
            )
            .expect("insert");
        }
        tx.commit().expect("commit");
    }
    let dirs = Dirs {
        config: tmp.path().join("h"),
        data: tmp.path().join("h/d"),
        logs: tmp.path().join("h/l"),
    };
    let ws = nbook::workspace::Workspace::open(&root).expect("open");
    let engine = Arc::new(
        Engine::open(
            ws,
            Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .expect("engine"),
    );
    (tmp, engine)
}

fn ctx(engine: &Engine, profile: &str) -> ToolCtx {
    let mut state = std::collections::BTreeMap::new();
    state.insert(
        nbook::tools::fusion::SESSION_TASK.to_string(),
        json!("NB-5000"),
    );
    ToolCtx {
        workspace: engine.workspace().clone(),
        config: engine.config().clone(),
        profile: engine.profiles().get(profile).expect("profile"),
        session_id: "bench".into(),
        mode: Mode::Normal,
        session_state: Arc::new(state),
        call_id: String::new(),
        services: None,
        cancel: Default::default(),
    }
}

fn bench_board(c: &mut Criterion) {
    let (_tmp, engine) = fixture();
    let search = nbook::tools::fusion::tasks::TaskSearch;
    let triage = ctx(&engine, "triage");
    let args = CallArgs::new(json!({"query": "flett ledger", "limit": 20}));
    let out = search.run(&triage, &args).expect("search");
    assert_eq!(
        out.details.as_ref().unwrap()["tasks"]
            .as_array()
            .unwrap()
            .len(),
        20
    );
    c.bench_function("board/fn_task_search_10k", |b| {
        b.iter(|| search.run(&triage, &args).expect("search"))
    });

    let write = nbook::tools::fusion::docs::TaskDocumentWrite;
    let exec = ctx(&engine, "executor");
    let mut revision = 0u64;
    c.bench_function("board/fn_task_document_write_10k", |b| {
        b.iter(|| {
            let a = CallArgs::new(json!({
                "key": "notes",
                "content": format!("Working notes, revision {}: the harbour scene moves to dusk.", revision + 1),
                "expected_revision": revision,
            }));
            write.run(&exec, &a).expect("write");
            revision += 1;
        })
    });
}

fn dirs_in(tmp: &std::path::Path) -> Dirs {
    Dirs {
        config: tmp.join("h"),
        data: tmp.join("h/d"),
        logs: tmp.join("h/l"),
    }
}

/// The App with the Board focused and its overview loaded (as the runtime's job would).
fn board_app(engine: &Arc<Engine>, dirs: &Dirs) -> nbook::tui::app::AppState {
    use nbook::tui::action::{Action, Command, Effect};
    let mut app = nbook::tui::build_app(engine, dirs, None, (120, 40));
    // The first load is the one start() asks for (focusing waits for it).
    let mut fx = app.start();
    fx.extend(app.update(Action::Cmd(Command::FocusBoard)));
    for f in fx {
        if let Effect::BoardJob { ticket, job } = f {
            let result = nbook::tui::board::jobs::run(engine, job);
            app.update(Action::BoardJobDone { ticket, result });
        }
    }
    app
}

fn draw(
    term: &mut ratatui::Terminal<ratatui::backend::TestBackend>,
    app: &nbook::tui::app::AppState,
) {
    term.draw(|f| nbook::tui::chrome::view(app, f))
        .expect("draw");
}

fn bench_pane(c: &mut Criterion) {
    use nbook::tui::action::{Action, Command};
    use ratatui::{backend::TestBackend, Terminal};
    let (tmp, engine) = fixture();
    let root = engine.workspace().root().to_path_buf();
    let dirs = dirs_in(tmp.path());
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let _in_rt = rt.enter();
    // Loaded as the board holds it: the pane's first card and all of its rows.
    let app = board_app(&engine, &dirs);
    assert_eq!(app.board.data.as_ref().map(|d| d.tasks.len()), Some(TASKS));
    let mut g = c.benchmark_group("board");
    g.sample_size(10);
    g.bench_function("pane_first_frame_10k", |b| {
        b.iter(|| {
            let ws = nbook::workspace::Workspace::open(&root).expect("open");
            let engine = Arc::new(
                Engine::open(
                    ws,
                    Config::default(),
                    &dirs,
                    nbook::tools::registry().unwrap(),
                )
                .expect("engine"),
            );
            let app = board_app(&engine, &dirs);
            let mut term = Terminal::new(TestBackend::new(120, 40)).expect("term");
            draw(&mut term, &app);
        })
    });
    let mut app = board_app(&engine, &dirs);
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("term");
    draw(&mut term, &app);
    g.bench_function("pane_scroll_frame_10k", |b| {
        b.iter(|| {
            let before = app.board.selected;
            app.update(Action::Cmd(Command::Down));
            if app.board.selected == before {
                // At the last card: back to the first, so every frame scrolled.
                app.update(Action::Cmd(Command::Top));
            }
            draw(&mut term, &app);
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = bench_board, bench_pane
}
criterion_main!(benches);
