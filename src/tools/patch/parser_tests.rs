//! Unit tests of the patch parser.

use super::error::PatchError;
use super::parser::{envelope, hunk_sections, parse_patch, Hunk, UpdateChunk};

fn wrap(body: &str) -> String {
    format!("*** Begin Patch\n{body}\n*** End Patch")
}

fn err_text(patch: &str) -> String {
    match parse_patch(patch) {
        Ok(hunks) => panic!("expected an error, got {hunks:?}"),
        Err(e) => e.to_string(),
    }
}

/// An expected chunk; `context` lists the (old, new) index pairs of its context lines.
fn chunk(
    ctx: &[&str],
    old: &[&str],
    new: &[&str],
    context: &[(usize, usize)],
    eof: bool,
) -> UpdateChunk {
    let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect();
    UpdateChunk {
        change_context: v(ctx),
        old_lines: v(old),
        new_lines: v(new),
        context: context.to_vec(),
        is_end_of_file: eof,
    }
}

#[test]
fn parses_all_three_hunk_kinds() {
    let patch = wrap(
        "*** Add File: hello.txt\n+Hello\n+world\n*** Update File: src/app.py\n*** Move to: \
         src/main.py\n@@ def greet():\n-print(\"Hi\")\n+print(\"Hello, world!\")\n*** Delete \
         File: obsolete.txt",
    );
    let hunks = parse_patch(&patch).expect("valid patch");
    assert_eq!(
        hunks,
        vec![
            Hunk::AddFile {
                path: "hello.txt".into(),
                contents: "Hello\nworld\n".into()
            },
            Hunk::UpdateFile {
                path: "src/app.py".into(),
                move_path: Some("src/main.py".into()),
                chunks: vec![chunk(
                    &["def greet():"],
                    &["print(\"Hi\")"],
                    &["print(\"Hello, world!\")"],
                    &[],
                    false
                )],
            },
            Hunk::DeleteFile {
                path: "obsolete.txt".into()
            },
        ]
    );
}

#[test]
fn envelope_errors() {
    assert_eq!(
        err_text("bad"),
        "invalid patch: The first line of the patch must be '*** Begin Patch'"
    );
    assert_eq!(
        err_text(""),
        "invalid patch: The first line of the patch must be '*** Begin Patch'"
    );
    assert_eq!(
        err_text("*** Begin Patch\n*** Add File: a\n+x"),
        "invalid patch: The last line of the patch must be '*** End Patch'"
    );
    assert_eq!(
        err_text("*** Begin Patch"),
        "invalid patch: The last line of the patch must be '*** End Patch'"
    );
}

#[test]
fn envelope_is_trimmed_and_may_be_empty() {
    let hunks = parse_patch("\n\n  *** Begin Patch  \n*** End Patch \n\n").expect("empty");
    assert!(hunks.is_empty());
}

#[test]
fn crlf_patch_text_is_accepted() {
    let patch = "*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\n";
    let hunks = parse_patch(patch).expect("crlf");
    assert_eq!(
        hunks,
        vec![Hunk::AddFile {
            path: "a".into(),
            contents: "x\n".into()
        }]
    );
}

#[test]
fn heredoc_envelope_is_unwrapped() {
    for opener in ["<<EOF", "<<'EOF'", "<<\"EOF\""] {
        let patch = format!("{opener}\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n");
        let hunks = parse_patch(&patch).expect(opener);
        assert_eq!(hunks, vec![Hunk::DeleteFile { path: "a".into() }]);
    }
    // Other openers are not unwrapped.
    assert_eq!(
        err_text("<<END\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF"),
        "invalid patch: The first line of the patch must be '*** Begin Patch'"
    );
    // Fewer than 4 lines cannot be a wrapped patch.
    assert_eq!(
        err_text("<<EOF\n*** Begin Patch\nEOF"),
        "invalid patch: The first line of the patch must be '*** Begin Patch'"
    );
    // A broken inner envelope reports the inner error.
    assert_eq!(
        err_text("<<'EOF'\n*** Begin Patch\n*** Delete File: a\nEOF"),
        "invalid patch: The last line of the patch must be '*** End Patch'"
    );
}

#[test]
fn invalid_hunk_header_reports_line() {
    assert_eq!(
        err_text(&wrap("*** Delete File: a\n*** Frobnicate File: foo")),
        "invalid hunk at line 3, '*** Frobnicate File: foo' is not a valid hunk header. Valid \
         hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: \
         {path}'"
    );
    // A header without a path does not match a prefix.
    assert!(err_text(&wrap("*** Add File:")).starts_with("invalid hunk at line 2, '*** Add File:'"));
}

#[test]
fn add_file_with_no_lines_is_empty() {
    let hunks = parse_patch(&wrap("*** Add File: empty.txt")).expect("ok");
    assert_eq!(
        hunks,
        vec![Hunk::AddFile {
            path: "empty.txt".into(),
            contents: String::new()
        }]
    );
}

#[test]
fn empty_update_is_an_error() {
    assert_eq!(
        err_text(&wrap("*** Update File: test.py")),
        "invalid hunk at line 2, Update file hunk for path 'test.py' is empty"
    );
    assert_eq!(
        err_text(&wrap("*** Update File: a\n\n*** Delete File: b")),
        "invalid hunk at line 2, Update file hunk for path 'a' is empty"
    );
}

#[test]
fn chunk_without_lines_is_an_error() {
    assert_eq!(
        err_text(&wrap("*** Update File: a\n@@")),
        "invalid hunk at line 4, Update hunk does not contain any lines"
    );
    assert_eq!(
        err_text(&wrap("*** Update File: a\n@@ ctx\n*** End of File")),
        "invalid hunk at line 4, Update hunk does not contain any lines"
    );
}

#[test]
fn unexpected_first_body_line_is_an_error() {
    assert_eq!(
        err_text(&wrap("*** Update File: a\n@@\nbad")),
        "invalid hunk at line 4, Unexpected line found in update hunk: 'bad'. Every line should \
         start with ' ' (context line), '+' (added line), or '-' (removed line)"
    );
    // Without @@ the first chunk's first line must already be a body line.
    assert!(err_text(&wrap("*** Update File: a\nbad"))
        .starts_with("invalid hunk at line 3, Unexpected line found in update hunk: 'bad'"));
}

#[test]
fn later_chunk_needs_a_context_marker() {
    // The line after a chunk ends it; a later chunk must start with @@.
    let patch = wrap("*** Update File: a\n@@\n-x\n+y\n\tz");
    // "\tz" ends the first chunk and cannot start a new one.
    assert_eq!(
        err_text(&patch),
        "invalid hunk at line 6, Expected update hunk to start with a @@ context marker, got: \
         '\tz'"
    );
}

#[test]
fn first_chunk_may_omit_marker() {
    let hunks = parse_patch(&wrap("*** Update File: a\n x\n-y\n+z\n@@ w\n-1\n+2")).expect("ok");
    let Hunk::UpdateFile { chunks, .. } = &hunks[0] else {
        panic!("not an update")
    };
    assert_eq!(
        chunks,
        &vec![
            chunk(&[], &["x", "y"], &["x", "z"], &[(0, 0)], false),
            chunk(&["w"], &["1"], &["2"], &[], false)
        ]
    );
}

#[test]
fn stacked_context_markers_are_collected() {
    let patch =
        wrap("*** Update File: a.py\n@@ class Foo\n@@\n@@ def bar():\n-  pass\n+  return 1");
    let hunks = parse_patch(&patch).expect("ok");
    let Hunk::UpdateFile { chunks, .. } = &hunks[0] else {
        panic!("not an update")
    };
    assert_eq!(
        chunks,
        &vec![chunk(
            &["class Foo", "def bar():"],
            &["  pass"],
            &["  return 1"],
            &[],
            false
        )]
    );
}

#[test]
fn empty_line_is_empty_context_and_end_of_file_sets_flag() {
    let patch = wrap("*** Update File: a\n@@\n x\n\n-y\n+z\n*** End of File\n*** Delete File: b");
    let hunks = parse_patch(&patch).expect("ok");
    assert_eq!(
        hunks,
        vec![
            Hunk::UpdateFile {
                path: "a".into(),
                move_path: None,
                chunks: vec![chunk(
                    &[],
                    &["x", "", "y"],
                    &["x", "", "z"],
                    &[(0, 0), (1, 1)],
                    true
                )],
            },
            Hunk::DeleteFile { path: "b".into() },
        ]
    );
}

#[test]
fn blank_lines_between_hunks_and_chunks_are_skipped() {
    let patch = wrap("*** Update File: a\n\n@@\n-x\n+y\n*** Add File: b\n+1");
    let hunks = parse_patch(&patch).expect("ok");
    assert_eq!(hunks.len(), 2);
}

#[test]
fn move_to_line_is_not_trimmed() {
    let hunks = parse_patch(&wrap("*** Update File: a\n*** Move to: b c\n@@\n-x\n+y")).expect("ok");
    let Hunk::UpdateFile { move_path, .. } = &hunks[0] else {
        panic!("not an update")
    };
    assert_eq!(move_path.as_deref(), Some("b c"));
}

#[test]
fn errors_are_invalid_hunk_variants() {
    let err = parse_patch(&wrap("nope")).expect_err("bad header");
    assert!(matches!(
        err,
        PatchError::InvalidHunk { line_number: 2, .. }
    ));
}

#[test]
fn odd_unicode_input_does_not_panic() {
    for text in [
        "*** Begin Patch\n\u{feff}\n*** End Patch",
        "é",
        "*** Begin Patch\n*** Update File: 日本\n@@ 🎉\n-ü\n+ö\n*** End Patch",
    ] {
        let _ = parse_patch(text);
    }
}

#[test]
fn sections_cut_a_patch_into_one_piece_per_file_that_parses_alone() {
    let patch = wrap(
        "*** Add File: n.md\n+new\n*** Update File: a.md\n*** Move to: b.md\n@@ ctx\n-x\n+y\n*** End of File\n*** Delete File: old.md",
    );
    let hunks = parse_patch(&patch).expect("ok");
    let sections = hunk_sections(&patch).expect("cut");
    assert_eq!(sections.len(), 3);
    assert!(sections[1].starts_with("*** Update File: a.md\n"));
    // Any subset, re-enveloped, is the same hunks.
    let two = envelope(&[sections[0].clone(), sections[2].clone()]);
    assert_eq!(
        parse_patch(&two).expect("ok"),
        vec![hunks[0].clone(), hunks[2].clone()]
    );
    assert!(hunk_sections(&wrap("nope")).is_err());
}
