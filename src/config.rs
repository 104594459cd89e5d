//! Configuration: where nbook keeps its files (`directories`, overridden by `NBOOK_HOME`), and
//! `config.toml` (global) merged with the project's `.nbook/config.toml` (project wins).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
}

/// Folders nbook uses outside a project.
#[derive(Clone, Debug)]
pub struct Dirs {
    pub config: PathBuf,
    pub data: PathBuf,
    pub logs: PathBuf,
}

impl Dirs {
    pub fn resolve() -> Dirs {
        if let Some(home) = std::env::var_os("NBOOK_HOME").filter(|h| !h.is_empty()) {
            let home = PathBuf::from(home);
            return Dirs {
                config: home.clone(),
                data: home.join("data"),
                logs: home.join("logs"),
            };
        }
        match directories::ProjectDirs::from("", "", "nbook") {
            Some(p) => Dirs {
                config: p.config_dir().to_path_buf(),
                data: p.data_dir().to_path_buf(),
                logs: p
                    .state_dir()
                    .unwrap_or_else(|| p.data_local_dir())
                    .join("logs"),
            },
            None => {
                let base = std::env::temp_dir().join("nbook");
                Dirs {
                    config: base.clone(),
                    data: base.join("data"),
                    logs: base.join("logs"),
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    #[default]
    Supervised,
    Neurobook,
    Locked,
}

impl Preset {
    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Supervised => "supervised",
            Preset::Neurobook => "neurobook",
            Preset::Locked => "locked",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolRule {
    Ask,
    Allow,
    Deny,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalConfig {
    #[serde(default)]
    pub preset: Preset,
    #[serde(default)]
    pub tools: BTreeMap<String, ToolRule>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderConfig {
    pub kind: String,
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    pub provider: String,
    pub name: String,
    #[serde(default)]
    pub context_window: Option<u64>,
    #[serde(default)]
    pub input_price: f64,
    #[serde(default)]
    pub output_price: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Defaults {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub profiles: BTreeMap<String, String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingConfig {
    pub provider: String,
    pub model: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Config {
    #[serde(default)]
    pub approval: ApprovalConfig,
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    #[serde(default)]
    pub models: BTreeMap<String, ModelConfig>,
    #[serde(default)]
    pub defaults: Defaults,
    #[serde(default)]
    pub embedding: Option<EmbeddingConfig>,
    #[serde(default)]
    pub theme: Option<String>,
    #[serde(default)]
    pub web: WebConfig,
    #[serde(default)]
    pub workflows: WorkflowConfig,
}

/// `[workflows]`: the limits of one workflow run (see `crate::workflow`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkflowConfig {
    /// Wall clock of a whole run, not counting time spent waiting for the author's answer.
    pub time_limit_secs: u64,
    /// JavaScript time a run may spend without yielding (waiting for an agent), not counting
    /// host calls.
    pub script_slice_ms: u64,
    /// Calls into `wf` (log, read, invoke, ask, …) one run may make.
    pub max_host_calls: u64,
}

impl Default for WorkflowConfig {
    fn default() -> Self {
        WorkflowConfig {
            time_limit_secs: 3600,
            script_slice_ms: 5000,
            max_host_calls: 20_000,
        }
    }
}

/// `[web]`: web_search providers and web_fetch host allowances.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WebConfig {
    /// Providers web_search tries, in order (default: tavily, brave).
    #[serde(default)]
    pub search_order: Vec<String>,
    /// Env var holding the Tavily API key (default `TAVILY_API_KEY`).
    #[serde(default)]
    pub tavily_api_key_env: Option<String>,
    /// Env var holding the Brave Search API key (default `BRAVE_API_KEY`).
    #[serde(default)]
    pub brave_api_key_env: Option<String>,
    /// Base URL overrides (tests, proxies).
    #[serde(default)]
    pub tavily_base_url: Option<String>,
    #[serde(default)]
    pub brave_base_url: Option<String>,
    /// Hosts web_fetch may reach even when they resolve to private or loopback addresses.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
}

impl Config {
    /// Global config, then the project's `.nbook/config.toml` on top (tables merge key by key).
    pub fn load(dirs: &Dirs, project_root: Option<&Path>) -> Result<Config, ConfigError> {
        let mut merged = toml::Table::new();
        let mut files = vec![dirs.config.join("config.toml")];
        if let Some(root) = project_root {
            files.push(root.join(".nbook").join("config.toml"));
        }
        for file in files {
            if let Some(table) = read_table(&file)? {
                merge(&mut merged, table);
            }
        }
        toml::Value::Table(merged)
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Parse {
                path: "config".into(),
                message: e.message().to_string(),
            })
    }

    pub fn parse(text: &str, path: &str) -> Result<Config, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.into(),
            message: e.to_string(),
        })
    }
}

fn read_table(path: &Path) -> Result<Option<toml::Table>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.display().to_string(),
                source,
            })
        }
    };
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::Parse {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    // Validate each file on its own so an error names the file it is in.
    let _: Config =
        toml::Value::Table(table.clone())
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Parse {
                path: path.display().to_string(),
                message: e.message().to_string(),
            })?;
    Ok(Some(table))
}

fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_overrides_global() {
        let home = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("config.toml"),
            "[approval]\npreset = \"neurobook\"\n[approval.tools]\nbash = \"deny\"\n",
        )
        .unwrap();
        std::fs::create_dir_all(proj.path().join(".nbook")).unwrap();
        std::fs::write(
            proj.path().join(".nbook/config.toml"),
            "[approval]\npreset = \"locked\"\n",
        )
        .unwrap();
        let dirs = Dirs {
            config: home.path().into(),
            data: home.path().join("d"),
            logs: home.path().join("l"),
        };
        let c = Config::load(&dirs, Some(proj.path())).unwrap();
        assert_eq!(c.approval.preset, Preset::Locked);
        assert_eq!(c.approval.tools.get("bash"), Some(&ToolRule::Deny));
    }

    #[test]
    fn bad_preset_names_the_file() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("config.toml"),
            "[approval]\npreset = \"yolo\"\n",
        )
        .unwrap();
        let dirs = Dirs {
            config: home.path().into(),
            data: home.path().join("d"),
            logs: home.path().join("l"),
        };
        let err = Config::load(&dirs, None).unwrap_err().to_string();
        assert!(err.contains("config.toml"), "{err}");
        assert!(
            err.contains("yolo") || err.contains("unknown variant"),
            "{err}"
        );
    }
}
