//! What the author edits when a `write` or `edit` call waits for approval: the whole file as the
//! call would leave it (not the call's JSON), and the arguments an edited file turns back into.
//!
//! The file tools own this knowledge, so no code outside `src/tools` matches their names. A
//! `write` edited by the author stays a `write` of the edited content. An `edit` stays an
//! `edit` (an approval may change a call's arguments, not its tool): the edited file becomes the
//! smallest set of `oldText`/`newText` blocks — each changed run of lines, widened by whole
//! lines of context until its `oldText` occurs once in the current file — so the preview the
//! author sees again stays a small diff, and a file changed meanwhile makes the call fail
//! (its blocks no longer match) instead of overwriting someone else's change. Blocks that
//! cannot be made unique fall back to one block replacing the whole file.

use serde_json::{json, Value};

use super::files::{apply_edits, Edit, EditBlock, Write};
use crate::engine::typed::TypedTool;

/// Why a call's content cannot be shown or turned back into arguments.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ContentEditError {
    #[error("the call's arguments are not what {tool} takes: {message}")]
    BadArgs { tool: String, message: String },
    #[error("the edit does not apply to {path} as it is now: {message}")]
    DoesNotApply { path: String, message: String },
    #[error("{path} does not exist, so an edit has nothing to change")]
    Missing { path: String },
}

/// A `write` or `edit` call, seen as the file it proposes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContentCall {
    Write { path: String, content: String },
    Edit { path: String, edits: Vec<EditBlock> },
}

fn bad(tool: &str, e: serde_json::Error) -> ContentEditError {
    ContentEditError::BadArgs {
        tool: tool.to_string(),
        message: e.to_string(),
    }
}

impl ContentCall {
    /// The call as a file content, if `tool` is one that proposes a whole file (`write`,
    /// `edit`); `Ok(None)` for every other tool (their arguments are edited as JSON).
    pub fn of(tool: &str, args: &Value) -> Result<Option<ContentCall>, ContentEditError> {
        if tool == Write::NAME {
            let a: super::files::WriteArgs =
                serde_json::from_value(args.clone()).map_err(|e| bad(tool, e))?;
            return Ok(Some(ContentCall::Write {
                path: a.path,
                content: a.content,
            }));
        }
        if tool == Edit::NAME {
            let a: super::files::EditArgs =
                serde_json::from_value(args.clone()).map_err(|e| bad(tool, e))?;
            return Ok(Some(ContentCall::Edit {
                path: a.path,
                edits: a.edits,
            }));
        }
        Ok(None)
    }

    pub fn path(&self) -> &str {
        match self {
            ContentCall::Write { path, .. } | ContentCall::Edit { path, .. } => path,
        }
    }

    /// Does showing the content need the file as it is now? (An `edit` applies to it.)
    pub fn needs_current(&self) -> bool {
        matches!(self, ContentCall::Edit { .. })
    }

    /// The whole file after the call. `current` is the file as it is now (`None`: missing).
    pub fn proposed(&self, current: Option<&str>) -> Result<String, ContentEditError> {
        match self {
            ContentCall::Write { content, .. } => Ok(content.clone()),
            ContentCall::Edit { path, edits } => {
                let original =
                    current.ok_or_else(|| ContentEditError::Missing { path: path.clone() })?;
                apply_edits(path, original, edits)
                    .map(|(new, _)| new)
                    .map_err(|e| ContentEditError::DoesNotApply {
                        path: path.clone(),
                        message: e.to_string(),
                    })
            }
        }
    }

    /// The arguments of the same tool that make the file `edited` (the author's version).
    pub fn edited_args(
        &self,
        current: Option<&str>,
        edited: &str,
    ) -> Result<Value, ContentEditError> {
        match self {
            ContentCall::Write { path, .. } => Ok(json!({"path": path, "content": edited})),
            ContentCall::Edit { path, .. } => {
                let original =
                    current.ok_or_else(|| ContentEditError::Missing { path: path.clone() })?;
                let blocks = blocks_for(original, edited);
                let edits: Vec<Value> = blocks
                    .iter()
                    .map(|b| json!({"oldText": b.old_text, "newText": b.new_text}))
                    .collect();
                if edits.is_empty() {
                    return Err(ContentEditError::DoesNotApply {
                        path: path.clone(),
                        message: "the edited file is the file as it is now: there is nothing to edit (reject the call instead)".into(),
                    });
                }
                Ok(json!({"path": path, "edits": edits}))
            }
        }
    }
}

/// A changed run of lines: `old` and `new` are line index ranges (end exclusive).
#[derive(Clone, Copy, Debug)]
struct Hunk {
    old: (usize, usize),
    new: (usize, usize),
}

/// The fewest `edit` blocks turning `original` into `edited`, each `oldText` unique in
/// `original` (checked by applying them; one whole-file block when that fails).
pub fn blocks_for(original: &str, edited: &str) -> Vec<EditBlock> {
    if original == edited {
        return Vec::new();
    }
    let whole = || {
        vec![EditBlock {
            old_text: original.to_string(),
            new_text: edited.to_string(),
        }]
    };
    if original.is_empty() {
        return whole(); // apply_edits refuses an empty oldText: the caller's apply will say so
    }
    let old_lines: Vec<&str> = original.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = edited.split_inclusive('\n').collect();
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Patience)
        .diff_slices(&old_lines, &new_lines);
    let mut hunks: Vec<Hunk> = Vec::new();
    for op in diff.ops() {
        if matches!(op, similar::DiffOp::Equal { .. }) {
            continue;
        }
        let (o, n) = (op.old_range(), op.new_range());
        match hunks.last_mut() {
            Some(h) if h.old.1 == o.start && h.new.1 == n.start => {
                h.old.1 = o.end;
                h.new.1 = n.end;
            }
            _ => hunks.push(Hunk {
                old: (o.start, o.end),
                new: (n.start, n.end),
            }),
        }
    }
    let text = |lines: &[&str], r: (usize, usize)| lines[r.0..r.1].concat();
    // Widen each hunk by a line of context on each side until its old text is unique,
    // merging hunks that come to touch (the lines between them are equal on both sides).
    for _ in 0..old_lines.len() + 2 {
        let mut all_unique = true;
        for h in &mut hunks {
            let old = text(&old_lines, h.old);
            if !old.is_empty() && original.matches(old.as_str()).count() == 1 {
                continue;
            }
            all_unique = false;
            if h.old.0 > 0 {
                h.old.0 -= 1;
                h.new.0 -= 1;
            }
            if h.old.1 < old_lines.len() {
                h.old.1 += 1;
                h.new.1 += 1;
            }
        }
        let mut merged: Vec<Hunk> = Vec::new();
        for h in hunks {
            match merged.last_mut() {
                // Hunks widen by one line a round, so when they first touch the lines they
                // share are the equal lines between them: the union is one changed run.
                Some(m) if m.old.1 >= h.old.0 => {
                    m.old.1 = m.old.1.max(h.old.1);
                    m.new.1 = m.new.1.max(h.new.1);
                }
                _ => merged.push(h),
            }
        }
        hunks = merged;
        if all_unique {
            break;
        }
    }
    let blocks: Vec<EditBlock> = hunks
        .iter()
        .map(|h| EditBlock {
            old_text: text(&old_lines, h.old),
            new_text: text(&new_lines, h.new),
        })
        .collect();
    match apply_edits("", original, &blocks) {
        Ok((out, _)) if out == edited => blocks,
        _ => whole(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(original: &str, blocks: &[EditBlock]) -> String {
        apply_edits("f", original, blocks).unwrap().0
    }

    #[test]
    fn a_write_is_its_content_and_becomes_a_write_of_the_edit() {
        let c = ContentCall::of("write", &json!({"path": "a.md", "content": "one\n"}))
            .unwrap()
            .unwrap();
        assert!(!c.needs_current());
        assert_eq!(c.proposed(None).unwrap(), "one\n");
        assert_eq!(
            c.edited_args(None, "two\n").unwrap(),
            json!({"path": "a.md", "content": "two\n"})
        );
    }

    #[test]
    fn other_tools_are_not_content_calls_and_bad_args_are_errors() {
        assert_eq!(
            ContentCall::of("bash", &json!({"command": "ls"})).unwrap(),
            None
        );
        let e = ContentCall::of("write", &json!({"path": "a.md"})).unwrap_err();
        assert!(matches!(e, ContentEditError::BadArgs { .. }), "{e}");
        let e = ContentCall::of("edit", &json!({"path": 3, "edits": []})).unwrap_err();
        assert!(matches!(e, ContentEditError::BadArgs { .. }), "{e}");
    }

    #[test]
    fn an_edit_shows_the_file_after_it_and_fails_clearly_when_it_does_not_apply() {
        let c = ContentCall::of(
            "edit",
            &json!({"path": "a.md", "edits": [{"oldText": "cat", "newText": "dog"}]}),
        )
        .unwrap()
        .unwrap();
        assert!(c.needs_current());
        assert_eq!(c.proposed(Some("a cat sat\n")).unwrap(), "a dog sat\n");
        assert!(matches!(
            c.proposed(Some("no such animal\n")),
            Err(ContentEditError::DoesNotApply { .. })
        ));
        assert!(matches!(
            c.proposed(None),
            Err(ContentEditError::Missing { .. })
        ));
    }

    #[test]
    fn an_edited_file_becomes_small_unique_blocks_that_apply_exactly() {
        let original =
            "# One\n\nThe harbour was quiet.\n\nMira left.\n\nThe harbour was quiet.\nEnd.\n";
        // Change the second (repeated) line: its block needs context to be unique.
        let edited =
            "# One\n\nThe harbour was quiet.\n\nMira left.\n\nThe harbour was loud.\nEnd.\n";
        let blocks = blocks_for(original, edited);
        assert_eq!(blocks.len(), 1);
        assert!(blocks[0].old_text.len() < original.len(), "{blocks:?}");
        assert_eq!(original.matches(&blocks[0].old_text).count(), 1);
        assert_eq!(apply(original, &blocks), edited);
        // Two distant changes stay two blocks.
        let long: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let edited = long
            .replace("line 3\n", "line three\n")
            .replace("line 30\n", "line thirty\n");
        let blocks = blocks_for(&long, &edited);
        assert_eq!(blocks.len(), 2, "{blocks:?}");
        assert_eq!(apply(&long, &blocks), edited);
    }

    #[test]
    fn insertions_deletions_and_the_ends_of_the_file_apply_exactly() {
        let original = "a\nb\nc\n";
        for edited in [
            "a\nb\nc\nd\n",
            "z\na\nb\nc\n",
            "a\nc\n",
            "a\nb\nc",
            "",
            "a\nb\nb\nc\n",
            "x\n",
        ] {
            let blocks = blocks_for(original, edited);
            assert_eq!(apply(original, &blocks), edited, "edited {edited:?}");
        }
        // A file of identical lines: context never makes a block unique; one whole-file block.
        let same = "x\nx\nx\nx\n";
        let blocks = blocks_for(same, "x\nx\ny\nx\n");
        assert_eq!(apply(same, &blocks), "x\nx\ny\nx\n");
        assert!(blocks_for(original, original).is_empty());
    }

    #[test]
    fn an_unchanged_edit_is_refused_and_an_edit_becomes_edit_args() {
        let c = ContentCall::of(
            "edit",
            &json!({"path": "a.md", "edits": [{"oldText": "b", "newText": "B"}]}),
        )
        .unwrap()
        .unwrap();
        assert!(c.edited_args(Some("a\nb\n"), "a\nb\n").is_err());
        let args = c.edited_args(Some("a\nb\n"), "a\nbee\n").unwrap();
        assert_eq!(args["path"], "a.md");
        assert_eq!(args["edits"][0]["newText"], "bee\n");
    }
}
