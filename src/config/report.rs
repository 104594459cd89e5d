//! What loading the config found besides the config itself: warnings (unknown keys, rules
//! for tools nbook does not have) and the project config lines held back until the author
//! trusts them. Every front end shows the same text: the TUI at open, the CLI on stderr,
//! `nbook tools --json` and `nbook trust --json` as data.

use serde::Serialize;

use super::gate::Loosening;
use super::source::{ConfigWarning, ToolKey};
use super::trust::TrustState;
use super::Config;

/// A project config that would loosen the author's policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProjectGate {
    /// The project's `.nbook/config.toml`.
    pub file: String,
    /// The project's canonical root (what a trust is bound to, with the hash).
    pub project: String,
    pub sha256: String,
    pub trust: TrustState,
    /// The loosening lines; they apply only when `trust` is `Trusted`.
    pub lines: Vec<Loosening>,
}

impl ProjectGate {
    pub fn applied(&self) -> bool {
        self.trust == TrustState::Trusted
    }

    /// One line per held line, for stderr and the status log (empty when trusted).
    pub fn notes(&self) -> Vec<String> {
        if self.applied() {
            return Vec::new();
        }
        let mut out: Vec<String> = self
            .lines
            .iter()
            .map(|l| {
                format!(
                    "{} line {}: ignored `{}`: it {} (a project config may only tighten your policy)",
                    self.file, l.line, l.text, l.why
                )
            })
            .collect();
        let stale = if self.trust == TrustState::Stale {
            "the file changed since you trusted it; "
        } else {
            ""
        };
        out.push(format!(
            "{stale}to apply these lines, review them and run `nbook trust {}`",
            self.project
        ));
        out
    }
}

#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// The effective config (project lines that loosen are left out unless trusted).
    pub config: Config,
    pub warnings: Vec<ConfigWarning>,
    pub project: Option<ProjectGate>,
    pub(super) tool_keys: Vec<ToolKey>,
}

impl LoadReport {
    /// Warn about `[approval.tools]` keys that name no registered tool (such a rule does
    /// nothing), suggesting the closest name.
    pub fn check_tool_names<'a>(&mut self, tools: impl IntoIterator<Item = &'a str>) {
        let tools: Vec<&str> = tools.into_iter().collect();
        for key in std::mem::take(&mut self.tool_keys) {
            if tools.contains(&key.name.as_str()) {
                continue;
            }
            let hint = closest(&key.name, &tools)
                .map(|t| format!("; did you mean `{t}`?"))
                .unwrap_or_else(|| "; `nbook tools` lists the tool names".to_string());
            self.warnings.push(ConfigWarning {
                file: key.file,
                line: key.line,
                message: format!(
                    "[approval.tools] `{}` is not a tool, so this rule does nothing{hint}",
                    key.name
                ),
            });
        }
    }

    /// Every message for the author: warnings, then held project lines.
    pub fn notes(&self) -> Vec<String> {
        let mut out: Vec<String> = self.warnings.iter().map(|w| w.to_string()).collect();
        if let Some(p) = &self.project {
            out.extend(p.notes());
        }
        out
    }

    /// The held project lines, if any are held (not trusted).
    pub fn held(&self) -> Option<&ProjectGate> {
        self.project.as_ref().filter(|p| !p.applied())
    }
}

fn closest<'a>(name: &str, tools: &[&'a str]) -> Option<&'a str> {
    let norm = |s: &str| s.to_lowercase().replace('-', "_");
    let n = norm(name);
    if let Some(t) = tools.iter().find(|t| norm(t) == n) {
        return Some(t);
    }
    tools
        .iter()
        .map(|t| (strsim::levenshtein(&n, t), *t))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_fold_case_and_dashes_then_edit_distance() {
        let tools = ["bash", "apply_patch", "write"];
        assert_eq!(closest("Bash", &tools), Some("bash"));
        assert_eq!(closest("apply-patch", &tools), Some("apply_patch"));
        assert_eq!(closest("wirte", &tools), Some("write"));
        assert_eq!(closest("spaceship", &tools), None);
    }
}
