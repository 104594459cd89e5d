//! Which addresses `web_fetch` may reach (server-side request forgery guard).
//!
//! The host is resolved first and every resolved address must be public — private, loopback,
//! link-local, unique-local, CGNAT, broadcast and unspecified addresses are refused unless the
//! host is listed in `web.allow_hosts`. IPv6 addresses that carry an IPv4 address (mapped,
//! compatible, SIIT-translated, NAT64, 6to4, Teredo) are normalised to that IPv4 address, which
//! gets the same check: `[::ffff:127.0.0.1]`, `[::127.0.0.1]`, `[64:ff9b::7f00:1]` and
//! `[2002:7f00:1::]` all reach loopback on some network and are refused as loopback.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use super::WebError;
use crate::config::WebConfig;

/// Every IPv4 address embedded in `v6`, with the name of the embedding. Teredo carries two
/// (its server, and the client obscured by inverting its bits); both are returned.
pub fn embedded_ipv4(v6: Ipv6Addr) -> Vec<(&'static str, Ipv4Addr)> {
    let s = v6.segments();
    let low32 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let mut out = Vec::new();
    match s {
        // ::ffff:a.b.c.d (RFC 4291 §2.5.5.2).
        [0, 0, 0, 0, 0, 0xffff, _, _] => out.push(("IPv4-mapped", low32)),
        // ::ffff:0:a.b.c.d (SIIT, RFC 6145).
        [0, 0, 0, 0, 0xffff, 0, _, _] => out.push(("IPv4-translated", low32)),
        // ::a.b.c.d (deprecated IPv4-compatible, RFC 4291 §2.5.5.1); `::` and `::1` are
        // IPv6's own unspecified and loopback addresses and are classified as such.
        [0, 0, 0, 0, 0, 0, _, _] if !(v6.is_unspecified() || v6.is_loopback()) => {
            out.push(("IPv4-compatible", low32))
        }
        // 64:ff9b::a.b.c.d (NAT64 well-known prefix, RFC 6052).
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => out.push(("NAT64", low32)),
        // 2002:AABB:CCDD::/48 (6to4, RFC 3056).
        [0x2002, hi, lo, ..] => out.push((
            "6to4",
            Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8),
        )),
        // 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC (Teredo, RFC 4380).
        [0x2001, 0, hi, lo, ..] => {
            out.push((
                "Teredo server",
                Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8),
            ));
            out.push(("Teredo client", Ipv4Addr::from(!u32::from(low32))));
        }
        _ => {}
    }
    out
}

/// Why an address may not be fetched, or `None` when it is public.
pub fn blocked_reason(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => blocked_v4(v4).map(str::to_string),
        IpAddr::V6(v6) => {
            for (form, v4) in embedded_ipv4(v6) {
                if let Some(why) = blocked_v4(v4) {
                    return Some(format!("{why}, {v4} embedded as {form}"));
                }
            }
            blocked_v6(v6).map(str::to_string)
        }
    }
}

fn blocked_v6(v6: Ipv6Addr) -> Option<&'static str> {
    let seg = v6.segments();
    if v6.is_loopback() {
        Some("loopback")
    } else if v6.is_unspecified() {
        Some("unspecified")
    } else if seg[0] & 0xfe00 == 0xfc00 {
        Some("unique-local")
    } else if seg[0] & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if seg[0] & 0xffc0 == 0xfec0 {
        Some("site-local")
    } else if v6.is_multicast() {
        Some("multicast")
    } else if seg[0] == 0x64 && seg[1] == 0xff9b && seg[2] == 1 {
        // 64:ff9b:1::/48 (RFC 8215) is for NAT64 inside one network only.
        Some("local-use NAT64")
    } else {
        None
    }
}

fn blocked_v4(v4: Ipv4Addr) -> Option<&'static str> {
    let o = v4.octets();
    if v4.is_loopback() {
        Some("loopback")
    } else if v4.is_unspecified() || o[0] == 0 {
        Some("unspecified")
    } else if v4.is_private() {
        Some("private")
    } else if v4.is_link_local() {
        Some("link-local")
    } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
        Some("shared (CGNAT)")
    } else if v4.is_broadcast() || v4.is_multicast() {
        Some("broadcast/multicast")
    } else {
        None
    }
}

fn bare(host: &str) -> &str {
    host.trim_start_matches('[').trim_end_matches(']')
}

/// Host names compare case-insensitively; IP literals compare as addresses, so
/// `[::127.0.0.1]` in the config matches the URL's normalised `[::7f00:1]`.
pub(super) fn same_host(a: &str, b: &str) -> bool {
    let (a, b) = (bare(a.trim()), bare(b.trim()));
    match (a.parse::<IpAddr>(), b.parse::<IpAddr>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a
            .trim_end_matches('.')
            .eq_ignore_ascii_case(b.trim_end_matches('.')),
    }
}

pub(super) fn host_allowed(web: &WebConfig, host: &str) -> bool {
    web.allow_hosts.iter().any(|h| same_host(h, host))
}

/// `localhost` and `*.localhost` always mean this machine (RFC 6761), whatever DNS says.
fn is_localhost_name(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    h == "localhost" || h.ends_with(".localhost")
}

fn refused(host: &str, ip: IpAddr, why: &str) -> WebError {
    WebError::Refused {
        host: host.to_string(),
        ip,
        why: why.to_string(),
    }
}

/// What can be checked about a URL without the network: the scheme, that it has a host, and
/// — for IP literals and `localhost` names — whether the address may be reached. Run before
/// the author is asked about the request, so nobody approves a fetch that is refused anyway.
pub fn precheck_url(web: &WebConfig, url: &reqwest::Url) -> Result<String, WebError> {
    match url.scheme() {
        "http" | "https" => {}
        other => return Err(WebError::Scheme(other.to_string())),
    }
    let host = url
        .host_str()
        .ok_or_else(|| WebError::NoHost(url.to_string()))?
        .to_string();
    let name = bare(&host).to_ascii_lowercase();
    if host_allowed(web, &host) {
        return Ok(name);
    }
    if let Ok(ip) = name.parse::<IpAddr>() {
        if let Some(why) = blocked_reason(ip) {
            return Err(refused(&host, ip, &why));
        }
    } else if is_localhost_name(&name) {
        return Err(WebError::Loopback(host));
    }
    Ok(name)
}

/// Resolve and check one URL's host, for a clear refusal before anything is sent. (The
/// connection itself goes through [`fetch_client`]'s resolver, which checks again.)
pub(super) async fn check_url(web: &WebConfig, url: &reqwest::Url) -> Result<(), WebError> {
    let name = precheck_url(web, url)?;
    let host = url.host_str().unwrap_or_default().to_string();
    if host_allowed(web, &host) || name.parse::<IpAddr>().is_ok() {
        return Ok(());
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), port))
        .await
        .map_err(|source| WebError::Resolve {
            host: host.clone(),
            source,
        })?
        .collect();
    if addrs.is_empty() {
        return Err(WebError::NoAddress(host));
    }
    for a in &addrs {
        if let Some(why) = blocked_reason(a.ip()) {
            return Err(refused(&host, a.ip(), &why));
        }
    }
    Ok(())
}

/// Resolves host names for web_fetch's client, refusing any that reaches a blocked address
/// (hosts in `allow_hosts` excepted): what the connection uses is what was checked.
struct GuardedResolver {
    allow_hosts: Vec<String>,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let allowed = self.allow_hosts.iter().any(|h| same_host(h, &host));
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allowed {
                if let Some((ip, why)) = addrs
                    .iter()
                    .find_map(|a| blocked_reason(a.ip()).map(|why| (a.ip(), why)))
                {
                    return Err(refused(&host, ip, &why).into());
                }
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// web_fetch's client for these egress settings: no redirects (each hop is checked by the
/// caller), the guarded resolver. One per distinct `allow_hosts`, kept and shared, so its
/// connection pool is reused; only a handful of settings exist in one process.
pub(super) fn fetch_client(web: &WebConfig) -> Result<reqwest::Client, WebError> {
    static CLIENTS: Mutex<Vec<(Vec<String>, reqwest::Client)>> = Mutex::new(Vec::new());
    let mut key: Vec<String> = web
        .allow_hosts
        .iter()
        .map(|h| bare(h.trim()).to_ascii_lowercase())
        .collect();
    key.sort();
    key.dedup();
    let mut clients = CLIENTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, c)) = clients.iter().find(|(k, _)| *k == key) {
        return Ok(c.clone());
    }
    let client = crate::net::http::builder()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("nbook/", env!("CARGO_PKG_VERSION"), " (web_fetch)"))
        .dns_resolver(Arc::new(GuardedResolver {
            allow_hosts: web.allow_hosts.clone(),
        }))
        .build()
        .map_err(WebError::Client)?;
    if clients.len() >= 8 {
        clients.remove(0);
    }
    clients.push((key, client.clone()));
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(ip: &str) -> Option<String> {
        blocked_reason(ip.parse().expect(ip))
    }

    #[test]
    fn blocks_local_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(blocked(ip).is_some(), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(blocked(ip).is_none(), "{ip}");
        }
    }

    #[test]
    fn every_embedded_ipv4_form_is_normalised_and_checked() {
        for (ip, form) in [
            ("::ffff:127.0.0.1", "IPv4-mapped"),
            ("::127.0.0.1", "IPv4-compatible"),
            ("::ffff:0:127.0.0.1", "IPv4-translated"),
            ("::ffff:0:7f00:1", "IPv4-translated"),
            ("64:ff9b::7f00:1", "NAT64"),
            ("64:ff9b::10.0.0.1", "NAT64"),
            ("64:ff9b::a9fe:a9fe", "NAT64"),
            ("2002:7f00:1::", "6to4"),
            ("2002:c0a8:101::1", "6to4"),
            ("2001:0:7f00:1::", "Teredo server"),
            // Teredo client 127.0.0.1, stored inverted: !0x7f000001 = 0x80fffffe.
            ("2001:0:5db8:1::80ff:fffe", "Teredo client"),
        ] {
            let why = blocked(ip).unwrap_or_else(|| panic!("{ip} was not refused"));
            assert!(why.contains(form), "{ip}: {why}");
        }
        let why = blocked("::127.0.0.1").unwrap_or_default();
        assert!(why.starts_with("loopback"), "{why}");
        assert!(blocked("64:ff9b:1::1").is_some(), "local-use NAT64");
        // The same forms carrying a public IPv4 address stay reachable.
        for ip in [
            "64:ff9b::808:808",
            "2002:808:808::1",
            "::ffff:8.8.8.8",
            "2001:0:5db8:1::f7f7:f7f7",
        ] {
            assert!(blocked(ip).is_none(), "{ip}: {:?}", blocked(ip));
        }
        assert_eq!(
            embedded_ipv4("2001:0:5db8:1::80ff:fffe".parse().unwrap()),
            vec![
                ("Teredo server", Ipv4Addr::new(93, 184, 0, 1)),
                ("Teredo client", Ipv4Addr::new(127, 0, 0, 1)),
            ]
        );
    }

    #[test]
    fn precheck_refuses_literals_and_localhost_names_without_the_network() {
        let web = WebConfig::default();
        for url in [
            "http://[::127.0.0.1]/",
            "http://[64:ff9b::7f00:1]/",
            "http://[2002:7f00:1::]/",
            "http://localhost:8080/",
            "http://a.localhost/",
        ] {
            let u = reqwest::Url::parse(url).unwrap();
            let e = precheck_url(&web, &u).unwrap_err().to_string();
            assert!(e.starts_with("refused"), "{url}: {e}");
        }
        let u = reqwest::Url::parse("https://Example.com/x?q=1").unwrap();
        assert_eq!(precheck_url(&web, &u).unwrap(), "example.com");
        let allowed = WebConfig {
            allow_hosts: vec!["[::127.0.0.1]".into()],
            ..WebConfig::default()
        };
        let u = reqwest::Url::parse("http://[::127.0.0.1]:9/").unwrap();
        assert_eq!(precheck_url(&allowed, &u).unwrap(), "::7f00:1");
    }
}
