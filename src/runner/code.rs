//! A workflow's `code` node, run in the QuickJS sandbox (`crate::js`) when the scheduler's
//! route passes it (`super::route`). Its result decides the edge taken.
//!
//! **Contract** (Fusion's, fusion-notes §4, run in QuickJS instead of a `node` child):
//! - `config.source` is the body of an async function of `ctx` (so it may `await` and must
//!   `return` its result), in strict mode. Plain JavaScript: there is no TypeScript compiler.
//! - `ctx = {task: {id, title, description, column, status, steps: [{name, status}],
//!   customFields}, context, artifacts: {read(key)}}`; `artifacts.read("PROMPT.md")` is
//!   the task's plan (or `null`); no other artifact exists yet (`null`). No store, file,
//!   network or process access: only the language built-ins of [`crate::js::Intrinsics`].
//! - It returns `undefined` (= `{outcome: "success"}`) or an object `{outcome?, value?,
//!   contextPatch?, customFields?}`: `outcome` a string of letters, digits and `-`
//!   (`"success"`, `"failure"` or any name the workflow's edges route as `outcome:<name>`),
//!   `value` any JSON value (shown in the task log, cut to 200 characters), `contextPatch` an
//!   object merged (key by key, `null` removes) into the walk's context, which the later code
//!   nodes of the same walk see as `ctx.context` (a walk starts with `{}`: the scheduler walks
//!   at promotion, after the draft and after an APPROVE, and keeps no context between walks),
//!   `customFields` an object written to the task's custom fields with `fn_task_update`'s
//!   checks (the workflow's `fields`; `null` clears one) — one invalid field fails the node
//!   with the reason and writes none. Any other key is refused.
//! - Limits: `config.timeoutMs` (1000–300000, default 30000) of wall time for the whole run,
//!   promise jobs included; 32 MiB of memory; 512 KiB of stack.
//!
//! A run that throws, rejects, runs out of time or memory, or returns another shape is a
//! [`CodeError`]; the scheduler parks the task for the author with its message.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use rquickjs::{Ctx, Value as JsValue};
use serde_json::{json, Value};

use crate::js;

pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
pub const MEMORY: usize = 32 << 20;
const STACK: usize = 512 << 10;
/// How much longer than its limit the caller waits for the sandbox thread to answer.
const GRACE: Duration = Duration::from_secs(2);
const VALUE_SHOWN: usize = 200;

/// What a code node decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CodeResult {
    pub outcome: String,
    pub value: Option<Value>,
    /// Merged into the walk's context (`ctx.context` of the later code nodes).
    pub context_patch: serde_json::Map<String, Value>,
    /// Written to the task's custom fields (validated; `null` clears).
    pub custom_fields: std::collections::BTreeMap<String, Value>,
}

impl CodeResult {
    /// The edge condition this result takes (`success`, `failure` or `outcome:<name>`).
    pub fn condition(&self) -> String {
        match self.outcome.as_str() {
            "success" | "failure" => self.outcome.clone(),
            o => format!("outcome:{o}"),
        }
    }

    /// `value`, as the task log shows it.
    pub fn shown_value(&self) -> Option<String> {
        self.value
            .as_ref()
            .map(|v| crate::board::snippet(&v.to_string(), VALUE_SHOWN))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    #[error("code node '{node}' could not start: {message}")]
    Start { node: String, message: String },
    #[error("code node '{node}' failed: {message}")]
    Script { node: String, message: String },
    #[error("code node '{node}' ran past its timeoutMs ({ms} ms) and was stopped")]
    TimedOut { node: String, ms: u64 },
    #[error("code node '{node}' returned {message}")]
    BadResult { node: String, message: String },
    #[error("code node '{node}' returned customFields the task's workflow refuses: {message}; no field was written")]
    Fields { node: String, message: String },
}

/// Merge a code node's `contextPatch` into the walk's `context` (`null` removes a key).
pub fn merge_context(
    context: &mut serde_json::Map<String, Value>,
    patch: &serde_json::Map<String, Value>,
) {
    for (k, v) in patch {
        if v.is_null() {
            context.remove(k);
        } else {
            context.insert(k.clone(), v.clone());
        }
    }
}

/// The `ctx.task` a code node sees.
pub fn task_input(t: &crate::board::Task) -> Value {
    json!({
        "id": t.id,
        "title": t.title,
        "description": t.description,
        "column": t.column,
        "status": t.status,
        "steps": t.steps,
        "customFields": t.custom_fields,
    })
}

/// Run code node `node` with `source` on `task` (see [`task_input`]) and the walk's `context`;
/// `prompt` is what `artifacts.read("PROMPT.md")` gives. Blocks the calling thread for at most `timeout_ms`
/// plus a short grace: the sandbox runs on its own thread (QuickJS runtimes stay on theirs).
pub fn run(
    node: &str,
    source: &str,
    timeout_ms: u64,
    task: &Value,
    context: &Value,
    prompt: Option<&str>,
) -> Result<CodeResult, CodeError> {
    let (tx, rx) = mpsc::channel();
    let limit = Duration::from_millis(timeout_ms);
    let (n, src) = (node.to_string(), source.to_string());
    let input =
        json!({"task": task, "context": context, "artifacts": {"PROMPT.md": prompt}}).to_string();
    std::thread::Builder::new()
        .name("nbook-code-node".into())
        .stack_size(4 << 20)
        .spawn(move || {
            let _ = tx.send(sandboxed(&n, &src, limit, &input));
        })
        .map_err(|e| CodeError::Start {
            node: node.into(),
            message: format!("cannot start its thread: {e}"),
        })?;
    match rx.recv_timeout(limit + GRACE) {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(CodeError::TimedOut {
            node: node.into(),
            ms: timeout_ms,
        }),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(CodeError::Script {
            node: node.into(),
            message: "the sandbox stopped without an answer".into(),
        }),
    }
}

/// Builds `ctx` from the JSON input and calls the node's function with it.
const PRELUDE: &str = r#"(function (input) {
  const a = input.artifacts;
  return Object.freeze({
    task: input.task,
    context: input.context || {},
    artifacts: Object.freeze({
      read(key) {
        const k = String(key);
        return Object.prototype.hasOwnProperty.call(a, k) && a[k] !== undefined ? a[k] : null;
      },
    }),
  });
})"#;

fn sandboxed(
    node: &str,
    source: &str,
    limit: Duration,
    input: &str,
) -> Result<CodeResult, CodeError> {
    let start_err = |m: String| CodeError::Start {
        node: node.into(),
        message: m,
    };
    let script = |m: String| CodeError::Script {
        node: node.into(),
        message: m,
    };
    let timed_out = || CodeError::TimedOut {
        node: node.into(),
        ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
    };
    let (rt, deadline) = js::runtime(js::Limits {
        memory: MEMORY,
        stack: STACK,
        time: limit,
    })
    .map_err(|e| start_err(e.to_string()))?;
    let context = js::context(&rt).map_err(|e| start_err(e.to_string()))?;
    let file = format!("code-node-{node}.js");
    context.with(|ctx| {
        let until = Instant::now() + limit;
        deadline.set(Some(until));
        let late = || Instant::now() >= until;
        let make: rquickjs::Function = ctx
            .eval_with_options(PRELUDE, js::options("code-node-prelude.js"))
            .map_err(|e| start_err(js::describe(&ctx, e, "code-node-prelude.js")))?;
        let parsed = ctx
            .json_parse(input)
            .map_err(|e| start_err(js::describe(&ctx, e, "input")))?;
        let cx: JsValue = make
            .call((parsed,))
            .map_err(|e| start_err(js::describe(&ctx, e, "code-node-prelude.js")))?;
        // The source starts on line 1 of `file`, so its line numbers are the author's.
        let wrapped = format!("(async function (ctx) {{{source}\n}})");
        let f: rquickjs::Function = match ctx.eval_with_options(wrapped, js::options(&file)) {
            Ok(f) => f,
            Err(_) if late() => return Err(timed_out()),
            Err(e) => return Err(script(js::describe(&ctx, e, &file))),
        };
        let promise: rquickjs::Promise = match f.call((cx,)) {
            Ok(p) => p,
            Err(_) if late() => return Err(timed_out()),
            Err(e) => return Err(script(js::describe(&ctx, e, &file))),
        };
        let mut check = js::until(until, timed_out);
        let never =
            || script("its promise never settles (it awaits something that cannot happen)".into());
        let settled = js::settle(&ctx, &promise, &mut check, &mut || Ok(false), never)?;
        let v = match settled {
            Ok(v) => v,
            Err(_) if late() => return Err(timed_out()),
            Err(reason) => return Err(script(js::describe_value(reason, &file))),
        };
        js::drain(&ctx, &mut check)?;
        let json = to_json(&ctx, v).map_err(|m| CodeError::BadResult {
            node: node.into(),
            message: m,
        })?;
        shape(json).map_err(|m| CodeError::BadResult {
            node: node.into(),
            message: m,
        })
    })
}

fn to_json<'js>(ctx: &Ctx<'js>, v: JsValue<'js>) -> Result<Value, String> {
    if v.is_undefined() {
        return Ok(Value::Null);
    }
    let text = ctx
        .json_stringify(v)
        .map_err(|e| {
            format!(
                "a value that is not JSON ({})",
                js::describe(ctx, e, "result")
            )
        })?
        .and_then(|s| s.to_string().ok())
        .ok_or_else(|| "a value that is not JSON".to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("a value that is not JSON ({e})"))
}

/// Check the returned value against the contract.
fn shape(v: Value) -> Result<CodeResult, String> {
    let obj = match v {
        Value::Null => {
            return Ok(CodeResult {
                outcome: "success".into(),
                ..CodeResult::default()
            })
        }
        Value::Object(o) => o,
        other => {
            return Err(format!(
                "{}; it must return an object {{outcome?, value?, contextPatch?, customFields?}} or nothing",
                crate::board::snippet(&other.to_string(), 80)
            ))
        }
    };
    if let Some(k) = obj.keys().find(|k| {
        !matches!(
            k.as_str(),
            "outcome" | "value" | "contextPatch" | "customFields"
        )
    }) {
        return Err(format!(
            "the key '{k}', which nbook's board does not take (only outcome, value, contextPatch and customFields)"
        ));
    }
    let object = |key: &str| match obj.get(key) {
        None | Some(Value::Null) => Ok(serde_json::Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(other) => Err(format!(
            "{key} {}; it must be an object",
            crate::board::snippet(&other.to_string(), 80)
        )),
    };
    let context_patch = object("contextPatch")?;
    let custom_fields = object("customFields")?.into_iter().collect();
    let outcome = match obj.get("outcome") {
        None | Some(Value::Null) => "success".to_string(),
        Some(Value::String(s))
            if !s.is_empty()
                && s.len() <= 64
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') =>
        {
            s.clone()
        }
        Some(other) => {
            return Err(format!(
                "outcome {}; it must be a name of letters, digits and '-' (at most 64)",
                crate::board::snippet(&other.to_string(), 80)
            ))
        }
    };
    Ok(CodeResult {
        outcome,
        value: obj.get("value").cloned().filter(|v| !v.is_null()),
        context_patch,
        custom_fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> Value {
        json!({"id": "T-1", "title": "Storm", "description": "", "column": "draft", "status": "",
               "steps": [{"name": "Preflight", "status": "done"}], "customFields": {"wordTarget": 900}})
    }

    #[test]
    fn the_result_decides_the_outcome_and_ctx_holds_the_task() {
        let r = run(
            "check",
            "const n = ctx.task.customFields.wordTarget;\nreturn {outcome: n > 500 ? 'long' : 'short', value: {n, plan: ctx.artifacts.read('PROMPT.md'), other: ctx.artifacts.read('x')}};",
            1000,
            &task(),
            &json!({}),
            Some("# Plan"),
        )
        .unwrap();
        assert_eq!(r.outcome, "long");
        assert_eq!(r.condition(), "outcome:long");
        assert_eq!(
            r.value,
            Some(json!({"n": 900, "plan": "# Plan", "other": null}))
        );
        let r = run("noop", "await null;", 1000, &task(), &json!({}), None).unwrap();
        assert_eq!((r.condition().as_str(), r.value), ("success", None));
    }

    #[test]
    fn throwing_looping_and_bad_results_are_errors_with_reasons() {
        let e = run("t", "\n\nnull.x;", 1000, &task(), &json!({}), None).unwrap_err();
        assert!(
            matches!(&e, CodeError::Script { message, .. } if message.contains("TypeError") && message.contains("(line 3)")),
            "{e}"
        );
        let t0 = Instant::now();
        let e = run("spin", "while (true) {}", 1000, &task(), &json!({}), None).unwrap_err();
        assert!(matches!(e, CodeError::TimedOut { ms: 1000, .. }), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(3));
        let e = run(
            "jobs",
            "for (;;) { await null; }",
            1000,
            &task(),
            &json!({}),
            None,
        )
        .unwrap_err();
        assert!(matches!(e, CodeError::TimedOut { .. }), "{e}");
        let e = run(
            "hog",
            "const a = []; for (;;) a.push('x'.repeat(1 << 20));",
            5000,
            &task(),
            &json!({}),
            None,
        )
        .unwrap_err();
        assert!(matches!(e, CodeError::Script { .. }), "{e}");
        for (src, says) in [
            ("return 3;", "must return an object"),
            ("return {outcome: 'no spaces allowed'};", "outcome"),
            ("return {other: 1};", "'other'"),
            ("return {contextPatch: 3};", "contextPatch 3"),
            ("return {customFields: [1]};", "customFields [1]"),
        ] {
            let e = run("bad", src, 1000, &task(), &json!({}), None).unwrap_err();
            assert!(
                matches!(&e, CodeError::BadResult { message, .. } if message.contains(says)),
                "{src}: {e}"
            );
        }
    }

    #[test]
    fn context_patch_and_custom_fields_come_back_and_ctx_context_is_the_walks() {
        let r = run(
            "mark",
            "return {contextPatch: {seen: ctx.context.count + 1, gone: null}, customFields: {wordTarget: 1200, pov: null}};",
            1000,
            &task(),
            &json!({"count": 2}),
            None,
        )
        .unwrap();
        assert_eq!(r.outcome, "success");
        assert_eq!(
            r.context_patch,
            *json!({"seen": 3, "gone": null}).as_object().unwrap()
        );
        assert_eq!(r.custom_fields.get("wordTarget"), Some(&json!(1200)));
        assert_eq!(r.custom_fields.get("pov"), Some(&Value::Null));
        let mut context = json!({"count": 2, "gone": true})
            .as_object()
            .unwrap()
            .clone();
        merge_context(&mut context, &r.context_patch);
        assert_eq!(Value::Object(context), json!({"count": 2, "seen": 3}));
    }
}
