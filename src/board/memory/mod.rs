//! Fusion's two-scope, two-layer memory (notes §5) for the book: project notes in
//! `.nbook/memory/` (`MEMORY.md` long-term, `YYYY-MM-DD.md` daily, `DREAMS.md` synthesized) and
//! each agent's private notes in `.nbook/agent-memory/<agent>/` (the same three names).
//!
//! This module owns which files are memory ([`MemoryPath::parse`] accepts exactly those
//! patterns, nothing else under `.nbook/`), who may read them (an agent reads the project's
//! notes and its own, never another agent's), the bounded read window ([`read_window`]) and
//! the append ([`append_text`]: the trimmed markdown added after a blank line, no dedupe).
//! Search is [`search`]. Paths are resolved through the workspace's path authorization, so a
//! symlinked memory folder that leads out of the project (or to another agent's folder) is
//! refused like any other escaping path.

pub mod search;
pub mod vectors;

use serde_json::{json, Value};

use crate::workspace::{Access, Workspace};

pub const PROJECT_DIR: &str = ".nbook/memory";
pub const AGENT_DIR: &str = ".nbook/agent-memory";
pub const LONG_TERM: &str = "MEMORY.md";
pub const DREAMS: &str = "DREAMS.md";

/// Window sizes of `fn_memory_get`: project files default 120 lines (at most 400), agent files
/// 40 (at most 200), as in Fusion.
pub const PROJECT_LINES: (usize, usize) = (120, 400);
pub const AGENT_LINES: (usize, usize) = (40, 200);
/// Most characters one append may add.
pub const MAX_APPEND_CHARS: usize = 20_000;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("{path:?} is not a memory file: fn_memory_get reads only .nbook/memory/MEMORY.md, .nbook/memory/DREAMS.md, .nbook/memory/YYYY-MM-DD.md and the same names under .nbook/agent-memory/<your agent id>/ (fn_memory_search names the files)")]
    NotMemory { path: String },
    #[error("{path:?} is the private memory of agent {owner:?}; an agent reads only the project's memory and its own (yours is .nbook/agent-memory/{own}/)")]
    Private {
        path: String,
        owner: String,
        own: String,
    },
    #[error("{path} does not exist yet; fn_memory_append creates it")]
    NotFound { path: String },
    #[error("startLine {start} is past the end of {path} ({lines} lines)")]
    StartPastEnd {
        path: String,
        start: usize,
        lines: usize,
    },
    #[error("the memory note is empty after trimming; pass the markdown to remember")]
    Empty,
    #[error("the memory note is {chars} characters; at most {limit} per append (split it)")]
    TooLarge { chars: usize, limit: usize },
    #[error("{path} is not UTF-8 text")]
    NotText { path: String },
    #[error("memory path refused: {0}")]
    Refused(String),
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl MemoryError {
    pub fn code(&self) -> &'static str {
        match self {
            MemoryError::NotMemory { .. } | MemoryError::Refused(_) => "MEMORY_PATH_REFUSED",
            MemoryError::Private { .. } => "MEMORY_PRIVATE",
            MemoryError::NotFound { .. } => "MEMORY_NOT_FOUND",
            MemoryError::StartPastEnd { .. } => "MEMORY_START_PAST_END",
            MemoryError::Empty => "MEMORY_EMPTY_NOTE",
            MemoryError::TooLarge { .. } => "MEMORY_NOTE_TOO_LARGE",
            MemoryError::NotText { .. } | MemoryError::Io { .. } => "MEMORY_STORAGE",
        }
    }

    pub fn details(&self) -> Value {
        let mut d = match self {
            MemoryError::NotMemory { path }
            | MemoryError::NotFound { path }
            | MemoryError::NotText { path } => json!({"path": path}),
            MemoryError::Private { path, .. } => json!({"path": path}),
            MemoryError::StartPastEnd { path, start, lines } => {
                json!({"path": path, "startLine": start, "lineCount": lines})
            }
            MemoryError::TooLarge { chars, limit } => json!({"chars": chars, "limit": limit}),
            _ => json!({}),
        };
        d["code"] = json!(self.code());
        d
    }
}

pub type MemoryResult<T> = Result<T, MemoryError>;

/// Project or agent memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    Project,
    Agent,
}

/// Long-term (`MEMORY.md`) or daily (`YYYY-MM-DD.md`, today in UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    LongTerm,
    Daily,
}

/// The id an agent's memory folder is named by: ASCII letters, digits, `-`, `_` and `.`
/// kept, anything else `_` (so an id can never name another folder).
pub fn sanitize_agent(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "_".into()
    } else {
        s
    }
}

/// A memory file address: `owner` is `None` for project memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryPath {
    pub owner: Option<String>,
    pub file: String,
}

fn is_memory_file(name: &str) -> bool {
    name == LONG_TERM || name == DREAMS || is_daily(name)
}

/// `YYYY-MM-DD.md` with a real month and day.
pub fn is_daily(name: &str) -> bool {
    let Some(date) = name.strip_suffix(".md") else {
        return false;
    };
    let b = date.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..4) && digits(5..7) && digits(8..10)) {
        return false;
    }
    let month: u32 = date[5..7].parse().unwrap_or(0);
    let day: u32 = date[8..10].parse().unwrap_or(0);
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

impl MemoryPath {
    /// Exactly the memory file patterns (leading `./` allowed), nothing else.
    pub fn parse(path: &str) -> MemoryResult<MemoryPath> {
        let p = path.trim();
        let p = p.strip_prefix("./").unwrap_or(p);
        let not = || MemoryError::NotMemory {
            path: path.to_string(),
        };
        if let Some(file) = p
            .strip_prefix(PROJECT_DIR)
            .and_then(|r| r.strip_prefix('/'))
        {
            return if is_memory_file(file) {
                Ok(MemoryPath {
                    owner: None,
                    file: file.to_string(),
                })
            } else {
                Err(not())
            };
        }
        if let Some(rest) = p.strip_prefix(AGENT_DIR).and_then(|r| r.strip_prefix('/')) {
            if let Some((agent, file)) = rest.split_once('/') {
                if !agent.is_empty() && sanitize_agent(agent) == agent && is_memory_file(file) {
                    return Ok(MemoryPath {
                        owner: Some(agent.to_string()),
                        file: file.to_string(),
                    });
                }
            }
        }
        Err(not())
    }

    pub fn project(file: &str) -> MemoryPath {
        MemoryPath {
            owner: None,
            file: file.to_string(),
        }
    }

    pub fn agent(agent: &str, file: &str) -> MemoryPath {
        MemoryPath {
            owner: Some(sanitize_agent(agent)),
            file: file.to_string(),
        }
    }

    /// The file of `layer` in `scope` for `agent`, today's date for the daily layer.
    pub fn for_append(scope: Scope, layer: Layer, agent: &str, today: &str) -> MemoryPath {
        let file = match layer {
            Layer::LongTerm => LONG_TERM.to_string(),
            Layer::Daily => format!("{today}.md"),
        };
        match scope {
            Scope::Project => MemoryPath::project(&file),
            Scope::Agent => MemoryPath::agent(agent, &file),
        }
    }

    pub fn rel(&self) -> String {
        match &self.owner {
            None => format!("{PROJECT_DIR}/{}", self.file),
            Some(a) => format!("{AGENT_DIR}/{a}/{}", self.file),
        }
    }

    pub fn is_agent(&self) -> bool {
        self.owner.is_some()
    }

    /// Refuse another agent's file.
    pub fn check_reader(&self, agent: &str) -> MemoryResult<()> {
        let own = sanitize_agent(agent);
        match &self.owner {
            Some(o) if *o != own => Err(MemoryError::Private {
                path: self.rel(),
                owner: o.clone(),
                own,
            }),
            _ => Ok(()),
        }
    }

    /// The absolute path after the workspace's authorization; the real path must still be
    /// this memory file (a symlink to elsewhere in the project is refused too).
    pub fn resolve(&self, ws: &Workspace) -> MemoryResult<std::path::PathBuf> {
        let rel = self.rel();
        let r = ws
            .resolve(&rel, Access::Read)
            .map_err(|e| MemoryError::Refused(e.to_string()))?;
        if r.rel != rel {
            return Err(MemoryError::Refused(format!(
                "{rel} resolves to {} through a link; memory files must be plain files in their folder",
                r.rel
            )));
        }
        Ok(r.abs)
    }
}

/// Today's date in UTC, `YYYY-MM-DD`.
pub fn today_utc() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// Read a memory file: `None` when it does not exist.
pub fn read_file(ws: &Workspace, p: &MemoryPath) -> MemoryResult<Option<String>> {
    let abs = p.resolve(ws)?;
    match std::fs::read(&abs) {
        Ok(b) => String::from_utf8(b)
            .map(Some)
            .map_err(|_| MemoryError::NotText { path: p.rel() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(MemoryError::Io {
            action: "read",
            path: p.rel(),
            source,
        }),
    }
}

/// A window of a memory file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Window {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub total_lines: usize,
    /// The line count asked for was above the file kind's maximum and was lowered to it.
    pub clamped: bool,
    pub text: String,
}

/// Lines `start..start+count` (1-based) of a memory file, `count` defaulting and capped by the
/// file's kind.
pub fn read_window(
    ws: &Workspace,
    p: &MemoryPath,
    start: Option<usize>,
    count: Option<usize>,
) -> MemoryResult<Window> {
    let text = read_file(ws, p)?.ok_or_else(|| MemoryError::NotFound { path: p.rel() })?;
    let (def, max) = if p.is_agent() {
        AGENT_LINES
    } else {
        PROJECT_LINES
    };
    let want = count.unwrap_or(def).max(1);
    let n = want.min(max);
    let start = start.unwrap_or(1).max(1);
    let lines: Vec<&str> = text.lines().collect();
    if start > lines.len().max(1) {
        return Err(MemoryError::StartPastEnd {
            path: p.rel(),
            start,
            lines: lines.len(),
        });
    }
    let end = (start - 1 + n).min(lines.len());
    Ok(Window {
        path: p.rel(),
        start_line: start,
        end_line: end,
        total_lines: lines.len(),
        clamped: want > max,
        text: lines
            .get(start - 1..end)
            .map(|l| l.join("\n"))
            .unwrap_or_default(),
    })
}

/// The note as it will be appended: trimmed, within the size cap.
pub fn check_note(content: &str) -> MemoryResult<&str> {
    let t = content.trim();
    if t.is_empty() {
        return Err(MemoryError::Empty);
    }
    let chars = t.chars().count();
    if chars > MAX_APPEND_CHARS {
        return Err(MemoryError::TooLarge {
            chars,
            limit: MAX_APPEND_CHARS,
        });
    }
    Ok(t)
}

/// `old` with `note` appended after a blank line (raw markdown, no dedupe).
pub fn append_text(old: &str, note: &str) -> String {
    let mut out = old.to_string();
    if !out.is_empty() {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.ends_with("\n\n") {
            out.push('\n');
        }
    }
    out.push_str(note);
    out.push('\n');
    out
}

/// Write the appended file through the workspace root's held handle (atomic replace).
pub fn write_file(ws: &Workspace, p: &MemoryPath, text: &str) -> MemoryResult<()> {
    let rel = p.rel();
    let target = ws
        .root_dir()
        .target(&rel)
        .map_err(|why| MemoryError::Refused(format!("{rel}: {why}")))?;
    if target.display() != rel {
        return Err(MemoryError::Refused(format!(
            "{rel} resolves to {} through a link; memory files must be plain files in their folder",
            target.display()
        )));
    }
    target
        .write(text.as_bytes())
        .map_err(|source| MemoryError::Io {
            action: "write",
            path: rel,
            source,
        })
}

/// The memory files `agent` may read that exist, project files first; each with its text.
pub fn readable_files(ws: &Workspace, agent: &str) -> MemoryResult<Vec<(MemoryPath, String)>> {
    let mut out = Vec::new();
    let own = sanitize_agent(agent);
    for (dir, owner) in [
        (PROJECT_DIR.to_string(), None),
        (format!("{AGENT_DIR}/{own}"), Some(own.clone())),
    ] {
        let mut names: Vec<String> = match std::fs::read_dir(ws.root().join(&dir)) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| is_memory_file(n))
                .collect(),
            Err(_) => Vec::new(),
        };
        names.sort();
        for name in names {
            let p = MemoryPath {
                owner: owner.clone(),
                file: name,
            };
            // A file that cannot be read (a link out of the project, not UTF-8) is left out of
            // search; fn_memory_get on it says why.
            if let Ok(Some(text)) = read_file(ws, &p) {
                out.push((p, text));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_patterns_are_memory() {
        for ok in [
            ".nbook/memory/MEMORY.md",
            "./.nbook/memory/2026-03-01.md",
            ".nbook/memory/DREAMS.md",
            ".nbook/agent-memory/exec-1/MEMORY.md",
            ".nbook/agent-memory/a_b/2026-12-31.md",
        ] {
            assert!(MemoryPath::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            ".nbook/memory/notes.md",
            ".nbook/memory/../project.sqlite",
            ".nbook/memory/sub/MEMORY.md",
            ".nbook/memory/2026-13-01.md",
            ".nbook/agent-memory/../memory/MEMORY.md",
            ".nbook/agent-memory/a b/MEMORY.md",
            ".nbook/agent-memory/MEMORY.md",
            "manuscript/ch1.md",
            "/etc/passwd",
        ] {
            assert!(MemoryPath::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn append_separates_notes_by_a_blank_line() {
        assert_eq!(append_text("", "a"), "a\n");
        assert_eq!(append_text("a\n", "b"), "a\n\nb\n");
        assert_eq!(append_text("a", "b"), "a\n\nb\n");
        assert_eq!(append_text("a\n\n", "b"), "a\n\nb\n");
    }
}
