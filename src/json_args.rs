//! Typed JSON arguments, shared by the engine (tool calls) and the domain services (the plot
//! inputs the TUI builds): deserialize a JSON value into a type with the JSON Pointer of the
//! field that failed, and generate the JSON Schema of a type the way models read it best.

use schemars::gen::SchemaSettings;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A field that could not be read: where (JSON Pointer, "" = the root) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", if pointer.is_empty() { "/" } else { pointer })]
pub struct ArgError {
    pub pointer: String,
    pub message: String,
}

/// Deserialize `args` into `T`; a call without arguments (`null`) reads as `{}`.
pub fn parse<T: DeserializeOwned>(args: &Value) -> Result<T, ArgError> {
    let empty = Value::Object(serde_json::Map::new());
    let args = if args.is_null() { &empty } else { args };
    serde_path_to_error::deserialize(args).map_err(|e| ArgError {
        pointer: pointer_of(e.path()),
        message: e.inner().to_string(),
    })
}

/// A serde path as a JSON Pointer (`/refs/0/target`).
fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => {
                out.push('/');
                out.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    out
}

/// The JSON Schema of `T` as a model sees it: inline (no `$ref`/`definitions`), optional
/// fields without an added `null` (a field that may be null says so in its own type), no
/// `$schema` or `title` at the root, integer bounds written as integers.
pub fn schema_of<T: JsonSchema>() -> Value {
    let gen = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.option_add_null_type = false;
            s.option_nullable = false;
            s.meta_schema = None;
        })
        .into_generator();
    let root = gen.into_root_schema_for::<T>();
    let mut v = serde_json::to_value(&root).unwrap_or(Value::Bool(true));
    if let Value::Object(o) = &mut v {
        o.remove("title");
        // An `Args` type's doc comment is for Rust readers; the tool description says it.
        o.remove("description");
        o.remove("definitions");
        o.remove("$schema");
    }
    tidy(&mut v);
    v
}

/// Drop what schemars adds that tells a model nothing (the `int64`/`uint32` format of
/// integers), write whole-number bounds as integers (`1`, not `1.0`), and write an any-value
/// sub-schema (schemars' `true`, for a `serde_json::Value` field) as `{}`: both mean the same,
/// but llama.cpp's server refuses every request whose tool schemas hold a boolean one
/// ("schema must be an object").
fn tidy(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if let Some(Value::Object(props)) = o.get_mut("properties") {
                props.values_mut().for_each(any_as_object);
            }
            for key in ["items", "anyOf", "oneOf", "allOf"] {
                match o.get_mut(key) {
                    Some(Value::Array(a)) => a.iter_mut().for_each(any_as_object),
                    Some(one) => any_as_object(one),
                    None => {}
                }
            }
            let integer = match o.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
                _ => false,
            };
            let int_format = o
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f.starts_with("int") || f.starts_with("uint"));
            if integer && int_format {
                o.remove("format");
            }
            for key in ["minimum", "maximum"] {
                if let Some(n) = o.get(key).and_then(Value::as_f64) {
                    if n.fract() == 0.0 && n.abs() < 9.0e15 {
                        o.insert(key.into(), Value::from(n as i64));
                    }
                }
            }
            o.values_mut().for_each(tidy);
        }
        Value::Array(a) => a.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// `true` (any value) as the equivalent `{}`.
fn any_as_object(v: &mut Value) {
    if *v == Value::Bool(true) {
        *v = Value::Object(serde_json::Map::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[allow(dead_code)]
    #[derive(schemars::JsonSchema)]
    struct AnyValues {
        data: Option<Value>,
        list: Vec<Value>,
        strict: bool,
    }

    /// Every place a schema (not a boolean flag) is expected holds an object.
    fn boolean_subschemas(v: &Value, at: &str, out: &mut Vec<String>) {
        let Value::Object(o) = v else { return };
        if let Some(Value::Object(props)) = o.get("properties") {
            for (k, p) in props {
                if p.is_boolean() {
                    out.push(format!("{at}/properties/{k}"));
                }
                boolean_subschemas(p, &format!("{at}/properties/{k}"), out);
            }
        }
        for key in ["items", "anyOf", "oneOf", "allOf"] {
            match o.get(key) {
                Some(Value::Array(a)) => {
                    for (i, s) in a.iter().enumerate() {
                        if s.is_boolean() {
                            out.push(format!("{at}/{key}/{i}"));
                        }
                        boolean_subschemas(s, &format!("{at}/{key}/{i}"), out);
                    }
                }
                Some(s) => {
                    if s.is_boolean() {
                        out.push(format!("{at}/{key}"));
                    }
                    boolean_subschemas(s, &format!("{at}/{key}"), out);
                }
                None => {}
            }
        }
    }

    #[test]
    fn an_any_value_field_is_an_empty_object_schema_not_true() {
        let s = schema_of::<AnyValues>();
        assert_eq!(s["properties"]["data"], json!({}));
        assert_eq!(s["properties"]["list"]["items"], json!({}));
        assert_eq!(s["properties"]["strict"]["type"], "boolean");
        assert_eq!(s["required"], json!(["list", "strict"]));
    }

    #[test]
    fn no_built_in_tool_schema_holds_a_boolean_sub_schema() {
        let registry = crate::tools::registry().expect("the built-in tools register");
        let mut found = Vec::new();
        for t in registry.iter() {
            boolean_subschemas(&t.schema, t.tool.name(), &mut found);
        }
        assert!(found.is_empty(), "boolean sub-schemas: {found:?}");
    }
}
