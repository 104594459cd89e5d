//! `nbook sessions`: the project's agent sessions.

use std::path::Path;

use super::{exit, open_engine, out, Failure};
use crate::config::Dirs;

pub fn sessions(project: &Path, json: bool, dirs: Dirs) -> Result<u8, Failure> {
    let engine = open_engine(project, &dirs)?;
    let list = engine.sessions();
    if json {
        out(serde_json::to_string_pretty(&list).map_err(Failure::tool)?)?;
        return Ok(exit::OK);
    }
    if list.is_empty() {
        out(format!(
            "No sessions yet. Start one with `nbook run --project {} --message …` or in the TUI.",
            project.display()
        ))?;
        return Ok(exit::OK);
    }
    out(format!(
        "{:<6} {:<16} {:<8} {:<22} {:>8} {:>9}  TITLE",
        "ID", "PROFILE", "MODE", "STATE", "TOKENS", "COST"
    ))?;
    for s in list {
        out(format!(
            "{:<6} {:<16} {:<8} {:<22} {:>8} {:>9.4}  {}",
            s.id,
            s.profile,
            s.mode,
            s.state.label(),
            s.input_tokens + s.output_tokens,
            s.cost,
            s.title
        ))?;
    }
    Ok(exit::OK)
}
