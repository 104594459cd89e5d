//! Author writes from the Story pane, as tool calls the engine runs for the author: the very
//! `save_story_*` tools the agents call, and the author-only `delete_story_node`.
//!
//! Editing is JSON: `e` opens the selected record's editable fields as a JSON object whose keys
//! are exactly the tools' argument names (`title`, `status`, `brief.readerKnows`,
//! `worldAnchor.startTime`, …). On save only the keys whose value changed are sent, as the
//! tools' `update` action receives them: `null` clears a field, a deleted key keeps the stored
//! value, unknown keys are refused by name. The tool validates and applies them, so every rule,
//! error message and JSON Pointer is the tools'.
//!
//! Archive is the agents' soft delete per kind (thread/scene `archive`, promise `abandon`,
//! decision `drop` with a note); delete is the author-only hard delete with its cascade. Which
//! tool each becomes is [`crate::tools::story_author`]'s to say.

use serde_json::{json, Map, Value};

use crate::plot::ledger::{NodeDetail, NodeRef};
use crate::tools::story_author::{self, StoryCall};

/// A write the author asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum StoryWrite {
    /// The changed keys of an edit form, as tool arguments.
    Update { node: NodeRef, args: Value },
    /// Thread/scene archive, promise abandon, decision drop (with its note).
    Archive { node: NodeRef, note: Option<String> },
    /// Hard delete with its cascade.
    Delete { node: NodeRef },
}

impl StoryWrite {
    pub fn node(&self) -> NodeRef {
        match self {
            StoryWrite::Update { node, .. }
            | StoryWrite::Archive { node, .. }
            | StoryWrite::Delete { node } => *node,
        }
    }

    /// What it does, in the tools' words (`update`, `archive`, `abandon`, `drop`, `delete`).
    pub fn verb(&self) -> &'static str {
        match self {
            StoryWrite::Update { .. } => "update",
            StoryWrite::Delete { .. } => "delete",
            StoryWrite::Archive { node, .. } => archive_verb(*node).unwrap_or("archive"),
        }
    }

    /// The tool call this write is.
    pub fn call(&self) -> Result<StoryCall, story_author::StoryCallError> {
        match self {
            StoryWrite::Update { node, args } => story_author::update_call(*node, args),
            StoryWrite::Archive { node, note } => {
                story_author::archive_call(*node, note.as_deref())
            }
            StoryWrite::Delete { node } => story_author::delete_call(*node),
        }
    }
}

/// The soft delete of a kind, if it has one.
pub fn archive_verb(node: NodeRef) -> Option<&'static str> {
    match node {
        NodeRef::Thread(_) | NodeRef::Scene(_) => Some("archive"),
        NodeRef::Promise(_) => Some("abandon"),
        NodeRef::Decision(_) => Some("drop"),
        _ => None,
    }
}

/// "StoryScene #5", the record names the change log uses.
pub fn node_label(node: NodeRef) -> String {
    match node {
        NodeRef::Story => "Story".into(),
        NodeRef::Act(id) => format!("StoryAct #{id}"),
        NodeRef::Chapter(id) => format!("StoryChapter #{id}"),
        NodeRef::Phase(id) => format!("StoryPhase #{id}"),
        NodeRef::Thread(id) => format!("StoryThread #{id}"),
        NodeRef::Scene(id) => format!("StoryScene #{id}"),
        NodeRef::Promise(id) => format!("StoryPromise #{id}"),
        NodeRef::Decision(id) => format!("StoryDecision #{id}"),
    }
}

/// An edit form: the record's editable fields as the tools name them.
#[derive(Clone, Debug, PartialEq)]
pub struct EditForm {
    pub node: NodeRef,
    /// "StoryScene #5 (Fog from the second hour)".
    pub label: String,
    pub original: Map<String, Value>,
}

impl EditForm {
    pub fn text(&self) -> String {
        serde_json::to_string_pretty(&Value::Object(self.original.clone())).unwrap_or_default()
    }
}

fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    v.map(Into::into).unwrap_or(Value::Null)
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The edit form of a node, from its detail. Story and phases have no update service.
pub fn form_of(detail: &NodeDetail) -> Result<EditForm, String> {
    let (node, label, fields) = match detail {
        NodeDetail::Act { act: a } => (
            NodeRef::Act(a.id),
            a.name.clone(),
            json!({"name": a.name, "title": a.title, "summary": a.summary, "note": opt(a.note.clone()), "sortOrder": a.sort_order}),
        ),
        NodeDetail::Chapter { detail, .. } => {
            let c = &detail.chapter;
            let b = &c.brief;
            (
                NodeRef::Chapter(c.id),
                c.name.clone(),
                json!({
                    "actId": opt(c.act_id), "name": c.name, "title": c.title, "note": opt(c.note.clone()),
                    "sortOrder": c.sort_order,
                    "brief": {
                        "goal": opt(b.goal.clone()), "pov": opt(b.pov.clone()), "tone": opt(b.tone.clone()),
                        "pacing": opt(b.pacing.clone()), "readerKnows": opt(b.reader_knows.clone()),
                        "protagonistKnows": opt(b.protagonist_knows.clone()), "mustHide": opt(b.must_hide.clone()),
                        "hintOnly": opt(b.hint_only.clone()), "opening": opt(b.opening.clone()),
                        "ending": opt(b.ending.clone()), "doNotWrite": opt(b.do_not_write.clone()),
                    }
                }),
            )
        }
        NodeDetail::Thread { detail } => {
            let t = &detail.thread;
            (
                NodeRef::Thread(t.id),
                t.name.clone(),
                json!({
                    "storyPhaseId": opt(t.story_phase_id), "name": t.name, "title": t.title,
                    "isMainThread": t.is_main_thread, "status": t.status, "miceType": opt(t.mice_type.clone()),
                    "summary": t.summary, "tags": t.tags, "writingTip": opt(t.writing_tip.clone()), "note": opt(t.note.clone()),
                }),
            )
        }
        NodeDetail::Scene { context } => {
            let d = &context.scene;
            let s = &d.scene;
            let w = &s.world_anchor;
            let refs: Vec<Value> = d
                .refs
                .iter()
                .map(|r| json!({"relation": r.relation, "target": r.target, "visibility": r.visibility, "note": opt(r.note.clone())}))
                .collect();
            (
                NodeRef::Scene(s.id),
                s.title.clone(),
                json!({
                    "threadId": s.thread_id, "chapterId": opt(s.chapter_id), "title": s.title, "status": s.status,
                    "outcomeType": opt(s.outcome_type.clone()), "pacingRole": opt(s.pacing_role.clone()),
                    "summary": s.summary, "purpose": opt(s.purpose.clone()), "writingTip": opt(s.writing_tip.clone()),
                    "note": opt(s.note.clone()),
                    "worldAnchor": {
                        "startTime": opt(w.start_time.clone()), "endTime": opt(w.end_time.clone()),
                        // The tool requires them and ignores them on write (derived from the times).
                        "startInstant": opt(w.start_instant), "endInstant": opt(w.end_instant),
                        "subjectIds": w.subject_ids, "locationSubjectId": opt(w.location_subject_id.clone()),
                    },
                    "refs": refs,
                }),
            )
        }
        NodeDetail::Promise { detail } => {
            let p = &detail.promise;
            (
                NodeRef::Promise(p.id),
                p.name.clone(),
                json!({
                    "name": p.name, "title": p.title, "status": p.status, "importance": p.importance,
                    "summary": p.summary, "payoffExpectation": opt(p.payoff_expectation.clone()),
                    "cadenceChapters": opt(p.cadence_chapters), "deadlineChapterId": opt(p.deadline_chapter_id),
                    "tags": p.tags,
                }),
            )
        }
        NodeDetail::Decision { decision: d } => {
            let mut anchor = json!({"kind": d.anchor.kind});
            if let Some(id) = d.anchor.id {
                anchor["id"] = json!(id);
            }
            if let Some(p) = &d.anchor.path {
                anchor["path"] = json!(p);
            }
            let targets = |v: &[crate::plot::model::RefCheck]| -> Vec<String> {
                v.iter().map(|r| r.target.clone()).collect()
            };
            (
                NodeRef::Decision(d.id),
                d.name.clone(),
                json!({
                    "name": d.name, "title": d.title, "status": d.status, "question": d.question,
                    "options": d.options, "deadlineChapterId": opt(d.deadline_chapter_id),
                    "decision": opt(d.decision.clone()), "motivation": opt(d.motivation.clone()),
                    "rejectedAlternatives": d.rejected_alternatives, "risk": opt(d.risk.clone()),
                    "serves": targets(&d.serves), "dependsOn": targets(&d.depends_on),
                    "supersededById": opt(d.superseded_by_id), "anchor": anchor, "note": opt(d.note.clone()),
                }),
            )
        }
        NodeDetail::Story { .. } => {
            return Err(
                "The story's title and summary come from project.yaml; edit that file.".into(),
            )
        }
        NodeDetail::Phase { .. } => {
            return Err(
                "Phases cannot be edited here (they have no update service); edit their threads."
                    .into(),
            )
        }
    };
    Ok(EditForm {
        label: format!("{} ({label})", node_label(node)),
        node,
        original: obj(fields),
    })
}

/// Keys an edit may add although the form does not show them.
fn extra_keys(node: NodeRef, key: &str) -> bool {
    matches!((node, key), (NodeRef::Decision(_), "chosenOption"))
}

/// Nested objects whose keys are checked too, with the keys they take.
fn nested_keys(key: &str) -> Option<&'static [&'static str]> {
    match key {
        "brief" => Some(&[
            "goal",
            "pov",
            "tone",
            "pacing",
            "readerKnows",
            "protagonistKnows",
            "mustHide",
            "hintOnly",
            "opening",
            "ending",
            "doNotWrite",
        ]),
        "worldAnchor" => Some(&[
            "startTime",
            "endTime",
            "startInstant",
            "endInstant",
            "subjectIds",
            "locationSubjectId",
        ]),
        "anchor" => Some(&["kind", "id", "path"]),
        _ => None,
    }
}

/// Parse the edited text and keep the keys whose value changed. `Ok(None)`: nothing changed.
pub fn changed_args(form: &EditForm, text: &str) -> Result<Option<Value>, String> {
    let edited: Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "Not valid JSON at line {}, column {}: {e}",
            e.line(),
            e.column()
        )
    })?;
    let Value::Object(edited) = edited else {
        return Err("The edit must be one JSON object ({ \"field\": value, … }).".into());
    };
    let mut out = Map::new();
    for (k, v) in &edited {
        if !form.original.contains_key(k) && !extra_keys(form.node, k) {
            let known: Vec<&str> = form.original.keys().map(String::as_str).collect();
            return Err(format!(
                "/{k}: unknown field; {} takes: {}",
                node_label(form.node),
                known.join(", ")
            ));
        }
        if let (Some(allowed), Value::Object(inner)) = (nested_keys(k), v) {
            if let Some(bad) = inner.keys().find(|ik| !allowed.contains(&ik.as_str())) {
                return Err(format!(
                    "/{k}/{bad}: unknown field; {k} takes: {}",
                    allowed.join(", ")
                ));
            }
        }
        if form.original.get(k) != Some(v) {
            out.insert(k.clone(), v.clone());
        }
    }
    Ok((!out.is_empty()).then_some(Value::Object(out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> EditForm {
        EditForm {
            node: NodeRef::Thread(3),
            label: "StoryThread #3 (t)".into(),
            original: obj(json!({"title": "A", "status": "draft", "note": null})),
        }
    }

    #[test]
    fn only_changed_keys_are_sent() {
        let f = form();
        assert_eq!(changed_args(&f, &f.text()).unwrap(), None);
        let v = changed_args(&f, r#"{"title": "B", "status": "draft"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(v, json!({"title": "B"}));
        let e = changed_args(&f, r#"{"titel": "B"}"#).unwrap_err();
        assert!(e.starts_with("/titel: unknown field"), "{e}");
        assert!(changed_args(&f, "[1]").is_err());
        assert!(changed_args(&f, "{").unwrap_err().contains("line 1"));
    }
}
