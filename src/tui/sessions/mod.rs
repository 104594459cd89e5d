//! The Sessions pane's model: the session list as the engine reports it, the selected
//! session's transcript built from its log (read off the UI task) plus live log lines —
//! messages with their token usage, one entry per tool call with its outcome (expandable to
//! the arguments and the full result), approvals, mode changes, lifecycle, the session's task
//! list and chosen model — the composer drafts and the messages on their way, and the
//! background jobs view.

pub mod commands;
pub mod live_reply;
pub mod setup;
mod update;
pub mod view;

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use tui_textarea::TextArea;

use crate::engine::agents::InvokeMode;
use crate::engine::jobs::JobSnapshot;
use crate::engine::{LogLine, LogRecord, PreviewBody, SessionInfo, SessionState};
use crate::tui::action::Ticket;
use crate::tui::approvals::cut;

/// The session state key holding the model chosen for a session in the new-session form.
pub const MODEL_STATE_KEY: &str = "ui.model";
/// The session state key of the agent's task list (`task_create`, `task_set_status`).
pub const TASKS_STATE_KEY: &str = "agent.tasks";
/// How many lines at the end of a log read are remembered to drop live duplicates.
const RECENT_LINES: usize = 256;
/// A tool result longer than this is cut in the expanded view.
pub const MAX_RESULT_CHARS: usize = 20_000;

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

/// Tokens and cost of one assistant message (the `usage` line logged right after it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: f64,
    /// nbook's estimate, not the server's count.
    pub estimated: bool,
}

/// The change a call asked the author about: its preview, and its file diffs parsed once.
#[derive(Clone, Debug, PartialEq)]
pub struct CallChange {
    pub preview: crate::engine::Preview,
    pub diffs: std::sync::Arc<Vec<crate::tui::widgets::prose_diff::ProseDiff>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    User(String),
    Assistant {
        text: String,
        usage: Option<Usage>,
    },
    Tool {
        call_id: String,
        tool: String,
        summary: String,
        outcome: Outcome,
        args: Value,
        /// The whole result content (cut at [`MAX_RESULT_CHARS`]), for the expanded view.
        result: Option<String>,
        /// The usage of a tool-only assistant message, kept on its first call.
        usage: Option<Usage>,
        /// The change the author was asked about (its preview, file diffs parsed once), shown
        /// in the expanded view instead of the raw arguments.
        change: Option<Box<CallChange>>,
    },
    Note(NoteKind, String),
}

impl Entry {
    pub fn call_id(&self) -> Option<&str> {
        match self {
            Entry::Tool { call_id, .. } => Some(call_id),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskStatus {
    Pending,
    InProgress,
    Completed,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskStep {
    pub id: String,
    pub text: String,
    pub status: TaskStatus,
    pub note: Option<String>,
}

/// The agent's task list, as `task_create` / `task_set_status` left it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskList {
    pub title: Option<String>,
    pub steps: Vec<TaskStep>,
}

impl TaskList {
    /// Read `{title?, steps[{id, text, status, note?}]}` leniently (unknown status: pending).
    pub fn from_value(v: &Value) -> TaskList {
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let steps = v
            .get("steps")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|st| TaskStep {
                        id: s(st, "id").unwrap_or_default(),
                        text: s(st, "text").unwrap_or_default(),
                        status: match st.get("status").and_then(Value::as_str) {
                            Some("in_progress") => TaskStatus::InProgress,
                            Some("completed") => TaskStatus::Completed,
                            _ => TaskStatus::Pending,
                        },
                        note: s(st, "note"),
                    })
                    .collect()
            })
            .unwrap_or_default();
        TaskList {
            title: s(v, "title"),
            steps,
        }
    }

    pub fn done(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.status == TaskStatus::Completed)
            .count()
    }
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
    /// The tail of the last log read: a live line that arrives after the read but was
    /// already in it (the read and the event raced) is not applied twice.
    recent: Vec<LogLine>,
    /// The entry the next `usage` line belongs to (the last assistant message).
    usage_slot: Option<usize>,
    /// Tool calls the author expanded (by call id; survives reloads).
    pub expanded: HashSet<String>,
    pub tasks: Option<TaskList>,
    /// The model chosen for this session (`ui.model`), if any.
    pub model: Option<String>,
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

    /// Move entry `i` after everything else, so a tool call (whose line carries its result)
    /// reads after the approval notes about it: asked, then decided, then what it did.
    fn move_to_end(&mut self, i: usize) {
        if i + 1 >= self.entries.len() {
            return;
        }
        let e = self.entries.remove(i);
        self.entries.push(e);
        let last = self.entries.len() - 1;
        let moved = |v: usize| {
            if v == i {
                last
            } else if v > i {
                v - 1
            } else {
                v
            }
        };
        for v in self.by_call.values_mut() {
            *v = moved(*v);
        }
        self.usage_slot = self.usage_slot.map(moved);
    }

    fn tool_entry(&mut self, call_id: &str, tool: &str, args: Option<&Value>) -> usize {
        if let Some(&i) = self.by_call.get(call_id) {
            if let (Some(a), Some(Entry::Tool { args, summary, .. })) =
                (args, self.entries.get_mut(i))
            {
                if args.is_null() {
                    *args = a.clone();
                    *summary = summarize_args(a);
                }
            }
            return i;
        }
        self.entries.push(Entry::Tool {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            summary: args.map(summarize_args).unwrap_or_default(),
            outcome: Outcome::Running,
            args: args.cloned().unwrap_or(Value::Null),
            result: None,
            usage: None,
            change: None,
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
                self.usage_slot = None;
                if !text.trim().is_empty() {
                    self.entries.push(Entry::Assistant {
                        text: text.clone(),
                        usage: None,
                    });
                    self.usage_slot = Some(self.entries.len() - 1);
                }
                for c in tool_calls {
                    let i = self.tool_entry(&c.id, &c.name, Some(&c.arguments));
                    self.usage_slot.get_or_insert(i);
                }
            }
            // A call the author made from the TUI (an agent's calls come in its reply).
            LogRecord::ToolCall {
                call_id,
                tool,
                args,
                ..
            } => {
                self.tool_entry(call_id, tool, Some(args));
            }
            LogRecord::ApprovalRequested {
                call_id,
                tool,
                args,
                preview,
                ..
            } => {
                let i = self.tool_entry(call_id, tool, Some(args));
                self.set_outcome(i, Outcome::Waiting);
                if let Some(Entry::Tool { change, .. }) = self.entries.get_mut(i) {
                    let diffs = match &preview.body {
                        PreviewBody::Files { changes } => changes
                            .iter()
                            .map(|c| crate::tui::widgets::prose_diff::ProseDiff::parse(&c.diff))
                            .collect(),
                        _ => Vec::new(),
                    };
                    *change = Some(Box::new(CallChange {
                        preview: preview.clone(),
                        diffs: std::sync::Arc::new(diffs),
                    }));
                }
                let what = match &preview.body {
                    PreviewBody::Command { command, .. } => format!("$ {}", cut(command, 60)),
                    _ => preview.summary.clone(),
                };
                self.entries.push(Entry::Note(
                    NoteKind::Approval,
                    format!("approval requested: {what}"),
                ));
                self.move_to_end(i);
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
                    ("approve_parts", Some(r)) => {
                        format!("approved in part by {by}; the rest rejected: {r}")
                    }
                    ("approve_parts", None) => format!("approved in part by {by}"),
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
                if let Some(i) = i {
                    self.move_to_end(i);
                }
            }
            LogRecord::ToolResult {
                call_id,
                tool,
                ok,
                content,
                ..
            } => {
                let i = self.tool_entry(call_id, tool, None);
                let first = cut(content.trim(), 100);
                if let Some(Entry::Tool { result, .. }) = self.entries.get_mut(i) {
                    let mut full: String = content.chars().take(MAX_RESULT_CHARS).collect();
                    if full.len() < content.len() {
                        full.push_str("\n… (cut here; the session log has the whole result)");
                    }
                    *result = Some(full);
                }
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
            LogRecord::Usage {
                input_tokens,
                output_tokens,
                cost,
                estimated,
                ..
            } => {
                let u = Usage {
                    input_tokens: *input_tokens,
                    output_tokens: *output_tokens,
                    cost: *cost,
                    estimated: *estimated,
                };
                match self.usage_slot.and_then(|i| self.entries.get_mut(i)) {
                    Some(Entry::Assistant { usage, .. }) | Some(Entry::Tool { usage, .. }) => {
                        *usage = Some(u)
                    }
                    _ => {}
                }
                self.usage_slot = None;
            }
            LogRecord::Custom { key, value } => match key.as_str() {
                TASKS_STATE_KEY => self.tasks = Some(TaskList::from_value(value)),
                MODEL_STATE_KEY => self.model = value.as_str().map(str::to_string),
                _ => {}
            },
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
        self.usage_slot = None;
        self.tasks = None;
        self.model = None;
        for l in &lines {
            self.apply(l);
        }
        let tail_start = lines.len().saturating_sub(live.len() + 64);
        for l in &live {
            if !lines[tail_start..].contains(l) {
                self.apply(l);
            }
        }
        self.recent = lines[lines.len().saturating_sub(RECENT_LINES)..].to_vec();
    }

    /// A live line: applied now, and remembered while a read is in flight.
    pub fn push_live(&mut self, line: LogLine) {
        if self.loading.is_none() && self.recent.contains(&line) {
            return;
        }
        self.apply(&line);
        if self.loading.is_some() {
            self.live.push(line);
        }
    }
}

/// Which list the Sessions pane shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SessionsView {
    #[default]
    Sessions,
    Jobs,
}

/// Where a message from the composer is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Sent to the agent host; not in the log yet.
    Sending,
    /// Admitted behind the current run (a follow-up) or waiting for its next turn (a steer).
    Queued,
    /// The run failed before the model saw it (e.g. no model configured).
    Failed(String),
}

/// A message from the composer that the session log does not show yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outgoing {
    pub text: String,
    pub mode: InvokeMode,
    pub delivery: Delivery,
}

/// The background jobs, newest first.
#[derive(Clone, Debug, Default)]
pub struct JobsList {
    pub list: Vec<JobSnapshot>,
    pub selected: usize,
    pub offset: usize,
}

fn job_number(id: &str) -> u64 {
    id.rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

impl JobsList {
    pub fn new(mut list: Vec<JobSnapshot>) -> JobsList {
        list.sort_by_key(|j| std::cmp::Reverse(job_number(&j.job_id)));
        JobsList {
            list,
            ..JobsList::default()
        }
    }

    pub fn selected(&self) -> Option<&JobSnapshot> {
        self.list.get(self.selected)
    }

    /// Insert or update a job; the selection stays on the same job.
    pub fn upsert(&mut self, snap: JobSnapshot) {
        if let Some(j) = self.list.iter_mut().find(|j| j.job_id == snap.job_id) {
            *j = snap;
            return;
        }
        let n = job_number(&snap.job_id);
        let pos = self.list.partition_point(|j| job_number(&j.job_id) > n);
        if pos <= self.selected && !self.list.is_empty() {
            self.selected += 1;
        }
        self.list.insert(pos, snap);
    }

    pub fn replace_all(&mut self, list: Vec<JobSnapshot>) {
        let keep = self.selected().map(|j| j.job_id.clone());
        *self = JobsList {
            offset: self.offset,
            ..JobsList::new(list)
        };
        self.selected = keep
            .and_then(|id| self.list.iter().position(|j| j.job_id == id))
            .unwrap_or(0);
    }

    pub fn running(&self) -> usize {
        self.list.iter().filter(|j| !j.status.is_final()).count()
    }
}

/// True while a session has a run the author can steer or cancel (waiting for the author
/// counts as running).
pub fn is_busy(state: SessionState) -> bool {
    matches!(
        state,
        SessionState::Running | SessionState::WaitingApproval | SessionState::WaitingInput
    )
}

#[derive(Clone, Debug, Default)]
pub struct SessionsState {
    pub list: Vec<SessionInfo>,
    pub selected: usize,
    pub offset: usize,
    pub transcript: Option<Transcript>,
    /// Top entry shown when the author scrolled up; `None` follows the end.
    pub scroll: Option<usize>,
    pub view: SessionsView,
    /// The author moved into the transcript: j/k move `cursor` over its entries.
    pub in_transcript: bool,
    pub cursor: usize,
    /// The composer has the keys.
    pub composing: bool,
    /// One draft per session, so a message never goes to a session it was not written for.
    pub drafts: HashMap<String, TextArea<'static>>,
    /// Messages sent from the composer that the log does not show yet, per session.
    pub outbox: HashMap<String, Vec<Outgoing>>,
    pub jobs: JobsList,
    /// Replies streaming in, per session, until their record lands in the log.
    pub live: crate::tui::sessions::live_reply::LiveReplies,
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

    /// The selected session's draft, if one was started.
    pub fn draft(&self) -> Option<&TextArea<'static>> {
        self.selected().and_then(|s| self.drafts.get(&s.id))
    }

    /// Tokens and cost over every session of the project.
    pub fn totals(&self) -> (u64, f64) {
        self.list.iter().fold((0, 0.0), |(t, c), s| {
            (t + s.input_tokens + s.output_tokens, c + s.cost)
        })
    }

    /// The log now shows `text` as a user message of `session_id`: it is no longer on its way.
    pub fn delivered(&mut self, session_id: &str, text: &str) {
        if let Some(out) = self.outbox.get_mut(session_id) {
            if let Some(pos) = out.iter().position(|o| o.text == text) {
                out.remove(pos);
            }
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

/// A session as the bars and lists name it: `s7` for an agent's numbered session, the id
/// itself for the named ones (`author`, `cli`), which would read as `sauthor`.
pub fn short_id(id: &str) -> String {
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
        format!("s{id}")
    } else {
        id.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(ts: &str, record: LogRecord) -> LogLine {
        LogLine {
            ts: ts.into(),
            record,
        }
    }

    #[test]
    fn live_lines_that_race_a_finished_read_are_not_applied_twice() {
        let start = line(
            "t1",
            LogRecord::Lifecycle {
                status: "start".into(),
                message: None,
            },
        );
        let user = line("t2", LogRecord::User { text: "hi".into() });
        let mut t = Transcript::new("1");
        t.loading = Some(1);
        // The read finished first, the events of the same lines arrive afterwards.
        t.load(vec![start.clone(), user.clone()]);
        t.loading = None;
        t.push_live(start);
        t.push_live(user);
        t.push_live(line(
            "t3",
            LogRecord::User {
                text: "again".into(),
            },
        ));
        assert_eq!(t.entries.len(), 3, "{:?}", t.entries);
    }
}
