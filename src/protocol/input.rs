//! Questions for the author (`request_user_input` forms, workflow `wf.ask` prompts) and the
//! answers, as the engine queues them and the Approvals pane shows them.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionOption {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    pub question: String,
    /// Empty: a free-text answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<QuestionOption>,
    /// Several options may be chosen (workflow `select` with `multi`).
    #[serde(default)]
    pub multi: bool,
}

/// Who asks: an agent through `request_user_input`, or a workflow script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputSource {
    Agent,
    Workflow,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputRequest {
    /// `<session id>/<tool call id>` (agent) or `<job id>:<n>` (workflow).
    pub id: String,
    pub session_id: String,
    pub source: InputSource,
    pub title: String,
    pub questions: Vec<Question>,
    pub requested_at: String,
}

/// One answer, in NeuroBook's shape (`questionIndex`, `text`, `selectedOptionIndex`…).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub question_index: usize,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_option_index: Option<usize>,
    /// Every chosen option for a multi-select question.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selected_option_indexes: Vec<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignored: bool,
}
