//! HTML to readable text for `web_fetch`: scripts, styles, navigation and the head are
//! dropped; headings become `#` lines, list items `- ` lines, blocks paragraphs; entities are
//! decoded.

const DROP_ELEMENTS: &[&str] = &[
    "script", "style", "nav", "noscript", "template", "svg", "head", "iframe", "form", "button",
    "select", "canvas",
];
const BLOCK_ELEMENTS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "aside",
    "blockquote",
    "pre",
    "ul",
    "ol",
    "table",
    "tr",
    "figure",
    "figcaption",
    "dl",
    "dt",
    "dd",
    "hr",
    "address",
];

/// Convert HTML to readable text: returns `(title, text)`. Scripts, styles, navigation and
/// the head are dropped; headings become `#` lines, list items `- ` lines, blocks paragraphs.
pub fn html_to_text(html: &str) -> (Option<String>, String) {
    let title = extract_title(html);
    let lower = html.to_ascii_lowercase();
    let bytes = html.as_bytes();
    let mut out = String::with_capacity(html.len() / 2);
    let mut i = 0usize;
    let mut pre_depth = 0usize;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            let next = html[i..].find('<').map(|n| i + n).unwrap_or(html.len());
            let chunk = decode_entities(&html[i..next]);
            if pre_depth > 0 {
                out.push_str(&chunk);
            } else {
                push_collapsed(&mut out, &chunk);
            }
            i = next;
            continue;
        }
        if lower[i..].starts_with("<!--") {
            i = lower[i..]
                .find("-->")
                .map(|n| i + n + 3)
                .unwrap_or(html.len());
            continue;
        }
        let end = match html[i..].find('>') {
            Some(n) => i + n + 1,
            None => {
                push_collapsed(&mut out, &decode_entities(&html[i..]));
                break;
            }
        };
        let tag = &lower[i + 1..end - 1];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if name.is_empty() {
            // `<!doctype>`, `<?xml?>`, stray `<`.
            i = end;
            continue;
        }
        if !closing && DROP_ELEMENTS.contains(&name.as_str()) && !tag.ends_with('/') {
            let close = format!("</{name}");
            i = match lower[end..].find(&close) {
                Some(n) => {
                    let c = end + n;
                    lower[c..]
                        .find('>')
                        .map(|m| c + m + 1)
                        .unwrap_or(html.len())
                }
                None => html.len(),
            };
            out.push('\n');
            continue;
        }
        match name.as_str() {
            "br" => out.push('\n'),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                out.push_str("\n\n");
                if !closing {
                    let level = name[1..].parse::<usize>().unwrap_or(1);
                    out.push_str(&"#".repeat(level));
                    out.push(' ');
                }
            }
            "li" if !closing => out.push_str("\n- "),
            "pre" => {
                if closing {
                    pre_depth = pre_depth.saturating_sub(1);
                } else {
                    pre_depth += 1;
                }
                out.push_str("\n\n");
            }
            "td" | "th" if closing => out.push_str(" | "),
            n if BLOCK_ELEMENTS.contains(&n) => out.push_str("\n\n"),
            _ => {}
        }
        i = end;
    }
    (title, tidy(&out))
}

fn extract_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let mut t = String::new();
    push_collapsed(&mut t, &decode_entities(&html[open_end..close]));
    let t = t.trim().to_string();
    (!t.is_empty()).then_some(t)
}

fn push_collapsed(out: &mut String, s: &str) {
    for c in s.chars() {
        if c.is_whitespace() && c != '\u{a0}' {
            if !out.ends_with(' ') && !out.ends_with('\n') && !out.is_empty() {
                out.push(' ');
            }
        } else if c == '\u{a0}' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
}

/// Trim each line, drop empty runs of more than one blank line.
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut blank = 0usize;
    for line in s.lines() {
        let line = line.trim();
        if line.is_empty() || line == "-" || line == "|" {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line.trim_end_matches(" |").trim_end_matches('|').trim_end());
    }
    out
}

/// Decode the common named entities and all numeric ones.
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let semi = rest[..rest.len().min(12)].find(';');
        let decoded = semi.and_then(|n| {
            let ent = &rest[1..n];
            let c = if let Some(num) = ent.strip_prefix('#') {
                let v = if let Some(hex) = num.strip_prefix(['x', 'X']) {
                    u32::from_str_radix(hex, 16).ok()
                } else {
                    num.parse::<u32>().ok()
                };
                v.and_then(char::from_u32)
            } else {
                match ent {
                    "amp" => Some('&'),
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "quot" => Some('"'),
                    "apos" => Some('\''),
                    "nbsp" => Some('\u{a0}'),
                    "mdash" => Some('—'),
                    "ndash" => Some('–'),
                    "hellip" => Some('…'),
                    "lsquo" => Some('‘'),
                    "rsquo" => Some('’'),
                    "ldquo" => Some('“'),
                    "rdquo" => Some('”'),
                    "laquo" => Some('«'),
                    "raquo" => Some('»'),
                    "copy" => Some('©'),
                    "reg" => Some('®'),
                    "trade" => Some('™'),
                    "middot" => Some('·'),
                    "bull" => Some('•'),
                    "deg" => Some('°'),
                    "eacute" => Some('é'),
                    "egrave" => Some('è'),
                    "uuml" => Some('ü'),
                    "ouml" => Some('ö'),
                    "auml" => Some('ä'),
                    "szlig" => Some('ß'),
                    _ => None,
                }
            };
            c.map(|c| (c, n + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_text() {
        let (t, c) = html_to_text(
            "<html><head><title>A &amp; B</title><style>x{}</style></head><body><nav>menu</nav>\
             <h2>Head</h2><p>One&nbsp;two &#8212; &#x41;</p><script>evil()</script><ul><li>i1</li><li>i2</li></ul></body></html>",
        );
        assert_eq!(t.as_deref(), Some("A & B"));
        assert!(
            !c.contains("menu") && !c.contains("evil") && !c.contains("x{}"),
            "{c}"
        );
        assert!(c.contains("## Head"), "{c}");
        assert!(c.contains("One two — A"), "{c}");
        assert!(c.contains("- i1\n- i2"), "{c}");
    }
}
