//! Workflow settings: declarations live in the IR, values per workflow in the project
//! (`nbook_board_workflow_settings`). The value logic of `fn_workflow_settings`
//! (fusion-notes §4 and the Addendum): a patch is checked key by key, **not** fail-fast —
//! every bad key is reported (`no-settings-defined`, `unknown-setting`, `type-mismatch`,
//! `enum-violation`) — and any rejection persists nothing; `null` deletes a stored value and
//! is always accepted, orphaned keys included. Resolution never fails: `stored` is the raw
//! map, `effective` each current declaration's stored value if it still validates else its
//! default (else absent), `orphaned` the stored entries whose declaration is gone or whose
//! value no longer validates.

use serde::Serialize;
use serde_json::{Map, Value};

use super::ir::{SettingDefinition, SettingKind};

/// One rejected key of a patch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rejection {
    pub code: &'static str,
    pub setting_id: String,
    pub message: String,
}

/// A stored value the engine does not see. Choice (the notes say only "stored entries"): each
/// entry carries its value and why it is orphaned — `undeclared` or `invalid` (with the
/// check's message) — so the author can decide whether to clear it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Orphan {
    pub setting_id: String,
    pub value: Value,
    pub reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `{workflowId, stored, effective, orphaned}` — what `get` and `set` both return.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resolved {
    pub workflow_id: String,
    pub stored: Map<String, Value>,
    pub effective: Map<String, Value>,
    pub orphaned: Vec<Orphan>,
}

impl Resolved {
    pub fn u64(&self, id: &str) -> Option<u64> {
        self.effective.get(id).and_then(Value::as_u64)
    }
    pub fn str(&self, id: &str) -> Option<&str> {
        self.effective.get(id).and_then(Value::as_str)
    }
    pub fn bool(&self, id: &str) -> Option<bool> {
        self.effective.get(id).and_then(Value::as_bool)
    }
}

/// Check one value against its declaration: `Err((code, message))`.
pub fn check_value(def: &SettingDefinition, v: &Value) -> Result<(), (&'static str, String)> {
    let mismatch = |what: &str| Err(("type-mismatch", format!("{} expects {what}", def.id)));
    let options = || {
        def.options
            .iter()
            .map(|o| o.value.as_str())
            .collect::<Vec<_>>()
    };
    match def.kind {
        SettingKind::String | SettingKind::Text => {
            if !v.is_string() {
                return mismatch("a string");
            }
        }
        SettingKind::Boolean => {
            if !v.is_boolean() {
                return mismatch("true or false");
            }
        }
        SettingKind::Number => {
            let Some(n) = v.as_f64().filter(|n| n.is_finite()) else {
                return mismatch("a number");
            };
            if def.integer == Some(true) && n.fract() != 0.0 {
                return Err((
                    "type-mismatch",
                    format!("{} expects an integer, got {n}", def.id),
                ));
            }
            if let Some(min) = def.minimum {
                if n < min {
                    return Err((
                        "type-mismatch",
                        format!("{} must be at least {min}, got {n}", def.id),
                    ));
                }
            }
        }
        SettingKind::Enum => {
            let Some(s) = v.as_str() else {
                return mismatch("one of the options as a string");
            };
            if !options().contains(&s) {
                return Err((
                    "enum-violation",
                    format!("'{s}' is not one of: {}", options().join(", ")),
                ));
            }
        }
        SettingKind::MultiEnum => {
            let Some(items) = v.as_array() else {
                return mismatch("a list of options");
            };
            let mut seen: Vec<&str> = Vec::new();
            for item in items {
                let Some(s) = item.as_str() else {
                    return mismatch("a list of option strings");
                };
                if !options().contains(&s) {
                    return Err((
                        "enum-violation",
                        format!("'{s}' is not one of: {}", options().join(", ")),
                    ));
                }
                if seen.contains(&s) {
                    return Err(("enum-violation", format!("'{s}' is listed twice")));
                }
                seen.push(s);
            }
        }
    }
    Ok(())
}

/// Every rejection of `patch` against `decls` (empty: the patch is valid).
pub fn check_patch(decls: &[SettingDefinition], patch: &Map<String, Value>) -> Vec<Rejection> {
    let mut out = Vec::new();
    for (id, v) in patch {
        if v.is_null() {
            continue; // null deletes, always accepted
        }
        if decls.is_empty() {
            out.push(Rejection {
                code: "no-settings-defined",
                setting_id: id.clone(),
                message: "this workflow declares no settings".into(),
            });
            continue;
        }
        let Some(def) = decls.iter().find(|d| &d.id == id) else {
            let known: Vec<&str> = decls.iter().map(|d| d.id.as_str()).collect();
            out.push(Rejection {
                code: "unknown-setting",
                setting_id: id.clone(),
                message: format!("no setting {id}; declared: {}", known.join(", ")),
            });
            continue;
        };
        if let Err((code, message)) = check_value(def, v) {
            out.push(Rejection {
                code,
                setting_id: id.clone(),
                message,
            });
        }
    }
    out
}

/// `stored` after `patch` (nulls delete).
pub fn apply_patch(stored: &Map<String, Value>, patch: &Map<String, Value>) -> Map<String, Value> {
    let mut out = stored.clone();
    for (k, v) in patch {
        if v.is_null() {
            out.remove(k);
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

/// Stored, effective and orphaned values (never fails).
pub fn resolve(
    workflow_id: &str,
    decls: &[SettingDefinition],
    stored: &Map<String, Value>,
) -> Resolved {
    let mut effective = Map::new();
    let mut orphaned = Vec::new();
    for d in decls {
        match stored.get(&d.id) {
            Some(v) if check_value(d, v).is_ok() => {
                effective.insert(d.id.clone(), v.clone());
            }
            other => {
                if let Some(v) = other {
                    orphaned.push(Orphan {
                        setting_id: d.id.clone(),
                        value: v.clone(),
                        reason: "invalid",
                        message: check_value(d, v).err().map(|e| e.1),
                    });
                }
                if let Some(def) = &d.default {
                    effective.insert(d.id.clone(), def.clone());
                }
            }
        }
    }
    for (k, v) in stored {
        if !decls.iter().any(|d| &d.id == k) {
            orphaned.push(Orphan {
                setting_id: k.clone(),
                value: v.clone(),
                reason: "undeclared",
                message: None,
            });
        }
    }
    Resolved {
        workflow_id: workflow_id.to_string(),
        stored: stored.clone(),
        effective,
        orphaned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decls() -> Vec<SettingDefinition> {
        serde_json::from_value(json!([
            {"id": "n", "name": "N", "type": "number", "integer": true, "minimum": 1, "default": 2},
            {"id": "e", "name": "E", "type": "enum", "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}], "default": "a"},
            {"id": "m", "name": "M", "type": "multi-enum", "options": [{"value": "a", "label": "A"}]},
            {"id": "s", "name": "S", "type": "string"}
        ]))
        .unwrap()
    }

    #[test]
    fn a_patch_reports_every_bad_key() {
        let patch = json!({"n": 1.5, "e": "z", "m": ["a", "a"], "x": 1, "s": null})
            .as_object()
            .cloned()
            .unwrap();
        let r = check_patch(&decls(), &patch);
        let mut codes: Vec<(&str, &str)> =
            r.iter().map(|r| (r.setting_id.as_str(), r.code)).collect();
        codes.sort();
        assert_eq!(
            codes,
            vec![
                ("e", "enum-violation"),
                ("m", "enum-violation"),
                ("n", "type-mismatch"),
                ("x", "unknown-setting")
            ]
        );
        let none = check_patch(&[], &json!({"a": 1}).as_object().cloned().unwrap());
        assert_eq!(none[0].code, "no-settings-defined");
    }

    #[test]
    fn effective_fills_defaults_and_drops_orphans() {
        let stored = json!({"n": 0, "gone": true, "e": "b"})
            .as_object()
            .cloned()
            .unwrap();
        let r = resolve("w", &decls(), &stored);
        assert_eq!(json!(r.effective), json!({"n": 2, "e": "b"}));
        let orphans: Vec<(&str, &str)> = r
            .orphaned
            .iter()
            .map(|o| (o.setting_id.as_str(), o.reason))
            .collect();
        assert_eq!(orphans, vec![("n", "invalid"), ("gone", "undeclared")]);
    }
}
