//! First-run model setup: find an OpenAI-compatible server (a local one on the usual ports, or
//! a base URL the author gives) by asking its `/v1/models`, then write the `[providers]`,
//! `[models]` and `[defaults]` lines that use it into the author's `config.toml`. The edit goes
//! through `toml_edit`, so every other byte of the file stays as the author wrote it; the
//! result is checked to load as a config before it is written, atomically.
//!
//! No UI here: the Sessions pane's setup form (`tui::sessions::setup`) runs these as jobs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::Config;

/// Where local OpenAI-compatible servers listen by default.
pub const USUAL_SERVERS: [(&str, &str); 4] = [
    ("llama.cpp", "http://127.0.0.1:8080/v1"),
    ("Ollama", "http://127.0.0.1:11434/v1"),
    ("vLLM", "http://127.0.0.1:8000/v1"),
    ("LM Studio", "http://127.0.0.1:1234/v1"),
];

/// How long one probe of a local port may take (a closed port fails at once; a port held by
/// something that never answers must not hold the form up).
pub const DETECT_TIMEOUT: Duration = Duration::from_millis(1500);
/// A server the author named may be remote.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(8);

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{url}: {message}")]
    Probe { url: String, message: String },
    #[error("the API key variable {0} is not set; export it before starting nbook, or leave the variable empty for a server that needs no key")]
    KeyUnset(String),
    #[error("{0} is not a valid environment variable name (letters, digits and _, not starting with a digit)")]
    BadVariable(String),
    #[error("the base URL must start with http:// or https:// (got {0:?})")]
    BadUrl(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML, so nbook will not edit it: {message}")]
    Unparsable { path: String, message: String },
    #[error("{path} would not load after the edit ({message}); nothing was written")]
    WouldBreak { path: String, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} changed while the setup was open; review the lines again")]
    Changed { path: String },
}

/// A server that answered, with the model ids it serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// What it probably is (`Ollama`), or the host the author gave.
    pub label: String,
    pub base_url: String,
    /// The variable the API key is read from (`None`: the server needs none).
    pub api_key_env: Option<String>,
    pub models: Vec<String>,
}

#[derive(Deserialize)]
struct ModelList {
    data: Vec<ModelEntry>,
}

#[derive(Deserialize)]
struct ModelEntry {
    id: String,
}

/// The base URL as the provider config wants it: no trailing slash.
pub fn normalize_base_url(url: &str) -> Result<String, SetupError> {
    let url = url.trim().trim_end_matches('/');
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
        return Err(SetupError::BadUrl(url.to_string()));
    }
    Ok(url.to_string())
}

fn valid_var(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Ask `base_url/models` for the model ids (the OpenAI wire format: `{"data": [{"id": …}]}`).
pub async fn list_models(
    base_url: &str,
    api_key: Option<&str>,
    timeout: Duration,
) -> Result<Vec<String>, SetupError> {
    let url = format!("{base_url}/models");
    let fail = |message: String| SetupError::Probe {
        url: url.clone(),
        message,
    };
    let client = reqwest::Client::builder()
        .connect_timeout(timeout.min(Duration::from_millis(800)))
        .timeout(timeout)
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let mut req = client.get(&url);
    if let Some(key) = api_key {
        req = req.bearer_auth(key);
    }
    let resp = req.send().await.map_err(|e| {
        fail(if e.is_timeout() {
            "no answer in time".to_string()
        } else if e.is_connect() {
            "nothing is listening there".to_string()
        } else {
            e.to_string()
        })
    })?;
    let status = resp.status();
    if !status.is_success() {
        return Err(fail(format!(
            "the server answered {status}{}",
            if status.as_u16() == 401 || status.as_u16() == 403 {
                " (is the API key right?)"
            } else {
                ""
            }
        )));
    }
    let body = resp.bytes().await.map_err(|e| fail(e.to_string()))?;
    let list: ModelList = serde_json::from_slice(&body).map_err(|e| {
        fail(format!(
            "the answer is not an OpenAI model list ({e}); is this an OpenAI-compatible server?"
        ))
    })?;
    let mut ids: Vec<String> = list.data.into_iter().map(|m| m.id).collect();
    ids.dedup();
    if ids.is_empty() {
        return Err(fail(
            "the server serves no model yet (load or pull one, then try again)".to_string(),
        ));
    }
    Ok(ids)
}

/// Probe every `(label, base_url)` at once; the servers that answered with models, in the
/// order given.
pub async fn detect(candidates: &[(String, String)], timeout: Duration) -> Vec<Found> {
    let probes = candidates.iter().map(|(label, base)| async move {
        list_models(base, None, timeout)
            .await
            .ok()
            .map(|models| Found {
                label: label.clone(),
                base_url: base.clone(),
                api_key_env: None,
                models,
            })
    });
    futures::future::join_all(probes)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// Probe a server the author named; the key is read from `api_key_env` when one is given.
pub async fn probe(
    base_url: &str,
    api_key_env: Option<&str>,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<Found, SetupError> {
    let base = normalize_base_url(base_url)?;
    let var = api_key_env.map(str::trim).filter(|v| !v.is_empty());
    let key = match var {
        Some(v) if !valid_var(v) => return Err(SetupError::BadVariable(v.to_string())),
        Some(v) => Some(
            env(v)
                .filter(|k| !k.trim().is_empty())
                .ok_or_else(|| SetupError::KeyUnset(v.to_string()))?,
        ),
        None => None,
    };
    let models = list_models(&base, key.as_deref(), PROBE_TIMEOUT).await?;
    let label = base
        .split("//")
        .nth(1)
        .and_then(|h| h.split('/').next())
        .unwrap_or(&base)
        .to_string();
    Ok(Found {
        label,
        base_url: base,
        api_key_env: var.map(str::to_string),
        models,
    })
}

/// What the setup will write: one provider, one model on it, and that model as the default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub file: PathBuf,
    /// The file's bytes the edit was computed from (a write refuses if they changed).
    pub before: String,
    pub after: String,
    pub provider_key: String,
    pub model_key: String,
    /// The lines added (`+ …`) and replaced (`- …`), in file order, for the author to read.
    pub changes: Vec<String>,
}

/// A key for `[providers]`/`[models]` from the server's label: lowercase letters, digits
/// and `-`, not already used in the file.
fn free_key(label: &str, taken: &dyn Fn(&str) -> bool) -> String {
    let mut base: String = label
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    base = base.trim_matches('-').to_string();
    while base.contains("--") {
        base = base.replace("--", "-");
    }
    if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
        base = format!("local-{base}").trim_end_matches('-').to_string();
    }
    if !taken(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|k| !taken(k))
        .unwrap_or(base)
}

/// Compute the edit of `file` that makes `model` of `server` the default model.
pub fn plan(file: &Path, server: &Found, model: &str) -> Result<Plan, SetupError> {
    let display = file.display().to_string();
    let before = match std::fs::read(file) {
        Ok(b) => String::from_utf8(b).map_err(|e| SetupError::Unparsable {
            path: display.clone(),
            message: format!("not UTF-8 ({e})"),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(SetupError::Read {
                path: display,
                source,
            })
        }
    };
    let mut doc: toml_edit::DocumentMut =
        before
            .parse()
            .map_err(|e: toml_edit::TomlError| SetupError::Unparsable {
                path: display.clone(),
                message: e.message().to_string(),
            })?;
    let has = |table: &str, key: &str| {
        doc.get(table)
            .and_then(|t| t.as_table_like())
            .is_some_and(|t| t.contains_key(key))
    };
    let provider_key = free_key(&server.label, &|k| has("providers", k));
    let model_key = free_key(model, &|k| has("models", k));

    let mut provider = toml_edit::Table::new();
    provider["kind"] = toml_edit::value("openai");
    provider["base_url"] = toml_edit::value(server.base_url.as_str());
    if let Some(var) = &server.api_key_env {
        provider["api_key_env"] = toml_edit::value(var.as_str());
    }
    let mut model_table = toml_edit::Table::new();
    model_table["provider"] = toml_edit::value(provider_key.as_str());
    model_table["name"] = toml_edit::value(model);

    let edit_err = |what: &str| SetupError::Unparsable {
        path: display.clone(),
        message: format!("`{what}` is not a table"),
    };
    for (name, key, table) in [
        ("providers", &provider_key, provider),
        ("models", &model_key, model_table),
    ] {
        let parent = doc
            .entry(name)
            .or_insert_with(|| {
                let mut t = toml_edit::Table::new();
                t.set_implicit(true);
                toml_edit::Item::Table(t)
            })
            .as_table_like_mut()
            .ok_or_else(|| edit_err(name))?;
        parent.insert(key, toml_edit::Item::Table(table));
    }
    let defaults = doc
        .entry("defaults")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| edit_err("defaults"))?;
    defaults.insert("model", toml_edit::value(model_key.as_str()));

    let after = doc.to_string();
    Config::parse(&after, &display).map_err(|e| SetupError::WouldBreak {
        path: display.clone(),
        message: e.to_string(),
    })?;
    let changes = similar::TextDiff::from_lines(&before, &after)
        .iter_all_changes()
        .filter_map(|c| {
            let sign = match c.tag() {
                similar::ChangeTag::Insert => "+ ",
                similar::ChangeTag::Delete => "- ",
                similar::ChangeTag::Equal => return None,
            };
            Some(format!("{sign}{}", c.value().trim_end_matches('\n')))
        })
        .collect();
    Ok(Plan {
        file: file.to_path_buf(),
        before,
        after,
        provider_key,
        model_key,
        changes,
    })
}

/// Write the plan, unless the file changed since it was computed.
pub fn apply(plan: &Plan) -> Result<(), SetupError> {
    let display = plan.file.display().to_string();
    let now = match std::fs::read(&plan.file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(SetupError::Read {
                path: display,
                source,
            })
        }
    };
    if now != plan.before.as_bytes() {
        return Err(SetupError::Changed { path: display });
    }
    crate::workspace::atomic_write(&plan.file, plan.after.as_bytes()).map_err(|source| {
        SetupError::Write {
            path: display,
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(label: &str) -> Found {
        Found {
            label: label.into(),
            base_url: "http://127.0.0.1:11434/v1".into(),
            api_key_env: None,
            models: vec!["qwen3:8b".into()],
        }
    }

    #[test]
    fn keys_are_plain_and_free() {
        assert_eq!(free_key("LM Studio", &|_| false), "lm-studio");
        assert_eq!(free_key("llama.cpp", &|k| k == "llama-cpp"), "llama-cpp-2");
        assert_eq!(free_key("127.0.0.1:9", &|_| false), "local-127-0-0-1-9");
        assert_eq!(free_key("qwen3:8b", &|_| false), "qwen3-8b");
    }

    #[test]
    fn the_edit_keeps_every_other_byte() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        let original = "# my settings\ntheme = \"light\"   # keep this comment\n\n[defaults.profiles]\nwriter = \"big\"\n\n[models.big]\nprovider = \"cloud\"\nname = \"x\"\n[providers.cloud]\nkind = \"anthropic\"\n";
        std::fs::write(&file, original).unwrap();
        let p = plan(&file, &server("Ollama"), "qwen3:8b").unwrap();
        assert!(
            p.changes.iter().all(|c| c.starts_with("+ ")),
            "{:?}",
            p.changes
        );
        let kept: String = similar::TextDiff::from_lines(original, &p.after)
            .iter_all_changes()
            .filter(|c| c.tag() != similar::ChangeTag::Insert)
            .map(|c| c.value().to_string())
            .collect();
        assert_eq!(kept, original);
        let c = Config::parse(&p.after, "t").unwrap();
        assert_eq!(c.defaults.model.as_deref(), Some("qwen3-8b"));
        assert_eq!(c.models["qwen3-8b"].provider, "ollama");
        assert_eq!(c.models["qwen3-8b"].name, "qwen3:8b");
        assert_eq!(
            c.providers["ollama"].base_url.as_deref(),
            Some("http://127.0.0.1:11434/v1")
        );
        assert_eq!(c.defaults.profiles["writer"].model(), Some("big"));
        apply(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), p.after);
    }

    #[test]
    fn an_existing_default_is_replaced_and_taken_keys_are_not_reused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        let original = "[providers.ollama]\nkind = \"openai\"\n[models.m]\nprovider = \"ollama\"\nname = \"old\"\n[defaults]\nmodel = \"gone\"\n";
        std::fs::write(&file, original).unwrap();
        let p = plan(&file, &server("Ollama"), "m").unwrap();
        assert_eq!(
            (p.provider_key.as_str(), p.model_key.as_str()),
            ("ollama-2", "m-2")
        );
        assert!(
            p.changes.contains(&"- model = \"gone\"".to_string()),
            "{:?}",
            p.changes
        );
        assert!(
            p.changes.contains(&"+ model = \"m-2\"".to_string()),
            "{:?}",
            p.changes
        );
        let c = Config::parse(&p.after, "t").unwrap();
        assert_eq!(c.models["m"].name, "old");
        assert_eq!(c.models["m-2"].provider, "ollama-2");
        assert_eq!(c.defaults.model.as_deref(), Some("m-2"));
    }

    #[test]
    fn a_changed_or_broken_file_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        let p = plan(&file, &server("Ollama"), "m").unwrap();
        std::fs::write(&file, "theme = \"x\"\n").unwrap();
        assert!(matches!(apply(&p), Err(SetupError::Changed { .. })));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "theme = \"x\"\n");
        std::fs::write(&file, "theme = [\n").unwrap();
        assert!(matches!(
            plan(&file, &server("Ollama"), "m"),
            Err(SetupError::Unparsable { .. })
        ));
        std::fs::write(&file, "defaults = 3\n").unwrap();
        assert!(plan(&file, &server("Ollama"), "m").is_err());
    }

    #[test]
    fn bad_urls_and_variables_are_refused_before_any_request() {
        let env = |_: &str| None;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let e = rt
            .block_on(probe("localhost:8080", None, &env))
            .unwrap_err();
        assert!(matches!(e, SetupError::BadUrl(_)), "{e}");
        let e = rt
            .block_on(probe("http://127.0.0.1:9/v1", Some("1BAD"), &env))
            .unwrap_err();
        assert!(matches!(e, SetupError::BadVariable(_)), "{e}");
        let e = rt
            .block_on(probe(
                "http://127.0.0.1:9/v1",
                Some("NBOOK_UNSET_KEY_X"),
                &env,
            ))
            .unwrap_err();
        assert!(e.to_string().contains("NBOOK_UNSET_KEY_X"), "{e}");
    }
}
