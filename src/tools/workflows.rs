//! Workflows and jobs: `list_workflows`, `run_workflow` (waits for the author's approval; the
//! preview shows the workflow, its arguments and its code), and the generic job tools
//! `list_jobs`, `get_job`, `cancel_job` (workflow, background invoke_agent and bash jobs alike).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::engine::jobs::{JobError, JobStatus};
use crate::engine::services::ToolServices;
use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{Preview, PreviewBody, TargetState};
use crate::workflow::{self, Catalogue, Launch, Launched, Selected};

/// Lines of a workflow file the approval preview shows.
const PREVIEW_LINES: usize = 40;
/// Most lines of an inline script the preview shows (the rest is counted).
const INLINE_PREVIEW_LINES: usize = 400;

fn json_out(content: String, v: Value) -> ToolOutput {
    ToolOutput {
        content,
        details: Some(v),
        ..ToolOutput::default()
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn engine(ctx: &ToolCtx) -> Result<Arc<dyn ToolServices>, ToolError> {
    ctx.services
        .clone()
        .ok_or_else(|| ToolError::failed("jobs and workflows need the engine, which this context does not have; use the TUI, `nbook call` or `nbook run`"))
}

/// A tool without arguments (an empty object).
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunWorkflowArgs {
    /// A key from list_workflows. Give this or script, not both.
    #[schemars(length(min = 1))]
    pub workflow_key: Option<String>,
    /// Inline JavaScript instead of a workflow key: the body of async (wf, args) => { … }. Use await with wf.agents.create/invoke, wf.map, wf.workspace.read, wf.ask, wf.log, wf.progress; return the result. Date.now() and Math.random() are not available.
    #[schemars(length(min = 1))]
    pub script: Option<String>,
    /// Arguments for the workflow (its argsHint in list_workflows names them; missing ones take their defaults).
    pub args: Option<serde_json::Map<String, Value>>,
    /// A modelKey from list_workflows, used by every agent of the run that does not choose its own.
    #[schemars(length(min = 1))]
    pub model: Option<String>,
    /// true: block until the run ends (default false: background job).
    pub wait: Option<bool>,
}

/// A job status, one of [`JobStatus::ALL`].
#[derive(Clone, Copy, Debug)]
pub struct JobStatusArg(pub JobStatus);

impl<'de> serde::Deserialize<'de> for JobStatusArg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        JobStatus::parse(&s).map(JobStatusArg).ok_or_else(|| {
            let all: Vec<&str> = JobStatus::ALL.iter().map(|s| s.as_str()).collect();
            serde::de::Error::custom(format!("'{s}' is not one of {}", all.join(", ")))
        })
    }
}

impl schemars::JsonSchema for JobStatusArg {
    fn is_referenceable() -> bool {
        false
    }
    fn schema_name() -> String {
        "JobStatus".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let all: Vec<&str> = JobStatus::ALL.iter().map(|s| s.as_str()).collect();
        serde_json::from_value(json!({"type": "string", "enum": all}))
            .unwrap_or(schemars::schema::Schema::Bool(true))
    }
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListJobsArgs {
    /// Every job of the project, not only this session's (default false).
    pub all: Option<bool>,
    /// Only jobs with this status.
    pub status: Option<JobStatusArg>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobIdArgs {
    /// e.g. job-3, from run_workflow or list_jobs
    #[schemars(length(min = 1))]
    pub job_id: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelJobArgs {
    /// e.g. job-3
    #[schemars(length(min = 1))]
    pub job_id: String,
}

fn fingerprint(text: &str) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    format!("{}:{:016x}", text.len(), h.finish())
}

// ---------------------------------------------------------------------------------------------

pub struct ListWorkflows;

impl TypedTool for ListWorkflows {
    type Args = NoArgs;
    const NAME: &'static str = "list_workflows";
    const GROUP: &'static str = "workflows";
    const DESCRIPTION: &'static str = "List the workflows run_workflow can start (built-in and the project's .nbook/workflows/), with what each does, when to use it and the arguments it takes, plus the models a run may use. A workflow listed with an error cannot run until its file is fixed.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Files, Jobs])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, _args: &NoArgs) -> Result<ToolOutput, ToolError> {
        let cat = Catalogue::load(ctx.workspace.root());
        let workflows: Vec<Value> = cat
            .workflows
            .iter()
            .map(|w| {
                let mut v = json!({
                    "key": w.key,
                    "source": w.source.as_str(),
                    "path": w.path,
                });
                match &w.meta {
                    Ok(m) => {
                        v["title"] = json!(m.title);
                        v["description"] = json!(m.description);
                        v["whenToUse"] = json!(m.when_to_use);
                        v["argsHint"] = json!(m.args_hint);
                        if !m.phases.is_empty() {
                            v["phases"] = json!(m.phases);
                        }
                    }
                    Err(e) => {
                        v["title"] = json!(w.key);
                        v["description"] = json!("");
                        v["whenToUse"] = json!("");
                        v["error"] = json!(e.to_string());
                    }
                }
                v
            })
            .collect();
        let default = ctx.config.defaults.model.as_deref();
        let models: Vec<Value> = ctx
            .config
            .models
            .iter()
            .map(|(k, m)| {
                let mut note = format!("{} on provider {}", m.name, m.provider);
                if let Some(w) = m.context_window {
                    note.push_str(&format!(", {w}-token context"));
                }
                if default == Some(k.as_str()) {
                    note.push_str(" (the default)");
                }
                json!({"modelKey": k, "note": note})
            })
            .collect();
        let v = json!({"workflows": workflows, "models": models});
        Ok(json_out(pretty(&v), v))
    }
}

// ---------------------------------------------------------------------------------------------

pub struct RunWorkflow;

struct Request {
    workflow: Selected,
    args: Value,
    model: Option<String>,
    wait: bool,
}

fn request(ctx: &ToolCtx, args: &RunWorkflowArgs) -> Result<Request, ToolError> {
    let workflow = workflow::select(
        ctx.workspace.root(),
        args.workflow_key.as_deref(),
        args.script.as_deref(),
    )
    .map_err(|e| ToolError::Failed(e.to_string()))?;
    let model = args.model.clone();
    if let Some(m) = &model {
        workflow::check_model(&ctx.config, m).map_err(|e| ToolError::Failed(e.to_string()))?;
    }
    Ok(Request {
        workflow,
        args: Value::Object(args.args.clone().unwrap_or_default()),
        model,
        wait: args.wait.unwrap_or(false),
    })
}

fn target_key(w: &Selected) -> String {
    if w.source == "inline" {
        format!("workflow:inline:{}", fingerprint(w.text()))
    } else {
        format!("workflow:{}", w.key)
    }
}

impl TypedTool for RunWorkflow {
    type Args = RunWorkflowArgs;
    const NAME: &'static str = "run_workflow";
    const GROUP: &'static str = "workflows";
    const DESCRIPTION: &'static str = "Run a workflow (a deterministic script that creates and invokes agents, reads project files and may ask the author) after the author approves it. Give workflowKey (see list_workflows) or an inline script, plus args. By default it runs in the background as a job: you get a jobId at once and the result arrives as a message when it ends (do not poll; cancel_job stops it). With wait:true the call blocks until the run ends and returns its result; such a run cannot ask the author anything.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Jobs, Agents])
    };
    fn write_targets(&self, ctx: &ToolCtx, args: &RunWorkflowArgs) -> Vec<String> {
        match request(ctx, args) {
            Ok(r) => vec![target_key(&r.workflow)],
            Err(_) => Vec::new(),
        }
    }
    fn preview(
        &self,
        ctx: &ToolCtx,
        args: &RunWorkflowArgs,
        _raw: &Value,
    ) -> Result<Preview, ToolError> {
        let r = request(ctx, args)?;
        let w = &r.workflow;
        let effective = w.effective_args(&r.args);
        let mut text = String::new();
        let origin = match &w.path {
            Some(p) => format!("{}, {p}", w.source),
            None => "inline script".into(),
        };
        text.push_str(&format!("Workflow: {} — {} ({origin})\n", w.key, w.title));
        if let Some(m) = &w.meta {
            if !m.description.is_empty() {
                text.push_str(&format!("{}\n", m.description));
            }
        }
        text.push_str(if r.wait {
            "Runs: while the calling agent waits (a question to you would cancel the run)\n"
        } else {
            "Runs: in the background as a job; the calling agent gets the result when it ends\n"
        });
        text.push_str(&format!(
            "Model: {}\n",
            r.model.as_deref().unwrap_or("each profile's default")
        ));
        text.push_str("Agents it starts propose their own changes, which wait for your approval as usual.\n\n");
        text.push_str("Arguments");
        if effective != r.args {
            text.push_str(" (with defaults filled in)");
        }
        text.push_str(":\n");
        text.push_str(&pretty(&effective));
        text.push_str("\n\n");
        let code = w.text();
        let total = code.lines().count();
        let shown = if w.source == "inline" {
            INLINE_PREVIEW_LINES
        } else {
            PREVIEW_LINES
        };
        if w.source == "inline" {
            text.push_str("Script:\n");
        } else {
            text.push_str(&format!(
                "Code ({}):\n",
                if total > shown {
                    format!("first {shown} of {total} lines")
                } else {
                    format!("{total} lines")
                }
            ));
        }
        for line in code.lines().take(shown) {
            text.push_str(line);
            text.push('\n');
        }
        if total > shown {
            text.push_str(&format!("… {} more lines\n", total - shown));
        }
        Ok(Preview {
            summary: format!(
                "Run workflow {} ({}){}",
                w.key,
                w.source,
                if r.wait {
                    ", waiting for the result"
                } else {
                    " in the background"
                }
            ),
            body: PreviewBody::Text { text },
            targets: vec![TargetState {
                key: target_key(w),
                fingerprint: fingerprint(code),
            }],
        })
    }
    fn run(&self, ctx: &ToolCtx, args: &RunWorkflowArgs) -> Result<ToolOutput, ToolError> {
        let engine = engine(ctx)?;
        let r = request(ctx, args)?;
        let key = r.workflow.key.clone();
        let launched = workflow::launch(
            &engine,
            Launch {
                workflow: r.workflow,
                args: r.args,
                model: r.model,
                wait: r.wait,
                caller_session: ctx.session_id.clone(),
                origin_call_id: ctx.call_id.clone(),
                caller_cancel: Some(ctx.cancel.clone()),
            },
        )
        .map_err(|e| ToolError::Failed(e.to_string()))?;
        match launched {
            Launched::Started { job_id, run_id } => {
                let v = json!({
                    "jobId": job_id,
                    "runId": run_id,
                    "workflowKey": key,
                    "status": "started",
                    "background": true,
                });
                Ok(json_out(
                    format!(
                        "Workflow {key} started in the background as {job_id} ({run_id}). Its result arrives as a message when it ends; do not poll. cancel_job {{\"jobId\": \"{job_id}\"}} stops it.\n{}",
                        pretty(&v)
                    ),
                    v,
                ))
            }
            Launched::Finished(report) => {
                let v = serde_json::to_value(&report).unwrap_or(Value::Null);
                let head = match report.status.as_str() {
                    "completed" => format!("Workflow {key} completed ({}).", report.run_id),
                    s => format!(
                        "Workflow {key} {s} ({}): {}",
                        report.run_id,
                        report.error.as_deref().unwrap_or("no details")
                    ),
                };
                Ok(json_out(format!("{head}\n{}", pretty(&v)), v))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------

pub struct ListJobs;

impl TypedTool for ListJobs {
    type Args = ListJobsArgs;
    const NAME: &'static str = "list_jobs";
    const GROUP: &'static str = "jobs";
    const DESCRIPTION: &'static str = "List background jobs (workflow runs, background invoke_agent and bash), newest first: by default only this session's; all:true lists every job of the project. Finished jobs deliver their result as a message by themselves, so there is no need to poll.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Jobs])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, args: &ListJobsArgs) -> Result<ToolOutput, ToolError> {
        let engine = engine(ctx)?;
        let all = args.all.unwrap_or(false);
        let status = args.status.map(|s| s.0);
        let owner = (!all).then_some(ctx.session_id.as_str());
        let jobs = engine.jobs().list(owner, status);
        let v = json!({"jobs": jobs});
        let head = if jobs.is_empty() {
            if all {
                "No jobs.".to_string()
            } else {
                "This session has no jobs (all:true lists every job of the project).".to_string()
            }
        } else {
            format!("{} job(s).", jobs.len())
        };
        Ok(json_out(format!("{head}\n{}", pretty(&v)), v))
    }
}

pub struct GetJob;

impl TypedTool for GetJob {
    type Args = JobIdArgs;
    const NAME: &'static str = "get_job";
    const GROUP: &'static str = "jobs";
    const DESCRIPTION: &'static str = "One job in full: its status, progress, the complete result once it has ended, and kind-specific detail (a workflow's sessions, questions and log; a command's output).";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Jobs])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, args: &JobIdArgs) -> Result<ToolOutput, ToolError> {
        let engine = engine(ctx)?;
        let id = args.job_id.as_str();
        let record = engine
            .jobs()
            .get(id)
            .ok_or_else(|| ToolError::failed(JobError::Unknown(id.to_string()).to_string()))?;
        let mut v = serde_json::to_value(&record.snapshot).unwrap_or_else(|_| json!({}));
        v["result"] = record.result.unwrap_or(Value::Null);
        v["detail"] = record.detail.unwrap_or(Value::Null);
        Ok(json_out(pretty(&v), v))
    }
}

pub struct CancelJob;

impl TypedTool for CancelJob {
    type Args = CancelJobArgs;
    const NAME: &'static str = "cancel_job";
    const GROUP: &'static str = "jobs";
    const DESCRIPTION: &'static str = "Stop one of this session's running or waiting jobs. The stop propagates (a workflow's script and the agents it runs, a command's process); the final status, cancelled, is confirmed by the job's completion message.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Jobs])
    };
    fn run(&self, ctx: &ToolCtx, args: &CancelJobArgs) -> Result<ToolOutput, ToolError> {
        let engine = engine(ctx)?;
        let id = args.job_id.as_str();
        let snap = engine
            .jobs()
            .cancel(id, Some(&ctx.session_id))
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let v = json!({
            "jobId": snap.job_id,
            "kind": snap.kind,
            "previousStatus": snap.status.as_str(),
            "status": "cancelling",
        });
        Ok(json_out(
            format!(
                "Cancellation of {} requested; it stops shortly and its final status (cancelled) arrives as a message.\n{}",
                snap.job_id,
                pretty(&v)
            ),
            v,
        ))
    }
}
