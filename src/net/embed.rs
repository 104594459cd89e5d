//! The embedding client: an OpenAI-compatible `/v1/embeddings` service named by the config
//! (`[embedding]` + `[providers.X]`), used by `world.search.text` and by subject memory
//! (`subject_rag_search`). Requests run on the shared runtime with the shared client.

use std::time::Duration;

use serde_json::{json, Value};

use super::http::ClientError;
use super::runtime::RuntimeError;
use crate::config::Config;

#[derive(Clone, Debug, PartialEq)]
pub struct EmbedConfig {
    /// e.g. `http://127.0.0.1:8080/v1`; requests go to `<base_url>/embeddings`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("{user} needs an embedding service: add [embedding] provider = \"<name>\" and model = \"<model>\" to config.toml, with [providers.<name>] base_url = \"http://…/v1\" (any OpenAI-compatible /v1/embeddings server)")]
    NotConfigured { user: &'static str },
    #[error("[embedding] names the provider {provider:?}, but there is no [providers.{provider}] in the config")]
    UnknownProvider { provider: String },
    #[error("[providers.{provider}] needs a base_url for embeddings (e.g. \"http://127.0.0.1:8080/v1\")")]
    NoBaseUrl { provider: String },
    #[error("the embedding service at {url} did not answer: {source}; check that it is running")]
    Unreachable {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("the embedding service at {url} sent no JSON: {source}")]
    NotJson {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("the embedding service at {url} answered {status}: {message}")]
    Status {
        url: String,
        status: reqwest::StatusCode,
        message: String,
    },
    #[error("the embedding service at {url} {problem}")]
    BadReply { url: String, problem: String },
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl EmbedConfig {
    /// The embedding service from the config, or an error saying what to configure; `user`
    /// names what needs it (`world.search.text`, `subject_rag_search`).
    pub fn from_config(config: &Config, user: &'static str) -> Result<EmbedConfig, EmbedError> {
        let e = config
            .embedding
            .as_ref()
            .ok_or(EmbedError::NotConfigured { user })?;
        let p = config
            .providers
            .get(&e.provider)
            .ok_or_else(|| EmbedError::UnknownProvider {
                provider: e.provider.clone(),
            })?;
        let base_url = p
            .base_url
            .clone()
            .filter(|u| !u.trim().is_empty())
            .ok_or_else(|| EmbedError::NoBaseUrl {
                provider: e.provider.clone(),
            })?;
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

    /// Embed `texts` (one request) on the shared runtime; callable from sync code, blocking
    /// pools and async contexts alike.
    pub fn embed(&self, texts: &[String], timeout: Duration) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let (cfg, texts) = (self.clone(), texts.to_vec());
        super::runtime::block_on(async move { cfg.request(&texts, timeout).await })?
    }

    async fn request(
        &self,
        texts: &[String],
        timeout: Duration,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let url = format!("{}/embeddings", self.base_url);
        let mut req = super::http::fresh_connection_client()?
            .post(&url)
            .timeout(timeout)
            .json(&json!({"model": self.model, "input": texts}));
        if let Some(k) = &self.api_key {
            req = req.bearer_auth(k);
        }
        let resp = req.send().await.map_err(|source| EmbedError::Unreachable {
            url: url.clone(),
            source,
        })?;
        let status = resp.status();
        let body: Value = resp.json().await.map_err(|source| EmbedError::NotJson {
            url: url.clone(),
            source,
        })?;
        if !status.is_success() {
            let message = body["error"]["message"].as_str().unwrap_or("no message");
            return Err(EmbedError::Status {
                url,
                status,
                message: message.to_string(),
            });
        }
        let bad = |problem: String| EmbedError::BadReply {
            url: url.clone(),
            problem,
        };
        let mut data: Vec<(usize, Vec<f32>)> = body["data"]
            .as_array()
            .ok_or_else(|| bad("sent no `data` list".into()))?
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
            return Err(bad(format!(
                "returned {} embeddings for {} texts",
                data.len(),
                texts.len()
            )));
        }
        Ok(data.into_iter().map(|(_, v)| v).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_config_is_explained() {
        let e = EmbedConfig::from_config(&Config::default(), "world.search.text")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("world.search.text needs")
                && e.contains("[embedding]")
                && e.contains("/v1/embeddings"),
            "{e}"
        );
        let c = Config::parse("[embedding]\nprovider = \"x\"\nmodel = \"m\"\n", "t").unwrap();
        assert!(EmbedConfig::from_config(&c, "t")
            .unwrap_err()
            .to_string()
            .contains("[providers.x]"));
    }
}
