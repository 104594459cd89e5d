//! Artifacts (`fn_artifact_register`, `fn_artifact_list`, `fn_artifact_view`) over
//! `crate::board::artifacts`: a registration is checked completely (source, containment, size,
//! signature) before the author is asked, and the preview says what will be stored where.
//!
//! Registration changes the project (a row and a managed copy), so it is a mutating call and
//! goes through the approval gate — Fusion exempts it; nbook's contract decides every change
//! through the policy. The preview's target is the payload's fingerprint (its sha256), so a
//! source file changed between preview and approval fails as stale.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::memory::agent_id;
use super::{board, read_output, SESSION_TASK};
use crate::board::artifacts::{self as art, human_size, ArtifactError, Filter, Kind, Register};
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{Preview, PreviewBody, TargetState};

const BOARD: Effects = {
    use crate::engine::tool::Domain::*;
    Effects::touches(&[Board])
};

fn err(e: ArtifactError) -> ToolError {
    ToolError::Coded {
        message: format!("{e} (nothing was changed)"),
        details: e.details(),
    }
}

fn session_task(ctx: &ToolCtx) -> Option<String> {
    ctx.session_state
        .get(SESSION_TASK)
        .and_then(Value::as_str)
        .map(str::to_string)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterArgs {
    #[serde(rename = "type")]
    pub kind: Kind,
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    pub description: Option<String>,
    #[serde(rename = "mimeType")]
    pub mime_type: Option<String>,
    /// An outside reference (a URL) instead of a payload.
    pub uri: Option<String>,
    /// Inline text (documents, HTML mockups).
    pub content: Option<String>,
    /// The file's bytes in standard base64.
    #[serde(rename = "dataBase64")]
    pub data_base64: Option<String>,
    /// A file in this project (copied into managed storage).
    pub path: Option<String>,
    /// Default this session's task, if it has one.
    #[serde(rename = "taskId")]
    pub task_id: Option<String>,
}

pub struct ArtifactRegister;

impl ArtifactRegister {
    fn request(ctx: &ToolCtx, a: &RegisterArgs) -> Register {
        Register {
            kind: Some(a.kind),
            title: a.title.clone(),
            description: a.description.clone(),
            mime_type: a.mime_type.clone().filter(|m| !m.trim().is_empty()),
            uri: a.uri.clone(),
            content: a.content.clone(),
            data_base64: a.data_base64.clone(),
            path: a.path.clone(),
            task_id: a
                .task_id
                .clone()
                .filter(|t| !t.trim().is_empty())
                .or_else(|| session_task(ctx)),
            author_id: agent_id(ctx),
            author_type: "agent".into(),
        }
    }
}

impl TypedTool for ArtifactRegister {
    type Args = RegisterArgs;
    const NAME: &'static str = "fn_artifact_register";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "Register an artifact of the book (map, cover, character sheet, reference…) so the author and other agents find it in the Artifacts view: type document | image | video | audio | other, a title, and exactly one payload — content (inline text; HTML mockups as document + mimeType text/html), dataBase64 (bytes), path (a file in this project, copied into managed storage under .nbook/artifacts/; files under .nbook/ and .git/ are refused) or uri (an outside reference). At most 50 MB of bytes, 1 MB of inline text. Image, video and PDF payloads must carry their real signature (PNG, JPEG, GIF, WebP, SVG, PDF, mp4, WebM; ARTIFACT_SIGNATURE_MISMATCH otherwise). taskId defaults to this session's task. Changes the project, so it waits for the author's approval like any mutating call. details: the stored artifact {id, type, title, mimeType, sizeBytes, uri, metadata{sha256, width, height}, …}.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = BOARD;
    fn write_targets(&self, _ctx: &ToolCtx, a: &RegisterArgs) -> Vec<String> {
        vec![format!("artifacts/{}", a.title.trim())]
    }
    fn preview(&self, ctx: &ToolCtx, a: &RegisterArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let p = art::prepare(&ctx.workspace, &Self::request(ctx, a)).map_err(err)?;
        let dims = match (p.metadata.get("width"), p.metadata.get("height")) {
            (Some(w), Some(h)) => format!(", {w}×{h}"),
            _ => String::new(),
        };
        let place = match (&p.bytes, &p.task_id) {
            (Some(_), Some(t)) => format!("copied to .nbook/tasks/{t}/artifacts/"),
            (Some(_), None) => "copied to .nbook/artifacts/".into(),
            (None, _) if p.content.is_some() => "kept inline".into(),
            (None, _) => "an outside reference".into(),
        };
        let text = format!(
            "Register {} artifact {:?}\n  payload: {} ({}, {}{dims})\n  stored: {place}\n  task: {}\n  by: {}",
            p.kind.as_str(),
            p.title,
            p.source,
            p.mime_type,
            human_size(p.size),
            p.task_id.as_deref().unwrap_or("none"),
            p.author_id
        );
        let fingerprint = p
            .metadata
            .get("sha256")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| format!("{} bytes", p.size));
        Ok(Preview {
            summary: format!(
                "fn_artifact_register: {} {:?} ({})",
                p.kind.as_str(),
                p.title,
                human_size(p.size)
            ),
            body: PreviewBody::Text { text },
            targets: vec![TargetState {
                key: format!("artifact-source/{}", p.source),
                fingerprint,
            }],
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &RegisterArgs) -> Result<ToolOutput, ToolError> {
        let p = art::prepare(&ctx.workspace, &Self::request(ctx, a)).map_err(err)?;
        let stored = art::commit(&board(ctx), ctx.workspace.root(), &p).map_err(err)?;
        let text = format!(
            "Registered {} ({} {:?}, {}, {}){}",
            stored.id,
            stored.kind.as_str(),
            stored.title,
            stored.mime_type,
            human_size(stored.size_bytes),
            stored
                .uri
                .as_deref()
                .map(|u| format!(" at {u}"))
                .unwrap_or_default()
        );
        Ok(ToolOutput {
            content: text,
            changed_paths: stored
                .uri
                .iter()
                .filter(|u| u.starts_with(".nbook/"))
                .cloned()
                .collect(),
            details: Some(json!(stored)),
            ..ToolOutput::default()
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    #[serde(rename = "type")]
    pub kind: Option<Kind>,
    #[serde(rename = "authorId")]
    pub author_id: Option<String>,
    #[serde(rename = "taskId")]
    pub task_id: Option<String>,
    /// Words in the title or description.
    pub search: Option<String>,
    /// Default 20, at most 100.
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<usize>,
    pub offset: Option<usize>,
}

pub struct ArtifactList;

impl TypedTool for ArtifactList {
    type Args = ListArgs;
    const NAME: &'static str = "fn_artifact_list";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "List the book's registered artifacts, newest first, filtered by type, authorId, taskId or search (title and description); limit default 20 (max 100), offset. details {artifacts: [{id, type, title, mimeType, sizeBytes, uri, taskId, authorId, …}], total, offset, limit}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = BOARD;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &ListArgs) -> Result<ToolOutput, ToolError> {
        let f = Filter {
            kind: a.kind,
            author_id: a.author_id.clone(),
            task_id: a.task_id.clone(),
            search: a.search.clone().filter(|s| !s.trim().is_empty()),
            limit: a.limit.unwrap_or(20).min(100),
            offset: a.offset.unwrap_or(0),
        };
        let (items, total) = board(ctx)
            .read(|c| Ok(art::list(c, &f)?))
            .map_err(|e| err(e.into()))?;
        let text = if items.is_empty() {
            format!("No artifacts match ({total} in all).")
        } else {
            let mut lines: Vec<String> = items
                .iter()
                .map(|x| {
                    format!(
                        "- {} [{}] {} ({}, {}){}",
                        x.id,
                        x.kind.as_str(),
                        x.title,
                        x.mime_type,
                        human_size(x.size_bytes),
                        x.task_id
                            .as_deref()
                            .map(|t| format!(" task {t}"))
                            .unwrap_or_default()
                    )
                })
                .collect();
            lines.push(format!("{} of {total} (offset {}).", items.len(), f.offset));
            lines.join("\n")
        };
        let listed: Vec<Value> = items
            .iter()
            .map(|x| {
                let mut v = json!(x);
                if let Some(o) = v.as_object_mut() {
                    o.remove("content");
                }
                v
            })
            .collect();
        Ok(read_output(
            text,
            json!({"artifacts": listed, "total": total, "offset": f.offset, "limit": f.limit}),
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ViewArgs {
    #[schemars(length(min = 1, max = 64))]
    pub id: String,
}

pub struct ArtifactView;

impl TypedTool for ArtifactView {
    type Args = ViewArgs;
    const NAME: &'static str = "fn_artifact_view";
    const GROUP: &'static str = "board";
    const DESCRIPTION: &'static str = "View one registered artifact by id: its metadata and, for text artifacts, the content (at most 20000 characters); media artifacts give their uri (the managed copy under .nbook/) and, for images, their pixel size. Unknown id: ARTIFACT_NOT_FOUND.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = BOARD;
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &ViewArgs) -> Result<ToolOutput, ToolError> {
        let id = a.id.trim().to_string();
        let found = board(ctx)
            .read(|c| Ok(art::load(c, &id)?))
            .map_err(|e| err(e.into()))?
            .ok_or_else(|| err(ArtifactError::NotFound { id: id.clone() }))?;
        let mut text = format!(
            "{} [{}] {}\n{} · {}",
            found.id,
            found.kind.as_str(),
            found.title,
            found.mime_type,
            human_size(found.size_bytes)
        );
        if let Some((w, h)) = found.dimensions() {
            text.push_str(&format!(" · {w}×{h}"));
        }
        if let Some(d) = &found.description {
            text.push_str(&format!("\n{d}"));
        }
        let mut details = json!(found);
        match art::text_of(ctx.workspace.root(), &found) {
            Some((body, truncated)) => {
                text.push_str("\n\n");
                text.push_str(&body);
                details["content"] = json!(body);
                details["truncated"] = json!(truncated);
            }
            None => {
                if let Some(u) = &found.uri {
                    text.push_str(&format!("\nuri: {u}"));
                }
            }
        }
        Ok(read_output(text, details))
    }
}
