//! The config a running nbook uses, swapped whole when `config.toml` changes: the engine, the
//! agent host and the TUI share one `LiveConfig`, so a model written by the setup form (or by
//! the author in an editor) is the one the next run uses. `Watch` notices the change by the
//! bytes of the files, not their mtime (editors that keep the mtime, coarse file systems).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use super::{Config, ConfigError, Dirs, LoadReport};

/// The effective config, readable from any thread, with the author's config file it came from.
#[derive(Clone, Debug)]
pub struct LiveConfig {
    current: Arc<RwLock<Arc<Config>>>,
    file: PathBuf,
}

impl LiveConfig {
    pub fn new(config: Config, file: PathBuf) -> LiveConfig {
        LiveConfig {
            current: Arc::new(RwLock::new(Arc::new(config))),
            file,
        }
    }

    /// A snapshot: a reload swaps in a new config, this one stays as it was.
    pub fn get(&self) -> Arc<Config> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn set(&self, config: Config) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(config);
    }

    /// The author's `config.toml` (where "no model" errors tell the author to write).
    pub fn file(&self) -> &Path {
        &self.file
    }
}

/// The text of the error for a run that has no model: the file to edit and the lines that
/// give the profile one (the shape the Sessions pane's model setup writes).
pub fn no_model_message(config_file: &Path, profile: &str) -> String {
    format!(
        "no model for profile {profile}: add a model to {}: [providers.local] kind = \"openai\", \
         base_url = \"http://127.0.0.1:8080/v1\"; [models.local] provider = \"local\", \
         name = \"<the server's model id>\"; [defaults] model = \"local\" (or [defaults.profiles] \
         \"{profile}\" = \"local\"); or press `m` in the Sessions pane to have them written for you",
        config_file.display()
    )
}

/// What a reload found.
#[derive(Debug)]
pub enum Reload {
    /// The files changed and loaded: the new config is in force.
    Applied(Box<LoadReport>),
    /// The files changed but do not load: the previous config stays in force.
    Failed(ConfigError),
}

/// The config files (global, then the project's) as last seen.
#[derive(Debug)]
pub struct Watch {
    dirs: Dirs,
    project: Option<PathBuf>,
    seen: Mutex<Vec<Option<Vec<u8>>>>,
}

impl Watch {
    pub fn new(dirs: &Dirs, project: Option<&Path>) -> Watch {
        let w = Watch {
            dirs: dirs.clone(),
            project: project.map(Path::to_path_buf),
            seen: Mutex::new(Vec::new()),
        };
        *w.seen.lock().unwrap_or_else(|e| e.into_inner()) = w.snapshot();
        w
    }

    fn files(&self) -> Vec<PathBuf> {
        let mut out = vec![self.dirs.config.join("config.toml")];
        if let Some(p) = &self.project {
            out.push(p.join(".nbook").join("config.toml"));
        }
        out
    }

    fn snapshot(&self) -> Vec<Option<Vec<u8>>> {
        self.files().iter().map(|f| std::fs::read(f).ok()).collect()
    }

    /// Load the config again if a file changed since the last look; `None` when none did.
    /// `tools` are the registered tool names (rules for other names are warned about).
    pub fn reload_if_changed<'a>(
        &self,
        live: &LiveConfig,
        tools: impl IntoIterator<Item = &'a str>,
    ) -> Option<Reload> {
        let now = self.snapshot();
        {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            if *seen == now {
                return None;
            }
            *seen = now;
        }
        Some(
            match Config::load_report(&self.dirs, self.project.as_deref()) {
                Ok(mut report) => {
                    report.check_tool_names(tools);
                    live.set(report.config.clone());
                    Reload::Applied(Box::new(report))
                }
                Err(e) => Reload::Failed(e),
            },
        )
    }
}
