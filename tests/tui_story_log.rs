//! Author writes from the Story pane, run by the real runtime executor against a real engine:
//! the write lands through the plot services, and is logged as an `author.plot_edit` custom
//! record in one "Author edits" session per run (opened on the first write); a failed write
//! changes nothing and logs nothing. Loads answer through the same executor.

mod tui_story_support;

use std::sync::Arc;
use std::time::Duration;

use nbook::config::{Config, Dirs};
use nbook::engine::{Engine, LogRecord};
use nbook::plot::ledger::NodeRef;
use nbook::tui::action::{Action, Effect};
use nbook::tui::runtime::{Executor, Msg};
use nbook::tui::story::edit::StoryWrite;
use nbook::tui::story::jobs::{StoryJob, StoryJobResult, AUTHOR_EDIT_KEY, AUTHOR_SESSION_TITLE};
use serde_json::json;
use tui_story_support::*;

async fn next(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Msg>) -> Action {
    loop {
        let m = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("a result in time")
            .expect("channel open");
        if let Msg::Action(a) = m {
            return *a;
        }
    }
}

fn written(a: Action) -> Result<nbook::tui::story::jobs::Written, String> {
    match a {
        Action::StoryJobDone {
            result: StoryJobResult::Written(_, r),
            ..
        } => r,
        other => panic!("a write result expected, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn author_writes_are_logged_in_one_author_session() {
    let b = book();
    let home = tempfile::tempdir().unwrap();
    let dirs = Dirs {
        config: home.path().join("c"),
        data: home.path().join("d"),
        logs: home.path().join("l"),
    };
    let ws = nbook::workspace::Workspace::open(&b.root).unwrap();
    let engine = Arc::new(
        Engine::open(
            ws,
            Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    let exec = Executor::new(engine.clone(), tx);

    // A load goes through the executor too.
    exec.execute(Effect::LoadStory { ticket: 1 });
    match next(&mut rx).await {
        Action::StoryLoaded { result, .. } => {
            assert_eq!(result.unwrap().chapter_count(), 3)
        }
        other => panic!("{other:?}"),
    }

    let thread = NodeRef::Thread(b.ids.t_book);
    exec.execute(Effect::StoryJob {
        ticket: 2,
        job: StoryJob::Write(StoryWrite::Update {
            node: thread,
            args: json!({"title": "The Book"}),
        }),
    });
    let w = written(next(&mut rx).await).unwrap();
    let sid = w.logged.clone().unwrap().unwrap();
    assert_eq!(w.changes.len(), 1);
    assert_eq!(
        b.text(&format!(
            "SELECT title FROM StoryThread WHERE id = {}",
            b.ids.t_book
        )),
        "The Book"
    );

    // A second write goes to the same session; a failed one changes and logs nothing.
    exec.execute(Effect::StoryJob {
        ticket: 3,
        job: StoryJob::Write(StoryWrite::Archive {
            node: NodeRef::Scene(b.ids.s_boat),
            note: None,
        }),
    });
    let w2 = written(next(&mut rx).await).unwrap();
    assert_eq!(w2.logged, Some(Ok(sid.clone())));
    assert_eq!(w2.changes.len(), 2, "the scene and the promise it reopens");
    exec.execute(Effect::StoryJob {
        ticket: 4,
        job: StoryJob::Write(StoryWrite::Update {
            node: thread,
            args: json!({"status": "nope"}),
        }),
    });
    let e = written(next(&mut rx).await).unwrap_err();
    assert!(
        e.starts_with("/status:") && e.ends_with("(nothing was changed)"),
        "{e}"
    );

    let info = engine.session(&sid).unwrap();
    assert_eq!(info.title, AUTHOR_SESSION_TITLE);
    let edits: Vec<serde_json::Value> = engine
        .session_log(&sid)
        .unwrap()
        .lines
        .into_iter()
        .filter_map(|l| match l.record {
            LogRecord::Custom { key, value } if key == AUTHOR_EDIT_KEY => Some(value),
            _ => None,
        })
        .collect();
    assert_eq!(edits.len(), 2);
    assert_eq!(edits[0]["action"], "update");
    assert_eq!(edits[0]["by"], "author");
    assert_eq!(edits[0]["args"], json!({"title": "The Book"}));
    assert_eq!(edits[0]["changes"][0]["fields"][0]["field"], "title");
    assert_eq!(edits[0]["changes"][0]["fields"][0]["after"], "The Book");
    assert_eq!(edits[1]["action"], "archive");
    assert!(edits[1]["changes"][1]["record"]
        .as_str()
        .unwrap()
        .starts_with("StoryPromise #"));
}
