//! Writes a large project for benchmarks:
//! `cargo run --release --example gen_fixture -- PATH --files 50000 --chapters 300 --scenes 100000`.
//! Files are real Markdown spread over volumes, chapters and lorebook folders the way a long
//! novel lays them out (`--files`, default 50000); `--chapters`/`--scenes` fill the story
//! tables with acts, chapters, threads, scenes and proportional promises and decisions
//! (`story.rs`); `--tasks` fills the production board (`tasks.rs`). Each part lives in its own module; a flag is one field of [`Opts`] and one arm
//! in [`parse`].

mod story;
mod tasks;
mod world;

use std::path::PathBuf;
use std::process::ExitCode;

/// Everything the command line can ask for.
#[derive(Debug)]
struct Opts {
    path: PathBuf,
    files: usize,
    chapters: usize,
    scenes: usize,
    subjects: usize,
    slices: usize,
    tasks: usize,
}

const USAGE: &str =
    "usage: gen_fixture PATH [--files N (default 50000)] [--chapters N] [--scenes N] [--subjects N --slices N] [--tasks N]";

fn parse(mut args: impl Iterator<Item = String>) -> Option<Opts> {
    let mut o = Opts {
        path: PathBuf::from(args.next()?),
        files: 50_000,
        chapters: 0,
        scenes: 0,
        subjects: 10_000,
        slices: 0,
        tasks: 0,
    };
    while let Some(flag) = args.next() {
        let n: usize = args.next()?.parse().ok()?;
        match flag.as_str() {
            "--files" => o.files = n,
            "--chapters" => o.chapters = n,
            "--scenes" => o.scenes = n,
            "--subjects" => o.subjects = n,
            "--slices" => o.slices = n,
            "--tasks" => o.tasks = n,
            _ => return None,
        }
    }
    Some(o)
}

fn main() -> ExitCode {
    let Some(opts) = parse(std::env::args().skip(1)) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if let Err(e) = run(&opts) {
        eprintln!("gen_fixture: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn run(o: &Opts) -> Result<(), Box<dyn std::error::Error>> {
    generate_files(&o.path, o.files)?;
    println!(
        "wrote a project with {} generated files at {}",
        o.files,
        o.path.display()
    );
    if o.chapters > 0 || o.scenes > 0 {
        let s = story::generate(&o.path, o.chapters, o.scenes)?;
        println!(
            "story: {} acts, {} chapters, {} threads, {} scenes, {} promises ({} beats), {} decisions in {:.1} s",
            s.acts, s.chapters, s.threads, s.scenes, s.promises, s.beats, s.decisions, s.secs
        );
    }
    if o.slices > 0 {
        let world = nbook::world::World::load(&o.path)?;
        let mut conn = nbook::store::open(&o.path.join(".nbook/project.sqlite"))?;
        let w = world::generate(&mut conn, &world.schema, o.subjects, o.slices, 1)?;
        println!(
            "world: {} subjects, {} slices, {} patches, instants {}..{} (load {:.1} s; indexes and {} checkpoints {:.1} s)",
            w.subjects, w.slices, w.patches, w.first_instant, w.last_instant, w.load_secs, w.checkpoints, w.index_secs
        );
    }
    if o.tasks > 0 {
        let secs = tasks::generate(&o.path, o.tasks)?;
        println!("board: {} tasks in {secs:.1} s", o.tasks);
    }
    Ok(())
}

fn generate_files(root: &std::path::Path, files: usize) -> Result<(), Box<dyn std::error::Error>> {
    if !nbook::workspace::is_project(root) {
        nbook::workspace::init::init(root, Some("Fixture: a very long novel"))?;
    }
    drop(nbook::store::open(&root.join(".nbook/project.sqlite"))?);
    // 70% manuscript (volumes of 100 chapters, each chapter a folder with index.md and notes),
    // 30% lorebook entries across the categories.
    let manuscript = files * 7 / 10;
    let categories = [
        "character",
        "location",
        "faction",
        "item",
        "event",
        "world",
        "system",
    ];
    let paragraph =
        "The tide came in over the skerries and the light turned above it, patient as a clock.\n";
    for i in 0..manuscript {
        let volume = i / 1000;
        let chapter = (i / 10) % 100;
        let name = if i % 10 == 0 {
            "index.md".to_string()
        } else {
            format!("note-{:02}.md", i % 10)
        };
        let p = root.join(format!(
            "manuscript/{volume:03}-volume/{chapter:03}-chapter/{name}"
        ));
        std::fs::create_dir_all(p.parent().ok_or("bad path")?)?;
        std::fs::write(
            &p,
            format!(
                "---\ntitle: Part {i}\ntype: chapter\n---\n\n# Part {i}\n\n{}",
                paragraph.repeat(1 + i % 5)
            ),
        )?;
    }
    for j in 0..files.saturating_sub(manuscript) {
        let cat = categories[j % categories.len()];
        let p = root.join(format!("lorebook/{cat}/entry-{j:05}/index.md"));
        std::fs::create_dir_all(p.parent().ok_or("bad path")?)?;
        std::fs::write(
            &p,
            format!("---\ntitle: Entry {j}\ntype: {cat}\nstatus: draft\n---\n\n{paragraph}"),
        )?;
    }
    Ok(())
}
