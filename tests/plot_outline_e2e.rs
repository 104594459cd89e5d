//! End to end: a replayed leader session (assets/replay/plot-outline.jsonl) builds a small
//! outline through the plot tools, every write waiting in the approval queue until an approver
//! task approves it: an act, two chapters, a thread, three scenes, a promise planted and paid
//! off, a decision decided. Afterwards the writer brief reports `ready` for the complete
//! chapter and the exact missing step for the other.

#[path = "plot_support.rs"]
mod support;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nbook::agent::{run_agent, ReplayProvider, RunOptions};
use nbook::engine::{Approval, Decision, LogRecord};
use serde_json::json;
use support::book;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_session_builds_an_outline_with_approvals() {
    let b = book();
    // The world knows Ada and the lighthouse (the world engine's part is not under test here).
    b.add_subject("ada", "character", "Ada Marwick");
    b.add_subject("hesta-light", "location", "Hesta Light");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/replay/plot-outline.jsonl");
    let provider = Arc::new(ReplayProvider::from_file(&script).unwrap());
    let done = Arc::new(AtomicBool::new(false));
    let approved = Arc::new(AtomicUsize::new(0));
    let approver = {
        let (engine, done, approved) = (b.engine.clone(), done.clone(), approved.clone());
        tokio::spawn(async move {
            while !done.load(Ordering::SeqCst) {
                for p in engine.pending() {
                    assert!(
                        p.tool.starts_with("save_"),
                        "only plot writes wait: {}",
                        p.tool
                    );
                    assert!(matches!(
                        p.preview.body,
                        nbook::engine::PreviewBody::Records { .. }
                    ));
                    engine.decide(&p.approval_id, Decision::Approve).unwrap();
                    approved.fetch_add(1, Ordering::SeqCst);
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
    };
    let opts = RunOptions::new(Approval::Queue, tokio_util::sync::CancellationToken::new());
    let outcome = run_agent(
        b.engine.clone(),
        b.sid.clone(),
        provider,
        "Outline act one.".into(),
        opts,
    )
    .await
    .unwrap();
    done.store(true, Ordering::SeqCst);
    approver.await.unwrap();
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.tool_calls, 16);
    assert_eq!(
        approved.load(Ordering::SeqCst),
        13,
        "every write was approved by the author"
    );

    // Every call succeeded.
    let log = b.engine.session_log(&b.sid).unwrap();
    let results: Vec<(String, bool, String)> = log
        .lines
        .iter()
        .filter_map(|l| match &l.record {
            LogRecord::ToolResult {
                tool, ok, content, ..
            } => Some((tool.clone(), *ok, content.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 16);
    for (tool, ok, content) in &results {
        assert!(ok, "{tool} failed: {content}");
    }
    // The two brief reads at the end of the session.
    let briefs: Vec<&String> = results
        .iter()
        .filter(|(t, ..)| t == "get_chapter_writer_brief")
        .map(|(_, _, c)| c)
        .collect();
    assert!(briefs[0].contains("status: ready"), "{}", briefs[0]);
    assert!(
        briefs[1].contains("status: needs_world_anchor"),
        "{}",
        briefs[1]
    );

    // The outline as built.
    let tree = b.ok("get_story_tree", json!({})).await;
    assert_eq!(
        tree["totals"],
        json!({"phases": 0, "threads": 1, "scenes": 3, "acts": 1, "chapters": 2})
    );
    assert_eq!(tree["acts"][0]["chapters"].as_array().unwrap().len(), 2);
    assert_eq!(tree["openPromiseCount"], 0);
    assert_eq!(tree["openDecisionCount"], 0);
    let promise = b.ok("get_story_promise", json!({"promiseId": "1"})).await;
    assert_eq!(
        (promise["status"].as_str(), promise["derivedStage"].as_str()),
        (Some("fulfilled"), Some("paid_off"))
    );
    assert_eq!(
        promise["beats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["kind"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["plant", "payoff"]
    );
    let decision = b.ok("get_story_decision", json!({"decisionId": "1"})).await;
    assert_eq!(decision["status"], "decided");
    assert_eq!(
        decision["rejectedAlternatives"],
        json!([{"option": "A forgery by Thomas", "whyRejected": null}])
    );
    assert_eq!(
        decision["serves"],
        json!([{"target": "promise://1", "valid": true}])
    );
    // The session selected the last scene it created.
    assert_eq!(b.selection()["sceneId"], "3");

    // The brief: ready for chapter one, the exact missing step for chapter two.
    let r = b
        .call("get_chapter_writer_brief", json!({"chapterId": "1"}))
        .await;
    let d = r.details.unwrap();
    assert_eq!(d["status"], "ready", "{}", r.content);
    assert!(r.content.contains("- [建立 plant] Whose hand writes the entries (the-hand): Only the feeling of being counted."), "{}", r.content);
    assert!(r.content.contains("- [兑现 payoff] Whose hand writes the entries (the-hand): She knows the hand at once. — payoff expectation: Dread first, then grief."), "{}", r.content);
    assert!(r.content.contains("## Suggested reading\n- lorebook/item/weather-book/ (defines · what the book looks like)"), "{}", r.content);
    let r = b
        .call("get_chapter_writer_brief", json!({"chapterId": "2"}))
        .await;
    let d = r.details.unwrap();
    assert_eq!(d["status"], "needs_world_anchor");
    assert_eq!(d["nextStep"], "Give scene #3 \"Magnus lands\" a world time range (save_story_scene worldAnchor startTime and endTime).");
    assert!(
        r.content
            .contains("Scene \"Magnus lands\" (#3) has no complete world time range"),
        "{}",
        r.content
    );
}
