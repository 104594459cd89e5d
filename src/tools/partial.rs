//! Narrowing a file change to the hunks the author kept (`Decision::ApproveParts`): the content
//! a file has when only its kept hunks are applied, shared by the file tools that declare
//! they can make part of their change (`edit`, `apply_patch`).

use super::preview_diff::with_kept_hunks;
use crate::engine::tool::ToolError;

/// `old` with only the kept hunks of the preview's diff of `old` → `new` applied. `kept` holds
/// one mark per hunk of a file that can be split, or a single mark for the whole file.
pub fn kept_content(
    display: &str,
    old: &str,
    new: &str,
    kept: &[bool],
) -> Result<String, ToolError> {
    match kept {
        [] => Err(ToolError::failed(format!(
            "the selection names no part of {display}"
        ))),
        [whole] => Ok(if *whole { new } else { old }.to_string()),
        marks => with_kept_hunks(old, new, marks).ok_or_else(|| {
            ToolError::Stale(format!(
                "{display} no longer has the {} hunks the preview showed; nothing was changed",
                marks.len()
            ))
        }),
    }
}
