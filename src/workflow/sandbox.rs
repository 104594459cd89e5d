//! The QuickJS side shared by the catalogue (reading a workflow's metadata) and the runner:
//! a runtime from [`crate::js`] whose interrupt handler also watches a cancellation
//! token, a context with only the language built-ins, the determinism guards, and the
//! evaluation of a workflow file to its definition object.

use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::{Context, Ctx, Module, Object, Runtime, Value as JsValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::js;

const GUARDS: &str = include_str!("guards.js");

/// Heap cap of one workflow run (and of reading a definition).
pub const MEMORY_LIMIT: usize = 64 << 20;
/// QuickJS stack cap; the runner's thread has a larger native stack than this.
pub const STACK_LIMIT: usize = 1 << 20;
/// Time for evaluating a workflow file to read its metadata.
const READ_TIME: Duration = Duration::from_secs(1);

/// Why a workflow file cannot be used (or an inline script not started). Cloned into the
/// catalogue, so it holds messages, not sources.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionError {
    /// The file could not be read (missing, not UTF-8, an I/O error): what to do about it.
    #[error("{0}")]
    Unreadable(String),
    #[error("'{0}' is not a usable workflow key: name the folder with lowercase letters, digits, '.', '_' or '-'")]
    BadKey(String),
    /// The JavaScript threw while the file was evaluated (with the line).
    #[error("{0}")]
    Script(String),
    #[error("reading the file took longer than {} s and was stopped; its top level should only define the workflow object (look for an endless loop there)", READ_TIME.as_secs())]
    TooSlow,
    #[error("the file's top level awaits something that never settles; a workflow file only defines its object")]
    NeverSettles,
    /// The file evaluated, but not to a usable workflow object (the message says what to add).
    #[error("{0}")]
    Shape(String),
    /// The run was stopped while the file was evaluated (why).
    #[error("{0}")]
    Stopped(String),
    #[error("{0}")]
    Runtime(String),
}

impl From<js::StartError> for DefinitionError {
    fn from(e: js::StartError) -> Self {
        DefinitionError::Runtime(e.to_string())
    }
}

/// A runtime that stops running JavaScript as soon as `stop` says so. QuickJS polls the
/// handler while executing bytecode (also inside promise jobs), so a CPU loop really stops;
/// the job loop checks the same conditions between jobs, and code blocked in a host call is
/// stopped by the host call itself watching the run's token.
pub fn runtime(stop: impl Fn() -> bool + 'static) -> Result<Runtime, js::StartError> {
    let (rt, _) = js::runtime(js::Limits {
        memory: MEMORY_LIMIT,
        stack: STACK_LIMIT,
        time: Duration::MAX,
    })?;
    rt.set_interrupt_handler(Some(Box::new(stop)));
    Ok(rt)
}

/// A context with the sandbox built-ins ([`js::Intrinsics`]) and the determinism guards
/// installed.
pub fn context(rt: &Runtime) -> Result<Context, DefinitionError> {
    let ctx = js::context(rt)?;
    ctx.with(|ctx| {
        ctx.eval_with_options::<(), _>(GUARDS, options("guards.js"))
            .map_err(|e| {
                DefinitionError::Runtime(format!(
                    "internal: {}",
                    js::describe(&ctx, e, "guards.js")
                ))
            })
    })?;
    Ok(ctx)
}

pub fn options(file: &str) -> EvalOptions {
    js::options(file)
}

/// Whether a file is an ES module (`export default {…}`) rather than a script whose last
/// expression is the definition (`({…})`).
fn is_module(code: &str) -> bool {
    code.lines()
        .any(|l| l.trim_start().starts_with("export default"))
}

/// Evaluate a workflow file to its definition object. `file` names it in error messages;
/// `check` may stop a module's top level between promise jobs (see [`js::settle`]).
pub fn eval_definition<'js>(
    ctx: &Ctx<'js>,
    code: &str,
    file: &str,
    check: &mut js::Check<'_, DefinitionError>,
) -> Result<Object<'js>, DefinitionError> {
    let thrown = |e| DefinitionError::Script(js::describe(ctx, e, file));
    let value: JsValue = if is_module(code) {
        let module =
            Module::declare(ctx.clone(), file, code.as_bytes().to_vec()).map_err(thrown)?;
        let (module, done) = module.eval().map_err(thrown)?;
        let never = || DefinitionError::NeverSettles;
        if let Err(reason) = js::settle(ctx, &done, check, &mut || Ok(false), never)? {
            return Err(DefinitionError::Script(js::describe_value(reason, file)));
        }
        module.get("default").map_err(|e| {
            DefinitionError::Shape(format!(
                "the module has no default export ({})",
                js::describe(ctx, e, file)
            ))
        })?
    } else {
        ctx.eval_with_options(code.as_bytes().to_vec(), options(file))
            .map_err(thrown)?
    };
    match value.into_object() {
        Some(o) if !o.is_function() && !o.is_array() => Ok(o),
        _ => Err(DefinitionError::Shape(
            "the file must evaluate to the workflow object: `({ title, description, whenToUse, run: async (wf, args) => … })` or `export default { … }`"
                .into(),
        )),
    }
}

/// A suggested argument (shown to agents by list_workflows, applied as a default on run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArgHint {
    pub name: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_value: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phase {
    pub key: String,
    pub title: String,
}

/// What a workflow file declares besides `run`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    pub title: String,
    pub description: String,
    pub when_to_use: String,
    #[serde(default)]
    pub args_hint: Vec<ArgHint>,
    #[serde(default)]
    pub phases: Vec<Phase>,
}

/// Check a definition object and read its metadata; `key` is the folder name.
pub fn read_meta<'js>(
    ctx: &Ctx<'js>,
    def: &Object<'js>,
    key: &str,
) -> Result<Meta, DefinitionError> {
    let shape = DefinitionError::Shape;
    let run: JsValue = def
        .get("run")
        .map_err(|e| shape(format!("cannot read run: {e}")))?;
    if !run.is_function() {
        return Err(shape(
            "the workflow object has no run function; add `run: async (wf, args) => { … }`".into(),
        ));
    }
    let json = ctx
        .json_stringify(def.clone())
        .map_err(|e| {
            shape(format!(
                "the workflow object cannot be read as JSON: {}",
                js::describe(ctx, e, "workflow.js")
            ))
        })?
        .and_then(|s| s.to_string().ok())
        .unwrap_or_else(|| "{}".into());
    let raw: serde_json::Map<String, Value> = serde_json::from_str(&json)
        .map_err(|e| shape(format!("the workflow object is not plain data: {e}")))?;
    let text = |field: &str, required: bool| -> Result<String, DefinitionError> {
        match raw.get(field) {
            Some(Value::String(s)) if !(required && s.trim().is_empty()) => Ok(s.clone()),
            None | Some(Value::Null) if !required => Ok(String::new()),
            None | Some(Value::Null) => Err(shape(format!(
                "the workflow object needs a `{field}` (a non-empty string)"
            ))),
            Some(_) => Err(shape(format!(
                "`{field}` must be a {}string",
                if required { "non-empty " } else { "" }
            ))),
        }
    };
    if let Some(k) = raw.get("key") {
        match k {
            Value::String(s) if s == key => {}
            Value::Null => {}
            other => {
                return Err(shape(format!(
                    "`key` is {other} but the folder is '{key}'; the folder name is the key, so remove `key` or make it match"
                )))
            }
        }
    }
    let mut args_hint = Vec::new();
    match raw.get("argsHint") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, h) in items.iter().enumerate() {
                let name = h
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                let Some(name) = name else {
                    return Err(shape(format!(
                        "argsHint[{i}] needs a `name` (a non-empty string)"
                    )));
                };
                let label = match h.get("label") {
                    Some(Value::String(s)) => s.clone(),
                    None | Some(Value::Null) => name.to_string(),
                    Some(_) => return Err(shape(format!("argsHint[{i}].label must be a string"))),
                };
                args_hint.push(ArgHint {
                    name: name.to_string(),
                    label,
                    default_value: h.get("defaultValue").cloned().filter(|v| !v.is_null()),
                });
            }
        }
        Some(_) => {
            return Err(shape(
                "`argsHint` must be an array of {name, label, defaultValue}".into(),
            ))
        }
    }
    let mut phases = Vec::new();
    match raw.get("phases") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, p) in items.iter().enumerate() {
                let k = p
                    .get("key")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                let t = p.get("title").and_then(Value::as_str);
                match (k, t) {
                    (Some(k), Some(t)) => phases.push(Phase {
                        key: k.to_string(),
                        title: t.to_string(),
                    }),
                    _ => {
                        return Err(shape(format!(
                            "phases[{i}] needs a `key` and a `title` (strings)"
                        )))
                    }
                }
            }
        }
        Some(_) => return Err(shape("`phases` must be an array of {key, title}".into())),
    }
    Ok(Meta {
        title: text("title", true)?,
        description: text("description", false)?,
        when_to_use: text("whenToUse", false)?,
        args_hint,
        phases,
    })
}

/// Evaluate a workflow file in a fresh, short-lived runtime and read its metadata.
pub fn inspect(code: &str, key: &str, file: &str) -> Result<Meta, DefinitionError> {
    let until = Instant::now() + READ_TIME;
    let rt = runtime(move || Instant::now() >= until)?;
    let ctx = context(&rt)?;
    ctx.with(|ctx| {
        let mut check = js::until(until, || DefinitionError::TooSlow);
        let def = eval_definition(&ctx, code, file, &mut check).map_err(|e| {
            if Instant::now() >= until {
                DefinitionError::TooSlow
            } else {
                e
            }
        })?;
        read_meta(&ctx, &def, key)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_file_forms_give_the_same_meta_and_bad_ones_say_why() {
        let script = "({ title: 'T', description: 'D', whenToUse: 'W', argsHint: [{name: 'path', defaultValue: 'a.md'}], async run(wf, args) { return 1; } })";
        let module = "export default { title: 'T', description: 'D', whenToUse: 'W', argsHint: [{name: 'path', defaultValue: 'a.md'}], run: async (wf, args) => 1 };";
        let a = inspect(script, "k", "k/workflow.js").unwrap();
        let b = inspect(module, "k", "k/workflow.js").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.args_hint[0].label, "path");
        let err = inspect("({ title: 'T' })", "k", "k/workflow.js").unwrap_err();
        assert!(matches!(err, DefinitionError::Shape(_)), "{err:?}");
        let err = err.to_string();
        assert!(err.contains("run function"), "{err}");
        let err = inspect("({ title: 'T', run() {}, key: 'other' })", "k", "f")
            .unwrap_err()
            .to_string();
        assert!(err.contains("folder"), "{err}");
        let err = inspect("({ title: , })", "k", "k/workflow.js")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("SyntaxError") && err.contains("line 1"),
            "{err}"
        );
        let err = inspect("while (true) {}", "k", "k/workflow.js").unwrap_err();
        assert_eq!(err, DefinitionError::TooSlow);
        let err = err.to_string();
        assert!(err.contains("longer than 1 s"), "{err}");
        // A module whose top level floods the job queue is stopped just the same.
        let t0 = Instant::now();
        let flood = "function l() { queueMicrotask(l); queueMicrotask(l); }\nl();\nawait new Promise(() => {});\nexport default { title: 'T', run() {} };";
        let err = inspect(flood, "k", "k/workflow.js")
            .unwrap_err()
            .to_string();
        assert!(err.contains("longer than 1 s"), "{err}");
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        let err = inspect("await new Promise(() => {});\nexport default {};", "k", "f")
            .unwrap_err()
            .to_string();
        assert!(err.contains("never settles"), "{err}");
        let err = inspect("42", "k", "f").unwrap_err().to_string();
        assert!(err.contains("must evaluate"), "{err}");
    }

    #[test]
    fn the_clock_and_randomness_throw_but_dates_from_arguments_work() {
        let rt = runtime(|| false).unwrap();
        let ctx = context(&rt).unwrap();
        ctx.with(|ctx| {
            for src in ["Date.now()", "new Date()", "Date()", "Math.random()"] {
                let e = ctx.eval::<(), _>(src).unwrap_err();
                let d = js::describe(&ctx, e, "x.js");
                assert!(d.contains("deterministic"), "{src}: {d}");
            }
            let y: i32 = ctx.eval("new Date(2020, 3, 12).getFullYear()").unwrap();
            assert_eq!(y, 2020);
            let ok: bool = ctx.eval("new Date(0) instanceof Date").unwrap();
            assert!(ok);
        });
    }
}
