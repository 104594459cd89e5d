//! The hand-over to the author's editor on a real project folder, a real SQLite file and a real
//! engine, with the terminal faked through the `Handover` trait (the fake plays the editor on
//! the file it is given): a file saved from the editor is the author's `write` through the
//! engine (on disk, logged in the author session as a call by `author`, announced by a
//! `files_changed` event); an untouched copy saves nothing; a file changed on disk meanwhile
//! is not overwritten and the author's version is kept; a missing editor changes nothing; a
//! waiting `edit` is shown as the whole file after it and comes back as `edit` arguments the
//! engine accepts; Ctrl+Z suspends through the same trait.

#[path = "plot_support.rs"]
mod plot_support;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use nbook::engine::EngineEvent;
use nbook::tools::content_edit::ContentCall;
use nbook::tui::action::{EditorDone, EditorJob, FileSaved, TextTarget};
use nbook::tui::external::{editor_command, EditorCommand, ExternalError, Handover};
use nbook::tui::handover::perform;
use plot_support::book;
use serde_json::json;

type Play = Box<dyn FnMut(&Path) -> std::io::Result<i32> + Send>;

/// A terminal that runs nothing: `play` edits the file the editor was given.
struct FakeTerminal {
    play: Play,
    argv: Vec<Vec<String>>,
    suspended: usize,
}

impl FakeTerminal {
    fn new(play: impl FnMut(&Path) -> std::io::Result<i32> + Send + 'static) -> FakeTerminal {
        FakeTerminal {
            play: Box::new(play),
            argv: Vec::new(),
            suspended: 0,
        }
    }
}

impl Handover for FakeTerminal {
    fn run(&mut self, program: &str, cmd: &mut Command) -> Result<ExitStatus, ExternalError> {
        let mut argv = vec![program.to_string()];
        argv.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
        let file = PathBuf::from(argv.last().cloned().unwrap_or_default());
        self.argv.push(argv);
        let code = (self.play)(&file).map_err(|e| ExternalError::Spawn {
            program: String::new(),
            source: e,
        })?;
        Command::new("sh")
            .args(["-c", &format!("exit {code}")])
            .status()
            .map_err(ExternalError::Terminal)
    }
    fn suspend(&mut self) -> Result<(), ExternalError> {
        self.suspended += 1;
        Ok(())
    }
}

fn editor() -> Result<EditorCommand, String> {
    editor_command(None, Some("code -w".into())).map_err(|e| e.to_string())
}

const SCENE: &str = "notes/scene.md";
const TEXT: &str = "# The harbour\n\nThe harbour was quiet.\n";

fn author_log(root: &Path) -> String {
    std::fs::read_to_string(root.join(".nbook/agent/sessions/author.jsonl")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_saved_in_the_editor_is_the_authors_logged_write() {
    let b = book();
    std::fs::create_dir_all(b.root.join("notes")).unwrap();
    std::fs::write(b.root.join(SCENE), TEXT).unwrap();
    let mut events = b.engine.subscribe();
    let mut t = FakeTerminal::new(|p| {
        let mut s = std::fs::read_to_string(p)?;
        s.push_str("Mira came home.\n");
        std::fs::write(p, s)?;
        Ok(0)
    });
    let done = perform(
        &b.engine,
        &b.root,
        &mut t,
        editor(),
        EditorJob::File { path: SCENE.into() },
    )
    .await;
    match done {
        EditorDone::File {
            result: Ok(FileSaved::Saved { summary }),
            ..
        } => assert_eq!(summary, "3 → 4 lines"),
        other => panic!("{other:?}"),
    }
    assert_eq!(t.argv[0][..2], ["code", "-w"]);
    assert_eq!(
        std::fs::read_to_string(b.root.join(SCENE)).unwrap(),
        format!("{TEXT}Mira came home.\n")
    );
    // Logged in the author session as the author's write, with its approval and result.
    let log = author_log(&b.root);
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let call = lines
        .iter()
        .find(|l| l["kind"] == "tool_call" && l["tool"] == "write")
        .unwrap_or_else(|| panic!("no write call in the author log:\n{log}"));
    assert_eq!(call["by"], "author");
    assert_eq!(call["args"]["path"], SCENE);
    assert!(log.contains("Mira came home."));
    // The same event an agent's write sends (the Files pane marks and reloads from it).
    let mut saw = false;
    while let Ok(ev) = events.try_recv() {
        if let EngineEvent::FilesChanged { paths, .. } = ev {
            saw |= paths.iter().any(|p| p == SCENE);
        }
    }
    assert!(saw, "no files_changed event for {SCENE}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untouched_copy_saves_nothing_and_logs_nothing() {
    let b = book();
    std::fs::create_dir_all(b.root.join("notes")).unwrap();
    std::fs::write(b.root.join(SCENE), TEXT).unwrap();
    let mut t = FakeTerminal::new(|_| Ok(0));
    let done = perform(
        &b.engine,
        &b.root,
        &mut t,
        editor(),
        EditorJob::File { path: SCENE.into() },
    )
    .await;
    assert!(
        matches!(
            done,
            EditorDone::File {
                result: Ok(FileSaved::Unchanged),
                ..
            }
        ),
        "{done:?}"
    );
    assert!(!author_log(&b.root).contains("\"tool\":\"write\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_on_disk_meanwhile_is_not_overwritten_and_the_edit_is_kept() {
    let b = book();
    std::fs::create_dir_all(b.root.join("notes")).unwrap();
    let real = b.root.join(SCENE);
    std::fs::write(&real, TEXT).unwrap();
    let other = real.clone();
    let mut t = FakeTerminal::new(move |p| {
        // Another program writes the file while the author edits the copy.
        std::fs::write(&other, "An agent's version.\n")?;
        std::fs::write(p, "The author's version.\n")?;
        Ok(0)
    });
    let done = perform(
        &b.engine,
        &b.root,
        &mut t,
        editor(),
        EditorJob::File { path: SCENE.into() },
    )
    .await;
    let msg = match done {
        EditorDone::File { result: Err(e), .. } => e,
        other => panic!("{other:?}"),
    };
    assert!(msg.contains("changed on disk"), "{msg}");
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        "An agent's version.\n"
    );
    let kept = msg.rsplit("kept in ").next().unwrap().trim();
    assert_eq!(
        std::fs::read_to_string(kept).unwrap(),
        "The author's version.\n"
    );
    std::fs::remove_file(kept).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_editor_or_a_missing_file_changes_nothing() {
    let b = book();
    std::fs::create_dir_all(b.root.join("notes")).unwrap();
    std::fs::write(b.root.join(SCENE), TEXT).unwrap();
    let mut t = FakeTerminal::new(|_| {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "No such file or directory",
        ))
    });
    let done = perform(
        &b.engine,
        &b.root,
        &mut t,
        editor(),
        EditorJob::File { path: SCENE.into() },
    )
    .await;
    match done {
        EditorDone::File { result: Err(e), .. } => {
            assert!(e.contains("`code`") && e.contains("not found"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read_to_string(b.root.join(SCENE)).unwrap(), TEXT);
    // A bad $EDITOR is reported the same way, before anything runs.
    let bad = editor_command(None, Some("vim '-c".into())).map_err(|e| e.to_string());
    let done = perform(
        &b.engine,
        &b.root,
        &mut t,
        bad,
        EditorJob::File { path: SCENE.into() },
    )
    .await;
    assert!(
        matches!(&done, EditorDone::File { result: Err(e), .. } if e.contains("$EDITOR")),
        "{done:?}"
    );
    // A file that went away.
    let done = perform(
        &b.engine,
        &b.root,
        &mut t,
        editor(),
        EditorJob::File {
            path: "notes/gone.md".into(),
        },
    )
    .await;
    assert!(
        matches!(&done, EditorDone::File { result: Err(e), .. } if e.contains("no longer")),
        "{done:?}"
    );
    assert_eq!(t.argv.len(), 1, "the editor ran only when there was a file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_edit_is_shown_as_its_file_and_comes_back_as_edit_arguments() {
    let b = book();
    std::fs::create_dir_all(b.root.join("notes")).unwrap();
    std::fs::write(b.root.join(SCENE), TEXT).unwrap();
    let args = json!({"path": SCENE, "edits": [{"oldText": "quiet", "newText": "still"}]});
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let shown = seen.clone();
    let mut t = FakeTerminal::new(move |p| {
        let s = std::fs::read_to_string(p)?;
        *shown.lock().unwrap() = s.clone();
        std::fs::write(p, s.replace("still", "still as glass"))?;
        Ok(0)
    });
    let done = perform(
        &b.engine,
        &b.root,
        &mut t,
        editor(),
        EditorJob::Proposal {
            approval_id: "ap-1".into(),
            tool: "edit".into(),
            args: args.clone(),
        },
    )
    .await;
    // The editor showed the whole file as the edit would leave it, not JSON.
    assert_eq!(
        *seen.lock().unwrap(),
        "# The harbour\n\nThe harbour was still.\n"
    );
    let new_args = match done {
        EditorDone::Proposal {
            result: Ok(Some(a)),
            ..
        } => a,
        other => panic!("{other:?}"),
    };
    // Still an `edit`, accepted by the engine's schema, and it makes exactly the edited file.
    b.engine.validate_args("edit", &new_args).unwrap();
    let call = ContentCall::of("edit", &new_args).unwrap().unwrap();
    assert_eq!(
        call.proposed(Some(TEXT)).unwrap(),
        "# The harbour\n\nThe harbour was still as glass.\n"
    );
    assert_eq!(new_args["edits"].as_array().unwrap().len(), 1);
    assert_eq!(std::fs::read_to_string(b.root.join(SCENE)).unwrap(), TEXT);
    // An edit that no longer applies says so and runs no editor.
    let stale = json!({"path": SCENE, "edits": [{"oldText": "gone words", "newText": "x"}]});
    let done = perform(
        &b.engine,
        &b.root,
        &mut t,
        editor(),
        EditorJob::Proposal {
            approval_id: "ap-2".into(),
            tool: "edit".into(),
            args: stale,
        },
    )
    .await;
    assert!(
        matches!(&done, EditorDone::Proposal { result: Err(e), .. } if e.contains("does not apply")),
        "{done:?}"
    );
    assert_eq!(t.argv.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn texts_go_over_and_back_and_ctrl_z_suspends() {
    let b = book();
    let mut t = FakeTerminal::new(|p| {
        std::fs::write(p, "A longer message.\n")?;
        Ok(0)
    });
    let target = TextTarget::Composer {
        session_id: b.sid.clone(),
    };
    let done = perform(
        &b.engine,
        &b.root,
        &mut t,
        editor(),
        EditorJob::Text {
            target: target.clone(),
            text: "short".into(),
            name: "message.md".into(),
        },
    )
    .await;
    assert_eq!(
        done,
        EditorDone::Text {
            target,
            result: Ok(Some("A longer message.\n".into()))
        }
    );
    let done = perform(&b.engine, &b.root, &mut t, editor(), EditorJob::Suspend).await;
    assert_eq!(done, EditorDone::Suspended(Ok(())));
    assert_eq!(t.suspended, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_and_calls_that_cannot_be_edited_say_why_and_run_no_editor() {
    let b = book();
    std::fs::create_dir_all(b.root.join("notes")).unwrap();
    std::fs::write(b.root.join("notes/latin1.md"), b"caf\xe9\n").unwrap();
    let mut t = FakeTerminal::new(|_| Ok(0));
    let cases: Vec<(EditorJob, &str)> = vec![
        (
            EditorJob::File {
                path: "notes/latin1.md".into(),
            },
            "not UTF-8",
        ),
        (
            EditorJob::File {
                path: "notes".into(),
            },
            "notes: it is a folder",
        ),
        (
            EditorJob::Proposal {
                approval_id: "ap-1".into(),
                tool: "write".into(),
                args: json!({"path": SCENE}),
            },
            "not what write takes",
        ),
        (
            EditorJob::Proposal {
                approval_id: "ap-2".into(),
                tool: "edit".into(),
                args: json!({"path": "../outside.md", "edits": [{"oldText": "a", "newText": "b"}]}),
            },
            "not a file of this project",
        ),
        (
            EditorJob::Proposal {
                approval_id: "ap-3".into(),
                tool: "edit".into(),
                args: json!({"path": "notes/missing.md", "edits": [{"oldText": "a", "newText": "b"}]}),
            },
            "does not exist",
        ),
        (
            EditorJob::Proposal {
                approval_id: "ap-4".into(),
                tool: "bash".into(),
                args: json!({"command": "ls"}),
            },
            "does not propose",
        ),
    ];
    for (job, expect) in cases {
        let done = perform(&b.engine, &b.root, &mut t, editor(), job.clone()).await;
        let err = match &done {
            EditorDone::File { result: Err(e), .. }
            | EditorDone::Proposal { result: Err(e), .. } => e.clone(),
            other => panic!("{job:?} should fail: {other:?}"),
        };
        assert!(err.contains(expect), "{job:?}: {err}");
    }
    assert!(t.argv.is_empty(), "no editor ran: {:?}", t.argv);
    assert_eq!(
        std::fs::read(b.root.join("notes/latin1.md")).unwrap(),
        b"caf\xe9\n"
    );
}
