//! Planning: compute every file's final content in memory, without touching the disk.

use std::collections::HashMap;

use super::error::PatchError;
use super::parser::{Hunk, UpdateChunk};
use super::seek::seek_sequence;

/// One file operation of a planned patch, with the contents needed to show and commit it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    /// The path as written in the patch (the source path for a move).
    pub path: String,
    pub kind: PlannedKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedKind {
    /// Create `path`; `previous` is the content it overwrites, if the file existed.
    Add {
        content: String,
        previous: Option<String>,
    },
    /// Remove `path`, whose content was `old`.
    Delete { old: String },
    /// Rewrite `path` from `old` to `new`; with `move_to`, `new` goes to that path instead and
    /// `path` is removed (an existing destination is overwritten).
    Update {
        old: String,
        new: String,
        move_to: Option<String>,
    },
}

/// Reader callback: `Ok(Some(text))` if the file exists, `Ok(None)` if it is missing, `Err(msg)`
/// if it cannot be read (directory, binary, not authorized...).
pub type ReadFn<'a> = dyn FnMut(&str) -> Result<Option<String>, String> + 'a;

/// Compute every file's final content in memory without touching disk.
///
/// Hunks on a path already touched earlier in the same patch see the planned (in-memory)
/// content. The result has one entry per hunk, in patch order.
pub fn plan_patch(hunks: &[Hunk], read: &mut ReadFn<'_>) -> Result<Vec<PlannedFile>, PatchError> {
    if hunks.is_empty() {
        return Err(PatchError::NoFilesModified);
    }
    // Planned state of every path touched so far: Some(content), or None once deleted/moved.
    let mut state: HashMap<String, Option<String>> = HashMap::new();
    let mut plan = Vec::with_capacity(hunks.len());
    for hunk in hunks {
        let mut current = |path: &str| match state.get(path) {
            Some(planned) => Ok(planned.clone()),
            None => read(path),
        };
        let mut changes: Vec<(String, Option<String>)> = Vec::with_capacity(2);
        let kind = match hunk {
            Hunk::AddFile { path, contents } => {
                let previous = current(path)
                    .map_err(|m| PatchError::io(format!("Failed to write file {path}"), m))?;
                changes.push((path.clone(), Some(contents.clone())));
                PlannedKind::Add {
                    content: contents.clone(),
                    previous,
                }
            }
            Hunk::DeleteFile { path } => {
                let context = format!("Failed to delete file {path}");
                let old = current(path)
                    .map_err(|m| PatchError::io(&context, m))?
                    .ok_or_else(|| PatchError::io(&context, "No such file or directory"))?;
                changes.push((path.clone(), None));
                PlannedKind::Delete { old }
            }
            Hunk::UpdateFile {
                path,
                move_path,
                chunks,
            } => {
                let context = format!("Failed to read file to update {path}");
                let old = current(path)
                    .map_err(|m| PatchError::io(&context, m))?
                    .ok_or_else(|| PatchError::io(&context, "No such file or directory"))?;
                let new = apply_chunks(path, &old, chunks)?;
                let move_to = move_path.as_ref().filter(|dest| *dest != path).cloned();
                if let Some(dest) = &move_to {
                    // The destination is overwritten, but it must be a plain readable file (or
                    // missing): refuse directories, binaries and unauthorized paths up front.
                    current(dest)
                        .map_err(|m| PatchError::io(format!("Failed to write file {dest}"), m))?;
                    changes.push((path.clone(), None));
                    changes.push((dest.clone(), Some(new.clone())));
                } else {
                    changes.push((path.clone(), Some(new.clone())));
                }
                PlannedKind::Update { old, new, move_to }
            }
        };
        // `current` borrows `state`: record this hunk's effects once it is done reading.
        state.extend(changes);
        plan.push(PlannedFile {
            path: hunk.path().to_string(),
            kind,
        });
    }
    Ok(plan)
}

/// Apply an update's chunks to `text` and return the new content.
///
/// The file is split on `\n` (one trailing empty element dropped); if every newline is `\r\n`
/// the `\r`s are stripped and put back on output. The result always ends with a newline
/// (unless it is empty).
pub(crate) fn apply_chunks(
    path: &str,
    text: &str,
    chunks: &[UpdateChunk],
) -> Result<String, PatchError> {
    let (lines, crlf) = split_lines(text);
    let replacements = compute_replacements(path, &lines, chunks)?;
    let new_lines = splice(path, lines, replacements)?;
    let newline = if crlf { "\r\n" } else { "\n" };
    let mut out = new_lines.join(newline);
    // Every line, the last included, ends with a newline. (Codex skips the final newline when
    // the last line is empty, which silently drops a trailing blank line; we keep it.)
    if !new_lines.is_empty() {
        out.push_str(newline);
    }
    Ok(out)
}

/// Split a file into lines; the flag says whether every newline was `\r\n`.
pub(crate) fn split_lines(text: &str) -> (Vec<String>, bool) {
    let newlines = text.matches('\n').count();
    let crlf = newlines > 0 && text.matches("\r\n").count() == newlines;
    let mut lines: Vec<String> = text
        .split('\n')
        .map(|l| {
            if crlf {
                l.strip_suffix('\r').unwrap_or(l).to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    (lines, crlf)
}

/// A replacement: at line `start`, remove `len` lines and put `new` there.
type Replacement = (usize, usize, Vec<String>);

fn compute_replacements(
    path: &str,
    lines: &[String],
    chunks: &[UpdateChunk],
) -> Result<Vec<Replacement>, PatchError> {
    let mut cursor = 0;
    let mut replacements = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        // Stacked contexts narrow the search one after the other.
        for ctx in &chunk.change_context {
            match seek_sequence(lines, std::slice::from_ref(ctx), cursor, false) {
                Some(found) => cursor = found + 1,
                None => {
                    return Err(PatchError::ComputeReplacements(format!(
                        "Failed to find context '{ctx}' in {path}"
                    )))
                }
            }
        }
        if chunk.old_lines.is_empty() {
            // Pure insertion: always at the end of the file, before a final empty line.
            let at = if lines.last().is_some_and(|l| l.is_empty()) {
                lines.len() - 1
            } else {
                lines.len()
            };
            replacements.push((at, 0, chunk.new_lines.clone()));
            continue;
        }
        let mut old: &[String] = &chunk.old_lines;
        let mut new: &[String] = &chunk.new_lines;
        let mut found = seek_sequence(lines, old, cursor, chunk.is_end_of_file);
        if found.is_none() {
            if let Some(trimmed) = old.strip_suffix(&[String::new()]) {
                // A trailing empty line is often a blank separator the model added: retry without.
                old = trimmed;
                new = new.strip_suffix(&[String::new()]).unwrap_or(new);
                found = seek_sequence(lines, old, cursor, chunk.is_end_of_file);
            }
        }
        match found {
            Some(start) => {
                // Context asserts what the file holds; when it matched only after fuzz
                // (whitespace, Unicode punctuation) the file's own line stays. Only `-`/`+`
                // lines change the file. (Codex writes the patch's text instead.)
                let mut new = new.to_vec();
                for &(o, n) in &chunk.context {
                    if o < old.len() && n < new.len() {
                        new[n] = lines[start + o].clone();
                    }
                }
                replacements.push((start, old.len(), new));
                cursor = start + old.len();
            }
            None => {
                return Err(PatchError::ComputeReplacements(format!(
                    "Failed to find expected lines in {path}:\n{}",
                    chunk.old_lines.join("\n")
                )))
            }
        }
    }
    Ok(replacements)
}

/// Apply sorted, non-overlapping replacements. Insertions sort before a replacement that starts
/// at the same line; chunks otherwise keep their patch order.
fn splice(
    path: &str,
    lines: Vec<String>,
    mut reps: Vec<Replacement>,
) -> Result<Vec<String>, PatchError> {
    reps.sort_by_key(|(start, len, _)| (*start, *len));
    let overlap = || PatchError::ComputeReplacements(format!("Overlapping chunks in {path}"));
    let mut out = Vec::with_capacity(lines.len());
    let mut lines = lines.into_iter();
    let mut pos = 0;
    for (start, len, new) in reps {
        if start < pos {
            return Err(overlap());
        }
        out.extend(lines.by_ref().take(start - pos));
        if lines.by_ref().take(len).count() != len {
            return Err(overlap());
        }
        out.extend(new);
        pos = start + len;
    }
    out.extend(lines);
    Ok(out)
}
