//! Property tests: generated valid patches give the expected files, and corrupted patches that
//! fail leave the directory byte-identical.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use proptest::prelude::*;

use std::sync::Arc;

use super::commit::commit_failing_after;
use super::{apply_to_dir, commit_plan, parse_patch, plan_patch, PlannedFile, PlannedKind};
use crate::workspace::RootDir;

/// One edit: skip `gap` lines, keep one context line, remove `remove` lines, add `added`.
type Edit = (usize, usize, Vec<String>);

#[derive(Debug, Clone)]
struct FileSpec {
    words: Vec<String>,
    trailing_newline: bool,
    delete: bool,
    edits: Vec<Edit>,
    context_marker: bool,
    omit_first_marker: bool,
}

fn text() -> impl Strategy<Value = String> {
    "[a-z \té日🎉*@+-]{0,10}"
}

fn file_spec() -> impl Strategy<Value = FileSpec> {
    (
        prop::collection::vec(text(), 0..25),
        any::<bool>(),
        prop::bool::weighted(0.15),
        prop::collection::vec(
            (0usize..5, 0usize..4, prop::collection::vec(text(), 0..3)),
            1..5,
        ),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(words, trailing_newline, delete, edits, context_marker, omit_first_marker)| {
                FileSpec {
                    words,
                    trailing_newline,
                    delete,
                    edits,
                    context_marker,
                    omit_first_marker,
                }
            },
        )
}

/// Unique, non-blank lines so every chunk has exactly one exact match.
fn lines_of(spec: &FileSpec) -> Vec<String> {
    spec.words
        .iter()
        .enumerate()
        .map(|(i, w)| format!("{i}:{w}"))
        .collect()
}

fn join(lines: &[String], trailing_newline: bool) -> String {
    let mut s = lines.join("\n");
    if trailing_newline && !lines.is_empty() {
        s.push('\n');
    }
    s
}

/// The patch section for one file and the content it should produce (None = deleted).
fn section(name: &str, spec: &FileSpec) -> (String, Option<String>) {
    if spec.delete {
        return (format!("*** Delete File: {name}\n"), None);
    }
    let lines = lines_of(spec);
    let mut patch = format!("*** Update File: {name}\n");
    let mut expected: Vec<String> = Vec::new();
    let mut pos = 0;
    let mut chunks = 0;
    for (gap, remove, added) in &spec.edits {
        let start = pos + gap + 1;
        if start > lines.len() {
            break;
        }
        let remove = (*remove).min(lines.len() - start);
        if remove == 0 && added.is_empty() {
            continue;
        }
        if spec.context_marker && start >= pos + 2 {
            patch.push_str(&format!("@@ {}\n", lines[start - 2]));
        } else if !(spec.omit_first_marker && chunks == 0) {
            patch.push_str("@@\n");
        }
        patch.push_str(&format!(" {}\n", lines[start - 1]));
        for old in &lines[start..start + remove] {
            patch.push_str(&format!("-{old}\n"));
        }
        for new in added {
            patch.push_str(&format!("+{new}\n"));
        }
        expected.extend_from_slice(&lines[pos..start]);
        expected.extend(added.iter().cloned());
        pos = start + remove;
        chunks += 1;
    }
    if chunks == 0 {
        // Nothing to edit: replace the whole file with an Add instead.
        let body: String = lines.iter().map(|l| format!("+{l}\n")).collect();
        return (
            format!("*** Add File: {name}\n{body}"),
            Some(join(&lines, true)),
        );
    }
    expected.extend_from_slice(&lines[pos..]);
    (patch, Some(join(&expected, true)))
}

/// Every file and folder under `root` with its bytes (None for folders).
fn snapshot(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        for entry in fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let rel = path
                .strip_prefix(root)
                .expect("prefix")
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                out.insert(rel, None);
                walk(root, &path, out);
            } else {
                out.insert(rel, Some(fs::read(&path).expect("read")));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Write the specs as files, return the patch body and the expected final files.
fn setup(root: &Path, specs: &[FileSpec]) -> (String, BTreeMap<String, Option<Vec<u8>>>) {
    let mut body = String::new();
    let mut expected = snapshot(root);
    for (i, spec) in specs.iter().enumerate() {
        let name = format!("f{i}.txt");
        fs::write(
            root.join(&name),
            join(&lines_of(spec), spec.trailing_newline),
        )
        .expect("write");
        let (section, content) = section(&name, spec);
        body.push_str(&section);
        match content {
            Some(c) => expected.insert(name, Some(c.into_bytes())),
            None => expected.remove(&name),
        };
    }
    body.push_str("*** Add File: new/deep/added.txt\n+fresh\n");
    expected.insert("new".into(), None);
    expected.insert("new/deep".into(), None);
    expected.insert("new/deep/added.txt".into(), Some(b"fresh\n".to_vec()));
    (body, expected)
}

/// Corrupt a valid patch body so that applying it must fail.
fn corrupt(body: &str, how: usize, at: usize) -> String {
    let hunk_starts: Vec<usize> = std::iter::once(0)
        .chain(body.match_indices("\n*** ").map(|(i, _)| i + 1))
        .collect();
    let split = hunk_starts
        .get(at % hunk_starts.len().max(1))
        .copied()
        .unwrap_or(0);
    let (head, tail) = body.split_at(split);
    let patch = |b: &str| format!("*** Begin Patch\n{b}*** End Patch\n");
    match how {
        0 => patch(&format!("{body}*** Update File: missing.txt\n@@\n-x\n+y\n")),
        1 => patch(&format!(
            "{body}*** Update File: f0.txt\n@@\n-\u{1}nomatch\n+y\n"
        )),
        2 => patch(&format!(
            "{body}*** Update File: f0.txt\n@@ \u{1}nocontext\n-a\n+y\n"
        )),
        3 => patch(&format!("{head}*** Frobnicate File: x\n{tail}")),
        4 => patch(&format!("{body}*** Delete File: sub\n")),
        5 => patch(&format!("{body}*** Add File: ../escape.txt\n+x\n")),
        6 => patch(&format!("{head}*** Update File: f0.txt\n@@\n{tail}")),
        _ => format!("*** Begin Patch\n{body}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn valid_patch_gives_expected_tree(specs in prop::collection::vec(file_spec(), 1..4)) {
        let dir = tempfile::tempdir().expect("tempdir");
        let (body, expected) = setup(dir.path(), &specs);
        let patch = format!("*** Begin Patch\n{body}*** End Patch\n");
        let result = apply_to_dir(dir.path(), &patch);
        prop_assert!(result.is_ok(), "patch failed: {:?}\n{}", result, patch);
        prop_assert_eq!(snapshot(dir.path()), expected, "patch:\n{}", patch);
    }

    #[test]
    fn failing_patch_leaves_tree_untouched(
        specs in prop::collection::vec(file_spec(), 1..4),
        how in 0usize..8,
        at in 0usize..8,
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir(dir.path().join("sub")).expect("mkdir");
        fs::write(dir.path().join("sub/inner.txt"), "inner\n").expect("write");
        let (body, _) = setup(dir.path(), &specs);
        let before = snapshot(dir.path());
        let patch = corrupt(&body, how, at);
        let result = apply_to_dir(dir.path(), &patch);
        prop_assert!(result.is_err(), "corruption {} did not fail:\n{}", how, patch);
        prop_assert_eq!(snapshot(dir.path()), before, "patch:\n{}", patch);
    }

    /// A plan that fails while committing (not while planning) is rolled back: staged temps,
    /// created folders and already swapped files are all undone.
    #[test]
    fn failing_commit_rolls_back(
        specs in prop::collection::vec(file_spec(), 1..4),
        in_swap in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(dir.path()).expect("canonicalize");
        let (body, _) = setup(&root, &specs);
        let before = snapshot(&root);
        let hunks = parse_patch(&format!("*** Begin Patch\n{body}*** End Patch\n")).expect("parse");
        let mut read = |p: &str| Ok(fs::read_to_string(root.join(p)).ok());
        let mut plan = plan_patch(&hunks, &mut read).expect("plan");
        let held = Arc::new(RootDir::open(&root, false).expect("hold"));
        let result = if in_swap {
            // Fails in the swap phase, after the first rename.
            commit_failing_after(&plan, &|p| Ok(held.target(p)?), 1)
        } else {
            // Fails while staging: after `late/below` was checked, someone puts a file where
            // its folder is to be created (it must not be followed, and everything staged is
            // undone).
            plan.push(PlannedFile {
                path: "late/below".into(),
                kind: PlannedKind::Add { content: "x\n".into(), previous: None },
            });
            commit_plan(&plan, &|p| {
                let t = held.target(p)?;
                if p == "late/below" {
                    fs::write(root.join("late"), "a file, not a folder\n").expect("write the file");
                }
                Ok(t)
            })
        };
        prop_assert!(result.is_err(), "commit should fail");
        let _ = fs::remove_file(root.join("late"));
        prop_assert_eq!(snapshot(&root), before);
    }

    /// Arbitrary patch-like text never panics, whatever it does.
    #[test]
    fn arbitrary_patch_text_never_panics(
        lines in prop::collection::vec(
            prop_oneof![
                Just("*** Begin Patch".to_string()),
                Just("*** End Patch".to_string()),
                Just("*** Update File: f0.txt".to_string()),
                Just("*** Add File: n/é.txt".to_string()),
                Just("*** Delete File: f0.txt".to_string()),
                Just("*** Move to: f1.txt".to_string()),
                Just("*** End of File".to_string()),
                Just("@@".to_string()),
                "@@ [0-9]:[a-z]{0,2}",
                "[-+ ][0-9]:[a-zé日 ]{0,3}",
                ".{0,6}",
            ],
            0..14,
        ),
        specs in prop::collection::vec(file_spec(), 1..3),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let _ = setup(dir.path(), &specs);
        let _ = apply_to_dir(dir.path(), &lines.join("\n"));
    }
}
