//! Type checks of written values against the schema (write time only; reads accept what is
//! stored, as NeuroBook does).

use serde_json::Value;

use super::{ref_target, valid_id, Attr, Kind, Node, Op};

/// Whether `value` may be written at `node` with `op`. Messages say what to write instead.
pub fn check_value(node: &Node<'_>, op: Op, value: Option<&Value>) -> Result<(), String> {
    match op {
        Op::Increment => {
            let v = value.ok_or("increment needs a numeric value")?;
            let n = v.as_f64().filter(|f| f.is_finite()).ok_or_else(|| {
                format!("increment needs a finite number, not {}", short(v))
            })?;
            if matches!(node, Node::Typed(Attr { kind: Kind::Int, .. })) && !(v.is_i64() || v.is_u64() || n.fract() == 0.0) {
                return Err(format!("this is an int attribute: increment by a whole number, not {n}"));
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
                _ => Err("remove with a value works only on a unique collection; remove by index (/list/3) or without a value".into()),
            },
        },
        Op::Append => {
            let v = value.ok_or("append needs a value")?;
            match node {
                Node::Typed(Attr { kind: Kind::List { items: Some(i), .. }, .. }) => check_value(&Node::Typed(i), Op::Replace, Some(v)),
                Node::Typed(Attr { kind: Kind::Embedding { record: false }, .. }) => check_list_text(v),
                _ => Ok(()),
            }
        }
        Op::Replace => {
            let v = value.ok_or("replace needs a value")?;
            match node {
                Node::Root if !v.is_object() => Err("replacing the whole subject (path \"/\") needs an object".into()),
                Node::EmbeddingItem => check_embedding_item(v),
                Node::Typed(a) if !v.is_null() => check_typed(a, v),
                _ => Ok(()),
            }
        }
    }
}

fn check_typed(a: &Attr, v: &Value) -> Result<(), String> {
    let want = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("expected {what}, got {}", short(v)))
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
            _ => Err(format!(
                "expected a reference \"subject://<id>\" to a {to}, got {}",
                short(v)
            )),
        },
        Kind::List { items, unique } => {
            let arr = v
                .as_array()
                .ok_or_else(|| format!("expected a list, got {}", short(v)))?;
            if *unique {
                for (i, x) in arr.iter().enumerate() {
                    if arr[..i].contains(x) {
                        return Err(format!(
                            "a collection holds each value once; {} appears twice",
                            short(x)
                        ));
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
            let obj = v
                .as_object()
                .ok_or_else(|| format!("expected an object, got {}", short(v)))?;
            for (k, x) in obj {
                if let Some(spec) = fields.get(k).or(values.as_deref()) {
                    check_value(&Node::Typed(spec), Op::Replace, Some(x))
                        .map_err(|e| format!("{k}: {e}"))?;
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
                Err("an embedding record can only be replaced as a whole by {} (E5); write one entry with replace at /<attr>/<key>".into())
            } else {
                Err("an embedding list can only be replaced as a whole by [] (E5); add items with append".into())
            }
        }
    }
}

fn check_embedding_item(v: &Value) -> Result<(), String> {
    let o = v
        .as_object()
        .ok_or("an EmbeddingText item is an object {text, vector?, model?}")?;
    if !o.get("text").is_some_and(Value::is_string) {
        return Err("an EmbeddingText item needs a string `text`".into());
    }
    if let Some(vec) = o.get("vector") {
        if !vec
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_number))
        {
            return Err("`vector` must be a list of numbers".into());
        }
    }
    if o.get("model").is_some_and(|m| !m.is_string()) {
        return Err("`model` must be text".into());
    }
    Ok(())
}

/// An item appended to an embedding-text list: exactly `{text}` with non-empty text. nbook
/// computes the vector itself, so a hand-written `vector` (or any other field) is refused.
fn check_list_text(v: &Value) -> Result<(), String> {
    let o = v.as_object().ok_or_else(|| {
        format!(
            "an embedding-text list takes items {{text: \"…\"}}, not {}",
            short(v)
        )
    })?;
    if let Some(k) = o.keys().find(|k| k.as_str() != "text") {
        return Err(if k == "vector" || k == "model" {
            format!("do not write `{k}`: nbook computes the embedding of each item itself; append {{text}} only")
        } else {
            format!("unknown field {k:?}: an embedding-text list item is {{text}} only")
        });
    }
    match o.get("text") {
        Some(Value::String(t)) if !t.trim().is_empty() => Ok(()),
        Some(Value::String(_)) => Err("the item's `text` is empty; write what happened".into()),
        _ => Err("an embedding-text list item needs a string `text`".into()),
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
