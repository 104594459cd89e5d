//! Agent evaluations and reflections (notes §2.5, §5) over `crate::board::evaluations`:
//! `fn_agent_rate` (the author rates a run, from the Sessions and Board panes),
//! `fn_read_evaluations` (an agent reads its own ratings and reflections) and
//! `fn_reflect_on_performance` (an agent appends a reflection on its own record).
//!
//! **Who is evaluated.** The agent a session runs as: the durable agent under the session-state
//! key [`SESSION_AGENT`] when there is one, else the session's permanent agent — its profile
//! key (`writer`, `executor`, …). Unlike agent memory (private to a session without a durable
//! agent), ratings belong to the permanent agent, so every run of `executor` adds to one
//! record. An agent reads and reflects on its own record only: neither tool takes an agent id.
//!
//! **Rating a run** (`fn_agent_rate`, author-only like `fn_goal_create`): `session_id` rates
//! that session's run (its agent, `runId` = the session id, `taskId` = the session's board
//! task); `task_id` alone rates the last role session that worked on the task (the newest
//! session whose `board.task` is it); `agent_id` alone rates a permanent agent without a run.
//! The rater is the author (`raterType` user, `raterId` author). It is a board change, so the
//! preview is the new row and nothing is written before the author's call is approved (the
//! author's own calls are, by the author).
//!
//! **Reflecting writes**, so `fn_reflect_on_performance` is a mutating call declared like
//! `fn_memory_append`: its preview is the reflections file's diff, its write target that file,
//! and it waits for approval under `supervised`. Its stale check also covers the record it was
//! computed from (the agent's ratings and the task log), so a reflection approved after a new
//! rating or verdict fails as stale instead of writing an outdated one. The text is derived
//! deterministically from the record (see `crate::board::evaluations`); only the id-free
//! timestamp and the window's start are taken again when the call runs.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::memory::SESSION_AGENT;
use super::{board, err, preview_op, read_output, run_op, SESSION_TASK};
use crate::board::evaluations::{self as ev, NewRating, RaterType, Reflection};
use crate::board::BoardError;
use crate::engine::author::AUTHOR_PROFILE;
use crate::engine::services::ToolServices;
use crate::engine::tool::{Effects, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;
use crate::engine::types::{Preview, PreviewBody};
use crate::protocol::{ChangeKind, FileChange, TargetState};

/// Characters of a reflection's focus area at most.
pub const FOCUS_MAX: usize = 500;

/// The agent a session's calls are evaluated as (see the module comment).
pub fn session_agent(state: &std::collections::BTreeMap<String, Value>, profile: &str) -> String {
    state
        .get(SESSION_AGENT)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| profile.to_string())
}

fn own_agent(ctx: &ToolCtx) -> String {
    session_agent(&ctx.session_state, &ctx.profile.key)
}

fn services(ctx: &ToolCtx) -> Result<&Arc<dyn ToolServices>, ToolError> {
    ctx.services.as_ref().ok_or_else(|| {
        err(BoardError::RunNotFound {
            why: "sessions are only known inside the engine".into(),
        })
    })
}

// ---- fn_agent_rate ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateArgs {
    /// The session whose run is rated: its agent gets the rating, runId = this id.
    #[schemars(length(min = 1, max = 200))]
    pub session_id: Option<String>,
    /// A board task: without session_id, the last role session that worked on it is rated.
    /// Recorded as the rating's taskId.
    #[schemars(length(min = 1, max = 64))]
    pub task_id: Option<String>,
    /// A permanent agent (profile key) rated without a particular run.
    #[schemars(length(min = 1, max = 200))]
    pub agent_id: Option<String>,
    /// 1 (poor) to 5 (excellent), a whole number.
    pub score: f64,
    /// What was good or wrong (at most 2000 characters).
    pub comment: Option<String>,
    /// e.g. prose, dialogue, pacing, continuity (at most 64 characters).
    pub category: Option<String>,
}

pub struct AgentRate;

impl AgentRate {
    /// The rating the arguments make: which agent and run (see the module comment).
    fn rating(ctx: &ToolCtx, a: &RateArgs) -> Result<NewRating, ToolError> {
        // The score and texts first: a bad rating says so whatever else is wrong.
        ev::check_score(a.score).map_err(err)?;
        let trimmed = |s: &Option<String>| {
            s.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let (agent, run, task) = if let Some(sid) = trimmed(&a.session_id) {
            let e = services(ctx)?;
            let s = e.session(&sid).ok_or_else(|| {
                err(BoardError::RunNotFound {
                    why: format!("no session {sid}; the Sessions pane lists them"),
                })
            })?;
            if s.profile == AUTHOR_PROFILE {
                return Err(err(BoardError::RunNotFound {
                    why: format!("{sid} holds your own edits; rate an agent's session"),
                }));
            }
            let st = e.session_state(&sid);
            let task = trimmed(&a.task_id).or_else(|| {
                st.get(SESSION_TASK)
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
            (session_agent(&st, &s.profile), Some(sid), task)
        } else if let Some(task) = trimmed(&a.task_id) {
            let e = services(ctx)?;
            let last = e
                .sessions()
                .into_iter()
                .filter(|s| s.profile != AUTHOR_PROFILE)
                .filter(|s| {
                    e.session_state(&s.id)
                        .get(SESSION_TASK)
                        .and_then(Value::as_str)
                        == Some(task.as_str())
                })
                .enumerate()
                .max_by(|(i, x), (j, y)| x.created_at.cmp(&y.created_at).then(i.cmp(j)))
                .map(|(_, s)| s)
                .ok_or_else(|| {
                    err(BoardError::RunNotFound {
                        why: format!("no session has worked on {task} yet"),
                    })
                })?;
            let st = e.session_state(&last.id);
            (session_agent(&st, &last.profile), Some(last.id), Some(task))
        } else if let Some(agent) = trimmed(&a.agent_id) {
            let known = agent != AUTHOR_PROFILE && services(ctx)?.profiles().get(&agent).is_some();
            if !known {
                return Err(err(BoardError::RunNotFound {
                    why: format!("no agent '{agent}'; fn_list_agents lists them"),
                }));
            }
            (agent, None, None)
        } else {
            return Err(err(BoardError::RatingInvalid {
                field: "session_id",
                message: "say what is rated: session_id, task_id or agent_id".into(),
            }));
        };
        Ok(NewRating {
            agent_id: agent,
            rater_type: RaterType::User,
            rater_id: crate::protocol::Actor::Author.as_str().to_string(),
            score: a.score,
            category: a.category.clone(),
            comment: a.comment.clone(),
            run_id: run,
            task_id: task,
        })
    }
}

impl TypedTool for AgentRate {
    type Args = RateArgs;
    const NAME: &'static str = "fn_agent_rate";
    const GROUP: &'static str = "agents";
    const DESCRIPTION: &'static str = "The author's rating of an agent's run, 1 to 5 with an optional comment and category (from the Sessions and Board panes). session_id rates that session's run (its agent; runId = the session); task_id alone rates the last role session that worked on the task; agent_id alone rates a permanent agent. A score that is not a whole number 1–5, a comment over 2000 characters or a category over 64 is RATING_INVALID; an unknown session, task run or agent is RUN_NOT_FOUND; nothing is stored then. Given only to the author.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Agents, Board]).author_only(
            "the author rates runs (R in the Sessions pane or on the Board); read your ratings with fn_read_evaluations",
        )
    };
    fn write_targets(&self, ctx: &ToolCtx, a: &RateArgs) -> Vec<String> {
        match Self::rating(ctx, a) {
            Ok(n) => vec![format!("board/agent-rating/{}", n.agent_id)],
            Err(_) => vec!["board/agent-rating".into()],
        }
    }
    fn preview(&self, ctx: &ToolCtx, a: &RateArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let n = Self::rating(ctx, a)?;
        preview_op(Self::NAME, &board(ctx), |c: &rusqlite::Connection| {
            ev::rate(c, &n)
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &RateArgs) -> Result<ToolOutput, ToolError> {
        let n = Self::rating(ctx, a)?;
        run_op(&board(ctx), |c: &rusqlite::Connection| ev::rate(c, &n))
    }
}

// ---- fn_read_evaluations ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {}

pub struct ReadEvaluations;

fn rating_line(r: &ev::Rating) -> String {
    let mut line = format!("- {}/5 by {} {}", r.score, r.rater_type, r.rater_id);
    if let Some(c) = &r.category {
        line.push_str(&format!(" [{c}]"));
    }
    if let Some(run) = &r.run_id {
        line.push_str(&format!(" · run {run}"));
    }
    if let Some(t) = &r.task_id {
        line.push_str(&format!(" · task {t}"));
    }
    line.push_str(&format!(" · {}", r.created_at));
    if let Some(c) = &r.comment {
        line.push_str(&format!(": {c}"));
    }
    line
}

impl TypedTool for ReadEvaluations {
    type Args = ReadArgs;
    const NAME: &'static str = "fn_read_evaluations";
    const GROUP: &'static str = "agents";
    const DESCRIPTION: &'static str = "Read your own evaluations: the summary of your ratings (count, average 1–5, per category) overall and for the last 7 days, your last 10 ratings (score, comment, category, rater, runId, taskId, createdAt) and your latest reflection with the 5 before it. You are the agent your session runs as (your durable agent, else your profile key); no other agent's record is readable. details {agentId, summary, last7Days, ratings[], reflections {latest, previous[]}, reflectionCount}.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Agents])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, _a: &ReadArgs) -> Result<ToolOutput, ToolError> {
        let agent = own_agent(ctx);
        let all = board(ctx).read(|c| ev::ratings(c, &agent)).map_err(err)?;
        let since = ev::days_ago(ev::WINDOW_DAYS);
        let summary = ev::summarize(&all);
        let week = ev::summarize(
            all.iter()
                .filter(|r| r.created_at.as_str() >= since.as_str()),
        );
        let recent: Vec<&ev::Rating> = all.iter().take(ev::RECENT_RATINGS).collect();
        let text = ev::reflections_text(&ctx.workspace, &agent).map_err(err)?;
        let reflections = ev::parse_reflections(&text);
        let mut newest = reflections.iter().rev();
        let latest = newest.next();
        let previous: Vec<&Reflection> = newest.take(ev::PREVIOUS_REFLECTIONS).collect();

        let avg = |a: Option<f64>| a.map(|a| format!("{a:.2}")).unwrap_or_else(|| "–".into());
        let mut out = format!(
            "Evaluations of {agent}: {} rating{}, average {}; last {} days: {}, average {}.",
            summary.count,
            if summary.count == 1 { "" } else { "s" },
            avg(summary.average),
            ev::WINDOW_DAYS,
            week.count,
            avg(week.average)
        );
        for (cat, s) in &summary.by_category {
            out.push_str(&format!(
                "\n  {cat}: {} · average {:.2}",
                s.count, s.average
            ));
        }
        if recent.is_empty() {
            out.push_str("\nNo ratings yet.");
        } else {
            out.push_str(&format!("\nLast {} ratings, newest first:", recent.len()));
            for r in &recent {
                out.push('\n');
                out.push_str(&rating_line(r));
            }
        }
        match latest {
            Some(l) => {
                out.push_str(&format!(
                    "\nLatest reflection {} ({}): {}",
                    l.id, l.timestamp, l.summary
                ));
                for i in &l.insights {
                    out.push_str(&format!("\n  insight: {i}"));
                }
                for i in &l.suggested_improvements {
                    out.push_str(&format!("\n  improve: {i}"));
                }
                for p in &previous {
                    out.push_str(&format!(
                        "\nEarlier {} ({}): {}",
                        p.id, p.timestamp, p.summary
                    ));
                }
            }
            None => out.push_str("\nNo reflections yet (fn_reflect_on_performance writes one)."),
        }
        Ok(read_output(
            out,
            json!({
                "agentId": agent,
                "summary": summary,
                "last7Days": week,
                "ratings": recent,
                "reflections": {"latest": latest, "previous": previous},
                "reflectionCount": reflections.len(),
            }),
        ))
    }
}

// ---- fn_reflect_on_performance ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReflectArgs {
    /// What to look at first, e.g. "dialogue" (at most 500 characters): ratings whose comment
    /// or category mention it lead the insights.
    pub focus_area: Option<String>,
}

pub struct ReflectOnPerformance;

/// A reflection computed now, with the file text before and after it and what it relied on.
struct Computed {
    agent: String,
    rel: String,
    old: String,
    new: String,
    reflection: Reflection,
    /// The record's fingerprint: the agent's ratings and the task log as read.
    record: String,
}

impl ReflectOnPerformance {
    fn focus(a: &ReflectArgs) -> Result<Option<String>, ToolError> {
        let f = a
            .focus_area
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        if let Some(f) = f {
            let n = f.chars().count();
            if n > FOCUS_MAX {
                return Err(err(BoardError::invalid(
                    "focus_area",
                    format!("it is {n} characters; at most {FOCUS_MAX}"),
                )));
            }
        }
        Ok(f.map(str::to_string))
    }

    fn compute(ctx: &ToolCtx, a: &ReflectArgs) -> Result<Computed, ToolError> {
        let focus = Self::focus(a)?;
        let agent = own_agent(ctx);
        let (ratings, runs, log_top) = board(ctx)
            .read(|c| {
                let top: i64 = c.query_row(
                    "SELECT COALESCE(MAX(id), 0) FROM nbook_board_task_log",
                    [],
                    |r| r.get(0),
                )?;
                Ok((ev::ratings(c, &agent)?, ev::board_record(c, &agent)?, top))
            })
            .map_err(err)?;
        let since = ev::days_ago(ev::WINDOW_DAYS);
        let (metrics, summary, insights, improvements) = ev::reflect(&ev::Record {
            agent: &agent,
            ratings: &ratings,
            runs: &runs,
            since: &since,
            focus: focus.as_deref(),
        });
        let rel = ev::reflections_rel(&agent);
        let old = ev::reflections_text(&ctx.workspace, &agent).map_err(err)?;
        let n = old.lines().filter(|l| !l.trim().is_empty()).count() + 1;
        let reflection = Reflection {
            id: format!("refl-{n}"),
            agent_id: agent.clone(),
            timestamp: crate::protocol::now_rfc3339(),
            // A session the scheduler started after the task was done (reflectionEnabled).
            trigger: if ctx
                .session_state
                .get(crate::runner::reflect::SESSION_MARK)
                .and_then(Value::as_bool)
                == Some(true)
            {
                crate::runner::reflect::TRIGGER.into()
            } else {
                ev::TRIGGER_MANUAL.into()
            },
            task_id: ctx
                .session_state
                .get(SESSION_TASK)
                .and_then(Value::as_str)
                .map(str::to_string),
            metrics,
            insights,
            suggested_improvements: improvements,
            summary,
        };
        let new = ev::append_line(&old, &reflection);
        let record = format!(
            "{} ratings, last {}; task log to {log_top}",
            ratings.len(),
            ratings.first().map(|r| r.id).unwrap_or(0)
        );
        Ok(Computed {
            agent,
            rel,
            old,
            new,
            reflection,
            record,
        })
    }
}

fn fingerprint(text: &str) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let hex: String = d
        .as_ref()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{} bytes sha256:{hex}", text.len())
}

impl TypedTool for ReflectOnPerformance {
    type Args = ReflectArgs;
    const NAME: &'static str = "fn_reflect_on_performance";
    const GROUP: &'static str = "agents";
    const DESCRIPTION: &'static str = "Reflect on your own record and keep the reflection: from your ratings and your board runs (the tasks you logged on, with their review verdicts approve / revise / rethink, blocked ends and failures), overall and for the last 7 days, it derives {summary, insights[], suggestedImprovements[]} and metrics, and appends them to .nbook/agents/<you>-reflections.jsonl. focus_area? (at most 500 characters) puts what the ratings say about it first and is echoed in the summary and metrics. This writes a file, so it waits for the author's approval like any mutating call (the preview is the file's diff). fn_read_evaluations reads the reflections back.";
    const MUTATES: Mutates = Mutates::Yes;
    const EFFECTS: Effects = {
        use crate::engine::tool::Domain::*;
        Effects::touches(&[Agents, Memory])
    };
    fn write_targets(&self, ctx: &ToolCtx, _a: &ReflectArgs) -> Vec<String> {
        vec![ev::reflections_rel(&own_agent(ctx))]
    }
    fn preview(&self, ctx: &ToolCtx, a: &ReflectArgs, _raw: &Value) -> Result<Preview, ToolError> {
        let c = Self::compute(ctx, a)?;
        let d = crate::tools::preview_diff::bounded_diff(&c.rel, &c.old, &c.new);
        Ok(Preview {
            summary: format!("Reflection {} of {} → {}", c.reflection.id, c.agent, c.rel),
            body: PreviewBody::Files {
                changes: vec![FileChange {
                    path: c.rel.clone(),
                    kind: if c.old.is_empty() {
                        ChangeKind::Add
                    } else {
                        ChangeKind::Update
                    },
                    move_to: None,
                    diff: d.text,
                    added: d.added,
                    removed: d.removed,
                }],
            },
            targets: vec![
                TargetState {
                    key: c.rel.clone(),
                    fingerprint: fingerprint(&c.old),
                },
                TargetState {
                    key: format!("agent-record/{}", c.agent),
                    fingerprint: c.record,
                },
            ],
        })
    }
    fn run(&self, ctx: &ToolCtx, a: &ReflectArgs) -> Result<ToolOutput, ToolError> {
        let c = Self::compute(ctx, a)?;
        ev::write_reflections(&ctx.workspace, &c.agent, &c.new).map_err(err)?;
        let r = &c.reflection;
        let mut content = format!("Reflection {} appended to {}.\n{}", r.id, c.rel, r.summary);
        for i in &r.insights {
            content.push_str(&format!("\n- insight: {i}"));
        }
        for i in &r.suggested_improvements {
            content.push_str(&format!("\n- improve: {i}"));
        }
        Ok(ToolOutput {
            content,
            details: Some(json!({
                "path": c.rel,
                "reflection": r,
                "focusArea": Self::focus(a)?,
                "summary": r.summary,
                "insights": r.insights,
                "suggestedImprovements": r.suggested_improvements,
                "metrics": r.metrics,
            })),
            changed_paths: vec![c.rel.clone()],
            ..ToolOutput::default()
        })
    }
}
