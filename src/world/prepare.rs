//! Checking and completing the patches of a slice before it is written.
//!
//! As in NeuroBook, a patch that cannot apply at its instant does not fail the write: the slice
//! is stored with all its patches, the problem becomes an issue on it (E1 no usable base, E3 a
//! path through a scalar or past a list's end, E4 a path through a reference), and the patch is
//! skipped whenever state is computed — until a later write (a base written into the past, an
//! edit) fixes it. The caller returns the issues and the script decides.
//!
//! Refused, writing nothing: an empty slice or more than 100 patches, a subject that does not
//! exist and gets no `type`, a type the schema does not declare, an op the attribute's kind
//! does not allow, a value of the wrong type, a whole-list replace of an embedding container
//! with content (E5), any change inside an embedding-text list other than `append` of `{text}`,
//! and a reference to a missing subject (E2).
//!
//! Completions, as NeuroBook does: a new subject's type (declared on any of its patches in the
//! creating slice) gets its defaults prepended; an `append` to a declared list still missing at
//! that instant gets a `replace []` first.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use super::pointer;
use super::reducer::{self, PatchRow, Reduced};
use super::schema::{self, check_value, Attr, Kind, Node, Op};
use super::store::{Subject, WorldStore};
use super::WorldError;

/// Most patches one slice may hold.
pub const MAX_PATCHES: usize = 100;

/// A patch as a script writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct NewPatch {
    pub subject_id: String,
    pub path: String,
    pub op: Op,
    /// `None`: no value (a remove of a key or index).
    pub value: Option<Value>,
    pub summary: Option<String>,
    /// Declared on a subject's first patch: its type and display name.
    pub declared_type: Option<String>,
    pub name: Option<String>,
}

const PATCH_KEYS: [&str; 7] = [
    "subjectId",
    "path",
    "op",
    "value",
    "summary",
    "type",
    "name",
];

impl NewPatch {
    /// Read `{subjectId, path, op, value?, summary?, type?, name?}`.
    pub fn from_json(v: &Value, n: usize) -> Result<NewPatch, WorldError> {
        let bad = |why: String| WorldError::Invalid(format!("patch {n}: {why}"));
        let o = v
            .as_object()
            .ok_or_else(|| bad("must be an object {subjectId, path, op, value?}".into()))?;
        if let Some(k) = o.keys().find(|k| !PATCH_KEYS.contains(&k.as_str())) {
            return Err(bad(format!(
                "unknown field {k:?} (fields: {})",
                PATCH_KEYS.join(", ")
            )));
        }
        let text = |k: &str| -> Result<Option<String>, WorldError> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(bad(format!(
                    "{k} must be text, not {}",
                    schema::short(other)
                ))),
            }
        };
        let subject_id = text("subjectId")?.ok_or_else(|| bad("subjectId is missing".into()))?;
        let path = text("path")?.ok_or_else(|| bad("path is missing".into()))?;
        let op_text = text("op")?
            .ok_or_else(|| bad("op is missing (replace, increment, append, remove)".into()))?;
        let op = Op::parse(&op_text).ok_or_else(|| {
            bad(format!(
                "unknown op {op_text:?} (replace, increment, append, remove)"
            ))
        })?;
        let value = match o.get("value") {
            None => None,
            Some(Value::Null) if op == Op::Remove => None,
            Some(v) => Some(v.clone()),
        };
        Ok(NewPatch {
            subject_id,
            path,
            op,
            value,
            summary: text("summary")?,
            declared_type: text("type")?,
            name: text("name")?,
        })
    }

    fn from_row(p: &PatchRow) -> NewPatch {
        NewPatch {
            subject_id: p.subject_id.clone(),
            path: p.path.clone(),
            op: Op::parse(&p.op).unwrap_or(Op::Replace),
            value: p
                .value
                .as_deref()
                .and_then(|v| serde_json::from_str(v).ok()),
            summary: p.summary.clone(),
            declared_type: None,
            name: None,
        }
    }
}

/// Patches ready to insert, and what they do.
pub struct Prepared {
    pub rows: Vec<PatchRow>,
    pub new_subjects: Vec<Subject>,
    /// Subjects the slice touches, in order of first appearance.
    pub subjects: Vec<Subject>,
}

pub fn new_id() -> String {
    let b: u128 = rand::random();
    let h = format!(
        "{:032x}",
        (b & !(0xF << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62)
    );
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

impl WorldStore<'_> {
    /// Check `patches` for a slice at `instant` and complete them. `allow_new_subjects` is
    /// false for editPatches, which cannot register subjects.
    pub(crate) fn prepare(
        &self,
        slice_id: &str,
        instant: i64,
        patches: &[NewPatch],
        allow_new_subjects: bool,
    ) -> Result<Prepared, WorldError> {
        if patches.is_empty() {
            return Err(WorldError::invalid(format!(
                "a slice holds 1 to {MAX_PATCHES} patches; this one has none — give at least one patch (to remove a slice, use world.slice.delete)"
            )));
        }
        if patches.len() > MAX_PATCHES {
            return Err(WorldError::invalid(format!(
                "a slice holds 1 to {MAX_PATCHES} patches; this one has {} — split it over several instants",
                patches.len()
            )));
        }
        let (subjects, new_subjects) = self.resolve_subjects(patches, allow_new_subjects)?;
        let index: HashMap<&str, usize> = subjects
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.as_str(), i))
            .collect();
        // Defaults of new subjects come first.
        let mut full: Vec<NewPatch> = Vec::new();
        for s in &new_subjects {
            for (path, v) in self.schema.creation_defaults(&s.kind) {
                full.push(NewPatch {
                    subject_id: s.id.clone(),
                    path,
                    op: Op::Replace,
                    value: Some(v),
                    summary: Some("default".into()),
                    declared_type: None,
                    name: None,
                });
            }
        }
        // States just before this instant, then each patch applied in turn.
        let mut states: BTreeMap<String, Reduced> = BTreeMap::new();
        for s in &subjects {
            let red = if new_subjects.iter().any(|n| n.id == s.id) {
                Reduced::default()
            } else {
                let mut r = self.reduced_at(s, instant, None)?;
                r.issues.clear();
                r
            };
            states.insert(s.id.clone(), red);
        }
        let defaults = full.len();
        full.extend(patches.iter().cloned());
        let mut rows: Vec<PatchRow> = Vec::with_capacity(full.len());
        for (k, p) in full.iter().enumerate() {
            let n = k.checked_sub(defaults);
            let at = |why: &dyn std::fmt::Display| {
                let which = n.map_or("a default patch".to_string(), |n| format!("patch {n}"));
                WorldError::Invalid(format!(
                    "{which} ({} {} on {}): {why}",
                    p.op.as_str(),
                    p.path,
                    p.subject_id
                ))
            };
            let s = &subjects[index[p.subject_id.as_str()]];
            let tokens = pointer::parse(&p.path).map_err(|e| at(&e))?;
            let node = self.schema.node(&s.kind, &tokens);
            // A path through a reference or a scalar is kept and flagged (E4/E3) below, as
            // NeuroBook does; everything else must fit the schema.
            if !matches!(node, Node::ThroughRef(_) | Node::ThroughScalar(_)) {
                check_embedding_list(self.schema, &s.kind, &tokens, p.op).map_err(|e| at(&e))?;
                if !node.allows(p.op) {
                    let ops: Vec<&str> = [Op::Replace, Op::Increment, Op::Append, Op::Remove]
                        .into_iter()
                        .filter(|o| node.allows(*o))
                        .map(Op::as_str)
                        .collect();
                    return Err(at(&format_args!(
                        "{} is not allowed on {}; allowed: {}",
                        p.op.as_str(),
                        node.label(),
                        ops.join(", ")
                    )));
                }
                check_value(&node, p.op, p.value.as_ref()).map_err(|e| at(&e))?;
            }
            let red = states
                .get_mut(&s.id)
                .ok_or_else(|| at(&"internal: no state"))?;
            if let Some(fill) = completion(&node, p, &tokens, &red.state) {
                rows.push(self.row(slice_id, instant, rows.len(), &fill));
                let last = rows.len() - 1;
                red.apply(self.schema, &s.kind, &rows[last]);
            }
            rows.push(self.row(slice_id, instant, rows.len(), p));
            // A patch that cannot apply is kept: the reduction records its issue (the write
            // reports it) and skips it, as every later reduction will until a write fixes it.
            red.apply(self.schema, &s.kind, &rows[rows.len() - 1]);
        }
        if rows.len() > MAX_PATCHES {
            return Err(WorldError::invalid(format!(
                "with the defaults of new subjects this slice would hold {} patches, more than {MAX_PATCHES}; split it",
                rows.len()
            )));
        }
        // References must name existing subjects of the right type (new ones count).
        for s in &subjects {
            let red = &states[&s.id];
            let mut type_of = |id: &str| {
                new_subjects
                    .iter()
                    .find(|n| n.id == id)
                    .map(|n| n.kind.clone())
                    .or_else(|| self.subject(id).ok().flatten().map(|x| x.kind))
            };
            let touched: Vec<String> = rows
                .iter()
                .filter(|r| r.subject_id == s.id)
                .filter_map(|r| pointer::parse(&r.path).ok()?.into_iter().next())
                .collect();
            for issue in reducer::check_refs(red, self.schema, &s.id, &s.kind, &mut type_of) {
                let attr = issue.attr.trim_start_matches('/').to_string();
                if touched.iter().any(|t| pointer::escape(t) == attr) {
                    return Err(WorldError::invalid(format!(
                        "{} (E2): {}",
                        issue.title, issue.message
                    )));
                }
            }
        }
        Ok(Prepared {
            rows,
            new_subjects,
            subjects,
        })
    }

    /// The subjects `patches` touch, in order of first appearance, and which of them are new.
    /// A new subject's `type` (and `name`) may sit on any of its patches in this slice; on a
    /// subject that exists they are ignored, as NeuroBook does.
    fn resolve_subjects(
        &self,
        patches: &[NewPatch],
        allow_new_subjects: bool,
    ) -> Result<(Vec<Subject>, Vec<Subject>), WorldError> {
        let mut subjects: Vec<Subject> = Vec::new();
        let mut new_subjects: Vec<Subject> = Vec::new();
        for (n, p) in patches.iter().enumerate() {
            let at = |why: String| {
                WorldError::Invalid(format!(
                    "patch {n} ({} {} on {}): {why}",
                    p.op.as_str(),
                    p.path,
                    p.subject_id
                ))
            };
            if !schema::valid_id(&p.subject_id) {
                return Err(at(
                    "a subject id must be non-empty text without surrounding spaces".into(),
                ));
            }
            pointer::parse(&p.path).map_err(|e| at(e.to_string()))?;
            if subjects.iter().any(|s| s.id == p.subject_id) {
                continue;
            }
            if let Some(s) = self.subject(&p.subject_id)? {
                subjects.push(s);
                continue;
            }
            let mine = || {
                patches
                    .iter()
                    .enumerate()
                    .filter(|(_, q)| q.subject_id == p.subject_id)
            };
            let mut kind: Option<(usize, &String)> = None;
            let mut name: Option<(usize, &String)> = None;
            for (m, q) in mine() {
                if let Some(t) = &q.declared_type {
                    match kind {
                        Some((first, k)) if k != t => {
                            return Err(at(format!(
                                "patch {first} declares subject {} a {k} and patch {m} a {t}; a subject has one type",
                                p.subject_id
                            )))
                        }
                        Some(_) => {}
                        None => kind = Some((m, t)),
                    }
                }
                if let Some(x) = &q.name {
                    match name {
                        Some((first, y)) if y != x => {
                            return Err(at(format!(
                                "patch {first} names subject {} {y:?} and patch {m} {x:?}; give its name once",
                                p.subject_id
                            )))
                        }
                        Some(_) => {}
                        None => name = Some((m, x)),
                    }
                }
            }
            let Some((_, t)) = kind else {
                return Err(at(format!(
                    "there is no subject {:?}; to create it, give one of its patches in this slice `type` (one of: {}) and optionally `name`",
                    p.subject_id,
                    self.schema.type_names().join(", ")
                )));
            };
            if !self.schema.has_type(t) {
                return Err(at(format!(
                    "unknown subject type {t:?}; world-engine/schema.toml declares: {}",
                    self.schema.type_names().join(", ")
                )));
            }
            if !allow_new_subjects {
                return Err(at(
                    "editPatches cannot register new subjects; create it with world.slice.write"
                        .into(),
                ));
            }
            let s = Subject {
                id: p.subject_id.clone(),
                kind: t.clone(),
                name: name.map(|(_, x)| x.clone()).unwrap_or_default(),
            };
            new_subjects.push(s.clone());
            subjects.push(s);
        }
        Ok((subjects, new_subjects))
    }

    fn row(&self, slice_id: &str, instant: i64, seq: usize, p: &NewPatch) -> PatchRow {
        PatchRow {
            rowid: i64::MAX,
            id: new_id(),
            slice_id: slice_id.into(),
            subject_id: p.subject_id.clone(),
            instant,
            seq: seq as i64,
            path: p.path.clone(),
            op: p.op.as_str().into(),
            value: p.value.as_ref().map(|v| v.to_string()),
            summary: p.summary.clone(),
        }
    }
}

/// The `replace []` to insert before an append to a declared list still missing here (as
/// NeuroBook does). Missing objects need no completion: a replace creates them.
fn completion(
    node: &Node<'_>,
    p: &NewPatch,
    tokens: &[String],
    state: &Map<String, Value>,
) -> Option<NewPatch> {
    let list = matches!(
        node,
        Node::Typed(Attr {
            kind: Kind::List { .. } | Kind::Embedding { record: false },
            ..
        })
    );
    (p.op == Op::Append && list && lookup(state, tokens).is_none()).then(|| NewPatch {
        subject_id: p.subject_id.clone(),
        path: pointer::join(tokens),
        op: Op::Replace,
        value: Some(Value::Array(vec![])),
        summary: Some("created for the next patch".into()),
        declared_type: None,
        name: None,
    })
}

/// A patch that edits one item of an embedding-text list (`/<list>/…`), which only appends.
#[derive(Debug, thiserror::Error)]
#[error("/{list} is an embedding-text list: its items cannot be changed one by one ({op} on {path}); add items with append of {{text}} at /{list}")]
pub struct ItemEdit {
    list: String,
    op: &'static str,
    path: String,
}

/// Embedding-text lists (the schema's events) take `append` of `{text}` only (checked with the
/// value); their items cannot be replaced or removed one by one, since search keeps them
/// row by row.
fn check_embedding_list(
    schema: &schema::Schema,
    kind: &str,
    tokens: &[String],
    op: Op,
) -> Result<(), ItemEdit> {
    if tokens.len() < 2 {
        return Ok(());
    }
    match schema.node(kind, &tokens[..1]) {
        Node::Typed(Attr {
            kind: Kind::Embedding { record: false },
            ..
        }) => Err(ItemEdit {
            list: pointer::escape(&tokens[0]),
            op: op.as_str(),
            path: pointer::join(tokens),
        }),
        _ => Ok(()),
    }
}

fn lookup<'a>(state: &'a Map<String, Value>, tokens: &[String]) -> Option<&'a Value> {
    let (first, rest) = tokens.split_first()?;
    let mut cur = state.get(first)?;
    for t in rest {
        cur = match cur {
            Value::Object(o) => o.get(t)?,
            Value::Array(a) => a.get(pointer::index(t, a.len())?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Rebuild `NewPatch`es from stored rows (for editPatches).
pub fn from_rows(rows: &[PatchRow]) -> Vec<NewPatch> {
    rows.iter().map(NewPatch::from_row).collect()
}
