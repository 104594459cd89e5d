//! `world.search.text`: cosine top-k over the EmbeddingText items live at an instant (every
//! item of an embedding list, the latest value of each key of an embedding record), with the
//! query and any item without a stored vector of the configured model embedded by the
//! embedding client ([`crate::net::embed`], config `[embedding]` + `[providers.X]`).
//! Without a configured service the search fails with a clear message — there is no keyword
//! fallback, by design.

use std::time::Duration;

use serde_json::{json, Value};

use super::store::WorldStore;
use super::WorldError;
use crate::net::embed::EmbedConfig;

/// Options of `world.search.text`.
#[derive(Clone, Debug, Default)]
pub struct SearchOptions {
    pub k: usize,
    pub threshold: Option<f32>,
    pub types: Vec<String>,
    pub attrs: Vec<String>,
    pub at: i64,
}

/// Most items embedded for one search; past it the search asks for narrower filters.
pub const MAX_ITEMS: usize = 5000;

struct Item {
    subject_id: String,
    attr: String,
    text: String,
    vector: Option<Vec<f32>>,
}

/// Search the live EmbeddingText items at `opts.at`: `[{subjectId, attr, text, score}]`, best
/// first.
pub fn search(
    st: &WorldStore<'_>,
    cfg: &EmbedConfig,
    query: &str,
    opts: &SearchOptions,
    timeout: Duration,
) -> Result<Vec<Value>, WorldError> {
    for t in &opts.types {
        if !st.schema.has_type(t) {
            return Err(WorldError::invalid(format!(
                "unknown subject type {t:?} in `types`"
            )));
        }
    }
    let mut items: Vec<Item> = Vec::new();
    for s in st.subjects(None)? {
        if !opts.types.is_empty() && !opts.types.contains(&s.kind) {
            continue;
        }
        let attrs: Vec<(String, bool)> = st
            .schema
            .embedding_attrs(&s.kind)
            .into_iter()
            .filter(|(a, _)| opts.attrs.is_empty() || opts.attrs.contains(a))
            .collect();
        if attrs.is_empty() {
            continue;
        }
        let red = st.reduced_at(&s, opts.at, None)?;
        for (attr, record) in attrs {
            let entries: Vec<(String, &Value)> = match (record, red.state.get(&attr)) {
                (false, Some(Value::Array(a))) => a
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (format!("/{attr}/{i}"), v))
                    .collect(),
                (true, Some(Value::Object(o))) => o
                    .iter()
                    .map(|(k, v)| (format!("/{attr}/{}", super::pointer::escape(k)), v))
                    .collect(),
                _ => Vec::new(),
            };
            for (path, v) in entries {
                let Some(text) = v.get("text").and_then(Value::as_str) else {
                    continue;
                };
                let vector = (v.get("model").and_then(Value::as_str) == Some(cfg.model.as_str()))
                    .then(|| {
                        v.get("vector")
                            .and_then(Value::as_array)
                            .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(0.0) as f32).collect())
                    })
                    .flatten();
                items.push(Item {
                    subject_id: s.id.clone(),
                    attr: path,
                    text: text.to_string(),
                    vector,
                });
                if items.len() > MAX_ITEMS {
                    return Err(WorldError::invalid(format!(
                        "more than {MAX_ITEMS} texts to search; narrow it with `types` or `attrs`"
                    )));
                }
            }
        }
    }
    let mut texts = vec![query.to_string()];
    let missing: Vec<usize> = (0..items.len())
        .filter(|i| items[*i].vector.is_none())
        .collect();
    texts.extend(missing.iter().map(|i| items[*i].text.clone()));
    let vectors = cfg
        .embed(&texts, timeout)
        .map_err(|e| WorldError::Invalid(e.to_string()))?;
    let q = &vectors[0];
    for (n, i) in missing.iter().enumerate() {
        items[*i].vector = Some(vectors[n + 1].clone());
    }
    let mut scored: Vec<(f32, &Item)> = items
        .iter()
        .filter_map(|it| {
            it.vector
                .as_ref()
                .filter(|v| v.len() == q.len())
                .map(|v| (cosine(q, v), it))
        })
        .filter(|(s, _)| opts.threshold.is_none_or(|t| *s >= t))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    Ok(scored
        .into_iter()
        .take(opts.k)
        .map(|(score, it)| json!({"subjectId": it.subject_id, "attr": it.attr, "text": it.text, "score": score}))
        .collect())
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_equal_directions_is_one() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }
}
