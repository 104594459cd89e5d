//! Scene world anchors are read and written in the project's own calendar
//! (`world-engine/calendar.toml`), not a fixed gregorian one.

#[path = "plot_support.rs"]
mod plot_support;

use plot_support::book;
use serde_json::json;

const SIMPLE: &str = r#"
kind = "simple"
era_before = "Before the Fall "
era_after = "AF "
format = "{era}{year}, {monthName} {day}, {hour:02}:{minute:02}"
[[units]]
name = "minute"
parent = "second"
ratio = 60
[[units]]
name = "hour"
parent = "minute"
ratio = 60
[[units]]
name = "day"
parent = "hour"
ratio = 24
[[units]]
name = "month"
parent = "day"
ratio = 30
names = ["Frost", "Thaw", "Seed", "Bloom", "Sun", "Hay", "Gold", "Ash", "Mist", "Rain", "Dark", "Ice"]
[[units]]
name = "year"
parent = "month"
ratio = 12
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anchors_use_the_project_calendar() {
    let b = book();
    std::fs::write(b.root.join("world-engine/calendar.toml"), SIMPLE).unwrap();
    b.outline(1).await;
    b.add_subject("ada", "character", "Ada");
    let anchor = json!({"startTime": "AF 2, Thaw 3, 06:00", "endTime": "AF 2, Thaw 3, 09:30",
        "startInstant": null, "endInstant": null, "subjectIds": ["ada"], "locationSubjectId": null});
    b.ok(
        "save_story_scene",
        json!({"action": "update", "sceneId": "1", "worldAnchor": anchor}),
    )
    .await;
    let start: i64 = b
        .conn()
        .query_row(
            "SELECT startInstant FROM StoryScene WHERE id = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(start, (360 + 30 + 2) * 86_400 + 6 * 3600);
    // A gregorian date is not a date in this calendar: a clear error, nothing written.
    let bad = json!({"startTime": "1911-03-14 06:00", "endTime": "1911-03-14 07:00",
        "startInstant": null, "endInstant": null, "subjectIds": ["ada"], "locationSubjectId": null});
    b.fails(
        "save_story_scene",
        json!({"action": "update", "sceneId": "1", "worldAnchor": bad}),
        &["startTime"],
    )
    .await;
    // A broken calendar file stops plot tools with a message that says where to look.
    std::fs::write(
        b.root.join("world-engine/calendar.toml"),
        "kind = \"lunar\"\n",
    )
    .unwrap();
    b.fails("get_story_tree", json!({}), &["calendar.toml"])
        .await;
}
