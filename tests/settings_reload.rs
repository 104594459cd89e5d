//! config.toml and keymap.toml while nbook runs: the real binary in tmux picks up a changed
//! keymap (a bad line reported with its file and line, the rest applied) and a changed
//! config.toml (its unknown keys reported with file and line; a model written there is the
//! default of the next session); `nbook run` without a model names the config file; the
//! status bar texts of a reload are snapshots.

#[allow(dead_code)]
mod tmux_support;
mod tui_support;

use std::path::PathBuf;
use std::time::Duration;

use nbook::tui::action::{Action, ConfigReload};
use nbook::tui::keymap::Keymap;
use tmux_support::{skip_without_tmux, Tmux};
use tui_support::{empty_app, press, render};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

#[test]
fn nbook_run_without_a_model_names_the_config_file_and_the_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let book = tmp.path().join("book");
    let ok = std::process::Command::new(BIN)
        .args(["init", book.to_str().unwrap()])
        .env("NBOOK_HOME", &home)
        .status()
        .unwrap();
    assert!(ok.success());
    let out = std::process::Command::new(BIN)
        .args([
            "run",
            "--project",
            book.to_str().unwrap(),
            "--profile",
            "writer",
            "--message",
            "hi",
        ])
        .env("NBOOK_HOME", &home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let file = home.join("config.toml").display().to_string();
    assert!(err.contains(&file), "{err}");
    assert!(
        err.contains("[models.local]") && err.contains("[defaults] model"),
        "{err}"
    );
    assert!(err.contains("--model NAME"), "{err}");
}

#[test]
fn reload_messages_in_the_status_bar() {
    let (mut app, _) = empty_app(100, 12);
    app.config_file = PathBuf::from("/home/author/.config/nbook/config.toml");
    app.update(Action::ConfigReloaded(ConfigReload {
        result: Ok((vec!["local".into()], Default::default())),
        notes: vec![
            "/home/author/.config/nbook/config.toml line 3: unknown key `thme` is ignored; check its spelling against the documented config keys".into(),
            "/home/author/.config/nbook/config.toml line 7: [approval.tools] `bsh` is not a tool, so this rule does nothing; did you mean `bash`?".into(),
        ],
        theme: Some(Box::new(nbook::tui::theme::Theme::builtin("light").unwrap())),
    }));
    assert_eq!(app.theme.name, "light");
    assert_eq!(app.models, vec!["local".to_string()]);
    insta::assert_snapshot!("config_reloaded_with_warnings", render(&mut app, 100, 12));
    app.update(Action::ConfigReloaded(ConfigReload {
        result: Err("/home/author/.config/nbook/config.toml: TOML parse error at line 2".into()),
        notes: vec![],
        theme: None,
    }));
    assert_eq!(app.theme.name, "light", "kept");
    assert_eq!(app.models, vec!["local".to_string()], "kept");
    insta::assert_snapshot!("config_reload_failed", render(&mut app, 100, 12));
    let text = "[global]\nprepend_keymap = [\n  { on = \"Q\", run = \"quit\" },\n  { on = \"W\", run = \"explode\" },\n]\n";
    let (keymap, errors) = Keymap::parse_lenient(
        text,
        "/home/author/.config/nbook/keymap.toml",
        Some(&Keymap::defaults()),
    );
    app.update(Action::KeymapReloaded {
        keymap: Box::new(keymap),
        errors,
    });
    insta::assert_snapshot!("keymap_reloaded_with_an_error", render(&mut app, 100, 12));
    assert_eq!(
        app.keymap.lookup(
            nbook::tui::keymap::Context::Global,
            nbook::tui::keys::Key::parse("Q").unwrap()
        ),
        Some(nbook::tui::action::Command::Quit)
    );
}

#[test]
fn the_new_session_form_without_models_points_to_the_setup() {
    let (mut app, _) = empty_app(100, 30);
    app.models.clear();
    app.config_file = PathBuf::from("/home/author/.config/nbook/config.toml");
    press(&mut app, "4 n");
    insta::assert_snapshot!("new_session_no_models", render(&mut app, 100, 30));
}

#[test]
fn the_running_tui_reloads_the_keymap_and_the_config() {
    if skip_without_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let book = tmp.path().join("book");
    std::fs::create_dir_all(&home).unwrap();
    assert!(std::process::Command::new(BIN)
        .args(["init", book.to_str().unwrap()])
        .env("NBOOK_HOME", &home)
        .status()
        .unwrap()
        .success());
    let cmd = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' '{}'; sleep 30",
        home.display(),
        BIN,
        book.display()
    );
    let t = Tmux::start(&format!("nbook-reload-{}", std::process::id()), &cmd);
    let long = Duration::from_secs(60);
    t.wait_for("the TUI", long, |s| s.contains("1 Files"));
    // A keymap with one bad line: reported with file and line; the good line works (Q quits
    // only after the reload, so it is checked last).
    let keymap = home.join("keymap.toml");
    std::fs::write(
        &keymap,
        "[global]\nprepend_keymap = [\n  { on = \"F\", run = \"focus_sessions\" },\n  { on = \"W\", run = \"explode\" },\n]\n",
    )
    .unwrap();
    let s = t.wait_for("the keymap reload", long, |s| s.contains("keymap reloaded"));
    assert!(s.contains("line 4") && s.contains("explode"), "{s}");
    // The config: an unknown key is reported with the file and line.
    std::fs::write(home.join("config.toml"), "thme = \"dark\"\n").unwrap();
    let s = t.wait_for("the config reload", long, |s| s.contains("config reloaded"));
    assert!(s.contains("line 1") && s.contains("thme"), "{s}");
    // The good keymap line applies: F focuses Sessions, whose empty state offers the setup.
    t.keys(&["F"]);
    t.wait_for("Sessions focused", long, |s| {
        s.contains("No model is configured yet")
    });
}
