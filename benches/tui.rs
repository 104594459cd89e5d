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
//! - `world_overview`: the world summary query of `store::overview` (off the UI task) on
//!   `NBOOK_BENCH_DB` if set (e.g. a `shared/bench/gen_world.py` database), else on the
//!   fixture's own database.
//! - `world_*`: the World pane on a big timeline (see `world_pane` below:
//!   `NBOOK_BENCH_WORLD_FIXTURE`, else 100k slices generated with the fixture's SQL inserts).
//! - `story_*`: the Story pane on a big book: `NBOOK_BENCH_STORY_FIXTURE` if set (a folder
//!   made by `gen_fixture PATH --chapters 300 --scenes 100000`), else the same generator code
//!   writes 300 chapters / 100k scenes (≈0.5 s) into a temporary project. `story_load` is the
//!   off-task load (both trees with brief statuses, both ledgers); `story_open_first_frame`
//!   opens the engine, builds the App, focuses the Story pane and draws its first frame
//!   (loading); `story_loaded_frame` applies the loaded data and draws (the UI-task cost when
//!   it arrives); `story_scroll_frame` / `story_page_frame` move through the causal tree with
//!   all 200 threads open (100k scene rows) and draw; `story_scenes_job`, `story_search_index`
//!   and `story_search_match` time the off-task jobs behind opening a thread and `/`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use nbook::config::{Config, Dirs};
use nbook::engine::Engine;
use nbook::tui::action::{Action, Command, Effect};
use nbook::tui::app::AppState;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// The fixture generator's story tables (the same code `gen_fixture --chapters --scenes` runs).
#[allow(dead_code)]
#[path = "../examples/gen_fixture/story.rs"]
mod gen_story;

/// The fixture generator's world timeline (the same SQL inserts `gen_fixture --slices` runs).
#[allow(dead_code)]
#[path = "../examples/gen_fixture/world.rs"]
mod gen_world;

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
    Arc::new(
        Engine::open(
            ws,
            Config::default(),
            dirs,
            nbook::tools::registry().unwrap(),
        )
        .expect("engine"),
    )
}

fn draw(term: &mut Terminal<TestBackend>, app: &AppState) {
    term.draw(|f| nbook::tui::chrome::view(app, f))
        .expect("draw");
}

/// Apply effects synchronously the way the runtime's jobs would (folder listings only).
fn run_listings(app: &mut AppState, root: &Path, fx: Vec<Effect>) {
    let mut queue = fx;
    while let Some(f) = queue.pop() {
        if let Effect::LoadDir { ticket, dir } = f {
            let result = nbook::tui::files::jobs::list_dir(root, &dir);
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
        let closed: Vec<nbook::tui::files::RelPath> = app
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

fn world_overview(c: &mut Criterion) {
    let (_tmp, root) = fixture();
    let db = std::env::var_os("NBOOK_BENCH_DB")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".nbook/project.sqlite"));
    if !db.exists() {
        drop(nbook::store::open(&db).expect("db"));
    }
    let mut g = c.benchmark_group("tui");
    g.sample_size(10);
    g.bench_function("world_overview", |b| {
        let read = nbook::engine::read::ReadModel::new(&root, &db);
        b.iter(|| nbook::tui::world::jobs::overview(&read).expect("world"))
    });
    g.finish();
}

fn story_fixture() -> (Option<tempfile::TempDir>, PathBuf) {
    if let Some(p) = std::env::var_os("NBOOK_BENCH_STORY_FIXTURE") {
        return (None, PathBuf::from(p));
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Bench: a long book")).expect("init");
    drop(nbook::store::open(&root.join(".nbook/project.sqlite")).expect("db"));
    let s = gen_story::generate(&root, 300, 100_000).expect("story");
    eprintln!(
        "story fixture: {} chapters, {} threads, {} scenes, {} promises, {} decisions in {:.1} s",
        s.chapters, s.threads, s.scenes, s.promises, s.decisions, s.secs
    );
    (Some(tmp), root)
}

/// Run the Story jobs an update asked for (scene lists only; other effects are dropped the
/// way a frame benchmark does not wait for them).
fn run_scene_jobs(app: &mut AppState, engine: &Arc<Engine>, fx: Vec<Effect>) {
    use nbook::tui::story::jobs::{self, StoryJob};
    let mut queue = fx;
    while let Some(f) = queue.pop() {
        if let Effect::StoryJob {
            ticket,
            job: job @ StoryJob::Scenes(_),
        } = f
        {
            let result = jobs::run(engine, job);
            queue.extend(app.update(Action::StoryJobDone { ticket, result }));
        }
    }
}

fn story(c: &mut Criterion) {
    use nbook::tui::story::jobs::{self, SearchItem, StoryJob};
    use nbook::tui::story::RowNode;

    let (_tmp, root) = story_fixture();
    let db = nbook::engine::read::ReadModel::new(&root, &root.join(".nbook/project.sqlite"));
    let home = tempfile::tempdir().expect("home");
    let dirs = Dirs {
        config: home.path().join("c"),
        data: home.path().join("d"),
        logs: home.path().join("l"),
    };
    let data = jobs::load(&db).expect("load");
    let mut g = c.benchmark_group("tui");
    g.sample_size(10);
    g.bench_function("story_load", |b| b.iter(|| jobs::load(&db).expect("load")));
    g.bench_function("story_open_first_frame", |b| {
        b.iter(|| {
            let engine = open(&root, &dirs);
            let mut app = nbook::tui::build_app(&engine, &dirs, None, (W, H));
            let _fx = app.start();
            let _fx = app.update(Action::Cmd(Command::FocusStory));
            let mut term = Terminal::new(TestBackend::new(W, H)).expect("term");
            draw(&mut term, &app);
        })
    });
    let engine = open(&root, &dirs);
    let mut term = Terminal::new(TestBackend::new(W, H)).expect("term");
    g.bench_function("story_loaded_frame", |b| {
        b.iter_batched(
            || {
                let mut app = nbook::tui::build_app(&engine, &dirs, None, (W, H));
                let fx = app.start();
                app.update(Action::Cmd(Command::FocusStory));
                let ticket = fx
                    .iter()
                    .find_map(|f| match f {
                        Effect::LoadStory { ticket } => Some(*ticket),
                        _ => None,
                    })
                    .expect("story load");
                (app, ticket, data.clone())
            },
            |(mut app, ticket, data)| {
                let _fx = app.update(Action::StoryLoaded {
                    ticket,
                    result: Ok(data),
                });
                draw(&mut term, &app);
                app
            },
            criterion::BatchSize::SmallInput,
        )
    });
    let thread = data
        .overview
        .phases
        .first()
        .and_then(|(_, t)| t.first())
        .map(|t| t.thread.id)
        .expect("a thread");
    g.bench_function("story_scenes_job", |b| {
        b.iter(|| {
            jobs::run(
                &engine,
                StoryJob::Scenes(nbook::tui::story::data::Parent::Thread(thread)),
            )
        })
    });
    let shared = std::sync::Arc::new(data.clone());
    g.bench_function("story_search_index", |b| {
        b.iter(|| jobs::search_index(&db, &shared).expect("index"))
    });
    let items: Vec<SearchItem> = jobs::search_index(&db, &shared).expect("index");
    eprintln!("search index: {} titles", items.len());
    g.bench_function("story_search_match", |b| {
        b.iter(|| jobs::fuzzy("scene 4711", &items, jobs::SEARCH_LIMIT))
    });
    g.finish();

    // The causal tree with every thread open: ~100k scene rows.
    let mut app = nbook::tui::build_app(&engine, &dirs, None, (W, H));
    let fx = app.start();
    app.update(Action::Cmd(Command::FocusStory));
    for f in fx {
        if let Effect::LoadStory { ticket } = f {
            app.update(Action::StoryLoaded {
                ticket,
                result: jobs::load(&db),
            });
        }
    }
    app.update(Action::Cmd(Command::StoryToggleTree));
    let started = std::time::Instant::now();
    loop {
        let closed = app
            .story
            .rows
            .iter()
            .position(|r| matches!(r.node, RowNode::Thread(_)) && !app.story.is_open(r.node));
        let Some(i) = closed else { break };
        app.story.selected = i;
        let fx = app.update(Action::Cmd(Command::Expand));
        run_scene_jobs(&mut app, &engine, fx);
    }
    let rows = app.story.rows.len();
    eprintln!(
        "story pane rows with every thread open: {rows} (opened in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    assert!(app
        .story
        .rows
        .iter()
        .any(|r| matches!(r.node, RowNode::Scene { .. })));
    app.update(Action::Cmd(Command::Top));
    draw(&mut term, &app);
    let mut g = c.benchmark_group("tui");
    g.bench_function("story_scroll_frame", |b| {
        b.iter(|| {
            if app.story.selected + 1 >= rows {
                app.update(Action::Cmd(Command::Top));
            }
            // The detail job it asks for runs off the UI task; dropped here.
            let _ = app.update(Action::Cmd(Command::Down));
            draw(&mut term, &app);
        })
    });
    // Close and reopen a thread (its scenes cached) with every other thread open.
    let t_row = app
        .story
        .rows
        .iter()
        .position(|r| matches!(r.node, RowNode::Thread(_)))
        .expect("a thread row");
    g.bench_function("story_toggle_thread_frame", |b| {
        b.iter(|| {
            app.story.selected = t_row;
            let _ = app.update(Action::Cmd(Command::Collapse));
            draw(&mut term, &app);
            let _ = app.update(Action::Cmd(Command::Expand));
            draw(&mut term, &app);
        })
    });
    g.bench_function("story_page_frame", |b| {
        b.iter(|| {
            if app.story.selected + 60 >= rows {
                app.update(Action::Cmd(Command::Top));
            }
            let _ = app.update(Action::Cmd(Command::PageDown));
            draw(&mut term, &app);
        })
    });
    g.finish();
}

fn world_fixture() -> (Option<tempfile::TempDir>, PathBuf) {
    if let Some(p) = std::env::var_os("NBOOK_BENCH_WORLD_FIXTURE") {
        return (None, PathBuf::from(p));
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Bench: a long world")).expect("init");
    let mut conn = nbook::store::open(&root.join(".nbook/project.sqlite")).expect("db");
    let world = nbook::world::World::load(&root).expect("world");
    let w = gen_world::generate(&mut conn, &world.schema, 1_000, 100_000, 7).expect("world");
    eprintln!(
        "world fixture: {} subjects, {} slices, {} patches in {:.1} s (+{:.1} s indexes)",
        w.subjects, w.slices, w.patches, w.load_secs, w.index_secs
    );
    (Some(tmp), root)
}

/// Run the World jobs an update asked for, synchronously (the runtime runs them off the UI
/// task).
fn run_world_jobs(app: &mut AppState, root: &Path, fx: Vec<Effect>) {
    let db = root.join(".nbook/project.sqlite");
    let mut queue = fx;
    while let Some(f) = queue.pop() {
        if let Effect::WorldJob { ticket, job } = f {
            let result =
                nbook::tui::world::jobs::run(&nbook::engine::read::ReadModel::new(root, &db), job);
            queue.extend(app.update(Action::WorldJobDone { ticket, result }));
        }
    }
}

/// The World pane on a big timeline: `NBOOK_BENCH_WORLD_FIXTURE` if set (a folder made by
/// `gen_fixture PATH --subjects 10000 --slices 1000000`), else 1,000 subjects / 100k slices
/// written here with the generator's SQL inserts.
/// - `world_open_first_frame`: open the engine, build the App, focus the World pane, run every
///   job it asks for (load, subjects, bucket counts, slices around the cursor — in parallel
///   off the UI task in the real runtime, one after the other here) and draw.
/// - `world_scrub_frame`: one hour forward at hour zoom (the selected subject's state is
///   recomputed on the UI task), then a full frame; the jobs it asks for are dropped (off-task).
/// - `world_scrub_frame_diff`: the same on the Diff tab (two states per step).
/// - `world_scrub_with_jobs`: a day forward at day zoom with the jobs run before the frame.
fn world_pane(c: &mut Criterion) {
    let (_tmp, root) = world_fixture();
    let home = tempfile::tempdir().expect("home");
    let dirs = Dirs {
        config: home.path().join("c"),
        data: home.path().join("d"),
        logs: home.path().join("l"),
    };
    let open_world = |engine: &Arc<Engine>| {
        let mut app = nbook::tui::build_app(engine, &dirs, None, (W, H));
        let fx: Vec<Effect> = app
            .start()
            .into_iter()
            .filter(|f| matches!(f, Effect::WorldJob { .. }))
            .collect();
        run_world_jobs(&mut app, &root, fx);
        let fx = app.update(Action::Cmd(Command::FocusWorld));
        run_world_jobs(&mut app, &root, fx);
        app
    };
    let mut g = c.benchmark_group("tui");
    g.sample_size(10);
    g.bench_function("world_open_first_frame", |b| {
        b.iter(|| {
            let engine = open(&root, &dirs);
            let app = open_world(&engine);
            let mut term = Terminal::new(TestBackend::new(W, H)).expect("term");
            draw(&mut term, &app);
        })
    });
    // The off-task jobs behind it (and behind the Issues tab).
    let db = root.join(".nbook/project.sqlite");
    let read = nbook::engine::read::ReadModel::new(&root, &db);
    let job = |j: nbook::tui::world::jobs::WorldJob| nbook::tui::world::jobs::run(&read, j);
    use nbook::tui::world::jobs::WorldJob;
    g.bench_function("world_load_job", |b| b.iter(|| job(WorldJob::Load)));
    g.bench_function("world_subjects_job", |b| {
        b.iter(|| job(WorldJob::Subjects(None)))
    });
    g.finish();
    let engine = open(&root, &dirs);
    let mut app = open_world(&engine);
    let mut g = c.benchmark_group("tui");
    g.sample_size(10);
    if let Some(k) = app.world.window.key {
        eprintln!("first window: {} buckets by {:?}", k.buckets, k.zoom);
        g.bench_function("world_density_job", |b| {
            b.iter(|| job(WorldJob::Density(k)))
        });
    }
    let at = app.world.cursor;
    g.bench_function("world_slices_job", |b| {
        b.iter(|| job(WorldJob::Slices { at, around: 200 }))
    });
    g.bench_function("world_issues_job", |b| b.iter(|| job(WorldJob::Issues(at))));
    g.finish();
    let meta = app.world.meta.clone().expect("loaded");
    eprintln!(
        "world pane: {} subjects, {} slices; cursor {}",
        meta.subject_count, meta.slice_count, app.world.cursor_label
    );
    assert!(app.world.state.is_some(), "a state at the cursor");
    let mut term = Terminal::new(TestBackend::new(W, H)).expect("term");
    // Start at the first slice, zoomed to the hour.
    let fx = app.update(Action::Cmd(Command::WorldFirst));
    run_world_jobs(&mut app, &root, fx);
    for cmd in [
        Command::WorldZoomIn,
        Command::WorldZoomIn,
        Command::WorldZoomIn,
    ] {
        let fx = app.update(Action::Cmd(cmd));
        run_world_jobs(&mut app, &root, fx);
    }
    draw(&mut term, &app);
    let (_, last) = meta.bounds.expect("slices");
    let mut g = c.benchmark_group("tui");
    g.bench_function("world_scrub_frame", |b| {
        b.iter(|| {
            if app.world.cursor >= last {
                let _ = app.update(Action::Cmd(Command::WorldFirst));
            }
            let _ = app.update(Action::Cmd(Command::WorldForward));
            draw(&mut term, &app);
        })
    });
    let fx = app.update(Action::Cmd(Command::WorldMark));
    run_world_jobs(&mut app, &root, fx);
    g.bench_function("world_scrub_frame_diff", |b| {
        b.iter(|| {
            if app.world.cursor >= last {
                let _ = app.update(Action::Cmd(Command::WorldFirst));
            }
            let _ = app.update(Action::Cmd(Command::WorldForward));
            draw(&mut term, &app);
        })
    });
    let fx = app.update(Action::Cmd(Command::WorldState));
    run_world_jobs(&mut app, &root, fx);
    let fx = app.update(Action::Cmd(Command::WorldZoomOut));
    run_world_jobs(&mut app, &root, fx);
    g.bench_function("world_scrub_with_jobs", |b| {
        b.iter(|| {
            if app.world.cursor >= last {
                let fx = app.update(Action::Cmd(Command::WorldFirst));
                run_world_jobs(&mut app, &root, fx);
            }
            let fx = app.update(Action::Cmd(Command::WorldForward));
            run_world_jobs(&mut app, &root, fx);
            draw(&mut term, &app);
        })
    });
    g.finish();
}

criterion_group!(tui, benches, world_overview, story, world_pane);
criterion_main!(tui);
