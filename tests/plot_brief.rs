//! The chapter writer brief: each rung of the status ladder, the Markdown sections, promise
//! tasks, open-decision warnings and suggested reading; and the bulk chapter statuses the Story
//! pane shows.

#[path = "plot_support.rs"]
mod support;

use nbook::plot::brief::BriefStatus;
use nbook::plot::{PlotDb, ProjectMeta};
use serde_json::{json, Value};
use support::{book, Book};

fn anchor(subjects: &[&str], location: Option<&str>) -> Value {
    json!({"startTime": "1911-03-02 06:00", "endTime": "1911-03-02 07:30", "startInstant": null, "endInstant": null, "subjectIds": subjects, "locationSubjectId": location})
}

async fn brief(b: &Book, chapter: &str) -> (String, Value) {
    let r = b
        .call("get_chapter_writer_brief", json!({"chapterId": chapter}))
        .await;
    assert!(r.ok, "{}", r.content);
    (r.content, r.details.unwrap())
}

fn statuses(b: &Book) -> Vec<BriefStatus> {
    let db = PlotDb::new(b.db_path(), ProjectMeta::load(&b.root));
    db.read(|p| p.chapter_statuses())
        .unwrap()
        .into_iter()
        .map(|r| r.status)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_ladder_names_the_first_missing_step() {
    let b = book();
    b.outline(0).await;
    let (md, d) = brief(&b, "1").await;
    assert_eq!(d["status"], "needs_plot");
    assert!(d["nextStep"].as_str().unwrap().contains("chapterId 1"));
    assert!(
        md.contains("No scenes are placed in this chapter yet"),
        "{md}"
    );
    assert_eq!(
        statuses(&b),
        vec![BriefStatus::NeedsPlot, BriefStatus::NeedsPlot]
    );

    b.ok("save_story_scene", json!({"action": "create", "threadId": "1", "chapterId": "1", "title": "Putting out the light"})).await;
    let (_, d) = brief(&b, "1").await;
    assert_eq!(d["status"], "needs_world_anchor");
    assert!(
        d["nextStep"].as_str().unwrap().contains("scene #1"),
        "{}",
        d["nextStep"]
    );
    assert!(d["scenes"][0]["worldContext"].is_null());
    // Half an anchor is still missing.
    b.ok("save_story_scene", json!({"action": "update", "sceneId": "1", "worldAnchor": {"startTime": "1911-03-02 06:00", "endTime": null, "startInstant": null, "endInstant": null, "subjectIds": [], "locationSubjectId": null}})).await;
    assert_eq!(brief(&b, "1").await.1["status"], "needs_world_anchor");

    b.ok("save_story_scene", json!({"action": "update", "sceneId": "1", "worldAnchor": anchor(&["ada"], Some("hesta-light"))})).await;
    let (_, d) = brief(&b, "1").await;
    assert_eq!(d["status"], "needs_world_context");
    assert_eq!(
        d["scenes"][0]["worldContext"]["unresolvedSubjectIds"],
        json!(["ada", "hesta-light"])
    );
    assert!(d["warnings"][0]
        .as_str()
        .unwrap()
        .contains("ada, hesta-light"));
    b.add_subject("ada", "character", "Ada Marwick");
    assert_eq!(
        brief(&b, "1").await.1["status"],
        "needs_world_context",
        "the location must resolve too"
    );
    b.add_subject("hesta-light", "location", "Hesta Light");
    let (md, d) = brief(&b, "1").await;
    assert_eq!(d["status"], "needs_chapter_brief");
    assert!(
        md.contains("## Information control (required)\n- ⚠ Not set"),
        "{md}"
    );
    assert_eq!(statuses(&b)[0], BriefStatus::NeedsChapterBrief);
    // Any one information-control field is enough; goal/pov alone are not.
    b.ok(
        "save_story_chapter",
        json!({"action": "update", "chapterId": "1", "brief": {"goal": "g", "pov": "Ada"}}),
    )
    .await;
    assert_eq!(brief(&b, "1").await.1["status"], "needs_chapter_brief");
    b.ok(
        "save_story_chapter",
        json!({"action": "update", "chapterId": "1", "brief": {"hintOnly": "the book is dry"}}),
    )
    .await;
    let (_, d) = brief(&b, "1").await;
    assert_eq!(d["status"], "ready");
    assert!(d["nextStep"].as_str().unwrap().starts_with("Ready"));
    assert_eq!(
        statuses(&b),
        vec![BriefStatus::Ready, BriefStatus::NeedsPlot]
    );
    // Archived scenes are not part of the brief: archiving the only scene goes back to needs_plot.
    b.ok(
        "save_story_scene",
        json!({"action": "archive", "sceneId": "1"}),
    )
    .await;
    assert_eq!(brief(&b, "1").await.1["status"], "needs_plot");
    assert_eq!(statuses(&b)[0], BriefStatus::NeedsPlot);
    // Unknown chapter.
    let r = b
        .call("get_chapter_writer_brief", json!({"chapterId": "9"}))
        .await;
    assert!(!r.ok && r.content.contains("/chapterId"), "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_markdown_has_the_brief_sections_in_order() {
    let b = book();
    b.outline(2).await;
    b.add_subject("ada", "character", "Ada Marwick");
    b.add_subject("magnus", "character", "Magnus Flett");
    b.add_subject("hesta-light", "location", "Hesta Light");
    b.ok("save_story_thread", json!({"action": "update", "threadId": "1", "summary": "The book predicts; Ada decides to act.", "writingTip": "Keep it exact"})).await;
    b.ok("save_story_scene", json!({"action": "update", "sceneId": "1", "summary": "Ada finds the book.", "purpose": "Plant the hand.", "writingTip": "Cold hands.", "worldAnchor": anchor(&["ada"], Some("hesta-light")),
        "refs": [{"relation": "defines", "target": "lorebook/item/weather-book/", "visibility": "author", "note": "its look"}, {"relation": "part_of", "target": "thread://the-book", "visibility": "author"}]})).await;
    b.ok("save_story_scene", json!({"action": "update", "sceneId": "2", "summary": "Magnus lands.", "worldAnchor": anchor(&["ada", "magnus"], None)})).await;
    b.ok("save_story_chapter", json!({"action": "update", "chapterId": "1", "brief": {
        "goal": "Ada finds the book", "ending": "Thomas does not look", "pov": "Ada, close third", "tone": "cold", "pacing": "slow open",
        "opening": "The light goes out", "readerKnows": "Elspeth drowned", "protagonistKnows": "her mother's hand", "mustHide": "who writes", "hintOnly": "the book is dry", "doNotWrite": "No ghost."}})).await;
    b.ok("save_story_promise", json!({"action": "create", "name": "the-hand", "title": "Whose hand", "payoffExpectation": "dread, then grief"})).await;
    b.ok("save_story_promise", json!({"action": "create", "name": "the-watch", "title": "The fast watch", "payoffExpectation": "never shown on a plant"})).await;
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "cut", "title": "Cut promise"}),
    )
    .await;
    b.ok("save_promise_beat", json!({"action": "set", "promiseId": "2", "sceneId": "1", "kind": "plant", "note": "only the date"})).await;
    b.ok("save_promise_beat", json!({"action": "set", "promiseId": "1", "sceneId": "2", "kind": "payoff", "note": "the hand is hers"})).await;
    b.ok(
        "save_promise_beat",
        json!({"action": "set", "promiseId": "3", "sceneId": "2", "kind": "advance"}),
    )
    .await;
    b.ok(
        "save_story_promise",
        json!({"action": "abandon", "promiseId": "3"}),
    )
    .await;
    // Decisions: anchored on this chapter, on the thread, story-level due soon, and unrelated.
    b.ok("save_story_decision", json!({"action": "create", "name": "d-chapter", "title": "Chapter call", "question": "Does Thomas see?", "anchor": {"kind": "chapter", "id": "1"}})).await;
    b.ok("save_story_decision", json!({"action": "create", "name": "d-thread", "title": "Thread call", "question": "Is it Elspeth?", "anchor": {"kind": "thread", "id": "1"}})).await;
    b.ok("save_story_decision", json!({"action": "create", "name": "d-due", "title": "Due soon", "question": "When?", "deadlineChapterId": "2"})).await;
    b.ok("save_story_decision", json!({"action": "create", "name": "d-other", "title": "Elsewhere", "question": "?", "anchor": {"kind": "chapter", "id": "2"}})).await;
    b.ok("save_story_decision", json!({"action": "create", "name": "d-settled", "title": "Settled", "question": "?", "anchor": {"kind": "chapter", "id": "1"}})).await;
    b.ok(
        "save_story_decision",
        json!({"action": "drop", "decisionId": "5", "note": "moot"}),
    )
    .await;

    let (md, d) = brief(&b, "1").await;
    assert_eq!(d["status"], "ready", "{md}");
    let order = [
        "# Chapter writer brief: The Oil Store",
        "## Goal and landing\n- Ada finds the book\n- Landing: Thomas does not look",
        "## Chapter parameters (override the writer's defaults)\n- POV: Ada, close third\n- Tone: cold",
        "## Information control (required)\n- Reader knows: Elspeth drowned\n- Protagonist knows: her mother's hand\n- Must hide: who writes\n- May hint, never state: the book is dry",
        "## Pacing and opening\n- Pacing: slow open\n- Opening hook: The light goes out",
        "## Do not write\n- No ghost.",
        "## Key plot points (by scene)",
        "### 1. Scene 1",
        "### 2. Scene 2",
        "## Promise tasks",
        "## Open decisions (not blocking)",
        "## Suggested reading\n- lorebook/item/weather-book/ (defines · its look)",
    ];
    let mut at = 0;
    for part in order {
        let found = md[at..]
            .find(part)
            .unwrap_or_else(|| panic!("missing or out of order: {part:?}\n---\n{md}"));
        at += found + part.len();
    }
    assert!(md.contains("- Thread: The weather book (main thread)\n- What happens: Ada finds the book.\n- Purpose: Plant the hand.\n- Writing tip: Cold hands.\n- Thread arc: The book predicts; Ada decides to act."), "{md}");
    assert!(md.contains("World query hints: use execute_world on subjects [Ada Marwick (ada)] and location Hesta Light (hesta-light) for 1911-03-02 06:00 ~ 1911-03-02 07:30"), "{md}");
    assert!(
        md.contains("- [建立 plant] The fast watch (the-watch): only the date\n"),
        "{md}"
    );
    assert!(md.contains("- [兑现 payoff] Whose hand (the-hand): the hand is hers — payoff expectation: dread, then grief"), "{md}");
    assert!(
        !md.contains("never shown on a plant") && !md.contains("Cut promise"),
        "{md}"
    );
    assert!(
        md.contains("Chapter call (d-chapter)")
            && md.contains("Thread call (d-thread)")
            && md.contains("Due soon (d-due)"),
        "{md}"
    );
    assert!(!md.contains("Elsewhere") && !md.contains("Settled"), "{md}");
    assert!(
        !md.contains("## Warnings"),
        "a ready brief has no warnings: {md}"
    );
    // The DTO carries the same.
    assert_eq!(d["promiseTasks"].as_array().unwrap().len(), 2);
    assert_eq!(
        d["openDecisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["d-chapter", "d-thread", "d-due"]
    );
    assert_eq!(
        d["suggestedReading"],
        json!([{"path": "lorebook/item/weather-book/", "relation": "defines", "note": "its look", "source": "scene"}])
    );
    assert_eq!(d["suggestedBriefMarkdown"].as_str().unwrap(), md);
    // Curated mode spells out the world context instead of query hints.
    let r = b
        .call(
            "get_chapter_writer_brief",
            json!({"chapterId": "1", "mode": "curated"}),
        )
        .await;
    assert!(r.content.contains("- Time: 1911-03-02 06:00 ~ 1911-03-02 07:30 | In the scene: Ada Marwick (ada) | Location: Hesta Light (hesta-light)"), "{}", r.content);
    assert!(
        r.content
            .contains("  - Subjects: Ada Marwick (character), Magnus Flett (character)"),
        "{}",
        r.content
    );
    assert!(!r.content.contains("World query hints"));
    // A decision due more than three chapters ahead is not listed.
    for i in 3..=6 {
        b.ok("save_story_chapter", json!({"action": "create", "name": format!("ch-{i}"), "title": format!("C{i}"), "actId": "1"})).await;
    }
    b.ok(
        "save_story_decision",
        json!({"action": "update", "decisionId": "3", "deadlineChapterId": "5"}),
    )
    .await;
    assert!(
        !brief(&b, "1").await.0.contains("Due soon"),
        "four chapters ahead"
    );
    b.ok(
        "save_story_decision",
        json!({"action": "update", "decisionId": "3", "deadlineChapterId": "4"}),
    )
    .await;
    assert!(brief(&b, "1")
        .await
        .0
        .contains("Due soon (d-due): When? — story-level, due within 3 chapter(s)"));
    // Overdue ones stay listed.
    assert!(brief(&b, "6")
        .await
        .0
        .contains("its deadline chapter has passed"));
}
