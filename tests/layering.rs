//! The layering rules of DESIGN.md's Layout, checked on the source: `src/protocol` is a leaf
//! (it imports nothing else from the crate), and the domain services and the project layers
//! below the engine (plot, world, subject, workspace, store) import nothing from the engine —
//! the types they share with it come from `crate::protocol`. Tools and workflow runs get
//! narrow capabilities (`ToolServices`), never the engine: they neither name `Engine` nor
//! call `.decide(`, so none can answer an approval.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read a source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn sources(folder: &str) -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(folder);
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(!files.is_empty(), "no sources under {}", dir.display());
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read a source file");
            (p, text)
        })
        .collect()
}

/// `file:line: text` for every line of `files` that `bad` flags.
fn offending(files: &[(PathBuf, String)], bad: impl Fn(&Path, &str) -> bool) -> Vec<String> {
    let mut hits = Vec::new();
    for (path, text) in files {
        for (i, line) in text.lines().enumerate() {
            if bad(path, line) {
                hits.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
            }
        }
    }
    hits
}

/// A path into the crate other than the protocol itself: `crate::x` with `x != protocol`, or,
/// in `protocol/mod.rs` (whose parent is the crate root), any `super::`.
fn leaves_the_protocol(path: &Path, line: &str) -> bool {
    let crate_path = line.match_indices("crate::").any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let whole_word = !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
        whole_word && !line[i + "crate::".len()..].starts_with("protocol")
    });
    let root_super = path.file_name().is_some_and(|n| n == "mod.rs") && line.contains("super::");
    crate_path || root_super
}

fn names_the_engine_module(_: &Path, line: &str) -> bool {
    line.contains("crate::engine") || line.contains("nbook::engine")
}

/// The word `Engine` on its own (not `EngineEvent`, `EngineError`, `engine`), or a call of
/// `.decide(`.
fn reaches_the_engine(_: &Path, line: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let names_engine = line.match_indices("Engine").any(|(i, m)| {
        let before = line[..i].chars().next_back();
        let after = line[i + m.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    });
    names_engine || line.contains(".decide(")
}

#[test]
fn tools_and_workflows_get_capabilities_not_the_engine() {
    for folder in ["tools", "workflow"] {
        let hits = offending(&sources(folder), reaches_the_engine);
        assert!(
            hits.is_empty(),
            "src/{folder} must use ToolCtx::services (engine::services::ToolServices), not the engine:\n{}",
            hits.join("\n")
        );
    }
}

#[test]
fn the_protocol_imports_nothing_else_from_the_crate() {
    let hits = offending(&sources("protocol"), leaves_the_protocol);
    assert!(
        hits.is_empty(),
        "src/protocol must stay a leaf; move what it needs into it instead:\n{}",
        hits.join("\n")
    );
}

#[test]
fn domain_code_imports_nothing_from_the_engine() {
    for folder in ["plot", "world", "subject", "workspace", "store", "board"] {
        let hits = offending(&sources(folder), names_the_engine_module);
        assert!(
            hits.is_empty(),
            "src/{folder} must not import the engine (use crate::protocol):\n{}",
            hits.join("\n")
        );
    }
}

#[test]
fn the_scans_catch_the_forms_they_look_for() {
    let child = Path::new("src/protocol/log.rs");
    let root = Path::new("src/protocol/mod.rs");
    assert!(leaves_the_protocol(child, "use crate::engine::Engine;"));
    assert!(leaves_the_protocol(child, "    crate::config::Config,"));
    assert!(!leaves_the_protocol(child, "use crate::protocol::Mode;"));
    assert!(!leaves_the_protocol(child, "use super::ids::CallId;"));
    assert!(leaves_the_protocol(root, "use super::engine::Engine;"));
    assert!(!leaves_the_protocol(
        child,
        "// a microcrate::x is not a path"
    ));
    assert!(names_the_engine_module(
        child,
        "use crate::engine::types::{RecordChange};"
    ));
    assert!(names_the_engine_module(
        child,
        "crate::engine::session_log::now_rfc3339()"
    ));
    assert!(!names_the_engine_module(
        child,
        "use crate::protocol::Preview;"
    ));
    assert!(reaches_the_engine(child, "use crate::engine::Engine;"));
    assert!(reaches_the_engine(
        child,
        "fn engine(ctx: &ToolCtx) -> Result<&Engine, E> {"
    ));
    assert!(reaches_the_engine(child, "    pub engine: Arc<Engine>,"));
    assert!(reaches_the_engine(
        child,
        "        e.decide(&id, Decision::Approve)"
    ));
    assert!(!reaches_the_engine(
        child,
        "use crate::engine::types::EngineEvent;"
    ));
    assert!(!reaches_the_engine(
        child,
        "let engine = engine(ctx)?; // EngineError"
    ));
    assert!(!reaches_the_engine(child, "policy::decide(&cfg, &facts)"));
}
