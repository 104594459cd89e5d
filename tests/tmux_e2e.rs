//! End to end with the real binary in a real terminal (tmux): run the demo, approve the
//! proposed `write`, reject the `edit` with a typed reason, approve the `apply_patch`, quit,
//! then check the files on disk and the session log. A second scenario drives the Sessions
//! pane: a prompt from the composer once the demo's recorded script has played (no model is
//! configured, and the TUI says so), a new `writer` session from the new-session form, and
//! the jobs view's empty state. A third runs a workflow a scripted model asks for: approval,
//! the workflow's question answered in the Approvals pane, the job in the Jobs view, and its
//! result delivered to the session. A fourth streams a slow reply into the transcript. Two
//! more check the author's own hands: `$EDITOR` (a script) edits a file from the Files pane
//! and the write is logged as the author's, Ctrl+Z stops nbook in an interactive shell and
//! `fg` brings it back; and `e` on a waiting `write` edits the proposed file in `$EDITOR`. The
//! last sees tmux flag the bell a waiting call rings while nbook's window is not current.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where `.ci/run` installs tmux and a missing tmux is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

mod tmux_support;
use tmux_support::{skip_without_tmux, Tmux};

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel)).ok()
}

#[test]
fn demo_approve_reject_approve_then_files_on_disk() {
    if skip_without_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir: PathBuf = tmp.path().join("hesta");
    let bin = env!("CARGO_BIN_EXE_nbook");
    let cmd = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' demo --dir '{}'; sleep 30",
        home.display(),
        bin,
        dir.display()
    );
    let t = Tmux::start(&format!("nbook-e2e-{}", std::process::id()), &cmd);
    let long = Duration::from_secs(60);

    // 1. The write of a new lorebook entry arrives in the queue: approve it.
    t.wait_for("the write request", long, |s| s.contains("flett-watch"));
    t.keys(&["5"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["y"]);
    t.wait_for("the entry on disk", long, |_| {
        dir.join("lorebook/item/flett-watch/index.md").exists()
    });

    // 2. The edit of chapter 3: reject it with a reason.
    t.wait_for("the edit request", long, |s| s.contains("003-chapter"));
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["n"]);
    std::thread::sleep(Duration::from_millis(300));
    t.type_text("keep the gold watch for now");
    t.keys(&["Enter"]);

    // 3. The patch: approve it once the typing guard (1 s) has passed.
    t.wait_for("the patch request", long, |s| {
        s.contains("Patch") || s.contains("apply_patch")
    });
    std::thread::sleep(Duration::from_millis(1500));
    t.keys(&["y"]);
    t.wait_for("the moved note on disk", long, |_| {
        dir.join("lorebook/note/ideas/index.md").exists()
    });

    // Quit (confirming if the TUI asks), and wait for the program to end.
    std::thread::sleep(Duration::from_millis(500));
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));
    let s = t.screen();
    if s.contains("Quit") || s.contains("quit?") {
        t.keys(&["y"]);
    }
    t.wait_for("the program to exit", long, |s| {
        s.contains("The demo project is at") || !t.alive()
    });

    // Files: approved changes applied, rejected one not.
    let ch3 = read(&dir, "manuscript/001-volume/003-chapter/index.md").unwrap();
    assert!(
        ch3.contains("gold watch"),
        "the rejected edit must not change chapter 3"
    );
    assert!(
        read(&dir, "lorebook/note/scratch-ideas.md").is_none(),
        "the patch moved the scratch note"
    );
    assert!(
        read(&dir, "lorebook/note/weather-book-entries/index.md").is_some(),
        "the patch added a file"
    );
    // The session log recorded the reason the agent received.
    let sessions = dir.join(".nbook/agent/sessions");
    let log: String = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        log.contains("keep the gold watch for now"),
        "reason missing from the log"
    );
    assert!(log.contains("\"decision\":\"reject\""));
}

#[test]
fn demo_composer_new_session_and_jobs_view() {
    if skip_without_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir: PathBuf = tmp.path().join("hesta");
    let bin = env!("CARGO_BIN_EXE_nbook");
    let cmd = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' demo --dir '{}'; sleep 30",
        home.display(),
        bin,
        dir.display()
    );
    let t = Tmux::start(&format!("nbook-e2e-sessions-{}", std::process::id()), &cmd);
    let long = Duration::from_secs(60);

    // Let the recorded script play: approve its three proposals as they come.
    t.wait_for("the write request", long, |s| s.contains("flett-watch"));
    t.keys(&["5"]);
    for what in ["write", "edit", "patch"] {
        t.wait_for(&format!("the {what} request"), long, |s| {
            s.contains("› y approve")
        });
        std::thread::sleep(Duration::from_millis(300));
        t.keys(&["y"]);
        std::thread::sleep(Duration::from_millis(700));
    }
    t.keys(&["4"]);
    t.wait_for("the demo run to end", long, |s| {
        s.contains("s1 normal idle") && s.contains("· end")
    });

    // A prompt from the composer: the recorded script is used up and no model is configured,
    // so the transcript keeps the prompt and the error says why (and what to configure).
    t.keys(&["i"]);
    t.wait_for("the composer", long, |s| s.contains("<Enter> prompt"));
    t.type_text("Draft the ending of chapter 3.");
    t.keys(&["Enter"]);
    let s = t.wait_for("the prompt and the error", long, |s| {
        s.contains("› Draft the ending of chapter 3.") && s.contains("no model for profile")
    });
    assert!(s.contains("config.toml"), "{s}");

    // The new-session form: the writer profile, a title; it opens with the composer ready.
    t.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["n"]);
    t.wait_for("the new-session form", long, |s| s.contains("New session"));
    t.type_text("wr");
    t.keys(&["Tab", "Tab"]);
    t.type_text("Ending");
    t.keys(&["Enter"]);
    let s = t.wait_for("the writer session in the list", long, |s| {
        s.contains("2 writer normal idle") && s.contains("Session 2 · writer")
    });
    assert!(s.contains("<Enter> prompt"), "the composer is open: {s}");

    // The jobs view: nothing ran in the background, and it says what would show there.
    t.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["b"]);
    t.wait_for("the jobs view", long, |s| {
        s.contains("4 Jobs (0)") && s.contains("No background jobs yet.")
    });
    t.keys(&["b"]);
    t.wait_for("the sessions again", long, |s| s.contains("4 Sessions (2)"));

    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));
    if t.screen().contains("Quit nbook?") {
        t.keys(&["y"]);
    }
    t.wait_for("the program to exit", long, |s| {
        s.contains("The demo project is at") || !t.alive()
    });
    let header = std::fs::read_to_string(dir.join(".nbook/agent/sessions/2.jsonl")).unwrap();
    assert!(header.contains("\"profile\":\"writer\""), "{header}");
    assert!(header.contains("\"title\":\"Ending\""), "{header}");
}

#[path = "provider_support/mod.rs"]
mod provider_support;

/// One OpenAI-style streamed reply: optional text, optional tool call, then usage.
fn reply(text: &str, call: Option<(&str, serde_json::Value)>) -> provider_support::Reply {
    let mut lines = Vec::new();
    if !text.is_empty() {
        lines.push(
            serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]}).to_string(),
        );
    }
    if let Some((name, args)) = call {
        lines.push(
            serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": "c1", "type": "function",
                 "function": {"name": name, "arguments": args.to_string()}}]}}]})
            .to_string(),
        );
    }
    lines.push(
        serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            .to_string(),
    );
    lines.push(
        serde_json::json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 20}})
            .to_string(),
    );
    lines.push("[DONE]".to_string());
    provider_support::Reply::data(&lines)
}

/// A new project whose config points model `m` (the default) at `base_url`, opened in the TUI
/// in tmux; returns the folder (kept alive by the temp dir) and the session.
fn scripted_tui(name: &str, base_url: &str) -> (tempfile::TempDir, PathBuf, Tmux) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[providers.scripted]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n\n[models.m]\nprovider = \"scripted\"\nname = \"m\"\ncontext_window = 32768\n\n[defaults]\nmodel = \"m\"\n"
        ),
    )
    .unwrap();
    let dir = tmp.path().join("book");
    let bin = env!("CARGO_BIN_EXE_nbook");
    assert!(Command::new(bin)
        .args(["init", &dir.display().to_string(), "--title", "Book"])
        .status()
        .unwrap()
        .success());
    let cmd = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' '{}'; sleep 30",
        home.display(),
        bin,
        dir.display()
    );
    let t = Tmux::start(&format!("{name}-{}", std::process::id()), &cmd);
    (tmp, dir, t)
}

/// A new lead-author session from the form, and `text` sent as its first prompt.
fn prompt_new_session(t: &Tmux, text: &str) {
    let long = Duration::from_secs(60);
    t.wait_for("the TUI", long, |s| s.contains("Sessions"));
    t.keys(&["4"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["n"]);
    t.wait_for("the new-session form", long, |s| s.contains("New session"));
    t.keys(&["Enter"]);
    t.wait_for("the composer", long, |s| s.contains("<Enter> prompt"));
    t.type_text(text);
    t.keys(&["Enter"]);
}

/// A model (a scripted OpenAI-compatible server) asks to run a workflow: the author reviews the
/// exact preview and approves it, the workflow's question appears in the Approvals pane and is
/// answered, the Jobs view shows the job completed with its progress, and the job's result is
/// delivered to the lead author's session, which starts its next turn.
#[test]
fn a_workflow_asks_the_author_and_its_result_reaches_the_session() {
    if skip_without_tmux() {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let script = r#"
wf.progress({phase: "reading", done: 1, total: 2});
const tone = await wf.ask({kind: "select", title: "Which tone for the ending?", options: ["bleak", "hopeful"]});
wf.progress({phase: "reading", done: 2, total: 2});
return {tone};
"#;
    let server = rt.block_on(provider_support::Server::start(vec![
        reply(
            "I'll ask through a workflow.",
            Some((
                "run_workflow",
                serde_json::json!({"script": script, "args": {"chapter": 3}}),
            )),
        ),
        reply("The workflow is running.", None),
        reply("The author chose the tone; noted.", None),
    ]));
    let (_tmp, dir, t) = scripted_tui("nbook-e2e-wf", &server.base_url());
    let long = Duration::from_secs(60);
    prompt_new_session(&t, "Ask me about the ending.");

    // run_workflow waits for approval with the script and its arguments in the preview.
    t.wait_for("the approval", long, |s| s.contains("run_workflow"));
    t.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["5"]);
    let s = t.wait_for("the preview", long, |s| s.contains("Which tone for the"));
    assert!(s.contains("\"chapter\": 3"), "{s}");
    std::thread::sleep(Duration::from_millis(1200));
    t.keys(&["y"]);

    // The workflow's question arrives in the same pane; answer "hopeful".
    t.wait_for("the question", long, |s| s.contains("wf.ask"));
    // Enter opens the form; a key that lands while the list is still settling is sent again.
    let mut opened = false;
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(700));
        t.keys(&["Enter"]);
        std::thread::sleep(Duration::from_millis(500));
        if t.screen().contains("( ) 2 hopeful") {
            opened = true;
            break;
        }
    }
    assert!(opened, "the answer form did not open:\n{}", t.screen());
    t.keys(&["2"]);
    std::thread::sleep(Duration::from_millis(200));
    t.keys(&["Enter"]);

    // The job completes and its result starts the lead author's next turn.
    t.keys(&["4"]);
    let s = t.wait_for("the delivered result", long, |s| {
        s.contains("The author chose the tone; noted.")
    });
    assert!(s.contains("Background job job-1"), "{s}");
    t.keys(&["b"]);
    let s = t.wait_for("the jobs view", long, |s| {
        s.contains("Jobs (1)") && s.contains("2/2")
    });
    assert!(s.contains("2/2"), "{s}");

    let job: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(".nbook/agent/jobs/job-1.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(job["snapshot"]["status"], "completed");
    assert_eq!(job["snapshot"]["deliveryStatus"], "accepted");
    assert_eq!(job["result"]["result"]["tone"], "hopeful");
    // The third request to the model carried the delivered result.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[2].body.to_string().contains("hopeful"));
    drop(rt);
}

/// A model that streams slowly: the transcript shows the reply growing, with the "writing"
/// spinner and tokens/s, before the stream ends; then the finished reply from the log, once.
#[test]
fn a_slow_reply_streams_into_the_transcript_before_it_ends() {
    if skip_without_tmux() {
        return;
    }
    use provider_support::{Reply, Step};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let chunk = |text: &str, finish: Option<&str>| {
        Step::Chunk(format!(
            "data: {}\n\n",
            serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]})
        ))
    };
    let mut steps = vec![chunk("The lamp went out ", None)];
    for w in ["before ", "Ada ", "reached ", "the ", "gallery."] {
        steps.push(Step::Sleep(Duration::from_millis(900)));
        steps.push(chunk(w, None));
    }
    steps.push(chunk("", Some("stop")));
    steps.push(Step::Chunk("data: [DONE]\n\n".into()));
    let server = rt.block_on(provider_support::Server::start(vec![Reply::sse(steps)]));
    let (_tmp, _dir, t) = scripted_tui("nbook-e2e-stream", &server.base_url());
    let long = Duration::from_secs(60);
    prompt_new_session(&t, "Open chapter three.");
    // Mid-stream: the first words and the spinner line, not the end of the sentence.
    let s = t.wait_for("the partial reply", long, |s| {
        s.contains("The lamp went out") && s.contains("the model is writing")
    });
    assert!(!s.contains("gallery."), "{s}");
    assert!(
        s.contains("context ~"),
        "the header shows the context budget: {s}"
    );
    // The end: the logged reply, shown once, and no spinner.
    let s = t.wait_for("the finished reply", long, |s| {
        s.contains("The lamp went out before Ada reached the gallery.")
            && !s.contains("the model is writing")
    });
    assert_eq!(
        s.matches("The lamp went out").count(),
        1,
        "shown once, from the log: {s}"
    );
    drop(rt);
}

/// An `$EDITOR` that is a shell script in a folder whose name has a space (so the variable
/// needs shell-words quoting), taking a `--wait` flag like `code -w`: it appends a line to
/// the file it is given (the last argument). `interrupt`: it then sends SIGINT to nbook, as a
/// Ctrl+C typed into an editor in cooked mode reaches the whole foreground process group.
/// Returns the value to put in `EDITOR`.
fn appending_editor(dir: &Path, line: &str, interrupt: bool) -> String {
    let folder = dir.join("my editor");
    std::fs::create_dir_all(&folder).unwrap();
    let script = folder.join("append.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n[ \"$1\" = --wait ] || {{ echo 'no --wait' >&2; exit 2; }}\nfor f in \"$@\"; do :; done\nprintf '%s\\n' '{line}' >> \"$f\"\n{}",
            if interrupt { "kill -INT $PPID\n" } else { "" }
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("\"{}\" --wait", script.display())
}

/// The author's own hands, in a real terminal with an interactive shell: `e` on a file in the
/// Files pane runs `$EDITOR` (a script that appends a line), the file on disk has the line and
/// the author session's log records the `write` as the author's; then Ctrl+Z stops nbook (the
/// shell says so), `fg` brings it back redrawn, and it quits normally.
#[test]
fn the_editor_saves_a_file_as_the_author_and_ctrl_z_suspends_to_the_shell() {
    if skip_without_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let dir = tmp.path().join("book");
    let bin = env!("CARGO_BIN_EXE_nbook");
    assert!(Command::new(bin)
        .args(["init", &dir.display().to_string(), "--title", "Book"])
        .status()
        .unwrap()
        .success());
    let editor = appending_editor(tmp.path(), "Written in my own editor.", false);
    let t = Tmux::start(
        &format!("nbook-e2e-editor-{}", std::process::id()),
        "env -i PATH=/usr/bin:/bin HOME=/tmp TERM=xterm-256color PS1='shell$ ' bash --norc --noprofile -i",
    );
    let long = Duration::from_secs(60);
    t.wait_for("the shell", long, |s| s.contains("shell$"));
    t.type_text(&format!(
        "NBOOK_HOME='{}' EDITOR='{}' '{}' '{}'",
        home.display(),
        editor.replace('\'', "'\\''"),
        bin,
        dir.display()
    ));
    t.keys(&["Enter"]);
    t.wait_for("the TUI", long, |s| s.contains("1 Files"));

    // Find AGENTS.md and edit it.
    let before = read(&dir, "AGENTS.md").unwrap();
    t.keys(&["/"]);
    std::thread::sleep(Duration::from_millis(300));
    t.type_text("AGENTS.md");
    std::thread::sleep(Duration::from_millis(500));
    t.keys(&["Enter"]);
    std::thread::sleep(Duration::from_millis(500));
    t.keys(&["e"]);
    let s = t.wait_for("the save receipt", long, |s| {
        s.contains("✔ saved AGENTS.md")
    });
    assert!(s.contains("1 Files"), "the TUI is back: {s}");
    assert_eq!(
        read(&dir, "AGENTS.md").unwrap(),
        format!("{before}Written in my own editor.\n")
    );
    let log = read(&dir, ".nbook/agent/sessions/author.jsonl").unwrap();
    let call = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|l| l["kind"] == "tool_call" && l["tool"] == "write")
        .unwrap_or_else(|| panic!("no write in the author log:\n{log}"));
    assert_eq!(call["by"], "author");
    assert_eq!(call["args"]["path"], "AGENTS.md");
    assert!(
        log.contains("\"decision\":\"approve\",\"by\":\"author\""),
        "{log}"
    );

    // Ctrl+Z: the shell gets the terminal and says the job stopped; fg brings nbook back.
    t.keys(&["C-z"]);
    t.wait_for("the stopped job", long, |s| s.contains("Stopped"));
    t.type_text("fg");
    t.keys(&["Enter"]);
    t.wait_for("the TUI again, redrawn", long, |s| {
        s.contains("1 Files") && s.contains("2 Story") && !s.contains("Stopped")
    });
    t.keys(&["q"]);
    t.wait_for("the shell prompt after quitting", long, |s| {
        s.trim_end().ends_with("shell$")
    });
}

/// On the demo's first proposal (a `write` of a new lorebook entry), `e` opens the proposed
/// file content in `$EDITOR` — not its JSON — and the edited content is what gets written;
/// a SIGINT while the editor has the terminal does not end nbook.
#[test]
fn e_on_a_waiting_write_edits_the_proposed_file_in_the_editor() {
    if skip_without_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir: PathBuf = tmp.path().join("hesta");
    let bin = env!("CARGO_BIN_EXE_nbook");
    // The editor also sends nbook a SIGINT (a Ctrl+C typed into it): nbook must live on.
    let editor = appending_editor(tmp.path(), "Added by the author before approving.", true);
    let cmd = format!(
        "NBOOK_HOME='{}' EDITOR='{}' TERM=xterm-256color '{}' demo --dir '{}'; sleep 30",
        home.display(),
        editor.replace('\'', "'\\''"),
        bin,
        dir.display()
    );
    let t = Tmux::start(&format!("nbook-e2e-proposal-{}", std::process::id()), &cmd);
    let long = Duration::from_secs(60);
    t.wait_for("the write request", long, |s| s.contains("flett-watch"));
    t.keys(&["5"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["e"]);
    t.wait_for("the entry on disk", long, |_| {
        dir.join("lorebook/item/flett-watch/index.md").exists()
    });
    let entry = read(&dir, "lorebook/item/flett-watch/index.md").unwrap();
    assert!(
        entry.ends_with("Added by the author before approving.\n"),
        "{entry}"
    );
    let log: String = std::fs::read_dir(dir.join(".nbook/agent/sessions"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(log.contains("\"decision\":\"edit\""), "{log}");
    let s = t.screen();
    assert!(s.contains("5 Approvals"), "nbook is still running: {s}");
}

/// A call that starts waiting while the author looks elsewhere rings the terminal's bell: the
/// demo's first proposal arrives while nbook's window is not the current one, and tmux flags
/// the bell on it.
#[test]
fn a_waiting_call_rings_the_bell() {
    if skip_without_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    // The bell only (a desktop notification goes nowhere inside tmux without passthrough).
    std::fs::write(
        home.join("config.toml"),
        "[notify]\nbell = true\ndesktop = \"off\"\n",
    )
    .unwrap();
    let dir: PathBuf = tmp.path().join("hesta");
    let bin = env!("CARGO_BIN_EXE_nbook");
    let cmd = format!(
        "NBOOK_HOME='{}' TERM=xterm-256color '{}' demo --dir '{}'; sleep 30",
        home.display(),
        bin,
        dir.display()
    );
    let t = Tmux::start(&format!("nbook-e2e-bell-{}", std::process::id()), &cmd);
    t.look_elsewhere();
    let start = std::time::Instant::now();
    while t.first_window_format("#{window_bell_flag}") != "1" {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no bell flagged on nbook's window"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
