//! `fn_memory_search`: the memory files an agent may read cut into windows of 12 lines
//! stepping 8 (Fusion's windows), ranked by cosine similarity to the query with the configured
//! embedding service (the one `world.search.text` uses), or — when there is none, or it
//! fails — by how often the query's words occur (the text backend, which says why it was
//! used). The agent's own notes rank before the project's (Fusion adds 1000 to their term
//! count). Overlapping windows of one file are reported once (the better one).

use std::sync::Arc;

use serde::Serialize;

use super::vectors::Store;
use super::{MemoryPath, MemoryResult};
use crate::subject::vectors::{dot, normalised, Embedder};

pub const WINDOW: usize = 12;
pub const STEP: usize = 8;
pub const DEFAULT_LIMIT: usize = 5;
pub const MAX_LIMIT: usize = 20;
/// What an agent's own hit adds to its term count, so it ranks first (Fusion).
pub const AGENT_BOOST: f64 = 1000.0;
const SNIPPET_CHARS: usize = 300;

/// How a search ranked its hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Embedding,
    Text,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Embedding => "embedding",
            Backend::Text => "text",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub score: f64,
    pub backend: Backend,
    /// `agent` (the caller's own notes) or `project`.
    pub scope: &'static str,
    pub snippet: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    pub hits: Vec<Hit>,
    pub backend: Backend,
    /// Why the text backend was used (no service configured, or its error).
    pub fallback: Option<String>,
    pub windows: usize,
}

/// One window of a memory file.
pub struct Chunk<'a> {
    pub file: usize,
    pub start: usize,
    pub end: usize,
    pub text: &'a str,
}

fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' && i + 1 < text.len() {
            starts.push(i + 1);
        }
    }
    starts
}

/// Windows of `WINDOW` lines stepping `STEP` over every file, blank ones left out; 1-based
/// inclusive line numbers.
pub fn chunk_all(files: &[(MemoryPath, String)]) -> Vec<Chunk<'_>> {
    let mut out = Vec::new();
    for (fi, (_, text)) in files.iter().enumerate() {
        if text.is_empty() {
            continue;
        }
        let starts = line_starts(text);
        let n = starts.len();
        let mut s = 0;
        loop {
            let e = (s + WINDOW).min(n);
            let from = starts[s];
            let to = if e < n { starts[e] } else { text.len() };
            let body = text[from..to].trim_end();
            if !body.trim().is_empty() {
                out.push(Chunk {
                    file: fi,
                    start: s + 1,
                    end: e,
                    text: body,
                });
            }
            if e >= n {
                break;
            }
            s += STEP;
        }
    }
    out
}

/// The query's words: lower case, letters and digits (CJK characters count one each).
pub fn terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in query.chars().flat_map(char::to_lowercase) {
        if is_cjk(c) {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            cur.push(c);
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.sort();
    out.dedup();
    out
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF)
}

fn count(hay: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    hay.matches(needle).count()
}

/// Term-count scores (0 = no match), one per chunk.
pub fn text_scores(query: &str, chunks: &[Chunk<'_>]) -> Vec<f64> {
    let ts = terms(query);
    chunks
        .iter()
        .map(|c| {
            let lower = c.text.to_lowercase();
            ts.iter().map(|t| count(&lower, t)).sum::<usize>() as f64
        })
        .collect()
}

/// Cosine scores, one per chunk, with the embedder (vectors cached in `store`).
pub fn vector_scores(
    emb: &dyn Embedder,
    store: &Store,
    query: &str,
    chunks: &[Chunk<'_>],
) -> Result<Vec<f64>, super::vectors::VectorError> {
    let texts: Vec<&str> = chunks.iter().map(|c| c.text).collect();
    let vecs: Vec<Arc<Vec<f32>>> = store.vectors(emb, &texts)?;
    let q = emb.embed(&[query.to_string()])?;
    let q = q
        .into_iter()
        .next()
        .ok_or(super::vectors::VectorError::Count { got: 0, sent: 1 })?;
    let q = normalised(&q);
    if let Some(v) = vecs.first() {
        if v.len() != q.len() {
            return Err(super::vectors::VectorError::Dims {
                got: q.len(),
                want: v.len(),
            });
        }
    }
    Ok(vecs.iter().map(|v| dot(&q, v) as f64).collect())
}

fn snippet(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    crate::board::snippet(&lines.join(" · "), SNIPPET_CHARS)
}

/// Rank: the caller's own notes first, then by score; a window overlapping a better one of
/// the same file is dropped; text hits need a score above 0.
pub fn rank(
    files: &[(MemoryPath, String)],
    chunks: &[Chunk<'_>],
    scores: &[f64],
    backend: Backend,
    limit: usize,
) -> Vec<Hit> {
    let mut order: Vec<usize> = (0..chunks.len())
        .filter(|&i| backend == Backend::Embedding || scores[i] > 0.0)
        .collect();
    let agent = |i: usize| files[chunks[i].file].0.is_agent();
    let key = |i: usize| {
        let boost = if backend == Backend::Text && agent(i) {
            AGENT_BOOST
        } else {
            0.0
        };
        (agent(i), scores[i] + boost)
    };
    order.sort_by(|&a, &b| {
        let (ka, kb) = (key(a), key(b));
        kb.0.cmp(&ka.0)
            .then(kb.1.partial_cmp(&ka.1).unwrap_or(std::cmp::Ordering::Equal))
            .then(a.cmp(&b))
    });
    let mut taken: Vec<usize> = Vec::new();
    for i in order {
        if taken.len() >= limit {
            break;
        }
        let c = &chunks[i];
        let overlaps = taken.iter().any(|&j| {
            let d = &chunks[j];
            d.file == c.file && d.start <= c.end && c.start <= d.end
        });
        if !overlaps {
            taken.push(i);
        }
    }
    taken
        .into_iter()
        .map(|i| {
            let c = &chunks[i];
            let (p, _) = &files[c.file];
            Hit {
                path: p.rel(),
                start_line: c.start,
                end_line: c.end,
                score: key(i).1,
                backend,
                scope: if p.is_agent() { "agent" } else { "project" },
                snippet: snippet(c.text),
            }
        })
        .collect()
}

/// Search `files` (what the caller may read). `emb`: the configured embedding service, or
/// why there is none.
pub fn search(
    files: &[(MemoryPath, String)],
    query: &str,
    limit: usize,
    emb: Result<(&dyn Embedder, &Store), String>,
) -> MemoryResult<Found> {
    let limit = limit.clamp(1, MAX_LIMIT);
    let chunks = chunk_all(files);
    let (backend, scores, fallback) = match emb {
        Ok((e, store)) if !chunks.is_empty() => match vector_scores(e, store, query, &chunks) {
            Ok(s) => (Backend::Embedding, s, None),
            Err(err) => (
                Backend::Text,
                text_scores(query, &chunks),
                Some(format!("the embedding service failed ({err})")),
            ),
        },
        Ok(_) => (Backend::Embedding, Vec::new(), None),
        Err(why) => (Backend::Text, text_scores(query, &chunks), Some(why)),
    };
    let hits = rank(files, &chunks, &scores, backend, limit);
    Ok(Found {
        hits,
        backend,
        fallback,
        windows: chunks.len(),
    })
}

/// The result text: `N. path:a-b (score, backend)` and the snippet, or `NONE`; a fallback
/// to text search is said first.
pub fn render(found: &Found) -> String {
    let mut out = String::new();
    if let Some(why) = &found.fallback {
        out.push_str(&format!("(text search: {why})\n"));
    }
    if found.hits.is_empty() {
        out.push_str("NONE");
        return out;
    }
    for (n, h) in found.hits.iter().enumerate() {
        let score = match h.backend {
            Backend::Embedding => format!("{:.3}", h.score),
            Backend::Text => format!("{}", h.score),
        };
        out.push_str(&format!(
            "{}. {}:{}-{} ({}, {})\n   {}\n",
            n + 1,
            h.path,
            h.start_line,
            h.end_line,
            score,
            h.backend.as_str(),
            h.snippet
        ));
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(owner: Option<&str>, name: &str, text: &str) -> (MemoryPath, String) {
        (
            MemoryPath {
                owner: owner.map(String::from),
                file: name.into(),
            },
            text.into(),
        )
    }

    #[test]
    fn windows_are_twelve_lines_stepping_eight() {
        let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let files = vec![file(None, "MEMORY.md", &text)];
        let c = chunk_all(&files);
        let spans: Vec<(usize, usize)> = c.iter().map(|c| (c.start, c.end)).collect();
        assert_eq!(spans, vec![(1, 12), (9, 20)]);
        assert!(c[1].text.ends_with("line 20"));
    }

    #[test]
    fn agent_hits_rank_first_and_text_needs_a_match() {
        let files = vec![
            file(None, "MEMORY.md", "salt salt salt roads\n"),
            file(Some("a1"), "MEMORY.md", "salt once\n"),
            file(None, "2026-01-01.md", "nothing here\n"),
        ];
        let f = search(&files, "Salt", 5, Err("none configured".into())).unwrap();
        assert_eq!(f.backend, Backend::Text);
        assert_eq!(f.hits.len(), 2);
        assert_eq!(f.hits[0].path, ".nbook/agent-memory/a1/MEMORY.md");
        assert_eq!(f.hits[0].score, 1001.0);
        assert_eq!(f.hits[1].score, 3.0);
        let r = render(&f);
        assert!(r.starts_with("(text search: none configured)\n1. .nbook/agent-memory/a1/MEMORY.md:1-1 (1001, text)"), "{r}");
        let none = search(&files, "zebra", 5, Err("x".into())).unwrap();
        assert!(render(&none).ends_with("NONE"));
    }
}
