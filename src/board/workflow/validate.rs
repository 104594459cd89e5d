//! The IR v2 validator (`fn_workflow_validate`, and the check `fn_workflow_create` /
//! `fn_workflow_update` run before anything is stored). It reports **every** problem it finds,
//! each typed as Fusion types them: `workflow-ir` (graph, node configs, fields, settings),
//! `column-traits` (unknown or repeated traits, bad trait config), `code-node` (a `code`
//! node's source and limits) and `column-agent` (a column's agent binding). Rules are
//! fusion-notes §4 and the Addendum's IR v2 bullets; where the notes are silent the choice is
//! written next to the rule.
//!
//! On success it returns the IR **normalized**: `foreach.maxReworkCycles` above 10 clamped
//! to 10 (the notes: "clamped to 10"), so what is stored is what runs.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

pub use super::graph::safe_regex;
use super::graph::{branch_members, find_cycle, reachable};
use super::ir::{IrEdge, IrNode, SettingKind, Template, WorkflowIr, NODE_KINDS};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ErrorType {
    #[serde(rename = "workflow-ir")]
    WorkflowIr,
    #[serde(rename = "column-traits")]
    ColumnTraits,
    #[serde(rename = "code-node")]
    CodeNode,
    #[serde(rename = "column-agent")]
    ColumnAgent,
}

/// `{type, message}` as `fn_workflow_validate` returns it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IrError {
    #[serde(rename = "type")]
    pub kind: ErrorType,
    pub message: String,
}

pub const MAX_CONCURRENCY: u64 = 8;
pub const DEFAULT_REWORK_CYCLES: u64 = 3;
pub const MAX_REWORK_CYCLES: u64 = 10;
pub const CODE_SOURCE_MAX: usize = 65_536;
pub const CODE_TIMEOUT_MS: (u64, u64) = (1_000, 300_000);
pub const LOOP_MAX_ITERATIONS: u64 = 50;
/// One hour.
pub const LOOP_MAX_TIMEOUT_MS: u64 = 3_600_000;
pub const REGEX_MAX: usize = 256;

struct V {
    errors: Vec<IrError>,
}

impl V {
    fn ir(&mut self, m: impl Into<String>) {
        self.push(ErrorType::WorkflowIr, m);
    }
    fn push(&mut self, kind: ErrorType, m: impl Into<String>) {
        self.errors.push(IrError {
            kind,
            message: m.into(),
        });
    }
}

/// Validate a raw IR (JSON as an agent sent it).
pub fn validate_value(raw: &Value) -> Result<WorkflowIr, Vec<IrError>> {
    let ir: WorkflowIr = serde_json::from_value(raw.clone()).map_err(|e| {
        vec![IrError {
            kind: ErrorType::WorkflowIr,
            message: format!("the IR does not parse: {e}"),
        }]
    })?;
    validate(ir)
}

/// Validate a parsed IR; `Ok` holds it normalized.
pub fn validate(mut ir: WorkflowIr) -> Result<WorkflowIr, Vec<IrError>> {
    let mut v = V { errors: Vec::new() };
    if ir.version != "v2" {
        v.ir(format!(
            "version must be \"v2\" (got \"{}\"; v1 graphs are legacy and not accepted)",
            ir.version
        ));
    }
    if ir.name.trim().is_empty() {
        v.ir("name must not be empty");
    }
    columns(&mut v, &ir);
    fields(&mut v, &ir);
    settings(&mut v, &ir);
    let top_ids: HashSet<&str> = ir.nodes.iter().map(|n| n.id.as_str()).collect();
    graph(&mut v, &ir, &top_ids);
    if !v.errors.is_empty() {
        return Err(v.errors);
    }
    for n in &mut ir.nodes {
        if n.kind == "foreach" {
            if let Some(c) = n.config.as_object_mut() {
                if c.get("maxReworkCycles")
                    .and_then(Value::as_u64)
                    .is_some_and(|m| m > MAX_REWORK_CYCLES)
                {
                    c.insert("maxReworkCycles".into(), MAX_REWORK_CYCLES.into());
                }
            }
        }
    }
    Ok(ir)
}

fn columns(v: &mut V, ir: &WorkflowIr) {
    if ir.columns.is_empty() {
        v.ir("a workflow needs at least one column");
    }
    let mut seen = HashSet::new();
    for c in &ir.columns {
        if c.id.trim().is_empty() || c.name.trim().is_empty() {
            v.ir("every column needs an id and a name");
        }
        if !seen.insert(c.id.as_str()) {
            v.ir(format!("column id '{}' is used twice", c.id));
        }
        let mut traits = HashSet::new();
        for t in &c.traits {
            if !traits.insert(t.name.as_str()) {
                v.push(
                    ErrorType::ColumnTraits,
                    format!("column '{}' lists trait '{}' twice", c.id, t.name),
                );
            }
            let Some(info) = super::traits::find(&t.name) else {
                v.push(
                    ErrorType::ColumnTraits,
                    format!(
                        "column '{}': unknown trait '{}' (fn_trait_list lists the catalogue)",
                        c.id, t.name
                    ),
                );
                continue;
            };
            if let Some(cfg) = &t.config {
                let Some(obj) = cfg.as_object() else {
                    v.push(
                        ErrorType::ColumnTraits,
                        format!(
                            "column '{}': trait '{}' config must be an object",
                            c.id, t.name
                        ),
                    );
                    continue;
                };
                for k in obj.keys() {
                    if !info.config_keys.contains(&k.as_str()) {
                        v.push(
                            ErrorType::ColumnTraits,
                            format!(
                                "column '{}': trait '{}' has no config key '{k}'",
                                c.id, t.name
                            ),
                        );
                    }
                }
                // wip's limit names a number setting of this workflow (our reading of
                // `limitSetting`: the setting that holds the limit).
                if let Some(s) = obj.get("limitSetting") {
                    let ok = s.as_str().is_some_and(|s| {
                        ir.settings
                            .iter()
                            .any(|d| d.id == s && d.kind == SettingKind::Number)
                    });
                    if !ok {
                        v.push(
                            ErrorType::ColumnTraits,
                            format!(
                                "column '{}': wip limitSetting must name a number setting of this workflow",
                                c.id
                            ),
                        );
                    }
                }
                if let Some(r) = obj.get("release") {
                    const RELEASES: [&str; 5] = [
                        "manual",
                        "timer",
                        "capacity",
                        "dependency",
                        "external-event",
                    ];
                    if !r.as_str().is_some_and(|r| RELEASES.contains(&r)) {
                        v.push(
                            ErrorType::ColumnTraits,
                            format!(
                                "column '{}': hold release must be one of {}",
                                c.id,
                                RELEASES.join(", ")
                            ),
                        );
                    }
                }
            }
        }
        if let Some(a) = &c.agent {
            if a.agent_id.trim().is_empty() {
                v.push(
                    ErrorType::ColumnAgent,
                    format!("column '{}': agent.agentId must not be empty", c.id),
                );
            }
            if a.mode != "defer" && a.mode != "override" {
                v.push(
                    ErrorType::ColumnAgent,
                    format!(
                        "column '{}': agent.mode must be defer or override (got '{}')",
                        c.id, a.mode
                    ),
                );
            }
        }
    }
}

fn fields(v: &mut V, ir: &WorkflowIr) {
    let mut seen = HashSet::new();
    for f in &ir.fields {
        if f.id.trim().is_empty() {
            v.ir("every field needs an id");
        }
        if !seen.insert(f.id.as_str()) {
            v.ir(format!("field id '{}' is declared twice", f.id));
        }
        if f.kind.is_enum() && f.options.is_empty() {
            v.ir(format!(
                "field '{}' is {} and needs options",
                f.id,
                f.kind.as_str()
            ));
        }
        if !f.kind.is_enum() && !f.options.is_empty() {
            v.ir(format!("field '{}': options only go with enum kinds", f.id));
        }
    }
}

fn settings(v: &mut V, ir: &WorkflowIr) {
    let mut seen = HashSet::new();
    for s in &ir.settings {
        if s.id.trim().is_empty() || s.name.trim().is_empty() {
            v.ir("every setting needs an id and a name");
        }
        if !seen.insert(s.id.as_str()) {
            v.ir(format!("setting id '{}' is declared twice", s.id));
        }
        if s.kind != SettingKind::Number && (s.minimum.is_some() || s.integer.is_some()) {
            v.ir(format!(
                "setting '{}': minimum and integer only go with number settings",
                s.id
            ));
        }
        if s.kind.is_enum() && s.options.is_empty() {
            v.ir(format!(
                "setting '{}' is {} and needs options",
                s.id,
                s.kind.as_str()
            ));
        }
        if !s.kind.is_enum() && !s.options.is_empty() {
            v.ir(format!(
                "setting '{}': options only go with enum kinds",
                s.id
            ));
        }
        let mut opts = HashSet::new();
        for o in &s.options {
            if !opts.insert(o.value.as_str()) {
                v.ir(format!(
                    "setting '{}': option '{}' is listed twice",
                    s.id, o.value
                ));
            }
        }
        if let Some(d) = &s.default {
            if let Err((code, m)) = super::settings::check_value(s, d) {
                v.ir(format!(
                    "setting '{}': its default is invalid ({code}: {m})",
                    s.id
                ));
            }
        }
    }
}

/// The node's config as an object (an absent config is an empty one).
fn cfg(n: &IrNode) -> serde_json::Map<String, Value> {
    n.config.as_object().cloned().unwrap_or_default()
}

fn graph(v: &mut V, ir: &WorkflowIr, top_ids: &HashSet<&str>) {
    let mut seen = HashSet::new();
    for n in &ir.nodes {
        if !seen.insert(n.id.as_str()) {
            v.ir(format!("node id '{}' is used twice", n.id));
        }
        if let Some(c) = &n.column {
            if !ir.columns.iter().any(|col| &col.id == c) {
                v.ir(format!(
                    "node '{}' names column '{c}', which does not exist",
                    n.id
                ));
            }
        }
    }
    for n in &ir.nodes {
        node(v, ir, n, Ctx::Top, top_ids);
    }
    edges(v, &ir.nodes, &ir.edges, "the workflow");
    // A board-only workflow (no nodes) is legal: its columns are worked by hand. Choice
    // (the seed's example declares such a workflow).
    if ir.nodes.is_empty() {
        if !ir.edges.is_empty() {
            v.ir("edges without nodes");
        }
        return;
    }
    let starts: Vec<&IrNode> = ir.nodes.iter().filter(|n| n.kind == "start").collect();
    let ends: Vec<&IrNode> = ir.nodes.iter().filter(|n| n.kind == "end").collect();
    if starts.len() != 1 {
        v.ir(format!(
            "a workflow needs exactly one start node (found {})",
            starts.len()
        ));
    }
    if ends.len() != 1 {
        v.ir(format!(
            "a workflow needs exactly one end node (found {})",
            ends.len()
        ));
    }
    for e in ir.edges.iter().filter(|e| e.is_rework()) {
        v.ir(format!(
            "rework edge {} → {} is outside a foreach template (rework edges must stay inside one template)",
            e.from, e.to
        ));
    }
    let fwd: Vec<&IrEdge> = ir.edges.iter().filter(|e| !e.is_rework()).collect();
    if let Some(cycle) = find_cycle(&ir.nodes, &fwd) {
        v.ir(format!(
            "the graph has a cycle through '{cycle}' (only rework edges may close a cycle)"
        ));
    }
    let (Some(start), Some(end)) = (starts.first(), ends.first()) else {
        return;
    };
    let reach = reachable(&start.id, &fwd, None);
    for n in &ir.nodes {
        if !reach.contains(n.id.as_str()) {
            v.ir(format!("node '{}' is not reachable from start", n.id));
        }
    }
    if !reach.contains(end.id.as_str()) {
        v.ir("end is not reachable from start");
    }
    // parse-steps dominates every foreach: without the parse-steps nodes, no foreach is
    // reachable from start.
    let parsers: HashSet<&str> = ir
        .nodes
        .iter()
        .filter(|n| n.kind == "parse-steps")
        .map(|n| n.id.as_str())
        .collect();
    let without = reachable(&start.id, &fwd, Some(&parsers));
    for n in ir.nodes.iter().filter(|n| n.kind == "foreach") {
        if without.contains(n.id.as_str()) {
            v.ir(format!(
                "foreach '{}' can be reached without passing a parse-steps node (parse-steps must dominate each foreach)",
                n.id
            ));
        }
    }
    for n in ir.nodes.iter().filter(|n| n.kind == "exit-gate") {
        if !reachable(&n.id, &fwd, None).contains(end.id.as_str()) {
            v.ir(format!("exit-gate '{}' must reach end", n.id));
        }
    }
    branches(v, &ir.nodes, &fwd);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Top,
    Foreach,
    /// loop and optional-group templates.
    Other,
}

fn node(v: &mut V, ir: &WorkflowIr, n: &IrNode, ctx: Ctx, top_ids: &HashSet<&str>) {
    if n.id.trim().is_empty() {
        v.ir("every node needs an id");
    }
    if !NODE_KINDS.contains(&n.kind.as_str()) {
        v.ir(format!("node '{}': unknown kind '{}'", n.id, n.kind));
        return;
    }
    if !n.config.is_null() && !n.config.is_object() {
        v.ir(format!("node '{}': config must be an object", n.id));
        return;
    }
    let c = cfg(n);
    let int = |k: &str| c.get(k).map(|x| x.as_u64());
    match n.kind.as_str() {
        "prompt" | "script" => {
            const SEAMS: [&str; 7] = [
                "planning",
                "execute",
                "step-execute",
                "review",
                "merge",
                "review-handoff",
                "schedule",
            ];
            if let Some(s) = c.get("seam") {
                if !s.as_str().is_some_and(|s| SEAMS.contains(&s)) {
                    v.ir(format!(
                        "node '{}': seam must be one of {}",
                        n.id,
                        SEAMS.join(", ")
                    ));
                }
            }
            if n.seam() == Some("step-execute") && ctx != Ctx::Foreach {
                v.ir(format!(
                    "node '{}': step-execute is legal only inside a foreach template",
                    n.id
                ));
            }
        }
        "parse-steps" => {
            match c.get("artifact").and_then(Value::as_str) {
                None => v.ir(format!("parse-steps '{}' needs config.artifact", n.id)),
                Some(a) if ir.artifacts.is_empty() && a != "PROMPT.md" => v.ir(format!(
                    "parse-steps '{}': with no artifacts declared the artifact must be PROMPT.md (got '{a}')",
                    n.id
                )),
                Some(a) if !ir.artifacts.is_empty() && !ir.artifacts.iter().any(|x| x.key == a) => {
                    v.ir(format!(
                        "parse-steps '{}': artifact '{a}' is not declared in artifacts",
                        n.id
                    ))
                }
                _ => {}
            }
            match c.get("parser").and_then(Value::as_str) {
                Some("step-headings" | "json-steps") => {}
                Some(p) if p.starts_with("plugin:") => {}
                _ => v.ir(format!(
                    "parse-steps '{}': parser must be step-headings or json-steps",
                    n.id
                )),
            }
        }
        "foreach" => foreach(v, ir, n, &c, ctx, top_ids),
        "loop" => {
            if ctx != Ctx::Top {
                v.ir(format!(
                    "loop '{}': loops may not be nested in a template",
                    n.id
                ));
            }
            match int("maxIterations") {
                Some(Some(m)) if (1..=LOOP_MAX_ITERATIONS).contains(&m) => {}
                _ => v.ir(format!(
                    "loop '{}': maxIterations must be an integer from 1 to {LOOP_MAX_ITERATIONS}",
                    n.id
                )),
            }
            if let Some(t) = int("timeoutMs") {
                if !t.is_some_and(|t| (1..=LOOP_MAX_TIMEOUT_MS).contains(&t)) {
                    v.ir(format!("loop '{}': timeoutMs must be at most 1 hour", n.id));
                }
            }
            // Choice: exitWhen is `{type: output-contains|output-matches, value}`.
            if let Some(x) = c.get("exitWhen") {
                let value = x.get("value").and_then(Value::as_str);
                match (x.get("type").and_then(Value::as_str), value) {
                    (Some("output-contains"), Some(_)) => {}
                    (Some("output-matches"), Some(p)) => {
                        if let Err(m) = safe_regex(p) {
                            v.ir(format!("loop '{}': exitWhen pattern refused: {m}", n.id));
                        }
                    }
                    _ => v.ir(format!(
                        "loop '{}': exitWhen must be {{type: output-contains|output-matches, value}}",
                        n.id
                    )),
                }
            }
            template(v, ir, n, &c, Ctx::Other, top_ids);
        }
        "optional-group" => {
            match c.get("phase").and_then(Value::as_str) {
                Some("pre-merge" | "post-merge") => {}
                _ => v.ir(format!(
                    "optional-group '{}': phase must be pre-merge or post-merge",
                    n.id
                )),
            }
            if let Some(m) = c.get("maxRevisions") {
                if !(m.as_u64().is_some() || m.as_str() == Some("unbounded")) {
                    v.ir(format!(
                        "optional-group '{}': maxRevisions must be a number or \"unbounded\"",
                        n.id
                    ));
                }
            }
            template(v, ir, n, &c, Ctx::Other, top_ids);
        }
        "step-review" => match c.get("type").and_then(Value::as_str) {
            Some("plan" | "code") => {}
            _ => v.ir(format!("step-review '{}': type must be plan or code", n.id)),
        },
        "code" => {
            let len = c
                .get("source")
                .and_then(Value::as_str)
                .map(|s| s.chars().count());
            if !len.is_some_and(|l| (1..=CODE_SOURCE_MAX).contains(&l)) {
                v.push(
                    ErrorType::CodeNode,
                    format!(
                        "code '{}': source must be 1 to {CODE_SOURCE_MAX} characters",
                        n.id
                    ),
                );
            }
            if let Some(t) = int("timeoutMs") {
                if !t.is_some_and(|t| (CODE_TIMEOUT_MS.0..=CODE_TIMEOUT_MS.1).contains(&t)) {
                    v.push(
                        ErrorType::CodeNode,
                        format!(
                            "code '{}': timeoutMs must be from {} to {}",
                            n.id, CODE_TIMEOUT_MS.0, CODE_TIMEOUT_MS.1
                        ),
                    );
                }
            }
        }
        "notify"
            if c.get("event")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty) =>
        {
            v.ir(format!("notify '{}' needs config.event", n.id));
        }
        "hold" => {
            if let Some(r) = c.get("release") {
                const RELEASES: [&str; 5] = [
                    "manual",
                    "timer",
                    "capacity",
                    "dependency",
                    "external-event",
                ];
                if !r.as_str().is_some_and(|r| RELEASES.contains(&r)) {
                    v.ir(format!(
                        "hold '{}': release must be one of {}",
                        n.id,
                        RELEASES.join(", ")
                    ));
                }
            }
        }
        _ => {}
    }
}

fn foreach(
    v: &mut V,
    ir: &WorkflowIr,
    n: &IrNode,
    c: &serde_json::Map<String, Value>,
    ctx: Ctx,
    top_ids: &HashSet<&str>,
) {
    if ctx != Ctx::Top {
        v.ir(format!(
            "foreach '{}': foreach may not be nested in a template",
            n.id
        ));
    }
    if c.get("source").and_then(Value::as_str) != Some("task-steps") {
        v.ir(format!("foreach '{}': source must be \"task-steps\"", n.id));
    }
    let mode = match c.get("mode") {
        None => "sequential",
        Some(m) => match m.as_str() {
            Some(m @ ("sequential" | "parallel")) => m,
            _ => {
                v.ir(format!(
                    "foreach '{}': mode must be sequential or parallel",
                    n.id
                ));
                "sequential"
            }
        },
    };
    let isolation = match c.get("isolation") {
        None if mode == "parallel" => "worktree",
        None => "shared",
        Some(i) => match i.as_str() {
            Some(i @ ("shared" | "worktree")) => i,
            _ => {
                v.ir(format!(
                    "foreach '{}': isolation must be shared or worktree",
                    n.id
                ));
                "shared"
            }
        },
    };
    if mode == "parallel" && isolation == "shared" {
        v.ir(format!(
            "foreach '{}': parallel steps cannot share one draft (isolation shared); use worktree",
            n.id
        ));
    }
    if let Some(k) = c.get("concurrency") {
        if mode != "parallel" {
            v.ir(format!(
                "foreach '{}': concurrency is for parallel mode only",
                n.id
            ));
        } else if !k
            .as_u64()
            .is_some_and(|k| (1..=MAX_CONCURRENCY).contains(&k))
        {
            v.ir(format!(
                "foreach '{}': concurrency must be an integer from 1 to {MAX_CONCURRENCY}",
                n.id
            ));
        }
    }
    if let Some(m) = c.get("maxReworkCycles") {
        if m.as_u64().is_none_or(|m| m < 1) {
            v.ir(format!(
                "foreach '{}': maxReworkCycles must be an integer of at least 1 (default {DEFAULT_REWORK_CYCLES}; above {MAX_REWORK_CYCLES} it is clamped)",
                n.id
            ));
        }
    }
    template(v, ir, n, c, Ctx::Foreach, top_ids);
}

fn template(
    v: &mut V,
    ir: &WorkflowIr,
    n: &IrNode,
    c: &serde_json::Map<String, Value>,
    ctx: Ctx,
    top_ids: &HashSet<&str>,
) {
    let t: Template = match c.get("template").cloned().map(serde_json::from_value) {
        Some(Ok(t)) => t,
        Some(Err(e)) => {
            v.ir(format!(
                "{} '{}': template does not parse: {e}",
                n.kind, n.id
            ));
            return;
        }
        None => {
            v.ir(format!("{} '{}' needs a template", n.kind, n.id));
            return;
        }
    };
    if t.nodes.is_empty() {
        v.ir(format!("{} '{}': the template is empty", n.kind, n.id));
        return;
    }
    let mut ids = HashSet::new();
    for tn in &t.nodes {
        if top_ids.contains(tn.id.as_str()) {
            v.ir(format!(
                "{} '{}': template node '{}' collides with a top-level node id",
                n.kind, n.id, tn.id
            ));
        }
        if !ids.insert(tn.id.as_str()) {
            v.ir(format!(
                "{} '{}': template node id '{}' is used twice",
                n.kind, n.id, tn.id
            ));
        }
        node(v, ir, tn, ctx, top_ids);
    }
    let what = format!("{} '{}' template", n.kind, n.id);
    edges(v, &t.nodes, &t.edges, &what);
    let fwd: Vec<&IrEdge> = t.edges.iter().filter(|e| !e.is_rework()).collect();
    let entries: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !fwd.iter().any(|e| e.to == *id))
        .collect();
    let exits: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !fwd.iter().any(|e| e.from == *id))
        .collect();
    if entries.len() != 1 {
        v.ir(format!(
            "{what} needs exactly one entry node (found {})",
            entries.len()
        ));
    }
    if exits.len() != 1 {
        v.ir(format!(
            "{what} needs exactly one exit node (found {})",
            exits.len()
        ));
    }
    if let Some(cycle) = find_cycle(&t.nodes, &fwd) {
        v.ir(format!(
            "{what} has a cycle through '{cycle}' that is not a rework edge"
        ));
    }
    for e in t.edges.iter().filter(|e| e.is_rework()) {
        if ctx != Ctx::Foreach {
            v.ir(format!(
                "{what}: rework edges are not allowed in loop or optional-group templates"
            ));
            continue;
        }
        // A rework edge goes back: its target must reach its source.
        if !reachable(&e.to, &fwd, None).contains(e.from.as_str()) {
            v.ir(format!(
                "{what}: rework edge {} → {} does not close a cycle (rework goes back to an earlier node)",
                e.from, e.to
            ));
        }
    }
    // step-review on the main path routes approve and revise.
    let in_branch = branch_members(&t.nodes, &fwd);
    for tn in t.nodes.iter().filter(|x| x.kind == "step-review") {
        if in_branch.contains(tn.id.as_str()) {
            if t.edges.iter().any(|e| e.from == tn.id && e.is_rework()) {
                v.ir(format!(
                    "step-review '{}' is in a split branch: advisory only, no rework edges",
                    tn.id
                ));
            }
            continue;
        }
        for need in ["outcome:approve", "outcome:revise"] {
            if !t
                .edges
                .iter()
                .any(|e| e.from == tn.id && e.condition.as_deref() == Some(need))
            {
                v.ir(format!("step-review '{}' must route {need}", tn.id));
            }
        }
    }
    branches(v, &t.nodes, &fwd);
}

/// Edge endpoints exist; conditions and kinds are known.
fn edges(v: &mut V, nodes: &[IrNode], edges: &[IrEdge], what: &str) {
    let ids: HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    for e in edges {
        for end in [&e.from, &e.to] {
            if !ids.contains(end.as_str()) {
                v.ir(format!(
                    "edge {} → {} in {what}: node '{end}' is not in {what}",
                    e.from, e.to
                ));
            }
        }
        if let Some(c) = &e.condition {
            let ok = c == "success"
                || c == "failure"
                || c.strip_prefix("outcome:").is_some_and(|o| !o.is_empty());
            if !ok {
                v.ir(format!(
                    "edge {} → {}: condition must be success, failure or outcome:<name>",
                    e.from, e.to
                ));
            }
        }
        if let Some(k) = &e.kind {
            if k != "rework" {
                v.ir(format!("edge {} → {}: kind must be rework", e.from, e.to));
            }
        }
    }
}

/// execute, step-execute and merge work never runs in a split branch.
fn branches(v: &mut V, nodes: &[IrNode], fwd: &[&IrEdge]) {
    let members = branch_members(nodes, fwd);
    for n in nodes.iter().filter(|n| members.contains(n.id.as_str())) {
        if let Some(s @ ("execute" | "step-execute" | "merge")) = n.seam() {
            v.ir(format!(
                "node '{}': seam {s} is not allowed in a split branch",
                n.id
            ));
        }
    }
}
