//! `nbook sessions`: the project's agent sessions.

use std::path::Path;

use super::{exit, open_engine, out, Failure};
use crate::config::Dirs;

pub fn sessions(project: &Path, json: bool, dirs: Dirs) -> Result<u8, Failure> {
    let engine = open_engine(project, &dirs)?;
    let list = engine.sessions();
    if json {
        out(crate::text::escape_json(
            &serde_json::to_string_pretty(&list).map_err(Failure::tool)?,
        ))?;
        return Ok(exit::OK);
    }
    if list.is_empty() {
        out(format!(
            "No sessions yet. Start one with `nbook run --project {} --message …` or in the TUI.",
            crate::text::escape_os(project.as_os_str())
        ))?;
        return Ok(exit::OK);
    }
    out(format!(
        "{:<6} {:<16} {:<8} {:<22} {:>8} {:>9}  TITLE",
        "ID", "PROFILE", "MODE", "STATE", "TOKENS", "COST"
    ))?;
    // Ids, profiles and titles come from session logs and agents: escaped, never raw.
    let esc = crate::text::escape_for_terminal;
    for s in list {
        out(format!(
            "{:<6} {:<16} {:<8} {:<22} {:>8} {:>9.4}  {}",
            esc(&s.id),
            esc(&s.profile),
            s.mode,
            s.state.label(),
            s.input_tokens + s.output_tokens,
            s.cost,
            esc(&s.title)
        ))?;
    }
    Ok(exit::OK)
}
