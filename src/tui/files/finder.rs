//! Fuzzy matching with nucleo for the file finder (all project paths, matched off the UI task),
//! the command palette (a few dozen commands, matched inline) and the World pane's subject
//! finder (the listed subjects' names, matched inline). Results carry the matched
//! character positions so the view can highlight them.

use nucleo::pattern::{CaseMatching, Normalization, Pattern};
use nucleo::{Config, Matcher, Utf32Str};

/// Most matches the finder keeps (sorted best first).
pub const FINDER_LIMIT: usize = 500;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinderMatch {
    pub text: String,
    /// Character indices of the matched characters, sorted.
    pub indices: Vec<u32>,
    pub score: u32,
}

/// Match `query` against `items`; an empty query keeps the first `limit` items in order.
/// Ties keep the input order, so results are deterministic.
pub fn fuzzy_match<'a>(
    query: &str,
    items: impl IntoIterator<Item = &'a str>,
    paths: bool,
    limit: usize,
) -> Vec<FinderMatch> {
    fuzzy_match_indexed(query, items, paths, limit)
        .into_iter()
        .map(|(_, m)| m)
        .collect()
}

/// [`fuzzy_match`], each match with the position of its item in `items` (so items with the
/// same text, two subjects with one name, stay apart).
pub fn fuzzy_match_indexed<'a>(
    query: &str,
    items: impl IntoIterator<Item = &'a str>,
    paths: bool,
    limit: usize,
) -> Vec<(usize, FinderMatch)> {
    let query = query.trim();
    if query.is_empty() {
        return items
            .into_iter()
            .take(limit)
            .enumerate()
            .map(|(i, t)| {
                (
                    i,
                    FinderMatch {
                        text: t.to_string(),
                        indices: Vec::new(),
                        score: 0,
                    },
                )
            })
            .collect();
    }
    let config = if paths {
        Config::DEFAULT.match_paths()
    } else {
        Config::DEFAULT
    };
    let mut matcher = Matcher::new(config);
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut buf = Vec::new();
    let mut scored: Vec<(u32, usize, &str)> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if let Some(score) = pattern.score(Utf32Str::new(item, &mut buf), &mut matcher) {
            scored.push((score, i, item));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(limit);
    scored
        .into_iter()
        .map(|(score, i, item)| {
            let mut indices = Vec::new();
            pattern.indices(Utf32Str::new(item, &mut buf), &mut matcher, &mut indices);
            indices.sort_unstable();
            indices.dedup();
            (
                i,
                FinderMatch {
                    text: item.to_string(),
                    indices,
                    score,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_match_first_with_indices() {
        let items = [
            "manuscript/001/index.md",
            "lorebook/character/mira.md",
            "README.md",
        ];
        let m = fuzzy_match("mira", items.iter().copied(), true, 10);
        assert_eq!(m[0].text, "lorebook/character/mira.md");
        assert_eq!(m[0].indices.len(), 4);
        assert_eq!(fuzzy_match("", items.iter().copied(), true, 2).len(), 2);
        assert!(fuzzy_match("zzzz", items.iter().copied(), true, 10).is_empty());
    }
}
