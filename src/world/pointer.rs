//! JSON Pointers as the world engine uses them: a patch path must start with `/`; the path `/`
//! alone addresses the subject's whole state (NeuroBook's "root replace"), since an attribute
//! with an empty name is never meant. `~0` escapes `~` and `~1` escapes `/`.

/// A patch path that is not a JSON Pointer; names the path and how to write it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PointerError {
    #[error("path {0:?} must be a JSON Pointer starting with \"/\" (e.g. \"/hp\")")]
    NoSlash(String),
    #[error("path {0:?} has a bad escape: use ~0 for ~ and ~1 for /")]
    BadEscape(String),
}

/// Split a path into unescaped tokens. `/` gives no tokens (the root).
pub fn parse(path: &str) -> Result<Vec<String>, PointerError> {
    if !path.starts_with('/') {
        return Err(PointerError::NoSlash(path.to_string()));
    }
    if path == "/" {
        return Ok(Vec::new());
    }
    path[1..]
        .split('/')
        .map(|raw| {
            let mut out = String::with_capacity(raw.len());
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                if c != '~' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('0') => out.push('~'),
                    Some('1') => out.push('/'),
                    _ => return Err(PointerError::BadEscape(path.to_string())),
                }
            }
            Ok(out)
        })
        .collect()
}

/// Escape one token for use in a pointer.
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Build a pointer from tokens (`/` for none).
pub fn join<S: AsRef<str>>(tokens: &[S]) -> String {
    if tokens.is_empty() {
        return "/".into();
    }
    tokens
        .iter()
        .map(|t| format!("/{}", escape(t.as_ref())))
        .collect()
}

/// The top-level attribute of a path as a pointer (`/inventory/0` → `/inventory`).
pub fn attr_of(path: &str) -> String {
    match parse(path) {
        Ok(t) if !t.is_empty() => join(&t[..1]),
        _ => "/".into(),
    }
}

/// Whether `ancestor` is `path` itself or one of its ancestors (token-wise).
pub fn is_prefix(ancestor: &[String], path: &[String]) -> bool {
    ancestor.len() <= path.len() && ancestor.iter().zip(path).all(|(a, b)| a == b)
}

/// An array index token: digits without a leading zero (`0`, `12`), or `-` meaning "the end".
pub fn index(token: &str, len: usize) -> Option<usize> {
    if token == "-" {
        return Some(len);
    }
    if token.is_empty()
        || (token.len() > 1 && token.starts_with('0'))
        || !token.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    token.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_escapes() {
        assert_eq!(parse("/").unwrap(), Vec::<String>::new());
        assert_eq!(parse("/a~1b/~0c/0").unwrap(), vec!["a/b", "~c", "0"]);
        assert!(parse("hp").is_err());
        assert!(parse("/a~2").is_err());
        assert_eq!(join(&["a/b", "~c"]), "/a~1b/~0c");
        assert_eq!(attr_of("/inventory/3"), "/inventory");
        assert_eq!(index("3", 2), Some(3));
        assert_eq!(index("03", 5), None);
        assert_eq!(index("-", 5), Some(5));
    }
}
