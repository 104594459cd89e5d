//! Fuzz the apply_patch text format: parse arbitrary text, then plan the hunks against an
//! in-memory set of files. Neither step may panic, whatever the input; a plan that succeeds
//! has one entry per hunk and diffs that render.
//!
//! Input layout: `<seed file text> NUL <patch text>`. Without a NUL byte the whole input is the
//! patch and the seed text is empty. The seed becomes the content of every file the patch
//! names that is not one of the fixed files below, so update chunks really get matched.

#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use nbook::tools::patch::{parse_patch, plan_patch, unified_diff, Hunk, PlannedKind};

fn fixed_files() -> HashMap<&'static str, &'static str> {
    HashMap::from([
        ("a.md", "alpha\nbeta\ngamma\n"),
        ("empty.md", ""),
        ("no-newline.md", "last line without newline"),
        ("crlf.md", "one\r\ntwo\r\n"),
        ("unicode.md", "Straße\n中文\n  indented\t\n"),
    ])
}

fuzz_target!(|data: &[u8]| {
    let (seed, patch) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&data[..0], data),
    };
    let Ok(patch) = std::str::from_utf8(patch) else {
        return;
    };
    let seed = String::from_utf8_lossy(seed).into_owned();

    let hunks = match parse_patch(patch) {
        Ok(hunks) => hunks,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    for h in &hunks {
        let _ = h.path();
        if let Hunk::AddFile { contents, .. } = h {
            assert!(
                contents.is_empty() || contents.ends_with('\n'),
                "added lines end with a newline"
            );
        }
    }

    let fixed = fixed_files();
    let mut read = |path: &str| -> Result<Option<String>, String> {
        if path.ends_with('/') || path == "folder" {
            return Err("Is a directory".to_string());
        }
        if path.starts_with("missing") {
            return Ok(None);
        }
        Ok(Some(
            fixed
                .get(path)
                .map(|s| s.to_string())
                .unwrap_or_else(|| seed.clone()),
        ))
    };
    match plan_patch(&hunks, &mut read) {
        Ok(planned) => {
            assert_eq!(planned.len(), hunks.len(), "one planned entry per hunk");
            for f in &planned {
                match &f.kind {
                    PlannedKind::Add { content, previous } => {
                        let _ = unified_diff(&f.path, previous.as_deref().unwrap_or(""), content);
                    }
                    PlannedKind::Delete { old } => {
                        let _ = unified_diff(&f.path, old, "");
                    }
                    PlannedKind::Update { old, new, move_to } => {
                        let shown = move_to.as_deref().unwrap_or(&f.path);
                        let _ = unified_diff(shown, old, new);
                    }
                }
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
