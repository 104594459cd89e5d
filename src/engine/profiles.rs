//! Agent profiles: `profiles/<key>.toml` plus a sibling `<key>.md` system prompt. Built-ins are
//! embedded in the binary; the config dir's `profiles/` and the project's `.nbook/profiles/`
//! may add or override them (project wins). A malformed file is reported and skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use include_dir::{include_dir, Dir};
use serde::{Deserialize, Serialize};
use serde_json::Value;

static BUILTIN: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/profiles");

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Creation {
    Public,
    SystemOnly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorldAccess {
    None,
    Read,
    Write,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    key: String,
    name: String,
    description: String,
    creation: Creation,
    world_access: WorldAccess,
    tools: Vec<String>,
    /// In a task session, route the file tools to the task's draft area (board roles that
    /// write prose: executor, step-session).
    #[serde(default)]
    draft: bool,
    #[serde(default)]
    initial_schema: Option<toml::Value>,
    #[serde(default)]
    payload_schema: Option<toml::Value>,
    #[serde(default)]
    output_schema: Option<toml::Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Profile {
    pub key: String,
    pub name: String,
    pub description: String,
    pub creation: Creation,
    pub world_access: WorldAccess,
    pub tools: Vec<String>,
    /// A task session of this profile reads and writes files in the task's draft area
    /// (`crate::engine::draft_route`), never in the manuscript.
    pub draft: bool,
    pub initial_schema: Option<Value>,
    pub payload_schema: Option<Value>,
    pub output_schema: Option<Value>,
    pub prompt: String,
    /// Where it came from: `builtin`, or the file path.
    pub source: String,
}

impl Profile {
    pub fn allows(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t == tool)
    }

    /// A profile for headless one-off calls when none is named; never used by agents.
    pub fn parse(toml_text: &str, prompt: &str, source: &str) -> Result<Profile, ProfileError> {
        let err = |message: String| ProfileError {
            origin: source.to_string(),
            message,
        };
        let f: ProfileFile = toml::from_str(toml_text).map_err(|e| err(e.to_string()))?;
        if f.key.trim().is_empty() {
            return Err(err("`key` must not be empty".into()));
        }
        let schema = |v: Option<toml::Value>, field: &str| -> Result<Option<Value>, ProfileError> {
            match v {
                None => Ok(None),
                Some(v) => {
                    let json = serde_json::to_value(v).map_err(|e| err(e.to_string()))?;
                    jsonschema::validator_for(&json)
                        .map_err(|e| err(format!("`{field}` is not a valid JSON Schema: {e}")))?;
                    Ok(Some(json))
                }
            }
        };
        Ok(Profile {
            initial_schema: schema(f.initial_schema, "initial_schema")?,
            payload_schema: schema(f.payload_schema, "payload_schema")?,
            output_schema: schema(f.output_schema, "output_schema")?,
            key: f.key,
            name: f.name,
            description: f.description,
            creation: f.creation,
            world_access: f.world_access,
            tools: f.tools,
            draft: f.draft,
            prompt: prompt.to_string(),
            source: source.to_string(),
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("profile {origin}: {message}")]
pub struct ProfileError {
    pub origin: String,
    pub message: String,
}

/// What the profile folders hold, as (path, modified, length) of each file: a change in any
/// means the profiles are read again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fingerprint(Vec<(PathBuf, Option<std::time::SystemTime>, u64)>);

impl Fingerprint {
    pub fn of(dirs: &[PathBuf]) -> Fingerprint {
        let mut v = Vec::new();
        for d in dirs {
            let Ok(entries) = std::fs::read_dir(d) else {
                continue;
            };
            for e in entries.flatten() {
                if let Ok(m) = e.metadata() {
                    v.push((e.path(), m.modified().ok(), m.len()));
                }
            }
        }
        v.sort();
        Fingerprint(v)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Profiles {
    by_key: BTreeMap<String, Arc<Profile>>,
}

impl Profiles {
    /// Built-ins, then each extra folder in order (later folders override earlier ones).
    pub fn load(extra_dirs: &[PathBuf]) -> (Profiles, Vec<ProfileError>) {
        let mut out = Profiles::default();
        let mut errors = Vec::new();
        for file in BUILTIN.files() {
            let path = file.path();
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                continue;
            }
            let text = file.contents_utf8().unwrap_or_default();
            let prompt = BUILTIN
                .get_file(path.with_extension("md"))
                .and_then(|f| f.contents_utf8())
                .unwrap_or_default();
            match Profile::parse(text, prompt, "builtin") {
                Ok(p) => out.insert(p),
                Err(e) => errors.push(e),
            }
        }
        for dir in extra_dirs {
            out.load_dir(dir, &mut errors);
        }
        (out, errors)
    }

    fn load_dir(&mut self, dir: &Path, errors: &mut Vec<ProfileError>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                continue;
            }
            let source = path.display().to_string();
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(ProfileError {
                        origin: source,
                        message: e.to_string(),
                    });
                    continue;
                }
            };
            let prompt = std::fs::read_to_string(path.with_extension("md")).unwrap_or_default();
            match Profile::parse(&text, &prompt, &source) {
                Ok(p) if p.key == super::author::AUTHOR_PROFILE => errors.push(ProfileError {
                    origin: source,
                    message: format!(
                        "the key `{}` is reserved for the author's own calls from the TUI; this file is ignored (give it another key)",
                        p.key
                    ),
                }),
                Ok(p) => self.insert(p),
                Err(e) => errors.push(e),
            }
        }
    }

    pub fn insert(&mut self, p: Profile) {
        self.by_key.insert(p.key.clone(), Arc::new(p));
    }

    pub fn get(&self, key: &str) -> Option<Arc<Profile>> {
        self.by_key.get(key).cloned()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Profile>> {
        self.by_key.values()
    }
}

/// Profiles other than the author's that list an author-only tool (`is_author_only`): each is
/// reported; the engine refuses those calls for any actor but the author anyway.
pub fn author_only_listed(
    profiles: &Profiles,
    is_author_only: impl Fn(&str) -> bool,
) -> Vec<ProfileError> {
    profiles
        .iter()
        .filter(|p| p.key != super::author::AUTHOR_PROFILE)
        .flat_map(|p| {
            p.tools
                .iter()
                .filter(|t| is_author_only(t))
                .map(|t| ProfileError {
                    origin: p.source.clone(),
                    message: format!(
                        "profile {} lists {t}, which only the author may call (from the TUI); calls from this profile will be refused",
                        p.key
                    ),
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_file_is_reported_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bad.toml"), "key = \"x\"\nname = 3\n").unwrap();
        std::fs::write(
            dir.path().join("good.toml"),
            "key = \"mine\"\nname = \"Mine\"\ndescription = \"d\"\ncreation = \"public\"\nworld_access = \"none\"\ntools = [\"read\"]\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("good.md"), "You are mine.").unwrap();
        let (profiles, errors) = Profiles::load(&[dir.path().to_path_buf()]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].origin.ends_with("bad.toml"));
        let mine = profiles.get("mine").unwrap();
        assert_eq!(mine.prompt, "You are mine.");
        assert!(mine.allows("read") && !mine.allows("write"));
    }

    #[test]
    fn unknown_field_and_bad_schema_are_errors() {
        let base = "key = \"k\"\nname = \"K\"\ndescription = \"d\"\ncreation = \"public\"\nworld_access = \"none\"\ntools = []\n";
        assert!(Profile::parse(&format!("{base}colour = 1\n"), "", "t").is_err());
        assert!(Profile::parse(&format!("{base}[output_schema]\ntype = 5\n"), "", "t").is_err());
        assert!(Profile::parse(&format!("{base}world_access2 = 1\n"), "", "t").is_err());
    }
}
