//! What the TUI does with the config report at open: every warning becomes a notice (status
//! bar, help, the log), and a project config whose loosening lines are held opens the trust
//! prompt, which shows exactly those lines. `t` trusts them (recorded in the config dir, bound
//! to the file's hash; they apply from the next open, because the engine running now was
//! built with the config as it stands); `Esc`/`n` keeps ignoring them. Also the other notice
//! of the open: outside agents (`nbook mcp`) cannot attach because the socket failed.

use crate::config::{LoadReport, ProjectGate, TrustState};

use crate::tui::action::{Command, Effect};
use crate::tui::app::{AppState, MsgKind};
use crate::tui::input::Overlay;

pub struct TrustPrompt {
    pub gate: ProjectGate,
    pub scroll: usize,
}

impl AppState {
    /// Show what loading the config found: warnings as notices (the first in the status bar)
    /// and, when project lines are held, the trust prompt.
    /// The attach socket could not be opened: outside agents would be told no nbook has the
    /// project open, so the author is told why here, and what it means for them.
    /// Another nbook holds the project's scheduler lock: this one wakes no heartbeat agent
    /// (the other does); said once, as a notice, and the rest works as always.
    pub fn heartbeats_elsewhere(&mut self, why: &str) {
        let text = format!("heartbeats: {why}");
        self.notices.push(text.clone());
        self.message(text, MsgKind::Info);
    }

    pub fn attach_failed(&mut self, error: &str) {
        let text =
            format!("mcp: outside agents cannot attach (their changes are refused): {error}");
        self.notices.push(text.clone());
        self.message(text, MsgKind::Error);
        if let Some(s) = &mut self.status {
            s.until = None;
        }
    }

    pub fn config_report(&mut self, report: &LoadReport) {
        let warnings: Vec<String> = report
            .warnings
            .iter()
            .map(|w| format!("config: {w}"))
            .collect();
        let held = report.held().cloned();
        if let Some(g) = &held {
            self.notices.push(format!(
                "config: {} line(s) of {} that loosen your policy are ignored until you trust them (`nbook trust {}`)",
                g.lines.len(),
                g.file,
                g.project
            ));
        }
        self.notices.extend(warnings);
        if let Some(first) = self.notices.first().cloned() {
            self.message(first, MsgKind::Error);
            if let Some(s) = &mut self.status {
                s.until = None;
            }
        }
        if let Some(gate) = held {
            self.overlay = Some(Overlay::Trust(Box::new(TrustPrompt { gate, scroll: 0 })));
        }
    }

    pub(crate) fn trust_command(&mut self, cmd: Command) -> Vec<Effect> {
        let Some(Overlay::Trust(p)) = &mut self.overlay else {
            return Vec::new();
        };
        match cmd {
            Command::TrustConfig => {
                let gate = p.gate.clone();
                self.overlay = None;
                self.info(format!(
                    "Trusting {}: its lines apply from the next time you open the project.",
                    gate.file
                ));
                vec![Effect::TrustProjectConfig {
                    project: gate.project,
                    sha256: gate.sha256,
                    lines: gate
                        .lines
                        .iter()
                        .map(|l| format!("line {}: {}", l.line, l.text))
                        .collect(),
                }]
            }
            Command::Cancel | Command::Quit => {
                let n = p.gate.lines.len();
                self.overlay = None;
                self.message(
                    format!(
                        "Kept ignoring {n} line(s) of the project config; your own policy applies."
                    ),
                    MsgKind::Info,
                );
                Vec::new()
            }
            Command::Down => {
                p.scroll = (p.scroll + 1).min(p.gate.lines.len().saturating_sub(1));
                Vec::new()
            }
            Command::Up => {
                p.scroll = p.scroll.saturating_sub(1);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}

/// The prompt's heading for a trust state.
pub fn heading(state: TrustState) -> &'static str {
    match state {
        TrustState::Stale => {
            "This project's config changed since you trusted it. Until you trust it again, nbook ignores these lines:"
        }
        _ => {
            "This project's config would loosen your approval policy. A project may only tighten it, so nbook ignores these lines:"
        }
    }
}
