//! The prose diff model: a unified diff parsed once into lines with line numbers, each
//! removed line paired with the added line it became (in order, within a group of changed
//! lines), and inside each pair the words that changed — or, in CJK text, the characters.
//! Also the summary a file's diff opens with ("3 paragraphs, 41 words changed"). Built once
//! per waiting call (`approvals::diffs`), so scrolling and redrawing never diff again; the
//! rows are drawn from it by `widgets::diff`.

use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp};

/// What a diff line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    Context,
    Removed,
    Added,
    /// `⋮` between hunks.
    Gap,
}

/// One line of the diff: its number (old for removed lines, new otherwise), its text without
/// the sign, the byte ranges that changed inside it (only for a line paired with another),
/// and the line it pairs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: LineKind,
    pub num: usize,
    pub text: String,
    pub changed: Vec<Range<usize>>,
    pub pair: Option<usize>,
    /// The `@@` hunk the line belongs to (0-based; a `⋮` gap starts the next hunk).
    pub hunk: usize,
}

/// A parsed, word-diffed unified diff.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProseDiff {
    pub lines: Vec<DiffLine>,
    /// Columns of the widest line number.
    pub num_width: usize,
    /// Groups of changed lines (a novel's paragraphs are its lines).
    pub paragraphs: usize,
    /// Words (CJK: characters) removed or added; a replaced word counts once.
    pub words: usize,
    /// The hunk being parsed (the last line's hunk once parsed).
    hunk: usize,
}

/// The longest one pair of lines may take to diff word by word; past it `similar` returns a
/// coarser (still correct) diff, so one pathological paragraph cannot stall the screen.
const PAIR_DEADLINE: Duration = Duration::from_millis(20);

/// Parse "@@ -a,b +c,d @@" into (old start, new start, old length, new length).
pub fn hunk_starts(line: &str) -> Option<(usize, usize, usize, usize)> {
    let mut parts = line.split_whitespace().skip(1);
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let num = |s: &str| s.split(',').next().and_then(|n| n.parse::<usize>().ok());
    let len = |s: &str| {
        s.split(',')
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(1)
    };
    Some((num(old)?, num(new)?, len(old), len(new)))
}

/// True for characters diffed one by one: Han, kana, CJK punctuation and full-width forms
/// (CJK prose has no spaces between words, so a "word" would be the whole sentence).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x2FFF       // radicals, Kangxi
        | 0x3000..=0x30FF     // CJK punctuation, hiragana, katakana
        | 0x3100..=0x31FF     // bopomofo, kana extensions
        | 0x3400..=0x4DBF     // Han extension A
        | 0x4E00..=0x9FFF     // Han
        | 0xF900..=0xFAFF     // compatibility ideographs
        | 0xFF00..=0xFFEF     // full-width forms
        | 0x20000..=0x3134F) // Han extensions B–G
}

/// Split prose into tokens: runs of letters and digits (a word, with inner apostrophes),
/// runs of spaces, and single characters for CJK and punctuation. Byte ranges into `s`.
pub fn tokens(s: &str) -> Vec<Range<usize>> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Space,
        Single,
    }
    let class = |c: char| {
        if is_cjk(c) {
            Class::Single
        } else if c.is_alphanumeric() || c == '_' {
            Class::Word
        } else if c.is_whitespace() {
            Class::Space
        } else {
            Class::Single
        }
    };
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut iter = s.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let k = class(c);
        let mut end = i + c.len_utf8();
        if k != Class::Single {
            while let Some(&(j, d)) = iter.peek() {
                let apostrophe = k == Class::Word
                    && (d == '\'' || d == '’')
                    && s[j + d.len_utf8()..]
                        .chars()
                        .next()
                        .is_some_and(|n| class(n) == Class::Word);
                if class(d) == k || apostrophe {
                    end = j + d.len_utf8();
                    iter.next();
                } else {
                    break;
                }
            }
        }
        out.push(i..end);
    }
    out
}

/// Whether a token counts as a word in the summary (spaces and punctuation do not).
fn is_word(tok: &str) -> bool {
    tok.chars().any(|c| c.is_alphanumeric())
}

/// Join adjacent token ranges into spans.
fn push_range(out: &mut Vec<Range<usize>>, r: Range<usize>) {
    if r.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(last) if last.end == r.start => last.end = r.end,
        _ => out.push(r),
    }
}

/// The changed byte ranges of `old` and `new`, and how many words changed.
pub fn word_changes(old: &str, new: &str) -> (Vec<Range<usize>>, Vec<Range<usize>>, usize) {
    let ot = tokens(old);
    let nt = tokens(new);
    let os: Vec<&str> = ot.iter().map(|r| &old[r.clone()]).collect();
    let ns: Vec<&str> = nt.iter().map(|r| &new[r.clone()]).collect();
    let ops = similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        &os,
        &ns,
        Some(Instant::now() + PAIR_DEADLINE),
    );
    let (mut del, mut ins, mut words) = (Vec::new(), Vec::new(), 0);
    let span = |toks: &[Range<usize>], start: usize, len: usize| -> Range<usize> {
        match (toks.get(start), toks.get(start + len.max(1) - 1)) {
            (Some(a), Some(b)) if len > 0 => a.start..b.end,
            _ => 0..0,
        }
    };
    let count = |strs: &[&str], start: usize, len: usize| {
        strs[start..start + len]
            .iter()
            .filter(|t| is_word(t))
            .count()
    };
    for op in ops {
        match op {
            DiffOp::Equal { .. } => {}
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                push_range(&mut del, span(&ot, old_index, old_len));
                words += count(&os, old_index, old_len);
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                push_range(&mut ins, span(&nt, new_index, new_len));
                words += count(&ns, new_index, new_len);
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                push_range(&mut del, span(&ot, old_index, old_len));
                push_range(&mut ins, span(&nt, new_index, new_len));
                words += count(&os, old_index, old_len).max(count(&ns, new_index, new_len));
            }
        }
    }
    (del, ins, words)
}

impl ProseDiff {
    /// Parse a unified diff (`---`/`+++` headers skipped) and diff each changed pair of lines
    /// word by word. Malformed hunk headers keep the previous numbering: the text still shows.
    pub fn parse(diff: &str) -> ProseDiff {
        let mut pd = ProseDiff::default();
        let (mut old, mut new) = (0usize, 0usize);
        let mut widest = 1usize;
        let mut hunks: usize = 0;
        // The changed lines of the group being read: removed and added line indices.
        let mut removed: Vec<usize> = Vec::new();
        let mut added: Vec<usize> = Vec::new();
        for l in diff.lines() {
            // File headers come before the first hunk only: inside one, `----` is a removed
            // `---` (front matter) and `+++ x` an added `++ x`.
            let header = hunks == 0 && (l.starts_with("---") || l.starts_with("+++"));
            if header || l.starts_with('\\') {
                continue;
            }
            let kind = if l.starts_with("@@") {
                LineKind::Gap
            } else if l.starts_with('+') {
                LineKind::Added
            } else if l.starts_with('-') {
                LineKind::Removed
            } else {
                LineKind::Context
            };
            if matches!(kind, LineKind::Gap | LineKind::Context) {
                pd.close_group(&mut removed, &mut added);
            }
            if kind == LineKind::Gap {
                if let Some((o, n, ol, nl)) = hunk_starts(l) {
                    old = o;
                    new = n;
                    widest = widest.max(o + ol).max(n + nl);
                }
                hunks += 1;
                pd.hunk = hunks.saturating_sub(1);
                if hunks > 1 {
                    pd.push(LineKind::Gap, 0, String::new());
                }
                continue;
            }
            let text = l.get(1..).unwrap_or("").to_string();
            let num = match kind {
                LineKind::Added => {
                    new += 1;
                    new - 1
                }
                LineKind::Removed => {
                    old += 1;
                    old - 1
                }
                _ => {
                    old += 1;
                    new += 1;
                    new - 1
                }
            };
            widest = widest.max(num);
            match kind {
                LineKind::Removed => removed.push(pd.lines.len()),
                LineKind::Added => added.push(pd.lines.len()),
                _ => {}
            }
            pd.push(kind, num, text);
        }
        pd.close_group(&mut removed, &mut added);
        pd.num_width = widest.to_string().len();
        pd
    }

    fn push(&mut self, kind: LineKind, num: usize, text: String) {
        self.lines.push(DiffLine {
            kind,
            num,
            text,
            changed: Vec::new(),
            pair: None,
            hunk: self.hunk,
        });
    }

    /// End a group of changed lines: pair them in order, diff each pair, count the group.
    fn close_group(&mut self, removed: &mut Vec<usize>, added: &mut Vec<usize>) {
        if removed.is_empty() && added.is_empty() {
            return;
        }
        self.paragraphs += 1;
        for (&r, &a) in removed.iter().zip(added.iter()) {
            let (del, ins, words) = word_changes(&self.lines[r].text, &self.lines[a].text);
            self.lines[r].changed = del;
            self.lines[r].pair = Some(a);
            self.lines[a].changed = ins;
            self.lines[a].pair = Some(r);
            self.words += words;
        }
        let paired = removed.len().min(added.len());
        for &i in removed.iter().skip(paired).chain(added.iter().skip(paired)) {
            let line = &self.lines[i];
            self.words += tokens(&line.text)
                .into_iter()
                .filter(|t| is_word(&line.text[t.clone()]))
                .count();
        }
        removed.clear();
        added.clear();
    }

    /// "3 paragraphs, 41 words changed".
    pub fn summary(&self) -> String {
        let p = if self.paragraphs == 1 { "" } else { "s" };
        let w = if self.words == 1 { "" } else { "s" };
        format!(
            "{} paragraph{p}, {} word{w} changed",
            self.paragraphs, self.words
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(s: &str, rs: &[Range<usize>]) -> Vec<String> {
        rs.iter().map(|r| s[r.clone()].to_string()).collect()
    }

    #[test]
    fn tokens_split_words_spaces_punctuation_and_cjk() {
        let s = "Mira's boat, 港口很安静。";
        let t: Vec<&str> = tokens(s).into_iter().map(|r| &s[r]).collect();
        assert_eq!(
            t,
            ["Mira's", " ", "boat", ",", " ", "港", "口", "很", "安", "静", "。"]
        );
    }

    #[test]
    fn one_word_change_marks_only_that_word() {
        let (del, ins, words) = word_changes("The harbour was quiet.", "The harbour was still.");
        assert_eq!(pieces("The harbour was quiet.", &del), ["quiet"]);
        assert_eq!(pieces("The harbour was still.", &ins), ["still"]);
        assert_eq!(words, 1);
    }

    #[test]
    fn cjk_changes_are_characters() {
        let (old, new) = ("港口很安静。", "港口非常安静。");
        let (del, ins, words) = word_changes(old, new);
        assert_eq!(pieces(old, &del), ["很"]);
        assert_eq!(pieces(new, &ins), ["非常"]);
        assert_eq!(words, 2);
    }

    #[test]
    fn parse_pairs_lines_and_counts() {
        let pd = ProseDiff::parse(
            "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n ctx\n-old one\n+new one\n@@ -10 +10,2 @@\n-z\n+y\n+added words here\n",
        );
        assert_eq!(pd.paragraphs, 2);
        // "old"→"new" (1), "z"→"y" (1), "added words here" (3).
        assert_eq!(pd.words, 5);
        assert_eq!(pd.lines[1].pair, Some(2));
        assert_eq!(pd.lines[3].kind, LineKind::Gap);
        assert_eq!(pd.num_width, 2);
        assert_eq!(pd.summary(), "2 paragraphs, 5 words changed");
    }

    /// A deleted file that opens with front matter: its removed `---` line reads `----` and
    /// an added `++ note` line `+++ note`; inside a hunk those are content, not headers.
    #[test]
    fn removed_front_matter_and_plus_lines_inside_a_hunk_are_content() {
        let pd = ProseDiff::parse(
            "--- a/x.md\n+++ /dev/null\n@@ -1,3 +0,0 @@\n----\n-title: X\n----\n@@ -9 +6 @@\n+++ note\n",
        );
        let texts: Vec<(LineKind, &str)> = pd
            .lines
            .iter()
            .filter(|l| l.kind != LineKind::Gap)
            .map(|l| (l.kind, l.text.as_str()))
            .collect();
        assert_eq!(
            texts,
            vec![
                (LineKind::Removed, "---"),
                (LineKind::Removed, "title: X"),
                (LineKind::Removed, "---"),
                (LineKind::Added, "++ note"),
            ]
        );
    }

    #[test]
    fn malformed_hunk_header_still_shows_the_lines() {
        let pd = ProseDiff::parse("@@ nonsense @@\n-a\n+b\n");
        assert_eq!(pd.lines.len(), 2);
        assert_eq!(pd.words, 1);
    }
}
