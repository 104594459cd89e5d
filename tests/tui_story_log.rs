//! Author writes from the Story pane, run by the real runtime executor against a real engine:
//! each write is a tool call by `author` through the engine (the `save_story_*` tools, the
//! author-only `delete_story_node`), logged in the project's one author session as a tool call,
//! its approval resolved by `author` and its result; a failed write changes nothing and records
//! only its failed call. Loads answer through the same executor, from the engine's read model.
//!
//! (Before the author was a principal, these writes were an `author.plot_edit` custom record in
//! an "Author edits" session opened with a borrowed profile; the records are now the same
//! tool call / approval / result an agent's change leaves.)

mod tui_story_support;

use std::time::Duration;

use nbook::engine::author::{AUTHOR_SESSION_ID, AUTHOR_SESSION_TITLE};
use nbook::engine::{EngineEvent, LogRecord};
use nbook::plot::ledger::NodeRef;
use nbook::tui::action::{Action, Effect};
use nbook::tui::runtime::{Executor, Msg};
use nbook::tui::story::edit::StoryWrite;
use nbook::tui::story::jobs::{StoryJob, StoryJobResult};
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
async fn author_writes_are_tool_calls_by_the_author_in_one_author_session() {
    let b = book();
    let engine = b.engine.clone();
    let mut events = engine.subscribe();
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
    assert_eq!(w.logged, Some(Ok(AUTHOR_SESSION_ID.to_string())));
    assert_eq!(w.changes.len(), 1);
    assert_eq!(
        b.text(&format!(
            "SELECT title FROM StoryThread WHERE id = {}",
            b.ids.t_book
        )),
        "The Book"
    );

    // An archive the author confirmed on its preview goes to the same session; a failed
    // write changes nothing.
    exec.execute(Effect::StoryJob {
        ticket: 3,
        job: StoryJob::Prepare(StoryWrite::Archive {
            node: NodeRef::Scene(b.ids.s_boat),
            note: None,
        }),
    });
    let (write, preview) = match next(&mut rx).await {
        Action::StoryJobDone {
            result: StoryJobResult::Prepared(w, Ok(p)),
            ..
        } => (w, p.preview),
        other => panic!("a preview expected, got {other:?}"),
    };
    exec.execute(Effect::StoryJob {
        ticket: 4,
        job: StoryJob::Confirmed(write, preview),
    });
    let w2 = written(next(&mut rx).await).unwrap();
    assert_eq!(w2.logged, Some(Ok(AUTHOR_SESSION_ID.to_string())));
    assert_eq!(w2.changes.len(), 2, "the scene and the promise it reopens");
    let before = std::fs::read(&b.db.db_path).unwrap();
    exec.execute(Effect::StoryJob {
        ticket: 5,
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
    assert_eq!(std::fs::read(&b.db.db_path).unwrap(), before);

    let info = engine.session(AUTHOR_SESSION_ID).unwrap();
    assert_eq!(info.title, AUTHOR_SESSION_TITLE);
    assert_eq!(info.profile, "author");
    let log = engine.session_log(AUTHOR_SESSION_ID).unwrap();
    let calls: Vec<(String, String, serde_json::Value)> = log
        .lines
        .iter()
        .filter_map(|l| match &l.record {
            LogRecord::ToolCall {
                call_id,
                tool,
                args,
                by,
            } => {
                assert_eq!(by, "author");
                Some((call_id.clone(), tool.clone(), args.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2, "a refused edit leaves no call: {calls:?}");
    assert_eq!(calls[0].1, "save_story_thread");
    assert_eq!(
        calls[0].2,
        json!({"action": "update", "threadId": b.ids.t_book, "title": "The Book"})
    );
    assert_eq!(calls[1].1, "save_story_scene");
    assert_eq!(calls[1].2["action"], "archive");
    for (id, _, _) in &calls {
        assert!(log.lines.iter().any(|l| matches!(&l.record,
            LogRecord::ApprovalResolved { call_id, decision, by, .. }
                if call_id == id && decision == "approve" && by == "author")));
        assert!(log.lines.iter().any(|l| matches!(&l.record,
            LogRecord::ToolResult { call_id, ok: true, .. } if call_id == id)));
    }
    // The archive's approval request carries the preview the author confirmed.
    assert!(log.lines.iter().any(|l| matches!(&l.record,
        LogRecord::ApprovalRequested { call_id, preview, .. }
            if *call_id == calls[1].0 && preview.summary.contains("archive StoryScene"))));

    // The panes hear of it as of an agent's change: log lines and the plot domain.
    let mut plot_changes = 0;
    while let Ok(ev) = events.try_recv() {
        if let EngineEvent::DomainsChanged { session_id, .. } = ev {
            assert_eq!(session_id, AUTHOR_SESSION_ID);
            plot_changes += 1;
        }
    }
    assert_eq!(plot_changes, 2);
}
