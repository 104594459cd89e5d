use serde_json::json;

use super::*;
use crate::world::schema::tests::template;
use crate::world::store::SliceFilter;
use crate::world::World;

pub struct Fx {
    _dir: tempfile::TempDir,
    pub conn: rusqlite::Connection,
    pub world: World,
}

pub fn fx() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let conn = crate::store::open(&dir.path().join("p.sqlite")).unwrap();
    Fx {
        _dir: dir,
        conn,
        world: World::with_schema(template()),
    }
}

pub fn p(v: serde_json::Value) -> NewPatch {
    NewPatch::from_json(&v, 0).unwrap()
}

pub fn slice(t: i64, patches: Vec<serde_json::Value>) -> NewSlice {
    NewSlice {
        instant: t,
        title: format!("t{t}"),
        summary: String::new(),
        kind: "event".into(),
        patches: patches.into_iter().map(p).collect(),
    }
}

#[test]
fn write_creates_subjects_with_defaults_and_reads_back() {
    let f = fx();
    let st = WorldStore::new(&f.conn, &f.world);
    let out = st
        .write_slice(&slice(100, vec![
            json!({"subjectId": "l1", "type": "location", "name": "Harbour", "path": "/name", "op": "replace", "value": "Harbour"}),
            json!({"subjectId": "c1", "type": "character", "name": "Ada", "path": "/location", "op": "replace", "value": "subject://l1"}),
            json!({"subjectId": "c1", "path": "/inventory", "op": "append", "value": "lamp"}),
        ]))
        .unwrap();
    assert!(out.issues.is_empty(), "{:?}", out.issues);
    let s = st.state_at("c1", 100).unwrap().unwrap();
    assert_eq!(s.subject.name, "Ada");
    assert_eq!(s.attrs["hp"], json!(100));
    assert_eq!(s.attrs["inventory"], json!(["lamp"]));
    assert_eq!(s.attrs["location"], json!("subject://l1"));
    assert!(s.issues.is_empty());
    assert!(st.state_at("c1", 99).unwrap().unwrap().attrs.is_empty());
    let sl = st.slice(&out.slice_id).unwrap().unwrap();
    assert_eq!(
        sl.patches.as_ref().unwrap().len(),
        9,
        "3 patches + 1 location default + 5 character defaults"
    );
    assert_eq!(out.change.new_subjects.len(), 2);
}

#[test]
fn bad_writes_fail_and_write_nothing() {
    let f = fx();
    let st = WorldStore::new(&f.conn, &f.world);
    st.write_slice(&slice(10, vec![json!({"subjectId": "c1", "type": "character", "path": "/name", "op": "replace", "value": "Ada"})])).unwrap();
    let count = || {
        f.conn
            .query_row("SELECT count(*) FROM WorldPatch", [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap()
    };
    let n = count();
    let err = |s: NewSlice| st.write_slice(&s).unwrap_err().to_string();
    let e = err(slice(
        10,
        vec![json!({"subjectId": "c1", "path": "/hp", "op": "increment", "value": 1})],
    ));
    assert!(
        e.contains("already holds slice") && e.contains("«t10»"),
        "{e}"
    );
    let e = err(slice(
        20,
        vec![
            json!({"subjectId": "d1", "type": "dragon", "path": "/x", "op": "replace", "value": 1}),
        ],
    ));
    assert!(
        e.contains("unknown subject type \"dragon\"") && e.contains("character"),
        "{e}"
    );
    let e = err(slice(
        20,
        vec![json!({"subjectId": "zz", "path": "/x", "op": "replace", "value": 1})],
    ));
    assert!(e.contains("there is no subject"), "{e}");
    let e = err(slice(
        20,
        vec![json!({"subjectId": "c1", "path": "/hp", "op": "increment", "value": "ten"})],
    ));
    assert!(e.contains("finite number"), "{e}");
    let e = err(slice(
        20,
        vec![json!({"subjectId": "c1", "path": "/name", "op": "increment", "value": 1})],
    ));
    assert!(e.contains("not allowed on a string attribute"), "{e}");
    assert!(err(slice(20, vec![])).contains("1 to 100 patches"));
    let e = err(slice(
        20,
        vec![
            json!({"subjectId": "c1", "path": "/location", "op": "replace", "value": "subject://nowhere"}),
        ],
    ));
    assert!(e.contains("E2") && e.contains("does not exist"), "{e}");
    let many: Vec<_> = (0..101)
        .map(|i| json!({"subjectId": "c1", "path": format!("/k{i}"), "op": "replace", "value": i}))
        .collect();
    assert!(err(slice(20, many)).contains("1 to 100 patches; this one has 101"));
    let e = err(slice(
        20,
        vec![
            json!({"subjectId": "c1", "path": "/a", "op": "replace", "value": 1}),
            json!({"subjectId": "c1", "path": "/events/0", "op": "replace", "value": {"text": "x"}}),
        ],
    ));
    assert!(
        e.contains("patch 1") && e.contains("embedding-text list"),
        "{e}"
    );
    assert_eq!(count(), n, "nothing was written");
    assert!(st.slice_at(20).unwrap().is_none());
}

#[test]
fn patches_that_cannot_apply_are_kept_with_issues() {
    let f = fx();
    let st = WorldStore::new(&f.conn, &f.world);
    st.write_slice(&slice(10, vec![json!({"subjectId": "c1", "type": "character", "path": "/name", "op": "replace", "value": "Ada"})])).unwrap();
    let out = st
        .write_slice(&slice(
            20,
            vec![
                json!({"subjectId": "c1", "path": "/gold", "op": "increment", "value": 1}),
                json!({"subjectId": "c1", "path": "/hp/max", "op": "replace", "value": 1}),
                json!({"subjectId": "c1", "path": "/location/name", "op": "replace", "value": "x"}),
                json!({"subjectId": "c1", "path": "/inventory/4", "op": "replace", "value": "x"}),
                json!({"subjectId": "c1", "path": "/stats/str", "op": "replace", "value": 5}),
            ],
        ))
        .unwrap();
    let codes: Vec<&str> = out.issues.iter().map(|i| i.code.as_str()).collect();
    assert_eq!(codes, ["E1", "E3", "E4", "E3"], "{:?}", out.issues);
    assert!(out
        .issues
        .iter()
        .all(|i| i.slice_id.as_deref() == Some(out.slice_id.as_str())));
    let sl = st.slice(&out.slice_id).unwrap().unwrap();
    assert_eq!(sl.patch_count, 5, "every patch is stored");
    let s = st.state_at("c1", 20).unwrap().unwrap();
    assert_eq!(s.attrs["stats"], json!({"str": 5}));
    assert_eq!(s.attrs["hp"], json!(100));
    assert!(s.attrs.get("gold").is_none());
    assert_eq!(s.issues.len(), 4);
}

#[test]
fn edits_and_deletes_with_advisories_and_later_issues() {
    let f = fx();
    let st = WorldStore::new(&f.conn, &f.world);
    st.write_slice(&slice(10, vec![json!({"subjectId": "c1", "type": "character", "path": "/gold", "op": "replace", "value": 5})])).unwrap();
    st.write_slice(&slice(
        30,
        vec![json!({"subjectId": "c1", "path": "/gold", "op": "increment", "value": 2})],
    ))
    .unwrap();
    st.write_slice(&slice(
        40,
        vec![json!({"subjectId": "c1", "path": "/hp", "op": "replace", "value": 50})],
    ))
    .unwrap();
    // A write into the past before a later increment (A1) and a later replace (A2).
    let out = st
        .write_slice(&slice(
            20,
            vec![
                json!({"subjectId": "c1", "path": "/gold", "op": "replace", "value": 9}),
                json!({"subjectId": "c1", "path": "/hp", "op": "increment", "value": -5}),
            ],
        ))
        .unwrap();
    let codes: Vec<&str> = out.issues.iter().map(|i| i.code.as_str()).collect();
    assert_eq!(codes, ["A1", "A2"], "{:?}", out.issues);
    assert_eq!(
        st.state_at("c1", 35).unwrap().unwrap().attrs["gold"],
        json!(11)
    );
    // Editing the first slice to remove gold breaks the later increment (E1, reported now).
    let first = st.slice_at(10).unwrap().unwrap().0;
    let sl = st.slice(&first).unwrap().unwrap();
    let gold = sl
        .patches
        .unwrap()
        .into_iter()
        .find(|p| p.path == "/gold")
        .unwrap();
    let out = st
        .edit_slice(
            &first,
            &[PatchEdit::Remove {
                patch_id: gold.patch_id.clone(),
            }],
            &SliceMeta::default(),
        )
        .unwrap();
    assert!(
        out.issues.is_empty(),
        "slice 20 still sets gold: {:?}",
        out.issues
    );
    let twenty = st.slice_at(20).unwrap().unwrap().0;
    let out = st.delete_slice(&twenty).unwrap();
    assert!(
        out.issues
            .iter()
            .any(|i| i.code == "E1" && i.path.as_deref() == Some("/gold")),
        "{:?}",
        out.issues
    );
    let s = st.state_at("c1", 50).unwrap().unwrap();
    assert!(s.attrs.get("gold").is_none());
    assert_eq!(s.issues.len(), 1);
    // Moving a slice onto an occupied instant is refused.
    let e = st
        .edit_slice(
            &first,
            &[],
            &SliceMeta {
                instant: Some(40),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("already holds"));
    // Unknown patch ids are explained.
    let e = st
        .edit_slice(
            &first,
            &[PatchEdit::Remove {
                patch_id: "nope".into(),
            }],
            &SliceMeta::default(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("read the slice again"));
}

#[test]
fn checkpoints_are_used_and_validated_against_foreign_writes() {
    let f = fx();
    let st = WorldStore::new(&f.conn, &f.world);
    st.write_slice(&slice(0, vec![json!({"subjectId": "c1", "type": "character", "path": "/gold", "op": "replace", "value": 0})])).unwrap();
    for t in 1..=100 {
        st.write_slice(&slice(
            t,
            vec![json!({"subjectId": "c1", "path": "/gold", "op": "increment", "value": 1})],
        ))
        .unwrap();
    }
    let cps = || {
        f.conn
            .query_row("SELECT count(*) FROM nbook_world_checkpoint", [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap()
    };
    assert!(cps() >= 5, "writes at the end keep checkpoints: {}", cps());
    assert_eq!(
        st.state_at("c1", 100).unwrap().unwrap().attrs["gold"],
        json!(100)
    );
    assert_eq!(
        st.state_at("c1", 37).unwrap().unwrap().attrs["gold"],
        json!(37)
    );
    // Another program inserts a patch in the past, behind our back.
    let slice_id: String = f
        .conn
        .query_row("SELECT id FROM WorldSlice WHERE instant = 5", [], |r| {
            r.get(0)
        })
        .unwrap();
    f.conn
        .execute(
            "INSERT INTO WorldPatch (id, sliceId, subjectId, instant, seq, path, op, value) VALUES ('foreign', ?1, 'c1', 5, 1, '/gold', 'increment', '1000')",
            [&slice_id],
        )
        .unwrap();
    let st = WorldStore::new(&f.conn, &f.world);
    assert_eq!(
        st.state_at("c1", 100).unwrap().unwrap().attrs["gold"],
        json!(1100)
    );
    assert_eq!(
        st.state_at("c1", 4).unwrap().unwrap().attrs["gold"],
        json!(4)
    );
    // Store checkpoints that include the foreign patch...
    assert!(st.flush_checkpoints() > 0);
    let with_foreign: i64 = f
        .conn
        .query_row(
            "SELECT count(*) FROM nbook_world_checkpoint WHERE instant >= 5",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(with_foreign > 0);
    // ... then it deletes the newest patch and inserts another one at an instant those
    // checkpoints cover: same count, same (reused) rowid, but a different patch id.
    let max: i64 = f
        .conn
        .query_row("SELECT max(rowid) FROM WorldPatch", [], |r| r.get(0))
        .unwrap();
    f.conn
        .execute("DELETE FROM WorldPatch WHERE id = 'foreign'", [])
        .unwrap();
    let six: String = f
        .conn
        .query_row("SELECT id FROM WorldSlice WHERE instant = 6", [], |r| {
            r.get(0)
        })
        .unwrap();
    f.conn
        .execute(
            "INSERT INTO WorldPatch (id, sliceId, subjectId, instant, seq, path, op, value) VALUES ('again', ?1, 'c1', 6, 1, '/gold', 'increment', '50')",
            [&six],
        )
        .unwrap();
    let reused: i64 = f
        .conn
        .query_row("SELECT rowid FROM WorldPatch WHERE id = 'again'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(reused, max, "SQLite reused the rowid");
    let st = WorldStore::new(&f.conn, &f.world);
    assert_eq!(
        st.state_at("c1", 100).unwrap().unwrap().attrs["gold"],
        json!(150)
    );
    assert_eq!(
        st.state_at("c1", 5).unwrap().unwrap().attrs["gold"],
        json!(5)
    );
    st.flush_checkpoints();
    assert_eq!(
        WorldStore::new(&f.conn, &f.world)
            .state_at("c1", 100)
            .unwrap()
            .unwrap()
            .attrs["gold"],
        json!(150)
    );
}

#[test]
fn slice_listing_and_find_refs() {
    let f = fx();
    let st = WorldStore::new(&f.conn, &f.world);
    st.write_slice(&slice(1, vec![
        json!({"subjectId": "l1", "type": "location", "path": "/name", "op": "replace", "value": "A"}),
        json!({"subjectId": "c1", "type": "character", "path": "/location", "op": "replace", "value": "subject://l1"}),
        json!({"subjectId": "c2", "type": "character", "path": "/location", "op": "replace", "value": "subject://l1"}),
    ]))
    .unwrap();
    st.write_slice(&slice(
        2,
        vec![json!({"subjectId": "c2", "path": "/location", "op": "remove"})],
    ))
    .unwrap();
    st.write_slice(&slice(
        3,
        vec![json!({"subjectId": "c1", "path": "/hp", "op": "increment", "value": -1})],
    ))
    .unwrap();
    let all = st.list_slices(&SliceFilter::default()).unwrap();
    assert_eq!(all.iter().map(|s| s.instant).collect::<Vec<_>>(), [1, 2, 3]);
    let latest = st
        .list_slices(&SliceFilter {
            limit: Some(2),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(latest.iter().map(|s| s.instant).collect::<Vec<_>>(), [2, 3]);
    let c2 = st
        .list_slices(&SliceFilter {
            subject_ids: vec!["c2".into()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(c2.len(), 2);
    let both = st
        .list_slices(&SliceFilter {
            subject_ids: vec!["c1".into(), "c2".into()],
            all_subjects: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(both.len(), 1);
    assert_eq!(
        st.find_refs("l1", None, 3).unwrap(),
        vec![("c1".to_string(), "/location".to_string())]
    );
    assert_eq!(st.find_refs("l1", None, 1).unwrap().len(), 2);
    assert!(st
        .subjects(Some("dragon"))
        .unwrap_err()
        .to_string()
        .contains("unknown subject type"));
    assert_eq!(st.subjects(Some("character")).unwrap().len(), 2);
}
