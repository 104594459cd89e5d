//! The author as a principal, on a real project folder with a real SQLite file and a real
//! engine: an author change is a tool call through the same dispatch as an agent's, logged in
//! the project's author session (tool call by `author`, approval resolved by `author`, result)
//! and announced with the same events; the author-only hard delete cannot be reached by an
//! agent, whatever its profile lists; a stale author change changes nothing; and the read model
//! answers what the plot services answer.

#[path = "plot_support.rs"]
mod plot_support;

use nbook::engine::author::{preview_lines, AUTHOR_SESSION_ID, AUTHOR_SESSION_TITLE};
use nbook::engine::{
    Approval, CallStatus, Decision, Engine, EngineEvent, LogRecord, Mode, ToolCall,
};
use nbook::plot::brief::BriefMode;
use nbook::plot::ledger::NodeRef;
use nbook::plot::{PlotDb, ProjectMeta};
use nbook::tools::story_author::{archive_call, delete_call, update_call};
use plot_support::{book, Book};
use serde_json::json;

/// An act, two chapters, a thread with three scenes in chapter 1, and a promise planted on
/// scene 1 and paid off on scene 2 (so fulfilled).
async fn story() -> Book {
    let b = book();
    b.outline(3).await;
    b.ok(
        "save_story_promise",
        json!({"action": "create", "name": "who-writes", "title": "Who writes the book"}),
    )
    .await;
    for (scene, kind) in [("1", "plant"), ("2", "payoff")] {
        b.ok(
            "save_promise_beat",
            json!({"action": "set", "promiseId": "1", "sceneId": scene, "kind": kind}),
        )
        .await;
    }
    b
}

fn text(b: &Book, sql: &str) -> String {
    b.conn().query_row(sql, [], |r| r.get(0)).unwrap()
}

fn count(b: &Book, sql: &str) -> i64 {
    b.conn().query_row(sql, [], |r| r.get(0)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_author_edit_is_a_logged_tool_call_by_the_author_with_the_same_events() {
    let b = story().await;
    let mut events = b.engine.subscribe();
    let c = update_call(NodeRef::Thread(1), &json!({"title": "The Weather Book"})).unwrap();
    let r = b.engine.author_call(c.tool, c.args.clone(), None).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(
        text(&b, "SELECT title FROM StoryThread WHERE id = 1"),
        "The Weather Book"
    );

    // One author session, titled for the author, with the call, its approval and its result.
    let info = b
        .engine
        .session(AUTHOR_SESSION_ID)
        .expect("the author session");
    assert_eq!(info.title, AUTHOR_SESSION_TITLE);
    assert_eq!(info.profile, "author");
    let log = b.engine.session_log(AUTHOR_SESSION_ID).unwrap();
    let kinds: Vec<&LogRecord> = log.lines.iter().map(|l| &l.record).collect();
    assert!(matches!(kinds[0], LogRecord::Header { profile, .. } if profile == "author"));
    match kinds[1] {
        LogRecord::ToolCall {
            call_id,
            tool,
            args,
            by,
        } => {
            assert_eq!(call_id, &r.call_id);
            assert_eq!(tool, "save_story_thread");
            assert_eq!(args, &c.args);
            assert_eq!(by, "author");
        }
        other => panic!("a tool call expected, got {other:?}"),
    }
    assert!(
        matches!(kinds[2], LogRecord::ApprovalRequested { call_id, .. } if *call_id == r.call_id)
    );
    assert!(matches!(kinds[3],
        LogRecord::ApprovalResolved { call_id, decision, by, .. }
            if *call_id == r.call_id && decision == "approve" && by == "author"));
    assert!(kinds.iter().any(|k| matches!(k,
        LogRecord::ToolResult { call_id, ok: true, .. } if *call_id == r.call_id)));

    // Every record was announced, the session's creation too, and the plot domain changed.
    let mut seen = Vec::new();
    while let Ok(ev) = events.try_recv() {
        seen.push(ev);
    }
    assert!(seen.iter().any(|e| matches!(e,
        EngineEvent::Session { session } if session.id == AUTHOR_SESSION_ID)));
    let logged = seen
        .iter()
        .filter(
            |e| matches!(e, EngineEvent::Log { session_id, .. } if session_id == AUTHOR_SESSION_ID),
        )
        .count();
    assert_eq!(logged, log.lines.len());
    assert!(seen.iter().any(|e| matches!(e,
        EngineEvent::DomainsChanged { session_id, domains, .. }
            if session_id == AUTHOR_SESSION_ID && domains.contains(&nbook::engine::effects::Domain::Plot))));

    // A second change goes to the same session; so does one from a later run.
    let a = archive_call(NodeRef::Scene(3), None).unwrap();
    assert!(b.engine.author_call(a.tool, a.args, None).await.ok);
    assert_eq!(
        b.engine
            .sessions()
            .iter()
            .filter(|s| s.profile == "author")
            .count(),
        1
    );
    let dirs = nbook::config::Dirs {
        config: b.root.join("../home2"),
        data: b.root.join("../home2/d"),
        logs: b.root.join("../home2/l"),
    };
    let ws = nbook::workspace::Workspace::open(&b.root).unwrap();
    let again = std::sync::Arc::new(
        Engine::open(
            ws,
            nbook::config::Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    let c = update_call(NodeRef::Act(1), &json!({"title": "Act I"})).unwrap();
    assert!(again.author_call(c.tool, c.args, None).await.ok);
    let reread = again.session_log(AUTHOR_SESSION_ID).unwrap();
    let headers = reread
        .lines
        .iter()
        .filter(|l| matches!(l.record, LogRecord::Header { .. }))
        .count();
    assert_eq!(headers, 1, "the author session is created once per project");
    let calls = reread
        .lines
        .iter()
        .filter(|l| matches!(l.record, LogRecord::ToolCall { .. }))
        .count();
    assert_eq!(calls, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_cannot_hard_delete_even_when_its_profile_lists_the_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("T")).unwrap();
    let profiles = root.join(".nbook/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(
        profiles.join("sneaky.toml"),
        "key = \"sneaky\"\nname = \"S\"\ndescription = \"d\"\ncreation = \"public\"\nworld_access = \"none\"\ntools = [\"save_story_thread\", \"delete_story_node\"]\n",
    )
    .unwrap();
    // The author's key is reserved: a project file cannot redefine it.
    std::fs::write(
        profiles.join("author.toml"),
        "key = \"author\"\nname = \"A\"\ndescription = \"d\"\ncreation = \"public\"\nworld_access = \"write\"\ntools = [\"bash\"]\n",
    )
    .unwrap();
    let dirs = nbook::config::Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/d"),
        logs: tmp.path().join("home/l"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = std::sync::Arc::new(
        Engine::open(
            ws,
            nbook::config::Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    let errors: Vec<String> = engine
        .profile_errors()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("sneaky")
            && e.contains("delete_story_node")
            && e.contains("only the author")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("author.toml") && e.contains("reserved")),
        "{errors:?}"
    );
    assert_eq!(
        engine.profiles().get("author").unwrap().source,
        "builtin",
        "the built-in author profile stays"
    );

    let sid = engine
        .create_session("sneaky", Mode::Normal, "t", None)
        .unwrap()
        .id;
    let create = ToolCall {
        id: String::new(),
        name: "save_story_thread".into(),
        arguments: json!({"action": "create", "name": "t", "title": "T"}),
    };
    let approve = Approval::Auto {
        decision: Decision::Approve,
        by: "test",
    };
    assert!(engine.call(&sid, create, approve.clone()).await.ok);
    let db = root.join(".nbook/project.sqlite");
    let before = std::fs::read(&db).unwrap();
    let d = delete_call(NodeRef::Thread(1)).unwrap();
    let r = engine
        .call(
            &sid,
            ToolCall {
                id: String::new(),
                name: d.tool.into(),
                arguments: d.args.clone(),
            },
            approve,
        )
        .await;
    assert_eq!(r.status, CallStatus::NotAllowed, "{}", r.content);
    assert!(
        r.content.contains("for the author only") && r.content.contains("archive, abandon or drop"),
        "{}",
        r.content
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "nothing was deleted");
    // The author can.
    let r = engine.author_call(d.tool, d.args, None).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let n: i64 = nbook::store::open(&db)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM StoryThread", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_author_delete_cascades_as_the_plot_service_does() {
    let b = story().await;
    let d = delete_call(NodeRef::Thread(1)).unwrap();
    // The preview is the cascade summary, computed without changing anything.
    let before = b.db_bytes();
    let preview = b.engine.author_preview(d.tool, &d.args).await.unwrap();
    assert_eq!(b.db_bytes(), before);
    let db = PlotDb::new(b.db_path(), ProjectMeta::load(&b.root));
    let expected = db
        .read(|p| p.cascade_summary(NodeRef::Thread(1)))
        .unwrap()
        .lines();
    assert_eq!(preview_lines(&preview), expected);
    assert!(
        expected.contains(&"  also deletes 3 scenes".to_string()),
        "{expected:?}"
    );
    assert!(
        expected
            .iter()
            .any(|l| l.starts_with("  reopens promise #1")),
        "{expected:?}"
    );

    let r = b.engine.author_call(d.tool, d.args, Some(&preview)).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(count(&b, "SELECT COUNT(*) FROM StoryThread"), 0);
    assert_eq!(count(&b, "SELECT COUNT(*) FROM StoryScene"), 0);
    assert_eq!(count(&b, "SELECT COUNT(*) FROM StoryPromiseBeat"), 0);
    assert_eq!(
        text(&b, "SELECT status FROM StoryPromise WHERE id = 1"),
        "open"
    );
    // The log keeps what went, field by field.
    let log = b.engine.session_log(AUTHOR_SESSION_ID).unwrap();
    let details = log
        .lines
        .iter()
        .find_map(|l| match &l.record {
            LogRecord::ToolResult {
                call_id, details, ..
            } if *call_id == r.call_id => details.clone(),
            _ => None,
        })
        .expect("the result's details");
    let changes = details["changes"].as_array().unwrap();
    assert!(changes.iter().any(|c| c["action"] == "delete"
        && c["record"].as_str().unwrap().starts_with("StoryScene #2")
        && c["fields"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["field"] == "title" && f["before"] == "Scene 2")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_author_change_fails_as_stale_and_changes_nothing() {
    let b = story().await;
    let a = archive_call(NodeRef::Scene(2), None).unwrap();
    let preview = b.engine.author_preview(a.tool, &a.args).await.unwrap();
    assert!(
        preview_lines(&preview)
            .iter()
            .any(|l| l.contains("status: \"draft\" → \"archived\"")),
        "{:?}",
        preview_lines(&preview)
    );
    // An agent changes the scene while the author reads the dialog.
    b.ok(
        "save_story_scene",
        json!({"action": "update", "sceneId": "2", "summary": "Rewritten by an agent."}),
    )
    .await;
    let before = b.db_bytes();
    let r = b
        .engine
        .author_call(a.tool, a.args.clone(), Some(&preview))
        .await;
    assert_eq!(r.status, CallStatus::Stale, "{}", r.content);
    assert!(r.content.starts_with("stale:"), "{}", r.content);
    assert_eq!(b.db_bytes(), before, "nothing changed");
    assert_eq!(
        text(&b, "SELECT status FROM StoryScene WHERE id = 2"),
        "draft"
    );
    let log = b.engine.session_log(AUTHOR_SESSION_ID).unwrap();
    assert!(log.lines.iter().any(|l| matches!(&l.record,
        LogRecord::ToolResult { call_id, ok: false, content, .. } if *call_id == r.call_id && content.starts_with("stale:"))));
    // Confirmed on the fresh preview, it goes through.
    let fresh = b.engine.author_preview(a.tool, &a.args).await.unwrap();
    let r = b.engine.author_call(a.tool, a.args, Some(&fresh)).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(
        text(&b, "SELECT status FROM StoryScene WHERE id = 2"),
        "archived"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_author_edit_is_refused_by_the_tools_schema_and_changes_nothing() {
    let b = story().await;
    let before = b.db_bytes();
    let c = update_call(NodeRef::Thread(1), &json!({"status": "finished"})).unwrap();
    let r = b.engine.author_call(c.tool, c.args, None).await;
    assert_eq!(r.status, CallStatus::InvalidArgs, "{}", r.content);
    assert!(r.content.contains("/status"), "{}", r.content);
    assert_eq!(b.db_bytes(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_read_model_answers_what_the_plot_services_answer() {
    let b = story().await;
    let rm = b.engine.read();
    let db = PlotDb::new(b.db_path(), ProjectMeta::load(&b.root));
    let o = rm.story_overview().unwrap();
    let (tree, promises, decisions) = db
        .read(|p| Ok((p.overview()?, p.promise_ledger()?, p.decision_ledger()?)))
        .unwrap();
    assert_eq!(o.tree, tree);
    assert_eq!(o.promises, promises);
    assert_eq!(o.decisions, decisions);
    assert_eq!(o.tree.scene_count, 3);
    assert_eq!(
        rm.chapter_scenes(1).unwrap(),
        db.read(|p| p.chapter_scenes(1)).unwrap()
    );
    assert_eq!(rm.thread_scenes(1).unwrap().len(), 3);
    assert_eq!(
        rm.node_detail(NodeRef::Promise(1)).unwrap(),
        db.read(|p| p.node_detail(NodeRef::Promise(1))).unwrap()
    );
    assert_eq!(
        rm.writer_brief(1, BriefMode::Autonomous).unwrap(),
        db.read(|p| p.writer_brief(1, BriefMode::Autonomous))
            .unwrap()
    );
    assert_eq!(rm.scene_titles().unwrap().len(), 3);
    assert!(rm.node_detail(NodeRef::Scene(99)).is_err());

    // The world: overview and views over the same database.
    b.add_subject("ada", "character", "Ada");
    let w = rm.world_overview().unwrap();
    assert_eq!(w.subject_count, 1);
    assert_eq!(w.types[0].subjects[0].id, "ada");
    let subjects = rm.world(|v| v.subjects(None)).unwrap().unwrap();
    assert_eq!(subjects.len(), 1);
    let reader = rm
        .world_reader(std::time::Duration::from_millis(50))
        .unwrap()
        .unwrap();
    assert_eq!(reader.subjects(Some("character")).unwrap().len(), 1);
    assert!(rm.calendar().is_ok());

    // A project without a database yet reads as empty.
    let tmp = tempfile::tempdir().unwrap();
    let empty = nbook::engine::read::ReadModel::new(tmp.path(), &tmp.path().join("none.sqlite"));
    assert_eq!(empty.story_overview().unwrap(), Default::default());
    assert!(empty.world(|v| v.subjects(None)).unwrap().is_none());
    assert!(empty.world_overview().unwrap().is_empty());
}
