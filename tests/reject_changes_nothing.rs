//! The property DESIGN.md requires of the approval gate: "A rejected or interrupted call changes
//! nothing — files, project.sqlite and world state are byte-identical afterwards."
//!
//! For every mutating file tool (write, edit, apply_patch, bash), under every approval config
//! (each preset, with and without a per-tool `ask` rule) and every mode, the combinations that
//! hold the call for approval are derived from `nbook::engine::policy::decide` (with the targets
//! the tool itself reports), never hard-coded. Each held call is then
//! - rejected at once (`Approval::Auto`),
//! - queued, seen in `engine.pending()`, and rejected with `engine.decide`,
//! - queued and cancelled while pending (its task aborted),
//!
//! and the whole project tree — every file, folder, symlink and `.nbook/project.sqlite`, but not
//! `.nbook/agent/` where session logs live — must be byte-identical afterwards. Proptest
//! generates the file contents, paths and edit texts.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use nbook::config::{ApprovalConfig, Config, Dirs, Preset, ToolRule};
use nbook::engine::policy::{decide, CallFacts, Verdict};
use nbook::engine::tool::ToolCtx;
use nbook::engine::{
    Approval, CallResult, CallStatus, Decision, Engine, EngineEvent, Mode, PendingCall, ToolCall,
};
use nbook::workspace::Workspace;
use proptest::prelude::*;
use proptest::test_runner::{Config as PropConfig, TestRunner};
use serde_json::{json, Value};

const MUTATING_TOOLS: [&str; 4] = ["write", "edit", "apply_patch", "bash"];
const PRESETS: [Preset; 3] = [Preset::Supervised, Preset::Neurobook, Preset::Locked];
const CASES: u32 = 32;

// ------------------------------------------------------------------------------ tree snapshot

#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    Dir,
    File(Vec<u8>),
    Link(PathBuf),
}

type Snapshot = BTreeMap<String, Entry>;

/// Everything under `root` except `.nbook/agent/` (session logs and the engine lock).
fn snapshot(root: &Path) -> Snapshot {
    fn walk(root: &Path, dir: &Path, out: &mut Snapshot) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("read_dir {}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".nbook/agent" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                out.insert(rel, Entry::Link(std::fs::read_link(&path).unwrap()));
            } else if meta.is_dir() {
                out.insert(rel, Entry::Dir);
                walk(root, &path, out);
            } else {
                out.insert(rel, Entry::File(std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Snapshot::new();
    walk(root, root, &mut out);
    out
}

fn assert_unchanged(before: &Snapshot, root: &Path, what: &str) {
    let after = snapshot(root);
    if &after == before {
        return;
    }
    let mut diffs = Vec::new();
    for (k, v) in before {
        match after.get(k) {
            None => diffs.push(format!("removed {k}")),
            Some(a) if a != v => diffs.push(format!("changed {k}")),
            _ => {}
        }
    }
    for k in after.keys().filter(|k| !before.contains_key(*k)) {
        diffs.push(format!("added {k}"));
    }
    panic!("{what} changed the project: {diffs:?}");
}

// ------------------------------------------------------------------------------ projects

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            copy_tree(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).unwrap();
        }
    }
}

/// A project made by the real `init`, with its database created, to copy for each case.
fn base_project(tmp: &Path) -> PathBuf {
    let base = tmp.join("base");
    let ws = nbook::workspace::init::init(&base, Some("Property")).expect("init");
    drop(nbook::store::open(&ws.db_path()).expect("create project.sqlite"));
    assert!(ws.db_path().is_file());
    base
}

fn dirs_in(home: &Path) -> Dirs {
    Dirs {
        config: home.to_path_buf(),
        data: home.join("data"),
        logs: home.join("logs"),
    }
}

/// Each preset alone, and each preset with an `ask` rule for every mutating tool (which is what
/// holds `bash` under `neurobook` and anything under `locked`).
fn approval_configs() -> Vec<ApprovalConfig> {
    let mut out = Vec::new();
    for preset in PRESETS {
        out.push(ApprovalConfig {
            preset,
            tools: BTreeMap::new(),
        });
        out.push(ApprovalConfig {
            preset,
            tools: MUTATING_TOOLS
                .iter()
                .map(|t| (t.to_string(), ToolRule::Ask))
                .collect(),
        });
    }
    out
}

// ------------------------------------------------------------------------------ generated input

#[derive(Clone, Debug)]
struct Case {
    /// Folder of the existing files (sometimes `.agent/plan`, where plan mode is exempt).
    dir: String,
    stem: String,
    new_dir: String,
    new_stem: String,
    lines: Vec<String>,
    mark_at: usize,
    mark: String,
    replacement: String,
    new_content: String,
    victim_content: String,
    overwrite: bool,
}

impl Case {
    fn target(&self) -> String {
        format!("{}/t-{}.md", self.dir, self.stem)
    }
    fn victim(&self) -> String {
        format!("{}/v-{}.md", self.dir, self.stem)
    }
    fn new_path(&self) -> String {
        format!("{}/n-{}.md", self.new_dir, self.new_stem)
    }
    /// The line the edit and the patch replace; `«…»` occurs nowhere else in the file.
    fn mark_line(&self) -> String {
        format!("«{}»", self.mark)
    }
    fn target_text(&self) -> String {
        let mut lines = self.lines.clone();
        let at = self.mark_at % (lines.len() + 1);
        lines.insert(at, self.mark_line());
        lines.join("\n") + "\n"
    }

    fn setup(&self, root: &Path) {
        for (p, text) in [
            (self.target(), self.target_text()),
            (self.victim(), self.victim_content.clone()),
        ] {
            let abs = root.join(p);
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(abs, text).unwrap();
        }
    }

    fn args(&self, tool: &str) -> Value {
        match tool {
            "write" => json!({
                "path": if self.overwrite { self.target() } else { self.new_path() },
                "content": self.new_content,
            }),
            "edit" => json!({
                "path": self.target(),
                "edits": [{"oldText": self.mark_line(), "newText": self.replacement}],
            }),
            "apply_patch" => {
                let added: String = self
                    .new_content
                    .lines()
                    .map(|l| format!("+{l}\n"))
                    .collect();
                let patch = format!(
                    "*** Begin Patch\n*** Add File: {new}\n{added}*** Update File: {target}\n@@\n-{mark}\n+{repl}\n*** Delete File: {victim}\n*** End Patch\n",
                    new = self.new_path(),
                    target = self.target(),
                    mark = self.mark_line(),
                    repl = self.replacement,
                    victim = self.victim(),
                );
                json!({ "patch": patch })
            }
            "bash" => json!({
                "command": format!(
                    "printf '%s' changed > '{target}'; rm -f '{victim}'; mkdir -p '{new_dir}'; echo new > '{new}'; \
                     rm -rf manuscript; echo garbage >> .nbook/project.sqlite",
                    target = self.target(),
                    victim = self.victim(),
                    new_dir = self.new_dir,
                    new = self.new_path(),
                ),
            }),
            other => panic!("no arguments for {other}"),
        }
    }
}

fn text_line() -> impl Strategy<Value = String> {
    // Printable text with accents and CJK, but never the «» marker characters.
    "[a-zA-Z0-9 ,.;:!?'()éü中*@+-]{0,40}"
}

fn case_strategy() -> impl Strategy<Value = Case> {
    let dir = prop_oneof![
        Just("gen".to_string()),
        Just("manuscript/001-volume".to_string()),
        Just(".agent/plan".to_string()),
        "[a-z][a-z0-9_-]{0,7}(/[a-z][a-z0-9_-]{0,7}){0,2}",
    ];
    let new_dir = prop_oneof![
        Just(".agent/plan".to_string()),
        "[a-z][a-z0-9_-]{0,7}(/[a-z][a-z0-9_-]{0,7}){0,2}",
    ];
    (
        (dir, "[a-z0-9_-]{1,10}", new_dir, "[a-z0-9_-]{1,10}"),
        (
            prop::collection::vec(text_line(), 0..12),
            any::<usize>(),
            "[a-z0-9 ]{0,10}[a-z0-9]",
        ),
        (
            text_line(),
            prop::collection::vec(text_line(), 0..8),
            text_line(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (dir, stem, new_dir, new_stem),
                (lines, mark_at, mark),
                (replacement, new_lines, victim, overwrite),
            )| Case {
                dir,
                stem,
                new_dir,
                new_stem,
                lines,
                mark_at,
                mark,
                replacement,
                new_content: new_lines.join("\n") + "\n",
                victim_content: victim + "\n",
                overwrite,
            },
        )
}

// ------------------------------------------------------------------------------ the property

/// What the policy says for this call, computed from the tool's own targets as the engine does.
fn verdict_for(engine: &Engine, session: &str, mode: Mode, tool: &str, args: &Value) -> Verdict {
    let registered = engine
        .registry()
        .get(tool)
        .unwrap_or_else(|| panic!("{tool} is not registered"));
    assert!(
        registered.tool.mutates().for_call(args),
        "{tool} must declare itself mutating"
    );
    let ctx = ToolCtx {
        workspace: engine.workspace().clone(),
        config: engine.config().clone(),
        profile: engine.session_profile(session).expect("session profile"),
        session_id: session.to_string(),
        mode,
        session_state: engine.session_state(session),
        call_id: String::new(),
        services: None,
        cancel: Default::default(),
    };
    let targets = registered.tool.write_targets(&ctx, &args.clone().into());
    decide(
        &engine.config().approval,
        &CallFacts {
            tool,
            effects: registered.tool.effects(),
            mode,
            targets: &targets,
            granted: false,
        },
    )
}

/// Wait for the engine to announce `call_id` as pending, then return its queue entry.
async fn wait_until_pending(
    engine: &Engine,
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    call_id: &str,
) -> PendingCall {
    let announced = async {
        loop {
            match events.recv().await {
                Ok(EngineEvent::ApprovalRequested { call }) if call.call_id == call_id => break,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("engine events closed: {e}"),
            }
        }
    };
    if tokio::time::timeout(Duration::from_secs(20), announced)
        .await
        .is_err()
    {
        panic!("call {call_id} was never announced as pending");
    }
    engine
        .pending()
        .into_iter()
        .find(|p| p.call_id == call_id)
        .unwrap_or_else(|| panic!("call {call_id} was announced but is not in pending()"))
}

fn assert_rejected(r: &CallResult, what: &str) {
    assert_eq!(r.status, CallStatus::Rejected, "{what}: {r:?}");
    assert!(!r.ok, "{what}");
    assert!(r.content.contains("rejected"), "{what}: {}", r.content);
    assert!(
        r.content.contains("Do not retry"),
        "{what}: the agent is not told not to retry: {}",
        r.content
    );
}

#[derive(Default)]
struct Coverage {
    /// tool → number of (config, mode) combinations that held it, summed over cases.
    held: BTreeMap<&'static str, usize>,
    combos: usize,
}

#[allow(clippy::too_many_arguments)]
async fn reject_three_ways(
    engine: &Arc<Engine>,
    root: &Path,
    before: &Snapshot,
    session: &str,
    mode: Mode,
    tool: &str,
    args: &Value,
    label: &str,
    seq: &mut usize,
) {
    // 1. Rejected at once, as `nbook call --reject` does.
    let call = ToolCall {
        id: String::new(),
        name: tool.to_string(),
        arguments: args.clone(),
    };
    let r = engine
        .call(
            session,
            call,
            Approval::Auto {
                decision: Decision::Reject { reason: None },
                by: "test",
            },
        )
        .await;
    assert_rejected(&r, &format!("{label} (auto)"));
    assert_unchanged(before, root, &format!("{label} rejected at once"));

    // 2. Queued, seen by the author, rejected with a reason.
    *seq += 1;
    let id = format!("queued-{seq}");
    let call = ToolCall {
        id: id.clone(),
        name: tool.to_string(),
        arguments: args.clone(),
    };
    let (e, s) = (engine.clone(), session.to_string());
    let mut events = engine.subscribe();
    let task = tokio::spawn(async move { e.call(&s, call, Approval::Queue).await });
    let pending = wait_until_pending(engine, &mut events, &id).await;
    assert_eq!(pending.tool, tool, "{label}");
    assert_eq!(pending.session_id, session, "{label}");
    assert_eq!(pending.mode, mode, "{label}");
    assert_eq!(&pending.args, args, "{label}");
    assert_unchanged(before, root, &format!("{label} while pending"));
    engine
        .decide(
            &pending.approval_id,
            Decision::Reject {
                reason: Some("not this one".into()),
            },
        )
        .unwrap_or_else(|e| panic!("{label}: decide failed: {e}"));
    let r = tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .unwrap_or_else(|_| panic!("{label}: the rejected call never returned"))
        .expect("call task");
    assert_rejected(&r, &format!("{label} (queue)"));
    assert!(
        r.content.contains("not this one"),
        "{label}: the reason is not passed on: {}",
        r.content
    );
    assert!(
        engine.pending().iter().all(|p| p.call_id != id),
        "{label}: still pending after rejection"
    );
    assert_unchanged(before, root, &format!("{label} rejected from the queue"));

    // 3. Queued, then the waiting task is cancelled (the agent run was stopped).
    *seq += 1;
    let id = format!("cancelled-{seq}");
    let call = ToolCall {
        id: id.clone(),
        name: tool.to_string(),
        arguments: args.clone(),
    };
    let (e, s) = (engine.clone(), session.to_string());
    let mut events = engine.subscribe();
    let task = tokio::spawn(async move { e.call(&s, call, Approval::Queue).await });
    let pending = wait_until_pending(engine, &mut events, &id).await;
    task.abort();
    let joined = tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .unwrap_or_else(|_| panic!("{label}: the aborted task never finished"));
    assert!(
        joined.as_ref().is_err_and(|e| e.is_cancelled()),
        "{label}: the call finished instead: {joined:?}"
    );
    assert!(
        engine.pending().iter().all(|p| p.call_id != id),
        "{label}: a cancelled call is still in pending()"
    );
    // A late approval of the vanished call must not run it.
    assert!(
        engine
            .decide(&pending.approval_id, Decision::Approve)
            .is_err(),
        "{label}: a cancelled call could still be approved"
    );
    assert_unchanged(before, root, &format!("{label} cancelled while pending"));
}

fn check_case(
    rt: &tokio::runtime::Runtime,
    base: &Path,
    case: &Case,
    coverage: &RefCell<Coverage>,
) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    copy_tree(base, &root);
    case.setup(&root);
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let dirs = dirs_in(&home);
    let mut before: Option<Snapshot> = None;
    let mut seq = 0usize;

    for approval in approval_configs() {
        let config = Config {
            approval: approval.clone(),
            ..Config::default()
        };
        let ws = Workspace::open(&root).expect("open project");
        let engine = Arc::new(
            Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap())
                .expect("open engine"),
        );
        let real_root = engine.workspace().root().to_path_buf();
        let before = &*before.get_or_insert_with(|| snapshot(&real_root));
        assert_unchanged(
            before,
            &real_root,
            &format!("opening the engine with {approval:?}"),
        );
        for mode in Mode::ALL {
            let session = engine
                .create_session("leader.default", mode, "t", None)
                .expect("session")
                .id;
            for tool in MUTATING_TOOLS {
                let args = case.args(tool);
                let verdict = verdict_for(&engine, &session, mode, tool, &args);
                let Verdict::Ask { .. } = verdict else {
                    continue;
                };
                let label = format!("{tool} under {approval:?} in {mode} mode");
                rt.block_on(reject_three_ways(
                    &engine, &real_root, before, &session, mode, tool, &args, &label, &mut seq,
                ));
                let mut cov = coverage.borrow_mut();
                *cov.held.entry(tool).or_default() += 1;
                cov.combos += 1;
            }
        }
        assert!(
            engine.pending().is_empty(),
            "calls left pending: {:?}",
            engine.pending()
        );
    }
}

#[test]
fn rejected_or_cancelled_calls_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let base = base_project(tmp.path());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let coverage = RefCell::new(Coverage::default());
    let mut runner = TestRunner::new(PropConfig {
        cases: CASES,
        max_shrink_iters: 64,
        failure_persistence: None,
        ..PropConfig::default()
    });
    // Proptest turns a panic inside the case into a failure and shrinks it.
    let outcome = runner.run(&case_strategy(), |case| {
        check_case(&rt, &base, &case, &coverage);
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    let cov = coverage.into_inner();
    // The property was exercised for every mutating tool, not vacuously.
    for tool in MUTATING_TOOLS {
        assert!(
            cov.held.get(tool).copied().unwrap_or(0) > 0,
            "no approval config holds {tool}: {:?}",
            cov.held
        );
    }
    assert!(
        cov.combos >= CASES as usize * MUTATING_TOOLS.len(),
        "too few held combinations: {}",
        cov.combos
    );
}

/// The combinations the property runs on, derived from the policy: every mutating tool is held
/// under the default preset in every mode for an ordinary file (DESIGN.md: `supervised` asks
/// for every mutating call in every mode), and `locked` holds nothing without a per-tool rule.
#[test]
fn the_policy_holds_every_mutating_tool_somewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let base = base_project(tmp.path());
    let home = tmp.path().join("home");
    let case = Case {
        dir: "gen".into(),
        stem: "a".into(),
        new_dir: "gen".into(),
        new_stem: "b".into(),
        lines: vec!["one".into(), "two".into()],
        mark_at: 1,
        mark: "m".into(),
        replacement: "r".into(),
        new_content: "new\n".into(),
        victim_content: "victim\n".into(),
        overwrite: false,
    };
    case.setup(&base);
    for approval in approval_configs() {
        let config = Config {
            approval: approval.clone(),
            ..Config::default()
        };
        let engine = Engine::open(
            Workspace::open(&base).unwrap(),
            config,
            &dirs_in(&home),
            nbook::tools::registry().unwrap(),
        )
        .unwrap();
        for mode in Mode::ALL {
            let session = engine
                .create_session("leader.default", mode, "t", None)
                .unwrap()
                .id;
            for tool in MUTATING_TOOLS {
                let v = verdict_for(&engine, &session, mode, tool, &case.args(tool));
                match (approval.preset, approval.tools.is_empty()) {
                    (Preset::Supervised, _) => {
                        assert!(
                            matches!(v, Verdict::Ask { .. }),
                            "{tool} {mode} {approval:?}: {v:?}"
                        )
                    }
                    (Preset::Locked, true) => {
                        assert!(matches!(v, Verdict::Refuse(_)), "{tool} {mode}: {v:?}")
                    }
                    (_, false) => assert!(
                        matches!(v, Verdict::Ask { .. }),
                        "{tool} {mode} {approval:?}: {v:?}"
                    ),
                    _ => {}
                }
            }
        }
    }
}
