//! The approval policy: for one gated call, run it, ask the author, or refuse.
//!
//! Decisions read the tool's declared [`Effects`], never its name (the name only looks up the
//! author's `[approval.tools]` rule). Two gates:
//!
//! - **Mutation** ([`decide`]). Presets (DESIGN.md): `supervised` asks for every mutating call
//!   in every mode; `neurobook` copies NeuroBook (normal mode runs, discuss/plan ask once;
//!   tools declared `prompt_gated_in_neurobook` — bash, SQL and world writes — run, as
//!   NeuroBook only restricts them in the prompt); `locked` refuses. Per-tool rules override
//!   the preset. In plan mode, writes whose every target is a `.md` file under `.agent/plan/`
//!   run without asking (except under `locked`). A tool declared `always_asks` (an agent
//!   switching its own mode) asks whatever the preset or rules say, and is never granted.
//! - **Egress** ([`decide_egress`]), for tools declared `egress`: `supervised` asks before the
//!   first request to each host of a session (a grant for that host covers the rest of the
//!   session, in every mode); hosts in `[web] allow_egress` never ask; `neurobook` does not
//!   gate egress (NeuroBook does not); `locked` refuses egress except to `allow_egress` hosts.
//!   `[approval.tools]` rules override the preset here too.

use crate::config::{ApprovalConfig, Preset, ToolRule};

use super::effects::Effects;
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

pub struct CallFacts<'a> {
    /// The tool's name, only to look up its `[approval.tools]` rule.
    pub tool: &'a str,
    pub effects: Effects,
    pub mode: Mode,
    pub targets: &'a [String],
    /// Every target already granted for this session (normal mode only).
    pub granted: bool,
}

pub fn decide(cfg: &ApprovalConfig, call: &CallFacts<'_>) -> Verdict {
    // An agent's request to change its own mode always goes to the author, whatever the
    // preset or overrides say, and never becomes a session grant (DESIGN.md "Modes").
    if call.effects.always_asks {
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
            if call.mode == Mode::Normal || call.effects.prompt_gated_in_neurobook {
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

/// Facts about one egress call: the hosts it may send to, and which of them are neither in
/// `[web] allow_egress` nor granted for this session.
pub struct EgressFacts<'a> {
    pub tool: &'a str,
    /// Every host the call may send to; empty when the tool could not name them.
    pub hosts: &'a [String],
    /// Hosts not pre-allowed by `[web] allow_egress`.
    pub not_preallowed: &'a [String],
    /// Hosts neither pre-allowed nor granted for this session.
    pub not_granted: &'a [String],
}

pub fn decide_egress(cfg: &ApprovalConfig, call: &EgressFacts<'_>) -> Verdict {
    // A call whose hosts are unknown can be neither pre-allowed nor granted.
    let known = !call.hosts.is_empty();
    let rule = cfg.tools.get(call.tool);
    match rule {
        Some(ToolRule::Allow) => return Verdict::Run,
        Some(ToolRule::Deny) => {
            return Verdict::Refuse(format!(
                "tool {} is denied by the approval config ([approval.tools] {} = \"deny\")",
                call.tool, call.tool
            ))
        }
        Some(ToolRule::Ask) | None => {}
    }
    if known && call.not_preallowed.is_empty() {
        return Verdict::Run;
    }
    match (cfg.preset, rule) {
        (Preset::Locked, None) => Verdict::Refuse(format!(
            "the approval preset is `locked`: sending data off the machine is refused ({} to {}). \
             To allow a host, add it to `allow_egress` under [web] in config.toml",
            call.tool,
            if known {
                call.not_preallowed.join(", ")
            } else {
                "an unnamed host".to_string()
            }
        )),
        (Preset::Neurobook, None) => Verdict::Run,
        _ if known && call.not_granted.is_empty() => Verdict::Run,
        _ => Verdict::Ask {
            grant_allowed: known,
        },
    }
}

/// Both gates of a call that mutates and sends data off the machine: refused if either
/// refuses, run if both run, else one question (granted only if both allow a grant).
pub fn combine(a: Verdict, b: Verdict) -> Verdict {
    match (a, b) {
        (Verdict::Refuse(why), _) | (_, Verdict::Refuse(why)) => Verdict::Refuse(why),
        (Verdict::Run, Verdict::Run) => Verdict::Run,
        (Verdict::Ask { grant_allowed: x }, Verdict::Ask { grant_allowed: y }) => Verdict::Ask {
            grant_allowed: x && y,
        },
        (Verdict::Ask { grant_allowed }, Verdict::Run)
        | (Verdict::Run, Verdict::Ask { grant_allowed }) => Verdict::Ask { grant_allowed },
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

    use crate::engine::effects::Domain;

    /// Effects as the built-in tool declares them (the policy sees only these).
    fn effects_of(tool: &str) -> Effects {
        let registry = crate::tools::registry().expect("built-in tools register");
        registry.get(tool).expect(tool).tool.effects()
    }

    fn facts<'a>(tool: &'a str, mode: Mode, targets: &'a [String], granted: bool) -> CallFacts<'a> {
        CallFacts {
            tool,
            effects: effects_of(tool),
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

    #[test]
    fn a_made_up_tool_with_bash_like_effects_is_decided_like_bash() {
        // Nothing in the policy knows a tool by name: a new shell tool declaring bash's
        // effects gets bash's verdict under every preset and mode, and one declaring
        // switch_mode's gets switch_mode's.
        for (real, effects) in [
            (
                "bash",
                Effects::touches(&[Domain::Files]).prompt_gated_in_neurobook(),
            ),
            (
                "switch_mode",
                Effects::touches(&[Domain::Control]).always_asks(),
            ),
            ("write", Effects::touches(&[Domain::Files])),
        ] {
            assert_eq!(
                effects_of(real).prompt_gated_in_neurobook,
                effects.prompt_gated_in_neurobook
            );
            assert_eq!(effects_of(real).always_asks, effects.always_asks);
            for preset in [Preset::Supervised, Preset::Neurobook, Preset::Locked] {
                for m in Mode::ALL {
                    for granted in [false, true] {
                        let t = vec!["x.md".to_string()];
                        let made_up = CallFacts {
                            tool: "my_new_tool",
                            effects,
                            mode: m,
                            targets: &t,
                            granted,
                        };
                        let expected = decide(&cfg(preset), &facts(real, m, &t, granted));
                        let got = decide(&cfg(preset), &made_up);
                        match (&expected, &got) {
                            (Verdict::Refuse(_), Verdict::Refuse(_)) => {}
                            _ => assert_eq!(expected, got, "{real} {preset:?} {m} {granted}"),
                        }
                    }
                }
            }
        }
    }

    fn egress(
        c: &ApprovalConfig,
        hosts: &[&str],
        not_pre: &[&str],
        not_granted: &[&str],
    ) -> Verdict {
        let s = |v: &[&str]| v.iter().map(|h| h.to_string()).collect::<Vec<_>>();
        decide_egress(
            c,
            &EgressFacts {
                tool: "web_fetch",
                hosts: &s(hosts),
                not_preallowed: &s(not_pre),
                not_granted: &s(not_granted),
            },
        )
    }

    #[test]
    fn egress_asks_per_host_under_supervised_only() {
        let sup = cfg(Preset::Supervised);
        assert_eq!(
            egress(&sup, &["a.example"], &["a.example"], &["a.example"]),
            Verdict::Ask {
                grant_allowed: true
            }
        );
        assert_eq!(
            egress(&sup, &["a.example"], &["a.example"], &[]),
            Verdict::Run
        );
        assert_eq!(egress(&sup, &["a.example"], &[], &[]), Verdict::Run);
        // Unnamed hosts: always ask, never granted.
        assert_eq!(
            egress(&sup, &[], &[], &[]),
            Verdict::Ask {
                grant_allowed: false
            }
        );
        assert_eq!(
            egress(
                &cfg(Preset::Neurobook),
                &["a.example"],
                &["a.example"],
                &["a.example"]
            ),
            Verdict::Run
        );
        let locked = cfg(Preset::Locked);
        assert!(matches!(
            egress(&locked, &["a.example"], &["a.example"], &[]),
            Verdict::Refuse(_)
        ));
        assert_eq!(egress(&locked, &["a.example"], &[], &[]), Verdict::Run);
        let mut deny = cfg(Preset::Neurobook);
        deny.tools.insert("web_fetch".into(), ToolRule::Deny);
        assert!(matches!(
            egress(&deny, &["a.example"], &[], &[]),
            Verdict::Refuse(_)
        ));
        let mut ask = cfg(Preset::Neurobook);
        ask.tools.insert("web_fetch".into(), ToolRule::Ask);
        assert!(matches!(
            egress(&ask, &["a.example"], &["a.example"], &["a.example"]),
            Verdict::Ask { .. }
        ));
    }
}
