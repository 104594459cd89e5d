//! Issue 11 item 5: a commit killed midway is repaired on the next open. The real binary runs
//! `nbook call apply_patch --approve` (and `write`) with a failpoint that aborts the process
//! after the N-th rename; the next `nbook call read` must find an all-old or all-new tree,
//! byte-identical, with no temp or backup files left, and say what it repaired.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");
const FILES: usize = 120;

struct Fixture {
    tmp: tempfile::TempDir,
    root: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    std::fs::create_dir_all(tmp.path().join("home")).unwrap();
    let ms = root.join("manuscript");
    std::fs::create_dir_all(&ms).unwrap();
    for i in 0..FILES {
        std::fs::write(ms.join(format!("f{i:03}.md")), format!("old {i}\nsame\n")).unwrap();
    }
    Fixture { tmp, root }
}

impl Fixture {
    fn call(&self, tool: &str, args: &Value, approve: bool, failpoint: Option<&str>) -> Output {
        let project = self.root.display().to_string();
        let args = args.to_string();
        let mut cmd = Command::new(BIN);
        cmd.args(["call", tool, "--project", project.as_str()]);
        if approve {
            cmd.arg("--approve");
        }
        cmd.args(["--args", args.as_str()])
            .env("NBOOK_HOME", self.tmp.path().join("home"))
            .env_remove("NBOOK_FAILPOINT")
            .stdin(Stdio::null());
        if let Some(fp) = failpoint {
            cmd.env("NBOOK_FAILPOINT", fp);
        }
        cmd.output().expect("run nbook")
    }

    /// Every file of the project outside `.nbook/`, with its bytes.
    fn tree(&self) -> BTreeMap<String, Vec<u8>> {
        fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let e = e.unwrap();
                let p = e.path();
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                if rel == ".nbook" {
                    continue;
                }
                if e.file_type().unwrap().is_dir() {
                    walk(&p, base, out);
                } else {
                    out.insert(rel, std::fs::read(&p).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.root, &self.root, &mut out);
        out
    }

    fn leftovers(&self) -> Vec<String> {
        self.tree()
            .into_keys()
            .filter(|k| k.contains(".nbook-bak-") || k.contains(".nbook-tmp-"))
            .collect()
    }

    fn journals(&self) -> usize {
        std::fs::read_dir(self.root.join(".nbook/journal"))
            .map(|d| d.count())
            .unwrap_or(0)
    }
}

/// Update every file, add one, delete one.
fn big_patch() -> String {
    let mut p = String::from("*** Begin Patch\n");
    for i in 1..FILES {
        p.push_str(&format!(
            "*** Update File: manuscript/f{i:03}.md\n@@\n-old {i}\n+new {i}\n same\n"
        ));
    }
    p.push_str("*** Delete File: manuscript/f000.md\n");
    p.push_str("*** Add File: manuscript/added/extra.md\n+brand new\n");
    p.push_str("*** End Patch\n");
    p
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The tree the patch produces, computed by running it without a failpoint on a copy.
fn expected_new() -> BTreeMap<String, Vec<u8>> {
    let f = fixture();
    let out = f.call("apply_patch", &json!({"patch": big_patch()}), true, None);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(f.leftovers().is_empty());
    assert_eq!(f.journals(), 0, "a finished commit leaves no journal");
    f.tree()
}

fn killed_patch(f: &Fixture, after: usize) {
    let out = f.call(
        "apply_patch",
        &json!({"patch": big_patch()}),
        true,
        Some(&format!("apply_patch_after_rename:{after}")),
    );
    assert!(
        out.status.code().is_none(),
        "the failpoint did not kill the commit: {}",
        show(&out)
    );
    assert_eq!(f.journals(), 1, "the journal must survive the kill");
}

fn reopen(f: &Fixture) -> String {
    let out = f.call("read", &json!({"path": "manuscript/f001.md"}), false, None);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_commit_killed_mid_swap_is_finished_on_the_next_open() {
    let new = expected_new();
    for after in [1, 2, 117, 2 * FILES - 1] {
        let f = fixture();
        let old = f.tree();
        killed_patch(&f, after);
        let torn = f.tree();
        assert_ne!(torn, old, "after {after} renames something has changed");
        assert!(!f.leftovers().is_empty(), "the kill left temps or backups");
        let stderr = reopen(&f);
        assert!(
            stderr.contains("repaired") && stderr.contains("was finished"),
            "after {after}: recovery not reported: {stderr}"
        );
        assert_eq!(f.tree(), new, "after {after} renames: not all-new");
        assert!(f.leftovers().is_empty(), "{:?}", f.leftovers());
        assert_eq!(f.journals(), 0);
        // Repaired once: the next open has nothing to say.
        assert!(!reopen(&f).contains("repaired"));
    }
}

#[test]
fn a_commit_whose_new_content_is_incomplete_is_rolled_back() {
    let f = fixture();
    let old = f.tree();
    killed_patch(&f, 40);
    // Damage one staged temp file that was not renamed yet: rolling forward is impossible.
    let temp = f
        .tree()
        .into_keys()
        .find(|k| k.contains(".nbook-tmp-"))
        .expect("a temp file not yet renamed");
    std::fs::write(f.root.join(&temp), "torn").unwrap();
    let stderr = reopen(&f);
    assert!(
        stderr.contains("repaired") && stderr.contains("rolled back"),
        "{stderr}"
    );
    assert_eq!(f.tree(), old, "not all-old after the rollback");
    assert!(f.leftovers().is_empty(), "{:?}", f.leftovers());
    assert!(
        !f.root.join("manuscript/added").exists(),
        "created folder kept"
    );
    assert_eq!(f.journals(), 0);
}

#[test]
fn a_killed_write_leaves_no_temp_file_after_the_next_open() {
    let f = fixture();
    let old = f.tree();
    let out = f.call(
        "write",
        &json!({"path": "manuscript/f001.md", "content": "replaced\n"}),
        true,
        Some("write_after_stage"),
    );
    assert!(out.status.code().is_none(), "{}", show(&out));
    assert_eq!(f.leftovers().len(), 1, "the kill left the temp file");
    let stderr = reopen(&f);
    assert!(
        stderr.contains("interrupted write to manuscript/f001.md"),
        "{stderr}"
    );
    assert_eq!(f.tree(), old);
    assert_eq!(f.journals(), 0);
}

#[test]
fn write_keeps_the_mode_of_the_file_it_replaces() {
    let f = fixture();
    let p = f.root.join("manuscript/f001.md");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = f.call(
        "write",
        &json!({"path": "manuscript/f001.md", "content": "private\n"}),
        true,
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "private\n");
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600, "write made a 0600 file {mode:o}");
    // apply_patch keeps it too.
    let patch = "*** Begin Patch\n*** Update File: manuscript/f001.md\n@@\n-private\n+still private\n*** End Patch\n";
    let out = f.call("apply_patch", &json!({"patch": patch}), true, None);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600, "apply_patch made a 0600 file {mode:o}");
}
