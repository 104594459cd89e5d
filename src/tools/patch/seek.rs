//! `seek_sequence`: find a run of lines in a file with Codex's four fuzz levels.
//!
//! Levels, tried in order over every candidate position (the first match wins):
//! 0. exact equality; 1. equal after `trim_end()`; 2. equal after `trim()`;
//! 3. equal after `trim()` and mapping typographic Unicode punctuation to ASCII
//!    (dashes to `-`, single quotes to `'`, double quotes to `"`, odd spaces to ` `).

/// Index of the first position at or after `start` where `pattern` matches `lines`.
///
/// An empty pattern matches at `start`; a pattern longer than the file never matches. With
/// `eof`, only the tail position (`lines.len() - pattern.len()`) is tried, as Codex does. Unlike
/// Codex we also require that tail to be at or after `start`, so two chunks can never claim
/// overlapping lines.
pub(crate) fn seek_sequence(
    lines: &[String],
    pattern: &[String],
    start: usize,
    eof: bool,
) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    let first = if eof { last } else { start };
    if first < start || first > last {
        return None;
    }
    let levels: [fn(&str, &str) -> bool; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| normalised(a).eq(normalised(b)),
    ];
    levels.iter().find_map(|same| {
        (first..=last).find(|&i| {
            lines[i..]
                .iter()
                .zip(pattern)
                .all(|(line, pat)| same(line, pat))
        })
    })
}

/// The characters of `s` after `trim()` with typographic punctuation mapped to ASCII.
fn normalised(s: &str) -> impl Iterator<Item = char> + '_ {
    s.trim().chars().map(|c| match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{2018}'..='\u{201B}' => '\'',
        '\u{201C}'..='\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::seek_sequence;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn exact_match_finds_first_position_from_start() {
        let lines = v(&["a", "b", "a", "b"]);
        assert_eq!(seek_sequence(&lines, &v(&["a", "b"]), 0, false), Some(0));
        assert_eq!(seek_sequence(&lines, &v(&["a", "b"]), 1, false), Some(2));
        assert_eq!(seek_sequence(&lines, &v(&["a", "b"]), 3, false), None);
    }

    #[test]
    fn exact_level_beats_fuzzy_match_earlier_in_file() {
        // Level 0 is tried over every position before level 1 is tried at all.
        let lines = v(&["x  ", "x"]);
        assert_eq!(seek_sequence(&lines, &v(&["x"]), 0, false), Some(1));
    }

    #[test]
    fn level1_ignores_trailing_whitespace() {
        let lines = v(&["foo   ", "bar\t"]);
        assert_eq!(
            seek_sequence(&lines, &v(&["foo", "bar"]), 0, false),
            Some(0)
        );
        // Leading whitespace is not ignored at this level, but level 2 catches it.
        let lines = v(&["  foo"]);
        assert_eq!(seek_sequence(&lines, &v(&["foo"]), 0, false), Some(0));
    }

    #[test]
    fn level2_ignores_surrounding_whitespace() {
        let lines = v(&["    fn main() {", "\tlet x = 1;"]);
        let pattern = v(&["fn main() {", "  let x = 1;  "]);
        assert_eq!(seek_sequence(&lines, &pattern, 0, false), Some(0));
    }

    #[test]
    fn level3_normalises_unicode_punctuation() {
        let lines = v(&[
            "let s = \u{201C}hi\u{201D}; // it\u{2019}s",
            "a \u{2013} b \u{2212} c",
            "x\u{00A0}=\u{3000}1",
        ]);
        let pattern = v(&["let s = \"hi\"; // it's", "a - b - c", "x = 1"]);
        assert_eq!(seek_sequence(&lines, &pattern, 0, false), Some(0));
        // The mapping goes both ways: an ASCII file matches a typographic pattern.
        let ascii = v(&["say \"yes\" -- now"]);
        let fancy = v(&["say \u{201E}yes\u{201F} \u{2014}\u{2014} now"]);
        assert_eq!(seek_sequence(&ascii, &fancy, 0, false), Some(0));
    }

    #[test]
    fn level3_does_not_match_different_text() {
        let lines = v(&["a \u{2013} b"]);
        assert_eq!(seek_sequence(&lines, &v(&["a + b"]), 0, false), None);
        assert_eq!(seek_sequence(&lines, &v(&["a \u{2013} c"]), 0, false), None);
    }

    #[test]
    fn empty_pattern_matches_at_start_and_long_pattern_never() {
        let lines = v(&["a"]);
        assert_eq!(seek_sequence(&lines, &[], 1, false), Some(1));
        assert_eq!(seek_sequence(&lines, &v(&["a", "a"]), 0, false), None);
        assert_eq!(seek_sequence(&[], &v(&["a"]), 0, false), None);
    }

    #[test]
    fn eof_only_tries_the_tail() {
        let lines = v(&["end", "mid", "end"]);
        assert_eq!(seek_sequence(&lines, &v(&["end"]), 0, true), Some(2));
        assert_eq!(seek_sequence(&lines, &v(&["end"]), 0, false), Some(0));
        // Present, but not at the end of the file.
        assert_eq!(seek_sequence(&lines, &v(&["mid"]), 0, true), None);
        // Fuzz levels still apply at the tail.
        assert_eq!(seek_sequence(&lines, &v(&[" end "]), 0, true), Some(2));
        // The tail must not lie before the cursor.
        assert_eq!(seek_sequence(&lines, &v(&["mid", "end"]), 2, true), None);
    }

    #[test]
    fn start_past_end_is_none_not_panic() {
        let lines = v(&["a", "b"]);
        assert_eq!(seek_sequence(&lines, &v(&["b"]), 10, false), None);
    }
}
