//! The Board pane's Workflows view (`W`) on a real temporary project, read through the pane's
//! real jobs and written as the author through the engine: the list (builtin:chapter, then a
//! custom workflow), each one's graph (columns with traits and nodes, a foreach's template,
//! the flow, the settings with where each value comes from, orphaned values), and the
//! settings form `e` — a bad value refused in the form with the engine's rejection code and
//! nothing stored, a good one stored and shown as `stored`, an empty value clearing it.
//! Snapshots at 80×24 and 120×40.

mod tui_story_support;

use nbook::board::workflow::{self as wf, Actor, NewWorkflow};
use serde_json::json;
use tui_story_support::board_ui::{app, board, keys, paste};
use tui_story_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

/// A book with a custom workflow "Scenes" (a custom column, a setting) and an orphaned value.
fn with_custom() -> Book {
    let b = empty_book();
    let ir = json!({
        "version": "v2", "name": "Scenes",
        "columns": [
            {"id": "planning", "name": "Planning", "traits": [{"trait": "intake"}]},
            {"id": "outline", "name": "Outline", "traits": [{"trait": "human-review"}]},
            {"id": "done", "name": "Done", "traits": [{"trait": "complete"}]}
        ],
        "nodes": [
            {"id": "start", "kind": "start", "column": "planning"},
            {"id": "sketch", "kind": "prompt", "column": "outline", "config": {"seam": "planning"}},
            {"id": "end", "kind": "end", "column": "done"}
        ],
        "edges": [{"from": "start", "to": "sketch"}, {"from": "sketch", "to": "end", "condition": "success"}],
        "settings": [{"id": "tone", "name": "Tone", "type": "enum", "default": "quiet",
                      "options": [{"value": "quiet", "label": "Quiet"}, {"value": "loud", "label": "Loud"}]}]
    });
    let who = Actor::system("test");
    board(&b)
        .commit(|c: &rusqlite::Connection| {
            wf::create(
                c,
                &NewWorkflow {
                    name: "Scenes".into(),
                    description: Some("One scene at a time.".into()),
                    ir: ir.clone(),
                    ..NewWorkflow::default()
                },
                &who,
            )
        })
        .unwrap();
    b.conn()
        .execute(
            "INSERT INTO nbook_board_workflow_settings (workflow_id, \"values\", revision, updated_at) VALUES ('WF-001', '{\"tone\":\"loud\",\"pace\":3}', 1, 'now')",
            [],
        )
        .unwrap();
    b
}

fn stored(b: &Book, id: &str) -> serde_json::Value {
    board(b)
        .read(|c: &rusqlite::Connection| wf::settings_of(c, id))
        .map(|r| serde_json::Value::Object(r.stored))
        .unwrap()
}

#[test]
fn w_lists_the_workflows_and_draws_each_as_a_graph_with_its_settings() {
    for (w, h) in SIZES {
        let b = with_custom();
        let mut a = app(&b, w, h);
        keys(&b, &mut a, "W");
        let s = screen(&mut a, w, h);
        assert!(s.contains("builtin:chapter"), "{s}");
        assert!(s.contains("Workflows (2)"), "{s}");
        insta::assert_snapshot!(format!("board_workflows_builtin_{w}x{h}"), s);
        keys(&b, &mut a, "j");
        let s = screen(&mut a, w, h);
        assert!(s.contains("Outline"), "{s}");
        insta::assert_snapshot!(format!("board_workflows_custom_{w}x{h}"), s);
        keys(&b, &mut a, "W");
        assert!(
            a.board.workflows.is_none(),
            "W again goes back to the board"
        );
    }
}

#[test]
fn e_sets_a_value_refuses_a_bad_one_in_the_form_and_clears_with_an_empty_value() {
    for (w, h) in SIZES {
        let b = with_custom();
        let mut a = app(&b, w, h);
        // W loads the list in a job; e needs it.
        keys(&b, &mut a, "W");
        keys(&b, &mut a, "e");
        paste(&b, &mut a, "workflowStepTimeoutMs = 12");
        keys(&b, &mut a, "<Enter>");
        let s = screen(&mut a, w, h);
        assert!(s.contains("type-mismatch"), "{s}");
        insta::assert_snapshot!(format!("board_workflows_form_refused_{w}x{h}"), s);
        assert_eq!(stored(&b, "builtin:chapter"), json!({}), "nothing stored");
        keys(&b, &mut a, "<Esc>");
        assert!(a.overlay.is_none());
        keys(&b, &mut a, "e");
        paste(&b, &mut a, "reviewHandoffPolicy = always");
        keys(&b, &mut a, "<Enter>");
        assert!(a.overlay.is_none(), "the form closed");
        assert_eq!(
            stored(&b, "builtin:chapter"),
            json!({"reviewHandoffPolicy": "always"})
        );
        let s = screen(&mut a, w, h);
        insta::assert_snapshot!(format!("board_workflows_set_{w}x{h}"), s);
        // The orphaned `pace` of WF-001 is cleared with an empty value.
        keys(&b, &mut a, "j e");
        paste(&b, &mut a, "pace =");
        keys(&b, &mut a, "<Enter>");
        assert_eq!(stored(&b, "WF-001"), json!({"tone": "loud"}));
    }
}
