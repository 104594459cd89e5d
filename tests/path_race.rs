//! Issue 11 item 4: the path check and the write must see the same folder. A thread swaps a
//! folder and a symlink (renameat2 RENAME_EXCHANGE) in a loop while approved writes run
//! through the real Engine; nothing may land outside the project, and every write lands in
//! the folder that was approved or fails as stale / refused.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use nbook::config::{Config, Dirs, Preset};
use nbook::engine::{Approval, CallStatus, Decision, Engine, Mode, ToolCall};
use rustix::fs::{renameat_with, RenameFlags, CWD};
use serde_json::json;

const WRITES: usize = 300;

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    dirs: Dirs,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let outside = base.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let dirs = Dirs {
        config: base.join("home"),
        data: base.join("home/data"),
        logs: base.join("home/logs"),
    };
    Fixture {
        _tmp: tmp,
        root,
        outside,
        dirs,
    }
}

fn engine(f: &Fixture) -> Arc<Engine> {
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let mut config = Config::default();
    config.approval.preset = Preset::Supervised;
    Arc::new(Engine::open(ws, config, &f.dirs, nbook::tools::registry().unwrap()).unwrap())
}

/// Exchange `a` and `b` (a real folder and a symlink) until `stop`; returns the swap count.
fn swapper(
    a: PathBuf,
    b: PathBuf,
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicUsize>,
) -> impl FnOnce() {
    move || {
        while !stop.load(Ordering::Relaxed) {
            renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).expect("exchange");
            swaps.fetch_add(1, Ordering::Relaxed);
        }
        // Leave the real folder under its own name.
        if std::fs::symlink_metadata(&a)
            .unwrap()
            .file_type()
            .is_symlink()
        {
            renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).expect("exchange back");
        }
    }
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn write_call(path: &str, content: &str) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: "write".into(),
        arguments: json!({"path": path, "content": content}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_writes_never_leave_the_project_while_a_folder_is_swapped_for_a_link() {
    let f = fixture();
    let drafts = f.root.join("drafts");
    let link = f.root.join("alt");
    std::fs::create_dir_all(&drafts).unwrap();
    std::os::unix::fs::symlink(&f.outside, &link).unwrap();
    let engine = engine(&f);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "race", None)
        .unwrap()
        .id;
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let t = std::thread::spawn(swapper(
        drafts.clone(),
        link.clone(),
        stop.clone(),
        swaps.clone(),
    ));
    let mut written = Vec::new();
    let mut failed = 0;
    for i in 0..WRITES {
        let content = format!("draft {i}\n");
        let r = engine
            .call(
                &sid,
                write_call(&format!("drafts/n{i}.md"), &content),
                Approval::Auto {
                    decision: Decision::Approve,
                    by: "test",
                },
            )
            .await;
        match r.status {
            CallStatus::Ok => written.push((i, content)),
            CallStatus::Stale | CallStatus::ToolError => {
                failed += 1;
                assert!(
                    r.content.contains("stale") || r.content.contains("refused"),
                    "write {i} failed for another reason: {}",
                    r.content
                );
            }
            other => panic!("write {i}: unexpected {other:?}: {}", r.content),
        }
    }
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
    assert!(swaps.load(Ordering::Relaxed) > 0, "the swapper never ran");
    assert!(!written.is_empty(), "no write succeeded ({failed} failed)");
    assert_eq!(
        files_in(&f.outside),
        Vec::<String>::new(),
        "a write landed outside the project"
    );
    // Every successful write is in the real drafts folder, with its content.
    for (i, content) in &written {
        let p = drafts.join(format!("n{i}.md"));
        assert_eq!(
            std::fs::read_to_string(&p).ok().as_deref(),
            Some(content.as_str()),
            "write {i} was reported done but is not in drafts/"
        );
    }
    assert_eq!(
        files_in(&drafts).len(),
        written.len(),
        "{:?}",
        files_in(&drafts)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_writes_never_reach_the_manuscript_through_a_swapped_plan_folder() {
    let f = fixture();
    let plan = f.root.join(".agent/plan");
    let link = f.root.join(".agent/alt");
    let manuscript = f.root.join("manuscript");
    std::fs::create_dir_all(&plan).unwrap();
    std::fs::create_dir_all(&manuscript).unwrap();
    std::os::unix::fs::symlink(&manuscript, &link).unwrap();
    let before = files_in(&manuscript);
    let engine = engine(&f);
    let sid = engine
        .create_session("leader.default", Mode::Plan, "plan race", None)
        .unwrap()
        .id;
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let t = std::thread::spawn(swapper(
        plan.clone(),
        link.clone(),
        stop.clone(),
        swaps.clone(),
    ));
    let mut written = Vec::new();
    for i in 0..WRITES {
        let content = format!("plan {i}\n");
        // Anything that is not exempt would need the author: refuse it, so only writes the
        // plan-folder exemption let through can change anything.
        let r = engine
            .call(
                &sid,
                write_call(&format!(".agent/plan/p{i}.md"), &content),
                Approval::Auto {
                    decision: Decision::Reject { reason: None },
                    by: "test",
                },
            )
            .await;
        if r.status == CallStatus::Ok {
            written.push((i, content));
        }
    }
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
    assert!(swaps.load(Ordering::Relaxed) > 0, "the swapper never ran");
    assert!(!written.is_empty(), "no plan write succeeded");
    assert_eq!(
        files_in(&manuscript),
        before,
        "a plan-mode write landed in manuscript/ without approval"
    );
    for (i, content) in &written {
        assert_eq!(
            std::fs::read_to_string(plan.join(format!("p{i}.md")))
                .ok()
                .as_deref(),
            Some(content.as_str()),
            "plan write {i} was reported done but is not in .agent/plan/"
        );
    }
}
