//! One config file as read from disk: the sha256 of its bytes (what a trust is bound to), its
//! table (what is merged), the same bytes deserialized alone (so a bad value names this file
//! and its line), the keys serde did not use (misspellings, reported as warnings) and the line
//! of any key (for warnings and for the lines a project config would loosen).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Config, ConfigError};

/// A problem in a config file that does not stop nbook: an unknown key, or a rule for a tool
/// nbook does not have. `line` is 1-based (0 when the line could not be found).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConfigWarning {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} line {}: {}", self.file, self.line, self.message)
    }
}

/// A key of `[approval.tools]` with where it was written, checked against the registry later
/// (the config is loaded before the tools are registered).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolKey {
    pub file: String,
    pub line: usize,
    pub name: String,
}

pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    pub sha256: String,
    pub table: toml::Table,
    /// This file alone, deserialized.
    pub config: Config,
    /// Keys serde skipped, as key paths (`["approval", "tols"]`).
    pub unknown: Vec<Vec<String>>,
    doc: Option<toml_edit::ImDocument<String>>,
}

impl SourceFile {
    /// Read and check one file; `Ok(None)` when it does not exist.
    pub fn read(path: &Path) -> Result<Option<SourceFile>, ConfigError> {
        let display = path.display().to_string();
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: display,
                    source,
                })
            }
        };
        let sha256 = sha256_hex(&bytes);
        let text = String::from_utf8(bytes).map_err(|e| ConfigError::Parse {
            path: display.clone(),
            message: format!("the file is not UTF-8 text ({e}); save it as UTF-8"),
        })?;
        SourceFile::from_text(path.to_path_buf(), text, sha256).map(Some)
    }

    fn from_text(path: PathBuf, text: String, sha256: String) -> Result<SourceFile, ConfigError> {
        let display = path.display().to_string();
        let parse_error = |e: toml::de::Error| ConfigError::Parse {
            path: display.clone(),
            message: e.to_string(),
        };
        let table: toml::Table = text.parse().map_err(parse_error)?;
        // Deserialize the text itself (not the table) so a bad value's error carries its line.
        let mut unknown = Vec::new();
        let config: Config = serde_ignored::deserialize(toml::Deserializer::new(&text), |p| {
            unknown.push(segments(&p))
        })
        .map_err(parse_error)?;
        let doc = toml_edit::ImDocument::parse(text.clone()).ok();
        Ok(SourceFile {
            path,
            text,
            sha256,
            table,
            config,
            unknown,
            doc,
        })
    }

    pub fn display(&self) -> String {
        self.path.display().to_string()
    }

    /// The 1-based line where the key at `path` is written (0 if not found).
    pub fn line_of(&self, path: &[String]) -> usize {
        let Some(doc) = &self.doc else { return 0 };
        let mut item = doc.as_item();
        let mut offset = None;
        for seg in path {
            let next = match (item.as_table_like(), seg.parse::<usize>()) {
                (Some(t), _) => t.get_key_value(seg).map(|(k, v)| {
                    offset = k.span().map(|s| s.start).or(offset);
                    v
                }),
                (None, Ok(i)) => item.get(i).inspect(|v| {
                    offset = v.span().map(|s| s.start).or(offset);
                }),
                (None, Err(_)) => None,
            };
            match next {
                Some(n) => item = n,
                None => break,
            }
        }
        offset.map_or(0, |o| line_at(&self.text, o))
    }

    /// The text of a 1-based line, trimmed.
    pub fn line_text(&self, line: usize) -> String {
        line.checked_sub(1)
            .and_then(|i| self.text.lines().nth(i))
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// A warning for every key nobody reads.
    pub fn unknown_key_warnings(&self) -> Vec<ConfigWarning> {
        self.unknown
            .iter()
            .map(|path| ConfigWarning {
                file: self.display(),
                line: self.line_of(path),
                message: format!(
                    "unknown key `{}` is ignored; check its spelling against the documented config keys",
                    path.join(".")
                ),
            })
            .collect()
    }

    /// The tool names this file gives rules for.
    pub fn tool_keys(&self) -> Vec<ToolKey> {
        self.config
            .approval
            .tools
            .keys()
            .map(|name| ToolKey {
                file: self.display(),
                line: self.line_of(&["approval".into(), "tools".into(), name.clone()]),
                name: name.clone(),
            })
            .collect()
    }
}

/// serde_ignored's path as plain key segments (Option and newtype wrappers carry no key).
fn segments(p: &serde_ignored::Path<'_>) -> Vec<String> {
    match p {
        serde_ignored::Path::Root => Vec::new(),
        serde_ignored::Path::Seq { parent, index } => {
            let mut v = segments(parent);
            v.push(index.to_string());
            v
        }
        serde_ignored::Path::Map { parent, key } => {
            let mut v = segments(parent);
            v.push(key.clone());
            v
        }
        serde_ignored::Path::Some { parent }
        | serde_ignored::Path::NewtypeStruct { parent }
        | serde_ignored::Path::NewtypeVariant { parent } => segments(parent),
    }
}

fn line_at(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(0, |before| before.matches('\n').count() + 1)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> SourceFile {
        SourceFile::from_text("c.toml".into(), text.into(), sha256_hex(text.as_bytes())).unwrap()
    }

    #[test]
    fn unknown_keys_are_found_with_their_line() {
        let s = source(
            "theme = \"dark\"\nthme = \"x\"\n[web]\nallow_hosts = []\nallow_hots = [\"a\"]\n[providers.p]\nkind = \"openai\"\nbase_ur = \"x\"\n",
        );
        let w = s.unknown_key_warnings();
        let got: Vec<(usize, bool)> = w
            .iter()
            .map(|w| (w.line, w.message.contains('`')))
            .collect();
        assert_eq!(got, vec![(2, true), (5, true), (8, true)], "{w:?}");
        assert!(w[2].message.contains("providers.p.base_ur"), "{w:?}");
    }

    #[test]
    fn lines_of_dotted_and_inline_keys() {
        let s = source("approval.tools.bash = \"ask\"\n[web]\nallow_hosts = [\"x\"]\n");
        let k = |p: &[&str]| s.line_of(&p.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(k(&["approval", "tools", "bash"]), 1);
        assert_eq!(k(&["web", "allow_hosts"]), 3);
        let s = source("[web]\nallow_hosts = [\n  \"a\",\n  \"b\",\n]\n");
        let k = |p: &[&str]| s.line_of(&p.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(k(&["web", "allow_hosts", "1"]), 4);
    }

    #[test]
    fn sha256_matches_a_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
