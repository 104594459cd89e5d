//! Keymap loading: the embedded defaults parse and bind every approval key; a user file
//! overrides or extends them; an unknown action, key or section is an error that names the
//! line, and a bad user file leaves the defaults in force with the error for the status bar.

use nbook::tui::action::Command;
use nbook::tui::keymap::{Context, Keymap, DEFAULT_KEYMAP};
use nbook::tui::keys::Key;

fn k(s: &str) -> Key {
    Key::parse(s).unwrap()
}

#[test]
fn defaults_parse_and_bind_the_documented_keys() {
    let map = Keymap::parse(DEFAULT_KEYMAP, "assets/keymap.toml", None).unwrap();
    assert_eq!(map, Keymap::defaults());
    for (ctx, key, cmd) in [
        (Context::Approvals, "y", Command::Approve),
        (Context::Approvals, "a", Command::ApproveSession),
        (Context::Approvals, "n", Command::Reject),
        (Context::Approvals, "e", Command::EditArgs),
        (Context::Approvals, "<Enter>", Command::Detail),
        (Context::Global, "q", Command::Quit),
        (Context::Global, "?", Command::Help),
        (Context::Global, "<C-p>", Command::Palette),
        (Context::Global, ":", Command::Palette),
        (Context::Global, "<Tab>", Command::FocusNext),
        (Context::Global, "<S-Tab>", Command::CycleMode),
        (Context::Global, "1", Command::FocusFiles),
        (Context::Global, "5", Command::FocusApprovals),
        (Context::Files, "/", Command::Find),
        (Context::Files, "<C-f>", Command::Find),
        (Context::Input, "<C-s>", Command::Submit),
        (Context::Input, "<Esc>", Command::Cancel),
    ] {
        assert_eq!(map.lookup(ctx, k(key)), Some(cmd), "{key} in {ctx:?}");
    }
}

#[test]
fn unknown_action_in_user_file_names_the_line() {
    let user = "[approvals]\nprepend_keymap = [\n  { on = \"x\", run = \"approve\" },\n  { on = \"z\", run = \"aprove\" },\n]\n";
    let err = Keymap::parse(user, "keymap.toml", Some(&Keymap::defaults())).unwrap_err();
    assert_eq!(err.line, 4, "{err}");
    assert!(err.to_string().contains("keymap.toml line 4"), "{err}");
    assert!(err.message.contains("aprove"), "{err}");
}

#[test]
fn unknown_key_and_section_name_the_line() {
    let err = Keymap::parse(
        "[files]\nkeymap = [\n { on = \"<Nope>\", run = \"down\" },\n]\n",
        "k.toml",
        None,
    )
    .unwrap_err();
    assert_eq!(err.line, 3, "{err}");
    assert!(err.message.contains("<Nope>"));
    let err = Keymap::parse(
        "[global]\nkeymap = []\n\n[filez]\nkeymap = []\n",
        "k.toml",
        None,
    )
    .unwrap_err();
    assert_eq!(err.line, 4, "{err}");
}

#[test]
fn user_file_prepends_and_replaces() {
    let user = "[approvals]\nprepend_keymap = [{ on = \"Y\", run = \"approve\", desc = \"Yes!\" }]\n[story]\nkeymap = [{ on = \"x\", run = \"refresh\" }]\n";
    let map = Keymap::parse(user, "keymap.toml", Some(&Keymap::defaults())).unwrap();
    assert_eq!(
        map.lookup(Context::Approvals, k("Y")),
        Some(Command::Approve)
    );
    assert_eq!(
        map.lookup(Context::Approvals, k("y")),
        Some(Command::Approve)
    );
    assert_eq!(map.lookup(Context::Story, k("x")), Some(Command::Refresh));
    assert_eq!(map.help_rows(Context::Approvals)[0].1, "Yes!");
}

#[test]
fn load_keeps_the_good_lines_of_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keymap.toml");
    let (map, err) = Keymap::load(&path);
    assert!(err.is_empty());
    assert_eq!(map, Keymap::defaults());
    // One unknown action among good bindings: only that binding is left out.
    std::fs::write(
        &path,
        "[global]\nprepend_keymap = [\n  { on = \"Q\", run = \"quit\" },\n  { on = \"q\", run = \"explode\" },\n  { on = \"W\", run = \"help\" },\n]\n",
    )
    .unwrap();
    let (map, err) = Keymap::load(&path);
    assert_eq!(err.len(), 1, "{err:?}");
    assert_eq!(err[0].line, 4, "{}", err[0]);
    assert!(err[0].message.contains("explode"), "{}", err[0]);
    assert_eq!(map.lookup(Context::Global, k("Q")), Some(Command::Quit));
    assert_eq!(map.lookup(Context::Global, k("W")), Some(Command::Help));
    assert_eq!(map.lookup(Context::Global, k("q")), Some(Command::Quit));
    // A bad key, an unknown field, an unknown section and a wrong type each cost only
    // themselves; the good sections apply.
    std::fs::write(
        &path,
        concat!(
            "[files]\n",
            "prepend_keymap = [{ on = \"<Nope>\", run = \"down\" }, { on = \"J\", run = \"down\" }]\n",
            "[story]\n",
            "prepend_keymap = [{ on = \"X\", run = \"refresh\", colour = \"red\" }]\n",
            "keymapp = []\n",
            "[filez]\n",
            "keymap = []\n",
            "[world]\n",
            "prepend_keymap = \"oops\"\n",
            "[approvals]\n",
            "prepend_keymap = [{ on = \"Y\", run = \"approve\" }]\n",
        ),
    )
    .unwrap();
    let (map, err) = Keymap::load(&path);
    let lines: Vec<usize> = err.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![2, 4, 5, 6, 9], "{err:?}");
    assert!(err[0].message.contains("<Nope>"), "{}", err[0]);
    assert!(err[1].message.contains("colour"), "{}", err[1]);
    assert!(err[2].message.contains("keymapp"), "{}", err[2]);
    assert!(err[3].message.contains("filez"), "{}", err[3]);
    assert_eq!(map.lookup(Context::Files, k("J")), Some(Command::Down));
    assert_eq!(map.lookup(Context::Story, k("X")), None);
    assert_eq!(
        map.bindings(Context::World),
        Keymap::defaults().bindings(Context::World)
    );
    assert_eq!(
        map.lookup(Context::Approvals, k("Y")),
        Some(Command::Approve)
    );
    // Not TOML at all: nothing of it applies, the error names the line.
    std::fs::write(&path, "[global]\nprepend_keymap = [{ on = \"Q\"\n").unwrap();
    let (map, err) = Keymap::load(&path);
    assert_eq!(err.len(), 1, "{err:?}");
    assert_eq!(map, Keymap::defaults());
    std::fs::write(
        &path,
        "[global]\nprepend_keymap = [{ on = \"Q\", run = \"quit\" }]\n",
    )
    .unwrap();
    let (map, err) = Keymap::load(&path);
    assert!(err.is_empty());
    assert_eq!(map.lookup(Context::Global, k("Q")), Some(Command::Quit));
}

#[test]
fn a_bad_user_keymap_shows_in_the_status_bar() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("keymap.toml"),
        "[approvals]\nkeymap = [{ on = \"y\", run = \"yes\" }]\n",
    )
    .unwrap();
    let (_, err) = Keymap::load(&dir.path().join("keymap.toml"));
    let notice = nbook::tui::keymap_notes(&err).remove(0);
    let app = nbook::tui::app::AppState::new(nbook::tui::app::AppInit {
        title: "T".into(),
        keymap: Keymap::defaults(),
        theme: nbook::tui::theme::Theme::default(),
        clock: std::sync::Arc::new(nbook::tui::clock::SystemClock),
        size: (80, 24),
        sessions: vec![],
        pending: vec![],
        inputs: vec![],
        jobs: vec![],
        profiles: vec![],
        models: vec![],
        focus_session: None,
        notices: vec![notice],
    });
    let text = &app.status.as_ref().unwrap().text;
    assert!(text.contains("line 2") && text.contains("yes"), "{text}");
}

#[test]
fn every_palette_action_has_a_name_and_description() {
    for c in nbook::tui::palette_commands() {
        assert_eq!(Command::from_name(c.name()), Some(c));
        assert!(!c.description().is_empty());
    }
}
