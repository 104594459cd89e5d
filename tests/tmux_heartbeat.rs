//! Heartbeat agents end to end with the real binary in a real terminal (tmux): the demo's
//! continuity editor (agent-001) is woken from the Board's agent list (`6`, `H`, `Enter`), its
//! heartbeat session shows in the Sessions pane, its last run in the list, and its report mail
//! in the Inbox (`I`). A second nbook opened on the same project says in its status line that
//! the first one (its pid) runs the heartbeats.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where a missing tmux is a failure.

mod tmux_support;

use std::time::Duration;

use tmux_support::{skip_without_tmux, Tmux};

#[test]
fn the_demo_continuity_editor_wakes_from_the_board_and_mails_its_report() {
    if skip_without_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = tmp.path().join("hesta");
    let bin = env!("CARGO_BIN_EXE_nbook");
    let cmd = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' demo --dir '{}'; sleep 30",
        home.display(),
        bin,
        dir.display()
    );
    let t = Tmux::start(&format!("nbook-hb-{}", std::process::id()), &cmd);
    let long = Duration::from_secs(60);
    t.wait_for("the demo to open", long, |s| s.contains("6 Board"));
    t.keys(&["6"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["H"]);
    t.wait_for("the agent list", long, |s| {
        s.contains("agent-001 Continuity editor") && s.contains("never ran")
    });
    t.keys(&["Enter"]);
    t.wait_for("the wake notice", long, |s| s.contains("agent-001 woke"));
    t.wait_for("its session in Sessions", long, |s| {
        s.contains("heartbeat") && s.contains("Sessions (2)")
    });
    // The run ends with fn_heartbeat_done: the list shows it done, with its summary.
    t.wait_for("the run to end", long, |s| {
        // (the list names the agent a session runs as: "heartbeat as agent-001")
        s.contains("as agent-001 normal idle")
    });
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["H"]);
    t.wait_for("the last run in the list", long, |s| {
        s.contains("manual · done") && s.contains("Checked chapters")
    });
    t.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["I"]);
    t.wait_for("the report in the Inbox", long, |s| {
        s.contains("agent-001") && s.contains("Continuity check")
    });

    // A second nbook on the same project: the first runs the heartbeats.
    let pid_file = dir.join(".nbook/scheduler.lock");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let cmd2 = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' '{}'; sleep 30",
        home.display(),
        bin,
        dir.display()
    );
    let t2 = Tmux::start(&format!("nbook-hb2-{}", std::process::id()), &cmd2);
    t2.wait_for("the lock notice", long, |s| {
        s.contains(&format!("another nbook (pid {})", pid.trim()))
    });
}
