//! The TUI against a real engine on a real project: a queued `write` reaches the App as an
//! engine event, the author's key becomes an effect, the effect runs against the engine, and
//! the file is written (y) or the project stays untouched (n). Also: the runtime's executor
//! answers background loads for the same project.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use nbook::config::{Config, Dirs};
use nbook::engine::{Approval, CallStatus, Engine, EngineEvent, Mode, ToolCall};
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::Pane;
use nbook::tui::keys::parse_sequence;
use nbook::tui::runtime::{Executor, Msg};
use serde_json::json;

struct Fixture {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    dirs: Dirs,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("T")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    Fixture {
        _tmp: tmp,
        root,
        dirs,
    }
}

fn open(f: &Fixture) -> Arc<Engine> {
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    Arc::new(Engine::open(ws, Config::default(), &f.dirs).unwrap())
}

/// Every file's bytes under `root` except the session logs (which record the decision).
fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for p in nbook::tui::jobs::walk_files(root) {
        out.push((p.clone(), std::fs::read(root.join(&p)).unwrap()));
    }
    out.push((
        "project.sqlite".into(),
        std::fs::read(root.join(".nbook/project.sqlite")).unwrap(),
    ));
    out
}

async fn next_request(rx: &mut tokio::sync::broadcast::Receiver<EngineEvent>) -> EngineEvent {
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("an approval request within 10 s")
            .expect("engine open");
        if matches!(ev, EngineEvent::ApprovalRequested { .. }) {
            return ev;
        }
    }
}

fn press(app: &mut nbook::tui::app::AppState, keys: &str) -> Vec<Effect> {
    parse_sequence(keys)
        .unwrap()
        .into_iter()
        .flat_map(|k| app.handle_key(k))
        .collect()
}

async fn run_decision(keys: &str) -> (Fixture, nbook::engine::CallResult, Vec<(String, Vec<u8>)>) {
    let f = fixture();
    let engine = open(&f);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let mut rx = engine.subscribe();
    let mut app = nbook::tui::build_app(&engine, &f.dirs, None, (100, 30));
    let (e, s) = (engine.clone(), sid.clone());
    let call = tokio::spawn(async move {
        e.call(
            &s,
            ToolCall {
                id: "c1".into(),
                name: "write".into(),
                arguments: json!({"path": "manuscript/new.md", "content": "# New\n"}),
            },
            Approval::Queue,
        )
        .await
    });
    let ev = next_request(&mut rx).await;
    app.update(Action::Engine(ev));
    assert_eq!(app.approvals.len(), 1);
    assert_eq!(app.approvals.selected_call().unwrap().tool, "write");
    press(&mut app, "5");
    assert_eq!(app.focus, Pane::Approvals);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    let exec = Executor::new(engine.clone(), tx);
    let before = snapshot(&f.root);
    let effects = press(&mut app, keys);
    assert_eq!(effects.len(), 1, "{effects:?}");
    for fx in effects {
        assert!(!exec.execute(fx));
    }
    let result = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call finishes after the decision")
        .unwrap();
    assert!(engine.pending().is_empty());
    (f, result, before)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn y_writes_the_file() {
    let (f, result, _) = run_decision("y").await;
    assert_eq!(result.status, CallStatus::Ok, "{}", result.content);
    assert_eq!(
        std::fs::read_to_string(f.root.join("manuscript/new.md")).unwrap(),
        "# New\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n_leaves_the_project_untouched() {
    let (f, result, before) = run_decision("n h o l d <Enter>").await;
    assert_eq!(result.status, CallStatus::Rejected, "{}", result.content);
    assert!(result.content.contains("hold"), "{}", result.content);
    assert!(!f.root.join("manuscript/new.md").exists());
    // Byte-identical files and database, apart from the session logs.
    assert_eq!(before, snapshot(&f.root));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn executor_answers_loads_for_the_project() {
    let f = fixture();
    let engine = open(&f);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let mut app = nbook::tui::build_app(&engine, &f.dirs, Some(sid), (120, 40));
    assert_eq!(app.focus, Pane::Sessions);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    let exec = Executor::new(engine.clone(), tx);
    for fx in app.start() {
        exec.execute(fx);
    }
    // Root listing, walk, story, world, transcript: five results.
    let mut got = 0;
    while got < 5 {
        let msg = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap()
            .unwrap();
        if let Msg::Action(a) = msg {
            for fx in app.update(*a) {
                exec.execute(fx);
            }
            got += 1;
        }
    }
    assert!(app
        .files
        .tree
        .rows()
        .iter()
        .any(|&r| app.files.tree.node(r).unwrap().path == "manuscript"));
    assert!(app
        .files
        .all_paths
        .as_ref()
        .unwrap()
        .iter()
        .any(|p| p.starts_with("manuscript/")));
    assert!(app.story.data.as_ref().unwrap().is_empty());
    assert!(app.world.meta.is_some());
    assert!(!app.sessions.transcript.as_ref().unwrap().entries.is_empty());
}
