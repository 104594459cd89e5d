//! Subject types from `world-engine/schema.toml`:
//!
//! ```toml
//! [types.character]
//! description = "A person or creature whose state the story tracks"
//! [types.character.attributes]
//! name = "string"                                  # shorthand for { kind = "string" }
//! hp = { kind = "int", default = 100 }
//! location = { kind = "ref", to = "location" }     # holds "subject://<id>"
//! inventory = { kind = "list", items = "string" }
//! titles = { kind = "collection", items = "string" } # a list with set semantics (unique)
//! stats = { kind = "object", fields = { str = "int" } }  # or values = "int" for a record
//! memory = { kind = "embedding", container = "record" }  # EmbeddingText {text, vector?, model?}
//! events = { kind = "embedding", container = "list" }
//! ```
//! Kinds: int, float, string, bool, ref, list, collection, object, embedding. Paths a type
//! does not declare are accepted as untyped values, as NeuroBook does. A missing file is an
//! empty schema (every type unknown, so no subject can be created).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Int,
    Float,
    String,
    Bool,
    Ref(String),
    List {
        items: Option<Box<Attr>>,
        unique: bool,
    },
    Object {
        fields: BTreeMap<String, Attr>,
        values: Option<Box<Attr>>,
    },
    /// EmbeddingText items: an append-only list (`events`) or a record keyed by topic (`memory`).
    Embedding {
        record: bool,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    pub kind: Kind,
    pub default: Option<Value>,
    pub description: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeDef {
    pub name: String,
    pub description: String,
    pub attrs: BTreeMap<String, Attr>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schema {
    pub types: BTreeMap<String, TypeDef>,
    /// Changes whenever the meaning of the schema changes; stored checkpoints are dropped then.
    pub fingerprint: String,
}

/// The four patch operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Replace,
    Increment,
    Append,
    Remove,
}

impl Op {
    pub fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "replace" => Op::Replace,
            "increment" => Op::Increment,
            "append" => Op::Append,
            "remove" => Op::Remove,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Replace => "replace",
            Op::Increment => "increment",
            Op::Append => "append",
            Op::Remove => "remove",
        }
    }
    /// Relative ops build on the value already there.
    pub fn is_relative(self, has_value: bool) -> bool {
        matches!(self, Op::Increment | Op::Append) || (self == Op::Remove && has_value)
    }
}

/// What a path addresses, according to the schema.
#[derive(Clone, Debug, PartialEq)]
pub enum Node<'a> {
    /// `/`: the whole state.
    Root,
    Typed(&'a Attr),
    /// An EmbeddingText item inside an embedding container.
    EmbeddingItem,
    Untyped,
    /// The path continues past a reference attribute (E4).
    ThroughRef(String),
    /// The path continues past a scalar attribute (E3).
    ThroughScalar(String),
}

impl Node<'_> {
    /// Ops allowed here, per NeuroBook: int/float/untyped → replace, increment, remove; other
    /// scalars → replace, remove; list/collection → replace, append, remove; object → replace,
    /// remove. Embedding lists behave as lists, embedding records as objects.
    pub fn allows(&self, op: Op) -> bool {
        use Op::*;
        match self {
            Node::Root => op == Replace,
            Node::Untyped => matches!(op, Replace | Increment | Remove),
            Node::EmbeddingItem => matches!(op, Replace | Remove),
            Node::ThroughRef(_) | Node::ThroughScalar(_) => false,
            Node::Typed(a) => match &a.kind {
                Kind::Int | Kind::Float => matches!(op, Replace | Increment | Remove),
                Kind::String | Kind::Bool | Kind::Ref(_) => matches!(op, Replace | Remove),
                Kind::List { .. } | Kind::Embedding { record: false } => {
                    matches!(op, Replace | Append | Remove)
                }
                Kind::Object { .. } | Kind::Embedding { record: true } => {
                    matches!(op, Replace | Remove)
                }
            },
        }
    }

    pub fn label(&self) -> String {
        match self {
            Node::Root => "the whole subject".into(),
            Node::Untyped => "an undeclared (untyped) value".into(),
            Node::EmbeddingItem => "an EmbeddingText item".into(),
            Node::ThroughRef(p) => format!("a path through the reference {p}"),
            Node::ThroughScalar(p) => format!("a path through the scalar {p}"),
            Node::Typed(a) => format!(
                "a{} {} attribute",
                if kind_name(&a.kind).starts_with(['i', 'o', 'e']) {
                    "n"
                } else {
                    ""
                },
                kind_name(&a.kind)
            ),
        }
    }
}

pub fn kind_name(k: &Kind) -> &'static str {
    match k {
        Kind::Int => "int",
        Kind::Float => "float",
        Kind::String => "string",
        Kind::Bool => "bool",
        Kind::Ref(_) => "ref",
        Kind::List { unique: false, .. } => "list",
        Kind::List { unique: true, .. } => "collection",
        Kind::Object { .. } => "object",
        Kind::Embedding { record: false } => "embedding list",
        Kind::Embedding { record: true } => "embedding record",
    }
}

/// Where the schema lives, relative to the project root.
const SCHEMA_FILE: &str = "world-engine/schema.toml";

/// Why the schema could not be loaded; errors from a file name it.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("cannot read {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// The text is not TOML: the parser's message, after the line it stopped at (when the
    /// parser says where).
    #[error("{}{}", line.map(|l| format!("line {l}: ")).unwrap_or_default(), .source.message())]
    Toml {
        line: Option<usize>,
        #[source]
        source: toml::de::Error,
    },
    #[error("unknown top-level key `{0}` (expected [types.<name>])")]
    UnknownTopLevel(String),
    /// `at` (a key path such as `types.hero.attributes`) is not a table.
    #[error("{at} must be a table")]
    NotTable { at: String },
    #[error("{at} must be text")]
    NotText { at: String },
    #[error("types.{name}: unknown key `{key}` (expected description, attributes)")]
    UnknownTypeKey { name: String, key: String },
    #[error("{at}: missing `kind` ({KINDS})")]
    MissingKind { at: String },
    #[error("{at}: expected a kind name or a table with `kind`")]
    NotAnAttribute { at: String },
    #[error("{at}: unknown key `{key}` for kind {kind}")]
    UnknownAttrKey {
        at: String,
        key: String,
        kind: String,
    },
    #[error("{at}: a ref needs `to = \"<type>\"`")]
    RefWithoutTo { at: String },
    #[error("{at}: container must be \"list\" or \"record\", not {container:?}")]
    BadContainer { at: String, container: String },
    #[error("{at}: unknown kind {kind:?} (expected {KINDS})")]
    UnknownKind { at: String, kind: String },
    /// A default that cannot be stored as JSON.
    #[error("{at}.default: {source}")]
    DefaultNotJson {
        at: String,
        #[source]
        source: serde_json::Error,
    },
    /// A default that does not fit its own attribute.
    #[error("{at}.default: {source}")]
    BadDefault {
        at: String,
        #[source]
        source: ValueError,
    },
    #[error("{at}: refers to the undeclared type {to:?}")]
    UndeclaredType { at: String, to: String },
    #[error("{file}: {source}")]
    InFile {
        file: String,
        #[source]
        source: Box<SchemaError>,
    },
}

impl Schema {
    /// Load `world-engine/schema.toml` under a project root (missing file = empty schema).
    pub fn load(root: &Path) -> Result<Schema, SchemaError> {
        let path = root.join(SCHEMA_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Schema::parse(&text).map_err(|e| SchemaError::InFile {
                file: SCHEMA_FILE.into(),
                source: Box::new(e),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Schema::default()),
            Err(source) => Err(SchemaError::Read {
                file: SCHEMA_FILE.into(),
                source,
            }),
        }
    }

    /// Parse schema text; the error names the type or attribute that is wrong.
    pub fn parse(text: &str) -> Result<Schema, SchemaError> {
        let root: toml::Table = toml::from_str(text).map_err(|source| SchemaError::Toml {
            line: source
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1),
            source,
        })?;
        let mut types = BTreeMap::new();
        for (key, v) in &root {
            if key != "types" {
                return Err(SchemaError::UnknownTopLevel(key.clone()));
            }
            let table = v.as_table().ok_or_else(|| SchemaError::NotTable {
                at: "`types`".into(),
            })?;
            for (name, t) in table {
                types.insert(name.clone(), parse_type(name, t)?);
            }
        }
        for t in types.values() {
            for (a, attr) in &t.attrs {
                check_refs(&types, &format!("types.{}.attributes.{a}", t.name), attr)?;
            }
        }
        let fingerprint = format!("{:016x}", fnv(format!("{types:?}").as_bytes()));
        Ok(Schema { types, fingerprint })
    }

    pub fn has_type(&self, name: &str) -> bool {
        self.types.contains_key(name)
    }

    pub fn type_names(&self) -> Vec<&str> {
        self.types.keys().map(String::as_str).collect()
    }

    /// What `tokens` address inside a subject of `type_name`.
    pub fn node<'a>(&'a self, type_name: &str, tokens: &[String]) -> Node<'a> {
        let Some(first) = tokens.first() else {
            return Node::Root;
        };
        let Some(mut attr) = self.types.get(type_name).and_then(|t| t.attrs.get(first)) else {
            return Node::Untyped;
        };
        for (i, tok) in tokens.iter().enumerate().skip(1) {
            let here = crate::world::pointer::join(&tokens[..i]);
            let next = match &attr.kind {
                Kind::Int | Kind::Float | Kind::String | Kind::Bool => {
                    return Node::ThroughScalar(here)
                }
                Kind::Ref(_) => return Node::ThroughRef(here),
                Kind::Embedding { .. } => {
                    return if i + 1 == tokens.len() {
                        Node::EmbeddingItem
                    } else {
                        Node::Untyped
                    };
                }
                Kind::List { items, .. } => items.as_deref(),
                Kind::Object { fields, values } => fields.get(tok).or(values.as_deref()),
            };
            match next {
                Some(a) => attr = a,
                None => return Node::Untyped,
            }
        }
        Node::Typed(attr)
    }

    /// Patches NeuroBook writes when a subject is created: each default, and `[]` for lists,
    /// collections and embedding lists without one.
    pub fn creation_defaults(&self, type_name: &str) -> Vec<(String, Value)> {
        let Some(t) = self.types.get(type_name) else {
            return Vec::new();
        };
        t.attrs
            .iter()
            .filter_map(|(name, a)| {
                let path = crate::world::pointer::join(&[name]);
                match (&a.default, &a.kind) {
                    (Some(d), _) => Some((path, d.clone())),
                    (None, Kind::List { .. } | Kind::Embedding { record: false }) => {
                        Some((path, Value::Array(vec![])))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// Embedding attributes of a type: (name, is_record).
    pub fn embedding_attrs(&self, type_name: &str) -> Vec<(String, bool)> {
        self.types
            .get(type_name)
            .map(|t| {
                t.attrs
                    .iter()
                    .filter_map(|(n, a)| match a.kind {
                        Kind::Embedding { record } => Some((n.clone(), record)),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn parse_type(name: &str, v: &toml::Value) -> Result<TypeDef, SchemaError> {
    let t = v.as_table().ok_or_else(|| SchemaError::NotTable {
        at: format!("types.{name}"),
    })?;
    let mut out = TypeDef {
        name: name.into(),
        description: String::new(),
        attrs: BTreeMap::new(),
    };
    for (k, v) in t {
        match k.as_str() {
            "description" => {
                out.description = v
                    .as_str()
                    .ok_or_else(|| SchemaError::NotText {
                        at: format!("types.{name}.description"),
                    })?
                    .into()
            }
            "attributes" => {
                let attrs = v.as_table().ok_or_else(|| SchemaError::NotTable {
                    at: format!("types.{name}.attributes"),
                })?;
                for (a, spec) in attrs {
                    out.attrs.insert(
                        a.clone(),
                        parse_attr(&format!("types.{name}.attributes.{a}"), spec)?,
                    );
                }
            }
            other => {
                return Err(SchemaError::UnknownTypeKey {
                    name: name.into(),
                    key: other.into(),
                })
            }
        }
    }
    Ok(out)
}

const KINDS: &str = "int, float, string, bool, ref, list, collection, object, embedding";

fn parse_attr(at: &str, v: &toml::Value) -> Result<Attr, SchemaError> {
    let empty = toml::Table::new();
    let (kind_name, t) = match v {
        toml::Value::String(s) => (s.as_str(), &empty),
        toml::Value::Table(t) => (
            t.get("kind")
                .and_then(|k| k.as_str())
                .ok_or_else(|| SchemaError::MissingKind { at: at.into() })?,
            t,
        ),
        _ => return Err(SchemaError::NotAnAttribute { at: at.into() }),
    };
    let allowed: &[&str] = match kind_name {
        "ref" => &["to"],
        "list" | "collection" => &["items"],
        "object" => &["fields", "values"],
        "embedding" => &["container"],
        _ => &[],
    };
    for key in t.keys() {
        if !["kind", "default", "description"].contains(&key.as_str())
            && !allowed.contains(&key.as_str())
        {
            return Err(SchemaError::UnknownAttrKey {
                at: at.into(),
                key: key.clone(),
                kind: kind_name.into(),
            });
        }
    }
    let sub = |key: &str| -> Result<Option<Box<Attr>>, SchemaError> {
        t.get(key)
            .map(|v| parse_attr(&format!("{at}.{key}"), v).map(Box::new))
            .transpose()
    };
    let kind = match kind_name {
        "int" => Kind::Int,
        "float" => Kind::Float,
        "string" => Kind::String,
        "bool" => Kind::Bool,
        "ref" => Kind::Ref(
            t.get("to")
                .and_then(|v| v.as_str())
                .ok_or_else(|| SchemaError::RefWithoutTo { at: at.into() })?
                .into(),
        ),
        "list" | "collection" => Kind::List {
            items: sub("items")?,
            unique: kind_name == "collection",
        },
        "object" => {
            let mut fields = BTreeMap::new();
            if let Some(f) = t.get("fields") {
                for (k, v) in f.as_table().ok_or_else(|| SchemaError::NotTable {
                    at: format!("{at}.fields"),
                })? {
                    fields.insert(k.clone(), parse_attr(&format!("{at}.fields.{k}"), v)?);
                }
            }
            Kind::Object {
                fields,
                values: sub("values")?,
            }
        }
        "embedding" => match t
            .get("container")
            .and_then(|c| c.as_str())
            .unwrap_or("list")
        {
            "list" => Kind::Embedding { record: false },
            "record" => Kind::Embedding { record: true },
            other => {
                return Err(SchemaError::BadContainer {
                    at: at.into(),
                    container: other.into(),
                })
            }
        },
        other => {
            return Err(SchemaError::UnknownKind {
                at: at.into(),
                kind: other.into(),
            })
        }
    };
    let default = t
        .get("default")
        .map(|d| {
            serde_json::to_value(d).map_err(|source| SchemaError::DefaultNotJson {
                at: at.into(),
                source,
            })
        })
        .transpose()?;
    let attr = Attr {
        kind,
        default,
        description: t
            .get("description")
            .and_then(|d| d.as_str())
            .map(String::from),
    };
    if let Some(d) = &attr.default {
        check_value(&Node::Typed(&attr), Op::Replace, Some(d)).map_err(|source| {
            SchemaError::BadDefault {
                at: at.into(),
                source,
            }
        })?;
    }
    Ok(attr)
}

fn check_refs(types: &BTreeMap<String, TypeDef>, at: &str, a: &Attr) -> Result<(), SchemaError> {
    match &a.kind {
        Kind::Ref(to) if !types.contains_key(to) => Err(SchemaError::UndeclaredType {
            at: at.into(),
            to: to.clone(),
        }),
        Kind::List { items: Some(i), .. } => check_refs(types, at, i),
        Kind::Object { fields, values } => {
            for (k, f) in fields {
                check_refs(types, &format!("{at}.{k}"), f)?;
            }
            match values {
                Some(v) => check_refs(types, at, v),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// A subject reference `subject://<id>`; returns the id.
pub fn ref_target(v: &str) -> Option<&str> {
    v.strip_prefix("subject://")
}

/// Subject ids (and slice kinds): non-empty, no surrounding whitespace.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.trim() == id && id.len() <= 200
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

mod values;
pub use values::{check_value, short, ValueError};

#[cfg(test)]
pub(crate) mod tests;
