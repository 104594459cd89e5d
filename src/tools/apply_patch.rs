//! `apply_patch`: the Codex patch format (see `patch`), applied all-or-nothing through the
//! workspace's path authorization. The preview is the per-file unified diff of the dry run,
//! bounded like every file preview (`preview_diff`). Paths the patch creates (Add targets,
//! Move destinations) must be free of control and text-direction characters.

use serde_json::{json, Value};

use std::collections::HashMap;

use super::content_edit::blocks_for;
use super::files::{approved_target, check_new_segments, fingerprint, read_text};
use super::partial::kept_content;
use super::patch::{self, Hunk, PlannedFile, PlannedKind};
use super::preview_diff::bounded_diff;
use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{ChangeKind, FileChange, KeptParts, Preview, PreviewBody, TargetState};
use crate::workspace::{Access, Target};

pub struct ApplyPatch;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchArgs {
    #[schemars(length(min = 1))]
    pub patch: String,
}

fn patch_arg(args: &PatchArgs) -> &str {
    &args.patch
}

fn hunk_paths(hunks: &[Hunk]) -> Vec<String> {
    let mut out = Vec::new();
    for h in hunks {
        match h {
            Hunk::AddFile { path, .. } | Hunk::DeleteFile { path } => out.push(path.clone()),
            Hunk::UpdateFile {
                path, move_path, ..
            } => {
                out.push(path.clone());
                out.extend(move_path.clone());
            }
        }
    }
    out
}

/// The paths a patch may create: Add targets and Move destinations.
fn created_paths(hunks: &[Hunk]) -> impl Iterator<Item = &str> {
    hunks.iter().filter_map(|h| match h {
        Hunk::AddFile { path, .. } => Some(path.as_str()),
        Hunk::UpdateFile {
            move_path: Some(dest),
            ..
        } => Some(dest.as_str()),
        _ => None,
    })
}

/// Parse and plan the patch in memory; nothing on disk changes.
fn plan(ctx: &ToolCtx, args: &PatchArgs) -> Result<(Vec<Hunk>, Vec<PlannedFile>), ToolError> {
    let hunks =
        patch::parse_patch(patch_arg(args)).map_err(|e| ToolError::failed(e.to_string()))?;
    for p in hunk_paths(&hunks) {
        ctx.workspace
            .resolve(&p, Access::Write)
            .map_err(|e| ToolError::failed(e.to_string()))?;
    }
    for p in created_paths(&hunks) {
        let r = ctx
            .workspace
            .resolve(p, Access::Write)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        check_new_segments(&r).map_err(|e| ToolError::failed(e.to_string()))?;
    }
    let mut read = |p: &str| -> Result<Option<String>, String> {
        let r = ctx
            .workspace
            .resolve(p, Access::Write)
            .map_err(|e| e.to_string())?;
        read_text(&r).map_err(|e| e.to_string())
    };
    let planned =
        patch::plan_patch(&hunks, &mut read).map_err(|e| ToolError::failed(e.to_string()))?;
    Ok((hunks, planned))
}

/// An update section turning `old` into `new`: each changed run of lines as a chunk whose
/// removed lines occur once in `old`, so it lands where the diff showed it.
fn update_section(path: &str, move_to: Option<&str>, old: &str, new: &str) -> String {
    let mut s = format!("*** Update File: {path}\n");
    if let Some(to) = move_to {
        s.push_str(&format!("*** Move to: {to}\n"));
    }
    for b in blocks_for(old, new) {
        s.push_str("@@\n");
        for l in b.old_text.lines() {
            s.push_str(&format!("-{l}\n"));
        }
        for l in b.new_text.lines() {
            s.push_str(&format!("+{l}\n"));
        }
    }
    s
}

fn display(ctx: &ToolCtx, p: &str) -> String {
    ctx.workspace
        .resolve(p, Access::Write)
        .map(|r| r.display)
        .unwrap_or_else(|_| p.to_string())
}

impl TypedTool for ApplyPatch {
    type Args = PatchArgs;
    const NAME: &'static str = "apply_patch";
    const GROUP: &'static str = "files";
    const DESCRIPTION: &'static str = "Apply a patch in the Codex format: '*** Begin Patch', then '*** Add File: <path>' (lines prefixed '+'), '*** Delete File: <path>' or '*** Update File: <path>' (optional '*** Move to: <path>', then '@@ <context>' chunks of ' ', '-', '+' lines), then '*** End Patch'. All files change or none do.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Files])
    };
    const PARTS: bool = true;
    /// The kept files as their own sections of the patch; a file with only some hunks kept
    /// as an update (or an add, for an overwrite) of just those hunks.
    fn narrow(
        &self,
        ctx: &ToolCtx,
        args: &PatchArgs,
        _shown: &Preview,
        kept: &KeptParts,
    ) -> Result<Value, ToolError> {
        let (hunks, planned) = plan(ctx, args)?;
        if planned.len() != kept.files.len() {
            return Err(ToolError::Stale(format!(
                "the patch now changes {} file(s), the preview showed {}; nothing was changed",
                planned.len(),
                kept.files.len()
            )));
        }
        if !kept.is_all() {
            let paths = hunk_paths(&hunks);
            if let Some(p) = paths
                .iter()
                .find(|p| paths.iter().filter(|q| q == p).count() > 1)
            {
                return Err(ToolError::failed(format!(
                    "this patch changes {} in more than one section, so its parts depend on each other; approve or reject it whole",
                    display(ctx, p)
                )));
            }
        }
        let sections =
            patch::hunk_sections(patch_arg(args)).map_err(|e| ToolError::failed(e.to_string()))?;
        let mut out = Vec::new();
        for (i, f) in planned.iter().enumerate() {
            if !kept.file_kept(i) {
                continue;
            }
            if kept.file_whole(i) {
                out.push(sections[i].clone());
                continue;
            }
            let shown = display(ctx, &f.path);
            let marks = &kept.files[i];
            out.push(match &f.kind {
                PlannedKind::Update { old, new, move_to } => {
                    let partial = kept_content(&shown, old, new, marks)?;
                    update_section(&f.path, move_to.as_deref(), old, &partial)
                }
                PlannedKind::Add {
                    content,
                    previous: Some(previous),
                } => {
                    let partial = kept_content(&shown, previous, content, marks)?;
                    let mut s = format!("*** Add File: {}\n", f.path);
                    for l in partial.lines() {
                        s.push_str(&format!("+{l}\n"));
                    }
                    s
                }
                _ => {
                    return Err(ToolError::failed(format!(
                        "{shown} is one part: keep or drop it whole"
                    )))
                }
            });
        }
        Ok(json!({"patch": patch::envelope(&out)}))
    }
    fn write_targets(&self, ctx: &ToolCtx, args: &PatchArgs) -> Vec<String> {
        match patch::parse_patch(patch_arg(args)) {
            Ok(h) => hunk_paths(&h).iter().map(|p| display(ctx, p)).collect(),
            // An unparseable patch gets no targets, so no exemption or grant can cover it.
            Err(_) => Vec::new(),
        }
    }
    fn draft_paths(&self, _ctx: &ToolCtx, args: &PatchArgs) -> Option<Vec<String>> {
        // An unparseable patch names no paths; the call then fails as it would anywhere.
        Some(
            patch::parse_patch(patch_arg(args))
                .map(|h| hunk_paths(&h))
                .unwrap_or_default(),
        )
    }
    fn preview(&self, ctx: &ToolCtx, args: &PatchArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let (hunks, planned) = plan(ctx, args)?;
        let mut changes = Vec::new();
        let (mut before, mut after, mut elided) = (0u64, 0u64, false);
        for f in &planned {
            let path = display(ctx, &f.path);
            let (old, new, kind, move_to) = match &f.kind {
                PlannedKind::Add { content, previous } => (
                    previous.as_deref().unwrap_or(""),
                    content.as_str(),
                    if previous.is_some() {
                        ChangeKind::Update
                    } else {
                        ChangeKind::Add
                    },
                    None,
                ),
                PlannedKind::Delete { old } => (old.as_str(), "", ChangeKind::Delete, None),
                PlannedKind::Update { old, new, move_to } => (
                    old.as_str(),
                    new.as_str(),
                    ChangeKind::Update,
                    move_to.as_deref().map(|m| display(ctx, m)),
                ),
            };
            let diff = bounded_diff(&path, old, new);
            before += old.len() as u64;
            after += new.len() as u64;
            elided |= diff.elided_lines > 0;
            changes.push(FileChange {
                path,
                kind,
                move_to,
                diff: diff.text,
                added: diff.added,
                removed: diff.removed,
            });
        }
        let (added, removed) = changes
            .iter()
            .fold((0, 0), |(a, r), c| (a + c.added, r + c.removed));
        let mut targets = Vec::new();
        for p in hunk_paths(&hunks) {
            if let Ok(r) = ctx.workspace.resolve(&p, Access::Write) {
                targets.push(TargetState {
                    key: r.display.clone(),
                    fingerprint: fingerprint(&r.abs),
                });
            }
        }
        let extent = if elided {
            format!(", {before} → {after} bytes, diff elided")
        } else {
            String::new()
        };
        Ok(Preview {
            summary: format!(
                "Patch {} file{} (+{added} -{removed}{extent})",
                changes.len(),
                if changes.len() == 1 { "" } else { "s" }
            ),
            body: PreviewBody::Files { changes },
            targets,
        })
    }
    fn run(&self, ctx: &ToolCtx, args: &PatchArgs) -> Result<ToolOutput, ToolError> {
        self.run_approved(ctx, args, None)
    }
    fn run_approved(
        &self,
        ctx: &ToolCtx,
        args: &PatchArgs,
        approved: Option<&[String]>,
    ) -> Result<ToolOutput, ToolError> {
        let hunks =
            patch::parse_patch(patch_arg(args)).map_err(|e| ToolError::failed(e.to_string()))?;
        // Resolve every destination once, through held folders, and check it against what
        // was approved; the plan reads and the commit writes through these same handles.
        let mut targets: HashMap<String, Target> = HashMap::new();
        for p in hunk_paths(&hunks) {
            if let std::collections::hash_map::Entry::Vacant(slot) = targets.entry(p) {
                let t = approved_target(ctx, slot.key(), approved)?;
                slot.insert(t);
            }
        }
        let mut read = |p: &str| -> Result<Option<String>, String> {
            let t = targets
                .get(p)
                .ok_or_else(|| format!("{p} was not resolved"))?;
            match t.read_bytes() {
                Ok(None) => Ok(None),
                Ok(Some(_)) if t.is_dir() => Err("Is a directory".into()),
                Ok(Some(bytes)) => String::from_utf8(bytes)
                    .map(Some)
                    .map_err(|_| "not a UTF-8 text file".into()),
                Err(e) => Err(e.to_string()),
            }
        };
        let planned =
            patch::plan_patch(&hunks, &mut read).map_err(|e| ToolError::failed(e.to_string()))?;
        let resolve = |p: &str| -> Result<Target, patch::ResolveError> {
            targets
                .get(p)
                .cloned()
                .ok_or_else(|| patch::ResolveError::NotResolved(p.to_string()))
        };
        let lines =
            patch::commit_plan(&planned, &resolve).map_err(|e| ToolError::failed(e.to_string()))?;
        let changed: Vec<String> = hunk_paths(&hunks).iter().map(|p| display(ctx, p)).collect();
        Ok(ToolOutput {
            content: format!(
                "Success. Updated the following files:\n{}",
                lines.join("\n")
            ),
            details: Some(json!({"files": lines})),
            changed_paths: changed,
            state_updates: Vec::new(),
        })
    }
}
