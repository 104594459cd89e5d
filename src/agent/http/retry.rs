//! Sending one request with retries: 429, 5xx and connection failures are retried (waiting
//! `Retry-After` when given, else exponential backoff with jitter); other statuses fail at once
//! with the server's message.

use std::time::Duration;

use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE};
use serde_json::Value;

use super::{
    error_chain, error_message, fmt_duration, idle_error, truncate, Endpoint, HttpSettings,
};
use crate::agent::provider::ProviderError;

/// Send the request, retrying 429, 5xx and connection failures. Returns a 2xx response.
pub(super) async fn send(ep: &Endpoint, body: &[u8]) -> Result<reqwest::Response, ProviderError> {
    let s = &ep.settings;
    let mut attempt: u32 = 1;
    loop {
        let req = ep
            .client
            .post(&ep.url)
            .headers(ep.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body.to_vec());
        let (err, wait) = match tokio::time::timeout(s.idle_timeout, req.send()).await {
            Err(_) => return Err(idle_error(s, "while waiting for the response")),
            Ok(Err(e)) => {
                let err =
                    ProviderError::Request(format!("cannot reach {}: {}", ep.url, error_chain(&e)));
                (err, backoff(s, attempt))
            }
            Ok(Ok(resp)) if resp.status().is_success() => return Ok(resp),
            Ok(Ok(resp)) => {
                let status = resp.status();
                let retry_after = retry_after(resp.headers());
                let message = error_body(resp, s.idle_timeout).await;
                let err = ProviderError::Http {
                    status: status.as_u16(),
                    message: message.clone(),
                };
                if status.as_u16() != 429 && !status.is_server_error() {
                    return Err(err);
                }
                match retry_after {
                    Some(d) if d > s.max_retry_after => {
                        return Err(ProviderError::Http {
                            status: status.as_u16(),
                            message: format!(
                                "{message} (the server asks to wait {} before retrying)",
                                fmt_duration(d)
                            ),
                        })
                    }
                    Some(d) => (err, d + jitter(d / 10)),
                    None => (err, backoff(s, attempt)),
                }
            }
        };
        if attempt >= s.max_attempts {
            return Err(match err {
                ProviderError::Http { status, message } if s.max_attempts > 1 => {
                    ProviderError::Http {
                        status,
                        message: format!("{message} (gave up after {attempt} attempts)"),
                    }
                }
                other => other,
            });
        }
        tracing::warn!(url = %ep.url, attempt, wait_ms = wait.as_millis() as u64, "model request failed, retrying: {err}");
        tokio::time::sleep(wait).await;
        attempt += 1;
    }
}

/// `base · 2^(attempt-1)`, capped, with ±25% jitter.
fn backoff(s: &HttpSettings, attempt: u32) -> Duration {
    let exp = s
        .base_delay
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let d = exp.min(s.max_delay);
    let quarter = d / 4;
    d - quarter + jitter(quarter * 2)
}

fn jitter(max: Duration) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    max.mul_f64(rand::random::<f64>())
}

/// `retry-after-ms` (OpenAI) or `Retry-After` in seconds or as an HTTP date.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let v = get("retry-after")?;
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = parse_http_date(v)?;
    let now = time::OffsetDateTime::now_utc();
    Some(if at > now {
        Duration::try_from(at - now).unwrap_or_default()
    } else {
        Duration::ZERO
    })
}

/// IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
fn parse_http_date(v: &str) -> Option<time::OffsetDateTime> {
    let parts: Vec<&str> = v.split_whitespace().collect();
    let [_, day, month, year, clock, "GMT"] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))?;
    let month = time::Month::try_from(m as u8 + 1).ok()?;
    let date = time::Date::from_calendar_date(year.parse().ok()?, month, day.parse().ok()?).ok()?;
    let mut hms = clock.split(':').map(|p| p.parse::<u8>().ok());
    let t = time::Time::from_hms(hms.next()??, hms.next()??, hms.next()??).ok()?;
    Some(time::PrimitiveDateTime::new(date, t).assume_utc())
}

/// The server's explanation of an error status, read from the body (bounded in time and size).
async fn error_body(resp: reqwest::Response, limit: Duration) -> String {
    let status = resp.status();
    let fallback = status.canonical_reason().unwrap_or("error").to_string();
    let text = match tokio::time::timeout(limit.min(Duration::from_secs(10)), resp.text()).await {
        Ok(Ok(t)) => t,
        _ => return fallback,
    };
    let msg = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| error_message(&v))
        .unwrap_or_else(|| text.trim().to_string());
    if msg.is_empty() {
        fallback
    } else {
        truncate(&msg, 600)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let s = HttpSettings {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
            ..Default::default()
        };
        let b1 = backoff(&s, 1);
        assert!(
            b1 >= Duration::from_millis(75) && b1 <= Duration::from_millis(125),
            "{b1:?}"
        );
        let b3 = backoff(&s, 3);
        assert!(
            b3 >= Duration::from_millis(225) && b3 <= Duration::from_millis(375),
            "{b3:?}"
        );
        assert!(backoff(&s, 40) <= Duration::from_millis(375));
    }
}
