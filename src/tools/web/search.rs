//! `web_search`: Tavily or Brave, API keys from env vars named in `[web]` of config.toml,
//! tried in `search_order`. Domain filters are applied to the results too, since providers do
//! not always honour them. Its egress requests are one per configured provider (a failing
//! provider falls back to the next), each to the provider's host.

use serde_json::{json, Value};

use super::{run_async, WebError, SEARCH_TIMEOUT};
use crate::config::{Config, WebConfig};
use crate::engine::effects::normalize_host;
use crate::engine::tool::{EgressRequest, Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;

pub struct WebSearch;

pub const DEFAULT_SEARCH_ORDER: &[&str] = &["tavily", "brave"];

struct Provider {
    name: String,
    key: String,
    base: String,
}

fn key_env(web: &WebConfig, provider: &str) -> String {
    match provider {
        "tavily" => web
            .tavily_api_key_env
            .clone()
            .unwrap_or_else(|| "TAVILY_API_KEY".into()),
        _ => web
            .brave_api_key_env
            .clone()
            .unwrap_or_else(|| "BRAVE_API_KEY".into()),
    }
}

fn providers(config: &Config) -> Result<Vec<Provider>, ToolError> {
    let web = &config.web;
    let order: Vec<String> = if web.search_order.is_empty() {
        DEFAULT_SEARCH_ORDER.iter().map(|s| s.to_string()).collect()
    } else {
        web.search_order
            .iter()
            .map(|s| s.trim().to_ascii_lowercase())
            .collect()
    };
    let mut out = Vec::new();
    for name in &order {
        if !DEFAULT_SEARCH_ORDER.contains(&name.as_str()) {
            return Err(ToolError::failed(format!(
                "unknown web search provider {name:?} in [web] search_order; known providers: tavily, brave"
            )));
        }
        let env = key_env(web, name);
        let key = std::env::var(&env).unwrap_or_default();
        if key.trim().is_empty() {
            continue;
        }
        let base = match name.as_str() {
            "tavily" => web
                .tavily_base_url
                .clone()
                .unwrap_or_else(|| "https://api.tavily.com".into()),
            _ => web
                .brave_base_url
                .clone()
                .unwrap_or_else(|| "https://api.search.brave.com".into()),
        };
        out.push(Provider {
            name: name.clone(),
            key: key.trim().to_string(),
            base: base.trim_end_matches('/').to_string(),
        });
    }
    if out.is_empty() {
        return Err(ToolError::failed(format!(
            "no web search provider is configured. Set an API key in the environment: {} for Tavily (tavily.com) or {} for Brave Search (brave.com/search/api); other variable names can be set in config.toml under [web] as tavily_api_key_env / brave_api_key_env, and search_order chooses which provider is tried first",
            key_env(web, "tavily"),
            key_env(web, "brave")
        )));
    }
    Ok(out)
}

/// `example.com`, `https://www.example.com/x` → `example.com`-style domain.
fn normalize_domain(d: &str) -> String {
    let d = d.trim().to_ascii_lowercase();
    let d = d
        .strip_prefix("https://")
        .or_else(|| d.strip_prefix("http://"))
        .unwrap_or(&d);
    let d = d.split(['/', '?', '#']).next().unwrap_or("");
    let d = d.trim_start_matches("*.").trim_matches('.');
    d.strip_prefix("www.").unwrap_or(d).to_string()
}

fn host_matches(host: &str, domain: &str) -> bool {
    let host = host.to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    host == domain || host.ends_with(&format!(".{domain}"))
}

fn domains(list: &Option<Vec<String>>) -> Vec<String> {
    list.as_ref()
        .map(|a| {
            a.iter()
                .map(|d| normalize_domain(d))
                .filter(|d| !d.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

struct SearchReq {
    query: String,
    allowed: Vec<String>,
    blocked: Vec<String>,
    recency_days: Option<u64>,
    max_results: usize,
}

fn client() -> Result<reqwest::Client, WebError> {
    Ok(crate::net::http::client()?)
}

/// Send one provider request and read its JSON answer. A failed send, a reply that is not
/// JSON, and a non-success status (with the provider's own message, picked out of the reply
/// by `message`) become errors naming the provider.
async fn send_json(
    provider: &'static str,
    url: &str,
    req: reqwest::RequestBuilder,
    message: fn(&Value) -> Option<&str>,
) -> Result<Value, WebError> {
    let resp = req
        .timeout(SEARCH_TIMEOUT)
        .send()
        .await
        .map_err(|source| WebError::NoAnswer {
            provider,
            url: url.to_string(),
            source,
        })?;
    let status = resp.status();
    let v: Value = resp.json().await.map_err(|source| WebError::NotJson {
        provider,
        url: url.to_string(),
        status,
        source,
    })?;
    if !status.is_success() {
        return Err(WebError::Provider {
            provider,
            status,
            message: message(&v).unwrap_or("no message").to_string(),
        });
    }
    Ok(v)
}

async fn search_tavily(p: &Provider, r: &SearchReq) -> Result<Vec<Value>, WebError> {
    let mut body = json!({
        "query": r.query,
        "max_results": r.max_results,
        "search_depth": "basic",
    });
    if !r.allowed.is_empty() {
        body["include_domains"] = json!(r.allowed);
    }
    if !r.blocked.is_empty() {
        body["exclude_domains"] = json!(r.blocked);
    }
    if let Some(days) = r.recency_days {
        let range = match days {
            0..=1 => Some("day"),
            2..=7 => Some("week"),
            8..=31 => Some("month"),
            32..=366 => Some("year"),
            _ => None,
        };
        if let Some(range) = range {
            body["time_range"] = json!(range);
        }
    }
    let url = format!("{}/search", p.base);
    let req = client()?.post(&url).bearer_auth(&p.key).json(&body);
    let v = send_json("tavily", &url, req, |v| {
        v["detail"]["error"]
            .as_str()
            .or(v["error"].as_str())
            .or(v["detail"].as_str())
    })
    .await?;
    let results = v["results"]
        .as_array()
        .ok_or(WebError::NoResults("tavily"))?;
    Ok(results
        .iter()
        .map(|x| {
            let mut o = json!({
                "title": x["title"].as_str().unwrap_or_default(),
                "url": x["url"].as_str().unwrap_or_default(),
                "snippet": x["content"].as_str().unwrap_or_default(),
            });
            if let Some(d) = x["published_date"].as_str() {
                o["publishedAt"] = json!(d);
            }
            if let Some(s) = x["score"].as_f64() {
                o["score"] = json!(s);
            }
            o
        })
        .collect())
}

/// Brave's query parameters: the domain filters become `site:` terms of `q`.
fn brave_params(r: &SearchReq) -> Vec<(&'static str, String)> {
    let mut q = r.query.clone();
    if !r.allowed.is_empty() {
        let sites: Vec<String> = r.allowed.iter().map(|d| format!("site:{d}")).collect();
        if sites.len() == 1 {
            q.push(' ');
            q.push_str(&sites[0]);
        } else {
            q.push_str(&format!(" ({})", sites.join(" OR ")));
        }
    }
    for d in &r.blocked {
        q.push_str(&format!(" -site:{d}"));
    }
    let mut params: Vec<(&'static str, String)> =
        vec![("q", q), ("count", r.max_results.to_string())];
    if let Some(days) = r.recency_days {
        let f = match days {
            0..=1 => "pd",
            2..=7 => "pw",
            8..=31 => "pm",
            _ => "py",
        };
        if days <= 366 {
            params.push(("freshness", f.to_string()));
        }
    }
    params
}

async fn search_brave(p: &Provider, r: &SearchReq) -> Result<Vec<Value>, WebError> {
    let params = brave_params(r);
    let url = format!("{}/res/v1/web/search", p.base);
    let req = client()?
        .get(&url)
        .query(&params)
        .header("accept", "application/json")
        .header("x-subscription-token", &p.key);
    let v = send_json("brave", &url, req, |v| {
        v["error"]["detail"].as_str().or(v["message"].as_str())
    })
    .await?;
    let empty = Vec::new();
    let results = v["web"]["results"].as_array().unwrap_or(&empty);
    Ok(results
        .iter()
        .map(|x| {
            let mut o = json!({
                "title": x["title"].as_str().unwrap_or_default(),
                "url": x["url"].as_str().unwrap_or_default(),
                "snippet": x["description"].as_str().unwrap_or_default(),
            });
            if let Some(s) = x["profile"]["name"]
                .as_str()
                .or(x["meta_url"]["hostname"].as_str())
            {
                o["source"] = json!(s);
            }
            if let Some(d) = x["page_age"].as_str().or(x["age"].as_str()) {
                o["publishedAt"] = json!(d);
            }
            o
        })
        .collect())
}

/// Keep results whose host passes the allowed/blocked domain filters (providers do not
/// always honour them).
fn filter_results(
    results: Vec<Value>,
    allowed: &[String],
    blocked: &[String],
    max: usize,
) -> Vec<Value> {
    results
        .into_iter()
        .filter(|r| {
            let Some(host) = r["url"]
                .as_str()
                .and_then(|u| reqwest::Url::parse(u).ok())
                .and_then(|u| u.host_str().map(str::to_string))
            else {
                return false;
            };
            if blocked.iter().any(|d| host_matches(&host, d)) {
                return false;
            }
            allowed.is_empty() || allowed.iter().any(|d| host_matches(&host, d))
        })
        .take(max)
        .collect()
}

/// Check the arguments and pick the providers, in the order `run` tries them.
fn prepare(config: &Config, args: &SearchArgs) -> Result<(Vec<Provider>, SearchReq), ToolError> {
    let query = args.query.trim().to_string();
    if query.chars().count() < 2 {
        return Err(ToolError::failed(
            "the query needs at least 2 non-blank characters",
        ));
    }
    let providers = providers(config)?;
    let req = SearchReq {
        query,
        allowed: domains(&args.allowed_domains),
        blocked: domains(&args.blocked_domains),
        recency_days: args.recency_days,
        max_results: args.max_results.unwrap_or(5).clamp(1, 10) as usize,
    };
    if let Some(d) = req.allowed.iter().find(|d| req.blocked.contains(d)) {
        return Err(ToolError::failed(format!(
            "{d} is both allowed and blocked; drop it from one of the lists"
        )));
    }
    Ok((providers, req))
}

impl Provider {
    /// What a search with this provider sends, for the approval preview (the API key is a
    /// header and is never shown).
    fn request(&self, r: &SearchReq) -> EgressRequest {
        let host = reqwest::Url::parse(&self.base)
            .ok()
            .and_then(|u| u.host_str().map(normalize_host))
            .unwrap_or_default();
        match self.name.as_str() {
            "tavily" => EgressRequest {
                host,
                method: "POST",
                url: format!("{}/search", self.base),
                body: vec![("query".to_string(), r.query.clone())],
            },
            _ => {
                let url = format!("{}/res/v1/web/search", self.base);
                let url = reqwest::Url::parse_with_params(&url, brave_params(r))
                    .map(|u| u.to_string())
                    .unwrap_or(url);
                EgressRequest {
                    host,
                    method: "GET",
                    url,
                    body: Vec::new(),
                }
            }
        }
    }
}

fn plain_args(query: &str, max_results: usize) -> SearchArgs {
    SearchArgs {
        query: query.to_string(),
        allowed_domains: None,
        blocked_domains: None,
        recency_days: None,
        max_results: Some(max_results as u64),
    }
}

/// The requests a plain search for `query` sends, one per configured provider (what
/// `web_search` names for its egress gate): for callers outside the tool, such as a research
/// run.
pub fn search_requests(
    config: &Config,
    query: &str,
    max_results: usize,
) -> Result<Vec<EgressRequest>, ToolError> {
    let (providers, req) = prepare(config, &plain_args(query, max_results))?;
    Ok(providers.iter().map(|p| p.request(&req)).collect())
}

/// A plain search with the configured providers, tried in order as `web_search` does:
/// the provider that answered and its results (`{title, url, snippet, …}`). Blocks this
/// thread (the request runs on the shared network runtime).
pub fn search_blocking(
    config: &Config,
    query: &str,
    max_results: usize,
) -> Result<(String, Vec<Value>), ToolError> {
    let (providers, req) = prepare(config, &plain_args(query, max_results))?;
    run_async(async move { search_with(&providers, &req).await })
}

async fn search_with(
    providers: &[Provider],
    req: &SearchReq,
) -> Result<(String, Vec<Value>), WebError> {
    let mut errors = Vec::new();
    for p in providers {
        let r = match p.name.as_str() {
            "tavily" => search_tavily(p, req).await,
            _ => search_brave(p, req).await,
        };
        match r {
            Ok(results) => {
                let kept = filter_results(results, &req.allowed, &req.blocked, req.max_results);
                return Ok((p.name.clone(), kept));
            }
            Err(e) => errors.push(e),
        }
    }
    Err(WebError::AllFailed(errors))
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    #[schemars(length(min = 2, max = 500))]
    pub query: String,
    /// Only results from these domains (and their subdomains)
    #[schemars(length(max = 20), inner(length(min = 1, max = 253)))]
    pub allowed_domains: Option<Vec<String>>,
    /// Never results from these domains
    #[schemars(length(max = 50), inner(length(min = 1, max = 253)))]
    pub blocked_domains: Option<Vec<String>>,
    /// Prefer results published within this many days
    #[schemars(range(min = 1, max = 3650))]
    pub recency_days: Option<u64>,
    #[schemars(range(min = 1, max = 10), default = "default_max_results")]
    pub max_results: Option<u64>,
}

fn default_max_results() -> u64 {
    5
}

impl TypedTool for WebSearch {
    type Args = SearchArgs;
    const NAME: &'static str = "web_search";
    const GROUP: &'static str = "web";
    const DESCRIPTION: &'static str = "Search the web (Tavily or Brave, as configured). Returns titles, URLs and snippets; use web_fetch to read a page. Domain filters are applied to the results.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        Effects::touches(&[Network]).egress()
    };
    const PARALLEL_SAFE: bool = true;
    fn egress(&self, ctx: &ToolCtx, args: &SearchArgs) -> Result<Vec<EgressRequest>, ToolError> {
        let (providers, req) = prepare(&ctx.config, args)?;
        Ok(providers.iter().map(|p| p.request(&req)).collect())
    }
    fn run(&self, ctx: &ToolCtx, args: &SearchArgs) -> Result<ToolOutput, ToolError> {
        let (providers, req) = prepare(&ctx.config, args)?;
        let query = req.query.clone();
        let (provider, results) = run_async(async move { search_with(&providers, &req).await })?;
        let out = json!({"query": query, "provider": provider, "results": results});
        Ok(ToolOutput {
            content: serde_json::to_string_pretty(&out).unwrap_or_default(),
            details: Some(out),
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_normalize_and_match() {
        assert_eq!(normalize_domain("https://www.Example.com/x"), "example.com");
        assert!(host_matches("news.example.com", "example.com"));
        assert!(!host_matches("badexample.com", "example.com"));
    }
}
