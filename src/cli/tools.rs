//! `nbook tools`: every tool with its group, mutation declaration and the profiles that may
//! use it; `--profile P` narrows to P's allowlist (tools of later stages are marked). `--json`
//! also carries each tool's declared effects (domains, pauses, egress, …).
//!
//! Config warnings and, with `--project`, the project config lines held back until the author
//! trusts them go to stderr in both formats. `--json` keeps its array of rows (scripts rely on
//! it) and gives each row `ignored_config`: the held lines that would change how that tool is
//! gated (its own `[approval.tools]` rule and, for mutating tools, a looser preset; for web
//! tools the `[web]` lines).

use std::path::PathBuf;

use serde::Serialize;

use super::{exit, note, out, Failure};
use crate::config::{Config, Dirs, Loosening};
use crate::engine::profiles::Profiles;
use crate::workspace::Workspace;

#[derive(Serialize)]
struct Row {
    name: String,
    group: String,
    mutates: String,
    available: bool,
    profiles: Vec<String>,
    ignored_config: Vec<Loosening>,
    #[serde(skip_serializing_if = "Option::is_none")]
    effects: Option<crate::engine::effects::Effects>,
}

pub fn tools(
    profile: Option<String>,
    json: bool,
    project: Option<PathBuf>,
    dirs: &Dirs,
) -> Result<u8, Failure> {
    let mut extra = vec![dirs.config.join("profiles")];
    // The project's root as the engine sees it (what a trust is bound to); a folder that is
    // not a project is used as given, as before.
    let root = project.map(|p| match Workspace::open(&p) {
        Ok(ws) => ws.root().to_path_buf(),
        Err(_) => p,
    });
    if let Some(p) = &root {
        extra.push(p.join(".nbook").join("profiles"));
    }
    let mut report = Config::load_report(dirs, root.as_deref()).map_err(Failure::usage)?;
    let (profiles, errors) = Profiles::load(&extra);
    for e in &errors {
        note(format!(
            "nbook: warning: {}",
            crate::text::escape_message(&e.to_string())
        ));
    }
    let registry = crate::tools::registry().map_err(Failure::tool)?;
    report.check_tool_names(registry.names());
    for n in report.notes() {
        note(format!("nbook: warning: {n}"));
    }
    let held: Vec<Loosening> = report.held().map(|g| g.lines.clone()).unwrap_or_default();
    let ignored = |tool: &str, group: &str, mutates: bool| -> Vec<Loosening> {
        held.iter()
            .filter(|l| {
                l.key == format!("approval.tools.{tool}")
                    || (mutates && l.key == "approval.preset")
                    || (group == "web" && l.key.starts_with("web."))
            })
            .cloned()
            .collect()
    };
    let users = |tool: &str| -> Vec<String> {
        profiles
            .iter()
            .filter(|p| p.allows(tool))
            .map(|p| crate::text::escape_for_terminal(&p.key).into_owned())
            .collect()
    };
    let mut rows: Vec<Row> = registry
        .iter()
        .map(|t| Row {
            name: t.tool.name().into(),
            group: t.tool.group().into(),
            mutates: t.tool.mutates().label().into(),
            available: true,
            profiles: users(t.tool.name()),
            ignored_config: ignored(
                t.tool.name(),
                t.tool.group(),
                t.tool.mutates().label() != "no",
            ),
            effects: Some(t.tool.effects()),
        })
        .collect();
    if let Some(key) = &profile {
        let p = profiles
            .get(key)
            .ok_or_else(|| Failure::usage(format!("unknown profile '{key}'")))?;
        rows.retain(|r| p.allows(&r.name));
        for name in &p.tools {
            if registry.get(name).is_none() {
                rows.push(Row {
                    name: name.clone(),
                    group: "-".into(),
                    mutates: "-".into(),
                    available: false,
                    profiles: users(name),
                    ignored_config: Vec::new(),
                    effects: None,
                });
            }
        }
    }
    if json {
        out(crate::text::escape_json(
            &serde_json::to_string_pretty(&rows).map_err(Failure::tool)?,
        ))?;
        return Ok(exit::OK);
    }
    let label = |r: &Row| {
        if r.available {
            r.name.clone()
        } else {
            format!("{} (later stage)", r.name)
        }
    };
    let width = rows
        .iter()
        .map(|r| label(r).len())
        .max()
        .unwrap_or(4)
        .max(4);
    let group_width = rows.iter().map(|r| r.group.len()).max().unwrap_or(5).max(5);
    out(format!(
        "{:<width$}  {:<group_width$} {:<8} PROFILES",
        "TOOL", "GROUP", "MUTATES"
    ))?;
    for r in &rows {
        out(format!(
            "{:<width$}  {:<group_width$} {:<8} {}",
            label(r),
            r.group,
            r.mutates,
            r.profiles.join(" ")
        ))?;
    }
    Ok(exit::OK)
}
