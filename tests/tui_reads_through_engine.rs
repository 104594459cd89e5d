//! "The TUI reads and writes through the engine", checked in the code: nothing under
//! `src/tui` imports the store, opens a database connection, or runs the plot services or the
//! world's connection pool itself; the panes ask the engine's read model and write as the
//! author through the engine.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/tui") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What a pane would write to reach the database around the engine.
const FORBIDDEN: &[&str] = &[
    "crate::store",
    "nbook::store",
    "rusqlite",
    "Connection::open",
    "open_read_only",
    "open_writable",
    "PlotDb",
    "world::pool",
    "pool::take",
    "WorldView::open",
    "WorldView::new",
];

fn offending(text: &str) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        for f in FORBIDDEN {
            if code.contains(f) {
                out.push((i + 1, *f));
            }
        }
    }
    out
}

#[test]
fn src_tui_never_opens_the_store_itself() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tui");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 20, "src/tui was found: {} files", files.len());
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read");
        for (line, what) in offending(&text) {
            found.push(format!("{}:{line}: {what}", file.display()));
        }
    }
    assert!(
        found.is_empty(),
        "src/tui reaches the database around the engine (use Engine::read() / author_call):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_catches_what_it_looks_for() {
    assert_eq!(
        offending("use crate::store::overview::WorldOverview;"),
        vec![(1, "crate::store")]
    );
    assert_eq!(
        offending("let c = crate::store::open_read_only(db)?;").len(),
        2
    );
    assert!(offending("// crate::store is the engine's").is_empty());
    assert!(offending("let r = engine.read();").is_empty());
}
