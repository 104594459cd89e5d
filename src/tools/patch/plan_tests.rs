//! Unit tests of planning (locating chunks and computing new contents) and of the commit.

use std::collections::HashMap;
use std::fs;
use std::sync::Arc;

use crate::workspace::{RootDir, Target};

use super::error::{PatchError, ResolveError};
use super::parser::parse_patch;
use super::plan::{plan_patch, split_lines, PlannedFile, PlannedKind};
use super::{commit_plan, unified_diff};

/// Plan `body` (wrapped in the envelope) against in-memory files.
fn plan(files: &[(&str, &str)], body: &str) -> Result<Vec<PlannedFile>, PatchError> {
    let files: HashMap<String, String> = files
        .iter()
        .map(|(p, c)| (p.to_string(), c.to_string()))
        .collect();
    let hunks = parse_patch(&format!("*** Begin Patch\n{body}\n*** End Patch"))?;
    let mut read = |p: &str| match p {
        "dir" => Err("Is a directory".to_string()),
        _ => Ok(files.get(p).cloned()),
    };
    plan_patch(&hunks, &mut read)
}

/// The new content of the single update in `body`.
fn updated(file: &str, body: &str) -> Result<String, PatchError> {
    let planned = plan(&[("f", file)], &format!("*** Update File: f\n{body}"))?;
    match &planned[0].kind {
        PlannedKind::Update { new, .. } => Ok(new.clone()),
        other => panic!("not an update: {other:?}"),
    }
}

fn err_text<T: std::fmt::Debug>(r: Result<T, PatchError>) -> String {
    r.expect_err("expected an error").to_string()
}

#[test]
fn multiple_chunks_apply_in_order() {
    let file = "a\nb\nc\nd\ne\nf\ng\n";
    let new = updated(file, "@@\n a\n-b\n+B\n@@\n e\n-f\n+F1\n+F2").expect("ok");
    assert_eq!(new, "a\nB\nc\nd\ne\nF1\nF2\ng\n");
}

#[test]
fn chunks_are_searched_after_the_previous_one() {
    // The second chunk's lines also exist before the first chunk's match.
    let file = "x\ny\nx\ny\n";
    let new = updated(file, "@@\n y\n x\n-y\n+Y").expect("ok");
    assert_eq!(new, "x\ny\nx\nY\n");
    let new = updated(file, "@@\n-x\n+1\n@@\n-x\n+2").expect("ok");
    assert_eq!(new, "1\ny\n2\ny\n");
}

#[test]
fn context_line_moves_the_cursor() {
    let file = "fn a() {\n  return 0;\n}\nfn b() {\n  return 0;\n}\n";
    let new = updated(file, "@@ fn b() {\n-  return 0;\n+  return 1;").expect("ok");
    assert_eq!(new, "fn a() {\n  return 0;\n}\nfn b() {\n  return 1;\n}\n");
}

#[test]
fn stacked_contexts_narrow_the_search() {
    let file = "class A:\n  def m():\n    pass\nclass B:\n  def m():\n    pass\n";
    let new = updated(file, "@@ class B:\n@@   def m():\n-    pass\n+    return 2").expect("ok");
    assert_eq!(
        new,
        "class A:\n  def m():\n    pass\nclass B:\n  def m():\n    return 2\n"
    );
    // Each context is looked up after the previous one: `class A` after `class B` fails.
    assert_eq!(
        err_text(updated(file, "@@ class B:\n@@ class A:\n-    pass\n+x")),
        "Failed to find context 'class A:' in f"
    );
}

#[test]
fn pure_insertion_goes_to_end_of_file() {
    assert_eq!(updated("a\nb\n", "@@\n+c\n+d").expect("ok"), "a\nb\nc\nd\n");
    // Even with a context line, and before a final empty line.
    assert_eq!(updated("a\nb\n\n", "@@ a\n+c").expect("ok"), "a\nb\nc\n\n");
    assert_eq!(updated("", "@@\n+first").expect("ok"), "first\n");
}

#[test]
fn end_of_file_chunk_matches_only_the_tail() {
    let file = "end\nmid\nend\n";
    assert_eq!(
        updated(file, "@@\n-end\n+END\n*** End of File").expect("ok"),
        "end\nmid\nEND\n"
    );
    assert!(err_text(updated(file, "@@\n-mid\n+MID\n*** End of File"))
        .starts_with("Failed to find expected lines in f:\nmid"));
}

#[test]
fn trailing_empty_line_is_retried_without() {
    // The blank line after "-b/+B" is parsed as an empty context line that the file lacks.
    let new = updated("a\nb\n", "@@\n a\n-b\n+B\n").expect("ok");
    assert_eq!(new, "a\nB\n");
    let new = updated("a\nb\n", "@@\n a\n-b\n+B\n\n*** End of File").expect("ok");
    assert_eq!(new, "a\nB\n");
}

#[test]
fn context_not_found() {
    assert_eq!(
        err_text(updated("a\nb\n", "@@ nope\n-a\n+b")),
        "Failed to find context 'nope' in f"
    );
}

#[test]
fn expected_lines_not_found() {
    assert_eq!(
        err_text(updated("a\nb\n", "@@\n a\n-zz\n+y")),
        "Failed to find expected lines in f:\na\nzz"
    );
}

#[test]
fn update_and_delete_of_missing_file_fail() {
    assert_eq!(
        err_text(plan(&[], "*** Update File: gone.txt\n@@\n-a\n+b")),
        "Failed to read file to update gone.txt: No such file or directory"
    );
    assert_eq!(
        err_text(plan(&[], "*** Delete File: gone.txt")),
        "Failed to delete file gone.txt: No such file or directory"
    );
    assert_eq!(
        err_text(plan(&[], "*** Delete File: dir")),
        "Failed to delete file dir: Is a directory"
    );
    assert_eq!(
        err_text(plan(&[], "*** Add File: dir\n+x")),
        "Failed to write file dir: Is a directory"
    );
}

#[test]
fn zero_hunks_is_an_error() {
    let hunks = parse_patch("*** Begin Patch\n*** End Patch").expect("empty envelope");
    let mut read = |_: &str| Ok(None);
    assert_eq!(
        err_text(plan_patch(&hunks, &mut read)),
        "No files were modified."
    );
}

#[test]
fn later_hunks_see_planned_content() {
    let planned = plan(
        &[("a", "1\n")],
        "*** Update File: a\n@@\n-1\n+2\n*** Update File: a\n*** Move to: b\n@@\n-2\n+3\n\
         *** Update File: b\n@@\n+4\n*** Delete File: b\n*** Add File: a\n+5",
    )
    .expect("ok");
    let kinds: Vec<_> = planned.into_iter().map(|p| (p.path, p.kind)).collect();
    let upd = |old: &str, new: &str, mv: Option<&str>| PlannedKind::Update {
        old: old.into(),
        new: new.into(),
        move_to: mv.map(Into::into),
    };
    assert_eq!(
        kinds,
        vec![
            ("a".into(), upd("1\n", "2\n", None)),
            ("a".into(), upd("2\n", "3\n", Some("b"))),
            ("b".into(), upd("3\n", "3\n4\n", None)),
            (
                "b".into(),
                PlannedKind::Delete {
                    old: "3\n4\n".into()
                }
            ),
            (
                "a".into(),
                PlannedKind::Add {
                    content: "5\n".into(),
                    previous: None
                }
            ),
        ]
    );
}

#[test]
fn add_over_existing_records_previous() {
    let planned = plan(&[("a", "old\n")], "*** Add File: a\n+new").expect("ok");
    assert_eq!(
        planned[0].kind,
        PlannedKind::Add {
            content: "new\n".into(),
            previous: Some("old\n".into())
        }
    );
}

#[test]
fn crlf_is_kept_only_when_every_newline_is_crlf() {
    assert_eq!(
        split_lines("a\r\nb\r\n"),
        (vec!["a".into(), "b".into()], true)
    );
    assert_eq!(
        split_lines("a\r\nb\n"),
        (vec!["a\r".into(), "b".into()], false)
    );
    assert_eq!(split_lines("a\nb"), (vec!["a".into(), "b".into()], false));
    assert_eq!(split_lines(""), (vec![], false));
    assert_eq!(
        updated("a\r\nb\r\n", "@@\n-b\n+c").expect("ok"),
        "a\r\nc\r\n"
    );
    // Mixed endings: lines keep their `\r`, found by the trim_end fuzz level.
    assert_eq!(updated("a\r\nb\n", "@@\n-a\n+c").expect("ok"), "c\nb\n");
}

#[test]
fn trailing_newline_is_added() {
    assert_eq!(updated("a\nb", "@@\n-b\n+c").expect("ok"), "a\nc\n");
    assert_eq!(updated("a\n", "@@\n-a").expect("ok"), "");
    // A trailing blank line survives an unrelated edit.
    assert_eq!(updated("a\nb\n\n", "@@\n-a\n+A").expect("ok"), "A\nb\n\n");
}

#[test]
fn unified_diff_has_headers_and_counts() {
    let (text, added, removed) = unified_diff("x.txt", "a\nb\nc\n", "a\nB\nc\nd\n");
    assert!(text.starts_with("--- a/x.txt\n+++ b/x.txt\n@@"), "{text}");
    assert!(text.contains("-b\n+B\n"));
    assert_eq!((added, removed), (2, 1));
}

#[test]
fn commit_failure_removes_created_dirs_and_temps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_path_buf();
    fs::write(root.join("keep.txt"), "old\n").expect("write");
    let add = |path: &str| PlannedFile {
        path: path.into(),
        kind: PlannedKind::Add {
            content: "x\n".into(),
            previous: None,
        },
    };
    let plan = vec![
        PlannedFile {
            path: "keep.txt".into(),
            kind: PlannedKind::Update {
                old: "old\n".into(),
                new: "new\n".into(),
                move_to: None,
            },
        },
        add("new/deep/a.txt"),
        add("blocker/x.txt"),
    ];
    let held = Arc::new(RootDir::open(&root, false).expect("hold"));
    // `blocker/` is missing when checked; a file appears there before the commit creates the
    // folder: the commit must not write through it, and undoes everything staged.
    let resolve = |p: &str| -> Result<Target, ResolveError> {
        let t = held.target(p)?;
        if p == "blocker/x.txt" {
            fs::write(root.join("blocker"), "file\n").expect("write the blocker");
        }
        Ok(t)
    };
    let err = commit_plan(&plan, &resolve).expect_err("blocker is a file");
    assert!(
        err.to_string()
            .starts_with("Failed to write file blocker/x.txt"),
        "{err}"
    );
    let mut names: Vec<_> = fs::read_dir(&root)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["blocker", "keep.txt"]);
    assert_eq!(
        fs::read_to_string(root.join("keep.txt")).expect("read"),
        "old\n"
    );
}

#[test]
fn commit_resolve_error_writes_nothing() {
    let plan = vec![PlannedFile {
        path: "a".into(),
        kind: PlannedKind::Add {
            content: "x\n".into(),
            previous: None,
        },
    }];
    let err =
        commit_plan(&plan, &|p| Err(ResolveError::NotResolved(p.into()))).expect_err("refused");
    assert_eq!(err.to_string(), "Invalid path 'a': a was not resolved");
}

#[test]
fn fuzzed_context_keeps_the_files_line_but_minus_plus_lines_change_it() {
    // The context ` alpha` matches `alpha   ` only after whitespace fuzz: the file keeps its
    // own line. A `-`/`+` pair is an edit, so its text is written even when it looks the same.
    let file = "alpha   \nbeta  \ngamma\n";
    let new = updated(file, "@@\n alpha\n-beta\n+beta\n-gamma\n+GAMMA").expect("ok");
    assert_eq!(new, "alpha   \nbeta\nGAMMA\n");
    // An exact match is unaffected, and so is a chunk retried without its trailing blank.
    let new = updated("a\nb\n", "@@\n a\n-b\n+B\n").expect("ok");
    assert_eq!(new, "a\nB\n");
}
