//! The typed tool arguments decide like the hand-written contract they replaced.
//!
//! `fixtures/tool_args/cases.json` holds argument cases per tool with what the old code did
//! (`old`: accepted — with the old plot parser's result for the three-state fields — or
//! rejected at which JSON Pointers); `fixtures/old_schemas/` holds the old schemas. A case
//! where the new contract is deliberately stricter or looser carries `new` and a `reason`.

use std::path::Path;

use nbook::engine::registry::Registry;
use serde_json::Value;

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// `"<<c*n>>"` stands for `n` copies of `c` (long inputs stay short in the file).
fn expand(v: &mut Value) {
    match v {
        Value::String(s) => {
            if let Some(rest) = s.strip_prefix("<<").and_then(|r| r.strip_suffix(">>")) {
                let (ch, n) = rest.split_once('*').expect("<<c*n>>");
                *s = ch.repeat(n.parse().expect("count"));
            }
        }
        Value::Array(a) => a.iter_mut().for_each(expand),
        Value::Object(o) => o.values_mut().for_each(expand),
        _ => {}
    }
}

struct Case {
    tool: String,
    name: String,
    args: Value,
    /// What the new contract must decide: `new` if the case has one, else `old`.
    expected: Value,
    old: Value,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(fixtures().join("tool_args/cases.json")).expect("cases");
    let raw: Vec<Value> = serde_json::from_str(&text).expect("cases json");
    raw.into_iter()
        .map(|c| {
            let mut args = c["args"].clone();
            expand(&mut args);
            if c.get("new").is_some() {
                assert!(
                    c["reason"].as_str().is_some_and(|r| !r.is_empty()),
                    "{}: a deliberate change needs a reason",
                    c["case"]
                );
            }
            Case {
                tool: c["tool"].as_str().expect("tool").into(),
                name: c["case"].as_str().expect("case").into(),
                args,
                expected: c.get("new").cloned().unwrap_or_else(|| c["old"].clone()),
                old: c["old"].clone(),
            }
        })
        .collect()
}

fn registry() -> Registry {
    let mut registry = Registry::default();
    nbook::tools::register_all(&mut registry).expect("register");
    registry
}

fn pointers(errors: Vec<nbook::engine::registry::FieldError>) -> Vec<String> {
    let mut p: Vec<String> = errors.into_iter().map(|e| e.pointer).collect();
    p.sort();
    p.dedup();
    p
}

fn expected_pointers(v: &Value) -> Option<Vec<String>> {
    v.get("rejected").map(|r| {
        r.as_array()
            .expect("rejected is a list")
            .iter()
            .map(|p| p.as_str().expect("pointer").to_string())
            .collect()
    })
}

#[test]
fn generated_schemas_and_parsers_decide_like_the_old_contract() {
    let registry = registry();
    let mut failures = Vec::new();
    for c in cases() {
        let tool = registry
            .get(&c.tool)
            .unwrap_or_else(|| panic!("fixture names unknown tool {}", c.tool));
        let got = tool.validate(&c.args.clone().into());
        match (expected_pointers(&c.expected), got) {
            (None, Ok(())) => {}
            (None, Err(e)) => failures.push(format!(
                "{} / {}: was accepted, now rejected at {:?}",
                c.tool,
                c.name,
                pointers(e)
            )),
            (Some(want), Ok(())) => failures.push(format!(
                "{} / {}: was rejected at {want:?}, now accepted",
                c.tool, c.name
            )),
            (Some(want), Err(e)) => {
                let got = pointers(e);
                if got != want {
                    failures.push(format!(
                        "{} / {}: was rejected at {want:?}, now at {got:?}",
                        c.tool, c.name
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The three-state fields (absent = keep, null = clear, value = set) read exactly as the old
/// plot parser read them: the typed input has the same value, field by field.
#[test]
fn plot_inputs_read_the_three_states_like_the_old_parser() {
    use nbook::plot::args::*;
    let mut checked = 0;
    for c in cases() {
        let Some(old) = c.old.get("parsed").and_then(Value::as_str) else {
            continue;
        };
        let new = match c.tool.as_str() {
            "save_story_act" => format!("{:?}", parse::<SaveActArgs>(&c.args).map(|a| a.input())),
            "save_story_chapter" => {
                format!("{:?}", parse::<SaveChapterArgs>(&c.args).map(|a| a.input()))
            }
            "save_story_thread" => {
                format!("{:?}", parse::<SaveThreadArgs>(&c.args).map(|a| a.input()))
            }
            "save_story_scene" => {
                format!("{:?}", parse::<SaveSceneArgs>(&c.args).map(|a| a.input()))
            }
            "save_story_promise" => {
                format!("{:?}", parse::<SavePromiseArgs>(&c.args).map(|a| a.input()))
            }
            "save_promise_beat" => {
                format!("{:?}", parse::<SaveBeatArgs>(&c.args).map(|a| a.input()))
            }
            "save_story_decision" => {
                format!(
                    "{:?}",
                    parse::<SaveDecisionArgs>(&c.args).map(|a| a.input())
                )
            }
            other => panic!("no typed input for {other}"),
        };
        assert_eq!(new, format!("Ok({old})"), "{} / {}", c.tool, c.name);
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} parsed cases");
}

/// The fixtures are what the old schemas decide (so the recorded outcomes are not hand-made):
/// every case the old schema rejected is rejected by the stored old schema at those pointers.
#[test]
fn recorded_outcomes_match_the_stored_old_schemas() {
    for c in cases() {
        let path = fixtures().join(format!("old_schemas/{}.json", c.tool));
        let schema: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("old schema"))
                .expect("old schema json");
        let v = jsonschema::validator_for(&schema).expect("old schema compiles");
        let mut got: Vec<String> = v
            .iter_errors(&c.args)
            .map(|e| e.instance_path.to_string())
            .collect();
        got.sort();
        got.dedup();
        match c.old.get("by").and_then(Value::as_str) {
            Some("schema") => assert_eq!(
                Some(got),
                expected_pointers(&c.old),
                "{} / {}",
                c.tool,
                c.name
            ),
            _ => assert!(
                got.is_empty(),
                "{} / {}: old schema rejects {got:?}",
                c.tool,
                c.name
            ),
        }
    }
}

/// Models get plain objects: no `$ref`, no `definitions`, an object schema at the root.
#[test]
fn every_schema_is_inline_and_an_object() {
    fn walk(v: &Value, tool: &str) {
        match v {
            Value::Object(o) => {
                for key in ["$ref", "definitions", "$defs"] {
                    assert!(!o.contains_key(key), "{tool}: schema has {key}");
                }
                o.values().for_each(|x| walk(x, tool));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, tool)),
            _ => {}
        }
    }
    for t in registry().iter() {
        let s = t.tool.schema();
        assert_eq!(s["type"], "object", "{}", t.tool.name());
        walk(&s, t.tool.name());
    }
}

/// Tools that did not exist when the old schemas were captured (`tests/fixtures/old_schemas/`).
const ADDED_AFTER_THE_CONTRACT: &[&str] = &[
    // Agent evaluations and reflections (#17, durable agents part 2).
    "fn_agent_rate",
    "fn_read_evaluations",
    "fn_reflect_on_performance",
    "delete_story_node",
    // The author's undo from the History view (#14).
    "revert_change",
    // The mailbox (#17).
    "fn_send_message",
    "fn_read_messages",
    "fn_post_room_message",
    "fn_room_create",
    "fn_room_add_members",
    // Fusion's board tools (#16).
    "fn_task_create",
    "fn_task_list",
    "fn_task_search",
    "fn_task_show",
    "fn_task_update",
    "fn_task_add_dep",
    "fn_task_done",
    "fn_task_log",
    "fn_task_logs_read",
    "fn_task_prompt_write",
    "fn_task_promote",
    "fn_task_file_scope_add",
    "fn_task_document_write",
    "fn_task_document_read",
    "fn_goal_list",
    "fn_goal_show",
    // Fusion's memory, artifacts and web fetch (#17).
    "fn_memory_search",
    "fn_memory_get",
    "fn_memory_append",
    "fn_artifact_register",
    "fn_artifact_list",
    "fn_artifact_view",
    "fn_web_fetch",
    // Series workspace mode: a task's draft area in another book of the series.
    "fn_acquire_repo_worktree",
    // The author's Board moves (author-only).
    "fn_task_move",
    "fn_task_pause",
    // Agents at task level (#16) and the author's goals from the Board.
    "fn_list_agents",
    "fn_delegate_task",
    "fn_spawn_agent",
    "fn_ask_question",
    "fn_heartbeat_done",
    "fn_goal_create",
    "fn_goal_archive",
    // The merge gate (merger).
    "merge_task_draft",
    "fn_report_build_failure",
    "fn_task_steer",
    "fn_task_approve_plan",
    "fn_task_reject_plan",
    // The runner's spec review (triage).
    "fn_review_spec",
    // Board workflows with settings (#17).
    "fn_workflow_list",
    "fn_workflow_get",
    "fn_workflow_validate",
    "fn_workflow_select",
    "fn_workflow_create",
    "fn_workflow_update",
    "fn_workflow_delete",
    "fn_workflow_settings",
    "fn_trait_list",
    // Research runs (#17).
    "fn_research_run",
    "fn_research_list",
    "fn_research_get",
    "fn_research_cancel",
    "fn_research_retry",
    // Durable agents (#17).
    "fn_agent_create",
    "fn_agent_delete",
    "fn_get_agent_config",
    "fn_update_agent_config",
    "fn_update_identity",
];

/// Every tool keeps its name and argument names: the generated schema has the same property
/// names and the same required list as the old one.
#[test]
fn argument_names_and_required_fields_are_unchanged() {
    for t in registry().iter() {
        let name = t.tool.name();
        let path = fixtures().join(format!("old_schemas/{name}.json"));
        if !path.exists() {
            // Tools added after the hand-written contract was captured have no old schema.
            assert!(
                ADDED_AFTER_THE_CONTRACT.contains(&name),
                "{name} has no old schema in {}; if it is new, list it in ADDED_AFTER_THE_CONTRACT",
                path.display()
            );
            continue;
        }
        let old: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("old schema"))
            .expect("json");
        let new = t.tool.schema();
        let keys = |s: &Value| -> Vec<String> {
            let mut k: Vec<String> = s["properties"]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            k.sort();
            k
        };
        let required = |s: &Value| -> Vec<String> {
            let mut r: Vec<String> = s["required"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            r.sort();
            r
        };
        assert_eq!(keys(&new), keys(&old), "{name}: property names");
        assert_eq!(required(&new), required(&old), "{name}: required");
        assert_eq!(
            new.get("additionalProperties"),
            old.get("additionalProperties"),
            "{name}: additionalProperties"
        );
        assert_descriptions(&old, &new, &format!("{name}:"));
    }
}

/// Every description the old schema gave (at any depth) is given, word for word, by the new.
fn assert_descriptions(old: &Value, new: &Value, at: &str) {
    if let Some(d) = old.get("description") {
        assert_eq!(new.get("description"), Some(d), "{at} description");
    }
    if let (Some(op), Some(np)) = (old["properties"].as_object(), new["properties"].as_object()) {
        for (k, ov) in op {
            assert_descriptions(ov, &np[k], &format!("{at}/{k}"));
        }
    }
    if old.get("items").is_some() {
        assert_descriptions(&old["items"], &new["items"], &format!("{at}/items"));
    }
}
