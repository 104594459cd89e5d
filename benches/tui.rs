//! TUI benchmarks on a large project (DESIGN.md targets: open to first frame ≤ 150 ms, each
//! frame while scrolling ≤ 2 ms). The project is `NBOOK_BENCH_FIXTURE` if set (a folder made
//! by `cargo run --release --example gen_fixture -- PATH --files 50000`), else a 50k-file
//! tree generated here in a temporary folder.
//!
//! - `open_to_first_frame`: open the engine, build the App, start its loads, draw the first
//!   frame into a 200×50 TestBackend.
//! - `open_to_listed_frame`: the same plus the root folder listing applied and drawn.
//! - `scroll_files_frame`: one row down in a Files pane holding every folder open (tens of
//!   thousands of rows), then a full frame.
//! - `story_overview` / `world_overview`: the Story and World pane queries (run off the UI
//!   task) on `NBOOK_BENCH_DB` if set (e.g. a `shared/bench/gen_world.py` database with scenes
//!   added), else on the fixture's own database.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use nbook::config::{Config, Dirs};
use nbook::engine::Engine;
use nbook::tui::action::{Action, Command, Effect};
use nbook::tui::app::AppState;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

const W: u16 = 200;
const H: u16 = 50;

fn generate(root: &Path, files: usize) {
    nbook::workspace::init::init(root, Some("Bench")).expect("init");
    let per_chapter = 50;
    let mut made = 0;
    let mut chapter = 0;
    while made < files {
        let dir = root
            .join("manuscript")
            .join(format!("{:03}-volume", chapter / 100 + 1))
            .join(format!("{:03}-chapter", chapter % 100 + 1));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for i in 0..per_chapter.min(files - made) {
            std::fs::write(dir.join(format!("scene-{i:03}.md")), "").expect("write");
        }
        made += per_chapter;
        chapter += 1;
    }
}

fn fixture() -> (Option<tempfile::TempDir>, PathBuf) {
    if let Some(p) = std::env::var_os("NBOOK_BENCH_FIXTURE") {
        return (None, PathBuf::from(p));
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("book");
    generate(&root, 50_000);
    (Some(tmp), root)
}

fn open(root: &Path, dirs: &Dirs) -> Arc<Engine> {
    let ws = nbook::workspace::Workspace::open(root).expect("open");
    Arc::new(Engine::open(ws, Config::default(), dirs).expect("engine"))
}

fn draw(term: &mut Terminal<TestBackend>, app: &AppState) {
    term.draw(|f| nbook::tui::view::view(app, f)).expect("draw");
}

/// Apply effects synchronously the way the runtime's jobs would (folder listings only).
fn run_listings(app: &mut AppState, root: &Path, fx: Vec<Effect>) {
    let mut queue = fx;
    while let Some(f) = queue.pop() {
        if let Effect::LoadDir { ticket, dir } = f {
            let result = nbook::tui::jobs::list_dir(root, &dir);
            queue.extend(app.update(Action::DirLoaded {
                ticket,
                dir,
                result,
            }));
        }
    }
}

/// Open every folder of the tree (all rows visible).
fn expand_all(app: &mut AppState, root: &Path) {
    loop {
        let closed: Vec<String> = app
            .files
            .tree
            .rows()
            .iter()
            .filter_map(|&r| app.files.tree.node(r))
            .filter(|n| n.is_dir && !n.expanded && !n.hidden)
            .map(|n| n.path.clone())
            .collect();
        if closed.is_empty() {
            break;
        }
        for dir in closed {
            app.files.tree.select_path(&dir);
            let fx = app.update(Action::Cmd(Command::Expand));
            run_listings(app, root, fx);
        }
    }
    app.update(Action::Cmd(Command::Top));
}

fn benches(c: &mut Criterion) {
    let (_tmp, root) = fixture();
    let home = tempfile::tempdir().expect("home");
    let dirs = Dirs {
        config: home.path().join("c"),
        data: home.path().join("d"),
        logs: home.path().join("l"),
    };
    let mut g = c.benchmark_group("tui");
    g.sample_size(20);
    g.bench_function("open_to_first_frame", |b| {
        b.iter(|| {
            let engine = open(&root, &dirs);
            let mut app = nbook::tui::build_app(&engine, &dirs, None, (W, H));
            let _fx = app.start();
            let mut term = Terminal::new(TestBackend::new(W, H)).expect("term");
            draw(&mut term, &app);
        })
    });
    g.bench_function("open_to_listed_frame", |b| {
        b.iter(|| {
            let engine = open(&root, &dirs);
            let mut app = nbook::tui::build_app(&engine, &dirs, None, (W, H));
            let fx: Vec<Effect> = app
                .start()
                .into_iter()
                .filter(|f| matches!(f, Effect::LoadDir { .. }))
                .collect();
            run_listings(&mut app, &root, fx);
            let mut term = Terminal::new(TestBackend::new(W, H)).expect("term");
            draw(&mut term, &app);
        })
    });
    g.finish();

    let engine = open(&root, &dirs);
    let mut app = nbook::tui::build_app(&engine, &dirs, None, (W, H));
    let fx: Vec<Effect> = app
        .start()
        .into_iter()
        .filter(|f| matches!(f, Effect::LoadDir { .. }))
        .collect();
    run_listings(&mut app, &root, fx);
    expand_all(&mut app, &root);
    let rows = app.files.tree.rows().len();
    eprintln!("files pane rows: {rows}");
    let mut term = Terminal::new(TestBackend::new(W, H)).expect("term");
    draw(&mut term, &app);
    let mut g = c.benchmark_group("tui");
    g.bench_function("scroll_files_frame", |b| {
        b.iter(|| {
            if app.files.tree.selected + 1 >= rows {
                app.update(Action::Cmd(Command::Top));
            }
            // Moving would also request a preview; the effect is dropped here (off-task work).
            let _ = app.update(Action::Cmd(Command::Down));
            draw(&mut term, &app);
        })
    });
    g.bench_function("page_files_frame", |b| {
        b.iter(|| {
            if app.files.tree.selected + 60 >= rows {
                app.update(Action::Cmd(Command::Top));
            }
            let _ = app.update(Action::Cmd(Command::PageDown));
            draw(&mut term, &app);
        })
    });
    g.finish();
}

fn overview(c: &mut Criterion) {
    let (_tmp, root) = fixture();
    let db = std::env::var_os("NBOOK_BENCH_DB")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".nbook/project.sqlite"));
    if !db.exists() {
        drop(nbook::store::open(&db).expect("db"));
    }
    let mut g = c.benchmark_group("tui");
    g.sample_size(10);
    g.bench_function("story_overview", |b| {
        b.iter(|| nbook::tui::jobs::story(&db).expect("story"))
    });
    g.bench_function("world_overview", |b| {
        b.iter(|| nbook::tui::jobs::world(&db).expect("world"))
    });
    g.finish();
}

criterion_group!(tui, benches, overview);
criterion_main!(tui);
