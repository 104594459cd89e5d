//! The World pane's queries on a real project: timeline, density, types, state at the cursor,
//! track, diff, issues with explanations, and the calendar.

mod world_support;

use nbook::world::calendar::Zoom;
use nbook::world::query::WorldView;
use serde_json::json;
use world_support::{fixture, SEED};

#[test]
fn pane_queries() {
    let f = fixture();
    f.run(SEED);
    let v = WorldView::open(&f.root).unwrap();
    let (first, last) = v.bounds().unwrap().unwrap();
    assert_eq!(
        (v.format_time(first).as_str(), v.format_time(last).as_str()),
        ("2020-04-01 00:00", "2020-04-09 00:00")
    );
    let tl = v.timeline(first, last, 100).unwrap();
    assert_eq!(
        tl.iter().map(|e| e.title.as_str()).collect::<Vec<_>>(),
        ["Arrival", "The storm", "Payday"]
    );
    assert_eq!(tl[1].time, "2020-04-05 12:00");
    assert_eq!(v.timeline(first, last, 1).unwrap().len(), 1);
    let days = v.density(first, last, Zoom::Day, 100).unwrap();
    assert_eq!(days.len(), 9);
    assert_eq!(days.iter().map(|d| d.1).sum::<i64>(), 3);
    let months = v.density(first, last, Zoom::Month, 100).unwrap();
    assert_eq!(months, vec![(v.parse_time("2020-04-01").unwrap(), 3)]);
    assert_eq!(
        v.step(v.parse_time("2020-01-31").unwrap(), Zoom::Month, 1),
        v.parse_time("2020-02-29").unwrap()
    );
    let types = v.subject_types().unwrap();
    assert!(types.contains(&("character".into(), 2)) && types.contains(&("faction".into(), 0)));
    assert_eq!(
        v.subjects(Some("character"))
            .unwrap()
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>(),
        ["c-ada", "c-tom"]
    );
    let mid = v.parse_time("2020-04-06").unwrap();
    let s = v.state_at("c-ada", mid).unwrap().unwrap();
    assert_eq!(
        (s.attrs["hp"].clone(), s.attrs["gold"].clone()),
        (json!(70), json!(10))
    );
    assert!(v.state_at("nobody", mid).unwrap().is_none());
    let track = v.track("c-ada", first, last, 10).unwrap();
    assert_eq!(
        track
            .iter()
            .map(|t| (t.title.as_str(), t.patches.len()))
            .collect::<Vec<_>>(),
        [("Arrival", 7), ("The storm", 2), ("Payday", 1)]
    );
    assert_eq!(
        track[1].patches[0].summary.as_deref(),
        Some("hurt in the storm")
    );
    let d = v.diff("c-ada", first, last).unwrap();
    let attrs: Vec<&str> = d.iter().map(|a| a.attr.as_str()).collect();
    assert_eq!(attrs, ["/gold", "/hp", "/inventory"]);
    assert_eq!(
        (d[0].before.clone(), d[0].after.clone()),
        (Some(json!(10)), Some(json!(15)))
    );
    assert!(v.diff("nobody", first, last).is_err());
    assert!(v
        .parse_time("next Tuesday")
        .unwrap_err()
        .to_string()
        .contains("write it like"));
}

#[test]
fn issues_come_with_explanations() {
    let f = fixture();
    f.run(SEED);
    // NeuroBook (or a raw SQL edit) leaves an increment without a base and a dangling reference.
    let c = f.conn();
    c.execute_batch(
        "INSERT INTO WorldSlice (id, instant, title) VALUES ('s-x', 63721000000, 'Imported');
         INSERT INTO WorldPatch (id, sliceId, subjectId, instant, seq, path, op, value) VALUES
           ('p-1', 's-x', 'c-tom', 63721000000, 0, '/silver', 'increment', '3'),
           ('p-2', 's-x', 'c-tom', 63721000000, 1, '/faction', 'replace', '\"subject://f-none\"'),
           ('p-3', 's-x', 'c-tom', 63721000000, 2, '/location/name', 'replace', '\"x\"'),
           ('p-4', 's-x', 'c-tom', 63721000000, 3, '/events', 'replace', '[{\"text\": \"x\"}]'),
           ('p-5', 's-x', 'c-tom', 63721000000, 4, '/name', 'increment', '1');",
    )
    .unwrap();
    let v = WorldView::open(&f.root).unwrap();
    let issues = v.all_issues(63721000000, 100).unwrap();
    let mut codes: Vec<&str> = issues.iter().map(|i| i.code.as_str()).collect();
    codes.sort();
    assert_eq!(codes, ["E1", "E2", "E3", "E4", "E5"]);
    for i in &issues {
        assert_eq!(i.subject_id, "c-tom");
        assert!(
            !i.title.is_empty()
                && !i.explanation.what_happened.is_empty()
                && !i.explanation.suggested_action.is_empty()
        );
        assert_eq!(i.slice_id.as_deref(), Some("s-x"));
    }
    let e2 = issues.iter().find(|i| i.code == "E2").unwrap();
    assert!(
        e2.message.contains("subject://f-none") && e2.message.contains("does not exist"),
        "{}",
        e2.message
    );
    // Before the import there were none.
    assert!(v.all_issues(63720000000, 100).unwrap().is_empty());
    // The script API reports them too.
    let out = f
        .stage(
            "writer",
            "return (await world.subject.get('c-tom')).hp",
            false,
        )
        .unwrap()
        .0;
    assert!(
        out.content.contains("\"code\":\"E1\"") && out.content.contains("broken-relative"),
        "{}",
        out.content
    );
}
