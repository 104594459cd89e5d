//! Issues (NeuroBook's `world-issue-catalog.ts`): errors E1–E5 are persistent and recomputed on
//! every read; advisories A1–A2 are reported once, by the write or edit into the past that
//! raised them. Each carries a title, a one-line message and an explanation (what happened,
//! why it matters, what to do) for the agent and for the World pane.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Advisory,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// A relative op (increment, append, remove by value) without a usable base.
    E1,
    /// A `subject://` value naming a missing subject, or one of the wrong type.
    E2,
    /// A path or op that cannot apply here.
    E3,
    /// A path that passes through a `subject://` value.
    E4,
    /// An embedding container replaced as a whole with content.
    E5,
    /// Later relative ops now see a different base.
    A1,
    /// A later absolute op overrides this change.
    A2,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::E1 => "E1",
            Code::E2 => "E2",
            Code::E3 => "E3",
            Code::E4 => "E4",
            Code::E5 => "E5",
            Code::A1 => "A1",
            Code::A2 => "A2",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Code::E1 => "broken-relative",
            Code::E2 => "dangling-ref",
            Code::E3 => "invalid-path",
            Code::E4 => "cross-ref",
            Code::E5 => "embedding-whole-replace",
            Code::A1 => "base-shifted",
            Code::A2 => "masked",
        }
    }

    pub fn severity(self) -> Severity {
        match self {
            Code::A1 | Code::A2 => Severity::Advisory,
            _ => Severity::Error,
        }
    }

    fn texts(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            Code::E1 => (
                "Relative change without a usable base",
                "An increment, append or remove-by-value works on the value already at its path, but at this point of the timeline that value is missing or of the wrong kind, so the change was skipped.",
                "The state after this slice is not what the slice says; every later change on this path builds on the wrong value.",
                "Set the value first with a replace (in this slice or an earlier one), or correct the path or op with world.slice.editPatches.",
            ),
            Code::E2 => (
                "Reference to a missing or wrong subject",
                "A value points at subject://<id>, but no subject has that id at all, or it is of another type than the attribute expects.",
                "Reading the reference (deref, findRefs, scene context) finds nothing or the wrong kind of thing, so agents reason from a broken link.",
                "Create the missing subject with a slice that declares its type, or replace the reference with an existing subject of the right type.",
            ),
            Code::E3 => (
                "Path or operation cannot apply",
                "The patch addresses a path whose parent does not exist or is not a container, an index out of range, or uses an op the attribute's kind does not allow; it was skipped.",
                "The change the slice describes never happened in the computed state.",
                "Fix the path (check the schema in world-engine/schema.toml) or use an op the kind allows, with world.slice.editPatches.",
            ),
            Code::E4 => (
                "Path passes through a reference",
                "The path continues inside a value that is a subject:// reference. A subject's patches can only change its own state, not the referenced subject's.",
                "The change was skipped: the referenced subject is untouched and this subject's reference is unchanged.",
                "Write the change on the referenced subject itself (its id and its own path).",
            ),
            Code::E5 => (
                "Embedding container replaced with content",
                "An embedding list or record (EmbeddingText items) was replaced as a whole with non-empty content; only [] or {} may replace it.",
                "Search and memory keep their items one by one; a wholesale replace would silently drop or duplicate them.",
                "Add items with append (lists) or replace one key at /<attr>/<key> (records).",
            ),
            Code::A1 => (
                "Later relative changes now see a different base",
                "This change lies before later increments or appends on the same value, so they now build on the new value.",
                "The later states shift too; a number that was meant as absolute at a later time may now be off.",
                "Check the later states (world.subject.get with `at`); if the later values must stay as they were, adjust the later slices.",
            ),
            Code::A2 => (
                "Change is overridden later",
                "A later slice sets or removes the same value (or a container holding it), so this change only holds until then.",
                "The change is invisible after that later slice, which may not be what the story needs.",
                "Accept it if the change is meant to be temporary; otherwise edit the later slice.",
            ),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    pub what_happened: String,
    pub why_it_matters: String,
    pub suggested_action: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Issue {
    pub code: String,
    pub label: String,
    pub severity: Severity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_id: Option<String>,
    pub subject_id: String,
    /// The top-level attribute as a JSON Pointer (`/hp`).
    pub attr: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// When the offending patch happens (beyond NeuroBook's fields; for the World pane).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instant: Option<i64>,
    pub title: String,
    pub message: String,
    pub explanation: Explanation,
}

/// Where an issue comes from.
#[derive(Clone, Debug, Default)]
pub struct Origin<'a> {
    pub slice_id: Option<&'a str>,
    pub patch_id: Option<&'a str>,
    pub subject_id: &'a str,
    pub path: Option<&'a str>,
    pub op: Option<&'a str>,
    pub instant: Option<i64>,
}

impl Issue {
    pub fn new(code: Code, at: &Origin<'_>, message: impl Into<String>) -> Issue {
        let (title, what, why, action) = code.texts();
        Issue {
            code: code.as_str().into(),
            label: code.label().into(),
            severity: code.severity(),
            slice_id: at.slice_id.map(String::from),
            patch_id: at.patch_id.map(String::from),
            subject_id: at.subject_id.into(),
            attr: at
                .path
                .map(crate::world::pointer::attr_of)
                .unwrap_or_else(|| "/".into()),
            path: at.path.map(String::from),
            op: at.op.map(String::from),
            instant: at.instant,
            title: title.into(),
            message: message.into(),
            explanation: Explanation {
                what_happened: what.into(),
                why_it_matters: why.into(),
                suggested_action: action.into(),
            },
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Identity for de-duplication.
    pub fn key(&self) -> (String, Option<String>, String, Option<String>) {
        (
            self.code.clone(),
            self.patch_id.clone(),
            self.subject_id.clone(),
            self.path.clone(),
        )
    }
}

/// Keep the first of each (code, patch, subject, path).
pub fn dedup(issues: &mut Vec<Issue>) {
    let mut seen = std::collections::HashSet::new();
    issues.retain(|i| seen.insert(i.key()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_with_neurobook_field_names() {
        let i = Issue::new(
            Code::E1,
            &Origin {
                slice_id: Some("s"),
                patch_id: Some("p"),
                subject_id: "c1",
                path: Some("/gold/x"),
                op: Some("increment"),
                instant: Some(5),
            },
            "no base",
        );
        let v = serde_json::to_value(&i).unwrap();
        assert_eq!(v["label"], "broken-relative");
        assert_eq!(v["attr"], "/gold");
        assert_eq!(v["severity"], "error");
        assert!(v["explanation"]["suggestedAction"]
            .as_str()
            .unwrap()
            .contains("replace"));
        assert_eq!(v["sliceId"], "s");
    }
}
