//! Type checks of written values against the schema (write time only; reads accept what is
//! stored, as NeuroBook does).

use serde_json::Value;

use super::{ref_target, valid_id, Attr, Kind, Node, Op};

/// Why a value may not be written where it was to go; each says what to write instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// A fixed rule of the operation or kind (the text says what to write instead).
    #[error("{0}")]
    Rule(&'static str),
    #[error("increment needs a finite number, not {0}")]
    NotFinite(String),
    #[error("this is an int attribute: increment by a whole number, not {0}")]
    FractionalIncrement(f64),
    /// The value (`got`, shortened) is not of the attribute's kind (`want`).
    #[error("expected {want}, got {got}")]
    Expected { want: String, got: String },
    #[error("a collection holds each value once; {0} appears twice")]
    Duplicate(String),
    /// A field of an object value is wrong.
    #[error("{field}: {source}")]
    InField {
        field: String,
        #[source]
        source: Box<ValueError>,
    },
    #[error("an embedding-text list takes items {{text: \"…\"}}, not {0}")]
    NotListItem(String),
    #[error("do not write `{0}`: nbook computes the embedding of each item itself; append {{text}} only")]
    Computed(String),
    #[error("unknown field {0:?}: an embedding-text list item is {{text}} only")]
    UnknownItemField(String),
}

fn expected(want: impl Into<String>, v: &Value) -> ValueError {
    ValueError::Expected {
        want: want.into(),
        got: short(v),
    }
}

/// Whether `value` may be written at `node` with `op`. Messages say what to write instead.
pub fn check_value(node: &Node<'_>, op: Op, value: Option<&Value>) -> Result<(), ValueError> {
    match op {
        Op::Increment => {
            let v = value.ok_or(ValueError::Rule("increment needs a numeric value"))?;
            let n = v.as_f64().filter(|f| f.is_finite()).ok_or_else(|| ValueError::NotFinite(short(v)))?;
            if matches!(node, Node::Typed(Attr { kind: Kind::Int, .. })) && !(v.is_i64() || v.is_u64() || n.fract() == 0.0) {
                return Err(ValueError::FractionalIncrement(n));
            }
            Ok(())
        }
        Op::Remove => match value {
            None => Ok(()),
            Some(v) => match node {
                Node::Typed(Attr { kind: Kind::List { unique: true, items }, .. }) => match items {
                    Some(i) => check_value(&Node::Typed(i), Op::Replace, Some(v)),
                    None => Ok(()),
                },
                _ => Err(ValueError::Rule("remove with a value works only on a unique collection; remove by index (/list/3) or without a value")),
            },
        },
        Op::Append => {
            let v = value.ok_or(ValueError::Rule("append needs a value"))?;
            match node {
                Node::Typed(Attr { kind: Kind::List { items: Some(i), .. }, .. }) => check_value(&Node::Typed(i), Op::Replace, Some(v)),
                Node::Typed(Attr { kind: Kind::Embedding { record: false }, .. }) => check_list_text(v),
                _ => Ok(()),
            }
        }
        Op::Replace => {
            let v = value.ok_or(ValueError::Rule("replace needs a value"))?;
            match node {
                Node::Root if !v.is_object() => Err(ValueError::Rule("replacing the whole subject (path \"/\") needs an object")),
                Node::EmbeddingItem => check_embedding_item(v),
                Node::Typed(a) if !v.is_null() => check_typed(a, v),
                _ => Ok(()),
            }
        }
    }
}

fn check_typed(a: &Attr, v: &Value) -> Result<(), ValueError> {
    let want = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(expected(what, v))
        }
    };
    match &a.kind {
        Kind::Int => want(
            v.is_i64()
                || v.is_u64()
                || v.as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.is_finite()),
            "a whole number",
        ),
        Kind::Float => want(v.is_number(), "a number"),
        Kind::String => want(v.is_string(), "text"),
        Kind::Bool => want(v.is_boolean(), "true or false"),
        Kind::Ref(to) => match v.as_str().and_then(ref_target) {
            Some(id) if valid_id(id) && !id.contains('/') => Ok(()),
            _ => Err(expected(
                format!("a reference \"subject://<id>\" to a {to}"),
                v,
            )),
        },
        Kind::List { items, unique } => {
            let arr = v.as_array().ok_or_else(|| expected("a list", v))?;
            if *unique {
                for (i, x) in arr.iter().enumerate() {
                    if arr[..i].contains(x) {
                        return Err(ValueError::Duplicate(short(x)));
                    }
                }
            }
            match items {
                Some(i) => arr
                    .iter()
                    .try_for_each(|x| check_value(&Node::Typed(i), Op::Replace, Some(x))),
                None => Ok(()),
            }
        }
        Kind::Object { fields, values } => {
            let obj = v.as_object().ok_or_else(|| expected("an object", v))?;
            for (k, x) in obj {
                if let Some(spec) = fields.get(k).or(values.as_deref()) {
                    check_value(&Node::Typed(spec), Op::Replace, Some(x)).map_err(|e| {
                        ValueError::InField {
                            field: k.clone(),
                            source: Box::new(e),
                        }
                    })?;
                }
            }
            Ok(())
        }
        Kind::Embedding { record } => {
            let empty = if *record {
                v.as_object().is_some_and(|o| o.is_empty())
            } else {
                v.as_array().is_some_and(|a| a.is_empty())
            };
            if empty {
                Ok(())
            } else if *record {
                Err(ValueError::Rule("an embedding record can only be replaced as a whole by {} (E5); write one entry with replace at /<attr>/<key>"))
            } else {
                Err(ValueError::Rule("an embedding list can only be replaced as a whole by [] (E5); add items with append"))
            }
        }
    }
}

fn check_embedding_item(v: &Value) -> Result<(), ValueError> {
    let o = v.as_object().ok_or(ValueError::Rule(
        "an EmbeddingText item is an object {text, vector?, model?}",
    ))?;
    if !o.get("text").is_some_and(Value::is_string) {
        return Err(ValueError::Rule(
            "an EmbeddingText item needs a string `text`",
        ));
    }
    if let Some(vec) = o.get("vector") {
        if !vec
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_number))
        {
            return Err(ValueError::Rule("`vector` must be a list of numbers"));
        }
    }
    if o.get("model").is_some_and(|m| !m.is_string()) {
        return Err(ValueError::Rule("`model` must be text"));
    }
    Ok(())
}

/// An item appended to an embedding-text list: exactly `{text}` with non-empty text. nbook
/// computes the vector itself, so a hand-written `vector` (or any other field) is refused.
fn check_list_text(v: &Value) -> Result<(), ValueError> {
    let o = v
        .as_object()
        .ok_or_else(|| ValueError::NotListItem(short(v)))?;
    if let Some(k) = o.keys().find(|k| k.as_str() != "text") {
        return Err(if k == "vector" || k == "model" {
            ValueError::Computed(k.clone())
        } else {
            ValueError::UnknownItemField(k.clone())
        });
    }
    match o.get("text") {
        Some(Value::String(t)) if !t.trim().is_empty() => Ok(()),
        Some(Value::String(_)) => Err(ValueError::Rule(
            "the item's `text` is empty; write what happened",
        )),
        _ => Err(ValueError::Rule(
            "an embedding-text list item needs a string `text`",
        )),
    }
}

pub fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}
