use super::*;
use serde_json::json;

fn schema() -> Schema {
    crate::world::schema::tests::template()
}

fn row(i: i64, path: &str, op: &str, value: Option<Value>) -> PatchRow {
    PatchRow {
        rowid: i,
        id: format!("p{i}"),
        slice_id: format!("s{i}"),
        subject_id: "c1".into(),
        instant: i,
        seq: 0,
        path: path.into(),
        op: op.into(),
        value: value.map(|v| v.to_string()),
        summary: None,
    }
}

fn run(patches: &[(&str, &str, Option<Value>)]) -> Reduced {
    let s = schema();
    let mut r = Reduced::default();
    for (i, (path, op, v)) in patches.iter().enumerate() {
        r.apply(&s, "character", &row(i as i64, path, op, v.clone()));
    }
    r
}

fn codes(r: &Reduced) -> Vec<String> {
    r.issues.iter().map(|i| i.code.clone()).collect()
}

#[test]
fn four_ops() {
    let r = run(&[
        ("/hp", "replace", Some(json!(100))),
        ("/hp", "increment", Some(json!(-30))),
        ("/inventory", "replace", Some(json!([]))),
        ("/inventory", "append", Some(json!("lamp"))),
        ("/inventory", "append", Some(json!("rope"))),
        ("/inventory/0", "remove", None),
        ("/gold", "replace", Some(json!(1.5))),
        ("/gold", "increment", Some(json!(1))),
        ("/nickname", "replace", Some(json!("Ada"))),
        ("/nickname", "remove", None),
        ("/nickname", "remove", None),
    ]);
    assert!(r.issues.is_empty(), "{:?}", r.issues);
    assert_eq!(
        Value::Object(r.state.clone()),
        json!({"hp": 70, "inventory": ["rope"], "gold": 2.5})
    );
    assert_eq!(r.origins["hp"].patch, "p1");
}

#[test]
fn each_error_code() {
    let r = run(&[("/gold", "increment", Some(json!(5)))]);
    assert_eq!(codes(&r), ["E1"]);
    let r = run(&[
        ("/name", "replace", Some(json!("Ada"))),
        ("/name", "increment", Some(json!(1))),
    ]);
    assert_eq!(
        codes(&r),
        ["E3"],
        "increment is not allowed on a string attribute"
    );
    let r = run(&[
        ("/extra", "replace", Some(json!("x"))),
        ("/extra", "increment", Some(json!(1))),
    ]);
    assert_eq!(codes(&r), ["E1"], "an untyped text cannot be incremented");
    let r = run(&[
        ("/hp", "replace", Some(json!(3))),
        ("/hp/max", "replace", Some(json!(3))),
    ]);
    assert_eq!(codes(&r), ["E3"], "a path through a scalar");
    let r = run(&[
        ("/bag", "replace", Some(json!({"coins": 2}))),
        ("/bag/coins/x", "replace", Some(json!(1))),
    ]);
    assert_eq!(codes(&r), ["E3"], "an undeclared path through a scalar");
    let r = run(&[("/location/name", "replace", Some(json!("x")))]);
    assert_eq!(codes(&r), ["E4"]);
    let r = run(&[
        ("/friend", "replace", Some(json!("subject://c2"))),
        ("/friend/name", "replace", Some(json!("x"))),
    ]);
    assert_eq!(
        codes(&r),
        ["E4"],
        "an untyped ref value cannot be entered either"
    );
    let r = run(&[("/events", "replace", Some(json!([{"text": "x"}])))]);
    assert_eq!(codes(&r), ["E5"]);
    let r = run(&[("/inventory", "append", Some(json!("x")))]);
    assert_eq!(codes(&r), ["E1"]);
    let r = run(&[
        ("/inventory", "replace", Some(json!(["a"]))),
        ("/inventory/5", "replace", Some(json!("b"))),
    ]);
    assert_eq!(codes(&r), ["E3"]);
    let r = run(&[
        ("/", "replace", Some(json!({"hp": 3}))),
        ("/hp", "increment", Some(json!(2))),
    ]);
    assert!(r.issues.is_empty());
    assert_eq!(r.state["hp"], json!(5));
    let r = run(&[
        ("/hp", "replace", Some(json!(i64::MAX))),
        ("/hp", "increment", Some(json!(1))),
    ]);
    assert_eq!(codes(&r), ["E1"]);
}

#[test]
fn dangling_refs() {
    let s = schema();
    let r = run(&[
        ("/location", "replace", Some(json!("subject://l1"))),
        ("/faction", "replace", Some(json!("subject://l1"))),
        (
            "/inventory",
            "replace",
            Some(json!(["subject://gone", "lamp"])),
        ),
    ]);
    let mut look = |id: &str| (id == "l1").then(|| "location".to_string());
    let issues = check_refs(&r, &s, "c1", "character", &mut look);
    let msgs: Vec<&str> = issues.iter().map(|i| i.message.as_str()).collect();
    assert_eq!(issues.len(), 2, "{msgs:?}");
    assert!(msgs[0].contains("/faction") && msgs[0].contains("not a faction"));
    assert!(msgs[1].contains("/inventory/0") && msgs[1].contains("does not exist"));
    assert_eq!(issues[0].patch_id.as_deref(), Some("p1"));
}

#[test]
fn replace_creates_missing_objects_but_never_through_scalars_refs_or_lists() {
    let r = run(&[
        ("/stats/str", "replace", Some(json!(5))),
        ("/a/b/c", "replace", Some(json!(true))),
        ("/a/b/d", "replace", Some(json!(1))),
        ("/a/b/c", "remove", None),
    ]);
    assert!(r.issues.is_empty(), "{:?}", r.issues);
    assert_eq!(
        Value::Object(r.state.clone()),
        json!({"stats": {"str": 5}, "a": {"b": {"d": 1}}})
    );
    let r = run(&[
        ("/friend", "replace", Some(json!("subject://c2"))),
        ("/friend/x/y", "replace", Some(json!(1))),
        ("/inventory", "replace", Some(json!([]))),
        ("/inventory/3/name", "replace", Some(json!("x"))),
        ("/pets", "replace", Some(json!([{"name": "Rex"}]))),
        ("/pets/0/collar/colour", "replace", Some(json!("red"))),
    ]);
    assert_eq!(codes(&r), ["E4", "E3"], "{:?}", r.issues);
    assert_eq!(r.state["friend"], json!("subject://c2"));
    assert_eq!(r.state["inventory"], json!([]));
    assert_eq!(
        r.state["pets"],
        json!([{"name": "Rex", "collar": {"colour": "red"}}])
    );
    // Relative ops still need their base.
    let r = run(&[("/stats/str", "increment", Some(json!(1)))]);
    assert_eq!(codes(&r), ["E1"]);
    assert!(r.state.is_empty());
}
