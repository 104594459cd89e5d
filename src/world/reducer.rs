//! Applying patches: the state of a subject at T is its patches with instant ≤ T applied to
//! `{}` in (instant, seq) order. A patch that cannot apply is skipped and becomes an issue
//! (E1, E3, E4, E5); references are checked afterwards (E2).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::issues::{Code, Issue, Origin};
use super::pointer;
use super::schema::{ref_target, Attr, Kind, Node, Op, Schema};

/// One `WorldPatch` row.
#[derive(Clone, Debug, PartialEq)]
pub struct PatchRow {
    pub rowid: i64,
    pub id: String,
    pub slice_id: String,
    pub subject_id: String,
    pub instant: i64,
    pub seq: i64,
    pub path: String,
    pub op: String,
    /// The JSON text of the value (NULL = no value).
    pub value: Option<String>,
    pub summary: Option<String>,
}

/// Which patch last set a top-level attribute (to locate E2 issues).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Writer {
    pub slice: String,
    pub patch: String,
    pub instant: i64,
}

/// A subject's state plus the persistent issues its patches raised so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reduced {
    pub state: Map<String, Value>,
    pub issues: Vec<Issue>,
    pub origins: BTreeMap<String, Writer>,
}

impl Reduced {
    /// Apply one patch; a failure is recorded as an issue and the state is left as it was.
    pub fn apply(&mut self, schema: &Schema, type_name: &str, p: &PatchRow) {
        let value = match p.value.as_deref().map(serde_json::from_str::<Value>) {
            None => None,
            Some(Ok(v)) => Some(v),
            Some(Err(_)) => {
                self.issues
                    .push(issue(Code::E3, p, "its value is not valid JSON".into()));
                return;
            }
        };
        match apply_value(
            &mut self.state,
            schema,
            type_name,
            &p.path,
            &p.op,
            value.as_ref(),
        ) {
            Ok(()) => {
                let writer = Writer {
                    slice: p.slice_id.clone(),
                    patch: p.id.clone(),
                    instant: p.instant,
                };
                match pointer::parse(&p.path)
                    .ok()
                    .and_then(|t| t.into_iter().next())
                {
                    Some(attr) => {
                        self.origins.insert(attr, writer);
                    }
                    None => {
                        let keys: Vec<String> = self.state.keys().cloned().collect();
                        self.origins = keys.into_iter().map(|k| (k, writer.clone())).collect();
                    }
                }
            }
            Err((code, why)) => self.issues.push(issue(code, p, why)),
        }
    }
}

fn issue(code: Code, p: &PatchRow, why: String) -> Issue {
    let msg = format!("{} {} on {}: {why}", p.op, p.path, p.subject_id);
    Issue::new(
        code,
        &Origin {
            slice_id: Some(&p.slice_id),
            patch_id: Some(&p.id),
            subject_id: &p.subject_id,
            path: Some(&p.path),
            op: Some(&p.op),
            instant: Some(p.instant),
        },
        msg,
    )
}

type Fail = (Code, String);

/// Apply `op` at `path` with `value` to `state`, per the schema's rules for `type_name`.
pub fn apply_value(
    state: &mut Map<String, Value>,
    schema: &Schema,
    type_name: &str,
    path: &str,
    op: &str,
    value: Option<&Value>,
) -> Result<(), Fail> {
    let tokens = pointer::parse(path).map_err(|e| (Code::E3, e.to_string()))?;
    let op = Op::parse(op).ok_or_else(|| {
        (
            Code::E3,
            format!("unknown op {op:?} (replace, increment, append, remove)"),
        )
    })?;
    let node = schema.node(type_name, &tokens);
    match &node {
        Node::ThroughRef(at) => {
            return Err((
                Code::E4,
                format!("{at} is a reference; the path cannot go inside it"),
            ))
        }
        Node::ThroughScalar(at) => {
            return Err((
                Code::E3,
                format!("{at} is a scalar attribute; the path cannot go inside it"),
            ))
        }
        _ => {}
    }
    if op == Op::Replace {
        if let (
            Node::Typed(Attr {
                kind: Kind::Embedding { record },
                ..
            }),
            Some(v),
        ) = (&node, value)
        {
            let empty = if *record {
                v.as_object().is_some_and(|o| o.is_empty())
            } else {
                v.as_array().is_some_and(|a| a.is_empty())
            };
            if !empty {
                return Err((
                    Code::E5,
                    "an embedding container may only be replaced by an empty one".into(),
                ));
            }
        }
    }
    if !node.allows(op) {
        return Err((
            Code::E3,
            format!("{} is not allowed on {}", op.as_str(), node.label()),
        ));
    }
    if op != Op::Remove && value.is_none() {
        return Err((Code::E3, format!("{} needs a value", op.as_str())));
    }
    let unique = matches!(
        node,
        Node::Typed(Attr {
            kind: Kind::List { unique: true, .. },
            ..
        })
    );
    let Some((last, parents)) = tokens.split_last() else {
        // Root replace: the value must be an object.
        return match value {
            Some(Value::Object(o)) => {
                *state = o.clone();
                Ok(())
            }
            _ => Err((
                Code::E3,
                "replacing the whole subject needs an object".into(),
            )),
        };
    };
    // Walk to the parent container. A replace creates missing objects on the way (NeuroBook:
    // `/stats/str` on a subject without `stats` makes `{stats: {str: …}}`), never through a
    // scalar (E3), a reference (E4) or past the end of a list (E3).
    let Some(first) = parents.first() else {
        return apply_in_object(state, last, op, value, unique);
    };
    if op == Op::Replace && !state.contains_key(first) {
        state.insert(first.clone(), Value::Object(Map::new()));
    }
    let mut cur: &mut Value = match state.get_mut(first) {
        Some(v) => v,
        None => return missing_parent(op, &pointer::join(&parents[..1])),
    };
    for (i, tok) in parents.iter().enumerate().skip(1) {
        let here = pointer::join(&parents[..i]);
        cur = match cur {
            Value::Object(o) => {
                if op == Op::Replace && !o.contains_key(tok) {
                    o.insert(tok.clone(), Value::Object(Map::new()));
                }
                match o.get_mut(tok) {
                    Some(v) => v,
                    None => return missing_parent(op, &pointer::join(&parents[..=i])),
                }
            }
            Value::Array(a) => {
                let len = a.len();
                match pointer::index(tok, len).filter(|i| *i < len) {
                    Some(ix) => &mut a[ix],
                    None => return missing_parent(op, &pointer::join(&parents[..=i])),
                }
            }
            Value::String(s) if ref_target(s).is_some() => {
                return Err((
                    Code::E4,
                    format!("{here} holds the reference {s}; the path cannot go inside it"),
                ))
            }
            _ => return Err((Code::E3, format!("{here} is not an object or a list"))),
        };
    }
    let parent_path = pointer::join(parents);
    match cur {
        Value::Object(o) => apply_in_object(o, last, op, value, unique),
        Value::Array(a) => apply_in_array(a, last, op, value, unique, &parent_path),
        Value::String(s) if ref_target(s).is_some() => Err((
            Code::E4,
            format!("{parent_path} holds the reference {s}; the path cannot go inside it"),
        )),
        _ => Err((
            Code::E3,
            format!("{parent_path} is not an object or a list"),
        )),
    }
}

fn missing_parent(op: Op, at: &str) -> Result<(), Fail> {
    match op {
        // Removing from something that is not there is a no-op (remove is idempotent).
        Op::Remove => Ok(()),
        Op::Increment | Op::Append => Err((Code::E1, format!("{at} does not exist at this point"))),
        Op::Replace => Err((
            Code::E3,
            format!("{at} is past the end of its list at this point"),
        )),
    }
}

fn apply_in_object(
    o: &mut Map<String, Value>,
    key: &str,
    op: Op,
    value: Option<&Value>,
    unique: bool,
) -> Result<(), Fail> {
    match op {
        Op::Replace => {
            o.insert(key.to_string(), replaced(value, unique));
            Ok(())
        }
        Op::Remove if value.is_none() => {
            o.remove(key);
            Ok(())
        }
        _ => relative(o.get_mut(key), op, value, unique),
    }
}

fn apply_in_array(
    a: &mut Vec<Value>,
    tok: &str,
    op: Op,
    value: Option<&Value>,
    unique: bool,
    at: &str,
) -> Result<(), Fail> {
    let len = a.len();
    let ix = pointer::index(tok, len);
    match op {
        Op::Replace => match ix {
            Some(i) if i < len => {
                a[i] = replaced(value, unique);
                Ok(())
            }
            Some(i) if i == len => {
                a.push(replaced(value, unique));
                Ok(())
            }
            _ => Err((
                Code::E3,
                format!("index {tok:?} is out of range for {at} (length {len})"),
            )),
        },
        Op::Remove if value.is_none() => {
            if let Some(i) = ix.filter(|i| *i < len) {
                a.remove(i);
            }
            Ok(())
        }
        _ => relative(
            ix.filter(|i| *i < len).map(|i| &mut a[i]),
            op,
            value,
            unique,
        ),
    }
}

fn replaced(value: Option<&Value>, unique: bool) -> Value {
    let v = value.cloned().unwrap_or(Value::Null);
    match v {
        Value::Array(items) if unique => {
            let mut out: Vec<Value> = Vec::with_capacity(items.len());
            for x in items {
                if !out.contains(&x) {
                    out.push(x);
                }
            }
            Value::Array(out)
        }
        other => other,
    }
}

fn relative(
    target: Option<&mut Value>,
    op: Op,
    value: Option<&Value>,
    unique: bool,
) -> Result<(), Fail> {
    let v = value.cloned().unwrap_or(Value::Null);
    match op {
        Op::Increment => {
            let Some(t) = target else {
                return Err((Code::E1, "there is no number to increment".into()));
            };
            *t = add(t, &v)?;
            Ok(())
        }
        Op::Append => match target {
            Some(Value::Array(a)) => {
                if !(unique && a.contains(&v)) {
                    a.push(v);
                }
                Ok(())
            }
            Some(other) => Err((
                Code::E1,
                format!("the value there is {}, not a list", type_word(other)),
            )),
            None => Err((Code::E1, "there is no list to append to".into())),
        },
        // Remove by value: drop every equal element.
        _ => match target {
            Some(Value::Array(a)) => {
                a.retain(|x| x != &v);
                Ok(())
            }
            Some(other) => Err((
                Code::E1,
                format!("the value there is {}, not a list", type_word(other)),
            )),
            None => Ok(()),
        },
    }
}

fn add(base: &Value, by: &Value) -> Result<Value, Fail> {
    if !base.is_number() {
        return Err((
            Code::E1,
            format!("the value there is {}, not a number", type_word(base)),
        ));
    }
    if let (Some(a), Some(b)) = (base.as_i64(), by.as_i64()) {
        return a
            .checked_add(b)
            .map(Value::from)
            .ok_or_else(|| (Code::E1, "the sum overflows a 64-bit integer".into()));
    }
    let (a, b) = (
        base.as_f64().unwrap_or(f64::NAN),
        by.as_f64().unwrap_or(f64::NAN),
    );
    serde_json::Number::from_f64(a + b)
        .map(Value::Number)
        .ok_or_else(|| (Code::E1, "the increment is not a finite number".into()))
}

fn type_word(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// E2: every `subject://` value must name an existing subject, and typed references a subject
/// of the declared type. `type_of` looks a subject's type up (None = missing).
pub fn check_refs(
    red: &Reduced,
    schema: &Schema,
    subject_id: &str,
    type_name: &str,
    type_of: &mut dyn FnMut(&str) -> Option<String>,
) -> Vec<Issue> {
    let mut out = Vec::new();
    for (attr, v) in &red.state {
        let mut path = vec![attr.clone()];
        walk(v, &mut path, &mut |tokens, s| {
            let Some(id) = ref_target(s) else { return };
            let expected = match schema.node(type_name, tokens) {
                Node::Typed(Attr {
                    kind: Kind::Ref(to),
                    ..
                }) => Some(to.clone()),
                _ => None,
            };
            let problem = match (type_of(id), expected) {
                (None, _) => format!("it refers to {s}, which does not exist"),
                (Some(actual), Some(to)) if actual != to => {
                    format!("it refers to {s}, which is a {actual}, not a {to}")
                }
                _ => return,
            };
            let path = pointer::join(tokens);
            let w = red.origins.get(attr);
            out.push(Issue::new(
                Code::E2,
                &Origin {
                    slice_id: w.map(|w| w.slice.as_str()),
                    patch_id: w.map(|w| w.patch.as_str()),
                    subject_id,
                    path: Some(&path),
                    op: None,
                    instant: w.map(|w| w.instant),
                },
                format!("{path} on {subject_id}: {problem}"),
            ));
        });
    }
    out
}

fn walk(v: &Value, path: &mut Vec<String>, f: &mut dyn FnMut(&[String], &str)) {
    match v {
        Value::String(s) => f(path, s),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                walk(x, path, f);
                path.pop();
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                path.push(k.clone());
                walk(x, path, f);
                path.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
