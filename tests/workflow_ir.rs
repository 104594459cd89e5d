//! The IR v2 validator (`nbook::board::workflow::validate`): a valid stepwise graph passes
//! (normalized: `maxReworkCycles` above 10 clamped), and every rule has a failing case that
//! names its error type (`workflow-ir`, `column-traits`, `code-node`, `column-agent`).

use nbook::board::workflow::validate::{safe_regex, validate_value, ErrorType};
use serde_json::{json, Value};

/// A valid stepwise workflow: plan → parse-steps → foreach(step-execute → step-review, rework
/// back) → review → end.
fn base() -> Value {
    json!({
        "version": "v2",
        "name": "Stepwise",
        "columns": [
            {"id": "todo", "name": "To do", "traits": [{"trait": "intake"}]},
            {"id": "doing", "name": "Doing", "traits": [{"trait": "wip", "config": {"limitSetting": "lanes"}}]},
            {"id": "done", "name": "Done", "traits": [{"trait": "complete"}]}
        ],
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "plan", "kind": "prompt", "column": "todo", "config": {"seam": "planning"}},
            {"id": "parse", "kind": "parse-steps", "config": {"artifact": "PROMPT.md", "parser": "step-headings"}},
            {"id": "each", "kind": "foreach", "column": "doing", "config": {
                "source": "task-steps", "mode": "parallel", "concurrency": 4, "maxReworkCycles": 3,
                "template": {
                    "nodes": [
                        {"id": "exec", "kind": "prompt", "config": {"seam": "step-execute"}},
                        {"id": "check", "kind": "step-review", "config": {"type": "code"}},
                        {"id": "ok", "kind": "notify", "config": {"event": "step-done"}}
                    ],
                    "edges": [
                        {"from": "exec", "to": "check"},
                        {"from": "check", "to": "ok", "condition": "outcome:approve"},
                        {"from": "check", "to": "exec", "condition": "outcome:revise", "kind": "rework"}
                    ]
                }
            }},
            {"id": "tidy", "kind": "code", "config": {"source": "return {outcome: 'success'}", "timeoutMs": 30000}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"from": "start", "to": "plan"},
            {"from": "plan", "to": "parse", "condition": "success"},
            {"from": "parse", "to": "each", "condition": "success"},
            {"from": "each", "to": "tidy"},
            {"from": "tidy", "to": "end"}
        ],
        "settings": [
            {"id": "lanes", "name": "Lanes", "type": "number", "integer": true, "minimum": 1, "default": 2}
        ]
    })
}

/// `base()` changed by `f` fails with an error of `kind` whose message contains `needle`.
fn fails(what: &str, kind: ErrorType, needle: &str, f: impl FnOnce(&mut Value)) {
    let mut ir = base();
    f(&mut ir);
    let errors = match validate_value(&ir) {
        Ok(_) => panic!("{what}: accepted"),
        Err(e) => e,
    };
    assert!(
        errors
            .iter()
            .any(|e| e.kind == kind && e.message.contains(needle)),
        "{what}: wanted {kind:?} containing {needle:?}, got {errors:#?}"
    );
}

fn node<'a>(ir: &'a mut Value, id: &str) -> &'a mut Value {
    ir["nodes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|n| n["id"] == id)
        .unwrap()
}

fn tnode<'a>(ir: &'a mut Value, id: &str) -> &'a mut Value {
    node(ir, "each")["config"]["template"]["nodes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|n| n["id"] == id)
        .unwrap()
}

#[test]
fn the_base_graph_and_the_builtin_are_valid_and_rework_cycles_are_clamped() {
    validate_value(&base()).expect("valid");
    let mut ir = base();
    node(&mut ir, "each")["config"]["maxReworkCycles"] = json!(25);
    let ok = validate_value(&ir).expect("clamped, not refused");
    let each = ok.nodes.iter().find(|n| n.id == "each").unwrap();
    assert_eq!(each.config["maxReworkCycles"], 10);
    let builtin = serde_json::to_value(&*nbook::board::workflow::builtin::CHAPTER).unwrap();
    validate_value(&builtin).expect("builtin:chapter");
    // A board-only workflow (columns, no nodes) is legal: the seed's example.
    validate_value(&json!({"version": "v2", "name": "QA", "columns": [{"id": "intake", "name": "Intake", "traits": []}], "nodes": [], "edges": []})).expect("board-only");
}

#[test]
fn graph_rules() {
    use ErrorType::WorkflowIr as W;
    fails("v1", W, "version", |ir| ir["version"] = json!("v1"));
    fails("not an IR", W, "does not parse", |ir| {
        ir["columns"] = json!(7)
    });
    fails("no columns", W, "at least one column", |ir| {
        ir["columns"] = json!([])
    });
    fails("duplicate column", W, "used twice", |ir| {
        let c = ir["columns"][0].clone();
        ir["columns"].as_array_mut().unwrap().push(c);
    });
    fails("duplicate node", W, "node id 'plan' is used twice", |ir| {
        let n = node(ir, "plan").clone();
        ir["nodes"].as_array_mut().unwrap().push(n);
    });
    fails("unknown kind", W, "unknown kind", |ir| {
        node(ir, "plan")["kind"] = json!("teleport")
    });
    fails("unknown column", W, "does not exist", |ir| {
        node(ir, "plan")["column"] = json!("nowhere")
    });
    fails("two starts", W, "exactly one start", |ir| {
        ir["nodes"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "s2", "kind": "start"}));
        ir["edges"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "s2", "to": "plan"}));
    });
    fails("no end", W, "exactly one end", |ir| {
        node(ir, "end")["kind"] = json!("notify")
    });
    fails("unreachable", W, "not reachable", |ir| {
        ir["nodes"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "lost", "kind": "gate"}));
    });
    fails("dangling edge", W, "node 'ghost' is not in", |ir| {
        ir["edges"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "tidy", "to": "ghost"}));
    });
    fails("bad condition", W, "condition", |ir| {
        ir["edges"][0]["condition"] = json!("maybe")
    });
    fails("plain cycle", W, "cycle", |ir| {
        ir["edges"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "tidy", "to": "plan"}));
    });
    fails("top-level rework", W, "outside a foreach template", |ir| {
        ir["edges"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "tidy", "to": "plan", "kind": "rework"}));
    });
    fails(
        "parse-steps not dominating",
        W,
        "parse-steps must dominate",
        |ir| {
            ir["edges"]
                .as_array_mut()
                .unwrap()
                .push(json!({"from": "plan", "to": "each", "condition": "failure"}));
        },
    );
    fails("parse-steps artifact", W, "must be PROMPT.md", |ir| {
        node(ir, "parse")["config"]["artifact"] = json!("plan.md")
    });
    fails("parse-steps undeclared artifact", W, "not declared", |ir| {
        ir["artifacts"] = json!([{"key": "outline"}]);
    });
    fails("parse-steps parser", W, "parser", |ir| {
        node(ir, "parse")["config"]["parser"] = json!("guess")
    });
    fails("exit-gate must reach end", W, "must reach end", |ir| {
        ir["nodes"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "gate", "kind": "exit-gate"}));
        ir["edges"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "start", "to": "gate"}));
    });
    fails("notify without event", W, "needs config.event", |ir| {
        tnode(ir, "ok")["config"] = json!({});
    });
    fails(
        "step-execute at top level",
        W,
        "only inside a foreach template",
        |ir| node(ir, "plan")["config"]["seam"] = json!("step-execute"),
    );
    fails(
        "execute in a split branch",
        W,
        "not allowed in a split branch",
        |ir| {
            let nodes = ir["nodes"].as_array_mut().unwrap();
            nodes.push(json!({"id": "fork", "kind": "split"}));
            nodes.push(json!({"id": "w", "kind": "prompt", "config": {"seam": "execute"}}));
            nodes.push(json!({"id": "meet", "kind": "join"}));
            let edges = ir["edges"].as_array_mut().unwrap();
            edges.retain(|e| !(e["from"] == "tidy" && e["to"] == "end"));
            edges.push(json!({"from": "tidy", "to": "fork"}));
            edges.push(json!({"from": "fork", "to": "w"}));
            edges.push(json!({"from": "w", "to": "meet"}));
            edges.push(json!({"from": "meet", "to": "end"}));
        },
    );
}

#[test]
fn foreach_rules() {
    use ErrorType::WorkflowIr as W;
    fails("source", W, "task-steps", |ir| {
        node(ir, "each")["config"]["source"] = json!("files")
    });
    fails("mode", W, "mode", |ir| {
        node(ir, "each")["config"]["mode"] = json!("random")
    });
    fails("parallel + shared", W, "isolation shared", |ir| {
        node(ir, "each")["config"]["isolation"] = json!("shared")
    });
    fails("concurrency 9", W, "concurrency", |ir| {
        node(ir, "each")["config"]["concurrency"] = json!(9)
    });
    fails("concurrency 0", W, "concurrency", |ir| {
        node(ir, "each")["config"]["concurrency"] = json!(0)
    });
    fails("concurrency on sequential", W, "parallel mode only", |ir| {
        let c = &mut node(ir, "each")["config"];
        c["mode"] = json!("sequential");
        c.as_object_mut().unwrap().remove("isolation");
    });
    fails("maxReworkCycles 0", W, "maxReworkCycles", |ir| {
        node(ir, "each")["config"]["maxReworkCycles"] = json!(0)
    });
    fails("maxReworkCycles 1.5", W, "maxReworkCycles", |ir| {
        node(ir, "each")["config"]["maxReworkCycles"] = json!(1.5)
    });
    fails("no template", W, "needs a template", |ir| {
        node(ir, "each")["config"]
            .as_object_mut()
            .unwrap()
            .remove("template");
    });
    fails("empty template", W, "template is empty", |ir| {
        node(ir, "each")["config"]["template"] = json!({"nodes": [], "edges": []})
    });
    fails("nested foreach", W, "may not be nested", |ir| {
        let inner = json!({"id": "inner", "kind": "foreach", "config": {"source": "task-steps", "template": {"nodes": [{"id": "x", "kind": "gate"}], "edges": []}}});
        let t = &mut node(ir, "each")["config"]["template"];
        t["nodes"].as_array_mut().unwrap().push(inner);
        t["edges"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "ok", "to": "inner"}));
    });
    fails("nested loop", W, "loops may not be nested", |ir| {
        let inner = json!({"id": "inner", "kind": "loop", "config": {"maxIterations": 2, "template": {"nodes": [{"id": "x", "kind": "gate"}], "edges": []}}});
        let t = &mut node(ir, "each")["config"]["template"];
        t["nodes"].as_array_mut().unwrap().push(inner);
        t["edges"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "ok", "to": "inner"}));
    });
    fails(
        "edge leaving the template",
        W,
        "is not in foreach 'each' template",
        |ir| {
            node(ir, "each")["config"]["template"]["edges"]
                .as_array_mut()
                .unwrap()
                .push(json!({"from": "ok", "to": "tidy"}));
        },
    );
    fails("two entries", W, "exactly one entry", |ir| {
        node(ir, "each")["config"]["template"]["nodes"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "stray", "kind": "gate"}));
    });
    fails("two exits", W, "exactly one exit", |ir| {
        let t = &mut node(ir, "each")["config"]["template"];
        t["nodes"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "also", "kind": "gate"}));
        t["edges"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "exec", "to": "also"}));
    });
    fails(
        "id collision",
        W,
        "collides with a top-level node id",
        |ir| {
            tnode(ir, "ok")["id"] = json!("tidy");
            let t = &mut node(ir, "each")["config"]["template"];
            t["edges"][1]["to"] = json!("tidy");
        },
    );
    fails(
        "rework that does not go back",
        W,
        "does not close a cycle",
        |ir| {
            let t = &mut node(ir, "each")["config"]["template"];
            t["edges"]
                .as_array_mut()
                .unwrap()
                .push(json!({"from": "exec", "to": "ok", "kind": "rework"}));
        },
    );
    fails("cycle in a template", W, "not a rework edge", |ir| {
        node(ir, "each")["config"]["template"]["edges"][2]
            .as_object_mut()
            .unwrap()
            .remove("kind");
    });
    fails("step-review type", W, "plan or code", |ir| {
        tnode(ir, "check")["config"]["type"] = json!("vibes")
    });
    fails(
        "step-review without revise routing",
        W,
        "must route outcome:revise",
        |ir| {
            node(ir, "each")["config"]["template"]["edges"][2]["condition"] = json!("failure");
        },
    );
}

#[test]
fn loop_and_optional_group_rules() {
    use ErrorType::WorkflowIr as W;
    let with_loop = |cfg: Value| {
        move |ir: &mut Value| {
            ir["nodes"]
                .as_array_mut()
                .unwrap()
                .push(json!({"id": "again", "kind": "loop", "config": cfg}));
            let edges = ir["edges"].as_array_mut().unwrap();
            edges.retain(|e| !(e["from"] == "tidy" && e["to"] == "end"));
            edges.push(json!({"from": "tidy", "to": "again"}));
            edges.push(json!({"from": "again", "to": "end"}));
        }
    };
    let t = json!({"nodes": [{"id": "l1", "kind": "gate"}], "edges": []});
    fails(
        "loop 51 iterations",
        W,
        "maxIterations",
        with_loop(json!({"maxIterations": 51, "template": t})),
    );
    fails(
        "loop 0 iterations",
        W,
        "maxIterations",
        with_loop(json!({"maxIterations": 0, "template": t})),
    );
    fails(
        "loop over an hour",
        W,
        "1 hour",
        with_loop(json!({"maxIterations": 3, "timeoutMs": 3_600_001u64, "template": t})),
    );
    fails(
        "long regex",
        W,
        "longer than 256",
        with_loop(
            json!({"maxIterations": 3, "exitWhen": {"type": "output-matches", "value": "a".repeat(257)}, "template": t}),
        ),
    );
    fails(
        "nested quantifier",
        W,
        "nested quantifiers",
        with_loop(
            json!({"maxIterations": 3, "exitWhen": {"type": "output-matches", "value": "(a+)+$"}, "template": t}),
        ),
    );
    fails(
        "backreference",
        W,
        "backreferences",
        with_loop(
            json!({"maxIterations": 3, "exitWhen": {"type": "output-matches", "value": "(a)\\1"}, "template": t}),
        ),
    );
    fails(
        "bad exitWhen",
        W,
        "exitWhen",
        with_loop(json!({"maxIterations": 3, "exitWhen": {"type": "vibes"}, "template": t})),
    );
    fails(
        "rework in a loop template",
        W,
        "not allowed in loop",
        with_loop(
            json!({"maxIterations": 3, "template": {"nodes": [{"id": "l1", "kind": "gate"}, {"id": "l2", "kind": "gate"}], "edges": [{"from": "l1", "to": "l2"}, {"from": "l2", "to": "l1", "kind": "rework"}]}}),
        ),
    );
    fails("optional-group phase", W, "phase", |ir| {
        ir["nodes"].as_array_mut().unwrap().push(json!({"id": "opt", "kind": "optional-group", "config": {"phase": "whenever", "template": {"nodes": [{"id": "o1", "kind": "gate"}], "edges": []}}}));
        ir["edges"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "tidy", "to": "opt"}));
    });
    assert!(safe_regex("^(?:chapter|scene) [0-9]+$").is_ok());
    assert!(safe_regex("(ab)*").is_ok());
}

#[test]
fn code_node_column_and_settings_rules() {
    use ErrorType::*;
    fails("empty source", CodeNode, "source", |ir| {
        node(ir, "tidy")["config"]["source"] = json!("")
    });
    fails("huge source", CodeNode, "source", |ir| {
        node(ir, "tidy")["config"]["source"] = json!("x".repeat(65_537))
    });
    fails("timeout too short", CodeNode, "timeoutMs", |ir| {
        node(ir, "tidy")["config"]["timeoutMs"] = json!(999)
    });
    fails("timeout too long", CodeNode, "timeoutMs", |ir| {
        node(ir, "tidy")["config"]["timeoutMs"] = json!(300_001)
    });
    fails("unknown trait", ColumnTraits, "unknown trait", |ir| {
        ir["columns"][0]["traits"] = json!([{"trait": "teleport"}])
    });
    fails("trait twice", ColumnTraits, "twice", |ir| {
        ir["columns"][0]["traits"] = json!([{"trait": "intake"}, {"trait": "intake"}])
    });
    fails(
        "unknown trait config",
        ColumnTraits,
        "no config key",
        |ir| ir["columns"][0]["traits"] = json!([{"trait": "intake", "config": {"speed": 3}}]),
    );
    fails(
        "wip limit not a number setting",
        ColumnTraits,
        "limitSetting",
        |ir| ir["columns"][1]["traits"][0]["config"]["limitSetting"] = json!("nope"),
    );
    fails("hold release", ColumnTraits, "release", |ir| {
        ir["columns"][0]["traits"] = json!([{"trait": "hold", "config": {"release": "never"}}])
    });
    fails("agent mode", ColumnAgent, "defer or override", |ir| {
        ir["columns"][0]["agent"] = json!({"agentId": "ed", "mode": "sometimes"})
    });
    fails("agent id", ColumnAgent, "agentId", |ir| {
        ir["columns"][0]["agent"] = json!({"agentId": " ", "mode": "defer"})
    });
    let setting = |s: Value| move |ir: &mut Value| ir["settings"].as_array_mut().unwrap().push(s);
    fails(
        "unknown setting type",
        WorkflowIr,
        "does not parse",
        setting(json!({"id": "x", "name": "X", "type": "date"})),
    );
    fails(
        "duplicate setting",
        WorkflowIr,
        "declared twice",
        setting(json!({"id": "lanes", "name": "L", "type": "number"})),
    );
    fails(
        "minimum on a string",
        WorkflowIr,
        "only go with number",
        setting(json!({"id": "x", "name": "X", "type": "string", "minimum": 1})),
    );
    fails(
        "integer on a boolean",
        WorkflowIr,
        "only go with number",
        setting(json!({"id": "x", "name": "X", "type": "boolean", "integer": true})),
    );
    fails(
        "enum without options",
        WorkflowIr,
        "needs options",
        setting(json!({"id": "x", "name": "X", "type": "enum"})),
    );
    fails(
        "multi-enum without options",
        WorkflowIr,
        "needs options",
        setting(json!({"id": "x", "name": "X", "type": "multi-enum", "options": []})),
    );
    fails(
        "bad default",
        WorkflowIr,
        "default is invalid",
        setting(json!({"id": "x", "name": "X", "type": "number", "minimum": 5, "default": 2})),
    );
    fails(
        "enum default off the list",
        WorkflowIr,
        "default is invalid",
        setting(
            json!({"id": "x", "name": "X", "type": "enum", "options": [{"value": "a", "label": "A"}], "default": "b"}),
        ),
    );
    fails("duplicate field", WorkflowIr, "declared twice", |ir| {
        ir["fields"] = json!([{"id": "pov", "name": "P", "type": "string"}, {"id": "pov", "name": "P", "type": "text"}])
    });
    fails(
        "enum field without options",
        WorkflowIr,
        "needs options",
        |ir| ir["fields"] = json!([{"id": "stage", "name": "S", "type": "enum"}]),
    );
}
