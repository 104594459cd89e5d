//! Text that reaches the terminal. Names, titles, paths and messages can hold characters a
//! terminal interprets instead of showing: C0/C1 controls (ESC starts escape sequences, BEL
//! rings) and the Unicode bidi overrides and isolates, which reorder what follows so two
//! different names look alike. File names may also not be UTF-8 at all. This module owns
//! the one rule for all of them: such characters are shown as visible escapes (`\x1b`,
//! `\u{202e}`, invalid bytes as `\xff`), never written raw, and agents may not create paths
//! that contain them.
//!
//! Everything nbook prints that did not come from nbook itself goes through
//! [`escape_for_terminal`] (single-line labels), [`escape_message`] (multi-line text),
//! [`escape_os`] (file names that may not be UTF-8) or [`escape_json`] (JSON output).
//! Counts in sentences read right through [`count`] ("1 entry", "3 entries").

use std::borrow::Cow;
use std::ffi::OsStr;

/// Bidi formatting characters: embeddings and overrides (U+202A–U+202E), isolates
/// (U+2066–U+2069), and the marks LRM, RLM and ALM.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// A character that must not reach the terminal raw: C0 controls (except tab), DEL, C1
/// controls and bidi formatting characters. Newline counts: callers that print several
/// lines use [`escape_message`].
pub fn is_unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\t') || is_bidi_control(c)
}

/// The first character of `s` that [`is_unsafe_char`] refuses, with its name for messages.
pub fn first_unsafe_char(s: &str) -> Option<char> {
    s.chars().find(|&c| is_unsafe_char(c))
}

/// "U+202E (RIGHT-TO-LEFT OVERRIDE)": how an error names a refused character.
pub fn describe_char(c: char) -> String {
    let name = match c {
        '\u{1b}' => Some("ESCAPE"),
        '\u{07}' => Some("BELL"),
        '\u{08}' => Some("BACKSPACE"),
        '\n' => Some("LINE FEED"),
        '\r' => Some("CARRIAGE RETURN"),
        '\u{7f}' => Some("DELETE"),
        '\u{9b}' => Some("CONTROL SEQUENCE INTRODUCER"),
        '\u{202A}' => Some("LEFT-TO-RIGHT EMBEDDING"),
        '\u{202B}' => Some("RIGHT-TO-LEFT EMBEDDING"),
        '\u{202C}' => Some("POP DIRECTIONAL FORMATTING"),
        '\u{202D}' => Some("LEFT-TO-RIGHT OVERRIDE"),
        '\u{202E}' => Some("RIGHT-TO-LEFT OVERRIDE"),
        '\u{2066}' => Some("LEFT-TO-RIGHT ISOLATE"),
        '\u{2067}' => Some("RIGHT-TO-LEFT ISOLATE"),
        '\u{2068}' => Some("FIRST STRONG ISOLATE"),
        '\u{2069}' => Some("POP DIRECTIONAL ISOLATE"),
        '\u{200E}' => Some("LEFT-TO-RIGHT MARK"),
        '\u{200F}' => Some("RIGHT-TO-LEFT MARK"),
        '\u{061C}' => Some("ARABIC LETTER MARK"),
        _ => None,
    };
    match name {
        Some(n) => format!("U+{:04X} ({n})", c as u32),
        None if c.is_control() => format!("U+{:04X} (a control character)", c as u32),
        None => format!("U+{:04X}", c as u32),
    }
}

fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write as _;
    if (c as u32) < 0x80 {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    }
}

fn escape_with(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    let unsafe_here = |c: char| is_unsafe_char(c) && !(keep_newlines && c == '\n');
    if !s.chars().any(unsafe_here) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_here(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A single-line label (a name, title or path) safe to print: every unsafe character,
/// newline included, becomes a visible escape (`\x1b`, `\u{202e}`).
pub fn escape_for_terminal(s: &str) -> Cow<'_, str> {
    escape_with(s, false)
}

/// Multi-line text (an error message) safe to print: like [`escape_for_terminal`], but
/// newlines stay line breaks.
pub fn escape_message(s: &str) -> Cow<'_, str> {
    escape_with(s, true)
}

/// A file name or path that may not be UTF-8, shown unambiguously: invalid bytes as `\xNN`,
/// unsafe characters escaped as in [`escape_for_terminal`]. Two different byte strings give
/// two different texts (unless a name literally spells an escape).
pub fn escape_os(name: &OsStr) -> Cow<'_, str> {
    if let Some(s) = name.to_str() {
        return escape_for_terminal(s);
    }
    Cow::Owned(escape_bytes(name.as_encoded_bytes()))
}

/// [`escape_os`] for raw bytes.
pub fn escape_bytes(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(&escape_for_terminal(chunk.valid()));
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// JSON text safe for a terminal with the same meaning: serde_json already escapes C0
/// controls inside strings, but writes DEL, C1 controls and bidi characters raw; those
/// become `\uXXXX` escapes (valid JSON, the same value once parsed).
pub fn escape_json(json: &str) -> Cow<'_, str> {
    use std::fmt::Write as _;
    if !json.chars().any(is_unsafe_char) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        // Newlines and tabs outside strings are JSON whitespace (pretty printing); inside
        // strings serde_json has already escaped them.
        if is_unsafe_char(c) && c != '\n' {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A name that holds a control or text-direction character; `name` is shown escaped and
/// `char` described (code point and Unicode name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the name '{name}' contains {char}, a control or text-direction character that would make it display as something else; choose a name without it")]
pub struct UnsafeName {
    pub name: String,
    pub char: String,
}

/// Refuse a path segment an agent wants to create when it holds an unsafe character:
/// the error names the character and says what to do instead.
pub fn check_new_name(name: &str) -> Result<(), UnsafeName> {
    match first_unsafe_char(name) {
        Some(c) => Err(UnsafeName {
            name: escape_for_terminal(name).into_owned(),
            char: describe_char(c),
        }),
        None => Ok(()),
    }
}

/// `n` with its noun in the right number: `count(1, "entry", "entries")` is `1 entry`,
/// `count(3, "entry", "entries")` is `3 entries` (and so is 0). Every count nbook shows in a
/// sentence goes through here, so none reads "1 entries".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", noun(n, one, many))
}

/// The noun for `n` things (for counts shown some other way, e.g. with thousands separators).
pub fn noun<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_in_the_right_number() {
        assert_eq!(count(1, "entry", "entries"), "1 entry");
        assert_eq!(count(0, "entry", "entries"), "0 entries");
        assert_eq!(count(2, "slice", "slices"), "2 slices");
    }

    #[test]
    fn controls_and_bidi_become_visible() {
        assert_eq!(escape_for_terminal("plain — ok\tx"), "plain — ok\tx");
        assert_eq!(escape_for_terminal("a\u{1b}[31mb\u{7}"), "a\\x1b[31mb\\x07");
        assert_eq!(escape_for_terminal("txt.\u{202e}exe"), "txt.\\u{202e}exe");
        assert_eq!(
            escape_for_terminal("x\u{9b}y\u{2066}"),
            "x\\u{9b}y\\u{2066}"
        );
        assert_eq!(escape_for_terminal("two\nlines"), "two\\x0alines");
        assert_eq!(escape_message("two\nlines\u{1b}"), "two\nlines\\x1b");
    }

    #[test]
    fn non_utf8_names_are_distinct() {
        use std::os::unix::ffi::OsStrExt;
        let a = escape_os(OsStr::from_bytes(b"bad\xff"));
        let b = escape_os(OsStr::from_bytes(b"bad\xfe"));
        assert_eq!(a, "bad\\xff");
        assert_eq!(b, "bad\\xfe");
        assert_eq!(
            escape_os(OsStr::from_bytes("é\u{202e}".as_bytes())),
            "é\\u{202e}"
        );
    }

    #[test]
    fn json_keeps_its_meaning() {
        let v = serde_json::json!({"title": "a\u{202e}b\u{1b}c\u{85}"});
        let text = serde_json::to_string_pretty(&v).unwrap();
        let safe = escape_json(&text);
        assert!(
            !safe.chars().any(|c| is_unsafe_char(c) && c != '\n'),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn new_names_name_the_refused_character() {
        assert!(check_new_name("chapter-1.md").is_ok());
        let e = check_new_name("evil\u{202e}dm.exe")
            .unwrap_err()
            .to_string();
        assert!(e.contains("U+202E (RIGHT-TO-LEFT OVERRIDE)"), "{e}");
        assert!(e.contains("evil\\u{202e}dm.exe"), "{e}");
        assert!(check_new_name("bell\u{7}")
            .unwrap_err()
            .to_string()
            .contains("U+0007 (BELL)"));
    }
}
