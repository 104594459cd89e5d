//! Applying the memory curator's RFC 6902 JSON Patch (add, remove, replace, move, copy, test)
//! to the memory list, with the `json-patch` crate, then re-checking the list's invariants.
//! The input is never modified: the patch runs on a copy and the result is returned only if
//! every operation applied and the list is still valid.

use serde_json::Value;

/// Apply `patch` (the curator's `data.patch`) to `items`. The error says which operation
/// failed and why, in words the curator can act on.
pub fn apply(items: &[Value], patch: &Value) -> Result<Vec<Value>, String> {
    if !patch.is_array() {
        return Err(format!(
            "`patch` must be an array of RFC 6902 operations, got {}",
            kind(patch)
        ));
    }
    let ops: json_patch::Patch = serde_json::from_value(patch.clone())
        .map_err(|e| format!("`patch` is not a valid RFC 6902 patch: {e}"))?;
    let mut doc = Value::Array(items.to_vec());
    json_patch::patch(&mut doc, &ops).map_err(|e| {
        format!("{e} (paths index into currentMemories as given, e.g. /0/view; /- appends)")
    })?;
    // The curator reads this text in its retry message.
    super::memory::validate(&doc).map_err(|e| e.to_string())?;
    match doc {
        Value::Array(list) => Ok(list),
        other => Err(format!(
            "the patched document is {}, not an array of memories",
            kind(&other)
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mem() -> Vec<Value> {
        vec![
            json!({"topic": "mother", "view": "Drowned when Ada was nine."}),
            json!({"topic": "lamp", "aliases": ["the light"], "view": "Must be lit at dusk."}),
        ]
    }

    #[test]
    fn every_operation_applies() {
        let out = apply(
            &mem(),
            &json!([
                {"op": "test", "path": "/0/topic", "value": "mother"},
                {"op": "replace", "path": "/0/view", "value": "Drowned; her book survived."},
                {"op": "add", "path": "/-", "value": {"topic": "book", "view": "Hidden in the oil store."}},
                {"op": "copy", "from": "/1/aliases", "path": "/2/aliases"},
                {"op": "move", "from": "/2", "path": "/0"},
                {"op": "remove", "path": "/2"}
            ]),
        )
        .unwrap();
        let topics: Vec<&str> = out.iter().map(|m| m["topic"].as_str().unwrap()).collect();
        assert_eq!(topics, vec!["book", "mother"]);
        assert_eq!(out[0]["aliases"], json!(["the light"]));
        assert_eq!(apply(&mem(), &json!([])).unwrap(), mem());
    }

    #[test]
    fn failures_name_the_operation_and_leave_the_input() {
        let items = mem();
        let e = apply(
            &items,
            &json!([{"op": "replace", "path": "/7/view", "value": "x"}]),
        )
        .unwrap_err();
        assert!(e.contains("operation '/0'") && e.contains("/7/view"), "{e}");
        let e = apply(
            &items,
            &json!([{"op": "test", "path": "/0/topic", "value": "no"}]),
        )
        .unwrap_err();
        assert!(e.contains("did not match"), "{e}");
        let e = apply(&items, &json!([{"op": "frob", "path": "/0"}])).unwrap_err();
        assert!(e.contains("not a valid RFC 6902"), "{e}");
        let e = apply(
            &items,
            &json!([{"op": "add", "path": "/-", "value": {"topic": "lamp", "view": "dup"}}]),
        )
        .unwrap_err();
        assert!(e.contains("memory /2 repeats the topic"), "{e}");
        let e = apply(&items, &json!([{"op": "replace", "path": "", "value": {}}])).unwrap_err();
        assert!(e.contains("no longer an array"), "{e}");
        assert!(apply(&items, &json!({"op": "add"})).is_err());
        assert_eq!(items, mem());
    }
}
