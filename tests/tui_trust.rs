//! The trust prompt at open (issue 11 item 1): a project config that loosens the author's
//! policy (real files in a temp config dir and project) opens a dialog listing exactly the
//! lines nbook ignores; `t` records the trust, `Esc` keeps ignoring. Snapshots at 80×24 and
//! 120×40.

mod tui_support;

use nbook::config::{Config, Dirs, LoadReport, TrustState};
use nbook::tui::action::Effect;
use tui_support::*;

struct Files {
    _tmp: tempfile::TempDir,
    dirs: Dirs,
    root: std::path::PathBuf,
}

fn files() -> Files {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let root = tmp.path().join("book");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(root.join(".nbook")).unwrap();
    std::fs::write(
        home.join("config.toml"),
        "[approval]\npreset = \"supervised\"\n[approval.tools]\nbash = \"deny\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join(".nbook/config.toml"),
        "[approval]\npreset = \"neurobook\"\n\n[approval.tools]\nbash = \"allow\"\nwrite = \"deny\"\n\n[web]\nallow_hosts = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    let dirs = Dirs {
        config: home.clone(),
        data: home.join("data"),
        logs: home.join("logs"),
    };
    Files {
        _tmp: tmp,
        dirs,
        root,
    }
}

/// The report with the temp paths replaced, so the snapshot does not depend on them.
fn stable(mut r: LoadReport) -> LoadReport {
    if let Some(g) = &mut r.project {
        g.file = "/home/me/book/.nbook/config.toml".into();
        g.project = "/home/me/book".into();
    }
    r
}

#[test]
fn trust_prompt_lists_exactly_the_loosening_lines() {
    let f = files();
    let report = Config::load_report(&f.dirs, Some(&f.root)).unwrap();
    let gate = report.held().expect("lines are held");
    let keys: Vec<&str> = gate.lines.iter().map(|l| l.key.as_str()).collect();
    assert_eq!(
        keys,
        vec![
            "approval.preset",
            "approval.tools.bash",
            "web.allow_hosts.0"
        ],
        "write = deny tightens and is not listed"
    );
    // Until trusted, the author's policy holds; the tightening line applies.
    assert_eq!(
        report.config.approval.preset,
        nbook::config::Preset::Supervised
    );
    assert_eq!(
        report.config.approval.tools.get("write"),
        Some(&nbook::config::ToolRule::Deny)
    );
    let report = stable(report);
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let (mut app, _) = empty_app(w, h);
        app.config_report(&report);
        assert_eq!(app.overlay.as_ref().map(|o| o.name()), Some("trust"));
        let screen = render(&mut app, w, h);
        insta::assert_snapshot!(format!("trust_prompt_{w}x{h}"), screen);
    }
}

#[test]
fn t_records_the_trust_and_esc_keeps_ignoring() {
    let f = files();
    let report = Config::load_report(&f.dirs, Some(&f.root)).unwrap();

    let (mut app, _) = empty_app(100, 30);
    app.config_report(&report);
    let fx = press(&mut app, "<Esc>");
    assert!(fx.is_empty() && app.overlay.is_none());
    assert!(app
        .status
        .as_ref()
        .is_some_and(|s| s.text.contains("Kept ignoring 3 line(s)")));

    let (mut app, _) = empty_app(100, 30);
    app.config_report(&report);
    let fx = press(&mut app, "t");
    let Some(Effect::TrustProjectConfig {
        project,
        sha256,
        lines,
    }) = fx.into_iter().next()
    else {
        panic!("t asks the runtime to record the trust");
    };
    assert_eq!(lines.len(), 3);
    // What the runtime does with it: the next load applies the project's lines.
    nbook::config::trust::trust(&f.dirs, std::path::Path::new(&project), &sha256, lines).unwrap();
    let again = Config::load_report(&f.dirs, Some(&f.root)).unwrap();
    assert_eq!(again.project.as_ref().unwrap().trust, TrustState::Trusted);
    assert!(again.held().is_none());
    assert_eq!(
        again.config.approval.preset,
        nbook::config::Preset::Neurobook
    );
    assert_eq!(
        again.config.approval.tools.get("bash"),
        Some(&nbook::config::ToolRule::Allow)
    );

    // Opening a project with nothing held shows no prompt.
    let (mut app, _) = empty_app(100, 30);
    app.config_report(&again);
    assert!(app.overlay.is_none());
}
