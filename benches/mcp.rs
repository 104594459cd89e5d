//! A `read` call over MCP against the same call through `nbook call` and through the engine
//! in-process. The MCP server is warm (one `nbook mcp` process for the whole run, spoken to
//! over its stdin/stdout as a client would); `nbook call` starts a process per call, as a
//! script using it does. Issue #15 target: ≤ 1 ms per read call over MCP on a warm server.
//!
//! - `mcp/read_over_mcp_no_tui`: `nbook mcp` runs the call in its own engine;
//! - `mcp/read_over_mcp_attached`: a TUI-side engine (in this process) listens on the
//!   project's socket, so the call goes client → `nbook mcp` → socket → engine and back;
//! - `mcp/read_nbook_call_process`: `nbook call read` (a process per call);
//! - `mcp/read_engine_in_process`: `Engine::call` alone, the floor both include.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, Engine, Mode, ToolCall};
use serde_json::{json, Value};

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    fn start(home: &Path, project: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nbook"))
            .args(["mcp", "--project"])
            .arg(project)
            .env("NBOOK_HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("nbook mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = Server {
            child,
            stdin,
            stdout,
            next: 0,
        };
        s.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}));
        writeln!(
            s.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .expect("send");
        s
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        writeln!(self.stdin, "{msg}").expect("send");
        self.stdin.flush().expect("flush");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("reply");
        serde_json::from_str(&line).expect("json reply")
    }

    fn read(&mut self) {
        let r = self.request(
            "tools/call",
            json!({"name": "read", "arguments": {"path": "small.md"}}),
        );
        assert_eq!(r["result"]["isError"], false, "{r}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("book");
    let home = tmp.path().join("home");
    nbook::workspace::init::init(&root, Some("Bench")).expect("init");
    std::fs::write(root.join("small.md"), "one line\n").expect("write");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("rt");
    let mut g = c.benchmark_group("mcp");

    {
        let mut server = Server::start(&home, &root);
        g.bench_function("read_over_mcp_no_tui", |b| b.iter(|| server.read()));
    }

    let dirs = Dirs {
        config: home.clone(),
        data: home.join("data"),
        logs: home.join("logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).expect("open");
    let engine = Arc::new(
        Engine::open(
            ws,
            Config::default(),
            &dirs,
            nbook::tools::registry().expect("tools"),
        )
        .expect("engine"),
    );
    {
        let server_side = rt
            .block_on(nbook::mcp::listen::serve(engine.clone()))
            .expect("listen")
            .expect("owns the queue");
        let mut server = Server::start(&home, &root);
        server.read();
        assert!(
            engine
                .sessions()
                .iter()
                .any(|s| s.client.as_deref() == Some("bench")),
            "the call went to the attached engine"
        );
        g.bench_function("read_over_mcp_attached", |b| b.iter(|| server.read()));
        drop(server);
        drop(server_side);
    }

    let sid = engine
        .create_session("mcp.default", Mode::Normal, "bench", None)
        .expect("session")
        .id;
    g.bench_function("read_engine_in_process", |b| {
        b.iter(|| {
            let r = rt.block_on(engine.call(
                &sid,
                ToolCall {
                    id: String::new(),
                    name: "read".into(),
                    arguments: json!({"path": "small.md"}),
                },
                Approval::Fail,
            ));
            assert!(r.ok);
        })
    });
    drop(engine);

    g.sample_size(10);
    g.bench_function("read_nbook_call_process", |b| {
        b.iter(|| {
            let out = Command::new(env!("CARGO_BIN_EXE_nbook"))
                .args(["call", "read", "--project"])
                .arg(&root)
                .args(["--args", r#"{"path": "small.md"}"#])
                .env("NBOOK_HOME", &home)
                .output()
                .expect("nbook call");
            assert!(out.status.success());
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
