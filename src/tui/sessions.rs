//! The Sessions pane's model: the session list as the engine reports it, and the selected
//! session's transcript built from its log (read off the UI task) plus live log lines —
//! messages, one entry per tool call with its outcome, approvals, mode changes, lifecycle.

use std::collections::HashMap;

use serde_json::Value;

use super::action::Ticket;
use super::approvals::cut;
use crate::engine::{LogLine, LogRecord, PreviewBody, SessionInfo};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Running,
    Waiting,
    Ok(String),
    Failed(String),
    Rejected(Option<String>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoteKind {
    Approval,
    Mode,
    Lifecycle,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    User(String),
    Assistant(String),
    Tool {
        call_id: String,
        tool: String,
        summary: String,
        outcome: Outcome,
    },
    Note(NoteKind, String),
}

#[derive(Clone, Debug, Default)]
pub struct Transcript {
    pub session_id: String,
    pub entries: Vec<Entry>,
    by_call: HashMap<String, usize>,
    /// Lines seen live; kept to merge with a log read still in flight.
    pub live: Vec<LogLine>,
    pub loading: Option<Ticket>,
    pub error: Option<String>,
    /// Log lines applied (loaded + live), to drop duplicates after a reload.
    applied: usize,
}

/// A one-line summary of a tool call's arguments.
pub fn summarize_args(args: &Value) -> String {
    let s = |k: &str| args.get(k).and_then(Value::as_str);
    if let Some(p) = s("path") {
        return match s("move_to") {
            Some(to) => format!("{p} → {to}"),
            None => p.to_string(),
        };
    }
    if let Some(c) = s("command") {
        return format!("$ {}", cut(c, 70));
    }
    for key in ["patch", "input"] {
        if let Some(text) = s(key) {
            let files: Vec<&str> = text
                .lines()
                .filter_map(|l| {
                    l.strip_prefix("*** Update File: ")
                        .or_else(|| l.strip_prefix("*** Add File: "))
                        .or_else(|| l.strip_prefix("*** Delete File: "))
                })
                .collect();
            if !files.is_empty() {
                return files.join(", ");
            }
        }
    }
    cut(&args.to_string(), 70)
}

impl Transcript {
    pub fn new(session_id: &str) -> Transcript {
        Transcript {
            session_id: session_id.to_string(),
            ..Transcript::default()
        }
    }

    fn tool_entry(&mut self, call_id: &str, tool: &str, summary: String) -> usize {
        if let Some(&i) = self.by_call.get(call_id) {
            return i;
        }
        self.entries.push(Entry::Tool {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            summary,
            outcome: Outcome::Running,
        });
        let i = self.entries.len() - 1;
        self.by_call.insert(call_id.to_string(), i);
        i
    }

    fn set_outcome(&mut self, i: usize, new: Outcome) {
        if let Some(Entry::Tool { outcome, .. }) = self.entries.get_mut(i) {
            // A rejection stays a rejection when the error result follows it.
            if matches!(outcome, Outcome::Rejected(_)) && matches!(new, Outcome::Failed(_)) {
                return;
            }
            *outcome = new;
        }
    }

    /// Apply one log line.
    pub fn apply(&mut self, line: &LogLine) {
        self.applied += 1;
        match &line.record {
            LogRecord::Header {
                profile,
                mode,
                title,
                ..
            } => self.entries.push(Entry::Note(
                NoteKind::Lifecycle,
                format!("session started · {profile} · {mode} · {title}"),
            )),
            LogRecord::User { text } => self.entries.push(Entry::User(text.clone())),
            LogRecord::Assistant { text, tool_calls } => {
                if !text.trim().is_empty() {
                    self.entries.push(Entry::Assistant(text.clone()));
                }
                for c in tool_calls {
                    self.tool_entry(&c.id, &c.name, summarize_args(&c.arguments));
                }
            }
            LogRecord::ApprovalRequested {
                call_id,
                tool,
                args,
                preview,
                ..
            } => {
                let i = self.tool_entry(call_id, tool, summarize_args(args));
                self.set_outcome(i, Outcome::Waiting);
                let what = match &preview.body {
                    PreviewBody::Command { command, .. } => format!("$ {}", cut(command, 60)),
                    _ => preview.summary.clone(),
                };
                self.entries.push(Entry::Note(
                    NoteKind::Approval,
                    format!("approval requested: {what}"),
                ));
            }
            LogRecord::ApprovalResolved {
                call_id,
                decision,
                by,
                reason,
                ..
            } => {
                let i = self.by_call.get(call_id).copied();
                let text = match (decision.as_str(), reason) {
                    ("reject", Some(r)) => format!("rejected by {by}: {r}"),
                    ("reject", None) => format!("rejected by {by}"),
                    ("approve_for_session", _) => format!("approved for the session by {by}"),
                    ("edit", _) => format!("approved with edited arguments by {by}"),
                    ("interrupted", _) => {
                        "interrupted: nbook stopped before a decision".to_string()
                    }
                    ("approve", _) => format!("approved by {by}"),
                    (d, _) => format!("{d} by {by}"),
                };
                if let Some(i) = i {
                    match decision.as_str() {
                        "reject" => self.set_outcome(i, Outcome::Rejected(reason.clone())),
                        "interrupted" => self.set_outcome(i, Outcome::Failed("interrupted".into())),
                        _ => self.set_outcome(i, Outcome::Running),
                    }
                }
                self.entries.push(Entry::Note(NoteKind::Approval, text));
            }
            LogRecord::ToolResult {
                call_id,
                tool,
                ok,
                content,
                ..
            } => {
                let i = self.tool_entry(call_id, tool, String::new());
                let first = cut(content.trim(), 100);
                self.set_outcome(
                    i,
                    if *ok {
                        Outcome::Ok(first)
                    } else {
                        Outcome::Failed(first)
                    },
                );
            }
            LogRecord::ModeChange { from, to, by } => {
                self.entries.push(Entry::Note(
                    NoteKind::Mode,
                    format!("mode {from} → {to} (by {by})"),
                ));
            }
            LogRecord::Usage { .. } | LogRecord::Custom { .. } => {}
            LogRecord::Compaction {
                method,
                tokens_before,
                tokens_after,
                ..
            } => self.entries.push(Entry::Note(
                NoteKind::Lifecycle,
                format!("context compacted ({method}): ~{tokens_before} → ~{tokens_after} tokens"),
            )),
            LogRecord::Lifecycle { status, message } => {
                let text = match message {
                    Some(m) => format!("{status}: {m}"),
                    None => status.clone(),
                };
                self.entries.push(Entry::Note(NoteKind::Lifecycle, text));
            }
        }
    }

    /// Replace the content with a full log read; live lines that the read missed are kept.
    pub fn load(&mut self, lines: Vec<LogLine>) {
        let live = std::mem::take(&mut self.live);
        self.entries.clear();
        self.by_call.clear();
        self.applied = 0;
        for l in &lines {
            self.apply(l);
        }
        let tail_start = lines.len().saturating_sub(live.len() + 64);
        for l in &live {
            if !lines[tail_start..].contains(l) {
                self.apply(l);
            }
        }
    }

    /// A live line: applied now, and remembered while a read is in flight.
    pub fn push_live(&mut self, line: LogLine) {
        self.apply(&line);
        if self.loading.is_some() {
            self.live.push(line);
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct SessionsState {
    pub list: Vec<SessionInfo>,
    pub selected: usize,
    pub offset: usize,
    pub transcript: Option<Transcript>,
    /// Top entry shown when the author scrolled up; `None` follows the end.
    pub scroll: Option<usize>,
}

impl SessionsState {
    pub fn new(list: Vec<SessionInfo>) -> SessionsState {
        let selected = list.len().saturating_sub(1);
        SessionsState {
            list,
            selected,
            ..SessionsState::default()
        }
    }

    pub fn selected(&self) -> Option<&SessionInfo> {
        self.list.get(self.selected)
    }

    pub fn get(&self, id: &str) -> Option<&SessionInfo> {
        self.list.iter().find(|s| s.id == id)
    }

    pub fn select_id(&mut self, id: &str) -> bool {
        match self.list.iter().position(|s| s.id == id) {
            Some(i) => {
                self.selected = i;
                true
            }
            None => false,
        }
    }

    /// Insert or update a session (ids sort numerically as the engine lists them).
    pub fn upsert(&mut self, info: SessionInfo) {
        match self.list.iter_mut().find(|s| s.id == info.id) {
            Some(s) => *s = info,
            None => {
                let key = |s: &SessionInfo| (s.id.parse::<u64>().unwrap_or(u64::MAX), s.id.clone());
                let pos = self.list.partition_point(|s| key(s) < key(&info));
                if pos <= self.selected && !self.list.is_empty() {
                    self.selected += 1;
                }
                self.list.insert(pos, info);
            }
        }
    }

    pub fn replace_all(&mut self, list: Vec<SessionInfo>) {
        let keep = self.selected().map(|s| s.id.clone());
        self.list = list;
        self.selected = keep
            .and_then(|id| self.list.iter().position(|s| s.id == id))
            .unwrap_or(self.list.len().saturating_sub(1));
    }
}
