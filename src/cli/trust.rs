//! `nbook trust PATH`: let a project's `.nbook/config.toml` loosen the author's policy.
//! Prints exactly the lines it trusts (what each loosens); `--show` only reports, `--revoke`
//! forgets the trust. The trust is bound to the hash of the bytes shown here, so a file
//! changed after this command runs is not trusted.

use std::path::Path;

use serde_json::json;

use super::{exit, note, out, Failure};
use crate::config::{trust as store, Config, Dirs, TrustState};
use crate::workspace::Workspace;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Trust,
    Show,
    Revoke,
}

impl Action {
    pub fn pick(show: bool, revoke: bool) -> Action {
        match (show, revoke) {
            (_, true) => Action::Revoke,
            (true, _) => Action::Show,
            _ => Action::Trust,
        }
    }
}

pub fn trust(path: &Path, action: Action, json: bool, dirs: &Dirs) -> Result<u8, Failure> {
    let ws = Workspace::open(path).map_err(Failure::usage)?;
    let root = ws.root();
    if action == Action::Revoke {
        let had = store::revoke(dirs, root).map_err(Failure::tool)?;
        if json {
            out(format!(
                "{}",
                json!({"project": root.display().to_string(), "action": "revoked", "was_trusted": had})
            ))?;
        } else if had {
            out(format!(
                "Revoked: {}'s config may only tighten your policy again.",
                root.display()
            ))?;
        } else {
            out(format!(
                "{} was not trusted; nothing to revoke.",
                root.display()
            ))?;
        }
        return Ok(exit::OK);
    }
    let report = Config::load_report(dirs, Some(root)).map_err(Failure::usage)?;
    for w in &report.warnings {
        note(format!("nbook: warning: {w}"));
    }
    let Some(gate) = report.project else {
        if json {
            out(format!(
                "{}",
                json!({"project": root.display().to_string(), "action": "nothing", "lines": []})
            ))?;
        } else {
            out(format!(
                "Nothing to trust: {}'s config does not loosen your policy (its tightening lines already apply).",
                root.display()
            ))?;
        }
        return Ok(exit::OK);
    };
    let mut state = gate.trust;
    let act = if action == Action::Trust && state != TrustState::Trusted {
        let lines = gate
            .lines
            .iter()
            .map(|l| format!("line {}: {}", l.line, l.text))
            .collect();
        store::trust(dirs, Path::new(&gate.project), &gate.sha256, lines).map_err(Failure::tool)?;
        state = TrustState::Trusted;
        "trusted"
    } else if action == Action::Trust {
        "already_trusted"
    } else {
        "shown"
    };
    if json {
        let shown = json!({
            "project": gate.project,
            "file": gate.file,
            "sha256": gate.sha256,
            "action": act,
            "trust": state,
            "lines": gate.lines,
        });
        out(serde_json::to_string_pretty(&shown).map_err(Failure::tool)?)?;
        return Ok(exit::OK);
    }
    let head = match (act, state) {
        ("trusted", _) => "Trusted. These lines now apply",
        ("already_trusted", _) => "Already trusted. These lines apply",
        (_, TrustState::Trusted) => "Trusted. These lines apply",
        (_, TrustState::Stale) => {
            "Not trusted (the file changed since you trusted it). These lines are ignored"
        }
        _ => "Not trusted. These lines are ignored",
    };
    out(format!(
        "{head} ({}, sha256 {}):",
        gate.file,
        &gate.sha256[..12]
    ))?;
    for l in &gate.lines {
        out(format!("  line {}: {}", l.line, l.text))?;
        out(format!("    it {}", l.why))?;
    }
    if state != TrustState::Trusted {
        out(format!("Run `nbook trust {}` to apply them.", gate.project))?;
    } else {
        out(format!(
            "Editing the file drops the trust; `nbook trust {} --revoke` forgets it.",
            gate.project
        ))?;
    }
    Ok(exit::OK)
}
