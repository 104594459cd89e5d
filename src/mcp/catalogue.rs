//! The tools an outside client sees, in nbook's own terms: the chosen profile's allowlist
//! (author-only tools never), each with its generated argument schema, a title, and the
//! hints MCP clients read, derived from the tool's declared mutation class and effects —
//! never from its name. Plus the one tool the MCP server adds itself,
//! [`AWAIT_TOOL`], which collects the author's decision on a pending call.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::engine::profiles::Profiles;
use crate::engine::registry::Registry;
use crate::engine::Engine;

/// The MCP-level tool that long-polls for the author's decision (not an engine tool).
pub const AWAIT_TOOL: &str = "nbook_await_approval";

/// The longest one `nbook_await_approval` may wait: below the 60 s that clients such as
/// Claude Code allow a tool call.
pub const MAX_AWAIT_MS: u64 = 50_000;

#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub title: String,
    pub description: String,
    pub schema: Value,
    /// Changes nothing whatever its arguments (`Mutates::No`).
    pub read_only: bool,
    /// May overwrite or remove what is there (every mutating tool that is not a question or
    /// a mode switch: a write replaces a file, a save replaces a record's fields).
    pub destructive: bool,
    /// Sends data off the machine (declared egress).
    pub open_world: bool,
}

/// The tools of `profile` as MCP tools, in the profile's order, then [`AWAIT_TOOL`].
pub fn for_profile(engine: &Engine, profile: &str) -> Result<Vec<ToolSpec>, String> {
    for_profile_in(engine.registry(), &engine.profiles(), profile)
}

/// [`for_profile`] over profiles loaded anew (the profile files changed).
pub fn for_profile_in(
    registry: &Registry,
    profiles: &Profiles,
    profile: &str,
) -> Result<Vec<ToolSpec>, String> {
    let p = profiles.get(profile).ok_or_else(|| {
        format!("unknown profile '{profile}'; `nbook tools --json` lists the profiles")
    })?;
    let mut out = Vec::new();
    for name in &p.tools {
        let Some(reg) = registry.get(name) else {
            continue;
        };
        let effects = reg.tool.effects();
        if effects.author_only {
            continue;
        }
        let read_only = matches!(reg.tool.mutates(), crate::engine::tool::Mutates::No);
        out.push(ToolSpec {
            name: name.clone(),
            title: title_of(name),
            description: reg.tool.description().to_string(),
            schema: reg.schema.clone(),
            read_only,
            destructive: !read_only && !effects.pauses,
            open_world: effects.egress,
        });
    }
    out.push(await_tool());
    Ok(out)
}

/// "get_story_tree" → "Get story tree".
fn title_of(name: &str) -> String {
    let words = name.replace('_', " ");
    let mut c = words.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

pub fn await_tool() -> ToolSpec {
    ToolSpec {
        name: AWAIT_TOOL.into(),
        title: "Await the author's approval".into(),
        description: format!(
            "Wait for the author's decision on a call that returned {{\"outcome\": \"pending_approval\"}}, up to waitMs (default and at most {MAX_AWAIT_MS} ms). Returns the call's real result once decided (applied, or applied with the author's edits, with what was applied), an error result with the author's reason when rejected, or pending_approval again: call it again then. The author decides in nbook, not here."
        ),
        schema: json!({
            "type": "object",
            "properties": {
                "approvalId": {"type": "string", "minLength": 1, "description": "The approvalId of the pending_approval result"},
                "waitMs": {"type": "integer", "minimum": 0, "maximum": MAX_AWAIT_MS, "description": "How long to wait for the decision, in milliseconds"}
            },
            "required": ["approvalId"],
            "additionalProperties": false
        }),
        read_only: true,
        destructive: false,
        open_world: false,
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AwaitArgs {
    pub approval_id: String,
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

/// Parse `nbook_await_approval`'s arguments; an error names the JSON Pointer of the field.
pub fn parse_await(args: &Value) -> Result<AwaitArgs, String> {
    let parsed: AwaitArgs = serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let pointer = if path == "." {
            String::new()
        } else {
            format!("/{}", path.replace('.', "/"))
        };
        format!(
            "invalid arguments for {AWAIT_TOOL}: at '{pointer}': {}",
            e.into_inner()
        )
    })?;
    if parsed.approval_id.trim().is_empty() {
        return Err(format!(
            "invalid arguments for {AWAIT_TOOL}: at '/approvalId': must not be empty"
        ));
    }
    if parsed.wait_ms.is_some_and(|w| w > MAX_AWAIT_MS) {
        return Err(format!(
            "invalid arguments for {AWAIT_TOOL}: at '/waitMs': at most {MAX_AWAIT_MS}"
        ));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(profile: &str) -> Vec<ToolSpec> {
        let registry = crate::tools::registry().unwrap();
        let (profiles, _) = Profiles::load(&[]);
        for_profile_in(&registry, &profiles, profile).unwrap()
    }

    #[test]
    fn hints_follow_the_declared_effects() {
        let tools = specs("mcp.default");
        let get = |n: &str| tools.iter().find(|t| t.name == n).cloned().unwrap();
        let read = get("read");
        assert!(read.read_only && !read.destructive && !read.open_world);
        let write = get("write");
        assert!(!write.read_only && write.destructive);
        // execute_sql depends on its statement: not read-only as a tool.
        assert!(!get("execute_sql").read_only);
        assert_eq!(get("get_story_tree").title, "Get story tree");
        assert_eq!(tools.last().unwrap().name, AWAIT_TOOL);
        // The author's own tools are never offered, and mcp.default has no question tool.
        assert!(!tools.iter().any(|t| t.name == "request_user_input"));
    }

    #[test]
    fn web_tools_are_open_world_and_an_unknown_profile_is_an_error() {
        let tools = specs("researcher");
        if let Some(w) = tools.iter().find(|t| t.name == "web_fetch") {
            assert!(w.open_world);
        }
        let registry = crate::tools::registry().unwrap();
        let (profiles, _) = Profiles::load(&[]);
        let err = for_profile_in(&registry, &profiles, "nope").unwrap_err();
        assert!(err.contains("unknown profile 'nope'"), "{err}");
    }

    #[test]
    fn await_arguments_are_checked_with_pointers() {
        assert!(parse_await(&json!({"approvalId": "ap-1"})).is_ok());
        let e = parse_await(&json!({"approvalId": 1})).unwrap_err();
        assert!(e.contains("'/approvalId'"), "{e}");
        let e =
            parse_await(&json!({"approvalId": "ap-1", "waitMs": MAX_AWAIT_MS + 1})).unwrap_err();
        assert!(e.contains("'/waitMs'"), "{e}");
        let e = parse_await(&json!({"approvalId": "ap-1", "other": 1})).unwrap_err();
        assert!(e.contains("other"), "{e}");
        let e = parse_await(&json!({"approvalId": " "})).unwrap_err();
        assert!(e.contains("must not be empty"), "{e}");
    }
}
