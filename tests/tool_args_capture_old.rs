//! One-off capture of the hand-written argument contract, run before the typed arguments
//! replaced it (`NBOOK_CAPTURE_OLD_ARGS=1 cargo test --test tool_args_capture_old`): writes
//! every tool's schema to tests/fixtures/old_schemas/ and each case's outcome under the old
//! schema and the old plot parsers into tests/fixtures/tool_args/cases.json. Removed once the
//! old parsers are gone; `tool_args_contract.rs` checks the new code against what it wrote.

use std::path::Path;

use nbook::engine::registry::Registry;
use nbook::plot::args::{self as pargs, ArgReader};
use serde_json::{json, Value};

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

/// The old plot parse of schema-valid arguments: the tool's input parser, `action`,
/// `projectRoot` and every top-level id, as the tools read them.
fn old_plot_parse(tool: &str, args: &Value) -> Option<Result<String, String>> {
    if !tool.starts_with("save_") && !tool.starts_with("get_story") && tool != "get_chapter_writer_brief" {
        return None;
    }
    let run = || -> Result<String, nbook::plot::PlotError> {
        let a = ArgReader::new(args)?;
        a.str("projectRoot")?;
        a.str("action")?;
        a.str("mode")?;
        // The ids each tool reads with `ArgReader::id` (other `…Id` fields are nullable).
        let ids: &[&str] = match tool {
            "save_story_act" => &["actId"],
            "save_story_chapter" | "get_story_chapter" | "get_chapter_writer_brief" => &["chapterId"],
            "save_story_thread" | "get_story_thread" => &["threadId"],
            "save_story_scene" => &["sceneId", "threadId"],
            "get_story_scene_context" => &["sceneId"],
            "save_story_promise" | "get_story_promise" => &["promiseId"],
            "save_promise_beat" => &["promiseId", "sceneId"],
            "save_story_decision" | "get_story_decision" => &["decisionId"],
            _ => &[],
        };
        for key in ids {
            a.id(key)?;
        }
        Ok(match tool {
            "save_story_act" => format!("{:?}", pargs::act_input(&a)?),
            "save_story_chapter" => format!("{:?}", pargs::chapter_input(&a)?),
            "save_story_thread" => format!("{:?}", pargs::thread_input(&a)?),
            "save_story_scene" => format!("{:?}", pargs::scene_input(&a)?),
            "save_story_promise" => format!("{:?}", pargs::promise_input(&a)?),
            "save_promise_beat" => format!("{:?}", pargs::beat_input(&a)?),
            "save_story_decision" => format!("{:?}", pargs::decision_input(&a)?),
            _ => String::new(),
        })
    };
    Some(run().map_err(|e| e.pointer.unwrap_or_default()))
}

#[test]
fn capture_old_argument_contract() {
    if std::env::var_os("NBOOK_CAPTURE_OLD_ARGS").is_none() {
        return;
    }
    let mut registry = Registry::default();
    nbook::tools::register_all(&mut registry).expect("register");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = root.join("old_schemas");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for t in registry.iter() {
        let text = serde_json::to_string_pretty(&t.tool.schema()).expect("json");
        std::fs::write(dir.join(format!("{}.json", t.tool.name())), text + "\n").expect("write");
    }
    let path = root.join("tool_args/cases.json");
    let mut cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("parse");
    for case in &mut cases {
        let tool = case["tool"].as_str().expect("tool").to_string();
        let mut args = case["args"].clone();
        expand(&mut args);
        let t = registry.get(&tool).unwrap_or_else(|| panic!("no tool {tool}"));
        let old = match t.validate(&args) {
            Err(errors) => {
                let mut ptrs: Vec<String> = errors.into_iter().map(|e| e.pointer).collect();
                ptrs.sort();
                ptrs.dedup();
                json!({"rejected": ptrs, "by": "schema"})
            }
            Ok(()) => match old_plot_parse(&tool, &args) {
                Some(Err(ptr)) => json!({"rejected": [ptr], "by": "parser"}),
                Some(Ok(parsed)) if !parsed.is_empty() => json!({"accepted": true, "parsed": parsed}),
                _ => json!({"accepted": true}),
            },
        };
        case["old"] = old;
    }
    std::fs::write(&path, serde_json::to_string_pretty(&cases).expect("json") + "\n").expect("write");
}
