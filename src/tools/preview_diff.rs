//! The diff an approval shows, bounded. A write over a 300 MB file must not build a 300 MB
//! diff (and print it as JSON): every diff line is cut at [`DIFF_LINE_MAX_CHARS`], the whole
//! text at about [`PREVIEW_DIFF_MAX_BYTES`] by eliding its middle ("… N lines elided …",
//! with the change's full extent), the line diff itself has a time limit, and a write whose
//! old file is too large to load is shown as a whole-file replacement streamed from disk.
//! Counts of added and removed lines are always exact.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::time::Duration;

/// About how much diff text one file's preview keeps (head and tail halves).
pub const PREVIEW_DIFF_MAX_BYTES: usize = 256 * 1024;
/// Longest diff line shown whole (the same cut as `read`).
pub const DIFF_LINE_MAX_CHARS: usize = super::read_window::READ_MAX_LINE_CHARS;
/// Above this many bytes (old + new), a write is previewed as a whole-file replacement
/// instead of a line diff, and its old file is streamed instead of loaded.
pub const LINE_DIFF_MAX_INPUT: u64 = 8 * 1024 * 1024;
/// The line diff gives up looking for the smallest diff after this long (it stays correct,
/// only coarser).
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// A unified diff with its exact line counts, possibly elided in the middle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundedDiff {
    pub text: String,
    pub added: usize,
    pub removed: usize,
    /// Lines of diff text left out of `text` (0 when it is complete).
    pub elided_lines: usize,
}

/// Collects diff lines: the first half of the budget verbatim, then a rolling tail.
struct Sink {
    head: String,
    tail: VecDeque<String>,
    tail_bytes: usize,
    spilling: bool,
    elided: usize,
}

impl Sink {
    fn new(header: &str) -> Sink {
        Sink {
            head: header.to_string(),
            tail: VecDeque::new(),
            tail_bytes: 0,
            spilling: false,
            elided: 0,
        }
    }

    /// One diff line: `tag` ("+", "-", " ", or a whole "@@ …" header with an empty body).
    fn line(&mut self, tag: &str, body: &str) {
        let body = body.strip_suffix('\n').unwrap_or(body);
        let mut text = String::with_capacity(tag.len() + body.len().min(8 * 1024) + 1);
        text.push_str(tag);
        clip_into(&mut text, body);
        text.push('\n');
        if !self.spilling && self.head.len() + text.len() <= PREVIEW_DIFF_MAX_BYTES / 2 {
            self.head.push_str(&text);
            return;
        }
        self.spilling = true;
        self.tail_bytes += text.len();
        self.tail.push_back(text);
        while self.tail_bytes > PREVIEW_DIFF_MAX_BYTES / 2 {
            match self.tail.pop_front() {
                Some(old) => {
                    self.tail_bytes -= old.len();
                    self.elided += 1;
                }
                None => break,
            }
        }
    }

    fn finish(self, added: usize, removed: usize, bytes: (u64, u64)) -> BoundedDiff {
        let mut text = self.head;
        if self.elided > 0 {
            text.push_str(&elision_note(self.elided, added, removed, bytes));
        }
        for l in self.tail {
            text.push_str(&l);
        }
        BoundedDiff {
            text,
            added,
            removed,
            elided_lines: self.elided,
        }
    }
}

/// The line that stands for the elided middle; it says the change's whole extent.
fn elision_note(
    elided: usize,
    added: usize,
    removed: usize,
    (before, after): (u64, u64),
) -> String {
    format!(
        "… {elided} lines elided (the whole change: +{added} -{removed} lines, {before} → {after} bytes) …\n"
    )
}

/// Append `body` cut at [`DIFF_LINE_MAX_CHARS`] characters, saying how much was cut.
fn clip_into(out: &mut String, body: &str) {
    match body.char_indices().nth(DIFF_LINE_MAX_CHARS) {
        None => out.push_str(body),
        Some((cut, _)) => {
            out.push_str(&body[..cut]);
            let more = body[cut..].chars().count();
            out.push_str(&format!("… (line truncated, {more} more chars)"));
        }
    }
}

fn header(path: &str) -> String {
    format!("--- a/{path}\n+++ b/{path}\n")
}

/// Unified diff (3 lines of context, `--- a/<path>` / `+++ b/<path>` headers) of
/// `old` → `new`, bounded as the module says. Identical texts give an empty diff.
pub fn bounded_diff(path: &str, old: &str, new: &str) -> BoundedDiff {
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    let mut sink = Sink::new("");
    let mut first = true;
    let unified = diff.unified_diff();
    for hunk in unified.iter_hunks() {
        if first {
            sink.head.push_str(&header(path));
            first = false;
        }
        sink.line(&hunk.header().to_string(), "");
        for change in hunk.iter_changes() {
            sink.line(&change.tag().to_string(), change.value());
            if change.missing_newline() {
                sink.line("\\ No newline at end of file", "");
            }
        }
    }
    sink.finish(added, removed, (old.len() as u64, new.len() as u64))
}

/// `old` → `new` with the kept hunks of [`bounded_diff`]'s diff applied and the others left as
/// they are: `kept[j]` for its `j`-th `@@` hunk (the same diff, so the same hunks). `None` when
/// the diff has another number of hunks than `kept` says.
pub fn with_kept_hunks(old: &str, new: &str, kept: &[bool]) -> Option<String> {
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let (olds, news) = (diff.old_slices(), diff.new_slices());
    let unified = diff.unified_diff();
    let hunks: Vec<_> = unified.iter_hunks().collect();
    if hunks.len() != kept.len() {
        return None;
    }
    let mut out = String::with_capacity(old.len().max(new.len()));
    let mut at = 0;
    for (hunk, keep) in hunks.iter().zip(kept) {
        let ops = hunk.ops();
        let (first, last) = (ops.first()?, ops.last()?);
        let o = first.old_range().start..last.old_range().end;
        let n = first.new_range().start..last.new_range().end;
        // Lines between hunks are equal on both sides: take them from the old file.
        out.extend(olds.get(at..o.start)?.iter().copied());
        if *keep {
            out.extend(news.get(n)?.iter().copied());
        } else {
            out.extend(olds.get(o.clone())?.iter().copied());
        }
        at = o.end;
    }
    out.extend(olds.get(at..)?.iter().copied());
    Some(out)
}

/// A write's preview when the old file is too large to diff: every old line removed (read
/// from `old_file` a buffer at a time), every new line added. Returns an error if the old
/// file cannot be read as UTF-8 text.
pub fn replacement_diff(
    path: &str,
    old_file: std::fs::File,
    old_size: u64,
    new: &str,
) -> std::io::Result<BoundedDiff> {
    let mut reader = BufReader::with_capacity(64 * 1024, old_file);
    let mut sink = Sink::new(&header(path));
    // Both ranges are whole files; the header needs the old line count, which is known only
    // after the stream, so the header states the new side and the note the old.
    let new_lines = count_lines(new);
    sink.line(
        &format!("@@ whole file replaced (too large for a line diff): -all +1,{new_lines} @@"),
        "",
    );
    let mut removed = 0usize;
    let mut line = Vec::new();
    let mut line_chars = 0usize;
    let mut more_chars = 0usize;
    let mut pending = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        let len = chunk.len();
        let mut start = 0;
        while start < len {
            let rest = &chunk[start..];
            let nl = rest.iter().position(|&b| b == b'\n');
            let piece = &rest[..nl.unwrap_or(rest.len())];
            pending = true;
            keep_prefix(piece, &mut line, &mut line_chars, &mut more_chars);
            match nl {
                Some(i) => {
                    start += i + 1;
                    removed += 1;
                    emit_removed(&mut sink, &mut line, &mut line_chars, &mut more_chars)?;
                    pending = false;
                }
                None => start = len,
            }
        }
        reader.consume(len);
    }
    if pending {
        removed += 1;
        emit_removed(&mut sink, &mut line, &mut line_chars, &mut more_chars)?;
        sink.line("\\ No newline at end of file", "");
    }
    for l in new.split_inclusive('\n') {
        sink.line("+", l);
    }
    if !new.is_empty() && !new.ends_with('\n') {
        sink.line("\\ No newline at end of file", "");
    }
    Ok(sink.finish(new_lines, removed, (old_size, new.len() as u64)))
}

fn count_lines(s: &str) -> usize {
    s.split_inclusive('\n').count()
}

/// Keep at most [`DIFF_LINE_MAX_CHARS`] characters of a streamed line; count the rest.
fn keep_prefix(piece: &[u8], line: &mut Vec<u8>, chars: &mut usize, more: &mut usize) {
    let starts = |b: &u8| b & 0xC0 != 0x80;
    let mut cut = piece.len();
    if *more == 0 {
        for (i, b) in piece.iter().enumerate() {
            if starts(b) {
                if *chars == DIFF_LINE_MAX_CHARS {
                    cut = i;
                    break;
                }
                *chars += 1;
            }
        }
        line.extend_from_slice(&piece[..cut]);
    } else {
        cut = 0;
    }
    *more += piece[cut..].iter().filter(|b| starts(b)).count();
}

fn emit_removed(
    sink: &mut Sink,
    line: &mut Vec<u8>,
    chars: &mut usize,
    more: &mut usize,
) -> std::io::Result<()> {
    let text = std::str::from_utf8(line).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not UTF-8 text; the file tools only edit text",
        )
    })?;
    let text = text.strip_suffix('\r').unwrap_or(text);
    if *more > 0 {
        sink.line("-", &format!("{text}… (line truncated, {more} more chars)"));
    } else {
        sink.line("-", text);
    }
    line.clear();
    *chars = 0;
    *more = 0;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_hunks_apply_alone_and_their_diff_is_those_hunks() {
        let old: String = (0..30).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 15\n", "line fifteen\n")
            .replace("line 28\n", "line twenty-eight\n");
        let full = bounded_diff("x", &old, &new).text;
        let hunks = crate::protocol::parts::diff_hunks(&full);
        assert_eq!(hunks.len(), 3);
        let mid = with_kept_hunks(&old, &new, &[false, true, false]).unwrap();
        assert_eq!(mid, old.replace("line 15\n", "line fifteen\n"));
        let d = bounded_diff("x", &old, &mid).text;
        assert_eq!(
            crate::protocol::parts::diff_hunks(&d),
            vec![hunks[1].clone()]
        );
        assert_eq!(
            with_kept_hunks(&old, &new, &[true, true, true]).unwrap(),
            new
        );
        assert_eq!(with_kept_hunks(&old, &new, &[true]), None);
    }

    #[test]
    fn the_elision_note_is_what_parts_recognise() {
        assert!(crate::protocol::parts::is_elided(&elision_note(
            3,
            1,
            2,
            (10, 20)
        )));
    }

    #[test]
    fn small_diffs_match_the_plain_unified_diff() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nC\nd\ne\nf\ng\nh\ni";
        let plain = similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header("a/x.md", "b/x.md")
            .to_string();
        let d = bounded_diff("x.md", old, new);
        assert_eq!(d.text, plain);
        assert_eq!((d.added, d.removed, d.elided_lines), (2, 1, 0));
        assert_eq!(bounded_diff("x.md", old, old).text, "");
    }

    #[test]
    fn huge_diffs_are_elided_in_the_middle_with_their_extent() {
        let old: String = (0..100_000).map(|i| format!("old line {i}\n")).collect();
        let new = format!("{}\n", "y".repeat(1_000_000));
        let d = bounded_diff("big.md", &old, &new);
        assert!(
            d.text.len() <= PREVIEW_DIFF_MAX_BYTES + 1024,
            "{}",
            d.text.len()
        );
        assert_eq!((d.added, d.removed), (1, 100_000));
        assert!(d.elided_lines > 0);
        assert!(
            d.text.contains(&format!(
                "lines elided (the whole change: +1 -100000 lines, {} → {} bytes)",
                old.len(),
                new.len()
            )),
            "{}",
            &d.text[..300]
        );
        assert!(d.text.contains("(line truncated, 998000 more chars)"));
        assert!(d.text.starts_with("--- a/big.md\n+++ b/big.md\n@@ "));
    }

    #[test]
    fn a_replacement_streams_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("old.md");
        let old: String = (0..50_000).map(|i| format!("line {i}\r\n")).collect();
        std::fs::write(&p, &old).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        let d = replacement_diff("old.md", f, old.len() as u64, "new\n").unwrap();
        assert_eq!((d.added, d.removed), (1, 50_000));
        assert!(
            d.text.contains("-line 0\n") && d.text.ends_with("+new\n"),
            "{}",
            &d.text[..200]
        );
        assert!(d.text.len() <= PREVIEW_DIFF_MAX_BYTES + 1024);
        assert!(d.elided_lines > 0);
    }
}
