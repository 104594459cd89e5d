//! World write semantics as NeuroBook's (issue 12), through the real `execute_world` tool, the
//! real QuickJS engine and a real project database: a patch that cannot apply keeps its slice
//! and raises an issue; deleting or editing a base re-evaluates what depends on it; type/name
//! on any patch of the creating slice; nested replace; embedding-text list rules; 1..100
//! patches; unknown ids and bad slice.list arguments throw; the approval preview lists the
//! error issues a write creates.

mod world_support;

use serde_json::{json, Value};
use world_support::{fixture, SEED};

/// Erina exists on 1 January with no gold.
const ERINA: &str = r#"
await world.slice.write({time: world.time.parse("2020-01-01"), title: "Erina", kind: "init", patches: [
  {subjectId: "c-erina", type: "character", name: "Erina", path: "/location", op: "remove"},
]});
return "ok";
"#;

fn codes(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list of issues: {v}"))
        .iter()
        .map(|i| i["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn out_of_order_increment_is_kept_with_e1_then_a_base_in_the_past_clears_it_with_a1() {
    let f = fixture();
    f.run(ERINA);
    // 3 January: "Erina finds 5 gold" — before anyone decided what she had.
    let v = f.run(
        r#"
        const w = await world.slice.write({time: world.time.parse("2020-01-03"), title: "Erina finds gold",
          patches: [{subjectId: "c-erina", path: "/gold", op: "increment", value: 5}]});
        const got = await world.slice.get(w.sliceId);
        const listed = (await world.slice.list({subjectIds: ["c-erina"]})).find(s => s.id === w.sliceId);
        return {id: w.sliceId, issues: w.issues, kept: got.patches.length, getIssues: got.issues,
                listIssues: listed.issues, gold: (await world.subject.get("c-erina")).gold ?? null};
        "#,
    );
    assert_eq!(codes(&v["issues"]), ["E1"], "{v}");
    let e1 = &v["issues"][0];
    assert_eq!(
        (
            e1["label"].clone(),
            e1["severity"].clone(),
            e1["sliceId"].clone(),
            e1["path"].clone()
        ),
        (
            json!("broken-relative"),
            json!("error"),
            v["id"].clone(),
            json!("/gold")
        )
    );
    assert_eq!(v["kept"], json!(1), "the slice is stored with its patch");
    assert_eq!(codes(&v["getIssues"]), ["E1"]);
    assert_eq!(codes(&v["listIssues"]), ["E1"]);
    assert_eq!(v["gold"], Value::Null, "the failing patch is skipped");
    let later = v["id"].as_str().unwrap().to_string();
    // Later the author decides: on 2 January she had 10.
    let v = f.run(&format!(
        r#"
        const w = await world.slice.write({{time: world.time.parse("2020-01-02"), title: "Her purse",
          patches: [{{subjectId: "c-erina", path: "/gold", op: "replace", value: 10}}]}});
        const got = await world.slice.get("{later}");
        return {{issues: w.issues, laterIssues: got.issues, gold: (await world.subject.get("c-erina")).gold}};
        "#
    ));
    assert_eq!(codes(&v["issues"]), ["A1"], "{v}");
    assert_eq!(v["issues"][0]["severity"], "advisory");
    assert_eq!(v["laterIssues"], json!([]), "the E1 is cleared");
    assert_eq!(v["gold"], json!(15));
}

#[test]
fn deleting_the_base_flags_the_later_increment_and_recomputes_state() {
    let f = fixture();
    f.run(ERINA);
    let ids = f.run(
        r#"
        const base = await world.slice.write({time: world.time.parse("2020-01-02"), patches: [{subjectId: "c-erina", path: "/gold", op: "replace", value: 90}]});
        const inc = await world.slice.write({time: world.time.parse("2020-01-05"), patches: [{subjectId: "c-erina", path: "/gold", op: "increment", value: -10}]});
        return {base: base.sliceId, inc: inc.sliceId, issues: [...base.issues, ...inc.issues], gold: (await world.subject.get("c-erina")).gold};
        "#,
    );
    assert_eq!(
        (ids["issues"].clone(), ids["gold"].clone()),
        (json!([]), json!(80))
    );
    let (base, inc) = (ids["base"].as_str().unwrap(), ids["inc"].as_str().unwrap());
    let v = f.run(&format!(
        r#"
        const del = await world.slice.delete("{base}");
        const after = await world.subject.get("c-erina");
        const got = await world.slice.get("{inc}");
        return {{del: del.issues, gold: after.gold ?? null, incIssues: got.issues,
                 still: (await world.subject.list("character")).map(s => s.id)}};
        "#
    ));
    assert_eq!(codes(&v["del"]), ["E1"], "{v}");
    assert_eq!(
        v["del"][0]["sliceId"],
        json!(inc),
        "the later slice is flagged"
    );
    assert_eq!(v["gold"], Value::Null, "state is recomputed at once");
    assert_eq!(codes(&v["incIssues"]), ["E1"]);
    assert_eq!(
        v["still"],
        json!(["c-erina"]),
        "the subject keeps its identity"
    );
    // Committed: a fresh script sees the same.
    let v = f.run(&format!(
        "return (await world.slice.get('{inc}')).issues.map(i => i.code);"
    ));
    assert_eq!(v, json!(["E1"]));
}

#[test]
fn editing_a_past_base_returns_a1_and_removing_it_returns_e1() {
    let f = fixture();
    f.run(SEED);
    // Arrival sets gold 10; Payday increments by 5.
    let v = f.run(
        r#"
        const arrival = (await world.slice.list({limit: 1, to: world.time.parse("2020-04-02")}))[0];
        const s = await world.slice.get(arrival.id);
        const gold = s.patches.find(p => p.subjectId === "c-ada" && p.path === "/gold");
        const edit = await world.slice.editPatches(arrival.id, [{patchId: gold.patchId, set: {value: 20}}]);
        return {issues: edit.issues, gold: (await world.subject.get("c-ada")).gold};
        "#,
    );
    assert_eq!(codes(&v["issues"]), ["A1"], "{v}");
    assert!(
        v["issues"][0]["message"]
            .as_str()
            .unwrap()
            .contains("1 later relative change"),
        "{v}"
    );
    assert_eq!(v["gold"], json!(25));
    let v = f.run(
        r#"
        const arrival = (await world.slice.list())[0];
        const s = await world.slice.get(arrival.id);
        const gold = s.patches.find(p => p.subjectId === "c-ada" && p.path === "/gold");
        const edit = await world.slice.editPatches(arrival.id, [{patchId: gold.patchId, remove: true}]);
        const payday = (await world.slice.list({limit: 1}))[0];
        return {issues: edit.issues, payday: payday.id, flagged: edit.issues.map(i => i.sliceId)};
        "#,
    );
    assert_eq!(codes(&v["issues"]), ["E1"], "{v}");
    assert_eq!(v["flagged"], json!([v["payday"].clone()]));
}

#[test]
fn path_problems_keep_the_slice_with_e3_and_e4() {
    let f = fixture();
    f.run(SEED);
    let v = f.run(
        r#"
        const w = await world.slice.write({time: world.time.parse("2020-05-01"), patches: [
          {subjectId: "c-ada", path: "/hp/max", op: "replace", value: 1},
          {subjectId: "c-ada", path: "/inventory/7", op: "replace", value: "rope"},
          {subjectId: "c-ada", path: "/location/name", op: "replace", value: "Dock"},
          {subjectId: "c-ada", path: "/allies", op: "replace", value: ["subject://c-tom"]},
          {subjectId: "c-ada", path: "/allies/0/hp", op: "replace", value: 1},
          {subjectId: "c-ada", path: "/gold", op: "replace", value: 3},
        ]});
        const ada = await world.subject.get("c-ada");
        return {codes: w.issues.map(i => [i.code, i.path]), n: (await world.slice.get(w.sliceId)).patches.length,
                hp: ada.hp, inv: ada.inventory, loc: ada.location, allies: ada.allies, gold: ada.gold};
        "#,
    );
    assert_eq!(
        v["codes"],
        json!([
            ["E3", "/hp/max"],
            ["E3", "/inventory/7"],
            ["E4", "/location/name"],
            ["E4", "/allies/0/hp"]
        ]),
        "{v}"
    );
    assert_eq!(v["n"], json!(6));
    assert_eq!(
        (
            v["hp"].clone(),
            v["inv"].clone(),
            v["loc"].clone(),
            v["allies"].clone(),
            v["gold"].clone()
        ),
        (
            json!(70),
            json!(["lamp"]),
            json!("subject://l-harbour"),
            json!(["subject://c-tom"]),
            json!(3)
        ),
        "the failing patches are skipped, the others apply"
    );
}

#[test]
fn type_and_name_may_sit_on_any_patch_of_the_creating_slice() {
    let f = fixture();
    f.run(SEED);
    let v = f.run(
        r#"
        await world.slice.write({time: world.time.parse("2020-05-01"), patches: [
          {subjectId: "c-mira", path: "/age", op: "replace", value: 30},
          {subjectId: "c-mira", path: "/hp", op: "increment", value: -1, type: "character"},
          {subjectId: "c-mira", path: "/skills", op: "append", value: "sailing", name: "Mira"},
        ]});
        // On a subject that exists, type and name are ignored: no change, no error.
        const again = await world.slice.write({time: world.time.parse("2020-05-02"), patches: [
          {subjectId: "c-mira", path: "/age", op: "increment", value: 1, type: "location", name: "Someone else"},
        ]});
        const mira = (await world.subject.list("character")).find(s => s.id === "c-mira");
        return {mira, state: await world.subject.get("c-mira"), issues: again.issues};
        "#,
    );
    assert_eq!(
        v["mira"],
        json!({"id": "c-mira", "type": "character", "name": "Mira"})
    );
    assert_eq!(
        (
            v["state"]["age"].clone(),
            v["state"]["hp"].clone(),
            v["state"]["skills"].clone()
        ),
        (json!(31), json!(99), json!(["sailing"]))
    );
    assert_eq!(v["issues"], json!([]));
    // Still refused: no type anywhere, an undeclared type, two types.
    let before = f.counts();
    for (code, want) in [
        ("await world.slice.write({time: world.time.parse('2020-06-01'), patches: [{subjectId: 'x', path: '/a', op: 'replace', value: 1}, {subjectId: 'x', path: '/b', op: 'replace', value: 1}]});", "there is no subject \"x\""),
        ("await world.slice.write({time: world.time.parse('2020-06-01'), patches: [{subjectId: 'x', path: '/a', op: 'replace', value: 1}, {subjectId: 'x', type: 'dragon', path: '/b', op: 'replace', value: 1}]});", "unknown subject type \"dragon\""),
        ("await world.slice.write({time: world.time.parse('2020-06-01'), patches: [{subjectId: 'x', type: 'item', path: '/a', op: 'replace', value: 1}, {subjectId: 'x', type: 'faction', path: '/b', op: 'replace', value: 1}]});", "a subject has one type"),
    ] {
        let e = f.fail(code);
        assert!(e.contains(want) && e.contains("Nothing was written"), "{code}\n→ {e}");
    }
    assert_eq!(f.counts(), before);
}

#[test]
fn replace_creates_missing_nested_objects_and_remove_deletes_one_key() {
    let f = fixture();
    f.run(SEED);
    let v = f.run(
        r#"
        await world.slice.write({time: world.time.parse("2020-05-01"), patches: [
          {subjectId: "c-tom", path: "/stats/str", op: "replace", value: 5},
          {subjectId: "c-tom", path: "/stats/dex", op: "replace", value: 2},
          {subjectId: "c-tom", path: "/home/address/street", op: "replace", value: "Quay 3"},
        ]});
        const mid = await world.subject.get("c-tom");
        const w = await world.slice.write({time: world.time.parse("2020-05-02"), patches: [
          {subjectId: "c-tom", path: "/stats/dex", op: "remove"},
        ]});
        return {mid: [mid.stats, mid.home], end: (await world.subject.get("c-tom")).stats, issues: w.issues};
        "#,
    );
    assert_eq!(
        v,
        json!({"mid": [{"str": 5, "dex": 2}, {"address": {"street": "Quay 3"}}], "end": {"str": 5}, "issues": []})
    );
}

#[test]
fn embedding_text_lists_take_only_append_of_text() {
    let f = fixture();
    f.run(SEED);
    let before = f.counts();
    let w = |patch: &str| {
        format!("await world.slice.write({{time: world.time.parse('2020-05-01'), patches: [{patch}]}});")
    };
    for (patch, want) in [
        ("{subjectId: 'c-ada', path: '/events', op: 'append', value: 'storm'}", "items {text"),
        ("{subjectId: 'c-ada', path: '/events', op: 'append', value: {text: '  '}}", "`text` is empty"),
        ("{subjectId: 'c-ada', path: '/events', op: 'append', value: {text: 'storm', vector: [0.1, 0.2]}}", "do not write `vector`"),
        ("{subjectId: 'c-ada', path: '/events', op: 'append', value: {text: 'storm', mood: 'grim'}}", "unknown field \"mood\""),
        ("{subjectId: 'c-ada', path: '/events/0', op: 'replace', value: {text: 'x'}}", "embedding-text list"),
        ("{subjectId: 'c-ada', path: '/events/0', op: 'remove'}", "embedding-text list"),
        ("{subjectId: 'c-ada', path: '/events/0/text', op: 'replace', value: 'x'}", "embedding-text list"),
        ("{subjectId: 'c-ada', path: '/events', op: 'replace', value: [{text: 'x'}]}", "(E5)"),
    ] {
        let e = f.fail(&w(patch));
        assert!(e.contains(want) && e.contains("Nothing was written"), "{patch}\n→ {e}");
    }
    assert_eq!(f.counts(), before, "nothing was written");
    let v = f.run(&format!(
        "{}\nreturn (await world.subject.get('c-ada')).events;",
        w("{subjectId: 'c-ada', path: '/events', op: 'append', value: {text: 'She saw the storm'}}")
    ));
    assert_eq!(v, json!([{"text": "She saw the storm"}]));
}

#[test]
fn a_slice_holds_one_to_a_hundred_patches() {
    let f = fixture();
    f.run(SEED);
    let before = f.counts();
    let e = f.fail("await world.slice.write({time: world.time.parse('2020-05-01'), patches: []});");
    assert!(e.contains("1 to 100 patches; this one has none"), "{e}");
    let many = "await world.slice.write({time: world.time.parse('2020-05-01'), patches: Array.from({length: 101}, (_, i) => ({subjectId: 'c-ada', path: '/k' + i, op: 'replace', value: i}))});";
    let e = f.fail(many);
    assert!(e.contains("this one has 101"), "{e}");
    // An edit that would leave a slice empty is refused too (delete it instead).
    let e = f.fail(
        "const s = (await world.slice.list({limit: 1}))[0]; const g = await world.slice.get(s.id);
         await world.slice.editPatches(s.id, g.patches.map(p => ({patchId: p.patchId, remove: true})));",
    );
    assert!(e.contains("world.slice.delete"), "{e}");
    assert_eq!(f.counts(), before);
    let hundred = many.replace("101", "100");
    f.run(&hundred);
    assert_eq!(f.counts().2, before.2 + 100);
}

#[test]
fn unknown_ids_throw() {
    let f = fixture();
    f.run(SEED);
    let before = f.counts();
    for (code, want) in [
        ("await world.slice.get('no-such-slice');", "there is no slice \"no-such-slice\""),
        ("await world.slice.delete('no-such-slice');", "there is no slice \"no-such-slice\""),
        ("await world.slice.editPatches('no-such-slice', []);", "there is no slice \"no-such-slice\""),
        ("const s = (await world.slice.list())[0]; await world.slice.editPatches(s.id, [{patchId: 'nope', remove: true}]);", "patch \"nope\" is not in slice"),
    ] {
        let e = f.fail(code);
        assert!(e.contains(want) && e.contains("Nothing was written"), "{code}\n→ {e}");
    }
    assert_eq!(f.counts(), before);
}

#[test]
fn slice_list_checks_its_arguments() {
    let f = fixture();
    f.run(SEED);
    for (opts, want) in [
        ("{subjectMode: 'any'}", "subjectMode needs subjectIds"),
        (
            "{subjectIds: [], subjectMode: 'all'}",
            "subjectMode needs subjectIds",
        ),
        (
            "{subjectIds: ['c-ada'], subjectMode: 'most'}",
            "subjectMode is \"any\" or \"all\", not \"most\"",
        ),
        (
            "{subjectIds: ['c-ada'], subjectMode: 1}",
            "subjectMode is \"any\" or \"all\"",
        ),
        (
            "{from: '2020-04-09', to: '2020-04-01'}",
            "from (2020-04-09 00:00) is after to (2020-04-01 00:00)",
        ),
        (
            "{subjectIds: ['ghost', 'nobody']}",
            "subjectIds names no known subject (ghost, nobody)",
        ),
        ("{subjectIds: 'c-ada'}", "subjectIds must be a list"),
        ("{limit: 0}", "limit must be a positive integer, not 0"),
        ("{limit: -3}", "limit must be a positive integer"),
        ("{limit: 2.5}", "limit must be a positive integer, not 2.5"),
        (
            "{limit: '5'}",
            "limit must be a positive integer, not \"5\"",
        ),
    ] {
        let e = f.fail(&format!("await world.slice.list({opts});"));
        assert!(e.contains(want), "{opts}\n→ {e}");
    }
    // Valid forms still work; one unknown id among known ones is fine.
    let v = f.run("return [(await world.slice.list({subjectIds: ['c-tom', 'ghost'], subjectMode: 'any'})).length, (await world.slice.list({limit: 5000})).length];");
    assert_eq!(v, json!([1, 3]));
}

#[test]
fn the_approval_preview_lists_the_error_issues_a_write_creates_first() {
    let f = fixture();
    f.run(SEED);
    let before = f.counts();
    let (out, held) = f
        .stage(
            "world.engine",
            r#"
            await world.slice.write({time: world.time.parse("2020-05-01"), title: "Broken", patches: [
              {subjectId: "c-tom", path: "/silver", op: "increment", value: 3},
              {subjectId: "c-tom", path: "/location/name", op: "replace", value: "x"},
              {subjectId: "c-tom", path: "/hp", op: "increment", value: -5},
            ]});
            return "written";
            "#,
            false,
        )
        .unwrap();
    assert!(held, "a write waits for approval");
    assert!(out.content.contains("2 error issues"), "{}", out.content);
    let preview = out.details.unwrap();
    let records = preview["body"]["changes"].as_array().unwrap().clone();
    assert_eq!(records[0]["action"], "issues", "{records:?}");
    let fields: Vec<String> = records[0]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["field"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        fields,
        [
            "E1 broken-relative c-tom /silver",
            "E4 cross-ref c-tom /location/name"
        ]
    );
    let state_at = records
        .iter()
        .position(|r| r["action"] == "state")
        .expect("a state diff");
    assert!(state_at > 0, "the issues come above the state diff");
    assert_eq!(f.counts(), before, "rejected: nothing was written");

    // Deleting a base: the issue it creates on a later slice is in the preview too.
    let (out, _) = f
        .stage(
            "world.engine",
            "const arrival = (await world.slice.list())[0]; await world.slice.delete(arrival.id);",
            false,
        )
        .unwrap();
    let preview = out.details.unwrap();
    let first = &preview["body"]["changes"][0];
    assert_eq!(first["action"], "issues", "{preview}");
    let fields: Vec<&str> = first["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["field"].as_str().unwrap())
        .collect();
    assert!(
        fields.contains(&"E1 broken-relative c-ada /gold"),
        "{fields:?}"
    );

    // A clean write has no issues record.
    let (out, _) = f
        .stage(
            "world.engine",
            "await world.slice.write({time: world.time.parse('2020-05-01'), patches: [{subjectId: 'c-tom', path: '/gold', op: 'replace', value: 1}]});",
            false,
        )
        .unwrap();
    let preview = out.details.unwrap();
    assert!(preview["body"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["action"] != "issues"));
    assert!(!out.content.contains("error issue"));
}

#[test]
fn a_neurobook_database_with_flagged_slices_reads_back_with_the_same_issues() {
    let f = fixture();
    f.run(SEED);
    // Rows as NeuroBook writes them: a kept slice whose increment has no base, and one whose
    // path goes through a reference.
    f.conn()
        .execute_batch(
            "INSERT INTO WorldSlice (id, instant, title) VALUES ('nb-s1', 63721000000, 'Imported');
             INSERT INTO WorldPatch (id, sliceId, subjectId, instant, seq, path, op, value) VALUES
               ('nb-p1', 'nb-s1', 'c-tom', 63721000000, 0, '/silver', 'increment', '3'),
               ('nb-p2', 'nb-s1', 'c-tom', 63721000000, 1, '/location/name', 'replace', '\"x\"'),
               ('nb-p3', 'nb-s1', 'c-tom', 63721000000, 2, '/gold', 'replace', '4');",
        )
        .unwrap();
    let v = f.run(
        r#"
        const got = await world.slice.get("nb-s1");
        const listed = (await world.slice.list({subjectIds: ["c-tom"]})).find(s => s.id === "nb-s1");
        const tom = await world.subject.get("c-tom");
        return {get: got.issues.map(i => [i.code, i.patchId]), list: listed.issues.map(i => [i.code, i.patchId]), gold: tom.gold};
        "#,
    );
    assert_eq!(
        v,
        json!({"get": [["E1", "nb-p1"], ["E4", "nb-p2"]], "list": [["E1", "nb-p1"], ["E4", "nb-p2"]], "gold": 4})
    );
}
