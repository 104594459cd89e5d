//! The approval preview of a script that wrote: first the error issues the write creates (so
//! the author approves a broken write knowingly or rejects it), then one record per slice
//! written, edited or deleted (time, title, kind, summary and its patches, before and after),
//! then one record per touched subject and instant with the attributes whose state changes
//! there, before → after, and last the advisories (A1/A2) the script was told about.
//!
//! "Before" is the state without anything this script did. The script's transaction is still
//! open, so it is computed from the current rows minus the patches the script added plus the
//! ones it removed, starting from a checkpoint older than the script's first change to that
//! subject (see `store::Overlay`).

use std::collections::{BTreeMap, HashSet};

use serde_json::{json, Map, Value};

use crate::protocol::{FieldChange, Preview, PreviewBody, RecordChange};
use crate::world::issues::Issue;
use crate::world::reducer::PatchRow;
use crate::world::store::{Overlay, SliceInfo, Subject, WorldStore};
use crate::world::write::Change;
use crate::world::WorldError;

pub fn build(
    st: &WorldStore<'_>,
    changes: &[Change],
    issues: &[Issue],
) -> Result<Preview, WorldError> {
    let mut records = Vec::new();
    let mut slices = Vec::new();
    for c in changes {
        slices.push(slice_record(st, c));
    }
    let added: HashSet<String> = changes
        .iter()
        .flat_map(|c| c.added.iter().cloned())
        .collect();
    let removed: Vec<PatchRow> = changes
        .iter()
        .flat_map(|c| c.removed.iter().cloned())
        .filter(|r| !added.contains(&r.id))
        .collect();
    let created: HashSet<String> = changes
        .iter()
        .flat_map(|c| c.new_subjects.iter().map(|s| s.id.clone()))
        .collect();
    // Touched (subject, instant) pairs in order, and each subject's earliest change.
    let mut touched: Vec<(Subject, i64)> = Vec::new();
    let mut first: BTreeMap<String, i64> = BTreeMap::new();
    for c in changes {
        for (s, t) in &c.touched {
            if !touched.iter().any(|(x, u)| x.id == s.id && u == t) {
                touched.push((s.clone(), *t));
            }
            let e = first.entry(s.id.clone()).or_insert(*t);
            *e = (*e).min(*t);
        }
    }
    for r in &removed {
        let e = first.entry(r.subject_id.clone()).or_insert(r.instant);
        *e = (*e).min(r.instant);
    }
    let overlay_for = |s: &Subject| Overlay {
        below: first.get(&s.id).copied().unwrap_or(i64::MIN),
        exclude: added.clone(),
        extra: removed
            .iter()
            .filter(|r| r.subject_id == s.id)
            .cloned()
            .collect(),
    };
    // The error issues the write creates: those of the touched subjects at the end of the
    // timeline now, less those they had without anything this script did.
    let now = st
        .latest_instant()?
        .into_iter()
        .chain(removed.iter().map(|r| r.instant))
        .max()
        .unwrap_or(0);
    let mut created_errors: Vec<Issue> = Vec::new();
    let mut seen_subjects = HashSet::new();
    for (s, _) in &touched {
        if !seen_subjects.insert(s.id.clone()) {
            continue;
        }
        let Some(current) = st.subject(&s.id)? else {
            continue;
        };
        let red = st.reduced_at(&current, now, None)?;
        let after = st.finish(current.clone(), now, red).issues;
        let before: HashSet<_> = if created.contains(&s.id) {
            HashSet::new()
        } else {
            let red = st.reduced_at(s, now, Some(&overlay_for(s)))?;
            st.finish(s.clone(), now, red)
                .issues
                .iter()
                .map(same_problem)
                .collect()
        };
        created_errors.extend(
            after
                .into_iter()
                .filter(|i| i.is_error() && !before.contains(&same_problem(i))),
        );
    }
    if !created_errors.is_empty() {
        records.push(RecordChange {
            record: format!(
                "{} error issue{} this write creates (the patches stay in their slices and are skipped when state is computed)",
                created_errors.len(),
                if created_errors.len() == 1 { "" } else { "s" }
            ),
            action: ISSUES_ACTION.into(),
            fields: created_errors.iter().map(issue_field).collect(),
        });
    }
    records.extend(slices);
    let mut changed_subjects = 0;
    for (s, t) in &touched {
        let after = match st.subject(&s.id)? {
            Some(now) => Some(st.reduced_at(&now, *t, None)?.state),
            None => None,
        };
        let before = if created.contains(&s.id) {
            None
        } else {
            Some(st.reduced_at(s, *t, Some(&overlay_for(s)))?.state)
        };
        let fields = diff(before.as_ref(), after.as_ref());
        if !fields.is_empty() {
            changed_subjects += 1;
        }
        let name = if s.name.is_empty() {
            String::new()
        } else {
            format!(" «{}»", s.name)
        };
        records.push(RecordChange {
            record: format!("subject {}{name} ({}) at {}", s.id, s.kind, st.time(*t)),
            action: match (&before, &after, fields.is_empty()) {
                (None, Some(_), _) => "create".into(),
                (_, _, true) => "unchanged".into(),
                _ => "state".into(),
            },
            fields,
        });
    }
    let advisories: Vec<&Issue> = issues.iter().filter(|i| !i.is_error()).collect();
    if !advisories.is_empty() {
        records.push(RecordChange {
            record: "advisories raised by this script".into(),
            action: "report".into(),
            fields: advisories.into_iter().map(issue_field).collect(),
        });
    }
    let count = |a: &str| changes.iter().filter(|c| c.action == a).count();
    let mut parts = Vec::new();
    for (a, n) in [
        ("write", count("write")),
        ("edit", count("edit")),
        ("delete", count("delete")),
    ] {
        if n > 0 {
            parts.push(format!("{a} {n} slice{}", if n == 1 { "" } else { "s" }));
        }
    }
    let errors = match created_errors.len() {
        0 => String::new(),
        1 => "; 1 error issue".into(),
        n => format!("; {n} error issues"),
    };
    Ok(Preview {
        summary: format!(
            "execute_world: {}; {changed_subjects} subject state{} change{errors}",
            parts.join(", "),
            if changed_subjects == 1 { "" } else { "s" }
        ),
        body: PreviewBody::Records { changes: records },
        targets: Vec::new(),
    })
}

/// The action of the record listing the error issues a write creates; the approval view shows
/// its fields as warnings (`code label path — message`), not as before → after.
pub const ISSUES_ACTION: &str = "issues";

/// An issue's identity across an edit, which gives every patch of the slice a new id: the
/// same code on the same subject, path and slice, with the same message.
fn same_problem(i: &Issue) -> (String, String, Option<String>, Option<String>, String) {
    (
        i.code.clone(),
        i.subject_id.clone(),
        i.path.clone(),
        i.slice_id.clone(),
        i.message.clone(),
    )
}

fn issue_field(i: &Issue) -> FieldChange {
    FieldChange {
        field: format!(
            "{} {} {} {}",
            i.code,
            i.label,
            i.subject_id,
            i.path.as_deref().unwrap_or(&i.attr)
        ),
        before: Value::Null,
        after: Value::String(i.message.clone()),
    }
}

fn slice_record(st: &WorldStore<'_>, c: &Change) -> RecordChange {
    let head = c.after.as_ref().or(c.before.as_ref());
    let (time, title) = head
        .map(|s| (st.time(s.instant), s.title.clone()))
        .unwrap_or_default();
    let get =
        |s: Option<&SliceInfo>, f: &dyn Fn(&SliceInfo) -> Value| s.map(f).unwrap_or(Value::Null);
    let mut fields = Vec::new();
    let mut field = |name: &str, f: &dyn Fn(&SliceInfo) -> Value| {
        let (b, a) = (get(c.before.as_ref(), f), get(c.after.as_ref(), f));
        if b != a {
            fields.push(FieldChange {
                field: name.into(),
                before: b,
                after: a,
            });
        }
    };
    field("time", &|s| json!(st.time(s.instant)));
    field("title", &|s| json!(s.title));
    field("kind", &|s| json!(s.kind));
    field("summary", &|s| json!(s.summary));
    field("patches", &|s| {
        Value::Array(
            s.patches
                .iter()
                .flatten()
                .map(|p| {
                    let v = p
                        .value
                        .as_ref()
                        .map(|v| format!(" {v}"))
                        .unwrap_or_default();
                    json!(format!("{} {} {}{v}", p.subject_id, p.op, p.path))
                })
                .collect(),
        )
    });
    let short: String = c.slice_id.chars().take(8).collect();
    RecordChange {
        record: if title.is_empty() {
            format!("slice {short} at {time}")
        } else {
            format!("slice {short} at {time} «{title}»")
        },
        action: c.action.into(),
        fields,
    }
}

/// Top-level attributes whose values differ.
fn diff(
    before: Option<&Map<String, Value>>,
    after: Option<&Map<String, Value>>,
) -> Vec<FieldChange> {
    let empty = Map::new();
    let (b, a) = (before.unwrap_or(&empty), after.unwrap_or(&empty));
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| b.get(*k) != a.get(*k))
        .map(|k| FieldChange {
            field: format!("/{}", crate::world::pointer::escape(k)),
            before: b.get(k).cloned().unwrap_or(Value::Null),
            after: a.get(k).cloned().unwrap_or(Value::Null),
        })
        .collect()
}
