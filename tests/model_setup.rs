//! Model setup without guesswork: the setup form of the Sessions pane against a real local
//! HTTP server speaking the OpenAI `/v1/models` wire format, through the real executor and
//! engine — detection, the manual base URL + key variable path, the exact lines shown, the
//! write into config.toml (the rest of the file byte-identical) and the reload that lets a
//! session start at once. Plus the probe's failures, and the "no model" error of the agent
//! host naming the config file.

mod provider_support;
mod tui_support;

use std::sync::Arc;
use std::time::Duration;

use nbook::config::setup::{self, Found};
use nbook::config::{Config, Dirs};
use nbook::engine::Engine;
use nbook::tui::action::Action;
use nbook::tui::app::AppState;
use nbook::tui::runtime::{Executor, Msg};
use provider_support::{Reply, Server};
use tokio::sync::mpsc::UnboundedReceiver;
use tui_support::{press, render};

const MODELS: &str = r#"{"object":"list","data":[{"id":"qwen3-8b","object":"model","created":1700000000,"owned_by":"llamacpp"},{"id":"tiny-1b","object":"model","created":1700000000,"owned_by":"llamacpp"}]}"#;

struct Fixture {
    tmp: tempfile::TempDir,
    dirs: Dirs,
    engine: Arc<Engine>,
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
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = Arc::new(
        Engine::open(
            ws,
            Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    Fixture { tmp, dirs, engine }
}

/// A loopback port nothing listens on.
async fn closed_port() -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}/v1")
}

/// The screen with the temporary folder's path replaced by a placeholder of the same width
/// (so the layout, and the snapshot, do not depend on the random name).
fn screen(f: &Fixture, app: &mut AppState, w: u16, h: u16) -> String {
    let tmp = f.tmp.path().display().to_string();
    let text = render(app, w, h).replace(&tmp, &format!("{:<1$}", "$TMP", tmp.chars().count()));
    // The test servers' ports are the system's to pick (five digits in Linux's ephemeral
    // range): shown as PORT, padded to the same width.
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("127.0.0.1:") {
        out.push_str(&rest[..i + 10]);
        rest = &rest[i + 10..];
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        out.push_str(&format!("{:<1$}", "PORT", digits));
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// Apply every action until the setup job answers.
async fn settle(app: &mut AppState, rx: &mut UnboundedReceiver<Msg>) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("the setup job answers")
            .expect("channel open");
        if let Msg::Action(a) = msg {
            let done = matches!(*a, Action::SetupDone { .. });
            seen.push(format!("{a:?}").chars().take(40).collect());
            let fx = app.update(*a);
            assert!(fx.is_empty(), "unexpected effects {fx:?}");
            if done {
                return seen;
            }
        }
    }
}

fn run(exec: &Executor, fx: Vec<nbook::tui::action::Effect>) {
    assert_eq!(fx.len(), 1, "{fx:?}");
    for e in fx {
        assert!(!exec.execute(e));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn detects_a_local_server_writes_its_lines_and_a_session_can_start() {
    let f = fixture();
    let server = Server::start(vec![Reply::json(MODELS)]).await;
    let file = f.dirs.config_file();
    std::fs::create_dir_all(&f.dirs.config).unwrap();
    let original =
        "# the author's own settings\ntheme = \"light\"  # keep me\n\n[notify]\nbell = false\n";
    std::fs::write(&file, original).unwrap();
    assert!(f.engine.reload_config_if_changed().is_some());

    let mut app = nbook::tui::build_app(&f.engine, &f.dirs, None, (100, 30));
    app.setup_servers = vec![
        ("Ollama".into(), closed_port().await),
        ("llama.cpp".into(), server.base_url()),
    ];
    press(&mut app, "4");
    insta::assert_snapshot!("setup_empty_state", screen(&f, &mut app, 100, 30));

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    let exec = Executor::new(f.engine.clone(), tx);
    let fx = press(&mut app, "m");
    insta::assert_snapshot!("setup_detecting", screen(&f, &mut app, 100, 30));
    run(&exec, fx);
    settle(&mut app, &mut rx).await;
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/v1/models");
    insta::assert_snapshot!("setup_choose", screen(&f, &mut app, 100, 30));

    // The second model, then the lines it will write.
    let fx = press(&mut app, "j <Enter>");
    run(&exec, fx);
    settle(&mut app, &mut rx).await;
    insta::assert_snapshot!("setup_review", screen(&f, &mut app, 100, 30));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        original,
        "nothing written yet"
    );

    let fx = press(&mut app, "<Enter>");
    run(&exec, fx);
    let seen = settle(&mut app, &mut rx).await;
    assert!(seen[0].starts_with("ConfigReloaded"), "{seen:?}");
    insta::assert_snapshot!("setup_written", screen(&f, &mut app, 100, 30));

    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.starts_with(original), "{written}");
    let added = &written[original.len()..];
    assert_eq!(
        added,
        format!(
            "\n[providers.llama-cpp]\nkind = \"openai\"\nbase_url = \"{}\"\n\n[models.tiny-1b]\nprovider = \"llama-cpp\"\nname = \"tiny-1b\"\n\n[defaults]\nmodel = \"tiny-1b\"\n",
            server.base_url()
        )
    );
    // Reloaded: the engine, the app and the agent host see the model at once.
    assert_eq!(f.engine.config().defaults.model.as_deref(), Some("tiny-1b"));
    assert_eq!(app.models, vec!["tiny-1b".to_string()]);
    let source = nbook::agent::host::config_providers(f.engine.live_config().clone());
    let profile = f.engine.profiles().get("leader.default").unwrap();
    let provider = source(&profile, None).expect("a provider for the default model");
    assert_eq!(provider.name(), "llama-cpp:tiny-1b");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_local_server_it_takes_a_base_url_and_a_key_variable() {
    let f = fixture();
    let server = Server::start(vec![
        Reply::error(401, r#"{"error":"bad key"}"#),
        Reply::json(MODELS),
    ])
    .await;
    let mut app = nbook::tui::build_app(&f.engine, &f.dirs, None, (100, 30));
    app.setup_servers = vec![("llama.cpp".into(), closed_port().await)];
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    let exec = Executor::new(f.engine.clone(), tx);
    press(&mut app, "4");
    run(&exec, press(&mut app, "m"));
    settle(&mut app, &mut rx).await;
    insta::assert_snapshot!("setup_manual_nothing_found", screen(&f, &mut app, 100, 30));

    std::env::set_var("NBOOK_SETUP_TEST_KEY", "sk-test-123");
    let typed: String = server
        .base_url()
        .chars()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(press(&mut app, &typed).is_empty());
    assert!(
        press(&mut app, "<Enter>").is_empty(),
        "Enter moves to the key field"
    );
    let var: String = "NBOOK_SETUP_TEST_KEY"
        .chars()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ");
    press(&mut app, &var);
    insta::assert_snapshot!("setup_manual_typed", screen(&f, &mut app, 100, 30));
    // The server refuses the key first: the error is shown and the fields stay.
    run(&exec, press(&mut app, "<Enter>"));
    settle(&mut app, &mut rx).await;
    insta::assert_snapshot!("setup_manual_refused", screen(&f, &mut app, 100, 30));
    run(&exec, press(&mut app, "<Enter>"));
    settle(&mut app, &mut rx).await;
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[1].header("authorization"), Some("Bearer sk-test-123"));
    run(&exec, press(&mut app, "<Enter>"));
    settle(&mut app, &mut rx).await;
    let screen_text = screen(&f, &mut app, 100, 30);
    assert!(
        screen_text.contains("api_key_env = \"NBOOK_SETUP_TEST_KEY\""),
        "{screen_text}"
    );
    assert!(
        !screen_text.contains("sk-test-123"),
        "the key itself is never written"
    );
    // Esc leaves without writing.
    press(&mut app, "<Esc>");
    assert!(app.overlay.is_none());
    assert!(!f.dirs.config_file().exists());
}

#[tokio::test]
async fn probe_failures_say_what_is_wrong() {
    let env = |_: &str| None;
    let closed = closed_port().await;
    let e = setup::probe(&closed, None, &env)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("nothing is listening"), "{e}");
    let s = Server::start(vec![
        Reply::json(r#"{"models":[]}"#),
        Reply::json(r#"{"object":"list","data":[]}"#),
        Reply::error(404, "not found"),
    ])
    .await;
    let url = s.base_url();
    let e = setup::probe(&url, None, &env)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("not an OpenAI model list"), "{e}");
    let e = setup::probe(&url, None, &env)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("serves no model"), "{e}");
    let e = setup::probe(&url, None, &env)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("404"), "{e}");
    // Detection skips what does not answer, keeps what does, in the order given.
    let s = Server::start(vec![Reply::json(MODELS)]).await;
    let found = setup::detect(
        &[("a".into(), closed.clone()), ("b".into(), s.base_url())],
        setup::DETECT_TIMEOUT,
    )
    .await;
    assert_eq!(
        found,
        vec![Found {
            label: "b".into(),
            base_url: s.base_url(),
            api_key_env: None,
            models: vec!["qwen3-8b".into(), "tiny-1b".into()],
        }]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_hosts_no_model_error_names_the_config_file() {
    let f = fixture();
    let source = nbook::agent::host::config_providers(f.engine.live_config().clone());
    let profile = f.engine.profiles().get("writer").unwrap();
    let e = source(&profile, None).err().expect("no model");
    let file = f.dirs.config_file().display().to_string();
    assert!(e.contains(&file), "{e}");
    assert!(
        e.contains("[models.") && e.contains("[defaults] model"),
        "{e}"
    );
    assert!(e.contains("`m` in the Sessions pane"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_change_is_reloaded_and_a_broken_one_keeps_the_last() {
    let f = fixture();
    let file = f.dirs.config_file();
    std::fs::create_dir_all(&f.dirs.config).unwrap();
    assert!(
        f.engine.reload_config_if_changed().is_none(),
        "nothing changed"
    );
    std::fs::write(
        &file,
        "thme = \"dark\"\n[approval]\npreset = \"locked\"\n[approval.tools]\nbsh = \"deny\"\n",
    )
    .unwrap();
    let report = match f.engine.reload_config_if_changed() {
        Some(nbook::config::Reload::Applied(r)) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        f.engine.config().approval.preset,
        nbook::config::Preset::Locked
    );
    let notes = report.notes();
    let path = file.display().to_string();
    assert!(
        notes
            .iter()
            .any(|n| n.contains(&format!("{path} line 1")) && n.contains("thme")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains(&format!("{path} line 5"))
            && n.contains("`bsh`")
            && n.contains("bash")),
        "{notes:?}"
    );
    assert!(f.engine.reload_config_if_changed().is_none());
    std::fs::write(&file, "[approval]\npreset = \"yolo\"\n").unwrap();
    match f.engine.reload_config_if_changed() {
        Some(nbook::config::Reload::Failed(e)) => {
            assert!(e.to_string().contains(&path), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        f.engine.config().approval.preset,
        nbook::config::Preset::Locked,
        "the last good config stays in force"
    );
}
