//! execute_world through the real tool and QuickJS: the API, and every kind of bad input —
//! each a clear error, with nothing written.

mod world_support;

use std::time::{Duration, Instant};

use serde_json::json;
use world_support::{fixture, SEED};

#[test]
fn reads_states_at_any_time_with_deref() {
    let f = fixture();
    assert_eq!(f.run(SEED), json!("seeded"));
    let v = f.run(
        r#"
        const now = world.time.now();
        const ada = await world.subject.get("c-ada");
        const before = await world.subject.get("c-ada", {at: "2020-04-02"});
        const deref = await world.subject.get("c-ada", {deref: true});
        const [tom, ghost] = await world.subject.gets(["c-tom", "ghost"]);
        return {
          now: world.time.format(now), hp: ada.hp, gold: ada.gold, inv: ada.inventory, hpBefore: before.hp,
          where: deref.location.name, ref: deref.location.__ref, tom: tom.hp, ghost,
          chars: (await world.subject.list("character")).map(s => s.id),
          refs: await world.subject.findRefs("l-harbour"),
          isBig: typeof now,
        };
        "#,
    );
    assert_eq!(
        v,
        json!({"now": "2020-04-09 00:00", "hp": 70, "gold": 15, "inv": ["lamp"], "hpBefore": 100,
               "where": "Harbour", "ref": "subject://l-harbour", "tom": 100, "ghost": null,
               "chars": ["c-ada", "c-tom"],
               "refs": [{"subjectId": "c-ada", "attr": "/location"}, {"subjectId": "c-tom", "attr": "/location"}],
               "isBig": "bigint"})
    );
    let v = f.run(
        r#"
        const all = await world.slice.list();
        const ada = await world.slice.list({subjectIds: ["c-ada"], from: "2020-04-02", withPatches: true});
        const latest = await world.slice.list({limit: 1});
        const one = await world.slice.get(all[1].id);
        return {titles: all.map(s => s.title), ada: ada.map(s => [s.title, s.patches.length]), latest: latest[0].title,
                prev: world.time.format(one.previousInstant), kind: all[0].kind, n: one.patchCount, issues: one.issues};
        "#,
    );
    assert_eq!(
        v,
        json!({"titles": ["Arrival", "The storm", "Payday"], "ada": [["The storm", 2], ["Payday", 1]], "latest": "Payday",
               "prev": "2020-04-01 00:00", "kind": "init", "n": 2, "issues": []})
    );
}

#[test]
fn console_output_is_captured_and_results_are_json() {
    let f = fixture();
    let (out, held) = f
        .stage(
            "writer",
            "console.log('hello', {a: 1}, 2n); console.warn('careful'); return {big: 5n};",
            false,
        )
        .unwrap();
    assert!(!held, "a read-only script never waits for approval");
    assert!(
        out.content.contains("hello {\"a\":1} 2n") && out.content.contains("[warn] careful"),
        "{}",
        out.content
    );
    assert_eq!(out.details.unwrap()["data"], json!({"big": "5"}));
    let (out, _) = f.stage("writer", "let x = 1;", false).unwrap();
    assert_eq!(out.content, "done");
}

#[test]
fn read_only_profiles_have_no_write_functions() {
    let f = fixture();
    f.run(SEED);
    let (out, held) = f
        .stage("writer", "return [typeof world.slice.write, typeof world.slice.editPatches, typeof world.slice.delete, typeof world.slice.list];", false)
        .unwrap();
    assert!(!held);
    assert_eq!(
        out.details.unwrap()["data"],
        json!(["undefined", "undefined", "undefined", "function"])
    );
    let e = f
        .stage("writer", "world.slice.write = 1; return 1", false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("not extensible"),
        "the API object is frozen: {e}"
    );
    let e = f
        .stage("researcher", "return 1", false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no world access"), "{e}");
}

#[test]
fn bad_input_is_a_clear_error_and_writes_nothing() {
    let f = fixture();
    f.run(SEED);
    let before = f.counts();
    let cases: &[(&str, &str)] = &[
        ("return 1 +;", "SyntaxError"),
        ("const a = 1;\nconst b = 2;\nnull.boom;", "TypeError"),
        ("await world.slice.write({time: world.time.parse('2020-05-01'), patches: [{subjectId: 'x', type: 'dragon', path: '/a', op: 'replace', value: 1}]});", "unknown subject type \"dragon\""),
        ("await world.slice.write({time: world.time.parse('2020-05-01'), patches: [{subjectId: 'c-ada', path: '/events/0', op: 'replace', value: {text: 'x'}}]});", "embedding-text list"),
        ("await world.slice.write({time: world.time.parse('2020-05-01'), patches: [{subjectId: 'c-ada', path: '/gold', op: 'increment', value: 'lots'}]});", "finite number"),
        ("await world.slice.write({time: world.time.parse('2020-05-01'), patches: [{subjectId: 'c-ada', path: '/name', op: 'increment', value: 1}]});", "increment is not allowed"),
        ("await world.slice.write({time: world.time.parse('2020-04-05 12:00'), patches: [{subjectId: 'c-ada', path: '/gold', op: 'increment', value: 1}]});", "already holds slice"),
        ("world.time.parse('the day after the storm');", "cannot read \"the day after the storm\" as a date"),
        ("await world.slice.write({time: '2020-02-30', patches: []});", "day 30"),
        ("return 'x'.repeat(20000);", "more than the 10240 allowed"),
        ("await world.subject.list('dragon');", "unknown subject type \"dragon\""),
        ("const s = await world.slice.list({subjectMode: 'all'});", "subjectMode needs subjectIds"),
    ];
    for (code, want) in cases {
        let e = f.fail(code);
        assert!(e.contains(want), "{code}\n→ {e}");
        assert!(e.contains("Nothing was written"), "{e}");
    }
    // Line numbers are the script's own.
    assert!(f
        .fail("const a = 1;\nconst b = 2;\nnull.boom;")
        .contains("(line 3)"));
    assert!(f.fail("\n\nlet x = ;").contains("(line 3)"));
    assert!(f
        .fail("throw new Error('no such harbour');")
        .contains("Error: no such harbour (line 1)"));
    // A throw after a successful write undoes the write too.
    let e = f.fail("await world.slice.write({time: world.time.parse('2020-06-01'), patches: [{subjectId: 'c-ada', path: '/gold', op: 'increment', value: 1}]});\nthrow new Error('changed my mind');");
    assert!(e.contains("changed my mind (line 2)"), "{e}");
    assert_eq!(
        f.counts(),
        before,
        "nothing was written by any failing script"
    );
}

#[test]
fn runaway_loops_stop_in_time_and_allocation_fails_cleanly() {
    let f = fixture();
    f.run(SEED);
    let before = f.counts();
    let t = Instant::now();
    let e = f
        .stage("writer", "let i = 0; while (true) { i++; }", false)
        .unwrap_err()
        .to_string();
    let took = t.elapsed();
    assert!(e.contains("5 s limit") && e.contains("stopped"), "{e}");
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(7),
        "{took:?}"
    );
    // A loop that catches everything is still stopped.
    let t = Instant::now();
    let e = f
        .stage(
            "writer",
            "for (;;) { try { while (true) {} } catch (e) {} }",
            false,
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("stopped") && t.elapsed() < Duration::from_secs(7),
        "{e}"
    );
    let e = f
        .stage(
            "writer",
            "const a = []; while (true) a.push(new Array(100000).fill(7));",
            false,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory"), "{e}");
    let e = f
        .stage("writer", "let s = 'x'; while (true) s = s + s;", false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory") || e.contains("too long"), "{e}");
    let e = f
        .stage(
            "writer",
            "function f(n) { return f(n + 1) + 1; } f(0);",
            false,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("stack"), "{e}");
    // The engine keeps working afterwards.
    assert_eq!(
        f.run("return (await world.subject.get('c-ada')).gold;"),
        json!(15)
    );
    assert_eq!(f.counts(), before);
}

#[test]
fn no_file_network_or_process_access() {
    let f = fixture();
    let v = f.run("return [typeof require, typeof process, typeof fetch, typeof std, typeof os, typeof Bun, typeof XMLHttpRequest];");
    assert_eq!(
        v,
        json!([
            "undefined",
            "undefined",
            "undefined",
            "undefined",
            "undefined",
            "undefined",
            "undefined"
        ])
    );
    let e = f.fail("const m = await import('os'); return 1;");
    assert!(e.contains("Error"), "{e}");
    // Math.random is deterministic.
    assert_eq!(
        f.run("return Math.random();"),
        f.run("return Math.random();")
    );
}

#[test]
fn writes_edits_and_deletes_through_scripts() {
    let f = fixture();
    f.run(SEED);
    let v = f.run(
        r#"
        const storm = (await world.slice.list({subjectIds: ["c-ada"]}))[1];
        const s = await world.slice.get(storm.id);
        const hp = s.patches.find(p => p.path === "/hp");
        const edited = await world.slice.editPatches(storm.id, [{patchId: hp.patchId, set: {value: -50}}, {add: {subjectId: "c-tom", path: "/hp", op: "increment", value: -1}}], {title: "The great storm"});
        const back = await world.slice.get(storm.id);
        const early = await world.slice.write({time: world.time.parse("2020-04-03"), title: "Found gold", patches: [{subjectId: "c-ada", path: "/gold", op: "replace", value: 100}]});
        const now = await world.subject.get("c-ada");
        return {title: back.title, n: back.patches.length, hp: now.hp, tom: (await world.subject.get("c-tom")).hp,
                gold: now.gold, advisories: early.issues.map(i => i.code), sameId: edited.sliceId === storm.id};
        "#,
    );
    assert_eq!(
        v,
        json!({"title": "The great storm", "n": 3, "hp": 50, "tom": 99, "gold": 105, "advisories": ["A1"], "sameId": true})
    );
    let v = f.run(
        r#"
        const payday = (await world.slice.list({limit: 1}))[0];
        const del = await world.slice.delete(payday.id);
        return {left: (await world.slice.list()).length, gold: (await world.subject.get("c-ada")).gold, issues: del.issues};
        "#,
    );
    assert_eq!(v, json!({"left": 3, "gold": 100, "issues": []}));
}

#[test]
fn writes_behind_the_engines_back_are_seen() {
    let f = fixture();
    f.run(SEED);
    let many = (0..40)
        .map(|i| format!("await world.slice.write({{time: world.time.parse('2020-05-01') + {i}n * 60n, patches: [{{subjectId: 'c-ada', path: '/gold', op: 'increment', value: 1}}]}});"))
        .collect::<Vec<_>>()
        .join("\n");
    f.run(&many);
    assert_eq!(
        f.run("return (await world.subject.get('c-ada')).gold;"),
        json!(55)
    );
    let cps: i64 = f
        .conn()
        .query_row(
            "SELECT count(*) FROM nbook_world_checkpoint WHERE subjectId = 'c-ada'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(cps > 0, "checkpoints exist");
    // NeuroBook (or anyone) inserts a patch into an old slice with raw SQL.
    let c = f.conn();
    let storm: String = c
        .query_row(
            "SELECT id FROM WorldSlice WHERE title = 'The storm'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    c.execute(
        "INSERT INTO WorldPatch (id, sliceId, subjectId, instant, seq, path, op, value) SELECT 'nb-1', id, 'c-ada', instant, 9, '/gold', 'increment', '1000' FROM WorldSlice WHERE id = ?1",
        [&storm],
    )
    .unwrap();
    assert_eq!(
        f.run("return (await world.subject.get('c-ada')).gold;"),
        json!(1055)
    );
    c.execute("DELETE FROM WorldPatch WHERE id = 'nb-1'", [])
        .unwrap();
    assert_eq!(
        f.run("return (await world.subject.get('c-ada')).gold;"),
        json!(55)
    );
}

#[test]
fn the_example_in_the_project_template_runs() {
    let f = fixture();
    let doc = std::fs::read_to_string(f.root.join("world-engine/index.md")).unwrap();
    let code = doc
        .split("```js")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .unwrap();
    let v = f.run(code);
    assert_eq!(
        (v["hp"].clone(), v["location"]["locationType"].clone()),
        (json!(70), json!("port"))
    );
}

// ---------------------------------------------------------------------------------------------
// The deadline bounds everything a script causes (issue 11 item 2). These run the sandbox layer
// the tool runs, on the fixture's real database, with a short limit so they take well under a
// second each; the failing run is given back the way the tool does (rolled back).

use nbook::world::sandbox::{self, Access, Options};

/// The embedding service these runs go without.
fn no_embeddings() -> nbook::net::embed::EmbedError {
    nbook::net::embed::EmbedError::NotConfigured { user: "test" }
}

const LIMIT: Duration = Duration::from_millis(300);
/// How far past the limit a stopped script may end.
const MARGIN: Duration = Duration::from_millis(700);

/// Run `code` with `access`, LIMIT and `memory`; its data or error, and how long it took.
fn limited(
    f: &world_support::Fx,
    code: &str,
    access: Access,
    memory: usize,
) -> (Result<serde_json::Value, String>, Duration) {
    let world = nbook::world::pool::world(&f.root).unwrap();
    let conn = f.conn();
    conn.execute_batch("BEGIN DEFERRED").unwrap();
    let mut opts = Options::for_access(access);
    opts.time_limit = LIMIT;
    opts.memory_limit = memory;
    let t = Instant::now();
    let (conn, r) = sandbox::run(conn, &world, code, &opts, Err(no_embeddings()));
    let took = t.elapsed();
    nbook::world::pool::give(&f.db(), conn);
    (r.map(|o| o.data).map_err(|e| e.to_string()), took)
}

/// `code` is stopped by the time limit, within the margin.
fn stops_in_time(f: &world_support::Fx, code: &str, access: Access) -> String {
    let (r, took) = limited(f, code, access, 64 << 20);
    let e = r.expect_err(code);
    assert!(
        e.contains("300 ms limit") && e.contains("stopped"),
        "{code}: {e}"
    );
    assert!(took < LIMIT + MARGIN, "{code}: took {took:?}");
    e
}

/// Another connection can write (and the failed script wrote nothing).
fn database_is_free(f: &world_support::Fx) {
    let c = f.conn();
    c.busy_timeout(Duration::from_millis(50)).unwrap();
    c.execute_batch(
        "BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS probe(x); INSERT INTO probe VALUES (1); COMMIT;",
    )
    .expect("the database is not locked");
}

#[test]
fn a_microtask_flood_is_stopped_at_the_deadline() {
    let f = fixture();
    f.run(SEED);
    let before = f.counts();
    // The script from the report, and the same with one job at a time.
    stops_in_time(
        &f,
        "function l(){queueMicrotask(l);queueMicrotask(l)} l(); await new Promise(()=>{})",
        Access::Read,
    );
    stops_in_time(
        &f,
        "function l(){queueMicrotask(l)} l(); await new Promise(()=>{})",
        Access::Read,
    );
    // A writer that wrote a slice before flooding holds the write lock while it runs: the
    // deadline ends it, the write is rolled back and the database is free again.
    stops_in_time(
        &f,
        r#"await world.slice.write({time: world.time.parse("2020-04-20"), title: "x", patches: [{subjectId: "c-ada", path: "/gold", op: "replace", value: 1}]});
        function l(){queueMicrotask(l);queueMicrotask(l)} l(); await new Promise(()=>{})"#,
        Access::Write,
    );
    database_is_free(&f);
    assert_eq!(f.counts(), before);
}

#[test]
fn promise_chains_and_async_loops_are_stopped_at_the_deadline() {
    let f = fixture();
    f.run(SEED);
    for code in [
        "function l(){ return Promise.resolve().then(l) } l(); await new Promise(()=>{})",
        "function l(){ Promise.resolve().then(l); Promise.resolve().then(l) } l(); await new Promise(()=>{})",
        "while (true) { await Promise.resolve(); }",
        "for (;;) { try { await null; } catch (e) {} }",
        "async function spin(){ for (;;) await null } spin(); spin(); await new Promise(()=>{})",
        // Rejections caught and rethrown forever.
        "let p = Promise.reject(1); for (;;) { p = p.catch(() => { throw 2; }); await p.catch(() => 0); }",
        // A thenable that resolves to another thenable, forever.
        "const t = () => ({ then(r) { r(t()); } }); await t();",
    ] {
        stops_in_time(&f, code, Access::Read);
    }
    database_is_free(&f);
}

#[test]
fn a_promise_that_can_never_settle_is_reported_at_once() {
    let f = fixture();
    for code in [
        "await new Promise(() => {});",
        "await Promise.all([world.subject.list(), new Promise(() => {})]);",
        "let resolve; const p = new Promise((r) => { resolve = r; }); await p;",
    ] {
        let (r, took) = limited(&f, code, Access::Read, 64 << 20);
        let e = r.expect_err(code);
        assert!(
            e.contains("the script's promise never settled"),
            "{code}: {e}"
        );
        assert!(took < LIMIT, "{code}: {took:?}");
    }
}

#[test]
fn a_host_call_flood_is_stopped_at_the_deadline() {
    let f = fixture();
    f.run(SEED);
    for code in [
        // Synchronous calls in a loop that swallows every error.
        "for (;;) { try { world.time.now(); world.time.parse('2020-04-12'); } catch (e) {} }",
        // Awaited calls: each iteration goes through the job queue.
        "for (;;) { try { await world.subject.list(); await world.subject.get('c-ada', {deref: true}); } catch (e) {} }",
        // Calls made from microtasks.
        "function l(){ try { world.time.now(); } catch (e) {} queueMicrotask(l); queueMicrotask(l) } l(); await new Promise(()=>{})",
    ] {
        stops_in_time(&f, code, Access::Read);
    }
    database_is_free(&f);
}

#[test]
fn a_growing_job_queue_hits_the_memory_cap_not_the_machine() {
    let f = fixture();
    // Each job queues two with a payload: the queue doubles until the 8 MiB heap is full; the
    // script then ends at the deadline (jobs that cannot allocate fail), never above the cap.
    let (r, took) = limited(
        &f,
        "const keep = []; function l(){ keep.push('x'.repeat(1000)); queueMicrotask(l); queueMicrotask(l) } l(); await new Promise(()=>{})",
        Access::Read,
        8 << 20,
    );
    let e = r.unwrap_err();
    // Depending on the machine's speed the cap is reached first (the jobs that cannot allocate
    // fail, the queue empties and the awaited promise can never settle) or the deadline is.
    assert!(
        e.contains("stopped") || e.contains("memory") || e.contains("never settled"),
        "{e}"
    );
    assert!(took < LIMIT + MARGIN, "{took:?}");
    // The engine keeps working afterwards.
    let (r, _) = limited(&f, "return 1 + 1;", Access::Read, 8 << 20);
    assert_eq!(r.unwrap(), json!(2));
}

/// The sandbox's failures are typed: a result over the cap says by how much, a throw keeps
/// the script's line, and both leave the database as it was (the caller rolls back).
#[test]
fn sandbox_failures_are_typed_with_their_context() {
    use nbook::world::sandbox::ScriptError;
    let f = fixture();
    f.run(SEED);
    let world = nbook::world::pool::world(&f.root).unwrap();
    let run = |code: &str| {
        let conn = f.conn();
        conn.execute_batch("BEGIN DEFERRED").unwrap();
        let opts = Options::for_access(Access::Read);
        let (conn, r) = sandbox::run(conn, &world, code, &opts, Err(no_embeddings()));
        let _ = conn.execute_batch("ROLLBACK");
        nbook::world::pool::give(&f.db(), conn);
        r.map(|o| o.data)
    };
    match run("return 'x'.repeat(20000);") {
        Err(ScriptError::ResultTooLarge { chars, limit }) => {
            assert_eq!(limit, 10_240);
            assert!(chars > limit, "{chars}");
        }
        other => panic!("expected ResultTooLarge, got {other:?}"),
    }
    match run("const a = 1;\nnull.x;") {
        Err(e @ ScriptError::Failed(_)) => {
            let m = e.to_string();
            assert!(m.starts_with("TypeError") && m.contains("(line 2)"), "{m}");
        }
        other => panic!("expected a script failure, got {other:?}"),
    }
}
