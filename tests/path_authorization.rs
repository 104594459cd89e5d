//! Path authorization (DESIGN.md "Path authorization"): every file address is resolved
//! lexically, then through the symlinks of its nearest existing ancestor, and refused when its
//! real path leaves the project root. Checked twice: on `Workspace::resolve` directly, and on
//! the real `read` / `write` tools through the `nbook` binary.

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use nbook::workspace::{init::init, Access, Workspace, WorkspaceError};
use serde_json::Value;
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

/// `<tmp>/book` (the project under test), `<tmp>/other` (a sibling project), `<tmp>/outside/`
/// (a plain folder with a secret) and an isolated `NBOOK_HOME`.
struct Fixture {
    tmp: TempDir,
    ws: Workspace,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().expect("tempdir");
        let ws = init(&tmp.path().join("book"), Some("Book")).expect("init book");
        init(&tmp.path().join("other"), Some("Other")).expect("init other");
        std::fs::write(tmp.path().join("other/notes.md"), "sibling notes\n").unwrap();
        std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
        std::fs::write(tmp.path().join("outside/secret.txt"), "TOP SECRET\n").unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "TOP SECRET\n").unwrap();
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        std::fs::write(ws.root().join("notes.md"), "project notes\n").unwrap();
        Fixture { tmp, ws }
    }

    fn root(&self) -> PathBuf {
        self.ws.root().to_path_buf()
    }

    fn outside(&self) -> PathBuf {
        std::fs::canonicalize(self.tmp.path())
            .unwrap()
            .join("outside")
    }

    fn link(&self, name: &str, target: &Path) {
        symlink(target, self.root().join(name)).expect("symlink");
    }

    fn cli(&self, tool: &str, args: &Value, extra: &[&str]) -> Output {
        let project = self.root().display().to_string();
        let args = args.to_string();
        let mut v = vec!["call", tool, "--project", project.as_str()];
        v.extend_from_slice(extra);
        v.extend_from_slice(&["--args", args.as_str()]);
        Command::new(BIN)
            .args(&v)
            .env("NBOOK_HOME", self.tmp.path().join("home"))
            .stdin(Stdio::null())
            .output()
            .expect("run nbook")
    }

    fn cli_read(&self, path: &str) -> Output {
        self.cli("read", &serde_json::json!({ "path": path }), &[])
    }

    fn cli_write(&self, path: &str, content: &str) -> Output {
        self.cli(
            "write",
            &serde_json::json!({ "path": path, "content": content }),
            &["--approve"],
        )
    }
}

fn refused(ws: &Workspace, addr: &str, access: Access) -> String {
    match ws.resolve(addr, access) {
        Err(e @ WorkspaceError::PathRefused { .. }) => e.to_string(),
        Err(other) => panic!("{addr:?} ({access:?}): expected a refusal, got {other}"),
        Ok(r) => panic!("{addr:?} ({access:?}) was allowed: {r:?}"),
    }
}

fn refused_both(ws: &Workspace, addr: &str) {
    refused(ws, addr, Access::Read);
    refused(ws, addr, Access::Write);
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn result(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("bad JSON ({e}): {}", show(out)))
}

/// The call failed as a tool error whose message says the path was refused.
fn assert_cli_refused(out: &Output) {
    assert_eq!(out.status.code(), Some(1), "{}", show(out));
    let r = result(out);
    assert_eq!(r["status"], "tool_error", "{}", show(out));
    let content = r["content"].as_str().unwrap();
    assert!(content.contains("refused"), "{content}");
    assert!(
        !content.contains("TOP SECRET"),
        "outside content leaked: {content}"
    );
}

fn assert_cli_ok(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", show(out));
    result(out)
}

// -------------------------------------------------------------------------- Workspace::resolve

#[test]
fn relative_paths_resolve_inside_the_project() {
    let f = Fixture::new();
    for access in [Access::Read, Access::Write] {
        let r = f.ws.resolve("manuscript/ch1.md", access).unwrap();
        assert_eq!(r.abs, f.root().join("manuscript/ch1.md"));
        assert_eq!(r.rel, "manuscript/ch1.md");
        assert_eq!(r.display, "manuscript/ch1.md");
        assert!(r.in_current);
    }
    // `.` and `..` that stay inside are normalised.
    let r =
        f.ws.resolve("./manuscript/../notes.md", Access::Read)
            .unwrap();
    assert_eq!(r.rel, "notes.md");
    assert_eq!(r.abs, f.root().join("notes.md"));
}

#[test]
fn dot_dot_escapes_are_refused() {
    let f = Fixture::new();
    refused_both(&f.ws, "../secret.txt");
    refused_both(&f.ws, "../other/notes.md");
    refused_both(&f.ws, "a/../../secret.txt");
    refused_both(&f.ws, "manuscript/../../outside/secret.txt");
    refused_both(&f.ws, "./../book/notes.md");
}

#[test]
fn absolute_paths_outside_are_refused_and_inside_allowed() {
    let f = Fixture::new();
    refused_both(&f.ws, "/etc/passwd");
    refused_both(&f.ws, f.outside().join("secret.txt").to_str().unwrap());
    refused_both(&f.ws, f.root().join("../secret.txt").to_str().unwrap());
    let inside = f.root().join("notes.md");
    for access in [Access::Read, Access::Write] {
        let r = f.ws.resolve(inside.to_str().unwrap(), access).unwrap();
        assert_eq!(r.abs, inside);
        assert_eq!(r.rel, "notes.md");
        assert!(r.in_current);
    }
}

#[test]
fn symlinks_pointing_outside_are_refused() {
    let f = Fixture::new();
    f.link("leak.txt", &f.outside().join("secret.txt"));
    f.link("leakdir", &f.outside());
    refused_both(&f.ws, "leak.txt");
    refused_both(&f.ws, "leakdir");
    refused_both(&f.ws, "leakdir/secret.txt");
    // A new file (and a new folder) under the linked folder.
    refused(&f.ws, "leakdir/new.md", Access::Write);
    refused(&f.ws, "leakdir/deeper/new.md", Access::Write);
    // A link in a nested folder, to a parent of the project.
    f.link("manuscript/up", f.tmp.path());
    refused_both(&f.ws, "manuscript/up/secret.txt");
    // ... while the same link leading back into the project is judged by its real path.
    let r =
        f.ws.resolve("manuscript/up/book/notes.md", Access::Read)
            .unwrap();
    assert_eq!(std::fs::read_to_string(r.abs).unwrap(), "project notes\n");
}

#[test]
fn symlinks_pointing_inside_are_allowed() {
    let f = Fixture::new();
    f.link("alias.md", &f.root().join("notes.md"));
    f.link("ms", &f.root().join("manuscript"));
    f.link("rel-alias.md", Path::new("notes.md"));
    // Links are followed: the resolved address is the real file, so previews, the plan-mode
    // exemption and the .nbook fence all judge what will really change, and a write through
    // a link updates its target instead of replacing the link.
    let r = f.ws.resolve("alias.md", Access::Read).unwrap();
    assert_eq!(r.rel, "notes.md");
    assert_eq!(
        f.ws.resolve("rel-alias.md", Access::Read).unwrap().rel,
        "notes.md"
    );
    let r = f.ws.resolve("ms/new.md", Access::Write).unwrap();
    assert_eq!(r.abs, f.root().join("manuscript/new.md"));
    assert_eq!(r.display, "manuscript/new.md");
}

#[test]
fn dangling_symlinks_are_refused() {
    let f = Fixture::new();
    f.link("dangling-out.md", &f.outside().join("not-there.md"));
    f.link("dangling-in.md", &f.root().join("not-there.md"));
    f.link("dangling-dir", &f.outside().join("no-such-dir"));
    refused_both(&f.ws, "dangling-out.md");
    refused_both(&f.ws, "dangling-in.md");
    refused(&f.ws, "dangling-dir/new.md", Access::Write);
    assert!(!f.outside().join("not-there.md").exists());
}

#[test]
fn sibling_projects_are_reachable_only_once_opened() {
    let mut f = Fixture::new();
    let msg = refused(&f.ws, "workspace/other/notes.md", Access::Read);
    assert!(msg.contains("not open"), "{msg}");
    refused(&f.ws, "workspace/other/new.md", Access::Write);

    f.ws.open_sibling("other").expect("open sibling");
    let other_root = std::fs::canonicalize(f.tmp.path().join("other")).unwrap();
    let r =
        f.ws.resolve("workspace/other/notes.md", Access::Read)
            .unwrap();
    assert_eq!(r.abs, other_root.join("notes.md"));
    assert_eq!(r.display, "workspace/other/notes.md");
    assert_eq!(r.rel, "notes.md");
    assert!(!r.in_current);
    let r =
        f.ws.resolve("workspace/other/drafts/new.md", Access::Write)
            .unwrap();
    assert_eq!(r.abs, other_root.join("drafts/new.md"));

    // The sibling is fenced like the project itself.
    refused_both(&f.ws, "workspace/other/../secret.txt");
    refused_both(&f.ws, "workspace/other/../../secret.txt");
    refused(&f.ws, "workspace/other/.nbook/config.toml", Access::Write);
    refused_both(&f.ws, "workspace/other");
    // A folder that is not a project cannot be opened as a sibling.
    assert!(f.ws.open_sibling("outside").is_err());
    refused(&f.ws, "workspace/outside/secret.txt", Access::Read);
}

#[test]
fn workspace_address_with_the_own_name_is_the_project_itself() {
    let f = Fixture::new();
    let r =
        f.ws.resolve("workspace/book/notes.md", Access::Read)
            .unwrap();
    assert_eq!(r.abs, f.root().join("notes.md"));
    assert_eq!(r.rel, "notes.md");
    assert!(r.in_current);
    let r =
        f.ws.resolve("workspace/book/drafts/x.md", Access::Write)
            .unwrap();
    assert_eq!(r.abs, f.root().join("drafts/x.md"));
    refused_both(&f.ws, "workspace/book/../secret.txt");
}

#[test]
fn writes_into_the_nbook_folder_are_refused() {
    let f = Fixture::new();
    std::fs::write(f.root().join(".nbook/config.toml"), "").unwrap();
    for addr in [
        ".nbook/config.toml",
        ".nbook/project.sqlite",
        ".nbook/profiles/evil.toml",
        "./.nbook/config.toml",
        "manuscript/../.nbook/config.toml",
        "workspace/book/.nbook/config.toml",
        ".nbook",
    ] {
        let msg = refused(&f.ws, addr, Access::Write);
        assert!(msg.contains(".nbook"), "{addr}: {msg}");
    }
    let abs = f.root().join(".nbook/config.toml");
    refused(&f.ws, abs.to_str().unwrap(), Access::Write);
    refused(&f.ws, ".git/config", Access::Write);
    // The project root itself is not a file to write.
    refused(&f.ws, ".", Access::Write);
}

#[test]
fn writes_into_nbook_through_a_symlink_are_refused() {
    let f = Fixture::new();
    f.link("nb", &f.root().join(".nbook"));
    refused(&f.ws, "nb/config.toml", Access::Write);
    refused(&f.ws, "nb/profiles/evil.toml", Access::Write);
}

#[test]
fn empty_paths_are_refused() {
    let f = Fixture::new();
    for addr in ["", "   ", "\t\n"] {
        let msg = refused(&f.ws, addr, Access::Read);
        assert!(msg.contains("empty"), "{addr:?}: {msg}");
        refused(&f.ws, addr, Access::Write);
    }
    refused_both(&f.ws, "a\0b");
    refused_both(&f.ws, "workspace/");
    refused_both(&f.ws, "workspace/book/");
}

// ------------------------------------------------------------------ the real tools via the CLI

#[test]
fn cli_read_follows_the_same_rules() {
    let f = Fixture::new();
    let r = assert_cli_ok(&f.cli_read("notes.md"));
    assert!(r["content"].as_str().unwrap().contains("project notes"));
    let abs = f.root().join("notes.md").display().to_string();
    assert!(assert_cli_ok(&f.cli_read(&abs))["content"]
        .as_str()
        .unwrap()
        .contains("project notes"));

    assert_cli_refused(&f.cli_read("../secret.txt"));
    assert_cli_refused(&f.cli_read("a/../../secret.txt"));
    assert_cli_refused(&f.cli_read(f.outside().join("secret.txt").to_str().unwrap()));
    assert_cli_refused(&f.cli_read("workspace/other/notes.md"));

    f.link("leak.txt", &f.outside().join("secret.txt"));
    f.link("leakdir", &f.outside());
    f.link("alias.md", &f.root().join("notes.md"));
    f.link("dangling.md", &f.outside().join("nothing.md"));
    assert_cli_refused(&f.cli_read("leak.txt"));
    assert_cli_refused(&f.cli_read("leakdir/secret.txt"));
    assert_cli_refused(&f.cli_read("dangling.md"));
    assert!(assert_cli_ok(&f.cli_read("alias.md"))["content"]
        .as_str()
        .unwrap()
        .contains("project notes"));
    assert!(
        assert_cli_ok(&f.cli_read("workspace/book/notes.md"))["content"]
            .as_str()
            .unwrap()
            .contains("project notes")
    );

    // An empty path never reaches the tool: the schema refuses it (usage error).
    let out = f.cli_read("");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_cli_refused(&f.cli_read("  "));
}

#[test]
fn cli_write_follows_the_same_rules_and_changes_nothing_when_refused() {
    let f = Fixture::new();
    assert_cli_ok(&f.cli_write("drafts/ok.md", "fine\n"));
    assert_eq!(
        std::fs::read_to_string(f.root().join("drafts/ok.md")).unwrap(),
        "fine\n"
    );
    let abs = f.root().join("drafts/abs.md").display().to_string();
    assert_cli_ok(&f.cli_write(&abs, "abs\n"));
    assert_eq!(
        std::fs::read_to_string(f.root().join("drafts/abs.md")).unwrap(),
        "abs\n"
    );

    let outside_before: Vec<_> = std::fs::read_dir(f.outside())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_cli_refused(&f.cli_write("../escape.md", "x"));
    assert_cli_refused(&f.cli_write("a/../../escape.md", "x"));
    assert_cli_refused(&f.cli_write(f.outside().join("abs.md").to_str().unwrap(), "x"));
    assert!(!f.tmp.path().join("escape.md").exists());

    f.link("leakdir", &f.outside());
    f.link("leak.txt", &f.outside().join("secret.txt"));
    f.link("dangling.md", &f.outside().join("nothing.md"));
    assert_cli_refused(&f.cli_write("leakdir/new.md", "x"));
    assert_cli_refused(&f.cli_write("leakdir/sub/new.md", "x"));
    assert_cli_refused(&f.cli_write("leak.txt", "overwritten"));
    assert_cli_refused(&f.cli_write("dangling.md", "x"));
    let outside_after: Vec<_> = std::fs::read_dir(f.outside())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        outside_before, outside_after,
        "a file appeared outside the project"
    );
    assert_eq!(
        std::fs::read_to_string(f.outside().join("secret.txt")).unwrap(),
        "TOP SECRET\n"
    );
    assert!(std::fs::symlink_metadata(f.root().join("dangling.md"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!f.outside().join("nothing.md").exists());

    // A symlink to a folder inside the project is fine and writes into that folder.
    f.link("ms", &f.root().join("manuscript"));
    assert_cli_ok(&f.cli_write("ms/via-link.md", "linked\n"));
    assert_eq!(
        std::fs::read_to_string(f.root().join("manuscript/via-link.md")).unwrap(),
        "linked\n"
    );

    // The managed folders.
    let config = f.root().join(".nbook/config.toml");
    assert_cli_refused(&f.cli_write(".nbook/config.toml", "[approval]\npreset = \"neurobook\"\n"));
    assert!(!config.exists());
    assert_cli_refused(&f.cli_write(".nbook/profiles/evil.toml", "x"));
    assert!(!f.root().join(".nbook/profiles/evil.toml").exists());

    // Sibling addresses are refused by the CLI, which opens no sibling.
    assert_cli_refused(&f.cli_write("workspace/other/new.md", "x"));
    assert!(!f.tmp.path().join("other/new.md").exists());
}

/// Whether permission bits stop this process from writing (they do not for root).
fn permissions_are_enforced(tmp: &Path) -> bool {
    let probe_dir = tmp.join("probe");
    std::fs::create_dir_all(&probe_dir).unwrap();
    std::fs::set_permissions(&probe_dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let can_write = std::fs::write(probe_dir.join("probe.txt"), b"x").is_ok();
    std::fs::set_permissions(&probe_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    !can_write
}

#[test]
fn writing_into_a_read_only_folder_fails_clearly_and_changes_nothing() {
    let f = Fixture::new();
    if !permissions_are_enforced(f.tmp.path()) {
        eprintln!(
            "SKIPPED writing_into_a_read_only_folder_fails_clearly_and_changes_nothing: this process \
             can write into a chmod 0555 folder (running as root?), so permission bits cannot be tested"
        );
        return;
    }
    let dir = f.root().join("manuscript");
    std::fs::write(dir.join("ch1.md"), "original\n").unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let new = f.cli_write("manuscript/new.md", "x\n");
    let over = f.cli_write("manuscript/ch1.md", "changed\n");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    for out in [&new, &over] {
        assert_eq!(out.status.code(), Some(1), "{}", show(out));
        let content = result(out)["content"].as_str().unwrap().to_string();
        assert!(
            content.contains("not writable") || content.contains("ermission denied"),
            "{content}"
        );
    }
    assert!(!dir.join("new.md").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("ch1.md")).unwrap(),
        "original\n"
    );
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.to_string_lossy().contains("nbook-tmp")),
        "temp file left: {names:?}"
    );
}
