//! File tools: `read`, `write`, `edit`. Every path goes through the workspace's
//! authorization; every write is atomic; every mutating call previews a unified diff and
//! fingerprints its target so a change between preview and approval is caught as stale.
//! Only regular files are read (a FIFO or device is refused, never waited on); previews are
//! bounded (see `preview_diff`) and `read` streams its window (see `read_window`).

use std::io::Read as _;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::preview_diff::{bounded_diff, replacement_diff, BoundedDiff, LINE_DIFF_MAX_INPUT};
use super::read_window::read_window;
pub use super::read_window::{READ_MAX_BYTES, READ_MAX_LINES};
use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{ChangeKind, FileChange, Preview, PreviewBody, TargetState};
use crate::workspace::regular::{open_regular, special_file_kind, OpenRegularError};
use crate::workspace::{Access, Resolved, Target};

fn resolve(ctx: &ToolCtx, path: &str, access: Access) -> Result<Resolved, ToolError> {
    ctx.workspace
        .resolve(path, access)
        .map_err(|e| ToolError::failed(e.to_string()))
}

/// Resolve a path an agent may create: every segment that does not exist yet must be free
/// of control and text-direction characters (they would make the new name display as
/// another one). Existing names are the author's and pass.
pub fn resolve_creatable(ctx: &ToolCtx, path: &str) -> Result<Resolved, ToolError> {
    let r = resolve(ctx, path, Access::Write)?;
    check_new_segments(&r).map_err(|e| ToolError::failed(e.to_string()))?;
    Ok(r)
}

/// A path to create whose new segments hold a name [`crate::text::check_new_name`] refuses.
#[derive(Debug, thiserror::Error)]
#[error("cannot create {path}: {source}")]
pub struct UnsafeNewPath {
    /// The project-relative path, escaped for the terminal.
    pub path: String,
    #[source]
    pub source: crate::text::UnsafeName,
}

/// The check of [`resolve_creatable`] on an already resolved path.
pub fn check_new_segments(r: &Resolved) -> Result<(), UnsafeNewPath> {
    let mut p = r.abs.as_path();
    while std::fs::symlink_metadata(p).is_err() {
        let (Some(name), Some(parent)) = (p.file_name(), p.parent()) else {
            break;
        };
        let name = name.to_string_lossy();
        crate::text::check_new_name(&name).map_err(|source| UnsafeNewPath {
            path: crate::text::escape_for_terminal(&r.display).into_owned(),
            source,
        })?;
        p = parent;
    }
    Ok(())
}

/// A fingerprint of a file's current bytes ("absent" when missing), hashed as a stream so a
/// huge file costs one buffer. A FIFO or device is never opened: its kind is the fingerprint.
pub fn fingerprint(path: &std::path::Path) -> String {
    use std::hash::Hasher;
    let (mut file, len) = match open_regular(path) {
        Ok(Some(f)) => f,
        Ok(None) => return "absent".into(),
        Err(OpenRegularError::Io(e)) => return format!("unreadable:{}", e.kind()),
        Err(e) => return format!("special:{e}"),
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.write(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return format!("unreadable:{}", e.kind()),
        }
    }
    format!("{len}:{:016x}", h.finish())
}

fn open_error(r: &Resolved, e: OpenRegularError) -> ToolError {
    match e {
        OpenRegularError::Folder => {
            ToolError::failed(format!("{} is a folder, not a file", r.display))
        }
        OpenRegularError::NotRegular { .. } => ToolError::failed(format!("{} {e}", r.display)),
        OpenRegularError::Io(e) => ToolError::failed(format!("cannot read {}: {e}", r.display)),
    }
}

/// Read a text file for editing. Missing → `Ok(None)`; a folder, FIFO, device, binary or
/// unreadable file → error.
pub fn read_text(r: &Resolved) -> Result<Option<String>, ToolError> {
    let Some((mut file, len)) = open_regular(&r.abs).map_err(|e| open_error(r, e))? else {
        return Ok(None);
    };
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(1 << 30));
    file.read_to_end(&mut bytes)
        .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", r.display)))?;
    String::from_utf8(bytes).map(Some).map_err(|_| {
        ToolError::failed(format!(
            "{} is not UTF-8 text; the file tools only edit text",
            r.display
        ))
    })
}

/// Refuse to replace a FIFO, socket or device (the approval would not show what it is).
pub fn check_regular_target(r: &Resolved) -> Result<(), ToolError> {
    match special_file_kind(&r.abs) {
        Some(kind) => Err(ToolError::failed(format!(
            "{} is {kind}, not a regular file; nbook's file tools only read and write regular files (remove it or use another path)",
            r.display
        ))),
        None => Ok(()),
    }
}

fn file_change(display: &str, existed: bool, diff: BoundedDiff) -> FileChange {
    FileChange {
        path: display.to_string(),
        kind: if existed {
            ChangeKind::Update
        } else {
            ChangeKind::Add
        },
        move_to: None,
        diff: diff.text,
        added: diff.added,
        removed: diff.removed,
    }
}

/// The extent shown next to a summary whose diff was elided: bytes before and after.
pub fn elided_extent(diff: &BoundedDiff, before: u64, after: u64) -> String {
    if diff.elided_lines == 0 {
        String::new()
    } else {
        format!(", {before} → {after} bytes, diff elided")
    }
}

/// The write preview's diff: a line diff when both sides are small enough to load, else the
/// old file streamed as a whole replacement. Returns whether the file existed and its size.
fn write_diff(r: &Resolved, new: &str) -> Result<(bool, u64, BoundedDiff), ToolError> {
    let Some((file, len)) = open_regular(&r.abs).map_err(|e| open_error(r, e))? else {
        return Ok((false, 0, bounded_diff(&r.display, "", new)));
    };
    if len.saturating_add(new.len() as u64) <= LINE_DIFF_MAX_INPUT {
        drop(file);
        let old = read_text(r)?.unwrap_or_default();
        return Ok((true, old.len() as u64, bounded_diff(&r.display, &old, new)));
    }
    let diff = replacement_diff(&r.display, file, len, new).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidData {
            ToolError::failed(format!("{} is {e}", r.display))
        } else {
            ToolError::failed(format!("cannot read {}: {e}", r.display))
        }
    })?;
    Ok((true, len, diff))
}

/// Resolve `path` as a write destination through held folder handles. When the call was
/// decided on `approved` targets (plan exemption, grant, the author), the destination must
/// still resolve to one of them: a folder swapped for a link after the decision makes the
/// call stale instead of sending the write elsewhere.
pub fn approved_target(
    ctx: &ToolCtx,
    path: &str,
    approved: Option<&[String]>,
) -> Result<Target, ToolError> {
    let t = ctx
        .workspace
        .target(path)
        .map_err(|e| ToolError::failed(e.to_string()))?;
    match approved {
        Some(list) if !list.iter().any(|a| a == t.display()) => Err(ToolError::Stale(format!(
            "{path} now resolves to {}, not to the approved {}; nothing was written. A folder on the path changed (for example into a symlink) after the decision; check it and propose the change anew.",
            t.display(),
            list.join(", ")
        ))),
        _ => Ok(t),
    }
}

/// The destination's current text, read through the held folder (what the write replaces).
fn target_text(t: &Target) -> Result<Option<String>, ToolError> {
    match t.read_bytes() {
        Ok(None) => Ok(None),
        Ok(Some(bytes)) => String::from_utf8(bytes).map(Some).map_err(|_| {
            ToolError::failed(format!(
                "{} is not UTF-8 text; the file tools only edit text",
                t.display()
            ))
        }),
        Err(e) => Err(ToolError::failed(format!(
            "cannot read {}: {e}",
            t.display()
        ))),
    }
}

fn write_file(t: &Target, content: &str) -> Result<(), ToolError> {
    t.write(content.as_bytes()).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::PermissionDenied {
            " (the project folder is not writable; check its permissions)"
        } else {
            ""
        };
        ToolError::failed(format!("cannot write {}: {e}{hint}", t.display()))
    })
}

// ---------------------------------------------------------------------------------------------

pub struct Read;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadArgs {
    /// Project-relative path, or workspace/<project>/<path>
    #[schemars(length(min = 1))]
    pub path: String,
    /// First line to return (1-based)
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// Maximum number of lines
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// Prefix each line with its number
    pub line_numbers: Option<bool>,
}

impl TypedTool for Read {
    type Args = ReadArgs;
    const NAME: &'static str = "read";
    const GROUP: &'static str = "files";
    const DESCRIPTION: &'static str = "Read a text file of the project. Returns at most 2000 lines or 50 KB; use offset (1-based line) and limit to page through longer files.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Files])
    };
    const PARALLEL_SAFE: bool = true;
    fn draft_paths(&self, _ctx: &ToolCtx, args: &ReadArgs) -> Option<Vec<String>> {
        Some(vec![args.path.clone()])
    }
    fn run(&self, ctx: &ToolCtx, args: &ReadArgs) -> Result<ToolOutput, ToolError> {
        let r = resolve(ctx, &args.path, Access::Read)?;
        let offset = args.offset.unwrap_or(1).max(1) as usize;
        let limit = args
            .limit
            .map(|l| (l as usize).min(READ_MAX_LINES))
            .unwrap_or(READ_MAX_LINES);
        let numbers = args.line_numbers.unwrap_or(false);
        read_window(&r, offset, limit, numbers)
    }
}

// ---------------------------------------------------------------------------------------------

pub struct Write;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WriteArgs {
    #[schemars(length(min = 1))]
    pub path: String,
    pub content: String,
}

/// What `write` and `edit` ask to write: the resolved path (or the path as given).
fn path_targets(ctx: &ToolCtx, path: &str) -> Vec<String> {
    resolve(ctx, path, Access::Write)
        .map(|r| vec![r.display])
        .unwrap_or_else(|_| vec![path.to_string()])
}

impl TypedTool for Write {
    type Args = WriteArgs;
    const NAME: &'static str = "write";
    const GROUP: &'static str = "files";
    const DESCRIPTION: &'static str = "Create a file, or replace a file's whole content. Parent folders are created. Prefer edit for small changes.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Files])
    };
    fn write_targets(&self, ctx: &ToolCtx, args: &WriteArgs) -> Vec<String> {
        path_targets(ctx, &args.path)
    }
    fn draft_paths(&self, _ctx: &ToolCtx, args: &WriteArgs) -> Option<Vec<String>> {
        Some(vec![args.path.clone()])
    }
    fn preview(&self, ctx: &ToolCtx, args: &WriteArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let r = resolve_creatable(ctx, &args.path)?;
        let content = args.content.as_str();
        let (existed, before, diff) = write_diff(&r, content)?;
        let extent = elided_extent(&diff, before, content.len() as u64);
        let change = file_change(&r.display, existed, diff);
        Ok(Preview {
            summary: format!(
                "{} {} (+{} -{}{extent})",
                if existed { "Overwrite" } else { "Create" },
                r.display,
                change.added,
                change.removed
            ),
            targets: vec![TargetState {
                key: r.display.clone(),
                fingerprint: fingerprint(&r.abs),
            }],
            body: PreviewBody::Files {
                changes: vec![change],
            },
        })
    }
    fn run(&self, ctx: &ToolCtx, args: &WriteArgs) -> Result<ToolOutput, ToolError> {
        self.run_approved(ctx, args, None)
    }
    fn run_approved(
        &self,
        ctx: &ToolCtx,
        args: &WriteArgs,
        approved: Option<&[String]>,
    ) -> Result<ToolOutput, ToolError> {
        // New path segments are checked (control/bidi characters) before anything else.
        resolve_creatable(ctx, &args.path)?;
        let t = approved_target(ctx, &args.path, approved)?;
        if t.is_dir() {
            return Err(ToolError::failed(format!("{} is a folder", t.display())));
        }
        check_regular_target(&t.resolved)?;
        let content = args.content.as_str();
        write_file(&t, content)?;
        Ok(ToolOutput {
            content: format!(
                "Successfully wrote {} bytes to {}",
                content.len(),
                t.display()
            ),
            details: None,
            changed_paths: vec![t.resolved.display],
            state_updates: Vec::new(),
        })
    }
}

// ---------------------------------------------------------------------------------------------

pub struct Edit;

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditBlock {
    #[schemars(length(min = 1))]
    pub old_text: String,
    pub new_text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditArgs {
    #[schemars(length(min = 1))]
    pub path: String,
    #[schemars(length(min = 1))]
    pub edits: Vec<EditBlock>,
}

/// Apply `edits` (each `oldText` unique in `original`, no overlaps) and return the new text
/// and the first changed line (1-based).
pub fn apply_edits(
    display: &str,
    original: &str,
    edits: &[EditBlock],
) -> Result<(String, usize), ToolError> {
    let mut spans: Vec<(usize, usize, &str, usize)> = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        let old = e.old_text.as_str();
        let new = e.new_text.as_str();
        if old.is_empty() {
            return Err(ToolError::failed(format!(
                "edits[{i}].oldText is empty; give the exact text to replace"
            )));
        }
        let mut found = original.match_indices(old);
        let Some((start, _)) = found.next() else {
            return Err(ToolError::failed(format!(
                "edits[{i}].oldText was not found in {display}; read the file again and copy the text exactly (whitespace included)"
            )));
        };
        let more = found.count();
        if more > 0 {
            return Err(ToolError::failed(format!(
                "edits[{i}].oldText occurs {} times in {display}; include more surrounding text so it is unique",
                more + 1
            )));
        }
        spans.push((start, start + old.len(), new, i));
    }
    spans.sort_by_key(|s| s.0);
    for pair in spans.windows(2) {
        if pair[1].0 < pair[0].1 {
            return Err(ToolError::failed(format!(
                "edits[{}] and edits[{}] overlap in {display}; merge them into one edit",
                pair[0].3, pair[1].3
            )));
        }
    }
    let mut out = String::with_capacity(original.len());
    let mut cursor = 0;
    for (start, end, new, _) in &spans {
        out.push_str(&original[cursor..*start]);
        out.push_str(new);
        cursor = *end;
    }
    out.push_str(&original[cursor..]);
    let first = spans
        .first()
        .map(|s| original[..s.0].matches('\n').count() + 1)
        .unwrap_or(1);
    Ok((out, first))
}

fn planned_edit(
    ctx: &ToolCtx,
    args: &EditArgs,
) -> Result<(Resolved, String, String, usize), ToolError> {
    let r = resolve(ctx, &args.path, Access::Write)?;
    let original = read_text(&r)?.ok_or_else(|| {
        ToolError::failed(format!(
            "{} does not exist; use write to create it",
            r.display
        ))
    })?;
    let (new, first) = apply_edits(&r.display, &original, &args.edits)?;
    Ok((r, original, new, first))
}

impl TypedTool for Edit {
    type Args = EditArgs;
    const NAME: &'static str = "edit";
    const GROUP: &'static str = "files";
    const DESCRIPTION: &'static str = "Replace exact text blocks in an existing file. Each oldText must occur exactly once in the current file and edits must not overlap; all are matched against the original file.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Files])
    };
    const PARTS: bool = true;
    fn write_targets(&self, ctx: &ToolCtx, args: &EditArgs) -> Vec<String> {
        path_targets(ctx, &args.path)
    }
    /// The kept hunks of the file's diff, as the fewest unique `oldText` blocks.
    fn narrow(
        &self,
        ctx: &ToolCtx,
        args: &EditArgs,
        _shown: &Preview,
        kept: &crate::engine::types::KeptParts,
    ) -> Result<Value, ToolError> {
        let (r, original, new, _) = planned_edit(ctx, args)?;
        let [marks] = kept.files.as_slice() else {
            return Err(ToolError::failed(format!(
                "an edit changes one file, the selection names {}",
                kept.files.len()
            )));
        };
        let partial = super::partial::kept_content(&r.display, &original, &new, marks)?;
        let edits: Vec<Value> = super::content_edit::blocks_for(&original, &partial)
            .iter()
            .map(|b| json!({"oldText": b.old_text, "newText": b.new_text}))
            .collect();
        Ok(json!({"path": args.path, "edits": edits}))
    }

    fn draft_paths(&self, _ctx: &ToolCtx, args: &EditArgs) -> Option<Vec<String>> {
        Some(vec![args.path.clone()])
    }
    fn preview(&self, ctx: &ToolCtx, args: &EditArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let (r, original, new, _) = planned_edit(ctx, args)?;
        let diff = bounded_diff(&r.display, &original, &new);
        let extent = elided_extent(&diff, original.len() as u64, new.len() as u64);
        let change = file_change(&r.display, true, diff);
        let blocks = args.edits.len();
        Ok(Preview {
            summary: format!(
                "Edit {} ({} block{}, +{} -{}{extent})",
                r.display,
                blocks,
                if blocks == 1 { "" } else { "s" },
                change.added,
                change.removed
            ),
            targets: vec![TargetState {
                key: r.display.clone(),
                fingerprint: fingerprint(&r.abs),
            }],
            body: PreviewBody::Files {
                changes: vec![change],
            },
        })
    }
    fn run(&self, ctx: &ToolCtx, args: &EditArgs) -> Result<ToolOutput, ToolError> {
        self.run_approved(ctx, args, None)
    }
    fn run_approved(
        &self,
        ctx: &ToolCtx,
        args: &EditArgs,
        approved: Option<&[String]>,
    ) -> Result<ToolOutput, ToolError> {
        // The edit applies to the file the held folder holds now, the one that is replaced.
        let t = approved_target(ctx, &args.path, approved)?;
        let original = target_text(&t)?.ok_or_else(|| {
            ToolError::failed(format!(
                "{} does not exist; use write to create it",
                t.display()
            ))
        })?;
        let (new, first) = apply_edits(t.display(), &original, &args.edits)?;
        write_file(&t, &new)?;
        let r = t.resolved;
        let diff = bounded_diff(&r.display, &original, &new).text;
        let blocks = args.edits.len();
        Ok(ToolOutput {
            content: format!("Successfully replaced {blocks} block(s) in {}", r.display),
            details: Some(json!({"diff": diff, "firstChangedLine": first})),
            changed_paths: vec![r.display],
            state_updates: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{apply_edits, EditBlock};

    fn json(v: serde_json::Value) -> EditBlock {
        serde_json::from_value(v).expect("edit block")
    }

    #[test]
    fn edits_apply_against_the_original_and_reject_ambiguity() {
        let text = "alpha beta gamma\nbeta\n";
        let (out, first) = apply_edits(
            "f",
            text,
            &[
                json(serde_json::json!({"oldText": "gamma", "newText": "G"})),
                json(serde_json::json!({"oldText": "alpha", "newText": "A"})),
            ],
        )
        .unwrap();
        assert_eq!(out, "A beta G\nbeta\n");
        assert_eq!(first, 1);
        let e = apply_edits(
            "f",
            text,
            &[json(serde_json::json!({"oldText": "beta", "newText": "x"}))],
        )
        .unwrap_err();
        assert!(e.to_string().contains("occurs 2 times"));
        let e = apply_edits(
            "f",
            text,
            &[json(
                serde_json::json!({"oldText": "delta", "newText": "x"}),
            )],
        )
        .unwrap_err();
        assert!(e.to_string().contains("not found"));
        let e = apply_edits(
            "f",
            text,
            &[
                json(serde_json::json!({"oldText": "alpha beta", "newText": "x"})),
                json(serde_json::json!({"oldText": "beta gamma", "newText": "y"})),
            ],
        )
        .unwrap_err();
        assert!(e.to_string().contains("overlap"));
    }
}
