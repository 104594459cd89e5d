//! Agent evaluations and reflections (issue #17, "Durable agents" part 2; notes §2.5, §5):
//! the ratings of an agent's runs, the agent's reflections on its own record, and the
//! deterministic reflection built from that record.
//!
//! **Agents are id strings.** A permanent agent is a profile key today (`writer`,
//! `executor`, …); a durable agent has its own id. Everything here is keyed by that string, so
//! a new kind of agent plugs in by passing its id. A rating of a session's run is stored
//! against the session's agent with `runId` = the session id.
//!
//! **Ratings** are rows of `nbook_agent_rating` (migration 008; Fusion's `agent_ratings`):
//! `{id, agentId, raterType user|agent, raterId, score 1–5, category?, comment?, runId?,
//! taskId?, createdAt}`. The id is the row's integer (Fusion's are strings; nothing refers to a
//! rating by id but its own preview). A score outside 1–5, a non-integer score, a comment over
//! [`COMMENT_MAX`] characters or a category over [`CATEGORY_MAX`] is refused with
//! `RATING_INVALID` before anything is written.
//!
//! **Reflections** are lines of `.nbook/agents/<sanitizedAgentId>-reflections.jsonl` (the
//! agent id sanitized like agent memory's folder names), each `{id, agentId, timestamp,
//! trigger, taskId?, metrics, insights[], suggestedImprovements[], summary}`. A line that does
//! not parse (a torn last line) is skipped on read. The id is `refl-<n>`, n = the line's number
//! in the file, so the preview shows the id the write will use. `trigger` is `manual` for a
//! reflection the agent asked for (`fn_reflect_on_performance`) and `post-task` for one the
//! scheduler asked for after a task was done (`crate::runner::reflect`, a workflow's
//! `reflectionEnabled`); Fusion's scheduled trigger is not built yet.
//!
//! **The reflection is derived from the record, deterministically** — no model call. The
//! record is the agent's ratings and its board runs: the tasks whose log has an entry by the
//! agent (actor `<agent>` or `<agent> (session …)`), and on those tasks every entry with an
//! outcome from the agent's first entry on: review verdicts (`approve`, `revise`,
//! `rethink`), `blocked`, failures (`parked`, `unavailable`, `failed`) and `completed` /
//! `merged`. The same record gives the same text, so it is testable and costs nothing; the
//! agent reads the reflection and decides what to change (an agent with a model writes its own
//! conclusions into memory or its identity). The metrics hold the whole record and the last
//! [`WINDOW_DAYS`] days of it (the 7-day performance summary).

use std::collections::BTreeMap;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::error::{BoardError, BoardResult};
use super::{now, snippet, Outcome, Touched};
use crate::workspace::Workspace;

/// Characters of a rating's comment at most.
pub const COMMENT_MAX: usize = 2000;
/// Characters of a rating's category at most.
pub const CATEGORY_MAX: usize = 64;
/// Characters of an agent, run or task id at most.
const ID_MAX: usize = 200;
/// Ratings `fn_read_evaluations` lists (the newest).
pub const RECENT_RATINGS: usize = 10;
/// Reflections `fn_read_evaluations` lists before the latest one.
pub const PREVIOUS_REFLECTIONS: usize = 5;
/// Days of the performance summary.
pub const WINDOW_DAYS: i64 = 7;
/// The trigger of a reflection the agent asked for.
pub const TRIGGER_MANUAL: &str = "manual";

/// Who rated: the author (`user`) or another agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RaterType {
    User,
    Agent,
}

impl RaterType {
    pub fn as_str(self) -> &'static str {
        match self {
            RaterType::User => "user",
            RaterType::Agent => "agent",
        }
    }
}

/// One rating as stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rating {
    pub id: i64,
    pub agent_id: String,
    pub rater_type: String,
    pub rater_id: String,
    pub score: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    pub created_at: String,
}

/// A rating to store. `score` is the JSON number as given, so a fraction is refused with a
/// message instead of being cut.
#[derive(Clone, Debug, PartialEq)]
pub struct NewRating {
    pub agent_id: String,
    pub rater_type: RaterType,
    pub rater_id: String,
    pub score: f64,
    pub category: Option<String>,
    pub comment: Option<String>,
    pub run_id: Option<String>,
    pub task_id: Option<String>,
}

fn bad(field: &'static str, message: impl Into<String>) -> BoardError {
    BoardError::RatingInvalid {
        field,
        message: message.into(),
    }
}

/// Trimmed, `None` when empty.
fn given(s: &Option<String>) -> Option<String> {
    s.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The score as an integer 1–5, or why not.
pub fn check_score(score: f64) -> BoardResult<i64> {
    if !score.is_finite() || score.fract() != 0.0 {
        return Err(bad(
            "score",
            format!("{score} is not a whole number; give 1, 2, 3, 4 or 5"),
        ));
    }
    if !(1.0..=5.0).contains(&score) {
        return Err(bad(
            "score",
            format!("{score} is outside 1–5; give 1 (poor) to 5 (excellent)"),
        ));
    }
    Ok(score as i64)
}

/// The rating checked: the score, and the trimmed optional texts within their limits.
fn checked(n: &NewRating) -> BoardResult<(i64, Option<String>, Option<String>)> {
    let agent = n.agent_id.trim();
    if agent.is_empty() || agent.chars().count() > ID_MAX {
        return Err(bad(
            "agentId",
            format!("an agent id has 1 to {ID_MAX} characters"),
        ));
    }
    if n.rater_id.trim().is_empty() {
        return Err(bad("raterId", "say who rates"));
    }
    let score = check_score(n.score)?;
    let comment = given(&n.comment);
    if let Some(c) = &comment {
        let len = c.chars().count();
        if len > COMMENT_MAX {
            return Err(bad(
                "comment",
                format!("the comment is {len} characters; at most {COMMENT_MAX}"),
            ));
        }
    }
    let category = given(&n.category);
    if let Some(c) = &category {
        let len = c.chars().count();
        if len > CATEGORY_MAX {
            return Err(bad(
                "category",
                format!("the category is {len} characters; at most {CATEGORY_MAX}"),
            ));
        }
    }
    for (field, v) in [("runId", &n.run_id), ("taskId", &n.task_id)] {
        if v.as_deref().is_some_and(|s| s.chars().count() > ID_MAX) {
            return Err(bad(field, format!("at most {ID_MAX} characters")));
        }
    }
    Ok((score, comment, category))
}

/// Store a rating (a board [`super::Op`]).
pub fn rate(c: &Connection, n: &NewRating) -> BoardResult<Outcome> {
    let (score, comment, category) = checked(n)?;
    let agent = n.agent_id.trim();
    c.execute(
        "INSERT INTO nbook_agent_rating (agent_id, rater_type, rater_id, score, category, comment, run_id, task_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            agent,
            n.rater_type.as_str(),
            n.rater_id.trim(),
            score,
            category,
            comment,
            given(&n.run_id),
            given(&n.task_id),
            now()
        ],
    )?;
    let id = c.last_insert_rowid();
    let run = given(&n.run_id)
        .map(|r| format!(" (run {r})"))
        .unwrap_or_default();
    Ok(Outcome {
        text: format!("Rated {agent}{run} {score}/5."),
        value: json!({"ratingId": id, "agentId": agent, "score": score, "runId": given(&n.run_id), "taskId": given(&n.task_id)}),
        touched: vec![Touched::Rating(id)],
        ..Outcome::default()
    })
}

fn row(r: &rusqlite::Row) -> rusqlite::Result<Rating> {
    Ok(Rating {
        id: r.get(0)?,
        agent_id: r.get(1)?,
        rater_type: r.get(2)?,
        rater_id: r.get(3)?,
        score: r.get(4)?,
        category: r.get(5)?,
        comment: r.get(6)?,
        run_id: r.get(7)?,
        task_id: r.get(8)?,
        created_at: r.get(9)?,
    })
}

const COLUMNS: &str =
    "id, agent_id, rater_type, rater_id, score, category, comment, run_id, task_id, created_at";

pub fn load(c: &Connection, id: i64) -> BoardResult<Option<Rating>> {
    Ok(c.query_row(
        &format!("SELECT {COLUMNS} FROM nbook_agent_rating WHERE id = ?1"),
        [id],
        row,
    )
    .optional()?)
}

/// Every rating of `agent`, newest first.
pub fn ratings(c: &Connection, agent: &str) -> BoardResult<Vec<Rating>> {
    let mut st = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM nbook_agent_rating WHERE agent_id = ?1 ORDER BY id DESC"
    ))?;
    let rows = st.query_map([agent], row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Count and average of some ratings, overall and per category.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub count: usize,
    /// `None` without ratings; rounded to two decimals.
    pub average: Option<f64>,
    pub by_category: BTreeMap<String, CategorySummary>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CategorySummary {
    pub count: usize,
    pub average: f64,
}

fn mean(scores: &[i64]) -> Option<f64> {
    if scores.is_empty() {
        return None;
    }
    let m = scores.iter().sum::<i64>() as f64 / scores.len() as f64;
    Some((m * 100.0).round() / 100.0)
}

pub fn summarize<'a>(ratings: impl IntoIterator<Item = &'a Rating>) -> Summary {
    let mut all = Vec::new();
    let mut cats: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for r in ratings {
        all.push(r.score);
        if let Some(c) = &r.category {
            cats.entry(c.clone()).or_default().push(r.score);
        }
    }
    Summary {
        count: all.len(),
        average: mean(&all),
        by_category: cats
            .into_iter()
            .map(|(k, v)| {
                let average = mean(&v).unwrap_or_default();
                (
                    k,
                    CategorySummary {
                        count: v.len(),
                        average,
                    },
                )
            })
            .collect(),
    }
}

// ---- the board record ----

/// One outcome entry of a task the agent worked on.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOutcome {
    pub task_id: String,
    pub timestamp: String,
    pub outcome: String,
    pub action: String,
}

/// Whether a task-log actor is `agent`: the agent itself or one of its sessions.
pub fn is_actor(actor: &str, agent: &str) -> bool {
    actor == agent
        || actor
            .strip_prefix(agent)
            .is_some_and(|rest| rest.starts_with(" (session "))
}

/// The agent's board runs: per task it has a log entry on, every outcome entry from its first
/// entry there on, oldest first.
pub fn board_record(c: &Connection, agent: &str) -> BoardResult<Vec<RunOutcome>> {
    let mut st = c.prepare_cached(
        "SELECT id, task_id, at, action, outcome, actor FROM nbook_board_task_log ORDER BY id",
    )?;
    let rows = st.query_map([], |r| {
        Ok((
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, Option<String>>(5)?,
        ))
    })?;
    let mut worked: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut out = Vec::new();
    for r in rows {
        let (task, at, action, outcome, actor) = r?;
        if actor.as_deref().is_some_and(|a| is_actor(a, agent)) {
            worked.insert(task.clone());
        }
        if !worked.contains(&task) {
            continue;
        }
        if let Some(o) = outcome.filter(|o| !o.trim().is_empty()) {
            out.push(RunOutcome {
                task_id: task,
                timestamp: at,
                outcome: o,
                action,
            });
        }
    }
    Ok(out)
}

/// Outcome counts of some board runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BoardCounts {
    pub tasks: usize,
    pub approve: usize,
    pub revise: usize,
    pub rethink: usize,
    pub blocked: usize,
    pub failures: usize,
    pub completed: usize,
}

pub fn count<'a>(runs: impl IntoIterator<Item = &'a RunOutcome>) -> BoardCounts {
    let mut b = BoardCounts::default();
    let mut tasks = std::collections::BTreeSet::new();
    for r in runs {
        tasks.insert(r.task_id.as_str());
        match r.outcome.as_str() {
            "approve" => b.approve += 1,
            "revise" => b.revise += 1,
            "rethink" => b.rethink += 1,
            "blocked" => b.blocked += 1,
            "parked" | "unavailable" | "failed" => b.failures += 1,
            "completed" | "merged" => b.completed += 1,
            _ => {}
        }
    }
    b.tasks = tasks.len();
    b
}

/// The RFC 3339 time `days` days before now (records compare as text: same format, UTC).
pub fn days_ago(days: i64) -> String {
    (time::OffsetDateTime::now_utc() - time::Duration::days(days))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

// ---- reflections ----

/// One reflection line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reflection {
    pub id: String,
    pub agent_id: String,
    pub timestamp: String,
    pub trigger: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    pub metrics: Value,
    pub insights: Vec<String>,
    pub suggested_improvements: Vec<String>,
    pub summary: String,
}

/// The reflections file of `agent`, project-relative.
pub fn reflections_rel(agent: &str) -> String {
    format!(
        ".nbook/agents/{}-reflections.jsonl",
        super::memory::sanitize_agent(agent)
    )
}

fn io(action: &'static str, path: &str, source: std::io::Error) -> BoardError {
    BoardError::Io {
        action,
        path: path.to_string(),
        source,
    }
}

fn target(ws: &Workspace, rel: &str) -> BoardResult<crate::workspace::target::Target> {
    let t = ws.root_dir().target(rel).map_err(|why| {
        io(
            "open",
            rel,
            std::io::Error::new(std::io::ErrorKind::PermissionDenied, why.to_string()),
        )
    })?;
    if t.display() != rel {
        return Err(io(
            "open",
            rel,
            std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "it resolves to {} through a link; reflection files must be plain files",
                    t.display()
                ),
            ),
        ));
    }
    Ok(t)
}

/// The reflections file's text ("" when there is none).
pub fn reflections_text(ws: &Workspace, agent: &str) -> BoardResult<String> {
    let rel = reflections_rel(agent);
    let bytes = target(ws, &rel)?
        .read_bytes()
        .map_err(|e| io("read", &rel, e))?
        .unwrap_or_default();
    String::from_utf8(bytes).map_err(|_| BoardError::Corrupt {
        what: rel,
        message: "not UTF-8 text".into(),
    })
}

/// The reflections in a file's text, oldest first (lines that do not parse are skipped).
pub fn parse_reflections(text: &str) -> Vec<Reflection> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The file's text with `r` appended as its last line (a torn last line stays on its own).
pub fn append_line(old: &str, r: &Reflection) -> String {
    let mut text = old.to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&serde_json::to_string(r).unwrap_or_default());
    text.push('\n');
    text
}

/// Write the reflections file (atomic, through the held project folder).
pub fn write_reflections(ws: &Workspace, agent: &str, text: &str) -> BoardResult<()> {
    let rel = reflections_rel(agent);
    target(ws, &rel)?
        .write(text.as_bytes())
        .map_err(|e| io("write", &rel, e))
}

/// What a reflection is computed from.
pub struct Record<'a> {
    pub agent: &'a str,
    /// Newest first.
    pub ratings: &'a [Rating],
    /// Oldest first.
    pub runs: &'a [RunOutcome],
    /// The start of the performance window (RFC 3339).
    pub since: &'a str,
    pub focus: Option<&'a str>,
}

fn avg_text(a: Option<f64>) -> String {
    a.map(|a| format!("{a:.1}")).unwrap_or_else(|| "–".into())
}

/// The reflection's metrics, summary, insights and suggestions, from the record alone.
pub fn reflect(r: &Record) -> (Value, String, Vec<String>, Vec<String>) {
    let all = summarize(r.ratings);
    let recent: Vec<&Rating> = r
        .ratings
        .iter()
        .filter(|x| x.created_at.as_str() >= r.since)
        .collect();
    let week = summarize(recent.iter().copied());
    let board = count(r.runs);
    let board_week = count(r.runs.iter().filter(|x| x.timestamp.as_str() >= r.since));
    let mut insights = Vec::new();
    let mut improve = Vec::new();

    if all.count == 0 && r.runs.is_empty() {
        insights.push("There is no rating and no board run to learn from yet.".to_string());
        improve.push(
            "Finish a task or ask the author to rate a run (R in the Sessions or Board pane), then reflect again."
                .to_string(),
        );
    }
    if let Some(a) = all.average {
        let n = all.count;
        if a >= 4.0 {
            insights.push(format!(
                "The author rates your runs well: {a:.1} of 5 over {n} rating{}.",
                plural(n)
            ));
        } else if a <= 2.5 {
            insights.push(format!(
                "Your runs are rated low: {a:.1} of 5 over {n} rating{}.",
                plural(n)
            ));
            improve.push(
                "Reread the low-rated comments before your next run and change what they name."
                    .to_string(),
            );
        } else {
            insights.push(format!(
                "Your runs are rated middling: {a:.1} of 5 over {n} rating{}.",
                plural(n)
            ));
        }
    }
    if all.by_category.len() > 1 {
        if let Some((cat, s)) = all
            .by_category
            .iter()
            .min_by(|a, b| a.1.average.total_cmp(&b.1.average))
        {
            insights.push(format!(
                "Weakest category: {cat} ({:.1} of 5 over {}).",
                s.average, s.count
            ));
            improve.push(format!("Give {cat} particular care in the next runs."));
        }
    }
    if let (Some(w), Some(a)) = (week.average, all.average) {
        if week.count < all.count {
            let trend = if w > a + 0.25 {
                "better than"
            } else if w < a - 0.25 {
                "worse than"
            } else {
                "about the same as"
            };
            insights.push(format!(
                "The last {WINDOW_DAYS} days ({w:.1} over {}) rate {trend} your whole record ({a:.1}).",
                week.count
            ));
        }
    }
    if let Some(low) = r
        .ratings
        .iter()
        .find(|x| x.score <= 2 && x.comment.is_some())
    {
        insights.push(format!(
            "The latest low rating ({}/5) said: \"{}\"",
            low.score,
            snippet(low.comment.as_deref().unwrap_or(""), 160)
        ));
        improve.push(format!(
            "Answer that comment directly: \"{}\"",
            snippet(low.comment.as_deref().unwrap_or(""), 80)
        ));
    }
    let reviews = board.approve + board.revise + board.rethink;
    if reviews > 0 {
        let sent_back = board.revise + board.rethink;
        insights.push(format!(
            "{sent_back} of {reviews} review{} sent your work back ({} revise, {} rethink); {} approved it.",
            plural(reviews),
            board.revise,
            board.rethink,
            board.approve
        ));
        if sent_back * 2 >= reviews {
            improve.push(
                "Check the work against the task's acceptance criteria and the reviewer's last notes before fn_task_done."
                    .to_string(),
            );
        }
        if board.rethink > 0 {
            improve.push(
                "A RETHINK means the plan was wrong: question the PROMPT.md steps before drafting."
                    .to_string(),
            );
        }
    }
    if board.blocked > 0 {
        insights.push(format!(
            "{} run{} ended blocked.",
            board.blocked,
            plural(board.blocked)
        ));
        improve.push(
            "Say what blocks a task as soon as you see it (fn_task_log) and name the blocking tasks in blockedBy."
                .to_string(),
        );
    }
    if board.failures > 0 {
        insights.push(format!(
            "{} run{} failed or waited for the author (parked, no verdict).",
            board.failures,
            plural(board.failures)
        ));
        improve.push(
            "Keep runs inside the step timeout and end each with a clear result.".to_string(),
        );
    }
    if let Some(focus) = r.focus {
        let words: Vec<String> = focus
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() > 2)
            .map(str::to_lowercase)
            .collect();
        let matching: Vec<&Rating> = r
            .ratings
            .iter()
            .filter(|x| {
                let text = format!(
                    "{} {}",
                    x.comment.as_deref().unwrap_or(""),
                    x.category.as_deref().unwrap_or("")
                )
                .to_lowercase();
                words.iter().any(|w| text.contains(w.as_str()))
            })
            .collect();
        let scores: Vec<i64> = matching.iter().map(|x| x.score).collect();
        match matching.first() {
            Some(latest) => {
                insights.insert(
                    0,
                    format!(
                        "On {focus}: {} rating{} mention it ({} of 5); the latest said: \"{}\"",
                        matching.len(),
                        plural(matching.len()),
                        avg_text(mean(&scores)),
                        snippet(latest.comment.as_deref().unwrap_or(""), 160)
                    ),
                );
            }
            None => insights.insert(0, format!("On {focus}: no rating mentions it yet.")),
        }
    }

    let mut summary = format!(
        "{}: {} rating{} (average {}), {} board task{} ({} approved, {} revise, {} rethink, {} blocked, {} failed); last {WINDOW_DAYS} days: {} rating{} (average {}), {} task{}.",
        r.agent,
        all.count,
        plural(all.count),
        avg_text(all.average),
        board.tasks,
        plural(board.tasks),
        board.approve,
        board.revise,
        board.rethink,
        board.blocked,
        board.failures,
        week.count,
        plural(week.count),
        avg_text(week.average),
        board_week.tasks,
        plural(board_week.tasks),
    );
    if let Some(f) = r.focus {
        summary = format!("Focus: {f}. {summary}");
    }
    let mut metrics = json!({
        "ratings": all,
        "board": board,
        "last7Days": {"since": r.since, "ratings": week, "board": board_week},
        "windowDays": WINDOW_DAYS,
    });
    if let Some(f) = r.focus {
        metrics["focusArea"] = json!(f);
    }
    (metrics, summary, insights, improve)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rating(score: i64, comment: Option<&str>, category: Option<&str>, at: &str) -> Rating {
        Rating {
            id: 1,
            agent_id: "writer".into(),
            rater_type: "user".into(),
            rater_id: "author".into(),
            score,
            category: category.map(str::to_string),
            comment: comment.map(str::to_string),
            run_id: None,
            task_id: None,
            created_at: at.into(),
        }
    }

    #[test]
    fn scores_outside_one_to_five_and_fractions_are_refused() {
        for s in [0.0, 6.0, -1.0, 2.5, f64::NAN] {
            assert!(check_score(s).is_err(), "{s}");
        }
        for s in 1..=5 {
            assert_eq!(check_score(s as f64).unwrap(), s);
        }
    }

    #[test]
    fn actors_are_the_agent_or_its_sessions() {
        assert!(is_actor("executor", "executor"));
        assert!(is_actor("executor (session s-3)", "executor"));
        assert!(!is_actor("executor2 (session s-3)", "executor"));
        assert!(!is_actor("runner", "executor"));
    }

    #[test]
    fn the_reflection_follows_the_record() {
        let ratings = vec![
            rating(
                2,
                Some("The dialogue is stiff"),
                Some("dialogue"),
                "2026-01-02T00:00:00Z",
            ),
            rating(
                5,
                Some("Lovely pacing"),
                Some("pacing"),
                "2026-01-01T00:00:00Z",
            ),
        ];
        let runs = vec![RunOutcome {
            task_id: "NB-001".into(),
            timestamp: "2026-01-02T00:00:00Z".into(),
            outcome: "revise".into(),
            action: "Review REVISE".into(),
        }];
        let (metrics, summary, insights, improve) = reflect(&Record {
            agent: "writer",
            ratings: &ratings,
            runs: &runs,
            since: "2025-12-31T00:00:00Z",
            focus: Some("dialogue"),
        });
        assert_eq!(metrics["ratings"]["count"], 2);
        assert_eq!(metrics["ratings"]["average"], 3.5);
        assert_eq!(metrics["board"]["revise"], 1);
        assert_eq!(metrics["focusArea"], "dialogue");
        assert!(summary.starts_with("Focus: dialogue. writer: 2 ratings"));
        assert!(
            insights[0].contains("The dialogue is stiff"),
            "{insights:?}"
        );
        assert!(insights
            .iter()
            .any(|i| i.contains("Weakest category: dialogue")));
        assert!(improve.iter().any(|i| i.contains("acceptance criteria")));
    }
}
