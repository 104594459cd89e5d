//! The tighten-only rule for a project's `.nbook/config.toml`: a project someone sends the
//! author must not loosen the author's policy. This module splits a project config into what
//! applies at once (everything that is as strict as the author's config or stricter, and the
//! settings that do not touch the gate) and the lines that wait for the author's trust.
//!
//! Choices, setting by setting:
//! - `[approval] preset`: strictness `locked` > `supervised` > `neurobook`; a looser preset
//!   than the author's waits.
//! - `[approval.tools] NAME = rule`: `deny` > `ask` > `allow`. A rule is compared with the
//!   author's rule for that tool, or, when the author has none, with what the author's preset
//!   does with it: `locked` refuses (like `deny`), `supervised` asks (like `ask`), `neurobook`
//!   runs in normal mode but asks in discuss and plan mode, so there `allow` is looser and
//!   `ask`/`deny` are not. Tighter or equal rules apply at once.
//! - `[web]`: lists named `allow_*` (`allow_hosts`, `allow_egress`) let web tools reach hosts
//!   (private ones, or off the machine without asking): entries the author's own list does not
//!   have wait; entries the author has stay, so a shorter project list tightens. Every other
//!   `[web]` key except `search_order` chooses where searches go or which environment variable's
//!   API key is sent (`*_base_url`, `*_api_key_env`): a value that differs from the author's
//!   waits.
//! - `[providers.NAME]`: a provider decides where prompts (and the project's text) are sent and
//!   which environment variable's key goes with them; one the author does not have, or has
//!   differently, waits. `[models]`, `[defaults]`, `[embedding]`, `theme` only choose among
//!   the author's providers and the look, and `[notify]` how the author is told a call
//!   waits, so they apply at once.

use serde::Serialize;

use super::source::SourceFile;
use super::{Config, Preset, ToolRule};

/// A line of a project config that would loosen the author's policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Loosening {
    /// 1-based line in the project config (0 if it could not be found).
    pub line: usize,
    /// The key as a dotted path (`approval.tools.bash`, `web.allow_hosts.0`).
    pub key: String,
    /// The line as written.
    pub text: String,
    /// What it would loosen, against what the author's config says.
    pub why: String,
}

/// How strictly a rule or preset holds a mutating call, loosest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Strictness {
    Runs,
    RunsInNormalMode,
    Asks,
    Refuses,
}

fn of_rule(r: ToolRule) -> Strictness {
    match r {
        ToolRule::Allow => Strictness::Runs,
        ToolRule::Ask => Strictness::Asks,
        ToolRule::Deny => Strictness::Refuses,
    }
}

fn of_preset(p: Preset) -> Strictness {
    match p {
        Preset::Neurobook => Strictness::RunsInNormalMode,
        Preset::Supervised => Strictness::Asks,
        Preset::Locked => Strictness::Refuses,
    }
}

fn rule_name(r: ToolRule) -> &'static str {
    match r {
        ToolRule::Allow => "allow",
        ToolRule::Ask => "ask",
        ToolRule::Deny => "deny",
    }
}

fn what_rule_does(r: ToolRule, tool: &str) -> String {
    match r {
        ToolRule::Allow => format!("would run {tool} without asking"),
        ToolRule::Ask => format!("would ask before {tool} runs"),
        ToolRule::Deny => format!("would refuse {tool}"),
    }
}

fn what_author_does(author: &Config, tool: &str) -> String {
    if let Some(r) = author.approval.tools.get(tool) {
        return format!("your config has {tool} = \"{}\"", rule_name(*r));
    }
    let p = author.approval.preset;
    let does = match p {
        Preset::Locked => "refuses it",
        Preset::Supervised => "asks every time",
        Preset::Neurobook => "asks in discuss and plan mode",
    };
    format!("your preset `{}` {does}", p.as_str())
}

/// Split `project` into the table that applies without trust and the lines that wait.
/// `author` is the author's global config and `author_raw` the same file's table (raw values
/// are compared so keys this build does not know yet are judged too).
pub fn split(
    author: &Config,
    author_raw: &toml::Table,
    project: &SourceFile,
) -> (toml::Table, Vec<Loosening>) {
    let mut accepted = project.table.clone();
    let mut held = Vec::new();
    let mut hold = |path: Vec<String>, why: String| {
        let line = project.line_of(&path);
        held.push(Loosening {
            line,
            key: path.join("."),
            text: project.line_text(line),
            why,
        });
    };
    let p = &project.config;

    if let Some(approval) = table_mut(&mut accepted, "approval") {
        let mine = author.approval.preset;
        let theirs = p.approval.preset;
        if approval.contains_key("preset") && of_preset(theirs) < of_preset(mine) {
            approval.remove("preset");
            hold(
                path(&["approval", "preset"]),
                format!(
                    "sets the preset to `{}`, looser than your `{}`",
                    theirs.as_str(),
                    mine.as_str()
                ),
            );
        }
        if let Some(tools) = table_mut(approval, "tools") {
            for (tool, rule) in &p.approval.tools {
                let author_level = author
                    .approval
                    .tools
                    .get(tool)
                    .map_or(of_preset(mine), |r| of_rule(*r));
                if of_rule(*rule) < author_level {
                    tools.remove(tool);
                    hold(
                        path(&["approval", "tools", tool]),
                        format!(
                            "{}; {}",
                            what_rule_does(*rule, tool),
                            what_author_does(author, tool)
                        ),
                    );
                }
            }
        }
    }

    let author_web = author_raw.get("web").and_then(toml::Value::as_table);
    if let Some(web) = table_mut(&mut accepted, "web") {
        let keys: Vec<String> = web.keys().cloned().collect();
        for key in keys {
            if key == "search_order" {
                continue;
            }
            let mine = author_web.and_then(|w| w.get(&key));
            if let (true, Some(toml::Value::Array(list))) =
                (key.starts_with("allow_"), web.get_mut(&key))
            {
                let allowed: Vec<toml::Value> = match mine {
                    Some(toml::Value::Array(a)) => a.clone(),
                    _ => Vec::new(),
                };
                let mut index = 0;
                list.retain(|entry| {
                    let keep = allowed.contains(entry);
                    if !keep {
                        hold(
                            path(&["web", &key, &index.to_string()]),
                            format!(
                                "lets web tools reach {} (not in your [web] {key})",
                                plain(entry)
                            ),
                        );
                    }
                    index += 1;
                    keep
                });
            } else if web.get(&key) != mine {
                web.remove(&key);
                hold(
                    path(&["web", &key]),
                    format!(
                        "chooses where web searches go or which API key they send; your config {}",
                        mine.map_or("does not set it".to_string(), |v| format!("has {v}"))
                    ),
                );
            }
        }
    }

    let author_providers = author_raw.get("providers").and_then(toml::Value::as_table);
    if let Some(providers) = table_mut(&mut accepted, "providers") {
        let names: Vec<String> = providers.keys().cloned().collect();
        for name in names {
            let mine = author_providers.and_then(|t| t.get(&name));
            if providers.get(&name) != mine {
                providers.remove(&name);
                let why = match mine {
                    None => format!(
                        "defines provider `{name}`, which you do not have: it would choose where prompts and project text are sent and which API key goes with them"
                    ),
                    Some(_) => format!(
                        "changes your provider `{name}`: where prompts and project text are sent and which API key goes with them"
                    ),
                };
                hold(path(&["providers", &name]), why);
            }
        }
    }
    (accepted, held)
}

fn path(p: &[&str]) -> Vec<String> {
    p.iter().map(|s| s.to_string()).collect()
}

fn plain(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn table_mut<'a>(t: &'a mut toml::Table, key: &str) -> Option<&'a mut toml::Table> {
    t.get_mut(key).and_then(toml::Value::as_table_mut)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (author config, project config) → the keys held back.
    fn held(author: &str, project: &str) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.toml");
        let p = dir.path().join("p.toml");
        std::fs::write(&a, author).unwrap();
        std::fs::write(&p, project).unwrap();
        let a = SourceFile::read(&a).unwrap().unwrap();
        let p = SourceFile::read(&p).unwrap().unwrap();
        let (_, lines) = split(&a.config, &a.table, &p);
        lines.into_iter().map(|l| l.key).collect()
    }

    #[test]
    fn rules_are_compared_with_the_authors_rule_or_preset() {
        let t = |rule: &str| format!("[approval.tools]\nbash = \"{rule}\"\n");
        let preset = |p: &str| format!("[approval]\npreset = \"{p}\"\n");
        let bash = vec!["approval.tools.bash".to_string()];
        let none: Vec<String> = Vec::new();
        // Under locked only deny is as strict; under supervised ask is too; under neurobook
        // only allow is looser.
        assert_eq!(held(&preset("locked"), &t("ask")), bash);
        assert_eq!(held(&preset("locked"), &t("deny")), none);
        assert_eq!(held(&preset("supervised"), &t("allow")), bash);
        assert_eq!(held(&preset("supervised"), &t("ask")), none);
        assert_eq!(held(&preset("neurobook"), &t("allow")), bash);
        assert_eq!(held(&preset("neurobook"), &t("ask")), none);
        // The author's own rule wins over their preset for the comparison.
        assert_eq!(
            held("[approval.tools]\nbash = \"allow\"\n", &t("allow")),
            none
        );
        assert_eq!(held("[approval.tools]\nbash = \"deny\"\n", &t("ask")), bash);
        // Presets: locked > supervised > neurobook.
        let p = vec!["approval.preset".to_string()];
        assert_eq!(held(&preset("locked"), &preset("supervised")), p);
        assert_eq!(held("", &preset("neurobook")), p);
        assert_eq!(held(&preset("neurobook"), &preset("supervised")), none);
    }

    #[test]
    fn providers_the_author_has_unchanged_are_not_held() {
        let prov = "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\n";
        assert!(held(prov, prov).is_empty());
        let changed = prov.replace("127.0.0.1:1", "evil.example");
        assert_eq!(held(prov, &changed), vec!["providers.local".to_string()]);
        assert!(held(prov, "[models.m]\nprovider = \"local\"\nname = \"x\"\n").is_empty());
    }
}
