//! Memory (`fn_memory_search`, `fn_memory_get`, `fn_memory_append`) over
//! `crate::board::memory`: the project's notes in `.nbook/memory/` and each agent's private
//! notes in `.nbook/agent-memory/<agent>/`.
//!
//! **Who is the agent.** A durable agent's session carries its id under the session-state key
//! [`SESSION_AGENT`]; any other session is its own agent (its session id), so its private notes
//! last as long as the session. An agent reads the project's notes and its own, never another's.
//!
//! **Appends are mutating calls and go through the approval gate.** Fusion exempts memory
//! appends from its action gate; nbook's contract is that every call that changes the project
//! is decided by the policy (DESIGN principle 2), and `.nbook/memory/` is read by every agent of
//! the book, so a note there steers them all. The preview is the file's diff and its write
//! target the memory file, so under `supervised` the author approves it once or grants "allow
//! for this session" on that file (`a`), and under `neurobook` it runs in normal mode.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::read_output;
use crate::board::memory::search::{self, Found, DEFAULT_LIMIT, MAX_LIMIT};
use crate::board::memory::vectors::Store;
use crate::board::memory::{self as mem, Layer, MemoryError, MemoryPath, Scope};
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{Preview, PreviewBody};
use crate::protocol::{ChangeKind, FileChange, TargetState};
use crate::subject::vectors::Embedder;

/// Session-state key holding the id of the durable agent a session runs as.
pub const SESSION_AGENT: &str = "board.agent";

const MEMORY: Effects = {
    use crate::engine::tool::Domain::*;
    Effects::touches(&[Memory])
};

/// The agent a call acts for (see the module comment).
pub fn agent_id(ctx: &ToolCtx) -> String {
    let id = ctx
        .session_state
        .get(SESSION_AGENT)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| ctx.session_id.clone());
    mem::sanitize_agent(&id)
}

fn err(e: MemoryError) -> ToolError {
    ToolError::Coded {
        message: format!("{e} (nothing was changed)"),
        details: e.details(),
    }
}

/// The configured embedding service as the memory search uses it.
struct Service {
    provider: String,
    cfg: crate::net::embed::EmbedConfig,
}

impl Embedder for Service {
    fn provider(&self) -> &str {
        &self.provider
    }
    fn model(&self) -> &str {
        &self.cfg.model
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, crate::net::embed::EmbedError> {
        self.cfg.embed(texts, std::time::Duration::from_secs(60))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    #[schemars(length(min = 1, max = 2000))]
    pub query: String,
    /// Default 5, at most 20.
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<usize>,
}

pub struct MemorySearch;

impl TypedTool for MemorySearch {
    type Args = SearchArgs;
    const NAME: &'static str = "fn_memory_search";
    const GROUP: &'static str = "memory";
    const DESCRIPTION: &'static str = "Search the book's memory notes (.nbook/memory/) and your own private notes (.nbook/agent-memory/<you>/), in windows of 12 lines. Uses the configured embedding service when there is one, else — or when it fails — counts the query's words and says it fell back to text search. Your own notes rank first. Each hit is `N. path:a-b (score, backend)` and a snippet; `NONE` when nothing matches. Read more with fn_memory_get on the path and startLine a. details {hits: [{path, startLine, endLine, score, backend, scope, snippet}], backend, fallback, windows}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = MEMORY;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &SearchArgs) -> Result<ToolOutput, ToolError> {
        let query = a.query.trim();
        if query.is_empty() {
            return Err(ToolError::Coded {
                message: "query is empty; pass the words or question to search for".into(),
                details: json!({"code": "INVALID_ARGUMENT", "field": "query"}),
            });
        }
        let files = mem::readable_files(&ctx.workspace, &agent_id(ctx)).map_err(err)?;
        let limit = a.limit.unwrap_or(DEFAULT_LIMIT).min(MAX_LIMIT);
        let found: Found =
            match crate::net::embed::EmbedConfig::from_config(&ctx.config, "fn_memory_search") {
                Ok(cfg) => {
                    let service = Service {
                        provider: ctx
                            .config
                            .embedding
                            .as_ref()
                            .map(|e| e.provider.clone())
                            .unwrap_or_default(),
                        cfg,
                    };
                    let store = Store::new(&ctx.workspace.nbook_dir(), service.model());
                    search::search(&files, query, limit, Ok((&service, &store)))
                }
                Err(crate::net::embed::EmbedError::NotConfigured { .. }) => search::search(
                    &files,
                    query,
                    limit,
                    Err("no embedding service is configured ([embedding] in config.toml)".into()),
                ),
                Err(e) => search::search(&files, query, limit, Err(e.to_string())),
            }
            .map_err(err)?;
        Ok(read_output(
            search::render(&found),
            serde_json::to_value(&found).unwrap_or_default(),
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    /// A memory file: .nbook/memory/MEMORY.md, .nbook/memory/DREAMS.md,
    /// .nbook/memory/YYYY-MM-DD.md, or the same names under .nbook/agent-memory/<you>/.
    #[schemars(length(min = 1, max = 400))]
    pub path: String,
    /// First line (1-based), default 1.
    #[serde(rename = "startLine")]
    #[schemars(range(min = 1))]
    pub start_line: Option<usize>,
    /// Lines to read: default 120 (at most 400) for project files, 40 (at most 200) for agent
    /// files.
    #[serde(rename = "lineCount")]
    #[schemars(range(min = 1, max = 400))]
    pub line_count: Option<usize>,
}

pub struct MemoryGet;

impl TypedTool for MemoryGet {
    type Args = GetArgs;
    const NAME: &'static str = "fn_memory_get";
    const GROUP: &'static str = "memory";
    const DESCRIPTION: &'static str = "Read a bounded window of one memory file: .nbook/memory/MEMORY.md, DREAMS.md or YYYY-MM-DD.md, or the same names under .nbook/agent-memory/<your agent id>/. startLine default 1; lineCount default 120 (max 400) for project files, 40 (max 200) for agent files. Any other path is refused (MEMORY_PATH_REFUSED), another agent's file too (MEMORY_PRIVATE). details {path, startLine, endLine, totalLines, clamped, text}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = MEMORY;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &GetArgs) -> Result<ToolOutput, ToolError> {
        let p = MemoryPath::parse(&a.path).map_err(err)?;
        p.check_reader(&agent_id(ctx)).map_err(err)?;
        let w = mem::read_window(&ctx.workspace, &p, a.start_line, a.line_count).map_err(err)?;
        let mut text = format!(
            "{} lines {}-{} of {}{}:\n",
            w.path,
            w.start_line,
            w.end_line,
            w.total_lines,
            if w.clamped {
                " (lineCount lowered to this file's maximum)"
            } else {
                ""
            }
        );
        text.push_str(&w.text);
        if w.end_line < w.total_lines {
            text.push_str(&format!(
                "\n… more from startLine {} (fn_memory_get)",
                w.end_line + 1
            ));
        }
        Ok(read_output(
            text,
            serde_json::to_value(&w).unwrap_or_default(),
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendArgs {
    /// project (default): the book's shared notes; agent: your private notes.
    pub scope: Option<Scope>,
    /// long-term: MEMORY.md; daily: today's YYYY-MM-DD.md (UTC).
    pub layer: Layer,
    /// The markdown to remember (trimmed; at most 20000 characters).
    pub content: String,
}

pub struct MemoryAppend;

impl MemoryAppend {
    fn target(ctx: &ToolCtx, a: &AppendArgs) -> MemoryPath {
        MemoryPath::for_append(
            a.scope.unwrap_or(Scope::Project),
            a.layer,
            &agent_id(ctx),
            &mem::today_utc(),
        )
    }

    /// The file's text before and after the append.
    fn texts(ctx: &ToolCtx, a: &AppendArgs) -> Result<(MemoryPath, String, String), ToolError> {
        let note = mem::check_note(&a.content).map_err(err)?;
        let p = Self::target(ctx, a);
        let old = mem::read_file(&ctx.workspace, &p)
            .map_err(err)?
            .unwrap_or_default();
        let new = mem::append_text(&old, note);
        Ok((p, old, new))
    }
}

fn fingerprint(text: &str) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let hex: String = d
        .as_ref()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{} bytes sha256:{hex}", text.len())
}

impl TypedTool for MemoryAppend {
    type Args = AppendArgs;
    const NAME: &'static str = "fn_memory_append";
    const GROUP: &'static str = "memory";
    const DESCRIPTION: &'static str = "Append a markdown note to memory: scope project (default; .nbook/memory/, read by every agent of the book) or agent (your private .nbook/agent-memory/<you>/), layer long-term (MEMORY.md) or daily (today's YYYY-MM-DD.md). The note is trimmed and added after a blank line (no dedupe: search first). This changes the project, so it waits for the author's approval like any mutating call (the preview is the file's diff; the author may allow it for the rest of the session).";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = MEMORY;
    fn write_targets(&self, ctx: &ToolCtx, a: &AppendArgs) -> Vec<String> {
        vec![Self::target(ctx, a).rel()]
    }
    fn preview(&self, ctx: &ToolCtx, a: &AppendArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let (p, old, new) = Self::texts(ctx, a)?;
        let rel = p.rel();
        let d = crate::tools::preview_diff::bounded_diff(&rel, &old, &new);
        Ok(Preview {
            summary: format!("Append to {rel} (+{} lines)", d.added),
            body: PreviewBody::Files {
                changes: vec![FileChange {
                    path: rel.clone(),
                    kind: if old.is_empty() {
                        ChangeKind::Add
                    } else {
                        ChangeKind::Update
                    },
                    move_to: None,
                    diff: d.text,
                    added: d.added,
                    removed: d.removed,
                }],
            },
            targets: vec![TargetState {
                key: rel,
                fingerprint: fingerprint(&old),
            }],
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &AppendArgs) -> Result<ToolOutput, ToolError> {
        let (p, old, new) = Self::texts(ctx, a)?;
        mem::write_file(&ctx.workspace, &p, &new).map_err(err)?;
        let rel = p.rel();
        let lines = new.lines().count();
        Ok(ToolOutput {
            content: format!(
                "Appended {} characters to {rel} (now {lines} lines).",
                new.len() - old.len()
            ),
            details: Some(json!({"path": rel, "totalLines": lines, "bytes": new.len()})),
            changed_paths: vec![rel],
            ..ToolOutput::default()
        })
    }
}
