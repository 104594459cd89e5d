//! Writes a large project for benchmarks: `cargo run --release --example gen_fixture -- PATH
//! --files 50000`. Files are real Markdown spread over volumes, chapters and lorebook
//! folders the way a long novel lays them out. Later stages add `--chapters`, `--scenes`,
//! `--subjects` and `--slices` for the story and world tables.

use std::path::PathBuf;
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: gen_fixture PATH [--files N]   (default 50000)");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next().map(PathBuf::from) else { return usage() };
    let mut files: usize = 50_000;
    while let Some(flag) = args.next() {
        match (flag.as_str(), args.next().and_then(|v| v.parse().ok())) {
            ("--files", Some(n)) => files = n,
            _ => return usage(),
        }
    }
    if let Err(e) = generate(&path, files) {
        eprintln!("gen_fixture: {e}");
        return ExitCode::from(1);
    }
    println!("wrote a project with {files} generated files at {}", path.display());
    ExitCode::SUCCESS
}

fn generate(root: &std::path::Path, files: usize) -> Result<(), Box<dyn std::error::Error>> {
    if !nbook::workspace::is_project(root) {
        nbook::workspace::init::init(root, Some("Fixture: a very long novel"))?;
    }
    drop(nbook::store::open(&root.join(".nbook/project.sqlite"))?);
    // 70% manuscript (volumes of 100 chapters, each chapter a folder with index.md and notes),
    // 30% lorebook entries across the categories.
    let manuscript = files * 7 / 10;
    let categories = ["character", "location", "faction", "item", "event", "world", "system"];
    let paragraph = "The tide came in over the skerries and the light turned above it, patient as a clock.\n";
    for i in 0..manuscript {
        let volume = i / 1000;
        let chapter = (i / 10) % 100;
        let name = if i % 10 == 0 { "index.md".to_string() } else { format!("note-{:02}.md", i % 10) };
        let p = root.join(format!("manuscript/{volume:03}-volume/{chapter:03}-chapter/{name}"));
        std::fs::create_dir_all(p.parent().ok_or("bad path")?)?;
        std::fs::write(&p, format!("---\ntitle: Part {i}\ntype: chapter\n---\n\n# Part {i}\n\n{}", paragraph.repeat(1 + i % 5)))?;
    }
    for j in 0..files.saturating_sub(manuscript) {
        let cat = categories[j % categories.len()];
        let p = root.join(format!("lorebook/{cat}/entry-{j:05}/index.md"));
        std::fs::create_dir_all(p.parent().ok_or("bad path")?)?;
        std::fs::write(&p, format!("---\ntitle: Entry {j}\ntype: {cat}\nstatus: draft\n---\n\n{paragraph}"))?;
    }
    Ok(())
}
