//! File tools: `read`, `write`, `edit`. Every path goes through the workspace's
//! authorization; every write is atomic; every mutating call previews a unified diff and
//! fingerprints its target so a change between preview and approval is caught as stale.

use std::io::{BufRead, BufReader, Read as _};

use serde_json::{json, Value};

use super::patch::unified_diff;
use crate::engine::tool::{Mutates, Tool, ToolCtx, ToolError, ToolOutput};
use crate::engine::types::{ChangeKind, FileChange, Preview, PreviewBody, TargetState};
use crate::workspace::{Access, Resolved, Target};

/// Most lines and bytes one `read` returns; the rest is reachable with `offset`.
pub const READ_MAX_LINES: usize = 2000;
pub const READ_MAX_BYTES: usize = 50 * 1024;

fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn resolve(ctx: &ToolCtx, path: &str, access: Access) -> Result<Resolved, ToolError> {
    ctx.workspace
        .resolve(path, access)
        .map_err(|e| ToolError::failed(e.to_string()))
}

/// A fingerprint of a file's current bytes ("absent" when missing).
pub fn fingerprint(path: &std::path::Path) -> String {
    use std::hash::{Hash, Hasher};
    match std::fs::read(path) {
        Ok(bytes) => {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut h);
            format!("{}:{:016x}", bytes.len(), h.finish())
        }
        Err(_) if !path.exists() => "absent".into(),
        Err(e) => format!("unreadable:{}", e.kind()),
    }
}

/// Read a text file for editing. Missing → `Ok(None)`; binary or unreadable → error.
pub fn read_text(r: &Resolved) -> Result<Option<String>, ToolError> {
    if r.abs.is_dir() {
        return Err(ToolError::failed(format!(
            "{} is a folder, not a file",
            r.display
        )));
    }
    match std::fs::read(&r.abs) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
            ToolError::failed(format!(
                "{} is not UTF-8 text; the file tools only edit text",
                r.display
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ToolError::failed(format!("cannot read {}: {e}", r.display))),
    }
}

fn file_change(display: &str, old: Option<&str>, new: &str) -> FileChange {
    let (diff, added, removed) = unified_diff(display, old.unwrap_or(""), new);
    FileChange {
        path: display.to_string(),
        kind: if old.is_some() {
            ChangeKind::Update
        } else {
            ChangeKind::Add
        },
        move_to: None,
        diff,
        added,
        removed,
    }
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

impl Tool for Read {
    fn name(&self) -> &'static str {
        "read"
    }
    fn group(&self) -> &'static str {
        "files"
    }
    fn description(&self) -> &'static str {
        "Read a text file of the project. Returns at most 2000 lines or 50 KB; use offset (1-based line) and limit to page through longer files."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "description": "Project-relative path, or workspace/<project>/<path>"},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to return (1-based)"},
                "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines"},
                "lineNumbers": {"type": "boolean", "description": "Prefix each line with its number"}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::No
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        let r = resolve(ctx, str_arg(args, "path"), Access::Read)?;
        let offset = args
            .get("offset")
            .and_then(Value::as_u64)
            .unwrap_or(1)
            .max(1) as usize;
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map(|l| (l as usize).min(READ_MAX_LINES))
            .unwrap_or(READ_MAX_LINES);
        let numbers = args
            .get("lineNumbers")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        read_window(&r, offset, limit, numbers)
    }
}

/// Stream the file: never holds more than the returned window in memory, so a huge file is
/// as safe to read as a small one.
fn read_window(
    r: &Resolved,
    offset: usize,
    limit: usize,
    numbers: bool,
) -> Result<ToolOutput, ToolError> {
    if r.abs.is_dir() {
        return Err(ToolError::failed(format!(
            "{} is a folder; use bash (ls, rg --files) to list it",
            r.display
        )));
    }
    let file = std::fs::File::open(&r.abs).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::failed(format!("{} does not exist", r.display)),
        _ => ToolError::failed(format!("cannot read {}: {e}", r.display)),
    })?;
    let mut reader = BufReader::new(file);
    let mut head = [0u8; 8192];
    let n = reader
        .get_mut()
        .read(&mut head)
        .map_err(|e| ToolError::failed(e.to_string()))?;
    if head[..n].contains(&0) {
        let size = std::fs::metadata(&r.abs).map(|m| m.len()).unwrap_or(0);
        return Err(ToolError::failed(format!(
            "{} is a binary file ({size} bytes); read only returns text",
            r.display
        )));
    }
    let mut reader =
        BufReader::new(std::io::Cursor::new(head[..n].to_vec()).chain(reader.into_inner()));
    let mut out = String::new();
    let mut total = 0usize;
    let mut end_line = offset.saturating_sub(1);
    let mut truncated_by_bytes = false;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", r.display)))?;
        if read == 0 {
            break;
        }
        total += 1;
        if total < offset || total >= offset + limit || truncated_by_bytes {
            continue;
        }
        let line = String::from_utf8(buf.clone()).map_err(|_| {
            ToolError::failed(format!("{} is not UTF-8 text (line {total})", r.display))
        })?;
        let line = line.strip_suffix('\n').unwrap_or(&line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = clip_line(line);
        let rendered = if numbers {
            format!("{total:>6}\t{line}\n")
        } else {
            format!("{line}\n")
        };
        if out.len() + rendered.len() > READ_MAX_BYTES && total > offset {
            truncated_by_bytes = true;
            continue;
        }
        out.push_str(&rendered);
        end_line = total;
    }
    if offset > total.max(1) {
        return Err(ToolError::failed(format!(
            "offset {offset} is past the end of {} ({total} lines)",
            r.display
        )));
    }
    let next = (end_line < total).then_some(end_line + 1);
    let truncation = match (next, truncated_by_bytes) {
        (None, _) => Value::Null,
        (Some(_), true) => json!("bytes"),
        (Some(_), false) => json!("lines"),
    };
    if let Some(next) = next {
        out.push_str(&format!(
            "\n[Showing lines {offset}-{end_line} of {total}. Use offset={next} to continue.]\n"
        ));
    }
    Ok(ToolOutput {
        content: out,
        details: Some(json!({
            "path": r.display,
            "startLine": offset,
            "endLine": end_line,
            "totalLines": total,
            "nextOffset": next,
            "truncation": truncation,
        })),
        changed_paths: Vec::new(),
        state_updates: Vec::new(),
    })
}

/// One line longer than the byte cap is cut (on a character boundary) and says so.
fn clip_line(line: &str) -> std::borrow::Cow<'_, str> {
    if line.len() <= READ_MAX_BYTES {
        return line.into();
    }
    let mut cut = READ_MAX_BYTES;
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{} … [line cut at {READ_MAX_BYTES} bytes of {}]",
        &line[..cut],
        line.len()
    )
    .into()
}

// ---------------------------------------------------------------------------------------------

pub struct Write;

impl Tool for Write {
    fn name(&self) -> &'static str {
        "write"
    }
    fn group(&self) -> &'static str {
        "files"
    }
    fn description(&self) -> &'static str {
        "Create a file, or replace a file's whole content. Parent folders are created. Prefer edit for small changes."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1},
                "content": {"type": "string"}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::Yes
    }
    fn write_targets(&self, ctx: &ToolCtx, args: &Value) -> Vec<String> {
        resolve(ctx, str_arg(args, "path"), Access::Write)
            .map(|r| vec![r.display])
            .unwrap_or_else(|_| vec![str_arg(args, "path").to_string()])
    }
    fn preview(&self, ctx: &ToolCtx, args: &Value) -> Result<Preview, ToolError> {
        let r = resolve(ctx, str_arg(args, "path"), Access::Write)?;
        let old = read_text(&r)?;
        let change = file_change(&r.display, old.as_deref(), str_arg(args, "content"));
        Ok(Preview {
            summary: format!(
                "{} {} (+{} -{})",
                if old.is_some() { "Overwrite" } else { "Create" },
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
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        self.run_approved(ctx, args, None)
    }
    fn run_approved(
        &self,
        ctx: &ToolCtx,
        args: &Value,
        approved: Option<&[String]>,
    ) -> Result<ToolOutput, ToolError> {
        let t = approved_target(ctx, str_arg(args, "path"), approved)?;
        if t.is_dir() {
            return Err(ToolError::failed(format!("{} is a folder", t.display())));
        }
        let content = str_arg(args, "content");
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

/// Apply `edits` (each `oldText` unique in `original`, no overlaps) and return the new text
/// and the first changed line (1-based).
pub fn apply_edits(
    display: &str,
    original: &str,
    edits: &[Value],
) -> Result<(String, usize), ToolError> {
    let mut spans: Vec<(usize, usize, &str, usize)> = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        let old = str_arg(e, "oldText");
        let new = str_arg(e, "newText");
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
    args: &Value,
) -> Result<(Resolved, String, String, usize), ToolError> {
    let r = resolve(ctx, str_arg(args, "path"), Access::Write)?;
    let original = read_text(&r)?.ok_or_else(|| {
        ToolError::failed(format!(
            "{} does not exist; use write to create it",
            r.display
        ))
    })?;
    let edits = args
        .get("edits")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let (new, first) = apply_edits(&r.display, &original, &edits)?;
    Ok((r, original, new, first))
}

impl Tool for Edit {
    fn name(&self) -> &'static str {
        "edit"
    }
    fn group(&self) -> &'static str {
        "files"
    }
    fn description(&self) -> &'static str {
        "Replace exact text blocks in an existing file. Each oldText must occur exactly once in the current file and edits must not overlap; all are matched against the original file."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1},
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "oldText": {"type": "string", "minLength": 1},
                            "newText": {"type": "string"}
                        },
                        "required": ["oldText", "newText"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["path", "edits"],
            "additionalProperties": false
        })
    }
    fn mutates(&self) -> Mutates {
        Mutates::Yes
    }
    fn write_targets(&self, ctx: &ToolCtx, args: &Value) -> Vec<String> {
        Write.write_targets(ctx, args)
    }
    fn preview(&self, ctx: &ToolCtx, args: &Value) -> Result<Preview, ToolError> {
        let (r, original, new, _) = planned_edit(ctx, args)?;
        let change = file_change(&r.display, Some(&original), &new);
        let blocks = args
            .get("edits")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        Ok(Preview {
            summary: format!(
                "Edit {} ({} block{}, +{} -{})",
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
    fn run(&self, ctx: &ToolCtx, args: &Value) -> Result<ToolOutput, ToolError> {
        self.run_approved(ctx, args, None)
    }
    fn run_approved(
        &self,
        ctx: &ToolCtx,
        args: &Value,
        approved: Option<&[String]>,
    ) -> Result<ToolOutput, ToolError> {
        // The edit applies to the file the held folder holds now, the one that is replaced.
        let t = approved_target(ctx, str_arg(args, "path"), approved)?;
        let original = target_text(&t)?.ok_or_else(|| {
            ToolError::failed(format!(
                "{} does not exist; use write to create it",
                t.display()
            ))
        })?;
        let edits = args
            .get("edits")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let (new, first) = apply_edits(t.display(), &original, &edits)?;
        write_file(&t, &new)?;
        let r = t.resolved;
        let (diff, _, _) = unified_diff(&r.display, &original, &new);
        let blocks = args
            .get("edits")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
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
    use super::apply_edits;
    use serde_json::json;

    #[test]
    fn edits_apply_against_the_original_and_reject_ambiguity() {
        let text = "alpha beta gamma\nbeta\n";
        let (out, first) = apply_edits(
            "f",
            text,
            &[
                json!({"oldText": "gamma", "newText": "G"}),
                json!({"oldText": "alpha", "newText": "A"}),
            ],
        )
        .unwrap();
        assert_eq!(out, "A beta G\nbeta\n");
        assert_eq!(first, 1);
        let e = apply_edits("f", text, &[json!({"oldText": "beta", "newText": "x"})]).unwrap_err();
        assert!(e.to_string().contains("occurs 2 times"));
        let e = apply_edits("f", text, &[json!({"oldText": "delta", "newText": "x"})]).unwrap_err();
        assert!(e.to_string().contains("not found"));
        let e = apply_edits(
            "f",
            text,
            &[
                json!({"oldText": "alpha beta", "newText": "x"}),
                json!({"oldText": "beta gamma", "newText": "y"}),
            ],
        )
        .unwrap_err();
        assert!(e.to_string().contains("overlap"));
    }
}
