//! The author's trust in project configs that loosen their policy:
//! `<config dir>/trusted-projects.json`, outside every project so a project cannot trust
//! itself. An entry is bound to the project's canonical path and the sha256 of its
//! `.nbook/config.toml` bytes; when the file changes the hash no longer matches and the entry
//! is ignored (reported as stale) until the author trusts the new version.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{ConfigError, Dirs};

pub const FILE_NAME: &str = "trusted-projects.json";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustEntry {
    /// The project's canonical root.
    pub project: String,
    /// sha256 of the project's `.nbook/config.toml` when it was trusted.
    pub config_sha256: String,
    pub trusted_at: String,
    /// The loosening lines the author saw when trusting (a record, not used for matching).
    #[serde(default)]
    pub lines: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default = "version")]
    version: u32,
    #[serde(default)]
    projects: Vec<TrustEntry>,
}

fn version() -> u32 {
    1
}

/// What the store says about one project config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustState {
    Trusted,
    /// Trusted once, but the file changed since.
    Stale,
    NotTrusted,
}

pub fn store_path(dirs: &Dirs) -> PathBuf {
    dirs.config.join(FILE_NAME)
}

fn read(dirs: &Dirs) -> Result<TrustFile, ConfigError> {
    let path = store_path(dirs);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TrustFile::default()),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.display().to_string(),
                source,
            })
        }
    };
    serde_json::from_str(&text).map_err(|e| ConfigError::Parse {
        path: path.display().to_string(),
        message: format!("{e}; fix or delete the file (every project then needs trusting again)"),
    })
}

fn write(dirs: &Dirs, file: &TrustFile) -> Result<(), ConfigError> {
    let path = store_path(dirs);
    let io = |source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(&dirs.config).map_err(io)?;
    let text = serde_json::to_string_pretty(file).map_err(|e| ConfigError::Parse {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    // Write a sibling and rename it over, so a crash never leaves half a file.
    let tmp = dirs
        .config
        .join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text + "\n").map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)
}

pub fn state(dirs: &Dirs, project: &Path, sha256: &str) -> Result<TrustState, ConfigError> {
    let key = project.display().to_string();
    let file = read(dirs)?;
    let mut seen = false;
    for e in file.projects.iter().filter(|e| e.project == key) {
        if e.config_sha256 == sha256 {
            return Ok(TrustState::Trusted);
        }
        seen = true;
    }
    Ok(if seen {
        TrustState::Stale
    } else {
        TrustState::NotTrusted
    })
}

/// Trust `sha256` for `project`, replacing any earlier trust of that project.
pub fn trust(
    dirs: &Dirs,
    project: &Path,
    sha256: &str,
    lines: Vec<String>,
) -> Result<TrustEntry, ConfigError> {
    let key = project.display().to_string();
    let mut file = read(dirs)?;
    file.projects.retain(|e| e.project != key);
    let entry = TrustEntry {
        project: key,
        config_sha256: sha256.to_string(),
        trusted_at: time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default(),
        lines,
    };
    file.projects.push(entry.clone());
    file.version = version();
    write(dirs, &file)?;
    Ok(entry)
}

/// Forget every trust of `project`; true when there was one.
pub fn revoke(dirs: &Dirs, project: &Path) -> Result<bool, ConfigError> {
    let key = project.display().to_string();
    let mut file = read(dirs)?;
    let before = file.projects.len();
    file.projects.retain(|e| e.project != key);
    if file.projects.len() == before {
        return Ok(false);
    }
    write(dirs, &file)?;
    Ok(true)
}
