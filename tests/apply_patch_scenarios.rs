//! Scenario tests for the apply_patch engine, driven by fixture folders:
//!
//! `tests/fixtures/apply_patch/NNN_name/`
//! - `input/`: the tree before (copied to a temp dir),
//! - `patch.txt`: the patch applied with `apply_to_dir`,
//! - `expected/`: the whole tree afterwards (file set and bytes),
//! - `error.txt` (failure scenarios): the exact error text; `expected/` must then equal `input/`,
//! - `summary.txt` (optional, success scenarios): the summary lines (`A path`, `M path`...).
//!
//! Git does not keep empty folders, so empty `input/`/`expected/` hold a `.gitkeep`, which is
//! ignored everywhere.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use nbook::tools::patch::apply_to_dir;

const KEEP: &str = ".gitkeep";

/// Every file under `root` (relative path → bytes) and every folder (→ None), `.gitkeep` aside.
fn tree(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        let mut entries: Vec<PathBuf> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("read_dir {}: {e}", dir.display()))
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.file_name().is_some_and(|n| n == KEEP) {
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .replace('\\', "/");
            if path.is_dir() {
                out.insert(rel, None);
                walk(root, &path, out);
            } else {
                out.insert(rel, Some(fs::read(&path).expect("read file")));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Copy `from` into `to` recursively, leaving out `.gitkeep` files (their folders are kept).
fn copy_tree(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).expect("read_dir") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().expect("file name").to_owned();
        if name == KEEP {
            continue;
        }
        let dest = to.join(&name);
        if path.is_dir() {
            fs::create_dir(&dest).expect("create_dir");
            copy_tree(&path, &dest);
        } else {
            fs::copy(&path, &dest).expect("copy");
        }
    }
}

/// Show a tree readably in assertion messages.
fn describe(tree: &BTreeMap<String, Option<Vec<u8>>>) -> String {
    tree.iter()
        .map(|(path, content)| match content {
            None => format!("{path}/\n"),
            Some(bytes) => format!("{path}: {:?}\n", String::from_utf8_lossy(bytes)),
        })
        .collect()
}

/// Run one scenario; `Err` describes what went wrong.
fn run_scenario(dir: &Path) -> Result<(), String> {
    let input = dir.join("input");
    let expected_dir = dir.join("expected");
    let patch = fs::read_to_string(dir.join("patch.txt")).map_err(|e| format!("patch.txt: {e}"))?;
    let expected_error = fs::read_to_string(dir.join("error.txt")).ok();
    let expected_summary = fs::read_to_string(dir.join("summary.txt")).ok();
    if !input.is_dir() || !expected_dir.is_dir() {
        return Err("missing input/ or expected/".into());
    }
    if expected_error.is_some() && tree(&input) != tree(&expected_dir) {
        return Err("a failure scenario must have expected/ identical to input/".into());
    }

    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    copy_tree(&input, work.path());
    let result = apply_to_dir(work.path(), &patch);

    match (&result, &expected_error) {
        (Ok(summary), None) => {
            if let Some(want) = &expected_summary {
                let want: Vec<&str> = want.lines().collect();
                if *summary != want {
                    return Err(format!("summary {summary:?}, expected {want:?}"));
                }
            }
        }
        (Ok(summary), Some(want)) => {
            return Err(format!(
                "expected error {:?}, got success {summary:?}",
                want.trim_end()
            ))
        }
        (Err(err), None) => return Err(format!("unexpected error: {err}")),
        (Err(err), Some(want)) => {
            if err.to_string() != want.trim_end_matches('\n') {
                return Err(format!(
                    "error text\n  got:  {err}\n  want: {}",
                    want.trim_end()
                ));
            }
        }
    }

    let got = tree(work.path());
    let want = tree(&expected_dir);
    if got != want {
        return Err(format!(
            "tree differs\n--- got:\n{}--- expected:\n{}",
            describe(&got),
            describe(&want)
        ));
    }
    Ok(())
}

fn scenario_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apply_patch");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("read {}: {e}", root.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn apply_patch_scenarios() {
    let dirs = scenario_dirs();
    assert!(
        dirs.len() >= 20,
        "expected at least 20 scenarios, found {}",
        dirs.len()
    );
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|dir| {
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
            run_scenario(dir)
                .err()
                .map(|why| format!("{}: {why}", name.unwrap_or_default()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} scenario(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn failure_scenarios_cover_the_required_cases() {
    let names: Vec<String> = scenario_dirs()
        .iter()
        .filter(|d| d.join("error.txt").exists())
        .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    for needed in [
        "bad_header",
        "missing_context",
        "missing_file_to_update",
        "delete_directory",
        "second_file_after_first",
    ] {
        assert!(
            names.iter().any(|n| n.ends_with(needed)),
            "no failure scenario named *{needed} in {names:?}"
        );
    }
}

/// The harness itself must be able to fail: a wrong expectation is reported.
#[test]
fn harness_detects_a_wrong_tree() {
    let fixture = tempfile::tempdir().expect("tempdir");
    let dir = fixture.path();
    fs::create_dir_all(dir.join("input")).expect("mkdir");
    fs::create_dir_all(dir.join("expected")).expect("mkdir");
    fs::write(dir.join("input/a.txt"), "a\n").expect("write");
    fs::write(dir.join("expected/a.txt"), "not what the patch gives\n").expect("write");
    fs::write(
        dir.join("patch.txt"),
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n",
    )
    .expect("write");
    let why = run_scenario(dir).expect_err("must report the difference");
    assert!(why.contains("tree differs"), "{why}");
    fs::write(dir.join("expected/a.txt"), "b\n").expect("write");
    assert_eq!(run_scenario(dir), Ok(()));
}
