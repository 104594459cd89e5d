//! `## File Scope` entries: project-relative paths or globs (`manuscript/act-2/*.md`). Absolute
//! paths, `..`, home-relative paths and URLs are refused, so a task's scope can never reach
//! outside the book.

use super::error::{BoardError, BoardResult};

/// Check one entry and return it trimmed (a leading `./` dropped).
pub fn check_entry(raw: &str) -> BoardResult<String> {
    let entry = raw.trim().trim_matches('`').trim();
    let refuse = |reason| {
        Err(BoardError::FileScope {
            entry: raw.to_string(),
            reason,
        })
    };
    if entry.is_empty() {
        return refuse("it is empty");
    }
    if entry.len() > 1000 {
        return refuse("it is longer than 1000 bytes");
    }
    if entry.chars().any(char::is_control) {
        return refuse("it contains control characters");
    }
    if is_url(entry) {
        return refuse("URLs are not files of the project; give a project-relative path");
    }
    if entry.starts_with('/') || entry.starts_with('~') {
        return refuse("absolute paths are refused; give a path relative to the project root");
    }
    if entry.contains('\\') {
        return refuse("use / as the separator");
    }
    let entry = entry.strip_prefix("./").unwrap_or(entry);
    if entry.split('/').any(|c| c == "..") {
        return refuse("`..` would leave the project; give a path inside it");
    }
    if entry.is_empty() {
        return refuse("it names the project root itself");
    }
    Ok(entry.to_string())
}

/// Whether the project-relative `path` lies inside the scope: an entry equal to it, a folder
/// entry above it (`manuscript/act-2` or `manuscript/act-2/`), or a glob matching it (`*` and
/// `?` within one segment, `**` any number of segments).
pub fn in_scope(scope: &[String], path: &str) -> bool {
    scope.iter().any(|entry| {
        let e = entry.trim_end_matches('/');
        if e.contains(['*', '?']) {
            let pat: Vec<&str> = e.split('/').collect();
            let segs: Vec<&str> = path.split('/').collect();
            glob_segments(&pat, &segs)
        } else {
            path == e
                || path
                    .strip_prefix(e)
                    .is_some_and(|rest| rest.starts_with('/'))
        }
    })
}

fn glob_segments(pat: &[&str], segs: &[&str]) -> bool {
    match pat.split_first() {
        None => segs.is_empty(),
        Some((&"**", rest)) => (0..=segs.len()).any(|i| glob_segments(rest, &segs[i..])),
        Some((p, rest)) => match segs.split_first() {
            Some((s, tail)) => glob_one(p.as_bytes(), s.as_bytes()) && glob_segments(rest, tail),
            None => false,
        },
    }
}

fn glob_one(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|i| glob_one(rest, &s[i..])),
        Some((b'?', rest)) => !s.is_empty() && glob_one(rest, &s[1..]),
        Some((c, rest)) => s.first() == Some(c) && glob_one(rest, &s[1..]),
    }
}

/// `scheme:` at the start (http:, https:, file:, mailto:, and drive letters such as `C:`,
/// which are absolute paths anyway).
fn is_url(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_matches_files_folders_and_globs() {
        let scope: Vec<String> = [
            "manuscript/012.md",
            "notes/act-2",
            "lorebook/*.md",
            "drafts/**/ch?.md",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for inside in [
            "manuscript/012.md",
            "notes/act-2/flett.md",
            "lorebook/harbour.md",
            "drafts/ch1.md",
            "drafts/a/b/ch2.md",
        ] {
            assert!(in_scope(&scope, inside), "{inside}");
        }
        for outside in [
            "manuscript/013.md",
            "notes/act-20/x.md",
            "lorebook/deep/x.md",
            "drafts/a/ch10.md",
            "manuscript/012.md.bak",
        ] {
            assert!(!in_scope(&scope, outside), "{outside}");
        }
    }

    #[test]
    fn relative_paths_and_globs_pass_everything_else_is_refused() {
        assert_eq!(
            check_entry("manuscript/act-2/*.md").unwrap(),
            "manuscript/act-2/*.md"
        );
        assert_eq!(check_entry(" ./notes/flett.md ").unwrap(), "notes/flett.md");
        assert_eq!(check_entry("`lorebook/**`").unwrap(), "lorebook/**");
        for bad in [
            "/etc/passwd",
            "~/novel.md",
            "../other-book/ch1.md",
            "manuscript/../../x",
            "https://example.com/a.md",
            "file:///tmp/x",
            "C:\\book\\x.md",
            "a\\b.md",
            "",
            "  ",
            "./",
            "bad\u{7}name",
        ] {
            let e = check_entry(bad).unwrap_err();
            assert_eq!(e.code(), "FILE_SCOPE_INVALID", "{bad:?}");
        }
    }
}
