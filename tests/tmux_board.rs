//! The Board pane end to end with the real binary in a real terminal (tmux): a task created
//! headless with `nbook board create`, then nbook opened on the project; `6` shows the card in
//! its column, `Enter` opens the task's detail, `n` creates a second task from the prompt (the
//! author's `fn_task_create`, read back with `nbook board list --json`), and `m` moves it.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where a missing tmux is a failure.

use std::time::Duration;

mod tmux_support;
use tmux_support::{skip_without_tmux, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

#[test]
fn board_pane_shows_a_created_task_and_opens_it() {
    if skip_without_tmux() {
        return;
    }
    let book = tmux_support::Book::init(None);
    let (home, p) = (&book.home, book.path.clone());
    let nbook = |args: &[&str]| book.nbook(args);
    let out = nbook(&[
        "board",
        "create",
        "Draft chapter 12 from its brief",
        "--project",
        &p,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let t = Tmux::start(
        &format!("nbook-e2e-board-{}", std::process::id()),
        &format!(
            "env NBOOK_HOME='{}' TERM=xterm-256color '{}' '{}'",
            home.display(),
            BIN,
            p
        ),
    );
    let long = Duration::from_secs(60);
    t.wait_for("the TUI", long, |s| s.contains("1 Files"));
    t.keys(&["6"]);
    let s = t.wait_for("the card", long, |s| {
        s.contains("Planning (1)") && s.contains("NB-001 Draft chapter 12")
    });
    assert!(s.contains("6 Board (1)"), "{s}");
    t.keys(&["Enter"]);
    let s = t.wait_for("the task's detail", long, |s| s.contains("Task NB-001"));
    assert!(
        s.contains("Steps") && s.contains("PROMPT.md") && s.contains("Task created"),
        "{s}"
    );

    // n: a second task from the prompt, as the author.
    t.keys(&["n"]);
    t.wait_for("the prompt", long, |s| s.contains("New task"));
    t.type_text("Audit act 2 for continuity");
    t.keys(&["Enter"]);
    t.wait_for("the new card", long, |s| s.contains("NB-002 Audit act 2"));
    // m moves the selected task (the new one) to Drafting.
    t.keys(&["m"]);
    t.wait_for("the move", long, |s| s.contains("Drafting (1)"));
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));

    let out = nbook(&["board", "list", "--json", "--project", &p]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("NB-002") && text.contains("drafting"),
        "{text}"
    );
}
