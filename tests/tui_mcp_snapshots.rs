//! Snapshots of what an outside MCP client's session looks like in the TUI: its row in the
//! Sessions pane is marked `MCP` and titled with the client's name, and its pending call in
//! the Approvals pane names the client beside the session (list and detail header).

mod tui_support;

use nbook::engine::{Mode, SessionState};
use nbook::tui::app::{AppState, Pane};
use tui_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn mcp_app(w: u16, h: u16) -> AppState {
    let mut client = session(
        "3",
        "mcp.default",
        Mode::Normal,
        SessionState::WaitingApproval,
        None,
    );
    client.client = Some("claude-code".into());
    client.title = "claude-code".into();
    client.input_tokens = 0;
    client.output_tokens = 0;
    client.cost = 0.0;
    let sessions = vec![
        session(
            "1",
            "leader.default",
            Mode::Normal,
            SessionState::Idle,
            None,
        ),
        client,
    ];
    let mut call = write_call();
    call.session_id = "3".into();
    call.profile = "mcp.default".into();
    let (mut app, _) = empty_app_with(w, h, sessions, vec![call]);
    let fx = app.start();
    drop(fx);
    app
}

#[test]
fn an_mcp_client_session_is_marked_in_sessions_and_approvals() {
    for (w, h) in SIZES {
        let mut app = mcp_app(w, h);
        app.focus = Pane::Sessions;
        let screen = render(&mut app, w, h);
        assert!(screen.contains("MCP"), "{screen}");
        insta::assert_snapshot!(format!("mcp_sessions_{w}x{h}"), screen);
        let mut app = mcp_app(w, h);
        app.focus = Pane::Approvals;
        let screen = render(&mut app, w, h);
        assert!(screen.contains("MCP client claude-code"), "{screen}");
        insta::assert_snapshot!(format!("mcp_approvals_{w}x{h}"), screen);
    }
}

/// The TUI could not open the attach socket (another program answers on it): outside agents
/// would be told that no nbook has the project open, so the author is told at once, in the
/// status bar, why and what it means.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_that_cannot_be_opened_is_announced_in_the_status_bar() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("The Salt Road")).unwrap();
    let dirs = nbook::config::Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = std::sync::Arc::new(
        nbook::engine::Engine::open(
            ws,
            nbook::config::Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    // Something else already answers on the project's socket.
    let sock = root.join(".nbook/mcp.sock");
    let _other = tokio::net::UnixListener::bind(&sock).unwrap();
    let err = match nbook::mcp::listen::serve(engine.clone()).await {
        Err(e) => e.to_string(),
        Ok(_) => panic!("must not listen where another program answers"),
    };
    let mut app = nbook::tui::build_app(&engine, &dirs, None, (180, 12));
    app.attach_failed(&err);
    let screen = render(&mut app, 180, 12);
    assert!(
        screen.contains("mcp: outside agents cannot attach (their changes are refused): another program answers on .nbook/mcp.sock"),
        "{screen}"
    );
    assert!(!screen.contains(&root.display().to_string()), "{screen}");
    insta::assert_snapshot!(screen);
}
