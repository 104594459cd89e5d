//! Format templates shared by the built-in calendars: literal text with `{token}` or
//! `{token:02}` placeholders (the number after the colon is the zero-padded width).
//!
//! Parsing walks the same template: literals must match (any run of whitespace matches any
//! run of whitespace), numeric tokens read digits — greedily when a literal or the end follows,
//! exactly `width` digits when another token follows directly — and the input may stop early
//! when every remaining token is optional (the time of day), which then counts as zero.

use std::collections::BTreeMap;

use super::{CalendarError, DefinitionError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Lit(String),
    Tok { name: String, width: usize },
}

/// How the calendar wants a token read.
#[derive(Clone, Debug)]
pub enum TokenKind {
    Number,
    /// One of these texts (era names, month names); the value is the index in the list.
    Names(Vec<String>),
}

/// Split a format into pieces. `known` tells which token names exist.
pub fn compile(format: &str, known: &dyn Fn(&str) -> bool) -> Result<Vec<Piece>, DefinitionError> {
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        lit.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or_else(|| DefinitionError::Unclosed {
            format: format.into(),
        })?;
        let inner = &after[..close];
        let (name, width) = match inner.split_once(':') {
            Some((n, w)) => {
                // `:02` pads to two digits, `:04` to four.
                let width: usize = Some(w)
                    .filter(|w| {
                        w.len() >= 2 && w.starts_with('0') && w.bytes().all(|b| b.is_ascii_digit())
                    })
                    .and_then(|w| w.parse().ok())
                    .filter(|n| (1..=20).contains(n))
                    .ok_or_else(|| DefinitionError::BadWidth {
                        format: format.into(),
                        inner: inner.into(),
                    })?;
                (n, width)
            }
            None => (inner, 0),
        };
        if !known(name) {
            return Err(DefinitionError::UnknownToken {
                format: format.into(),
                token: name.into(),
            });
        }
        if !lit.is_empty() {
            pieces.push(Piece::Lit(std::mem::take(&mut lit)));
        }
        pieces.push(Piece::Tok {
            name: name.to_string(),
            width,
        });
        rest = &after[close + 1..];
    }
    lit.push_str(rest);
    if !lit.is_empty() {
        pieces.push(Piece::Lit(lit));
    }
    Ok(pieces)
}

/// A token's value when formatting.
pub enum Val {
    Num(i128),
    Text(String),
}

pub fn render(pieces: &[Piece], value: &dyn Fn(&str) -> Val) -> String {
    let mut out = String::new();
    for p in pieces {
        match p {
            Piece::Lit(s) => out.push_str(s),
            Piece::Tok { name, width } => match value(name) {
                Val::Num(n) => {
                    if n < 0 {
                        out.push('-');
                    }
                    out.push_str(&format!("{:0width$}", n.unsigned_abs(), width = *width));
                }
                Val::Text(s) => out.push_str(&s),
            },
        }
    }
    out
}

/// Read `input` against the template. Returns token name → value (numbers as read, names as
/// their index). `optional` tokens may be missing at the end of the input. `example` is a
/// text in the calendar's form (a formatted instant): errors reach the author, who did not
/// write the template, so they name the parts in words and show the example, never the
/// template's placeholders.
pub fn read(
    pieces: &[Piece],
    input: &str,
    kind: &dyn Fn(&str) -> TokenKind,
    optional: &dyn Fn(&str) -> bool,
    example: &str,
) -> Result<BTreeMap<String, i128>, CalendarError> {
    let text = input.trim();
    let fail = |why: String| CalendarError::Unreadable {
        text: input.to_string(),
        why: format!("{why}; write it like {example:?}"),
    };
    let mut pos = 0usize;
    let mut out = BTreeMap::new();
    for (i, piece) in pieces.iter().enumerate() {
        let rest = &text[pos..];
        if rest.is_empty() {
            let all_optional = pieces[i..].iter().all(|p| match p {
                Piece::Lit(_) => true,
                Piece::Tok { name, .. } => optional(name) || out.contains_key(name),
            });
            if all_optional {
                return Ok(out);
            }
            return Err(fail("it ends too early".into()));
        }
        match piece {
            Piece::Lit(lit) => {
                pos += match_literal(lit, rest)
                    .ok_or_else(|| fail(format!("expected {:?} at {:?}", lit, shorten(rest))))?;
            }
            Piece::Tok { name, width } => match kind(name) {
                TokenKind::Number => {
                    let next_is_token = matches!(pieces.get(i + 1), Some(Piece::Tok { .. }));
                    let digits: usize = rest.bytes().take_while(|b| b.is_ascii_digit()).count();
                    let take = if next_is_token && *width > 0 {
                        digits.min(*width)
                    } else {
                        digits
                    };
                    if take == 0 {
                        return Err(fail(format!(
                            "expected a number for {} at {:?}",
                            part(name),
                            shorten(rest)
                        )));
                    }
                    if take > 30 {
                        return Err(fail(format!("the number for {} is too long", part(name))));
                    }
                    let n: i128 = rest[..take].parse().map_err(|_| {
                        fail(format!(
                            "{:?} is not a number for {}",
                            &rest[..take],
                            part(name)
                        ))
                    })?;
                    insert(&mut out, name, n).map_err(|e| fail(e.to_string()))?;
                    pos += take;
                }
                TokenKind::Names(names) => {
                    // Longest match first, so "BC " wins over "" and "Marchember" over "March".
                    let best = names
                        .iter()
                        .enumerate()
                        .filter(|(_, n)| rest.starts_with(n.as_str()))
                        .max_by_key(|(_, n)| n.len());
                    let Some((idx, n)) = best else {
                        return Err(fail(format!(
                            "expected {} for {} at {:?}",
                            one_of(&names),
                            part(name),
                            shorten(rest)
                        )));
                    };
                    insert(&mut out, name, idx as i128).map_err(|e| fail(e.to_string()))?;
                    pos += n.len();
                }
            },
        }
    }
    if pos < text.len() {
        return Err(fail(format!(
            "unexpected text {:?} at the end",
            shorten(&text[pos..])
        )));
    }
    Ok(out)
}

/// A token read twice from one text with two different values.
#[derive(Debug, thiserror::Error)]
#[error("{0} appears twice with different values")]
struct Conflict(String);

fn insert(out: &mut BTreeMap<String, i128>, name: &str, v: i128) -> Result<(), Conflict> {
    match out.insert(name.to_string(), v) {
        Some(old) if old != v => Err(Conflict(part(name))),
        _ => Ok(()),
    }
}

/// A token named for the author: "year" → "the year", "monthName" → "the month's name",
/// "era" → "the era".
fn part(token: &str) -> String {
    match token.strip_suffix("Name") {
        Some(unit) if !unit.is_empty() => format!("the {unit}'s name"),
        _ => format!("the {token}"),
    }
}

/// `"Frost", "Thaw" or "Seed"`; an empty name (an era written as nothing) reads "nothing".
fn one_of(names: &[String]) -> String {
    let shown: Vec<String> = names
        .iter()
        .map(|n| {
            if n.is_empty() {
                "nothing".to_string()
            } else {
                format!("{n:?}")
            }
        })
        .collect();
    match shown.split_last() {
        None => "a name".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// Length of `rest`'s prefix matching `lit`, where whitespace runs match whitespace runs.
fn match_literal(lit: &str, rest: &str) -> Option<usize> {
    let (mut li, mut ri) = (lit.char_indices().peekable(), 0usize);
    let rb = rest;
    while let Some((_, lc)) = li.next() {
        if lc.is_whitespace() {
            while li.peek().is_some_and(|(_, c)| c.is_whitespace()) {
                li.next();
            }
            let ws: usize = rb[ri..]
                .chars()
                .take_while(|c| c.is_whitespace())
                .map(char::len_utf8)
                .sum();
            if ws == 0 {
                return None;
            }
            ri += ws;
        } else {
            let rc = rb[ri..].chars().next()?;
            if rc != lc {
                return None;
            }
            ri += rc.len_utf8();
        }
    }
    Some(ri)
}

fn shorten(s: &str) -> String {
    s.chars().take(20).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_and_reads() {
        let p = compile(
            "{era}{year}-{month:02}-{day:02} {hour:02}:{minute:02}",
            &|_| true,
        )
        .unwrap();
        assert_eq!(p.len(), 10);
        assert!(compile("{year:2}", &|_| true).is_err());
        assert!(compile("{nope}", &|n| n != "nope").is_err());
        let kind = |n: &str| {
            if n == "era" {
                TokenKind::Names(vec!["".into(), "BC ".into()])
            } else {
                TokenKind::Number
            }
        };
        let opt = |n: &str| matches!(n, "hour" | "minute");
        let v = read(&p, " BC 44-03-15  12:30 ", &kind, &opt, "x").unwrap();
        assert_eq!((v["era"], v["year"], v["minute"]), (1, 44, 30));
        let v = read(&p, "2020-04-12", &kind, &opt, "x").unwrap();
        assert!(!v.contains_key("hour"));
        assert!(read(&p, "2020-04", &kind, &opt, "x").is_err());
        assert!(read(&p, "2020-04-12 10:00 extra", &kind, &opt, "x").is_err());
    }
}
