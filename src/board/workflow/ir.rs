//! Fusion's workflow IR v2 as serde types (camelCase, the field names of
//! `workflow-ir-types.ts` in fusion-notes §4): columns with traits, nodes, edges, declared
//! artifacts, custom field declarations and setting declarations. Node `config`s stay JSON
//! values: each node kind reads its own keys, and the validator (`super::validate`) checks
//! them, so an IR an agent wrote parses as far as possible and every problem is reported at
//! once instead of the first serde error.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A whole workflow graph (version `"v2"`; `"v1"` is refused by the validator).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowIr {
    pub version: String,
    pub name: String,
    #[serde(default)]
    pub columns: Vec<IrColumn>,
    #[serde(default)]
    pub nodes: Vec<IrNode>,
    #[serde(default)]
    pub edges: Vec<IrEdge>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<IrArtifact>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldDefinition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingDefinition>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IrColumn {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub traits: Vec<TraitRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<ColumnAgent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Value>,
}

impl IrColumn {
    pub fn has_trait(&self, name: &str) -> bool {
        self.traits.iter().any(|t| t.name == name)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraitRef {
    #[serde(rename = "trait")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
}

/// The agent a column binds its work to (`mode`: `defer` | `override`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnAgent {
    pub agent_id: String,
    pub mode: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IrNode {
    pub id: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub config: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer_agent_id: Option<String>,
}

impl IrNode {
    /// `config.seam` of a prompt/script node (`planning`, `execute`, `step-execute`, `review`,
    /// `merge`, `review-handoff`, `schedule`).
    pub fn seam(&self) -> Option<&str> {
        self.config.get("seam").and_then(Value::as_str)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IrEdge {
    pub from: String,
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl IrEdge {
    pub fn is_rework(&self) -> bool {
        self.kind.as_deref() == Some("rework")
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IrArtifact {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `planning` | `manual`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub produced_by: Option<String>,
    /// `step-source` | `context`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// An option of an enum or multi-enum field or setting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OptionDef {
    pub value: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FieldKind {
    String,
    Text,
    Number,
    Boolean,
    Enum,
    MultiEnum,
    Date,
    Url,
}

impl FieldKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::String => "string",
            FieldKind::Text => "text",
            FieldKind::Number => "number",
            FieldKind::Boolean => "boolean",
            FieldKind::Enum => "enum",
            FieldKind::MultiEnum => "multi-enum",
            FieldKind::Date => "date",
            FieldKind::Url => "url",
        }
    }
    pub fn is_enum(self) -> bool {
        matches!(self, FieldKind::Enum | FieldKind::MultiEnum)
    }
}

/// A custom task field declaration (values live on the task; editing these orphans values).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldDefinition {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FieldKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<OptionDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render: Option<Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SettingKind {
    String,
    Text,
    Number,
    Boolean,
    Enum,
    MultiEnum,
}

impl SettingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SettingKind::String => "string",
            SettingKind::Text => "text",
            SettingKind::Number => "number",
            SettingKind::Boolean => "boolean",
            SettingKind::Enum => "enum",
            SettingKind::MultiEnum => "multi-enum",
        }
    }
    pub fn is_enum(self) -> bool {
        matches!(self, SettingKind::Enum | SettingKind::MultiEnum)
    }
}

/// A workflow setting declaration (the schema; values are per workflow in the project).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingDefinition {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: SettingKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<OptionDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integer: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render: Option<Value>,
}

/// Node kinds the validator knows (fusion-notes §4).
pub const NODE_KINDS: &[&str] = &[
    "start",
    "end",
    "prompt",
    "script",
    "gate",
    "hold",
    "split",
    "join",
    "foreach",
    "loop",
    "optional-group",
    "step-review",
    "parse-steps",
    "code",
    "notify",
    "merge-gate",
    "merge-attempt",
    "manual-merge-hold",
    "retry-backoff",
    "recovery-router",
    "branch-group-member-integration",
    "branch-group-promotion",
    "pr-create",
    "pr-respond",
    "pr-merge",
    "ask-user",
    "exit-gate",
];

/// A graph inside a `foreach`, `loop` or `optional-group` node's `config.template`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Template {
    #[serde(default)]
    pub nodes: Vec<IrNode>,
    #[serde(default)]
    pub edges: Vec<IrEdge>,
}
