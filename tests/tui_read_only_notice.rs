//! A project database written by a newer nbook: the TUI opens it and says at once, in the
//! status bar, that it is read-only and why.

mod tui_support;

use std::sync::Arc;

use nbook::config::{Config, Dirs};
use nbook::engine::Engine;

#[test]
fn a_newer_database_is_announced_in_the_status_bar() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("The Salt Road")).unwrap();
    {
        let c = nbook::store::open(&root.join(".nbook/project.sqlite")).unwrap();
        c.pragma_update(None, "user_version", 99).unwrap();
    }
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
    let mut app = nbook::tui::build_app(&engine, &dirs, None, (100, 12));
    let screen = tui_support::render(&mut app, 100, 12);
    let known = nbook::store::KNOWN_VERSION;
    assert!(
        screen.contains(&format!("newer nbook (version 99 > {known})")),
        "{screen}"
    );
    let root_text = root.display().to_string();
    insta::assert_snapshot!(screen.replace(&root_text, "<project>"));
}
