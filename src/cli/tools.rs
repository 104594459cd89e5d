//! `nbook tools`: every tool with its group, mutation declaration and the profiles that may
//! use it; `--profile P` narrows to P's allowlist (tools of later stages are marked).

use std::path::PathBuf;

use serde::Serialize;

use super::{exit, Failure};
use crate::config::Dirs;
use crate::engine::profiles::Profiles;
use crate::engine::registry::Registry;

#[derive(Serialize)]
struct Row {
    name: String,
    group: String,
    mutates: String,
    available: bool,
    profiles: Vec<String>,
}

pub fn tools(
    profile: Option<String>,
    json: bool,
    project: Option<PathBuf>,
    dirs: &Dirs,
) -> Result<u8, Failure> {
    let mut extra = vec![dirs.config.join("profiles")];
    if let Some(p) = project {
        extra.push(p.join(".nbook").join("profiles"));
    }
    let (profiles, errors) = Profiles::load(&extra);
    for e in &errors {
        eprintln!(
            "nbook: warning: {}",
            crate::text::escape_message(&e.to_string())
        );
    }
    let mut registry = Registry::default();
    crate::tools::register_all(&mut registry).map_err(Failure::tool)?;
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
                });
            }
        }
    }
    if json {
        println!(
            "{}",
            crate::text::escape_json(&serde_json::to_string_pretty(&rows).map_err(Failure::tool)?)
        );
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
    println!(
        "{:<width$}  {:<group_width$} {:<8} PROFILES",
        "TOOL", "GROUP", "MUTATES"
    );
    for r in &rows {
        println!(
            "{:<width$}  {:<group_width$} {:<8} {}",
            label(r),
            r.group,
            r.mutates,
            r.profiles.join(" ")
        );
    }
    Ok(exit::OK)
}
