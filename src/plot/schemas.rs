//! JSON Schemas of the plot tools' arguments (the engine validates calls against them before
//! anything runs; errors name the JSON Pointer of the bad field). Field rules that depend on the
//! `action` are checked by the services, which the TUI shares.

use serde_json::{json, Value};

use super::model::*;

pub fn id_prop(description: &str) -> Value {
    json!({"type": ["string", "integer"], "pattern": "^[1-9][0-9]*$", "minimum": 1, "description": description})
}

pub fn project_root_prop() -> Value {
    json!({"type": "string", "minLength": 1, "description": "Optional single-segment folder name of another open project; default: the current project"})
}

fn s(desc: &str) -> Value {
    json!({"type": "string", "minLength": 1, "description": desc})
}

fn ns(desc: &str) -> Value {
    json!({"type": ["string", "null"], "description": desc})
}

fn nid(desc: &str) -> Value {
    json!({"type": ["string", "integer", "null"], "pattern": "^[1-9][0-9]*$", "minimum": 1, "description": desc})
}

fn en(values: &[&str], desc: &str) -> Value {
    json!({"type": "string", "enum": values, "description": desc})
}

fn nen(values: &[&str], desc: &str) -> Value {
    let mut v: Vec<Value> = values.iter().map(|x| json!(x)).collect();
    v.push(Value::Null);
    json!({"enum": v, "description": desc})
}

fn strings(desc: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": desc})
}

fn write_schema(actions: &[&str], props: Value, required: &[&str]) -> Value {
    let mut p = props;
    if let Value::Object(o) = &mut p {
        o.insert("action".into(), en(actions, "What to do"));
        o.insert("projectRoot".into(), project_root_prop());
    }
    let mut req = vec!["action"];
    req.extend_from_slice(required);
    json!({"type": "object", "properties": p, "required": req, "additionalProperties": false})
}

pub fn save_story_act() -> Value {
    write_schema(
        &["create", "update"],
        json!({
            "actId": id_prop("Act id (update)"),
            "name": s("Machine-friendly name, unique in the story (create)"),
            "title": s("Title (create)"),
            "summary": {"type": "string"},
            "note": ns("Note; null clears it"),
            "sortOrder": {"type": "integer", "minimum": 0}
        }),
        &[],
    )
}

pub fn save_story_chapter() -> Value {
    let brief_keys = [
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
    ];
    let brief: serde_json::Map<String, Value> = brief_keys
        .iter()
        .map(|k| (k.to_string(), ns("Free text; null clears it")))
        .collect();
    write_schema(
        &["create", "update"],
        json!({
            "chapterId": id_prop("Chapter id (update)"),
            "actId": nid("Act to place the chapter in; null takes it out of any act"),
            "name": s("Machine-friendly name, unique in the story (create); prose points at it"),
            "title": s("Title (create)"),
            "note": ns("Note; null clears it"),
            "sortOrder": {"type": "integer", "minimum": 0},
            "brief": {"type": "object", "properties": brief, "additionalProperties": false, "description": "The writer's instructions; readerKnows/protagonistKnows/mustHide/hintOnly are the information control"}
        }),
        &[],
    )
}

pub fn save_story_thread() -> Value {
    write_schema(
        &["create", "update", "archive"],
        json!({
            "threadId": id_prop("Thread id (update/archive); default: the selected thread"),
            "storyPhaseId": nid("Phase to group the thread under; null ungroups it"),
            "name": s("Machine-friendly name, unique in the story (create)"),
            "title": s("Title (create)"),
            "isMainThread": {"type": "boolean"},
            "status": en(THREAD_STATUSES, "Default draft"),
            "miceType": nen(MICE_TYPES, "MICE type; null clears it"),
            "summary": {"type": "string"},
            "tags": strings("Tags (replaces the list)"),
            "writingTip": ns("Null clears it"),
            "note": ns("Null clears it")
        }),
        &[],
    )
}

pub fn save_story_scene() -> Value {
    write_schema(
        &["create", "update", "archive"],
        json!({
            "sceneId": id_prop("Scene id (update/archive); default: the selected scene"),
            "threadId": id_prop("Thread (create: default the selected thread; update: moves the scene)"),
            "chapterId": nid("Chapter to place the scene in; null takes it out"),
            "title": s("Title (create)"),
            "status": en(SCENE_STATUSES, "Default draft"),
            "outcomeType": nen(OUTCOME_TYPES, "Outcome of the main actor's attempt; null clears it"),
            "pacingRole": nen(PACING_ROLES, "Null clears it"),
            "summary": {"type": "string"},
            "purpose": ns("Null clears it"),
            "writingTip": ns("Null clears it"),
            "note": ns("Null clears it"),
            "worldAnchor": {
                "type": "object",
                "description": "When and with whom the scene happens (replaces the whole anchor)",
                "properties": {
                    "startTime": {"type": ["string", "null"], "minLength": 1, "description": "Calendar text, e.g. 1911-03-02 06:30 (BC 44-03-15 12:00); null = not set"},
                    "endTime": {"type": ["string", "null"], "minLength": 1, "description": "Calendar text, not before startTime"},
                    "startInstant": {"type": ["string", "integer", "null"], "description": "Ignored on write (derived from startTime)"},
                    "endInstant": {"type": ["string", "integer", "null"], "description": "Ignored on write (derived from endTime)"},
                    "subjectIds": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": MAX_SUBJECTS, "description": "World subjects in the scene (unique, at most 100)"},
                    "locationSubjectId": {"type": ["string", "null"], "minLength": 1}
                },
                "required": ["startTime", "endTime", "startInstant", "endInstant", "subjectIds", "locationSubjectId"],
                "additionalProperties": false
            },
            "refs": {
                "type": "array",
                "description": "References (replaces the list); target = content path, thread://<id or name> or scene://<id>",
                "items": {
                    "type": "object",
                    "properties": {
                        "relation": {"type": "string", "minLength": 1, "description": "e.g. defines, constrains, depends_on, part_of"},
                        "target": {"type": "string", "minLength": 1},
                        "visibility": en(REF_VISIBILITIES, "author or reader"),
                        "note": {"type": ["string", "null"]}
                    },
                    "required": ["relation", "target", "visibility"],
                    "additionalProperties": false
                }
            }
        }),
        &[],
    )
}

pub fn save_story_promise() -> Value {
    write_schema(
        &["create", "update", "abandon", "fulfill"],
        json!({
            "promiseId": id_prop("Promise id (all actions but create)"),
            "name": s("Machine-friendly name, unique in the story (create)"),
            "title": s("Title (create)"),
            "status": en(PROMISE_STATUSES, "Not on create; update with open reopens"),
            "importance": en(IMPORTANCES, "Default medium"),
            "summary": {"type": "string", "description": "What was promised to the reader"},
            "payoffExpectation": ns("The effect the payoff must land (shown to the payoff scene's writer only); null clears it"),
            "cadenceChapters": {"type": ["integer", "null"], "minimum": 1, "description": "Advisory: chapters between beats; null clears it"},
            "deadlineChapterId": nid("Chapter by which it must pay off; null clears it"),
            "tags": strings("Replaces the list; vocabulary setup_payoff, prophecy, motif, mirror")
        }),
        &[],
    )
}

pub fn save_promise_beat() -> Value {
    write_schema(
        &["set", "remove"],
        json!({
            "promiseId": id_prop("The promise"),
            "sceneId": id_prop("The scene; default: the selected scene"),
            "kind": en(BEAT_KINDS, "set: plant (establish), advance, setback, payoff (fulfil)"),
            "note": ns("Instruction for this beat's writer; null clears it"),
            "autoFulfill": {"type": "boolean", "description": "A payoff fulfils the open promise (default true); false for a milestone payoff"}
        }),
        &["promiseId"],
    )
}

pub fn save_story_decision() -> Value {
    write_schema(
        &["create", "update", "decide", "drop"],
        json!({
            "decisionId": id_prop("Decision id (all actions but create)"),
            "name": s("Machine-friendly name, unique in the story (create)"),
            "title": s("Title (create)"),
            "status": en(DECISION_STATUSES, "Not on create; update with open reopens, with superseded (plus supersededById) supersedes"),
            "question": s("The open question (create)"),
            "options": {"type": "array", "items": {"type": "object", "properties": {"option": s("A candidate answer"), "note": {"type": ["string", "null"]}}, "required": ["option"], "additionalProperties": false}},
            "deadlineChapterId": nid("Chapter by which it must be decided; null clears it"),
            "decision": ns("The conclusion (decide)"),
            "motivation": ns("Why (decide)"),
            "rejectedAlternatives": {"type": "array", "items": {"type": "object", "properties": {"option": s("A rejected candidate"), "whyRejected": {"type": ["string", "null"]}}, "required": ["option"], "additionalProperties": false}},
            "risk": ns("What could go wrong and where a writer must stop (decide)"),
            "chosenOption": s("On decide: the option chosen; the others become rejectedAlternatives"),
            "serves": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "promise://id, decision://id, thread://id, scene://id or a content path (replaces the list)"},
            "dependsOn": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "Same forms as serves (replaces the list)"},
            "supersededById": nid("The decision replacing this one; null clears it"),
            "anchor": {"type": "object", "properties": {"kind": en(ANCHOR_KINDS, "story takes nothing; content takes path; the others take id"), "id": id_prop("Record id"), "path": s("Content path, e.g. lorebook/character/ada/")}, "required": ["kind"], "additionalProperties": false},
            "note": ns("Note; on drop, why the question no longer matters")
        }),
        &[],
    )
}
