//! Build a provider from `config.toml`: a model key from `[models]` names a provider in
//! `[providers]`, whose `kind` picks the wire (`openai` or `anthropic`), with its `base_url`,
//! its API key read from the variable `api_key_env` names, and extra `headers`.
//!
//! Defaults: `openai` without `base_url` talks to `https://api.openai.com/v1` and sends no key
//! when `api_key_env` is unset (local servers need none); `anthropic` defaults to
//! `https://api.anthropic.com/v1` and reads `ANTHROPIC_API_KEY` when `api_key_env` is unset.
//! Retry and idle-timeout knobs come from `HttpSettings::from_env`.

use std::sync::Arc;

use super::anthropic::{self, AnthropicProvider};
use super::http::{Endpoint, HttpSettings};
use super::openai::{self, OpenAiProvider};
use super::provider::{Provider, ProviderError};
use crate::config::{Config, GenerationSettings, ModelConfig, ProviderConfig};

pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";

/// The model key to use for `profile`: `[defaults.profiles]`, then `[defaults] model`.
pub fn default_model_key<'a>(config: &'a Config, profile: &str) -> Option<&'a str> {
    config
        .defaults
        .profiles
        .get(profile)
        .and_then(|d| d.model())
        .or(config.defaults.model.as_deref())
}

/// The generation settings a run of `profile` on `model` sends: the model's own, overlaid by
/// the profile's table in `[defaults.profiles]` (which wins field by field).
pub fn generation_for(
    model: &ModelConfig,
    config: &Config,
    profile: Option<&str>,
) -> GenerationSettings {
    let over = profile
        .and_then(|p| config.defaults.profiles.get(p))
        .and_then(|d| d.generation());
    match over {
        Some(o) => model.generation.overlaid(o),
        None => model.generation.clone(),
    }
}

/// The provider for `model_key` as `profile` uses it (its generation overrides applied).
pub fn build_provider_for(
    config: &Config,
    model_key: &str,
    profile: &str,
) -> Result<Arc<dyn Provider>, ProviderError> {
    build_full(
        config,
        model_key,
        Some(profile),
        HttpSettings::from_env(),
        &|name| std::env::var(name).ok(),
    )
}

/// The provider for the model `model_key` of `[models]`.
pub fn build_provider(
    config: &Config,
    model_key: &str,
) -> Result<Arc<dyn Provider>, ProviderError> {
    build_provider_with(config, model_key, HttpSettings::from_env())
}

/// As `build_provider`, with explicit retry and timeout settings.
pub fn build_provider_with(
    config: &Config,
    model_key: &str,
    settings: HttpSettings,
) -> Result<Arc<dyn Provider>, ProviderError> {
    build_with_env(config, model_key, settings, &|name| {
        std::env::var(name).ok()
    })
}

/// As `build_provider_with`, reading variables through `env` (tests pass a map).
pub fn build_with_env(
    config: &Config,
    model_key: &str,
    settings: HttpSettings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Provider>, ProviderError> {
    build_full(config, model_key, None, settings, env)
}

fn build_full(
    config: &Config,
    model_key: &str,
    profile: Option<&str>,
    settings: HttpSettings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Provider>, ProviderError> {
    let model = config.models.get(model_key).ok_or_else(|| {
        ProviderError::Config(format!(
            "unknown model '{model_key}': config.toml [models] has {}",
            known(config.models.keys())
        ))
    })?;
    let pc = config.providers.get(&model.provider).ok_or_else(|| {
        ProviderError::Config(format!(
            "model '{model_key}' uses provider '{}', which is not in config.toml [providers] (there: {})",
            model.provider,
            known(config.providers.keys())
        ))
    })?;
    let prices = (model.input_price, model.output_price);
    let label = format!("{}:{}", model.provider, model.name);
    let window = model.context_window.map(|w| w as usize);
    let generation = generation_for(model, config, profile);
    match pc.kind.as_str() {
        "openai" => {
            let base = pc.base_url.as_deref().unwrap_or(OPENAI_BASE_URL);
            let mut headers = Vec::new();
            if let Some(key) = api_key(model, pc, None, env)? {
                headers.push(("authorization".to_string(), format!("Bearer {key}")));
            }
            headers.extend(pc.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
            let endpoint = endpoint(model, openai::chat_url(base), &headers, settings)?;
            Ok(Arc::new(
                OpenAiProvider::new(endpoint, model.name.clone(), prices)
                    .with_label(label)
                    .with_context_window(window)
                    .with_generation(&generation),
            ))
        }
        "anthropic" => {
            let base = pc.base_url.as_deref().unwrap_or(ANTHROPIC_BASE_URL);
            let key = api_key(model, pc, Some("ANTHROPIC_API_KEY"), env)?.unwrap_or_default();
            let mut headers = anthropic::auth_headers(&key);
            headers.extend(pc.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
            let endpoint = endpoint(model, anthropic::messages_url(base), &headers, settings)?;
            Ok(Arc::new(
                AnthropicProvider::new(endpoint, model.name.clone(), prices)
                    .with_label(label)
                    .with_context_window(window)
                    .with_generation(&generation),
            ))
        }
        "replay" => Err(ProviderError::Config(format!(
            "provider '{}' is a replay provider: use --provider replay --script FILE instead of a model",
            model.provider
        ))),
        other => Err(ProviderError::Config(format!(
            "provider '{}' has unknown kind '{other}'; use openai or anthropic",
            model.provider
        ))),
    }
}

fn endpoint(
    model: &ModelConfig,
    url: String,
    headers: &[(String, String)],
    settings: HttpSettings,
) -> Result<Endpoint, ProviderError> {
    Endpoint::new(url, headers, settings)
        .map_err(|e| ProviderError::Config(format!("provider '{}': {e}", model.provider)))
}

/// The API key from the variable the provider names (or `default_var`); `None` when neither
/// is configured. A named variable that is unset or empty is an error that names it.
fn api_key(
    model: &ModelConfig,
    pc: &ProviderConfig,
    default_var: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, ProviderError> {
    let Some(var) = pc
        .api_key_env
        .as_deref()
        .filter(|v| !v.is_empty())
        .or(default_var)
    else {
        return Ok(None);
    };
    match env(var).map(|v| v.trim().to_string()).filter(|v| !v.is_empty()) {
        Some(key) => Ok(Some(key)),
        None => Err(ProviderError::Config(format!(
            "provider '{}' reads its API key from the environment variable {var}, which is not set; \
             export {var}=… before starting nbook",
            model.provider
        ))),
    }
}

fn known<'a>(keys: impl Iterator<Item = &'a String>) -> String {
    let list: Vec<&str> = keys.map(String::as_str).collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config::parse(
            r#"
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
[providers.cloud]
kind = "anthropic"
api_key_env = "NBOOK_TEST_FACTORY_KEY"
[providers.odd]
kind = "gemini"
[models.small]
provider = "local"
name = "smollm2"
input_price = 1.5
output_price = 2.0
[models.claude]
provider = "cloud"
name = "claude-x"
[models.weird]
provider = "odd"
name = "w"
[models.orphan]
provider = "nowhere"
name = "x"
[defaults]
model = "small"
[defaults.profiles]
writer = "claude"
"#,
            "test",
        )
        .unwrap()
    }

    fn build(key: &str, env: &[(&str, &str)]) -> Result<Arc<dyn Provider>, ProviderError> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        build_with_env(&config(), key, HttpSettings::default(), &move |n| {
            env.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn builds_and_explains() {
        let p = build("small", &[]).unwrap();
        assert_eq!(p.prices(), (1.5, 2.0));
        assert_eq!(p.name(), "local:smollm2");
        assert!(build("claude", &[("NBOOK_TEST_FACTORY_KEY", "k")]).is_ok());
        let err = |k: &str| {
            build(k, &[])
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(
            err("claude").contains("NBOOK_TEST_FACTORY_KEY"),
            "{}",
            err("claude")
        );
        assert!(err("nope").contains("unknown model 'nope'") && err("nope").contains("small"));
        assert!(err("orphan").contains("'nowhere'"));
        assert!(err("weird").contains("unknown kind 'gemini'"));
        let c = config();
        assert_eq!(default_model_key(&c, "writer"), Some("claude"));
        assert_eq!(default_model_key(&c, "leader.default"), Some("small"));
    }
}
