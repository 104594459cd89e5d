//! `plot.selection`: the thread and scene a session is working on, kept in the session's
//! custom state as `{projectRoot, threadId, sceneId, updatedAt}` (ids as strings, as in
//! NeuroBook). Thread and scene ids default to it when a call omits them; a selection made in
//! another project is refused rather than applied to the wrong book.
//!
//! Who sets it: `get_story_thread` and `save_story_thread` select the thread and clear the
//! scene; `get_story_scene_context` and `save_story_scene` select the scene and its thread;
//! `get_scene_world_context` selects the scene.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::error::{PlotError, PlotResult};
use super::input::Field;

pub const SELECTION_KEY: &str = "plot.selection";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    pub project_root: Option<String>,
    pub thread_id: Option<String>,
    pub scene_id: Option<String>,
}

impl Selection {
    pub fn from_state(state: &BTreeMap<String, Value>) -> Selection {
        let Some(Value::Object(o)) = state.get(SELECTION_KEY) else {
            return Selection::default();
        };
        let s = |k: &str| match o.get(k) {
            Some(Value::String(v)) if !v.is_empty() => Some(v.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        Selection {
            project_root: s("projectRoot"),
            thread_id: s("threadId"),
            scene_id: s("sceneId"),
        }
    }

    fn selected(&self, project: &str, key: &str, what: &str) -> PlotResult<i64> {
        let ptr = format!("/{key}");
        let value = match key {
            "threadId" => &self.thread_id,
            _ => &self.scene_id,
        };
        let Some(v) = value else {
            return Err(PlotError::invalid(
                &ptr,
                format!("no {key} given and no {what} is selected in this session; pass {key}, or read or create a {what} first (get_story_tree lists them)"),
            ));
        };
        if let Some(p) = self.project_root.as_deref().filter(|p| *p != project) {
            return Err(PlotError::invalid(
                &ptr,
                format!("the selected {what} belongs to project {p}, not {project}; pass {key} explicitly for a call on another project"),
            ));
        }
        v.parse::<i64>().ok().filter(|i| *i > 0).ok_or_else(|| {
            PlotError::invalid(
                &ptr,
                format!("the selected {what} id '{v}' is not valid; pass {key} explicitly"),
            )
        })
    }
}

/// The thread id to use: the explicit one, else the session's selection.
pub fn resolve_thread_id(
    state: &BTreeMap<String, Value>,
    project: &str,
    explicit: Option<i64>,
) -> PlotResult<i64> {
    match explicit {
        Some(id) => Ok(id),
        None => Selection::from_state(state).selected(project, "threadId", "thread"),
    }
}

/// The scene id to use: the explicit one, else the session's selection.
pub fn resolve_scene_id(
    state: &BTreeMap<String, Value>,
    project: &str,
    explicit: Option<i64>,
) -> PlotResult<i64> {
    match explicit {
        Some(id) => Ok(id),
        None => Selection::from_state(state).selected(project, "sceneId", "scene"),
    }
}

/// The new `plot.selection` value (for `ToolOutput::state_updates`): the current one with
/// the thread and scene changed as given (`Keep`, `Clear` or `Set`).
pub fn selection_update(
    state: &BTreeMap<String, Value>,
    project: &str,
    thread: Field<i64>,
    scene: Field<i64>,
) -> (String, Value) {
    let mut o = match state.get(SELECTION_KEY) {
        Some(Value::Object(o)) => o.clone(),
        _ => Map::new(),
    };
    // A selection from another project does not carry over.
    if o.get("projectRoot")
        .and_then(Value::as_str)
        .is_some_and(|p| p != project)
    {
        o = Map::new();
    }
    for (key, f) in [("threadId", thread), ("sceneId", scene)] {
        match f {
            Field::Keep => {}
            Field::Clear => {
                o.remove(key);
            }
            Field::Set(id) => {
                o.insert(key.into(), json!(id.to_string()));
            }
        }
    }
    o.insert("projectRoot".into(), json!(project));
    o.insert("updatedAt".into(), json!(super::time::now_iso()));
    (SELECTION_KEY.to_string(), Value::Object(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_errors_and_updates() {
        let mut state = BTreeMap::new();
        assert!(resolve_thread_id(&state, "book", None)
            .unwrap_err()
            .to_string()
            .contains("/threadId"));
        assert_eq!(resolve_thread_id(&state, "book", Some(4)), Ok(4));
        let (k, v) = selection_update(&state, "book", Field::Set(3), Field::Set(9));
        state.insert(k, v);
        assert_eq!(resolve_thread_id(&state, "book", None), Ok(3));
        assert_eq!(resolve_scene_id(&state, "book", None), Ok(9));
        let err = resolve_scene_id(&state, "other", None).unwrap_err();
        assert!(err.message.contains("belongs to project book"), "{err}");
        let (k, v) = selection_update(&state, "book", Field::Set(5), Field::Clear);
        state.insert(k, v);
        assert_eq!(resolve_thread_id(&state, "book", None), Ok(5));
        assert!(resolve_scene_id(&state, "book", None).is_err());
    }
}
