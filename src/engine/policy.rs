//! The approval policy: for one mutating call, run it, ask the author, or refuse.
//!
//! Presets (DESIGN.md): `supervised` asks for every mutating call in every mode; `neurobook`
//! copies NeuroBook (normal mode runs, discuss/plan ask once; bash, SQL and world writes are
//! trusted as NeuroBook only restricts them in the prompt); `locked` refuses. Per-tool rules
//! override the preset. In plan mode, writes whose every target is a `.md` file under
//! `.agent/plan/` run without asking (except under `locked`, which refuses all mutation).

use crate::config::{ApprovalConfig, Preset, ToolRule};

use super::types::Mode;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Run,
    Ask {
        /// Whether "approve for the rest of the session" may be offered.
        grant_allowed: bool,
    },
    Refuse(String),
}

/// Tools NeuroBook leaves to the prompt rather than the gate.
const NEUROBOOK_TRUSTED: [&str; 3] = ["bash", "execute_sql", "execute_world"];

pub struct CallFacts<'a> {
    pub tool: &'a str,
    pub mode: Mode,
    pub targets: &'a [String],
    /// Every target already granted for this session (normal mode only).
    pub granted: bool,
}

pub fn decide(cfg: &ApprovalConfig, call: &CallFacts<'_>) -> Verdict {
    // An agent's request to change its own mode always goes to the author, whatever the
    // preset or overrides say, and never becomes a session grant (DESIGN.md "Modes").
    if call.tool == "switch_mode" {
        return Verdict::Ask {
            grant_allowed: false,
        };
    }
    let grant_allowed = call.mode == Mode::Normal;
    if let Some(rule) = cfg.tools.get(call.tool) {
        return match rule {
            ToolRule::Allow => Verdict::Run,
            ToolRule::Deny => Verdict::Refuse(format!(
                "tool {} is denied by the approval config ([approval.tools] {} = \"deny\")",
                call.tool, call.tool
            )),
            ToolRule::Ask if call.granted && grant_allowed => Verdict::Run,
            ToolRule::Ask => Verdict::Ask { grant_allowed },
        };
    }
    match cfg.preset {
        Preset::Locked => Verdict::Refuse(format!(
            "the approval preset is `locked`: mutating tools such as {} are refused",
            call.tool
        )),
        _ if call.mode == Mode::Plan && plan_exempt(call.targets) => Verdict::Run,
        Preset::Supervised => {
            if call.granted && grant_allowed {
                Verdict::Run
            } else {
                Verdict::Ask { grant_allowed }
            }
        }
        Preset::Neurobook => {
            if call.mode == Mode::Normal || NEUROBOOK_TRUSTED.contains(&call.tool) {
                Verdict::Run
            } else {
                // NeuroBook's read-only-mode approval covers one call only.
                Verdict::Ask {
                    grant_allowed: false,
                }
            }
        }
    }
}

/// True when there is at least one target and every target is a `.md` file in `.agent/plan/`.
pub fn plan_exempt(targets: &[String]) -> bool {
    !targets.is_empty()
        && targets.iter().all(|t| {
            t.starts_with(".agent/plan/")
                && t.ends_with(".md")
                && !t.split('/').any(|seg| seg == "..")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn cfg(preset: Preset) -> ApprovalConfig {
        ApprovalConfig {
            preset,
            tools: BTreeMap::new(),
        }
    }

    fn facts<'a>(tool: &'a str, mode: Mode, targets: &'a [String], granted: bool) -> CallFacts<'a> {
        CallFacts {
            tool,
            mode,
            targets,
            granted,
        }
    }

    #[test]
    fn supervised_asks_in_every_mode_and_honours_grants_in_normal_only() {
        let t = vec!["a.md".to_string()];
        for m in Mode::ALL {
            assert!(matches!(
                decide(&cfg(Preset::Supervised), &facts("write", m, &t, false)),
                Verdict::Ask { .. }
            ));
        }
        assert_eq!(
            decide(
                &cfg(Preset::Supervised),
                &facts("write", Mode::Normal, &t, true)
            ),
            Verdict::Run
        );
        assert_eq!(
            decide(
                &cfg(Preset::Supervised),
                &facts("write", Mode::Discuss, &t, true)
            ),
            Verdict::Ask {
                grant_allowed: false
            }
        );
    }

    #[test]
    fn neurobook_runs_in_normal_and_trusts_bash() {
        let t = vec!["a.md".to_string()];
        assert_eq!(
            decide(
                &cfg(Preset::Neurobook),
                &facts("write", Mode::Normal, &t, false)
            ),
            Verdict::Run
        );
        assert!(matches!(
            decide(
                &cfg(Preset::Neurobook),
                &facts("write", Mode::Plan, &t, false)
            ),
            Verdict::Ask { .. }
        ));
        assert_eq!(
            decide(
                &cfg(Preset::Neurobook),
                &facts("bash", Mode::Discuss, &[], false)
            ),
            Verdict::Run
        );
    }

    #[test]
    fn locked_refuses_and_overrides_win() {
        let t = vec![".agent/plan/p.md".to_string()];
        assert!(matches!(
            decide(&cfg(Preset::Locked), &facts("write", Mode::Plan, &t, false)),
            Verdict::Refuse(_)
        ));
        let mut c = cfg(Preset::Locked);
        c.tools.insert("bash".into(), ToolRule::Allow);
        assert_eq!(
            decide(&c, &facts("bash", Mode::Normal, &[], false)),
            Verdict::Run
        );
        let mut c = cfg(Preset::Neurobook);
        c.tools.insert("bash".into(), ToolRule::Deny);
        assert!(matches!(
            decide(&c, &facts("bash", Mode::Normal, &[], false)),
            Verdict::Refuse(_)
        ));
    }

    #[test]
    fn switch_mode_always_asks() {
        for preset in [Preset::Supervised, Preset::Neurobook, Preset::Locked] {
            let mut c = cfg(preset);
            c.tools.insert("switch_mode".into(), ToolRule::Allow);
            for m in Mode::ALL {
                assert_eq!(
                    decide(&c, &facts("switch_mode", m, &[], true)),
                    Verdict::Ask {
                        grant_allowed: false
                    }
                );
            }
        }
    }

    #[test]
    fn plan_files_are_exempt_in_plan_mode_only() {
        let plan = vec![".agent/plan/outline.md".to_string()];
        let other = vec![".agent/plan/x.txt".to_string()];
        assert_eq!(
            decide(
                &cfg(Preset::Supervised),
                &facts("write", Mode::Plan, &plan, false)
            ),
            Verdict::Run
        );
        assert!(matches!(
            decide(
                &cfg(Preset::Supervised),
                &facts("write", Mode::Plan, &other, false)
            ),
            Verdict::Ask { .. }
        ));
        assert!(matches!(
            decide(
                &cfg(Preset::Supervised),
                &facts("write", Mode::Discuss, &plan, false)
            ),
            Verdict::Ask { .. }
        ));
        assert!(!plan_exempt(&[]));
    }
}
