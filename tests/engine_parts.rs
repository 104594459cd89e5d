//! Approving a call in parts, end to end on a real project: the author keeps some files and
//! hunks of an `apply_patch` or a multi-block `edit`; only those reach the disk, the agent's
//! result lists what was applied and what was rejected (with the reason), dropping every part
//! is a reject, and a bad or stale selection changes nothing.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use nbook::config::{Config, Dirs, Preset};
use nbook::engine::parts::{parts_digest, parts_of, PartSelection};
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, EngineError, Mode, PendingCall,
    SelectionError, ToolCall,
};
use serde_json::{json, Value};

struct Fixture {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    engine: Arc<Engine>,
    sid: String,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let mut config = Config::default();
    config.approval.preset = Preset::Supervised;
    let engine =
        Arc::new(Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).unwrap());
    let sid = engine
        .create_session("leader.default", Mode::Normal, "t", None)
        .unwrap()
        .id;
    Fixture {
        _tmp: tmp,
        root,
        engine,
        sid,
    }
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: name.into(),
        arguments: args,
    }
}

async fn queued(f: &Fixture, c: ToolCall) -> (tokio::task::JoinHandle<CallResult>, PendingCall) {
    let before = f.engine.pending().len();
    let (e, s) = (f.engine.clone(), f.sid.clone());
    let handle = tokio::spawn(async move { e.call(&s, c, Approval::Queue).await });
    for _ in 0..1000 {
        let p = f.engine.pending();
        if p.len() > before {
            return (handle, p.last().unwrap().clone());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("the call never reached the approval queue");
}

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel)).ok()
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn keep(p: &PendingCall, ids: &[&str], reason: Option<&str>) -> Decision {
    Decision::ApproveParts {
        selection: PartSelection {
            preview: parts_digest(&p.preview),
            keep: ids.iter().map(|s| s.to_string()).collect(),
            reason: reason.map(str::to_string),
        },
    }
}

fn chapter(n: usize) -> String {
    (1..=n)
        .map(|i| format!("Line {i} of the chapter.\n"))
        .collect()
}

const THREE_FILES: &str = "*** Begin Patch
*** Update File: manuscript/a.md
@@
-Line 2 of the chapter.
+Line two, rewritten.
*** Add File: notes/b.md
+A new note.
*** Update File: manuscript/c.md
@@
-Line 5 of the chapter.
+Line five, rewritten.
*** End Patch";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_file_patch_with_one_file_dropped_writes_two() {
    let f = fixture();
    write(&f.root, "manuscript/a.md", &chapter(8));
    write(&f.root, "manuscript/c.md", &chapter(8));
    let (h, p) = queued(&f, call("apply_patch", json!({"patch": THREE_FILES}))).await;
    assert!(
        p.parts,
        "apply_patch declares that it can be approved in parts"
    );
    let ids: Vec<String> = parts_of(&p.preview).into_iter().map(|x| x.id).collect();
    assert_eq!(ids, ["f0h0", "f1h0", "f2h0"]);
    f.engine
        .decide(
            &p.approval_id,
            keep(&p, &["f0h0", "f1h0"], Some("leave chapter c alone")),
        )
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let a = read(&f.root, "manuscript/a.md").unwrap();
    assert!(a.contains("Line two, rewritten.\n"), "{a}");
    assert_eq!(
        read(&f.root, "notes/b.md").as_deref(),
        Some("A new note.\n")
    );
    assert_eq!(
        read(&f.root, "manuscript/c.md").unwrap(),
        chapter(8),
        "the dropped file is untouched"
    );
    assert!(
        r.content.contains(
            "Applied:\n  - manuscript/a.md (the whole change)\n  - notes/b.md (the whole change)\n"
        ),
        "{}",
        r.content
    );
    assert!(
        r.content
            .contains("Rejected (not applied):\n  - manuscript/c.md (the whole change)\n"),
        "{}",
        r.content
    );
    assert!(r
        .content
        .contains("The author's reason: leave chapter c alone"));
    let parts = &r.details.as_ref().unwrap()["parts"];
    assert_eq!(parts["kept"], json!(["f0h0", "f1h0"]));
    assert_eq!(
        parts["rejected"],
        json!(["manuscript/c.md (the whole change)"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multi_block_edit_with_one_hunk_dropped_applies_the_others() {
    let f = fixture();
    write(&f.root, "manuscript/001.md", &chapter(40));
    let edit = json!({"path": "manuscript/001.md", "edits": [
        {"oldText": "Line 3 of the chapter.", "newText": "Line three, the harbour was quiet."},
        {"oldText": "Line 20 of the chapter.", "newText": "Line twenty, Mira left."},
        {"oldText": "Line 37 of the chapter.", "newText": "Line thirty-seven, the end."},
    ]});
    let (h, p) = queued(&f, call("edit", edit)).await;
    let parts = parts_of(&p.preview);
    assert_eq!(parts.len(), 3, "one part per hunk of the diff");
    assert_eq!(
        parts[1].line, 17,
        "the second hunk starts 3 lines above line 20"
    );
    f.engine
        .decide(&p.approval_id, keep(&p, &["f0h0", "f0h2"], None))
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let expected = chapter(40)
        .replace(
            "Line 3 of the chapter.",
            "Line three, the harbour was quiet.",
        )
        .replace("Line 37 of the chapter.", "Line thirty-seven, the end.");
    assert_eq!(read(&f.root, "manuscript/001.md").unwrap(), expected);
    assert!(
        r.content.contains(
            "Applied:\n  - manuscript/001.md: hunk 1 of 3 (@@ -1,6), hunk 3 of 3 (@@ -34,7)\n"
        ),
        "{}",
        r.content
    );
    assert!(
        r.content
            .contains("Rejected (not applied):\n  - manuscript/001.md: hunk 2 of 3 (@@ -17,7)\n"),
        "{}",
        r.content
    );
    assert!(r.content.contains("The author gave no reason."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_every_part_is_a_reject_with_the_reason() {
    let f = fixture();
    write(&f.root, "manuscript/a.md", &chapter(8));
    write(&f.root, "manuscript/c.md", &chapter(8));
    let (h, p) = queued(&f, call("apply_patch", json!({"patch": THREE_FILES}))).await;
    f.engine
        .decide(&p.approval_id, keep(&p, &[], Some("not now")))
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Rejected, "{}", r.content);
    assert!(r.content.contains("not now"), "{}", r.content);
    assert_eq!(read(&f.root, "manuscript/a.md").unwrap(), chapter(8));
    assert_eq!(read(&f.root, "notes/b.md"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_after_the_preview_makes_a_partial_approval_stale() {
    let f = fixture();
    write(&f.root, "manuscript/a.md", &chapter(8));
    write(&f.root, "manuscript/c.md", &chapter(8));
    let (h, p) = queued(&f, call("apply_patch", json!({"patch": THREE_FILES}))).await;
    // The author edits a file the patch touches while the call waits.
    write(
        &f.root,
        "manuscript/a.md",
        &format!("{}An extra line.\n", chapter(8)),
    );
    f.engine
        .decide(&p.approval_id, keep(&p, &["f0h0", "f1h0"], None))
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Stale, "{}", r.content);
    assert!(r.content.contains("nothing was changed"), "{}", r.content);
    assert_eq!(read(&f.root, "notes/b.md"), None, "nothing was applied");
    assert_eq!(read(&f.root, "manuscript/c.md").unwrap(), chapter(8));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_selections_are_refused_and_the_call_keeps_waiting() {
    let f = fixture();
    write(&f.root, "manuscript/a.md", &chapter(8));
    write(&f.root, "manuscript/c.md", &chapter(8));
    let (h, p) = queued(&f, call("apply_patch", json!({"patch": THREE_FILES}))).await;
    let e = f
        .engine
        .decide(&p.approval_id, keep(&p, &["f0h0", "f7h0"], None))
        .unwrap_err();
    assert!(
        matches!(&e, EngineError::Selection(SelectionError::UnknownPart { id, .. }) if id == "f7h0"),
        "{e}"
    );
    assert!(e.to_string().contains("f0h0, f1h0, f2h0"), "{e}");
    let stale = Decision::ApproveParts {
        selection: PartSelection {
            preview: "0123456789abcdef".into(),
            keep: vec!["f0h0".into()],
            reason: None,
        },
    };
    let e = f.engine.decide(&p.approval_id, stale).unwrap_err();
    assert!(
        matches!(
            e,
            EngineError::Selection(SelectionError::StalePreview { .. })
        ),
        "{e}"
    );
    // Nothing was decided: the call still waits, nothing is on disk, and it can be approved.
    assert_eq!(f.engine.pending().len(), 1);
    assert_eq!(read(&f.root, "notes/b.md"), None);
    f.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(
        read(&f.root, "notes/b.md").as_deref(),
        Some("A new note.\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_does_not_declare_parts_refuses_a_selection() {
    let f = fixture();
    let (h, p) = queued(
        &f,
        call("write", json!({"path": "notes/w.md", "content": "hello\n"})),
    )
    .await;
    assert!(!p.parts, "write does not declare parts");
    let e = f
        .engine
        .decide(&p.approval_id, keep(&p, &["f0h0"], None))
        .unwrap_err();
    assert!(
        matches!(&e, EngineError::Selection(SelectionError::NotSupported { tool }) if tool == "write"),
        "{e}"
    );
    f.engine
        .decide(&p.approval_id, Decision::Reject { reason: None })
        .unwrap();
    assert_eq!(h.await.unwrap().status, CallStatus::Rejected);
    assert_eq!(read(&f.root, "notes/w.md"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_hunk_of_a_patched_file_is_kept_and_the_move_goes_with_it() {
    let f = fixture();
    write(&f.root, "manuscript/a.md", &chapter(40));
    let patch = "*** Begin Patch
*** Update File: manuscript/a.md
*** Move to: manuscript/a2.md
@@
-Line 2 of the chapter.
+Line two, rewritten.
@@
-Line 30 of the chapter.
+Line thirty, rewritten.
*** End Patch";
    let (h, p) = queued(&f, call("apply_patch", json!({"patch": patch}))).await;
    assert_eq!(parts_of(&p.preview).len(), 2);
    f.engine
        .decide(&p.approval_id, keep(&p, &["f0h1"], None))
        .unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(read(&f.root, "manuscript/a.md"), None, "the move was kept");
    assert_eq!(
        read(&f.root, "manuscript/a2.md").unwrap(),
        chapter(40).replace("Line 30 of the chapter.", "Line thirty, rewritten.")
    );
    assert!(
        r.content.contains("Rejected (not applied):\n  - manuscript/a.md → manuscript/a2.md: hunk 1 of 2 (@@ -1,5)\n"),
        "{}",
        r.content
    );
}
