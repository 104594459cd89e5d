//! Previews: what a mutating call will do, as shown to the author before approval, and the
//! fingerprints of the targets it was computed against (the stale check).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How one file will change, as shown to the author before approval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Add,
    Update,
    Delete,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Project-relative path (or `workspace/<project>/<path>` for a sibling project).
    pub path: String,
    pub kind: ChangeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_to: Option<String>,
    /// Unified diff of the change (`---`/`+++` headers, `@@` hunks).
    pub diff: String,
    pub added: usize,
    pub removed: usize,
}

/// What a mutating call will do. Built by the tool's dry run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PreviewBody {
    Files {
        changes: Vec<FileChange>,
    },
    Command {
        command: String,
        cwd: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_secs: Option<u64>,
    },
    /// Plot records (and the derived changes a write causes, e.g. a payoff beat fulfilling
    /// its promise), one entry per record.
    Records {
        changes: Vec<RecordChange>,
    },
    Statement {
        sql: String,
        #[serde(default)]
        rows: Vec<Value>,
    },
    Text {
        text: String,
    },
    /// A call that sends data off the machine: each request it may send, which session asked,
    /// and what that session (and the sessions that started it) did before.
    Egress {
        requests: Vec<EgressShown>,
        /// e.g. "7 (researcher)".
        session: String,
        /// Earlier calls of the asking session and its parents, most recent last, e.g.
        /// "session 3 (leader.default): read path=manuscript/secret.md".
        #[serde(default)]
        earlier: Vec<String>,
    },
}

/// One egress request as the author sees it: long URL parts and body values elided with their
/// length (`q=Once upon a tim…(812 chars)`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EgressShown {
    pub host: String,
    pub method: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub body: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordChange {
    /// e.g. "StoryPromise #3 (the-letter)".
    pub record: String,
    /// create | update | archive | delete | …
    pub action: String,
    pub fields: Vec<FieldChange>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldChange {
    pub field: String,
    pub before: Value,
    pub after: Value,
}

/// A target the preview was computed against, with a fingerprint of its state at that time.
/// On approval the engine recomputes the fingerprints; any difference makes the call stale.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetState {
    pub key: String,
    pub fingerprint: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Preview {
    /// One line, e.g. "Edit manuscript/001.md (+3 -1)".
    pub summary: String,
    pub body: PreviewBody,
    #[serde(default)]
    pub targets: Vec<TargetState>,
}

impl Preview {
    /// True for a file change that leaves every file as it is (a `write` of the content the
    /// file already has, an `edit` whose replacement equals the text): nothing to approve.
    pub fn changes_nothing(&self) -> bool {
        match &self.body {
            PreviewBody::Files { changes } => {
                !changes.is_empty()
                    && changes.iter().all(|c| {
                        c.kind == ChangeKind::Update
                            && c.move_to.is_none()
                            && c.added == 0
                            && c.removed == 0
                    })
            }
            _ => false,
        }
    }
}
