//! The board workflow tools through the real engine on a real project (issue #17): the roles
//! of the notes' table, list/get/validate/trait reads, create/update/delete/select held for
//! approval with the dry run as preview, built-ins refused, occupied columns and re-homing,
//! fields orphaned rather than destroyed, and `fn_workflow_settings` get/set with every
//! rejection code — each rejection asserting that nothing in the database changed.

#[allow(dead_code)]
mod engine_support;

use std::time::Duration;

use engine_support::{call, fx, Fx, APPROVE};
use nbook::engine::{Approval, CallResult, CallStatus, Decision, Mode, PreviewBody};
use nbook::tools::fusion::SESSION_TASK;
use serde_json::{json, Value};

impl Fx {
    fn session(&self, profile: &str, task: Option<&str>) -> String {
        let sid = self
            .engine
            .create_session(profile, Mode::Normal, "t", None)
            .unwrap()
            .id;
        if let Some(t) = task {
            self.engine
                .set_session_state(&sid, vec![(SESSION_TASK.into(), json!(t))])
                .unwrap();
        }
        sid
    }
    async fn run(&self, sid: &str, tool: &str, args: Value) -> CallResult {
        self.engine.call(sid, call(tool, args), APPROVE).await
    }
    async fn ok(&self, sid: &str, tool: &str, args: Value) -> Value {
        let r = self.run(sid, tool, args).await;
        assert_eq!(r.status, CallStatus::Ok, "{tool}: {}", r.content);
        r.details.unwrap_or(Value::Null)
    }
    /// The call fails with `code`, and the database is exactly as before.
    async fn refused(&self, sid: &str, tool: &str, args: Value, code: &str) -> Value {
        let before = self.state();
        let r = self.run(sid, tool, args).await;
        assert_eq!(r.status, CallStatus::ToolError, "{tool}: {}", r.content);
        let d = r.details.unwrap_or(Value::Null);
        assert_eq!(d["code"], code, "{tool}: {}", r.content);
        assert_eq!(self.state(), before, "{tool} {code} persisted something");
        d
    }
    fn db(&self) -> rusqlite::Connection {
        nbook::store::open(&self.root.join(".nbook/project.sqlite")).unwrap()
    }
    /// Everything the workflow tools could change.
    fn state(&self) -> Vec<String> {
        let c = self.db();
        let mut out = Vec::new();
        for q in [
            "SELECT id || ir || name || revision FROM nbook_board_workflow ORDER BY id",
            "SELECT workflow_id || \"values\" || revision FROM nbook_board_workflow_settings ORDER BY workflow_id",
            "SELECT id || column_id || workflow_id || custom_fields || revision FROM nbook_board_task ORDER BY id",
            "SELECT count(*) || '' FROM nbook_board_config_revision",
        ] {
            let mut st = c.prepare(q).unwrap();
            let rows: Vec<String> = st
                .query_map([], |r| r.get::<_, String>(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            out.extend(rows);
        }
        out
    }
    async fn task(&self, description: &str, workflow: Option<&str>) -> String {
        let sid = self.session("triage", None);
        let mut args = json!({"description": description});
        if let Some(w) = workflow {
            args["workflow_id"] = json!(w);
        }
        self.ok(&sid, "fn_task_create", args).await["taskId"]
            .as_str()
            .unwrap()
            .to_string()
    }
    fn column_of(&self, id: &str) -> (String, String) {
        self.db()
            .query_row(
                "SELECT column_id, workflow_id FROM nbook_board_task WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
    }
}

fn names(f: &Fx, sid: &str) -> Vec<String> {
    nbook::agent::run_loop::tool_specs(&f.engine, sid)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

const ALL: [&str; 9] = [
    "fn_workflow_list",
    "fn_workflow_get",
    "fn_workflow_validate",
    "fn_workflow_select",
    "fn_workflow_create",
    "fn_workflow_update",
    "fn_workflow_delete",
    "fn_workflow_settings",
    "fn_trait_list",
];

/// A custom workflow with the built-in's column ids (so the runner drives it), a custom
/// `outline` column, a field and two settings.
fn custom_ir() -> Value {
    json!({
        "version": "v2",
        "name": "Short scenes",
        "columns": [
            {"id": "planning", "name": "Plan", "traits": [{"trait": "intake"}]},
            {"id": "outline", "name": "Outline", "traits": []},
            {"id": "drafting", "name": "Draft", "traits": []},
            {"id": "review", "name": "Read-through", "traits": [{"trait": "human-review"}]},
            {"id": "done", "name": "Done", "traits": [{"trait": "complete"}]},
            {"id": "archived", "name": "Archived", "traits": [{"trait": "archived"}]}
        ],
        "nodes": [],
        "edges": [],
        "fields": [{"id": "mood", "name": "Mood", "type": "enum", "options": [{"value": "dark", "label": "Dark"}, {"value": "light", "label": "Light"}]}],
        "settings": [
            {"id": "workflowStepTimeoutMs", "name": "Time limit", "type": "number", "integer": true, "minimum": 1000, "default": 900000},
            {"id": "tone", "name": "Tone", "type": "enum", "default": "quiet", "options": [{"value": "quiet", "label": "Quiet"}, {"value": "loud", "label": "Loud"}]}
        ]
    })
}

#[test]
fn each_role_gets_the_workflow_tools_of_the_notes_table() {
    let f = fx();
    for p in ["executor", "heartbeat", "chat", "planning"] {
        let have = names(&f, &f.session(p, None));
        for t in ALL {
            assert!(have.contains(&t.to_string()), "{p} lacks {t}: {have:?}");
        }
    }
    let triage = names(&f, &f.session("triage", None));
    for t in ALL {
        let want = t == "fn_workflow_list" || t == "fn_workflow_select";
        assert_eq!(triage.contains(&t.to_string()), want, "triage {t}");
    }
    for p in ["reviewer", "step-session", "merger"] {
        let have = names(&f, &f.session(p, None));
        assert!(
            !have
                .iter()
                .any(|t| t.starts_with("fn_workflow") || t == "fn_trait_list"),
            "{p}: {have:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_list_get_validate_and_traits() {
    let f = fx();
    let sid = f.session("executor", None);
    let l = f.ok(&sid, "fn_workflow_list", json!({})).await;
    assert_eq!(l["workflows"][0]["id"], "builtin:chapter");
    assert_eq!(l["workflows"][0]["builtin"], true);
    assert_eq!(
        l["workflows"][0]["columns"],
        json!(["planning", "drafting", "review", "done", "archived"])
    );
    let g = f
        .ok(
            &sid,
            "fn_workflow_get",
            json!({"workflow_id": "builtin:chapter"}),
        )
        .await;
    assert_eq!(g["builtin"], true);
    assert_eq!(g["ir"]["version"], "v2");
    let ids: Vec<&str> = g["ir"]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"workflowStepTimeoutMs") && ids.contains(&"reviewHandoffPolicy"));
    assert!(g["ir"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["kind"] == "foreach"));
    f.refused(
        &sid,
        "fn_workflow_get",
        json!({"workflow_id": "WF-404"}),
        "WORKFLOW_NOT_FOUND",
    )
    .await;
    let v = f
        .ok(
            &sid,
            "fn_workflow_validate",
            json!({"workflow_id": "builtin:chapter"}),
        )
        .await;
    assert_eq!(v, json!({"valid": true}));
    let before = f.state();
    let mut bad = custom_ir();
    bad["columns"][1]["traits"] = json!([{"trait": "teleport"}]);
    bad["columns"][1]["agent"] = json!({"agentId": "ed", "mode": "maybe"});
    bad["nodes"] = json!([{"id": "start", "kind": "start"}, {"id": "c", "kind": "code", "config": {"source": ""}}, {"id": "end", "kind": "end"}]);
    bad["edges"] = json!([{"from": "start", "to": "c"}, {"from": "c", "to": "end"}]);
    let v = f.ok(&sid, "fn_workflow_validate", json!({"ir": bad})).await;
    assert_eq!(v["valid"], false);
    let types: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    for t in ["column-traits", "code-node", "column-agent"] {
        assert!(types.contains(&t), "{types:?}");
    }
    assert_eq!(f.state(), before, "validate changes nothing");
    f.refused(&sid, "fn_workflow_validate", json!({}), "INVALID_ARGUMENT")
        .await;
    let t = f.ok(&sid, "fn_trait_list", json!({})).await;
    let traits: Vec<&str> = t["traits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["trait"].as_str().unwrap())
        .collect();
    assert!(
        traits.contains(&"intake")
            && traits.contains(&"wip")
            && traits.contains(&"stall-detection")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_waits_for_approval_with_its_dry_run_and_invalid_irs_store_nothing() {
    let f = fx();
    let sid = f.session("executor", None);
    let mut bad = custom_ir();
    bad["settings"][0]["minimum"] = json!(1_000_000);
    let d = f
        .refused(
            &sid,
            "fn_workflow_create",
            json!({"name": "Bad", "ir": bad}),
            "WORKFLOW_IR_INVALID",
        )
        .await;
    assert_eq!(d["errors"][0]["type"], "workflow-ir");
    f.refused(
        &sid,
        "fn_workflow_create",
        json!({"name": "Bad", "ir": [1, 2]}),
        "INVALID_ARGUMENT",
    )
    .await;
    let (e, s) = (f.engine.clone(), sid.clone());
    let h = tokio::spawn(async move {
        e.call(
            &s,
            call(
                "fn_workflow_create",
                json!({"name": "Short scenes", "ir": custom_ir()}),
            ),
            Approval::Queue,
        )
        .await
    });
    let mut pending = Vec::new();
    for _ in 0..500 {
        pending = f.engine.pending();
        if !pending.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let p = pending.first().expect("the create waits for approval");
    assert!(
        p.preview
            .summary
            .starts_with("fn_workflow_create: create Workflow WF-001 (Short scenes)"),
        "{}",
        p.preview.summary
    );
    match &p.preview.body {
        PreviewBody::Records { changes } => assert!(changes[0]
            .fields
            .iter()
            .any(|c| c.field == "settings" && c.after == json!(["workflowStepTimeoutMs", "tone"]))),
        other => panic!("{other:?}"),
    }
    assert!(
        f.state().iter().all(|r| !r.starts_with("WF-")),
        "nothing before approval"
    );
    f.engine.decide(&p.approval_id, Decision::Approve).unwrap();
    let r = h.await.unwrap();
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    assert_eq!(r.details.unwrap()["workflowId"], "WF-001");
    // The new workflow's columns reach the board: a task created in it lands in its intake.
    let t = f.task("Scene by the harbour", Some("WF-001")).await;
    assert_eq!(f.column_of(&t), ("planning".into(), "WF-001".into()));
    let triage = f.session("triage", None);
    let list = f.ok(&triage, "fn_task_list", json!({})).await;
    let cols: Vec<&str> = list["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(cols.contains(&"outline"), "{cols:?}");
    // A heartbeat's node flags that skip approval are stripped.
    let hb = f.session("heartbeat", None);
    let mut flagged = custom_ir();
    flagged["nodes"] = json!([{"id": "start", "kind": "start"}, {"id": "p", "kind": "prompt", "config": {"seam": "planning", "autoApprove": true, "cliSkipApproval": true}}, {"id": "end", "kind": "end"}]);
    flagged["edges"] = json!([{"from": "start", "to": "p"}, {"from": "p", "to": "end"}]);
    let id = f
        .ok(
            &hb,
            "fn_workflow_create",
            json!({"name": "Flagged", "ir": flagged}),
        )
        .await["workflowId"]
        .as_str()
        .unwrap()
        .to_string();
    let g = f
        .ok(&hb, "fn_workflow_get", json!({"workflow_id": id}))
        .await;
    assert_eq!(g["ir"]["nodes"][1]["config"], json!({"seam": "planning"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builtins_are_read_only_occupied_columns_need_rehome_to_and_fields_orphan() {
    let f = fx();
    let sid = f.session("executor", None);
    for (tool, args) in [
        (
            "fn_workflow_update",
            json!({"workflow_id": "builtin:chapter", "name": "Mine"}),
        ),
        (
            "fn_workflow_delete",
            json!({"workflow_id": "builtin:chapter"}),
        ),
    ] {
        let d = f
            .refused(&sid, tool, args, "WORKFLOW_BUILTIN_READONLY")
            .await;
        assert_eq!(d["workflowId"], "builtin:chapter");
    }
    f.ok(
        &sid,
        "fn_workflow_create",
        json!({"name": "Short scenes", "ir": custom_ir()}),
    )
    .await;
    let t = f.task("Scene by the harbour", Some("WF-001")).await;
    let x = f.session("executor", Some(&t));
    f.ok(
        &x,
        "fn_task_update",
        json!({"custom_fields": {"mood": "dark"}}),
    )
    .await;
    // Move it to the custom column, then remove that column.
    f.engine
        .author_call(
            "fn_task_move",
            json!({"task_id": t, "column": "outline"}),
            None,
        )
        .await;
    assert_eq!(f.column_of(&t).0, "outline");
    let mut fewer = custom_ir();
    fewer["columns"].as_array_mut().unwrap().remove(1);
    fewer["fields"] = json!([]);
    let d = f
        .refused(
            &sid,
            "fn_workflow_update",
            json!({"workflow_id": "WF-001", "ir": fewer}),
            "WORKFLOW_OCCUPIED_COLUMNS",
        )
        .await;
    assert_eq!(d["occupiedColumns"], json!(["outline"]));
    assert_eq!(d["occupants"]["outline"], json!([t]));
    assert_eq!(d["retryWith"], "rehome_to");
    f.refused(
        &sid,
        "fn_workflow_update",
        json!({"workflow_id": "WF-001", "ir": fewer, "rehome_to": "outline"}),
        "INVALID_ARGUMENT",
    )
    .await;
    f.refused(
        &sid,
        "fn_workflow_update",
        json!({"workflow_id": "WF-404", "name": "x"}),
        "WORKFLOW_NOT_FOUND",
    )
    .await;
    let u = f
        .ok(
            &sid,
            "fn_workflow_update",
            json!({"workflow_id": "WF-001", "ir": fewer, "rehome_to": "drafting"}),
        )
        .await;
    assert_eq!(u["rehomed"], json!([t]));
    assert_eq!(f.column_of(&t).0, "drafting");
    // The field's declaration is gone; the task's value is kept (orphaned), not destroyed.
    let fields: String = f
        .db()
        .query_row(
            "SELECT custom_fields FROM nbook_board_task WHERE id = ?1",
            [&t],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(fields, r#"{"mood":"dark"}"#);
    // Delete: the task goes home to builtin:chapter's entry column.
    let d = f
        .ok(&sid, "fn_workflow_delete", json!({"workflow_id": "WF-001"}))
        .await;
    assert_eq!(d["rehomed"], json!([t]));
    assert_eq!(
        f.column_of(&t),
        ("planning".into(), "builtin:chapter".into())
    );
    f.refused(
        &sid,
        "fn_workflow_delete",
        json!({"workflow_id": "WF-001"}),
        "WORKFLOW_NOT_FOUND",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_assigns_a_workflow_and_keeps_or_rehomes_the_column() {
    let f = fx();
    let sid = f.session("executor", None);
    f.ok(
        &sid,
        "fn_workflow_create",
        json!({"name": "Short scenes", "ir": custom_ir()}),
    )
    .await;
    let t = f.task("Scene by the harbour", None).await;
    let x = f.session("executor", Some(&t));
    let s = f
        .ok(&x, "fn_workflow_select", json!({"workflow_id": "WF-001"}))
        .await;
    assert_eq!(
        s,
        json!({"taskId": t, "workflowId": "WF-001", "column": "planning"})
    );
    f.refused(
        &x,
        "fn_workflow_select",
        json!({"workflow_id": "WF-001"}),
        "INVALID_ARGUMENT",
    )
    .await;
    f.refused(
        &x,
        "fn_workflow_select",
        json!({"workflow_id": "WF-404"}),
        "WORKFLOW_NOT_FOUND",
    )
    .await;
    let chat = f.session("chat", None);
    f.refused(
        &chat,
        "fn_workflow_select",
        json!({"workflow_id": "builtin:chapter"}),
        "TASK_ID_REQUIRED",
    )
    .await;
    f.refused(
        &chat,
        "fn_workflow_select",
        json!({"workflow_id": "builtin:chapter", "task_id": "NB-404"}),
        "TASK_NOT_FOUND",
    )
    .await;
    // Back to the built-in from the custom-only column: the entry column.
    f.engine
        .author_call(
            "fn_task_move",
            json!({"task_id": t, "column": "outline"}),
            None,
        )
        .await;
    f.ok(
        &chat,
        "fn_workflow_select",
        json!({"workflow_id": "builtin:chapter", "task_id": t}),
    )
    .await;
    assert_eq!(
        f.column_of(&t),
        ("planning".into(), "builtin:chapter".into())
    );
    let revisions = nbook::board::Board::new(&f.root, "book")
        .read(|c| nbook::board::workflow::revisions(c, "builtin:chapter"))
        .unwrap();
    assert_eq!(revisions.last().unwrap()["subject"], "selection");
    assert_eq!(revisions.last().unwrap()["actor"]["kind"], "agent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_get_set_rejections_and_orphans() {
    let f = fx();
    let sid = f.session("executor", None);
    // get needs no approval: it runs even when every approval would be refused.
    let r = f
        .engine
        .call(
            &sid,
            call(
                "fn_workflow_settings",
                json!({"action": "get", "workflow_id": "builtin:chapter"}),
            ),
            Approval::Auto {
                decision: Decision::Reject { reason: None },
                by: "test",
            },
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{}", r.content);
    let g = r.details.unwrap();
    assert_eq!(g["workflowId"], "builtin:chapter");
    assert_eq!(g["stored"], json!({}));
    assert_eq!(g["effective"]["workflowStepTimeoutMs"], 900000);
    assert_eq!(g["effective"]["reviewHandoffPolicy"], "disabled");
    assert!(
        g["effective"].get("maxReviewRevisions").is_none(),
        "no default: absent"
    );
    assert_eq!(g["orphaned"], json!([]));
    // set waits for approval: refused here, nothing stored.
    let before = f.state();
    let r = f
        .engine
        .call(
            &sid,
            call("fn_workflow_settings", json!({"action": "set", "workflow_id": "builtin:chapter", "values": {"workflowStepTimeoutMs": 600000}})),
            Approval::Auto {
                decision: Decision::Reject { reason: None },
                by: "test",
            },
        )
        .await;
    assert_eq!(r.status, CallStatus::Rejected);
    assert_eq!(f.state(), before);
    // Every bad key is reported at once; nothing is stored.
    let d = f
        .refused(
            &sid,
            "fn_workflow_settings",
            json!({"action": "set", "workflow_id": "builtin:chapter", "values": {
                "workflowStepTimeoutMs": 999.5,
                "reviewHandoffPolicy": "sometimes",
                "maxParallelSteps": 0,
                "nope": 1,
                "requirePlanApproval": true
            }}),
            "WORKFLOW_SETTINGS_REJECTED",
        )
        .await;
    assert_eq!(d["workflowId"], "builtin:chapter");
    let mut got: Vec<(String, String)> = d["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert!(r["message"].as_str().is_some_and(|m| !m.is_empty()));
            (
                r["settingId"].as_str().unwrap().into(),
                r["code"].as_str().unwrap().into(),
            )
        })
        .collect();
    got.sort();
    let want: Vec<(String, String)> = [
        ("maxParallelSteps", "type-mismatch"),
        ("nope", "unknown-setting"),
        ("reviewHandoffPolicy", "enum-violation"),
        ("workflowStepTimeoutMs", "type-mismatch"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
    for (values, code) in [
        (json!({"workflowStepTimeoutMs": "soon"}), "type-mismatch"),
        (json!({"reviewHandoffPolicy": "never"}), "enum-violation"),
        (json!({"ghost": true}), "unknown-setting"),
    ] {
        let d = f
            .refused(
                &sid,
                "fn_workflow_settings",
                json!({"action": "set", "workflow_id": "builtin:chapter", "values": values}),
                "WORKFLOW_SETTINGS_REJECTED",
            )
            .await;
        assert_eq!(d["rejections"][0]["code"], code);
    }
    // A workflow without settings: no-settings-defined.
    let mut bare = custom_ir();
    bare["settings"] = json!([]);
    f.ok(
        &sid,
        "fn_workflow_create",
        json!({"name": "Bare", "ir": bare}),
    )
    .await;
    let d = f
        .refused(
            &sid,
            "fn_workflow_settings",
            json!({"action": "set", "workflow_id": "WF-001", "values": {"x": 1}}),
            "WORKFLOW_SETTINGS_REJECTED",
        )
        .await;
    assert_eq!(d["rejections"][0]["code"], "no-settings-defined");
    f.refused(
        &sid,
        "fn_workflow_settings",
        json!({"action": "set", "workflow_id": "WF-404", "values": {"x": 1}}),
        "WORKFLOW_NOT_FOUND",
    )
    .await;
    f.refused(
        &sid,
        "fn_workflow_settings",
        json!({"action": "set", "workflow_id": "builtin:chapter"}),
        "INVALID_ARGUMENT",
    )
    .await;
    // Built-in values are writable.
    let s = f
        .ok(
            &sid,
            "fn_workflow_settings",
            json!({"action": "set", "workflow_id": "builtin:chapter", "values": {"workflowStepTimeoutMs": 600000, "reviewHandoffPolicy": "always"}}),
        )
        .await;
    assert_eq!(
        s["stored"],
        json!({"workflowStepTimeoutMs": 600000, "reviewHandoffPolicy": "always"})
    );
    assert_eq!(s["effective"]["workflowStepTimeoutMs"], 600000);
    assert_eq!(s["effective"]["maxParallelSteps"], 2);
    // Orphans: a custom workflow whose declaration is edited away keeps the stored value as
    // an orphan; effective drops it; null clears it.
    f.ok(
        &sid,
        "fn_workflow_create",
        json!({"name": "Short", "ir": custom_ir()}),
    )
    .await;
    f.ok(
        &sid,
        "fn_workflow_settings",
        json!({"action": "set", "workflow_id": "WF-002", "values": {"tone": "loud"}}),
    )
    .await;
    let mut less = custom_ir();
    less["settings"].as_array_mut().unwrap().remove(1);
    f.ok(
        &sid,
        "fn_workflow_update",
        json!({"workflow_id": "WF-002", "ir": less}),
    )
    .await;
    let g = f
        .ok(
            &sid,
            "fn_workflow_settings",
            json!({"action": "get", "workflow_id": "WF-002"}),
        )
        .await;
    assert_eq!(g["stored"], json!({"tone": "loud"}));
    assert!(g["effective"].get("tone").is_none());
    assert_eq!(g["orphaned"][0]["settingId"], "tone");
    assert_eq!(g["orphaned"][0]["reason"], "undeclared");
    let s = f
        .ok(
            &sid,
            "fn_workflow_settings",
            json!({"action": "set", "workflow_id": "WF-002", "values": {"tone": null}}),
        )
        .await;
    assert_eq!(s["stored"], json!({}));
    assert_eq!(s["orphaned"], json!([]));
    let revisions = nbook::board::Board::new(&f.root, "book")
        .read(|c| nbook::board::workflow::revisions(c, "WF-002"))
        .unwrap();
    let last = revisions.last().unwrap();
    assert_eq!(last["subject"], "settings");
    assert_eq!(last["before"], json!({"tone": "loud"}));
    assert_eq!(last["after"], json!({}));
    assert_eq!(last["actor"]["kind"], "agent");
}
