//! How plot values read from JSON arguments, each in one place: the three-state [`Field`]
//! (absent = keep, `null` = clear, a value = set), ids ([`PlotId`], `"12"` or `12`) and the
//! closed vocabularies ([`OneOf`], e.g. thread statuses). Each type's `Deserialize` and
//! `JsonSchema` are written side by side, so what the schema admits is what the parser reads.

use std::fmt;
use std::marker::PhantomData;

use schemars::gen::SchemaGenerator;
use schemars::schema::Schema;
use schemars::JsonSchema;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::{json, Value};

use super::input::Field;

fn schema_from(v: Value) -> Schema {
    // Only ever called on schemas written here, which are valid schema objects.
    serde_json::from_value(v).unwrap_or(Schema::Bool(true))
}

/// `Field<T>` is deserialized only when the key is present (the struct gives it
/// `#[serde(default)]`, so an absent key is `Keep`): `null` clears, a value sets.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(d)? {
            None => Field::Clear,
            Some(v) => Field::Set(v),
        })
    }
}

/// The schema of `T`, with `null` admitted too (in `type`, and in `enum` when there is one).
impl<T: JsonSchema> JsonSchema for Field<T> {
    fn is_referenceable() -> bool {
        false
    }
    fn schema_name() -> String {
        format!("Nullable_{}", T::schema_name())
    }
    fn json_schema(gen: &mut SchemaGenerator) -> Schema {
        let mut v = serde_json::to_value(gen.subschema_for::<T>()).unwrap_or(Value::Null);
        if let Value::Object(o) = &mut v {
            match o.get_mut("type") {
                Some(Value::String(t)) => {
                    let t = std::mem::take(t);
                    o.insert("type".into(), json!([t, "null"]));
                }
                Some(Value::Array(ts)) if !ts.iter().any(|t| t == "null") => ts.push(json!("null")),
                _ => {}
            }
            if let Some(Value::Array(values)) = o.get_mut("enum") {
                values.push(Value::Null);
            }
        }
        schema_from(v)
    }
}

/// A record id: a positive whole number, given as a string of digits (NeuroBook's form,
/// no leading zero) or as an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PlotId(pub i64);

impl PlotId {
    pub fn get(self) -> i64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for PlotId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = PlotId;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an id (a positive whole number, e.g. \"12\")")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<PlotId, E> {
                let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
                match s.parse::<i64>() {
                    Ok(n) if digits && !s.starts_with('0') && n > 0 => Ok(PlotId(n)),
                    _ => Err(E::invalid_value(de::Unexpected::Str(s), &self)),
                }
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<PlotId, E> {
                if n > 0 {
                    Ok(PlotId(n))
                } else {
                    Err(E::invalid_value(de::Unexpected::Signed(n), &self))
                }
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<PlotId, E> {
                match i64::try_from(n) {
                    Ok(i) if i > 0 => Ok(PlotId(i)),
                    _ => Err(E::invalid_value(de::Unexpected::Unsigned(n), &self)),
                }
            }
        }
        d.deserialize_any(IdVisitor)
    }
}

impl JsonSchema for PlotId {
    fn is_referenceable() -> bool {
        false
    }
    fn schema_name() -> String {
        "PlotId".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schema_from(
            json!({"type": ["string", "integer"], "pattern": "^[1-9][0-9]*$", "minimum": 1}),
        )
    }
}

/// A closed vocabulary of strings (the constants in `super::model`).
pub trait Vocabulary {
    const NAME: &'static str;
    const VALUES: &'static [&'static str];
}

/// A string that must be one of `V::VALUES`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OneOf<V>(pub String, PhantomData<V>);

impl<V> OneOf<V> {
    pub fn as_str(&self) -> &str {
        &self.0
    }
    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de, V: Vocabulary> Deserialize<'de> for OneOf<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if V::VALUES.contains(&s.as_str()) {
            Ok(OneOf(s, PhantomData))
        } else {
            // The services' wording, so the TUI and the agent read one message.
            Err(de::Error::custom(format!(
                "'{s}' is not one of {}",
                V::VALUES.join(", ")
            )))
        }
    }
}

impl<V: Vocabulary> JsonSchema for OneOf<V> {
    fn is_referenceable() -> bool {
        false
    }
    fn schema_name() -> String {
        V::NAME.into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schema_from(json!({"type": "string", "enum": V::VALUES}))
    }
}

/// Declare vocabularies over the constants in `super::model`.
macro_rules! vocabularies {
    ($($ty:ident = $values:path;)*) => {
        $(
            #[derive(Clone, Debug, PartialEq, Eq)]
            pub struct $ty;
            impl Vocabulary for $ty {
                const NAME: &'static str = stringify!($ty);
                const VALUES: &'static [&'static str] = $values;
            }
        )*
    };
}

pub mod vocab {
    //! The plot vocabularies, one marker type per constant list.
    use super::super::model;
    use super::Vocabulary;
    vocabularies! {
        ThreadStatus = model::THREAD_STATUSES;
        MiceType = model::MICE_TYPES;
        SceneStatus = model::SCENE_STATUSES;
        OutcomeType = model::OUTCOME_TYPES;
        PacingRole = model::PACING_ROLES;
        RefVisibility = model::REF_VISIBILITIES;
        PromiseStatus = model::PROMISE_STATUSES;
        Importance = model::IMPORTANCES;
        BeatKind = model::BEAT_KINDS;
        DecisionStatus = model::DECISION_STATUSES;
        AnchorKind = model::ANCHOR_KINDS;
    }
}

/// `Field<OneOf<V>>` → `Field<String>` for the services.
pub fn field_string<V>(f: &Field<OneOf<V>>) -> Field<String> {
    match f {
        Field::Keep => Field::Keep,
        Field::Clear => Field::Clear,
        Field::Set(v) => Field::Set(v.0.clone()),
    }
}

/// `Field<PlotId>` → `Field<i64>` for the services.
pub fn field_id(f: &Field<PlotId>) -> Field<i64> {
    match f {
        Field::Keep => Field::Keep,
        Field::Clear => Field::Clear,
        Field::Set(v) => Field::Set(v.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Debug)]
    struct Probe {
        #[serde(default)]
        note: Field<String>,
    }

    #[test]
    fn absent_null_and_value_are_three_states() {
        let p = |v: Value| serde_json::from_value::<Probe>(v).map(|p| p.note);
        assert_eq!(p(json!({})).ok(), Some(Field::Keep));
        assert_eq!(p(json!({"note": null})).ok(), Some(Field::Clear));
        assert_eq!(p(json!({"note": "n"})).ok(), Some(Field::Set("n".into())));
        assert!(p(json!({"note": 3})).is_err());
    }

    #[test]
    fn ids_are_positive_digits_or_integers() {
        let id = |v: Value| serde_json::from_value::<PlotId>(v).ok();
        assert_eq!(id(json!("12")), Some(PlotId(12)));
        assert_eq!(id(json!(12)), Some(PlotId(12)));
        for bad in [
            json!("0"),
            json!("012"),
            json!(0),
            json!(-3),
            json!("x"),
            json!(1.5),
            json!(null),
        ] {
            assert_eq!(id(bad.clone()), None, "{bad}");
        }
    }
}
