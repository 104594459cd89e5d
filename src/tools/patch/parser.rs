//! Parser for the Codex `apply_patch` text format.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: hello.txt
//! +Hello world
//! *** Update File: src/app.py
//! *** Move to: src/main.py
//! @@ def greet():
//! -print("Hi")
//! +print("Hello, world!")
//! *** Delete File: obsolete.txt
//! *** End Patch
//! ```
//!
//! The parser is the lenient one Codex uses by default: the text is trimmed, a heredoc wrapper
//! (`<<EOF` / `<<'EOF'` / `<<"EOF"` ... `EOF`) is dropped, the first chunk of an update may omit
//! its `@@` marker, and blank lines before a chunk are skipped.
//!
//! Deliberate extension: a chunk may start with several `@@ ctx` lines in a row (for example
//! `@@ class Foo` then `@@ def bar()`). Each context line narrows the search: it is looked up
//! after the previous one. Codex's parser rejects a `@@` right after another, although its tool
//! instructions show this form, so models do produce it.

use super::error::PatchError;

const BEGIN_PATCH: &str = "*** Begin Patch";
const END_PATCH: &str = "*** End Patch";
const ADD_FILE: &str = "*** Add File: ";
const DELETE_FILE: &str = "*** Delete File: ";
const UPDATE_FILE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";
const CONTEXT_MARKER: &str = "@@";

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    /// Create (or overwrite) `path` with `contents` (every line ends with `\n`).
    AddFile { path: String, contents: String },
    /// Remove the file `path`.
    DeleteFile { path: String },
    /// Edit `path` chunk by chunk, optionally renaming it to `move_path`.
    UpdateFile {
        path: String,
        move_path: Option<String>,
        chunks: Vec<UpdateChunk>,
    },
}

impl Hunk {
    /// The path the hunk reads (the source path for a move).
    pub fn path(&self) -> &str {
        match self {
            Hunk::AddFile { path, .. }
            | Hunk::DeleteFile { path }
            | Hunk::UpdateFile { path, .. } => path,
        }
    }
}

/// One `@@` section of an update.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateChunk {
    /// The `@@ <text>` lines before the body, outermost first (empty for a bare `@@` or none).
    /// Codex allows at most one; we accept a stack of them (see the module comment).
    pub change_context: Vec<String>,
    /// Lines expected in the file (context and `-` lines), without their prefix.
    pub old_lines: Vec<String>,
    /// Lines that replace them (context and `+` lines), without their prefix.
    pub new_lines: Vec<String>,
    /// Each context line (blank body lines included) as (index in `old_lines`, index in
    /// `new_lines`): planning puts the file's own line there, since context only asserts what
    /// the file holds (see `plan::compute_replacements`).
    pub context: Vec<(usize, usize)>,
    /// The chunk ended with `*** End of File`: it must match the end of the file.
    pub is_end_of_file: bool,
}

fn hunk_error(message: impl Into<String>, line_number: usize) -> PatchError {
    PatchError::InvalidHunk {
        message: message.into(),
        line_number,
    }
}

/// Parse a whole patch (envelope included) into its hunks. An empty envelope gives no hunk.
pub fn parse_patch(patch: &str) -> Result<Vec<Hunk>, PatchError> {
    let lines: Vec<&str> = patch.trim().lines().collect();
    let body = match envelope_body(&lines) {
        Ok(body) => body,
        Err(err) => match heredoc_inner(&lines) {
            Some(inner) => envelope_body(inner)?,
            None => return Err(err),
        },
    };
    parse_hunks(body)
}

/// The text of each hunk of `patch` (its header line and body), in order, each of which parses
/// alone (inside an envelope) to the same hunk as in the whole patch. `Err` when the patch does
/// not parse or cannot be cut that way.
pub fn hunk_sections(patch: &str) -> Result<Vec<String>, PatchError> {
    let hunks = parse_patch(patch)?;
    let lines: Vec<&str> = patch.trim().lines().collect();
    let body = match envelope_body(&lines) {
        Ok(body) => body,
        Err(err) => match heredoc_inner(&lines) {
            Some(inner) => envelope_body(inner)?,
            None => return Err(err),
        },
    };
    let mut out: Vec<String> = Vec::new();
    for l in body {
        let t = l.trim();
        if t.starts_with(ADD_FILE) || t.starts_with(DELETE_FILE) || t.starts_with(UPDATE_FILE) {
            out.push(String::new());
        }
        if let Some(s) = out.last_mut() {
            s.push_str(l);
            s.push('\n');
        }
    }
    let alone = |s: &String| parse_patch(&envelope(std::slice::from_ref(s)));
    let same = out.len() == hunks.len()
        && out
            .iter()
            .zip(&hunks)
            .all(|(s, h)| alone(s).is_ok_and(|p| p.as_slice() == std::slice::from_ref(h)));
    if !same {
        return Err(PatchError::InvalidPatch(
            "the patch cannot be cut into one section per file".into(),
        ));
    }
    Ok(out)
}

/// A patch made of `sections` (each ending with a newline).
pub fn envelope(sections: &[String]) -> String {
    let mut s = format!("{BEGIN_PATCH}\n");
    for sec in sections {
        s.push_str(sec);
    }
    s.push_str(END_PATCH);
    s.push('\n');
    s
}

/// Check the `*** Begin Patch` / `*** End Patch` lines and return what lies between them.
fn envelope_body<'a>(lines: &'a [&'a str]) -> Result<&'a [&'a str], PatchError> {
    if lines.first().map(|l| l.trim()) != Some(BEGIN_PATCH) {
        return Err(PatchError::InvalidPatch(format!(
            "The first line of the patch must be '{BEGIN_PATCH}'"
        )));
    }
    if lines.len() < 2 || lines.last().map(|l| l.trim()) != Some(END_PATCH) {
        return Err(PatchError::InvalidPatch(format!(
            "The last line of the patch must be '{END_PATCH}'"
        )));
    }
    Ok(&lines[1..lines.len() - 1])
}

/// The lines inside a `<<EOF` ... `EOF` heredoc wrapper, if the text has one.
fn heredoc_inner<'a>(lines: &'a [&'a str]) -> Option<&'a [&'a str]> {
    if lines.len() < 4 {
        return None;
    }
    let first = lines.first()?.trim();
    let last = lines.last()?.trim();
    let opens = matches!(first, "<<EOF" | "<<'EOF'" | "<<\"EOF\"");
    if opens && last.ends_with("EOF") {
        Some(&lines[1..lines.len() - 1])
    } else {
        None
    }
}

/// Parse the hunks between the envelope lines; `body[0]` is line 2 of the patch.
fn parse_hunks(body: &[&str]) -> Result<Vec<Hunk>, PatchError> {
    let mut hunks = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let line_number = i + 2;
        let header = body[i].trim();
        i += 1;
        if let Some(path) = header.strip_prefix(ADD_FILE) {
            let mut contents = String::new();
            while let Some(added) = body.get(i).and_then(|l| l.strip_prefix('+')) {
                contents.push_str(added);
                contents.push('\n');
                i += 1;
            }
            hunks.push(Hunk::AddFile {
                path: path.to_string(),
                contents,
            });
        } else if let Some(path) = header.strip_prefix(DELETE_FILE) {
            hunks.push(Hunk::DeleteFile {
                path: path.to_string(),
            });
        } else if let Some(path) = header.strip_prefix(UPDATE_FILE) {
            let move_path = body.get(i).and_then(|l| l.strip_prefix(MOVE_TO));
            if move_path.is_some() {
                i += 1;
            }
            let mut chunks = Vec::new();
            while let Some(line) = body.get(i) {
                if line.trim().is_empty() {
                    i += 1;
                    continue;
                }
                if line.starts_with('*') {
                    break;
                }
                let (chunk, used) = parse_chunk(&body[i..], i + 2, chunks.is_empty())?;
                chunks.push(chunk);
                i += used;
            }
            if chunks.is_empty() {
                return Err(hunk_error(
                    format!("Update file hunk for path '{path}' is empty"),
                    line_number,
                ));
            }
            hunks.push(Hunk::UpdateFile {
                path: path.to_string(),
                move_path: move_path.map(str::to_string),
                chunks,
            });
        } else {
            return Err(hunk_error(
                format!(
                    "'{header}' is not a valid hunk header. Valid hunk headers: \
                     '*** Add File: {{path}}', '*** Delete File: {{path}}', \
                     '*** Update File: {{path}}'"
                ),
                line_number,
            ));
        }
    }
    Ok(hunks)
}

/// Parse one chunk starting at `lines[0]` (patch line `first_line`). Returns the chunk and the
/// number of lines it used.
fn parse_chunk(
    lines: &[&str],
    first_line: usize,
    allow_missing_context: bool,
) -> Result<(UpdateChunk, usize), PatchError> {
    let mut chunk = UpdateChunk::default();
    let mut idx = 0;
    // Stacked context markers: `@@`, `@@ ctx`, `@@ ctx2`... A bare `@@` (or `@@ ` followed by
    // blanks only) adds no context.
    while let Some(line) = lines.get(idx) {
        if *line == CONTEXT_MARKER {
            idx += 1;
        } else if let Some(ctx) = line.strip_prefix("@@ ") {
            if !ctx.trim().is_empty() {
                chunk.change_context.push(ctx.to_string());
            }
            idx += 1;
        } else {
            break;
        }
    }
    if idx == 0 && !allow_missing_context {
        let got = lines.first().copied().unwrap_or_default();
        return Err(hunk_error(
            format!("Expected update hunk to start with a @@ context marker, got: '{got}'"),
            first_line,
        ));
    }
    let mut body_lines = 0;
    while let Some(line) = lines.get(idx) {
        if *line == END_OF_FILE {
            if body_lines == 0 {
                break;
            }
            chunk.is_end_of_file = true;
            idx += 1;
            break;
        }
        let context = if line.is_empty() {
            Some("")
        } else {
            line.strip_prefix(' ')
        };
        if let Some(ctx) = context {
            chunk
                .context
                .push((chunk.old_lines.len(), chunk.new_lines.len()));
            chunk.old_lines.push(ctx.to_string());
            chunk.new_lines.push(ctx.to_string());
        } else if let Some(removed) = line.strip_prefix('-') {
            chunk.old_lines.push(removed.to_string());
        } else if let Some(added) = line.strip_prefix('+') {
            chunk.new_lines.push(added.to_string());
        } else if body_lines == 0 {
            return Err(hunk_error(
                format!(
                    "Unexpected line found in update hunk: '{line}'. Every line should start \
                     with ' ' (context line), '+' (added line), or '-' (removed line)"
                ),
                first_line + idx,
            ));
        } else {
            break;
        }
        body_lines += 1;
        idx += 1;
    }
    if body_lines == 0 {
        return Err(hunk_error(
            "Update hunk does not contain any lines",
            first_line + idx,
        ));
    }
    Ok((chunk, idx))
}
