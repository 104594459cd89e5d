//! Tool implementations, one file per group, and `register_all`, the list of built-ins.

pub mod apply_patch;
pub mod bash;
pub mod files;
pub mod patch;

use std::sync::Arc;

use crate::engine::registry::Registry;

/// Register every built-in tool.
pub fn register_all(registry: &mut Registry) -> Result<(), String> {
    registry.register(Arc::new(files::Read))?;
    registry.register(Arc::new(files::Write))?;
    registry.register(Arc::new(files::Edit))?;
    registry.register(Arc::new(apply_patch::ApplyPatch))?;
    registry.register(Arc::new(bash::Bash))?;
    Ok(())
}
