//! Fuzz the path resolver: arbitrary bytes as an address (relative, absolute, `workspace/…`)
//! against a project holding links inside, outside, dangling and looping. Resolution must never
//! panic; whatever it allows must really lie inside the project root (checked against the
//! kernel's own `canonicalize` of the nearest existing ancestor), and a write must never be
//! allowed into `.nbook/`, `.git/` or the root itself.

#![no_main]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use nbook::workspace::{init::init, Access, Workspace};

struct Env {
    ws: Workspace,
    root: PathBuf,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("nbook-fuzz-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("outside")).expect("outside");
        let mut ws = init(&base.join("book"), Some("Book")).expect("init");
        init(&base.join("other"), Some("Other")).expect("init sibling");
        let root = ws.root().to_path_buf();
        std::fs::create_dir_all(root.join("manuscript/part")).expect("mkdir");
        std::fs::write(root.join("manuscript/ch1.md"), "x").expect("write");
        let links: [(&str, PathBuf); 7] = [
            ("in", root.join("manuscript")),
            ("rel", PathBuf::from("manuscript/part")),
            ("out", base.join("outside")),
            ("up", base.clone()),
            ("dangling", root.join("nothing")),
            ("loop", PathBuf::from("loop")),
            ("nb", root.join(".nbook")),
        ];
        for (name, target) in links {
            symlink(target, root.join(name)).expect("symlink");
        }
        ws.open_sibling("other").expect("sibling");
        Env { ws, root }
    })
}

/// The nearest existing ancestor's canonical path with the missing rest appended.
fn kernel_real(p: &Path) -> Option<PathBuf> {
    let mut existing = p.to_path_buf();
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        rest.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?.to_path_buf();
    }
    let mut real = std::fs::canonicalize(&existing).ok()?;
    for seg in rest.iter().rev() {
        real.push(seg);
    }
    Some(real)
}

fuzz_target!(|data: &[u8]| {
    let env = env();
    let addr = String::from_utf8_lossy(data);
    for access in [Access::Read, Access::Write] {
        let Ok(r) = env.ws.resolve(&addr, access) else {
            continue;
        };
        let sibling_root = env.root.parent().map(|p| p.join("other"));
        let inside = r.abs.starts_with(&env.root)
            || sibling_root.as_ref().is_some_and(|s| r.abs.starts_with(s));
        assert!(inside, "{addr:?} resolved outside: {}", r.abs.display());
        if let Some(real) = kernel_real(&r.abs) {
            assert_eq!(real, r.abs, "{addr:?}: the walk's real path differs from the kernel's");
        }
        if access == Access::Write {
            let first = r.rel.split('/').next().unwrap_or_default();
            assert!(first != ".nbook" && first != ".git", "{addr:?} writes into {first}");
            assert!(!r.rel.is_empty(), "{addr:?} writes the root itself");
            // The held-handle target agrees with the check.
            if let Ok(t) = env.ws.target(&addr) {
                assert_eq!(t.resolved, r, "{addr:?}: target and resolve disagree");
            }
        }
    }
});
