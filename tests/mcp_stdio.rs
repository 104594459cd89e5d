//! `nbook mcp` over raw stdio JSON-RPC, for what a real SDK never sends: a line that is not
//! JSON (ignored, as every official MCP SDK does: there is no id to answer and answering
//! junk can start an echo storm; the server goes on), well-formed JSON that is no JSON-RPC
//! message (Invalid Request), an unknown method, an unknown tool and schema-invalid
//! arguments (error results whose details keep the JSON Pointers), bad arguments to
//! `nbook_await_approval`, and an approval id nobody issued. Nothing changes on disk.
//! Also `--print-config` for each client.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

fn init_project(home: &Path, dir: &Path) {
    let ok = Command::new(env!("CARGO_BIN_EXE_nbook"))
        .arg("init")
        .arg(dir)
        .env("NBOOK_HOME", home)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok);
}

#[test]
fn bad_json_rpc_and_bad_calls_get_clear_answers_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = tmp.path().join("book");
    init_project(&home, &dir);
    let before = files_outside_nbook(&dir);
    let mut child = Command::new(env!("CARGO_BIN_EXE_nbook"))
        .args(["mcp", "--project"])
        .arg(&dir)
        .env("NBOOK_HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut send = |line: &str| {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    };
    let mut recv = || {
        let mut s = String::new();
        out.read_line(&mut s).unwrap();
        serde_json::from_str::<Value>(&s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    };
    send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}).to_string());
    let r = recv();
    assert_eq!(r["result"]["serverInfo"]["name"], "nbook", "{r}");
    assert_eq!(r["result"]["capabilities"]["tools"]["listChanged"], true);
    send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    // Not JSON: ignored, the server goes on (the next answer is to the next request).
    send("this is {not json");
    // JSON but no JSON-RPC message: Invalid Request.
    send(r#"{"foo": 1}"#);
    let r = recv();
    assert_eq!(r["error"]["code"], -32600, "{r}");
    send(&json!({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}).to_string());
    let r = recv();
    assert_eq!(r["id"], 2);
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let call = |id: u64, name: &str, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}}).to_string()
    };
    send(&call(3, "no_such_tool", json!({})));
    let r = recv();
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(r["result"]["structuredContent"]["outcome"], "unknown_tool");
    send(&call(
        4,
        "write",
        json!({"path": 1, "content": "x", "extra": true}),
    ));
    let r = recv();
    assert_eq!(r["result"]["isError"], true, "{r}");
    let s = &r["result"]["structuredContent"];
    assert_eq!(s["outcome"], "invalid_args");
    let pointers: Vec<&str> = s["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pointer"].as_str().unwrap())
        .collect();
    assert!(pointers.contains(&"/path"), "{pointers:?}");
    send(&call(5, "nbook_await_approval", json!({"approvalId": 3})));
    let r = recv();
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("'/approvalId'"));
    send(&call(
        6,
        "nbook_await_approval",
        json!({"approvalId": "ap-999", "waitMs": 10}),
    ));
    let r = recv();
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        r["result"]["structuredContent"]["outcome"],
        "unknown_approval"
    );
    // Still serving after all that.
    send(&call(7, "read", json!({"path": "AGENTS.md"})));
    let r = recv();
    assert_eq!(r["result"]["isError"], false, "{r}");
    send(&call(70, "get_story_tree", json!({})));
    let r = recv();
    assert_eq!(
        r["result"]["isError"], false,
        "allowed before the change: {r}"
    );
    // A project profile narrows mcp.default: the client is told the list changed.
    let profiles = dir.join(".nbook/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(
        profiles.join("mcp.default.toml"),
        "key = \"mcp.default\"\nname = \"Narrow\"\ndescription = \"reads only\"\ncreation = \"system_only\"\nworld_access = \"none\"\ntools = [\"read\"]\n",
    )
    .unwrap();
    std::fs::write(profiles.join("mcp.default.md"), "Read only.\n").unwrap();
    let r = recv();
    assert_eq!(r["method"], "notifications/tools/list_changed", "{r}");
    send(&json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}).to_string());
    let r = recv();
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read", "nbook_await_approval"], "{r}");
    // …and the engine enforces the new allowlist, not the one it started with.
    send(&call(9, "get_story_tree", json!({})));
    let r = recv();
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        r["result"]["structuredContent"]["outcome"], "not_allowed",
        "{r}"
    );
    send(&call(10, "read", json!({"path": "AGENTS.md"})));
    let r = recv();
    assert_eq!(r["result"]["isError"], false, "{r}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "closing stdin ends the server cleanly");
    // No project file was created or changed by any of it (only the session log).
    assert_eq!(files_outside_nbook(&dir), before);
}

/// Every file of the project outside `.nbook/`, with its content.
fn files_outside_nbook(root: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".nbook") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn print_config_names_the_project_and_the_auto_allow_line() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = tmp.path().join("book");
    init_project(&home, &dir);
    for (client, allow) in [
        ("claude", "mcp__nbook"),
        ("codex", "default_tools_approval_mode"),
        ("opencode", "\"nbook_*\": \"allow\""),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_nbook"))
            .args(["mcp", "--print-config", client, "--project"])
            .arg(&dir)
            .env("NBOOK_HOME", &home)
            .output()
            .unwrap();
        assert!(out.status.success(), "{client}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains(&dir.display().to_string()),
            "{client}: {text}"
        );
        assert!(text.contains("mcp"), "{client}: {text}");
        assert!(text.contains(allow), "{client}: {text}");
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_nbook"))
        .args(["mcp", "--print-config", "emacs"])
        .output()
        .unwrap();
    assert_eq!(
        bad.status.code(),
        Some(2),
        "an unknown client is a usage error"
    );
}
