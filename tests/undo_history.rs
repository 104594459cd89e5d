//! The change history and undo, on a real project folder, a real SQLite file, the real JS world
//! engine and the real engine: every applied change (files, plot records, world slices, SQL
//! writes) is recorded with who decided it and by which rule; reverting one — the author's
//! `revert_change`, itself a recorded change — restores the exact earlier state (file bytes,
//! table dumps); a later change on the same target refuses the revert and names the plan that
//! reverts both; a change made outside the history is never overwritten; grants can be revoked.

#[path = "plot_support.rs"]
mod plot_support;

use std::path::Path;
use std::time::Duration;

use nbook::engine::{Approval, CallResult, CallStatus, Decision, Engine, Mode, ToolCall};
use nbook::store::history::Entry;
use plot_support::{book, Book};
use rusqlite::types::Value as Sql;
use serde_json::{json, Value};

fn bytes(root: &Path, rel: &str) -> Option<Vec<u8>> {
    std::fs::read(root.join(rel)).ok()
}

/// Every row of `table`, all columns, in rowid order.
fn dump(b: &Book, table: &str) -> Vec<Vec<Sql>> {
    let c = b.conn();
    let mut s = c
        .prepare(&format!("SELECT * FROM \"{table}\" ORDER BY rowid"))
        .unwrap();
    let n = s.column_count();
    let rows = s
        .query_map([], |r| (0..n).map(|i| r.get::<_, Sql>(i)).collect())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows
}

fn newest(b: &Book) -> Entry {
    b.engine.history(1).unwrap().remove(0)
}

async fn revert(b: &Book, id: i64) -> CallResult {
    b.engine
        .author_call("revert_change", json!({ "entry": id }), None)
        .await
}

async fn reverted_ok(b: &Book, id: i64) {
    let r = revert(b, id).await;
    assert_eq!(r.status, CallStatus::Ok, "revert #{id}: {}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_write_edit_and_patch_add_delete_move_revert_byte_for_byte() {
    let b = book();
    // Bytes a text tool would never produce by itself: CRLF, no final newline, a BOM.
    std::fs::write(b.root.join("keep.md"), b"\xEF\xBB\xBFline one\r\nline two").unwrap();
    std::fs::write(b.root.join("gone.md"), b"to be deleted\n").unwrap();
    std::fs::write(b.root.join("old-name.md"), b"moving\ntext\n").unwrap();
    let start: Vec<(&str, Option<Vec<u8>>)> = [
        "keep.md",
        "gone.md",
        "old-name.md",
        "new.md",
        "new-name.md",
        "fresh.md",
    ]
    .iter()
    .map(|p| (*p, bytes(&b.root, p)))
    .collect();

    b.ok(
        "write",
        json!({"path": "fresh.md", "content": "a new file\n"}),
    )
    .await;
    let w = newest(&b);
    assert_eq!(w.new.tool, "write");
    assert_eq!(w.new.actor, "agent");
    assert_eq!(w.new.profile, "leader.default");
    assert_eq!(w.new.session_id, b.sid);
    assert_eq!(w.new.decision, "approve");
    assert_eq!(w.new.rule, "test");
    assert_eq!(w.new.targets, vec!["fresh.md".to_string()]);
    assert!(w.new.preview.is_some(), "the applied preview is kept");

    b.ok(
        "edit",
        json!({"path": "keep.md", "edits": [{"oldText": "line two", "newText": "line 2"}]}),
    )
    .await;
    let e = newest(&b);
    b.ok(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Add File: new.md\n+added\n*** Delete File: gone.md\n*** Update File: old-name.md\n*** Move to: new-name.md\n@@\n moving\n-text\n+words\n*** End Patch"}),
    )
    .await;
    let p = newest(&b);
    assert_eq!(p.new.files.len(), 4, "{:?}", p.new.files);
    assert!(bytes(&b.root, "old-name.md").is_none());
    assert_eq!(bytes(&b.root, "new-name.md").unwrap(), b"moving\nwords\n");

    // Undo newest first: each revert restores exactly what was there.
    reverted_ok(&b, p.id).await;
    assert_eq!(bytes(&b.root, "gone.md").unwrap(), b"to be deleted\n");
    assert_eq!(bytes(&b.root, "old-name.md").unwrap(), b"moving\ntext\n");
    assert!(bytes(&b.root, "new.md").is_none());
    assert!(bytes(&b.root, "new-name.md").is_none());
    let rp = newest(&b);
    assert_eq!(rp.new.reverts, Some(p.id));
    assert_eq!(rp.new.actor, "author");
    assert_eq!(rp.new.tool, "revert_change");
    reverted_ok(&b, e.id).await;
    assert_eq!(
        bytes(&b.root, "keep.md").unwrap(),
        b"\xEF\xBB\xBFline one\r\nline two"
    );
    reverted_ok(&b, w.id).await;
    for (path, before) in &start {
        assert_eq!(
            &bytes(&b.root, path),
            before,
            "{path} differs from the start"
        );
    }
    // A revert is a change too: reverting it brings the patch back.
    reverted_ok(&b, rp.id).await;
    assert_eq!(bytes(&b.root, "new-name.md").unwrap(), b"moving\nwords\n");
    assert!(bytes(&b.root, "gone.md").is_none());
    // The entries marked reverted say by which entry.
    let all = b.engine.history(50).unwrap();
    let again = all.iter().find(|x| x.id == w.id).unwrap();
    assert!(again.reverted_by.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plot_record_write_reverts_to_the_earlier_row_dump() {
    let b = book();
    b.outline(2).await;
    let before = dump(&b, "StoryScene");
    let before_threads = dump(&b, "StoryThread");
    b.ok(
        "save_story_scene",
        json!({"action": "update", "sceneId": "2", "title": "The Lamp Room", "summary": "Ada climbs."}),
    )
    .await;
    let u = newest(&b);
    assert!(u.new.files.is_empty());
    assert_eq!(u.new.changesets.len(), 1);
    assert!(
        u.new.targets.iter().any(|t| t.starts_with("StoryScene (2")),
        "{:?}",
        u.new.targets
    );
    assert_ne!(dump(&b, "StoryScene"), before);
    reverted_ok(&b, u.id).await;
    assert_eq!(dump(&b, "StoryScene"), before);
    assert_eq!(dump(&b, "StoryThread"), before_threads);
    // The reverse preview of a row change lists the row and its fields.
    b.ok(
        "save_story_scene",
        json!({"action": "create", "threadId": "1", "title": "Scene Three"}),
    )
    .await;
    let c = newest(&b);
    let p = b
        .engine
        .author_preview("revert_change", &json!({"entry": c.id}))
        .await
        .unwrap();
    let lines = nbook::engine::author::preview_lines(&p);
    assert!(
        lines.iter().any(|l| l.starts_with("remove StoryScene (3")),
        "{lines:?}"
    );
    reverted_ok(&b, c.id).await;
    assert_eq!(dump(&b, "StoryScene"), before);
}

const SEED: &str = r#"
await world.slice.write({time: world.time.parse("2020-04-01"), title: "Start", patches: [
  {subjectId: "c-ada", type: "character", name: "Ada", path: "/gold", op: "replace", value: 5},
]});
return 1;
"#;

const WRITE: &str = r#"
const r = await world.slice.write({time: world.time.parse("2020-04-20 09:30"), title: "Windfall", patches: [
  {subjectId: "c-ada", path: "/gold", op: "increment", value: 100},
  {subjectId: "c-ben", type: "character", name: "Ben", path: "/age", op: "replace", value: 40},
]});
return r.sliceId;
"#;

const STATE: &str = r#"return (await world.subject.get("c-ada")).gold;"#;

async fn world_call(b: &Book, sid: &str, code: &str) -> CallResult {
    b.engine
        .call(
            sid,
            ToolCall {
                id: String::new(),
                name: "execute_world".into(),
                arguments: json!({ "code": code }),
            },
            Approval::Auto {
                decision: Decision::Approve,
                by: "test",
            },
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_world_slice_reverts_to_the_earlier_dump_and_state() {
    let b = book();
    let sid = b
        .engine
        .create_session("world.engine", Mode::Normal, "w", None)
        .unwrap()
        .id;
    let r = world_call(&b, &sid, SEED).await;
    assert!(r.ok, "{}", r.content);
    let gold = world_call(&b, &sid, STATE).await;
    assert!(gold.content.contains('5'), "{}", gold.content);
    let tables = ["WorldSubject", "WorldSlice", "WorldPatch"];
    let before: Vec<_> = tables.iter().map(|t| dump(&b, t)).collect();
    let r = world_call(&b, &sid, WRITE).await;
    assert!(r.ok, "{}", r.content);
    let gold = world_call(&b, &sid, STATE).await;
    assert!(gold.content.contains("105"), "{}", gold.content);
    let w = newest(&b);
    assert_eq!(w.new.tool, "execute_world");
    reverted_ok(&b, w.id).await;
    let after: Vec<_> = tables.iter().map(|t| dump(&b, t)).collect();
    assert_eq!(after, before);
    // The world answers from the restored rows, not from a checkpoint of the reverted write.
    let gold = world_call(&b, &sid, STATE).await;
    assert!(
        gold.content.contains('5') && !gold.content.contains("105"),
        "{}",
        gold.content
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sql_write_reverts_to_the_earlier_dump() {
    let b = book();
    b.outline(1).await;
    let before = dump(&b, "StoryChapter");
    let r = b
        .call(
            "execute_sql",
            json!({"sql": "UPDATE StoryChapter SET title = upper(title) WHERE id > 0"}),
        )
        .await;
    assert!(r.ok, "{}", r.content);
    assert_ne!(dump(&b, "StoryChapter"), before);
    let s = newest(&b);
    assert_eq!(s.new.tool, "execute_sql");
    assert_eq!(s.new.targets.len(), 2, "{:?}", s.new.targets);
    reverted_ok(&b, s.id).await;
    assert_eq!(dump(&b, "StoryChapter"), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_change_on_the_target_refuses_the_revert_and_both_revert_newest_first() {
    let b = book();
    b.ok("write", json!({"path": "a.md", "content": "one\n"}))
        .await;
    let first = newest(&b);
    b.ok("write", json!({"path": "b.md", "content": "other\n"}))
        .await;
    let unrelated = newest(&b);
    b.ok(
        "edit",
        json!({"path": "a.md", "edits": [{"oldText": "one", "newText": "two"}]}),
    )
    .await;
    let second = newest(&b);
    let r = revert(&b, first.id).await;
    assert!(!r.ok);
    assert!(
        r.content.contains(&format!("#{}", second.id))
            && r.content.contains("later change")
            && r.content.contains("Nothing was reverted"),
        "{}",
        r.content
    );
    let d = r.details.clone().unwrap_or(Value::Null);
    assert_eq!(d["code"], "LATER_CHANGES");
    assert_eq!(d["plan"], json!([second.id, first.id]));
    assert_eq!(bytes(&b.root, "a.md").unwrap(), b"two\n", "nothing changed");
    // The preview refuses the same way, before anything is asked.
    assert!(b
        .engine
        .author_preview("revert_change", &json!({"entry": first.id}))
        .await
        .is_err());
    for id in b.engine.history_revert_plan(first.id).unwrap() {
        reverted_ok(&b, id).await;
    }
    assert!(bytes(&b.root, "a.md").is_none());
    assert_eq!(bytes(&b.root, "b.md").unwrap(), b"other\n");
    // Already reverted: said so, with the entry that did it.
    let r = revert(&b, first.id).await;
    assert!(r.content.contains("already reverted"), "{}", r.content);
    let _ = unrelated;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_made_outside_the_history_is_never_overwritten() {
    let b = book();
    b.ok("write", json!({"path": "a.md", "content": "agent text\n"}))
        .await;
    let w = newest(&b);
    std::fs::write(b.root.join("a.md"), b"the author's own words\n").unwrap();
    let r = revert(&b, w.id).await;
    assert!(!r.ok);
    assert!(
        r.content.contains("stale: a.md was changed since change")
            && r.content.contains("Nothing was reverted"),
        "{}",
        r.content
    );
    assert_eq!(bytes(&b.root, "a.md").unwrap(), b"the author's own words\n");
    // A row changed outside the history stops a row revert the same way.
    b.outline(1).await;
    b.ok(
        "save_story_thread",
        json!({"action": "update", "threadId": "1", "title": "Renamed"}),
    )
    .await;
    let t = newest(&b);
    b.conn()
        .execute("UPDATE StoryThread SET title = 'By hand' WHERE id = 1", [])
        .unwrap();
    let r = revert(&b, t.id).await;
    assert!(!r.ok);
    assert!(r.content.contains("were changed since"), "{}", r.content);
    let title: String = b
        .conn()
        .query_row("SELECT title FROM StoryThread WHERE id = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(title, "By hand");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_command_is_listed_as_not_revertible_and_agents_cannot_revert() {
    let b = book();
    b.ok("bash", json!({"command": "echo hi > made-by-bash.txt"}))
        .await;
    let e = newest(&b);
    assert!(e.new.not_revertible.is_some());
    let r = revert(&b, e.id).await;
    assert!(!r.ok);
    assert!(r.content.contains("cannot be reverted"), "{}", r.content);
    assert!(b.root.join("made-by-bash.txt").exists());
    // An agent cannot call the author's revert, whatever it asks.
    let r = b.call("revert_change", json!({"entry": e.id})).await;
    assert_eq!(r.status, CallStatus::NotAllowed, "{}", r.content);
    // Unknown entries are a clear error.
    let r = revert(&b, 9999).await;
    assert!(r.content.contains("no change #9999"), "{}", r.content);
}

async fn queued_write(
    engine: &std::sync::Arc<Engine>,
    sid: &str,
    path: &str,
) -> (tokio::task::JoinHandle<CallResult>, String) {
    let (e, s) = (engine.clone(), sid.to_string());
    let c = ToolCall {
        id: String::new(),
        name: "write".into(),
        arguments: json!({"path": path, "content": "x\n"}),
    };
    let handle = tokio::spawn(async move { e.call(&s, c, Approval::Queue).await });
    for _ in 0..2000 {
        if let Some(p) = engine.pending().last() {
            return (handle, p.approval_id.clone());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("the call never reached the approval queue");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_is_listed_names_the_rule_of_the_calls_it_ran_and_can_be_revoked() {
    let b = book();
    let (h, id) = queued_write(&b.engine, &b.sid, "g.md").await;
    b.engine.decide(&id, Decision::ApproveForSession).unwrap();
    assert!(h.await.unwrap().ok);
    assert_eq!(newest(&b).new.decision, "approve_for_session");
    assert_eq!(newest(&b).new.rule, "author");
    let grants = b.engine.grants();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].tool, "write");
    assert_eq!(grants[0].target, "g.md");
    // The grant runs the next such call without asking; the history says so.
    let write = |content: &str| ToolCall {
        id: String::new(),
        name: "write".into(),
        arguments: json!({"path": "g.md", "content": content}),
    };
    let r = b.engine.call(&b.sid, write("y\n"), Approval::Fail).await;
    assert!(r.ok, "{}", r.content);
    assert_eq!(newest(&b).new.rule, "session grant");
    assert_eq!(newest(&b).new.decision, "run");
    assert!(b.engine.revoke_grant(&grants[0]));
    assert!(b.engine.grants().is_empty());
    assert!(!b.engine.revoke_grant(&grants[0]), "already revoked");
    let r = b.engine.call(&b.sid, write("z\n"), Approval::Fail).await;
    assert_eq!(r.status, CallStatus::NeedsApproval, "{}", r.content);
    assert_eq!(bytes(&b.root, "g.md").unwrap(), b"y\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_survives_a_restart_and_still_reverts() {
    let b = book();
    b.ok("write", json!({"path": "kept.md", "content": "first\n"}))
        .await;
    let id = newest(&b).id;
    let tmp = tempfile::tempdir().unwrap();
    let dirs = nbook::config::Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&b.root).unwrap();
    let again = std::sync::Arc::new(
        Engine::open_guest(
            ws,
            nbook::config::Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    let listed = again.history(10).unwrap();
    assert_eq!(listed[0].id, id);
    assert_eq!(listed[0].new.summary, newest(&b).new.summary);
    let r = again
        .author_call("revert_change", json!({"entry": id}), None)
        .await;
    assert!(r.ok, "{}", r.content);
    assert!(bytes(&b.root, "kept.md").is_none());
}
