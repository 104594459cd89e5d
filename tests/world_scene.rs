//! get_scene_world_context: slices in a scene's window touching its subjects, and their states
//! at the scene's end, from the scene's anchor in StoryScene.

mod world_support;

use nbook::engine::{Approval, CallStatus, Mode, ToolCall};
use serde_json::json;
use world_support::{fixture, SEED};

fn scene_rows(f: &world_support::Fx) {
    let c = f.conn();
    let parse = |s: &str| nbook::world::Calendar::default().parse(s).unwrap();
    c.execute_batch(
        "INSERT INTO Story (id, title) VALUES (1, 'Book');
         INSERT INTO StoryThread (id, storyId, sortOrder, name, title) VALUES (1, 1, 0, 'main', 'Main');",
    )
    .unwrap();
    c.execute(
        "INSERT INTO StoryScene (id, storyId, threadId, threadSortOrder, title, startInstant, endInstant, subjectIdsJson, locationSubjectId)
         VALUES (1, 1, 1, 0, 'Storm night', ?1, ?2, '[\"c-ada\", \"c-ghost\"]', 'l-harbour')",
        [parse("2020-04-04"), parse("2020-04-10")],
    )
    .unwrap();
    c.execute("INSERT INTO StoryScene (id, storyId, threadId, threadSortOrder, title) VALUES (2, 1, 1, 1, 'Unanchored')", []).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scene_context_lists_slices_and_end_states() {
    let f = fixture();
    f.run(SEED);
    scene_rows(&f);
    let sid = f
        .engine
        .create_session("writer", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let call = |args| ToolCall {
        id: String::new(),
        name: "get_scene_world_context".into(),
        arguments: args,
    };
    let r = f
        .engine
        .call(&sid, call(json!({"sceneId": "1"})), Approval::Fail)
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let v = r.details.unwrap();
    let titles: Vec<&str> = v["slices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["The storm", "Payday"]);
    assert_eq!(v["slices"][0]["time"], "2020-04-05 12:00");
    assert_eq!(v["slices"][0]["patchCount"], 2);
    let ada = v["subjectStates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["subjectId"] == "c-ada")
        .unwrap();
    assert_eq!(
        (
            ada["attrs"]["hp"].clone(),
            ada["attrs"]["gold"].clone(),
            ada["type"].clone()
        ),
        (json!(70), json!(15), json!("character"))
    );
    assert!(v["subjectStates"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["subjectId"] == "l-harbour"));
    assert_eq!(v["unresolvedSubjectIds"], json!(["c-ghost"]));
    // The selected scene is the default.
    f.engine
        .set_session_state(
            &sid,
            vec![("plot.selection".into(), json!({"sceneId": "1"}))],
        )
        .unwrap();
    let r = f.engine.call(&sid, call(json!({})), Approval::Fail).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    // Errors name what to do.
    let r = f
        .engine
        .call(&sid, call(json!({"sceneId": 2})), Approval::Fail)
        .await;
    assert!(
        r.content.contains("no time range") && r.content.contains("save_story_scene"),
        "{}",
        r.content
    );
    let r = f
        .engine
        .call(&sid, call(json!({"sceneId": 99})), Approval::Fail)
        .await;
    assert!(r.content.contains("no scene 99"), "{}", r.content);
    let r = f
        .engine
        .call(&sid, call(json!({"sceneId": "x"})), Approval::Fail)
        .await;
    assert_eq!(r.status, CallStatus::InvalidArgs);
}
