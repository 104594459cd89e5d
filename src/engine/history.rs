//! The engine's hook into the change history (`store::history`): at the point where a call's
//! effect is applied, record what is needed to reverse it, and once the call succeeded, write
//! the entry — who, session, tool, targets, the decision and the rule that made it, the preview
//! of what was applied, and the reversal data.
//!
//! - Direct mutating calls ([`capture_run`]): the preview is computed just before the run (so
//!   it shows exactly what is applied, edited arguments included), the bytes of every path the
//!   preview names are read before and after the run, and the changesets the run committed to
//!   project.sqlite are collected (`store::applied`).
//! - Staged calls ([`capture_commit`]): the held change's own preview, and the changesets it
//!   committed.
//!
//! What decided the call is noted as it happens ([`Engine::note_rule`] from the policy's
//! verdict, [`Engine::note_decision`] from the author's answer) and joined with the capture
//! when the call returns ([`Engine::record_change`]). Only calls that touch files, plot, world
//! or SQL are recorded; a change that cannot be reversed (a shell command) is recorded with the
//! reason. A history that cannot be written never undoes the call: the result says so.
//!
//! Also here: the history and the session grants as the History view reads them, and revoking
//! a grant.

use super::dispatch::CallResult;
use super::tool::{CallArgs, Tool, ToolCtx, ToolError, ToolOutput};
use super::types::*;
use super::Engine;
use crate::store::applied::{self, Applied};
/// What the History view lists: one applied change, read through the engine.
pub use crate::store::history::Entry;
use crate::store::history::{FileImage, History, HistoryError, NewEntry};

/// The domains whose changes the history records.
const RECORDED: [Domain; 4] = [Domain::Files, Domain::Plot, Domain::World, Domain::Sql];

/// A path and its bytes before and after a call; `None`: the file did not exist.
type Images = (String, Option<Vec<u8>>, Option<Vec<u8>>);

/// What a call applied, captured around its run.
#[derive(Debug, Default)]
pub(super) struct Capture {
    preview: Option<Preview>,
    files: Vec<Images>,
    applied: Applied,
}

/// How a call came to run (noted while it is decided).
#[derive(Debug, Default)]
pub(super) struct Note {
    rule: Option<String>,
    decision: Option<String>,
    capture: Option<Capture>,
}

/// A grant the author gave with "approve for this session".
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Grant {
    pub session_id: SessionId,
    pub tool: String,
    pub target: String,
}

fn records(tool: &dyn Tool) -> bool {
    let e = tool.effects();
    RECORDED.iter().any(|d| e.touches_domain(*d))
}

/// The paths a file preview changes (sources and move destinations).
fn preview_paths(p: &Preview) -> Vec<String> {
    match &p.body {
        PreviewBody::Files { changes } => {
            let mut out: Vec<String> = Vec::new();
            for c in changes {
                for path in std::iter::once(&c.path).chain(c.move_to.iter()) {
                    if !out.contains(path) {
                        out.push(path.clone());
                    }
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

fn read_path(ctx: &ToolCtx, path: &str) -> Option<Vec<u8>> {
    ctx.workspace
        .target(path)
        .ok()
        .and_then(|t| t.read_bytes().ok().flatten())
}

/// Run a direct mutating call (`run`), capturing what it applied. On the blocking pool.
pub(super) fn capture_run(
    tool: &dyn Tool,
    ctx: &ToolCtx,
    args: &CallArgs,
    run: impl FnOnce() -> Result<ToolOutput, ToolError>,
) -> (Result<ToolOutput, ToolError>, Option<Capture>) {
    if !records(tool) {
        return (run(), None);
    }
    let preview = tool.preview(ctx, args).ok();
    let paths = preview.as_ref().map(preview_paths).unwrap_or_default();
    let before: Vec<Option<Vec<u8>>> = paths.iter().map(|p| read_path(ctx, p)).collect();
    applied::clear();
    let out = run();
    let applied = applied::take();
    if out.is_err() {
        return (out, None);
    }
    let files = paths
        .into_iter()
        .zip(before)
        .map(|(p, b)| {
            let a = read_path(ctx, &p);
            (p, b, a)
        })
        .filter(|(_, b, a)| b != a)
        .collect();
    (
        out,
        Some(Capture {
            preview,
            files,
            applied,
        }),
    )
}

/// Commit a staged call's held change (`commit`), capturing what it applied. On the blocking
/// pool.
pub(super) fn capture_commit(
    preview: Preview,
    commit: impl FnOnce() -> Result<ToolOutput, ToolError>,
) -> (Result<ToolOutput, ToolError>, Option<Capture>) {
    applied::clear();
    let out = commit();
    let applied = applied::take();
    let capture = out.is_ok().then(|| Capture {
        preview: Some(preview),
        files: Vec::new(),
        applied,
    });
    (out, capture)
}

/// The rule that let a call run without asking, in the author's words.
pub(super) fn rule_for_run(
    cfg: &crate::config::ApprovalConfig,
    tool: &str,
    mode: Mode,
    granted: bool,
) -> String {
    if let Some(rule) = cfg.tools.get(tool) {
        if !matches!(rule, crate::config::ToolRule::Ask) || !granted {
            return format!("[approval.tools] {tool} = \"{}\"", rule_name(rule));
        }
    }
    if granted {
        return "session grant".into();
    }
    if mode == Mode::Plan {
        return format!("preset {} (plan-mode exemption)", cfg.preset.as_str());
    }
    format!("preset {}", cfg.preset.as_str())
}

fn rule_name(r: &crate::config::ToolRule) -> &'static str {
    match r {
        crate::config::ToolRule::Allow => "allow",
        crate::config::ToolRule::Ask => "ask",
        crate::config::ToolRule::Deny => "deny",
    }
}

impl Engine {
    /// The project's change history.
    pub fn history_store(&self) -> History {
        History::for_database(&self.ws.db_path())
    }

    /// The newest `limit` recorded changes, newest first.
    pub fn history(&self, limit: usize) -> Result<Vec<Entry>, HistoryError> {
        self.history_store().list(limit)
    }

    /// The entries to revert, newest first, for entry `id` to be reverted last.
    pub fn history_revert_plan(&self, id: i64) -> Result<Vec<i64>, HistoryError> {
        self.history_store().revert_plan(id)
    }

    /// Every "approve for this session" grant in force, sorted by session, tool, target.
    pub fn grants(&self) -> Vec<Grant> {
        let mut out: Vec<Grant> = self
            .state()
            .grants
            .iter()
            .map(|(s, t, x)| Grant {
                session_id: s.clone(),
                tool: t.clone(),
                target: x.clone(),
            })
            .collect();
        out.sort();
        out
    }

    /// Withdraw a grant: the next such call asks again. False when it was not in force.
    pub fn revoke_grant(&self, g: &Grant) -> bool {
        let removed =
            self.state()
                .grants
                .remove(&(g.session_id.clone(), g.tool.clone(), g.target.clone()));
        removed
    }

    fn with_note(&self, session_id: &str, call_id: &str, f: impl FnOnce(&mut Note)) {
        let mut st = self.state();
        let note = st
            .history_notes
            .entry((session_id.to_string(), call_id.to_string()))
            .or_default();
        f(note);
    }

    /// The policy let the call run without asking, by `rule`.
    pub(super) fn note_rule(&self, session_id: &str, call_id: &str, rule: String) {
        self.with_note(session_id, call_id, |n| {
            n.rule = Some(rule);
            n.decision = Some("run".into());
        });
    }

    /// `by` answered the call with `decision`.
    pub(super) fn note_decision(
        &self,
        session_id: &str,
        call_id: &str,
        decision: &Decision,
        by: &str,
    ) {
        self.with_note(session_id, call_id, |n| {
            n.decision = Some(decision.label().into());
            n.rule = Some(by.to_string());
        });
    }

    /// Keep what a call applied until it returns.
    pub(super) fn note_capture(&self, session_id: &str, call_id: &str, capture: Option<Capture>) {
        if let Some(c) = capture {
            self.with_note(session_id, call_id, |n| n.capture = Some(c));
        }
    }

    /// The call returned: write its entry when it applied a change, and forget its note. A
    /// history that cannot be written is said in the result (the change itself stays).
    pub(super) fn record_change(&self, session_id: &str, call: &ToolCall, result: &mut CallResult) {
        let note = self
            .state()
            .history_notes
            .remove(&(session_id.to_string(), call.id.clone()));
        let Some(note) = note else { return };
        if !result.ok {
            return;
        }
        let Some(capture) = note.capture else { return };
        let Some(info) = self.session(session_id) else {
            return;
        };
        if let Err(e) = self.write_entry(&info, call, note.rule, note.decision, capture) {
            result.content.push_str(&format!(
                "\n\n(The change stays, but it could not be added to the change history, so it cannot be undone from the History view: {e}.)"
            ));
        }
    }

    fn write_entry(
        &self,
        info: &SessionInfo,
        call: &ToolCall,
        rule: Option<String>,
        decision: Option<String>,
        c: Capture,
    ) -> Result<(), HistoryError> {
        let h = self.history_store();
        let mut files = Vec::new();
        let mut not_revertible = None;
        for (path, before, after) in &c.files {
            let put = |b: &Option<Vec<u8>>| b.as_deref().map(|b| h.put_blob(b)).transpose();
            files.push(FileImage {
                path: path.clone(),
                before: put(before)?,
                after: put(after)?,
            });
            if before
                .as_deref()
                .is_some_and(|b| std::str::from_utf8(b).is_err())
            {
                not_revertible = Some(format!(
                    "{path} was not UTF-8 text before the change; the file tools restore text only"
                ));
            }
        }
        let mut changesets = Vec::new();
        let mut targets: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
        for cs in &c.applied.changesets {
            changesets.push(h.put_blob(cs.as_bytes())?);
            if let Ok(rows) = cs.rows() {
                for r in rows {
                    let t = format!(
                        "{} ({})",
                        r.table,
                        crate::store::changeset::describe_key(&r.key())
                    );
                    if !targets.contains(&t) {
                        targets.push(t);
                    }
                }
            }
        }
        if files.is_empty() && changesets.is_empty() {
            match c.preview.as_ref().map(|p| &p.body) {
                // A write that turned out to change nothing leaves nothing to undo.
                Some(PreviewBody::Files { .. }) | Some(PreviewBody::Records { .. }) => {
                    return Ok(())
                }
                Some(PreviewBody::Statement { .. }) => return Ok(()),
                Some(PreviewBody::Command { command, .. }) => {
                    targets.push(format!("$ {command}"));
                    not_revertible = Some(
                        "a shell command: nbook does not record what it changed, so it cannot be reversed".into(),
                    );
                }
                _ => {
                    not_revertible =
                        Some(format!("{} keeps no record nbook can reverse", call.name));
                }
            }
        }
        let actor = if info.profile == super::author::AUTHOR_PROFILE {
            "author"
        } else {
            "agent"
        };
        let entry = NewEntry {
            session_id: info.id.clone(),
            actor: actor.into(),
            profile: info.profile.clone(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            summary: c
                .preview
                .as_ref()
                .map(|p| p.summary.clone())
                .unwrap_or_else(|| call.name.clone()),
            decision: decision.unwrap_or_else(|| "run".into()),
            rule: rule.unwrap_or_else(|| "author".into()),
            targets,
            preview: c.preview,
            files,
            changesets,
            not_revertible,
            reverts: c.applied.reverts,
        };
        h.append(&entry)?;
        Ok(())
    }
}
