//! Tools are known by their declared effects outside their own files: no code outside
//! `src/tools/` (and the profiles) decides anything by comparing a tool's name. The check
//! reads the non-test part of every source file and looks for a built-in tool's name used in
//! a comparison, a match arm, a prefix test or a constant list of names.

use std::path::Path;

use nbook::engine::registry::Registry;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The ways code could single out a tool by name.
fn uses_name(line: &str, name: &str) -> bool {
    let lit = format!("\"{name}\"");
    if !line.contains(&lit) {
        return false;
    }
    let squeezed: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
    [
        format!("== {lit}"),
        format!("{lit} =="),
        format!("!= {lit}"),
        format!("{lit} =>"),
        format!("{lit} |"),
        format!("| {lit}"),
        format!("contains(&{lit}"),
    ]
    .iter()
    .any(|p| squeezed.contains(p.as_str()))
        || squeezed.contains("[&str")
        || squeezed.contains("&[&str]")
}

#[test]
fn no_code_outside_the_tools_decides_by_a_tool_name() {
    let mut registry = Registry::default();
    nbook::tools::register_all(&mut registry).expect("register");
    let names: Vec<&str> = registry.names().collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&root).expect("under src");
        if rel.starts_with("tools") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("read");
        // Unit tests may name tools (they check real declarations).
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (i, line) in code.lines().enumerate() {
            for name in &names {
                if uses_name(line, name) {
                    found.push(format!("src/{}:{}: {}", rel.display(), i + 1, line.trim()));
                }
            }
            // Prefix tests such as `tool.starts_with("save_")`.
            if let Some(at) = line.find("starts_with(\"") {
                let rest = &line[at + "starts_with(\"".len()..];
                let prefix = rest.split('"').next().unwrap_or_default();
                if prefix.contains('_') && names.iter().any(|n| n.starts_with(prefix)) {
                    found.push(format!("src/{}:{}: {}", rel.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "tool names decide behaviour outside src/tools (declare an effect instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_catches_the_forms_it_looks_for() {
    // The old name matches this scan replaced must all be caught.
    for line in [
        r#"    if call.tool == "switch_mode" {"#,
        r#"const PAUSING: [&str; 2] = ["request_user_input", "switch_mode"];"#,
        r#"        "bash" | "execute_sql" => Verdict::Run,"#,
        r#"ended = r.ok && "report_result" == r.tool;"#,
    ] {
        let caught = ["switch_mode", "request_user_input", "bash", "report_result"]
            .iter()
            .any(|n| uses_name(line, n));
        assert!(caught, "{line}");
    }
    assert!(!uses_name(
        r#"    CancelJob = "cancel_job": "Jobs: cancel""#,
        "cancel_job"
    ));
}

#[test]
fn every_tool_declares_effects_the_engine_can_act_on() {
    let mut registry = Registry::default();
    nbook::tools::register_all(&mut registry).expect("register");
    for t in registry.iter() {
        let e = t.tool.effects();
        assert!(
            !e.domains.is_empty(),
            "{} declares no domain",
            t.tool.name()
        );
        // Pausing or always-asking tools are control flow; egress tools touch the network.
        if e.egress {
            assert!(
                e.touches_domain(nbook::engine::effects::Domain::Network),
                "{}",
                t.tool.name()
            );
        }
    }
    let egress: Vec<&str> = registry
        .iter()
        .filter(|t| t.tool.effects().egress)
        .map(|t| t.tool.name())
        .collect();
    assert_eq!(
        egress,
        vec![
            "fn_research_retry",
            "fn_research_run",
            "fn_web_fetch",
            "web_fetch",
            "web_search"
        ]
    );
}
