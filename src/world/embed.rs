//! `world.search.text`: cosine top-k over the EmbeddingText items live at an instant (every
//! item of an embedding list, the latest value of each key of an embedding record), with the
//! query and any item without a stored vector of the configured model embedded by an
//! OpenAI-compatible `/v1/embeddings` service (config `[embedding]` + `[providers.X]`).
//! Without a configured service the search fails with a clear message — there is no keyword
//! fallback, by design.

use std::time::Duration;

use serde_json::{json, Value};

use super::store::WorldStore;
use super::WorldError;
use crate::config::Config;

#[derive(Clone, Debug, PartialEq)]
pub struct EmbedConfig {
    /// e.g. `http://127.0.0.1:8080/v1`; requests go to `<base_url>/embeddings`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
}

impl EmbedConfig {
    /// The embedding service from the config, or a message saying what to configure.
    pub fn from_config(config: &Config) -> Result<EmbedConfig, String> {
        let e = config.embedding.as_ref().ok_or(
            "world.search.text needs an embedding service: add [embedding] provider = \"<name>\" and model = \"<model>\" to config.toml, with [providers.<name>] base_url = \"http://…/v1\" (any OpenAI-compatible /v1/embeddings server)",
        )?;
        let p = config.providers.get(&e.provider).ok_or_else(|| {
            format!(
                "[embedding] names the provider {:?}, but there is no [providers.{}] in the config",
                e.provider, e.provider
            )
        })?;
        let base_url = p
            .base_url
            .clone()
            .filter(|u| !u.trim().is_empty())
            .ok_or_else(|| format!("[providers.{}] needs a base_url for embeddings (e.g. \"http://127.0.0.1:8080/v1\")", e.provider))?;
        let api_key = p
            .api_key_env
            .as_ref()
            .and_then(|v| std::env::var(v).ok())
            .filter(|k| !k.is_empty());
        Ok(EmbedConfig {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: e.model.clone(),
            api_key,
        })
    }

    /// Embed `texts` (one request). Runs the HTTP call on its own thread with its own small
    /// runtime, so it works from sync code, blocking pools and async contexts alike.
    pub fn embed(&self, texts: &[String], timeout: Duration) -> Result<Vec<Vec<f32>>, String> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let (cfg, texts) = (self.clone(), texts.to_vec());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
            rt.block_on(cfg.request(&texts, timeout))
        })
        .join()
        .map_err(|_| "the embedding request crashed".to_string())?
    }

    async fn request(&self, texts: &[String], timeout: Duration) -> Result<Vec<Vec<f32>>, String> {
        let url = format!("{}/embeddings", self.base_url);
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let mut req = client
            .post(&url)
            .json(&json!({"model": self.model, "input": texts}));
        if let Some(k) = &self.api_key {
            req = req.bearer_auth(k);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| format!("the embedding service at {url} did not answer: {e}"))?;
        let status = resp.status();
        let body: Value = resp
            .json()
            .await
            .map_err(|e| format!("the embedding service at {url} sent no JSON: {e}"))?;
        if !status.is_success() {
            let msg = body["error"]["message"].as_str().unwrap_or("no message");
            return Err(format!(
                "the embedding service at {url} answered {status}: {msg}"
            ));
        }
        let mut data: Vec<(usize, Vec<f32>)> = body["data"]
            .as_array()
            .ok_or_else(|| format!("the embedding service at {url} sent no `data` list"))?
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let idx = d["index"].as_u64().map(|x| x as usize).unwrap_or(i);
                let v = d["embedding"]
                    .as_array()
                    .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(0.0) as f32).collect())
                    .unwrap_or_default();
                (idx, v)
            })
            .collect();
        data.sort_by_key(|(i, _)| *i);
        if data.len() != texts.len() || data.iter().any(|(_, v)| v.is_empty()) {
            return Err(format!(
                "the embedding service at {url} returned {} embeddings for {} texts",
                data.len(),
                texts.len()
            ));
        }
        Ok(data.into_iter().map(|(_, v)| v).collect())
    }
}

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
    let vectors = cfg.embed(&texts, timeout).map_err(WorldError::Invalid)?;
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
    fn missing_config_is_explained() {
        let e = EmbedConfig::from_config(&Config::default()).unwrap_err();
        assert!(
            e.contains("[embedding]") && e.contains("/v1/embeddings"),
            "{e}"
        );
        let c = Config::parse("[embedding]\nprovider = \"x\"\nmodel = \"m\"\n", "t").unwrap();
        assert!(EmbedConfig::from_config(&c)
            .unwrap_err()
            .contains("[providers.x]"));
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
    }
}
