//! Fuzz argument validation: arbitrary bytes → JSON → every registered tool's schema. Validation
//! must never panic, and every error must name a JSON Pointer that exists in the arguments (the
//! bad value, or the object missing a required field), as DESIGN.md promises the agent.
//!
//! Bytes that are not JSON are still used: as a string in the fields tools read (`path`,
//! `content`, `command`, `patch`, `edits[0].oldText`), so odd strings reach the validators too.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use nbook::engine::registry::{describe_field_errors, Registry};
use serde_json::{json, Value};

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut registry = Registry::default();
        nbook::tools::register_all(&mut registry).expect("the built-in tool schemas compile");
        registry
    })
}

fn check(args: &Value) {
    for registered in registry().iter() {
        let name = registered.tool.name();
        if let Err(errors) = registered.validate(args) {
            assert!(!errors.is_empty(), "{name}: an error without details");
            for e in &errors {
                assert!(
                    e.pointer.is_empty() || e.pointer.starts_with('/'),
                    "{name}: not a JSON Pointer: {:?}",
                    e.pointer
                );
                assert!(
                    args.pointer(&e.pointer).is_some(),
                    "{name}: the pointer {:?} does not exist in {args}",
                    e.pointer
                );
            }
            let text = describe_field_errors(name, &errors);
            assert!(text.starts_with(&format!("invalid arguments for {name}:")));
        }
        // Mutation classification of a call must not panic either, valid or not.
        let _ = registered.tool.mutates().for_call(args);
    }
}

fuzz_target!(|data: &[u8]| {
    match serde_json::from_slice::<Value>(data) {
        Ok(args) => check(&args),
        Err(_) => {
            let s = String::from_utf8_lossy(data).into_owned();
            check(&json!({
                "path": s,
                "content": s,
                "command": s,
                "patch": s,
                "edits": [{"oldText": s, "newText": s}],
                s.clone(): s,
            }));
        }
    }
});
