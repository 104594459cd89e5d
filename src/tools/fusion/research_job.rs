//! The job behind `fn_research_run`: search, fetch the top sources, synthesise findings —
//! bounded, cancellable, and recorded in the run's row (`crate::board::research`) and in its
//! engine job (`JobKind::Research`, whose progress the Jobs view shows: phase `search`,
//! `fetch`, `synthesis`; done/total steps).
//!
//! **Steps.**
//! 1. *Search* with the configured web search providers (`[web]` of config.toml, tried in
//!    `search_order`, exactly as `web_search`), asking for [`SEARCH_RESULTS`] results.
//! 2. *Fetch* the first [`MAX_SOURCES`] distinct result URLs that pass the SSRF guard, one
//!    after the other, with nbook's web fetcher (the guard re-checks every hop), each within
//!    [`FETCH_TIMEOUT`] and [`FETCH_MAX_BYTES`]. Results the guard refuses or over the limit
//!    stay in `sources` as `found`; failed fetches as `failed` with their error. No source
//!    fetched → the run fails.
//! 3. *Synthesis* by an agent: a session of the system-only profile `research.synthesis`
//!    (only `report_result`, output schema `{summary, findings[{text, citations}]}`), started
//!    through the agent host as spawned children are, with the query and the fetched text
//!    (at most [`SOURCE_CHARS`] characters per source). The model is the one config.toml gives
//!    that profile (`[defaults.profiles]`, else `[defaults] model`). Citations must be URLs of
//!    fetched sources: others are dropped (an event says so), a finding left without one is
//!    dropped, and a synthesis with no finding left fails the run. Its token usage is the
//!    run's `tokenUsage`.
//!
//! **Limits.** The whole run stops after [`MAX_DURATION`] (failed, with the reason). Each step
//! runs on a helper thread while this thread watches the job's cancellation token and the
//! deadline, so a cancel or a timeout ends the run at once (an abandoned fetch ends by its
//! own timeout; a synthesis session's run is cancelled).
//!
//! **Ending.** The row is the truth: its final status is written in one guarded statement
//! (`board::research::finish`), and the job is ended to match it — if a cancel reached the
//! row first, the job is cancelled too.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::board::research::{
    self as rr, Citation, End, Finding, Results, RunStatus, Source, TokenUsage,
};
use crate::board::Board;
use crate::config::Config;
use crate::engine::agents::{AgentHost, InvokeMode, InvokeRequest};
use crate::engine::jobs::JobProgress;
use crate::engine::services::ToolServices;
use crate::tools::web::{fetch_page, precheck_url, search_blocking, Limits};

/// Search results asked of the provider.
pub const SEARCH_RESULTS: usize = 8;
/// Sources fetched at most.
pub const MAX_SOURCES: usize = 5;
/// Time one fetch may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(15);
/// Largest body kept per fetch (a longer page is cut there).
pub const FETCH_MAX_BYTES: usize = 512_000;
/// Characters of each source's text given to the synthesis.
pub const SOURCE_CHARS: usize = 6_000;
/// Time a whole run may take.
pub const MAX_DURATION: Duration = Duration::from_secs(300);
/// The profile of the synthesis session.
pub const SYNTHESIS_PROFILE: &str = "research.synthesis";

/// Everything a run needs, moved onto its thread.
pub struct Job {
    pub board: Board,
    pub config: Arc<Config>,
    pub services: Arc<dyn ToolServices>,
    pub host: Arc<dyn AgentHost>,
    pub run_id: String,
    pub job_id: String,
    pub query: String,
    pub token: CancellationToken,
}

/// Why a run stopped early.
#[derive(Debug)]
enum Stop {
    Cancelled,
    Failed(String),
}

impl Job {
    /// Run to the end and record it (called on the run's own thread).
    pub fn run(self) {
        let deadline = Instant::now() + MAX_DURATION;
        let mut usage = TokenUsage::default();
        let outcome = self.steps(deadline, &mut usage);
        let end = match outcome {
            _ if self.token.is_cancelled() => End::Cancelled,
            Ok(results) => End::Completed(results),
            Err(Stop::Cancelled) => End::Cancelled,
            Err(Stop::Failed(why)) => End::Failed(why),
        };
        let recorded = match rr::finish(&self.board, &self.run_id, &end, &usage) {
            Ok(true) => end,
            // Ended already (a cancel reached the row first): end the job as the row says.
            Ok(false) => match self.board.read(|c| rr::load(c, &self.run_id)) {
                Ok(Some(r)) if r.status == RunStatus::Cancelled => End::Cancelled,
                Ok(Some(r)) if r.status == RunStatus::Completed => end,
                Ok(Some(r)) => End::Failed(r.error.unwrap_or_else(|| "failed".into())),
                Ok(None) => End::Failed(format!("research run {} vanished", self.run_id)),
                Err(e) => End::Failed(e.to_string()),
            },
            Err(e) => {
                // The row could not be written: the job says why, so the failure is seen.
                End::Failed(format!(
                    "could not record the end of research run {}: {e}",
                    self.run_id
                ))
            }
        };
        let jobs = self.services.jobs();
        let result = match recorded {
            End::Cancelled => {
                self.token.cancel();
                Err("cancelled".to_string())
            }
            End::Completed(r) => Ok(json!({
                "runId": self.run_id,
                "summary": r.summary,
                "findings": r.findings.len(),
                "citations": r.citations.len(),
            })),
            End::Failed(why) => Err(why),
        };
        if let Err(e) = jobs.finish(&self.job_id, result) {
            tracing::warn!("research job {}: {e}", self.job_id);
        }
    }

    fn progress(&self, phase: &str, done: u64, total: u64) {
        let p = JobProgress {
            phase: Some(phase.into()),
            done,
            total,
        };
        if let Err(e) = self.services.jobs().progress(&self.job_id, p) {
            tracing::warn!("research job {}: {e}", self.job_id);
        }
    }

    fn event(&self, kind: &str, message: &str) -> Result<(), Stop> {
        match rr::push_event(&self.board, &self.run_id, kind, message) {
            Ok(true) => Ok(()),
            // The row ended under us: only a cancel does that.
            Ok(false) => Err(Stop::Cancelled),
            Err(e) => Err(Stop::Failed(format!("cannot record the run: {e}"))),
        }
    }

    fn sources(&self, sources: &[Source]) -> Result<(), Stop> {
        match rr::set_sources(&self.board, &self.run_id, sources) {
            Ok(true) => Ok(()),
            Ok(false) => Err(Stop::Cancelled),
            Err(e) => Err(Stop::Failed(format!("cannot record the sources: {e}"))),
        }
    }

    /// Run `f` on a helper thread while watching the cancel token and the deadline.
    fn step<T: Send + 'static>(
        &self,
        deadline: Instant,
        on_stop: impl FnOnce(),
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Stop> {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        loop {
            if self.token.is_cancelled() {
                on_stop();
                return Err(Stop::Cancelled);
            }
            if Instant::now() >= deadline {
                on_stop();
                return Err(Stop::Failed(format!(
                    "the run took longer than its limit of {} s and was stopped",
                    MAX_DURATION.as_secs()
                )));
            }
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(v) => return Ok(v),
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Stop::Failed(
                        "a step of the run stopped unexpectedly".into(),
                    ))
                }
            }
        }
    }

    fn steps(&self, deadline: Instant, usage: &mut TokenUsage) -> Result<Results, Stop> {
        match rr::mark_running(&self.board, &self.run_id) {
            Ok(true) => {}
            Ok(false) => return Err(Stop::Cancelled),
            Err(e) => return Err(Stop::Failed(format!("cannot record the run: {e}"))),
        }
        // 1. Search.
        self.progress("search", 0, 2 + MAX_SOURCES as u64);
        let (config, query) = (self.config.clone(), self.query.clone());
        let (provider, hits) = self
            .step(
                deadline,
                || {},
                move || search_blocking(&config, &query, SEARCH_RESULTS),
            )?
            .map_err(|e| Stop::Failed(format!("the web search failed: {e}")))?;
        let mut sources = self.pick(&hits);
        let chosen = sources.iter().filter(|s| s.status == "pending").count();
        self.event(
            "search",
            &format!("{provider}: {} result(s), fetching {chosen}", hits.len()),
        )?;
        self.sources(&sources)?;
        if chosen == 0 {
            return Err(Stop::Failed(format!(
                "the web search ({provider}) found no page that may be fetched for this query"
            )));
        }
        // 2. Fetch.
        let total = 2 + chosen as u64;
        let mut texts: Vec<(usize, String)> = Vec::new();
        let mut done = 1;
        for i in 0..sources.len() {
            if sources[i].status != "pending" {
                continue;
            }
            self.progress("fetch", done, total);
            let Ok(url) = reqwest::Url::parse(&sources[i].url) else {
                continue;
            };
            let web = self.config.web.clone();
            let limits = Limits {
                timeout: FETCH_TIMEOUT,
                max_body: FETCH_MAX_BYTES,
            };
            match self.step(deadline, || {}, move || fetch_page(&web, url, limits))? {
                Ok(page) => {
                    let chars = page.content.chars().count();
                    sources[i].status = "fetched".into();
                    sources[i].chars = Some(chars);
                    if sources[i].title.is_empty() {
                        sources[i].title = page.title.clone().unwrap_or_default();
                    }
                    texts.push((i, page.content.chars().take(SOURCE_CHARS).collect()));
                    self.event(
                        "fetch",
                        &format!("fetched {} ({chars} characters)", sources[i].url),
                    )?;
                }
                Err(e) => {
                    sources[i].status = "failed".into();
                    sources[i].error = Some(e.to_string());
                    self.event("fetch", &format!("could not fetch {}: {e}", sources[i].url))?;
                }
            }
            self.sources(&sources)?;
            done += 1;
        }
        if texts.is_empty() {
            return Err(Stop::Failed(
                "no source could be fetched (each fetch error is in sources)".into(),
            ));
        }
        // 3. Synthesis.
        self.progress("synthesis", done, total);
        self.synthesise(deadline, &sources, &texts, usage)
    }

    /// The search hits as sources: the first [`MAX_SOURCES`] distinct ones the SSRF guard
    /// lets through are `pending` (to fetch), the rest `found`.
    fn pick(&self, hits: &[Value]) -> Vec<Source> {
        let mut out: Vec<Source> = Vec::new();
        let mut chosen = 0;
        for h in hits {
            let url = h["url"].as_str().unwrap_or_default().trim().to_string();
            if url.is_empty() || out.iter().any(|s| s.url == url) {
                continue;
            }
            let mut s = Source {
                url: url.clone(),
                title: h["title"].as_str().unwrap_or_default().to_string(),
                snippet: h["snippet"].as_str().unwrap_or_default().to_string(),
                status: "found".into(),
                ..Source::default()
            };
            let allowed = reqwest::Url::parse(&url)
                .map_err(|e| e.to_string())
                .and_then(|u| precheck_url(&self.config.web, &u).map_err(|e| e.to_string()));
            match allowed {
                Err(e) => s.error = Some(format!("not fetched: {e}")),
                Ok(_) if chosen < MAX_SOURCES => {
                    s.status = "pending".into();
                    chosen += 1;
                }
                Ok(_) => {
                    s.error = Some(format!(
                        "not fetched: over the limit of {MAX_SOURCES} sources"
                    ))
                }
            }
            out.push(s);
        }
        out
    }

    fn synthesise(
        &self,
        deadline: Instant,
        sources: &[Source],
        texts: &[(usize, String)],
        usage: &mut TokenUsage,
    ) -> Result<Results, Stop> {
        let session = self
            .services
            .create_agent(
                None,
                SYNTHESIS_PROFILE,
                json!({"runId": self.run_id}),
                Some(&format!("research {}", self.run_id)),
            )
            .map_err(|e| Stop::Failed(format!("cannot start the synthesis: {e}")))?;
        let mut message = format!(
            "Research question: {}\n\nSources ({} fetched):\n",
            self.query,
            texts.len()
        );
        for (n, (i, text)) in texts.iter().enumerate() {
            let s = &sources[*i];
            message.push_str(&format!(
                "\n[{}] URL: {}\nTitle: {}\n---\n{}\n---\n",
                n + 1,
                s.url,
                s.title,
                text
            ));
        }
        message.push_str(
            "\nCall report_result with the summary and the findings; cite the URLs above exactly.",
        );
        self.event(
            "synthesis",
            &format!("session {} ({SYNTHESIS_PROFILE})", session.id),
        )?;
        let host = self.host.clone();
        let sid = session.id.clone();
        let req = InvokeRequest {
            caller: None,
            session_id: session.id.clone(),
            message: Some(message),
            input: None,
            mode: InvokeMode::Prompt,
            model: None,
            origin_call_id: None,
        };
        let stopper = self.host.clone();
        let out = self
            .step(
                deadline,
                move || {
                    stopper.cancel_session(&sid);
                },
                move || host.invoke_blocking(req),
            )?
            .map_err(|e| Stop::Failed(format!("the synthesis could not run: {e}")))?;
        if let Some(s) = &out.stats {
            *usage = TokenUsage {
                input_tokens: s.input_tokens,
                output_tokens: s.output_tokens,
                total_tokens: s.total_tokens,
            };
        }
        if out.status != "completed" {
            return Err(Stop::Failed(format!(
                "the synthesis ended {}: {}",
                out.status,
                out.error.unwrap_or_else(|| "no reason given".into())
            )));
        }
        let data = if out.data.is_object() {
            out.data
        } else {
            // A model that answered with the object as text instead of report_result.
            json_in_text(&out.final_message).ok_or_else(|| {
                Stop::Failed(
                    "the synthesis gave no findings (no report_result and no JSON object in its answer)"
                        .into(),
                )
            })?
        };
        let (results, dropped) = checked(&data, sources)?;
        for d in dropped {
            self.event("citation", &d)?;
        }
        Ok(results)
    }
}

/// A JSON object in a model's text answer (bare or in a code fence).
fn json_in_text(text: &str) -> Option<Value> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    let v: Value = serde_json::from_str(text.get(start..=end)?).ok()?;
    v.is_object().then_some(v)
}

/// The synthesis' data with every citation checked against the fetched sources: the
/// results, and one note per citation or finding dropped.
fn checked(data: &Value, sources: &[Source]) -> Result<(Results, Vec<String>), Stop> {
    let fetched: Vec<&Source> = sources.iter().filter(|s| s.status == "fetched").collect();
    let same = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
    let summary = data["summary"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_string();
    let mut findings = Vec::new();
    let mut cited: Vec<Citation> = Vec::new();
    let mut dropped = Vec::new();
    let empty = Vec::new();
    for f in data["findings"].as_array().unwrap_or(&empty) {
        let text = f["text"].as_str().unwrap_or_default().trim().to_string();
        if text.is_empty() {
            continue;
        }
        let mut keep = Vec::new();
        for c in f["citations"].as_array().unwrap_or(&empty) {
            let c = c.as_str().unwrap_or_default().trim();
            match fetched.iter().find(|s| same(&s.url, c)) {
                Some(s) => {
                    if !keep.contains(&s.url) {
                        keep.push(s.url.clone());
                    }
                    if !cited.iter().any(|x| x.url == s.url) {
                        cited.push(Citation {
                            url: s.url.clone(),
                            title: s.title.clone(),
                        });
                    }
                }
                None => dropped.push(format!(
                    "dropped citation {c:?}: it is not a source this run fetched"
                )),
            }
        }
        if keep.is_empty() {
            dropped.push(format!(
                "dropped a finding that cites no fetched source: {}",
                crate::board::snippet(&text, 80)
            ));
            continue;
        }
        findings.push(Finding {
            text,
            citations: keep,
        });
    }
    if findings.is_empty() {
        return Err(Stop::Failed(format!(
            "the synthesis gave no finding that cites a fetched source{}",
            if dropped.is_empty() {
                String::new()
            } else {
                format!(" ({})", dropped.join("; "))
            }
        )));
    }
    if summary.is_empty() {
        return Err(Stop::Failed("the synthesis gave no summary".into()));
    }
    Ok((
        Results {
            summary,
            findings,
            citations: cited,
        },
        dropped,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(url: &str, status: &str) -> Source {
        Source {
            url: url.into(),
            title: format!("T {url}"),
            status: status.into(),
            ..Source::default()
        }
    }

    #[test]
    fn citations_must_name_fetched_sources() {
        let sources = [
            src("http://a.test/x", "fetched"),
            src("http://b.test/", "failed"),
        ];
        let data = json!({"summary": "S", "findings": [
            {"text": "one", "citations": ["http://a.test/x/", "http://b.test/"]},
            {"text": "two", "citations": ["http://c.test/"]},
        ]});
        let (r, dropped) = checked(&data, &sources).expect("checked");
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0].citations, ["http://a.test/x"]);
        assert_eq!(r.citations.len(), 1);
        assert_eq!(dropped.len(), 3, "{dropped:?}");
        let none =
            json!({"summary": "S", "findings": [{"text": "two", "citations": ["http://c.test/"]}]});
        assert!(matches!(checked(&none, &sources), Err(Stop::Failed(_))));
        assert_eq!(
            json_in_text("```json\n{\"summary\": \"x\"}\n```"),
            Some(json!({"summary": "x"}))
        );
    }
}
