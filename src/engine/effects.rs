//! Declared effects of a tool: what it touches and how the engine must treat its calls.
//!
//! Every tool declares its effects in its own `impl Tool` (a required method, no default), so
//! the policy, the agent run loop and the TUI's refresh decide from these facts and never from
//! a tool's name. Adding a tool is its file plus a line in each profile that may use it.
//!
//! Also here: what an egress call (a call that sends data off the machine) asks to send,
//! and how the approval preview shows its URL (long query values elided with their length).

use serde::Serialize;

pub use crate::protocol::Domain;

/// What a tool declares about itself, beyond whether it mutates (`Tool::mutates`).
///
/// Built with `const` helpers so each declaration is one short expression, e.g.
/// `Effects::touches(&[Domain::Network]).egress()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Effects {
    /// The domains its calls read or change. A successful call that changed something tells
    /// clients these domains changed (the TUI reloads the matching panes).
    pub domains: &'static [Domain],
    /// A call ends the agent's turn to wait for the author (a question, a mode switch): the
    /// rest of that turn's calls are skipped.
    pub pauses: bool,
    /// Every call waits for the author, whatever the preset or `[approval.tools]` say, and is
    /// never covered by a session grant (an agent changing its own mode).
    pub always_asks: bool,
    /// A call sends data off the machine (web fetch and search). The model providers the
    /// author configured are not counted: they are the author's own choice.
    pub egress: bool,
    /// NeuroBook restricts this tool in the prompt, not at its gate, so the `neurobook`
    /// preset runs its mutating calls in every mode (bash, raw SQL, world scripts).
    pub prompt_gated_in_neurobook: bool,
    /// A successful call ends the agent's run with its result.
    pub ends_run: bool,
    /// Only the author may call it (through [`crate::engine::Engine::author_call`]); the
    /// engine refuses it for every other actor even when a profile lists it (plot hard delete).
    pub author_only: bool,
    /// What the refusal tells an agent that calls an author-only tool: where the author does
    /// it, and what an agent may do instead.
    pub author_only_hint: &'static str,
    /// Offered to the model after every other tool of its session (Fusion sorts
    /// `fn_heartbeat_done` last: the call that closes a run reads as the list's end).
    pub listed_last: bool,
}

impl Effects {
    /// A tool touching `domains` and nothing else special.
    pub const fn touches(domains: &'static [Domain]) -> Effects {
        Effects {
            domains,
            pauses: false,
            always_asks: false,
            egress: false,
            prompt_gated_in_neurobook: false,
            ends_run: false,
            author_only: false,
            author_only_hint: "",
            listed_last: false,
        }
    }
    pub const fn pauses(mut self) -> Effects {
        self.pauses = true;
        self
    }
    pub const fn always_asks(mut self) -> Effects {
        self.always_asks = true;
        self
    }
    pub const fn egress(mut self) -> Effects {
        self.egress = true;
        self
    }
    pub const fn prompt_gated_in_neurobook(mut self) -> Effects {
        self.prompt_gated_in_neurobook = true;
        self
    }
    pub const fn ends_run(mut self) -> Effects {
        self.ends_run = true;
        self
    }
    /// Only the author calls it; `hint` is what the refusal tells an agent (where the author
    /// does it, what an agent does instead).
    pub const fn author_only(mut self, hint: &'static str) -> Effects {
        self.author_only = true;
        self.author_only_hint = hint;
        self
    }
    pub const fn listed_last(mut self) -> Effects {
        self.listed_last = true;
        self
    }

    pub fn touches_domain(&self, d: Domain) -> bool {
        self.domains.contains(&d)
    }
}

/// One request an egress call will send, as the tool can tell before sending anything (no DNS
/// lookup, no connection): the host it goes to, the method and URL, and body fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EgressRequest {
    /// Lower-case host name or IP literal (no brackets); grants are keyed by it.
    pub host: String,
    pub method: &'static str,
    pub url: String,
    /// Fields sent in the request body (name, value), e.g. a search query in a POST.
    pub body: Vec<(String, String)>,
}

/// The form hosts are compared in (grants, `[web] allow_egress`): lower case, no brackets
/// or trailing dot, IP literals in their canonical form (`[::127.0.0.1]` → `::7f00:1`).
pub fn normalize_host(host: &str) -> String {
    let h = host
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase();
    match h.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => h,
    }
}

/// Values longer than this are shown as a prefix and their length in approval previews.
pub const ELIDE_OVER: usize = 48;
const KEEP_PREFIX: usize = 16;

/// `value` itself when short, else its first characters and `…(N chars)`.
pub fn elide_value(value: &str) -> String {
    let n = value.chars().count();
    if n <= ELIDE_OVER {
        return value.to_string();
    }
    let head: String = value.chars().take(KEEP_PREFIX).collect();
    format!("{head}…({n} chars)")
}

/// The URL as the author should see it before approving: scheme, host, port and path in
/// full (long path segments elided with their length), every query parameter shown with long
/// values elided with their length, and the fragment dropped (it is never sent).
pub fn display_url(url: &str) -> String {
    let Ok(u) = reqwest::Url::parse(url) else {
        return elide_value(url);
    };
    let mut out = format!("{}://", u.scheme());
    if !u.username().is_empty() {
        out.push_str(&elide_value(u.username()));
        out.push_str(":…@");
    }
    out.push_str(u.host_str().unwrap_or(""));
    if let Some(p) = u.port() {
        out.push_str(&format!(":{p}"));
    }
    let path: Vec<String> = u.path().split('/').map(elide_value).collect();
    out.push_str(&path.join("/"));
    if let Some(q) = u.query() {
        let parts: Vec<String> = q
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) => format!("{}={}", elide_value(k), elide_value(v)),
                None => elide_value(kv),
            })
            .collect();
        out.push('?');
        out.push_str(&parts.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_query_values_are_elided_with_their_length() {
        let secret = "s".repeat(812);
        let shown = display_url(&format!("https://evil.example/p?q={secret}&lang=en#frag"));
        assert_eq!(
            shown,
            "https://evil.example/p?q=ssssssssssssssss…(812 chars)&lang=en"
        );
        let long_seg = "x".repeat(100);
        assert_eq!(
            display_url(&format!("http://h.example:8080/a/{long_seg}/b")),
            "http://h.example:8080/a/xxxxxxxxxxxxxxxx…(100 chars)/b"
        );
        assert_eq!(elide_value("short"), "short");
        assert_eq!(normalize_host("[::127.0.0.1]"), "::7f00:1");
        assert_eq!(normalize_host("Example.COM."), "example.com");
    }
}
