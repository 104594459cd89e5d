//! The `read` tool's window over a file, streamed: the file is scanned in fixed-size chunks,
//! only the lines of the window are kept, and each kept line is cut at
//! [`READ_MAX_LINE_CHARS`] characters, so memory stays bounded whatever the file's size or
//! line length (a 1 GB single-line file costs one buffer, not 1 GB). Lines after the window
//! are only counted, so `totalLines` stays exact.

use std::io::{BufRead, BufReader, Read};

use serde_json::{json, Value};

use crate::engine::tool::{ToolError, ToolOutput};
use crate::workspace::regular::{open_regular, OpenRegularError};
use crate::workspace::Resolved;

/// Most lines and bytes one `read` returns; the rest is reachable with `offset`.
pub const READ_MAX_LINES: usize = 2000;
pub const READ_MAX_BYTES: usize = 50 * 1024;
/// Longest line `read` returns whole; longer lines are cut and say how much is missing.
pub const READ_MAX_LINE_CHARS: usize = 2000;

/// How many leading bytes decide whether a file is binary (a NUL byte among them).
const SNIFF_BYTES: usize = 8192;

/// One line of the window while it is being scanned.
#[derive(Default)]
struct Line {
    kept: Vec<u8>,
    kept_chars: usize,
    /// Characters after the cut (not kept).
    more_chars: usize,
    /// The last byte seen was `\r` (stripped from a line that ends in `\r\n`).
    last_cr: bool,
}

impl Line {
    fn push(&mut self, bytes: &[u8]) {
        let Some(&last) = bytes.last() else {
            return;
        };
        self.last_cr = last == b'\r';
        let starts_char = |b: &u8| b & 0xC0 != 0x80;
        let mut cut = bytes.len();
        if self.more_chars == 0 {
            // Keep bytes up to the first character past the cap (continuation bytes of a
            // kept character stay with it).
            for (i, b) in bytes.iter().enumerate() {
                if starts_char(b) {
                    if self.kept_chars == READ_MAX_LINE_CHARS {
                        cut = i;
                        break;
                    }
                    self.kept_chars += 1;
                }
            }
            self.kept.extend_from_slice(&bytes[..cut]);
        } else {
            cut = 0;
        }
        self.more_chars += bytes[cut..].iter().filter(|b| starts_char(b)).count();
    }

    fn render(mut self) -> Result<String, std::string::FromUtf8Error> {
        if self.last_cr {
            if self.more_chars > 0 {
                self.more_chars -= 1;
            } else {
                self.kept.pop();
            }
        }
        let mut text = String::from_utf8(self.kept)?;
        if self.more_chars > 0 {
            text.push_str(&format!(
                "… (line truncated, {} more chars)",
                self.more_chars
            ));
        }
        Ok(text)
    }
}

fn open_error(r: &Resolved, e: OpenRegularError) -> ToolError {
    match e {
        OpenRegularError::Folder => ToolError::failed(format!(
            "{} is a folder; use bash (ls, rg --files) to list it",
            r.display
        )),
        OpenRegularError::NotRegular { .. } => ToolError::failed(format!("{} {e}", r.display)),
        OpenRegularError::Io(e) => ToolError::failed(format!("cannot read {}: {e}", r.display)),
    }
}

/// Read lines `offset ..< offset + limit` (1-based) of `r`, at most [`READ_MAX_BYTES`].
pub fn read_window(
    r: &Resolved,
    offset: usize,
    limit: usize,
    numbers: bool,
) -> Result<ToolOutput, ToolError> {
    let (mut file, size) = open_regular(&r.abs)
        .map_err(|e| open_error(r, e))?
        .ok_or_else(|| ToolError::failed(format!("{} does not exist", r.display)))?;
    let io_err = |e: std::io::Error| ToolError::failed(format!("cannot read {}: {e}", r.display));
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut file)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(io_err)?;
    if head.contains(&0) {
        return Err(ToolError::failed(format!(
            "{} is a binary file ({size} bytes); read only returns text",
            r.display
        )));
    }
    let mut reader = BufReader::with_capacity(64 * 1024, std::io::Cursor::new(head).chain(file));

    let mut out = String::new();
    // Lines completed so far; the line being scanned is `total + 1`.
    let mut total = 0usize;
    let mut end_line = offset.saturating_sub(1);
    let mut truncated_by_bytes = false;
    let mut pending_bytes = false;
    let mut line: Option<Line> = None;
    loop {
        let chunk = reader.fill_buf().map_err(io_err)?;
        if chunk.is_empty() {
            break;
        }
        let len = chunk.len();
        let mut start = 0;
        while start < len {
            let in_window = !truncated_by_bytes && {
                let n = total + 1;
                n >= offset && n < offset + limit
            };
            let rest = &chunk[start..];
            let newline = rest.iter().position(|&b| b == b'\n');
            let piece = &rest[..newline.unwrap_or(rest.len())];
            if in_window {
                line.get_or_insert_with(Line::default).push(piece);
            }
            pending_bytes = true;
            match newline {
                Some(i) => {
                    start += i + 1;
                    total += 1;
                    pending_bytes = false;
                    if let Some(done) = line.take() {
                        keep_line(r, done, total, offset, numbers, &mut out).map(|kept| {
                            if kept {
                                end_line = total;
                            } else {
                                truncated_by_bytes = true;
                            }
                        })?;
                    }
                }
                None => start = len,
            }
        }
        reader.consume(len);
    }
    if pending_bytes {
        // A last line without a trailing newline.
        total += 1;
        if let Some(done) = line.take() {
            if keep_line(r, done, total, offset, numbers, &mut out)? {
                end_line = total;
            } else {
                truncated_by_bytes = true;
            }
        }
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

/// Append line `number` to `out` unless it would pass the byte cap (the first line of the
/// window is always kept). Returns whether it was kept.
fn keep_line(
    r: &Resolved,
    line: Line,
    number: usize,
    offset: usize,
    numbers: bool,
    out: &mut String,
) -> Result<bool, ToolError> {
    let text = line.render().map_err(|_| {
        ToolError::failed(format!("{} is not UTF-8 text (line {number})", r.display))
    })?;
    let rendered = if numbers {
        format!("{number:>6}\t{text}\n")
    } else {
        format!("{text}\n")
    };
    if out.len() + rendered.len() > READ_MAX_BYTES && number > offset {
        return Ok(false);
    }
    out.push_str(&rendered);
    Ok(true)
}
