//! Workflow IR v2 validation (issue #17 target: ≤ 5 ms): the built-in `builtin:chapter`, and
//! a large custom workflow — 40 columns, 600 top-level nodes in a chain with a parse-steps and
//! a parallel foreach whose template holds 60 nodes with a step-review and rework edge, 60
//! settings declarations and 40 fields — each validated from its JSON as an agent sends it.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};

fn large() -> Value {
    let columns: Vec<Value> = (0..40)
        .map(|i| {
            let traits = if i == 0 {
                json!([{"trait": "intake"}])
            } else if i == 39 {
                json!([{"trait": "complete"}])
            } else {
                json!([{"trait": "timing"}, {"trait": "stall-detection", "config": {"stalenessMs": 60000}}])
            };
            json!({"id": format!("c{i}"), "name": format!("Column {i}"), "traits": traits})
        })
        .collect();
    let mut nodes = vec![
        json!({"id": "start", "kind": "start"}),
        json!({"id": "parse", "kind": "parse-steps", "config": {"artifact": "PROMPT.md", "parser": "step-headings"}}),
    ];
    let mut edges = vec![json!({"from": "start", "to": "parse"})];
    let mut t_nodes =
        vec![json!({"id": "t0", "kind": "prompt", "config": {"seam": "step-execute"}})];
    let mut t_edges = Vec::new();
    for i in 1..59 {
        t_nodes.push(json!({"id": format!("t{i}"), "kind": "gate"}));
        t_edges.push(json!({"from": format!("t{}", i - 1), "to": format!("t{i}")}));
    }
    t_nodes.push(json!({"id": "rev", "kind": "step-review", "config": {"type": "code"}}));
    t_nodes.push(json!({"id": "ok", "kind": "notify", "config": {"event": "done"}}));
    t_edges.push(json!({"from": "t58", "to": "rev"}));
    t_edges.push(json!({"from": "rev", "to": "ok", "condition": "outcome:approve"}));
    t_edges
        .push(json!({"from": "rev", "to": "t0", "condition": "outcome:revise", "kind": "rework"}));
    nodes.push(json!({"id": "each", "kind": "foreach", "config": {"source": "task-steps", "mode": "parallel", "concurrency": 8, "maxReworkCycles": 3, "template": {"nodes": t_nodes, "edges": t_edges}}}));
    edges.push(json!({"from": "parse", "to": "each", "condition": "success"}));
    let mut prev = "each".to_string();
    for i in 0..600 {
        let id = format!("n{i}");
        let node = if i % 50 == 0 {
            json!({"id": id, "kind": "code", "column": format!("c{}", i % 40), "config": {"source": "return {outcome: 'success'};", "timeoutMs": 30000}})
        } else {
            json!({"id": id, "kind": "prompt", "column": format!("c{}", i % 40), "config": {"seam": "review"}})
        };
        nodes.push(node);
        edges.push(json!({"from": prev, "to": id, "condition": "success"}));
        prev = id;
    }
    nodes.push(json!({"id": "end", "kind": "end"}));
    edges.push(json!({"from": prev, "to": "end"}));
    let settings: Vec<Value> = (0..60)
        .map(|i| match i % 3 {
            0 => json!({"id": format!("s{i}"), "name": "N", "type": "number", "integer": true, "minimum": 0, "default": i}),
            1 => json!({"id": format!("s{i}"), "name": "E", "type": "enum", "default": "a", "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]}),
            _ => json!({"id": format!("s{i}"), "name": "B", "type": "boolean", "default": false}),
        })
        .collect();
    let fields: Vec<Value> = (0..40)
        .map(|i| json!({"id": format!("f{i}"), "name": "F", "type": "string"}))
        .collect();
    json!({"version": "v2", "name": "Large", "columns": columns, "nodes": nodes, "edges": edges, "settings": settings, "fields": fields})
}

fn bench(c: &mut Criterion) {
    use nbook::board::workflow::validate::validate_value;
    let builtin = serde_json::to_value(&*nbook::board::workflow::builtin::CHAPTER).unwrap();
    let big = large();
    assert!(validate_value(&builtin).is_ok());
    assert!(
        validate_value(&big).is_ok(),
        "{:?}",
        validate_value(&big).err()
    );
    c.bench_function("workflow_validate_builtin_chapter", |b| {
        b.iter(|| validate_value(black_box(&builtin)))
    });
    c.bench_function("workflow_validate_large_custom_600_nodes", |b| {
        b.iter(|| validate_value(black_box(&big)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
