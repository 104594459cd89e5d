//! Subject memory tools (notes §9): `subject_event_append` and `subject_memory_update`
//! (both mutating, so read-only modes hold them for approval like any write) and
//! `subject_rag_search` (a parallel-safe read over the embedding index). The work is done in
//! `crate::subject`; this file holds the schemas, previews and result shapes, and wires the
//! memory curator to the engine's agent host.

use serde_json::{json, Value};

use super::files::fingerprint;
use super::patch::unified_diff;
use crate::engine::agents::{InvokeError, InvokeMode, InvokeRequest};
use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{ChangeKind, FileChange, Preview, PreviewBody, TargetState};
use crate::subject::rag::{self, ConfiguredEmbedder};
use crate::subject::update::{self, Outcome, Reply};
use crate::subject::{dirty, events, io_lock, read_source, Source, Subject};
use crate::workspace::{atomic_write, Access, Resolved};

pub const CURATOR_PROFILE: &str = "memory.curator";

fn fail(msg: impl std::fmt::Display) -> ToolError {
    ToolError::failed(msg.to_string())
}

/// The arguments of every subject tool name the subject's folder.
trait SubjectArgs {
    fn subject_path(&self) -> &str;
}

macro_rules! subject_args {
    ($($ty:ident),*) => {$(
        impl SubjectArgs for $ty {
            fn subject_path(&self) -> &str {
                &self.subject_path
            }
        }
    )*};
}
subject_args!(EventAppendArgs, MemoryUpdateArgs, RagSearchArgs);

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventAppendArgs {
    /// The subject's folder, project-relative (e.g. simulation/subjects/erina) or workspace/<project>/<path>
    #[schemars(length(min = 1))]
    pub subject_path: String,
    #[schemars(length(min = 1))]
    pub events: Vec<EventArgs>,
}

#[derive(Debug, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventArgs {
    /// Simulation tick
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick: Option<u64>,
    /// Story time, as the project writes it
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub time: Option<String>,
    /// What happened, from the subject's side
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub text: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryUpdateArgs {
    /// The subject's folder, project-relative (e.g. simulation/subjects/erina) or workspace/<project>/<path>
    #[schemars(length(min = 1))]
    pub subject_path: String,
    /// New facts the subject now knows or believes, one per item
    #[schemars(length(min = 1), inner(length(min = 1), regex(pattern = r"\S")))]
    pub facts: Vec<String>,
}

#[derive(Clone, Copy, Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SourceArg {
    Events,
    Memory,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RagSearchArgs {
    /// The subject's folder, project-relative (e.g. simulation/subjects/erina) or workspace/<project>/<path>
    #[schemars(length(min = 1))]
    pub subject_path: String,
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub query: String,
    /// Exactly one source: ["events"] or ["memory"]
    #[schemars(length(min = 1, max = 1))]
    pub sources: Vec<SourceArg>,
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<u64>,
}

fn subject(ctx: &ToolCtx, args: &impl SubjectArgs, access: Access) -> Result<Subject, ToolError> {
    Subject::resolve(&ctx.workspace, args.subject_path(), access).map_err(fail)
}

fn source_file(
    ctx: &ToolCtx,
    args: &impl SubjectArgs,
    source: Source,
) -> Result<(Subject, Resolved), ToolError> {
    let s = subject(ctx, args, Access::Write)?;
    let f = s
        .source_file(&ctx.workspace, source, Access::Write)
        .map_err(fail)?;
    Ok((s, f))
}

fn targets_of(ctx: &ToolCtx, args: &impl SubjectArgs, source: Source) -> Vec<String> {
    source_file(ctx, args, source)
        .map(|(_, f)| vec![f.display])
        .unwrap_or_else(|_| {
            vec![format!(
                "{}/{}",
                args.subject_path().trim_end_matches('/'),
                source.file_name()
            )]
        })
}

// ---------------------------------------------------------------------------------------------

pub struct SubjectEventAppend;

/// The lines an append adds, the old content and the new content.
fn planned_append(
    ctx: &ToolCtx,
    args: &EventAppendArgs,
) -> Result<(Subject, Resolved, Option<String>, String, usize), ToolError> {
    let (s, file) = source_file(ctx, args, Source::Events)?;
    let mut lines = Vec::new();
    for (i, e) in args.events.iter().enumerate() {
        let e = serde_json::to_value(e).map_err(|why| fail(format!("/events/{i}: {why}")))?;
        lines.push(events::line_for(&e).map_err(|why| fail(format!("/events/{i}: {why}")))?);
    }
    if lines.is_empty() {
        return Err(fail("events must hold at least one event"));
    }
    let old = read_source(&file.abs, &file.display).map_err(fail)?;
    let new = events::appended(old.as_deref(), &lines);
    Ok((s, file, old, new, lines.len()))
}

impl TypedTool for SubjectEventAppend {
    type Args = EventAppendArgs;
    const NAME: &'static str = "subject_event_append";
    const GROUP: &'static str = "subject_memory";
    const DESCRIPTION: &'static str = "Append events to a subject's events.jsonl (one JSON line each: tick?, time?, text) and mark the subject's events index for rebuild. The subject folder must exist.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Memory])
    };
    fn write_targets(&self, ctx: &ToolCtx, args: &EventAppendArgs) -> Vec<String> {
        targets_of(ctx, args, Source::Events)
    }
    fn preview(
        &self,
        ctx: &ToolCtx,
        args: &EventAppendArgs,
        _raw: &Value,
    ) -> Result<Preview, ToolError> {
        let (_, file, old, new, n) = planned_append(ctx, args)?;
        let (diff, added, removed) =
            unified_diff(&file.display, old.as_deref().unwrap_or(""), &new);
        Ok(Preview {
            summary: format!(
                "Append {n} event{} to {}",
                if n == 1 { "" } else { "s" },
                file.display
            ),
            targets: vec![TargetState {
                key: file.display.clone(),
                fingerprint: fingerprint(&file.abs),
            }],
            body: PreviewBody::Files {
                changes: vec![FileChange {
                    path: file.display.clone(),
                    kind: if old.is_some() {
                        ChangeKind::Update
                    } else {
                        ChangeKind::Add
                    },
                    move_to: None,
                    diff,
                    added,
                    removed,
                }],
            },
        })
    }
    fn run(&self, ctx: &ToolCtx, args: &EventAppendArgs) -> Result<ToolOutput, ToolError> {
        // Read, write and mark under one lock, so two appends never lose each other's lines.
        let _guard = io_lock();
        let (s, file, _, new, n) = planned_append(ctx, args)?;
        atomic_write(&file.abs, new.as_bytes())
            .map_err(|e| fail(format!("cannot write {}: {e}", file.display)))?;
        dirty::mark(&s.dirty_path(), s.key(), Source::Events).map_err(fail)?;
        Ok(ToolOutput {
            content: format!(
                "Appended {n} event{} to {}; the events index will be rebuilt on the next subject_rag_search.",
                if n == 1 { "" } else { "s" },
                file.display
            ),
            details: Some(json!({
                "subjectPath": s.display(),
                "sourcePath": file.display,
                "appended": n,
                "dirty": true,
            })),
            changed_paths: vec![file.display.clone()],
            state_updates: Vec::new(),
        })
    }
}

// ---------------------------------------------------------------------------------------------

pub struct SubjectMemoryUpdate;

fn facts(args: &MemoryUpdateArgs) -> Vec<String> {
    args.facts.iter().map(|f| f.trim().to_string()).collect()
}

/// The memory curator could not be run at all (a bad reply is retried instead).
#[derive(Debug, thiserror::Error)]
#[error("the memory curator (session {session}) could not be started: {source}; memory.jsonl was not changed")]
struct CuratorUnavailable {
    session: String,
    #[source]
    source: InvokeError,
}

/// One curator invocation through the engine's agent host.
fn ask_curator(
    host: &dyn crate::engine::agents::AgentHost,
    session_id: &str,
    call_id: &str,
    message: &str,
) -> Result<Reply, CuratorUnavailable> {
    let outcome = host
        .invoke_blocking(InvokeRequest {
            caller: None,
            session_id: session_id.to_string(),
            message: Some(message.to_string()),
            input: None,
            mode: InvokeMode::Prompt,
            model: None,
            origin_call_id: Some(call_id.to_string()),
        })
        .map_err(|source| CuratorUnavailable {
            session: session_id.to_string(),
            source,
        })?;
    if outcome.status != "completed" {
        let why = outcome
            .error
            .clone()
            .unwrap_or_else(|| outcome.final_message.clone());
        return Ok(Reply::Failed(format!(
            "the curator run ended with status {}: {why}",
            outcome.status
        )));
    }
    if outcome.data.is_null() {
        return Ok(Reply::Failed(
            "the curator finished without report_result data; finish with report_result and data {\"patch\": [...]}".into(),
        ));
    }
    Ok(Reply::Data(outcome.data))
}

impl TypedTool for SubjectMemoryUpdate {
    type Args = MemoryUpdateArgs;
    const NAME: &'static str = "subject_memory_update";
    const GROUP: &'static str = "subject_memory";
    const DESCRIPTION: &'static str = "Merge new facts into a subject's memory.jsonl: a memory.curator agent proposes an RFC 6902 patch, which is checked and written only if memory.jsonl did not change meanwhile. Outcome: updated, unchanged or needs_review (nothing written).";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Memory])
    };
    fn write_targets(&self, ctx: &ToolCtx, args: &MemoryUpdateArgs) -> Vec<String> {
        targets_of(ctx, args, Source::Memory)
    }
    /// The patch only exists after the curator has run, and running it before approval would
    /// spend a model call on a change the author may reject. So the preview states what will
    /// happen — the subject, the facts, the current memory count, and that a memory.curator
    /// agent will propose the patch — and fingerprints memory.jsonl, so a change to the file
    /// before approval makes the call stale. The patch itself is re-checked before writing.
    fn preview(
        &self,
        ctx: &ToolCtx,
        args: &MemoryUpdateArgs,
        _raw: &Value,
    ) -> Result<Preview, ToolError> {
        let s = subject(ctx, args, Access::Write)?;
        let loaded = update::load(&ctx.workspace, &s).map_err(fail)?;
        let facts = facts(args);
        let mut text = format!(
            "Subject: {}\nMemory file: {} ({} memories now)\n\nFacts to merge:\n",
            s.display(),
            loaded.file.display,
            loaded.items.len()
        );
        for f in &facts {
            text.push_str(&format!("  - {f}\n"));
        }
        text.push_str(&format!(
            "\nA {CURATOR_PROFILE} agent will read the current memories and propose an RFC 6902 patch. The patch is applied only if it is valid (unique, non-empty topics; string views) and {} has not changed meanwhile; otherwise nothing is written.\n",
            loaded.file.display
        ));
        Ok(Preview {
            summary: format!(
                "Update the memory of {} with {} fact{} (a {CURATOR_PROFILE} agent proposes the patch)",
                s.display(),
                facts.len(),
                if facts.len() == 1 { "" } else { "s" }
            ),
            targets: vec![TargetState {
                key: loaded.file.display.clone(),
                fingerprint: fingerprint(&loaded.file.abs),
            }],
            body: PreviewBody::Text { text },
        })
    }
    fn run(&self, ctx: &ToolCtx, args: &MemoryUpdateArgs) -> Result<ToolOutput, ToolError> {
        let s = subject(ctx, args, Access::Write)?;
        let facts = facts(args);
        let loaded = update::load(&ctx.workspace, &s).map_err(fail)?;
        let engine = ctx.services.as_ref().ok_or_else(|| {
            fail("subject_memory_update needs the engine to start a memory.curator agent; it cannot run outside an engine session")
        })?;
        let host = engine.host().ok_or_else(|| {
            fail("subject_memory_update needs an agent host to run the memory.curator agent (open the project in the TUI or use `nbook run`); memory.jsonl was not changed")
        })?;
        let initial = update::initial(&s, &facts, &loaded.items);
        let session = engine
            .create_agent(
                None,
                CURATOR_PROFILE,
                initial.clone(),
                Some(&format!("Memory: {}", s.display())),
            )
            .map_err(|e| fail(format!("cannot start the memory curator: {e}")))?;
        // If the run that called this is cancelled, stop the curator it waits on. (The token
        // also fires when this call returns; cancelling an idle session does nothing.)
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let (token, host, curator) = (ctx.cancel.clone(), host.clone(), session.id.clone());
            rt.spawn(async move {
                token.cancelled().await;
                host.cancel_session(&curator);
            });
        }
        let curated = update::curate(&loaded.items, &update::first_message(&initial), |m| {
            ask_curator(host.as_ref(), &session.id, &ctx.call_id, m)
        })
        .map_err(fail)?;
        let before = loaded.items.len();
        let mut details = json!({
            "subjectPath": s.display(),
            "sourcePath": loaded.file.display,
            "outcome": curated.outcome.as_str(),
            "sessionId": session.id,
            "attempts": curated.attempts,
            "errors": curated.errors,
            "patch": curated.patch,
            "memories": {"before": before, "after": curated.items.len()},
            "dirty": false,
        });
        let (content, changed) = match curated.outcome {
            Outcome::Updated => {
                update::commit(&s, &loaded, &curated.items).map_err(fail)?;
                details["dirty"] = json!(true);
                (
                    format!(
                        "Updated {} ({before} memories before, {} after); the memory index will be rebuilt on the next subject_rag_search.",
                        loaded.file.display,
                        curated.items.len()
                    ),
                    vec![loaded.file.display.clone()],
                )
            }
            Outcome::Unchanged => (
                format!(
                    "{} is unchanged: the memory curator found nothing to change.",
                    loaded.file.display
                ),
                Vec::new(),
            ),
            Outcome::NeedsReview => (
                format!(
                    "needs_review: the memory curator's patch could not be applied after {} attempts, so {} was not changed. Errors:\n  - {}\nThe curator session {} holds its attempts; review them, or edit memory.jsonl by hand.",
                    curated.attempts,
                    loaded.file.display,
                    curated.errors.join("\n  - "),
                    session.id
                ),
                Vec::new(),
            ),
        };
        Ok(ToolOutput {
            content,
            details: Some(details),
            changed_paths: changed,
            state_updates: Vec::new(),
        })
    }
}

// ---------------------------------------------------------------------------------------------

pub struct SubjectRagSearch;

impl TypedTool for SubjectRagSearch {
    type Args = RagSearchArgs;
    const NAME: &'static str = "subject_rag_search";
    const GROUP: &'static str = "subject_memory";
    const DESCRIPTION: &'static str = "Search one subject's events.jsonl or memory.jsonl by meaning (embedding similarity). sources is exactly one of [\"events\"] or [\"memory\"]; limit 1-20 (default 6 for events, 4 for memory). Needs a configured embedding service; changed sources are re-indexed first.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Memory])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, args: &RagSearchArgs) -> Result<ToolOutput, ToolError> {
        let s = subject(ctx, args, Access::Read)?;
        let source = match args.sources.first() {
            Some(SourceArg::Events) => Source::Events,
            Some(SourceArg::Memory) => Source::Memory,
            None => return Err(fail("sources must be [\"events\"] or [\"memory\"]")),
        };
        let limit = args
            .limit
            .map(|l| l.clamp(1, 20) as usize)
            .unwrap_or(match source {
                Source::Events => 6,
                Source::Memory => 4,
            });
        let query = args.query.trim();
        let embedder = ConfiguredEmbedder::from_config(&ctx.config).map_err(fail)?;
        let report =
            rag::search(&ctx.workspace, &s, source, query, limit, &embedder).map_err(fail)?;
        let source_path = format!("{}/{}", s.display(), source.file_name());
        let content = if report.hits.is_empty() {
            format!(
                "No {} entries for {}: {source_path} is missing or empty.",
                source.as_str(),
                s.display()
            )
        } else {
            report
                .hits
                .iter()
                .map(|h| {
                    format!(
                        "{}. {} topic={} tick={} time={}\n{}",
                        h.rank,
                        h.source,
                        h.topic.as_deref().unwrap_or(""),
                        h.tick.as_deref().unwrap_or(""),
                        h.time.as_deref().unwrap_or(""),
                        h.text
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        Ok(ToolOutput {
            content,
            details: Some(json!({
                "subjectPath": s.display(),
                "source": source.as_str(),
                "sourcePath": source_path,
                "query": query,
                "limit": limit,
                "hits": report.hits,
                "rebuilt": report.rebuilt,
                "embedded": report.embedded,
                "chunks": report.chunks,
                "index": s.index_display(),
            })),
            changed_paths: Vec::new(),
            state_updates: Vec::new(),
        })
    }
}
