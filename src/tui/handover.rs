//! What the run loop does with the terminal handed to the author's editor or the shell
//! ([`EditorJob`]s and Ctrl+Z): read what is edited, run the editor through a [`Handover`],
//! and turn the result into an [`EditorDone`] action.
//!
//! A project file is edited on a temporary copy and saved as the author's `write` through
//! the engine ([`Engine::author_call`]): logged in the author session, with the same events
//! as an agent's change (the Files pane's `●` marks and previews refresh from them). If the
//! file changed on disk while the editor ran, nothing is saved and the author's version is
//! kept in a file the message names. A waiting `write`/`edit` call is shown as the whole file
//! it proposes; the edited file becomes the call's edited arguments (`tools::content_edit`).

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use crate::engine::typed::TypedTool;
use crate::engine::Engine;
use crate::tools::content_edit::ContentCall;
use crate::tools::files::Write;
use crate::tui::action::{EditorDone, EditorJob, FileSaved};
use crate::tui::external::{blocking, edit_text, keep_text, Edited, EditorCommand, Handover};
use crate::tui::files::RelPath;

/// The largest file handed to the editor (a novel's chapter is far smaller).
pub const EDIT_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// A project file's text, or why it cannot be edited.
fn read_text(root: &Path, rel: &RelPath) -> Result<Option<String>, String> {
    let shown = rel.shown();
    let opened = crate::workspace::regular::open_regular(&rel.under(root))
        .map_err(|e| format!("{shown}: it {e}"))?;
    let Some((file, len)) = opened else {
        return Ok(None);
    };
    if len > EDIT_MAX_BYTES {
        return Err(format!(
            "{shown} is {len} bytes; nbook hands files of up to {EDIT_MAX_BYTES} bytes to the editor"
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    use std::io::Read as _;
    file.take(EDIT_MAX_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| format!("{shown} is not UTF-8 text; nbook edits text files only"))
}

/// A path from a call's arguments as a project file the TUI may read: relative, inside the
/// project (no `..`), not a sibling project's `workspace/…` address.
fn project_rel(path: &str) -> Option<RelPath> {
    let p = Path::new(path.trim_start_matches("./"));
    let plain = p
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    (plain && !p.starts_with("workspace") && !path.is_empty()).then(|| RelPath::from(path))
}

/// Run one hand-over and say how it went. `editor` is the resolved `$VISUAL`/`$EDITOR`.
pub async fn perform(
    engine: &Arc<Engine>,
    root: &Path,
    h: &mut dyn Handover,
    editor: Result<EditorCommand, String>,
    job: EditorJob,
) -> EditorDone {
    match job {
        EditorJob::Suspend => {
            EditorDone::Suspended(blocking(|| h.suspend()).map_err(|e| e.to_string()))
        }
        EditorJob::Text { target, text, name } => {
            let result = editor.and_then(|ed| {
                blocking(|| edit_text(h, &ed, &text, &name))
                    .map(|e| match e {
                        Edited::Unchanged => None,
                        Edited::Changed(s) => Some(s),
                    })
                    .map_err(|e| e.to_string())
            });
            EditorDone::Text { target, result }
        }
        EditorJob::File { path } => {
            let result = match editor {
                Ok(ed) => edit_file(engine, root, h, &ed, &path).await,
                Err(e) => Err(e),
            };
            EditorDone::File { path, result }
        }
        EditorJob::Proposal {
            approval_id,
            tool,
            args,
        } => {
            let result = editor.and_then(|ed| edit_proposal(root, h, &ed, &tool, &args));
            EditorDone::Proposal {
                approval_id,
                tool,
                result,
            }
        }
    }
}

async fn edit_file(
    engine: &Arc<Engine>,
    root: &Path,
    h: &mut dyn Handover,
    editor: &EditorCommand,
    path: &RelPath,
) -> Result<FileSaved, String> {
    let shown = path.shown();
    let Some(name) = path.to_str().map(str::to_string) else {
        return Err(format!(
            "{shown}: its name is not UTF-8, and the engine's tools take UTF-8 paths; not edited"
        ));
    };
    let original =
        read_text(root, path)?.ok_or_else(|| format!("{shown} is no longer in the project"))?;
    let edited = match blocking(|| edit_text(h, editor, &original, &name)) {
        Ok(Edited::Unchanged) => return Ok(FileSaved::Unchanged),
        Ok(Edited::Changed(s)) => s,
        Err(e) => return Err(e.to_string()),
    };
    let kept = |why: String| match keep_text(edited.as_bytes(), &name) {
        Ok(p) => format!(
            "{why}; nothing was saved, and your version is kept in {}",
            p.display()
        ),
        Err(e) => format!("{why}; nothing was saved, and your version could not be kept: {e}"),
    };
    // Someone (an agent, another program) wrote the file while the editor ran: saving would
    // throw their change away.
    match read_text(root, path) {
        Ok(Some(now)) if now == original => {}
        Ok(_) => return Err(kept(format!("{shown} changed on disk while you edited it"))),
        Err(e) => return Err(kept(e)),
    }
    let r = engine
        .author_call(Write::NAME, json!({"path": name, "content": edited}), None)
        .await;
    if !r.ok {
        return Err(kept(format!(
            "the engine did not save {shown}: {}",
            r.content
        )));
    }
    let (old, new) = (original.lines().count(), edited.lines().count());
    Ok(FileSaved::Saved {
        summary: format!("{old} → {new} lines"),
    })
}

fn edit_proposal(
    root: &Path,
    h: &mut dyn Handover,
    editor: &EditorCommand,
    tool: &str,
    args: &serde_json::Value,
) -> Result<Option<serde_json::Value>, String> {
    let call = ContentCall::of(tool, args)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{tool} does not propose a file's content"))?;
    let current = if call.needs_current() {
        let rel = project_rel(call.path()).ok_or_else(|| {
            format!(
                "{} is not a file of this project the TUI can read; edit the arguments as JSON instead",
                call.path()
            )
        })?;
        read_text(root, &rel)?
    } else {
        None
    };
    let proposed = call
        .proposed(current.as_deref())
        .map_err(|e| e.to_string())?;
    let name = call.path().to_string();
    match blocking(|| edit_text(h, editor, &proposed, &name)).map_err(|e| e.to_string())? {
        Edited::Unchanged => Ok(None),
        Edited::Changed(s) => call
            .edited_args(current.as_deref(), &s)
            .map(Some)
            .map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::project_rel;

    #[test]
    fn only_plain_project_paths_are_read() {
        assert!(project_rel("manuscript/001.md").is_some());
        assert!(project_rel("./notes/a.md").is_some());
        for bad in [
            "../x.md",
            "/etc/passwd",
            "workspace/other/a.md",
            "a/../../b",
            "",
        ] {
            assert!(project_rel(bad).is_none(), "{bad}");
        }
    }
}
