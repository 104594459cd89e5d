//! Research runs (seeds/fusion-engine-tools.txt; notes §2.4, §5): `fn_research_run`,
//! `fn_research_list`, `fn_research_get`, `fn_research_cancel`. Not to be confused with
//! `crate::tools::research` (ranking snapshots) or `fn_web_fetch` (one page).
//!
//! A run is a bounded background job (see [`super::research_job`] for its steps and limits)
//! with a durable record in `project.sqlite` (`crate::board::research`). Results are read
//! with `fn_research_get` (Fusion's model); the job has no owner session, so its end is not
//! delivered as a message — `wait_for_completion` is how a caller waits.
//!
//! **Gating (notes: Gate NET, Mut yes).** `fn_research_run` is declared mutating (it writes a
//! run record and starts a job) *and* egress (it sends the query to the search provider and
//! fetches pages), like Fusion's `network_api` category: under `supervised` every call waits
//! for the author, whose preview shows the query, the search requests (host, URL, body fields;
//! the API key is a header and never shown), that up to [`MAX_SOURCES`] result pages will be
//! fetched (their hosts are known only after the search: approving the run approves those
//! fetches; each still passes the SSRF guard and `[web] allow_hosts`), and the limits.
//! "Approve for session" also grants the search hosts, as the egress gate does. Anything that
//! can be refused without the network — a blank query, no search provider configured, no
//! agent host to run the synthesis — is refused before the author is asked, and nothing is
//! written. `fn_research_cancel` is mutating too (notes: Mut yes) and sends nothing: its
//! preview names the run; a run that ends between preview and approval makes it stale.
//! `fn_research_retry` (Fusion: `network_api` like fn_research_run) is gated as fn_research_run
//! is: it starts a new run of a failed or cancelled run's query — a new record whose `retryOf`
//! names the old one, which stays as it ended — and its preview shows the same search
//! requests and limits, and which run it retries. The retried run ending differently
//! between preview and approval (it cannot: only pending/running runs change) is no concern;
//! a pending, running or completed run is refused before the author is asked.
//!
//! **Interrupted runs.** Jobs are not resumed across a restart (the job store marks them
//! `interrupted`); a run whose job is gone is recorded `failed` ("interrupted: …") the next
//! time fn_research_get, fn_research_list or fn_research_cancel reads it.
//!
//! **Errors** are error results with `details.code`: `RESEARCH_RUN_NOT_FOUND`,
//! `RESEARCH_RUN_FINISHED` (cancelling a run that ended), `RESEARCH_RUN_NOT_RETRYABLE`
//! (retrying a run that is pending, running or completed), `RESEARCH_UNAVAILABLE` (no agent host
//! or job store: a bare `nbook call`), `RESEARCH_START_FAILED`. A run whose provider fails is
//! not a tool error: the run is `failed` with its `error`.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::board;
use super::research_job::{
    Job, FETCH_MAX_BYTES, FETCH_TIMEOUT, MAX_DURATION, MAX_SOURCES, SEARCH_RESULTS, SOURCE_CHARS,
    SYNTHESIS_PROFILE,
};
use crate::board::research::{self as rr, End, NewRun, Run, RunStatus, TokenUsage};
use crate::engine::effects::display_url;
use crate::engine::jobs::{JobKind, JobStart};
use crate::engine::tool::{Effects, EgressRequest, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{Preview, PreviewBody, TargetState};
use crate::tools::web::search_requests;

pub const DEFAULT_MAX_WAIT_MS: u64 = 90_000;
pub const DEFAULT_LIST_LIMIT: usize = 10;

#[derive(Debug, thiserror::Error)]
pub enum ResearchError {
    #[error("no research run {id}; fn_research_list lists the runs")]
    NotFound { id: String },
    #[error(
        "research run {id} is already {status}; only a pending or running run can be cancelled"
    )]
    Finished { id: String, status: &'static str },
    #[error("research run {id} is {status}; only a failed or cancelled run can be retried")]
    NotRetryable { id: String, status: &'static str },
    #[error("research runs need {0}; run them from the TUI or `nbook run`, where agents run")]
    Unavailable(&'static str),
    #[error("the research run could not be started: {0}")]
    Start(String),
    #[error("{0}")]
    Store(#[from] crate::board::BoardError),
}

impl ResearchError {
    fn code(&self) -> &'static str {
        match self {
            ResearchError::NotFound { .. } => "RESEARCH_RUN_NOT_FOUND",
            ResearchError::Finished { .. } => "RESEARCH_RUN_FINISHED",
            ResearchError::NotRetryable { .. } => "RESEARCH_RUN_NOT_RETRYABLE",
            ResearchError::Unavailable(_) => "RESEARCH_UNAVAILABLE",
            ResearchError::Start(_) => "RESEARCH_START_FAILED",
            ResearchError::Store(e) => e.code(),
        }
    }
}

impl From<ResearchError> for ToolError {
    fn from(e: ResearchError) -> ToolError {
        let mut details = json!({"code": e.code()});
        match &e {
            ResearchError::NotFound { id } => details["runId"] = json!(id),
            ResearchError::Finished { id, status } | ResearchError::NotRetryable { id, status } => {
                details["runId"] = json!(id);
                details["status"] = json!(status);
            }
            _ => {}
        }
        ToolError::Coded {
            message: format!("{e} (nothing was changed)"),
            details,
        }
    }
}

fn require(ctx: &ToolCtx, id: &str) -> Result<Run, ResearchError> {
    let id = id.trim();
    let r = board(ctx)
        .read(|c| rr::load(c, id))?
        .ok_or_else(|| ResearchError::NotFound { id: id.to_string() })?;
    reconcile(ctx, r)
}

/// A run the row says is pending or running, whose job is not running in this process
/// (the program stopped while it ran: the job store marked the job `interrupted` when it
/// reopened), is recorded failed — never left "running" for ever, never resumed. A run
/// with no job yet is only judged so once it is older than a run may last.
fn reconcile(ctx: &ToolCtx, r: Run) -> Result<Run, ResearchError> {
    let Some(services) = &ctx.services else {
        return Ok(r);
    };
    if r.status.is_final() {
        return Ok(r);
    }
    let live = match &r.job_id {
        Some(j) => services
            .jobs()
            .get(j)
            .is_some_and(|j| !j.snapshot.status.is_final()),
        None => !older_than(&r.created_at, MAX_DURATION),
    };
    if live {
        return Ok(r);
    }
    let why =
        "interrupted: the program stopped while this run ran; start it again if it is still needed";
    let b = board(ctx);
    rr::finish(&b, &r.id, &End::Failed(why.into()), &r.token_usage)?;
    Ok(b.read(|c| rr::load(c, &r.id))?.unwrap_or(r))
}

fn older_than(rfc3339: &str, age: Duration) -> bool {
    let fmt = &time::format_description::well_known::Rfc3339;
    time::OffsetDateTime::parse(rfc3339, fmt)
        .map(|t| time::OffsetDateTime::now_utc() - t > age)
        .unwrap_or(true)
}

/// A run as text for the model: status line, summary, findings with their sources.
fn run_text(r: &Run) -> String {
    let mut t = format!("Research run {} ({}): {}", r.id, r.status.as_str(), r.query);
    if let Some(of) = &r.retry_of {
        t.push_str(&format!("\nA retry of {of}."));
    }
    if let Some(e) = &r.error {
        t.push_str(&format!("\nError: {e}"));
    }
    let fetched = r.sources.iter().filter(|s| s.status == "fetched").count();
    t.push_str(&format!(
        "\nSources fetched: {fetched} of {} found",
        r.sources.len()
    ));
    if let Some(res) = &r.results {
        t.push_str(&format!("\n\nSummary: {}\n", res.summary));
        for (i, f) in res.findings.iter().enumerate() {
            t.push_str(&format!(
                "\n{}. {} [{}]",
                i + 1,
                f.text,
                f.citations.join(", ")
            ));
        }
        if !res.citations.is_empty() {
            t.push_str("\n\nCitations:");
            for c in &res.citations {
                t.push_str(&format!("\n- {} — {}", c.title, c.url));
            }
        }
    } else if !r.status.is_final() {
        t.push_str("\nNot finished yet: fn_research_get shows it later.");
    }
    t
}

fn output(r: &Run) -> ToolOutput {
    ToolOutput {
        content: run_text(r),
        details: Some(r.details()),
        ..ToolOutput::default()
    }
}

// ---- fn_research_run ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// What to research (sent to the web search provider).
    #[schemars(length(min = 2, max = 500))]
    pub query: String,
    /// Wait for the run to end (up to max_wait_ms) before answering; default false.
    pub wait_for_completion: Option<bool>,
    /// How long to wait when wait_for_completion is true, default 90000 (0–600000).
    #[schemars(range(min = 0, max = 600000))]
    pub max_wait_ms: Option<u64>,
}

fn query_of(a: &RunArgs) -> Result<String, ToolError> {
    let q = a.query.split_whitespace().collect::<Vec<_>>().join(" ");
    if q.chars().count() < 2 {
        return Err(ToolError::Coded {
            message: "the query needs at least 2 non-blank characters (nothing was changed)".into(),
            details: json!({"code": "INVALID_INPUT", "field": "query"}),
        });
    }
    Ok(q)
}

/// Refuse, before anything is asked or sent, a run that could not go anywhere.
fn preconditions(ctx: &ToolCtx, a: &RunArgs) -> Result<(String, Vec<EgressRequest>), ToolError> {
    let q = query_of(a)?;
    let requests = can_run(ctx, &q)?;
    Ok((q, requests))
}

/// The search requests a run of `q` sends, once nothing keeps it from running.
fn can_run(ctx: &ToolCtx, q: &str) -> Result<Vec<EgressRequest>, ToolError> {
    let services = ctx
        .services
        .as_ref()
        .ok_or(ResearchError::Unavailable("the engine's job store"))?;
    if services.host().is_none() {
        return Err(
            ResearchError::Unavailable("the agent host (the synthesis is an agent)").into(),
        );
    }
    if services.profiles().get(SYNTHESIS_PROFILE).is_none() {
        return Err(
            ResearchError::Start(format!("the profile {SYNTHESIS_PROFILE} is missing")).into(),
        );
    }
    search_requests(&ctx.config, q, SEARCH_RESULTS)
}

/// What the author reads before a run of `q` starts: the search requests and the limits.
fn run_preview_text(q: &str, requests: &[EgressRequest]) -> String {
    let mut text = format!("Research: {q}\n\nSearch (the first provider that answers):\n");
    for r in requests {
        text.push_str(&format!("  {} {}\n", r.method, display_url(&r.url)));
        for (k, v) in &r.body {
            text.push_str(&format!("      {k}: {v}\n"));
        }
    }
    text.push_str(&format!(
        "\nThen fetch up to {MAX_SOURCES} of the {SEARCH_RESULTS} result pages (GET; their hosts are known only after the search; private addresses are refused), \
         each within {} s and {FETCH_MAX_BYTES} bytes, and give at most {SOURCE_CHARS} characters of each to a {SYNTHESIS_PROFILE} agent (a model run). \
         The whole run stops after {} s.\n\nWrites: a new research run record and a background job.",
        FETCH_TIMEOUT.as_secs(),
        MAX_DURATION.as_secs()
    ));
    text
}

pub struct ResearchRun;

impl TypedTool for ResearchRun {
    type Args = RunArgs;
    const NAME: &'static str = "fn_research_run";
    const GROUP: &'static str = "research";
    const DESCRIPTION: &'static str = "Start a bounded research run: a web search (the configured providers), a fetch of up to 5 of the result pages, then a synthesis agent that writes findings, each citing fetched sources. Runs in the background; the author approves each run (it sends the query off the machine). wait_for_completion (default false) waits up to max_wait_ms (default 90000) and returns the status then. details {runId, status (pending | running | completed | failed | cancelled), summary, findings [{text, citations}], citations [{url, title}], sourceCount, error}. Read it later with fn_research_get; a failed provider makes the run failed with its error.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Network, Board, Jobs, Agents]).egress()
    };
    fn egress(&self, ctx: &ToolCtx, a: &RunArgs) -> Result<Vec<EgressRequest>, ToolError> {
        preconditions(ctx, a).map(|(_, r)| r)
    }
    fn preview(&self, ctx: &ToolCtx, a: &RunArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let (q, requests) = preconditions(ctx, a)?;
        let mut text = run_preview_text(&q, &requests);
        if a.wait_for_completion == Some(true) {
            text.push_str(&format!(
                "\nThe call waits up to {} ms for the run to end.",
                a.max_wait_ms.unwrap_or(DEFAULT_MAX_WAIT_MS)
            ));
        }
        Ok(Preview {
            summary: format!(
                "fn_research_run: research {:?}",
                crate::board::snippet(&q, 60)
            ),
            body: PreviewBody::Text { text },
            targets: Vec::new(),
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &RunArgs) -> Result<ToolOutput, ToolError> {
        let (query, _) = preconditions(ctx, a)?;
        let wait = (a.wait_for_completion == Some(true))
            .then(|| Duration::from_millis(a.max_wait_ms.unwrap_or(DEFAULT_MAX_WAIT_MS)));
        start(ctx, query, None, wait)
    }
}

/// Record a new run of `query` (a retry of `retry_of`), start its job and answer with its
/// record — after waiting up to `wait` for it to end.
fn start(
    ctx: &ToolCtx,
    query: String,
    retry_of: Option<String>,
    wait: Option<Duration>,
) -> Result<ToolOutput, ToolError> {
    let services = ctx
        .services
        .clone()
        .ok_or(ResearchError::Unavailable("the engine's job store"))?;
    let host = services.host().ok_or(ResearchError::Unavailable(
        "the agent host (the synthesis is an agent)",
    ))?;
    let b = board(ctx);
    let mut tags = vec![ctx.profile.key.clone()];
    if let Some(t) = ctx
        .session_state
        .get(super::SESSION_TASK)
        .and_then(Value::as_str)
    {
        tags.push(t.to_string());
    }
    let run = rr::create(
        &b,
        &NewRun {
            query: query.clone(),
            trigger: format!("{} (session {})", ctx.profile.key, ctx.session_id),
            session_id: Some(ctx.session_id.clone()),
            job_id: None,
            tags,
            retry_of,
        },
    )
    .map_err(ResearchError::from)?;
    let started = services.jobs().start(JobStart {
        kind: JobKind::Research,
        title: format!("research {}: {}", run.id, crate::board::snippet(&query, 60)),
        // No owner: the result is read with fn_research_get, not delivered as a message.
        owner_session_id: None,
        origin_tool_call_id: Some(ctx.call_id.clone()),
        reference: json!({"researchRunId": run.id, "requestedBy": ctx.session_id}),
        preview: Some(crate::board::snippet(&query, 120)),
    });
    let (job_id, token) = match started {
        Ok(x) => x,
        Err(e) => {
            // The record says why it never ran, rather than staying pending for ever.
            let why = format!("the job could not be started: {e}");
            let _ = rr::finish(
                &b,
                &run.id,
                &End::Failed(why.clone()),
                &TokenUsage::default(),
            );
            return Err(ResearchError::Start(why).into());
        }
    };
    if let Err(e) = rr::set_job(&b, &run.id, &job_id) {
        let why = format!("the job could not be recorded: {e}");
        let _ = rr::finish(
            &b,
            &run.id,
            &End::Failed(why.clone()),
            &TokenUsage::default(),
        );
        let _ = services
            .jobs()
            .finish(&job_id, Err::<Value, _>(why.clone()));
        return Err(ResearchError::Start(why).into());
    }
    let job = Job {
        board: b.clone(),
        config: ctx.config.clone(),
        services: services.clone(),
        host,
        run_id: run.id.clone(),
        job_id: job_id.clone(),
        query,
        token,
    };
    std::thread::spawn(move || job.run());
    if let Some(wait) = wait {
        let until = Instant::now() + wait;
        // The job store is in memory: polling it is cheap. The call's own cancel (its
        // agent run was stopped) ends the wait, not the run.
        while Instant::now() < until && !ctx.cancel.is_cancelled() {
            if services
                .jobs()
                .get(&job_id)
                .is_none_or(|j| j.snapshot.status.is_final())
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let now = require(ctx, &run.id)?;
    Ok(output(&now))
}

// ---- fn_research_list ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    pub status: Option<RunStatus>,
    /// At most this many runs, newest first; default 10 (1–100).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u64>,
}

pub struct ResearchList;

impl TypedTool for ResearchList {
    type Args = ListArgs;
    const NAME: &'static str = "fn_research_list";
    const GROUP: &'static str = "research";
    const DESCRIPTION: &'static str = "List recent research runs, newest first, with their status and summary. status filters (pending | running | completed | failed | cancelled); limit default 10 (1–100). details {runs [{runId, query, status, summary, sourceCount, error, createdAt, finishedAt}], count}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Board])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &ListArgs) -> Result<ToolOutput, ToolError> {
        let limit = a
            .limit
            .map_or(DEFAULT_LIST_LIMIT, |l| l.clamp(1, 100) as usize);
        let runs = board(ctx)
            .read(|c| rr::list(c, a.status, limit))
            .map_err(ResearchError::from)?
            .into_iter()
            .map(|r| reconcile(ctx, r))
            .collect::<Result<Vec<_>, _>>()?;
        // A run reconciled to `failed` no longer matches a pending/running filter.
        let runs: Vec<Run> = runs
            .into_iter()
            .filter(|r| a.status.is_none_or(|s| r.status == s))
            .collect();
        let rows: Vec<Value> = runs
            .iter()
            .map(|r| {
                let d = r.details();
                json!({
                    "runId": r.id, "query": r.query, "status": r.status,
                    "summary": d["summary"], "sourceCount": d["sourceCount"],
                    "error": r.error, "createdAt": r.created_at, "finishedAt": r.finished_at,
                })
            })
            .collect();
        let mut text = match (runs.len(), a.status) {
            (0, Some(s)) => format!("No {} research runs.", s.as_str()),
            (0, None) => "No research runs yet.".to_string(),
            (n, _) => format!("{n} research run(s), newest first:"),
        };
        for r in &runs {
            text.push_str(&format!("\n- {} [{}] {}", r.id, r.status.as_str(), r.query));
            if let Some(s) = r.results.as_ref().map(|x| &x.summary) {
                text.push_str(&format!(" — {}", crate::board::snippet(s, 100)));
            }
            if let Some(e) = &r.error {
                text.push_str(&format!(" — error: {}", crate::board::snippet(e, 100)));
            }
        }
        Ok(ToolOutput {
            content: text,
            details: Some(json!({"runs": rows, "count": rows.len()})),
            ..ToolOutput::default()
        })
    }
}

// ---- fn_research_get ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdArgs {
    /// The run's id (RR-…), as fn_research_run or fn_research_list gave it.
    #[schemars(length(min = 1, max = 64))]
    pub id: String,
}

pub struct ResearchGet;

impl TypedTool for ResearchGet {
    type Args = IdArgs;
    const NAME: &'static str = "fn_research_get";
    const GROUP: &'static str = "research";
    const DESCRIPTION: &'static str = "Read one research run: status, summary, findings with citations, sources (fetched or not, with errors), events and token usage. details as fn_research_run's plus sources, events, tokenUsage. An unknown id is RESEARCH_RUN_NOT_FOUND.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Board])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, a: &IdArgs) -> Result<ToolOutput, ToolError> {
        Ok(output(&require(ctx, &a.id)?))
    }
}

// ---- fn_research_cancel ----

pub struct ResearchCancel;

/// The run, if it can still be cancelled.
fn cancellable(ctx: &ToolCtx, id: &str) -> Result<Run, ToolError> {
    let r = require(ctx, id)?;
    if r.status.is_final() {
        return Err(ResearchError::Finished {
            id: r.id,
            status: r.status.as_str(),
        }
        .into());
    }
    Ok(r)
}

impl TypedTool for ResearchCancel {
    type Args = IdArgs;
    const NAME: &'static str = "fn_research_cancel";
    const GROUP: &'static str = "research";
    const DESCRIPTION: &'static str = "Cancel a pending or running research run: it stops at once (its job too) and is recorded cancelled; nothing it found is kept as results. A run that already ended is RESEARCH_RUN_FINISHED, an unknown id RESEARCH_RUN_NOT_FOUND; nothing changes then.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Board, Jobs])
    };
    fn preview(&self, ctx: &ToolCtx, a: &IdArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let r = cancellable(ctx, &a.id)?;
        Ok(Preview {
            summary: format!("fn_research_cancel: cancel research run {}", r.id),
            body: PreviewBody::Text {
                text: format!(
                    "Cancel research run {} ({}): {}\nIts job {} stops; the run is recorded cancelled.",
                    r.id,
                    r.status.as_str(),
                    r.query,
                    r.job_id.as_deref().unwrap_or("(none)")
                ),
            },
            // Pending → running is no reason to ask again; an ended run is.
            targets: vec![TargetState {
                key: format!("research/run/{}", r.id),
                fingerprint: "not ended".into(),
            }],
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &IdArgs) -> Result<ToolOutput, ToolError> {
        let r = cancellable(ctx, &a.id)?;
        let b = board(ctx);
        // The row first (guarded: a run that ended meanwhile stays as it ended), then the
        // job's token; the runner sees either and stops.
        let changed =
            rr::finish(&b, &r.id, &End::Cancelled, &r.token_usage).map_err(ResearchError::from)?;
        if !changed {
            return Err(cancellable(ctx, &r.id).err().unwrap_or_else(|| {
                ResearchError::Finished {
                    id: r.id.clone(),
                    status: "ended",
                }
                .into()
            }));
        }
        if let (Some(job), Some(s)) = (&r.job_id, &ctx.services) {
            // Already ended (it noticed the row first) is fine: it ends cancelled either way.
            let _ = s.jobs().cancel(job, None);
        }
        let now = require(ctx, &r.id)?;
        Ok(output(&now))
    }
}

// ---- fn_research_retry ----

pub struct ResearchRetry;

/// The run to retry, if it can be retried, and what a new run of its query sends.
fn retryable(ctx: &ToolCtx, id: &str) -> Result<(Run, Vec<EgressRequest>), ToolError> {
    let r = require(ctx, id)?;
    if !r.retryable() {
        return Err(ResearchError::NotRetryable {
            id: r.id,
            status: r.status.as_str(),
        }
        .into());
    }
    let requests = can_run(ctx, &r.query)?;
    Ok((r, requests))
}

impl TypedTool for ResearchRetry {
    type Args = IdArgs;
    const NAME: &'static str = "fn_research_retry";
    const GROUP: &'static str = "research";
    const DESCRIPTION: &'static str = "Retry a failed or cancelled research run: its query runs again as a new run (a new id, retryOf naming the old run, which stays as it ended), approved like fn_research_run. details as fn_research_run's plus retryOf. A pending, running or completed run is RESEARCH_RUN_NOT_RETRYABLE, an unknown id RESEARCH_RUN_NOT_FOUND; nothing changes then.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Network, Board, Jobs, Agents]).egress()
    };
    fn egress(&self, ctx: &ToolCtx, a: &IdArgs) -> Result<Vec<EgressRequest>, ToolError> {
        retryable(ctx, &a.id).map(|(_, r)| r)
    }
    fn preview(&self, ctx: &ToolCtx, a: &IdArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let (r, requests) = retryable(ctx, &a.id)?;
        let why = r.error.as_deref().unwrap_or(r.status.as_str());
        let text = format!(
            "Retry of research run {} ({}: {})\n\n{}",
            r.id,
            r.status.as_str(),
            crate::board::snippet(why, 200),
            run_preview_text(&r.query, &requests)
        );
        Ok(Preview {
            summary: format!(
                "fn_research_retry: research {:?} again (retry of {})",
                crate::board::snippet(&r.query, 60),
                r.id
            ),
            body: PreviewBody::Text { text },
            targets: Vec::new(),
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &IdArgs) -> Result<ToolOutput, ToolError> {
        let (r, _) = retryable(ctx, &a.id)?;
        start(ctx, r.query, Some(r.id), None)
    }
}
