//! Checking and completing the patches of a slice before it is written.
//!
//! NeuroBook reports most problems as issues after the write; nbook is stricter where a
//! patch cannot possibly do what it says: a patch that fails at its own instant (E1, E3, E4,
//! E5), an op the attribute's kind does not allow, a value of the wrong type, an unknown
//! subject type or a reference to a missing subject makes the whole write fail with a message
//! naming the patch, and nothing is written. Effects on *later* slices are still reported as
//! issues (and advisories), since the author may intend them.
//!
//! Completions, as NeuroBook does: a subject's first slice declares its `type` (and `name`)
//! and gets the type's defaults prepended; an `append` to a declared list still missing at that
//! instant gets a `replace []` first. Beyond NeuroBook (commented choice): a `replace` at
//! `/<attr>/<key>` of a declared object or record still missing gets a `replace {}` first, so
//! `memory` entries can be written without ceremony.

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
    /// Check `patches` for a slice at `instant` and complete them. `old` are the patches of the
    /// slice being edited (already removed from the database), used only to allow `type` on
    /// patches of subjects that slice created.
    pub(crate) fn prepare(
        &self,
        slice_id: &str,
        instant: i64,
        patches: &[NewPatch],
        allow_new_subjects: bool,
    ) -> Result<Prepared, WorldError> {
        if patches.len() > MAX_PATCHES {
            return Err(WorldError::invalid(format!(
                "a slice holds at most {MAX_PATCHES} patches; this one has {} — split it over several instants",
                patches.len()
            )));
        }
        // Resolve subjects.
        let mut subjects: Vec<Subject> = Vec::new();
        let mut new_subjects: Vec<Subject> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
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
            pointer::parse(&p.path).map_err(at)?;
            if let Some(&i) = index.get(&p.subject_id) {
                if let Some(t) = &p.declared_type {
                    if t != &subjects[i].kind {
                        return Err(at(format!(
                            "subject {} is a {}, not a {t}",
                            p.subject_id, subjects[i].kind
                        )));
                    }
                }
                continue;
            }
            let subject = match self.subject(&p.subject_id)? {
                Some(s) => {
                    if let Some(t) = p.declared_type.as_ref().filter(|t| **t != s.kind) {
                        return Err(at(format!(
                            "subject {} already exists as a {}, not a {t}",
                            s.id, s.kind
                        )));
                    }
                    if let Some(name) = p.name.as_ref().filter(|n| **n != s.name) {
                        return Err(at(format!(
                            "subject {} is already named {:?}; a name is given once, when the subject is created (keep names that change over time in an attribute such as /name), not {name:?}",
                            s.id, s.name
                        )));
                    }
                    s
                }
                None => {
                    let Some(t) = &p.declared_type else {
                        return Err(at(format!(
                            "there is no subject {:?}; to create it, give its first patch `type` (one of: {}) and optionally `name`",
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
                        return Err(at("editPatches cannot register new subjects; create it with world.slice.write".into()));
                    }
                    let s = Subject {
                        id: p.subject_id.clone(),
                        kind: t.clone(),
                        name: p.name.clone().unwrap_or_default(),
                    };
                    new_subjects.push(s.clone());
                    s
                }
            };
            index.insert(p.subject_id.clone(), subjects.len());
            subjects.push(subject);
        }
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
            let at = |why: String| {
                let which = n.map_or("a default patch".to_string(), |n| format!("patch {n}"));
                WorldError::Invalid(format!(
                    "{which} ({} {} on {}): {why}",
                    p.op.as_str(),
                    p.path,
                    p.subject_id
                ))
            };
            let s = &subjects[index[&p.subject_id]];
            let tokens = pointer::parse(&p.path).map_err(at)?;
            let node = self.schema.node(&s.kind, &tokens);
            match &node {
                Node::ThroughRef(r) => {
                    return Err(at(format!(
                        "the path goes through the reference {r}; change the referenced subject with its own id instead (E4)"
                    )))
                }
                Node::ThroughScalar(r) => return Err(at(format!("{r} is a scalar attribute; the path cannot go inside it"))),
                _ => {}
            }
            if !node.allows(p.op) {
                let ops: Vec<&str> = [Op::Replace, Op::Increment, Op::Append, Op::Remove]
                    .into_iter()
                    .filter(|o| node.allows(*o))
                    .map(Op::as_str)
                    .collect();
                return Err(at(format!(
                    "{} is not allowed on {}; allowed: {}",
                    p.op.as_str(),
                    node.label(),
                    ops.join(", ")
                )));
            }
            check_value(&node, p.op, p.value.as_ref()).map_err(at)?;
            let red = states
                .get_mut(&s.id)
                .ok_or_else(|| at("internal: no state".into()))?;
            if let Some(fill) = completion(
                &self
                    .schema
                    .node(&s.kind, &tokens[..tokens.len().saturating_sub(1)]),
                &node,
                p,
                &tokens,
                &red.state,
            ) {
                rows.push(self.row(slice_id, instant, rows.len(), &fill));
                let last = rows.len() - 1;
                red.apply(self.schema, &s.kind, &rows[last]);
            }
            rows.push(self.row(slice_id, instant, rows.len(), p));
            let before = red.issues.len();
            red.apply(self.schema, &s.kind, &rows[rows.len() - 1]);
            if let Some(issue) = red.issues.get(before) {
                return Err(at(format!(
                    "{} ({}): {}",
                    issue.title, issue.code, issue.message
                )));
            }
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

/// The patch to insert before `p`, if it builds on a declared container missing here.
fn completion(
    parent: &Node<'_>,
    node: &Node<'_>,
    p: &NewPatch,
    tokens: &[String],
    state: &Map<String, Value>,
) -> Option<NewPatch> {
    let missing = |toks: &[String]| lookup(state, toks).is_none();
    let fill = |toks: &[String], v: Value| NewPatch {
        subject_id: p.subject_id.clone(),
        path: pointer::join(toks),
        op: Op::Replace,
        value: Some(v),
        summary: Some("created for the next patch".into()),
        declared_type: None,
        name: None,
    };
    match (p.op, node) {
        (
            Op::Append,
            Node::Typed(Attr {
                kind: Kind::List { .. } | Kind::Embedding { record: false },
                ..
            }),
        ) if missing(tokens) => Some(fill(tokens, Value::Array(vec![]))),
        (Op::Replace, _) if tokens.len() >= 2 => {
            let up = &tokens[..tokens.len() - 1];
            let is_map = matches!(
                parent,
                Node::Typed(Attr {
                    kind: Kind::Object { .. } | Kind::Embedding { record: true },
                    ..
                })
            );
            let grand_ok =
                up.len() == 1 || lookup(state, &up[..up.len() - 1]).is_some_and(Value::is_object);
            (is_map && missing(up) && grand_ok).then(|| fill(up, Value::Object(Map::new())))
        }
        _ => None,
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
