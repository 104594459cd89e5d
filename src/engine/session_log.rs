//! Session logs: `.nbook/agent/sessions/<id>.jsonl`, one JSON object per line, append-only.
//! Every line is flushed before the engine takes its next step. Reading skips a torn or
//! corrupt line (reported, never fatal); an append always starts on a fresh line, so a torn
//! line never swallows the record written after it. Recovery marks calls that were waiting
//! for approval when nbook stopped as `interrupted` (they were not executed), except those
//! the approval queue kept on disk (`pending_store`), which wait again.
//!
//! [`LogWriter`] is one session's writer with its own lock: the engine clones it out of its
//! state and writes without holding the state lock, so a slow disk never stalls the queue.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use super::types::{LogLine, LogRecord};

pub use crate::protocol::now_rfc3339;

pub struct SessionLog {
    path: PathBuf,
    file: File,
    /// The file may end inside a line (a crash mid-write, or a write of ours that failed part
    /// way): the next append writes a newline first.
    needs_newline: bool,
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
            needs_newline: false,
        })
    }

    /// Open an existing log (or create it) for appending. A file that does not end with a
    /// newline (torn last line) gets one before the first record.
    pub fn open_append(path: &Path) -> io::Result<SessionLog> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)?;
        let needs_newline = ends_inside_a_line(&mut file)?;
        Ok(SessionLog {
            path: path.to_path_buf(),
            file,
            needs_newline,
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
        let text = serde_json::to_string(&line).map_err(io::Error::other)?;
        let mut bytes = Vec::with_capacity(text.len() + 2);
        if self.needs_newline {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(text.as_bytes());
        bytes.push(b'\n');
        match self.file.write_all(&bytes).and_then(|()| self.file.flush()) {
            Ok(()) => {
                self.needs_newline = false;
                Ok(line)
            }
            Err(e) => {
                // Part of the line may be on disk: never glue the next record onto it.
                self.needs_newline = true;
                Err(e)
            }
        }
    }
}

/// Whether a regular file's last byte is not a newline. Only the last byte is read (logs can
/// be large); devices and empty files need nothing.
fn ends_inside_a_line(file: &mut File) -> io::Result<bool> {
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// One session's log writer, opened on the first append. Its lock orders that session's
/// appends (and the events sent for them) without the engine's state lock.
pub struct LogWriter {
    path: PathBuf,
    log: Mutex<Option<SessionLog>>,
}

impl LogWriter {
    /// A writer for a log that is opened (for appending) when first written.
    pub fn lazy(path: PathBuf) -> LogWriter {
        LogWriter {
            path,
            log: Mutex::new(None),
        }
    }

    /// A writer for a log that is already open.
    pub fn open(log: SessionLog) -> LogWriter {
        LogWriter {
            path: log.path.clone(),
            log: Mutex::new(Some(log)),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn guard(&self) -> MutexGuard<'_, Option<SessionLog>> {
        // A panic mid-append leaves at worst a torn line, which the next append steps over.
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Append one record; `written` runs while this session's appends are still held back,
    /// so whatever it announces comes in the order of the file.
    pub fn append(&self, record: LogRecord, written: impl FnOnce(&LogLine)) -> io::Result<LogLine> {
        let mut guard = self.guard();
        let log = match guard.as_mut() {
            Some(log) => log,
            None => guard.insert(SessionLog::open_append(&self.path)?),
        };
        let line = log.append(record)?;
        written(&line);
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

/// An approval that was requested but never resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unresolved {
    /// Empty for a record written before approvals had their own id.
    pub approval_id: String,
    pub call_id: String,
    pub tool: String,
}

/// Approvals that were requested but never resolved, matched by approval id (by call id for
/// records written before approval ids existed).
pub fn unresolved_calls(lines: &[LogLine]) -> Vec<Unresolved> {
    let mut open: Vec<Unresolved> = Vec::new();
    for l in lines {
        match &l.record {
            LogRecord::ApprovalRequested {
                approval_id,
                call_id,
                tool,
                ..
            } => open.push(Unresolved {
                approval_id: approval_id.clone(),
                call_id: call_id.clone(),
                tool: tool.clone(),
            }),
            LogRecord::ApprovalResolved {
                approval_id,
                call_id,
                ..
            } => {
                // The oldest open request it answers (a provider may reuse call ids).
                let pos = open.iter().position(|u| {
                    if approval_id.is_empty() || u.approval_id.is_empty() {
                        u.call_id == *call_id
                    } else {
                        u.approval_id == *approval_id
                    }
                });
                if let Some(pos) = pos {
                    open.remove(pos);
                }
            }
            _ => {}
        }
    }
    open
}

/// The highest `ap-<n>` approval id in a log (0 if none): the engine mints ids after it.
pub fn highest_approval_number(lines: &[LogLine]) -> u64 {
    lines
        .iter()
        .filter_map(|l| match &l.record {
            LogRecord::ApprovalRequested { approval_id, .. }
            | LogRecord::ApprovalResolved { approval_id, .. } => approval_id
                .strip_prefix("ap-")
                .and_then(|n| n.parse::<u64>().ok()),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// Mark every unresolved call in the log at `path` as interrupted. Returns how many.
pub fn recover(path: &Path) -> io::Result<usize> {
    recover_except(path, &std::collections::HashSet::new())
}

/// [`recover`], leaving open the approvals named in `keep` (calls kept on disk that wait
/// again after the restart).
pub fn recover_except(path: &Path, keep: &std::collections::HashSet<String>) -> io::Result<usize> {
    let read = read_log(path)?;
    let mut open = unresolved_calls(&read.lines);
    open.retain(|u| !keep.contains(&u.approval_id));
    if open.is_empty() {
        return Ok(0);
    }
    // `open_append` steps over a torn last line, so our first record starts a fresh line.
    let mut log = SessionLog::open_append(path)?;
    for u in &open {
        log.append(LogRecord::ApprovalResolved {
            approval_id: u.approval_id.clone(),
            call_id: u.call_id.clone(),
            decision: "interrupted".into(),
            by: "engine".into(),
            reason: Some("nbook stopped before the author decided".into()),
            edited_args: None,
        })?;
        log.append(LogRecord::ToolResult {
            call_id: u.call_id.clone(),
            tool: u.tool.clone(),
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
            approval_id: String::new(),
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

    fn at(record: LogRecord) -> LogLine {
        LogLine {
            ts: "t".into(),
            record,
        }
    }

    #[test]
    fn approvals_are_matched_by_approval_id_not_the_reused_call_id() {
        let ask = |ap: &str| {
            at(LogRecord::ApprovalRequested {
                approval_id: ap.into(),
                call_id: "call_0".into(),
                tool: "write".into(),
                args: serde_json::json!({}),
                preview: Preview {
                    summary: "s".into(),
                    body: PreviewBody::Text { text: "t".into() },
                    targets: vec![],
                },
                mode: Mode::Normal,
            })
        };
        let resolve = |ap: &str| {
            at(LogRecord::ApprovalResolved {
                approval_id: ap.into(),
                call_id: "call_0".into(),
                decision: "approve".into(),
                by: "author".into(),
                reason: None,
                edited_args: None,
            })
        };
        // Two turns, both `call_0`: the second answer names the first request's id.
        let lines = vec![ask("ap-4"), ask("ap-7"), resolve("ap-7")];
        let open = unresolved_calls(&lines);
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].approval_id, "ap-4");
        assert_eq!(highest_approval_number(&lines), 7);
        assert_eq!(highest_approval_number(&[]), 0);
    }
}
