//! Session logs: `.nbook/agent/sessions/<id>.jsonl`, one JSON object per line, append-only.
//! Every line is flushed before the engine takes its next step. Reading skips a torn or
//! corrupt line (reported, never fatal). Recovery marks calls that were waiting for approval
//! when nbook stopped as `interrupted`: they were not executed.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use super::types::{LogLine, LogRecord};

pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

pub struct SessionLog {
    path: PathBuf,
    file: File,
}

impl SessionLog {
    /// Create a new log file; fails if it exists (ids are never reused).
    pub fn create(path: &Path) -> io::Result<SessionLog> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path)?;
        Ok(SessionLog {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Open an existing log (or create it) for appending.
    pub fn open_append(path: &Path) -> io::Result<SessionLog> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new().append(true).create(true).open(path)?;
        Ok(SessionLog {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one record, stamped now. The line is written whole and flushed.
    pub fn append(&mut self, record: LogRecord) -> io::Result<LogLine> {
        let line = LogLine {
            ts: now_rfc3339(),
            record,
        };
        let mut text = serde_json::to_string(&line).map_err(io::Error::other)?;
        text.push('\n');
        self.file.write_all(text.as_bytes())?;
        self.file.flush()?;
        Ok(line)
    }
}

/// What reading a log found.
#[derive(Debug, Default)]
pub struct ReadLog {
    pub lines: Vec<LogLine>,
    /// 1-based numbers of lines that could not be parsed (torn last line, corruption).
    pub skipped: Vec<usize>,
}

pub fn read_log(path: &Path) -> io::Result<ReadLog> {
    let reader = BufReader::new(File::open(path)?);
    let mut out = ReadLog::default();
    for (i, line) in reader.split(b'\n').enumerate() {
        let bytes = line?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<LogLine>(&bytes) {
            Ok(l) => out.lines.push(l),
            Err(_) => out.skipped.push(i + 1),
        }
    }
    Ok(out)
}

/// Call ids that were requested for approval but never resolved.
pub fn unresolved_calls(lines: &[LogLine]) -> Vec<(String, String)> {
    let mut open: Vec<(String, String)> = Vec::new();
    for l in lines {
        match &l.record {
            LogRecord::ApprovalRequested { call_id, tool, .. } => {
                open.push((call_id.clone(), tool.clone()))
            }
            LogRecord::ApprovalResolved { call_id, .. } => open.retain(|(c, _)| c != call_id),
            _ => {}
        }
    }
    open
}

/// Mark every unresolved call in the log at `path` as interrupted. Returns how many.
pub fn recover(path: &Path) -> io::Result<usize> {
    let read = read_log(path)?;
    let open = unresolved_calls(&read.lines);
    if open.is_empty() {
        return Ok(0);
    }
    // A torn last line would glue onto our first record; start on a fresh line.
    let needs_newline = std::fs::read(path)
        .map(|b| !b.is_empty() && !b.ends_with(b"\n"))
        .unwrap_or(false);
    let mut log = SessionLog::open_append(path)?;
    if needs_newline {
        log.file.write_all(b"\n")?;
    }
    for (call_id, tool) in &open {
        log.append(LogRecord::ApprovalResolved {
            call_id: call_id.clone(),
            decision: "interrupted".into(),
            by: "engine".into(),
            reason: Some("nbook stopped before the author decided".into()),
            edited_args: None,
        })?;
        log.append(LogRecord::ToolResult {
            call_id: call_id.clone(),
            tool: tool.clone(),
            ok: false,
            content: "interrupted: nbook stopped while this call waited for approval; it was not executed".into(),
            details: None,
        })?;
    }
    log.append(LogRecord::Lifecycle {
        status: "interrupted".into(),
        message: Some(format!(
            "{} pending call(s) interrupted at restart",
            open.len()
        )),
    })?;
    Ok(open.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::types::{Mode, Preview, PreviewBody};

    fn requested(id: &str) -> LogRecord {
        LogRecord::ApprovalRequested {
            call_id: id.into(),
            tool: "write".into(),
            args: serde_json::json!({}),
            preview: Preview {
                summary: "s".into(),
                body: PreviewBody::Text { text: "t".into() },
                targets: vec![],
            },
            mode: Mode::Normal,
        }
    }

    #[test]
    fn torn_last_line_is_skipped_and_recovery_interrupts_pending() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("1.jsonl");
        let mut log = SessionLog::create(&p).unwrap();
        log.append(LogRecord::User { text: "hi".into() }).unwrap();
        log.append(requested("c1")).unwrap();
        drop(log);
        // Simulate a crash mid-write.
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"ts\":\"x\",\"kind\":\"assis").unwrap();
        drop(f);
        let read = read_log(&p).unwrap();
        assert_eq!(read.lines.len(), 2);
        assert_eq!(read.skipped, vec![3]);
        assert_eq!(recover(&p).unwrap(), 1);
        let read = read_log(&p).unwrap();
        assert!(unresolved_calls(&read.lines).is_empty());
        assert!(read.lines.iter().any(|l| matches!(&l.record,
            LogRecord::ApprovalResolved { decision, .. } if decision == "interrupted")));
        // Recovery is idempotent.
        assert_eq!(recover(&p).unwrap(), 0);
    }
}
