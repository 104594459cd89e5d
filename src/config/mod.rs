//! Configuration: where nbook keeps its files (`directories`, overridden by `NBOOK_HOME`), and
//! `config.toml` (global, the author's) merged with the project's `.nbook/config.toml`. The
//! project wins only where it tightens the author's policy or does not touch it; lines that
//! loosen it wait until the author trusts that file (`gate`, `trust`). Unknown keys and rules
//! for tools nbook does not have are warnings with file and line (`source`, `report`).

mod gate;
pub mod live;
mod report;
pub mod setup;
mod source;
pub mod trust;

pub use gate::Loosening;
pub use live::{no_model_message, LiveConfig, Reload};
pub use report::{LoadReport, ProjectGate};
pub use source::{sha256_hex, ConfigWarning};
pub use trust::TrustState;

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
    /// The author's `config.toml`.
    pub fn config_file(&self) -> PathBuf {
        self.config.join("config.toml")
    }

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

/// `[approval]`. Unlike the rest of the config an unknown key here is an error, not a warning:
/// a misspelt `preset` would otherwise run under a looser policy than the author wrote. (A
/// misspelt tool name under `[approval.tools]` is a map key, reported as a warning.)
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
    /// Generation settings sent with every request to this model.
    #[serde(flatten)]
    pub generation: GenerationSettings,
}

/// Per-model (and per-profile) generation settings. Each is sent only when set, so a server
/// keeps its own default otherwise. `extra_body` is merged into the request body verbatim and
/// wins over every field nbook sets (an escape hatch for server-specific knobs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// One stop sequence or a list of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopSequences>,
    /// `"auto"`, `"required"`, `"none"` or a provider-specific object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// `"low"`, `"medium"`, `"high"` (OpenAI reasoning models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StopSequences {
    One(String),
    Many(Vec<String>),
}

impl StopSequences {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            StopSequences::One(s) => vec![s.clone()],
            StopSequences::Many(v) => v.clone(),
        }
    }
}

impl GenerationSettings {
    /// `over`'s settings where it has them, ours otherwise (`extra_body` merges key by key).
    pub fn overlaid(&self, over: &GenerationSettings) -> GenerationSettings {
        let mut extra_body = self.extra_body.clone();
        for (k, v) in &over.extra_body {
            extra_body.insert(k.clone(), v.clone());
        }
        GenerationSettings {
            max_tokens: over.max_tokens.or(self.max_tokens),
            temperature: over.temperature.or(self.temperature),
            top_p: over.top_p.or(self.top_p),
            stop: over.stop.clone().or_else(|| self.stop.clone()),
            tool_choice: over
                .tool_choice
                .clone()
                .or_else(|| self.tool_choice.clone()),
            parallel_tool_calls: over.parallel_tool_calls.or(self.parallel_tool_calls),
            reasoning_effort: over
                .reasoning_effort
                .clone()
                .or_else(|| self.reasoning_effort.clone()),
            extra_body,
        }
    }
}

/// `[defaults.profiles]`: a profile's model key (`writer = "small"`), or a table with the
/// model and generation settings that override the model's own
/// (`[defaults.profiles.writer] model = "small"`, `temperature = 0.3`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
// A handful of these per config file: boxing the settings would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum ProfileDefault {
    Model(String),
    Settings {
        #[serde(default)]
        model: Option<String>,
        #[serde(flatten)]
        generation: GenerationSettings,
    },
}

impl ProfileDefault {
    pub fn model(&self) -> Option<&str> {
        match self {
            ProfileDefault::Model(m) => Some(m),
            ProfileDefault::Settings { model, .. } => model.as_deref(),
        }
    }

    pub fn generation(&self) -> Option<&GenerationSettings> {
        match self {
            ProfileDefault::Model(_) => None,
            ProfileDefault::Settings { generation, .. } => Some(generation),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Defaults {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub profiles: BTreeMap<String, ProfileDefault>,
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
    pub sql: SqlConfig,
    #[serde(default)]
    pub workflows: WorkflowConfig,
    #[serde(default)]
    pub notify: NotifyConfig,
    #[serde(default)]
    pub board: BoardConfig,
}

/// `[board]`: the production board's scheduler (`crate::runner`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BoardConfig {
    /// Task sessions that may run at once (every session working on a task counts, children
    /// included); default 2. 0 is read as 1.
    pub concurrency: usize,
    /// Reviews answered REVISE (or RETHINK) a task may go through before it parks for the
    /// author; default 3 (Fusion's maxReworkCycles), at most 10.
    pub max_rework: u32,
}

impl Default for BoardConfig {
    fn default() -> Self {
        BoardConfig {
            concurrency: 2,
            max_rework: 3,
        }
    }
}

impl BoardConfig {
    pub fn limit(&self) -> usize {
        self.concurrency.max(1)
    }
    pub fn rework_bound(&self) -> u32 {
        self.max_rework.clamp(1, 10)
    }
}

/// How a desktop notification is sent (`[notify] desktop`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Desktop {
    /// `ESC ] 9 ; body BEL` (iTerm2, WezTerm, Windows Terminal, foot, kitty…).
    #[default]
    Osc9,
    /// `ESC ] 777 ; notify ; title ; body BEL` (rxvt-unicode, VTE terminals, Ghostty…).
    Osc777,
    Off,
}

/// `[notify]` in config.toml: the bell and the desktop notification when a call starts
/// waiting while the author looks elsewhere (sent by the TUI, `tui::notify`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotifyConfig {
    /// Ring the terminal bell (default true).
    pub bell: bool,
    /// `"osc9"` (default), `"osc777"` or `"off"`.
    pub desktop: Desktop,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            bell: true,
            desktop: Desktop::Osc9,
        }
    }
}

impl NotifyConfig {
    pub fn is_off(&self) -> bool {
        !self.bell && self.desktop == Desktop::Off
    }
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

/// `[sql]`: limits of `execute_sql`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SqlConfig {
    /// How long one statement may run before it is stopped (default 5000).
    #[serde(default)]
    pub time_limit_ms: Option<u64>,
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
    /// Hosts web tools may send requests to without asking the author first (the egress
    /// gate of the `supervised` and `locked` presets).
    #[serde(default)]
    pub allow_egress: Vec<String>,
}

impl Config {
    /// The effective config: global, then what the project's `.nbook/config.toml` may apply.
    pub fn load(dirs: &Dirs, project_root: Option<&Path>) -> Result<Config, ConfigError> {
        Config::load_report(dirs, project_root).map(|r| r.config)
    }

    /// The effective config with what loading found: warnings and the project lines held
    /// back until the author trusts them. Reads each file once, so the hash a trust is checked
    /// against is the hash of the bytes that apply.
    pub fn load_report(
        dirs: &Dirs,
        project_root: Option<&Path>,
    ) -> Result<LoadReport, ConfigError> {
        let mut report = LoadReport::default();
        let mut merged = toml::Table::new();
        let global = source::SourceFile::read(&dirs.config.join("config.toml"))?;
        let (author, author_raw) = match &global {
            Some(g) => {
                report.warnings.extend(g.unknown_key_warnings());
                report.tool_keys.extend(g.tool_keys());
                merge(&mut merged, g.table.clone());
                (g.config.clone(), g.table.clone())
            }
            None => (Config::default(), toml::Table::new()),
        };
        if let Some(root) = project_root {
            let path = root.join(".nbook").join("config.toml");
            if let Some(p) = source::SourceFile::read(&path)? {
                report.warnings.extend(p.unknown_key_warnings());
                report.tool_keys.extend(p.tool_keys());
                let (accepted, lines) = gate::split(&author, &author_raw, &p);
                if lines.is_empty() {
                    merge(&mut merged, accepted);
                } else {
                    let project = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
                    // A broken trust store trusts nothing; say so and keep going.
                    let state = trust::state(dirs, &project, &p.sha256).unwrap_or_else(|e| {
                        report.warnings.push(ConfigWarning {
                            file: trust::store_path(dirs).display().to_string(),
                            line: 0,
                            message: format!("{e}; no project config is trusted"),
                        });
                        TrustState::NotTrusted
                    });
                    let gate = ProjectGate {
                        file: p.display(),
                        project: project.display().to_string(),
                        sha256: p.sha256.clone(),
                        trust: state,
                        lines,
                    };
                    merge(
                        &mut merged,
                        if gate.applied() {
                            p.table.clone()
                        } else {
                            accepted
                        },
                    );
                    report.project = Some(gate);
                }
            }
        }
        report.config = toml::Value::Table(merged)
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Parse {
                path: "config".into(),
                message: e.message().to_string(),
            })?;
        Ok(report)
    }

    pub fn parse(text: &str, path: &str) -> Result<Config, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.into(),
            message: e.to_string(),
        })
    }
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
