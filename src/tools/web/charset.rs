//! The text of a fetched page: which charset its bytes are in, decided as a browser decides
//! (WHATWG encoding sniffing): a byte-order mark, then the `charset` of the Content-Type, then
//! for HTML a `<meta charset>` or `http-equiv="content-type"` in the first bytes, then
//! detection (`chardetng`, hinted by the host's top-level domain). `encoding_rs` decodes.
//!
//! The BOM comes before the header, as in browsers: it is in the bytes themselves, while a
//! header charset is often a server-wide default.

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};

/// How far into an HTML page a `<meta>` charset is looked for (the standard says 1024 bytes;
/// pages with long heads put it later, and browsers find those too).
const META_SCAN_BYTES: usize = 4096;

/// A page's text and the charset it was read in.
pub struct Decoded {
    pub text: String,
    /// The WHATWG name, e.g. `UTF-8`, `GBK`, `Shift_JIS`.
    pub charset: &'static str,
    /// Where the charset came from: `bom`, `header`, `meta` or `detected`.
    pub source: &'static str,
}

/// Decode `body` fetched with `content_type` from `host`.
pub fn decode(body: &[u8], content_type: &str, is_html: bool, host: &str) -> Decoded {
    let (encoding, source) = if let Some((enc, _)) = Encoding::for_bom(body) {
        (enc, "bom")
    } else if let Some(enc) = header_charset(content_type) {
        (enc, "header")
    } else if let Some(enc) = is_html.then(|| meta_charset(body)).flatten() {
        (enc, "meta")
    } else {
        (detect(body, host), "detected")
    };
    let text = if source == "bom" {
        encoding.decode_with_bom_removal(body).0
    } else {
        encoding.decode_without_bom_handling(body).0
    };
    Decoded {
        text: text.into_owned(),
        charset: encoding.name(),
        source,
    }
}

/// The `charset` parameter of a Content-Type, if it names an encoding.
fn header_charset(content_type: &str) -> Option<&'static Encoding> {
    content_type.split(';').skip(1).find_map(|param| {
        let (k, v) = param.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("charset"))
            .then(|| Encoding::for_label(v.trim().trim_matches(['"', '\'']).as_bytes()))
            .flatten()
    })
}

/// The charset a `<meta>` declares in the first bytes of the page (the WHATWG prescan, minus
/// its rarely used corners): `<meta charset=…>` or `<meta http-equiv="content-type"
/// content="…; charset=…">`, skipping comments.
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(META_SCAN_BYTES)];
    let mut i = 0;
    while i < head.len() {
        let rest = &head[i..];
        if rest.starts_with(b"<!--") {
            i += find(&rest[4..], b"-->").map_or(head.len(), |n| n + 7);
        } else if rest.len() > 5
            && rest[..5].eq_ignore_ascii_case(b"<meta")
            && matches!(rest[5], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/')
        {
            let (attrs, used) = attributes(&rest[5..]);
            i += 5 + used;
            if let Some(enc) = meta_encoding(&attrs) {
                // A page cannot declare itself UTF-16 in ASCII; x-user-defined means 1252.
                return Some(
                    if enc == encoding_rs::UTF_16BE || enc == encoding_rs::UTF_16LE {
                        UTF_8
                    } else if enc == encoding_rs::X_USER_DEFINED {
                        WINDOWS_1252
                    } else {
                        enc
                    },
                );
            }
        } else if rest.starts_with(b"<") {
            // Another tag, `</…>`, `<!…>` or `<?…>`: step over it, quoted `>` included.
            let (_, used) = attributes(&rest[1..]);
            i += 1 + used;
        } else {
            i += 1;
        }
    }
    None
}

fn meta_encoding(attrs: &[(String, String)]) -> Option<&'static Encoding> {
    let get = |name: &str| {
        attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if let Some(label) = get("charset") {
        return Encoding::for_label(label.trim().as_bytes());
    }
    if !get("http-equiv")?
        .trim()
        .eq_ignore_ascii_case("content-type")
    {
        return None;
    }
    let content = get("content")?.to_ascii_lowercase();
    let after = &content[content.find("charset")? + "charset".len()..];
    let value = after.trim_start().strip_prefix('=')?.trim_start();
    let value = match value.chars().next()? {
        q @ ('"' | '\'') => value[1..].split(q).next()?,
        _ => value.split([';', ' ', '\t', '\n', '\r']).next()?,
    };
    Encoding::for_label(value.as_bytes())
}

/// The attributes of a tag from just after its name to its `>`, and the bytes used.
fn attributes(s: &[u8]) -> (Vec<(String, String)>, usize) {
    let mut attrs = Vec::new();
    let mut i = 0;
    // Skip the rest of the tag name.
    while i < s.len() && !s[i].is_ascii_whitespace() && s[i] != b'>' && s[i] != b'/' {
        i += 1;
    }
    loop {
        while i < s.len() && (s[i].is_ascii_whitespace() || s[i] == b'/') {
            i += 1;
        }
        if i >= s.len() || s[i] == b'>' {
            return (attrs, (i + 1).min(s.len()));
        }
        let start = i;
        while i < s.len() && !s[i].is_ascii_whitespace() && !matches!(s[i], b'=' | b'>' | b'/') {
            i += 1;
        }
        let name = String::from_utf8_lossy(&s[start..i]).to_ascii_lowercase();
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = String::new();
        if i < s.len() && s[i] == b'=' {
            i += 1;
            while i < s.len() && s[i].is_ascii_whitespace() {
                i += 1;
            }
            let start;
            if i < s.len() && (s[i] == b'"' || s[i] == b'\'') {
                let q = s[i];
                start = i + 1;
                i = start
                    + s[start..]
                        .iter()
                        .position(|&c| c == q)
                        .unwrap_or(s.len() - start);
                value = String::from_utf8_lossy(&s[start..i]).into_owned();
                i += 1;
            } else {
                start = i;
                while i < s.len() && !s[i].is_ascii_whitespace() && s[i] != b'>' {
                    i += 1;
                }
                value = String::from_utf8_lossy(&s[start..i]).into_owned();
            }
        }
        attrs.push((name, value));
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Valid UTF-8 (a sequence cut by the body cap at the very end included) is UTF-8; anything
/// else is guessed by chardetng, told the host's top-level domain.
fn detect(body: &[u8], host: &str) -> &'static Encoding {
    match std::str::from_utf8(body) {
        Ok(_) => return UTF_8,
        Err(e) if e.error_len().is_none() => return UTF_8,
        Err(_) => {}
    }
    let mut detector = chardetng::EncodingDetector::new();
    detector.feed(body, true);
    let tld = host
        .rsplit('.')
        .next()
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphabetic()))
        .map(str::to_ascii_lowercase);
    detector.guess(tld.as_deref().map(str::as_bytes), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_in_the_order_a_browser_reads_them() {
        let gbk = encoding_rs::GBK.encode("盐税").0.into_owned();
        let d = decode(&gbk, "text/html; charset=\"GB2312\"", true, "x.cn");
        assert_eq!(
            (d.text.as_str(), d.charset, d.source),
            ("盐税", "GBK", "header")
        );
        let mut bom = b"\xEF\xBB\xBF".to_vec();
        bom.extend_from_slice("塩".as_bytes());
        let d = decode(&bom, "text/html; charset=iso-8859-1", true, "x");
        assert_eq!((d.text.as_str(), d.source), ("塩", "bom"));
        let page = |meta: &str| {
            let mut b = format!("<!-- <meta charset=koi8-r> --><html><head title='a>b'>{meta}")
                .into_bytes();
            b.extend_from_slice(&encoding_rs::SHIFT_JIS.encode("塩の道").0);
            b
        };
        for meta in [
            "<meta charset=shift_jis>",
            "<META CHARSET='Shift_JIS'/>",
            "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=shift_jis\">",
            "<meta content='text/html;charset=\"sjis\"' http-equiv=content-type>",
        ] {
            let d = decode(&page(meta), "text/html", true, "x");
            assert_eq!((d.charset, d.source), ("Shift_JIS", "meta"), "{meta}");
            assert!(d.text.ends_with("塩の道"), "{meta}: {}", d.text);
        }
        // A meta tag in plain text is not a declaration; UTF-16 in a meta means UTF-8.
        let d = decode(b"<meta charset=gbk>", "text/plain", false, "x");
        assert_eq!(d.source, "detected");
        assert_eq!(meta_charset(b"<meta charset=utf-16le>"), Some(UTF_8));
        // An unknown label is skipped, not trusted.
        assert_eq!(header_charset("text/html; charset=nonsense"), None);
    }

    #[test]
    fn undeclared_pages_are_detected() {
        let text = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。";
        let d = decode(
            &encoding_rs::SHIFT_JIS.encode(text).0,
            "",
            false,
            "127.0.0.1",
        );
        assert_eq!((d.text.as_str(), d.charset), (text, "Shift_JIS"));
        let d = decode("plain ascii é".as_bytes(), "", true, "x.example");
        assert_eq!((d.charset, d.text.as_str()), ("UTF-8", "plain ascii é"));
        // A UTF-8 sequence cut by the body cap is still UTF-8.
        let cut = &"塩".as_bytes()[..2];
        assert_eq!(decode(cut, "", false, "x").charset, "UTF-8");
    }
}
