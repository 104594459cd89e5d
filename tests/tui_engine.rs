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
    Arc::new(
        Engine::open(
            ws,
            Config::default(),
            &f.dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    )
}

/// Every file's bytes under `root` except the session logs (which record the decision).
fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for p in nbook::tui::files::jobs::walk_files(root) {
        out.push((p.to_string(), std::fs::read(root.join(&p)).unwrap()));
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
    // Root listing, walk, story, world, transcript, board: six results.
    let mut got = 0;
    while got < 6 {
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

/// Process the executor's results until `done` holds for one of them (10 s at most).
async fn pump(
    app: &mut nbook::tui::app::AppState,
    exec: &Executor,
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Msg>,
    done: impl Fn(&Action) -> bool,
) {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("a result within 10 s")
            .expect("channel open");
        if let Msg::Action(a) = msg {
            let stop = done(&a);
            for fx in app.update(*a) {
                exec.execute(fx);
            }
            if stop {
                return;
            }
        }
    }
}

fn run_keys(app: &mut nbook::tui::app::AppState, exec: &Executor, keys: &str) -> usize {
    let fx = press(app, keys);
    let n = fx.len();
    for f in fx {
        exec.execute(f);
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_session_composer_prompt_and_cancel_through_the_host() {
    use nbook::agent::host::{Host, ProviderSource};
    use nbook::agent::{Provider, ReplayProvider};
    use std::sync::Mutex;

    let f = fixture();
    let config = Config::parse("[models.m1]\nprovider = \"p\"\nname = \"x\"\n", "test").unwrap();
    let ws = nbook::workspace::Workspace::open(&f.root).unwrap();
    let engine =
        Arc::new(Engine::open(ws, config, &f.dirs, nbook::tools::registry().unwrap()).unwrap());
    type Asked = Vec<(String, Option<String>)>;
    let asked: Arc<Mutex<Asked>> = Arc::default();
    let seen = asked.clone();
    let providers: ProviderSource = Arc::new(move |p, m| {
        seen.lock()
            .unwrap()
            .push((p.key.clone(), m.map(str::to_string)));
        let replay = ReplayProvider::parse(r#"{"text": "Noted: a short chapter."}"#, "test")
            .map_err(|e| e.to_string())?;
        Ok(Arc::new(replay) as Arc<dyn Provider>)
    });
    let host = Host::attach(engine.clone(), providers, Approval::Queue);
    let mut app = nbook::tui::build_app(&engine, &f.dirs, None, (120, 40));
    assert!(app.profiles.iter().any(|p| p.key == "writer"));
    assert!(
        !app.profiles.iter().any(|p| p.key == "summarizer"),
        "system-only"
    );
    assert_eq!(app.models, ["m1"]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    let exec = Executor::new(engine.clone(), tx).with_host(Some(host.clone()));

    // The new-session form: writer, model m1, a title. Two effects: the form's read of the
    // durable agents it lists after the profiles, and the session's creation.
    assert_eq!(
        run_keys(
            &mut app,
            &exec,
            "4 n w r <Tab> <Down> <Tab> S h o r t <Enter>"
        ),
        2
    );
    pump(&mut app, &exec, &mut rx, |a| {
        matches!(a, Action::SessionCreated(_))
    })
    .await;
    let sid = app.sessions.selected().unwrap().id.clone();
    assert_eq!(engine.session(&sid).unwrap().profile, "writer");
    assert_eq!(engine.session(&sid).unwrap().title, "Short");
    assert_eq!(exec.session_model(&sid).as_deref(), Some("m1"));
    assert!(app.sessions.composing, "the composer has the keys");

    // The first message: a prompt, run with the session's model.
    assert_eq!(
        run_keys(
            &mut app,
            &exec,
            "k e e p <Space> i t <Space> s h o r t <Enter>"
        ),
        1
    );
    pump(&mut app, &exec, &mut rx, |a| {
        matches!(a, Action::InvokeFinished { .. })
    })
    .await;
    // (The host also asks for the summarizer's provider, for compaction.)
    let writer: Vec<_> = asked
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, _)| p == "writer")
        .cloned()
        .collect();
    assert_eq!(writer, [("writer".to_string(), Some("m1".to_string()))]);
    let log = engine.session_log(&sid).unwrap().lines;
    assert!(log.iter().any(|l| matches!(&l.record,
        nbook::engine::LogRecord::User { text } if text == "keep it short")));
    assert!(log.iter().any(|l| matches!(&l.record,
        nbook::engine::LogRecord::Assistant { text, .. } if text.contains("Noted"))));
    assert!(app.sessions.outbox[&sid].is_empty());

    // A steer on an idle session is refused by the host; the refusal comes back readable.
    let fx = vec![Effect::Invoke {
        session_id: sid.clone(),
        text: "faster".into(),
        mode: nbook::engine::agents::InvokeMode::Steer,
    }];
    for e in fx {
        exec.execute(e);
    }
    pump(&mut app, &exec, &mut rx, |a| {
        matches!(a, Action::InvokeAdmitted { .. })
    })
    .await;
    let msg = app.status.as_ref().unwrap().text.clone();
    assert!(msg.contains("active_invocation_required"), "{msg}");

    // Cancelling an idle session: the host says there was nothing to cancel.
    exec.execute(Effect::CancelRun {
        session_id: sid.clone(),
    });
    pump(&mut app, &exec, &mut rx, |a| matches!(a, Action::Notice(_))).await;
    assert!(app
        .status
        .as_ref()
        .unwrap()
        .text
        .contains("no run to cancel"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_are_answered_and_jobs_cancelled_through_the_executor() {
    use nbook::engine::inputs::{InputSource, Question, QuestionOption};
    use nbook::engine::jobs::{JobKind, JobStart};

    let f = fixture();
    let engine = open(&f);
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let mut events = engine.subscribe();
    let mut app = nbook::tui::build_app(&engine, &f.dirs, None, (120, 40));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    let exec = Executor::new(engine.clone(), tx);

    let (e, s) = (engine.clone(), sid.clone());
    let asker = tokio::task::spawn_blocking(move || {
        e.ask_blocking(
            &s,
            InputSource::Workflow,
            "job-9:1",
            "Pick a tone",
            vec![Question {
                header: None,
                question: "Tone?".into(),
                options: vec![
                    QuestionOption {
                        label: "bleak".into(),
                        description: None,
                    },
                    QuestionOption {
                        label: "warm".into(),
                        description: None,
                    },
                ],
                multi: false,
            }],
        )
    });
    let ev = loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(ev, EngineEvent::InputRequested { .. }) {
            break ev;
        }
    };
    app.update(Action::Engine(ev));
    assert_eq!(app.approvals.question_count(), 1);
    // A bad answer straight to the engine is refused and the question stays.
    exec.execute(Effect::AnswerInput {
        id: "job-9:1".into(),
        answers: vec![],
    });
    pump(&mut app, &exec, &mut rx, |a| {
        matches!(a, Action::AnswerChecked { .. })
    })
    .await;
    assert_eq!(app.approvals.question_count(), 1);
    assert!(app.status.as_ref().unwrap().text.contains("answer 1"));
    // From the form: 2 picks "warm".
    assert_eq!(run_keys(&mut app, &exec, "5 <Enter> 2 <Enter>"), 1);
    pump(&mut app, &exec, &mut rx, |a| {
        matches!(a, Action::AnswerChecked { .. })
    })
    .await;
    let answers = asker.await.unwrap().unwrap();
    assert_eq!(answers[0].selected_option_index, Some(1));
    assert_eq!(answers[0].text, "warm");
    assert_eq!(app.approvals.question_count(), 0);
    assert!(app.overlay.is_none());

    // A running job is cancelled by id.
    let (job, token) = engine
        .jobs()
        .start(JobStart {
            kind: JobKind::Bash,
            title: "sleep".into(),
            owner_session_id: None,
            origin_tool_call_id: None,
            reference: json!({"command": "sleep 100"}),
            preview: None,
        })
        .unwrap();
    app.update(Action::JobsResync(engine.jobs().list(None, None)));
    assert_eq!(run_keys(&mut app, &exec, "4 b x"), 1);
    pump(&mut app, &exec, &mut rx, |a| matches!(a, Action::Notice(_))).await;
    assert!(token.is_cancelled());
    assert!(app.status.as_ref().unwrap().text.contains(&job));
}
